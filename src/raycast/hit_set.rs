//! [`RayHitSet`]: the hits of a batch of rays, flat and reusable across calls.
//!
//! A caster's `cast_into` clears the set and fills it in ray order, in parallel:
//!
//! 1. The rays are cut into runs; each run appends its rays' hits and per-ray counts to a
//!    buffer of its own (kept in the set).
//! 2. A prefix sum over the runs gives each run's place; every run then copies its hits and
//!    writes its rays' ends there, on all threads.
//!
//! The set keeps its memory (hits, ends, run buffers) between calls, so a set reused on batches
//! of similar size allocates nothing and touches no fresh page once warm.

use rayon::prelude::*;

use super::ray::RayHit;
use crate::parallel::{SharedPtr, fill_runs};

/// Rays one task of [`RayHitSet::to_lists`] turns into lists.
const LISTS_PER_TASK: usize = 4096;

/// Every hit of each ray of one call, one list per ray in ray order, each list as the casters'
/// `cast` returns it (nearest first, ties: lower body index; with `closest` at most one).
/// Filled by [`crate::CpuRaycaster::cast_into`] and [`crate::GpuRaycaster::cast_into`].
#[derive(Clone, Debug, Default)]
pub struct RayHitSet {
    /// End of each ray's hits in `hits`: ray `i` has `hits[ends[i - 1]..ends[i]]` (from 0 for
    /// ray 0).
    ends: Vec<usize>,
    /// The hits of all rays, ray after ray.
    hits: Vec<RayHit>,
    /// Per-run buffers of [`Self::fill_runs`], kept for the next call.
    runs: Vec<HitRun>,
}

/// The hits one run of rays found (see [`RayHitSet::fill_runs`]).
#[derive(Clone, Debug, Default)]
pub(crate) struct HitRun {
    /// The run's hits, ray after ray.
    pub hits: Vec<RayHit>,
    /// Hits of each ray of the run, in ray order.
    pub counts: Vec<u32>,
    /// Rays of the run the filler counted (the GPU: rays recomputed on the CPU).
    pub tally: usize,
    /// Where its hits go in the set (set while filling).
    offset: usize,
}

impl HitRun {
    /// Ends the current ray: its hits are those pushed since the previous ray ended.
    #[inline]
    pub(crate) fn end_ray(&mut self, hits_before: usize) {
        self.counts.push((self.hits.len() - hits_before) as u32);
    }
}

impl RayHitSet {
    /// An empty set (allocates nothing until filled).
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of rays of the call that filled the set.
    pub fn ray_count(&self) -> usize {
        self.ends.len()
    }

    /// Number of hits, all rays together.
    pub fn hit_count(&self) -> usize {
        self.hits.len()
    }

    /// The hits of ray `ray`, nearest first; panics when `ray >= self.ray_count()`.
    pub fn hits_of(&self, ray: usize) -> &[RayHit] {
        let start = if ray == 0 { 0 } else { self.ends[ray - 1] };
        &self.hits[start..self.ends[ray]]
    }

    /// The hits of every ray, ray after ray (each ray's nearest first).
    pub fn all_hits(&self) -> &[RayHit] {
        &self.hits
    }

    /// Each ray's hits, in ray order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &[RayHit]> + '_ {
        (0..self.ray_count()).map(|ray| self.hits_of(ray))
    }

    /// One `Vec` per ray, as the casters' `cast` returns them.
    pub fn to_lists(&self) -> Vec<Vec<RayHit>> {
        (0..self.ray_count())
            .into_par_iter()
            .with_min_len(LISTS_PER_TASK)
            .map(|ray| self.hits_of(ray).to_vec())
            .collect()
    }

    /// Empties the set, keeping its memory.
    pub fn clear(&mut self) {
        self.ends.clear();
        self.hits.clear();
    }

    /// Clears the set and fills it with rays `0..count`, in parallel: `fill(first, len, run)`
    /// appends the hits of rays `first..first + len` to `run.hits`, calling `run.end_ray` after
    /// each ray (steps 1 and 2). Runs are at least `min_run` rays. Returns the sum of the runs'
    /// `tally`.
    pub(crate) fn fill_runs(
        &mut self,
        count: usize,
        min_run: usize,
        fill: impl Fn(usize, usize, &mut HitRun) + Sync,
    ) -> usize {
        self.clear();
        if count == 0 {
            return 0;
        }
        // Step 1: about 16 runs per thread.
        let (run, runs) = fill_runs(&mut self.runs, count, (min_run, 16), |first, len, buffer| {
            buffer.hits.clear();
            buffer.counts.clear();
            buffer.tally = 0;
            fill(first, len, buffer);
            // Step 2 writes one end per ray of the run: the filler must end every ray.
            assert_eq!(buffer.counts.len(), len, "rays ended");
        });
        // Step 2.
        let mut total = 0;
        let mut tally = 0;
        for buffer in &mut self.runs[..runs] {
            buffer.offset = total;
            total += buffer.hits.len();
            tally += buffer.tally;
        }
        self.hits.reserve(total);
        self.ends.reserve(count);
        let hits = SharedPtr(self.hits.as_mut_ptr());
        let ends = SharedPtr(self.ends.as_mut_ptr());
        self.runs[..runs].par_iter().enumerate().for_each(|(r, buffer)| {
            // SAFETY: `hits` has room for `total` entries and `ends` for `count`; run `r`
            // writes hits `offset..offset + hits.len()` and ends `r * run..r * run +
            // counts.len()`, disjoint from every other run's and within those bounds; the
            // buffers do not overlap the set's vectors.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    buffer.hits.as_ptr(),
                    hits.get().add(buffer.offset),
                    buffer.hits.len(),
                );
                let mut end = buffer.offset;
                for (k, &n) in buffer.counts.iter().enumerate() {
                    end += n as usize;
                    ends.get().add(r * run + k).write(end);
                }
            }
        });
        // SAFETY: the first `total` hits and `count` ends were written above (both Copy).
        unsafe {
            self.hits.set_len(total);
            self.ends.set_len(count);
        }
        tally
    }
}

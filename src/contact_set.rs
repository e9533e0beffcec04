//! [`ContactSet`]: the touching pairs of a batch, compact and reusable across calls.
//!
//! A backend's `collide_into` clears the set and appends, in increasing pair order, the index of
//! every pair whose separation is at most the margin together with its manifold. The set keeps
//! its memory between calls (its two arrays and the scratch the backends fill in parallel), so
//! a set reused on batches of similar size allocates nothing once warm.
//!
//! Filling in parallel (`ContactSet::append_chunked`, the CPU): the pairs are cut into runs
//! that the threads take in order; each run appends its touching pairs to a buffer of its
//! thread's (kept in the set; each manifold is computed in place there), and the buffer is
//! copied to the run's place in the set as soon as the runs before it are counted (or, when
//! one of them was still being filled, after all runs are), so the set is in pair order
//! whatever the threads did. From a list already in pair order
//! (`ContactSet::append_ordered`, the GPU's), each entry is written at its own place.

use std::mem::MaybeUninit;

use rayon::prelude::*;

use crate::manifold::Manifold;
use crate::parallel::{PlacedRuns, SharedPtr, run_length};

/// Slots of [`ContactSet::to_options`] one task writes (about 650 KB of results).
const OPTIONS_PER_TASK: usize = 4096;

/// The pair index of an entry [`ContactSet::append_ordered`] left out, removed after.
const LEFT_OUT: u32 = u32::MAX;

/// The pairs in contact of one batch call: for each, its index in the call's pair list and its
/// [`Manifold`] (as the backends' `collide` returns it: normal unit, world space, from the
/// pair's first body toward its second; separation in length units, negative when penetrating;
/// points in world space). Pairs are in increasing index order, each once. Filled by
/// [`crate::CpuNarrowphase::collide_into`] and [`crate::GpuNarrowphase::collide_into`].
#[derive(Clone, Default)]
pub struct ContactSet {
    /// Index of each touching pair in the call's pair list, increasing.
    pairs: Vec<u32>,
    /// The manifold of each pair of `pairs`, at the same position.
    manifolds: Vec<Manifold>,
    /// The run buffers of [`Self::append_chunked`], kept for the next call.
    runs: PlacedRuns<RunBuffer>,
}

/// The touching pairs one run of pairs found (see [`ContactSet::append_chunked`]).
#[derive(Clone, Debug, Default)]
pub(crate) struct RunBuffer {
    pairs: Vec<u32>,
    /// The manifolds of `pairs`, each `Some`; one more `None` while a slot is open.
    manifolds: Vec<Option<Manifold>>,
}

impl RunBuffer {
    /// Emptied, with room for a run of `pairs` pairs (and its open slot).
    fn reserve(&mut self, pairs: usize) {
        self.pairs.clear();
        self.manifolds.clear();
        self.pairs.reserve(pairs);
        self.manifolds.reserve(pairs + 1);
    }

    /// Appends pair `pair` (its index in the call) with its manifold.
    #[inline]
    pub(crate) fn push(&mut self, pair: usize, manifold: Manifold) {
        self.pairs.push(pair as u32);
        self.manifolds.push(Some(manifold));
    }

    /// A `None` at the end for the next pair's manifold to be computed in place (no copy), then
    /// kept or dropped by [`Self::close_slot`].
    #[inline]
    pub(crate) fn open_slot(&mut self) -> &mut Option<Manifold> {
        self.manifolds.push(None);
        let last = self.manifolds.len() - 1;
        &mut self.manifolds[last]
    }

    /// Keeps the open slot as pair `pair`'s manifold when it holds one, else drops it.
    #[inline]
    pub(crate) fn close_slot(&mut self, pair: usize) {
        if self.manifolds.last().is_some_and(Option::is_some) {
            self.pairs.push(pair as u32);
        } else {
            self.manifolds.pop();
        }
    }
}

// The entries only: the scratch varies with which threads filled it.
impl std::fmt::Debug for ContactSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ContactSet")
            .field("pairs", &self.pairs)
            .field("manifolds", &self.manifolds)
            .finish_non_exhaustive()
    }
}

impl ContactSet {
    /// An empty set (allocates nothing until filled).
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of pairs in contact.
    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    /// True when no pair is in contact.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// The indices of the touching pairs in the call's pair list, increasing.
    pub fn pair_indices(&self) -> &[u32] {
        &self.pairs
    }

    /// The manifolds, at the positions of [`Self::pair_indices`].
    pub fn manifolds(&self) -> &[Manifold] {
        &self.manifolds
    }

    /// `(pair index, manifold)` of every touching pair, in increasing pair order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (u32, &Manifold)> + '_ {
        self.pairs.iter().copied().zip(&self.manifolds)
    }

    /// The manifold of pair `pair_index`, `None` when that pair is not in contact (binary
    /// search: O(log len)).
    pub fn get(&self, pair_index: u32) -> Option<&Manifold> {
        let at = self.pairs.binary_search(&pair_index).ok()?;
        Some(&self.manifolds[at])
    }

    /// Empties the set, keeping its memory.
    pub fn clear(&mut self) {
        self.pairs.clear();
        self.manifolds.clear();
    }

    /// One entry per pair of a call of `pair_count` pairs, as `collide` returns it: the
    /// manifold of each pair in the set, `None` for the others. Pairs at or past `pair_count`
    /// are left out. Built on all threads, each slot written once.
    pub fn to_options(&self, pair_count: usize) -> Vec<Option<Manifold>> {
        let mut options = Vec::with_capacity(pair_count);
        options.spare_capacity_mut()[..pair_count]
            .par_chunks_mut(OPTIONS_PER_TASK)
            .enumerate()
            .for_each(|(task, slots)| {
                let first = task * OPTIONS_PER_TASK;
                // The set's entries from `first` on, merged with the slots in pair order.
                let mut next = self.pairs.partition_point(|&pair| (pair as usize) < first);
                for (i, slot) in slots.iter_mut().enumerate() {
                    if self
                        .pairs
                        .get(next)
                        .is_some_and(|&pair| pair as usize == first + i)
                    {
                        slot.write(Some(self.manifolds[next]));
                        next += 1;
                    } else {
                        slot.write(None);
                    }
                }
            });
        // SAFETY: every one of the first `pair_count` slots was written above.
        unsafe { options.set_len(pair_count) };
        options
    }

    /// Appends pairs `0..count` of a call, in order, in parallel: `fill(first, len, buffer)` pushes
    /// the touching pairs among `first..first + len` into `buffer`, in increasing order. Runs
    /// are at least `min_run` pairs; their buffers are kept in the set for the next call, and
    /// each is copied to its place as soon as the runs before it are counted, or after all
    /// runs are filled ([`PlacedRuns`]). The set keeps room for every pair of the call.
    pub(crate) fn append_chunked(
        &mut self,
        count: usize,
        min_run: usize,
        fill: impl Fn(usize, usize, &mut RunBuffer) + Sync,
    ) {
        if count == 0 {
            return;
        }
        let start = self.pairs.len();
        self.pairs.reserve(count);
        self.manifolds.reserve(count);
        let pairs = SharedPtr(self.pairs.as_mut_ptr());
        let manifolds = SharedPtr(self.manifolds.as_mut_ptr());
        // About 16 runs per thread.
        let fill_run = |first, len, buffer: &mut RunBuffer| {
            buffer.pairs.clear();
            buffer.manifolds.clear();
            fill(first, len, buffer);
            buffer.pairs.len()
        };
        let place = |offset: usize, buffer: &RunBuffer| {
            let (at, count) = (start + offset, buffer.pairs.len());
            // SAFETY: both vectors have room for `start + count` entries (the call's pairs);
            // the runs' places `offset..offset + count` are disjoint and within them (a run
            // holds at most its pairs, at most `count` manifolds are written); the buffers do
            // not overlap the vectors.
            unsafe {
                std::ptr::copy_nonoverlapping(buffer.pairs.as_ptr(), pairs.get().add(at), count);
                for (i, manifold) in buffer.manifolds.iter().flatten().take(count).enumerate() {
                    manifolds.get().add(at + i).write(*manifold);
                }
            }
        };
        let total = self
            .runs
            .fill_and_place(count, (min_run, 16), RunBuffer::reserve, fill_run, place);
        // SAFETY: entries `start..start + total` were written above (u32 and Manifold are Copy).
        unsafe {
            self.pairs.set_len(start + total);
            self.manifolds.set_len(start + total);
        }
    }

    /// Appends `count` entries in order, in parallel: `entry(k, manifold)` writes entry `k`'s
    /// manifold into its place (given as `Manifold::default()`) and returns its pair index, the
    /// pair indices increasing with `k`; `None` leaves the entry out (rare: removed after, the
    /// others' order kept). Each entry is built in its place, in runs of at least `min_run`
    /// entries: one pass, no count first, no copy of a manifold.
    pub(crate) fn append_ordered(
        &mut self,
        count: usize,
        min_run: usize,
        entry: impl Fn(usize, &mut Manifold) -> Option<u32> + Sync,
    ) {
        let base = self.pairs.len();
        self.pairs.reserve(count);
        self.manifolds.reserve(count);
        let run = run_length(count, (min_run, 16));
        let pairs = &mut self.pairs.spare_capacity_mut()[..count];
        let manifolds = &mut self.manifolds.spare_capacity_mut()[..count];
        // Run `r`'s places: its pair indices and manifolds.
        let fill_run = |r: usize, pairs: &mut [MaybeUninit<u32>], manifolds: &mut [MaybeUninit<Manifold>]| {
            for (i, (pair, manifold)) in pairs.iter_mut().zip(manifolds).enumerate() {
                let manifold = manifold.write(Manifold::default());
                pair.write(entry(r * run + i, manifold).unwrap_or(LEFT_OUT));
            }
        };
        if count <= run {
            fill_run(0, pairs, manifolds);
        } else {
            pairs
                .par_chunks_mut(run)
                .zip(manifolds.par_chunks_mut(run))
                .enumerate()
                .for_each(|(r, (pairs, manifolds))| fill_run(r, pairs, manifolds));
        }
        // SAFETY: the `count` places past `base` were written above (u32 and Manifold are Copy).
        unsafe {
            self.pairs.set_len(base + count);
            self.manifolds.set_len(base + count);
        }
        self.remove_left_out(base);
    }

    /// Removes the entries from `base` on marked [`LEFT_OUT`], keeping the others' order.
    fn remove_left_out(&mut self, base: usize) {
        let (pairs, manifolds) = (&mut self.pairs, &mut self.manifolds);
        if !pairs[base..].contains(&LEFT_OUT) {
            return;
        }
        let mut kept = base;
        for k in base..pairs.len() {
            if pairs[k] != LEFT_OUT {
                pairs[kept] = pairs[k];
                manifolds[kept] = manifolds[k];
                kept += 1;
            }
        }
        pairs.truncate(kept);
        manifolds.truncate(kept);
    }
}

#[cfg(test)]
mod tests {
    use glam::Vec3;

    use super::*;

    fn manifold(separation: f32) -> Manifold {
        Manifold::new(Vec3::Y, separation)
    }

    #[test]
    fn chunked_fill_keeps_pair_order_and_reuses_buffers() {
        let mut set = ContactSet::new();
        let touching = |pair: usize| pair.is_multiple_of(3);
        let fill = |first: usize, len: usize, buffer: &mut RunBuffer| {
            for pair in (first..first + len).filter(|&p| touching(p)) {
                buffer.push(pair, manifold(pair as f32));
            }
        };
        set.append_chunked(10_000, 7, fill);
        let expected: Vec<u32> = (0..10_000).filter(|&p| touching(p as usize)).collect();
        assert_eq!(set.pair_indices(), expected);
        assert!(set.iter().all(|(pair, m)| m.separation == pair as f32));
        assert_eq!(set.get(9), Some(&manifold(9.0)));
        assert_eq!(set.get(10), None);
        set.clear();
        set.append_chunked(10, 7, fill);
        assert_eq!(set.pair_indices(), [0, 3, 6, 9]);
        let options = set.to_options(10);
        assert_eq!(options.iter().filter(|o| o.is_some()).count(), 4);
        assert_eq!(options[6], Some(manifold(6.0)));
    }

    #[test]
    fn ordered_entries_are_appended_in_place_and_left_out_ones_removed() {
        // One run on the calling thread, and runs on all threads; entry k names pair 10 + 3k,
        // one in five left out.
        for count in [100, 100_000] {
            let mut set = ContactSet::new();
            let place = |p: u32, out: &mut Manifold| {
                *out = manifold(p as f32);
                Some(p)
            };
            set.append_ordered(3, 1, |k, out| place(k as u32, out));
            let pair = |k: usize| 10 + 3 * k as u32;
            set.append_ordered(count, 256, |k, out| {
                (k % 5 != 1).then(|| place(pair(k), out)).flatten()
            });
            let expected: Vec<u32> = (0..3)
                .chain((0..count).filter(|&k| k % 5 != 1).map(pair))
                .collect();
            assert_eq!(set.pair_indices(), expected);
            assert!(set.iter().all(|(pair, m)| m.separation == pair as f32));
            assert_eq!(set.get(pair(1)), None, "left out");
            assert!(set.get(pair(2)).is_some());
        }
    }
}

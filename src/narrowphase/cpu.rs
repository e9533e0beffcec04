//! The CPU reference backend: a batch of body pairs, each through [`collide_shapes`](crate::contact::collide_shapes).
//!
//! 1. Validate bodies, pairs and margin once ([`ValidatedBatch`]), reading them in place.
//!    [`CpuNarrowphase::collide_validated`] takes a batch validated by the caller.
//! 2. Collide every pair (in parallel with rayon, or on one thread), writing one entry per
//!    pair in pair order. Each pair runs in canonical order (lower body index first,
//!    [`ValidatedBatch::pair`]) with its bodies' rotations normalized
//!    ([`ValidatedBatch::body`]'s bits), and its manifold is swapped back at once where the pair
//!    was given the other way round, so the order of a pair never changes its verdict. Each
//!    pair's loop step prefetches the bodies of a pair further on (`PREFETCH_AHEAD`). The
//!    per-pair work allocates nothing; the only allocation is the output vector.
//!    [`CpuNarrowphase::collide_into`] runs the same loop but keeps only the touching pairs,
//!    each run of pairs into a buffer of its own, appended to a [`ContactSet`] in run order
//!    (which keeps its memory between calls).

use std::mem::MaybeUninit;

use rayon::prelude::*;

use crate::contact::collide_shapes_into;
use crate::contact_set::{ContactSet, RunBuffer};
use crate::manifold::Manifold;
use crate::parallel::prefetch;
use crate::scene::validate::{ValidatedBatch, canonical, is_mesh_pair, normalized, restore_pair_order};
use crate::scene::{Body, InputError};
use crate::shape::Shape;

/// Fewest pairs a rayon task takes (here and in [`crate::ContactCache`]'s parallel batch): a
/// box pair costs about a microsecond, so smaller tasks would spend a noticeable share on
/// scheduling.
pub(crate) const PAIRS_PER_TASK: usize = 64;

/// How many pairs ahead of the one being collided the pair loops prefetch bodies: a pair's two
/// bodies are random reads (pairs come in broadphase order), which the hardware prefetcher
/// cannot predict. With tens of thousands of bodies they miss the nearer caches; read early,
/// they arrive while the pairs before them run (box pairs at 100k: about 5% less time).
const PREFETCH_AHEAD: usize = 8;

/// Narrowphase on the CPU over a fixed set of shapes shared by any number of bodies.
#[derive(Clone, Debug)]
pub struct CpuNarrowphase {
    shapes: Vec<Shape>,
}

impl CpuNarrowphase {
    /// A narrowphase over `shapes` (bodies refer to them by index; a `Vec`, a slice or an array),
    /// called as [`crate::GpuNarrowphase::new`] is, so a caller switches backends by the type.
    pub fn new(shapes: impl AsRef<[Shape]>) -> Self {
        CpuNarrowphase {
            shapes: shapes.as_ref().to_vec(),
        }
    }

    /// The shapes, in index order.
    pub fn shapes(&self) -> &[Shape] {
        &self.shapes
    }

    /// One entry per pair, in pair order: the manifold of bodies `[a, b]` (normal from `a` to
    /// `b`, world space) when their separation is at most `margin` (length units, >= 0), else
    /// `None`. Pairs run in parallel. Bad bodies, pairs or margin give an [`InputError`].
    pub fn collide(
        &self,
        bodies: &[Body],
        pairs: &[[u32; 2]],
        margin: f32,
    ) -> Result<Vec<Option<Manifold>>, InputError> {
        self.collide_validated(&ValidatedBatch::new(&self.shapes, bodies, pairs, margin)?)
    }

    /// [`Self::collide`] on a batch the caller validated (no second check). An [`InputError`]
    /// only when the batch was validated against an incompatible shape list.
    pub fn collide_validated(&self, batch: &ValidatedBatch) -> Result<Vec<Option<Manifold>>, InputError> {
        batch.check_shapes(&self.shapes)?;
        Ok(self.collide_checked(batch, true))
    }

    /// [`Self::collide`] into `out`: cleared, then filled with the touching pairs only (pair
    /// index and manifold, in pair order; the same manifolds, bit for bit, as
    /// [`Self::collide`]). Pairs run in parallel; a set reused across calls allocates nothing
    /// once warm. On an [`InputError`] the set is left empty.
    pub fn collide_into(
        &self,
        bodies: &[Body],
        pairs: &[[u32; 2]],
        margin: f32,
        out: &mut ContactSet,
    ) -> Result<(), InputError> {
        out.clear();
        self.collide_validated_into(&ValidatedBatch::new(&self.shapes, bodies, pairs, margin)?, out)
    }

    /// [`Self::collide_into`] on a batch the caller validated (no second check). An
    /// [`InputError`] (the set left empty) only when the batch was validated against an
    /// incompatible shape list.
    pub fn collide_validated_into(
        &self,
        batch: &ValidatedBatch,
        out: &mut ContactSet,
    ) -> Result<(), InputError> {
        out.clear();
        batch.check_shapes(&self.shapes)?;
        let (bodies, pairs, margin) = (batch.given_bodies(), batch.given_pairs(), batch.margin());
        out.append_chunked(pairs.len(), PAIRS_PER_TASK, |first, count, buffer| {
            self.collide_run(bodies, pairs, first, count, margin, &mut Touching(buffer));
        });
        Ok(())
    }

    /// Same as [`Self::collide`] on the calling thread only, validation included (a baseline
    /// for benchmarks).
    pub fn collide_single_thread(
        &self,
        bodies: &[Body],
        pairs: &[[u32; 2]],
        margin: f32,
    ) -> Result<Vec<Option<Manifold>>, InputError> {
        let batch = ValidatedBatch::new_on_this_thread(&self.shapes, bodies, pairs, margin)?;
        Ok(self.collide_checked(&batch, false))
    }

    /// Step 2 for a batch checked against these shapes: one result per given pair, each written
    /// in place into the output vector (a returned manifold would be copied there, 160 bytes per
    /// pair), on all threads (runs of [`PAIRS_PER_TASK`] pairs) when `parallel`.
    fn collide_checked(&self, batch: &ValidatedBatch, parallel: bool) -> Vec<Option<Manifold>> {
        let (bodies, pairs, margin) = (batch.given_bodies(), batch.given_pairs(), batch.margin());
        let mut results = Vec::with_capacity(pairs.len());
        let slots = &mut results.spare_capacity_mut()[..pairs.len()];
        if parallel {
            slots
                .par_chunks_mut(PAIRS_PER_TASK)
                .enumerate()
                .for_each(|(run, slots)| {
                    let (first, count) = (run * PAIRS_PER_TASK, slots.len());
                    self.collide_run(bodies, pairs, first, count, margin, &mut Dense(slots));
                });
        } else {
            let count = slots.len();
            self.collide_run(bodies, pairs, 0, count, margin, &mut Dense(slots));
        }
        // SAFETY: `collide_run` initialized each of the first `pairs.len()` slots (every slot
        // once; a panic in it unwinds past this line).
        unsafe { results.set_len(pairs.len()) };
        results
    }

    /// Gives `sink` the manifold of each validated pair `pairs[first + k]`, `k < count`, as given
    /// (`bodies` and indices already checked), computed in canonical order with normalized
    /// rotations and swapped back where the pair was given the other way round. Each step
    /// prefetches the bodies of a pair further on ([`prefetch_bodies_ahead`]) and normalizes
    /// the next pair's two rotations before colliding this pair, so that their square roots
    /// and divisions run while this pair does instead of at the head of the next.
    fn collide_run(
        &self,
        bodies: &[Body],
        pairs: &[[u32; 2]],
        first: usize,
        count: usize,
        margin: f32,
        sink: &mut impl PairSink,
    ) {
        let posed = |index: usize| {
            let [a, b] = canonical(pairs[index]);
            (normalized(&bodies[a as usize]), normalized(&bodies[b as usize]))
        };
        if count == 0 {
            return;
        }
        let mut next = posed(first);
        for k in 0..count {
            let index = first + k;
            prefetch_bodies_ahead(bodies, pairs, index);
            let (body_a, body_b) = next;
            if k + 1 < count {
                next = posed(index + 1);
            }
            let out = sink.slot(k);
            let (shape_a, shape_b) = (
                &self.shapes[body_a.shape as usize],
                &self.shapes[body_b.shape as usize],
            );
            collide_shapes_into(shape_a, &body_a.pose, shape_b, &body_b.pose, margin, out);
            restore_pair_order(pairs[index], is_mesh_pair(shape_a, shape_b), out);
            sink.done(index);
        }
    }
}

/// Where [`CpuNarrowphase::collide_run`] puts each pair's result: a slot to compute it in, then
/// told the pair is done.
trait PairSink {
    /// The slot for the `k`-th pair of the run, set to `None`.
    fn slot(&mut self, k: usize) -> &mut Option<Manifold>;
    /// Called once pair `pair` (index in the call) is in its slot, in pair order.
    fn done(&mut self, pair: usize);
}

/// One entry per pair, written in place ([`CpuNarrowphase::collide`]).
struct Dense<'s>(&'s mut [MaybeUninit<Option<Manifold>>]);

impl PairSink for Dense<'_> {
    #[inline(always)]
    fn slot(&mut self, k: usize) -> &mut Option<Manifold> {
        self.0[k].write(None)
    }

    #[inline(always)]
    fn done(&mut self, _: usize) {}
}

/// The touching pairs only, each manifold computed in place in a run's buffer
/// ([`CpuNarrowphase::collide_into`]).
struct Touching<'s>(&'s mut RunBuffer);

impl PairSink for Touching<'_> {
    #[inline(always)]
    fn slot(&mut self, _: usize) -> &mut Option<Manifold> {
        self.0.open_slot()
    }

    #[inline(always)]
    fn done(&mut self, pair: usize) {
        self.0.close_slot(pair);
    }
}

/// Asks the cache for the bodies of the pair [`PREFETCH_AHEAD`] places after `pairs[index]`
/// (here and in [`crate::ContactCache`]'s batches), whose indices were validated.
#[inline(always)]
pub(crate) fn prefetch_bodies_ahead(bodies: &[Body], pairs: &[[u32; 2]], index: usize) {
    if let Some(&[a, b]) = pairs.get(index + PREFETCH_AHEAD) {
        prefetch(&bodies[a as usize]);
        prefetch(&bodies[b as usize]);
    }
}

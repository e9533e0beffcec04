//! The CPU reference backend: a batch of body pairs, each through [`collide_shapes`].
//!
//! 1. Validate bodies, pairs and margin once ([`ValidatedBatch`]); rotations come back
//!    normalized. [`CpuNarrowphase::collide_validated`] takes a batch validated by the caller.
//! 2. Collide every pair (in parallel with rayon, or on one thread), writing one entry per
//!    pair in pair order. Pairs run in the batch's canonical order (lower body index first) and
//!    are swapped back ([`ValidatedBatch::restore_order`]), so the order of a pair never
//!    changes its verdict. Each pair's loop step prefetches the bodies of a pair further on
//!    (`PREFETCH_AHEAD`). The per-pair work allocates nothing; the only allocations are the
//!    checked bodies and the output vector.

use rayon::prelude::*;

use crate::contact::collide_shapes;
use crate::manifold::Manifold;
use crate::narrowphase::validate::ValidatedBatch;
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
    /// A narrowphase over `shapes` (bodies refer to them by index).
    pub fn new(shapes: Vec<Shape>) -> Self {
        CpuNarrowphase { shapes }
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
        let (bodies, pairs, margin) = (batch.bodies(), batch.pairs(), batch.margin());
        let mut results: Vec<Option<Manifold>> = (0..pairs.len())
            .into_par_iter()
            .with_min_len(PAIRS_PER_TASK)
            .map(|index| self.collide_pair_at(bodies, pairs, index, margin))
            .collect();
        batch.restore_order(&mut results);
        Ok(results)
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
        let (bodies, pairs) = (batch.bodies(), batch.pairs());
        let mut results: Vec<Option<Manifold>> = (0..pairs.len())
            .map(|index| self.collide_pair_at(bodies, pairs, index, margin))
            .collect();
        batch.restore_order(&mut results);
        Ok(results)
    }

    /// The manifold of validated pair `pairs[index]` (indices already checked), after
    /// [`prefetch_bodies_ahead`].
    #[inline]
    fn collide_pair_at(
        &self,
        bodies: &[Body],
        pairs: &[[u32; 2]],
        index: usize,
        margin: f32,
    ) -> Option<Manifold> {
        prefetch_bodies_ahead(bodies, pairs, index);
        let [a, b] = pairs[index];
        let body_a = &bodies[a as usize];
        let body_b = &bodies[b as usize];
        collide_shapes(
            &self.shapes[body_a.shape as usize],
            &body_a.pose,
            &self.shapes[body_b.shape as usize],
            &body_b.pose,
            margin,
        )
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

/// Asks the CPU to bring `value`'s cache lines (its first and last byte) into the cache; a hint
/// with no effect on results, a no-op on targets other than x86-64.
#[inline(always)]
fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        let first = std::ptr::from_ref(value).cast::<i8>();
        let last = first.wrapping_add(size_of::<T>() - 1);
        // SAFETY: a prefetch only hints the cache: it never faults and reads nothing into the
        // program, whatever the address; SSE, which provides it, is part of x86-64's baseline.
        unsafe {
            _mm_prefetch::<_MM_HINT_T0>(first);
            _mm_prefetch::<_MM_HINT_T0>(last);
        }
    }
}

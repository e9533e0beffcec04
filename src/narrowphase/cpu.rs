//! The CPU reference backend: a batch of body pairs, each through [`collide_shapes`].
//!
//! 1. Validate bodies, pairs and margin once ([`ValidatedBatch`]); rotations come back
//!    normalized. [`CpuNarrowphase::collide_validated`] takes a batch validated by the caller.
//! 2. Collide every pair (in parallel with rayon, or on one thread), writing one entry per
//!    pair in pair order. Pairs run in the batch's canonical order (lower body index first) and
//!    are swapped back ([`ValidatedBatch::restore_order`]), so the order of a pair never
//!    changes its verdict. The per-pair work allocates nothing; the only allocations are the
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
        let (bodies, margin) = (batch.bodies(), batch.margin());
        let mut results: Vec<Option<Manifold>> = batch
            .pairs()
            .par_iter()
            .with_min_len(PAIRS_PER_TASK)
            .map(|&pair| self.collide_pair(bodies, pair, margin))
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
        let bodies = batch.bodies();
        let mut results: Vec<Option<Manifold>> = batch
            .pairs()
            .iter()
            .map(|&pair| self.collide_pair(bodies, pair, margin))
            .collect();
        batch.restore_order(&mut results);
        Ok(results)
    }

    /// The manifold of one validated pair (indices already checked).
    fn collide_pair(&self, bodies: &[Body], [a, b]: [u32; 2], margin: f32) -> Option<Manifold> {
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

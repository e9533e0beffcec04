//! The CPU reference backend: a batch of body pairs, each through [`collide_shapes`].
//!
//! 1. Validate bodies, pairs and margin ([`validate_batch`]); rotations come back normalized.
//! 2. Collide every pair (in parallel with rayon, or on one thread), writing one entry per
//!    pair in pair order. A pair `[a, b]` with `a > b` is computed as `[b, a]` and swapped
//!    ([`Manifold::swapped`]), so the order of a pair never changes its verdict. The per-pair work allocates nothing; the only allocations are the
//!    checked bodies and the output vector.

use rayon::prelude::*;

use crate::contact::collide_shapes;
use crate::manifold::Manifold;
use crate::scene::{Body, InputError, validate_batch};
use crate::shape::Shape;

/// Fewest pairs a rayon task takes: a box pair costs about a microsecond, so smaller tasks
/// would spend a noticeable share on scheduling.
const PAIRS_PER_TASK: usize = 64;

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
        let bodies = validate_batch(&self.shapes, bodies, pairs, margin)?;
        Ok(pairs
            .par_iter()
            .with_min_len(PAIRS_PER_TASK)
            .map(|&pair| self.collide_pair(&bodies, pair, margin))
            .collect())
    }

    /// Same as [`Self::collide`] on the calling thread only (a baseline for benchmarks).
    pub fn collide_single_thread(
        &self,
        bodies: &[Body],
        pairs: &[[u32; 2]],
        margin: f32,
    ) -> Result<Vec<Option<Manifold>>, InputError> {
        let bodies = validate_batch(&self.shapes, bodies, pairs, margin)?;
        Ok(pairs
            .iter()
            .map(|&pair| self.collide_pair(&bodies, pair, margin))
            .collect())
    }

    /// The manifold of one validated pair (indices already checked). Computed with the lower
    /// body index as A, then swapped when the pair lists them the other way: the verdict and
    /// the contact do not depend on the order, also within rounding of the margin.
    fn collide_pair(&self, bodies: &[Body], [a, b]: [u32; 2], margin: f32) -> Option<Manifold> {
        if a > b {
            return self.collide_pair(bodies, [b, a], margin).map(|m| m.swapped());
        }
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

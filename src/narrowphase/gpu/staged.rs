//! Validation while staging: the GPU backend checks a batch in the same passes that write it
//! into mapped staging memory, and keeps no checked copy of it.
//!
//! 1. The margin: [`check_margin`].
//! 2. Bodies, one pass on all threads: each body is checked ([`body_ok`]), normalized
//!    ([`normalized`]) and written as a [`GpuBody`]. A bad body is written zeroed and flagged; the pass is then
//!    followed by [`first_body_error`], which names the first bad body in input order.
//! 3. Pairs, one pass per round on all threads: each pair is checked ([`PairRule`]), put in
//!    canonical order (lower body index first, [`canonical`]) and written. A bad pair is
//!    flagged; [`PairRule::first_error`] then names the first bad pair of the batch (earlier
//!    rounds passed, so it lies in this round). The round's commands are recorded into the
//!    call's own encoder, dropped unsubmitted on an error; `GpuNarrowphase::encode`, which
//!    records into the caller's encoder, checks every pair first instead
//!    ([`StagedBatch::check_pairs_first`]).
//!
//! These are the steps of [`ValidatedBatch::new`], with the same checks and errors; a batch the
//! caller validated takes the same passes without them. The result, a [`StagedBatch`], borrows
//! the caller's bodies and pairs and is the host's proof that the batch on the GPU passed; where
//! the host needs a body, its rotation is normalized on use ([`unit_pose`]), the same bits as
//! [`ValidatedBatch::body`].

use std::sync::atomic::{AtomicBool, Ordering};

use bytemuck::Zeroable;
use rayon::prelude::*;

use super::call_buffers::{CallBuffers, Round};
use super::kernels::ClipKernel;
use super::layout::GpuBody;
use crate::gpu::{GpuContext, GpuError};
use crate::manifold::Manifold;
use crate::pose::Pose;
use crate::scene::validate::{
    CHECKS_PER_TASK, PairRule, ValidatedBatch, body_ok, canonical, check_margin, first_body_error,
    is_mesh_pair, normalized, swap_pair,
};
use crate::scene::{Body, unit_pose};
use crate::shape::Shape;

/// A batch as a GPU call gets it.
#[derive(Clone, Copy)]
pub(super) enum BatchInput<'a> {
    /// Validated by the caller: staged without checks.
    Validated(&'a ValidatedBatch<'a>),
    /// The caller's data, checked while it is staged (steps 1 to 3).
    Unchecked {
        bodies: &'a [Body],
        pairs: &'a [[u32; 2]],
        /// Speculative margin, length units.
        margin: f32,
    },
}

/// The order in which pairs reach the kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum PairOrder {
    /// Lower body index first (`collide`, `sat`; results are swapped back where needed).
    Canonical,
    /// As given (`encode`: the caller reads the kernel's records directly).
    Given,
}

/// A batch whose bodies are staged and checked (see the module docs); its pairs are staged and
/// checked round by round ([`Self::round`]).
pub(super) struct StagedBatch<'a> {
    shapes: &'a [Shape],
    /// The bodies as the caller holds them (rotations normalized on use).
    bodies: &'a [Body],
    /// The pairs as given.
    pairs: &'a [[u32; 2]],
    margin: f32,
    order: PairOrder,
    /// The pair checks, for pairs the caller did not validate.
    rule: Option<PairRule<'a>>,
    /// Set by a staged pair that failed its checks.
    failed: AtomicBool,
}

impl<'a> StagedBatch<'a> {
    /// Steps 1 and 2: checks the margin and stages the bodies (checked and normalized on the way
    /// unless validated) into `buffers`' body staging. `shapes` are the narrowphase's (a
    /// validated batch's were checked compatible with them). [`GpuError::Input`] names the
    /// problem as [`ValidatedBatch::new`] would.
    pub(super) fn stage_bodies(
        buffers: &mut CallBuffers,
        context: &GpuContext,
        shapes: &'a [Shape],
        input: BatchInput<'a>,
        order: PairOrder,
    ) -> Result<Self, GpuError> {
        // A validated batch's bodies and margin passed these checks already.
        let (bodies, pairs, margin, validated) = match input {
            BatchInput::Validated(batch) => (batch.given_bodies(), batch.given_pairs(), batch.margin(), true),
            BatchInput::Unchecked {
                bodies,
                pairs,
                margin,
            } => {
                check_margin(margin)?;
                (bodies, pairs, margin, false)
            }
        };
        let failed = AtomicBool::new(false);
        let shape_count = shapes.len();
        buffers.stage_bodies(context, bodies.len(), |i| {
            let body = &bodies[i];
            if validated || body_ok(shape_count, body) {
                GpuBody::from_body(&normalized(body))
            } else {
                failed.store(true, Ordering::Relaxed);
                GpuBody::zeroed()
            }
        })?;
        if failed.into_inner() {
            return Err(first_body_error(shapes, bodies).into());
        }
        Ok(StagedBatch {
            shapes,
            bodies,
            pairs,
            margin,
            order,
            rule: (!validated).then(|| PairRule::new(shapes, bodies)),
            failed: AtomicBool::new(false),
        })
    }

    /// A validated batch as the host's finish reads it, nothing staged: for
    /// [`super::finish::finish_listed_into`], which stands in for a GPU call's rounds.
    pub(super) fn unstaged(batch: &'a ValidatedBatch<'a>) -> Self {
        StagedBatch {
            shapes: batch.shapes(),
            bodies: batch.given_bodies(),
            pairs: batch.given_pairs(),
            margin: batch.margin(),
            order: PairOrder::Canonical,
            rule: None,
            failed: AtomicBool::new(false),
        }
    }

    /// Step 3 for pairs `first..first + count`: the round [`CallBuffers::encode`] stages (each
    /// pair checked unless validated, in [`PairOrder`]) and records, with its `clip` kernel and
    /// `slot`. Then [`Self::pairs_passed`] says whether every pair passed.
    pub(super) fn round<'b>(
        &'b self,
        (first, count): (usize, usize),
        clip: Option<&'b ClipKernel>,
        slot: usize,
    ) -> Round<'b, impl Fn(usize) -> [u32; 2] + Sync + 'b> {
        let pairs = &self.pairs[first..first + count];
        let pair = move |i: usize| {
            let pair = pairs[i];
            if let Some(rule) = &self.rule
                && !rule.is_ok(pair)
            {
                self.failed.store(true, Ordering::Relaxed);
                return [0, 0];
            }
            match self.order {
                PairOrder::Given => pair,
                PairOrder::Canonical => canonical(pair),
            }
        };
        Round {
            pair_count: count,
            pair,
            bodies: self.bodies,
            margin: self.margin,
            clip,
            slot,
            ordered: false,
        }
    }

    /// Step 3 after a round is staged: [`GpuError::Input`] naming the first bad pair of the batch
    /// when a staged pair failed its checks (earlier rounds passed, so it lies in this round).
    pub(super) fn pairs_passed(&self) -> Result<(), GpuError> {
        match &self.rule {
            Some(rule) if self.failed.load(Ordering::Relaxed) => Err(rule.first_error(self.pairs).into()),
            _ => Ok(()),
        }
    }

    /// Step 3 for every pair at once, before any round is staged, for a caller that records
    /// into an encoder it does not own (a refused batch must leave that encoder as it was); the
    /// rounds then stage the pairs without checking them again.
    pub(super) fn check_pairs_first(&mut self) -> Result<(), GpuError> {
        if let Some(rule) = self.rule.take() {
            let pairs = self.pairs;
            let ok = pairs
                .par_iter()
                .with_min_len(CHECKS_PER_TASK)
                .all(|&pair| rule.is_ok(pair));
            if !ok {
                return Err(rule.first_error(pairs).into());
            }
        }
        Ok(())
    }

    /// Number of pairs.
    pub(super) fn pair_count(&self) -> usize {
        self.pairs.len()
    }

    /// Pair `i` as the kernels computed it (body indices; see [`PairOrder`]).
    #[inline]
    pub(super) fn pair(&self, i: usize) -> [u32; 2] {
        match self.order {
            PairOrder::Canonical => canonical(self.pairs[i]),
            PairOrder::Given => self.pairs[i],
        }
    }

    /// The shape of body `body` (an index that passed the checks).
    #[inline]
    pub(super) fn shape(&self, body: u32) -> &'a Shape {
        &self.shapes[self.shape_index(body)]
    }

    /// The index of body `body`'s shape (both indices passed the checks).
    #[inline]
    pub(super) fn shape_index(&self, body: u32) -> usize {
        self.bodies[body as usize].shape as usize
    }

    /// The world pose of body `body` (an index that passed the checks), rotation normalized:
    /// the same bits as [`ValidatedBatch::body`]'s.
    #[inline]
    pub(super) fn pose(&self, body: u32) -> Pose {
        unit_pose(&self.bodies[body as usize].pose)
    }

    /// The speculative margin, length units.
    pub(super) fn margin(&self) -> f32 {
        self.margin
    }

    /// Turns the manifold computed for staged pair `i` into the given pair's: swapped where the
    /// pair was given with its higher body index first (under [`PairOrder::Canonical`]), ids
    /// kept for a pair with a triangle mesh ([`swap_pair`]).
    #[inline]
    pub(super) fn restore_pair_order(&self, i: usize, manifold: &mut Manifold) {
        let [a, b] = self.pairs[i];
        if self.order == PairOrder::Canonical && a > b {
            swap_pair(manifold, is_mesh_pair(self.shape(a), self.shape(b)));
        }
    }
}

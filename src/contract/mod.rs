//! The GPU = CPU contract: what "the GPU's manifold equals the CPU's" means under WGSL's
//! precision rules (fused multiply-adds, 2.5 ulp division, 2 ulp square roots), and the one
//! comparator that judges it ([`compare_pair`], [`compare_batch`]). With `τ` =
//! [`GPU_AGREEMENT_TOLERANCE`] × the larger of the pair's scale and its bodies' distance
//! ([`pair_tolerance`], length units), a GPU manifold agrees with the CPU's when:
//! 1. **Verdict**: the same, except within `τ` of the margin ([`Agreement::VerdictTie`]).
//! 2. **Separation** within `τ`; **normal** within [`GPU_AGREEMENT_TOLERANCE`] radians (wider for
//!    cores and for the GPU's f32 GJK: [`GPU_GJK_MAX_DIRECTION_ERROR`]) or an equal support gap.
//! 3. **Points** matched by [`FeatureId`] within `τ` or the point's conditioning × `τ`
//!    ([`point_conditioning`], [`OTHER_POINT_CONDITIONING`], [`Agreement::Conditioned`]).
//! 4. **Ties** only where the CPU's own decision was within rounding, recomputed
//!    ([`nudged_references`]; [`Agreement::FeatureTie`], [`Agreement::AxisTie`]).
//!
//! A compound pair (merged child pairs), a mesh pair (merged triangle contacts) and a compound
//! against a mesh (its children's triangle contacts merged), on the GPU too, are judged by the
//! rules above, their points matched by their compound or mesh ids.
//!
//! Else a [`Disagreement`]; ties are counted ([`AgreementTally`]). In full: docs/design/contract.md.

mod features;
mod pair;
pub mod rays;
pub mod sat;

use rayon::prelude::*;

use crate::constants::CAPSULE_PARALLEL_SINE;
#[cfg(doc)]
use crate::constants::{GPU_AGREEMENT_TOLERANCE, GPU_GJK_MAX_DIRECTION_ERROR};
use crate::manifold::{FeatureId, Manifold};
use crate::scene::Body;
use crate::shape::Shape;
use features::conditioning;
use pair::PairGeometry;

/// How much farther than `τ` a closest-point or primitive point (kind `OTHER`) may lie from the
/// CPU's, dimensionless: the worst-conditioned of them is a capsule's segment clipped against
/// another nearly parallel one, amplifying rounding by 1 / [`CAPSULE_PARALLEL_SINE`] (20).
pub const OTHER_POINT_CONDITIONING: f32 = 1.0 / CAPSULE_PARALLEL_SINE;

/// How a GPU result agreed with the CPU reference (rules in the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Agreement {
    /// Neither side has a manifold.
    NoContact,
    /// Same verdict, normal, ids; every position and depth within `τ`.
    Same,
    /// As [`Agreement::Same`], but a normal or point differs by more than `τ` where its
    /// conditioning explains it (rules 2 and 3).
    Conditioned,
    /// One side only has a manifold; the CPU's separation is within `τ` of the margin.
    VerdictTie,
    /// Another axis whose support gap ties the CPU's within rounding.
    AxisTie,
    /// Point ids differ where the CPU's own decision was within rounding (rule 4).
    FeatureTie,
}

/// What broke the contract for one pair.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DisagreementKind {
    /// One side has a manifold and the CPU's separation is not within `τ` of the margin.
    Verdict,
    /// A non-finite number, a normal that is not unit, or a point count out of 1..=4.
    Malformed,
    /// Separations more than `τ` apart.
    Separation,
    /// A normal neither close to the CPU's nor tied with it.
    Normal,
    /// A matched point off the CPU's and off the features its id names.
    Point,
    /// A point id on one side only that no nudged CPU run explains.
    Feature,
}

/// Why one pair's GPU result is outside the contract.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Disagreement {
    /// Which rule broke.
    pub kind: DisagreementKind,
    /// The numbers, for a person.
    pub detail: String,
}

impl std::fmt::Display for Disagreement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}: {}", self.kind, self.detail)
    }
}

/// The first pair of a batch outside the contract.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BatchDisagreement {
    /// Index into the batch's pair list.
    pub index: usize,
    /// The pair, as given.
    pub pair: [u32; 2],
    /// What broke.
    pub disagreement: Disagreement,
}

impl std::fmt::Display for BatchDisagreement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "GPU and CPU disagree beyond the GPU = CPU contract on pairs[{}] = {:?}: {}",
            self.index, self.pair, self.disagreement
        )
    }
}

impl std::error::Error for BatchDisagreement {}

/// Counts of each [`Agreement`] over a batch, and the manifolds on each side.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AgreementTally {
    /// Pairs compared.
    pub pairs: usize,
    /// Pairs with a GPU manifold.
    pub gpu_manifolds: usize,
    /// Pairs with a CPU manifold.
    pub cpu_manifolds: usize,
    /// [`Agreement::NoContact`] pairs.
    pub no_contact: usize,
    /// [`Agreement::Same`] pairs.
    pub same: usize,
    /// [`Agreement::Conditioned`] pairs.
    pub conditioned: usize,
    /// [`Agreement::VerdictTie`] pairs.
    pub verdict_ties: usize,
    /// [`Agreement::AxisTie`] pairs.
    pub axis_ties: usize,
    /// [`Agreement::FeatureTie`] pairs.
    pub feature_ties: usize,
}

impl AgreementTally {
    /// Counts one pair.
    pub fn add(&mut self, agreement: Agreement, gpu: bool, cpu: bool) {
        self.pairs += 1;
        self.gpu_manifolds += usize::from(gpu);
        self.cpu_manifolds += usize::from(cpu);
        *match agreement {
            Agreement::NoContact => &mut self.no_contact,
            Agreement::Same => &mut self.same,
            Agreement::Conditioned => &mut self.conditioned,
            Agreement::VerdictTie => &mut self.verdict_ties,
            Agreement::AxisTie => &mut self.axis_ties,
            Agreement::FeatureTie => &mut self.feature_ties,
        } += 1;
    }

    /// The sum of two tallies.
    pub fn merged(mut self, other: &AgreementTally) -> AgreementTally {
        self.pairs += other.pairs;
        self.gpu_manifolds += other.gpu_manifolds;
        self.cpu_manifolds += other.cpu_manifolds;
        self.no_contact += other.no_contact;
        self.same += other.same;
        self.conditioned += other.conditioned;
        self.verdict_ties += other.verdict_ties;
        self.axis_ties += other.axis_ties;
        self.feature_ties += other.feature_ties;
        self
    }

    /// Pairs accepted at a tie (verdict, axis or feature).
    pub fn ties(&self) -> usize {
        self.verdict_ties + self.axis_ties + self.feature_ties
    }
}

/// The CPU reference for `pair` (as given) of `bodies`, as [`crate::CpuNarrowphase`] computes
/// it: canonical order, unit rotations, swapped back. Unchecked: the batch must be valid.
pub fn reference_manifold(
    shapes: &[Shape],
    bodies: &[Body],
    pair: [u32; 2],
    margin: f32,
) -> Option<Manifold> {
    PairGeometry::new(shapes, bodies, pair, margin).cpu(margin)
}

/// Judges one pair's GPU manifold against the CPU's (`pair` as given, indices into `bodies`,
/// whose shapes index `shapes`; the batch valid, as the backends checked it).
pub fn compare_pair(
    shapes: &[Shape],
    bodies: &[Body],
    pair: [u32; 2],
    margin: f32,
    gpu: Option<&Manifold>,
    cpu: Option<&Manifold>,
) -> Result<Agreement, Disagreement> {
    PairGeometry::new(shapes, bodies, pair, margin).compare(gpu, cpu)
}

/// [`compare_pair`] over a batch, on all threads: the tally, or the first pair (lowest index)
/// outside the contract.
pub fn compare_batch(
    shapes: &[Shape],
    bodies: &[Body],
    pairs: &[[u32; 2]],
    margin: f32,
    gpu: &[Option<Manifold>],
    cpu: &[Option<Manifold>],
) -> Result<AgreementTally, BatchDisagreement> {
    assert!(
        gpu.len() == pairs.len() && cpu.len() == pairs.len(),
        "one result per pair"
    );
    judge_all(
        pairs.len(),
        |index| {
            let (pair, g, c) = (pairs[index], gpu[index].as_ref(), cpu[index].as_ref());
            let mut tally = AgreementTally::default();
            compare_pair(shapes, bodies, pair, margin, g, c)
                .map(|agreement| {
                    tally.add(agreement, g.is_some(), c.is_some());
                    tally
                })
                .map_err(|disagreement| BatchDisagreement {
                    index,
                    pair,
                    disagreement,
                })
        },
        |x, y| x.merged(&y),
    )
}

/// Judges items `0..count` on all threads: the tallies merged, or the failure of lowest index.
pub(crate) fn judge_all<T: Default + Send, E: Send>(
    count: usize,
    judge: impl Fn(usize) -> Result<T, E> + Sync,
    merge: impl Fn(T, T) -> T + Sync,
) -> Result<T, E> {
    (0..count)
        .into_par_iter()
        .map(|index| judge(index).map_err(|e| (index, e)))
        .reduce(
            || Ok(T::default()),
            |x, y| match (x, y) {
                (Ok(x), Ok(y)) => Ok(merge(x, y)),
                (Err(x), Err(y)) => Err(if x.0 <= y.0 { x } else { y }),
                (Err(e), _) | (_, Err(e)) => Err(e),
            },
        )
        .map_err(|(_, e)| e)
}

/// The verdict rule alone (rule 1) for a pair with a manifold on one side only: `Ok` when the
/// CPU's separation lies within `τ` of the margin. For checks that have the GPU's verdicts
/// but not its manifolds (a resident list).
pub fn verdict_tie(
    shapes: &[Shape],
    bodies: &[Body],
    pair: [u32; 2],
    margin: f32,
) -> Result<Agreement, Disagreement> {
    let geometry = PairGeometry::new(shapes, bodies, pair, margin);
    let beyond = geometry.cpu_beyond_the_margin();
    geometry.verdict_tie(beyond.map(|c| c.separation), "one side")
}

/// The CPU reference runs of rule 4 for `pair` (as given): its body of higher index nudged by
/// `τ` along the axes and diagonals of A's frame, and turned by [`GPU_AGREEMENT_TOLERANCE`]
/// radians about its axes; a run with no manifold runs again at `margin` + `2τ`, so that a
/// nudge apart keeps its manifold. Where they all name the same point ids as the unnudged run,
/// the CPU's decisions for this pair are not within rounding of a tie.
pub fn nudged_references(
    shapes: &[Shape],
    bodies: &[Body],
    pair: [u32; 2],
    margin: f32,
) -> Vec<Option<Manifold>> {
    PairGeometry::new(shapes, bodies, pair, margin).nudged()
}

/// The contract's `τ` for `pair`, length units: [`GPU_AGREEMENT_TOLERANCE`] × the larger of the
/// pair's scale and the distance between its bodies' origins.
pub fn pair_tolerance(shapes: &[Shape], bodies: &[Body], pair: [u32; 2]) -> f32 {
    PairGeometry::new(shapes, bodies, pair, 0.0).tolerance
}

/// Rule 3's conditioning of point `index` of `manifold` (a result for `pair` as given),
/// dimensionless, at least 1: how many times `τ` the point may move and its depth change.
pub fn point_conditioning(
    shapes: &[Shape],
    bodies: &[Body],
    pair: [u32; 2],
    manifold: &Manifold,
    index: usize,
) -> f32 {
    let id = manifold.points()[index].id;
    if id.kind() == FeatureId::OTHER {
        return OTHER_POINT_CONDITIONING;
    }
    let geometry = PairGeometry::new(shapes, bodies, pair, 0.0);
    conditioning(geometry.posed(), manifold.normal, id)
}

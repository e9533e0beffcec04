//! The GPU = CPU contract: what "the GPU's manifold equals the CPU's" means under WGSL's
//! precision rules, and the one comparator that judges it ([`compare_pair`], [`compare_batch`]).
//! docs/gpu-cpu-contract.md gives the reasons; here are the rules.
//!
//! A GPU may fuse `a * b + c` into one rounding and WGSL allows 2.5 ulp for division and 2 ulp
//! for `sqrt` and `inverseSqrt`: its results are the CPU's up to rounding, never bit for bit.
//! With `τ` = [`GPU_AGREEMENT_TOLERANCE`] × the larger of the pair's scale and its bodies'
//! distance ([`pair_tolerance`], length units), a GPU manifold agrees with the CPU's when:
//! 1. **Verdict**: both or neither have a manifold, except where the CPU's separation lies
//!    within `τ` of the margin ([`Agreement::VerdictTie`]).
//! 2. **Separation** within `τ`; **normal** within [`GPU_AGREEMENT_TOLERANCE`] radians (a
//!    closest-point contact's within [`GPU_GJK_MAX_DIRECTION_ERROR`], what the GPU's f32 GJK
//!    keeps), or with the same points and a support gap within `τ` of the CPU normal's (an
//!    ill-conditioned edge normal).
//! 3. **Points** matched by [`FeatureId`]: position and depth within `τ`, or within the point's
//!    conditioning × `τ` ([`point_conditioning`]: a point cut from an edge at a shallow angle
//!    moves along it; [`Agreement::Conditioned`]). Closest-point and primitive points (kind
//!    `OTHER`) get [`OTHER_POINT_CONDITIONING`] plus the normals' difference × the scale.
//! 4. **Ties** are accepted only where the CPU's own decision was within rounding, recomputed:
//!    a point id on one side only is the same point under another name (kept vertex or cut
//!    edge, on the features of both), another support vertex as far along the normal, or a
//!    decision the CPU reference makes the GPU's way when body B is nudged by `τ`
//!    ([`nudged_references`]; [`Agreement::FeatureTie`]). Another axis must have a support gap
//!    within `τ` of the CPU's (or of it ± the face preference), or be the deepest axis where
//!    every CPU point lies within `τ` of the margin (the GPU's clip kept none and retried), or
//!    be taken by a nudged run; and its points must be the CPU's contact on that axis, or a
//!    nudged run's ([`Agreement::AxisTie`]).
//!
//! Anything else is a [`Disagreement`]. Ties are counted ([`AgreementTally`]), never silent.

pub mod rays;

use glam::{DVec3, Quat, Vec3};
use rayon::prelude::*;

use crate::constants::{
    AXIS_PREFERENCE_TOLERANCE, CAPSULE_PARALLEL_SINE, GJK_OVERLAP_TOLERANCE, GPU_AGREEMENT_TOLERANCE,
    GPU_GJK_MAX_DIRECTION_ERROR, INCIDENT_FACE_TOLERANCE, PARALLEL_EDGE_SINE, pair_scale,
};
use crate::contact::{collide_shapes, manifold_on_axis};
use crate::hull::ConvexHull;
use crate::manifold::{ContactPoint, FeatureId, MAX_MANIFOLD_POINTS, Manifold};
use crate::narrowphase::validate::{canonical, normalized, restore_pair_order};
use crate::pose::Pose;
use crate::query::sat::{SatAxis, SatResult};
use crate::scene::Body;
use crate::shape::Shape;

/// How much farther than `τ` a closest-point or primitive point (kind `OTHER`) may lie from the
/// CPU's, dimensionless: the worst-conditioned of them is a capsule's segment clipped against
/// another nearly parallel one, amplifying rounding by 1 / [`CAPSULE_PARALLEL_SINE`] (20).
pub const OTHER_POINT_CONDITIONING: f32 = 1.0 / CAPSULE_PARALLEL_SINE;

/// How far from unit length a closest-point normal may be, dimensionless: the CPU divides the
/// f32 difference of its witness points by their distance, which is at least
/// [`GJK_OVERLAP_TOLERANCE`] × their size, so rounding of the points (2 ulps) grows by at most
/// the inverse of that.
pub const CLOSEST_NORMAL_LENGTH_SLACK: f32 = 2.0 * f32::EPSILON / GJK_OVERLAP_TOLERANCE as f32;

/// What [`PairGeometry::match_points`] found, in increasing order of leniency.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Found {
    Same,
    Conditioned,
    Tie,
}

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
    /// Point ids differ where the CPU's own decision was within rounding (rule 5).
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
    PairGeometry::new(shapes, bodies, pair, margin).reference(None, margin)
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
    pairs
        .par_iter()
        .enumerate()
        .map(|(index, &pair)| {
            let (g, c) = (gpu[index].as_ref(), cpu[index].as_ref());
            let mut tally = AgreementTally::default();
            match compare_pair(shapes, bodies, pair, margin, g, c) {
                Ok(agreement) => {
                    tally.add(agreement, g.is_some(), c.is_some());
                    Ok(tally)
                }
                Err(disagreement) => Err(BatchDisagreement {
                    index,
                    pair,
                    disagreement,
                }),
            }
        })
        .reduce(
            || Ok(AgreementTally::default()),
            |x, y| match (x, y) {
                (Ok(x), Ok(y)) => Ok(x.merged(&y)),
                (Err(x), Err(y)) => Err(if x.index <= y.index { x } else { y }),
                (Err(e), _) | (_, Err(e)) => Err(e),
            },
        )
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
    PairGeometry::new(shapes, bodies, pair, margin).verdict_tie(None)
}

/// The CPU reference runs of rule 5 for `pair` (as given): body B nudged by `τ` along the axes
/// and diagonals of A's frame, and turned by [`GPU_AGREEMENT_TOLERANCE`] radians about its
/// axes; a run with no manifold runs again at `margin` + `2τ`, so that a nudge apart keeps
/// its manifold. Where they all name the same point ids as
/// the unnudged run, the CPU's decisions for this pair are not within rounding of a tie.
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
    PairGeometry::new(shapes, bodies, pair, 0.0).conditioning(manifold.normal, id)
}

/// A nudge of body B within rounding (rule 5): a translation by `τ` or a rotation by `τ / scale`.
#[derive(Clone, Copy, Debug)]
enum Nudge {
    Move(DVec3),
    Turn(Vec3, f32),
}

/// The nudges of rule 5 in the frame `frame` (A's rotation): translations by `tolerance` along
/// its 6 axis directions and its 8 diagonals (where two boundaries coincide, as on aligned
/// boxes, only a diagonal moves past both), and turns by [`GPU_AGREEMENT_TOLERANCE`] radians
/// about its 3 axes, both ways.
fn nudges(frame: Quat, tolerance: f32) -> Vec<Nudge> {
    let t = f64::from(tolerance);
    let angle = GPU_AGREEMENT_TOLERANCE;
    let axes = [Vec3::X, Vec3::Y, Vec3::Z].map(|axis| frame * axis);
    let mut nudges = Vec::with_capacity(20);
    for sign in [1.0f32, -1.0] {
        for axis in axes {
            nudges.push(Nudge::Move(axis.as_dvec3() * (f64::from(sign) * t)));
            nudges.push(Nudge::Turn(axis, sign * angle));
        }
    }
    for corner in 0..8 {
        let sign = |bit: usize| if corner >> bit & 1 == 0 { 1.0 } else { -1.0 };
        let diagonal = axes[0] * sign(0) + axes[1] * sign(1) + axes[2] * sign(2);
        nudges.push(Nudge::Move(diagonal.as_dvec3() * (t / 3f64.sqrt())));
    }
    nudges
}

/// One pair, its two bodies (given order, unit rotations) and the contract's tolerance.
struct PairGeometry<'a> {
    shapes: &'a [Shape],
    /// Bodies in canonical order (lower index first), rotations normalized.
    canonical: [Body; 2],
    /// The pair as given.
    pair: [u32; 2],
    margin: f32,
    /// Given A and B: shape and pose.
    a: (&'a Shape, Pose),
    b: (&'a Shape, Pose),
    scale: f32,
    /// `τ`, length units: [`GPU_AGREEMENT_TOLERANCE`] × the larger of the scale and the
    /// distance between the two bodies' origins.
    tolerance: f32,
}

impl<'a> PairGeometry<'a> {
    fn new(shapes: &'a [Shape], bodies: &[Body], pair: [u32; 2], margin: f32) -> Self {
        let [lo, hi] = canonical(pair);
        let canonical = [normalized(&bodies[lo as usize]), normalized(&bodies[hi as usize])];
        let given = |i: u32| canonical[usize::from(i != lo)];
        let (ba, bb) = (given(pair[0]), given(pair[1]));
        let (sa, sb) = (&shapes[ba.shape as usize], &shapes[bb.shape as usize]);
        let scale = pair_scale(sa.size(), sb.size());
        // Rounding of the relative pose grows with the bodies' distance (a half-space's origin
        // may lie far from the contact).
        let reach = scale.max(ba.pose.translation.distance(bb.pose.translation) as f32);
        PairGeometry {
            shapes,
            canonical,
            pair,
            margin,
            a: (sa, ba.pose),
            b: (sb, bb.pose),
            scale,
            tolerance: GPU_AGREEMENT_TOLERANCE * reach,
        }
    }

    /// The CPU reference at `margin`, with canonical B nudged.
    fn reference(&self, nudge: Option<Nudge>, margin: f32) -> Option<Manifold> {
        let [lo, mut hi] = self.canonical;
        match nudge {
            None => {}
            Some(Nudge::Move(offset)) => hi.pose.translation += offset,
            Some(Nudge::Turn(axis, angle)) => {
                hi.pose.rotation = (Quat::from_axis_angle(axis, angle) * hi.pose.rotation).normalize();
            }
        }
        let mut result = collide_shapes(
            &self.shapes[lo.shape as usize],
            &lo.pose,
            &self.shapes[hi.shape as usize],
            &hi.pose,
            margin,
        );
        restore_pair_order(self.pair, &mut result);
        result
    }

    /// Rule 5's runs.
    /// Rule 5's runs; a run that finds no manifold runs again at the margin plus `2τ`, so a
    /// nudge that moved the bodies apart by up to `τ` still tells its decisions (points kept
    /// only by the wider margin count as dropped: [`Self::keeps`]).
    fn nudged(&self) -> Vec<Option<Manifold>> {
        nudges(self.a.1.rotation, self.tolerance)
            .into_iter()
            .map(|n| {
                self.reference(Some(n), self.margin)
                    .or_else(|| self.reference(Some(n), self.margin + 2.0 * self.tolerance))
            })
            .collect()
    }

    /// True when nudged run `m` keeps a point with id `id` within the margin.
    fn keeps(&self, m: &Option<Manifold>, id: FeatureId) -> bool {
        m.as_ref()
            .is_some_and(|m| m.points().iter().any(|q| q.id == id && q.depth >= -self.margin))
    }

    fn compare(&self, gpu: Option<&Manifold>, cpu: Option<&Manifold>) -> Result<Agreement, Disagreement> {
        let (g, c) = match (gpu, cpu) {
            (None, None) => return Ok(Agreement::NoContact),
            (Some(g), Some(c)) => (g, c),
            (Some(g), None) => {
                self.well_formed(g, None)?;
                return self.verdict_tie(None);
            }
            (None, Some(c)) => return self.verdict_tie(Some(c.separation)),
        };
        self.well_formed(g, Some(c))?;
        let tolerance = self.tolerance;
        if (g.separation - c.separation).abs() > tolerance {
            return Err(self.disagree(
                DisagreementKind::Separation,
                format!("separations differ by more than {tolerance:e}"),
                g,
                c,
            ));
        }
        // Rule 2: the CPU's axis (its normal, or one with its support gap and its points).
        let probes = std::cell::OnceCell::new();
        let probes = || probes.get_or_init(|| self.nudged()).as_slice();
        // A closest-point normal (f32 GJK on the GPU) is known only to GPU_GJK_MAX_DIRECTION_ERROR.
        let closest_point = g
            .points()
            .iter()
            .chain(c.points())
            .all(|p| p.id.kind() == FeatureId::OTHER);
        let normal_tolerance = if closest_point {
            GPU_GJK_MAX_DIRECTION_ERROR
        } else {
            GPU_AGREEMENT_TOLERANCE
        };
        let same_normal = g.normal.distance(c.normal) <= normal_tolerance;
        let (gap_g, gap_c) = (self.support_gap(g.normal), self.support_gap(c.normal));
        let t = f64::from(tolerance);
        if same_normal || ((gap_g - gap_c).abs() <= t && same_ids(g, c)) {
            match self.match_points(g, c, 1.0, probes) {
                Ok(found) => {
                    return Ok(match found {
                        Found::Same if same_normal => Agreement::Same,
                        Found::Same | Found::Conditioned => Agreement::Conditioned,
                        Found::Tie => Agreement::FeatureTie,
                    });
                }
                // The same normal on other features (an edge pair along a face normal) is
                // another axis: below.
                Err(what) if !same_normal || same_ids(g, c) => {
                    return Err(self.disagree(DisagreementKind::Point, what, g, c));
                }
                Err(_) => {}
            }
        }
        // Another axis: its support gap ties the CPU's (with or without the face preference),
        // or a nudged CPU run takes it; and the CPU's contact on that axis has the GPU's points.
        let preference = f64::from(AXIS_PREFERENCE_TOLERANCE * self.scale);
        let d = gap_g - gap_c;
        // A face clip whose every point the CPU kept within `τ` of the margin may keep none on
        // the GPU, which then retries on the deepest axis (the separation's own).
        let clip_emptied = c
            .points()
            .iter()
            .all(|q| (q.depth + self.margin).abs() <= tolerance)
            && (gap_g - f64::from(c.separation)).abs() <= t;
        let tied = [0.0, preference, -preference].iter().any(|k| (d - k).abs() <= t)
            || clip_emptied
            || probes()
                .iter()
                .flatten()
                .any(|m| m.normal.distance(g.normal) <= 2.0 * GPU_AGREEMENT_TOLERANCE);
        if !tied {
            return Err(self.disagree(
                DisagreementKind::Normal,
                format!(
                    "support gaps along the normals: GPU {gap_g:e}, CPU {gap_c:e} (face preference {preference:e}); no CPU run nudged by {tolerance:e} takes the GPU's"
                ),
                g,
                c,
            ));
        }
        let mut failures = Vec::new();
        for forced in self
            .contacts_on_axes_of(g, c.separation)
            .iter()
            .chain(probes().iter().flatten())
        {
            match self.match_points(g, forced, 2.0, probes) {
                Ok(_) => return Ok(Agreement::AxisTie),
                Err(what) => failures.push(what),
            }
        }
        Err(self.disagree(
            DisagreementKind::Point,
            format!(
                "the GPU's axis ties the CPU's, but neither the CPU's contact on it nor a nudged run has its points: {failures:?}"
            ),
            g,
            c,
        ))
    }

    /// Rules 3 and 5 for the points of GPU manifold `g` against reference `r` (the CPU's, or
    /// the CPU's on the GPU's axis with `slack` 2): matched ids within their conditioning;
    /// an id on one side only decided as the GPU did by a nudged CPU run (`probes`).
    fn match_points<'p>(
        &self,
        g: &Manifold,
        r: &Manifold,
        slack: f32,
        probes: impl Fn() -> &'p [Option<Manifold>],
    ) -> Result<Found, String> {
        let tolerance = slack * self.tolerance;
        let mut found = Found::Same;
        let mut accounted = Vec::new();
        for p in g.points() {
            if let Some(q) = r.points().iter().find(|q| q.id == p.id) {
                if self.point_difference(g, r, p, q, tolerance)? {
                    found = found.max(Found::Conditioned);
                }
                continue;
            }
            // A tie with a reference point (two vertices equally far along the normal) accounts
            // for that point too.
            // Or the same point under a name of another kind, on the features of both (a vertex
            // on a side plane is kept, a vertex id, or cut, an edge id, as rounding decides), or a
            // primitive's single point where the CPU kept a clipped one within `τ` of the margin
            // (a clip that kept nothing falls back to it, at the same place).
            let renamed = || {
                r.points()
                    .iter()
                    .find(|q| {
                        !g.points().iter().any(|o| o.id == q.id)
                            && !accounted.contains(&q.id)
                            && (p.id.kind(), p.id.flag()) != (q.id.kind(), q.id.flag())
                            && p.position.distance(q.position) as f32 <= tolerance
                            && (p.depth - q.depth).abs() <= tolerance
                            && ((self.on_features(g.normal, p, p.id, tolerance)
                                && self.on_features(g.normal, p, q.id, tolerance))
                                || (p.id.kind() == FeatureId::OTHER
                                    && (q.depth + self.margin).abs() <= tolerance))
                    })
                    .map(|q| q.id)
            };
            let tied = self
                .support_tie(g, r, p)
                .or_else(|| self.vertex_tie(g, r, p, tolerance + self.tolerance))
                .or_else(renamed);
            if let Some(id) = tied {
                accounted.push(id);
                found = Found::Tie;
                continue;
            }
            let explained = probes()
                .iter()
                .flatten()
                .any(|m| self.vertex_tie(g, m, p, tolerance + self.tolerance).is_some())
                || probes().iter().flatten().any(|m| {
                    m.points().iter().any(|q| {
                        q.id == p.id
                            && self
                                .point_difference(g, m, p, q, tolerance + self.tolerance)
                                .is_ok()
                    })
                });
            if !explained {
                return Err(format!(
                    "GPU point {:?} is in no CPU run nudged by {:e} (there)",
                    p.id, self.tolerance
                ));
            }
            found = Found::Tie;
        }
        for q in r
            .points()
            .iter()
            .filter(|q| !g.points().iter().any(|p| p.id == q.id))
        {
            if !accounted.contains(&q.id) && probes().iter().all(|m| self.keeps(m, q.id)) {
                return Err(format!(
                    "the GPU lacks CPU point {:?}, which every CPU run nudged by {:e} keeps",
                    q.id, self.tolerance
                ));
            }
            found = Found::Tie;
        }
        Ok(found)
    }

    /// The CPU's contacts (world, pair as given) on the hull axes the GPU manifold `g` may have
    /// been built on: its edge pair, or each face of A facing along its normal and of B against
    /// it (within 1e-3 radians); separation `separation`. Empty for other shapes.
    fn contacts_on_axes_of(&self, g: &Manifold, separation: f32) -> Vec<Manifold> {
        let [lo, hi] = self.canonical;
        let (Some(hull_lo), Some(hull_hi)) = (
            self.shapes[lo.shape as usize].as_hull(),
            self.shapes[hi.shape as usize].as_hull(),
        ) else {
            return Vec::new();
        };
        // The GPU's manifold in canonical order, normal in canonical A's frame.
        let reversed = self.pair[0] > self.pair[1];
        let canonical = if reversed { g.swapped() } else { *g };
        let normal = lo.pose.rotation.inverse() * canonical.normal;
        let b_in_a = lo.pose.relative_to_self(&hi.pose);
        let facing = |hull: &ConvexHull, direction: Vec3| -> Vec<u32> {
            (0..hull.planes().len() as u32)
                .filter(|&f| hull.planes()[f as usize].normal.dot(direction) >= 1.0 - 5.0e-7)
                .collect()
        };
        let mut axes: Vec<SatAxis> = canonical
            .points()
            .iter()
            .filter(|p| {
                p.id.kind() == FeatureId::EDGE_PAIR
                    && (p.id.high() as usize) < hull_lo.edges().len()
                    && (p.id.low() as usize) < hull_hi.edges().len()
            })
            .map(|p| SatAxis::EdgePair {
                edge_a: p.id.high(),
                edge_b: p.id.low(),
            })
            .take(1)
            .collect();
        if axes.is_empty() {
            axes.extend(facing(hull_lo, normal).into_iter().map(SatAxis::FaceA));
            axes.extend(
                facing(hull_hi, b_in_a.inverse_transform_vector(-normal))
                    .into_iter()
                    .map(SatAxis::FaceB),
            );
        }
        axes.into_iter()
            .filter_map(|axis| {
                let sat = SatResult {
                    axis,
                    normal,
                    axis_separation: self.support_gap(g.normal) as f32,
                    separation,
                };
                let mut m = manifold_on_axis(hull_lo, &lo.pose, hull_hi, &b_in_a, &sat, self.margin);
                restore_pair_order(self.pair, &mut m);
                m
            })
            .collect()
    }

    /// Rule 3 for GPU point `p` of `g` against reference point `q` of `r` (same id): `Ok(false)`
    /// within `tolerance`, `Ok(true)` within its conditioning × `tolerance` (plus, for kind
    /// `OTHER`, the normals' difference × the scale), else what differs.
    fn point_difference(
        &self,
        g: &Manifold,
        r: &Manifold,
        p: &ContactPoint,
        q: &ContactPoint,
        tolerance: f32,
    ) -> Result<bool, String> {
        let (moved, deeper) = (p.position.distance(q.position) as f32, (p.depth - q.depth).abs());
        if moved <= tolerance && deeper <= tolerance {
            return Ok(false);
        }
        let (conditioning, turn) = if p.id.kind() == FeatureId::OTHER {
            // A closest-point contact's surface points turn with its normal.
            (OTHER_POINT_CONDITIONING, g.normal.distance(r.normal) * self.scale)
        } else {
            (self.conditioning(r.normal, p.id), 0.0)
        };
        let allowed = conditioning * tolerance;
        if moved <= allowed + turn && deeper <= allowed {
            Ok(true)
        } else if p.id.kind() == FeatureId::OTHER
            && self.a.0.as_hull().is_some()
            && self.b.0.as_hull().is_some()
            && deeper <= allowed
            && self.on_both_surfaces(g.normal, p, allowed)
        {
            // Two hulls' closest points are unique only up to the set of closest points (two
            // parallel faces apart): any point of it lies on both flat surfaces.
            Ok(true)
        } else {
            Err(format!(
                "point {:?} is {moved:e} from the CPU's, depths {deeper:e} apart; its conditioning {conditioning} allows {allowed:e}",
                p.id
            ))
        }
    }

    /// Rule 5 for a closest-point contact of two hulls (one point of kind `OTHER` each side,
    /// ids naming the support vertices of A along the normal and of B against it): the GPU's
    /// vertices support as far along the reference's normal as the reference's vertices, within
    /// `τ` plus the two normals' difference × the hull's reach (the CPU's own choice was a tie).
    /// The reference point's id, or `None`.
    fn support_tie(&self, g: &Manifold, r: &Manifold, p: &ContactPoint) -> Option<FeatureId> {
        let (Some(hull_a), Some(hull_b), [q]) = (self.a.0.as_hull(), self.b.0.as_hull(), r.points()) else {
            return None;
        };
        if p.id.kind() != FeatureId::OTHER
            || q.id.kind() != FeatureId::OTHER
            || g.point_count() != 1
            || p.position.distance(q.position) as f32 > OTHER_POINT_CONDITIONING * self.tolerance
        {
            return None;
        }
        let turn = g.normal.distance(r.normal);
        let ties = |hull: &ConvexHull, pose: &Pose, direction: Vec3, mine: u32, theirs: u32| {
            let direction = pose.rotation.inverse() * direction;
            let reach = hull.centroid().length() + hull.radius();
            let along = |v: u32| hull.vertices().get(v as usize).map(|v| v.dot(direction));
            match (along(mine), along(theirs)) {
                (Some(x), Some(y)) => (x - y).abs() <= self.tolerance + 2.0 * turn * reach,
                _ => false,
            }
        };
        (ties(hull_a, &self.a.1, r.normal, p.id.high(), q.id.high())
            && ties(hull_b, &self.b.1, -r.normal, p.id.low(), q.id.low()))
        .then_some(q.id)
    }

    /// True when the surface points of `p` (`position ± normal × depth / 2`, A's and B's) lie
    /// within `tolerance` of A's and B's surfaces.
    fn on_both_surfaces(&self, normal: Vec3, p: &ContactPoint, tolerance: f32) -> bool {
        let half = normal.as_dvec3() * f64::from(0.5 * p.depth);
        surface_distance(self.a.0, &self.a.1, p.position + half) <= f64::from(tolerance)
            && surface_distance(self.b.0, &self.b.1, p.position - half) <= f64::from(tolerance)
    }

    /// Rule 5 for a point at a vertex (face kinds, flag 0: the incident body's deepest vertex
    /// or a kept incident vertex): the GPU's point lies at its vertex, and reference `r` has a
    /// point on the same face at another vertex of the same depth, within `tolerance` (two
    /// vertices equally deep, as on an edge parallel to the face: rounding picks one). That
    /// point's id, or `None`.
    fn vertex_tie(&self, g: &Manifold, r: &Manifold, p: &ContactPoint, tolerance: f32) -> Option<FeatureId> {
        let (Some(hull_a), Some(hull_b)) = (self.a.0.as_hull(), self.b.0.as_hull()) else {
            return None;
        };
        if p.id.kind() > FeatureId::FACE_B || p.id.flag() {
            return None;
        }
        // The vertex is on the body opposite the named face: B for FACE_A, A for FACE_B.
        let (hull, pose, sign) = if p.id.kind() == FeatureId::FACE_A {
            (hull_b, &self.b.1, -1.0)
        } else {
            (hull_a, &self.a.1, 1.0)
        };
        let at_vertex = hull.vertices().get(p.id.low() as usize).is_some_and(|&v| {
            let surface = p.position + (g.normal * (sign * 0.5 * p.depth)).as_dvec3();
            pose.transform_point(v).distance(surface) as f32 <= tolerance
        });
        if !at_vertex {
            return None;
        }
        r.points()
            .iter()
            .find(|q| {
                q.id.kind() == p.id.kind()
                    && !q.id.flag()
                    && q.id.high() == p.id.high()
                    && q.id != p.id
                    && (q.depth - p.depth).abs() <= tolerance
            })
            .map(|q| q.id)
    }

    /// True when the surface points of `p` (A's `position + normal × depth / 2`, B's minus) lie
    /// on the features `id` names, within its conditioning × `tolerance`: a face id's vertex, a
    /// cut id's two edge lines (each leaving its named vertex in a contact face's loop), an edge
    /// pair's two edge lines. Never for kind `OTHER`.
    fn on_features(&self, normal: Vec3, p: &ContactPoint, id: FeatureId, tolerance: f32) -> bool {
        let (Some(hull_a), Some(hull_b)) = (self.a.0.as_hull(), self.b.0.as_hull()) else {
            return false;
        };
        let half = normal.as_dvec3() * f64::from(0.5 * p.depth);
        let on_a = (hull_a, &self.a.1, p.position + half);
        let on_b = (hull_b, &self.b.1, p.position - half);
        let allowed = f64::from(self.conditioning(normal, id) * tolerance);
        // Distance from a surface point to the line of an edge (vertex indices), or to a vertex.
        let to_line = |(hull, pose, point): (&ConvexHull, &Pose, DVec3), [s, e]: [u32; 2]| {
            let start = pose.transform_point(hull.vertices()[s as usize]);
            let direction = (pose.transform_point(hull.vertices()[e as usize]) - start).normalize();
            let offset = point - start;
            (offset - direction * offset.dot(direction)).length()
        };
        // A cut's edge leaves its named vertex in the loop of a face facing the contact.
        let leaving = |(hull, pose, point): (&ConvexHull, &Pose, DVec3), vertex: u32, facing: Vec3| {
            (vertex as usize) < hull.vertices().len()
                && leaving_lines((hull, pose), vertex, facing)
                    .iter()
                    .any(|&direction| {
                        let offset = point - pose.transform_point(hull.vertices()[vertex as usize]);
                        let direction = direction.normalize().as_dvec3();
                        (offset - direction * offset.dot(direction)).length() <= allowed
                    })
        };
        let (reference, other, facing) = if id.kind() == FeatureId::FACE_A {
            (on_a, on_b, normal)
        } else {
            (on_b, on_a, -normal)
        };
        match (id.kind(), id.flag()) {
            (FeatureId::OTHER, _) => false,
            (FeatureId::EDGE_PAIR, _) => {
                let edge = |side: (&ConvexHull, &Pose, DVec3), index: u32| {
                    side.0
                        .edges()
                        .get(index as usize)
                        .is_some_and(|e| to_line(side, e.vertices) <= allowed)
                };
                edge(on_a, id.high()) && edge(on_b, id.low())
            }
            (_, true) => leaving(reference, id.high(), facing) && leaving(other, id.low(), -facing),
            (_, false) => other
                .0
                .vertices()
                .get(id.low() as usize)
                .is_some_and(|&v| other.1.transform_point(v).distance(other.2) <= allowed),
        }
    }

    /// Rule 3's conditioning of a clipped or edge-pair point with id `id` (kind not `OTHER`),
    /// dimensionless, at least 1: 1 / the sine of the angle, seen along world `normal`, between
    /// the two lines the point lies on (at most 1 / [`PARALLEL_EDGE_SINE`]): an edge pair's two
    /// edges; a cut point's reference side edge and incident edge (each leaving the named vertex
    /// in its face's loop); a reference corner's two edges on its face; none for a kept incident
    /// vertex (exact), told apart by its named face being the reference face (along the normal
    /// to 1e-6) and no face at the vertex being one.
    fn conditioning(&self, normal: Vec3, id: FeatureId) -> f32 {
        let (Some(hull_a), Some(hull_b)) = (self.a.0.as_hull(), self.b.0.as_hull()) else {
            return OTHER_POINT_CONDITIONING;
        };
        let a = (hull_a, &self.a.1);
        let b = (hull_b, &self.b.1);
        // A's contact faces face along the normal, B's against it.
        let (reference, other, reference_facing) = if id.kind() == FeatureId::FACE_A {
            (a, b, normal)
        } else {
            (b, a, -normal)
        };
        let other_facing = -reference_facing;
        let unit = |v: Vec3| v.normalize_or_zero();
        let sine = match (id.kind(), id.flag()) {
            // Closest points of two lines: 1 / the sine of their angle.
            (FeatureId::EDGE_PAIR, _) => edge_line(a, id.high())
                .iter()
                .flat_map(|u| {
                    edge_line(b, id.low())
                        .into_iter()
                        .map(move |v| unit(*u).cross(unit(v)).length())
                })
                .fold(1.0f32, f32::min),
            // An incident edge cut by a side plane (the reference edge and the normal): the cut
            // slides along the edge by 1 / the sine of the edge's angle to the plane.
            (_, true) => {
                let sides: Vec<Vec3> = leaving_lines(reference, id.high(), reference_facing)
                    .iter()
                    .map(|&e| unit(e.cross(normal)))
                    .collect();
                leaving_lines(other, id.low(), other_facing)
                    .iter()
                    .flat_map(|&e| sides.iter().map(move |&side| unit(e).dot(side).abs()))
                    .fold(1.0f32, f32::min)
            }
            (_, false) => {
                // A kept incident vertex (exact) where only the named face, the reference one,
                // lies along the normal; else a reference corner, where two side planes meet at
                // the angle of its two edges.
                let exactly = 1.0 - 1.0e-6;
                let (named_hull, named_pose) = if id.kind() == FeatureId::FACE_A { a } else { b };
                let named_along = named_hull.planes().get(id.high() as usize).is_some_and(|plane| {
                    (named_pose.rotation * plane.normal).dot(reference_facing) >= exactly
                });
                // (The named face is on the reference body of the id's kind; the vertex on the
                // other, which faces the opposite way.)
                let corner_along = faces_at(other.0, other.1, id.low(), other_facing, 0.0)
                    .first()
                    .is_some_and(|&f| {
                        (other.1.rotation * other.0.planes()[f].normal).dot(other_facing) >= exactly
                    });
                if named_along && !corner_along {
                    return 1.0;
                }
                match corner_lines(other, id.low(), other_facing)[..] {
                    [u, v] => unit(u).cross(unit(v)).length(),
                    _ => 1.0,
                }
            }
        };
        1.0 / sine.max(PARALLEL_EDGE_SINE)
    }

    /// Rule 1 for a pair with a manifold on one side; `cpu_separation` when the CPU has one.
    fn verdict_tie(&self, cpu_separation: Option<f32>) -> Result<Agreement, Disagreement> {
        let tolerance = self.tolerance;
        let separation = cpu_separation.or_else(|| {
            self.reference(None, self.margin + 2.0 * tolerance)
                .map(|m| m.separation)
        });
        match separation {
            Some(s) if (s - self.margin).abs() <= tolerance => Ok(Agreement::VerdictTie),
            _ => Err(Disagreement {
                kind: DisagreementKind::Verdict,
                detail: format!(
                    "only the {} has a manifold; the CPU's separation is {}, margin {} (tolerance {tolerance:e})",
                    if cpu_separation.is_some() { "CPU" } else { "GPU" },
                    separation.map_or("beyond the margin + 2 tolerances".into(), |s| s.to_string()),
                    self.margin
                ),
            }),
        }
    }

    /// Finite numbers, 1 to 4 points, and a normal as close to unit length as the CPU's
    /// (`cpu`, when it has a manifold), or a closest-point normal can be, plus rounding.
    fn well_formed(&self, m: &Manifold, cpu: Option<&Manifold>) -> Result<(), Disagreement> {
        let finite = m.normal.is_finite()
            && m.separation.is_finite()
            && m.points()
                .iter()
                .all(|p| p.position.is_finite() && p.depth.is_finite());
        let closest = m.points().iter().any(|p| p.id.kind() == FeatureId::OTHER);
        let cpu_slack = cpu.map_or(0.0, |c| (c.normal.length() - 1.0).abs());
        let cpu_slack = if closest {
            cpu_slack.max(CLOSEST_NORMAL_LENGTH_SLACK)
        } else {
            cpu_slack
        };
        let unit = (m.normal.length() - 1.0).abs() <= GPU_AGREEMENT_TOLERANCE + cpu_slack;
        if finite && unit && (1..=MAX_MANIFOLD_POINTS).contains(&m.point_count()) {
            Ok(())
        } else {
            Err(Disagreement {
                kind: DisagreementKind::Malformed,
                detail: format!("not finite, not unit or not 1 to 4 points: {m:?}"),
            })
        }
    }

    fn disagree(&self, kind: DisagreementKind, what: String, g: &Manifold, c: &Manifold) -> Disagreement {
        Disagreement {
            kind,
            detail: format!("{what}\n gpu {g:?}\n cpu {c:?}"),
        }
    }

    /// The two shapes' support gap along world `normal` (from A toward B), f64: how far B's
    /// lowest point lies beyond A's highest. Equals the separation along the SAT's axis.
    fn support_gap(&self, normal: Vec3) -> f64 {
        let n = normal.as_dvec3();
        let lowest_b = -support(self.b.0, &self.b.1, -n);
        lowest_b - support(self.a.0, &self.a.1, n)
    }
}

/// True when both manifolds name the same set of point ids.
fn same_ids(g: &Manifold, c: &Manifold) -> bool {
    g.point_count() == c.point_count() && g.points().iter().all(|p| c.points().iter().any(|q| q.id == p.id))
}

/// Largest of `n · x` over `shape` at `pose`, f64 (`n` world, unit). A half-space is bounded
/// only along its own normal (within 1e-9 of its cosine); elsewhere this is infinite.
fn support(shape: &Shape, pose: &Pose, n: DVec3) -> f64 {
    let d = pose.rotation.as_dquat().inverse() * n;
    let reach = match shape {
        Shape::Hull(_) | Shape::Cuboid(_) => {
            let hull = shape.as_hull().expect("a hull or box");
            hull.vertices()
                .iter()
                .map(|v| v.as_dvec3().dot(d))
                .fold(f64::NEG_INFINITY, f64::max)
        }
        Shape::Sphere(s) => f64::from(s.radius) * d.length(),
        Shape::Capsule(c) => f64::from(c.half_height) * d.y.abs() + f64::from(c.radius) * d.length(),
        Shape::HalfSpace(h) => {
            let along = h.normal.as_dvec3().dot(d);
            if along >= 1.0 - 1.0e-9 {
                f64::from(h.offset) * along
            } else {
                f64::INFINITY
            }
        }
    };
    reach + n.dot(pose.translation)
}

/// The world direction of `hull`'s edge `index` (none when there is no such edge).
fn edge_line((hull, pose): (&ConvexHull, &Pose), index: u32) -> Vec<Vec3> {
    hull.edges()
        .get(index as usize)
        .map(|e| {
            pose.rotation
                * (hull.vertices()[e.vertices[1] as usize] - hull.vertices()[e.vertices[0] as usize])
        })
        .into_iter()
        .collect()
}

/// The faces of `hull` (posed by `pose`) holding `vertex` whose outward normals lie along world
/// `facing` within `within` of the best of them (in cosine), best first.
fn faces_at(hull: &ConvexHull, pose: &Pose, vertex: u32, facing: Vec3, within: f32) -> Vec<usize> {
    let local_normal = pose.rotation.inverse() * facing;
    let along = |f: usize| hull.planes()[f].normal.dot(local_normal);
    let mut faces: Vec<usize> = (0..hull.faces().len())
        .filter(|&f| hull.face_loop(f).contains(&vertex))
        .collect();
    faces.sort_by(|&f, &g| along(g).total_cmp(&along(f)));
    let best = faces.first().map_or(0.0, |&f| along(f));
    faces.retain(|&f| along(f) >= best - within);
    faces
}

/// The world direction from `vertex` to the vertex before (`step` = -1) or after (+1) it in
/// `face`'s loop.
fn loop_edge(hull: &ConvexHull, pose: &Pose, face: usize, vertex: u32, step: isize) -> Vec3 {
    let face_loop = hull.face_loop(face);
    let n = face_loop.len() as isize;
    let at = face_loop
        .iter()
        .position(|&v| v == vertex)
        .expect("the face holds the vertex") as isize;
    let other = face_loop[(at + step).rem_euclid(n) as usize];
    pose.rotation * (hull.vertices()[other as usize] - hull.vertices()[vertex as usize])
}

/// A reference corner's two lines: the edges at `vertex` of the face holding it that faces
/// most along `facing` (world).
fn corner_lines((hull, pose): (&ConvexHull, &Pose), vertex: u32, facing: Vec3) -> Vec<Vec3> {
    faces_at(hull, pose, vertex, facing, 0.0)
        .first()
        .map(|&face| {
            vec![
                loop_edge(hull, pose, face, vertex, -1),
                loop_edge(hull, pose, face, vertex, 1),
            ]
        })
        .unwrap_or_default()
}

/// The edges leaving `vertex` (loop order) on the faces that may have been the reference or
/// incident face there: those facing along `facing` (world) within
/// [`INCIDENT_FACE_TOLERANCE`] of the best (the incident face choice's own tie tolerance).
fn leaving_lines((hull, pose): (&ConvexHull, &Pose), vertex: u32, facing: Vec3) -> Vec<Vec3> {
    faces_at(hull, pose, vertex, facing, INCIDENT_FACE_TOLERANCE)
        .into_iter()
        .map(|face| loop_edge(hull, pose, face, vertex, 1))
        .collect()
}

/// How far world point `p` lies from the surface of `shape` at `pose` (a hull's largest face
/// plane distance, exact near its faces), f64.
fn surface_distance(shape: &Shape, pose: &Pose, p: DVec3) -> f64 {
    let p = pose.rotation.as_dquat().inverse() * (p - pose.translation);
    let distance = match shape {
        Shape::Hull(_) | Shape::Cuboid(_) => shape
            .as_hull()
            .expect("a hull or box")
            .planes()
            .iter()
            .map(|plane| plane.normal.as_dvec3().dot(p) - f64::from(plane.offset))
            .fold(f64::NEG_INFINITY, f64::max),
        Shape::Sphere(s) => p.length() - f64::from(s.radius),
        Shape::Capsule(c) => {
            let h = f64::from(c.half_height);
            p.distance(DVec3::new(0.0, p.y.clamp(-h, h), 0.0)) - f64::from(c.radius)
        }
        Shape::HalfSpace(h) => h.normal.as_dvec3().dot(p) - f64::from(h.offset),
    };
    distance.abs()
}

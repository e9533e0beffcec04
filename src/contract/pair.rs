//! One pair under the contract: its two bodies as the CPU reference sees them, the reference
//! runs (plain, nudged by `τ`, on another axis), and the rules applied in order (verdict,
//! separation, normal or axis, points by id, ties).

use glam::{DVec3, Quat, Vec3};

use super::features::{PosedPair, conditioning, on_both_surfaces, on_features, support_tie, vertex_tie};
use super::{Agreement, Disagreement, DisagreementKind, OTHER_POINT_CONDITIONING};
use crate::constants::{
    AXIS_PREFERENCE_TOLERANCE, GPU_AGREEMENT_TOLERANCE, GPU_GJK_MAX_DIRECTION_ERROR, PARALLEL_EDGE_SINE,
    pair_scale,
};
use crate::contact::{collide_shapes, manifold_on_axis};
use crate::hull::ConvexHull;
use crate::manifold::{ContactPoint, FeatureId, MAX_MANIFOLD_POINTS, Manifold};
use crate::pose::Pose;
use crate::query::sat::{SatAxis, SatResult};
use crate::scene::Body;
use crate::scene::validate::{canonical, is_mesh_pair, normalized, restore_pair_order};
use crate::shape::Shape;
use crate::shape::compound::child_pose;

/// What [`PairGeometry::match_points`] found, in increasing order of leniency.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Found {
    Same,
    Conditioned,
    Tie,
}

/// A nudge of the pair's body of higher index within rounding (rule 4): a translation by `τ` or
/// a turn by [`GPU_AGREEMENT_TOLERANCE`] radians.
#[derive(Clone, Copy, Debug)]
enum Nudge {
    Move(DVec3),
    Turn(Vec3, f32),
}

/// The nudges of rule 4 in the frame `frame` (A's rotation): translations by `tolerance` along
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
pub(super) struct PairGeometry<'a> {
    pub(super) shapes: &'a [Shape],
    /// Bodies in canonical order (lower index first), rotations normalized.
    pub(super) canonical: [Body; 2],
    /// The pair as given.
    pub(super) pair: [u32; 2],
    pub(super) margin: f32,
    /// Given A and B: shape and pose.
    pub(super) a: (&'a Shape, Pose),
    pub(super) b: (&'a Shape, Pose),
    pub(super) scale: f32,
    /// `τ`, length units: [`GPU_AGREEMENT_TOLERANCE`] × the larger of the scale and the
    /// distance between the two bodies' origins.
    pub(super) tolerance: f32,
}

impl<'a> PairGeometry<'a> {
    pub(super) fn new(shapes: &'a [Shape], bodies: &[Body], pair: [u32; 2], margin: f32) -> Self {
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

    /// True when either body is a compound.
    fn compound_pair(&self) -> bool {
        matches!(self.a.0, Shape::Compound(_)) || matches!(self.b.0, Shape::Compound(_))
    }

    /// True when either body is a triangle mesh ([`is_mesh_pair`]).
    pub(super) fn mesh_pair(&self) -> bool {
        is_mesh_pair(self.a.0, self.b.0)
    }

    /// The two shapes and their poses (given order), as the feature tests read them.
    pub(super) fn posed(&self) -> PosedPair<'_> {
        PosedPair {
            a: (self.a.0, &self.a.1),
            b: (self.b.0, &self.b.1),
        }
    }

    /// The CPU reference at `margin`, as the CPU narrowphase computes it.
    pub(super) fn cpu(&self, margin: f32) -> Option<Manifold> {
        self.reference(None, margin)
    }

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
        restore_pair_order(self.pair, self.mesh_pair(), &mut result);
        result
    }

    /// Rule 4's runs; a run that finds no manifold runs again at the margin plus `2τ`, so a
    /// nudge that moved the bodies apart by up to `τ` still tells its decisions (points kept
    /// only by the wider margin count as dropped: [`Self::keeps`]).
    pub(super) fn nudged(&self) -> Vec<Option<Manifold>> {
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

    pub(super) fn compare(
        &self,
        gpu: Option<&Manifold>,
        cpu: Option<&Manifold>,
    ) -> Result<Agreement, Disagreement> {
        let (g, c) = match (gpu, cpu) {
            (None, None) => return Ok(Agreement::NoContact),
            (Some(g), Some(c)) => (g, c),
            (Some(g), None) => {
                self.well_formed(g, None)?;
                let beyond = self.cpu_beyond_the_margin();
                self.verdict_tie(beyond.as_ref().map(|c| c.separation), "GPU")?;
                let c = beyond.expect("a verdict tie has the CPU's manifold beyond the margin");
                return self.only_on_the_gpu(g, &c).map(|()| Agreement::VerdictTie);
            }
            (None, Some(c)) => return self.verdict_tie(Some(c.separation), "CPU"),
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
        let normal_tolerance = self.normal_tolerance(g, c);
        let same_normal = g.normal.distance(c.normal) <= normal_tolerance;
        let (gap_g, gap_c) = (self.support_gap(g.normal), self.support_gap(c.normal));
        let t = f64::from(tolerance);
        // An edge pair's normal is ill-conditioned (nearly parallel edges): another normal of
        // the same edges is as good where the support gaps agree.
        let edge_pairs = |m: &Manifold| m.points().iter().all(|p| p.id.kind() == FeatureId::EDGE_PAIR);
        let same_edges = edge_pairs(g) && same_ids(g, c) && (gap_g - gap_c).abs() <= t;
        if same_normal || same_edges {
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
        // A face clip whose every point the CPU kept within rounding of the margin (`2τ`: the
        // CPU's run just beyond the margin, for a pair only the GPU finds touching) may keep
        // none on the GPU, which then retries on the deepest axis (the separation's own).
        let clip_emptied = c
            .points()
            .iter()
            .all(|q| (q.depth + self.margin).abs() <= 2.0 * tolerance)
            && (gap_g - f64::from(c.separation)).abs() <= 2.0 * t;
        // The face preference only chooses between hull axes.
        let hulls = self.posed().hulls().is_some();
        let preferences = [0.0, preference, -preference];
        // A nudged run takes the GPU's axis when its normal is the GPU's.
        let takes = |m: &&Manifold| m.normal.distance(g.normal) <= 2.0 * normal_tolerance;
        let tied = (hulls && (preferences.iter().any(|k| (d - k).abs() <= t) || clip_emptied))
            || probes().iter().flatten().any(|m| takes(&m));
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
            .chain(probes().iter().flatten().filter(takes))
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

    /// Rules 3 and 4 for the points of GPU manifold `g` against reference `r` (the CPU's, or
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
            // A tie with a reference point accounts for that point too: two vertices equally far
            // along the normal; or the same point under a name of another kind, on the features
            // of both (a vertex on a side plane is kept, a vertex id, or cut, an edge id, as
            // rounding decides), or a primitive's single point where the CPU kept a clipped one
            // within `τ` of the margin (a clip that kept nothing falls back to it, in place).
            let renamed = || {
                r.points()
                    .iter()
                    .find(|q| {
                        !g.points().iter().any(|o| o.id == q.id)
                            && !accounted.contains(&q.id)
                            && (p.id.kind(), p.id.flag()) != (q.id.kind(), q.id.flag())
                            && p.position.distance(q.position) as f32 <= tolerance
                            && (p.depth - q.depth).abs() <= tolerance
                            && ((on_features(self.posed(), g.normal, p, p.id, tolerance)
                                && on_features(self.posed(), g.normal, p, q.id, tolerance))
                                || (p.id.kind() == FeatureId::OTHER
                                    && (q.depth + self.margin).abs() <= tolerance))
                    })
                    .map(|q| q.id)
            };
            // A compound pair's point of the same child pair at the same place under another
            // child feature: the tie rules above read the bodies' own features, not a child's
            // (its id keeps the feature modulo 256), so that child pair's tie is accepted here.
            let child_renamed = || {
                r.points()
                    .iter()
                    .find(|q| {
                        self.compound_pair()
                            && !g.points().iter().any(|o| o.id == q.id)
                            && !accounted.contains(&q.id)
                            && same_children(self.mesh_pair(), p.id, q.id)
                            && p.position.distance(q.position) as f32 <= tolerance
                            && (p.depth - q.depth).abs() <= tolerance
                    })
                    .map(|q| q.id)
            };
            let tied = support_tie(self.posed(), g, r, p, self.tolerance)
                .or_else(|| vertex_tie(self.posed(), g, r, p, tolerance + self.tolerance))
                .or_else(renamed)
                .or_else(child_renamed);
            if let Some(id) = tied {
                accounted.push(id);
                found = Found::Tie;
                continue;
            }
            let explained = probes()
                .iter()
                .flatten()
                .any(|m| vertex_tie(self.posed(), g, m, p, tolerance + self.tolerance).is_some())
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
                restore_pair_order(self.pair, false, &mut m);
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
            (conditioning(self.posed(), r.normal, p.id), 0.0)
        };
        let allowed = conditioning * tolerance;
        if moved <= allowed + turn && deeper <= allowed {
            Ok(true)
        } else if p.id.kind() == FeatureId::OTHER
            && self.posed().hulls().is_some()
            && deeper <= allowed
            && on_both_surfaces(self.posed(), g.normal, p, allowed)
        {
            // Two hulls' closest points are unique only up to the set of closest points (two
            // parallel faces apart): any point of it lies on both flat surfaces.
            Ok(true)
        } else if conditioning >= 1.0 / PARALLEL_EDGE_SINE
            && on_features(self.posed(), g.normal, p, p.id, tolerance / conditioning)
        {
            // Lines parallel to rounding (an incident edge along a side plane) meet anywhere
            // along them: the point must lie on both, within `tolerance`.
            Ok(true)
        } else {
            Err(format!(
                "point {:?} is {moved:e} from the CPU's, depths {deeper:e} apart; its conditioning {conditioning} allows {allowed:e}",
                p.id
            ))
        }
    }

    /// The CPU reference just beyond the margin (at `margin + 2τ`): what a pair only the GPU
    /// finds touching is judged against.
    pub(super) fn cpu_beyond_the_margin(&self) -> Option<Manifold> {
        self.cpu(self.margin + 2.0 * self.tolerance)
    }

    /// Rule 1 for a pair with a manifold on one side only (`only`: which), given the CPU's
    /// separation (`None`: beyond the margin plus `2τ`).
    pub(super) fn verdict_tie(&self, separation: Option<f32>, only: &str) -> Result<Agreement, Disagreement> {
        let tolerance = self.tolerance;
        match separation {
            Some(s) if (s - self.margin).abs() <= tolerance => Ok(Agreement::VerdictTie),
            _ => Err(Disagreement {
                kind: DisagreementKind::Verdict,
                detail: format!(
                    "only the {only} has a manifold; the CPU's separation is {}, margin {} (tolerance {tolerance:e})",
                    separation.map_or("beyond the margin + 2 tolerances".into(), |s| s.to_string()),
                    self.margin
                ),
            }),
        }
    }

    /// A manifold only the GPU has, at a verdict tie: the CPU's just beyond the margin, `c`, by
    /// the rules; or, where the two took other branches at that tie (a clip
    /// that keeps nothing, a retry), a separation within `2τ` of the CPU's, a normal along which
    /// the shapes are that far apart (less the face preference, for hulls), and points no
    /// deeper apart than the margin allows.
    fn only_on_the_gpu(&self, g: &Manifold, c: &Manifold) -> Result<(), Disagreement> {
        let Err(rules) = self.compare(Some(g), Some(c)) else {
            return Ok(());
        };
        let t = 2.0 * self.tolerance;
        let preference = if self.posed().hulls().is_some() {
            AXIS_PREFERENCE_TOLERANCE * self.scale
        } else {
            0.0
        };
        let gap = self.support_gap(g.normal);
        let sane = (g.separation - c.separation).abs() <= t
            && gap >= f64::from(c.separation - preference - t)
            && g.points().iter().all(|p| p.depth >= -self.margin - t);
        if sane { Ok(()) } else { Err(rules) }
    }

    /// Rule 2's normal tolerance, radians: [`GPU_AGREEMENT_TOLERANCE`], times the reach over the
    /// distance between the cores of a sphere or capsule and the other shape where that is
    /// smaller (a direction between two points `d` apart is known to rounding × reach / `d`),
    /// and at least [`GPU_GJK_MAX_DIRECTION_ERROR`] for a single closest-point contact the GPU
    /// builds with its f32 GJK (a hull against a hull, sphere or capsule).
    fn normal_tolerance(&self, g: &Manifold, c: &Manifold) -> f32 {
        let gjk_point =
            |m: &Manifold| matches!(m.points(), [p] if p.id.kind() == FeatureId::OTHER && !p.id.flag());
        let with_gjk = |shape: &Shape| !matches!(shape, Shape::HalfSpace(_));
        let a_hull = self.a.0.as_hull().is_some();
        let b_hull = self.b.0.as_hull().is_some();
        let gjk_pair = (a_hull && with_gjk(self.b.0)) || (b_hull && with_gjk(self.a.0));
        let rounded = |shape: &Shape| match shape {
            Shape::Sphere(s) => s.radius,
            Shape::Capsule(c) => c.radius,
            _ => 0.0,
        };
        let radii = rounded(self.a.0) + rounded(self.b.0);
        let cores_apart = c.separation + radii;
        let reach = self.tolerance / GPU_AGREEMENT_TOLERANCE;
        let mut tolerance = GPU_AGREEMENT_TOLERANCE;
        if radii > 0.0 && cores_apart > 0.0 {
            tolerance = tolerance.max(GPU_AGREEMENT_TOLERANCE * reach / cores_apart);
        }
        if gjk_pair && gjk_point(g) && gjk_point(c) {
            tolerance = tolerance.max(GPU_GJK_MAX_DIRECTION_ERROR);
        }
        tolerance
    }

    /// Finite numbers, 1 to 4 points, and a normal as close to unit length as the CPU's
    /// (`cpu`, when it has a manifold; unit otherwise) within [`GPU_AGREEMENT_TOLERANCE`],
    /// and distinct ids that can be swapped ([`FeatureId::swapped`]).
    fn well_formed(&self, m: &Manifold, cpu: Option<&Manifold>) -> Result<(), Disagreement> {
        let finite = m.normal.is_finite()
            && m.separation.is_finite()
            && m.points()
                .iter()
                .all(|p| p.position.is_finite() && p.depth.is_finite());
        // Distinct ids, each of a shape an id can have (a field that fits the other's width).
        let ids_valid = m.points().iter().enumerate().all(|(i, p)| {
            let fits = p.id.kind() <= FeatureId::FACE_B || p.id.low() <= FeatureId::HIGH_MAX;
            fits && !m.points()[..i].iter().any(|q| q.id == p.id)
        });
        let cpu_slack = cpu.map_or(0.0, |c| (c.normal.length() - 1.0).abs());
        let unit = (m.normal.length() - 1.0).abs() <= GPU_AGREEMENT_TOLERANCE + cpu_slack;
        if finite && unit && ids_valid && (1..=MAX_MANIFOLD_POINTS).contains(&m.point_count()) {
            Ok(())
        } else {
            Err(Disagreement {
                kind: DisagreementKind::Malformed,
                detail: format!(
                    "not finite, not unit, not 1 to 4 points or ids repeated or out of range: {m:?}"
                ),
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

/// True when two compound ids ([`crate::shape::compound::compound_feature_id`]) have the same kind and
/// name the same children (bits 8 and up of each field); against a mesh
/// ([`crate::trimesh::compound_mesh_feature_id`]), the same kind, child and triangle (bits 8
/// and up).
fn same_children(mesh: bool, a: FeatureId, b: FeatureId) -> bool {
    if mesh {
        return a.0 >> 8 == b.0 >> 8;
    }
    a.kind() == b.kind() && a.high() >> 8 == b.high() >> 8 && a.low() >> 8 == b.low() >> 8
}

/// True when both manifolds name the same set of point ids.
pub(super) fn same_ids(g: &Manifold, c: &Manifold) -> bool {
    g.point_count() == c.point_count() && g.points().iter().all(|p| c.points().iter().any(|q| q.id == p.id))
}

/// Largest of `n · x` over `shape` at `pose`, f64 (`n` world, unit). A half-space is bounded
/// only along its own normal (within 1e-9 of its cosine); elsewhere this is infinite.
fn support(shape: &Shape, pose: &Pose, n: DVec3) -> f64 {
    let d = pose.rotation.as_dquat().inverse() * n;
    let reach = match shape {
        Shape::Hull(_) | Shape::Cuboid(_) | Shape::Cylinder(_) => {
            let hull = shape.as_hull().expect("a hull, box or cylinder");
            hull.vertices()
                .iter()
                .map(|v| v.as_dvec3().dot(d))
                .fold(f64::NEG_INFINITY, f64::max)
        }
        Shape::TriMesh(mesh) => mesh
            .triangles()
            .iter()
            .flatten()
            .map(|&i| mesh.vertices()[i as usize].as_dvec3().dot(d))
            .fold(f64::NEG_INFINITY, f64::max),
        // The farthest child (`d` is in the compound's frame here).
        Shape::Compound(c) => c
            .children()
            .iter()
            .map(|child| support(&child.shape, &child_pose(&child.pose), d))
            .fold(f64::NEG_INFINITY, f64::max),
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

//! The GPU = CPU contract for SAT results ([`crate::GpuNarrowphase::sat`], in A's frame): the
//! manifold rules 1 and 2 applied to one [`SatResult`] against the CPU's ([`reference_sat`]).
//! With `τ` = [`GPU_AGREEMENT_TOLERANCE`] × the larger of the pair's scale and B's distance
//! from A (length units):
//! 1. The result is finite, names features of the two hulls, and its axis measures what it says
//!    within `τ` ([`axis_separation`], evaluated apart from the SAT's loops).
//! 2. The same verdict, except where the CPU's separation lies within `τ` of the margin.
//! 3. The same axis (separations within `τ`, normals within [`GPU_AGREEMENT_TOLERANCE`] radians
//!    or equal support gaps), or another only at a tie within `τ`, also at the face preference
//!    ([`AXIS_PREFERENCE_TOLERANCE`]). The rules in full: docs/design/contract.md.

use glam::Vec3;

use super::{Disagreement, DisagreementKind};
use crate::constants::{AXIS_PREFERENCE_TOLERANCE, GPU_AGREEMENT_TOLERANCE, pair_scale};
use crate::hull::ConvexHull;
use crate::pose::Isometry;
use crate::query::sat::{SatAxis, SatResult, query_hulls, separation_along};
use crate::query::sat_box_box::query_boxes;
use crate::shape::Shape;

/// How a batch of SAT results compared ([`compare_sat`] adds one pair).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SatTally {
    /// Pairs compared.
    pub pairs: usize,
    /// Pairs both sides call separated.
    pub separated: usize,
    /// Pairs whose CPU separation lies within `τ` of the margin, where the verdict may differ.
    pub near_margin: usize,
    /// Pairs where the GPU chose another axis at a tie.
    pub other_axis: usize,
    /// Pairs not separated whose CPU axis is a face of A, a face of B, an edge pair.
    pub contact_axes: [usize; 3],
}

/// The CPU's SAT for shapes `a`, `b` (hulls or boxes; B's pose in A's frame) as the CPU
/// narrowphase computes it: the box SAT for two boxes, else the hull SAT.
pub fn reference_sat(a: &Shape, b: &Shape, b_in_a: &Isometry, margin: f32) -> SatResult {
    match (a, b) {
        (Shape::Cuboid(a), Shape::Cuboid(b)) => query_boxes(a, b, b_in_a, margin),
        _ => query_hulls(
            a.as_hull().expect("a hull or box"),
            b.as_hull().expect("a hull or box"),
            b_in_a,
            margin,
        ),
    }
}

/// The separation along the axis `axis` names (A's frame, length units) and its normal, from A
/// toward B, evaluated apart from the SAT's loops: the deepest vertex below a face plane, or
/// the support gap along an edge pair's cross product.
pub fn axis_separation(a: &ConvexHull, b: &ConvexHull, b_in_a: &Isometry, axis: SatAxis) -> (f32, Vec3) {
    let deepest = |normal: Vec3, offset: f32, points: &mut dyn Iterator<Item = Vec3>| {
        points.map(|p| normal.dot(p)).fold(f32::INFINITY, f32::min) - offset
    };
    match axis {
        SatAxis::FaceA(face) => {
            let plane = a.planes()[face as usize];
            let mut points = b.vertices().iter().map(|&v| b_in_a.transform_point(v));
            (deepest(plane.normal, plane.offset, &mut points), plane.normal)
        }
        SatAxis::FaceB(face) => {
            let a_in_b = b_in_a.inverse();
            let plane = b.planes()[face as usize];
            let mut points = a.vertices().iter().map(|&v| a_in_b.transform_point(v));
            let separation = deepest(plane.normal, plane.offset, &mut points);
            (separation, -(b_in_a.rotation * plane.normal))
        }
        SatAxis::EdgePair { edge_a, edge_b } => {
            let (ea, eb) = (a.edges()[edge_a as usize], b.edges()[edge_b as usize]);
            let pa = a.vertices()[ea.vertices[0] as usize];
            let da = a.vertices()[ea.vertices[1] as usize] - pa;
            let pb = b_in_a.transform_point(b.vertices()[eb.vertices[0] as usize]);
            let db = b_in_a.transform_point(b.vertices()[eb.vertices[1] as usize]) - pb;
            let mut axis = da.cross(db).normalize();
            if axis.dot(pa - a.centroid()) < 0.0 {
                axis = -axis;
            }
            (separation_along(a, b, b_in_a, axis), axis)
        }
    }
}

/// Judges one GPU SAT result `gpu` for shapes `a`, `b` (hulls or boxes; B's pose in A's frame)
/// against [`reference_sat`] by the rules of the module docs, and counts it in `tally`.
pub fn compare_sat(
    a: &Shape,
    b: &Shape,
    b_in_a: &Isometry,
    margin: f32,
    gpu: &SatResult,
    tally: &mut SatTally,
) -> Result<(), Disagreement> {
    let cpu = reference_sat(a, b, b_in_a, margin);
    let (a, b) = (
        a.as_hull().expect("a hull or box"),
        b.as_hull().expect("a hull or box"),
    );
    let reach = pair_scale(a.radius(), b.radius()).max(b_in_a.translation.length());
    let tolerance = GPU_AGREEMENT_TOLERANCE * reach;
    let disagree = |kind, what: String| {
        Err(Disagreement {
            kind,
            detail: format!("{what}\n gpu {gpu:?}\n cpu {cpu:?}"),
        })
    };
    // Normals of one axis: within rounding, or (an edge pair's, ill-conditioned) along which
    // the hulls' support gaps agree.
    let same_normal = |n: Vec3, m: Vec3| {
        n.distance(m) <= GPU_AGREEMENT_TOLERANCE
            || (separation_along(a, b, b_in_a, n) - separation_along(a, b, b_in_a, m)).abs() <= tolerance
    };
    tally.pairs += 1;
    // Well formed: finite numbers, an axis that names features of these hulls.
    let in_range = match gpu.axis {
        SatAxis::FaceA(face) => (face as usize) < a.planes().len(),
        SatAxis::FaceB(face) => (face as usize) < b.planes().len(),
        SatAxis::EdgePair { edge_a, edge_b } => {
            (edge_a as usize) < a.edges().len() && (edge_b as usize) < b.edges().len()
        }
    };
    let finite = gpu.normal.is_finite() && gpu.axis_separation.is_finite() && gpu.separation.is_finite();
    if !(in_range && finite) {
        return disagree(
            DisagreementKind::Malformed,
            "not finite, or an axis these hulls lack".into(),
        );
    }
    // Rule 1: whatever the verdict, the GPU's axis measures as it says.
    let (own, normal) = axis_separation(a, b, b_in_a, gpu.axis);
    if (gpu.axis_separation - own).abs() > tolerance || !same_normal(gpu.normal, normal) {
        return disagree(
            DisagreementKind::Normal,
            format!("the GPU's axis {:?} measures {own} along {normal}", gpu.axis),
        );
    }
    // Rule 2: near the margin either verdict, and a separated result's values are those of the
    // axis that ended the queries; rule 3 holds where both are in contact.
    if (cpu.separation - margin).abs() <= tolerance {
        tally.near_margin += 1;
        if gpu.is_separated(margin) || cpu.is_separated(margin) {
            return Ok(());
        }
    }
    if gpu.is_separated(margin) != cpu.is_separated(margin) {
        return disagree(
            DisagreementKind::Verdict,
            "verdicts differ away from the margin".into(),
        );
    }
    if cpu.is_separated(margin) {
        // Each side stopped at an axis that separates (rule 1 measured the GPU's).
        tally.separated += 1;
        return Ok(());
    }
    tally.contact_axes[match cpu.axis {
        SatAxis::FaceA(_) => 0,
        SatAxis::FaceB(_) => 1,
        SatAxis::EdgePair { .. } => 2,
    }] += 1;
    // Rule 3.
    let separations_agree = (gpu.separation - cpu.separation).abs() <= tolerance;
    if gpu.axis == cpu.axis {
        if (gpu.axis_separation - cpu.axis_separation).abs() > tolerance || !separations_agree {
            return disagree(
                DisagreementKind::Separation,
                format!("separations differ by more than {tolerance:e}"),
            );
        }
        if !same_normal(gpu.normal, cpu.normal) {
            return disagree(DisagreementKind::Normal, "normals of the same axis differ".into());
        }
        return Ok(());
    }
    let preference = AXIS_PREFERENCE_TOLERANCE * pair_scale(a.radius(), b.radius());
    let d = own - cpu.axis_separation;
    if [0.0, preference, -preference]
        .iter()
        .all(|k| (d - k).abs() > tolerance)
    {
        return disagree(
            DisagreementKind::Normal,
            format!(
                "the GPU chose {:?} ({own}) over the CPU's {:?} ({}) without a tie",
                gpu.axis, cpu.axis, cpu.axis_separation
            ),
        );
    }
    if !separations_agree {
        return disagree(DisagreementKind::Separation, "separations differ".into());
    }
    tally.other_axis += 1;
    Ok(())
}

//! Comparing GPU SAT results with the CPU reference ([`reference_sat`]: `query::sat::query_hulls`,
//! or `query::sat_box_box::query_boxes` for two boxes, as the CPU narrowphase runs them), shared
//! by the GPU test files.

use glam::Vec3;
use hullsat::constants::AXIS_PREFERENCE_TOLERANCE;
use hullsat::query::sat::{SatAxis, SatResult, query_hulls, separation_along};
use hullsat::query::sat_box_box::query_boxes;
use hullsat::{ConvexHull, Isometry, Shape};

/// Relative tolerance on separations, a fraction of the pair's scale (radius A + radius B):
/// f32 rounding differs between the CPU and the GPU (fused multiply-adds, sqrt and division
/// precision), a few ulps of the scale.
pub const SEPARATION_TOLERANCE: f32 = 1.0e-5;

/// Largest distance between two unit normals of the same axis computed on both sides.
pub const NORMAL_TOLERANCE: f32 = 1.0e-3;

/// The separation of hull `b` (posed at `b_in_a`) along the axis `axis` names, with that axis
/// (A's frame, from A toward B), evaluated independently of the SAT's loops: the deepest vertex
/// below a face plane, or the support gap along an edge pair's cross product.
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

/// How the GPU and CPU results of a batch compared.
#[derive(Debug, Default)]
pub struct Comparison {
    /// Pairs compared.
    pub pairs: usize,
    /// Pairs both sides call separated.
    pub separated: usize,
    /// Pairs within the tolerance of the margin, where the verdict may differ.
    pub near_margin: usize,
    /// Pairs where the GPU chose another axis of (nearly) equal merit.
    pub other_axis: usize,
    /// Pairs (not separated) whose CPU axis is a face of A, a face of B, an edge pair.
    pub contact_axes: [usize; 3],
}

/// The CPU's SAT for shapes `a`, `b` (hulls or boxes; B's pose in A's frame), as the CPU
/// narrowphase computes it: the box SAT for two boxes, else the hull SAT.
pub fn reference_sat(a: &Shape, b: &Shape, b_in_a: &Isometry, margin: f32) -> SatResult {
    match (a, b) {
        (Shape::Cuboid(a), Shape::Cuboid(b)) => query_boxes(a, b, b_in_a, margin),
        _ => query_hulls(
            a.as_hull().expect("hull or box"),
            b.as_hull().expect("hull or box"),
            b_in_a,
            margin,
        ),
    }
}

/// Checks one GPU result against [`reference_sat`] for shapes `a`, `b` (hulls or boxes; B's
/// pose in A's frame):
/// same verdict unless within the tolerance of the margin; separations within
/// [`SEPARATION_TOLERANCE`] × scale; the same axis unless the CPU's choice between the two was
/// within the tolerance of a tie or of the preference threshold, in which case the GPU's own
/// value for its axis must be right. `context` names the pair in failure messages.
#[track_caller]
pub fn compare_sat(
    a: &Shape,
    b: &Shape,
    b_in_a: &Isometry,
    margin: f32,
    gpu: &SatResult,
    stats: &mut Comparison,
    context: &str,
) {
    let cpu = reference_sat(a, b, b_in_a, margin);
    let (a, b) = (
        a.as_hull().expect("hull or box"),
        b.as_hull().expect("hull or box"),
    );
    let scale = a.radius() + b.radius();
    let eps = SEPARATION_TOLERANCE * scale;
    stats.pairs += 1;
    // Whatever the verdict, the GPU must be right about the axis it reports.
    let (own, normal) = axis_separation(a, b, b_in_a, gpu.axis);
    assert!(
        (gpu.axis_separation - own).abs() <= eps && gpu.normal.distance(normal) <= NORMAL_TOLERANCE,
        "{context}: GPU axis {:?} has separation {own}, normal {normal}\n gpu {gpu:?}\n cpu {cpu:?}",
        gpu.axis
    );
    if (cpu.separation - margin).abs() <= eps || (gpu.separation - margin).abs() <= eps {
        stats.near_margin += 1;
        return;
    }
    assert_eq!(
        gpu.is_separated(margin),
        cpu.is_separated(margin),
        "{context}: verdict differs\n gpu {gpu:?}\n cpu {cpu:?}"
    );
    stats.separated += usize::from(cpu.is_separated(margin));
    if !cpu.is_separated(margin) {
        let axis = match cpu.axis {
            SatAxis::FaceA(_) => 0,
            SatAxis::FaceB(_) => 1,
            SatAxis::EdgePair { .. } => 2,
        };
        stats.contact_axes[axis] += 1;
    }
    if gpu.axis == cpu.axis {
        assert!(
            (gpu.axis_separation - cpu.axis_separation).abs() <= eps
                && (gpu.separation - cpu.separation).abs() <= eps,
            "{context}: separations differ by more than {eps}\n gpu {gpu:?}\n cpu {cpu:?}"
        );
        assert!(
            gpu.normal.distance(cpu.normal) <= NORMAL_TOLERANCE,
            "{context}: normals differ\n gpu {gpu:?}\n cpu {cpu:?}"
        );
        return;
    }
    // Another axis: the CPU's choice between the two must have been a near tie, or near the
    // preference threshold.
    let tolerance = AXIS_PREFERENCE_TOLERANCE * scale;
    let d = own - cpu.axis_separation;
    assert!(
        d.abs().min((d - tolerance).abs()).min((d + tolerance).abs()) <= eps,
        "{context}: GPU chose {:?} ({own}) over the CPU's {:?} ({}) without a near tie\n gpu {gpu:?}\n cpu {cpu:?}",
        gpu.axis,
        cpu.axis,
        cpu.axis_separation
    );
    if !cpu.is_separated(margin) {
        assert!(
            (gpu.separation - cpu.separation).abs() <= eps,
            "{context}: separations differ\n gpu {gpu:?}\n cpu {cpu:?}"
        );
    }
    stats.other_axis += 1;
}

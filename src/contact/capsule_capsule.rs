//! Capsule against capsule: closest points of the two core segments, in A's frame.
//!
//! 1. Move B's segment into A's frame (A's segment runs along local Y).
//! 2. Closest points of the segments ([`closest_points_segments`]); separation = their distance
//!    − both radii. Normal from A's point to B's; when the segments touch, the normal of the
//!    plane holding both, or for parallel touching segments A's local +X.
//! 3. When the segments are parallel within [`CAPSULE_PARALLEL_SINE`] and their projections
//!    overlap, clip the overlap on A's axis: one point per end of the overlap, each with its own
//!    gap along the normal (points beyond the margin are dropped). Otherwise one point.
//! 4. Points lie midway between the two surfaces along the normal.
//!
//! Feature id: kind `OTHER`, flag 0, high 0; low 0 for a single point, and for the parallel
//! case 0 at the lower end of the overlap on A's axis, 1 at the upper end.
//! WGSL twin: `shaders/narrowphase/primitives.wgsl`.

use glam::Vec3;

use crate::constants::CAPSULE_PARALLEL_SINE;
use crate::manifold::{ContactPoint, FeatureId, Manifold};
use crate::pose::Pose;
use crate::query::segment::closest_points_segments;
use crate::shape::Capsule;

/// The manifold between capsule_a (body A) and capsule_b (body B) at world poses, or `None` beyond `margin`.
pub fn collide_capsule_capsule(
    capsule_a: &Capsule,
    pose_a: &Pose,
    capsule_b: &Capsule,
    pose_b: &Pose,
    margin: f32,
) -> Option<Manifold> {
    let b_in_a = pose_a.relative_to_self(pose_b);
    let [p0, p1] = capsule_a.segment();
    let [q0, q1] = capsule_b.segment().map(|p| b_in_a.transform_point(p));
    let radii = capsule_a.radius + capsule_b.radius;
    let (s, t) = closest_points_segments(p0, p1, q0, q1);
    let closest_a = p0 + s * (p1 - p0);
    let closest_b = q0 + t * (q1 - q0);
    let separation = closest_a.distance(closest_b) - radii;
    if separation > margin {
        return None;
    }
    let axis_b = q1 - q0;
    let cross = Vec3::Y.cross(axis_b);
    let parallel = cross.length() <= CAPSULE_PARALLEL_SINE * axis_b.length();
    let normal = (closest_b - closest_a)
        .try_normalize()
        .or_else(|| cross.try_normalize().filter(|_| !parallel))
        .unwrap_or(Vec3::X);
    // The contact point for a pair of points on the two core segments, and its own gap.
    let contact = |on_a: Vec3, on_b: Vec3, low: u32| {
        let gap = (on_b - on_a).dot(normal) - radii;
        let surface_a = on_a + normal * capsule_a.radius;
        let surface_b = on_b - normal * capsule_b.radius;
        ContactPoint {
            position: pose_a.transform_point(0.5 * (surface_a + surface_b)),
            depth: -gap,
            id: FeatureId::new(FeatureId::OTHER, false, 0, low),
        }
    };
    let mut manifold = Manifold::new(pose_a.transform_vector(normal), separation);
    // Overlap of B's segment projected on A's axis (local Y), clipped to A's segment.
    let lower = q0.y.min(q1.y).max(p0.y);
    let upper = q0.y.max(q1.y).min(p1.y);
    if parallel && upper > lower {
        for (low, y) in [lower, upper].into_iter().enumerate() {
            // B's point at height y (B's axis is nearly along Y, so axis_b.y is far from zero).
            let u = ((y - q0.y) / axis_b.y).clamp(0.0, 1.0);
            let point = contact(Vec3::new(0.0, y, 0.0), q0 + u * axis_b, low as u32);
            if -point.depth <= margin {
                manifold.push(point);
            }
        }
    }
    if manifold.point_count() == 0 {
        manifold.push(contact(closest_a, closest_b, 0));
    }
    Some(manifold)
}

//! Sphere against capsule: the sphere's centre against the capsule's core segment.
//!
//! 1. Move the capsule's segment into A's (the sphere's) frame.
//! 2. The closest point of the segment to the centre (a degenerate segment in
//!    [`closest_points_segments`]).
//! 3. Normal from the centre to that point; when the centre lies on the segment, any direction
//!    perpendicular to the segment (glam's `any_orthonormal_vector`, fixed for a given axis).
//! 4. Separation `distance − r_sphere − r_capsule`; one point midway between the surfaces.
//!
//! Feature id: kind `OTHER`, flag 0, high 0, low 0 (one point; the sphere has one feature).
//!
//! WGSL twin: `shaders/narrowphase/primitives.wgsl`.

use crate::manifold::{ContactPoint, FeatureId, Manifold};
use crate::pose::Pose;
use crate::query::segment::closest_points_segments;
use crate::shape::{Capsule, Sphere};

/// The manifold between sphere (body A) and capsule (body B) at world poses, or `None` beyond `margin`.
pub fn collide_sphere_capsule(
    sphere: &Sphere,
    pose_a: &Pose,
    capsule: &Capsule,
    pose_b: &Pose,
    margin: f32,
) -> Option<Manifold> {
    let b_in_a = pose_a.relative_to_self(pose_b);
    let [q0, q1] = capsule.segment().map(|p| b_in_a.transform_point(p));
    let centre = glam::Vec3::ZERO;
    let (_, t) = closest_points_segments(centre, centre, q0, q1);
    let closest = q0 + t * (q1 - q0);
    let distance = closest.length();
    let separation = distance - sphere.radius - capsule.radius;
    if separation > margin {
        return None;
    }
    let normal = closest
        .try_normalize()
        .unwrap_or_else(|| (q1 - q0).normalize().any_orthonormal_vector());
    let surface_a = normal * sphere.radius;
    let surface_b = closest - normal * capsule.radius;
    let mut manifold = Manifold::new(pose_a.transform_vector(normal), separation);
    manifold.push(ContactPoint {
        position: pose_a.transform_point(0.5 * (surface_a + surface_b)),
        depth: -separation,
        id: FeatureId::new(FeatureId::OTHER, false, 0, 0),
    });
    Some(manifold)
}

//! Sphere against sphere: one point on the line of centres.
//!
//! 1. `d = centre_b − centre_a` (translations only, differenced in f64 and then rounded: a
//!    sphere's rotation does not matter).
//! 2. Normal `d / |d|`; coincident centres take world +Y (any fixed direction is as good).
//! 3. Separation `|d| − r_a − r_b`; the point lies midway between the two surface points.
//!
//! Feature id: kind `OTHER`, flag 0, both fields 0 (a sphere has one feature).
//!
//! WGSL twin: `shaders/narrowphase/primitives.wgsl`.

use glam::Vec3;

use crate::manifold::{ContactPoint, FeatureId, Manifold};
use crate::pose::Pose;
use crate::shape::Sphere;

/// The manifold between sphere_a (body A) and sphere_b (body B) at world poses, or `None` beyond `margin`.
pub fn collide_sphere_sphere(
    sphere_a: &Sphere,
    pose_a: &Pose,
    sphere_b: &Sphere,
    pose_b: &Pose,
    margin: f32,
) -> Option<Manifold> {
    let delta = (pose_b.translation - pose_a.translation).as_vec3();
    let distance = delta.length();
    let separation = distance - sphere_a.radius - sphere_b.radius;
    if separation > margin {
        return None;
    }
    let normal = delta.try_normalize().unwrap_or(Vec3::Y);
    // Midway between the surface points, from A's centre: a's radius plus half the separation.
    let mut manifold = Manifold::new(normal, separation);
    manifold.push(ContactPoint {
        position: pose_a.translation + (normal * (sphere_a.radius + 0.5 * separation)).as_dvec3(),
        depth: -separation,
        id: FeatureId::new(FeatureId::OTHER, false, 0, 0),
    });
    Some(manifold)
}

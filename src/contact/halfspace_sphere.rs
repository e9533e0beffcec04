//! Half-space against sphere: the sphere's centre against the boundary plane.
//!
//! 1. Move the sphere's centre into A's (the half-space's) frame.
//! 2. Separation = signed plane distance of the centre − radius; the normal is the plane's
//!    outward normal (from the solid toward the sphere).
//! 3. One point midway between the plane and the sphere's lowest point.
//!
//! Feature id: kind `OTHER`, flag 0, high 0, low 0.
//!
//! WGSL twin: `shaders/narrowphase/primitives.wgsl`.

use crate::manifold::{ContactPoint, FeatureId, Manifold};
use crate::pose::Pose;
use crate::shape::{HalfSpace, Sphere};

/// The manifold between halfspace (body A) and sphere (body B) at world poses, or `None` beyond `margin`.
pub fn collide_halfspace_sphere(
    halfspace: &HalfSpace,
    pose_a: &Pose,
    sphere: &Sphere,
    pose_b: &Pose,
    margin: f32,
) -> Option<Manifold> {
    let centre = pose_a.relative_to_self(pose_b).translation;
    let normal = halfspace.normal;
    let plane_distance = normal.dot(centre) - halfspace.offset;
    let separation = plane_distance - sphere.radius;
    if separation > margin {
        return None;
    }
    let on_plane = centre - normal * plane_distance;
    let surface_b = centre - normal * sphere.radius;
    let mut manifold = Manifold::new(pose_a.transform_vector(normal), separation);
    manifold.push(ContactPoint {
        position: pose_a.transform_point(0.5 * (on_plane + surface_b)),
        depth: -separation,
        id: FeatureId::new(FeatureId::OTHER, false, 0, 0),
    });
    Some(manifold)
}

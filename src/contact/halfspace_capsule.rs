//! Half-space against capsule: each end of the capsule's core segment against the plane.
//!
//! 1. Move the segment's end points into A's (the half-space's) frame.
//! 2. Each end's separation = its signed plane distance − radius; ends within the margin become
//!    points (a capsule lying on the plane gets two, a standing one gets one).
//! 3. The manifold separation is the smaller of the two; the normal is the plane's outward
//!    normal. Each point lies midway between the plane and the capsule's surface below that end.
//!
//! Feature id: kind `OTHER`, flag 0, high 0, low = the segment end (0 bottom, 1 top, as in
//! [`Capsule::segment`]).
//!
//! WGSL twin: `shaders/narrowphase/primitives.wgsl`.

use crate::manifold::{ContactPoint, FeatureId, Manifold};
use crate::pose::Pose;
use crate::shape::{Capsule, HalfSpace};

/// The manifold between halfspace (body A) and capsule (body B) at world poses, or `None` beyond `margin`.
pub fn collide_halfspace_capsule(
    halfspace: &HalfSpace,
    pose_a: &Pose,
    capsule: &Capsule,
    pose_b: &Pose,
    margin: f32,
) -> Option<Manifold> {
    let b_in_a = pose_a.relative_to_self(pose_b);
    let normal = halfspace.normal;
    let ends = capsule.segment().map(|p| b_in_a.transform_point(p));
    let plane_distances = ends.map(|p| normal.dot(p) - halfspace.offset);
    let separation = plane_distances[0].min(plane_distances[1]) - capsule.radius;
    if separation > margin {
        return None;
    }
    let mut manifold = Manifold::new(pose_a.transform_vector(normal), separation);
    for (end, (p, plane_distance)) in ends.into_iter().zip(plane_distances).enumerate() {
        let end_separation = plane_distance - capsule.radius;
        if end_separation > margin {
            continue;
        }
        let on_plane = p - normal * plane_distance;
        let surface_b = p - normal * capsule.radius;
        manifold.push(ContactPoint {
            position: pose_a.transform_point(0.5 * (on_plane + surface_b)),
            depth: -end_separation,
            id: FeatureId::new(FeatureId::OTHER, false, 0, end as u32),
        });
    }
    Some(manifold)
}

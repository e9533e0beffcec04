//! Half-space against hull: every hull vertex within the margin of the plane, reduced to four.
//!
//! 1. Move the hull's vertices into A's (the half-space's) frame; a vertex is a candidate when
//!    its signed plane distance is at most the margin. The smallest distance is the separation.
//! 2. Reduce the candidates to at most 4 without storing them ([`reduce_to_four`], shared with
//!    the clipped face contacts): the deepest, the one farthest from it, the one making the
//!    largest triangle with those two, and the one adding the most area outside that triangle.
//! 3. Each point lies midway between its vertex and the vertex's projection on the plane; the
//!    normal is the plane's outward normal.
//!
//! Feature id: kind `OTHER`, flag 0, high 0, low = the hull vertex index.
//!
//! WGSL twin: `shaders/narrowphase/primitives.wgsl`.

use crate::constants::{CONTACT_REDUCTION_TOLERANCE, pair_scale};
use crate::contact::clip::reduce_to_four;
use crate::hull::ConvexHull;
use crate::manifold::{ContactPoint, FeatureId, Manifold};
use crate::pose::Pose;
use crate::shape::HalfSpace;

/// The manifold between halfspace (body A) and hull (body B) at world poses, or `None` beyond `margin`.
pub fn collide_halfspace_hull(
    halfspace: &HalfSpace,
    pose_a: &Pose,
    hull: &ConvexHull,
    pose_b: &Pose,
    margin: f32,
) -> Option<Manifold> {
    let b_in_a = pose_a.relative_to_self(pose_b);
    let normal = halfspace.normal;
    let vertices = hull.vertices();
    // A vertex's position in A's frame and its signed plane distance, when within the margin.
    let candidate = |i: usize| {
        let p = b_in_a.transform_point(vertices[i]);
        let distance = normal.dot(p) - halfspace.offset;
        (distance <= margin).then_some((p, distance))
    };
    let separation = (0..vertices.len())
        .filter_map(|i| candidate(i).map(|c| c.1))
        .fold(f32::INFINITY, f32::min);
    if separation > margin {
        return None;
    }
    let tie_tolerance = CONTACT_REDUCTION_TOLERANCE * pair_scale(0.0, hull.radius());
    let kept = reduce_to_four(vertices.len(), candidate, normal, tie_tolerance);
    let mut manifold = Manifold::new(pose_a.transform_vector(normal), separation);
    for &i in kept.indices() {
        let (p, distance) = candidate(i)?;
        manifold.push(ContactPoint {
            position: pose_a.transform_point(p - 0.5 * distance * normal),
            depth: -distance,
            id: FeatureId::new(FeatureId::OTHER, false, 0, i as u32),
        });
    }
    Some(manifold)
}

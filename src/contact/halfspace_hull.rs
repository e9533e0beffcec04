//! Half-space against hull: every hull vertex within the margin of the plane, reduced to four.
//!
//! 1. Move the hull's vertices into A's (the half-space's) frame; a vertex is a candidate when
//!    its signed plane distance is at most the margin. The smallest distance is the separation.
//! 2. Reduce the candidates to at most 4 without storing them ([`reduce_to_four`]): the deepest,
//!    the one farthest from it, the one making the largest triangle with those two, and the one
//!    adding the most area outside that triangle. Each is a pass over the vertices, so large
//!    hulls need no buffer.
//! 3. Each point lies midway between its vertex and the vertex's projection on the plane; the
//!    normal is the plane's outward normal.
//!
//! Feature id: kind `OTHER`, flag 0, high 0, low = the hull vertex index.

use glam::Vec3;

use crate::hull::ConvexHull;
use crate::manifold::{ContactPoint, FeatureId, MAX_MANIFOLD_POINTS, Manifold};
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
    // Lengths below this are rounding noise of the hull's coordinates.
    let min_length = 8.0 * f32::EPSILON * (hull.radius() + hull.centroid().length());
    let (chosen, count) = reduce_to_four(vertices.len(), candidate, normal, min_length)?;
    let separation = candidate(chosen[0])?.1;
    let mut manifold = Manifold::new(pose_a.transform_vector(normal), separation);
    for &i in &chosen[..count] {
        let (p, distance) = candidate(i)?;
        manifold.push(ContactPoint {
            position: pose_a.transform_point(p - 0.5 * distance * normal),
            depth: -distance,
            id: FeatureId::new(FeatureId::OTHER, false, 0, i as u32),
        });
    }
    Some(manifold)
}

/// Picks at most 4 of the `count` candidates (`candidate(i)` gives a position and a signed
/// distance along `normal`, or `None` when `i` is not a candidate): deepest (smallest distance)
/// first, then the picks that span the largest area seen along `normal`. Positions closer than
/// `min_length` count as one. Returns the picked indices, deepest first, and how many there are;
/// `None` when there is no candidate.
// Private for now: to be unified with the reduction in contact/clip.rs.
fn reduce_to_four(
    count: usize,
    candidate: impl Fn(usize) -> Option<(Vec3, f32)>,
    normal: Vec3,
    min_length: f32,
) -> Option<([usize; MAX_MANIFOLD_POINTS], usize)> {
    // The candidate maximizing `score` (ties keep the first), with its score.
    let best_by = |score: &dyn Fn(Vec3, f32) -> f32| {
        let mut best: Option<(usize, f32)> = None;
        for i in 0..count {
            if let Some((p, distance)) = candidate(i) {
                let s = score(p, distance);
                if best.is_none_or(|(_, b)| s > b) {
                    best = Some((i, s));
                }
            }
        }
        best
    };
    let (first, _) = best_by(&|_, distance| -distance)?;
    let p0 = candidate(first)?.0;
    let mut chosen = [first; MAX_MANIFOLD_POINTS];

    let flat = |v: Vec3| v - normal * normal.dot(v);
    let (second, length2) = best_by(&|p, _| flat(p - p0).length_squared())?;
    if length2 <= min_length * min_length {
        return Some((chosen, 1));
    }
    chosen[1] = second;
    let p1 = candidate(second)?.0;

    let signed_area = |a: Vec3, b: Vec3, c: Vec3| (b - a).cross(c - a).dot(normal);
    let (third, area) = best_by(&|p, _| signed_area(p0, p1, p).abs())?;
    if area <= min_length * length2.sqrt() {
        return Some((chosen, 2));
    }
    chosen[2] = third;
    let p2 = candidate(third)?.0;

    // Orient the triangle counter-clockwise about `normal`; a point outside an edge adds the
    // area of the triangle it makes with that edge.
    let (p1, p2) = if signed_area(p0, p1, p2) > 0.0 {
        (p1, p2)
    } else {
        (p2, p1)
    };
    let added = |p: Vec3, _| {
        let outside = [(p0, p1), (p1, p2), (p2, p0)].map(|(a, b)| -signed_area(a, b, p));
        outside[0].max(outside[1]).max(outside[2])
    };
    let (fourth, added_area) = best_by(&added)?;
    if added_area <= min_length * length2.sqrt() {
        return Some((chosen, 3));
    }
    chosen[3] = fourth;
    Some((chosen, 4))
}

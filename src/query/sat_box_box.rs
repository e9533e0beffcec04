//! Separating axis test between two boxes (15 axes), in box A's local frame: the result of
//! [`query_hulls`](crate::query::sat::query_hulls) on the boxes' hulls, bit for bit except where
//! two edge axes tie within rounding (then either may win) and, for pairs apart by more than the
//! margin, which separating axis is reported; without the Gauss-map edge loop.
//!
//! 1. Face queries of A and B: the hull loop ([`query_faces_exhaustive`]; 6 faces of 8 vertices).
//! 2. Edge query: with `R`'s columns `c_j` (B's axes in A's frame), `t` B's centre in A's frame
//!    and half extents `h_a`, `h_b`, a box's extent along a unit `n` is `Σ_k |n_k| h_a,k` (A)
//!    and `Σ_k |n · c_k| h_b,k` (B). Of the 9 axes `e_i × c_j` (parallel pairs skipped,
//!    [`PARALLEL_EDGE_SINE`]), each oriented from A toward B (the side on which the pair
//!    separates more, as the hull loop finds by testing both crossing pairs), the one of largest
//!    `|n · t| − ext_a(n) − ext_b(n)` wins; its edges are the hulls' edges along `e_i` and `c_j`
//!    that support the axis, and its axis and separation are formed from them as the hull loop
//!    does ([`edge_pair_separation`]).
//! 3. The face queries stop once a face separates by more than the margin, the edge pair is
//!    separating when its hull-formed value is; then the hull SAT's face preference.

use glam::{Mat3, Vec3};

use crate::constants::{AXIS_PREFERENCE_TOLERANCE, PARALLEL_EDGE_SINE, pair_scale};
use crate::hull::ConvexHull;
use crate::pose::Isometry;
use crate::query::sat::{EdgeQuery, SatResult, edge_pair_separation, prefer_faces, query_faces_exhaustive};
use crate::shape::Cuboid;

/// The SAT between box `a` and box `b` posed at `b_in_a` (B's pose in A's frame), with the
/// face preference of [`AXIS_PREFERENCE_TOLERANCE`] × the pair's scale, as
/// [`query_hulls`](crate::query::sat::query_hulls) on their hulls.
pub fn query_boxes(a: &Cuboid, b: &Cuboid, b_in_a: &Isometry, margin: f32) -> SatResult {
    debug_assert!(b_in_a.is_valid(), "invalid pose {b_in_a:?}");
    let (hull_a, hull_b) = (a.hull(), b.hull());
    let (h_a, h_b) = (a.half_extents(), b.half_extents());

    // 1. Faces of A and of B: 6 faces of 8 vertices each, the hull loop itself.
    let face_a = query_faces_exhaustive(hull_a, hull_b, &b_in_a.inverse(), margin);
    let face_a_normal = hull_a.planes()[face_a.face as usize].normal;
    if face_a.separation > margin {
        return SatResult::on_face_a(face_a, face_a_normal);
    }
    let face_b = query_faces_exhaustive(hull_b, hull_a, b_in_a, margin);
    let face_b_normal = -(b_in_a.rotation * hull_b.planes()[face_b.face as usize].normal);
    if face_b.separation > margin {
        return SatResult::on_face_b(face_b, face_b_normal);
    }

    // 2. Edge pairs: the 9 box axes pick the pair, whose axis and separation are then formed
    // from its hull edges exactly as the hull loop forms them.
    let axes_b = Mat3::from_quat(b_in_a.rotation);
    let t = b_in_a.translation;
    let extent_a = |n: Vec3| n.abs().dot(h_a);
    let extent_b = |n: Vec3| (axes_b.transpose() * n).abs().dot(h_b);
    // No early out on these values: they round differently from the hull formula, so a pair
    // just over the margin here may not be over it there while another pair is well over.
    let mut best: Option<(usize, usize, f32, Vec3)> = None;
    for i in 0..3 {
        for j in 0..3 {
            let cross = Vec3::AXES[i].cross(axes_b.col(j));
            let length = cross.length();
            if length < PARALLEL_EDGE_SINE {
                continue;
            }
            let mut axis = cross / length;
            if axis.dot(t) < 0.0 {
                axis = -axis;
            }
            let separation = axis.dot(t) - extent_a(axis) - extent_b(axis);
            if best.is_none_or(|(_, _, s, _)| separation > s) {
                best = Some((i, j, separation, axis));
            }
        }
    }
    let edge = best.and_then(|(i, j, _, axis)| {
        let edge_a = supporting_edge(hull_a, i, axis);
        let edge_b = supporting_edge(hull_b, j, -(axes_b.transpose() * axis));
        let (axis, separation) = edge_pair_separation(hull_a, hull_b, b_in_a, edge_a, edge_b)?;
        Some(EdgeQuery {
            edge_a,
            edge_b,
            separation,
            axis,
        })
    });

    // 3. Early out, then the face preference.
    if let Some(e) = edge
        && e.separation > margin
    {
        return SatResult::on_edge_pair(e);
    }
    let tolerance = AXIS_PREFERENCE_TOLERANCE * pair_scale(hull_a.radius(), hull_b.radius());
    prefer_faces((face_a, face_a_normal), (face_b, face_b_normal), edge, tolerance)
}

/// Index of the edge of a box hull ([`ConvexHull::cuboid`]'s vertex numbering: bit `k` of a
/// vertex index set = positive coordinate `k`) along local axis `axis` that is furthest along
/// `direction` (local frame).
fn supporting_edge(hull: &ConvexHull, axis: usize, direction: Vec3) -> u32 {
    let along = 1u32 << axis;
    let corner = (0..3)
        .filter(|&k| k != axis && direction[k] > 0.0)
        .fold(0u32, |bits, k| bits | (1 << k));
    hull.edges()
        .iter()
        .position(|e| e.vertices[0] ^ e.vertices[1] == along && e.vertices[0] & !along == corner)
        .expect("a box hull has an edge along every axis at every corner") as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn supporting_edges_lie_along_the_axis_at_the_supporting_corner() {
        let hull = ConvexHull::cuboid(Vec3::new(1.0, 2.0, 3.0));
        for axis in 0..3 {
            for direction in [Vec3::new(1.0, -1.0, 1.0), Vec3::new(-1.0, 1.0, -1.0)] {
                let edge = hull.edges()[supporting_edge(&hull, axis, direction) as usize];
                let [p, q] = edge.vertices.map(|v| hull.vertices()[v as usize]);
                let d = q - p;
                assert_eq!(d.abs().max_position(), axis);
                let top = hull
                    .vertices()
                    .iter()
                    .map(|v| v.dot(direction))
                    .fold(f32::NEG_INFINITY, f32::max);
                assert_eq!(p.dot(direction).max(q.dot(direction)), top);
            }
        }
    }
}

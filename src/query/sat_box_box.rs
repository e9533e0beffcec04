//! Separating axis test between two boxes (15 axes), in box A's local frame: the result of
//! [`query_hulls`](crate::query::sat::query_hulls) on the boxes' hulls up to rounding (the same
//! axis, feature indices and separation within f32 rounding; exact ties may go either way),
//! without Gauss maps or vertex loops.
//!
//! With `R`'s columns `c_j` (B's axes in A's frame), `t` B's centre in A's frame and half
//! extents `h_a`, `h_b`, a box's extent along a unit `n` is `Σ_k |n_k| h_a,k` (A) and
//! `Σ_k |n · c_k| h_b,k` (B).
//! 1. Face query of A: every face plane of A's hull, in the hull's face order (strictly larger
//!    wins, stop once one separates by more than the margin): `n · t − ext_b(n) − offset`.
//! 2. Face query of B: B's planes moved into A's frame: `−ext_a(n) − offset − n · t`.
//! 3. Edge query: the 9 axes `e_i × c_j`, parallel pairs skipped ([`PARALLEL_EDGE_SINE`]), each
//!    oriented from A toward B (the side on which the pair separates more, as the hull loop
//!    finds by testing both crossing pairs): `|n · t| − ext_a(n) − ext_b(n)`. The winner's edge
//!    indices are the hulls' edges along `e_i` and `c_j` that support the axis.
//! 4. Each query stops once an axis separates by more than the margin; then the hull SAT's face
//!    preference ([`prefer_faces`]).

use glam::{Mat3, Vec3};

use crate::constants::{AXIS_PREFERENCE_TOLERANCE, PARALLEL_EDGE_SINE, pair_scale};
use crate::hull::ConvexHull;
use crate::pose::Isometry;
use crate::query::sat::{EdgeQuery, FaceQuery, SatResult, prefer_faces};
use crate::shape::Cuboid;

/// The SAT between box `a` and box `b` posed at `b_in_a` (B's pose in A's frame), with the
/// face preference of [`AXIS_PREFERENCE_TOLERANCE`] × the pair's scale, as
/// [`query_hulls`](crate::query::sat::query_hulls) on their hulls.
pub fn query_boxes(a: &Cuboid, b: &Cuboid, b_in_a: &Isometry, margin: f32) -> SatResult {
    debug_assert!(b_in_a.is_valid(), "invalid pose {b_in_a:?}");
    let (hull_a, hull_b) = (a.hull(), b.hull());
    let (h_a, h_b) = (a.half_extents(), b.half_extents());
    let axes_b = Mat3::from_quat(b_in_a.rotation);
    let t = b_in_a.translation;
    let extent_a = |n: Vec3| n.abs().dot(h_a);
    let extent_b = |n: Vec3| (axes_b.transpose() * n).abs().dot(h_b);

    // 1. Faces of A.
    let face_a = best_face(hull_a, margin, |normal, offset| {
        normal.dot(t) - extent_b(normal) - offset
    });
    let face_a_normal = hull_a.planes()[face_a.face as usize].normal;
    if face_a.separation > margin {
        return SatResult::on_face_a(face_a, face_a_normal);
    }

    // 2. Faces of B, normals in A's frame.
    let face_b = best_face(hull_b, margin, |normal, offset| {
        let normal = axes_b * normal;
        -extent_a(normal) - offset - normal.dot(t)
    });
    let face_b_normal = -(axes_b * hull_b.planes()[face_b.face as usize].normal);
    if face_b.separation > margin {
        return SatResult::on_face_b(face_b, face_b_normal);
    }

    // 3. Edge pairs.
    let mut best: Option<(usize, usize, f32, Vec3)> = None;
    'pairs: for i in 0..3 {
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
                if separation > margin {
                    break 'pairs;
                }
            }
        }
    }
    let edge = best.map(|(i, j, separation, axis)| EdgeQuery {
        edge_a: supporting_edge(hull_a, i, axis),
        edge_b: supporting_edge(hull_b, j, -(axes_b.transpose() * axis)),
        separation,
        axis,
    });
    if let Some(e) = edge
        && e.separation > margin
    {
        return SatResult::on_edge_pair(e);
    }
    let tolerance = AXIS_PREFERENCE_TOLERANCE * pair_scale(hull_a.radius(), hull_b.radius());
    prefer_faces((face_a, face_a_normal), (face_b, face_b_normal), edge, tolerance)
}

/// The face of `hull` whose `separation(normal, offset)` (its plane, local frame) is largest,
/// in face order: strictly larger wins, and the scan stops once one exceeds `margin`.
fn best_face(hull: &ConvexHull, margin: f32, separation: impl Fn(Vec3, f32) -> f32) -> FaceQuery {
    let mut best = FaceQuery {
        face: 0,
        separation: f32::NEG_INFINITY,
    };
    for (face, plane) in hull.planes().iter().enumerate() {
        let value = separation(plane.normal, plane.offset);
        if value > best.separation {
            best = FaceQuery {
                face: face as u32,
                separation: value,
            };
            if value > margin {
                break;
            }
        }
    }
    best
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

//! Separating axis test between two boxes (15 axes), in box A's local frame: the result of
//! [`query_hulls`](crate::query::sat::query_hulls) on the boxes' hulls, bit for bit except where
//! two edge axes tie within rounding (then either may win) and, for pairs apart by more than the
//! margin, which separating axis is reported; without the Gauss-map edge loop.
//!
//! 1. Face queries of A and B: the hull loop's values
//!    ([`query_faces_exhaustive`](crate::query::sat::query_faces_exhaustive)) bit for bit, from
//!    one rotation per pair of opposite faces and the box's lowest vertex in closed form.
//! 2. Edge query: with `R`'s columns `c_j` (B's axes in A's frame), `t` B's centre in A's frame
//!    and half extents `h_a`, `h_b`, a box's extent along a unit `n` is `Σ_k |n_k| h_a,k` (A)
//!    and `Σ_k |n · c_k| h_b,k` (B). Of the 9 axes `e_i × c_j` (parallel pairs skipped,
//!    [`PARALLEL_EDGE_SINE`]), each oriented from A toward B (the side on which the pair
//!    separates more, as the hull loop finds by testing both crossing pairs), the one of largest
//!    `|n · t| − ext_a(n) − ext_b(n)` wins; its edges are the hulls' edges along `e_i` and `c_j`
//!    that support the axis, and its axis and separation are formed from them as the hull loop
//!    does ([`edge_pair_separation`](crate::query::sat::edge_pair_separation)).
//! 3. The face queries stop once a face separates by more than the margin, the edge pair is
//!    separating when its hull-formed value is; then the hull SAT's face preference. An edge
//!    pair whose box value is below the best face by more than the bound slack is not formed
//!    (it could change nothing, as in the hull SAT's floors).

use std::sync::LazyLock;

use glam::{Mat3, Quat, Vec3, Vec4};

use crate::constants::{AXIS_PREFERENCE_TOLERANCE, PARALLEL_EDGE_SINE, pair_scale};
use crate::hull::ConvexHull;
use crate::pose::Isometry;
use crate::query::bounds::SAT_BOUND_SLACK;
use crate::query::sat::{EdgeQuery, FaceQuery, SatResult, edge_pair_axis_of, prefer_faces};
use crate::shape::Cuboid;

/// The SAT between box `a` and box `b` posed at `b_in_a` (B's pose in A's frame), with the
/// face preference of [`AXIS_PREFERENCE_TOLERANCE`] × the pair's scale, as
/// [`query_hulls`](crate::query::sat::query_hulls) on their hulls.
pub fn query_boxes(a: &Cuboid, b: &Cuboid, b_in_a: &Isometry, margin: f32) -> SatResult {
    debug_assert!(b_in_a.is_valid(), "invalid pose {b_in_a:?}");
    let (hull_a, hull_b) = (a.hull(), b.hull());
    let (h_a, h_b) = (a.half_extents(), b.half_extents());

    // 1. Faces of A and of B: the hull loop's values, three rotations per box.
    let face_a = query_box_faces(hull_a, h_b, &b_in_a.inverse(), margin);
    let face_a_normal = hull_a.planes()[face_a.face as usize].normal;
    if face_a.separation > margin {
        return SatResult::on_face_a(face_a, face_a_normal);
    }
    let face_b = query_box_faces(hull_b, h_a, b_in_a, margin);
    let face_b_normal = -(b_in_a.rotation * hull_b.planes()[face_b.face as usize].normal);
    if face_b.separation > margin {
        return SatResult::on_face_b(face_b, face_b_normal);
    }

    // 2. Edge pairs: the 9 box axes pick the pair, whose axis and separation are then formed
    // from its hull edges exactly as the hull loop forms them. An edge pair below the best face
    // changes nothing (the hull SAT's floors, see `query_hulls`), so when every axis is below
    // it by more than the bound slack (which covers the rounding between these values and the
    // hull-formed ones), no pair is formed.
    let axes_b = Mat3::from_quat(b_in_a.rotation);
    let t = b_in_a.translation;
    let floor = face_a.separation.max(face_b.separation);
    let slack = SAT_BOUND_SLACK * (t.length() + hull_a.radius() + hull_b.radius());
    let estimates = edge_axis_estimates(&axes_b, t, h_a, h_b);
    let largest = estimates
        .iter()
        .copied()
        .fold(Vec4::NEG_INFINITY, Vec4::max)
        .max_element();
    let edge = if largest < floor - slack {
        None
    } else {
        // Only axes within twice the slack of the largest estimate can be the largest.
        let candidate = |i: usize, j: usize| estimates[i][j] >= largest - 2.0 * slack;
        best_edge_pair((hull_a, h_a), (hull_b, h_b), b_in_a, &axes_b, candidate)
    };

    // 3. Early out, then the face preference.
    if let Some(e) = edge
        && e.separation > margin
    {
        return SatResult::on_edge_pair(e);
    }
    let tolerance = AXIS_PREFERENCE_TOLERANCE * pair_scale(hull_a.radius(), hull_b.radius());
    prefer_faces((face_a, face_a_normal), (face_b, face_b_normal), edge, tolerance)
}

/// Estimates of the separation along the edge axes `e_i × c_j` (`c_j` the columns of `axes_b`,
/// B's axes in A's frame; `t` B's centre in A's frame): `[i][j]`, `-∞` for (nearly) parallel
/// axes. The classic box SAT's values from the rotation's entries `R_kj = (c_j)_k`, the three
/// axes of one `e_i` at a time (lane `j`); they differ from [`best_edge_pair`]'s by rounding,
/// well within the bound slack.
fn edge_axis_estimates(axes_b: &Mat3, t: Vec3, h_a: Vec3, h_b: Vec3) -> [Vec4; 3] {
    // Row k of R as lanes j = 0, 1, 2 (lane 3 unused: a zero axis, reported parallel).
    let row = |k: usize| Vec4::new(axes_b.x_axis[k], axes_b.y_axis[k], axes_b.z_axis[k], 0.0);
    let rows = [row(0), row(1), row(2)];
    // Lane j of `next(r)` holds entry j + 1, of `next2(r)` entry j + 2 (mod 3).
    let next = |r: Vec4| Vec4::new(r.y, r.z, r.x, 0.0);
    let next2 = |r: Vec4| Vec4::new(r.z, r.x, r.y, 0.0);
    let (hb1, hb2) = (next(h_b.extend(0.0)), next2(h_b.extend(0.0)));
    let estimates = |i: usize| {
        let (i1, i2) = ((i + 1) % 3, (i + 2) % 3);
        // n = e_i × c_j: component i1 is −R_i2j, component i2 is R_i1j, component i is 0.
        let (n1, n2) = (-rows[i2], rows[i1]);
        let length = (n1 * n1 + n2 * n2).sqrt();
        let along_t = (n1 * t[i1] + n2 * t[i2]).abs();
        let extent_a = n1.abs() * h_a[i1] + n2.abs() * h_a[i2];
        // (e_i × c_j) · c_k = ±R_il for the third axis l, 0 for k = j.
        let extent_b = hb1 * next2(rows[i]).abs() + hb2 * next(rows[i]).abs();
        // Just below the parallel cut-off, so that an axis the exact loop tests has an
        // estimate whatever the rounding of the two lengths.
        let tested = length.cmpge(Vec4::splat(PARALLEL_EDGE_SINE * (1.0 - SAT_BOUND_SLACK)));
        Vec4::select(
            tested,
            (along_t - extent_a - extent_b) / length,
            Vec4::NEG_INFINITY,
        )
    };
    // Not `array::from_fn`, which the compiler leaves as a call per element here.
    [estimates(0), estimates(1), estimates(2)]
}

/// The edge pair of largest separation by the 9 box axes (`axes_b`: B's axes in A's frame),
/// with its axis and separation formed from the hulls' edges as
/// [`edge_pair_separation`](crate::query::sat::edge_pair_separation) forms them. Each
/// box is given as its hull and half extents. Only axes `(i, j)` with `candidate(i, j)` are
/// measured: the caller rules out axes that cannot be the largest (nor tie with it).
fn best_edge_pair(
    (hull_a, h_a): (&ConvexHull, Vec3),
    (hull_b, h_b): (&ConvexHull, Vec3),
    b_in_a: &Isometry,
    axes_b: &Mat3,
    candidate: impl Fn(usize, usize) -> bool,
) -> Option<EdgeQuery> {
    let t = b_in_a.translation;
    let extent_a = |n: Vec3| n.abs().dot(h_a);
    let extent_b = |n: Vec3| (axes_b.transpose() * n).abs().dot(h_b);
    // No early out on these values: they round differently from the hull formula, so a pair
    // just over the margin here may not be over it there while another pair is well over.
    let mut best: Option<(usize, usize, f32, Vec3)> = None;
    for i in 0..3 {
        for j in 0..3 {
            if !candidate(i, j) {
                continue;
            }
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
    let (i, j, _, axis) = best?;
    let edge_a = supporting_edge(i, axis);
    let edge_b = supporting_edge(j, -(axes_b.transpose() * axis));
    // `edge_pair_separation` bit for bit: its axis, and `separation_along` with both boxes'
    // lowest vertices in closed form.
    let axis = edge_pair_axis_of(hull_a, hull_b, b_in_a, edge_a, edge_b)?;
    let b_lowest = box_lowest_along(h_b, b_in_a.inverse_transform_vector(axis));
    let a_highest = -box_lowest_along(h_a, -axis);
    let separation = b_lowest + axis.dot(b_in_a.translation) - a_highest;
    Some(EdgeQuery {
        edge_a,
        edge_b,
        separation,
        axis,
    })
}

/// [`query_faces_exhaustive`] of box hull `a` (faces `-X, +X, -Y, +Y, -Z, +Z`, see
/// [`ConvexHull::cuboid`]) against a box of half extents `h_b`, A posed at `a_in_b` in B's
/// frame: the same face and separation bit for bit, with one rotation per pair of opposite
/// faces and B's lowest vertex in closed form ([`box_lowest_along`]).
fn query_box_faces(a: &ConvexHull, h_b: Vec3, a_in_b: &Isometry, margin: f32) -> FaceQuery {
    let planes = a.planes();
    let mut best = FaceQuery {
        face: 0,
        separation: f32::NEG_INFINITY,
    };
    let normals = rotated_axes(a_in_b.rotation);
    for (axis, &normal) in normals.iter().enumerate() {
        // `normal` is the `+axis` face's (a box hull's face normals are the unit axes); the
        // `-axis` face's is its negation, which negates the rotated normal and its dot products
        // exactly (up to the sign of zero terms, which cannot change a sum with a non-zero term:
        // the offsets are half extents).
        let lowest = box_lowest_along(h_b, normal);
        let along = normal.dot(a_in_b.translation);
        for (face, offset) in [
            (2 * axis, planes[2 * axis].offset - along),
            (2 * axis + 1, planes[2 * axis + 1].offset + along),
        ] {
            let separation = lowest - offset;
            if separation > best.separation {
                best = FaceQuery {
                    face: face as u32,
                    separation,
                };
                if separation > margin {
                    return best;
                }
            }
        }
    }
    best
}

/// `rotation * e_k` for the unit axes `e_0, e_1, e_2`, as `Quat * Vec3` rounds it (glam:
/// `v (w² − |b|²) + b (2 v·b) + (b × v)(2w)`, summed in that order), bit for bit up to the sign
/// of zero components: with `v = e_k` every product with a zero component is an exact zero,
/// so only the products below remain, rounded as there.
#[inline]
fn rotated_axes(rotation: Quat) -> [Vec3; 3] {
    let (x, y, z, w) = (rotation.x, rotation.y, rotation.z, rotation.w);
    // `|b|²` as glam's three-lane dot sums it.
    let c = w * w - ((x * x + y * y) + z * z);
    let w2 = w * 2.0;
    // Column k: `e_k c + b (2 b_k) + (b × e_k)(2w)`; b × e_x = (0, z, −y), b × e_y = (−z, 0, x),
    // b × e_z = (y, −x, 0).
    let (x2, y2, z2) = (x * 2.0, y * 2.0, z * 2.0);
    [
        Vec3::new(c + x * x2, y * x2 + z * w2, z * x2 - y * w2),
        Vec3::new(x * y2 - z * w2, c + y * y2, z * y2 + x * w2),
        Vec3::new(x * z2 + y * w2, y * z2 - x * w2, c + z * z2),
    ]
}

/// [`ConvexHull::lowest_along`] of a box hull with half extents `h` (vertices `±h`), bit for
/// bit: each vertex's `(x dx + y dy) + z dz` is rounded monotonically in every term, so the
/// smallest is the one with every term `−|h_k d_k|`, and negation is exact. Also the same for
/// `-direction`.
#[inline]
fn box_lowest_along(h: Vec3, direction: Vec3) -> f32 {
    -((h.x * direction.x).abs() + (h.y * direction.y).abs() + (h.z * direction.z).abs())
}

/// The edges of every box hull by local axis and corner: `BOX_EDGES[axis][corner]` is the index
/// of the edge along `axis` whose start vertex, [`ConvexHull::cuboid`]'s numbering (bit `k` set
/// = positive coordinate `k`), is `corner` (the `axis` bit clear). The topology of
/// [`ConvexHull::cuboid`] does not depend on the half extents.
static BOX_EDGES: LazyLock<[[u32; 8]; 3]> = LazyLock::new(|| {
    let hull = ConvexHull::cuboid(Vec3::ONE);
    let mut table = [[u32::MAX; 8]; 3];
    for (index, edge) in hull.edges().iter().enumerate() {
        let along = edge.vertices[0] ^ edge.vertices[1];
        let axis = along.trailing_zeros() as usize;
        table[axis][(edge.vertices[0] & !along) as usize] = index as u32;
    }
    table
});

/// Index of the edge of a box hull along local axis `axis` that is furthest along `direction`
/// (local frame).
fn supporting_edge(axis: usize, direction: Vec3) -> u32 {
    let corner = (0..3)
        .filter(|&k| k != axis && direction[k] > 0.0)
        .fold(0u32, |bits, k| bits | (1 << k));
    BOX_EDGES[axis][corner as usize]
}

#[cfg(test)]
mod tests {
    use glam::Quat;

    use super::*;
    use crate::query::sat::query_faces_exhaustive;
    use crate::test_rng::unit_floats;

    #[test]
    fn box_face_queries_match_the_hull_loop_bit_for_bit() {
        // A deterministic spread of sizes, rotations (some exactly aligned) and offsets.
        let mut next = unit_floats(0x2545_f491_u32);
        let mut separated = 0;
        for i in 0..20_000 {
            let mut size = || Vec3::new(0.05 + next(), 0.05 + next(), 0.05 + next());
            let (h_a, h_b) = (size(), size());
            let (a, b) = (ConvexHull::cuboid(h_a), ConvexHull::cuboid(h_b));
            let axis = Vec3::new(next() - 0.5, next() - 0.5, next() - 0.5).normalize_or(Vec3::Y);
            let angle = if i % 4 == 0 { 0.0 } else { 7.0 * next() };
            let offset = Vec3::new(next() - 0.5, next() - 0.5, next() - 0.5) * 3.0;
            let a_in_b = Isometry::new(offset, Quat::from_axis_angle(axis, angle));
            let margin = [0.0, 0.01, 0.5][i % 3];
            let fast = query_box_faces(&a, h_b, &a_in_b, margin);
            let slow = query_faces_exhaustive(&a, &b, &a_in_b, margin);
            assert_eq!(fast.face, slow.face, "pair {i}");
            assert_eq!(fast.separation.to_bits(), slow.separation.to_bits(), "pair {i}");
            separated += (slow.separation > margin) as usize;
        }
        // Both the early exit and the full loop are covered.
        assert!(separated > 1000 && separated < 19_000, "{separated}");
    }

    #[test]
    fn rotated_axes_match_the_quaternion_product_bit_for_bit() {
        let mut next = unit_floats(0x1234_5678_u32);
        for i in 0..20_000 {
            let axis = Vec3::new(next() - 0.5, next() - 0.5, next() - 0.5).normalize_or(Vec3::X);
            let rotation = match i % 4 {
                0 => Quat::from_axis_angle(
                    Vec3::AXES[i / 4 % 3],
                    std::f32::consts::FRAC_PI_2 * (i / 12) as f32,
                ),
                _ => Quat::from_axis_angle(axis, 7.0 * next()),
            };
            for (k, fast) in rotated_axes(rotation).into_iter().enumerate() {
                let slow = rotation * Vec3::AXES[k];
                // Equal as numbers (0.0 == -0.0): only the sign of a zero may differ.
                assert_eq!(fast, slow, "{i} {rotation:?} axis {k}");
                let bits = |v: Vec3| v.to_array().map(|x| if x == 0.0 { 0 } else { x.to_bits() });
                assert_eq!(bits(fast), bits(slow), "{i} {rotation:?} axis {k}");
            }
        }
    }

    #[test]
    fn supporting_edges_lie_along_the_axis_at_the_supporting_corner() {
        let hull = ConvexHull::cuboid(Vec3::new(1.0, 2.0, 3.0));
        for axis in 0..3 {
            for direction in [Vec3::new(1.0, -1.0, 1.0), Vec3::new(-1.0, 1.0, -1.0)] {
                let edge = hull.edges()[supporting_edge(axis, direction) as usize];
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

//! Separating axis test between two boxes (15 axes), in box A's local frame, in closed form: the
//! hull SAT's conventions ([`query_hulls`](crate::query::sat::query_hulls): normal from A toward B,
//! the boxes' hulls' feature ids, the face preference) without loops; its values are the hull
//! SAT's up to rounding, not bit for bit (`tests/box_box.rs` bounds how often ties differ).
//!
//! With `R` B's rotation in A's frame (columns `c_j`), `t` B's centre, half extents `h_a`, `h_b`:
//! the separation along a unit `n` is `|n · t| − Σ_k |n_k| h_a,k − Σ_j |n · c_j| h_b,j`.
//! 1. Frame (`BoxFrame`): `R` from B's quaternion, its rows, `t`.
//! 2. Faces of A along `e_k` (`BoxFrame::faces_a`); 3. faces of B along `c_j` (`faces_b`).
//! 4. Edge pairs: the 9 axes `e_i × c_j`, three at a time (`edge_separations`, `edge_query`).
//! 5. Each step ends the query once an axis separates by more than the margin; then the hull
//!    SAT's face preference (`prefer_faces`). Formulas and tie rules: docs/design/sat.md.
//!
//! WGSL twin: `shaders/narrowphase/sat_box.wgsl` (steps 1 to 4, same operations, same order).

use std::sync::LazyLock;

use glam::{Vec3, Vec3A, Vec3Swizzles, Vec4};

use crate::constants::{AXIS_PREFERENCE_TOLERANCE, PARALLEL_EDGE_SINE, pair_scale};
use crate::hull::ConvexHull;
use crate::pose::Isometry;
use crate::query::sat::{EdgeQuery, FaceQuery, SatAxis, SatResult, prefer_faces};
use crate::shape::Cuboid;

/// The SAT between box `a` and box `b` posed at `b_in_a` (B's pose in A's frame), with the
/// face preference of [`AXIS_PREFERENCE_TOLERANCE`] × the pair's scale, as
/// [`query_hulls`](crate::query::sat::query_hulls) on their hulls up to rounding.
pub fn query_boxes(a: &Cuboid, b: &Cuboid, b_in_a: &Isometry, margin: f32) -> SatResult {
    debug_assert!(b_in_a.is_valid(), "invalid pose {b_in_a:?}");
    let (hull_a, hull_b) = (a.hull(), b.hull());

    // 1. Frame.
    let frame = BoxFrame::new(a.half_extents(), b.half_extents(), b_in_a);

    // 2. Faces of A; a box hull's face normals are its planes' (exact unit axes).
    let face_a = frame.faces_a(margin);
    let face_a_normal = hull_a.planes()[face_a.face as usize].normal;
    if face_a.separation > margin {
        return SatResult::on_face_a(face_a, face_a_normal);
    }

    // 3. Faces of B.
    let face_b = frame.faces_b(margin);
    let face_b_normal = frame.face_b_normal(face_b.face);
    if face_b.separation > margin {
        return SatResult::on_face_b(face_b, face_b_normal);
    }

    // 4. Edge pairs: the 9 separations; the pair (its axis and edges) only where it can
    // decide the result.
    let (edges, largest) = frame.edge_separations();
    if largest > margin {
        return SatResult::on_edge_pair(frame.edge_query(&edges, largest));
    }

    // 5. The face preference. The edge pair (its axis and edges) is formed only where it beats
    // the chosen face by more than the tolerance (prefer_faces' rule); its value counts in the
    // largest separation either way.
    let tolerance = AXIS_PREFERENCE_TOLERANCE * pair_scale(hull_a.radius(), hull_b.radius());
    let (face_a, face_b) = ((face_a, face_a_normal), (face_b, face_b_normal));
    let mut result = prefer_faces(face_a, face_b, None, tolerance);
    if largest > result.axis_separation + tolerance {
        result = prefer_faces(face_a, face_b, Some(frame.edge_query(&edges, largest)), tolerance);
    }
    result.separation = result.separation.max(largest);
    result
}

/// Step 1: B's pose in A's frame as the box SAT uses it, with both boxes' half extents.
struct BoxFrame {
    /// Columns of `R`: B's axes `c_j` in A's frame.
    columns: [Vec3A; 3],
    /// Rows of `R`: lane `j` of `rows[k]` is `R_kj = (c_j)_k`.
    rows: [Vec3A; 3],
    /// B's centre in A's frame.
    t: Vec3A,
    /// A's half extents.
    h_a: Vec3A,
    /// B's half extents.
    h_b: Vec3A,
}

impl BoxFrame {
    /// `R` is glam's `Mat3A::from_quat` bit for bit (its products and sums, three at a time).
    fn new(h_a: Vec3, h_b: Vec3, b_in_a: &Isometry) -> BoxFrame {
        let q = Vec4::from(b_in_a.rotation);
        let (xyz, w) = (Vec3A::from(q.truncate()), q.w);
        let twice = xyz + xyz;
        // (xx, yy, zz), (xy, xz, yz) and (wx, wy, wz), each `a * (b + b)` as glam forms them.
        let squares = xyz * twice;
        let mixed = xyz.xxy() * twice.yzz();
        let by_w = twice * w;
        let diagonal = Vec3A::ONE - (squares.yxx() + squares.zzy());
        // (xy + wz, xz + wy, yz + wx) and (xy − wz, xz − wy, yz − wx).
        let plus = mixed + by_w.zyx();
        let minus = mixed - by_w.zyx();
        BoxFrame {
            columns: [
                Vec3A::new(diagonal.x, plus.x, minus.y),
                Vec3A::new(minus.x, diagonal.y, plus.z),
                Vec3A::new(plus.y, minus.z, diagonal.z),
            ],
            rows: [
                Vec3A::new(diagonal.x, minus.x, plus.y),
                Vec3A::new(plus.x, diagonal.y, minus.z),
                Vec3A::new(minus.y, plus.z, diagonal.z),
            ],
            t: b_in_a.translation.into(),
            h_a: h_a.into(),
            h_b: h_b.into(),
        }
    }

    /// Along A's axes `e_k` (lane `k`): B's centre `t_k` and B's extent.
    #[inline]
    fn along_axes_of_a(&self) -> (Vec3A, Vec3A) {
        let [c0, c1, c2] = self.columns;
        let h_b = self.h_b;
        (self.t, c0.abs() * h_b.x + c1.abs() * h_b.y + c2.abs() * h_b.z)
    }

    /// Along B's axes `c_j` (lane `j`): B's centre `t · c_j` and A's extent.
    #[inline]
    fn along_axes_of_b(&self) -> (Vec3A, Vec3A) {
        let [r0, r1, r2] = self.rows;
        let (t, h_a) = (self.t, self.h_a);
        let along = r0 * t.x + r1 * t.y + r2 * t.z;
        (along, r0.abs() * h_a.x + r1.abs() * h_a.y + r2.abs() * h_a.z)
    }

    /// Step 2: the best face of A (lane `k`: the axis `e_k`).
    #[inline]
    fn faces_a(&self, margin: f32) -> FaceQuery {
        let (t, extent_b) = self.along_axes_of_a();
        first_face((t.abs() - self.h_a) - extent_b, t, margin)
    }

    /// Step 3: the best face of B (lane `j`: the axis `c_j`).
    #[inline]
    fn faces_b(&self, margin: f32) -> FaceQuery {
        let (along, extent_a) = self.along_axes_of_b();
        // B's face `+j` looks at A when A's centre, `−t`, is on its side.
        first_face((along.abs() - self.h_b) - extent_a, -along, margin)
    }

    /// The manifold normal of B's face `face` (A's frame, from A toward B): minus its outward
    /// normal, `c_j` for face `−j` (`2j`), `−c_j` for face `+j`.
    #[inline]
    fn face_b_normal(&self, face: u32) -> Vec3 {
        let c = Vec3::from(self.columns[face as usize / 2]);
        if face % 2 == 1 { -c } else { c }
    }

    /// The edge axes `n = e_i × c_j` of one `i`, lane `j`.
    #[inline]
    fn edge_lanes(&self, i: usize) -> EdgeLanes {
        let (rows, t) = (&self.rows, self.t);
        let (h_a, h_b) = (self.h_a, self.h_b);
        // `n_i = 0`, `n_i1 = −R_i2j`, `n_i2 = R_i1j`.
        let (i1, i2) = ((i + 1) % 3, (i + 2) % 3);
        let (n1, n2) = (-rows[i2], rows[i1]);
        // `n · c_(j+1)` and `n · c_(j+2)` (`n · c_j` is exactly 0).
        let next = n1 * rows[i1].yzx() + n2 * rows[i2].yzx();
        let next2 = n1 * rows[i1].zxy() + n2 * rows[i2].zxy();
        EdgeLanes {
            n1,
            n2,
            length: (n1 * n1 + n2 * n2).sqrt(),
            along: n1 * t[i1] + n2 * t[i2],
            extent_a: n1.abs() * h_a[i1] + n2.abs() * h_a[i2],
            extent_b: next.abs() * h_b.yzx() + next2.abs() * h_b.zxy(),
        }
    }

    /// Step 4: the separations along the 9 edge axes, lane `j` of `[i]`, each oriented from A
    /// toward B (`-∞` for parallel pairs), and their largest.
    #[inline]
    fn edge_separations(&self) -> ([Vec3A; 3], f32) {
        let separations = |i: usize| {
            let e = self.edge_lanes(i);
            let tested = e.length.cmpge(Vec3A::splat(PARALLEL_EDGE_SINE));
            let separation = ((e.along.abs() - e.extent_a) - e.extent_b) / e.length;
            Vec3A::select(tested, separation, Vec3A::NEG_INFINITY)
        };
        // Not `array::from_fn`, which the compiler leaves as a call per element here.
        let lanes = [separations(0), separations(1), separations(2)];
        (lanes, lanes[0].max(lanes[1]).max(lanes[2]).max_element())
    }

    /// Step 4's edge pair: the first in `(i, j)` order of the `separations` whose value is
    /// `largest` (their maximum, finite), with its axis (A's frame, from A toward B) and the
    /// boxes' edges that support it.
    fn edge_query(&self, separations: &[Vec3A; 3], largest: f32) -> EdgeQuery {
        let first = |lanes: Vec3A| lanes.cmpeq(Vec3A::splat(largest)).bitmask();
        let (i, mask) = match (first(separations[0]), first(separations[1])) {
            (0, 0) => (2, first(separations[2])),
            (0, mask) => (1, mask),
            (mask, _) => (0, mask),
        };
        let j = mask.trailing_zeros() as usize;
        // The lane's `n` and `n · t` again, as scalars rounded as the lanes were.
        let (i1, i2) = ((i + 1) % 3, (i + 2) % 3);
        let (n1, n2) = (-self.rows[i2][j], self.rows[i1][j]);
        let (axis, toward_a) = self.edge_axis(i, n1, n2, n1 * self.t[i1] + n2 * self.t[i2] < 0.0);
        EdgeQuery {
            edge_a: supporting_edge(i, axis.into()),
            edge_b: supporting_edge(j, toward_a),
            separation: largest,
            axis,
        }
    }

    /// The edge axis of `e_i` with `n_i1 = n1`, `n_i2 = n2` (`(i1, i2) = (i + 1, i + 2) mod 3`)
    /// as a unit axis in A's frame, negated when `flip`, and the direction toward A in B's frame
    /// (`−(axis · c_k)` up to a positive factor).
    #[inline]
    fn edge_axis(&self, i: usize, n1: f32, n2: f32, flip: bool) -> (Vec3, Vec3A) {
        let (i1, i2) = ((i + 1) % 3, (i + 2) % 3);
        let length = (n1 * n1 + n2 * n2).sqrt();
        let (n1, n2) = if flip { (-n1, -n2) } else { (n1, n2) };
        let mut axis = Vec3::ZERO;
        axis[i1] = n1 / length;
        axis[i2] = n2 / length;
        (axis, -(self.rows[i1] * n1 + self.rows[i2] * n2))
    }
}

/// Step 4's values for the axes `e_i × c_j` of one `i`, lane `j`: `n`'s two non-zero
/// components (`n_i1`, `n_i2`, with `(i1, i2) = (i + 1, i + 2) mod 3`), its length, `n · t`
/// and the two boxes' extents along `n`, all unnormalized (divide by `length`).
struct EdgeLanes {
    n1: Vec3A,
    n2: Vec3A,
    length: Vec3A,
    along: Vec3A,
    extent_a: Vec3A,
    extent_b: Vec3A,
}

/// The normal (A's frame, from A toward B) and separation of a given `axis` of boxes `a` and
/// `b` (B posed at `b_in_a`, feature ids as [`query_boxes`] reports them): for a caller that
/// re-measures a known axis ([`crate::ContactCache`]). Where [`query_boxes`] chooses this
/// axis, the same values bit for bit; a face is measured on its own side, an edge pair
/// oriented so that A's edge supports it. `None` for an edge pair that has become parallel.
pub(crate) fn box_axis_separation(
    a: &Cuboid,
    b: &Cuboid,
    b_in_a: &Isometry,
    axis: SatAxis,
) -> Option<(Vec3, f32)> {
    let frame = BoxFrame::new(a.half_extents(), b.half_extents(), b_in_a);
    // A face's own side: `+k` faces (odd) along `+t`, `−k` faces along `−t`.
    let signed = |face: u32, along: f32| if face % 2 == 1 { along } else { -along };
    Some(match axis {
        SatAxis::FaceA(face) => {
            let k = face as usize / 2;
            let (t, extent_b) = frame.along_axes_of_a();
            let separation = (signed(face, t[k]) - frame.h_a[k]) - extent_b[k];
            (a.hull().planes()[face as usize].normal, separation)
        }
        SatAxis::FaceB(face) => {
            let j = face as usize / 2;
            let (along, extent_a) = frame.along_axes_of_b();
            let separation = (signed(face, -along[j]) - frame.h_b[j]) - extent_a[j];
            (frame.face_b_normal(face), separation)
        }
        SatAxis::EdgePair { edge_a, edge_b } => {
            let (i, j) = (box_edge_axis(a.hull(), edge_a), box_edge_axis(b.hull(), edge_b));
            let e = frame.edge_lanes(i);
            if e.length[j] < PARALLEL_EDGE_SINE {
                return None;
            }
            // Oriented toward A's edge (as the query orients it toward B's centre, where A's
            // edge supports the axis).
            let start = a.hull().vertices()[a.hull().edges()[edge_a as usize].vertices[0] as usize];
            let (i1, i2) = ((i + 1) % 3, (i + 2) % 3);
            let flip = e.n1[j] * start[i1] + e.n2[j] * start[i2] < 0.0;
            let (axis, _) = frame.edge_axis(i, e.n1[j], e.n2[j], flip);
            let along = if flip { -e.along[j] } else { e.along[j] };
            (axis, ((along - e.extent_a[j]) - e.extent_b[j]) / e.length[j])
        }
    })
}

/// The hull face loop's answer over three axes of one box, given each axis's separation and a
/// value whose sign picks the face looking at the other box (`+axis` when positive, else
/// `−axis`, the first of the pair): the first axis separating by more than `margin`, else the
/// first of largest separation. Faces in [`ConvexHull::cuboid`]'s numbering.
#[inline]
fn first_face(separations: Vec3A, toward: Vec3A, margin: f32) -> FaceQuery {
    let above = separations.cmpgt(Vec3A::splat(margin)).bitmask();
    let k = if above != 0 {
        above.trailing_zeros()
    } else {
        let largest = separations.max_element();
        separations
            .cmpeq(Vec3A::splat(largest))
            .bitmask()
            .trailing_zeros()
    };
    let positive = toward.cmpgt(Vec3A::ZERO).bitmask() >> k & 1;
    FaceQuery {
        face: 2 * k + positive,
        separation: separations[k as usize],
    }
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
fn supporting_edge(axis: usize, direction: Vec3A) -> u32 {
    let corner = direction.cmpgt(Vec3A::ZERO).bitmask() & !(1 << axis);
    BOX_EDGES[axis][corner as usize]
}

/// The local axis (0, 1, 2) along which edge `edge` of box hull `hull` runs.
fn box_edge_axis(hull: &ConvexHull, edge: u32) -> usize {
    let [v0, v1] = hull.edges()[edge as usize].vertices;
    (v0 ^ v1).trailing_zeros() as usize
}

#[cfg(test)]
mod tests {
    use glam::Quat;

    use super::*;
    use crate::query::sat::edge_pair_separation;
    use crate::query::sat::exhaustive::{query_edges_exhaustive, query_faces_exhaustive};
    use crate::test_rng::unit_floats;

    /// Two f32 computations of one separation (here: the closed form and the hull loops, boxes
    /// of size up to 1 within a few units) agree to this, relative to the pair's scale.
    const ROUNDING: f32 = 2e-6;

    /// The separation of box hull `b` (posed at `b_in_a`) below face `face` of box hull `a`.
    fn face_separation(a: &ConvexHull, b: &ConvexHull, b_in_a: &Isometry, face: u32) -> f32 {
        let plane = a.planes()[face as usize];
        let deepest = b
            .vertices()
            .iter()
            .map(|&v| plane.normal.dot(b_in_a.transform_point(v)))
            .fold(f32::INFINITY, f32::min);
        deepest - plane.offset
    }

    /// Step 4 whatever the faces: the best edge pair, `None` when every pair is parallel.
    fn best_edge_pair(frame: &BoxFrame) -> Option<EdgeQuery> {
        let (separations, largest) = frame.edge_separations();
        (largest > f32::NEG_INFINITY).then(|| frame.edge_query(&separations, largest))
    }

    #[test]
    fn box_queries_match_the_hull_loops_within_rounding() {
        // A deterministic spread of sizes, rotations (exactly aligned, nearly aligned, any) and
        // offsets. No margin: the first largest face and edge pair, compared by value.
        let mut next = unit_floats(0x2545_f491_u32);
        let (mut ties, mut edge_wins) = (0, 0);
        for i in 0..20_000 {
            let mut size = || Vec3::new(0.05 + next(), 0.05 + next(), 0.05 + next());
            let (h_a, h_b) = (size(), size());
            let (a, b) = (ConvexHull::cuboid(h_a), ConvexHull::cuboid(h_b));
            let axis = Vec3::new(next() - 0.5, next() - 0.5, next() - 0.5).normalize_or(Vec3::Y);
            let angle = [0.0, 1e-3 * next(), 0.05 * next(), 7.0 * next()][i % 4];
            let offset = Vec3::new(next() - 0.5, next() - 0.5, next() - 0.5) * 3.0;
            let b_in_a = Isometry::new(offset, Quat::from_axis_angle(axis, angle));
            let a_in_b = b_in_a.inverse();
            let tie = ROUNDING * (a.radius() + b.radius());
            let frame = BoxFrame::new(h_a, h_b, &b_in_a);

            // Faces: the same separation; the same face unless another has it too.
            let faces = [
                (
                    frame.faces_a(f32::INFINITY),
                    query_faces_exhaustive(&a, &b, &a_in_b, f32::INFINITY),
                ),
                (
                    frame.faces_b(f32::INFINITY),
                    query_faces_exhaustive(&b, &a, &b_in_a, f32::INFINITY),
                ),
            ];
            for (side, (fast, slow)) in faces.iter().enumerate() {
                assert!(
                    (fast.separation - slow.separation).abs() <= tie,
                    "pair {i}: {fast:?} {slow:?}"
                );
                if fast.face != slow.face {
                    let own = match side {
                        0 => face_separation(&a, &b, &b_in_a, fast.face),
                        _ => face_separation(&b, &a, &a_in_b, fast.face),
                    };
                    assert!(
                        (own - slow.separation).abs() <= tie,
                        "pair {i}: {fast:?} {slow:?}"
                    );
                    ties += 1;
                }
            }

            // Edge pairs: the box query also measures pairs whose Gauss-map arcs only touch
            // (exactly aligned boxes), which the hull loop skips; their axes are face axes. So
            // no edge value beyond the faces' and the hull loop's, and where an edge pair beats
            // the faces the same pair and value.
            let best_face = faces[0].1.separation.max(faces[1].1.separation);
            let slow = query_edges_exhaustive(&a, &b, &b_in_a, f32::INFINITY);
            let slow_value = slow.map_or(f32::NEG_INFINITY, |e| e.separation);
            let Some(fast) = best_edge_pair(&frame) else {
                assert!(slow_value <= best_face + tie, "pair {i}: {slow:?}");
                continue;
            };
            // An edge pair's axis is known to f32 rounding over the sine of its edges' angle
            // (both paths form it from nearly parallel directions), and its value to that times
            // the pair's size.
            let ea = a.edge_directions()[fast.edge_a as usize];
            let eb = b_in_a.rotation * b.edge_directions()[fast.edge_b as usize];
            let sine = ea.cross(eb).length();
            let edge_tie = tie / sine;
            assert!(
                fast.separation <= slow_value.max(best_face) + edge_tie,
                "pair {i}: {fast:?} {slow:?}"
            );
            if let Some(slow) = slow
                && slow.separation > best_face + tie
            {
                assert!(
                    (fast.separation - slow.separation).abs() <= edge_tie,
                    "pair {i}: {fast:?} {slow:?}"
                );
                // The hull's own axis and value for the reported pair.
                let (axis, separation) =
                    edge_pair_separation(&a, &b, &b_in_a, fast.edge_a, fast.edge_b).expect("not parallel");
                assert!(
                    (separation - fast.separation).abs() <= edge_tie,
                    "pair {i}: {fast:?} {slow:?}"
                );
                assert!(
                    axis.distance(fast.axis) <= ROUNDING / sine,
                    "pair {i}: {fast:?} {axis}"
                );
                ties += ((fast.edge_a, fast.edge_b) != (slow.edge_a, slow.edge_b)) as usize;
                edge_wins += 1;
            }
        }
        eprintln!("{ties} ties, {edge_wins} edge pairs beyond the faces");
        assert!(edge_wins > 1000, "{edge_wins}");
        assert!(ties < 20, "{ties}");
    }

    #[test]
    fn a_named_axis_measures_as_the_query_chose_it_bit_for_bit() {
        let mut next = unit_floats(0x5eed_b0c5_u32);
        let mut kinds = [0; 3];
        for i in 0..20_000 {
            let mut size = || Vec3::new(0.05 + next(), 0.05 + next(), 0.05 + next());
            let (a, b) = (Cuboid::new(size()).unwrap(), Cuboid::new(size()).unwrap());
            let axis = Vec3::new(next() - 0.5, next() - 0.5, next() - 0.5).normalize_or(Vec3::Y);
            let angle = [0.0, 0.05 * next(), 7.0 * next()][i % 3];
            let offset = Vec3::new(next() - 0.5, next() - 0.5, next() - 0.5) * 2.0;
            let b_in_a = Isometry::new(offset, Quat::from_axis_angle(axis, angle));
            let margin = [0.0, 0.01, 0.5][i % 3];
            let sat = query_boxes(&a, &b, &b_in_a, margin);
            let (normal, separation) = box_axis_separation(&a, &b, &b_in_a, sat.axis).expect("not parallel");
            assert_eq!(normal, sat.normal, "pair {i}: {sat:?}");
            assert_eq!(
                separation.to_bits(),
                sat.axis_separation.to_bits(),
                "pair {i}: {sat:?}"
            );
            kinds[match sat.axis {
                SatAxis::FaceA(_) => 0,
                SatAxis::FaceB(_) => 1,
                SatAxis::EdgePair { .. } => 2,
            }] += 1;
        }
        assert!(kinds.iter().all(|&n| n > 1000), "{kinds:?}");
    }

    #[test]
    fn the_frame_is_glams_rotation_matrix_bit_for_bit() {
        let mut next = unit_floats(0x0f00_ba11_u32);
        for i in 0..20_000 {
            let axis = Vec3::new(next() - 0.5, next() - 0.5, next() - 0.5).normalize_or(Vec3::X);
            let rotation = Quat::from_axis_angle(axis, [0.0, 1e-3, 7.0][i % 3] * next());
            let frame = BoxFrame::new(Vec3::ONE, Vec3::ONE, &Isometry::new(Vec3::ZERO, rotation));
            let r = glam::Mat3A::from_quat(rotation);
            let bits = |v: Vec3A| v.to_array().map(f32::to_bits);
            for (k, (column, row)) in frame.columns.iter().zip(&frame.rows).enumerate() {
                assert_eq!(bits(*column), bits(r.col(k)), "{rotation:?}");
                assert_eq!(bits(*row), bits(r.row(k)), "{rotation:?}");
            }
        }
    }

    #[test]
    fn supporting_edges_lie_along_the_axis_at_the_supporting_corner() {
        let hull = ConvexHull::cuboid(Vec3::new(1.0, 2.0, 3.0));
        for axis in 0..3 {
            for direction in [Vec3::new(1.0, -1.0, 1.0), Vec3::new(-1.0, 1.0, -1.0)] {
                let edge = hull.edges()[supporting_edge(axis, direction.into()) as usize];
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

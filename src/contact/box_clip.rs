//! Face contact of two boxes in closed form: the hull routine's clip and point selection
//! (`hull_hull.rs` steps 2 and 3,
//! [`clip_incident_face`](crate::contact::clip::clip_incident_face) and
//! [`reduce_to_four`](crate::contact::clip::reduce_to_four)) for a box face axis, computed in
//! the reference box's frame, where the reference face is an axis-aligned rectangle and every
//! side plane test is one coordinate compare. The same points in the same order with the same
//! feature ids, positions and depths within rounding (a few ulps of the pair's scale; exact
//! ties aside, see `tests/box_box.rs`). The GPU clips boxes with the hull routine's steps
//! (`clip.wgsl`); the equivalence tests compare it with this within their tolerances.
//!
//! 1. Frames: everything is computed in the reference box's local frame (A's for a face of A,
//!    B's for a face of B). The incident box is posed there by a rotation matrix `M` (columns:
//!    the incident box's axes) and its centre `c`.
//! 2. Incident face: the incident box's face whose outward normal is most anti-parallel to the
//!    reference normal `n = ±e_a`. Its dot products with `n` are `∓(±M_ak)`, the entries of row
//!    `a` of `M`; of faces within [`INCIDENT_FACE_TOLERANCE`] of the best, the lowest index wins
//!    (the rule of the hull routine's `most_antiparallel_face`).
//! 3. Its four vertices in the incident hull's loop order ([`ConvexHull::cuboid`]'s numbering:
//!    bit `k` set = positive coordinate `k`): `c + Σ_k ±h_k M_k`.
//! 4. Sutherland–Hodgman against the reference face's four side planes, in the reference loop's
//!    order. The side through the loop edge along axis `e` on face axis `a` is `±p_w ≤ h_w` for
//!    the third axis `w` (sign: the edge's side of the face): its distance is a coordinate minus
//!    a half extent. Vertices, crossings and ids as in `clip_incident_face` (its
//!    [`crossing_id`]); a pass whose plane has every vertex behind it would copy the polygon
//!    unchanged and is skipped.
//! 5. Keep the points within the margin in front of the reference plane (`±p_a − h_a`); of more
//!    than four, `reduce_to_four`'s picks ([`reduce_box_points`]: the same steps and formulas
//!    on in-plane coordinates, four candidates at a time). Each point midway between the
//!    incident point and its projection on the reference plane, depth = −(its distance in
//!    front of the plane).
//! 6. Back to A's frame (`R p + t` for B's reference face, `R` and `t` B's pose in A's frame).
//!
//! [`ConvexHull::cuboid`]: crate::hull::ConvexHull::cuboid

use glam::{BVec4A, Mat3, Vec2, Vec3, Vec3A, Vec4};

use crate::constants::INCIDENT_FACE_TOLERANCE;
use crate::contact::clip::{EdgeCarrier, crossing_id};
use crate::manifold::{ContactPoint, FeatureId, MAX_MANIFOLD_POINTS, Manifold};
use crate::pose::Isometry;
use crate::query::sat::SatAxis;
use crate::shape::Cuboid;

/// Most vertices of a quad clipped by four planes (each plane adds at most one).
const MAX_BOX_CLIP_VERTICES: usize = 8;
const _: () = assert!(MAX_BOX_CLIP_VERTICES.is_power_of_two());

/// A convex polygon being clipped (reference frame), with what made each vertex and what the
/// edge leaving it lies on.
#[derive(Clone, Copy)]
struct BoxClipPolygon {
    positions: [Vec3A; MAX_BOX_CLIP_VERTICES],
    ids: [FeatureId; MAX_BOX_CLIP_VERTICES],
    carriers: [EdgeCarrier; MAX_BOX_CLIP_VERTICES],
    len: usize,
}

impl BoxClipPolygon {
    const EMPTY: BoxClipPolygon = BoxClipPolygon {
        positions: [Vec3A::ZERO; MAX_BOX_CLIP_VERTICES],
        ids: [FeatureId(0); MAX_BOX_CLIP_VERTICES],
        carriers: [EdgeCarrier::Incident(0); MAX_BOX_CLIP_VERTICES],
        len: 0,
    };

    // Capacity holds by construction: 4 + 4 vertices at most.
    #[inline]
    fn push(&mut self, position: Vec3A, id: FeatureId, carrier: EdgeCarrier) {
        let slot = self.len & (MAX_BOX_CLIP_VERTICES - 1);
        self.positions[slot] = position;
        self.ids[slot] = id;
        self.carriers[slot] = carrier;
        self.len += 1;
    }
}

/// A side plane of the reference face in the reference frame: `sign * p[axis] <= bound` inside
/// (`sign` ±1), so the distance is a coordinate (exactly) minus a half extent.
#[derive(Clone, Copy)]
struct SidePlane {
    axis: usize,
    sign: f32,
    bound: f32,
    /// Index of the side in the reference face loop.
    side: usize,
}

/// Appends to `manifold` the clipped face contact of boxes `a` and `b` (B posed at `b_in_a` in
/// A's frame) on the face axis `axis` of a SAT result: points in A's frame, depths in length
/// units (positive = overlapping), ids as [`clip_incident_face`] gives them; only points within
/// `margin` (length units) in front of the reference face, at most four, reduction ties within
/// `tie_tolerance` (length units). Appends nothing for an edge-pair axis or when the clip keeps
/// no point (the caller falls back on the hull routine).
///
/// [`clip_incident_face`]: crate::contact::clip::clip_incident_face
pub(crate) fn add_box_face_contact(
    a: &Cuboid,
    b: &Cuboid,
    b_in_a: &Isometry,
    axis: SatAxis,
    margin: f32,
    tie_tolerance: f32,
    manifold: &mut Manifold,
) {
    // 1. The reference frame; B's rotation in A's frame as a matrix, `rotation`.
    let rotation = Mat3::from_quat(b_in_a.rotation);
    let (reference, incident, face, kind, axes, centre) = match axis {
        SatAxis::FaceA(face) => (a, b, face, FeatureId::FACE_A, rotation, b_in_a.translation),
        SatAxis::FaceB(face) => {
            let inverse = rotation.transpose();
            (
                b,
                a,
                face,
                FeatureId::FACE_B,
                inverse,
                -(inverse * b_in_a.translation),
            )
        }
        SatAxis::EdgePair { .. } => return,
    };
    let face_axis = face as usize / 2;
    let sign = if face & 1 == 1 { 1.0 } else { -1.0 };
    let normal = Vec3A::AXES[face_axis] * sign;

    // 2. Incident face: faces 2k and 2k + 1 have dot products -l_k and l_k with the normal.
    let l = axes.row(face_axis) * sign;
    let dots = [-l.x, l.x, -l.y, l.y, -l.z, l.z];
    let best = -l.abs().max_element();
    let incident_face = dots
        .iter()
        .position(|&d| d <= best + INCIDENT_FACE_TOLERANCE)
        .unwrap_or(0);

    // 3. Its vertices, loop order.
    let h = incident.half_extents();
    let scaled = [
        Vec3A::from(axes.x_axis * h.x),
        Vec3A::from(axes.y_axis * h.y),
        Vec3A::from(axes.z_axis * h.z),
    ];
    let centre = Vec3A::from(centre);
    let mut polygon = BoxClipPolygon::EMPTY;
    for &v in incident.hull().face_loop(incident_face) {
        let corner = |k: usize| if v >> k & 1 == 1 { scaled[k] } else { -scaled[k] };
        polygon.push(
            centre + corner(0) + corner(1) + corner(2),
            FeatureId::new(kind, false, face, v),
            EdgeCarrier::Incident(v),
        );
    }

    // 4. The four side planes, reference loop order. A plane with every vertex behind it
    // (`±p_w - h_w <= 0`) leaves the polygon as it is and is skipped.
    let half = Vec3A::from(reference.half_extents());
    let reference_loop = reference.hull().face_loop(face as usize);
    let mut scratch = BoxClipPolygon::EMPTY;
    let (mut src, mut dst) = (&mut polygon, &mut scratch);
    for side in 0..reference_loop.len() {
        let (start, end) = (
            reference_loop[side],
            reference_loop[(side + 1) % reference_loop.len()],
        );
        let along = (start ^ end).trailing_zeros() as usize;
        let axis = 3 - face_axis - along;
        let outward = if start >> axis & 1 == 1 { 1.0 } else { -1.0 };
        let plane = SidePlane {
            axis,
            sign: outward,
            bound: half[axis],
            side,
        };
        if clip_by_side(src, dst, &plane, reference_loop, incident_face as u32, kind) {
            std::mem::swap(&mut src, &mut dst);
            if src.len == 0 {
                return;
            }
        }
    }
    let clipped = &*src;
    let positions = &clipped.positions[..clipped.len];

    // 5. Points within the margin, at most four.
    let offset = half[face_axis];
    let mut separations = [0.0; MAX_BOX_CLIP_VERTICES];
    let mut within = 0u32;
    for (i, (s, p)) in separations.iter_mut().zip(positions).enumerate() {
        *s = normal.dot(*p) - offset;
        within |= ((*s <= margin) as u32) << i;
    }
    let mut kept = [0; MAX_MANIFOLD_POINTS];
    let count = if within.count_ones() as usize <= MAX_MANIFOLD_POINTS {
        let mut count = 0;
        for i in Bits(within) {
            kept[count & (MAX_MANIFOLD_POINTS - 1)] = i;
            count += 1;
        }
        count
    } else {
        reduce_box_points(
            positions,
            &separations,
            within,
            (face_axis, sign),
            tie_tolerance,
            &mut kept,
        )
    };

    // 6. Midway points, back to A's frame.
    for &i in &kept[..count] {
        let midway = Vec3::from(positions[i] - normal * (0.5 * separations[i]));
        let position = match kind {
            FeatureId::FACE_A => midway,
            _ => rotation * midway + b_in_a.translation,
        };
        manifold.push(ContactPoint {
            position: position.as_dvec3(),
            depth: -separations[i],
            id: clipped.ids[i],
        });
    }
}

/// One Sutherland–Hodgman pass: keeps the part of `src` behind `plane` (distance `<= 0`), into
/// `dst`, as `clip_incident_face`'s pass does; returns `false`, writing nothing, when every
/// vertex is behind the plane (the pass would copy `src` unchanged, ids and order included).
fn clip_by_side(
    src: &BoxClipPolygon,
    dst: &mut BoxClipPolygon,
    plane: &SidePlane,
    reference_loop: &[u32],
    incident_face: u32,
    kind: u32,
) -> bool {
    let n = src.len;
    let mut distances = [0.0; MAX_BOX_CLIP_VERTICES];
    let mut cuts = false;
    let coordinate = |p: &Vec3A| match plane.axis {
        0 => p.x,
        1 => p.y,
        _ => p.z,
    };
    for (d, p) in distances.iter_mut().zip(&src.positions[..n]) {
        *d = plane.sign * coordinate(p) - plane.bound;
        cuts |= *d > 0.0;
    }
    if !cuts {
        return false;
    }
    // The length in a local and indices masked to the buffer (at most 4 + 4 vertices, see
    // MAX_BOX_CLIP_VERTICES), so the pushes need no bounds checks nor reloads.
    let mut len = 0;
    let mut push = |position: Vec3A, id: FeatureId, carrier: EdgeCarrier| {
        let slot = len & (MAX_BOX_CLIP_VERTICES - 1);
        dst.positions[slot] = position;
        dst.ids[slot] = id;
        dst.carriers[slot] = carrier;
        len += 1;
    };
    for k in 0..n {
        let next = if k + 1 == n { 0 } else { k + 1 };
        let (d_cur, d_next) = (distances[k], distances[next]);
        let carrier = src.carriers[k];
        let cur_inside = d_cur <= 0.0;
        if cur_inside {
            push(src.positions[k], src.ids[k], carrier);
        }
        if cur_inside != (d_next <= 0.0) {
            let t = d_cur / (d_cur - d_next);
            let id = crossing_id(carrier, plane.side, reference_loop, incident_face, kind);
            // Leaving: the new edge runs along this side plane; entering: along cur's edge.
            let outgoing = if cur_inside {
                EdgeCarrier::Side(plane.side as u32)
            } else {
                carrier
            };
            push(src.positions[k].lerp(src.positions[next], t), id, outgoing);
        }
    }
    dst.len = len;
    true
}

/// [`reduce_to_four`](crate::contact::clip::reduce_to_four)'s picks, step for step and with its
/// formulas, for the at most eight points of a box clip: `positions` in the reference frame,
/// `separations` their distances in front of the reference face (length units), `within` a bit
/// mask of the candidates (more than four), the reference normal `sign * e_face_axis`: the
/// deepest (of equally deep ones the farthest from their mean), the farthest from it, the
/// largest triangle, the largest quadrilateral; near-ties (`tolerance`, length units) to the
/// lowest index. Writes the kept indices to `kept`, ascending (a pick may repeat when every
/// candidate lies within the tolerance of another, as in the generic routine), and returns
/// their count. The generic routine reads its candidates through closures (about 4k
/// instructions per call here); this one reads lanes.
fn reduce_box_points(
    positions: &[Vec3A],
    separations: &[f32; MAX_BOX_CLIP_VERTICES],
    within: u32,
    (face_axis, sign): (usize, f32),
    tolerance: f32,
    kept: &mut [usize; MAX_MANIFOLD_POINTS],
) -> usize {
    // In-plane coordinates (u, v) = (p_a+1, p_a+2): the formulas' `v - n (n · v)` zeroes
    // coordinate `a` exactly, so lengths are the same; `n · (x × y)` is `±(x_u y_v - x_v y_u)`.
    // Candidates in lanes, four at a time (lanes past the polygon are never candidates); each
    // lane rounds as the scalar formula does.
    let (iu, iv) = ((face_axis + 1) % 3, (face_axis + 2) % 3);
    let mut coordinates = [[0.0; MAX_BOX_CLIP_VERTICES]; 2];
    for (i, p) in positions.iter().enumerate() {
        coordinates[0][i] = p[iu];
        coordinates[1][i] = p[iv];
    }
    let lanes = |c: &[f32; MAX_BOX_CLIP_VERTICES]| [Vec4::from_slice(&c[..4]), Vec4::from_slice(&c[4..])];
    let (u, v) = (lanes(&coordinates[0]), lanes(&coordinates[1]));
    let point = |i: usize| Vec2::new(coordinates[0][i], coordinates[1][i]);
    // Distances in the plane from `q`, every lane.
    let distances = |q: Vec2| {
        [0, 1].map(|h| {
            let (du, dv) = (u[h] - Vec4::splat(q.x), v[h] - Vec4::splat(q.y));
            (du * du + dv * dv).sqrt()
        })
    };
    // Twice the signed area of triangles (x, y, lane) projected on the plane, counter-clockwise
    // positive: `sign * perp_dot(y - x, lane - x)`.
    let areas = |x: usize, y: usize| {
        let (px, e) = (point(x), point(y) - point(x));
        [0, 1].map(|h| {
            let (du, dv) = (u[h] - Vec4::splat(px.x), v[h] - Vec4::splat(px.y));
            Vec4::splat(sign) * (Vec4::splat(e.x) * dv - Vec4::splat(e.y) * du)
        })
    };
    let signed_area =
        |x: usize, y: usize, p: usize| sign * (point(y) - point(x)).perp_dot(point(p) - point(x));
    // 1. Deepest point; of (nearly) equally deep ones, the farthest from their mean.
    let deepest = Bits(within).map(|i| separations[i]).fold(f32::INFINITY, f32::min);
    let mut is_deepest = 0u32;
    let mut sum = Vec2::ZERO;
    for i in Bits(within) {
        if separations[i] <= deepest + tolerance {
            is_deepest |= 1 << i;
            sum += point(i);
        }
    }
    let mean = sum / is_deepest.count_ones() as f32;
    let first = pick(is_deepest, distances(mean), tolerance);
    // 2. Farthest from it, measured in the plane.
    let second = pick(within, distances(point(first)), tolerance);
    // 3. Largest triangle with those two; the tolerance is a height, the score base × height.
    let base = (point(second) - point(first)).length();
    let third = pick(within, areas(first, second).map(Vec4::abs), tolerance * base);
    // 4. Most area added outside the (counter-clockwise) triangle: the largest quadrilateral.
    let triangle = if signed_area(first, second, third) >= 0.0 {
        [first, second, third]
    } else {
        [first, third, second]
    };
    let mut added = [Vec4::ZERO; 2];
    for e in 0..3 {
        let outside = areas(triangle[e], triangle[(e + 1) % 3]);
        for h in 0..2 {
            added[h] = added[h].max(-outside[h]);
        }
    }
    let fourth = pick(within, added, tolerance * base);
    kept[..3].copy_from_slice(&triangle);
    let count = if added[fourth / 4][fourth % 4] > 0.0 {
        kept[3] = fourth;
        4
    } else {
        3
    };
    kept[..count].sort_unstable();
    count
}

/// The first candidate (lowest index) of `mask` whose score (lane `i % 4` of `scores[i / 4]`)
/// is within `tolerance` of the best candidate's (`reduce_to_four`'s pick).
#[inline]
fn pick(mask: u32, scores: [Vec4; 2], tolerance: f32) -> usize {
    let lane_mask = |bits: u32| BVec4A::new(bits & 1 != 0, bits & 2 != 0, bits & 4 != 0, bits & 8 != 0);
    let candidates = [lane_mask(mask), lane_mask(mask >> 4)];
    let masked = [0, 1].map(|h| Vec4::select(candidates[h], scores[h], Vec4::NEG_INFINITY));
    let best = masked[0].max(masked[1]).max_element();
    let threshold = Vec4::splat(best - tolerance);
    let passing = masked[0].cmpge(threshold).bitmask() | masked[1].cmpge(threshold).bitmask() << 4;
    match passing & mask {
        0 => 0,
        bits => bits.trailing_zeros() as usize,
    }
}

/// The set bits of a mask, lowest first: indices into the clip buffers (below
/// [`MAX_BOX_CLIP_VERTICES`]).
#[derive(Clone, Copy)]
struct Bits(u32);

impl Iterator for Bits {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        (self.0 != 0).then(|| {
            let i = self.0.trailing_zeros() as usize;
            self.0 &= self.0 - 1;
            i & (MAX_BOX_CLIP_VERTICES - 1)
        })
    }
}

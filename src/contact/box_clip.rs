//! Face contact of two boxes in closed form: the hull routine's clip and point selection
//! (`hull_hull.rs` steps 2 and 3, [`clip_incident_face`](crate::contact::clip::clip_incident_face)
//! and [`reduce_to_four`]) for a box face axis, computed in the reference box's frame, where the
//! reference face is an axis-aligned rectangle and every side plane test is one coordinate
//! compare. The same points in the same order with the same feature ids, positions and depths
//! within rounding (a few ulps of the pair's scale; exact ties aside, see `tests/box_box.rs`).
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
//!    [`crossing_id`]).
//! 5. Keep the points within the margin in front of the reference plane (`±p_a − h_a`); of more
//!    than four, [`reduce_to_four`]'s picks. Each point midway between the incident point and its
//!    projection on the reference plane, depth = −(its distance in front of the plane).
//! 6. Back to A's frame (`R p + t` for B's reference face, `R` and `t` B's pose in A's frame).
//!
//! [`ConvexHull::cuboid`]: crate::hull::ConvexHull::cuboid

use glam::{Mat3, Vec3};

use crate::constants::INCIDENT_FACE_TOLERANCE;
use crate::contact::clip::{EdgeCarrier, crossing_id, reduce_to_four};
use crate::manifold::{ContactPoint, FeatureId, MAX_MANIFOLD_POINTS, Manifold};
use crate::pose::Isometry;
use crate::query::sat::SatAxis;
use crate::shape::Cuboid;

/// Most vertices of a quad clipped by four planes (each plane adds at most one).
const MAX_BOX_CLIP_VERTICES: usize = 8;

/// A convex polygon being clipped (reference frame), with what made each vertex and what the
/// edge leaving it lies on.
#[derive(Clone, Copy)]
struct BoxClipPolygon {
    positions: [Vec3; MAX_BOX_CLIP_VERTICES],
    ids: [FeatureId; MAX_BOX_CLIP_VERTICES],
    carriers: [EdgeCarrier; MAX_BOX_CLIP_VERTICES],
    len: usize,
}

impl BoxClipPolygon {
    const EMPTY: BoxClipPolygon = BoxClipPolygon {
        positions: [Vec3::ZERO; MAX_BOX_CLIP_VERTICES],
        ids: [FeatureId(0); MAX_BOX_CLIP_VERTICES],
        carriers: [EdgeCarrier::Incident(0); MAX_BOX_CLIP_VERTICES],
        len: 0,
    };

    // Capacity holds by construction: 4 + 4 vertices at most.
    #[inline]
    fn push(&mut self, position: Vec3, id: FeatureId, carrier: EdgeCarrier) {
        self.positions[self.len] = position;
        self.ids[self.len] = id;
        self.carriers[self.len] = carrier;
        self.len += 1;
    }
}

/// A side plane of the reference face in the reference frame: `sign * p[axis] <= bound` inside.
#[derive(Clone, Copy)]
struct SidePlane {
    axis: usize,
    positive: bool,
    bound: f32,
    /// Index of the side in the reference face loop.
    side: usize,
}

impl SidePlane {
    /// Signed distance of `p` beyond the plane (length units; positive outside the face).
    #[inline]
    fn distance(&self, p: Vec3) -> f32 {
        if self.positive {
            p[self.axis] - self.bound
        } else {
            -p[self.axis] - self.bound
        }
    }
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
    let positive = face & 1 == 1;
    let normal = if positive {
        Vec3::AXES[face_axis]
    } else {
        -Vec3::AXES[face_axis]
    };

    // 2. Incident face: faces 2k and 2k + 1 have dot products -l_k and l_k with the normal.
    let l = axes.row(face_axis) * if positive { 1.0 } else { -1.0 };
    let dots = [-l.x, l.x, -l.y, l.y, -l.z, l.z];
    let best = dots.iter().copied().fold(f32::INFINITY, f32::min);
    let incident_face = dots
        .iter()
        .position(|&d| d <= best + INCIDENT_FACE_TOLERANCE)
        .unwrap_or(0);

    // 3. Its vertices, loop order.
    let h = incident.half_extents();
    let scaled = [axes.x_axis * h.x, axes.y_axis * h.y, axes.z_axis * h.z];
    let mut polygon = BoxClipPolygon::EMPTY;
    for &v in incident.hull().face_loop(incident_face) {
        let corner = |k: usize| {
            if v >> k & 1 == 1 { scaled[k] } else { -scaled[k] }
        };
        let position = centre + corner(0) + corner(1) + corner(2);
        polygon.push(
            position,
            FeatureId::new(kind, false, face, v),
            EdgeCarrier::Incident(v),
        );
    }

    // 4. The four side planes, reference loop order.
    let reference_loop = reference.hull().face_loop(face as usize);
    let half = reference.half_extents();
    let mut scratch = BoxClipPolygon::EMPTY;
    let (mut src, mut dst) = (&mut polygon, &mut scratch);
    for side in 0..reference_loop.len() {
        let (start, end) = (
            reference_loop[side],
            reference_loop[(side + 1) % reference_loop.len()],
        );
        let along = (start ^ end).trailing_zeros() as usize;
        let axis = 3 - face_axis - along;
        let plane = SidePlane {
            axis,
            positive: start >> axis & 1 == 1,
            bound: half[axis],
            side,
        };
        clip_by_side(src, dst, &plane, reference_loop, incident_face as u32, kind);
        std::mem::swap(&mut src, &mut dst);
        if src.len == 0 {
            return;
        }
    }
    let clipped = src;

    // 5. Points within the margin, at most four.
    let offset = half[face_axis];
    let separation = |p: Vec3| {
        if positive {
            p[face_axis] - offset
        } else {
            -p[face_axis] - offset
        }
    };
    let mut separations = [0.0; MAX_BOX_CLIP_VERTICES];
    let mut within = 0;
    for (s, &p) in separations.iter_mut().zip(&clipped.positions[..clipped.len]) {
        *s = separation(p);
        within += (*s <= margin) as usize;
    }
    let mut kept = [0; MAX_BOX_CLIP_VERTICES];
    let kept = if within <= MAX_MANIFOLD_POINTS {
        let mut count = 0;
        for (i, &s) in separations[..clipped.len].iter().enumerate() {
            kept[count] = i;
            count += (s <= margin) as usize;
        }
        &kept[..count]
    } else {
        let candidate =
            |i: usize| (separations[i] <= margin).then_some((clipped.positions[i], separations[i]));
        let picks = reduce_to_four(clipped.len, candidate, normal, tie_tolerance);
        let count = picks.indices().len();
        kept[..count].copy_from_slice(picks.indices());
        &kept[..count]
    };

    // 6. Midway points, back to A's frame.
    for &i in kept {
        let midway = clipped.positions[i] - normal * (0.5 * separations[i]);
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
/// `dst`, as `clip_incident_face`'s pass does.
fn clip_by_side(
    src: &BoxClipPolygon,
    dst: &mut BoxClipPolygon,
    plane: &SidePlane,
    reference_loop: &[u32],
    incident_face: u32,
    kind: u32,
) {
    dst.len = 0;
    let n = src.len;
    let d_first = plane.distance(src.positions[0]);
    let mut d_cur = d_first;
    for k in 0..n {
        let next = if k + 1 == n { 0 } else { k + 1 };
        let (cur, carrier) = (src.positions[k], src.carriers[k]);
        let d_next = if next == 0 {
            d_first
        } else {
            plane.distance(src.positions[next])
        };
        let cur_inside = d_cur <= 0.0;
        if cur_inside {
            dst.push(cur, src.ids[k], carrier);
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
            dst.push(cur.lerp(src.positions[next], t), id, outgoing);
        }
        d_cur = d_next;
    }
}

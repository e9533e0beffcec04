//! Face contact of two boxes: the hull routine's clip and point selection
//! ([`clip_incident_face`](crate::contact::clip::clip_incident_face), then
//! [`reduce_to_four`](crate::contact::clip::reduce_to_four)) for a box face axis, bit for bit, in
//! A's frame, without the generic routine's buffers, face-loop walks and closures.
//!
//! 1. The reference face in A's frame ([`PosedFace`]); the incident box's pose in A's frame.
//! 2. Incident face: the most anti-parallel box face (normals `∓e_k`), ties within
//!    [`INCIDENT_FACE_TOLERANCE`] to the lowest index.
//! 3. Its four vertices in the hull's loop order, moved to A's frame as the hull routine does.
//! 4. Sutherland–Hodgman against the four side planes ([`crossing_id`]), skipping uncut passes.
//! 5. Points within the margin; of more than four, `reduce_to_four`'s ([`reduce_box_points`]).
//! 6. Each point midway to the reference plane, depth = −(its distance in front of the plane).
//!
//! Details: docs/design/contacts.md.

use glam::{BVec4A, Vec3, Vec4};

use crate::constants::INCIDENT_FACE_TOLERANCE;
use crate::contact::clip::{EdgeCarrier, PosedFace, crossing_id, dedup_sorted};
use crate::manifold::{ContactPoint, FeatureId, MAX_MANIFOLD_POINTS, Manifold};
use crate::pose::Isometry;
use crate::query::sat::SatAxis;
use crate::shape::Cuboid;

/// Most vertices of a quad clipped by four planes (each plane adds at most one).
const MAX_BOX_CLIP_VERTICES: usize = 8;
const _: () = assert!(MAX_BOX_CLIP_VERTICES.is_power_of_two());

/// A convex polygon being clipped (A's frame), with what made each vertex and what the edge
/// leaving it lies on.
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
        let slot = self.len & (MAX_BOX_CLIP_VERTICES - 1);
        self.positions[slot] = position;
        self.ids[slot] = id;
        self.carriers[slot] = carrier;
        self.len += 1;
    }
}

/// A side plane of the reference face in A's frame, as `clip_incident_face` forms it:
/// `normal · p - offset <= 0` inside (`normal` unnormalized).
#[derive(Clone, Copy)]
struct SidePlane {
    normal: Vec3,
    offset: f32,
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
    // 1. The reference face and the incident box, posed in A's frame.
    let (reference, incident, incident_pose, kind) = match axis {
        SatAxis::FaceA(face) => {
            let reference = PosedFace {
                hull: a.hull(),
                pose: Isometry::IDENTITY,
                face: face as usize,
            };
            (reference, b, *b_in_a, FeatureId::FACE_A)
        }
        SatAxis::FaceB(face) => {
            let reference = PosedFace {
                hull: b.hull(),
                pose: *b_in_a,
                face: face as usize,
            };
            (reference, a, Isometry::IDENTITY, FeatureId::FACE_B)
        }
        SatAxis::EdgePair { .. } => return,
    };
    let plane = reference.plane();
    let face = reference.face as u32;

    // 2. Incident face: faces 2k and 2k + 1 (normals -e_k, e_k) have dot products -l_k and
    // l_k with the normal, `l` the normal in the incident box's frame.
    let l = incident_pose.inverse_transform_vector(plane.normal);
    // The smallest of the six is -max |l_k| exactly (negation is exact).
    let dots = [-l.x, l.x, -l.y, l.y, -l.z, l.z];
    let within = -l.abs().max_element() + INCIDENT_FACE_TOLERANCE;
    let mut incident_face = 0;
    while incident_face < 5 && dots[incident_face] > within {
        incident_face += 1;
    }

    // 3. Its vertices, loop order, in A's frame (A's own exactly: the identity moves nothing).
    let incident_vertices = incident.hull().vertices();
    let mut polygon = BoxClipPolygon::EMPTY;
    for &v in incident.hull().face_loop(incident_face) {
        let vertex = incident_vertices[v as usize];
        let position = match kind {
            FeatureId::FACE_A => incident_pose.transform_point(vertex),
            _ => vertex,
        };
        polygon.push(
            position,
            FeatureId::new(kind, false, face, v),
            EdgeCarrier::Incident(v),
        );
    }

    // 4. The four side planes, reference loop order: `(end - start) × normal` through `start`.
    // A plane with every vertex behind it leaves the polygon as it is and is skipped.
    let reference_loop = reference.hull.face_loop(reference.face);
    let reference_vertices = reference.hull.vertices();
    let corner = |i: usize| {
        let i = if i == reference_loop.len() { 0 } else { i };
        let vertex = reference_vertices[reference_loop[i] as usize];
        match kind {
            FeatureId::FACE_A => vertex,
            _ => b_in_a.transform_point(vertex),
        }
    };
    let mut scratch = BoxClipPolygon::EMPTY;
    let (mut src, mut dst) = (&mut polygon, &mut scratch);
    let mut start = corner(0);
    for side in 0..reference_loop.len() {
        let end = corner(side + 1);
        let normal = (end - start).cross(plane.normal);
        let side_plane = SidePlane {
            normal,
            offset: normal.dot(start),
            side,
        };
        start = end;
        if clip_by_side(src, dst, &side_plane, reference_loop, incident_face as u32, kind) {
            std::mem::swap(&mut src, &mut dst);
            if src.len == 0 {
                return;
            }
        }
    }
    let clipped = &*src;
    let positions = &clipped.positions[..clipped.len];

    // 5. Points within the margin, at most four.
    let mut separations = [0.0; MAX_BOX_CLIP_VERTICES];
    let mut within = 0u32;
    for (i, (s, p)) in separations.iter_mut().zip(positions).enumerate() {
        *s = plane.signed_distance(*p);
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
            plane.normal,
            tie_tolerance,
            &mut kept,
        )
    };

    // 6. Midway points.
    for &i in &kept[..count] {
        manifold.push(ContactPoint {
            position: (positions[i] - plane.normal * (0.5 * separations[i])).as_dvec3(),
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
    for (d, p) in distances.iter_mut().zip(&src.positions[..n]) {
        *d = plane.normal.dot(*p) - plane.offset;
        cuts |= *d > 0.0;
    }
    if !cuts {
        return false;
    }
    // The length in a local and indices masked to the buffer (at most 4 + 4 vertices, see
    // MAX_BOX_CLIP_VERTICES), so the pushes need no bounds checks nor reloads.
    let mut len = 0;
    let mut push = |position: Vec3, id: FeatureId, carrier: EdgeCarrier| {
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
/// formulas rounded alike, for the at most eight points of a box clip: `positions` in A's
/// frame, `separations` their distances in front of the reference face (length units),
/// `within` a bit mask of the candidates (more than four), `normal` the reference normal: the
/// deepest (of equally deep ones the farthest from their mean), the farthest from it, the
/// largest triangle, the largest quadrilateral; near-ties (`tolerance`, length units) to the
/// lowest index. Writes the kept indices to `kept`, ascending and each once (a pick that
/// repeats an earlier one is dropped, as in the generic routine), and returns their count. Four
/// candidates are scored at a time in lanes, each lane rounding as the scalar formula does.
fn reduce_box_points(
    positions: &[Vec3],
    separations: &[f32; MAX_BOX_CLIP_VERTICES],
    within: u32,
    normal: Vec3,
    tolerance: f32,
    kept: &mut [usize; MAX_MANIFOLD_POINTS],
) -> usize {
    let mut coordinates = [[0.0; MAX_BOX_CLIP_VERTICES]; 3];
    for (i, p) in positions.iter().enumerate() {
        coordinates[0][i] = p.x;
        coordinates[1][i] = p.y;
        coordinates[2][i] = p.z;
    }
    let lanes = |k: usize| {
        [
            Vec4::from_slice(&coordinates[k][..4]),
            Vec4::from_slice(&coordinates[k][4..]),
        ]
    };
    let (x, y, z) = (lanes(0), lanes(1), lanes(2));
    let (nx, ny, nz) = (
        Vec4::splat(normal.x),
        Vec4::splat(normal.y),
        Vec4::splat(normal.z),
    );
    let in_plane = |v: Vec3| v - normal * normal.dot(v);
    // `in_plane(lane - q).length()`, every lane.
    let distances = |q: Vec3| {
        [0, 1].map(|h| {
            let (dx, dy, dz) = (
                x[h] - Vec4::splat(q.x),
                y[h] - Vec4::splat(q.y),
                z[h] - Vec4::splat(q.z),
            );
            let along = (nx * dx + ny * dy) + nz * dz;
            let (rx, ry, rz) = (dx - nx * along, dy - ny * along, dz - nz * along);
            ((rx * rx + ry * ry) + rz * rz).sqrt()
        })
    };
    // Twice the signed area of triangles (p, q, lane) projected on the plane, counter-clockwise
    // positive: `normal · ((q - p) × (lane - p))`, every lane.
    let areas = |p: usize, q: usize| {
        let (o, e) = (positions[p], positions[q] - positions[p]);
        let (ex, ey, ez) = (Vec4::splat(e.x), Vec4::splat(e.y), Vec4::splat(e.z));
        [0, 1].map(|h| {
            let (dx, dy, dz) = (
                x[h] - Vec4::splat(o.x),
                y[h] - Vec4::splat(o.y),
                z[h] - Vec4::splat(o.z),
            );
            let (cx, cy, cz) = (ey * dz - dy * ez, ez * dx - dz * ex, ex * dy - dx * ey);
            (nx * cx + ny * cy) + nz * cz
        })
    };
    let signed_area = |p: usize, q: usize, r: usize| {
        normal.dot((positions[q] - positions[p]).cross(positions[r] - positions[p]))
    };
    // 1. Deepest point; of (nearly) equally deep ones, the farthest from their mean.
    let deepest = Bits(within).map(|i| separations[i]).fold(f32::INFINITY, f32::min);
    let mut is_deepest = 0u32;
    let mut sum = Vec3::ZERO;
    for i in Bits(within) {
        if separations[i] <= deepest + tolerance {
            is_deepest |= 1 << i;
            sum += positions[i];
        }
    }
    let mean = sum / is_deepest.count_ones() as f32;
    let first = pick(is_deepest, distances(mean), tolerance);
    // 2. Farthest from it, measured in the plane.
    let second = pick(within, distances(positions[first]), tolerance);
    // 3. Largest triangle with those two; the tolerance is a height, the score base × height.
    let base = in_plane(positions[second] - positions[first]).length();
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
    dedup_sorted(&mut kept[..count])
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

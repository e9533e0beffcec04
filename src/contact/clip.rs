//! Face clipping (Sutherland–Hodgman) and reduction of a contact polygon to at most 4 points.
//!
//! 1. [`clip_incident_face`]: the incident face is clipped by the reference face's side planes
//!    (a reference edge and the reference normal each), in a working frame the caller chooses;
//!    every output vertex carries the [`FeatureId`] of the features that made it.
//! 2. [`reduce_contact_points`]: drop points beyond the margin; of more than four keep the
//!    deepest, the farthest from it, the largest triangle, the largest quadrilateral, near-ties to
//!    the lowest index, a repeated pick once.
//!
//! No batches, no GPU; every buffer is a fixed-size stack array ([`ClipPolygon::fits`]).
//! WGSL twin: `shaders/narrowphase/clip.wgsl`. Details: docs/design/contacts.md.

use glam::Vec3;

use crate::hull::{ConvexHull, MAX_FACE_VERTICES, Plane};
use crate::manifold::{FeatureId, MAX_MANIFOLD_POINTS};
use crate::pose::Isometry;

/// Most vertices of a clipped polygon: clipping a convex n-gon by m planes leaves at most
/// n + m, and both faces have at most [`MAX_FACE_VERTICES`].
pub const MAX_CLIP_VERTICES: usize = 2 * MAX_FACE_VERTICES;

/// One face of a hull, placed in the caller's working frame.
#[derive(Clone, Copy, Debug)]
pub struct PosedFace<'a> {
    /// The hull holding the face.
    pub hull: &'a ConvexHull,
    /// The hull's pose in the working frame.
    pub pose: Isometry,
    /// Face index on `hull`.
    pub face: usize,
}

impl PosedFace<'_> {
    /// The face's outward plane in the working frame.
    pub fn plane(&self) -> Plane {
        let plane = self.hull.planes()[self.face];
        let normal = self.pose.rotation * plane.normal;
        Plane {
            normal,
            offset: plane.offset + normal.dot(self.pose.translation),
        }
    }
}

/// A vertex of the clipped polygon: working-frame position and the features that made it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ClipVertex {
    /// Position in the working frame (on the incident face).
    pub position: Vec3,
    /// Feature id; see [`clip_incident_face`] for the cases.
    pub id: FeatureId,
}

/// What the polygon edge leaving a vertex lies on; names the point where a side plane cuts it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum EdgeCarrier {
    /// An incident edge, by its start vertex index on the incident hull.
    Incident(u32),
    /// A reference side plane, by its side index in the reference loop (u32 keeps the
    /// polygon buffers small).
    Side(u32),
}

/// A clipped contact polygon (convex, in the incident face's winding), at most `N` vertices,
/// stored on the stack. `N` = [`MAX_CLIP_VERTICES`] holds any clip; a small `N` (see
/// [`ClipPolygon::fits`]) saves initializing kilobytes of buffer per pair for small faces.
#[derive(Clone, Debug)]
pub struct ClipPolygon<const N: usize = MAX_CLIP_VERTICES> {
    vertices: [ClipVertex; N],
    carriers: [EdgeCarrier; N],
    len: usize,
}

impl<const N: usize> Default for ClipPolygon<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> ClipPolygon<N> {
    /// An empty polygon.
    pub fn new() -> Self {
        ClipPolygon {
            vertices: [ClipVertex::default(); N],
            // Slots past `len` are never read.
            carriers: [EdgeCarrier::Incident(0); N],
            len: 0,
        }
    }

    /// True when clipping `incident` by the side planes of `reference` fits in `N` vertices
    /// (at most the sum of the two faces' vertex counts).
    pub fn fits(reference: &PosedFace, incident: &PosedFace) -> bool {
        reference.hull.face_loop(reference.face).len() + incident.hull.face_loop(incident.face).len() <= N
    }

    /// The vertices in polygon order.
    pub fn vertices(&self) -> &[ClipVertex] {
        &self.vertices[..self.len]
    }

    /// Empties the polygon.
    pub(crate) fn clear(&mut self) {
        self.len = 0;
    }

    // Capacity holds by construction: n + m vertices at most (see MAX_CLIP_VERTICES).
    #[inline]
    pub(crate) fn push(&mut self, vertex: ClipVertex, carrier: EdgeCarrier) {
        self.vertices[self.len] = vertex;
        self.carriers[self.len] = carrier;
        self.len += 1;
    }

    fn copy_from(&mut self, other: &ClipPolygon<N>) {
        self.vertices[..other.len].copy_from_slice(&other.vertices[..other.len]);
        self.carriers[..other.len].copy_from_slice(&other.carriers[..other.len]);
        self.len = other.len;
    }
}

/// Clips face `incident` by the side planes of face `reference` (both posed in one working
/// frame) and writes the polygon, working-frame positions, into `out`, which must have room
/// ([`ClipPolygon::fits`]; `N` = [`MAX_CLIP_VERTICES`] always does). Points are not yet
/// filtered by depth. `kind` is [`FeatureId::FACE_A`] or [`FeatureId::FACE_B`]: which body
/// holds the reference face. Ids:
/// - an incident vertex kept: `(kind, 0, reference face, incident vertex)`;
/// - an incident edge cut by a side plane: `(kind, 1, side edge start vertex, incident edge start
///   vertex)`;
/// - a reference corner inside the incident face (two side planes meet): `(other kind, 0,
///   incident face, reference vertex)`, the id the same point gets with the roles swapped.
pub fn clip_incident_face<const N: usize>(
    reference: &PosedFace,
    incident: &PosedFace,
    kind: u32,
    out: &mut ClipPolygon<N>,
) {
    let incident_vertices = incident.hull.vertices();
    out.len = 0;
    for &v in incident.hull.face_loop(incident.face) {
        let vertex = ClipVertex {
            position: incident.pose.transform_point(incident_vertices[v as usize]),
            id: FeatureId::new(kind, false, reference.face as u32, v),
        };
        out.push(vertex, EdgeCarrier::Incident(v));
    }
    let reference_loop = reference.hull.face_loop(reference.face);
    let reference_vertices = reference.hull.vertices();
    let side_polygon = ReferencePolygon {
        normal: reference.pose.rotation * reference.hull.planes()[reference.face].normal,
        loop_ids: reference_loop,
        corner: |i: usize| {
            reference
                .pose
                .transform_point(reference_vertices[reference_loop[i] as usize])
        },
    };
    clip_by_reference_sides(&side_polygon, incident.face as u32, kind, out);
}

/// A reference face for [`clip_by_reference_sides`]: its unit outward normal and its corners
/// (counter-clockwise about the normal) in the working frame, each named by `loop_ids`.
pub(crate) struct ReferencePolygon<'a, F: Fn(usize) -> Vec3> {
    /// Unit outward normal, working frame.
    pub normal: Vec3,
    /// The id of each corner (a vertex index on its shape), in loop order.
    pub loop_ids: &'a [u32],
    /// Corner `i`'s position, working frame.
    pub corner: F,
}

/// Clips the polygon in `out` (its vertices and carriers, as [`clip_incident_face`] starts it)
/// by the side planes of `reference`, in place; ids as [`clip_incident_face`] documents, with
/// `incident_face` naming the incident face in corner ids.
pub(crate) fn clip_by_reference_sides<const N: usize, F: Fn(usize) -> Vec3>(
    reference: &ReferencePolygon<F>,
    incident_face: u32,
    kind: u32,
    out: &mut ClipPolygon<N>,
) {
    let reference_loop = reference.loop_ids;
    let normal = reference.normal;
    let mut scratch = ClipPolygon::<N>::new();
    let (mut src, mut dst) = (out, &mut scratch);
    let mut result_in_scratch = false;
    // Each reference vertex moved once: a side's end is the next side's start.
    let corner = &reference.corner;
    let first = corner(0);
    let mut start = first;
    for side in 0..reference_loop.len() {
        let end = if side + 1 == reference_loop.len() {
            first
        } else {
            corner(side + 1)
        };
        // Points out of the face polygon across this edge: (edge × normal) for a CCW loop.
        let side_normal = (end - start).cross(normal);
        let side_plane = SidePlane {
            normal: side_normal,
            offset: side_normal.dot(start),
            side,
        };
        clip_by_side_plane(src, dst, &side_plane, reference_loop, incident_face, kind);
        start = end;
        std::mem::swap(&mut src, &mut dst);
        result_in_scratch = !result_in_scratch;
        if src.len == 0 {
            break;
        }
    }
    if result_in_scratch {
        // `dst` is `out` here, `src` the scratch holding the result.
        dst.copy_from(src);
    }
}

/// A side plane of the reference face (unnormalized normal: only signs and ratios are used).
struct SidePlane {
    normal: Vec3,
    offset: f32,
    side: usize,
}

/// One Sutherland–Hodgman pass: keeps the part of `src` behind `plane`, into `dst`.
fn clip_by_side_plane<const N: usize>(
    src: &ClipPolygon<N>,
    dst: &mut ClipPolygon<N>,
    plane: &SidePlane,
    reference_loop: &[u32],
    incident_face: u32,
    kind: u32,
) {
    dst.len = 0;
    let n = src.len;
    if n == 0 {
        return;
    }
    let distance = |k: usize| plane.normal.dot(src.vertices[k].position) - plane.offset;
    // Each vertex's distance once: a vertex's `next` is the following one's `cur`.
    let d_first = distance(0);
    let mut d_cur = d_first;
    for k in 0..n {
        let (cur, next) = (src.vertices[k], src.vertices[(k + 1) % n]);
        let carrier = src.carriers[k];
        let d_next = if k + 1 == n { d_first } else { distance(k + 1) };
        let cur_inside = d_cur <= 0.0;
        if cur_inside {
            dst.push(cur, carrier);
        }
        if cur_inside != (d_next <= 0.0) {
            let t = d_cur / (d_cur - d_next);
            let crossing = ClipVertex {
                position: cur.position.lerp(next.position, t),
                id: crossing_id(carrier, plane.side, reference_loop, incident_face, kind),
            };
            // Leaving: the new edge runs along this side plane; entering: along cur's edge.
            let outgoing = if cur_inside {
                EdgeCarrier::Side(plane.side as u32)
            } else {
                carrier
            };
            dst.push(crossing, outgoing);
        }
        d_cur = d_next;
    }
}

/// Id of the point where side plane `side` cuts a polygon edge lying on `carrier`.
pub(crate) fn crossing_id(
    carrier: EdgeCarrier,
    side: usize,
    reference_loop: &[u32],
    incident_face: u32,
    kind: u32,
) -> FeatureId {
    match carrier {
        EdgeCarrier::Incident(edge_start) => FeatureId::new(kind, true, reference_loop[side], edge_start),
        EdgeCarrier::Side(other) => {
            let other = other as usize;
            // Two side planes meet at their shared reference vertex (adjacent sides; a cut by a
            // non-adjacent side is always clipped away later, so its id never survives).
            let n = reference_loop.len();
            let corner = if (other + 1) % n == side {
                reference_loop[side]
            } else {
                reference_loop[other]
            };
            FeatureId::new(kind ^ 1, false, incident_face, corner)
        }
    }
}

/// The parameter range `[t_min, t_max]` of `segment` inside the side planes of a convex face
/// with `count` corners (`corner(k)`, counter-clockwise about the unit `normal`, same frame),
/// each plane pushed out by `slack` (length units), or `None` when no part of it is inside.
pub(crate) fn clip_segment_by_sides(
    segment: [Vec3; 2],
    count: usize,
    corner: impl Fn(usize) -> Vec3,
    normal: Vec3,
    slack: f32,
) -> Option<(f32, f32)> {
    let (mut t_min, mut t_max) = (0.0f32, 1.0f32);
    for k in 0..count {
        let v0 = corner(k);
        let v1 = corner((k + 1) % count);
        // Points outward of the face polygon (its loop is counter-clockwise about normal), as
        // long as the edge: the slack scaled to it.
        let side = (v1 - v0).cross(normal);
        let pushed = slack * side.length();
        let d0 = side.dot(segment[0] - v0) - pushed;
        let d1 = side.dot(segment[1] - v0) - pushed;
        if d0 > 0.0 && d1 > 0.0 {
            return None;
        }
        if d0 > 0.0 {
            t_min = t_min.max(d0 / (d0 - d1));
        } else if d1 > 0.0 {
            t_max = t_max.min(d0 / (d0 - d1));
        }
    }
    (t_min < t_max).then_some((t_min, t_max))
}

/// The contact points kept by [`reduce_contact_points`]: indices into its input, in polygon
/// order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KeptPoints {
    indices: [usize; MAX_MANIFOLD_POINTS],
    count: usize,
}

impl KeptPoints {
    /// The kept indices, ascending (the input polygon's order).
    pub fn indices(&self) -> &[usize] {
        &self.indices[..self.count]
    }
}

/// Keeps the clipped `points` whose signed distance to `plane` (same frame, positive in front)
/// is at most `margin` (length units), and of more than [`MAX_MANIFOLD_POINTS`] the four that
/// span the most area (see [`reduce_to_four`]).
pub fn reduce_contact_points(
    points: &[ClipVertex],
    plane: &Plane,
    margin: f32,
    tie_tolerance: f32,
) -> KeptPoints {
    let candidate = |i: usize| {
        let position = points[i].position;
        let separation = plane.signed_distance(position);
        (separation <= margin).then_some((position, separation))
    };
    reduce_to_four(points.len(), candidate, plane.normal, tie_tolerance)
}

/// Up to this many candidates, [`reduce_to_four`] evaluates each candidate once into a stack
/// buffer (the picks read each one many times).
const CACHED_POINTS: usize = 16;

/// Of `count` candidates (`candidate(i)`: a position and its signed distance along `normal`,
/// positive = apart, or `None` when `i` is not a candidate) keeps all when there are at most
/// [`MAX_MANIFOLD_POINTS`], else the deepest, the farthest from it, the largest triangle and the
/// largest quadrilateral (see the module docs). Scores within `tie_tolerance` (length units;
/// areas scaled by the base length) count as equal and go to the lowest index, so the choice does
/// not flicker between nearly symmetric points. Needs no buffer: every pick is a pass (up to 16
/// candidates are evaluated once into a stack buffer first).
pub fn reduce_to_four(
    count: usize,
    candidate: impl Fn(usize) -> Option<(Vec3, f32)>,
    normal: Vec3,
    tie_tolerance: f32,
) -> KeptPoints {
    if count <= CACHED_POINTS {
        let mut cached = [None; CACHED_POINTS];
        for (i, slot) in cached.iter_mut().enumerate().take(count) {
            *slot = candidate(i);
        }
        return reduce_candidates(count, |i| cached[i], normal, tie_tolerance);
    }
    reduce_candidates(count, candidate, normal, tie_tolerance)
}

/// [`reduce_to_four`]'s picks, reading `candidate` as often as they need.
fn reduce_candidates(
    count: usize,
    candidate: impl Fn(usize) -> Option<(Vec3, f32)>,
    normal: Vec3,
    tie_tolerance: f32,
) -> KeptPoints {
    let within = |i: usize| candidate(i).is_some();
    let position = |i: usize| candidate(i).map_or(Vec3::ZERO, |c| c.0);
    let separation = |i: usize| candidate(i).map_or(f32::INFINITY, |c| c.1);
    let mut kept = KeptPoints::default();
    if (0..count).filter(|&i| within(i)).count() <= MAX_MANIFOLD_POINTS {
        for i in (0..count).filter(|&i| within(i)) {
            kept.indices[kept.count] = i;
            kept.count += 1;
        }
        return kept;
    }
    // Twice the area of triangle (x, y, p) projected on the plane; positive counter-clockwise.
    let signed_area = |x: usize, y: usize, p: usize| {
        normal.dot((position(y) - position(x)).cross(position(p) - position(x)))
    };
    // The first candidate (by index) whose score is within `tolerance` of the best.
    let pick = |candidate: &dyn Fn(usize) -> bool, score: &dyn Fn(usize) -> f32, tolerance: f32| {
        if count <= CACHED_POINTS {
            // Each score once.
            let mut scores = [f32::NEG_INFINITY; CACHED_POINTS];
            let mut best = f32::NEG_INFINITY;
            for (i, slot) in scores.iter_mut().enumerate().take(count) {
                if candidate(i) {
                    *slot = score(i);
                    best = best.max(*slot);
                }
            }
            return (0..count)
                .find(|&i| candidate(i) && scores[i] >= best - tolerance)
                .unwrap_or(0);
        }
        let best = (0..count)
            .filter(|&i| candidate(i))
            .map(score)
            .fold(f32::NEG_INFINITY, f32::max);
        (0..count)
            .filter(|&i| candidate(i))
            .find(|&i| score(i) >= best - tolerance)
            .unwrap_or(0)
    };
    let in_plane = |v: Vec3| v - normal * normal.dot(v);
    // 1. Deepest point. Among (nearly) equally deep ones, the farthest from their mean: always a
    //    corner of the polygon, never a point cut halfway along a nearly parallel edge.
    let deepest = (0..count)
        .filter(|&i| within(i))
        .map(separation)
        .fold(f32::INFINITY, f32::min);
    let is_deepest = |i: usize| within(i) && separation(i) <= deepest + tie_tolerance;
    let deepest_count = (0..count).filter(|&i| is_deepest(i)).count() as f32;
    let mean = (0..count).filter(|&i| is_deepest(i)).map(position).sum::<Vec3>() / deepest_count;
    let first = pick(
        &is_deepest,
        &|i| in_plane(position(i) - mean).length(),
        tie_tolerance,
    );
    // 2. Farthest from it, measured in the plane.
    let second = pick(
        &within,
        &|i| in_plane(position(i) - position(first)).length(),
        tie_tolerance,
    );
    // 3. Largest triangle with those two; the tolerance is a height, the score base × height.
    let base = in_plane(position(second) - position(first)).length();
    let third = pick(
        &within,
        &|i| signed_area(first, second, i).abs(),
        tie_tolerance * base,
    );
    // 4. Most area added outside the (counter-clockwise) triangle: the largest quadrilateral.
    let triangle = if signed_area(first, second, third) >= 0.0 {
        [first, second, third]
    } else {
        [first, third, second]
    };
    let added = |i: usize| {
        (0..3)
            .map(|e| -signed_area(triangle[e], triangle[(e + 1) % 3], i))
            .fold(0.0f32, f32::max)
    };
    let fourth = pick(&within, &added, tie_tolerance * base);

    kept.indices[..3].copy_from_slice(&triangle);
    kept.count = 3;
    if added(fourth) > 0.0 {
        kept.indices[3] = fourth;
        kept.count = 4;
    }
    kept.indices[..kept.count].sort_unstable();
    kept.count = dedup_sorted(&mut kept.indices[..kept.count]);
    kept
}

/// Removes repeated entries from ascending `indices` in place (the picks of a reduction, which
/// repeat when every candidate lies within the tie tolerance of an earlier pick) and returns how
/// many distinct ones lead the slice.
pub(crate) fn dedup_sorted(indices: &mut [usize]) -> usize {
    let mut unique = 0;
    for k in 0..indices.len() {
        if unique == 0 || indices[k] != indices[unique - 1] {
            indices[unique] = indices[k];
            unique += 1;
        }
    }
    unique
}

#[cfg(test)]
mod tests {
    use glam::Quat;

    use super::*;

    fn unit_box() -> ConvexHull {
        ConvexHull::cuboid(Vec3::splat(0.5))
    }

    #[test]
    fn square_inside_larger_square_keeps_its_vertices() {
        let big = ConvexHull::cuboid(Vec3::new(2.0, 0.5, 2.0));
        let small = unit_box();
        let reference = PosedFace {
            hull: &big,
            pose: Isometry::IDENTITY,
            face: 3,
        };
        let incident = PosedFace {
            hull: &small,
            pose: Isometry::from_translation(Vec3::new(0.0, 1.0, 0.0)),
            face: 2,
        };
        let mut polygon = ClipPolygon::<MAX_CLIP_VERTICES>::new();
        clip_incident_face(&reference, &incident, FeatureId::FACE_A, &mut polygon);
        let ids: Vec<FeatureId> = polygon.vertices().iter().map(|v| v.id).collect();
        let expected: Vec<FeatureId> = small
            .face_loop(2)
            .iter()
            .map(|&v| FeatureId::new(FeatureId::FACE_A, false, 3, v))
            .collect();
        assert_eq!(ids, expected);
    }

    #[test]
    fn larger_incident_face_is_cut_to_the_reference_corners() {
        let big = ConvexHull::cuboid(Vec3::new(2.0, 0.5, 2.0));
        let small = unit_box();
        // Reference: the small box's bottom face; incident: the big box's top face below it.
        let reference = PosedFace {
            hull: &small,
            pose: Isometry::from_translation(Vec3::new(0.0, 1.0, 0.0)),
            face: 2,
        };
        let incident = PosedFace {
            hull: &big,
            pose: Isometry::IDENTITY,
            face: 3,
        };
        let mut polygon = ClipPolygon::<MAX_CLIP_VERTICES>::new();
        clip_incident_face(&reference, &incident, FeatureId::FACE_B, &mut polygon);
        assert_eq!(polygon.vertices().len(), 4);
        for v in polygon.vertices() {
            assert!((v.position.x.abs() - 0.5).abs() < 1e-6 && (v.position.z.abs() - 0.5).abs() < 1e-6);
            // The corner point is the small box's vertex against the big box's face 3.
            assert_eq!(
                (v.id.kind(), v.id.flag(), v.id.high()),
                (FeatureId::FACE_A, false, 3)
            );
            let corner = small.vertices()[v.id.low() as usize] + Vec3::Y;
            assert!(corner.distance(v.position) < 1e-6, "{v:?}");
        }
    }

    #[test]
    fn edge_crossings_name_side_and_incident_edges() {
        // Two equal squares, one shifted by half its width: each crossing lies on a side plane of
        // the reference and on an incident edge.
        let hull = unit_box();
        let reference = PosedFace {
            hull: &hull,
            pose: Isometry::IDENTITY,
            face: 3,
        };
        let incident = PosedFace {
            hull: &hull,
            pose: Isometry::new(Vec3::new(0.5, 1.0, 0.25), Quat::IDENTITY),
            face: 2,
        };
        let mut polygon = ClipPolygon::<MAX_CLIP_VERTICES>::new();
        clip_incident_face(&reference, &incident, FeatureId::FACE_A, &mut polygon);
        let vertices = hull.vertices();
        for v in polygon.vertices() {
            let p = v.position;
            assert!(p.x >= -0.5 - 1e-6 && p.x <= 0.5 + 1e-6 && p.z >= -0.5 - 1e-6 && p.z <= 0.5 + 1e-6);
            if v.id.flag() {
                // On the side plane through the reference edge starting at `high`.
                let loop3 = hull.face_loop(3);
                let side = loop3.iter().position(|&x| x == v.id.high()).unwrap();
                let (s, e) = (
                    vertices[loop3[side] as usize],
                    vertices[loop3[(side + 1) % 4] as usize],
                );
                let side_normal = (e - s).cross(Vec3::Y);
                assert!(side_normal.dot(p - s).abs() < 1e-6, "{v:?}");
            }
        }
        assert_eq!(polygon.vertices().iter().filter(|v| v.id.flag()).count(), 2);
    }

    #[test]
    fn reduction_keeps_the_largest_quadrilateral_of_an_octagon() {
        // Eight points on a circle, one deeper: the deepest, its opposite, and the two at ±90°.
        let points: Vec<ClipVertex> = (0..8)
            .map(|i| {
                let angle = i as f32 * std::f32::consts::FRAC_PI_4;
                let depth = if i == 2 { -0.1 } else { -0.01 };
                ClipVertex {
                    position: Vec3::new(angle.cos(), depth, angle.sin()),
                    id: FeatureId(i),
                }
            })
            .collect();
        let plane = Plane {
            normal: Vec3::Y,
            offset: 0.0,
        };
        let kept = reduce_contact_points(&points, &plane, 0.0, 1e-4);
        assert_eq!(kept.indices(), &[0, 2, 4, 6]);
    }

    #[test]
    fn reduction_drops_points_beyond_the_margin() {
        let points: Vec<ClipVertex> = (0..6)
            .map(|i| ClipVertex {
                position: Vec3::new(i as f32, 0.1 * i as f32 - 0.25, 0.0),
                id: FeatureId(i),
            })
            .collect();
        let plane = Plane {
            normal: Vec3::Y,
            offset: 0.0,
        };
        assert_eq!(
            reduce_contact_points(&points, &plane, 0.0, 1e-4).indices(),
            &[0, 1, 2]
        );
        assert_eq!(
            reduce_contact_points(&points, &plane, 0.11, 1e-4).indices(),
            &[0, 1, 2, 3]
        );
    }
}

//! One mesh triangle (body A, the mesh's frame) against a capsule (body B): its core segment
//! against the triangle, then the radius.
//!
//! 1. The segment ends' heights over the plane: beyond `radius + margin`, or wholly behind the
//!    plane (one-sided), no contact.
//! 2. Segment apart from the triangle: GJK's closest points; their direction is the normal when
//!    [`TriMesh::allows_normal`] accepts it on the triangle's feature there (one point), unless
//!    it is the face's own (within [`TRIMESH_FACE_NORMAL_DEGREES`]): then step 4, so a capsule
//!    lying along a seam gets its two ends, not wherever GJK lands on the shared edge.
//! 3. Segment touching the triangle: the face normal, or an active edge × segment axis that
//!    separates more by the face preference (one point, on the two segments).
//! 4. Face normal (from 2 or 3): the segment clipped by the triangle's sides pushed out by
//!    `tolerance` (a segment along a shared edge stays inside both triangles whatever the
//!    rounding), each end within the margin a point (two points lying flat), midway between the
//!    plane and the capsule's surface straight below the clipped core point (`radius / cos tilt`
//!    below it through the cylinder: `radius` would lie inside a tilted capsule), its depth the
//!    gap there; nothing inside the sides: step 2's point if it had one, else no contact (the
//!    neighbour across the refused edge or corner holds it).
//!
//! Ids as the sphere's ([`primitive_id`]), B's field 0 for one point, 1 + end (0 nearer the
//! segment's start) for clipped ends. WGSL twin: `collide_triangle_capsule` in
//! shaders/narrowphase/triangle_contact.wgsl.

use glam::Vec3;

use crate::constants::TRIMESH_FACE_NORMAL_DEGREES;
use crate::contact::clip::clip_segment_by_sides;
use crate::contact::triangle_sphere::{FEATURE_WEIGHT_TOLERANCE, primitive_id};
use crate::manifold::{ContactPoint, Manifold};
use crate::query::gjk::closest_points;
use crate::query::segment::closest_points_segments;
use crate::trimesh::{TriMesh, TriangleFeature};

/// The manifold (A's frame, the mesh's) of triangle `index` of `mesh` and a capsule with core
/// `segment` (A's frame) and `radius`, or `None` beyond `margin`. `tolerance`: the face
/// preference and the sides' slack (length units).
pub(crate) fn collide_triangle_capsule(
    mesh: &TriMesh,
    index: u32,
    segment: [Vec3; 2],
    radius: f32,
    margin: f32,
    tolerance: f32,
) -> Option<Manifold> {
    let triangle = mesh.triangle(index);
    let n = triangle.normal;
    let heights = segment.map(|p| n.dot(p - triangle.vertices[0]));
    if heights[0].min(heights[1]) - radius > margin || heights[0].max(heights[1]) < 0.0 {
        return None;
    }
    let one_point = |normal: Vec3, separation: f32, on_triangle: Vec3, feature| {
        let mut manifold = Manifold::new(normal, separation);
        manifold.push(ContactPoint {
            position: (on_triangle + normal * (0.5 * separation)).as_dvec3(),
            depth: -separation,
            id: primitive_id(feature, 0),
        });
        (separation <= margin).then_some(manifold)
    };
    // 2. Apart: a feature's normal, or the face's (step 4, this point if nothing is clipped).
    let mut beside = None;
    if let Some(c) = closest_points(&triangle, &segment) {
        let feature = triangle.feature_at(c.point_a, FEATURE_WEIGHT_TOLERANCE);
        if feature != TriangleFeature::Face && mesh.allows_normal(index, feature, c.direction) {
            if n.dot(c.direction) < TRIMESH_FACE_NORMAL_DEGREES.to_radians().cos() {
                return one_point(c.direction, c.distance - radius, c.point_a, feature);
            }
            beside = Some((c.direction, c.distance - radius, c.point_a, feature));
        }
    } else {
        // 3. Touching: an active edge's axis beats the face only by the preference.
        let face_separation = heights[0].min(heights[1]) - radius;
        let direction = segment[1] - segment[0];
        let mut best: Option<(Vec3, f32, usize)> = None;
        for k in 0..3 {
            let cross = triangle.edge_direction(k).cross(direction);
            let length = cross.length();
            if length <= crate::constants::PARALLEL_EDGE_SINE * direction.length() {
                continue;
            }
            let axis = if cross.dot(triangle.side_normal(k)) < 0.0 {
                -cross
            } else {
                cross
            } / length;
            if axis.dot(n) < 0.0 || !mesh.allows_normal(index, TriangleFeature::Edge(k), axis) {
                continue;
            }
            let top = triangle.vertices.map(|v| axis.dot(v));
            let separation =
                axis.dot(segment[0]).min(axis.dot(segment[1])) - top[0].max(top[1]).max(top[2]) - radius;
            if best.is_none_or(|b| separation > b.1) {
                best = Some((axis, separation, k));
            }
        }
        if let Some((axis, separation, k)) = best
            && separation > face_separation + tolerance
        {
            let (e0, e1) = (triangle.vertices[k], triangle.vertices[(k + 1) % 3]);
            let (_, t) = closest_points_segments(segment[0], segment[1], e0, e1);
            return one_point(axis, separation, e0.lerp(e1, t), TriangleFeature::Edge(k));
        }
    }
    // 4. The face normal: the segment clipped by the triangle's sides.
    let mut manifold = Manifold::new(n, heights[0].min(heights[1]) - radius);
    let corners = |k| triangle.vertices[k];
    if let Some((t_min, t_max)) = clip_segment_by_sides(segment, 3, corners, n, tolerance) {
        for (end, t) in [t_min, t_max].into_iter().enumerate() {
            let p = segment[0].lerp(segment[1], t);
            let below = surface_below(segment, t, n, radius);
            let gap = n.dot(p - triangle.vertices[0]) - below;
            if gap <= margin {
                manifold.push(ContactPoint {
                    position: (p - n * (below + 0.5 * gap)).as_dvec3(),
                    depth: -gap,
                    id: primitive_id(TriangleFeature::Face, 1 + end as u32),
                });
            }
        }
        manifold.separation = manifold
            .points()
            .iter()
            .map(|p| -p.depth)
            .fold(f32::INFINITY, f32::min);
        return (manifold.point_count() > 0).then_some(manifold);
    }
    // Beside the triangle with a refused normal: the neighbour across that feature answers.
    beside.and_then(|(normal, separation, on_triangle, feature)| {
        one_point(normal, separation, on_triangle, feature)
    })
}

/// How far below the core point at `t` on `segment` (along `-n`, unit) the capsule's surface
/// lies: `radius / cos tilt` through the cylinder, or less through the lower end's cap where the
/// way down leaves the cylinder past that end (`radius` at the lower end itself).
fn surface_below(segment: [Vec3; 2], t: f32, n: Vec3, radius: f32) -> f32 {
    let direction = segment[1] - segment[0];
    let length = direction.length();
    // Sine and cosine of the segment's tilt out of the plane.
    let sin = if length > 0.0 {
        (n.dot(direction) / length).abs()
    } else {
        0.0
    };
    let cos = (1.0 - sin * sin).max(0.0).sqrt();
    // The core's length from the point to its lower end.
    let room = length * if n.dot(direction) >= 0.0 { t } else { 1.0 - t };
    if radius * sin <= room * cos {
        radius / cos
    } else {
        // |p - n s - end| = radius, p - end along the core.
        room * sin + (radius * radius - room * room * cos * cos).max(0.0).sqrt()
    }
}

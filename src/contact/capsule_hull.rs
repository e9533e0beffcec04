//! Capsule against hull, in the hull's local frame (B's): the capsule's core segment against
//! the hull, then the radius.
//!
//! 1. The segment in B's frame; face query (the nearer end's plane distance per face). Beyond
//!    `radius + margin`, no contact.
//! 2. Segment outside the hull: GJK (segment against hull) gives distance, points and normal.
//! 3. Segment penetrating: SAT over the faces and the segment × Gauss-map-crossing edges; an edge
//!    axis wins only by [`AXIS_PREFERENCE_TOLERANCE`] × scale.
//! 4. Normal within [`CAPSULE_FACE_SINE`] of a face's and the segment along the face: the segment
//!    clipped by the face's side planes gives two points; else one point along the true normal.
//!
//! Feature id: kind `OTHER`; one point: flag 0, high 0, low 0; clipped: flag 1, high = 0 for the
//! end nearer the capsule's bottom, 1 for the other, low = the face. See docs/design/contacts.md.
//! WGSL twin: `shaders/narrowphase/primitives.wgsl`.

use glam::Vec3;

use crate::constants::{AXIS_PREFERENCE_TOLERANCE, CAPSULE_FACE_SINE, PARALLEL_EDGE_SINE, pair_scale};
use crate::contact::clip::clip_segment_by_sides;
use crate::hull::ConvexHull;
use crate::manifold::{ContactPoint, FeatureId, Manifold};
use crate::pose::{Isometry, Pose};
use crate::query::gjk::{PosedHull, closest_points};
use crate::query::segment::closest_points_segments;
use crate::shape::Capsule;

/// The manifold between capsule (body A) and hull (body B) at world poses, or `None` beyond `margin`.
pub fn collide_capsule_hull(
    capsule: &Capsule,
    pose_a: &Pose,
    hull: &ConvexHull,
    pose_b: &Pose,
    margin: f32,
) -> Option<Manifold> {
    let a_in_b = pose_b.relative_to_self(pose_a);
    let segment = capsule.segment().map(|p| a_in_b.transform_point(p));
    let radius = capsule.radius;

    // 1. Face query.
    let mut face = 0;
    let mut face_separation = f32::NEG_INFINITY;
    for (i, plane) in hull.planes().iter().enumerate() {
        let s = plane
            .signed_distance(segment[0])
            .min(plane.signed_distance(segment[1]));
        if s > face_separation {
            face = i;
            face_separation = s;
        }
    }
    if face_separation - radius > margin {
        return None;
    }

    // 2. and 3.: closest points of the core segment and of the hull, and the normal (B's frame,
    // from A toward B) along which their gap is measured. GJK runs even when every face overlaps:
    // a segment passing just outside an edge has only an edge axis separating it.
    let hull_shape = PosedHull {
        hull,
        pose: Isometry::IDENTITY,
    };
    let outside = closest_points(&segment, &hull_shape);
    let (normal, on_segment, on_hull, gap) = match outside {
        Some(c) => (c.direction, c.point_a, c.point_b, c.distance),
        None => segment_hull_penetration(hull, segment, face, face_separation, radius),
    };
    let separation = gap - radius;
    if separation > margin {
        return None;
    }

    // 4. A capsule lying on a face gets that face's clipped segment.
    let scale = pair_scale(hull.radius(), capsule.half_height + radius);
    let preference = AXIS_PREFERENCE_TOLERANCE * scale;
    if let Some(manifold) = clip_on_face(
        hull, pose_b, segment, normal, radius, separation, preference, margin,
    ) {
        return Some(manifold);
    }
    let mut manifold = Manifold::new(pose_b.transform_vector(normal), separation);
    manifold.push(ContactPoint {
        position: pose_b.transform_point(0.5 * (on_segment + normal * radius + on_hull)),
        depth: -separation,
        id: FeatureId::new(FeatureId::OTHER, false, 0, 0),
    });
    Some(manifold)
}

/// SAT of a penetrating segment against the hull (B's frame), given the best face from the face
/// query. Returns the normal from the segment toward the hull, the deepest segment point, the
/// hull point it faces, and their signed gap along the normal (negative = penetrating).
fn segment_hull_penetration(
    hull: &ConvexHull,
    segment: [Vec3; 2],
    face: usize,
    face_separation: f32,
    radius: f32,
) -> (Vec3, Vec3, Vec3, f32) {
    let [p0, p1] = segment;
    let direction = p1 - p0;
    let planes = hull.planes();
    let vertices = hull.vertices();
    let scale = pair_scale(hull.radius(), 0.5 * direction.length() + radius);
    let mut best_edge: Option<(Vec3, f32, usize)> = None;
    for (i, edge) in hull.edges().iter().enumerate() {
        let n0 = planes[edge.faces[0] as usize].normal;
        let n1 = planes[edge.faces[1] as usize].normal;
        // The edge's Gauss-map arc must cross the great circle of normals perpendicular to the
        // segment, or the cross product is not a face of the Minkowski difference.
        if n0.dot(direction) * n1.dot(direction) >= 0.0 {
            continue;
        }
        let e0 = vertices[edge.vertices[0] as usize];
        let edge_direction = vertices[edge.vertices[1] as usize] - e0;
        let cross = direction.cross(edge_direction);
        let length = cross.length();
        if length < PARALLEL_EDGE_SINE * direction.length() * edge_direction.length() {
            continue;
        }
        // Outward from the hull at this edge: the hull's support along it is the edge itself.
        let axis = (if cross.dot(n0 + n1) < 0.0 { -cross } else { cross }) / length;
        let separation = axis.dot(p0 - e0);
        if best_edge.is_none_or(|(_, s, _)| separation > s) {
            best_edge = Some((axis, separation, i));
        }
    }
    if let Some((axis, separation, i)) = best_edge
        && separation > face_separation + AXIS_PREFERENCE_TOLERANCE * scale
    {
        let edge = hull.edges()[i];
        let e0 = vertices[edge.vertices[0] as usize];
        let e1 = vertices[edge.vertices[1] as usize];
        let (s, t) = closest_points_segments(p0, p1, e0, e1);
        return (-axis, p0 + s * direction, e0 + t * (e1 - e0), separation);
    }
    let plane = planes[face];
    let deepest = if plane.signed_distance(p0) <= plane.signed_distance(p1) {
        p0
    } else {
        p1
    };
    (
        -plane.normal,
        deepest,
        deepest - plane.normal * face_separation,
        face_separation,
    )
}

/// The two-point manifold of a capsule lying on a hull face (B's frame in, world out), or `None`
/// when `normal` is not close to a face's inward normal, the segment is not close to parallel
/// to that face, the separation along the face normal falls short of the true `separation` by
/// more than `preference` (length units), or no clipped end is within the margin.
#[allow(clippy::too_many_arguments)]
fn clip_on_face(
    hull: &ConvexHull,
    pose_b: &Pose,
    segment: [Vec3; 2],
    normal: Vec3,
    radius: f32,
    separation: f32,
    preference: f32,
    margin: f32,
) -> Option<Manifold> {
    let planes = hull.planes();
    let (face, alignment) = planes
        .iter()
        .map(|plane| -plane.normal.dot(normal))
        .enumerate()
        .fold(
            (0, f32::NEG_INFINITY),
            |best, (i, a)| if a > best.1 { (i, a) } else { best },
        );
    let face_normal = planes[face].normal;
    let direction = segment[1] - segment[0];
    let max_cos = (1.0 - CAPSULE_FACE_SINE * CAPSULE_FACE_SINE).sqrt();
    if alignment < max_cos || face_normal.dot(direction).abs() > CAPSULE_FACE_SINE * direction.length() {
        return None;
    }
    // The face normal may stand in for the true normal only within the preference tolerance:
    // along it the capsule's lower end is this far from the face (a lower bound of the gap).
    let face_separation = planes[face]
        .signed_distance(segment[0])
        .min(planes[face].signed_distance(segment[1]))
        - radius;
    if face_separation < separation - preference {
        return None;
    }
    let vertices = hull.vertices();
    let face_loop = hull.face_loop(face);
    let (t_min, t_max) = clip_segment_by_sides(
        segment,
        face_loop.len(),
        |k| vertices[face_loop[k] as usize],
        face_normal,
        0.0,
    )?;
    let mut manifold = Manifold::new(pose_b.transform_vector(-face_normal), separation);
    for (end, t) in [t_min, t_max].into_iter().enumerate() {
        let p = segment[0] + t * direction;
        let plane_distance = planes[face].signed_distance(p);
        let gap = plane_distance - radius;
        if gap > margin {
            continue;
        }
        // Midway between the capsule's surface and the face, along the face normal.
        let position = p - face_normal * (0.5 * (plane_distance + radius));
        manifold.push(ContactPoint {
            position: pose_b.transform_point(position),
            depth: -gap,
            id: FeatureId::new(FeatureId::OTHER, true, end as u32, face as u32),
        });
    }
    (manifold.point_count() > 0).then_some(manifold)
}

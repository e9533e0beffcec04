//! Hull (or box) against hull (or box): SAT, then a clipped face contact or an edge contact.
//!
//! 1. The SAT in A's frame ([`query_hulls`]), after a bounding-sphere test ([`spheres_apart`]);
//!    beyond the margin there is no manifold.
//! 2. Face axis: clip the incident face (most anti-parallel to the SAT face) by the reference
//!    side planes ([`clip_incident_face`]).
//! 3. Keep the clipped points within the margin, at most four ([`reduce_contact_points`]), each
//!    midway between the incident point and the reference plane, depth = -(distance in front).
//! 4. Edge axis: one point midway between the closest points of the two edges.
//! 5. Apart within the margin: GJK measures the distance; closest features that are not the
//!    SAT's (vertex-vertex, vertex-edge) give the closest-point pair.
//! 6. Points and normal from A's frame to world.
//!
//! WGSL twin: `shaders/narrowphase/clip.wgsl`. Details: docs/design/contacts.md.

use glam::{Vec3, Vec4};

use crate::constants::{
    CLOSEST_FEATURE_COSINE, CONTACT_REDUCTION_TOLERANCE, INCIDENT_FACE_TOLERANCE, pair_scale,
};
use crate::contact::clip::{
    ClipPolygon, ClipVertex, MAX_CLIP_VERTICES, PosedFace, clip_incident_face, reduce_contact_points,
};
use crate::hull::ConvexHull;
use crate::manifold::{ContactPoint, FeatureId, Manifold};
use crate::pose::{Isometry, Pose};
use crate::query::bounds::SAT_BOUND_SLACK;
use crate::query::gjk::{ClosestPoints, PosedHull, closest_points};
use crate::query::sat::{SatAxis, SatResult, query_hulls, query_hulls_preferring_faces_by};
use crate::query::segment::closest_points_segments;

/// Clip buffer size for two faces of at most 8 vertices together (two box faces, triangles).
const QUAD_CLIP_VERTICES: usize = 8;
/// Clip buffer size for two faces of at most 16 vertices together.
const SMALL_CLIP_VERTICES: usize = 16;

/// The manifold between hull `a` (body A) and hull `b` (body B) at world poses, or `None` when
/// they are farther apart than `margin` (length units). Normal from A toward B, world space.
pub fn collide_hull_hull(
    a: &ConvexHull,
    pose_a: &Pose,
    b: &ConvexHull,
    pose_b: &Pose,
    margin: f32,
) -> Option<Manifold> {
    collide_hull_hull_reporting_sat(a, pose_a, b, &pose_a.relative_to_self(pose_b), margin).0
}

/// [`collide_hull_hull`] given B's pose in A's frame (`pose_a.relative_to_self(pose_b)`), and
/// the SAT result it rests on (A's frame), `None` when the bounding spheres ended the call
/// first ([`spheres_apart`]): what [`crate::ContactCache`] keeps.
pub(crate) fn collide_hull_hull_reporting_sat(
    a: &ConvexHull,
    pose_a: &Pose,
    b: &ConvexHull,
    b_in_a: &Isometry,
    margin: f32,
) -> (Option<Manifold>, Option<SatResult>) {
    if spheres_apart(a, b, b_in_a, margin) {
        return (None, None);
    }
    // SAT first, no GJK pre-test: the bounded edge query makes it the cheaper test.
    let sat = query_hulls(a, b, b_in_a, margin);
    (
        manifold_from_sat_in_a(a, pose_a, b, b_in_a, &sat, margin),
        Some(sat),
    )
}

/// True when the hulls' bounding spheres (about the centroids, radius [`ConvexHull::radius`]; B
/// posed at `b_in_a` in A's frame) are apart by more than `margin` plus a rounding slack
/// ([`SAT_BOUND_SLACK`] × the pair's reach): then the hulls are too, and the steps below end with
/// no manifold either way (the SAT separates, or GJK measures more than the margin), so the
/// pair stops here.
fn spheres_apart(a: &ConvexHull, b: &ConvexHull, b_in_a: &Isometry, margin: f32) -> bool {
    let gap = b_in_a.transform_point(b.centroid()) - a.centroid();
    let reach = a.radius() + b.radius() + margin;
    let limit = reach + SAT_BOUND_SLACK * (reach + b_in_a.translation.length());
    gap.length_squared() > limit * limit
}

/// GJK closest points of `a` (A's frame) and `b` posed at `b_in_a`, or `None` when they overlap.
fn closest_points_in_a(a: &ConvexHull, b: &ConvexHull, b_in_a: &Isometry) -> Option<ClosestPoints> {
    closest_points(
        &PosedHull {
            hull: a,
            pose: Isometry::IDENTITY,
        },
        &PosedHull {
            hull: b,
            pose: *b_in_a,
        },
    )
}

/// Turns a SAT result (A's frame, from the CPU queries or the GPU shader) into a world-space
/// manifold: normal `pose_a.rotation * sat.normal`, separation `sat.separation`. `None` when
/// the SAT separates by more than `margin`, or when no clipped point is within it.
pub fn manifold_from_sat(
    a: &ConvexHull,
    pose_a: &Pose,
    b: &ConvexHull,
    pose_b: &Pose,
    sat: &SatResult,
    margin: f32,
) -> Option<Manifold> {
    manifold_from_sat_in_a(a, pose_a, b, &pose_a.relative_to_self(pose_b), sat, margin)
}

/// [`manifold_from_sat`] given B's pose in A's frame, `b_in_a = pose_a.relative_to_self(pose_b)`,
/// for callers that formed it already.
pub(crate) fn manifold_from_sat_in_a(
    a: &ConvexHull,
    pose_a: &Pose,
    b: &ConvexHull,
    b_in_a: &Isometry,
    sat: &SatResult,
    margin: f32,
) -> Option<Manifold> {
    if sat.is_separated(margin) {
        return None;
    }
    let exact = (sat.separation > 0.0)
        .then(|| closest_points_in_a(a, b, b_in_a))
        .flatten();
    manifold_from_sat_and_distance(a, pose_a, b, b_in_a, sat, margin, exact)
}

/// [`manifold_from_sat`] for a SAT result within the margin, given B's pose in A's frame and
/// the GJK closest points `exact` of the pair in A's frame (needed, and used, only when
/// `sat.separation > 0`; `None` when GJK found an overlap). Both callers checked the margin.
pub(crate) fn manifold_from_sat_and_distance(
    a: &ConvexHull,
    pose_a: &Pose,
    b: &ConvexHull,
    b_in_a: &Isometry,
    sat: &SatResult,
    margin: f32,
    exact: Option<ClosestPoints>,
) -> Option<Manifold> {
    if sat.separation > 0.0 {
        // Apart but within the margin: the SAT separation is only a lower bound of the distance.
        if let Some(exact) = exact {
            if exact.distance > margin {
                return None;
            }
            if !closest_along_axis(&exact, sat.normal) {
                return Some(closest_point_contact(a, pose_a, b, b_in_a, &exact));
            }
        }
    }
    let tie_tolerance = CONTACT_REDUCTION_TOLERANCE * pair_scale(a.radius(), b.radius());
    let mut manifold = contact_on_axis(a, b, b_in_a, sat, margin, tie_tolerance)
        .or_else(|| {
            // The face-preferred axis can be up to the preference tolerance shallower than the
            // deepest one, and its clip can miss the contact region (it lies beside the face):
            // retry on the deepest axis.
            (sat.axis_separation < sat.separation)
                .then(|| query_hulls_preferring_faces_by(a, b, b_in_a, margin, 0.0))
                .and_then(|deepest| contact_on_axis(a, b, b_in_a, &deepest, margin, tie_tolerance))
        })
        .or_else(|| deepest_vertex_contact(a, b, b_in_a, sat))?;
    manifold.separation = sat.separation;
    Some(manifold.to_world(pose_a))
}

/// Step 5's test for a pair apart: true when the direction between GJK's closest points
/// (`exact`, A's frame) lies along the SAT axis `normal` (cosine at least
/// [`CLOSEST_FEATURE_COSINE`]), so the contact is built on the SAT's features; false when the
/// closest features are others (the closest-point contact).
#[inline]
pub(crate) fn closest_along_axis(exact: &ClosestPoints, normal: Vec3) -> bool {
    exact.direction.dot(normal) >= CLOSEST_FEATURE_COSINE
}

/// The manifold on the axis of `sat` alone (steps 2 to 4 and 6; separation `sat.separation`),
/// `None` when a face clip keeps no point: no retry on another axis, for a caller that chose
/// the axis itself ([`crate::ContactCache`]). B posed at `b_in_a` in A's frame.
pub(crate) fn manifold_on_axis(
    a: &ConvexHull,
    pose_a: &Pose,
    b: &ConvexHull,
    b_in_a: &Isometry,
    sat: &SatResult,
    margin: f32,
) -> Option<Manifold> {
    let tie_tolerance = CONTACT_REDUCTION_TOLERANCE * pair_scale(a.radius(), b.radius());
    let mut manifold = contact_on_axis(a, b, b_in_a, sat, margin, tie_tolerance)?;
    manifold.separation = sat.separation;
    Some(manifold.to_world(pose_a))
}

/// One point midway between the closest points of two separated hulls (A's frame in, world
/// out), for closest features that are neither a face nor an edge pair. Ids: kind `OTHER`,
/// the support vertex of A along the normal and of B against it.
fn closest_point_contact(
    a: &ConvexHull,
    pose_a: &Pose,
    b: &ConvexHull,
    b_in_a: &Isometry,
    exact: &ClosestPoints,
) -> Manifold {
    let normal = exact.direction;
    let (vertex_a, _) = a.support(normal);
    let (vertex_b, _) = b.support(b_in_a.inverse_transform_vector(-normal));
    let mut manifold = Manifold::new(pose_a.transform_vector(normal), exact.distance);
    manifold.push(ContactPoint {
        position: pose_a.transform_point(0.5 * (exact.point_a + exact.point_b)),
        depth: -exact.distance,
        id: FeatureId::new(FeatureId::OTHER, false, vertex_a as u32, vertex_b as u32),
    });
    manifold
}

/// The reference and incident faces for a face axis, both posed in A's frame, and the id kind.
fn face_pair<'h>(
    a: &'h ConvexHull,
    b: &'h ConvexHull,
    b_in_a: &Isometry,
    axis: SatAxis,
) -> Option<(PosedFace<'h>, PosedFace<'h>, u32)> {
    let (reference, other, other_pose, kind) = match axis {
        SatAxis::FaceA(face) => (
            PosedFace {
                hull: a,
                pose: Isometry::IDENTITY,
                face: face as usize,
            },
            b,
            *b_in_a,
            FeatureId::FACE_A,
        ),
        SatAxis::FaceB(face) => (
            PosedFace {
                hull: b,
                pose: *b_in_a,
                face: face as usize,
            },
            a,
            Isometry::IDENTITY,
            FeatureId::FACE_B,
        ),
        SatAxis::EdgePair { .. } => return None,
    };
    let incident = PosedFace {
        hull: other,
        pose: other_pose,
        face: most_antiparallel_face(other, &other_pose, reference.plane().normal),
    };
    Some((reference, incident, kind))
}

/// The manifold (A's frame) for one SAT axis: clipped face contact or edge contact; `None` when
/// the clip keeps no point.
pub(crate) fn contact_on_axis(
    a: &ConvexHull,
    b: &ConvexHull,
    b_in_a: &Isometry,
    sat: &SatResult,
    margin: f32,
    tie_tolerance: f32,
) -> Option<Manifold> {
    let mut manifold = Manifold::new(sat.normal, sat.separation);
    match sat.axis {
        SatAxis::FaceA(_) | SatAxis::FaceB(_) => {
            let (reference, incident, kind) = face_pair(a, b, b_in_a, sat.axis)?;
            add_face_contact(&reference, &incident, kind, margin, tie_tolerance, &mut manifold);
        }
        SatAxis::EdgePair { edge_a, edge_b } => {
            manifold.push(edge_pair_point(
                a,
                b,
                b_in_a,
                [edge_a, edge_b],
                sat.axis_separation,
            ));
        }
    }
    (manifold.point_count() > 0).then_some(manifold)
}

/// The one point of an edge contact (A's frame): midway between the closest points of edge
/// `edges[0]` of A and `edges[1]` of B (posed at `b_in_a`), depth `-axis_separation`.
#[inline]
pub(crate) fn edge_pair_point(
    a: &ConvexHull,
    b: &ConvexHull,
    b_in_a: &Isometry,
    [edge_a, edge_b]: [u32; 2],
    axis_separation: f32,
) -> ContactPoint {
    let (ea, eb) = (a.edges()[edge_a as usize], b.edges()[edge_b as usize]);
    let (va, vb) = (a.vertices(), b.vertices());
    let (a0, a1) = (va[ea.vertices[0] as usize], va[ea.vertices[1] as usize]);
    let b0 = b_in_a.transform_point(vb[eb.vertices[0] as usize]);
    let b1 = b_in_a.transform_point(vb[eb.vertices[1] as usize]);
    let (s, t) = closest_points_segments(a0, a1, b0, b1);
    ContactPoint {
        position: (0.5 * (a0.lerp(a1, s) + b0.lerp(b1, t))).as_dvec3(),
        depth: -axis_separation,
        id: FeatureId::new(FeatureId::EDGE_PAIR, false, edge_a, edge_b),
    }
}

/// Last resort for a face axis whose clips keep nothing: the incident hull's deepest vertex,
/// which realizes the axis separation, as the one point (A's frame).
fn deepest_vertex_contact(
    a: &ConvexHull,
    b: &ConvexHull,
    b_in_a: &Isometry,
    sat: &SatResult,
) -> Option<Manifold> {
    let (reference, incident, kind) = face_pair(a, b, b_in_a, sat.axis)?;
    let plane = reference.plane();
    let (vertex, position, separation) = incident
        .hull
        .vertices()
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let p = incident.pose.transform_point(*v);
            (i, p, plane.signed_distance(p))
        })
        .fold((0, Vec3::ZERO, f32::INFINITY), |best, c| {
            if c.2 < best.2 { c } else { best }
        });
    let mut manifold = Manifold::new(sat.normal, sat.separation);
    manifold.push(ContactPoint {
        position: (position - plane.normal * (0.5 * separation)).as_dvec3(),
        depth: -separation,
        id: FeatureId::new(kind, false, reference.face as u32, vertex as u32),
    });
    Some(manifold)
}

/// Index of the face of `hull` (posed in the working frame by `pose`) whose outward normal is
/// most anti-parallel to `normal` (working frame); of faces within [`INCIDENT_FACE_TOLERANCE`]
/// of the best, the lowest index wins, so nearly coplanar faces do not swap frame to frame.
/// Four faces at a time ([`ConvexHull::plane_lanes`]), each dot product rounded as `Vec3::dot`.
pub(crate) fn most_antiparallel_face(hull: &ConvexHull, pose: &Isometry, normal: Vec3) -> usize {
    let local = pose.inverse_transform_vector(normal);
    let (lx, ly, lz) = (Vec4::splat(local.x), Vec4::splat(local.y), Vec4::splat(local.z));
    let dots = |[nx, ny, nz, _]: &[Vec4; 4]| (nx * lx) + (ny * ly) + (nz * lz);
    let lanes = hull.plane_lanes();
    // Padding lanes repeat the last face: they change neither the minimum nor the first index.
    let mut lowest = Vec4::INFINITY;
    for group_lanes in lanes {
        lowest = lowest.min(dots(group_lanes));
    }
    let best = lowest.min_element();
    let within = Vec4::splat(best + INCIDENT_FACE_TOLERANCE);
    for (group, group_lanes) in lanes.iter().enumerate() {
        let mask = dots(group_lanes).cmple(within).bitmask();
        if mask != 0 {
            return (4 * group + mask.trailing_zeros() as usize).min(hull.planes().len() - 1);
        }
    }
    0
}

/// Clips `incident` by `reference` (both in A's frame), keeps at most four points within
/// `margin` of the reference plane and appends them to `manifold` (positions in A's frame).
fn add_face_contact(
    reference: &PosedFace,
    incident: &PosedFace,
    kind: u32,
    margin: f32,
    tie_tolerance: f32,
    manifold: &mut Manifold,
) {
    if ClipPolygon::<QUAD_CLIP_VERTICES>::fits(reference, incident) {
        let mut polygon = ClipPolygon::<QUAD_CLIP_VERTICES>::new();
        clip_incident_face(reference, incident, kind, &mut polygon);
        add_clipped_points(reference, polygon.vertices(), margin, tie_tolerance, manifold);
    } else if ClipPolygon::<SMALL_CLIP_VERTICES>::fits(reference, incident) {
        let mut polygon = ClipPolygon::<SMALL_CLIP_VERTICES>::new();
        clip_incident_face(reference, incident, kind, &mut polygon);
        add_clipped_points(reference, polygon.vertices(), margin, tie_tolerance, manifold);
    } else {
        let mut polygon = ClipPolygon::<MAX_CLIP_VERTICES>::new();
        clip_incident_face(reference, incident, kind, &mut polygon);
        add_clipped_points(reference, polygon.vertices(), margin, tie_tolerance, manifold);
    }
}

/// Keeps at most four of the clipped `vertices` (A's frame) within `margin` of the reference
/// plane and appends them to `manifold`, each midway between the incident point and its
/// projection on the plane.
fn add_clipped_points(
    reference: &PosedFace,
    vertices: &[ClipVertex],
    margin: f32,
    tie_tolerance: f32,
    manifold: &mut Manifold,
) {
    let plane = reference.plane();
    for &i in reduce_contact_points(vertices, &plane, margin, tie_tolerance).indices() {
        let separation = plane.signed_distance(vertices[i].position);
        manifold.push(ContactPoint {
            position: (vertices[i].position - plane.normal * (0.5 * separation)).as_dvec3(),
            depth: -separation,
            id: vertices[i].id,
        });
    }
}

//! What the features a point's id names say about it: how much its position amplifies
//! rounding (its conditioning), whether it lies on them, and which other feature ties with
//! them (another support vertex as far along the normal).

use glam::{DVec3, Vec3};

use super::OTHER_POINT_CONDITIONING;
use crate::constants::{INCIDENT_FACE_TOLERANCE, PARALLEL_EDGE_SINE};
use crate::hull::ConvexHull;
use crate::manifold::{ContactPoint, FeatureId, Manifold};
use crate::pose::Pose;
use crate::shape::Shape;
use crate::shape::compound::child_pose;
use crate::trimesh::Triangle;

/// A pair's two shapes with their world poses, in the given order (A, B): what the feature
/// tests read of a pair.
#[derive(Clone, Copy)]
pub(super) struct PosedPair<'a> {
    /// A's shape and pose.
    pub(super) a: (&'a Shape, &'a Pose),
    /// B's shape and pose.
    pub(super) b: (&'a Shape, &'a Pose),
}

impl<'a> PosedPair<'a> {
    /// The two shapes as hulls (given order), when both are hulls or boxes.
    pub(super) fn hulls(&self) -> Option<(&'a ConvexHull, &'a ConvexHull)> {
        self.a.0.as_hull().zip(self.b.0.as_hull())
    }
}

/// Rule 3's conditioning of a clipped or edge-pair point with id `id` (kind not `OTHER`),
/// dimensionless, at least 1: 1 / the sine of the angle, seen along world `normal`, between
/// the two lines the point lies on (at most 1 / [`PARALLEL_EDGE_SINE`]): an edge pair's two
/// edges; a cut point's reference side edge and incident edge (each leaving the named vertex
/// in its face's loop); a reference corner's two edges on its face; none for a kept incident
/// vertex (exact), told apart by its named face being the reference face (along the normal
/// to 1e-6) and no face at the vertex being one.
pub(super) fn conditioning(pair: PosedPair, normal: Vec3, id: FeatureId) -> f32 {
    let Some((hull_a, hull_b)) = pair.hulls() else {
        return OTHER_POINT_CONDITIONING;
    };
    let a = (hull_a, pair.a.1);
    let b = (hull_b, pair.b.1);
    // A's contact faces face along the normal, B's against it.
    let (reference, other, reference_facing) = if id.kind() == FeatureId::FACE_A {
        (a, b, normal)
    } else {
        (b, a, -normal)
    };
    let other_facing = -reference_facing;
    let unit = |v: Vec3| v.normalize_or_zero();
    let sine = match (id.kind(), id.flag()) {
        // Closest points of two lines: 1 / the sine of their angle.
        (FeatureId::EDGE_PAIR, _) => edge_line(a, id.high())
            .iter()
            .flat_map(|u| {
                edge_line(b, id.low())
                    .into_iter()
                    .map(move |v| unit(*u).cross(unit(v)).length())
            })
            .fold(1.0f32, f32::min),
        // An incident edge cut by a side plane (the reference edge and the normal): the cut
        // slides along the edge by 1 / the sine of the edge's angle to the plane.
        (_, true) => {
            let sides: Vec<Vec3> = leaving_lines(reference, id.high(), reference_facing)
                .iter()
                .map(|&e| unit(e.cross(normal)))
                .collect();
            leaving_lines(other, id.low(), other_facing)
                .iter()
                .flat_map(|&e| sides.iter().map(move |&side| unit(e).dot(side).abs()))
                .fold(1.0f32, f32::min)
        }
        (_, false) => {
            // A kept incident vertex (exact) where only the named face, the reference one,
            // lies along the normal; else a reference corner, where two side planes meet at
            // the angle of its two edges.
            let exactly = 1.0 - 1.0e-6;
            let (named_hull, named_pose) = if id.kind() == FeatureId::FACE_A { a } else { b };
            let named_along = named_hull
                .planes()
                .get(id.high() as usize)
                .is_some_and(|plane| (named_pose.rotation * plane.normal).dot(reference_facing) >= exactly);
            // (The named face is on the reference body of the id's kind; the vertex on the
            // other, which faces the opposite way.)
            let corner_along = faces_at(other.0, other.1, id.low(), other_facing, 0.0)
                .first()
                .is_some_and(|&f| {
                    (other.1.rotation * other.0.planes()[f].normal).dot(other_facing) >= exactly
                });
            if named_along && !corner_along {
                return 1.0;
            }
            match corner_lines(other, id.low(), other_facing)[..] {
                [u, v] => unit(u).cross(unit(v)).length(),
                _ => 1.0,
            }
        }
    };
    1.0 / sine.max(PARALLEL_EDGE_SINE)
}

/// True when the surface points of `p` ([`surface_points`]) lie on the features `id` names,
/// within its conditioning × `tolerance`: a face id's vertex, a cut id's two edge lines (each
/// leaving its named vertex in a contact face's loop), an edge pair's two edge lines. Never for
/// kind `OTHER`.
pub(super) fn on_features(
    pair: PosedPair,
    normal: Vec3,
    p: &ContactPoint,
    id: FeatureId,
    tolerance: f32,
) -> bool {
    let Some((hull_a, hull_b)) = pair.hulls() else {
        return false;
    };
    let (point_a, point_b) = surface_points(normal, p);
    let on_a = (hull_a, pair.a.1, point_a);
    let on_b = (hull_b, pair.b.1, point_b);
    let allowed = f64::from(conditioning(pair, normal, id) * tolerance);
    // Distance from a surface point to the line of an edge (vertex indices).
    let to_line = |(hull, pose, point): (&ConvexHull, &Pose, DVec3), [s, e]: [u32; 2]| {
        let start = pose.transform_point(hull.vertices()[s as usize]);
        line_distance(
            point,
            start,
            pose.transform_point(hull.vertices()[e as usize]) - start,
        )
    };
    // A cut's edge leaves its named vertex in the loop of a face facing the contact.
    let leaving = |(hull, pose, point): (&ConvexHull, &Pose, DVec3), vertex: u32, facing: Vec3| {
        (vertex as usize) < hull.vertices().len()
            && leaving_lines((hull, pose), vertex, facing)
                .iter()
                .any(|&direction| {
                    let start = pose.transform_point(hull.vertices()[vertex as usize]);
                    line_distance(point, start, direction.as_dvec3()) <= allowed
                })
    };
    let (reference, other, facing) = if id.kind() == FeatureId::FACE_A {
        (on_a, on_b, normal)
    } else {
        (on_b, on_a, -normal)
    };
    match (id.kind(), id.flag()) {
        (FeatureId::OTHER, _) => false,
        (FeatureId::EDGE_PAIR, _) => {
            let edge = |side: (&ConvexHull, &Pose, DVec3), index: u32| {
                side.0
                    .edges()
                    .get(index as usize)
                    .is_some_and(|e| to_line(side, e.vertices) <= allowed)
            };
            edge(on_a, id.high()) && edge(on_b, id.low())
        }
        (_, true) => leaving(reference, id.high(), facing) && leaving(other, id.low(), -facing),
        (_, false) => other
            .0
            .vertices()
            .get(id.low() as usize)
            .is_some_and(|&v| other.1.transform_point(v).distance(other.2) <= allowed),
    }
}

/// True when the surface points of `p` ([`surface_points`]) lie within `tolerance` of A's and
/// B's surfaces.
pub(super) fn on_both_surfaces(pair: PosedPair, normal: Vec3, p: &ContactPoint, tolerance: f32) -> bool {
    let (point_a, point_b) = surface_points(normal, p);
    surface_distance(pair.a.0, pair.a.1, point_a) <= f64::from(tolerance)
        && surface_distance(pair.b.0, pair.b.1, point_b) <= f64::from(tolerance)
}

/// Rule 4 for a closest-point contact of two hulls (one point of kind `OTHER` each side,
/// ids naming the support vertices of A along the normal and of B against it): the GPU's
/// vertices support as far along the reference's normal as the reference's vertices, within
/// `tolerance` (the pair's `τ`, length units) plus the two normals' difference × the hull's
/// reach (the CPU's own choice was a tie). The reference point's id, or `None`.
pub(super) fn support_tie(
    pair: PosedPair,
    g: &Manifold,
    r: &Manifold,
    p: &ContactPoint,
    tolerance: f32,
) -> Option<FeatureId> {
    let (Some((hull_a, hull_b)), [q]) = (pair.hulls(), r.points()) else {
        return None;
    };
    if p.id.kind() != FeatureId::OTHER
        || q.id.kind() != FeatureId::OTHER
        || g.point_count() != 1
        || p.position.distance(q.position) as f32 > OTHER_POINT_CONDITIONING * tolerance
    {
        return None;
    }
    let turn = g.normal.distance(r.normal);
    let ties = |hull: &ConvexHull, pose: &Pose, direction: Vec3, mine: u32, theirs: u32| {
        let direction = pose.rotation.inverse() * direction;
        let reach = hull.centroid().length() + hull.radius();
        let along = |v: u32| hull.vertices().get(v as usize).map(|v| v.dot(direction));
        match (along(mine), along(theirs)) {
            (Some(x), Some(y)) => (x - y).abs() <= tolerance + 2.0 * turn * reach,
            _ => false,
        }
    };
    (ties(hull_a, pair.a.1, r.normal, p.id.high(), q.id.high())
        && ties(hull_b, pair.b.1, -r.normal, p.id.low(), q.id.low()))
    .then_some(q.id)
}

/// Rule 4 for a point at a vertex (face kinds, flag 0: the incident body's deepest vertex
/// or a kept incident vertex): the GPU's point lies at its vertex, and reference `r` has a
/// point on the same face at another vertex of the same depth, within `tolerance` (two
/// vertices equally deep, as on an edge parallel to the face: rounding picks one). That
/// point's id, or `None`.
pub(super) fn vertex_tie(
    pair: PosedPair,
    g: &Manifold,
    r: &Manifold,
    p: &ContactPoint,
    tolerance: f32,
) -> Option<FeatureId> {
    let (hull_a, hull_b) = pair.hulls()?;
    if p.id.kind() > FeatureId::FACE_B || p.id.flag() {
        return None;
    }
    // The vertex is on the body opposite the named face: B for FACE_A, A for FACE_B.
    let (point_a, point_b) = surface_points(g.normal, p);
    let (hull, pose, surface) = if p.id.kind() == FeatureId::FACE_A {
        (hull_b, pair.b.1, point_b)
    } else {
        (hull_a, pair.a.1, point_a)
    };
    let at_vertex = hull
        .vertices()
        .get(p.id.low() as usize)
        .is_some_and(|&v| pose.transform_point(v).distance(surface) as f32 <= tolerance);
    if !at_vertex {
        return None;
    }
    r.points()
        .iter()
        .find(|q| {
            q.id.kind() == p.id.kind()
                && !q.id.flag()
                && q.id.high() == p.id.high()
                && q.id != p.id
                && (q.depth - p.depth).abs() <= tolerance
        })
        .map(|q| q.id)
}

/// The points on A's and on B's surface that contact point `p` lies midway between, world:
/// `position ± normal × depth / 2` (`normal` from A toward B).
fn surface_points(normal: Vec3, p: &ContactPoint) -> (DVec3, DVec3) {
    let half = normal.as_dvec3() * f64::from(0.5 * p.depth);
    (p.position + half, p.position - half)
}

/// The world direction of `hull`'s edge `index` (none when there is no such edge).
fn edge_line((hull, pose): (&ConvexHull, &Pose), index: u32) -> Vec<Vec3> {
    hull.edges()
        .get(index as usize)
        .map(|e| {
            pose.rotation
                * (hull.vertices()[e.vertices[1] as usize] - hull.vertices()[e.vertices[0] as usize])
        })
        .into_iter()
        .collect()
}

/// The faces of `hull` (posed by `pose`) holding `vertex` whose outward normals lie along world
/// `facing` within `within` of the best of them (in cosine), best first.
fn faces_at(hull: &ConvexHull, pose: &Pose, vertex: u32, facing: Vec3, within: f32) -> Vec<usize> {
    let local_normal = pose.rotation.inverse() * facing;
    let along = |f: usize| hull.planes()[f].normal.dot(local_normal);
    let mut faces: Vec<usize> = (0..hull.faces().len())
        .filter(|&f| hull.face_loop(f).contains(&vertex))
        .collect();
    faces.sort_by(|&f, &g| along(g).total_cmp(&along(f)));
    let best = faces.first().map_or(0.0, |&f| along(f));
    faces.retain(|&f| along(f) >= best - within);
    faces
}

/// The world direction from `vertex` to the vertex before (`step` = -1) or after (+1) it in
/// `face`'s loop.
fn loop_edge(hull: &ConvexHull, pose: &Pose, face: usize, vertex: u32, step: isize) -> Vec3 {
    let face_loop = hull.face_loop(face);
    let n = face_loop.len() as isize;
    let at = face_loop
        .iter()
        .position(|&v| v == vertex)
        .expect("the face holds the vertex") as isize;
    let other = face_loop[(at + step).rem_euclid(n) as usize];
    pose.rotation * (hull.vertices()[other as usize] - hull.vertices()[vertex as usize])
}

/// A reference corner's two lines: the edges at `vertex` of the face holding it that faces
/// most along `facing` (world).
fn corner_lines((hull, pose): (&ConvexHull, &Pose), vertex: u32, facing: Vec3) -> Vec<Vec3> {
    faces_at(hull, pose, vertex, facing, 0.0)
        .first()
        .map(|&face| {
            vec![
                loop_edge(hull, pose, face, vertex, -1),
                loop_edge(hull, pose, face, vertex, 1),
            ]
        })
        .unwrap_or_default()
}

/// The edges leaving `vertex` (loop order) on the faces that may have been the reference or
/// incident face there: those facing along `facing` (world) within
/// [`INCIDENT_FACE_TOLERANCE`] of the best (the incident face choice's own tie tolerance).
fn leaving_lines((hull, pose): (&ConvexHull, &Pose), vertex: u32, facing: Vec3) -> Vec<Vec3> {
    faces_at(hull, pose, vertex, facing, INCIDENT_FACE_TOLERANCE)
        .into_iter()
        .map(|face| loop_edge(hull, pose, face, vertex, 1))
        .collect()
}

/// How far world point `p` lies from the surface of `shape` at `pose` (a hull's largest face
/// plane distance, exact near its faces), f64.
fn surface_distance(shape: &Shape, pose: &Pose, p: DVec3) -> f64 {
    let p = pose.rotation.as_dquat().inverse() * (p - pose.translation);
    let distance = match shape {
        Shape::Hull(_) | Shape::Cuboid(_) | Shape::Cylinder(_) => shape
            .as_hull()
            .expect("a hull, box or cylinder")
            .planes()
            .iter()
            .map(|plane| plane.normal.as_dvec3().dot(p) - f64::from(plane.offset))
            .fold(f64::NEG_INFINITY, f64::max),
        Shape::Sphere(s) => p.length() - f64::from(s.radius),
        Shape::Capsule(c) => {
            let h = f64::from(c.half_height);
            p.distance(DVec3::new(0.0, p.y.clamp(-h, h), 0.0)) - f64::from(c.radius)
        }
        Shape::HalfSpace(h) => h.normal.as_dvec3().dot(p) - f64::from(h.offset),
        Shape::TriMesh(mesh) => (0..mesh.triangles().len() as u32)
            .map(|t| triangle_distance(&mesh.triangle(t), p))
            .fold(f64::INFINITY, f64::min),
        // The nearest child's surface (`p` is in the compound's frame here).
        Shape::Compound(c) => c
            .children()
            .iter()
            .map(|child| surface_distance(&child.shape, &child_pose(&child.pose), p))
            .fold(f64::INFINITY, f64::min),
    };
    distance.abs()
}

/// Distance from `p` to the closed triangle `triangle` (same frame), f64: to its plane over
/// the triangle, else to the nearest of its edges.
fn triangle_distance(triangle: &Triangle, p: DVec3) -> f64 {
    let corners = triangle.vertices.map(Vec3::as_dvec3);
    if triangle.contains_projection(p.as_vec3()) {
        return triangle.normal.as_dvec3().dot(p - corners[0]).abs();
    }
    (0..3)
        .map(|k| {
            let (a, b) = (corners[k], corners[(k + 1) % 3]);
            let t = ((p - a).dot(b - a) / (b - a).length_squared()).clamp(0.0, 1.0);
            p.distance(a + (b - a) * t)
        })
        .fold(f64::INFINITY, f64::min)
}

/// Distance from `point` to the line through `start` along `direction` (any length), f64.
fn line_distance(point: DVec3, start: DVec3, direction: DVec3) -> f64 {
    let direction = direction.normalize();
    let offset = point - start;
    (offset - direction * offset.dot(direction)).length()
}

//! One mesh triangle (body A, the mesh's frame) against a sphere (body B).
//!
//! 1. The centre's height over the triangle's plane: beyond `radius + margin`, or the sphere
//!    wholly behind the plane, no contact. Centre behind the plane (one-sided): a face contact
//!    when the centre projects into the triangle, else none.
//! 2. In front: GJK's closest point of the triangle to the centre, and the feature it lies on.
//!    Its direction is the normal when [`TriMesh::allows_normal`] accepts it on that feature;
//!    else (an inactive edge or corner: a ghost) no contact unless the centre projects into the
//!    triangle (then the face normal and the height): the neighbour across it answers.
//! 3. One point midway between the sphere's surface and the triangle along the normal.
//!
//! Id: kind `OTHER`, B's field 0; A's field: flag 0 and 3 for the face, flag 0 and `k` for
//! corner `k`, flag 1 and `k` for edge `k` (the closest feature). WGSL twin:
//! `collide_triangle_sphere` in shaders/narrowphase/triangle_contact.wgsl.

use glam::Vec3;

use crate::manifold::{ContactPoint, FeatureId, Manifold};
use crate::query::gjk::closest_points;
use crate::trimesh::{TriMesh, TriangleFeature};

/// Barycentric weights below this (dimensionless) put GJK's closest point on an edge or corner.
pub(crate) const FEATURE_WEIGHT_TOLERANCE: f32 = 1.0e-5;

/// The one-point manifold (A's frame, the mesh's) of triangle `index` of `mesh` and a sphere of
/// `radius` centred at `centre` (A's frame), or `None` beyond `margin`.
pub(crate) fn collide_triangle_sphere(
    mesh: &TriMesh,
    index: u32,
    centre: Vec3,
    radius: f32,
    margin: f32,
) -> Option<Manifold> {
    let triangle = mesh.triangle(index);
    let n = triangle.normal;
    let height = n.dot(centre - triangle.vertices[0]);
    if height - radius > margin || height + radius < 0.0 {
        return None;
    }
    let closest = (height > 0.0)
        .then(|| closest_points(&triangle, &centre))
        .flatten();
    let (normal, separation, feature) = match closest {
        Some(c) => {
            let feature = triangle.feature_at(c.point_a, FEATURE_WEIGHT_TOLERANCE);
            if feature != TriangleFeature::Face && mesh.allows_normal(index, feature, c.direction) {
                (c.direction, c.distance - radius, feature)
            } else if triangle.contains_projection(centre) {
                (n, height - radius, TriangleFeature::Face)
            } else {
                // A refused normal beside the triangle: the neighbour across that feature answers.
                return None;
            }
        }
        // Touching or behind: the face, where the centre projects into the triangle.
        None if triangle.contains_projection(centre) => (n, height - radius, TriangleFeature::Face),
        None => return None,
    };
    if separation > margin {
        return None;
    }
    let on_sphere = centre - normal * radius;
    let mut manifold = Manifold::new(normal, separation);
    manifold.push(ContactPoint {
        position: (on_sphere - normal * (0.5 * separation)).as_dvec3(),
        depth: -separation,
        id: primitive_id(feature, 0),
    });
    Some(manifold)
}

/// The per-triangle id of a primitive contact: kind `OTHER`, A's field the triangle feature
/// (see the module docs), B's field `body_feature`.
pub(crate) fn primitive_id(feature: TriangleFeature, body_feature: u32) -> FeatureId {
    let (flag, a) = match feature {
        TriangleFeature::Face => (false, 3),
        TriangleFeature::Vertex(k) => (false, k as u32),
        TriangleFeature::Edge(k) => (true, k as u32),
    };
    FeatureId::new(FeatureId::OTHER, flag, a, body_feature)
}

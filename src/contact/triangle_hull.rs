//! One mesh triangle (body A, the mesh's frame) against a hull or box (body B).
//!
//! 1. The one-sided triangle SAT ([`query_triangle_hull`]) with the mesh's active-edge rule
//!    ([`TriMesh::allows_normal`]) choosing among the axes.
//! 2. Triangle face axis: B's most anti-parallel face clipped by the triangle's sides; hull face
//!    axis: the triangle clipped by that face's sides ([`clip_by_reference_sides`]).
//! 3. The clipped points within the margin, midway between the incident point and the
//!    reference plane (the mesh merge reduces every triangle's points together).
//! 4. Edge axis: one point midway between the closest points of the two edges.
//! 5. Apart (an axis, refused or not, separates by more than [`TRIMESH_APART_TOLERANCE`] × B's
//!    size): no point's separation below that axis's, so a refused axis's gap never turns into a
//!    depth and the separation is the margin's to report, not to change (docs/design/trimesh.md).
//!
//! Ids: the hull routine's (`FACE_A` with the triangle as reference, `FACE_B` with the hull's
//! face, `EDGE_PAIR`), the triangle's features numbered 0..=2, its face 0. WGSL twin:
//! `collide_triangle_hull` in shaders/narrowphase/triangle_contact.wgsl.

use glam::Vec3;

use crate::constants::{AXIS_PREFERENCE_TOLERANCE, TRIMESH_APART_TOLERANCE};
use crate::contact::clip::{
    ClipPolygon, ClipVertex, EdgeCarrier, MAX_CLIP_VERTICES, ReferencePolygon, clip_by_reference_sides,
};
use crate::contact::hull_hull::most_antiparallel_face;
use crate::hull::{ConvexHull, Plane};
use crate::manifold::{ContactPoint, FeatureId};
use crate::pose::Isometry;
use crate::query::sat::SatAxis;
use crate::query::sat_triangle::{PosedHull, query_triangle_hull};
use crate::query::segment::closest_points_segments;
use crate::trimesh::TriMesh;

/// Clip buffer for a triangle against a face of at most 5 vertices (a box face).
const SMALL_CLIP_VERTICES: usize = 8;

/// The contact (A's frame, the mesh's; normal from the mesh toward B, separation: of the deepest
/// point for a face axis) of triangle
/// `index` of `mesh` and `hull` posed at `b_in_a` (`posed`: the same, [`PosedHull::pose`]), its
/// points (every clipped point within the margin: the merge reduces them) appended to `out`;
/// `None` beyond `margin` or when the clip keeps no point. `tolerance`: face preference and
/// feature ties (length units).
#[allow(clippy::too_many_arguments)]
pub(crate) fn collide_triangle_hull(
    mesh: &TriMesh,
    index: u32,
    hull: &ConvexHull,
    posed: &mut PosedHull,
    b_in_a: &Isometry,
    margin: f32,
    tolerance: f32,
    out: &mut Vec<ContactPoint>,
) -> Option<(Vec3, f32)> {
    let triangle = mesh.triangle(index);
    let sides = triangle.sides();
    let allows = |feature, normal| mesh.allows_normal_by(index, feature, normal, |k| sides[k]);
    let sat = query_triangle_hull(&triangle, &sides, hull, posed, b_in_a, margin, tolerance, allows)?;
    let posed_vertices = posed.vertices();
    let first = out.len();
    let corners = |i: usize| triangle.vertices[i];
    // 5. The least separation a point may show; a gap within rounding of zero is none.
    let apart = TRIMESH_APART_TOLERANCE / AXIS_PREFERENCE_TOLERANCE * tolerance;
    let floor = if sat.max_separation > apart {
        sat.max_separation
    } else {
        f32::NEG_INFINITY
    };
    match sat.axis {
        SatAxis::FaceA(_) => {
            let face = most_antiparallel_face(hull, b_in_a, triangle.normal);
            let reference = ReferencePolygon {
                normal: triangle.normal,
                loop_ids: &[0, 1, 2],
                corner: corners,
            };
            let plane = Plane {
                normal: triangle.normal,
                offset: triangle.normal.dot(triangle.vertices[0]),
            };
            let incident = hull.face_loop(face).iter().map(|&v| {
                let position = posed_vertices[v as usize];
                (position, FeatureId::new(FeatureId::FACE_A, false, 0, v), v)
            });
            let count = hull.face_loop(face).len();
            clip_and_add(
                &reference,
                incident,
                count,
                face as u32,
                FeatureId::FACE_A,
                &plane,
                margin,
                floor,
                out,
            );
        }
        SatAxis::FaceB(face) => {
            let face_loop = hull.face_loop(face as usize);
            let normal = posed.plane(face as usize).normal;
            let reference = ReferencePolygon {
                normal,
                loop_ids: face_loop,
                corner: |i: usize| posed_vertices[face_loop[i] as usize],
            };
            let plane = Plane {
                normal,
                offset: normal.dot(posed_vertices[face_loop[0] as usize]),
            };
            let incident = (0..3u32).map(|k| {
                (
                    triangle.vertices[k as usize],
                    FeatureId::new(FeatureId::FACE_B, false, face, k),
                    k,
                )
            });
            clip_and_add(
                &reference,
                incident,
                3,
                0,
                FeatureId::FACE_B,
                &plane,
                margin,
                floor,
                out,
            );
        }
        SatAxis::EdgePair { edge_a, edge_b } => {
            let (k, edge) = (edge_a as usize, hull.edges()[edge_b as usize]);
            let (a0, a1) = (triangle.vertices[k], triangle.vertices[(k + 1) % 3]);
            let [b0, b1] = edge.vertices.map(|v| posed_vertices[v as usize]);
            let (s, t) = closest_points_segments(a0, a1, b0, b1);
            out.push(ContactPoint {
                position: (0.5 * (a0.lerp(a1, s) + b0.lerp(b1, t))).as_dvec3(),
                depth: -sat.separation.max(floor),
                id: FeatureId::new(FeatureId::EDGE_PAIR, false, edge_a, edge_b),
            });
        }
    }
    // Face axes: the deepest clipped point, which lies over the triangle. The axis value may come
    // from a part of B beyond a refused edge, over a neighbour that answers for it.
    let separation = match sat.axis {
        SatAxis::EdgePair { .. } => sat.separation.max(floor),
        _ => out[first..]
            .iter()
            .map(|p| -p.depth)
            .fold(f32::INFINITY, f32::min),
    };
    (out.len() > first).then_some((sat.normal, separation))
}

/// Clips the incident polygon (`count` vertices: position, id, and the start vertex naming the
/// edge leaving it) by `reference`'s sides and appends at most four points within `margin` of
/// `plane` (the reference plane) to `out`, each midway to the plane, separations raised to
/// `floor`.
#[allow(clippy::too_many_arguments)]
fn clip_and_add<F: Fn(usize) -> Vec3>(
    reference: &ReferencePolygon<F>,
    incident: impl Iterator<Item = (Vec3, FeatureId, u32)>,
    count: usize,
    incident_face: u32,
    kind: u32,
    plane: &Plane,
    margin: f32,
    floor: f32,
    out: &mut Vec<ContactPoint>,
) {
    // Both faces' vertex counts bound the clipped polygon.
    if count + reference.loop_ids.len() <= SMALL_CLIP_VERTICES {
        let mut polygon = ClipPolygon::<SMALL_CLIP_VERTICES>::new();
        clip_into(reference, incident, incident_face, kind, &mut polygon);
        add_points(polygon.vertices(), plane, margin, floor, out);
    } else {
        let mut polygon = ClipPolygon::<MAX_CLIP_VERTICES>::new();
        clip_into(reference, incident, incident_face, kind, &mut polygon);
        add_points(polygon.vertices(), plane, margin, floor, out);
    }
}

/// Fills `polygon` with the incident vertices and clips it.
fn clip_into<const N: usize, F: Fn(usize) -> Vec3>(
    reference: &ReferencePolygon<F>,
    incident: impl Iterator<Item = (Vec3, FeatureId, u32)>,
    incident_face: u32,
    kind: u32,
    polygon: &mut ClipPolygon<N>,
) {
    polygon.clear();
    for (position, id, start) in incident {
        polygon.push(ClipVertex { position, id }, EdgeCarrier::Incident(start));
    }
    clip_by_reference_sides(reference, incident_face, kind, polygon);
}

/// Appends the `vertices` within `margin` of `plane`, midway to it, each separation (length
/// units) raised to `floor`.
fn add_points(vertices: &[ClipVertex], plane: &Plane, margin: f32, floor: f32, out: &mut Vec<ContactPoint>) {
    for v in vertices {
        let height = plane.signed_distance(v.position);
        let separation = height.max(floor);
        if separation > margin {
            continue;
        }
        out.push(ContactPoint {
            position: (v.position - plane.normal * (0.5 * height)).as_dvec3(),
            depth: -separation,
            id: v.id,
        });
    }
}

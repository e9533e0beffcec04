//! Turns vertices plus counter-clockwise face loops into the flat hull layout: face planes,
//! unique edges with their two faces, centroid and radius. Callers have checked the input.

use std::collections::HashMap;

use glam::{DVec3, Vec3, Vec4};

use super::{ConvexHull, Edge, EdgeLanes, Face, Plane};

/// The factor `query::bounds::max_on_arcs` scales a positive end value by for the arc
/// from the unit `u` to the unit `v`: `1 / cos(β / 2)`, `β` the arc's angle (dimensionless, at
/// least 1), rounded up. Formed in f64 with a margin for the f32 rounding of `u` and `v`; finite
/// even for opposite normals (then very large). Stored per edge in [`super::EdgeLanes::stretch`].
pub fn arc_stretch(u: Vec3, v: Vec3) -> f32 {
    let (u, v) = (u.as_dvec3(), v.as_dvec3());
    let cosine = u.dot(v) / (u.length() * v.length());
    let half_cosine_sq = (0.5 * (1.0 + cosine) - ARC_STRETCH_ROUNDING).max(1.0e-30);
    (half_cosine_sq.sqrt().recip() * (1.0 + ARC_STRETCH_ROUNDING)) as f32
}

/// Relative allowance of [`arc_stretch`] for the rounding of f32 unit normals (a few ulps).
const ARC_STRETCH_ROUNDING: f64 = 1.0e-6;

/// Builds the hull from vertices and outward (counter-clockwise) loops that together form a
/// closed convex polyhedron. Every vertex must be used by some face.
pub(super) fn build(vertices: Vec<Vec3>, loops: &[Vec<u32>]) -> ConvexHull {
    let mut face_vertices = Vec::with_capacity(loops.iter().map(Vec::len).sum());
    let mut faces = Vec::with_capacity(loops.len());
    let mut planes = Vec::with_capacity(loops.len());
    for face_loop in loops {
        faces.push(Face {
            first: face_vertices.len() as u32,
            count: face_loop.len() as u32,
        });
        face_vertices.extend_from_slice(face_loop);
        planes.push(face_plane(&vertices, face_loop));
    }

    let mut edge_index: HashMap<(u32, u32), usize> = HashMap::new();
    let mut edges: Vec<Edge> = Vec::new();
    for (face, face_loop) in loops.iter().enumerate() {
        for (i, &from) in face_loop.iter().enumerate() {
            let to = face_loop[(i + 1) % face_loop.len()];
            let key = (from.min(to), from.max(to));
            let slot = *edge_index.entry(key).or_insert_with(|| {
                edges.push(Edge {
                    vertices: [key.0, key.1],
                    faces: [u32::MAX; 2],
                });
                edges.len() - 1
            });
            // faces[0] walks vertices[0] -> vertices[1].
            let side = if from == key.0 { 0 } else { 1 };
            edges[slot].faces[side] = face as u32;
        }
    }

    let centroid = volume_centroid(&vertices, loops);
    let radius = vertices
        .iter()
        .map(|v| v.distance(centroid))
        .fold(0.0f32, f32::max);
    let vertex_lanes = vertex_lanes(&vertices);
    let edge_directions = edges
        .iter()
        .map(|e| (vertices[e.vertices[1] as usize] - vertices[e.vertices[0] as usize]).normalize())
        .collect();
    let edge_lanes = edge_lanes(&vertices, &planes, &edges);
    let edge_records = edges
        .iter()
        .map(|e| {
            let [s, t] = e.vertices.map(|v| vertices[v as usize]);
            let [n, m] = e.faces.map(|f| planes[f as usize].normal);
            [
                Vec4::new(s.x, s.y, s.z, t.x),
                Vec4::new(t.y, t.z, n.x, n.y),
                Vec4::new(n.z, m.x, m.y, m.z),
            ]
        })
        .collect();
    let plane_lanes = planes
        .chunks(4)
        .map(|group| {
            let plane = |i: usize| group[i.min(group.len() - 1)];
            let lane = |value: &dyn Fn(Plane) -> f32| {
                Vec4::new(value(plane(0)), value(plane(1)), value(plane(2)), value(plane(3)))
            };
            [
                lane(&|p| p.normal.x),
                lane(&|p| p.normal.y),
                lane(&|p| p.normal.z),
                lane(&|p| p.offset),
            ]
        })
        .collect();
    let inner_radius = planes
        .iter()
        .map(|plane| plane.offset - plane.normal.dot(centroid))
        .fold(f32::INFINITY, f32::min);
    ConvexHull {
        vertices,
        vertex_lanes,
        face_vertices,
        faces,
        planes,
        edges,
        edge_directions,
        plane_lanes,
        edge_lanes,
        edge_records,
        centroid,
        radius,
        inner_radius,
    }
}

/// The edges four at a time by coordinate ([`EdgeLanes`]); the last group repeats its last
/// edge in the unused lanes.
fn edge_lanes(vertices: &[Vec3], planes: &[Plane], edges: &[Edge]) -> Vec<EdgeLanes> {
    edges
        .chunks(4)
        .map(|group| {
            let edge = |i: usize| group[i.min(group.len() - 1)];
            let lanes = |value: &dyn Fn(Edge) -> Vec3| {
                let axis = |k: usize| {
                    Vec4::new(
                        value(edge(0))[k],
                        value(edge(1))[k],
                        value(edge(2))[k],
                        value(edge(3))[k],
                    )
                };
                [axis(0), axis(1), axis(2)]
            };
            let normal = |e: Edge, side: usize| planes[e.faces[side] as usize].normal;
            let stretch = |i: usize| arc_stretch(normal(edge(i), 0), normal(edge(i), 1));
            EdgeLanes {
                start: lanes(&|e| vertices[e.vertices[0] as usize]),
                normal0: lanes(&|e| normal(e, 0)),
                normal1: lanes(&|e| normal(e, 1)),
                stretch: Vec4::new(stretch(0), stretch(1), stretch(2), stretch(3)),
            }
        })
        .collect()
}

/// The vertices four at a time by coordinate (`[x, y, z]`, lane `i` = vertex `4 * group + i`);
/// the last group is padded with copies of the last vertex, which leave minima unchanged.
fn vertex_lanes(vertices: &[Vec3]) -> Vec<[Vec4; 3]> {
    vertices
        .chunks(4)
        .map(|group| {
            let v = |i: usize| group[i.min(group.len() - 1)];
            let lane = |axis: usize| Vec4::new(v(0)[axis], v(1)[axis], v(2)[axis], v(3)[axis]);
            [lane(0), lane(1), lane(2)]
        })
        .collect()
}

/// Outward plane of a planar loop: Newell's normal (robust for polygons with nearly collinear
/// vertices), offset averaged over the loop; computed in f64.
pub(super) fn face_plane(vertices: &[Vec3], face_loop: &[u32]) -> Plane {
    let (area_normal, center) = newell_normal(vertices, face_loop);
    let normal = area_normal.normalize_or_zero();
    Plane {
        normal: normal.as_vec3(),
        offset: normal.dot(center) as f32,
    }
}

/// Newell's normal of a loop (outward for a counter-clockwise loop, length twice the area) and
/// the mean of its vertices, in f64.
pub(super) fn newell_normal(vertices: &[Vec3], face_loop: &[u32]) -> (DVec3, DVec3) {
    let mut normal = DVec3::ZERO;
    let mut center = DVec3::ZERO;
    for (i, &a) in face_loop.iter().enumerate() {
        let p = vertices[a as usize].as_dvec3();
        let q = vertices[face_loop[(i + 1) % face_loop.len()] as usize].as_dvec3();
        normal += DVec3::new(
            (p.y - q.y) * (p.z + q.z),
            (p.z - q.z) * (p.x + q.x),
            (p.x - q.x) * (p.y + q.y),
        );
        center += p;
    }
    (normal, center / face_loop.len() as f64)
}

/// Centroid of the solid, from a fan of tetrahedra (f64 for well-conditioned sums).
fn volume_centroid(vertices: &[Vec3], loops: &[Vec<u32>]) -> Vec3 {
    let origin = vertices[0].as_dvec3();
    let mut volume = 0.0;
    let mut moment = DVec3::ZERO;
    for face_loop in loops {
        let a = vertices[face_loop[0] as usize].as_dvec3() - origin;
        for w in face_loop[1..].windows(2) {
            let b = vertices[w[0] as usize].as_dvec3() - origin;
            let c = vertices[w[1] as usize].as_dvec3() - origin;
            let v = a.dot(b.cross(c)); // six times the signed tetrahedron volume
            volume += v;
            moment += v * (a + b + c); // (origin + a + b + c) / 4 in shifted coordinates
        }
    }
    if volume.abs() <= f64::MIN_POSITIVE {
        let mean = vertices.iter().map(|v| v.as_dvec3()).sum::<DVec3>() / vertices.len() as f64;
        return mean.as_vec3();
    }
    (origin + moment / (4.0 * volume)).as_vec3()
}

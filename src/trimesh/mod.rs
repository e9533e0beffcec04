//! Static triangle meshes: indexed triangles validated once, with a BVH over them (the
//! midphase) and each edge's adjacency (for internal-edge handling). Design: docs/design/trimesh.md.
//!
//! 1. [`TriMesh::new`] checks the sizes against [`MAX_TRIMESH_VERTICES`] and
//!    [`MAX_TRIMESH_TRIANGLES`] before building anything, then every vertex (finite, within
//!    [`MAX_SHAPE_SIZE`]), index and triangle (not degenerate).
//! 2. Each triangle's front plane: normal `(b − a) × (c − a)` made unit (counter-clockwise seen
//!    from the front). Meshes are one-sided: see [`TriMesh`].
//! 3. Edges paired with the opposite directed edge of one other triangle; each classified
//!    boundary, convex, flat or concave by its dihedral bend ([`TRIMESH_FLAT_EDGE_DEGREES`]);
//!    boundary and convex edges are *active*.
//! 4. A BVH over the triangles' boxes ([`TriangleBvh`]).

mod bvh;

use std::collections::HashMap;

use glam::Vec3;
use thiserror::Error;

use crate::constants::{
    MAX_SHAPE_SIZE, TRIMESH_DEGENERATE_TOLERANCE, TRIMESH_FACE_NORMAL_DEGREES, TRIMESH_FLAT_EDGE_DEGREES,
};
use crate::hull::Plane;
use crate::manifold::FeatureId;

pub use bvh::{TRIANGLE_BVH_STACK_SIZE, TriangleBvh};

/// Most triangles a mesh may have: the triangle index takes 19 bits of a mesh contact's
/// [`FeatureId`] ([`mesh_feature_id`]). Larger levels are split into several meshes.
pub const MAX_TRIMESH_TRIANGLES: usize = 1 << 19;

/// Most vertices a mesh may have (checked before anything is built).
pub const MAX_TRIMESH_VERTICES: usize = 3 * MAX_TRIMESH_TRIANGLES;

/// [`TriMesh::neighbours`] of an edge no other triangle shares (a boundary edge).
pub const NO_NEIGHBOUR: u32 = u32::MAX;

/// Why a triangle mesh was rejected.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum TriMeshError {
    /// No triangles.
    #[error("the mesh has no triangles")]
    Empty,
    /// More triangles than [`MAX_TRIMESH_TRIANGLES`].
    #[error("{0} triangles, more than the limit of {MAX_TRIMESH_TRIANGLES}")]
    TooManyTriangles(usize),
    /// More vertices than [`MAX_TRIMESH_VERTICES`].
    #[error("{0} vertices, more than the limit of {MAX_TRIMESH_VERTICES}")]
    TooManyVertices(usize),
    /// A vertex coordinate is NaN or infinite.
    #[error("vertex {vertex} has a non-finite coordinate")]
    NonFinite {
        /// Index of the vertex.
        vertex: usize,
    },
    /// A vertex lies farther than [`MAX_SHAPE_SIZE`] from the local origin on some axis.
    #[error("vertex {vertex} lies {distance:e} from the origin, beyond the supported {MAX_SHAPE_SIZE:e}")]
    OutOfRange {
        /// Index of the vertex.
        vertex: usize,
        /// Its largest coordinate magnitude.
        distance: f32,
    },
    /// A triangle names a vertex that does not exist.
    #[error("triangle {triangle} names vertex {index}, but there are {vertex_count} vertices")]
    IndexOutOfRange {
        /// Index of the triangle.
        triangle: usize,
        /// The index it names.
        index: u32,
        /// How many vertices there are.
        vertex_count: usize,
    },
    /// A triangle has (nearly) no area ([`TRIMESH_DEGENERATE_TOLERANCE`]).
    #[error("triangle {triangle} is degenerate (repeated vertex, or collinear vertices)")]
    Degenerate {
        /// Index of the triangle.
        triangle: usize,
    },
}

/// One triangle in its mesh's frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Triangle {
    /// Corners `[a, b, c]`, counter-clockwise seen from the front; edge `k` runs from corner `k`
    /// to corner `k + 1 (mod 3)`.
    pub vertices: [Vec3; 3],
    /// Unit front normal, `normalize((b − a) × (c − a))`.
    pub normal: Vec3,
}

impl Triangle {
    /// Unit direction of edge `k`.
    #[inline]
    pub fn edge_direction(&self, k: usize) -> Vec3 {
        (self.vertices[(k + 1) % 3] - self.vertices[k]).normalize()
    }

    /// Unit outward normal of edge `k` in the triangle's plane (pointing away from the triangle).
    #[inline]
    pub fn side_normal(&self, k: usize) -> Vec3 {
        self.edge_direction(k).cross(self.normal)
    }

    /// Each edge's [`Self::edge_direction`] and [`Self::side_normal`], edges 0, 1, 2.
    #[inline]
    pub fn sides(&self) -> [(Vec3, Vec3); 3] {
        [0, 1, 2].map(|k| {
            let e = self.edge_direction(k);
            (e, e.cross(self.normal))
        })
    }
}

/// A feature of one triangle: its face, edge `k` or corner `k`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TriangleFeature {
    /// The face.
    Face,
    /// Edge `k`, from corner `k` to corner `k + 1 (mod 3)`.
    Edge(usize),
    /// Corner `k`.
    Vertex(usize),
}

impl TriangleFeature {
    /// The feature from the corners within tolerance of an extreme, as a 3-bit mask
    /// (bit `k` = corner `k`): one corner, two (the edge between them) or all three (the face).
    fn from_corner_mask(mask: u32) -> TriangleFeature {
        match mask {
            0b001 => TriangleFeature::Vertex(0),
            0b010 => TriangleFeature::Vertex(1),
            0b100 => TriangleFeature::Vertex(2),
            0b011 => TriangleFeature::Edge(0),
            0b110 => TriangleFeature::Edge(1),
            0b101 => TriangleFeature::Edge(2),
            _ => TriangleFeature::Face,
        }
    }
}

impl Triangle {
    /// The feature of the triangle furthest along `direction`: the corners whose projections
    /// are within `tolerance` (length units, times `|direction|`) of the largest.
    pub fn feature_along(&self, direction: Vec3, tolerance: f32) -> TriangleFeature {
        let d = self.vertices.map(|v| v.dot(direction));
        let top = d[0].max(d[1]).max(d[2]);
        let mask = (0..3)
            .filter(|&k| d[k] >= top - tolerance)
            .fold(0, |m, k| m | 1 << k);
        TriangleFeature::from_corner_mask(mask)
    }

    /// The feature a point `q` of the triangle lies on: the corners whose barycentric weights
    /// exceed `tolerance` (dimensionless) span it.
    pub fn feature_at(&self, q: Vec3, tolerance: f32) -> TriangleFeature {
        let [a, b, c] = self.vertices;
        let area = (b - a).cross(c - a).dot(self.normal);
        // Weight of corner k: the sub-triangle opposite it over the whole.
        let weight = |k: usize| {
            let (p, r) = (self.vertices[(k + 1) % 3], self.vertices[(k + 2) % 3]);
            (r - p).cross(q - p).dot(self.normal) / area
        };
        let mask = (0..3)
            .filter(|&k| weight(k) > tolerance)
            .fold(0, |m, k| m | 1 << k);
        TriangleFeature::from_corner_mask(mask)
    }

    /// True when `q` (in the plane or not) projects into the triangle or onto its boundary.
    pub fn contains_projection(&self, q: Vec3) -> bool {
        (0..3).all(|k| self.side_normal(k).dot(q - self.vertices[k]) <= 0.0)
    }
}

/// A static triangle mesh in its local frame, one-sided: only the front (the side its normals
/// point to) collides, and a body whose contact would push it out of the back gets the front's
/// normal instead, so a body that sank past the middle of a thin floor is pushed back up rather
/// than through (level geometry is closed or lies on top of solid ground). Built once, shared by
/// every body that uses it.
#[derive(Clone, Debug, PartialEq)]
pub struct TriMesh {
    vertices: Vec<Vec3>,
    triangles: Vec<[u32; 3]>,
    planes: Vec<Plane>,
    /// Per triangle, across each edge `k`: the other triangle, or [`NO_NEIGHBOUR`].
    neighbours: Vec<[u32; 3]>,
    /// Per triangle, bit `k` set when edge `k` is active (boundary or convex).
    active_edges: Vec<u8>,
    bvh: TriangleBvh,
}

impl TriMesh {
    /// Validates and builds a mesh from vertex positions (local frame, length units) and
    /// triangles `[a, b, c]` indexing them, front face counter-clockwise (normal
    /// `(b − a) × (c − a)`). Errors name the first offending vertex or triangle.
    pub fn new(vertices: Vec<Vec3>, triangles: Vec<[u32; 3]>) -> Result<TriMesh, TriMeshError> {
        // 1. Sizes first, then each vertex and triangle.
        if triangles.is_empty() {
            return Err(TriMeshError::Empty);
        }
        if triangles.len() > MAX_TRIMESH_TRIANGLES {
            return Err(TriMeshError::TooManyTriangles(triangles.len()));
        }
        if vertices.len() > MAX_TRIMESH_VERTICES {
            return Err(TriMeshError::TooManyVertices(vertices.len()));
        }
        for (vertex, v) in vertices.iter().enumerate() {
            if !v.is_finite() {
                return Err(TriMeshError::NonFinite { vertex });
            }
            let distance = v.abs().max_element();
            if distance > MAX_SHAPE_SIZE {
                return Err(TriMeshError::OutOfRange { vertex, distance });
            }
        }
        let mut planes = Vec::with_capacity(triangles.len());
        for (triangle, t) in triangles.iter().enumerate() {
            if let Some(&index) = t.iter().find(|&&i| i as usize >= vertices.len()) {
                return Err(TriMeshError::IndexOutOfRange {
                    triangle,
                    index,
                    vertex_count: vertices.len(),
                });
            }
            // 2. The front plane; twice the area against the longest edge squared.
            let [a, b, c] = t.map(|i| vertices[i as usize]);
            let cross = (b - a).cross(c - a);
            let longest = (b - a)
                .length_squared()
                .max((c - b).length_squared())
                .max((a - c).length_squared());
            let area2 = cross.length();
            if area2 <= TRIMESH_DEGENERATE_TOLERANCE * longest || !area2.is_finite() {
                return Err(TriMeshError::Degenerate { triangle });
            }
            let normal = cross / area2;
            planes.push(Plane {
                normal,
                offset: normal.dot(a),
            });
        }
        let (neighbours, active_edges) = adjacency(&vertices, &triangles, &planes);
        let bvh = TriangleBvh::build(&vertices, &triangles);
        Ok(TriMesh {
            vertices,
            triangles,
            planes,
            neighbours,
            active_edges,
            bvh,
        })
    }

    /// Vertex positions, local frame.
    pub fn vertices(&self) -> &[Vec3] {
        &self.vertices
    }

    /// Triangles as vertex index triples.
    pub fn triangles(&self) -> &[[u32; 3]] {
        &self.triangles
    }

    /// Triangle `index`'s corners and front normal, local frame.
    #[inline]
    pub fn triangle(&self, index: u32) -> Triangle {
        Triangle {
            vertices: self.triangles[index as usize].map(|i| self.vertices[i as usize]),
            normal: self.planes[index as usize].normal,
        }
    }

    /// Triangle `index`'s front plane (unit normal, offset), local frame.
    #[inline]
    pub fn plane(&self, index: u32) -> Plane {
        self.planes[index as usize]
    }

    /// The triangles across triangle `index`'s edges 0, 1, 2 ([`NO_NEIGHBOUR`] on a boundary,
    /// and where more than two triangles share an edge or two share it with the same winding).
    #[inline]
    pub fn neighbours(&self, index: u32) -> [u32; 3] {
        self.neighbours[index as usize]
    }

    /// Bit `k` set when edge `k` of triangle `index` is active: a boundary edge or a convex one
    /// bent more than [`TRIMESH_FLAT_EDGE_DEGREES`]. Flat and concave edges are inactive.
    #[inline]
    pub fn active_edges(&self, index: u32) -> u8 {
        self.active_edges[index as usize]
    }

    /// The active-edge rule (Jolt's active edges): true when a contact on `feature` of triangle
    /// `index` may take the unit `normal` (local frame, from the mesh toward the body). The face's
    /// own normal always may (within [`TRIMESH_FACE_NORMAL_DEGREES`]); no normal behind the face
    /// (one-sided); an edge's only when the edge is active and the normal lies between the two
    /// triangles' normals (a convex edge) or on the outer side (a boundary edge); a corner's when
    /// one of its two edges allows it. Callers replace a refused normal with the face's. WGSL
    /// twin: `triangle_allows_normal` in shaders/narrowphase/triangle_contact.wgsl.
    pub fn allows_normal(&self, index: u32, feature: TriangleFeature, normal: Vec3) -> bool {
        self.allows_normal_by(index, feature, normal, |k| {
            let triangle = self.triangle(index);
            (triangle.edge_direction(k), triangle.side_normal(k))
        })
    }

    /// [`Self::allows_normal`] with triangle `index`'s edge `k` direction and side normal
    /// ([`Triangle::sides`]) from `side`.
    #[inline]
    pub(crate) fn allows_normal_by(
        &self,
        index: u32,
        feature: TriangleFeature,
        normal: Vec3,
        side: impl Fn(usize) -> (Vec3, Vec3),
    ) -> bool {
        let face = self.planes[index as usize].normal;
        let along = face.dot(normal);
        if along >= TRIMESH_FACE_NORMAL_DEGREES.to_radians().cos() {
            return true;
        }
        if along < 0.0 {
            return false;
        }
        let edge_allows = |k: usize| self.edge_allows(index, k, normal, side(k));
        match feature {
            TriangleFeature::Face => false,
            TriangleFeature::Edge(k) => edge_allows(k),
            TriangleFeature::Vertex(k) => edge_allows(k) || edge_allows((k + 2) % 3),
        }
    }

    /// [`Self::allows_normal`] for edge `k` of triangle `index`, its direction `e` and side
    /// normal `side`.
    fn edge_allows(&self, index: u32, k: usize, normal: Vec3, (e, side): (Vec3, Vec3)) -> bool {
        if self.active_edges[index as usize] & (1 << k) == 0 {
            return false;
        }
        match self.neighbours[index as usize][k] {
            NO_NEIGHBOUR => side.dot(normal) >= 0.0,
            other => {
                // Between n and the neighbour's n' on the arc about the edge direction e.
                let (n, n_other) = (self.planes[index as usize].normal, self.plane(other).normal);
                n.cross(normal).dot(e) >= 0.0 && normal.cross(n_other).dot(e) >= 0.0
            }
        }
    }

    /// The BVH over the triangles.
    pub fn bvh(&self) -> &TriangleBvh {
        &self.bvh
    }

    /// The mesh's box, local frame (lower and upper corner): exactly the extremes of the
    /// vertices its triangles use (the BVH's root box).
    pub fn bounds(&self) -> (Vec3, Vec3) {
        self.bvh.bounds()
    }

    /// A ball that contains the mesh, local frame: its box's centre and the distance from there
    /// to the box's corners (length units), rounded up.
    pub fn bounding_sphere(&self) -> (Vec3, f32) {
        let (min, max) = self.bounds();
        let centre = (min + max) * 0.5;
        let reach = (max.as_dvec3() - centre.as_dvec3())
            .abs()
            .max((centre.as_dvec3() - min.as_dvec3()).abs())
            .length();
        (centre, (reach as f32).next_up())
    }

    /// Writes into `out` (cleared first) the triangles whose boxes overlap the box
    /// `[min, max]` (local frame), in BVH order: the midphase. Allocates only when `out` grows.
    pub fn triangles_in_aabb(&self, min: Vec3, max: Vec3, out: &mut Vec<u32>) {
        out.clear();
        self.bvh.for_each_overlap(min, max, |t| out.push(t));
    }
}

/// Step 3: each triangle's neighbours across its edges and its active-edge bits.
fn adjacency(vertices: &[Vec3], triangles: &[[u32; 3]], planes: &[Plane]) -> (Vec<[u32; 3]>, Vec<u8>) {
    // Directed edge (start, end) → (triangle, edge), and how many triangles use the undirected edge.
    let mut directed: HashMap<(u32, u32), (u32, usize)> = HashMap::with_capacity(3 * triangles.len());
    let mut uses: HashMap<(u32, u32), u32> = HashMap::with_capacity(3 * triangles.len());
    for (t, tri) in triangles.iter().enumerate() {
        for k in 0..3 {
            let (s, e) = (tri[k], tri[(k + 1) % 3]);
            directed.insert((s, e), (t as u32, k));
            *uses.entry((s.min(e), s.max(e))).or_default() += 1;
        }
    }
    let flat = TRIMESH_FLAT_EDGE_DEGREES.to_radians();
    let mut neighbours = vec![[NO_NEIGHBOUR; 3]; triangles.len()];
    let mut active = vec![0u8; triangles.len()];
    for (t, tri) in triangles.iter().enumerate() {
        for k in 0..3 {
            let (s, e) = (tri[k], tri[(k + 1) % 3]);
            let manifold_edge = uses[&(s.min(e), s.max(e))] == 2;
            let other = directed.get(&(e, s)).filter(|_| manifold_edge);
            let Some(&(u, _)) = other else {
                active[t] |= 1 << k;
                continue;
            };
            neighbours[t][k] = u;
            // Bend toward the outside (convex) is positive: (n_t × n_u) · edge > 0.
            let edge = (vertices[e as usize] - vertices[s as usize]).normalize();
            let (nt, nu) = (planes[t].normal, planes[u as usize].normal);
            let bend = nt.cross(nu).dot(edge).atan2(nt.dot(nu));
            if bend > flat {
                active[t] |= 1 << k;
            }
        }
    }
    (neighbours, active)
}

/// The id of a mesh contact point: the triangle, and the per-triangle id `local` of the routine
/// that made the point (mesh = body A, the triangle's local features 0..=2), packed as
///
/// ```text
///  31                 13 12 11 10  9  8 7        0
/// [  triangle (19 bits)  | kind | f | tri |  body  ]
/// ```
///
/// `kind` and `f` (flag) as in `local` ([`FeatureId::FACE_A`]: the triangle is the reference
/// face, ...); `tri` = the triangle's feature (2 bits: `local`'s A field), `body` = the convex
/// body's feature (8 bits: `local`'s B field modulo 256). Costs: meshes are capped at
/// [`MAX_TRIMESH_TRIANGLES`], and on hulls with more than 256 vertices, faces or edges two points
/// of one manifold may share an id. Mesh ids are not [`FeatureId::swapped`]-compatible: the
/// mesh stays body A.
pub fn mesh_feature_id(triangle: u32, local: FeatureId) -> FeatureId {
    let (a, b) = triangle_and_body_features(local);
    FeatureId(triangle << 13 | local.kind() << 11 | (local.flag() as u32) << 10 | (a & 3) << 8 | (b & 0xff))
}

/// The id of a contact point between a mesh and a compound: the triangle, the compound's child
/// and the per-triangle id `local` (mesh = body A, as [`mesh_feature_id`]), packed as
///
/// ```text
///  31               16 15      10  9  8  7  6  5 4     0
/// [ triangle mod 2^16 |  child   | kind | f | tri | body ]
/// ```
///
/// `kind`, `f` and `tri` as in [`mesh_feature_id`]; `child` the compound's child (6 bits:
/// [`crate::shape::compound::MAX_COMPOUND_CHILDREN`]), `body` the child's feature modulo 32. Costs:
/// two triangles whose indices differ by a multiple of 2^16, touched by one child at once, share
/// their ids, as do two features of one child 32 apart (hulls above 32 vertices, faces or edges).
/// Kept whichever body comes first, as mesh ids are.
pub fn compound_mesh_feature_id(triangle: u32, child: u32, local: FeatureId) -> FeatureId {
    let (a, b) = triangle_and_body_features(local);
    let flag = local.flag() as u32;
    FeatureId(
        triangle << 16 | (child & 0x3f) << 10 | local.kind() << 8 | flag << 7 | (a & 3) << 5 | (b & 0x1f),
    )
}

/// The triangle's and the body's features of a per-triangle id (mesh = body A).
fn triangle_and_body_features(local: FeatureId) -> (u32, u32) {
    match local.kind() {
        FeatureId::FACE_B => (local.low(), local.high()),
        _ => (local.high(), local.low()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two triangles forming the unit square in the xz plane, facing +y.
    fn square(y_of_far_corner: f32) -> TriMesh {
        let vertices = vec![
            Vec3::new(0.0, 0.0, 0.0),
            Vec3::new(0.0, 0.0, 1.0),
            Vec3::new(1.0, y_of_far_corner, 1.0),
            Vec3::new(1.0, 0.0, 0.0),
        ];
        TriMesh::new(vertices, vec![[0, 1, 3], [1, 2, 3]]).unwrap()
    }

    #[test]
    fn shared_edge_is_flat_convex_or_concave_by_its_bend() {
        let flat = square(0.0);
        assert_eq!(flat.neighbours(0)[1], 1);
        assert_eq!(flat.active_edges(0) & 0b010, 0);
        assert!(flat.plane(0).normal.abs_diff_eq(Vec3::Y, 1e-6));
        // The far corner lowered: the ridge along the diagonal is convex (active).
        assert_ne!(square(-0.2).active_edges(0) & 0b010, 0);
        // Raised: concave (inactive). Boundary edges are active either way.
        let valley = square(0.2);
        assert_eq!(valley.active_edges(0), 0b101);
    }

    #[test]
    fn feature_id_packs_the_triangle_and_both_features() {
        let id = mesh_feature_id(123_456, FeatureId::new(FeatureId::FACE_B, true, 300, 2));
        assert_eq!(id.0 >> 13, 123_456);
        assert_eq!((id.0 >> 8) & 3, 2);
        assert_eq!(id.0 & 0xff, 300 & 0xff);
        assert_eq!((id.0 >> 10) & 7, FeatureId::FACE_B << 1 | 1);
    }
}

//! Convex hulls: flat, index-based polyhedra built once and shared by every body that uses them.
//!
//! Layout (all in the hull's local frame): one vertex array; one face array whose entries are
//! `{first, count}` ranges into a concatenated array of vertex loops (counter-clockwise seen from
//! outside); one plane per face; one edge array where each undirected edge appears once with its
//! two adjacent faces. Built by [`ConvexHull::from_points`] (quickhull), [`ConvexHull::from_mesh`]
//! (a given polygon mesh, checked) or [`ConvexHull::cuboid`].

mod from_mesh;
mod quickhull;
mod topology;

pub use topology::arc_stretch;

use glam::{Vec3, Vec4, Vec4Swizzles};
use thiserror::Error;

use crate::constants::{MAX_SHAPE_SIZE, MIN_SHAPE_SIZE};

/// Most vertices a hull may have after building; keeps every index inside its
/// [`crate::FeatureId`] field (faces ≤ 2V − 4 and edges ≤ 3V − 6 then fit 14 bits).
pub const MAX_HULL_VERTICES: usize = 4096;
/// Most input points [`ConvexHull::from_points`] accepts; checked before any work, so an
/// oversized cloud costs neither time nor memory. Sixteen times [`MAX_HULL_VERTICES`]: room for
/// interior and duplicate points, while quickhull on that many points stays well under a second.
pub const MAX_HULL_INPUT_POINTS: usize = 16 * MAX_HULL_VERTICES;
/// Most vertices one face may have (bounds the clipping buffers, which live on the stack).
pub const MAX_FACE_VERTICES: usize = 256;

/// Checks that finite input points lie within the supported range: every coordinate within
/// ±[`MAX_SHAPE_SIZE`] of the local origin, and a bounding box whose diagonal is at least
/// [`MIN_SHAPE_SIZE`] (points all at one place are left to the coincidence check).
fn check_extent(points: &[Vec3]) -> Result<(), HullError> {
    if let Some(index) = points.iter().position(|p| p.abs().max_element() > MAX_SHAPE_SIZE) {
        return Err(HullError::OutOfRange(format!(
            "point {index} lies {:e} from the origin, beyond the supported {MAX_SHAPE_SIZE:e}",
            points[index].abs().max_element()
        )));
    }
    let (min, max) = points
        .iter()
        .fold((Vec3::INFINITY, Vec3::NEG_INFINITY), |(lo, hi), &p| {
            (lo.min(p), hi.max(p))
        });
    let diagonal = (max - min).length();
    if diagonal > 0.0 && diagonal < MIN_SHAPE_SIZE {
        return Err(HullError::OutOfRange(format!(
            "points span {diagonal:e}, less than the supported {MIN_SHAPE_SIZE:e}"
        )));
    }
    Ok(())
}

/// A plane `dot(normal, x) = offset` with a unit `normal` pointing out of the solid.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Plane {
    /// Unit outward normal.
    pub normal: Vec3,
    /// Signed distance of the plane from the local origin along `normal`.
    pub offset: f32,
}

impl Plane {
    /// Signed distance of `p` from the plane: positive outside (in front), negative inside.
    #[inline]
    pub fn signed_distance(&self, p: Vec3) -> f32 {
        self.normal.dot(p) - self.offset
    }
}

/// A face: `count` vertex indices starting at `first` in [`ConvexHull::face_vertices`], in
/// counter-clockwise order seen from outside the hull.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Face {
    /// Index of the face's first entry in the concatenated vertex loops.
    pub first: u32,
    /// Number of vertices (and edges) of the face, at least 3.
    pub count: u32,
}

/// An undirected edge and its two adjacent faces.
///
/// `faces[0]` walks the edge from `vertices[0]` to `vertices[1]` in its counter-clockwise loop,
/// `faces[1]` walks it the other way, so `cross(normal(faces[0]), normal(faces[1]))` points along
/// `vertices[1] - vertices[0]` (the Gauss-map arc of the edge, used for Minkowski-face pruning).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Edge {
    /// Start and end vertex indices.
    pub vertices: [u32; 2],
    /// The face on each side of the edge (see the type docs for which is which).
    pub faces: [u32; 2],
}

/// Four edges of a hull by coordinate, for bounds that test four edges at a time
/// (`query::bounds::max_on_arcs`): lane `i` is edge `4 * group + i` of
/// [`ConvexHull::edges`]; the last group repeats its last edge in the unused lanes.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EdgeLanes {
    /// Start vertex (`Edge::vertices[0]`), local frame: x, y, z lanes.
    pub start: [Vec4; 3],
    /// Unit outward normal of `Edge::faces[0]`: x, y, z lanes.
    pub normal0: [Vec4; 3],
    /// Unit outward normal of `Edge::faces[1]`: x, y, z lanes.
    pub normal1: [Vec4; 3],
    /// [`arc_stretch`] of the two normals (dimensionless, at least 1):
    /// how much a positive end value of the edge's Gauss-map arc can grow along it.
    pub stretch: Vec4,
}

/// Why a hull could not be built.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum HullError {
    /// Fewer than 4 input points.
    #[error("need at least 4 points, got {0}")]
    TooFewPoints(usize),
    /// More input points than [`MAX_HULL_INPUT_POINTS`] (found before building).
    #[error("{0} points, more than the limit of {MAX_HULL_INPUT_POINTS}")]
    TooManyPoints(usize),
    /// A coordinate is NaN or infinite.
    #[error("point {index} has a non-finite coordinate")]
    NonFinite {
        /// Index of the offending point in the input.
        index: usize,
    },
    /// A point lies farther than [`crate::constants::MAX_SHAPE_SIZE`] from the local origin on
    /// some axis, or the points span less than [`crate::constants::MIN_SHAPE_SIZE`] (outside the
    /// supported range).
    #[error("{0}")]
    OutOfRange(String),
    /// Every point lies (nearly) at one place.
    #[error("points are (nearly) coincident")]
    Coincident,
    /// Every point lies (nearly) on one line.
    #[error("points are collinear")]
    Collinear,
    /// Every point lies (nearly) in one plane: the hull would have no volume.
    #[error("points are coplanar")]
    Coplanar,
    /// The hull would have more vertices than [`MAX_HULL_VERTICES`].
    #[error("hull has {0} vertices, more than the limit of {MAX_HULL_VERTICES}")]
    TooManyVertices(usize),
    /// A face would have more vertices than [`MAX_FACE_VERTICES`].
    #[error("face {face} has {count} vertices, more than the limit of {MAX_FACE_VERTICES}")]
    FaceTooLarge {
        /// Index of the face.
        face: usize,
        /// Its vertex count.
        count: usize,
    },
    /// `from_mesh`: a face refers to a vertex that does not exist or has fewer than 3 vertices.
    #[error("face {face}: {problem}")]
    BadFace {
        /// Index of the face in the input.
        face: usize,
        /// What is wrong with it.
        problem: String,
    },
    /// `from_mesh`: an edge is not shared by exactly two faces walking it in opposite directions.
    #[error("mesh is not closed and consistently wound: edge {v0}-{v1} {problem}")]
    NotClosed {
        /// Start vertex of the edge.
        v0: u32,
        /// End vertex of the edge.
        v1: u32,
        /// What is wrong with it.
        problem: String,
    },
    /// `from_mesh`: the mesh is not convex, or a face is not planar.
    #[error("mesh is not convex: {0}")]
    NotConvex(String),
    /// `from_mesh`: faces are wound clockwise seen from outside (normals point inward).
    #[error("faces are wound inward (clockwise seen from outside)")]
    InwardWinding,
    /// `from_mesh`: a vertex is used by no face.
    #[error("vertex {index} is used by no face")]
    UnusedVertex {
        /// Index of the vertex in the input.
        index: usize,
    },
    /// `from_mesh`: two faces sharing an edge lie in one plane; give them as one polygon (or
    /// build with `from_points`, which merges them).
    #[error("faces {faces:?} share an edge and are coplanar; give them as one polygon")]
    CoplanarFaces {
        /// The two faces, input indices.
        faces: [usize; 2],
    },
}

/// A convex polyhedron in its local frame. See the module docs for the layout.
#[derive(Clone, Debug, PartialEq)]
pub struct ConvexHull {
    vertices: Vec<Vec3>,
    /// `vertices` four per entry by coordinate, for [`Self::lowest_along`].
    vertex_lanes: Vec<[Vec4; 3]>,
    face_vertices: Vec<u32>,
    faces: Vec<Face>,
    planes: Vec<Plane>,
    edges: Vec<Edge>,
    /// Unit direction of each edge, `normalize(vertices[1] − vertices[0])`, by edge.
    edge_directions: Vec<Vec3>,
    /// `planes` four per entry by coordinate, for [`Self::plane_lanes`].
    plane_lanes: Vec<[Vec4; 4]>,
    /// `edges` four per entry with their face normals, for [`Self::edge_lanes`].
    edge_lanes: Vec<EdgeLanes>,
    /// Each edge's end points and face normals packed, for [`Self::edge_records`].
    edge_records: Vec<[Vec4; 3]>,
    centroid: Vec3,
    radius: f32,
    /// Smallest distance from the centroid to a face plane.
    inner_radius: f32,
}

impl ConvexHull {
    /// A box centred on the local origin with the given positive half extents.
    ///
    /// Faces are ordered -X, +X, -Y, +Y, -Z, +Z; vertex `i` has the sign pattern of bits
    /// (x: bit 0, y: bit 1, z: bit 2; set = positive).
    pub fn cuboid(half_extents: Vec3) -> ConvexHull {
        let vertices: Vec<Vec3> = (0..8)
            .map(|i| {
                Vec3::new(
                    if i & 1 != 0 { 1.0 } else { -1.0 },
                    if i & 2 != 0 { 1.0 } else { -1.0 },
                    if i & 4 != 0 { 1.0 } else { -1.0 },
                ) * half_extents
            })
            .collect();
        // Counter-clockwise seen from outside.
        let loops: [[u32; 4]; 6] = [
            [0, 4, 6, 2], // -X
            [1, 3, 7, 5], // +X
            [0, 1, 5, 4], // -Y
            [2, 6, 7, 3], // +Y
            [0, 2, 3, 1], // -Z
            [4, 5, 7, 6], // +Z
        ];
        let loops: Vec<Vec<u32>> = loops.iter().map(|l| l.to_vec()).collect();
        topology::build(vertices, &loops)
    }

    /// A right prism along local Y centred on the origin: a regular `sides`-gon (at least 3) of
    /// circumradius `radius` at `y = ±half_height`, every vertex on the circle (the prism lies
    /// inside the cylinder it approximates).
    ///
    /// Vertex `i < sides` is the bottom one at angle `θ = 2πi / sides` from +X toward +Z
    /// (`(r cos θ, −h, r sin θ)`), vertex `sides + i` the top one above it. Faces: bottom cap,
    /// top cap, then side `i` between vertices `i` and `i + 1` (mod `sides`).
    pub fn prism(half_height: f32, radius: f32, sides: usize) -> ConvexHull {
        debug_assert!(sides >= 3, "a prism needs at least 3 sides, got {sides}");
        let n = sides as u32;
        let ring = (0..sides).map(|i| {
            let (sin, cos) = (std::f32::consts::TAU * i as f32 / sides as f32).sin_cos();
            Vec3::new(radius * cos, 0.0, radius * sin)
        });
        let vertices: Vec<Vec3> = ring
            .clone()
            .map(|v| v - Vec3::Y * half_height)
            .chain(ring.map(|v| v + Vec3::Y * half_height))
            .collect();
        // Counter-clockwise seen from outside: the rising ring faces −Y, so the top one is reversed.
        let mut loops = vec![(0..n).collect::<Vec<u32>>(), (n..2 * n).rev().collect()];
        loops.extend((0..n).map(|i| {
            let next = (i + 1) % n;
            vec![i, n + i, n + next, next]
        }));
        topology::build(vertices, &loops)
    }

    /// Vertex positions, local frame.
    pub fn vertices(&self) -> &[Vec3] {
        &self.vertices
    }

    /// All face vertex loops, concatenated; index with [`Face::first`] and [`Face::count`].
    pub fn face_vertices(&self) -> &[u32] {
        &self.face_vertices
    }

    /// Faces as ranges into [`Self::face_vertices`].
    pub fn faces(&self) -> &[Face] {
        &self.faces
    }

    /// The vertex indices of face `face`, counter-clockwise seen from outside.
    #[inline]
    pub fn face_loop(&self, face: usize) -> &[u32] {
        let f = self.faces[face];
        &self.face_vertices[f.first as usize..(f.first + f.count) as usize]
    }

    /// One outward plane per face, same order as [`Self::faces`].
    pub fn planes(&self) -> &[Plane] {
        &self.planes
    }

    /// Unique undirected edges with their adjacent faces.
    pub fn edges(&self) -> &[Edge] {
        &self.edges
    }

    /// Volume centroid, local frame.
    pub fn centroid(&self) -> Vec3 {
        self.centroid
    }

    /// Largest distance from the centroid to a vertex.
    pub fn radius(&self) -> f32 {
        self.radius
    }

    /// Radius of the largest sphere about the centroid inside the hull: the smallest distance
    /// from the centroid to a face plane (local length units, positive for a valid hull).
    pub fn inner_radius(&self) -> f32 {
        self.inner_radius
    }

    /// Unit direction of each edge, from `vertices[0]` to `vertices[1]` (local frame), by edge:
    /// `(v1 − v0).normalize()`, bit for bit.
    pub fn edge_directions(&self) -> &[Vec3] {
        &self.edge_directions
    }

    /// The face planes four at a time by coordinate: `[normal.x, normal.y, normal.z, offset]`,
    /// lane `i` = plane `4 * group + i` of [`Self::planes`]; the last group repeats its last
    /// plane in the unused lanes.
    pub fn plane_lanes(&self) -> &[[Vec4; 4]] {
        &self.plane_lanes
    }

    /// The edges four at a time with their face normals (see [`EdgeLanes`]).
    pub fn edge_lanes(&self) -> &[EdgeLanes] {
        &self.edge_lanes
    }

    /// Each edge's start and end vertex and the normals of its `faces[0]` and `faces[1]` (local
    /// frame), by edge, twelve floats in three lanes: `[start.x, start.y, start.z, end.x]`,
    /// `[end.y, end.z, n0.x, n0.y]`, `[n0.z, n1.x, n1.y, n1.z]`. Four of them transpose into
    /// the twelve coordinates of four edges by lane with shuffles alone.
    pub fn edge_records(&self) -> &[[Vec4; 3]] {
        &self.edge_records
    }

    /// Smallest `direction · v` over the vertices `v` (local frame): minus the support value
    /// along `-direction`. Four vertices per step, each dot product rounded as `Vec3::dot`.
    #[inline]
    pub fn lowest_along(&self, direction: Vec3) -> f32 {
        let (dx, dy, dz) = (
            Vec4::splat(direction.x),
            Vec4::splat(direction.y),
            Vec4::splat(direction.z),
        );
        let mut lowest = Vec4::INFINITY;
        for &[x, y, z] in &self.vertex_lanes {
            lowest = lowest.min((x * dx) + (y * dy) + (z * dz));
        }
        lowest.min_element()
    }

    /// [`Self::lowest_along`] of `direction` and the largest `direction · v` (minus
    /// [`Self::lowest_along`] of `-direction`, bit for bit), in one pass.
    #[inline]
    pub fn lowest_and_highest_along(&self, direction: Vec3) -> (f32, f32) {
        let (dx, dy, dz) = (
            Vec4::splat(direction.x),
            Vec4::splat(direction.y),
            Vec4::splat(direction.z),
        );
        let (mut lowest, mut highest) = (Vec4::INFINITY, Vec4::NEG_INFINITY);
        for &[x, y, z] in &self.vertex_lanes {
            let dots = (x * dx) + (y * dy) + (z * dz);
            (lowest, highest) = (lowest.min(dots), highest.max(dots));
        }
        (lowest.min_element(), highest.max_element())
    }

    /// The vertices four at a time by coordinate (`[x, y, z]`, lane `i` = vertex `4 * group +
    /// i`); the last group repeats its last vertex in the unused lanes.
    pub(crate) fn vertex_lanes(&self) -> &[[Vec4; 3]] {
        &self.vertex_lanes
    }

    /// [`Self::lowest_along`] of four directions given by coordinate (`[x, y, z]`, lane `i` of
    /// each is direction `i`), lane `i` of the result for direction `i`, bit for bit: each
    /// vertex group is read once for the four, and the directions stay in registers.
    #[inline]
    pub fn lowest_along_four(&self, [x, y, z]: [Vec4; 3]) -> Vec4 {
        let splat = [
            [x.xxxx(), y.xxxx(), z.xxxx()],
            [x.yyyy(), y.yyyy(), z.yyyy()],
            [x.zzzz(), y.zzzz(), z.zzzz()],
            [x.wwww(), y.wwww(), z.wwww()],
        ];
        let mut lowest = [Vec4::INFINITY; 4];
        for &[x, y, z] in &self.vertex_lanes {
            for (lowest, [dx, dy, dz]) in lowest.iter_mut().zip(splat) {
                *lowest = lowest.min((x * dx) + (y * dy) + (z * dz));
            }
        }
        Vec4::from_array(lowest.map(Vec4::min_element))
    }

    /// The vertex furthest along `direction` (its index and position).
    #[inline]
    pub fn support(&self, direction: Vec3) -> (usize, Vec3) {
        let mut best = 0;
        let mut best_dot = f32::NEG_INFINITY;
        for (i, v) in self.vertices.iter().enumerate() {
            let d = v.dot(direction);
            if d > best_dot {
                best_dot = d;
                best = i;
            }
        }
        (best, self.vertices[best])
    }
}

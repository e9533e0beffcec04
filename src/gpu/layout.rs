//! The structs shared with `shaders/sat.wgsl`: `#[repr(C)]` + [`bytemuck::Pod`], sizes asserted
//! at compile time, offsets checked against the WGSL twins by `tests/gpu_layout.rs`. No `Vec3A`:
//! WGSL `vec3<f32>` is 12 bytes aligned to 16, so each `[f32; 3]` below is followed by a 4-byte
//! scalar that fills the slot, and vectors that stand alone are `[f32; 4]`.

use bytemuck::{Pod, Zeroable};

use crate::hull::ConvexHull;
use crate::query::sat::{SatAxis, SatResult};

/// Invocations per workgroup; must match `WORKGROUP_SIZE` in shaders/sat.wgsl.
pub const WORKGROUP_SIZE: u32 = 64;
/// [`GpuBody::hull`] of a body whose shape is not a hull (its pairs run on the CPU); must match
/// `NO_HULL` in shaders/sat.wgsl.
pub const NO_HULL: u32 = u32::MAX;
/// [`GpuSatResult::kind`] low bits: pair not computed on the GPU (a body is not a hull).
pub const AXIS_NONE: u32 = 0;
/// [`GpuSatResult::kind`] low bits: a face of A won (`feature_a` = face of A).
pub const AXIS_FACE_A: u32 = 1;
/// [`GpuSatResult::kind`] low bits: a face of B won (`feature_b` = face of B).
pub const AXIS_FACE_B: u32 = 2;
/// [`GpuSatResult::kind`] low bits: an edge pair won (`feature_a`, `feature_b` = edges).
pub const AXIS_EDGE_PAIR: u32 = 3;
/// Mask of the axis code in [`GpuSatResult::kind`].
pub const AXIS_MASK: u32 = 3;
/// [`GpuSatResult::kind`] bit set when `separation > margin` (the pair has no contact).
pub const SEPARATED_BIT: u32 = 4;
/// Flag in [`GpuSatResult::kind`]: the driver cut the kernel's loops short, so the result is
/// incomplete and the host recomputes the pair on the CPU. llvmpipe (lavapipe, Mesa's CPU
/// driver) stops every loop of an invocation group once about 65,535 loop iterations are spent,
/// silently; pairs of hulls with ~150+ edges reach that. Real GPUs never set it.
pub const INCOMPLETE_BIT: u32 = 8;

/// One hull's ranges into the shared geometry buffers; must match shaders/sat.wgsl `GpuHull`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuHull {
    /// Volume centroid, hull frame.
    pub centroid: [f32; 3],
    /// Largest centroid-to-vertex distance, length units.
    pub radius: f32,
    /// Index of the hull's first vertex in the vertex buffer.
    pub first_vertex: u32,
    /// Number of vertices.
    pub vertex_count: u32,
    /// Index of the hull's first plane in the plane buffer.
    pub first_face: u32,
    /// Number of faces (planes).
    pub face_count: u32,
    /// Index of the hull's first edge in the edge buffer.
    pub first_edge: u32,
    /// Number of edges.
    pub edge_count: u32,
    /// Padding to a 16-byte multiple.
    pub _pad0: u32,
    /// Padding to a 16-byte multiple.
    pub _pad1: u32,
}

/// An edge with hull-local vertex and face indices (as [`crate::hull::Edge`]); must match
/// shaders/sat.wgsl `GpuEdge`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct GpuEdge {
    /// Start vertex.
    pub v0: u32,
    /// End vertex.
    pub v1: u32,
    /// Face walking the edge from `v0` to `v1`.
    pub f0: u32,
    /// Face walking it the other way.
    pub f1: u32,
}

/// A body's world pose and hull; must match shaders/sat.wgsl `GpuBody`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuBody {
    /// Unit rotation quaternion, `[x, y, z, w]`.
    pub rotation: [f32; 4],
    /// World translation, length units.
    pub translation: [f32; 3],
    /// Index into the hull table, or [`NO_HULL`].
    pub hull: u32,
}

/// The SAT verdict for one pair, in A's frame; must match shaders/sat.wgsl `GpuSatResult`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuSatResult {
    /// Unit normal of the chosen axis, A's frame, from A toward B.
    pub normal: [f32; 3],
    /// Separation along the chosen axis, length units.
    pub axis_separation: f32,
    /// Largest separation over the tested axes, length units (as [`SatResult::separation`]).
    pub separation: f32,
    /// Axis code (`AXIS_*`, low two bits) plus [`SEPARATED_BIT`] and [`INCOMPLETE_BIT`].
    pub kind: u32,
    /// Face or edge index on A (0 when a face of B won).
    pub feature_a: u32,
    /// Face or edge index on B (0 when a face of A won).
    pub feature_b: u32,
}

/// Per-call parameters (uniform); must match shaders/sat.wgsl `GpuParams`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuParams {
    /// Speculative margin, length units.
    pub margin: f32,
    /// Padding to 16 bytes (uniform buffer layout).
    pub _pad0: u32,
    /// Padding.
    pub _pad1: u32,
    /// Padding.
    pub _pad2: u32,
}

const _: () = assert!(size_of::<GpuHull>() == 48);
const _: () = assert!(size_of::<GpuEdge>() == 16);
const _: () = assert!(size_of::<GpuBody>() == 32);
const _: () = assert!(size_of::<GpuSatResult>() == 32);
const _: () = assert!(size_of::<GpuParams>() == 16);

/// Every hull's geometry in the flat arrays the shader reads (built once per narrowphase).
#[derive(Clone, Debug, Default)]
pub struct HullTables {
    /// Vertex positions, xyz (w = 1).
    pub vertices: Vec<[f32; 4]>,
    /// Face planes: normal xyz, offset w.
    pub planes: Vec<[f32; 4]>,
    /// Edges with hull-local indices.
    pub edges: Vec<GpuEdge>,
    /// Ranges, one per hull.
    pub hulls: Vec<GpuHull>,
}

impl HullTables {
    /// Appends `hull` and returns its index in [`Self::hulls`].
    pub fn push(&mut self, hull: &ConvexHull) -> u32 {
        let centroid = hull.centroid();
        self.hulls.push(GpuHull {
            centroid: centroid.to_array(),
            radius: hull.radius(),
            first_vertex: self.vertices.len() as u32,
            vertex_count: hull.vertices().len() as u32,
            first_face: self.planes.len() as u32,
            face_count: hull.planes().len() as u32,
            first_edge: self.edges.len() as u32,
            edge_count: hull.edges().len() as u32,
            _pad0: 0,
            _pad1: 0,
        });
        self.vertices
            .extend(hull.vertices().iter().map(|v| v.extend(1.0).to_array()));
        self.planes
            .extend(hull.planes().iter().map(|p| p.normal.extend(p.offset).to_array()));
        self.edges.extend(hull.edges().iter().map(|e| GpuEdge {
            v0: e.vertices[0],
            v1: e.vertices[1],
            f0: e.faces[0],
            f1: e.faces[1],
        }));
        (self.hulls.len() - 1) as u32
    }
}

impl GpuSatResult {
    /// True when the driver cut the kernel short for this pair ([`INCOMPLETE_BIT`]).
    pub fn is_incomplete(&self) -> bool {
        self.kind & INCOMPLETE_BIT != 0
    }

    /// The CPU form of this result, or `None` when the pair was not computed on the GPU.
    pub fn to_sat(&self) -> Option<SatResult> {
        let axis = match self.kind & AXIS_MASK {
            AXIS_FACE_A => SatAxis::FaceA(self.feature_a),
            AXIS_FACE_B => SatAxis::FaceB(self.feature_b),
            AXIS_EDGE_PAIR => SatAxis::EdgePair {
                edge_a: self.feature_a,
                edge_b: self.feature_b,
            },
            _ => return None,
        };
        Some(SatResult {
            axis,
            normal: self.normal.into(),
            axis_separation: self.axis_separation,
            separation: self.separation,
        })
    }
}

// The GPU form of triangle meshes: vertices, triangles and each mesh's four-wide BVH, indices
// absolute within the tables. Rust twin: src/gpu/mesh_layout.rs (checked by
// tests/raycast_layout.rs).

// Must match crate::gpu::mesh_layout::MESH_LEAF_BIT: a child entry naming a leaf node.
const MESH_LEAF_BIT: u32 = 0x80000000u;
// Must match crate::gpu::mesh_layout::MESH_NO_ITEM: an unused lane.
const MESH_NO_ITEM: u32 = 0xffffffffu;
// Must match crate::gpu::mesh_layout::MESH_STACK_SIZE.
const MESH_STACK_SIZE: u32 = 64u;

// Must match crate::gpu::mesh_layout::GpuMeshNode (mesh frame): four lanes' boxes by
// coordinate (padded as the CPU's ray query pads them) and their items: an inner node's
// children (MESH_LEAF_BIT for a leaf), a leaf's triangles; MESH_NO_ITEM when unused.
struct GpuMeshNode {
    min_x: vec4<f32>,
    min_y: vec4<f32>,
    min_z: vec4<f32>,
    max_x: vec4<f32>,
    max_y: vec4<f32>,
    max_z: vec4<f32>,
    items: vec4<u32>,
}

// Must match crate::gpu::mesh_layout::GpuMeshTriangle: corner indices in the vertex table.
struct GpuMeshTriangle {
    vertices: vec3<u32>,
    _pad: u32,
}

// Must match crate::gpu::mesh_layout::GpuMeshTriangleContact (mesh frame), indexed as the
// triangle table: the unit front normal, bit k of active_edges when edge k is active, the
// triangle across edge k (MESH_NO_ITEM for none).
struct GpuMeshTriangleContact {
    normal: vec3<f32>,
    active_edges: u32,
    neighbours: vec3<u32>,
    _pad: u32,
}

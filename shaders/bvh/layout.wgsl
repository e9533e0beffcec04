// The BVH's shared layouts: the structs and constants of crate::bvh that the BVH build
// (bvh_build.wgsl), the ray traversal (raycast/raycast.wgsl) and the broadphase
// (broadphase/pairs.wgsl) read, and the helpers the build and the broadphase share (their grid
// of workgroups, max_abs). Rust twins: src/bvh/cpu.rs (BvhNode, BVH_STACK_SIZE) and
// src/bvh/gpu.rs (GpuBvhShape; the bodies are shaders/common/body.wgsl's GpuBody); checked by tests/raycast_layout.rs and
// tests/gpu_broadphase_layout.rs.

// Must match crate::bvh::BVH_STACK_SIZE.
const BVH_STACK_SIZE: u32 = 64u;
// Must match crate::bvh::gpu::HEAP_LEAF_SIZE: the bodies of a heap-tree leaf but the last.
const HEAP_LEAF_SIZE: u32 = 4u;

// Must match crate::bvh::gpu::GpuBvhShape (shape frame).
// Half-spaces: `centre` holds the local normal, `radius` the offset. Boxed hulls:
// `vertex_count` > 0 vertices from `first_vertex` in `vertices`, `reach` their largest |v|.
struct GpuBvhShape {
    centre: vec3<f32>,
    radius: f32,
    half: vec3<f32>,
    unbounded: u32,
    first_vertex: u32,
    vertex_count: u32,
    reach: f32,
    flags: u32,
}

// GpuBvhShape::flags bits. Must match crate::bvh::gpu::SHAPE_FLAG_CYLINDER: the true
// cylinder's box.
const SHAPE_FLAG_CYLINDER: u32 = 1u;
// Must match crate::bvh::gpu::SHAPE_FLAG_STATIC: a mesh, paired with no static body.
const SHAPE_FLAG_STATIC: u32 = 2u;

// Must match crate::bvh::BvhNode (BVH frame): an inner node's children at `first` and
// `first + 1`; a leaf's `count` > 0 bodies from `first` in the body list.
struct BvhNode {
    min: vec3<f32>,
    first: u32,
    max: vec3<f32>,
    count: u32,
}

// The invocation's index in a 2-D grid of workgroups (x first; WORKGROUP_SIZE is the kernel's).
fn linear_id(id: vec3<u32>, groups: vec3<u32>) -> u32 {
    return id.y * groups.x * WORKGROUP_SIZE + id.x;
}

fn max_abs(v: vec3<f32>) -> f32 {
    let a = abs(v);
    return max(a.x, max(a.y, a.z));
}

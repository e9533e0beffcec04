// The BVH's shared layouts: the structs and constants of crate::bvh that the BVH build
// (bvh_build.wgsl), the ray traversal (raycast/raycast.wgsl) and the broadphase
// (broadphase/pairs.wgsl) read, and the helpers the build and the broadphase share (their grid
// of workgroups, the bitonic sort's step and its steps within a tile). Rust twins: src/bvh/cpu.rs (BvhNode, BVH_STACK_SIZE) and
// src/bvh/gpu.rs (GpuBvhShape, GpuBvhBody); checked by tests/raycast_layout.rs and
// tests/gpu_broadphase_layout.rs.

// Must match crate::bvh::BVH_STACK_SIZE.
const BVH_STACK_SIZE: u32 = 64u;

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
    cylinder: u32,
}

// Must match crate::bvh::gpu::GpuBvhBody (world pose, translation split hi + lo; the
// narrowphase's GpuBody layout).
struct GpuBvhBody {
    rotation: vec4<f32>,
    translation_hi: vec3<f32>,
    shape: u32,
    translation_lo: vec3<f32>,
    _pad: u32,
}

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

// Lexicographic order of (first, second) sort keys.
fn key_greater(a: vec2<u32>, b: vec2<u32>) -> bool {
    return a.x > b.x || (a.x == b.x && a.y > b.y);
}

// One bitonic compare-exchange step: invocation `t` compares slots `i` and `i + distance` (`i`
// with the distance bit clear), ascending in blocks whose `block` bit is clear, descending in
// the others. Returns (i, i + distance, ascending as 0 or 1).
fn bitonic_pair(t: u32, distance: u32, block: u32) -> vec3<u32> {
    let i = (t / distance) * 2u * distance + t % distance;
    return vec3<u32>(i, i + distance, select(0u, 1u, (i & block) == 0u));
}

// Must match crate::bvh::gpu::SORT_TILE: the keys one workgroup sorts in workgroup memory.
const SORT_TILE: u32 = 512u;
// Must match crate::bvh::gpu::SORT_WORKGROUP_SIZE: one invocation per compared pair of a tile.
const SORT_WORKGROUP_SIZE: u32 = 256u;

// The tile of the bitonic steps shorter than SORT_TILE: slot k is slot `base + k` of the sort.
var<workgroup> sort_tile: array<vec2<u32>, SORT_TILE>;

// The bitonic steps of distance below SORT_TILE on `sort_tile` (the first `live` slots, a power
// of two; invocation `local` of SORT_WORKGROUP_SIZE compares one pair per step): with `block` at
// most SORT_TILE, every block 2, 4, .. block from distance block / 2 down to 1 (the sort's first
// steps); above, the end of `block`'s merge, from `distance` (< SORT_TILE) down to 1. Each step
// is bitonic_pair's, its direction from the slot in the whole sort. Holds barriers: call from
// uniform control flow.
fn bitonic_tile(local: u32, base: u32, live: u32, block: u32, distance: u32) {
    let whole = block <= SORT_TILE;
    var b = select(block, 2u, whole);
    loop {
        var d = select(distance, b / 2u, whole);
        loop {
            workgroupBarrier();
            let at = bitonic_pair(local, d, b);
            if local < live / 2u {
                let x = sort_tile[at.x];
                let y = sort_tile[at.y];
                if key_greater(x, y) == (((base + at.x) & b) == 0u) {
                    sort_tile[at.x] = y;
                    sort_tile[at.y] = x;
                }
            }
            if d <= 1u {
                break;
            }
            d /= 2u;
        }
        if b >= block {
            break;
        }
        b *= 2u;
    }
    workgroupBarrier();
}

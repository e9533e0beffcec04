// Orders rays by origin before the traversal, so that neighbouring invocations of raycast.wgsl
// walk the same part of the BVH. Host (Rust twin): src/raycast/order.rs. GpuRayOrderParams
// must match crate::raycast::layout::GpuRayOrderParams (checked by tests/raycast_layout.rs).
// 1. `codes`: each ray's 30-bit Morton code of its origin in the BVH frame (as the traversal
//    computes it) in the BVH's bounds, clamped outside, paired with the ray's index.
// 2. (Host: crate::gpu's radix sort.) The pairs sorted by code, stably: ties keep index order.
// 3. `gather`: the rays in that order, each carrying its index in the caller's batch.
//
// Compiled after shaders/common/morton.wgsl and shaders/raycast/layout.wgsl (see RAY_ORDER_WGSL).

// Must match crate::raycast::layout::WORKGROUP_SIZE.
const WORKGROUP_SIZE: u32 = 64u;

// Must match crate::raycast::layout::GpuRayOrderParams (BVH frame).
struct GpuRayOrderParams {
    bvh_origin_hi: vec3<f32>,
    ray_count: u32,
    bvh_origin_lo: vec3<f32>,
    bounds_encoded: u32,
    bounds_min: vec3<f32>,
    bounds_max: vec3<f32>,
}

@group(0) @binding(0) var<storage, read> rays: array<GpuRay>;
// The GPU BVH build's encoded bounds (decode_bounds), read when `bounds_encoded` is 1.
@group(0) @binding(1) var<storage, read> bounds: array<u32>;
// (Morton code, ray index) pairs: step 1 writes them, step 3 reads them sorted.
@group(0) @binding(2) var<storage, read_write> keys: array<vec2<u32>>;
@group(0) @binding(3) var<storage, read_write> ordered: array<GpuRay>;
@group(0) @binding(4) var<uniform> params: GpuRayOrderParams;

@compute @workgroup_size(WORKGROUP_SIZE)
fn codes_main(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if i >= params.ray_count {
        return;
    }
    let ray = rays[i];
    let origin = (ray.origin_hi - params.bvh_origin_hi) + (ray.origin_lo - params.bvh_origin_lo);
    var region = Bounds(params.bounds_min, params.bounds_max);
    if params.bounds_encoded != 0u {
        region = decode_bounds(array<u32, 6>(bounds[0], bounds[1], bounds[2], bounds[3], bounds[4], bounds[5]));
    }
    keys[i] = vec2<u32>(morton_code(origin, region.lo, region.hi), i);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn gather_main(@builtin(global_invocation_id) id: vec3<u32>) {
    let k = id.x;
    if k >= params.ray_count {
        return;
    }
    let index = keys[k].y;
    var ray = rays[index];
    ray.index = index;
    ordered[k] = ray;
}

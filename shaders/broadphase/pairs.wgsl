// The GPU broadphase: candidate pairs from a BVH built on the GPU (shaders/bvh/bvh_build.wgsl).
// Host (Rust twin): src/broadphase/gpu.rs; every struct and constant below must match it
// (checked by tests/gpu_broadphase_layout.rs). The CPU reference is src/broadphase/sweep.rs.
// One entry point per step:
// 1. `pairs`: one invocation per bounded body i, its (padded) box grown by the margin: a stack
//    traversal of the tree; at each leaf body j, a bounded j > i whose box overlaps, or a
//    half-space j by the CPU's plane rule, appends [min(i, j), max(i, j)] with an atomic
//    counter. Slots past the capacity are not written but counted, so the count is true.
// 2. `pad`: slots from the count to the sort's power of two get [MAX, MAX] (sort last).
// 3. `sort_prepare`: one invocation writes each sort dispatch's indirect arguments for the
//    pairs actually written (steps of larger blocks dispatch nothing).
// 4. A bitonic sort of the pairs (a, then b), in the build's dispatches (crate::bvh::gpu::
//    sort_plan): `sort_step`, one compare-exchange step of distance SORT_TILE or more;
//    `sort_tile`, the steps below it, each workgroup on one tile in workgroup memory.
//
// Compiled after shaders/common/quat.wgsl (quat_rotate) and shaders/bvh/layout.wgsl (the
// BVH's structs; see BROADPHASE_WGSL).

// Must match crate::broadphase::gpu::BROADPHASE_WORKGROUP_SIZE.
const WORKGROUP_SIZE: u32 = 64u;
// Must match crate::broadphase::gpu::HALF_SPACE_SLACK.
const HALF_SPACE_SLACK: f32 = 0x1p-16f;
// Must match crate::broadphase::gpu::COUNT_SATURATED.
const COUNT_SATURATED: u32 = 0x80000000u;
// Must match crate::broadphase::gpu::INCOMPLETE_BIT.
const INCOMPLETE_BIT: u32 = 1u;
// Must match crate::broadphase::gpu::STACK_OVERFLOW_BIT.
const STACK_OVERFLOW_BIT: u32 = 2u;
// Must match crate::broadphase::gpu::SATURATED_BIT.
const SATURATED_BIT: u32 = 4u;

// Must match crate::broadphase::gpu::GpuPairCount.
struct GpuPairCount {
    count: atomic<u32>,
    flags: atomic<u32>,
    _pad0: u32,
    _pad1: u32,
}

// Must match crate::broadphase::gpu::GpuBroadphaseParams (one per dispatch, dynamic offset).
struct GpuBroadphaseParams {
    origin_hi: vec3<f32>,
    body_count: u32,
    origin_lo: vec3<f32>,
    node_count: u32,
    margin: f32,
    capacity: u32,
    sort_count: u32,
    sort_block: u32,
    sort_distance: u32,
    max_groups: u32,
}

@group(0) @binding(0) var<storage, read> shapes: array<GpuBvhShape>;
@group(0) @binding(1) var<storage, read> bodies: array<GpuBvhBody>;
// Each body's padded box, BVH frame, by body index (bvh_build.wgsl step 1).
@group(0) @binding(2) var<storage, read> boxes: array<BvhNode>;
@group(0) @binding(3) var<storage, read> nodes: array<BvhNode>;
@group(0) @binding(4) var<storage, read> body_list: array<u32>;
@group(0) @binding(5) var<storage, read_write> pairs: array<vec2<u32>>;
@group(0) @binding(6) var<storage, read_write> counter: GpuPairCount;
@group(0) @binding(7) var<uniform> params: GpuBroadphaseParams;
// Step 3 only (group 1, so the sort steps never bind the buffer they dispatch from).
@group(1) @binding(0) var<storage, read_write> dispatch_args: array<u32>;

// Step 1's half-space rule (sweep.rs step 4): the lowest point of box `b` (BVH frame) along
// the world plane normal of half-space body `j` is within the margin of the plane, plus a
// slack for the CPU's f32 world arithmetic and the two sides' normals.
fn near_half_space(b: BvhNode, j: u32, world_i: f32) -> bool {
    let body = bodies[j];
    let plane = shapes[body.shape];
    let normal = quat_rotate(body.rotation, plane.centre);
    let t = (body.translation_hi - params.origin_hi) + (body.translation_lo - params.origin_lo);
    let offset = plane.radius + dot(normal, t);
    let centre = (b.min + b.max) * 0.5;
    let half = (b.max - b.min) * 0.5;
    let lowest = dot(normal, centre) - dot(abs(normal), half);
    let world = world_i + max_abs(body.translation_hi) + abs(plane.radius) + max_abs(t)
        + max(max_abs(b.min), max_abs(b.max));
    return lowest - offset <= params.margin + HALF_SPACE_SLACK * world;
}

// Appends a pair: counted always, written only below the capacity.
fn emit(a: u32, b: u32) {
    let slot = atomicAdd(&counter.count, 1u);
    if slot < params.capacity {
        pairs[slot] = vec2<u32>(a, b);
    }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn pairs_main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = linear_id(id, groups);
    if i >= params.body_count {
        return;
    }
    let body = bodies[i];
    if shapes[body.shape].unbounded != 0u {
        return;
    }
    // Step 1: the box grown by the margin (the node test below is the CPU's overlap test).
    let b = boxes[i];
    let lo = b.min - vec3<f32>(params.margin);
    let hi = b.max + vec3<f32>(params.margin);
    let world_i = max_abs(body.translation_hi);
    var flags = 0u;
    var stack: array<u32, BVH_STACK_SIZE>;
    var len = select(0u, 1u, params.node_count > 0u);
    stack[0] = 0u;
    while len > 0u {
        len -= 1u;
        let node = nodes[stack[len]];
        if any(node.min > hi) || any(node.max < lo) {
            continue;
        }
        if node.count > 0u {
            // Stop once the count cannot grow without wrapping: the caller sees "at least".
            if atomicLoad(&counter.count) >= COUNT_SATURATED {
                flags |= SATURATED_BIT;
                break;
            }
            for (var k = 0u; k < node.count; k++) {
                let j = body_list[node.first + k];
                if j == i {
                    continue;
                }
                if shapes[bodies[j].shape].unbounded != 0u {
                    if near_half_space(b, j, world_i) {
                        emit(min(i, j), max(i, j));
                    }
                } else if j > i {
                    let other = boxes[j];
                    if all(other.min <= hi) && all(lo <= other.max) {
                        emit(i, j);
                    }
                }
            }
            continue;
        }
        if len + 2u > BVH_STACK_SIZE {
            flags |= STACK_OVERFLOW_BIT;
            break;
        }
        stack[len] = node.first;
        stack[len + 1u] = node.first + 1u;
        len += 2u;
    }
    // llvmpipe stops every loop of an invocation group, silently, once ~65,535 iterations are
    // spent (see crate::gpu): a two-step loop run last is cut short exactly then.
    let wanted = min(2u, params.body_count + 1u);
    var steps = 0u;
    for (var k = 0u; k < wanted; k++) {
        steps += 1u;
    }
    if steps < wanted {
        flags |= INCOMPLETE_BIT;
    }
    if flags != 0u {
        atomicOr(&counter.flags, flags);
    }
}

// The pairs written: the count, clamped to the capacity.
fn written() -> u32 {
    return min(atomicLoad(&counter.count), params.capacity);
}

// The smallest power of two >= n (1 for n <= 1).
fn power_of_two(n: u32) -> u32 {
    return select(1u, 1u << (firstLeadingBit(n - 1u) + 1u), n > 1u);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn pad_main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let t = linear_id(id, groups);
    if t >= params.sort_count || t < written() {
        return;
    }
    pairs[t] = vec2<u32>(0xffffffffu, 0xffffffffu);
}

// Writes dispatch `step`'s indirect arguments: `groups` workgroups as a 2-D grid within
// max_groups per dimension, or none unless `live`.
fn write_dispatch(step: u32, groups: u32, live: bool) {
    let x = max(min(groups, params.max_groups), 1u);
    let y = (groups + x - 1u) / x;
    dispatch_args[3u * step] = select(0u, x, live);
    dispatch_args[3u * step + 1u] = select(0u, y, live);
    dispatch_args[3u * step + 2u] = select(0u, 1u, live);
}

@compute @workgroup_size(1)
fn sort_prepare_main() {
    // The host's dispatch order (crate::bvh::gpu::sort_plan): the blocks up to a tile in one
    // tile step, then per merge of block 2 * SORT_TILE.. sort_count its steps of distance
    // SORT_TILE and more, then one tile step; over the first n slots only.
    let n = power_of_two(written());
    let steps = (n / 2u + WORKGROUP_SIZE - 1u) / WORKGROUP_SIZE;
    let tiles = (n + SORT_TILE - 1u) / SORT_TILE;
    var step = 0u;
    if params.sort_count > 1u {
        write_dispatch(step, tiles, n > 1u);
        step += 1u;
    }
    for (var block = 2u * SORT_TILE; block <= params.sort_count; block *= 2u) {
        for (var distance = block / 2u; distance >= SORT_TILE; distance /= 2u) {
            write_dispatch(step, steps, block <= n);
            step += 1u;
        }
        write_dispatch(step, tiles, block <= n);
        step += 1u;
    }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn sort_step_main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    // As bvh_build.wgsl's sort_step, over the first power_of_two(written()) slots (the rest
    // already hold [MAX, MAX] and need no step).
    let t = linear_id(id, groups);
    if t >= power_of_two(written()) / 2u {
        return;
    }
    let at = bitonic_pair(t, params.sort_distance, params.sort_block);
    let a = pairs[at.x];
    let b = pairs[at.y];
    if key_greater(a, b) == (at.z == 1u) {
        pairs[at.x] = b;
        pairs[at.y] = a;
    }
}

@compute @workgroup_size(SORT_WORKGROUP_SIZE)
fn sort_tile_main(
    @builtin(local_invocation_index) local: u32,
    @builtin(workgroup_id) group: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    // As bvh_build.wgsl's sort_tile, on the pairs: workgroup t sorts slots t * SORT_TILE..,
    // dispatched over the first power_of_two(written()) slots.
    let base = (group.y * groups.x + group.x) * SORT_TILE;
    if base >= params.sort_count {
        return;
    }
    let live = min(SORT_TILE, params.sort_count);
    for (var k = local; k < live; k += SORT_WORKGROUP_SIZE) {
        sort_tile[k] = pairs[base + k];
    }
    bitonic_tile(local, base, live, params.sort_block, params.sort_distance);
    for (var k = local; k < live; k += SORT_WORKGROUP_SIZE) {
        pairs[base + k] = sort_tile[k];
    }
}

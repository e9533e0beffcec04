// The GPU broadphase: candidate pairs from a BVH built on the GPU (shaders/bvh/bvh_build.wgsl).
// Host (Rust twin): src/broadphase/gpu.rs; every struct and constant below must match it
// (checked by tests/gpu_broadphase_layout.rs). The CPU reference is src/broadphase/sweep.rs.
// `pairs`: one invocation per bounded body i, taken in the tree's (Morton) order so neighbouring
// invocations walk the same nodes, its (padded) box grown by the margin: a stackless traversal of
// the tree (heap order) over the bodies after i's place in that order only (subtrees wholly at
// or before it are skipped by their last place, so each pair is met once); at each leaf body j
// whose box overlaps (a half-space's always does; they come last in the order), a bounded j, or
// a half-space j by the CPU's plane rule, appends [min(i, j), max(i, j)] with an atomic counter
// (up to four pairs per append); two static bodies (a mesh with a mesh or a half-space) and a
// mesh with a compound are never paired. Slots past the capacity are not written but counted,
// so the count is true. The optional sort is crate::gpu's radix sort
// (shaders/common/radix_sort.wgsl).
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
// Must match crate::broadphase::gpu::SATURATED_BIT.
const SATURATED_BIT: u32 = 4u;

// Must match crate::broadphase::gpu::GpuPairCount.
struct GpuPairCount {
    count: atomic<u32>,
    flags: atomic<u32>,
    _pad0: u32,
    _pad1: u32,
}

// Must match crate::broadphase::gpu::GpuBroadphaseParams.
struct GpuBroadphaseParams {
    origin_hi: vec3<f32>,
    body_count: u32,
    origin_lo: vec3<f32>,
    node_count: u32,
    margin: f32,
    capacity: u32,
}

@group(0) @binding(0) var<storage, read> shapes: array<GpuBvhShape>;
@group(0) @binding(1) var<storage, read> bodies: array<GpuBody>;
// Each body's padded box, BVH frame, by body index (bvh_build.wgsl step 1).
@group(0) @binding(2) var<storage, read> boxes: array<BvhNode>;
@group(0) @binding(3) var<storage, read> nodes: array<BvhNode>;
@group(0) @binding(4) var<storage, read> body_list: array<u32>;
@group(0) @binding(5) var<storage, read_write> pairs: array<vec2<u32>>;
@group(0) @binding(6) var<storage, read_write> counter: GpuPairCount;
@group(0) @binding(7) var<uniform> params: GpuBroadphaseParams;

// The half-space rule (sweep.rs step 4): the lowest point of box `b` (BVH frame) along
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

// The last place in the body list (the tree's order) under node k of the implicit tree
// (shaders/bvh/bvh_build.wgsl steps 4-5: heap order, 2 * leaves - 1 nodes, leaves ranked in
// order from the deepest level's first node): its rightmost leaf's last body.
fn last_place(k: u32) -> u32 {
    let nodes = params.node_count;
    let leaves = (nodes + 1u) / 2u;
    let depth = firstLeadingBit(nodes);
    let deepest = (1u << depth) - 1u;
    let shift = depth - firstLeadingBit(k + 1u);
    // The rightmost descendant on the deepest level, else (past the last node) one level up.
    var leaf = ((k + 2u) << shift) - 2u;
    if leaf >= nodes {
        leaf = ((k + 2u) << (shift - 1u)) - 2u;
    }
    let rank = select(nodes - deepest + leaf - (leaves - 1u), leaf - deepest, leaf >= deepest);
    return min(rank * HEAP_LEAF_SIZE + HEAP_LEAF_SIZE, params.body_count) - 1u;
}

// Pairs an invocation holds before appending them with one atomicAdd (fewer appends to the
// one contended counter); flush_held writes as many.
const PAIR_BATCH: u32 = 4u;
var<private> held: array<vec2<u32>, PAIR_BATCH>;
var<private> held_count: u32;

// Writes held pair k at slot `first + k` when k is held and the slot is below the capacity.
fn write_held(first: u32, k: u32) {
    if k < held_count && first + k < params.capacity {
        pairs[first + k] = held[k];
    }
}

// Appends the held pairs: counted always, written only below the capacity (unrolled: llvmpipe
// spends its loop budget per iteration). False once the count had reached COUNT_SATURATED:
// the caller stops, so each invocation adds at most PAIR_BATCH past it and the count
// (bodies < 2^29, crate::broadphase::gpu::MAX_BODIES) never wraps.
fn flush_held() -> bool {
    if held_count == 0u {
        return true;
    }
    let first = atomicAdd(&counter.count, held_count);
    write_held(first, 0u);
    write_held(first, 1u);
    write_held(first, 2u);
    write_held(first, 3u);
    held_count = 0u;
    return first < COUNT_SATURATED;
}

// Holds pair [a, b], appending the held pairs once PAIR_BATCH are held; false as flush_held.
fn emit(a: u32, b: u32) -> bool {
    held[held_count] = vec2<u32>(a, b);
    held_count += 1u;
    return held_count < PAIR_BATCH || flush_held();
}

// The pairs of body i (at `slot`, box b grown to lo..hi) with the bodies of `leaf` after it;
// false when an append found the count saturated (emit).
fn leaf_pairs(
    leaf: BvhNode,
    slot: u32,
    i: u32,
    b: BvhNode,
    lo: vec3<f32>,
    hi: vec3<f32>,
    static_i: bool,
    refused: u32,
    world_i: f32,
) -> bool {
    for (var place = max(leaf.first, slot + 1u); place < leaf.first + leaf.count; place++) {
        let j = body_list[place];
        let other = boxes[j];
        if any(other.min > hi) || any(lo > other.max) {
            continue;
        }
        let other_shape = shapes[bodies[j].shape];
        var paired = false;
        if other_shape.unbounded != 0u {
            paired = !static_i && near_half_space(b, j, world_i);
        } else {
            paired = (other_shape.flags & refused) == 0u;
        }
        if paired && !emit(min(i, j), max(i, j)) {
            return false;
        }
    }
    return true;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn pairs_main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let slot = linear_id(id, groups);
    if slot >= params.body_count {
        return;
    }
    let i = body_list[slot];
    let body = bodies[i];
    if shapes[body.shape].unbounded != 0u {
        return;
    }
    // The batch's door (scene::validate::never_paired): a static body (a mesh) pairs with
    // no static one (a mesh or a half-space).
    let static_i = (shapes[body.shape].flags & SHAPE_FLAG_STATIC) != 0u;
    // The flags a bounded j must not have.
    let refused = select(0u, SHAPE_FLAG_STATIC, static_i);
    // The box grown by the margin (the node test below is the CPU's overlap test).
    let b = boxes[i];
    let lo = b.min - vec3<f32>(params.margin);
    let hi = b.max + vec3<f32>(params.margin);
    let world_i = max_abs(body.translation_hi);
    var flags = 0u;
    // Depth first, left to right, without a stack: n is the node's heap index plus one, so a
    // left child is even, its sibling n + 1, its first child 2n (node_count = 0: no node).
    var n = select(0u, 1u, params.node_count > 0u);
    while n != 0u {
        let k = n - 1u;
        var descend = false;
        if last_place(k) > slot {
            let node = nodes[k];
            if all(node.min <= hi) && all(lo <= node.max) {
                if node.count == 0u {
                    descend = true;
                } else if !leaf_pairs(node, slot, i, b, lo, hi, static_i, refused, world_i) {
                    // Stop once the count cannot grow without wrapping: the caller sees "at least".
                    flags |= SATURATED_BIT;
                    break;
                }
            }
        }
        if descend {
            n = 2u * n;
        } else {
            // Past this subtree: up while a right child (odd n), then to the right sibling; the
            // root's last right child climbs to 0, the end.
            n = n >> countTrailingZeros(~n);
            n = select(n + 1u, 0u, n == 0u);
        }
    }
    if !flush_held() {
        flags |= SATURATED_BIT;
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

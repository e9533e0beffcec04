// Builds the ray-cast BVH on the GPU from bodies already in a GPU buffer. Host (Rust twin):
// src/bvh/gpu.rs. Every struct and constant mirrors src/bvh/gpu.rs or src/bvh/cpu.rs ("must match";
// checked by tests/raycast_layout.rs). The output is crate::bvh::BvhNode, traversed
// unchanged by raycast.wgsl. One entry point per step, one dispatch each (the inner levels: one
// per level, its numbers in `params` at a dynamic offset):
// 1. `boxes`: each body's box in the BVH frame (world minus the origin): a boxed hull's over its
//    rotated vertices, another shape's its local box rotated; grown to contain the CPU's box
//    (world_aabb, f64 translation); half-spaces get a huge box. Bounds of the bounded box
//    centres, by atomic max on order-preserving u32 encodings (deterministic), per workgroup
//    first.
// 2. `codes`: each body's 30-bit Morton code in those bounds (half-spaces: past every code),
//    paired with its index, in index order.
// 3. (Host: crate::gpu's radix sort, shaders/common/radix_sort.wgsl.) The pairs sorted by code,
//    stably: ties stay in index order.
// Then the tree: crate::bvh::gpu::TreeLayout::Heap (steps 4-5) or Prefix (steps 6-8).
// 4. `leaves`: the leaves of an implicit complete binary tree in heap order (children of k at
//    2k + 1 and 2k + 2), leaf i in-order taking the i-th bucket of HEAP_LEAF_SIZE sorted bodies:
//    the union of their boxes, and their indices in the body list.
// 5. `inner`: one tree level of inner nodes, each the union of its two children.
// 6. `sorted`: the body list; and level 1 of the box pyramid over the tree's places
//    (params.leaf_count, the first of the sorted order; half-spaces sort last, and a caller may
//    leave them apart), after the body boxes in `boxes`: block b the union of places 2b and
//    2b + 1's boxes (level 0, read through the keys).
// 7. `blocks`: one pyramid level above 1, block b the union of blocks 2b and 2b + 1 below.
// 8. `prefix`: inner node i of the radix tree over the sorted keys (Karras): its range and
//    split from the keys alone, then its two children at nodes 2i + 1 and 2i + 2 (the root at
//    0): a leaf of one body, or inner node j with children at 2j + 1, boxed by the pyramid's
//    blocks that tile its range.
//
// Compiled after shaders/common/quat.wgsl (quat_rotate) and shaders/bvh/layout.wgsl (the
// shared structs; see BVH_BUILD_WGSL).

// Must match crate::bvh::gpu::BVH_BUILD_WORKGROUP_SIZE.
const WORKGROUP_SIZE: u32 = 64u;
// Must match crate::bvh::BVH_PADDING.
const BVH_PADDING: f32 = 1e-5;
// Must match crate::bvh::gpu::SPLIT_PADDING.
const SPLIT_PADDING: f32 = 0x1p-44f;
// Must match crate::bvh::gpu::UNBOUNDED_EXTENT.
const UNBOUNDED_EXTENT: f32 = 1e18;
// Must match crate::bvh::gpu::CYLINDER_RIM_SLACK.
const CYLINDER_RIM_SLACK: f32 = 0x1p-18f;
// Must match crate::bvh::gpu::UNBOUNDED_CODE: after every 30-bit Morton code.
const UNBOUNDED_CODE: u32 = 0xffffffffu;

// Must match crate::bvh::gpu::GpuBvhParams (one per dispatch, at a dynamic offset).
struct GpuBvhParams {
    origin_hi: vec3<f32>,
    body_count: u32,
    origin_lo: vec3<f32>,
    leaf_count: u32,
    level_first: u32,
    level_count: u32,
    world_padding: f32,
    source_first: u32,
    source_count: u32,
}

@group(0) @binding(0) var<storage, read> shapes: array<GpuBvhShape>;
@group(0) @binding(1) var<storage, read> bodies: array<GpuBody>;
// Step 1's body boxes, BVH frame (`first` = body index, `count` unused), by body index; in a
// prefix tree build, the box pyramid after them (steps 6-8).
@group(0) @binding(2) var<storage, read_write> boxes: array<BvhNode>;
// Encoded centre bounds: 0..3 hold ~encode(min) per axis, 3..6 encode(max) (cleared to 0).
@group(0) @binding(3) var<storage, read_write> bounds: array<atomic<u32>>;
// (Morton code, body index) pairs, one per body.
@group(0) @binding(4) var<storage, read_write> keys: array<vec2<u32>>;
@group(0) @binding(5) var<storage, read_write> nodes: array<BvhNode>;
@group(0) @binding(6) var<storage, read_write> body_list: array<u32>;
@group(0) @binding(7) var<uniform> params: GpuBvhParams;
// Boxed hulls' vertices, shape frame (xyz; w unused), ranges in GpuBvhShape.
@group(0) @binding(8) var<storage, read> vertices: array<vec4<f32>>;

// f32 -> u32 preserving order: flip every bit of a negative, the sign bit of a positive.
fn order_encode(x: f32) -> u32 {
    let bits = bitcast<u32>(x);
    return select(bits | 0x80000000u, ~bits, (bits & 0x80000000u) != 0u);
}

fn order_decode(e: u32) -> f32 {
    return bitcast<f32>(select(~e, e & 0x7fffffffu, (e & 0x80000000u) != 0u));
}

// Step 1's centre bounds of the workgroup's bodies, encoded as `bounds` (0: none yet).
var<workgroup> group_bounds: array<atomic<u32>, 6>;

// A body's box centre (BVH frame), and whether the body is bounded (not a half-space).
struct BoxCentre {
    centre: vec3<f32>,
    bounded: bool,
}

// Step 1 for body i: writes its box; returns its centre.
fn body_box(i: u32) -> BoxCentre {
    let body = bodies[i];
    let shape = shapes[body.shape];
    if shape.unbounded != 0u {
        // Half-space: a box every ray enters (slab distances stay finite, centre 0).
        boxes[i] = BvhNode(vec3<f32>(-UNBOUNDED_EXTENT), i, vec3<f32>(UNBOUNDED_EXTENT), 0u);
        return BoxCentre(vec3<f32>(0.0), false);
    }
    // Translation in the BVH frame: the hi parts' difference first (exact when close).
    let offset = (body.translation_hi - params.origin_hi) + (body.translation_lo - params.origin_lo);
    let q = body.rotation;
    var lo: vec3<f32>;
    var hi: vec3<f32>;
    // Scale of the rotation's f32 error (length units), and a bound on |rotated coordinates|.
    var turned: f32;
    var rotated: f32;
    if shape.vertex_count > 0u {
        // Boxed hull: the extremes of its vertices rotated by glam's formula (as world_aabb),
        // then the translation. At most MAX_BOXED_VERTICES iterations (llvmpipe's loop budget).
        var vmin = vec3<f32>(3.0e38);
        var vmax = vec3<f32>(-3.0e38);
        for (var k = 0u; k < shape.vertex_count; k++) {
            let p = quat_rotate(q, vertices[shape.first_vertex + k].xyz);
            vmin = min(vmin, p);
            vmax = max(vmax, p);
        }
        lo = offset + vmin;
        hi = offset + vmax;
        turned = shape.reach;
        rotated = max(max_abs(vmin), max_abs(vmax));
    } else {
        // Rotated local box: centre R c, half |R| h (|R| element-wise), plus the radius.
        let centre = offset + quat_rotate(q, shape.centre);
        let axis = quat_rotate(q, vec3<f32>(0.0, 1.0, 0.0));
        var half = abs(quat_rotate(q, vec3<f32>(1.0, 0.0, 0.0))) * shape.half.x + abs(axis) * shape.half.y
            + abs(quat_rotate(q, vec3<f32>(0.0, 0.0, 1.0))) * shape.half.z + vec3<f32>(shape.radius);
        if (shape.flags & SHAPE_FLAG_CYLINDER) != 0u {
            // The true cylinder's box: h |a| + r sqrt(1 - a²) per axis (Cylinder::
            // rotated_half_extents); CYLINDER_RIM_SLACK covers a²'s f32 error under the root.
            let rim = sqrt(max(vec3<f32>(1.0) - axis * axis, vec3<f32>(0.0)) + CYLINDER_RIM_SLACK);
            half = abs(axis) * shape.half.y + rim * shape.radius;
        }
        lo = centre - half;
        hi = centre + half;
        turned = length(shape.centre);
        rotated = max_abs(half) + length(shape.centre);
    }
    // The CPU's padding (bvh.rs step 1) plus the f32 error of the rotation (this one against
    // the CPU's: under 2^-18 of each vertex's |v|, docs/design/gpu-bvh.md; or of rotating the
    // local centre) and of the split translations (2^-48 of each, see split_translation).
    let extent = hi - lo;
    let scale = max(max_abs(lo), max_abs(hi)) + max(extent.x, max(extent.y, extent.z)) + turned;
    // The caller's world padding (0 for rays) scales with a bound on the world coordinates.
    let world = max_abs(body.translation_hi) + rotated;
    let pad = BVH_PADDING * scale + SPLIT_PADDING * (max_abs(body.translation_hi) + max_abs(params.origin_hi))
        + params.world_padding * world;
    boxes[i] = BvhNode(lo - pad, i, hi + pad, 0u);
    return BoxCentre((lo + hi) * 0.5, true);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn boxes_main(
    @builtin(global_invocation_id) id: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) local: u32,
) {
    if local < 6u {
        atomicStore(&group_bounds[local], 0u);
    }
    workgroupBarrier();
    let i = linear_id(id, groups);
    if i < params.body_count {
        let b = body_box(i);
        // Centre bounds: max of ~encode gives the min, max of encode the max; the workgroup's
        // first, then one global atomic per bound (every body's on one word each contended).
        if b.bounded {
            for (var axis = 0u; axis < 3u; axis++) {
                let e = order_encode(b.centre[axis]);
                atomicMax(&group_bounds[axis], ~e);
                atomicMax(&group_bounds[3u + axis], e);
            }
        }
    }
    workgroupBarrier();
    if local < 6u {
        let e = atomicLoad(&group_bounds[local]);
        if e != 0u {
            atomicMax(&bounds[local], e);
        }
    }
}

// Spreads the low 10 bits of v two bits apart (bit b to bit 3b).
fn spread_bits(v: u32) -> u32 {
    var x = v & 0x3ffu;
    x = (x | (x << 16u)) & 0x030000ffu;
    x = (x | (x << 8u)) & 0x0300f00fu;
    x = (x | (x << 4u)) & 0x030c30c3u;
    x = (x | (x << 2u)) & 0x09249249u;
    return x;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn codes_main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = linear_id(id, groups);
    if i >= params.body_count {
        return;
    }
    let b = boxes[i];
    let shape = shapes[bodies[i].shape];
    if shape.unbounded != 0u {
        keys[i] = vec2<u32>(UNBOUNDED_CODE, i);
        return;
    }
    let lo = vec3<f32>(
        order_decode(~atomicLoad(&bounds[0])),
        order_decode(~atomicLoad(&bounds[1])),
        order_decode(~atomicLoad(&bounds[2])),
    );
    let hi = vec3<f32>(
        order_decode(atomicLoad(&bounds[3])),
        order_decode(atomicLoad(&bounds[4])),
        order_decode(atomicLoad(&bounds[5])),
    );
    // The box centre (step 1's, padded symmetrically), 10 bits per axis of the bounds.
    let centre = (b.min + b.max) * 0.5;
    let extent = hi - lo;
    let unit = select(vec3<f32>(0.0), (centre - lo) / extent, extent > vec3<f32>(0.0));
    let cell = vec3<u32>(clamp(unit * 1024.0, vec3<f32>(0.0), vec3<f32>(1023.0)));
    let code = (spread_bits(cell.x) << 2u) | (spread_bits(cell.y) << 1u) | spread_bits(cell.z);
    keys[i] = vec2<u32>(code, i);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn leaves_main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let t = linear_id(id, groups);
    let leaves = params.leaf_count;
    if t >= leaves {
        return;
    }
    // Leaf node t + leaves - 1; the deepest level starts at node 2^depth - 1 and holds the
    // first leaves in order, the level above the rest.
    let node = leaves - 1u + t;
    let deepest = (1u << firstLeadingBit(2u * leaves - 1u)) - 1u;
    let rank = select((2u * leaves - 1u - deepest) + t, node - deepest, node >= deepest);
    let first = rank * HEAP_LEAF_SIZE;
    let count = min(HEAP_LEAF_SIZE, params.body_count - first);
    var lo = vec3<f32>(3.0e38);
    var hi = vec3<f32>(-3.0e38);
    for (var k = 0u; k < count; k++) {
        let body = keys[first + k].y;
        let b = boxes[body];
        lo = min(lo, b.min);
        hi = max(hi, b.max);
        body_list[first + k] = body;
    }
    nodes[node] = BvhNode(lo, first, hi, count);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn inner_main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let t = linear_id(id, groups);
    if t >= params.level_count {
        return;
    }
    // Node k's children are 2k + 1 and 2k + 2, adjacent as BvhNode::first needs.
    let k = params.level_first + t;
    let a = nodes[2u * k + 1u];
    let b = nodes[2u * k + 2u];
    nodes[k] = BvhNode(min(a.min, b.min), 2u * k + 1u, max(a.max, b.max), 0u);
}

// The box of the body at sorted place p (level 0 of the pyramid).
fn place_box(p: u32) -> BvhNode {
    return boxes[keys[p].y];
}

// The union of boxes a and b (as a block: `first` and `count` 0).
fn union_box(a: BvhNode, b: BvhNode) -> BvhNode {
    return BvhNode(min(a.min, b.min), 0u, max(a.max, b.max), 0u);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn sorted_main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let place = linear_id(id, groups);
    if place >= params.body_count {
        return;
    }
    body_list[place] = keys[place].y;
    if place % 2u == 0u && place < params.leaf_count {
        var block = place_box(place);
        if place + 1u < params.leaf_count {
            block = union_box(block, place_box(place + 1u));
        }
        boxes[params.level_first + place / 2u] = block;
    }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn blocks_main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let t = linear_id(id, groups);
    if t >= params.level_count {
        return;
    }
    var block = boxes[params.source_first + 2u * t];
    if 2u * t + 1u < params.source_count {
        block = union_box(block, boxes[params.source_first + 2u * t + 1u]);
    }
    boxes[params.level_first + t] = block;
}

// Step 8's common prefix of the sorted keys at places i and j: the leading bits their codes
// share, or 32 plus those their places share when the codes are equal; -1 when j is outside
// the tree's places.
fn common_prefix(i: u32, j: i32) -> i32 {
    if j < 0 || j >= i32(params.leaf_count) {
        return -1;
    }
    let a = keys[i].x;
    let b = keys[u32(j)].x;
    if a != b {
        return i32(countLeadingZeros(a ^ b));
    }
    return 32 + i32(countLeadingZeros(i ^ u32(j)));
}

// Step 8's box of the sorted bodies at places first..=last: the union of the pyramid's blocks
// that tile the range, at most two a level (level 0 the places' own boxes, level 1 at
// params.level_first).
fn range_box(first: u32, last: u32) -> BvhNode {
    var l = first;
    var r = last + 1u;
    var b = BvhNode(vec3<f32>(3.0e38), 0u, vec3<f32>(-3.0e38), 0u);
    if (l & 1u) != 0u {
        b = union_box(b, place_box(l));
        l += 1u;
    }
    if (r & 1u) != 0u {
        r -= 1u;
        b = union_box(b, place_box(r));
    }
    l >>= 1u;
    r >>= 1u;
    var level_first = params.level_first;
    var level_count = (params.leaf_count + 1u) >> 1u;
    while l < r {
        if (l & 1u) != 0u {
            b = union_box(b, boxes[level_first + l]);
            l += 1u;
        }
        if (r & 1u) != 0u {
            r -= 1u;
            b = union_box(b, boxes[level_first + r]);
        }
        l >>= 1u;
        r >>= 1u;
        level_first += level_count;
        level_count = (level_count + 1u) >> 1u;
    }
    return b;
}

// Step 8's node for the sorted bodies at places first..=last: a leaf when it is one body, else
// radix-tree inner node `inner` (its children at 2 inner + 1).
fn range_node(first: u32, last: u32, inner: u32) -> BvhNode {
    if first == last {
        let b = place_box(first);
        return BvhNode(b.min, first, b.max, 1u);
    }
    let b = range_box(first, last);
    return BvhNode(b.min, 2u * inner + 1u, b.max, 0u);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn prefix_main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = linear_id(id, groups);
    let n = params.leaf_count;
    if i == 0u {
        // The root: the one body's leaf, or inner node 0 over every place.
        nodes[0] = range_node(0u, n - 1u, 0u);
    }
    if i + 1u >= n {
        return;
    }
    // The direction of i's range: toward the neighbour sharing the longer prefix.
    let at = i32(i);
    let d = select(-1, 1, common_prefix(i, at + 1) > common_prefix(i, at - 1));
    // Its other end: every key of the range shares more than `outside` bits with key i; the
    // length bounded by doubling, then found by halving.
    let outside = common_prefix(i, at - d);
    var bound = 2;
    while common_prefix(i, at + bound * d) > outside {
        bound *= 2;
    }
    var length = 0;
    for (var step = bound / 2; step > 0; step /= 2) {
        if common_prefix(i, at + (length + step) * d) > outside {
            length += step;
        }
    }
    let end = at + length * d;
    // The split: the farthest place from i sharing more than the range's prefix with it.
    let shared_prefix = common_prefix(i, end);
    var split = 0;
    var step = length;
    loop {
        step = (step + 1) / 2;
        if common_prefix(i, at + (split + step) * d) > shared_prefix {
            split += step;
        }
        if step <= 1 {
            break;
        }
    }
    let gamma = u32(at + split * d + min(d, 0));
    let first = u32(min(at, end));
    let last = u32(max(at, end));
    nodes[2u * i + 1u] = range_node(first, gamma, gamma);
    nodes[2u * i + 2u] = range_node(gamma + 1u, last, gamma + 1u);
}

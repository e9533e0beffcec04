// Cost-class ordering of a call's pairs (resident, or a host round's under the clip kernel)
// before the SAT: a counting sort, per dispatch chunk, of the chunk's pairs by a small key (their
// shapes' cost class and, for pairs with hull geometry and no half-space, how far apart they
// lie; most expensive first), so each warp of the SAT and clip kernels holds
// pairs of like cost. The order is left as a permutation in the SAT results' `pair` fields: slot
// s runs pair results[s].pair (sat.wgsl pair_of_slot when params.ordered). Rust twin:
// src/narrowphase/gpu/order.rs (`cost_class`, `has_gap_buckets` and `gap_bucket` are the
// references of the key; keep them in step).
//
// 1. setup (one invocation per chunk): zeroes the chunk's counters; the count's arguments,
//    none unless the prepare kernel left the chunk's `ordered` at 1 (not one workgroup per pair).
// 2. count_classes (PAIRS_PER_INVOCATION pairs per invocation): each pair's key (order_key),
//    kept in `classes`, counted in workgroup memory (one workgroup atomic per pair), the
//    workgroup's counts added to the chunk's (one atomic per key present).
// 3. decide (one invocation per chunk): with two keys present or more, the scatter's arguments,
//    each key's first slot in its cursor (the exclusive prefix of the counts); else no scatter
//    and the chunk's `ordered` back to 0 (the SAT then runs slot s's own pair).
// 4. scatter: each pair takes its rank within the workgroup's run of its key (one workgroup
//    atomic per pair), the workgroup its run of each key on the chunk's cursor (one atomic per
//    key present), then each pair its slot, the run's first plus its rank:
//    results[slot].pair (its index in the dispatch, params.first_pair + its index in the chunk).
//    The order within a key follows the atomics: every output is per pair, none depends on it.
//
// Compiled after geometry.wgsl (GpuShape, GpuParams, bodies, pairs, params, SHAPE_*); count and
// scatter use group 0 (the vertices and the shapes), group 1 (the SAT kernel's: its bind groups
// serve) and group 2 (the sort's own); setup and decide groups 2 and 3 (the chunk's parameters
// and the count's and scatter's arguments).

// Mirrors crate::narrowphase::gpu::order::COST_CLASSES: classes 0 (most expensive) to 15.
const COST_CLASSES: u32 = 16u;
// Mirrors order.rs GAP_BUCKETS: sub-keys of a class, by how far apart the pair lies (gap_bucket).
const GAP_BUCKETS: u32 = 8u;
// Mirrors order.rs ORDER_KEYS: key = class * GAP_BUCKETS + bucket.
const ORDER_KEYS: u32 = 128u;
// Mirrors order.rs CENTRE_LINE_VERTICES: pairs of hulls of at most this many vertices each are
// tested along their centre line.
const CENTRE_LINE_VERTICES: u32 = 64u;
// Mirrors order.rs HULL_KEY_TOP_LOG2: pairs the SAT runs of 2^16 edge pairs and more take class
// 0, each halving one class more.
const HULL_KEY_TOP_LOG2: u32 = 16u;
// Mirrors order.rs KEY_SMALL_HULLS: the last class of pairs the SAT runs (fewer than 2^7 edge pairs).
const KEY_SMALL_HULLS: u32 = 10u;
// Mirrors order.rs KEY_BOX_BOX, KEY_HULL_PRIMITIVE, KEY_CHEAP.
const KEY_BOX_BOX: u32 = 11u;
const KEY_HULL_PRIMITIVE: u32 = 12u;
const KEY_CHEAP: u32 = 15u;
// Mirrors order.rs PRIMITIVE_KEY_TOP_LOG2: a hull of 2^6 edges and more with a sphere or capsule
// takes KEY_HULL_PRIMITIVE, each halving one key more, to KEY_CHEAP - 1.
const PRIMITIVE_KEY_TOP_LOG2: u32 = 6u;
// Mirrors order.rs HALF_SPACE_EDGE_SHIFT: a half-space counts its hull's edges over 2^2.
const HALF_SPACE_EDGE_SHIFT: u32 = 2u;
// Mirrors order.rs EDGE_COUNT_CLAMP: edge counts are clamped to it, so their product fits a u32.
const EDGE_COUNT_CLAMP: u32 = 0xffffu;
// Mirrors order.rs PAIRS_PER_INVOCATION: pairs each invocation of count_classes and scatter takes.
const PAIRS_PER_INVOCATION: u32 = 8u;

// Must match order.rs `GpuOrderCounters`: one dispatch chunk's counts and cursors per key.
struct GpuOrderCounters {
    counts: array<atomic<u32>, ORDER_KEYS>,
    cursors: array<atomic<u32>, ORDER_KEYS>,
}

// Must match order.rs `GpuOrderArgs`: the indirect arguments (x, y, z workgroups, as
// wgpu::util::DispatchIndirectArgs) of one chunk's count and scatter.
struct GpuOrderArgs {
    count: array<u32, 3>,
    scatter: array<u32, 3>,
}

// Group 1, binding 2: the SAT results of the chunk, whose `pair` fields take the permutation.
@group(1) @binding(2) var<storage, read_write> results: array<GpuSatResult>;
// Group 2: each pair's key (the chunk's window), and the chunk's counters.
@group(2) @binding(0) var<storage, read_write> classes: array<u32>;
@group(2) @binding(1) var<storage, read_write> counters: GpuOrderCounters;
// Group 3: the chunk's parameters (the prepare kernel's), which `decide` may clear `ordered` in,
// and the arguments of its count and scatter (apart from the counters, which those bind).
@group(3) @binding(0) var<storage, read_write> chunk_params: GpuParams;
@group(3) @binding(1) var<storage, read_write> args: GpuOrderArgs;

// The workgroup's pairs per key, then (scatter) its first slot per key.
var<workgroup> group_counts: array<atomic<u32>, ORDER_KEYS>;
var<workgroup> group_first: array<u32, ORDER_KEYS>;

// The cost class of shapes `a` and `b` (as order.rs cost_class): pairs the SAT runs by log2 of
// their edge pairs, then two boxes (the box SAT), then a hull or box with a sphere, capsule or
// half-space by the hull's edges (the clip kernel's GJK and loops over the hull), then the rest
// (no hull geometry, or a compound or mesh, which the SAT and clip kernels skip).
fn cost_class(a: GpuShape, b: GpuShape) -> u32 {
    if is_hull(a) && is_hull(b) {
        if a.kind == SHAPE_BOX && b.kind == SHAPE_BOX {
            return KEY_BOX_BOX;
        }
        let edge_pairs = min(a.edge_count, EDGE_COUNT_CLAMP) * min(b.edge_count, EDGE_COUNT_CLAMP);
        let log2 = firstLeadingBit(max(edge_pairs, 1u));
        return min(HULL_KEY_TOP_LOG2 - min(log2, HULL_KEY_TOP_LOG2), KEY_SMALL_HULLS);
    }
    var hull = b;
    var other = a.kind;
    if is_hull(a) {
        hull = a;
        other = b.kind;
    }
    let skipped = other == SHAPE_COMPOUND || other == SHAPE_TRIMESH;
    if !is_hull(hull) || skipped {
        return KEY_CHEAP;
    }
    let edges = select(hull.edge_count, hull.edge_count >> HALF_SPACE_EDGE_SHIFT, other == SHAPE_HALF_SPACE);
    let log2 = firstLeadingBit(max(edges, 1u));
    let below_top = PRIMITIVE_KEY_TOP_LOG2 - min(log2, PRIMITIVE_KEY_TOP_LOG2);
    return KEY_HULL_PRIMITIVE + min(below_top, KEY_CHEAP - 1u - KEY_HULL_PRIMITIVE);
}

// The highest of `shape`'s vertices along `direction` (the shape's frame), as order.rs
// highest_along.
fn highest_along(shape: GpuShape, direction: vec3<f32>) -> f32 {
    var highest = -F32_MAX;
    for (var i = 0u; i < shape.vertex_count; i++) {
        highest = max(highest, dot(vertices[shape.first_vertex + i].xyz, direction));
    }
    return highest;
}

// The sub-key of a pair with gap buckets (as order.rs gap_bucket): the gap between the shapes'
// bounding spheres (centroid and radius, posed by the bodies, world frame) over their reach
// (the radii plus the margin), in GAP_BUCKETS - 1 equal steps from 0 (centroids together: the
// deepest pairs, whose SAT runs longest) to 1; GAP_BUCKETS - 1 for pairs apart (a face
// separates them early): spheres apart, or, for two hulls or boxes of at most
// CENTRE_LINE_VERTICES vertices, vertices apart by more than the margin along the line between
// the centroids.
fn gap_bucket(a: GpuShape, b: GpuShape, body_a: GpuBody, body_b: GpuBody, margin: f32) -> u32 {
    let centre_a = quat_rotate(body_a.rotation, a.centroid);
    let centre_b = quat_rotate(body_b.rotation, b.centroid);
    let apart = body_offset(body_a, body_b);
    let between = apart + centre_b - centre_a;
    let gap = length(between);
    let reach = a.radius + b.radius + margin;
    if !(gap <= reach) {
        return GAP_BUCKETS - 1u;
    }
    let small = is_hull(a) && is_hull(b) && a.vertex_count <= CENTRE_LINE_VERTICES && b.vertex_count <= CENTRE_LINE_VERTICES;
    if gap > 0.0 && small {
        // B's lowest point along the centre line minus A's highest.
        let line = between / gap;
        let reach_a = highest_along(a, quat_rotate(quat_conjugate(body_a.rotation), line));
        let reach_b = highest_along(b, quat_rotate(quat_conjugate(body_b.rotation), -line));
        if dot(apart, line) - reach_b - reach_a > margin {
            return GAP_BUCKETS - 1u;
        }
    }
    return min(u32(gap / reach * f32(GAP_BUCKETS - 1u)), GAP_BUCKETS - 2u);
}

// True for the classes whose pairs take a gap bucket (as order.rs has_gap_buckets): every class
// with hull geometry (the SAT's, two boxes, a hull or box with a sphere or capsule, whose clip's
// face loop ends a pair apart and runs GJK near the surface), not a pair with a half-space (no
// size).
fn has_gap_buckets(cost: u32, a: GpuShape, b: GpuShape) -> bool {
    return cost < KEY_CHEAP && a.kind != SHAPE_HALF_SPACE && b.kind != SHAPE_HALF_SPACE;
}

// The key of chunk pair `index` (as order.rs order_key): its class, then for a class with gap
// buckets its bucket; KEY_CHEAP's first for a pair out of range (the kernels skip it).
fn order_key(index: u32) -> u32 {
    let pair = pairs[index];
    if !pair_in_range(pair) {
        return KEY_CHEAP * GAP_BUCKETS;
    }
    let body_a = bodies[pair.x];
    let body_b = bodies[pair.y];
    let a = shapes[body_a.shape];
    let b = shapes[body_b.shape];
    let cost = cost_class(a, b);
    var bucket = 0u;
    if has_gap_buckets(cost, a, b) {
        bucket = gap_bucket(a, b, body_a, body_b, params.margin);
    }
    return cost * GAP_BUCKETS + bucket;
}

// Workgroups of count_classes or scatter for `n` pairs.
fn order_workgroups(n: u32) -> u32 {
    let per_workgroup = WORKGROUP_SIZE * PAIRS_PER_INVOCATION;
    return (n + per_workgroup - 1u) / per_workgroup;
}

// The j-th pair of invocation `local` of workgroup `group` (strided, so a warp's loads coalesce),
// or past the chunk's end.
fn pair_of_lane(group: u32, local: u32, j: u32) -> u32 {
    return (group * PAIRS_PER_INVOCATION + j) * WORKGROUP_SIZE + local;
}

fn in_chunk(index: u32) -> bool {
    return index < params.pair_count && index < arrayLength(&classes);
}

@compute @workgroup_size(1)
fn setup() {
    // 1.
    for (var k = 0u; k < ORDER_KEYS; k++) {
        atomicStore(&counters.counts[k], 0u);
        atomicStore(&counters.cursors[k], 0u);
    }
    let workgroups = select(0u, order_workgroups(chunk_params.pair_count), chunk_params.ordered != 0u);
    args.count = array<u32, 3>(workgroups, 1u, 1u);
    args.scatter = array<u32, 3>(0u, 1u, 1u);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn count_classes(@builtin(workgroup_id) group: vec3<u32>, @builtin(local_invocation_index) local: u32) {
    // 2. Workgroup memory starts zeroed.
    for (var j = 0u; j < PAIRS_PER_INVOCATION; j++) {
        let index = pair_of_lane(group.x, local, j);
        if in_chunk(index) {
            let key = order_key(index);
            classes[index] = key;
            atomicAdd(&group_counts[key], 1u);
        }
    }
    workgroupBarrier();
    for (var k = local; k < ORDER_KEYS; k += WORKGROUP_SIZE) {
        let n = atomicLoad(&group_counts[k]);
        if n > 0u {
            atomicAdd(&counters.counts[k], n);
        }
    }
}

@compute @workgroup_size(1)
fn decide() {
    // 3.
    var present = 0u;
    var first = 0u;
    for (var k = 0u; k < ORDER_KEYS; k++) {
        let n = atomicLoad(&counters.counts[k]);
        atomicStore(&counters.cursors[k], first);
        first += n;
        present += u32(n > 0u);
    }
    if present >= 2u {
        args.scatter = array<u32, 3>(order_workgroups(chunk_params.pair_count), 1u, 1u);
    } else {
        chunk_params.ordered = 0u;
    }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn scatter(@builtin(workgroup_id) group: vec3<u32>, @builtin(local_invocation_index) local: u32) {
    // 4. Each pair's rank within the workgroup's run of its key.
    var ranks: array<u32, PAIRS_PER_INVOCATION>;
    for (var j = 0u; j < PAIRS_PER_INVOCATION; j++) {
        let index = pair_of_lane(group.x, local, j);
        if in_chunk(index) {
            ranks[j] = atomicAdd(&group_counts[classes[index]], 1u);
        }
    }
    workgroupBarrier();
    // The workgroup's run of each key it holds, from the key's cursor.
    for (var k = local; k < ORDER_KEYS; k += WORKGROUP_SIZE) {
        let n = atomicLoad(&group_counts[k]);
        if n > 0u {
            group_first[k] = atomicAdd(&counters.cursors[k], n);
        }
    }
    workgroupBarrier();
    for (var j = 0u; j < PAIRS_PER_INVOCATION; j++) {
        let index = pair_of_lane(group.x, local, j);
        if in_chunk(index) {
            let slot = group_first[classes[index]] + ranks[j];
            if slot < params.pair_count {
                results[slot].pair = params.first_pair + index;
            }
        }
    }
}

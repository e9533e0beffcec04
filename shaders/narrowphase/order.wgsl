// Cost-class ordering of a resident call's pairs before the SAT: a counting sort, per dispatch
// chunk, of the chunk's pairs by a small key from their shapes (most expensive first), so each
// warp of the SAT and clip kernels holds pairs of like cost. The order is left as a
// permutation in the SAT results' `pair` fields: slot s runs pair results[s].pair (sat.wgsl
// pair_of_slot when params.ordered). Rust twin: src/narrowphase/gpu/order.rs (`cost_class` is
// the reference of the key; keep them in step).
//
// 1. count_classes: each pair's key (cost_class), kept in `classes`; the workgroup's histogram
//    in workgroup memory, added to the chunk's counts with one atomic per key present.
// 2. scatter: each key's first slot (the exclusive prefix of the chunk's COST_CLASSES counts,
//    summed by every workgroup); the workgroup reserves its run of each key with one atomic on
//    the chunk's cursor, and each pair takes the next slot of its run: results[slot].pair (its
//    index in the dispatch, params.first_pair + its index in the chunk).
//    The order within a key follows the atomics: every output is per pair, none depends on it.
//
// Compiled after geometry.wgsl (GpuShape, bodies, pairs, params, SHAPE_*); group 1 is the SAT
// kernel's (its bind groups serve here), group 0 holds the shapes only, group 2 the sort's own.

// Mirrors crate::narrowphase::gpu::order::COST_CLASSES: keys 0 (most expensive) to 15.
const COST_CLASSES: u32 = 16u;
// Mirrors order.rs HULL_KEY_TOP_LOG2: pairs the SAT runs of 2^18 edge pairs and more take key 0,
// each halving one key more.
const HULL_KEY_TOP_LOG2: u32 = 18u;
// Mirrors order.rs KEY_SMALL_HULLS: the last key of pairs the SAT runs (fewer than 2^7 edge pairs).
const KEY_SMALL_HULLS: u32 = 12u;
// Mirrors order.rs KEY_BOX_BOX, KEY_HULL_PRIMITIVE, KEY_CHEAP.
const KEY_BOX_BOX: u32 = 13u;
const KEY_HULL_PRIMITIVE: u32 = 14u;
const KEY_CHEAP: u32 = 15u;
// Mirrors order.rs EDGE_COUNT_CLAMP: edge counts are clamped to it, so their product fits a u32.
const EDGE_COUNT_CLAMP: u32 = 0xffffu;

// Must match order.rs `GpuOrderCounters`: one dispatch chunk's counts and cursors per key.
struct GpuOrderCounters {
    counts: array<atomic<u32>, COST_CLASSES>,
    cursors: array<atomic<u32>, COST_CLASSES>,
}

// Group 1, binding 2: the SAT results of the chunk, whose `pair` fields take the permutation.
@group(1) @binding(2) var<storage, read_write> results: array<GpuSatResult>;
// Group 2: each pair's key (the chunk's window), and the chunk's counters (zeroed by the host).
@group(2) @binding(0) var<storage, read_write> classes: array<u32>;
@group(2) @binding(1) var<storage, read_write> counters: GpuOrderCounters;

// The workgroup's pairs per key, then (scatter) its first slot per key.
var<workgroup> group_counts: array<atomic<u32>, COST_CLASSES>;
var<workgroup> group_first: array<u32, COST_CLASSES>;

// The cost key of shapes `a` and `b` (as order.rs cost_class): pairs the SAT runs by log2 of
// their edge pairs, then two boxes (the box SAT), then a hull or box with a sphere, capsule or
// half-space (the clip kernel's closed forms and GJK), then the rest (no hull geometry, or a
// compound or mesh, which the SAT and clip kernels skip).
fn cost_class(a: GpuShape, b: GpuShape) -> u32 {
    if is_hull(a) && is_hull(b) {
        if a.kind == SHAPE_BOX && b.kind == SHAPE_BOX {
            return KEY_BOX_BOX;
        }
        let edge_pairs = min(a.edge_count, EDGE_COUNT_CLAMP) * min(b.edge_count, EDGE_COUNT_CLAMP);
        let log2 = firstLeadingBit(max(edge_pairs, 1u));
        return min(HULL_KEY_TOP_LOG2 - min(log2, HULL_KEY_TOP_LOG2), KEY_SMALL_HULLS);
    }
    let other = select(a.kind, b.kind, is_hull(a));
    let skipped = other == SHAPE_COMPOUND || other == SHAPE_TRIMESH;
    if (is_hull(a) || is_hull(b)) && !skipped {
        return KEY_HULL_PRIMITIVE;
    }
    return KEY_CHEAP;
}

// The key of chunk pair `index`; KEY_CHEAP for a pair out of range (the kernels skip it).
fn pair_class(index: u32) -> u32 {
    let pair = pairs[index];
    if !pair_in_range(pair) {
        return KEY_CHEAP;
    }
    return cost_class(shapes[bodies[pair.x].shape], shapes[bodies[pair.y].shape]);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn count_classes(@builtin(global_invocation_id) id: vec3<u32>, @builtin(local_invocation_index) local: u32) {
    // 1. Workgroup memory starts zeroed.
    let index = id.x;
    if index < params.pair_count && index < arrayLength(&classes) {
        let key = pair_class(index);
        classes[index] = key;
        atomicAdd(&group_counts[key], 1u);
    }
    workgroupBarrier();
    if local < COST_CLASSES {
        let n = atomicLoad(&group_counts[local]);
        if n > 0u {
            atomicAdd(&counters.counts[local], n);
        }
    }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn scatter(@builtin(global_invocation_id) id: vec3<u32>, @builtin(local_invocation_index) local: u32) {
    // 2. This pair's rank among the workgroup's of its key.
    let index = id.x;
    let runs = index < params.pair_count && index < arrayLength(&classes);
    var key = 0u;
    var rank = 0u;
    if runs {
        key = classes[index];
        rank = atomicAdd(&group_counts[key], 1u);
    }
    workgroupBarrier();
    // The workgroup's run of each key it holds: after the keys before it and the runs reserved.
    if local < COST_CLASSES {
        let n = atomicLoad(&group_counts[local]);
        if n > 0u {
            var first = 0u;
            for (var k = 0u; k < local; k++) {
                first += atomicLoad(&counters.counts[k]);
            }
            group_first[local] = first + atomicAdd(&counters.cursors[local], n);
        }
    }
    workgroupBarrier();
    if runs {
        let slot = group_first[key] + rank;
        if slot < params.pair_count {
            results[slot].pair = params.first_pair + index;
        }
    }
}

// A host round's manifold list put in pair order on the GPU, so the host reads it front to back.
// Rust twin: src/narrowphase/gpu/list_order.rs. Compiled after LAYOUT_WGSL (the list's count a
// plain u32).
//
// The list's entries name distinct pairs of the round, so an entry's place in pair order is the
// number of listed pairs before its own. Pairs go in blocks of LIST_ORDER_WORKGROUP.
// 1. mark_main: entry e marks its pair in the pair table (e + 1) and counts it in its block; an
//    entry naming a pair outside the round, or one already marked, is not placed.
// 2. offsets_main: one workgroup turns the block counts into each block's first place (an
//    exclusive scan) and writes the ordered list's head: the entries placed and those listed.
// 3. place_main: a workgroup per block; a marked pair's place is its block's first place plus
//    the marked pairs before it in the block (a workgroup scan), and its entry is copied there.
// Steps 2 and 3 leave the table and the block counts zero again for the next round.

// Mirrors crate::narrowphase::gpu::list_order::GpuListOrderParams.
struct GpuListOrderParams {
    // Pairs of the round: entries must name a pair below it.
    pairs: u32,
    // Blocks of LIST_ORDER_WORKGROUP pairs: ceil(pairs / LIST_ORDER_WORKGROUP).
    blocks: u32,
}

@group(0) @binding(0) var<uniform> params: GpuListOrderParams;
@group(0) @binding(1) var<storage, read> list: GpuManifoldList;
// Per pair of the round: 0, or 1 + the index of the list entry naming it.
@group(0) @binding(2) var<storage, read_write> table: array<atomic<u32>>;
// Per block: its marked pairs (step 1), then its first place (step 2).
@group(0) @binding(3) var<storage, read_write> block_counts: array<atomic<u32>>;
@group(0) @binding(4) var<storage, read_write> ordered: GpuManifoldList;

// Mirrors crate::narrowphase::gpu::list_order::LIST_ORDER_WORKGROUP.
const LIST_ORDER_WORKGROUP: u32 = 256u;

var<workgroup> scan_values: array<u32, LIST_ORDER_WORKGROUP>;
var<workgroup> block_first: u32;

// The exclusive prefix sum of `value` over the workgroup's invocations (x), and their total (y):
// Hillis-Steele in workgroup memory. Called by every invocation of the workgroup.
fn workgroup_scan(local: u32, value: u32) -> vec2<u32> {
    scan_values[local] = value;
    workgroupBarrier();
    for (var step = 1u; step < LIST_ORDER_WORKGROUP; step = step << 1u) {
        var before = 0u;
        if local >= step {
            before = scan_values[local - step];
        }
        workgroupBarrier();
        scan_values[local] += before;
        workgroupBarrier();
    }
    let inclusive = scan_values[local];
    let total = scan_values[LIST_ORDER_WORKGROUP - 1u];
    // Every read done before the next scan writes.
    workgroupBarrier();
    return vec2<u32>(inclusive - value, total);
}

@compute @workgroup_size(LIST_ORDER_WORKGROUP)
fn mark_main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let e = id.y * groups.x * LIST_ORDER_WORKGROUP + id.x;
    if e >= min(list.count, arrayLength(&list.entries)) {
        return;
    }
    // 1.
    let pair = list.entries[e].pair;
    if pair < min(params.pairs, arrayLength(&table)) && atomicExchange(&table[pair], e + 1u) == 0u {
        atomicAdd(&block_counts[pair / LIST_ORDER_WORKGROUP], 1u);
    }
}

@compute @workgroup_size(LIST_ORDER_WORKGROUP)
fn offsets_main(@builtin(local_invocation_index) local: u32) {
    // 2.
    let blocks = min(params.blocks, arrayLength(&block_counts));
    var first = 0u;
    for (var base = 0u; base < blocks; base += LIST_ORDER_WORKGROUP) {
        let block = base + local;
        var count = 0u;
        if block < blocks {
            count = atomicLoad(&block_counts[block]);
        }
        let scanned = workgroup_scan(local, count);
        if block < blocks {
            atomicStore(&block_counts[block], first + scanned.x);
        }
        first += scanned.y;
    }
    if local == 0u {
        ordered.count = first;
        // As counted, uncapped: a count past the list's room is a fault the host must see.
        ordered.listed = list.count;
        ordered.searched_alone = list.searched_alone;
    }
}

@compute @workgroup_size(LIST_ORDER_WORKGROUP)
fn place_main(
    @builtin(local_invocation_index) local: u32,
    @builtin(workgroup_id) group: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let block = group.y * groups.x + group.x;
    if block >= min(params.blocks, arrayLength(&block_counts)) {
        return;
    }
    // 3.
    if local == 0u {
        block_first = atomicExchange(&block_counts[block], 0u);
    }
    let pair = block * LIST_ORDER_WORKGROUP + local;
    var marked = 0u;
    if pair < min(params.pairs, arrayLength(&table)) {
        marked = atomicExchange(&table[pair], 0u);
    }
    // workgroup_scan's barriers also make block_first visible.
    let before = workgroup_scan(local, u32(marked != 0u)).x;
    let place = block_first + before;
    let e = marked - 1u;
    if marked != 0u && place < arrayLength(&ordered.entries) && e < arrayLength(&list.entries) {
        ordered.entries[place] = list.entries[e];
    }
}

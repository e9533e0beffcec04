// A host round's manifold list put in pair order on the GPU, so the host reads it front to back.
// Rust twin: src/narrowphase/gpu/list_order.rs. Compiled after LAYOUT_WGSL (the list's count a
// plain u32).
//
// 1. keys_main: entry e of the clip kernel's list (in no order) becomes the sort key (its pair, e).
// 2. (crate::gpu::radix_sort sorts the keys by pair.)
// 3. gather_main: entry k of the ordered list is the entry the k-th sorted key names; the
//    list's count is copied as it is (the host checks it against the round).
// Both run one invocation per entry the list can hold, as a 2-D grid of workgroups (x first, as
// crate::gpu::pipeline::grid lays it out); those at or past the count do nothing.

// Group 0, step 1.
@group(0) @binding(0) var<storage, read> list: GpuManifoldList;
@group(0) @binding(1) var<storage, read_write> keys: array<vec2<u32>>;

// Group 1, step 3 (the sorted keys may be `keys` itself: another group, another dispatch).
@group(1) @binding(0) var<storage, read> unordered: GpuManifoldList;
@group(1) @binding(1) var<storage, read> sorted_keys: array<vec2<u32>>;
@group(1) @binding(2) var<storage, read_write> ordered: GpuManifoldList;

// Mirrors crate::narrowphase::gpu::list_order::LIST_ORDER_WORKGROUP.
const LIST_ORDER_WORKGROUP: u32 = 64u;

@compute @workgroup_size(LIST_ORDER_WORKGROUP)
fn keys_main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let e = id.y * groups.x * LIST_ORDER_WORKGROUP + id.x;
    // 1.
    if e < min(list.count, min(arrayLength(&list.entries), arrayLength(&keys))) {
        keys[e] = vec2<u32>(list.entries[e].pair, e);
    }
}

@compute @workgroup_size(LIST_ORDER_WORKGROUP)
fn gather_main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let k = id.y * groups.x * LIST_ORDER_WORKGROUP + id.x;
    // 3.
    if k == 0u {
        ordered.count = unordered.count;
    }
    let count = min(unordered.count, min(arrayLength(&sorted_keys), arrayLength(&ordered.entries)));
    if k < count {
        let e = sorted_keys[k].y;
        if e < arrayLength(&unordered.entries) {
            ordered.entries[k] = unordered.entries[e];
        }
    }
}

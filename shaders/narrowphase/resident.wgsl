// The resident prepare step: one invocation per dispatch chunk turns the caller's pair count
// (read from its GPU buffer, never by the host) into the chunk's GpuParams (pair count, first
// pair, margin) and its indirect dispatch arguments, so the SAT and clip kernels that follow
// run exactly the pairs the count names; with setup.per_workgroup_below, the SAT's two
// dispatches and the clip's per-group one too. Rust twin (host): src/narrowphase/gpu/resident.rs.
//
// 1. Bounds guard: chunks beyond setup.chunks do nothing; a count index beyond the caller's
//    buffer reads as 0 pairs.
// 2. pairs = min(count, setup.max_pairs) (the manifold list's capacity).
// 3. Chunk k runs pairs [k * chunk_pairs, min(pairs, (k + 1) * chunk_pairs)) (maybe none):
//    its parameters, and ceil(n / WORKGROUP_SIZE) workgroups.
// 4. With per_workgroup_below (non-zero): the SAT's one-pair-per-invocation arguments at
//    chunks + k (the clip's too) and its one-workgroup-per-pair ones (n workgroups) at
//    2 * chunks + k, the first empty when pairs < per_workgroup_below, else the second; the
//    clip's per-group ones (ceil(n / CLIP_GROUP_PAIRS) workgroups) at 3 * chunks + k, empty
//    when the SAT's one-workgroup-per-pair set is.
// Every chunk's parameters set canonical (pairs run lower body first and are listed in the
// given order, as on the host; the compound stage's sub-pairs [2k, 2k + 1] and the mesh
// pass's items, which this kernel also prepares, are in that order already).
// setup.ordered (0 or 1) is passed on in each chunk's parameters, 0 under one workgroup per
// pair (each pair has its workgroup: ordering cannot help): order.wgsl then counts the chunk's
// keys and leaves it at 1 (the SAT reads its pairs in cost order) when two keys or more meet.
//
// Compiled after geometry.wgsl (GpuParams, WORKGROUP_SIZE); its bindings are group 2, so they
// do not meet the kernels' groups 0 and 1.

// Mirrors crate::narrowphase::gpu::kernel_layout::PARAMS_STRIDE: bytes between two chunks' GpuParams.
const PARAMS_STRIDE: u32 = 256u;
// Mirrors crate::narrowphase::gpu::kernel_layout::CLIP_GROUP_PAIRS: pairs a workgroup of the
// clip's per-group entry point takes.
const CLIP_GROUP_PAIRS: u32 = 8u;

// Must match kernel_layout.rs `GpuResidentSetup`.
struct GpuResidentSetup {
    margin: f32,
    max_pairs: u32,
    count_index: u32,
    chunk_pairs: u32,
    chunks: u32,
    per_workgroup_below: u32,
    ordered: u32,
}

// One chunk's GpuParams, padded to PARAMS_STRIDE bytes (the kernels bind it at a dynamic
// offset of k * PARAMS_STRIDE).
struct ParamsSlot {
    params: GpuParams,
    _pad: array<vec4<u32>, 14>,
}

// Must match wgpu::util::DispatchIndirectArgs.
struct DispatchArgs {
    x: u32,
    y: u32,
    z: u32,
}

@group(2) @binding(0) var<uniform> setup: GpuResidentSetup;
// The caller's count buffer, whole.
@group(2) @binding(1) var<storage, read> pair_counts: array<u32>;
@group(2) @binding(2) var<storage, read_write> chunk_params: array<ParamsSlot>;
@group(2) @binding(3) var<storage, read_write> dispatch_args: array<DispatchArgs>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    // 1. Bounds guard.
    let k = id.x;
    if k >= setup.chunks || k >= arrayLength(&chunk_params) || k >= arrayLength(&dispatch_args) {
        return;
    }
    var count = 0u;
    if setup.count_index < arrayLength(&pair_counts) {
        count = pair_counts[setup.count_index];
    }
    // 2. Clamp to the list's capacity.
    let pairs = min(count, setup.max_pairs);
    // 3. This chunk's share.
    let first = k * setup.chunk_pairs;
    let n = min(pairs - min(pairs, first), setup.chunk_pairs);
    let per_workgroup = setup.per_workgroup_below != 0u && pairs < setup.per_workgroup_below;
    // Every pair runs in canonical order (canonical 1), as on the host.
    chunk_params[k].params = GpuParams(setup.margin, n, first, select(setup.ordered, 0u, per_workgroup), 1u);
    let workgroups = (n + WORKGROUP_SIZE - 1u) / WORKGROUP_SIZE;
    dispatch_args[k] = DispatchArgs(workgroups, 1u, 1u);
    // 4. The SAT's two sets, one of them empty, and the clip's per-group set.
    if setup.per_workgroup_below != 0u && 3u * setup.chunks + k < arrayLength(&dispatch_args) {
        dispatch_args[setup.chunks + k] = DispatchArgs(select(workgroups, 0u, per_workgroup), 1u, 1u);
        dispatch_args[2u * setup.chunks + k] = DispatchArgs(select(0u, n, per_workgroup), 1u, 1u);
        let groups = (n + CLIP_GROUP_PAIRS - 1u) / CLIP_GROUP_PAIRS;
        dispatch_args[3u * setup.chunks + k] = DispatchArgs(select(0u, groups, per_workgroup), 1u, 1u);
    }
}

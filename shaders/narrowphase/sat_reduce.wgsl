// The cooperative SAT's reductions in workgroup memory, for devices without subgroup operations
// (sat_reduce_subgroup.wgsl is the other): a tree over one slot per invocation. Compiled last in
// SAT_WGSL, after sat.wgsl, whose slots and order (first_face, first_edge) it uses.
// Rust twin: src/narrowphase/gpu/kernels.rs (SAT_WGSL, SatKernel).

// The builtins the SAT kernel's entry points take (besides their ids).
struct Invocation {
    @builtin(local_invocation_index) lane: u32,
}

// This invocation's index in its workgroup; called first by every entry point.
fn enter(invocation: Invocation) -> u32 {
    return invocation.lane;
}

// The first of the invocations' face results (`mine` is this invocation's), the same for all.
fn reduce_faces(mine: FaceQuery, lane: u32, margin: f32) -> FaceQuery {
    // The slots' readers of the last reduction are done.
    workgroupBarrier();
    face_slots[lane] = mine;
    for (var width = WORKGROUP_SIZE / 2u; width > 0u; width /= 2u) {
        workgroupBarrier();
        if lane < width {
            face_slots[lane] = first_face(face_slots[lane], face_slots[lane + width], margin);
        }
    }
    return workgroupUniformLoad(&face_slots[0]);
}

// The first of the invocations' edge results, the same for all.
fn reduce_edges(mine: EdgeQuery, lane: u32, margin: f32) -> EdgeQuery {
    workgroupBarrier();
    edge_slots[lane] = mine;
    for (var width = WORKGROUP_SIZE / 2u; width > 0u; width /= 2u) {
        workgroupBarrier();
        if lane < width {
            edge_slots[lane] = first_edge(edge_slots[lane], edge_slots[lane + width], margin);
        }
    }
    return workgroupUniformLoad(&edge_slots[0]);
}

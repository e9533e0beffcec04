// The cooperative SAT's reductions with subgroup operations, for devices with
// wgpu::Features::SUBGROUP (sat_reduce.wgsl is the other): each subgroup finds its first item
// with subgroupAny, subgroupMax, subgroupMin, subgroupBallot and subgroupShuffle, then lane 0
// takes the first of the subgroups' in workgroup memory (one slot per subgroup). The order is
// sat.wgsl's (first_face, first_edge), a total order: the same winner as the tree of
// sat_reduce.wgsl, and so the same result bits. Compiled last in SAT_SUBGROUP_WGSL, in
// sat_reduce.wgsl's place, for `main_pair_per_workgroup` only: under `main` (big pairs listed
// per workgroup and run in a loop) NVIDIA's driver returned other axes than the tree (H200,
// 580.159.04; with or without a barrier before the subgroup operations), so that entry point
// reduces in workgroup memory on every device (SatKernel). No `enable subgroups;`: naga 30
// refuses the directive ("not yet supported") and takes the subgroup builtins without it where
// the device allows them.
// Rust twin: src/narrowphase/gpu/kernels.rs (SAT_SUBGROUP_WGSL, SatKernel).

// The builtins the SAT kernel's entry points take (besides their ids).
struct Invocation {
    @builtin(local_invocation_index) lane: u32,
    @builtin(subgroup_invocation_id) subgroup_lane: u32,
    @builtin(subgroup_id) subgroup: u32,
    @builtin(num_subgroups) subgroups: u32,
}

// This invocation's subgroup, its index in it and the workgroup's subgroups (set by enter).
var<private> subgroup_index: u32;
var<private> subgroup_lane: u32;
var<private> subgroup_count: u32;

// This invocation's index in its workgroup; called first by every entry point.
fn enter(invocation: Invocation) -> u32 {
    subgroup_index = invocation.subgroup;
    subgroup_lane = invocation.subgroup_lane;
    subgroup_count = invocation.subgroups;
    return invocation.lane;
}

// The lowest subgroup invocation set in `ballot` (one is set); no loop, so nothing counts
// against a software driver's loop cap.
fn first_in(ballot: vec4<u32>) -> u32 {
    let low = countTrailingZeros(ballot);
    var first = 96u + low.w;
    first = select(first, 64u + low.z, ballot.z != 0u);
    first = select(first, 32u + low.y, ballot.y != 0u);
    return select(first, low.x, ballot.x != 0u);
}

// The first of the subgroup's face results in first_face's order, the same for all its
// invocations: above the margin, else the largest separation (+0 and -0 tie, as there), then the
// lowest face.
fn subgroup_first_face(mine: FaceQuery, margin: f32) -> FaceQuery {
    var tied = mine.separation > margin;
    if !subgroupAny(tied) {
        tied = mine.separation == subgroupMax(mine.separation);
    }
    let face = subgroupMin(select(NO_ITEM, mine.face, tied));
    let winner = first_in(subgroupBallot(tied && mine.face == face));
    return FaceQuery(face, subgroupShuffle(mine.separation, winner));
}

// The first of the subgroup's edge results in first_edge's order, the same for all its
// invocations: found pairs; above the margin, else the largest separation; then the lowest
// (edge of A, edge of B). Results not found are all alike (the queries' initial value).
fn subgroup_first_edge(mine: EdgeQuery, margin: f32) -> EdgeQuery {
    let found = subgroupAny(mine.found);
    var tied = mine.found && mine.separation > margin;
    if !subgroupAny(tied) {
        let largest = subgroupMax(select(-F32_MAX, mine.separation, mine.found));
        tied = mine.found == found && (!found || mine.separation == largest);
    }
    let edge_a = subgroupMin(select(NO_ITEM, mine.edge_a, tied));
    tied = tied && mine.edge_a == edge_a;
    let edge_b = subgroupMin(select(NO_ITEM, mine.edge_b, tied));
    let winner = first_in(subgroupBallot(tied && mine.edge_b == edge_b));
    return EdgeQuery(found, edge_a, edge_b, subgroupShuffle(mine.separation, winner), subgroupShuffle(mine.axis, winner));
}

// The first of the invocations' face results (`mine` is this invocation's), the same for all.
fn reduce_faces(mine: FaceQuery, lane: u32, margin: f32) -> FaceQuery {
    let first = subgroup_first_face(mine, margin);
    // The slots' readers of the last reduction are done.
    workgroupBarrier();
    if subgroup_lane == first_in(subgroupBallot(true)) {
        face_slots[subgroup_index] = first;
    }
    workgroupBarrier();
    if lane == 0u {
        for (var k = 1u; k < subgroup_count; k++) {
            face_slots[0] = first_face(face_slots[0], face_slots[k], margin);
        }
    }
    return workgroupUniformLoad(&face_slots[0]);
}

// The first of the invocations' edge results, the same for all.
fn reduce_edges(mine: EdgeQuery, lane: u32, margin: f32) -> EdgeQuery {
    let first = subgroup_first_edge(mine, margin);
    workgroupBarrier();
    if subgroup_lane == first_in(subgroupBallot(true)) {
        edge_slots[subgroup_index] = first;
    }
    workgroupBarrier();
    if lane == 0u {
        for (var k = 1u; k < subgroup_count; k++) {
            edge_slots[0] = first_edge(edge_slots[0], edge_slots[k], margin);
        }
    }
    return workgroupUniformLoad(&edge_slots[0]);
}

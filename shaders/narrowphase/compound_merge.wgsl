// The compound stage's merge: one caller pair per invocation, the sub-manifolds of its child
// pairs (A's frame, in the (i, j) order the expansion wrote them) merged into the pair's one
// manifold, appended to the manifold list. Rust twin: merge_sub_manifolds
// (src/contact/merge.rs; same steps) as src/contact/compound.rs calls it; host:
// src/narrowphase/gpu/compound.rs.
//
// 0. Ranges not listed (no compound pair) store nothing; an overflowed range is listed
//    MANIFOLD_OVERFLOW; a child pair the GPU did not finish makes the pair MANIFOLD_HOST.
// 1. The deepest sub-manifold's normal (ties within the tolerance to the first in order).
// 2. The points of every sub-manifold whose normal is within COMPOUND_MERGE_DEGREES of it
//    (a sphere body: the chosen one's alone), ids compound_feature_id; more than the polygon
//    buffer holds: MANIFOLD_HOST.
// 3. Reduced to four (clip.wgsl reduce_to_four); a point within the tolerance of a kept one
//    dropped.
//
// Compiled after CLIP_WGSL (COMPOUND_MERGE_WGSL): group 1 binds params (3) and the list (4)
// as the clip kernel's, and its own buffers at 5 to 7.

// Mirrors crate::constants::COMPOUND_MERGE_DEGREES (degrees between child-pair normals).
const COMPOUND_MERGE_DEGREES: f32 = 10.0;

// The sub-manifold buffer (clip.wgsl main_slots wrote its entries; the head is unused).
struct SubManifolds {
    _head: vec4<u32>,
    entries: array<GpuManifold>,
}

// compound_expand.wgsl's range table, read.
struct CompoundRanges {
    total: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
    entries: array<GpuCompoundRange>,
}

@group(1) @binding(5) var<storage, read> sub_manifolds: SubManifolds;
@group(1) @binding(6) var<storage, read> compound_ranges: CompoundRanges;
@group(1) @binding(7) var<storage, read> merge_tags: array<u32>;

// compound_feature_id (src/compound/mod.rs): `local`'s fields each with the child whose feature
// it names (FACE_B: the high field is B's), 6 bits of child over 8 bits of feature.
fn compound_feature_id(child_a: u32, child_b: u32, local: u32) -> u32 {
    let kind = local >> 30u;
    var high_child = child_a;
    var low_child = child_b;
    if kind == FEATURE_FACE_B {
        high_child = child_b;
        low_child = child_a;
    }
    let high = ((high_child & 0x3fu) << 8u) | ((local >> 15u) & 0xffu);
    let low = ((low_child & 0x3fu) << 8u) | (local & 0xffu);
    return feature_id(kind, (local >> 29u) & 1u, high, low);
}

// Steps 0 to 3 for chunk pair `index`: the manifold emit_manifold stores.
fn merge_pair(index: u32) -> GpuManifold {
    // 0. Ranges.
    var m = GpuManifold(vec3<f32>(0.0), 0.0, array<vec4<f32>, 4>(), array<u32, 4>(), 0u, MANIFOLD_SEPARATED, 0u, 0u);
    let p = params.first_pair + index;
    if index >= params.pair_count || p >= arrayLength(&compound_ranges.entries) {
        return m;
    }
    let range = compound_ranges.entries[p];
    if (range.flags & COMPOUND_RANGE_LISTED) == 0u {
        return m;
    }
    if (range.flags & COMPOUND_RANGE_OVERFLOW) != 0u {
        m.status = MANIFOLD_OVERFLOW;
        m.points[0] = vec4<f32>(bitcast<f32>(compound_ranges.total), bitcast<f32>(arrayLength(&merge_tags)), 0.0, 0.0);
        return m;
    }
    m.status = MANIFOLD_HOST;
    let end = range.first + range.count;
    if (range.flags & COMPOUND_RANGE_HOST) != 0u || end > arrayLength(&sub_manifolds.entries) {
        return m;
    }
    let tolerance = CONTACT_REDUCTION_TOLERANCE * range.size;
    // 1. The deepest sub-manifold, and the first within the tolerance of it.
    var deepest = F32_MAX;
    var found = false;
    for (var k = range.first; k < end; k++) {
        let status = sub_manifolds.entries[k].status;
        if status == MANIFOLD_CLIPPED {
            deepest = min(deepest, sub_manifolds.entries[k].separation);
            found = true;
        } else if status != MANIFOLD_SEPARATED {
            return m;
        }
    }
    if !found {
        m.status = MANIFOLD_SEPARATED;
        return m;
    }
    var chosen = range.first;
    for (var k = range.first; k < end; k++) {
        let sub = sub_manifolds.entries[k];
        if sub.status == MANIFOLD_CLIPPED && sub.separation <= deepest + tolerance {
            chosen = k;
            break;
        }
    }
    let normal = sub_manifolds.entries[chosen].normal;
    // 2. The points of the sub-manifolds within the merge angle, renamed.
    let min_cos = cos(radians(COMPOUND_MERGE_DEGREES));
    let single = (range.flags & COMPOUND_RANGE_SINGLE) != 0u;
    var n = 0u;
    for (var k = range.first; k < end; k++) {
        let sub = sub_manifolds.entries[k];
        if sub.status != MANIFOLD_CLIPPED || dot(sub.normal, normal) < min_cos || (single && k != chosen) {
            continue;
        }
        let tag = merge_tags[k];
        for (var q = 0u; q < sub.count; q++) {
            if n == MAX_CLIP_VERTICES {
                return m;
            }
            poly_position[0][n] = sub.points[q].xyz;
            poly_id[0][n] = compound_feature_id(tag >> 8u, tag & 0xffu, sub.ids[q]);
            merged_depth[n] = sub.points[q].w;
            n += 1u;
        }
    }
    poly_len[0] = n;
    // 3. Reduced to four, near-duplicates dropped.
    var c: Candidates;
    c.merged = true;
    let r = Reduction(c, normal, 0.0, F32_MAX, F32_MAX, tolerance, vec3<f32>(0.0), 0u, 0u, vec3<u32>(0u));
    let kept = reduce_to_four(r);
    m.normal = normal;
    m.separation = deepest;
    for (var k = 0u; k < kept.count; k++) {
        let i = kept.indices[k];
        let position = poly_position[0][i];
        var close = false;
        for (var e = 0u; e < m.count; e++) {
            close = close || length(m.points[e].xyz - position) <= tolerance;
        }
        if !close {
            m.points[m.count] = vec4<f32>(position, merged_depth[i]);
            m.ids[m.count] = poly_id[0][i];
            m.count += 1u;
        }
    }
    if loops_cut_short() {
        m = GpuManifold(vec3<f32>(0.0), 0.0, array<vec4<f32>, 4>(), array<u32, 4>(), 0u, MANIFOLD_HOST, 0u, 0u);
        return m;
    }
    m.status = MANIFOLD_CLIPPED;
    return m;
}

// Every invocation, those past the chunk's end too, reaches emit_manifold (its barriers).
@compute @workgroup_size(WORKGROUP_SIZE)
fn main_merge(@builtin(global_invocation_id) id: vec3<u32>, @builtin(local_invocation_index) local: u32) {
    emit_manifold(id.x, local, merge_pair(id.x));
}

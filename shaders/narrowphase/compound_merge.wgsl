// The compound stage's merge: one caller pair per invocation, the sub-manifolds of its child
// pairs (A's frame, in the (i, j) order the expansion wrote them) merged into the pair's one
// manifold, appended to the manifold list. Rust twin: merge_sub_manifolds as
// src/contact/compound.rs calls it; host: src/narrowphase/gpu/compound.rs.
//
// 0. Ranges not listed (no compound pair) store nothing; an overflowed range is listed
//    MANIFOLD_OVERFLOW; a child pair the GPU did not finish makes the pair MANIFOLD_HOST.
// 1. to 3. merge.wgsl's steps at COMPOUND_MERGE_DEGREES (a sphere body: the chosen child
//    pair's points alone), ids compound_feature_id.
// 4. A pair given with its higher body first (COMPOUND_RANGE_SWAPPED) moved into the given
//    order and A's frame (clip.wgsl swapped_into, by the range's pose of the lower body).
//
// Compiled after CLIP_WGSL and merge.wgsl (COMPOUND_MERGE_WGSL): group 1 binds params (3) and
// the list (4) as the clip kernel's, and its own buffers at 5 to 7.

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

// compound_feature_id (src/shape/compound.rs): `local`'s fields each with the child whose feature
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

// A sub-manifold as merge.wgsl reads it.
fn sub_contact(k: u32) -> SubContact {
    let sub = sub_manifolds.entries[k];
    return SubContact(sub.status, sub.normal, sub.separation, sub.count);
}

fn sub_contact_point(k: u32, q: u32) -> vec4<f32> {
    return sub_manifolds.entries[k].points[q];
}

fn sub_contact_id(k: u32, q: u32) -> u32 {
    let tag = merge_tags[k];
    return compound_feature_id(tag >> 8u, tag & 0xffu, sub_manifolds.entries[k].ids[q]);
}

// Step 0, then merge.wgsl's steps for chunk pair `index`: the manifold emit_manifold stores.
fn merge_pair(index: u32) -> GpuManifold {
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
    let single = (range.flags & COMPOUND_RANGE_SINGLE) != 0u;
    let tolerance = CONTACT_REDUCTION_TOLERANCE * range.size;
    let merged = merge_sub_contacts(range.first, end, cos(radians(COMPOUND_MERGE_DEGREES)), single, tolerance);
    // 4. A pair run the other way round: in the given order and A's frame (compound ids
    // commute with the swap).
    if merged.status == MANIFOLD_CLIPPED && (range.flags & COMPOUND_RANGE_SWAPPED) != 0u {
        return swapped_into(merged, RelativePose(range.lower_rotation, range.lower_translation));
    }
    return merged;
}

// Every invocation, those past the chunk's end too, reaches emit_manifold (its barriers).
@compute @workgroup_size(WORKGROUP_SIZE)
fn main_merge(@builtin(global_invocation_id) id: vec3<u32>, @builtin(local_invocation_index) local: u32) {
    emit_manifold(id.x, local, merge_pair(id.x));
}

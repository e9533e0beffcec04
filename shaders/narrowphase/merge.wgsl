// The merge of one body pair's sub-contacts (a compound's child-pair manifolds, a mesh's
// triangle contacts) into the pair's one manifold, in the caller's frame. Rust twin:
// merge_sub_manifolds (src/contact/merge.rs; same steps). Kernels: compound_merge.wgsl,
// mesh_merge.wgsl, each defining how sub-contact k is read:
//   fn sub_contact(k: u32) -> SubContact             its header (status MANIFOLD_*)
//   fn sub_contact_point(k: u32, q: u32) -> vec4<f32> point q: position xyz, depth w
//   fn sub_contact_id(k: u32, q: u32) -> u32          point q's id, renamed for the pair
//
// 1. The deepest sub-contact's normal (ties within the tolerance to the first in order).
// 2. The points of every sub-contact whose normal is within the merge angle of it (`single`:
//    the chosen one's alone), renamed; more than the polygon buffer holds: MANIFOLD_HOST.
// 3. Reduced to four (clip.wgsl reduce_to_four); a point within the tolerance of a kept one
//    dropped.
//
// Compiled after CLIP_WGSL (its polygon buffers, reduce_to_four, loops_cut_short).

// One sub-contact: MANIFOLD_CLIPPED, MANIFOLD_SEPARATED or MANIFOLD_HOST (the pair is the
// host's); unit normal and separation in the caller's frame; `count` points.
struct SubContact {
    status: u32,
    normal: vec3<f32>,
    separation: f32,
    count: u32,
}

// Steps 1 to 3 over sub-contacts [first, end): `min_cos` the cosine of the merge angle,
// `tolerance` the tie tolerance (length units). Status MANIFOLD_CLIPPED, MANIFOLD_SEPARATED
// (no sub-contact) or MANIFOLD_HOST.
fn merge_sub_contacts(first: u32, end: u32, min_cos: f32, single: bool, tolerance: f32) -> GpuManifold {
    var m = GpuManifold(vec3<f32>(0.0), 0.0, array<vec4<f32>, 4>(), array<u32, 4>(), 0u, MANIFOLD_HOST, 0u, 0u);
    // 1. The deepest sub-contact, and the first within the tolerance of it.
    var deepest = F32_MAX;
    var found = false;
    for (var k = first; k < end; k++) {
        let sub = sub_contact(k);
        if sub.status == MANIFOLD_CLIPPED {
            deepest = min(deepest, sub.separation);
            found = true;
        } else if sub.status != MANIFOLD_SEPARATED {
            return m;
        }
    }
    if !found {
        m.status = MANIFOLD_SEPARATED;
        return m;
    }
    var chosen = first;
    for (var k = first; k < end; k++) {
        let sub = sub_contact(k);
        if sub.status == MANIFOLD_CLIPPED && sub.separation <= deepest + tolerance {
            chosen = k;
            break;
        }
    }
    let normal = sub_contact(chosen).normal;
    // 2. The points of the sub-contacts within the merge angle, renamed.
    var n = 0u;
    for (var k = first; k < end; k++) {
        let sub = sub_contact(k);
        if sub.status != MANIFOLD_CLIPPED || dot(sub.normal, normal) < min_cos || (single && k != chosen) {
            continue;
        }
        for (var q = 0u; q < sub.count; q++) {
            if n == MAX_CLIP_VERTICES {
                return m;
            }
            let point = sub_contact_point(k, q);
            poly_position[0][n] = point.xyz;
            poly_id[0][n] = sub_contact_id(k, q);
            merged_depth[n] = point.w;
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

// The mesh pass's merge: one caller pair per invocation, the sub-contacts of its work items
// (mesh frame, in BVH order) merged into the pair's one manifold by merge.wgsl's steps,
// appended to the manifold list in the caller's A frame. Rust twin: TriMeshScratch::merge and
// collide_trimesh_shape's step 4 (src/contact/trimesh.rs), collide_trimesh_compound
// (src/contact/trimesh_compound.rs), mesh_feature_id and compound_mesh_feature_id
// (src/trimesh/mod.rs); host: src/narrowphase/gpu/mesh.rs.
//
// 0. Ranges not listed (no mesh pair) store nothing; an overflowed range is listed
//    MANIFOLD_OVERFLOW; a range or item left to the host makes the pair MANIFOLD_HOST.
// 1. to 3. merge.wgsl's steps at TRIMESH_MERGE_DEGREES (a sphere: the deepest triangle's
//    point alone), ids mesh_feature_id (a compound: all its children's sub-contacts in one
//    merge, ties within its size, ids compound_mesh_feature_id).
// 4. A pair whose B is the mesh: moved to the body's frame, normal negated, ids kept
//    (Manifold::swap_keeping_ids).
//
// Compiled after CLIP_WGSL and merge.wgsl (MESH_MERGE_WGSL): group 1 binds params (3) and the
// list (4) as the clip kernel's, group 2 the items, ranges and points.

// Mirrors crate::constants::TRIMESH_MERGE_DEGREES (degrees between triangle normals).
const TRIMESH_MERGE_DEGREES: f32 = 10.0;

// The mesh pass's tables, read (mesh_expand.wgsl MeshRangeTable, mesh_triangle.wgsl
// MeshPointTable).
struct MergeRanges {
    total: u32,
    parts: u32,
    _pad1: u32,
    _pad2: u32,
    entries: array<GpuMeshPairRange>,
}

struct MergePoints {
    total: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
    points: array<GpuMeshPoint>,
}

@group(2) @binding(0) var<storage, read> merge_items: array<GpuMeshItem>;
@group(2) @binding(1) var<storage, read> merge_ranges: MergeRanges;
@group(2) @binding(2) var<storage, read> merge_points: MergePoints;

// The triangle's and the body's features of a per-triangle id (mesh = A), as
// triangle_and_body_features (src/trimesh/mod.rs).
fn triangle_and_body_features(local: u32) -> vec2<u32> {
    let high = (local >> 15u) & FEATURE_HIGH_MAX;
    let low = local & FEATURE_LOW_MAX;
    if (local >> 30u) == FEATURE_FACE_B {
        return vec2<u32>(low, high);
    }
    return vec2<u32>(high, low);
}

// mesh_feature_id (src/trimesh/mod.rs): the triangle (19 bits), `local`'s kind and flag, the
// triangle's feature (2 bits) and the body's (8 bits).
fn mesh_feature_id(triangle: u32, local: u32) -> u32 {
    let f = triangle_and_body_features(local);
    return (triangle << 13u) | ((local >> 30u) << 11u) | (((local >> 29u) & 1u) << 10u) | ((f.x & 3u) << 8u) | (f.y & 0xffu);
}

// compound_mesh_feature_id (src/trimesh/mod.rs): the triangle mod 2^16, the child (6 bits),
// `local`'s kind and flag, the triangle's feature (2 bits) and the child's (5 bits).
fn compound_mesh_feature_id(triangle: u32, child: u32, local: u32) -> u32 {
    let f = triangle_and_body_features(local);
    return (triangle << 16u) | ((child & 0x3fu) << 10u) | ((local >> 30u) << 8u) | (((local >> 29u) & 1u) << 7u) | ((f.x & 3u) << 5u) | (f.y & 0x1fu);
}

// A work item's sub-contact as merge.wgsl reads it (points past the table: the host's).
fn sub_contact(k: u32) -> SubContact {
    let item = merge_items[k];
    var status = item.status;
    if status == MANIFOLD_CLIPPED && item.count > arrayLength(&merge_points.points) - min(item.first_point, arrayLength(&merge_points.points)) {
        status = MANIFOLD_HOST;
    }
    return SubContact(status, item.normal, item.separation, item.count);
}

fn sub_contact_point(k: u32, q: u32) -> vec4<f32> {
    return merge_points.points[merge_items[k].first_point + q].point;
}

fn sub_contact_id(k: u32, q: u32) -> u32 {
    let item = merge_items[k];
    let local = merge_points.points[item.first_point + q].id;
    if (merge_ranges.entries[item.pair].flags & MESH_RANGE_COMPOUND) != 0u {
        return compound_mesh_feature_id(item.local_triangle, item.child, local);
    }
    return mesh_feature_id(item.local_triangle, local);
}

// Steps 0 to 4 for chunk pair `index`: the manifold emit_manifold stores.
fn merge_mesh_pair(index: u32) -> GpuManifold {
    // 0. Ranges.
    var m = GpuManifold(vec3<f32>(0.0), 0.0, array<vec4<f32>, 4>(), array<u32, 4>(), 0u, MANIFOLD_SEPARATED, 0u, 0u);
    let p = merge_ranges.parts + params.first_pair + index;
    if index >= params.pair_count || p >= arrayLength(&merge_ranges.entries) {
        return m;
    }
    let range = merge_ranges.entries[p];
    if (range.flags & COMPOUND_RANGE_LISTED) == 0u {
        return m;
    }
    if (range.flags & COMPOUND_RANGE_OVERFLOW) != 0u {
        m.status = MANIFOLD_OVERFLOW;
        m.points[0] = vec4<f32>(bitcast<f32>(merge_ranges.total), bitcast<f32>(arrayLength(&merge_items)), 0.0, 0.0);
        return m;
    }
    m.status = MANIFOLD_HOST;
    let end = range.first + range.count;
    if (range.flags & COMPOUND_RANGE_HOST) != 0u || end > arrayLength(&merge_items) {
        return m;
    }
    // 1. to 3.
    let single = (range.flags & COMPOUND_RANGE_SINGLE) != 0u;
    let tolerance = CONTACT_REDUCTION_TOLERANCE * range.size;
    m = merge_sub_contacts(range.first, end, cos(radians(TRIMESH_MERGE_DEGREES)), single, tolerance);
    // 4. The body's frame: p_b = R^-1 (p - t).
    if m.status == MANIFOLD_CLIPPED && (range.flags & MESH_RANGE_SWAPPED) != 0u {
        let inverse = quat_conjugate(range.rotation);
        m.normal = -quat_rotate(inverse, m.normal);
        for (var i = 0u; i < m.count; i++) {
            m.points[i] = vec4<f32>(quat_rotate(inverse, m.points[i].xyz - range.translation), m.points[i].w);
        }
    }
    return m;
}

// Every invocation, those past the chunk's end too, reaches emit_manifold (its barriers).
@compute @workgroup_size(WORKGROUP_SIZE)
fn main_mesh_merge(@builtin(global_invocation_id) id: vec3<u32>, @builtin(local_invocation_index) local: u32) {
    emit_manifold(id.x, local, merge_mesh_pair(id.x));
}

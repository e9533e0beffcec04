// The mesh pass's per-triangle step: one work item per invocation, the triangle against the
// body posed in the mesh's frame by collide_triangle_shape (triangle_contact.wgsl), its
// sub-contact stored in the item and its points appended to the point table. Rust twin:
// src/contact/trimesh.rs (push_body_contacts, step 2); host: src/narrowphase/gpu/mesh.rs.
//
// 1. Bounds guard (the prepare kernel's item count, clamped to the capacity; items outside
//    their pair's range, left from an earlier call, skipped).
// 2. The MeshTriangle: the item's corners, the triangle's contact data, its neighbours'
//    normals.
// 3. collide_triangle_shape with the body's (a compound's child's) pose and shape from the
//    item, the face preference AXIS_PREFERENCE_TOLERANCE x that shape's size.
// 4. The status as the merge reads it (MANIFOLD_CLIPPED: a contact, MANIFOLD_SEPARATED: none,
//    MANIFOLD_HOST: TRIANGLE_HOST), a contact's points reserved with one atomicAdd on the
//    point table (past its end, or loops cut short by the driver: MANIFOLD_HOST).
//
// Compiled after CLIP_WGSL, mesh.wgsl and triangle_contact.wgsl (MESH_TRIANGLE_WGSL): group 0
// is the hull geometry, group 1 binds only params (3: the item dispatch's), group 2 its own.

// The point table: the points reserved, then the points. Must match kernel_layout.rs
// MESH_TABLE_HEAD and GpuMeshPoint.
struct MeshPointTable {
    total: atomic<u32>,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
    points: array<GpuMeshPoint>,
}

// mesh_expand.wgsl's range table, read.
struct MeshRanges {
    total: u32,
    parts: u32,
    _pad1: u32,
    _pad2: u32,
    entries: array<GpuMeshPairRange>,
}

@group(2) @binding(0) var<storage, read_write> mesh_items: array<GpuMeshItem>;
@group(2) @binding(1) var<storage, read> mesh_ranges: MeshRanges;
@group(2) @binding(2) var<storage, read> mesh_contacts: array<GpuMeshTriangleContact>;
@group(2) @binding(3) var<storage, read_write> mesh_points: MeshPointTable;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main_triangles(@builtin(global_invocation_id) id: vec3<u32>) {
    // 1. Bounds guard.
    let k = id.x;
    if k >= params.pair_count || k >= arrayLength(&mesh_items) {
        return;
    }
    var item = mesh_items[k];
    item.status = MANIFOLD_HOST;
    item.count = 0u;
    let triangle_count = arrayLength(&mesh_contacts);
    if item.pair >= arrayLength(&mesh_ranges.entries) || item.triangle >= triangle_count {
        mesh_items[k] = item;
        return;
    }
    let range = mesh_ranges.entries[item.pair];
    // An item of this call lies in its pair's range; one left from an earlier call (in the
    // range of a pair that overflowed) is skipped, so it takes no point slots.
    let overflowed = (range.flags & COMPOUND_RANGE_OVERFLOW) != 0u;
    if overflowed || k < range.first || k - range.first >= range.count {
        return;
    }
    if item.shape >= arrayLength(&shapes) {
        mesh_items[k] = item;
        return;
    }
    // 2. The triangle.
    let data = mesh_contacts[item.triangle];
    var t: MeshTriangle;
    t.normal = data.normal;
    t.active_edges = data.active_edges;
    t.linked = 0u;
    for (var e = 0u; e < 3u; e++) {
        t.corners[e] = item.corners[e].xyz;
        t.neighbour_normals[e] = vec3<f32>(0.0);
        let other = data.neighbours[e];
        if other < triangle_count {
            t.linked |= 1u << e;
            t.neighbour_normals[e] = mesh_contacts[other].normal;
        }
    }
    // 3. Its sub-contact.
    let shape = shapes[item.shape];
    let tolerance = PRIMITIVE_AXIS_PREFERENCE_TOLERANCE * shape.radius;
    let contact = collide_triangle_shape(t, shape, item.rotation, item.translation, params.margin, tolerance);
    item.normal = contact.normal;
    item.separation = contact.separation;
    // 4. Its status and points.
    if contact.status == TRIANGLE_NONE {
        item.status = MANIFOLD_SEPARATED;
    } else if contact.status == TRIANGLE_CONTACT {
        let first = atomicAdd(&mesh_points.total, contact.count);
        let capacity = arrayLength(&mesh_points.points);
        if contact.count <= capacity && first <= capacity - contact.count {
            item.status = MANIFOLD_CLIPPED;
            for (var q = 0u; q < contact.count; q++) {
                mesh_points.points[first + q] = GpuMeshPoint(triangle_points[q], triangle_ids[q], 0u, 0u, 0u);
            }
            item.first_point = first;
            item.count = contact.count;
        }
    }
    if loops_cut_short() {
        item.status = MANIFOLD_HOST;
    }
    mesh_items[k] = item;
}

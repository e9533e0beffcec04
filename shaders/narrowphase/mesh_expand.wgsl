// The mesh pass's midphase: one caller pair per invocation turns a (mesh, body) pair into
// (pair, triangle) work items, in the mesh's frame (A is the mesh, as the CPU's). Rust twin:
// src/contact/trimesh.rs (push_body_contacts, step 1), src/contact/trimesh_compound.rs (its
// children in order) and TriangleBvh::for_each_overlap (src/trimesh/bvh.rs); host:
// src/narrowphase/gpu/mesh.rs.
//
// 1. Bounds guard. A pair without a mesh stays unlisted (flags 0); the mesh as the pair's B is
//    swapped to A (MESH_RANGE_SWAPPED); a compound is flagged MESH_RANGE_COMPOUND.
// 2. The body's pose in the mesh's frame (relative_pose); a compound's children posed there in
//    order (pose_part, its parts' records at the head of the range table); each one's box there as box_in_a computes it (a hull's
//    posed vertices, a sphere's or capsule's closed form), grown by the margin and
//    TRIMESH_AABB_PADDING. Steps 3 and 4 run once per child (a convex body is its own child
//    0), so items come child by child, each child's in BVH order: the CPU's sub-contact order.
// 3. The BVH walked depth first with a MESH_STACK_SIZE stack, children in order, so triangles
//    come in the CPU's order. Inner lanes are tested on their boxes, which the ray caster grew
//    (they only hold more); leaf lanes on the triangle's own box from its corners, the CPU's
//    exact test.
// 4. Counted by a first walk; one atomicAdd reserves the contiguous items (the total keeps the
//    true count; past the capacity the range is flagged overflow and nothing is written); a
//    second walk writes them, so an item's place in the range is its rank in that order; each
//    item carries its child's index, shape and pose.
//
// Compiled after quat, body, layout, geometry and mesh.wgsl (MESH_EXPAND_WGSL). Group 0 binds
// only the hull vertices (0) and shapes (3); group 1 the chunk's bodies, pairs and params;
// group 2 the mesh tables, the items and the ranges (with the compound parts: 9 storage
// buffers, the clip kernel's limit).

// Mirrors crate::constants::TRIMESH_AABB_PADDING (dimensionless, times a box's reach).
const TRIMESH_AABB_PADDING: f32 = 1.0e-5;

// The range table: the items reserved (the work item count) and the part count, then every
// compound part as a record (pose in its compound's frame, shape; copied in by the host each
// call), then one range per caller pair. Must match kernel_layout.rs MESH_TABLE_HEAD and
// GpuMeshPairRange.
struct MeshRangeTable {
    total: atomic<u32>,
    parts: u32,
    _pad1: u32,
    _pad2: u32,
    entries: array<GpuMeshPairRange>,
}

@group(2) @binding(0) var<storage, read> mesh_nodes: array<GpuMeshNode>;
@group(2) @binding(1) var<storage, read> mesh_vertices: array<vec4<f32>>;
@group(2) @binding(2) var<storage, read> mesh_triangles: array<GpuMeshTriangle>;
// Bound at the capacity: arrayLength is the most items a call holds.
@group(2) @binding(3) var<storage, read_write> mesh_items: array<GpuMeshItem>;
@group(2) @binding(4) var<storage, read_write> mesh_ranges: MeshRangeTable;

struct Aabb {
    lo: vec3<f32>,
    hi: vec3<f32>,
}

// Step 2: the box of `shape` posed in the mesh's frame by (q, t), grown.
fn body_box_in_mesh(shape: GpuShape, q: vec4<f32>, t: vec3<f32>, margin: f32) -> Aabb {
    var lo = t;
    var hi = t;
    switch shape.kind {
        case SHAPE_SPHERE: {
            lo -= vec3<f32>(shape.params.x);
            hi += vec3<f32>(shape.params.x);
        }
        case SHAPE_CAPSULE: {
            let half = abs(quat_rotate(q, vec3<f32>(0.0, shape.params.y, 0.0))) + shape.params.x;
            lo -= half;
            hi += half;
        }
        default: {
            lo = vec3<f32>(F32_MAX);
            hi = vec3<f32>(-F32_MAX);
            for (var i = 0u; i < shape.vertex_count; i++) {
                let p = quat_rotate(q, vertices[shape.first_vertex + i].xyz) + t;
                lo = min(lo, p);
                hi = max(hi, p);
            }
        }
    }
    let reach = max(abs(lo), abs(hi));
    let size = hi - lo;
    let grow = margin + TRIMESH_AABB_PADDING * (max(reach.x, max(reach.y, reach.z)) + max(size.x, max(size.y, size.z)));
    return Aabb(lo - grow, hi + grow);
}

// What a walk found: the overlapping triangles, and whether a push was dropped (never with
// the CPU's stack size on a tree the CPU built; the pair then goes to the host).
struct Walk {
    count: u32,
    dropped: bool,
}

// Step 3 over the mesh at `root` (triangle 0 at `first_triangle`): counts the triangles whose
// boxes overlap `b`, and with `write` stores them from `first` as copies of `body` (its pair,
// child, shape and pose) naming their triangle.
fn walk_mesh(root: u32, first_triangle: u32, b: Aabb, body: GpuMeshItem, first: u32, write: bool) -> Walk {
    var stack: array<u32, MESH_STACK_SIZE>;
    stack[0] = root;
    var top = 1u;
    var walk = Walk(0u, false);
    let capacity = arrayLength(&mesh_items);
    let node_count = arrayLength(&mesh_nodes);
    let triangle_count = arrayLength(&mesh_triangles);
    let vertex_count = arrayLength(&mesh_vertices);
    while top > 0u {
        top -= 1u;
        let entry = stack[top];
        let index = entry & ~MESH_LEAF_BIT;
        if index >= node_count {
            walk.dropped = true;
            continue;
        }
        let node = mesh_nodes[index];
        if (entry & MESH_LEAF_BIT) != 0u {
            for (var i = 0u; i < 4u; i++) {
                let t = node.items[i];
                if t >= triangle_count {
                    continue;
                }
                let corners = mesh_triangles[t].vertices;
                if any(corners >= vec3<u32>(vertex_count)) {
                    walk.dropped = true;
                    continue;
                }
                let a = mesh_vertices[corners.x].xyz;
                let c1 = mesh_vertices[corners.y].xyz;
                let c2 = mesh_vertices[corners.z].xyz;
                let lo = min(min(a, c1), c2);
                let hi = max(max(a, c1), c2);
                if all(lo <= b.hi) && all(hi >= b.lo) {
                    let k = first + walk.count;
                    if write && k < capacity {
                        var item = body;
                        item.corners = array<vec4<f32>, 3>(vec4<f32>(a, 0.0), vec4<f32>(c1, 0.0), vec4<f32>(c2, 0.0));
                        item.triangle = t;
                        item.local_triangle = t - first_triangle;
                        mesh_items[k] = item;
                    }
                    walk.count += 1u;
                }
            }
        } else {
            let over = (node.min_x <= vec4<f32>(b.hi.x)) & (node.min_y <= vec4<f32>(b.hi.y)) & (node.min_z <= vec4<f32>(b.hi.z))
                & (node.max_x >= vec4<f32>(b.lo.x)) & (node.max_y >= vec4<f32>(b.lo.y)) & (node.max_z >= vec4<f32>(b.lo.z));
            // Pushed last child first: the first child is walked first.
            for (var i = 4u; i > 0u; i--) {
                let lane = i - 1u;
                if node.items[lane] == MESH_NO_ITEM || !over[lane] {
                    continue;
                }
                if top == MESH_STACK_SIZE {
                    walk.dropped = true;
                } else {
                    stack[top] = node.items[lane];
                    top += 1u;
                }
            }
        }
    }
    return walk;
}

// Step 2 for child `child` of pair `p`'s body (shape `shape_index`, posed by `b_in_a`): the
// item fields it shares, from part `part` for a compound; shape MESH_NO_ITEM for a child that
// touches nothing (a half-space, mesh or compound, as push_body_contacts).
fn mesh_child(body: GpuShape, shape_index: u32, b_in_a: RelativePose, p: u32, child: u32, part: u32) -> GpuMeshItem {
    var item: GpuMeshItem;
    item.pair = p;
    item.child = child;
    item.shape = shape_index;
    var pose = b_in_a;
    if body.kind == SHAPE_COMPOUND {
        let record = mesh_ranges.entries[part];
        item.shape = record.shape;
        pose = pose_part(b_in_a, record.rotation, record.translation);
    }
    item.rotation = pose.q;
    item.translation = pose.t;
    if item.shape >= arrayLength(&shapes) {
        item.shape = MESH_NO_ITEM;
        return item;
    }
    let kind = shapes[item.shape].kind;
    if kind == SHAPE_HALF_SPACE || kind == SHAPE_TRIMESH || kind == SHAPE_COMPOUND {
        item.shape = MESH_NO_ITEM;
    }
    return item;
}

// The grown box of `child`'s shape at its pose (mesh frame).
fn child_box(child: GpuMeshItem) -> Aabb {
    return body_box_in_mesh(shapes[child.shape], child.rotation, child.translation, params.margin);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    // 1. Bounds guard.
    let index = id.x;
    let p = mesh_ranges.parts + params.first_pair + index;
    if index >= params.pair_count || p >= arrayLength(&mesh_ranges.entries) {
        return;
    }
    var range = GpuMeshPairRange(0u, 0u, 0u, 0.0, vec4<f32>(0.0, 0.0, 0.0, 1.0), vec3<f32>(0.0), 0u);
    mesh_ranges.entries[p] = range;
    let pair = pairs[index];
    let body_count = arrayLength(&bodies);
    if pair.x >= body_count || pair.y >= body_count || pair.x == pair.y {
        return;
    }
    var body_a = bodies[pair.x];
    var body_b = bodies[pair.y];
    let shape_count = arrayLength(&shapes);
    if body_a.shape >= shape_count || body_b.shape >= shape_count {
        return;
    }
    range.flags = COMPOUND_RANGE_LISTED;
    if shapes[body_b.shape].kind == SHAPE_TRIMESH {
        let mesh_body = body_b;
        body_b = body_a;
        body_a = mesh_body;
        range.flags |= MESH_RANGE_SWAPPED;
    }
    let mesh = shapes[body_a.shape];
    let body = shapes[body_b.shape];
    if mesh.kind != SHAPE_TRIMESH || body.kind == SHAPE_TRIMESH || body.kind == SHAPE_HALF_SPACE {
        // No mesh, or two static shapes (never in contact).
        return;
    }
    // 2. The body in the mesh's frame; a compound's children there (parts [first, end)).
    let b_in_a = relative_pose(body_a, body_b);
    range.size = body.radius;
    range.rotation = b_in_a.q;
    range.translation = b_in_a.t;
    range.shape = body_b.shape;
    var parts = vec2<u32>(0u, 1u);
    if body.kind == SHAPE_COMPOUND {
        range.flags |= MESH_RANGE_COMPOUND;
        parts = vec2<u32>(body.first_face, body.first_face + body.face_count);
        if parts.y > mesh_ranges.parts {
            range.flags |= COMPOUND_RANGE_HOST;
            mesh_ranges.entries[p] = range;
            return;
        }
    } else if body.kind == SHAPE_SPHERE {
        range.flags |= COMPOUND_RANGE_SINGLE;
    }
    // 3 and 4. Counted, reserved, written, child by child.
    var counted = Walk(0u, false);
    for (var c = parts.x; c < parts.y; c++) {
        let child = mesh_child(body, body_b.shape, b_in_a, p, c - parts.x, c);
        if child.shape != MESH_NO_ITEM {
            let walk = walk_mesh(mesh.first_edge, mesh.first_face, child_box(child), child, 0u, false);
            counted.count += walk.count;
            counted.dropped = counted.dropped || walk.dropped;
        }
    }
    let first = atomicAdd(&mesh_ranges.total, counted.count);
    range.first = first;
    range.count = counted.count;
    let capacity = arrayLength(&mesh_items);
    if counted.count > capacity || first > capacity - counted.count {
        range.flags |= COMPOUND_RANGE_OVERFLOW;
        mesh_ranges.entries[p] = range;
        return;
    }
    var written = Walk(0u, false);
    for (var c = parts.x; c < parts.y; c++) {
        let child = mesh_child(body, body_b.shape, b_in_a, p, c - parts.x, c);
        if child.shape != MESH_NO_ITEM {
            let walk = walk_mesh(mesh.first_edge, mesh.first_face, child_box(child), child, first + written.count, true);
            written.count += walk.count;
            written.dropped = written.dropped || walk.dropped;
        }
    }
    // The driver cut a loop short (llvmpipe), or the tables are not the CPU's: the host's pair.
    if counted.dropped || written.dropped || written.count != counted.count || loops_cut_short() {
        range.flags |= COMPOUND_RANGE_HOST;
    }
    mesh_ranges.entries[p] = range;
}

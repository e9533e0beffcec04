// Ray casts against triangle meshes and compounds, the ray kernel's cast_complex. Host:
// src/raycast/gpu.rs; the CPU twins: src/raycast/cast_trimesh.rs (with the walk of
// src/trimesh/bvh.rs step 5) and src/raycast/cast_shape.rs (cast_compound), same steps. GpuCompoundChild
// must match crate::raycast::layout::GpuCompoundChild (checked by tests/raycast_layout.rs).
// Compiled after shaders/common/mesh.wgsl and raycast.wgsl (see RAYCAST_COMPLEX_WGSL).

// Must match crate::constants::TRIMESH_RAY_EDGE_TOLERANCE.
const TRIMESH_RAY_EDGE_TOLERANCE: f32 = 1e-6;

// Must match crate::raycast::layout::GpuCompoundChild (compound frame).
struct GpuCompoundChild {
    rotation: vec4<f32>,
    translation: vec3<f32>,
    shape: u32,
}

// Group 2: the shapes' mesh and compound tables, uploaded once. Vertices: mesh frame, xyz.
@group(2) @binding(0) var<storage, read> mesh_nodes: array<GpuMeshNode>;
@group(2) @binding(1) var<storage, read> mesh_vertices: array<vec4<f32>>;
@group(2) @binding(2) var<storage, read> mesh_triangles: array<GpuMeshTriangle>;
@group(2) @binding(3) var<storage, read> compound_children: array<GpuCompoundChild>;

fn cast_complex(shape: GpuRayShape, ray: LocalRay) -> LocalHit {
    if shape.kind == SHAPE_TRIMESH {
        return cast_trimesh(shape.first, shape.count, ray);
    }
    return cast_compound(shape.first, shape.count, ray);
}

// bvh.rs BvhNode::entry for lane `i` of `node`: the ray's entry distance into its box within
// [0, limit], or -1.
fn lane_entry(node: GpuMeshNode, i: u32, origin: vec3<f32>, inverse: vec3<f32>, limit: f32) -> f32 {
    let t1 = (vec3<f32>(node.min_x[i], node.min_y[i], node.min_z[i]) - origin) * inverse;
    let t2 = (vec3<f32>(node.max_x[i], node.max_y[i], node.max_z[i]) - origin) * inverse;
    let low = min(t1, t2);
    let high = max(t1, t2);
    let enter = max(max(max(low.x, low.y), low.z), 0.0);
    let exit = min(min(min(high.x, high.y), high.z), limit);
    return select(-1.0, enter, enter <= exit);
}

// cast_trimesh.rs ray_triangle (Möller–Trumbore, either face): the distance, or -1.
fn ray_triangle(a: vec3<f32>, b: vec3<f32>, c: vec3<f32>, origin: vec3<f32>, direction: vec3<f32>) -> f32 {
    let e1 = b - a;
    let e2 = c - a;
    let p = cross(direction, e2);
    let det = dot(e1, p);
    if det == 0.0 {
        return -1.0;
    }
    let inverse = 1.0 / det;
    let s = origin - a;
    let u = dot(s, p) * inverse;
    let q = cross(s, e1);
    let v = dot(direction, q) * inverse;
    let tolerance = TRIMESH_RAY_EDGE_TOLERANCE;
    if u < -tolerance || v < -tolerance || u + v > 1.0 + tolerance {
        return -1.0;
    }
    let distance = dot(e2, q) * inverse;
    return select(-1.0, distance, distance >= 0.0);
}

// A mesh walk's stack entry: a node entry and the distance at which the ray enters its box.
struct MeshEntry {
    item: u32,
    at: f32,
}

// cast_trimesh.rs: the walk over the boxes the ray reaches, nearer first, the nearest triangle
// kept (ties: found first), its normal turned to face the ray; `feature` the triangle's index
// in its mesh.
fn cast_trimesh(root: u32, first_triangle: u32, ray: LocalRay) -> LocalHit {
    let inverse = inverse_direction(ray.direction);
    var best = no_hit();
    var limit = ray.max_distance;
    var stack: array<MeshEntry, MESH_STACK_SIZE>;
    stack[0] = MeshEntry(root, -F32_MAX);
    var top = 1u;
    while top > 0u {
        top -= 1u;
        let entry = stack[top];
        if entry.at > limit {
            continue;
        }
        let node = mesh_nodes[entry.item & ~MESH_LEAF_BIT];
        if (entry.item & MESH_LEAF_BIT) != 0u {
            for (var i = 0u; i < 4u; i++) {
                let t = node.items[i];
                if t == MESH_NO_ITEM || lane_entry(node, i, ray.origin, inverse, limit) < 0.0 {
                    continue;
                }
                let corners = mesh_triangles[t].vertices;
                let a = mesh_vertices[corners.x].xyz;
                let b = mesh_vertices[corners.y].xyz;
                let c = mesh_vertices[corners.z].xyz;
                let distance = ray_triangle(a, b, c, ray.origin, ray.direction);
                if distance >= 0.0 && distance <= limit && (!best.hit || distance < best.distance) {
                    limit = distance;
                    let normal = normalize(cross(b - a, c - a));
                    let facing = select(normal, -normal, dot(normal, ray.direction) > 0.0);
                    best = LocalHit(true, distance, facing, t - first_triangle);
                }
            }
            continue;
        }
        if top + 4u > MESH_STACK_SIZE {
            complex_flags |= STACK_OVERFLOW_BIT;
            break;
        }
        var at = vec4<f32>(-1.0);
        for (var i = 0u; i < 4u; i++) {
            if node.items[i] != MESH_NO_ITEM {
                at[i] = lane_entry(node, i, ray.origin, inverse, limit);
            }
        }
        // Pushed farthest first (ties: the later child), so the nearest is walked first.
        for (var k = 0u; k < 4u; k++) {
            var pick = 4u;
            for (var i = 0u; i < 4u; i++) {
                if at[i] >= 0.0 && (pick == 4u || at[i] >= at[pick]) {
                    pick = i;
                }
            }
            if pick == 4u {
                break;
            }
            stack[top] = MeshEntry(node.items[pick], at[pick]);
            top += 1u;
            at[pick] = -1.0;
        }
    }
    return best;
}

// cast_shape.rs (cast_compound): each child hit in its own frame, within the nearest hit so far; the
// nearest kept (ties: the lower child), its normal in the compound's frame; `feature` the
// child's index.
fn cast_compound(first: u32, count: u32, ray: LocalRay) -> LocalHit {
    var best = no_hit();
    for (var i = 0u; i < count; i++) {
        let child = compound_children[first + i];
        let inverse = quat_conjugate(child.rotation);
        let limit = select(ray.max_distance, best.distance, best.hit);
        let child_ray = LocalRay(quat_rotate(inverse, ray.origin - child.translation), quat_rotate(inverse, ray.direction), limit);
        let hit = cast_convex(shapes[child.shape], child_ray);
        if hit.hit && (!best.hit || hit.distance < best.distance) {
            best = LocalHit(true, hit.distance, quat_rotate(child.rotation, hit.normal), i);
        }
    }
    return best;
}

// Test entry point of shaders/narrowphase/triangle_contact.wgsl (tests/gpu_triangle_contact.rs):
// one (triangle, body) case per invocation, compiled after CLIP_WGSL and triangle_contact.wgsl.
// The structs must match TriangleCase and TriangleResult in tests/gpu_triangle_contact.rs.

// One case: the triangle (MeshTriangle: corners xyz, neighbour normals xyz with w = 1 where the
// edge has a neighbour), B posed in A's frame (rotation xyzw, translation), B's shape index into
// the hull tables' shapes, the margin and the face preference (length units).
struct TriangleCase {
    corners: array<vec4<f32>, 3>,
    normal: vec3<f32>,
    active_edges: u32,
    neighbour_normals: array<vec4<f32>, 3>,
    rotation: vec4<f32>,
    translation: vec3<f32>,
    shape: u32,
    margin: f32,
    tolerance: f32,
    _pad: vec2<u32>,
}

// TriangleContact and its points (xyz position, w depth) and ids.
struct TriangleResult {
    status: u32,
    count: u32,
    separation: f32,
    _pad: u32,
    normal: vec4<f32>,
    points: array<vec4<f32>, MAX_CLIP_VERTICES>,
    ids: array<u32, MAX_CLIP_VERTICES>,
}

@group(2) @binding(0) var<storage, read> cases: array<TriangleCase>;
@group(2) @binding(1) var<storage, read_write> results: array<TriangleResult>;

// One invocation per workgroup: llvmpipe's loop budget is spent per invocation group.
@compute @workgroup_size(1)
fn triangle_main(@builtin(global_invocation_id) id: vec3<u32>) {
    let index = id.x + 65535u * id.y;
    if index >= arrayLength(&cases) {
        return;
    }
    let c = cases[index];
    var t: MeshTriangle;
    t.normal = c.normal;
    t.active_edges = c.active_edges;
    t.linked = 0u;
    for (var k = 0u; k < 3u; k++) {
        t.corners[k] = c.corners[k].xyz;
        t.neighbour_normals[k] = c.neighbour_normals[k].xyz;
        if c.neighbour_normals[k].w != 0.0 {
            t.linked |= 1u << k;
        }
    }
    let contact = collide_triangle_shape(t, shapes[c.shape], c.rotation, c.translation, c.margin, c.tolerance);
    var r: TriangleResult;
    r.status = contact.status;
    r.count = contact.count;
    r.separation = contact.separation;
    r.normal = vec4<f32>(contact.normal, 0.0);
    for (var i = 0u; i < contact.count; i++) {
        r.points[i] = triangle_points[i];
        r.ids[i] = triangle_ids[i];
    }
    results[index] = r;
}

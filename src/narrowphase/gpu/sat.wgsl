// Separating axis test between two convex hulls, one body pair per invocation, in hull A's frame.
// A port of src/query/sat.rs (the reference); keep the two in step.
//
// 1. Bounds guard; pairs whose bodies are not both hulls (NO_HULL) get AXIS_NONE: the CPU
//    handles them.
// 2. B's pose in A's frame from the two world poses (as Pose::relative_to_self), and its inverse;
//    the world translations come split in f32 hi + lo parts (GpuBody) and are subtracted part by
//    part before rotating, so bodies far from the origin keep their relative precision.
// 3. Face query of A: A's planes moved into B's frame, deepest vertex of B below each.
// 4. Face query of B: B's planes moved into A's frame, deepest vertex of A below each.
// 5. Edge query: only Gauss-map-crossing edge pairs (is_minkowski_face), parallel pairs
//    skipped, axis oriented away from A's centroid; a pair that would become the best is
//    re-measured with both hulls' support points along its axis (separation_along).
// 6. Each query stops once an axis separates by more than the margin.
// 7. Face preference: face B beats face A, an edge pair beats the best face, only when it
//    separates more by AXIS_PREFERENCE_TOLERANCE * (radius A + radius B); `separation` is the
//    exact maximum over all tested axes.
//
// Every struct has a Rust twin in layout.rs (beside this file); tests/gpu_layout.rs checks sizes, offsets
// and the constants below against the Rust ones.

// Mirrors crate::constants::AXIS_PREFERENCE_TOLERANCE (fraction of the pair's scale).
const AXIS_PREFERENCE_TOLERANCE: f32 = 1.0e-3;
// Mirrors crate::constants::PARALLEL_EDGE_SINE (sine of the angle between edge directions).
const PARALLEL_EDGE_SINE: f32 = 1.0e-3;
// Mirrors crate::gpu::layout::WORKGROUP_SIZE.
const WORKGROUP_SIZE: u32 = 64u;
// Mirrors crate::gpu::layout::NO_HULL: a body whose shape is not a hull.
const NO_HULL: u32 = 0xffffffffu;
// Mirrors crate::gpu::layout::AXIS_*: low two bits of GpuSatResult.kind.
const AXIS_NONE: u32 = 0u;
const AXIS_FACE_A: u32 = 1u;
const AXIS_FACE_B: u32 = 2u;
const AXIS_EDGE_PAIR: u32 = 3u;
// Mirrors crate::gpu::layout::SEPARATED_BIT: set in kind when separation > margin.
const SEPARATED_BIT: u32 = 4u;
// Mirrors crate::gpu::layout::INCOMPLETE_BIT: set in kind when the driver cut the loops short.
const INCOMPLETE_BIT: u32 = 8u;
// Largest finite f32: the start value of the min / max searches (the CPU uses infinities).
const F32_MAX: f32 = 0x1.fffffep+127f;

// Must match layout.rs `GpuHull`: ranges into the shared geometry arrays.
struct GpuHull {
    centroid: vec3<f32>,
    radius: f32,
    first_vertex: u32,
    vertex_count: u32,
    first_face: u32,
    face_count: u32,
    first_edge: u32,
    edge_count: u32,
    _pad0: u32,
    _pad1: u32,
}

// Must match layout.rs `GpuEdge`: vertex and face indices local to the hull.
struct GpuEdge {
    v0: u32,
    v1: u32,
    f0: u32,
    f1: u32,
}

// Must match layout.rs `GpuBody`: world pose (unit quaternion xyzw; translation = hi + lo,
// see layout.rs split_translation) and hull index.
struct GpuBody {
    rotation: vec4<f32>,
    translation_hi: vec3<f32>,
    hull: u32,
    translation_lo: vec3<f32>,
    _pad: u32,
}

// Must match layout.rs `GpuSatResult`: one per pair, normal in A's frame; kind is the
// AXIS_* code | SEPARATED_BIT | INCOMPLETE_BIT.
struct GpuSatResult {
    normal: vec3<f32>,
    axis_separation: f32,
    separation: f32,
    kind: u32,
    feature_a: u32,
    feature_b: u32,
}

// Must match layout.rs `GpuParams`: one per dispatch chunk (bound at a dynamic offset).
struct GpuParams {
    margin: f32,
    pair_count: u32,
    _pad0: u32,
    _pad1: u32,
}

// Group 0: hull geometry, uploaded once. Vertices xyz (w unused); planes normal xyz, offset w.
@group(0) @binding(0) var<storage, read> vertices: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> planes: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> edges: array<GpuEdge>;
@group(0) @binding(3) var<storage, read> hulls: array<GpuHull>;
// Group 1: per call. `pairs` and `results` are bound per dispatch chunk to windows starting at
// the chunk's first pair; the windows may be longer than the chunk (params.pair_count).
@group(1) @binding(0) var<storage, read> bodies: array<GpuBody>;
@group(1) @binding(1) var<storage, read> pairs: array<vec2<u32>>;
@group(1) @binding(2) var<storage, read_write> results: array<GpuSatResult>;
@group(1) @binding(3) var<uniform> params: GpuParams;

struct FaceQuery {
    face: u32,
    separation: f32,
}

struct EdgeQuery {
    found: bool,
    edge_a: u32,
    edge_b: u32,
    separation: f32,
    axis: vec3<f32>,
}

// Rotates v by the unit quaternion q (xyzw), the same formula as glam's Quat * Vec3.
fn quat_rotate(q: vec4<f32>, v: vec3<f32>) -> vec3<f32> {
    let u = q.xyz;
    return v * (q.w * q.w - dot(u, u)) + u * (2.0 * dot(u, v)) + cross(u, v) * (2.0 * q.w);
}

// Hamilton product a * b (apply b first).
fn quat_mul(a: vec4<f32>, b: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(
        a.w * b.xyz + b.w * a.xyz + cross(a.xyz, b.xyz),
        a.w * b.w - dot(a.xyz, b.xyz),
    );
}

// Inverse of a unit quaternion.
fn quat_conjugate(q: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(-q.xyz, q.w);
}

// Best face of `a` against `b`: A's planes moved into B's frame by (q, t) = A's pose in B's
// frame, deepest vertex of `b` below each. Stops once a face separates by more than `margin`.
fn query_faces(a: GpuHull, b: GpuHull, q: vec4<f32>, t: vec3<f32>, margin: f32) -> FaceQuery {
    var best = FaceQuery(0u, -F32_MAX);
    for (var face = 0u; face < a.face_count; face++) {
        let plane = planes[a.first_face + face];
        let normal = quat_rotate(q, plane.xyz);
        let offset = plane.w + dot(normal, t);
        var deepest = F32_MAX;
        for (var i = 0u; i < b.vertex_count; i++) {
            deepest = min(deepest, dot(normal, vertices[b.first_vertex + i].xyz));
        }
        let separation = deepest - offset;
        if separation > best.separation {
            best = FaceQuery(face, separation);
            if separation > margin {
                break;
            }
        }
    }
    return best;
}

// Separation of `b` (posed in A's frame by (q, t)) from `a` along the unit `axis` (A's frame):
// the gap between the support points, as crate::query::sat::separation_along.
fn separation_along(a: GpuHull, b: GpuHull, q: vec4<f32>, t: vec3<f32>, axis: vec3<f32>) -> f32 {
    let axis_in_b = quat_rotate(quat_conjugate(q), axis);
    var b_lowest = F32_MAX;
    for (var i = 0u; i < b.vertex_count; i++) {
        b_lowest = min(b_lowest, dot(vertices[b.first_vertex + i].xyz, axis_in_b));
    }
    var a_highest = -F32_MAX;
    for (var i = 0u; i < a.vertex_count; i++) {
        a_highest = max(a_highest, dot(vertices[a.first_vertex + i].xyz, axis));
    }
    return b_lowest + dot(axis, t) - a_highest;
}

// True when the Gauss-map arcs a->b (edge of A) and c->d (edge of B, normals negated) cross.
fn is_minkowski_face(a: vec3<f32>, b: vec3<f32>, b_x_a: vec3<f32>, c: vec3<f32>, d: vec3<f32>, d_x_c: vec3<f32>) -> bool {
    let cba = dot(c, b_x_a);
    let dba = dot(d, b_x_a);
    let adc = dot(a, d_x_c);
    let bdc = dot(b, d_x_c);
    return cba * dba < 0.0 && adc * bdc < 0.0 && cba * bdc > 0.0;
}

// Best Gauss-map-crossing edge pair, B posed in A's frame by (q, t); stops once one separates
// by more than `margin`. `found` is false when no pair qualifies.
fn query_edges(a: GpuHull, b: GpuHull, q: vec4<f32>, t: vec3<f32>, margin: f32) -> EdgeQuery {
    var best = EdgeQuery(false, 0u, 0u, -F32_MAX, vec3<f32>(0.0));
    for (var ia = 0u; ia < a.edge_count; ia++) {
        let ea = edges[a.first_edge + ia];
        let na0 = planes[a.first_face + ea.f0].xyz;
        let na1 = planes[a.first_face + ea.f1].xyz;
        let pa = vertices[a.first_vertex + ea.v0].xyz;
        let da = vertices[a.first_vertex + ea.v1].xyz - pa;
        let na1_x_na0 = cross(na1, na0);
        for (var ib = 0u; ib < b.edge_count; ib++) {
            let eb = edges[b.first_edge + ib];
            // B's face normals negated: the Gauss map of -B.
            let nb0 = -quat_rotate(q, planes[b.first_face + eb.f0].xyz);
            let nb1 = -quat_rotate(q, planes[b.first_face + eb.f1].xyz);
            if !is_minkowski_face(na0, na1, na1_x_na0, nb0, nb1, cross(nb1, nb0)) {
                continue;
            }
            let pb = quat_rotate(q, vertices[b.first_vertex + eb.v0].xyz) + t;
            let db = quat_rotate(q, vertices[b.first_vertex + eb.v1].xyz) + t - pb;
            let axis_raw = cross(da, db);
            let cross_len = length(axis_raw);
            if cross_len < PARALLEL_EDGE_SINE * length(da) * length(db) {
                continue;
            }
            var axis = axis_raw / cross_len;
            if dot(axis, pa - a.centroid) < 0.0 {
                axis = -axis;
            }
            // The edge points bound the support value from above: re-measure only if it can win.
            if best.found && dot(axis, pb - pa) <= best.separation {
                continue;
            }
            let separation = separation_along(a, b, q, t, axis);
            if !best.found || separation > best.separation {
                best = EdgeQuery(true, ia, ib, separation, axis);
                if separation > margin {
                    return best;
                }
            }
        }
    }
    return best;
}

fn write_result(index: u32, kind: u32, fa: u32, fb: u32, normal: vec3<f32>, axis_sep: f32, sep: f32) {
    var flags = kind;
    if sep > params.margin {
        flags |= SEPARATED_BIT;
    }
    // llvmpipe stops every loop of an invocation group, silently, once ~65,535 iterations are
    // spent, and the budget never refills: a two-step loop run last is cut short exactly when
    // the queries may have been. The bound comes from a buffer so no compiler folds the loop.
    let wanted = min(2u, params.pair_count + 1u);
    var steps = 0u;
    for (var i = 0u; i < wanted; i++) {
        steps += 1u;
    }
    if steps < wanted {
        flags |= INCOMPLETE_BIT;
    }
    results[index] = GpuSatResult(normal, axis_sep, sep, flags, fa, fb);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    // 1. Bounds guard, CPU-routed pairs.
    let index = id.x;
    if index >= params.pair_count {
        return;
    }
    let pair = pairs[index];
    let body_a = bodies[pair.x];
    let body_b = bodies[pair.y];
    if body_a.hull == NO_HULL || body_b.hull == NO_HULL {
        results[index] = GpuSatResult(vec3<f32>(0.0), 0.0, 0.0, AXIS_NONE, 0u, 0u);
        return;
    }
    let a = hulls[body_a.hull];
    let b = hulls[body_b.hull];
    let margin = params.margin;
    let tolerance = AXIS_PREFERENCE_TOLERANCE * (a.radius + b.radius);

    // 2. B in A's frame (b_in_a), A in B's frame (a_in_b).
    let inv_a = quat_conjugate(body_a.rotation);
    let q_ba = normalize(quat_mul(inv_a, body_b.rotation));
    let t_world = (body_b.translation_hi - body_a.translation_hi) + (body_b.translation_lo - body_a.translation_lo);
    let t_ba = quat_rotate(inv_a, t_world);
    let q_ab = quat_conjugate(q_ba);
    let t_ab = quat_rotate(q_ab, -t_ba);

    // 3. Face query of A.
    let face_a = query_faces(a, b, q_ab, t_ab, margin);
    let face_a_normal = planes[a.first_face + face_a.face].xyz;
    if face_a.separation > margin {
        write_result(index, AXIS_FACE_A, face_a.face, 0u, face_a_normal, face_a.separation, face_a.separation);
        return;
    }

    // 4. Face query of B.
    let face_b = query_faces(b, a, q_ba, t_ba, margin);
    let face_b_normal = -quat_rotate(q_ba, planes[b.first_face + face_b.face].xyz);
    if face_b.separation > margin {
        write_result(index, AXIS_FACE_B, 0u, face_b.face, face_b_normal, face_b.separation, face_b.separation);
        return;
    }

    // 5. Edge query.
    let edge = query_edges(a, b, q_ba, t_ba, margin);
    if edge.found && edge.separation > margin {
        write_result(index, AXIS_EDGE_PAIR, edge.edge_a, edge.edge_b, edge.axis, edge.separation, edge.separation);
        return;
    }

    // 7. Face preference, exact maximum separation.
    var kind = AXIS_FACE_A;
    var feature_a = face_a.face;
    var feature_b = 0u;
    var normal = face_a_normal;
    var axis_separation = face_a.separation;
    if face_b.separation > face_a.separation + tolerance {
        kind = AXIS_FACE_B;
        feature_a = 0u;
        feature_b = face_b.face;
        normal = face_b_normal;
        axis_separation = face_b.separation;
    }
    var separation = max(face_a.separation, face_b.separation);
    if edge.found {
        if edge.separation > axis_separation + tolerance {
            kind = AXIS_EDGE_PAIR;
            feature_a = edge.edge_a;
            feature_b = edge.edge_b;
            normal = edge.axis;
            axis_separation = edge.separation;
        }
        separation = max(separation, edge.separation);
    }
    write_result(index, kind, feature_a, feature_b, normal, axis_separation, separation);
}

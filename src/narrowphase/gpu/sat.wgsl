// Separating axis test between two convex hulls, one body pair per invocation, in hull A's frame.
// A port of src/query/sat.rs (the reference); keep the two in step.
//
// 1. Bounds guard (also of the pair's body and shape indices, pair_in_range); pairs out of
//    range or whose shapes are not both hulls (or boxes) get AXIS_NONE: the CPU handles them.
// 2. B's pose in A's frame from the two world poses (relative_pose, as Pose::relative_to_self),
//    and its inverse.
// 3. Face query of A: A's planes moved into B's frame, deepest vertex of B below each.
// 4. Face query of B: B's planes moved into A's frame, deepest vertex of A below each.
// 5. Edge query: only Gauss-map-crossing edge pairs (is_minkowski_face), parallel pairs
//    skipped, axis oriented away from A's centroid; a pair that would become the best is
//    re-measured with both hulls' support points along its axis (separation_along).
// 6. Each query stops once an axis separates by more than the margin.
// 7. Face preference: face B beats face A, an edge pair beats the best face, only when it
//    separates more by AXIS_PREFERENCE_TOLERANCE * pair_scale (radius A + radius B, as
//    crate::constants::pair_scale); `separation` is the
//    exact maximum over all tested axes.
//
// Compiled after geometry.wgsl (structs, bindings, helpers). tests/gpu_layout.rs checks the
// constants below against the Rust ones.

// Mirrors crate::constants::AXIS_PREFERENCE_TOLERANCE (fraction of the pair's scale).
const AXIS_PREFERENCE_TOLERANCE: f32 = 1.0e-3;
// Mirrors crate::constants::PARALLEL_EDGE_SINE (sine of the angle between edge directions).
const PARALLEL_EDGE_SINE: f32 = 1.0e-3;
// Group 1, binding 2: one result per pair of the chunk.
@group(1) @binding(2) var<storage, read_write> results: array<GpuSatResult>;

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

// Best face of `a` against `b`: A's planes moved into B's frame by (q, t) = A's pose in B's
// frame, deepest vertex of `b` below each. Stops once a face separates by more than `margin`.
fn query_faces(a: GpuShape, b: GpuShape, q: vec4<f32>, t: vec3<f32>, margin: f32) -> FaceQuery {
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
fn separation_along(a: GpuShape, b: GpuShape, q: vec4<f32>, t: vec3<f32>, axis: vec3<f32>) -> f32 {
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
fn query_edges(a: GpuShape, b: GpuShape, q: vec4<f32>, t: vec3<f32>, margin: f32) -> EdgeQuery {
    var best = EdgeQuery(false, 0u, 0u, -F32_MAX, vec3<f32>(0.0));
    for (var ia = 0u; ia < a.edge_count; ia++) {
        let ea = edges[a.first_edge + ia];
        let na0 = planes[a.first_face + ea.f0].xyz;
        let na1 = planes[a.first_face + ea.f1].xyz;
        let pa = vertices[a.first_vertex + ea.v0].xyz;
        let da = normalize(vertices[a.first_vertex + ea.v1].xyz - pa);
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
            let db = normalize(quat_rotate(q, vertices[b.first_vertex + eb.v1].xyz) + t - pb);
            // Unit directions: |cross| is the sine of their angle, at any scale.
            let axis_raw = cross(da, db);
            let cross_len = length(axis_raw);
            if cross_len < PARALLEL_EDGE_SINE {
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
    if loops_cut_short() {
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
    if !pair_in_range(pair) {
        results[index] = GpuSatResult(vec3<f32>(0.0), 0.0, 0.0, AXIS_NONE, 0u, 0u);
        return;
    }
    let body_a = bodies[pair.x];
    let body_b = bodies[pair.y];
    let a = shapes[body_a.shape];
    let b = shapes[body_b.shape];
    if !is_hull(a) || !is_hull(b) {
        results[index] = GpuSatResult(vec3<f32>(0.0), 0.0, 0.0, AXIS_NONE, 0u, 0u);
        return;
    }
    let margin = params.margin;
    let tolerance = AXIS_PREFERENCE_TOLERANCE * (a.radius + b.radius);

    // 2. B in A's frame (b_in_a), A in B's frame (a_in_b).
    let b_in_a = relative_pose(body_a, body_b);
    let q_ba = b_in_a.q;
    let t_ba = b_in_a.t;
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

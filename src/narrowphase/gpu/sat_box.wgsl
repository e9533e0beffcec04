// The box-box SAT's edge query (crate::query::sat_box_box), used by sat.wgsl's step 5 for two
// boxes. Compiled after sat.wgsl (see SAT_WGSL), whose EdgeQuery, edge_pair_axis and
// separation_along it uses; keep in step with the Rust reference.

// Box against box, as crate::query::sat_box_box::query_boxes: the face queries are the hull
// loop (query_faces runs it exhaustively for 6 faces of 8 vertices); this is its step 2, the
// edge query without the Gauss-map loop. With c_j the columns of R (B's axes in A's frame), t
// B's centre in A's frame and half extents h_a, h_b, a box's extent along a unit n is
// sum_k |n_k| h_a,k (A) and sum_k |n . c_k| h_b,k (B). Of the 9 axes e_i x c_j (parallel pairs
// skipped, PARALLEL_EDGE_SINE), each oriented from A toward B, the first of largest
// |n . t| - ext_a(n) - ext_b(n) wins; its edges are the hulls' edges along e_i and c_j that
// support the axis, and its axis and separation are formed from them as the hull loop does
// (edge_pair_separation). `found` is false when every pair is parallel. No early out on the box
// values: they round differently from the hull formula.
fn query_box_edges(a: GpuShape, b: GpuShape, q: vec4<f32>, t: vec3<f32>) -> EdgeQuery {
    let axes_b = quat_to_mat3(q);
    let h_a = a.params.xyz;
    let h_b = b.params.xyz;
    var found = false;
    var best_i = 0u;
    var best_j = 0u;
    var best_separation = -F32_MAX;
    var best_axis = vec3<f32>(0.0);
    for (var i = 0u; i < 3u; i++) {
        for (var j = 0u; j < 3u; j++) {
            var e_i = vec3<f32>(0.0);
            e_i[i] = 1.0;
            let cross_ij = cross(e_i, axes_b[j]);
            let cross_len = length(cross_ij);
            if cross_len < PARALLEL_EDGE_SINE {
                continue;
            }
            var axis = cross_ij / cross_len;
            if dot(axis, t) < 0.0 {
                axis = -axis;
            }
            let separation = dot(axis, t) - dot(abs(axis), h_a) - dot(abs(axis * axes_b), h_b);
            if !found || separation > best_separation {
                found = true;
                best_i = i;
                best_j = j;
                best_separation = separation;
                best_axis = axis;
            }
        }
    }
    let none = EdgeQuery(false, 0u, 0u, -F32_MAX, vec3<f32>(0.0));
    if !found {
        return none;
    }
    let edge_a = supporting_edge(a, best_i, best_axis);
    let edge_b = supporting_edge(b, best_j, -(best_axis * axes_b));
    // edge_pair_separation: the axis and separation as the hull loop forms them.
    let ea = edges[a.first_edge + edge_a];
    let eb = edges[b.first_edge + edge_b];
    let pa = vertices[a.first_vertex + ea.v0].xyz;
    let qa = vertices[a.first_vertex + ea.v1].xyz;
    let pb = quat_rotate(q, vertices[b.first_vertex + eb.v0].xyz) + t;
    let qb = quat_rotate(q, vertices[b.first_vertex + eb.v1].xyz) + t;
    let axis = edge_pair_axis(pa, normalize(qa - pa), pb, qb, a.centroid);
    if axis.w == 0.0 {
        return none;
    }
    return EdgeQuery(true, edge_a, edge_b, separation_along(a, b, q, t, axis.xyz), axis.xyz);
}

// The rotation matrix of the unit quaternion q (columns: the rotated unit axes), with glam's
// Mat3::from_quat formula.
fn quat_to_mat3(q: vec4<f32>) -> mat3x3<f32> {
    let x2 = q.x + q.x;
    let y2 = q.y + q.y;
    let z2 = q.z + q.z;
    let xx = q.x * x2;
    let xy = q.x * y2;
    let xz = q.x * z2;
    let yy = q.y * y2;
    let yz = q.y * z2;
    let zz = q.z * z2;
    let wx = q.w * x2;
    let wy = q.w * y2;
    let wz = q.w * z2;
    return mat3x3<f32>(
        vec3<f32>(1.0 - (yy + zz), xy + wz, xz - wy),
        vec3<f32>(xy - wz, 1.0 - (xx + zz), yz + wx),
        vec3<f32>(xz + wy, yz - wx, 1.0 - (xx + yy)),
    );
}

// Index of the edge of a box's hull (ConvexHull::cuboid's vertex numbering: bit k of a vertex
// index set = positive coordinate k) along local axis `axis` that is furthest along `direction`
// (local frame), as crate::query::sat_box_box::supporting_edge. A box's hull has such an edge
// for every axis and corner; 0 is never reached.
fn supporting_edge(shape: GpuShape, axis: u32, direction: vec3<f32>) -> u32 {
    let along = 1u << axis;
    var corner = 0u;
    for (var k = 0u; k < 3u; k++) {
        if k != axis && direction[k] > 0.0 {
            corner |= 1u << k;
        }
    }
    for (var e = 0u; e < shape.edge_count; e++) {
        let edge = edges[shape.first_edge + e];
        if (edge.v0 ^ edge.v1) == along && (edge.v0 & ~along) == corner {
            return e;
        }
    }
    return 0u;
}

// The box-box SAT (crate::query::sat_box_box::query_boxes), used by sat.wgsl's sat_serial for
// two boxes: box_faces_a, box_faces_b and query_box_edges are its steps 2, 3 and 4 (sat_serial's
// steps 3, 4 and 5), with the same operations in the same order; sat_serial's early outs and
// face preference (its steps 6 and 7) are the Rust steps 5. Compiled after sat.wgsl (see
// SAT_WGSL), whose FaceQuery and EdgeQuery it uses; keep in step with the Rust reference.
//
// With R B's rotation in A's frame (columns c_j: B's axes; rows r_k), t B's centre in A's frame
// and half extents h_a, h_b, a box's extent along n is sum_k |n_k| h_a,k (A) and
// sum_j |n . c_j| h_b,j (B); the separation along n, oriented from A toward B, is |n . t| minus
// both extents. Step 1 (the frame) is quat_to_mat3 of B's quaternion in each function.

// Step 2: the best face of A (lane k: the axis e_k), as BoxFrame::faces_a. `q`, `t`: B's pose
// in A's frame.
fn box_faces_a(a: GpuShape, b: GpuShape, q: vec4<f32>, t: vec3<f32>, margin: f32) -> FaceQuery {
    let r = quat_to_mat3(q);
    let h_b = b.params.xyz;
    let extent_b = abs(r[0]) * h_b.x + abs(r[1]) * h_b.y + abs(r[2]) * h_b.z;
    return box_first_face((abs(t) - a.params.xyz) - extent_b, t, margin);
}

// Step 3: the best face of B (lane j: the axis c_j), as BoxFrame::faces_b (its normal:
// box_face_b_normal). B's face +j looks at
// A when A's centre, -t, is on its side.
fn box_faces_b(a: GpuShape, b: GpuShape, q: vec4<f32>, t: vec3<f32>, margin: f32) -> FaceQuery {
    let rows = transpose(quat_to_mat3(q));
    let h_a = a.params.xyz;
    let along = rows[0] * t.x + rows[1] * t.y + rows[2] * t.z;
    let extent_a = abs(rows[0]) * h_a.x + abs(rows[1]) * h_a.y + abs(rows[2]) * h_a.z;
    return box_first_face((abs(along) - b.params.xyz) - extent_a, -along, margin);
}

// The manifold normal of B's face `face` (A's frame, from A toward B), as
// BoxFrame::face_b_normal: minus its outward normal, c_j for face -j (2j), -c_j for face +j.
fn box_face_b_normal(q: vec4<f32>, face: u32) -> vec3<f32> {
    let c = quat_to_mat3(q)[face / 2u];
    if face % 2u == 1u {
        return -c;
    }
    return c;
}

// The hull face loop's answer over three axes of one box (crate::query::sat_box_box's
// first_face): the first axis separating by more than `margin`, else the first of largest
// separation; its face +axis (2 axis + 1) when `toward` is positive there, else -axis.
fn box_first_face(separations: vec3<f32>, toward: vec3<f32>, margin: f32) -> FaceQuery {
    var k = 3u;
    for (var i = 0u; i < 3u; i++) {
        if separations[i] > margin {
            k = i;
            break;
        }
    }
    if k == 3u {
        let largest = max(max(separations.x, separations.y), separations.z);
        for (var i = 0u; i < 3u; i++) {
            if separations[i] == largest {
                k = i;
                break;
            }
        }
    }
    return FaceQuery(2u * k + select(0u, 1u, toward[k] > 0.0), separations[k]);
}

// Step 4: the edge pair of largest separation over the 9 axes n = e_i x c_j (lane j; parallel
// pairs, |n| < PARALLEL_EDGE_SINE, skipped), the first in (i, j) order, as
// BoxFrame::edge_separations and edge_query: n_i = 0, n_i1 = -R_i2j, n_i2 = R_i1j
// ((i1, i2) = (i + 1, i + 2) mod 3), n . c_k from n and R, each value
// ((|n . t| - ext_a) - ext_b) / |n|; its axis oriented from A toward B, its edges the boxes'
// edges along e_i and c_j that support it. `found` is false when every pair is parallel.
fn query_box_edges(a: GpuShape, b: GpuShape, q: vec4<f32>, t: vec3<f32>) -> EdgeQuery {
    let rows = transpose(quat_to_mat3(q));
    let h_a = a.params.xyz;
    let h_b = b.params.xyz;
    var found = false;
    var best_i = 0u;
    var best_j = 0u;
    var best_separation = -F32_MAX;
    for (var i = 0u; i < 3u; i++) {
        let i1 = (i + 1u) % 3u;
        let i2 = (i + 2u) % 3u;
        let n1 = -rows[i2];
        let n2 = rows[i1];
        let next = n1 * rows[i1].yzx + n2 * rows[i2].yzx;
        let next2 = n1 * rows[i1].zxy + n2 * rows[i2].zxy;
        let len = sqrt(n1 * n1 + n2 * n2);
        let along = n1 * t[i1] + n2 * t[i2];
        let extent_a = abs(n1) * h_a[i1] + abs(n2) * h_a[i2];
        let extent_b = abs(next) * h_b.yzx + abs(next2) * h_b.zxy;
        let separations = ((abs(along) - extent_a) - extent_b) / len;
        for (var j = 0u; j < 3u; j++) {
            if len[j] >= PARALLEL_EDGE_SINE && (!found || separations[j] > best_separation) {
                found = true;
                best_i = i;
                best_j = j;
                best_separation = separations[j];
            }
        }
    }
    if !found {
        return EdgeQuery(false, 0u, 0u, -F32_MAX, vec3<f32>(0.0));
    }
    // The winner's axis, as its lane formed it (BoxFrame::edge_axis).
    let i = best_i;
    let j = best_j;
    let i1 = (i + 1u) % 3u;
    let i2 = (i + 2u) % 3u;
    var n1 = -rows[i2][j];
    var n2 = rows[i1][j];
    let len = sqrt(n1 * n1 + n2 * n2);
    if n1 * t[i1] + n2 * t[i2] < 0.0 {
        n1 = -n1;
        n2 = -n2;
    }
    var axis = vec3<f32>(0.0);
    axis[i1] = n1 / len;
    axis[i2] = n2 / len;
    // B's edge supports -axis: its direction in B's frame has components -(n . c_k).
    let toward_a = -(rows[i1] * n1 + rows[i2] * n2);
    return EdgeQuery(true, supporting_edge(a, i, axis), supporting_edge(b, j, toward_a), best_separation, axis);
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

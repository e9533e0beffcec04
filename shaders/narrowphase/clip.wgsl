// Contact manifolds from SAT results, one body pair per invocation (`main`; after the SAT's one
// workgroup per pair, `main_pair_per_group`: a few invocations per pair), in hull A's frame;
// runs after sat.wgsl on the same chunk. Rust twin: src/contact/hull_hull.rs with
// src/contact/clip.rs and src/query/segment.rs (the references; functions of the same names);
// keep them in step.
//
// 1. Bounds guard; separated pairs MANIFOLD_SEPARATED; non-hull pairs take primitives.wgsl;
//    pairs this kernel cannot finish as the CPU would go to the host (MANIFOLD_HOST). Slot s
//    runs the pair its SAT result names (sat_results[s].pair: s, or the pair the cost ordering
//    put in slot s).
// 2. Apart within the margin: GJK (gjk.wgsl); the closest-point pair when its direction is not
//    the SAT axis (CLOSEST_FEATURE_COSINE); too uncertain in f32: to the host.
// 3. Edge axis: one point midway between the edges' closest points. 4-6. Face axis: clip the
//    most anti-parallel incident face by the reference side planes, keep at most four points.
// 7. Points midway to the reference plane; a clip that keeps none retries on the deepest axis
//    (7a), then takes the deepest vertex (7b). 8. Back in the given order (in_given_order;
//    pairs run in pair_to_run's order), then appended (emit_manifold). Details:
// docs/design/contacts.md. Compiled after quat, layout and geometry.wgsl, before gjk and
// primitives.wgsl (CLIP_WGSL); tests/gpu_layout.rs checks the constants below.

// Mirrors crate::constants::CONTACT_REDUCTION_TOLERANCE (fraction of the pair's scale).
const CONTACT_REDUCTION_TOLERANCE: f32 = 1.0e-3;
// Mirrors crate::constants::CLOSEST_FEATURE_COSINE (cosine of the angle between the GJK
// direction and the SAT axis).
const CLOSEST_FEATURE_COSINE: f32 = 0.9999905;
// Mirrors crate::constants::GPU_GJK_MAX_DIRECTION_ERROR (radians).
const GPU_GJK_MAX_DIRECTION_ERROR: f32 = 5.0e-4;
// Mirrors crate::constants::INCIDENT_FACE_TOLERANCE (difference of normal cosines).
const INCIDENT_FACE_TOLERANCE: f32 = 1.0e-3;
// Mirrors crate::narrowphase::gpu::layout::MAX_GPU_CLIP_VERTICES: the polygon buffer.
const MAX_CLIP_VERTICES: u32 = 32u;
// Mirrors crate::FeatureId::{FACE_A, FACE_B, EDGE_PAIR, OTHER}: the kind field of a feature id.
const FEATURE_FACE_A: u32 = 0u;
const FEATURE_FACE_B: u32 = 1u;
const FEATURE_EDGE_PAIR: u32 = 2u;
// Mirrors crate::FeatureId::OTHER: closest-point and primitive contacts.
const FEATURE_OTHER: u32 = 3u;
// Mirrors crate::FeatureId::{HIGH_MAX, LOW_MAX}: the field masks.
const FEATURE_HIGH_MAX: u32 = 0x3fffu;
const FEATURE_LOW_MAX: u32 = 0x7fffu;
// f32::EPSILON squared: the degenerate-segment threshold of closest_points_segments.
const SEGMENT_TINY: f32 = 1.4210855e-14;
// Mirror crate::narrowphase::gpu::kernel_layout::{CLIP_GROUP_LANES, CLIP_GROUP_PAIRS}: the
// invocations of one pair, and the pairs of one workgroup, under main_pair_per_group.
const CLIP_GROUP_LANES: u32 = 8u;
const CLIP_GROUP_PAIRS: u32 = 8u;
// Polygon edge carriers (clip.rs EdgeCarrier): an incident edge by its start vertex, or a
// reference side (this bit set) by its index in the reference loop.
const SIDE_CARRIER: u32 = 0x80000000u;

// Group 1, binding 2: the SAT kernel's results for this chunk, by slot; binding 4: the manifold
// list.
@group(1) @binding(2) var<storage, read> sat_results: array<GpuSatResult>;
@group(1) @binding(4) var<storage, read_write> manifolds: GpuManifoldList;

// The workgroup's share of the list (emit_manifold): how many of its invocations list a
// manifold (each takes its slot within the workgroup from it), and where in the list the
// workgroup's entries start. Workgroup memory starts zeroed in every workgroup (WGSL requires
// it; pipeline.rs keeps wgpu's zero initialization on).
var<workgroup> group_listed: atomic<u32>;
var<workgroup> group_base: u32;

// 8. Stores chunk pair `index`'s manifold (every store goes through here, so the output's form
// is decided in one place): separated pairs (and invocations past the chunk's end) store
// nothing; the others are appended with `pair` = the pair's index in the whole dispatch.
// Called once by every invocation of the workgroup (`local` = its local_invocation_index), in
// uniform control flow: it holds two barriers.
// a. Each listed invocation takes its slot within the workgroup from a workgroup-memory atomic.
// b. One invocation reserves the workgroup's entries with one atomicAdd on the list's count
//    (one global atomic per workgroup, not per pair; only the entries' order may differ).
// c. Each listed invocation writes its entry at the workgroup's base plus its slot; the slot
//    check only stops a faulty count (the host sizes the list and reports an overflow).
fn emit_manifold(index: u32, local: u32, m: GpuManifold) {
    let listed = m.status != MANIFOLD_SEPARATED;
    // a.
    var slot = 0u;
    if listed {
        slot = atomicAdd(&group_listed, 1u);
    }
    workgroupBarrier();
    // b.
    if local == 0u {
        let total = atomicLoad(&group_listed);
        if total > 0u {
            group_base = atomicAdd(&manifolds.count, total);
        }
    }
    workgroupBarrier();
    // c.
    if listed {
        let at = group_base + slot;
        if at < arrayLength(&manifolds.entries) {
            var out = m;
            out.pair = params.first_pair + index;
            manifolds.entries[at] = out;
        }
    }
}

// The clip polygon, double-buffered: buffer `s` holds poly_len[s] vertices.
var<private> poly_position: array<array<vec3<f32>, MAX_CLIP_VERTICES>, 2>;
var<private> poly_id: array<array<u32, MAX_CLIP_VERTICES>, 2>;
var<private> poly_carrier: array<array<u32, MAX_CLIP_VERTICES>, 2>;
var<private> poly_len: array<u32, 2>;

// A face of a hull placed in A's frame by (q, t), as clip.rs PosedFace.
struct PosedFace {
    hull: GpuShape,
    q: vec4<f32>,
    t: vec3<f32>,
    face: u32,
}

fn feature_id(kind: u32, flag: u32, high: u32, low: u32) -> u32 {
    return ((kind & 3u) << 30u) | (flag << 29u) | ((high & FEATURE_HIGH_MAX) << 15u) | (low & FEATURE_LOW_MAX);
}

// The id of the same feature pair with A and B exchanged, as FeatureId::swapped.
fn swapped_feature_id(id: u32) -> u32 {
    let kind = id >> 30u;
    if kind <= FEATURE_FACE_B {
        return id ^ (1u << 30u);
    }
    return feature_id(kind, (id >> 29u) & 1u, id & FEATURE_LOW_MAX, (id >> 15u) & FEATURE_HIGH_MAX);
}

fn pose_point(q: vec4<f32>, t: vec3<f32>, p: vec3<f32>) -> vec3<f32> {
    return quat_rotate(q, p) + t;
}

fn hull_vertex(hull: GpuShape, v: u32) -> vec3<f32> {
    return vertices[hull.first_vertex + v].xyz;
}

// The index after `k` in a loop of `n` entries (k < n): k + 1, wrapping to 0 (no integer
// division, which GPUs run as a long sequence).
fn next_in_loop(k: u32, n: u32) -> u32 {
    return select(k + 1u, 0u, k + 1u >= n);
}

// First entry (in face_loops) and length of the loop of `face` of `hull`.
fn face_loop(hull: GpuShape, face: u32) -> vec2<u32> {
    let g = hull.first_face + face;
    return vec2<u32>(face_loops[2u * g], face_loops[2u * g + 1u]);
}

fn poly_push(s: u32, position: vec3<f32>, id: u32, carrier: u32) {
    let n = poly_len[s];
    if n < MAX_CLIP_VERTICES {
        poly_position[s][n] = position;
        poly_id[s][n] = id;
        poly_carrier[s][n] = carrier;
        poly_len[s] = n + 1u;
    }
}

// 4. The direction whose least dot product with `hull`'s face normals most_antiparallel_face
// looks for: `normal` (A's frame) in the frame of a hull posed by rotation q.
fn incident_direction(q: vec4<f32>, normal: vec3<f32>) -> vec3<f32> {
    return quat_rotate(quat_conjugate(q), normal);
}

// 4. An incident face found by a pair's group of lanes (main_pair_per_group) before its lane 0
// clips: the face most_antiparallel_face returns for the face axis of `kind` (AXIS_FACE_A or
// AXIS_FACE_B) whose reference face is `reference`, so that the search does not run again.
// Keyed by the axis, which alone sets the search's hull and direction (reference_face), not by
// the direction's bits, which a driver may round differently where it compiles them twice (it
// then takes the face found along the plan's direction: at most a face tie apart).
struct FoundFace {
    kind: u32,
    reference: u32,
    face: u32,
}

// The faces found for this invocation's pair (found_count of them; none under main and
// main_slots).
var<private> found_faces: array<FoundFace, 2>;
var<private> found_count: u32;
// True in main_pair_per_group, whose lanes share the searches: a search lane 0 runs alone is
// counted (manifolds.searched_alone), so that a GPU that loses the shared searches says so.
var<private> searches_shared: bool;

// 4. The dot product the incident-face searches compare: face `f` of the hull whose faces start at
// `first_face` against the direction `local` in its frame. One function for the serial search and
// the group's (main_pair_per_group), so both compile the same arithmetic.
fn face_dot(first_face: u32, f: u32, local: vec3<f32>) -> f32 {
    return dot(planes[first_face + f].xyz, local);
}

// 4. Index of the face of `hull` (posed by rotation q) most anti-parallel to `normal` (A's frame),
// as hull_hull.rs most_antiparallel_face.
fn most_antiparallel_face(hull: GpuShape, q: vec4<f32>, normal: vec3<f32>) -> u32 {
    let local = incident_direction(q, normal);
    var best = F32_MAX;
    for (var f = 0u; f < hull.face_count; f++) {
        best = min(best, face_dot(hull.first_face, f, local));
    }
    for (var f = 0u; f < hull.face_count; f++) {
        if face_dot(hull.first_face, f, local) <= best + INCIDENT_FACE_TOLERANCE {
            return f;
        }
    }
    return 0u;
}

// A reference loop's first entry in face_loops meaning "no entry: the ids are 0, 1, .., length - 1"
// (a mesh triangle's corners, triangle_contact.wgsl).
const CORNER_LOOP: u32 = 0xffffffffu;

// The id of corner `i` of the reference loop `ref_loop` (first entry, length).
fn loop_id(ref_loop: vec2<u32>, i: u32) -> u32 {
    if ref_loop.x == CORNER_LOOP {
        return i;
    }
    return face_loops[ref_loop.x + i];
}

// Id of the point where reference side `side` cuts a polygon edge lying on `carrier`.
fn crossing_id(carrier: u32, side: u32, ref_loop: vec2<u32>, incident_face: u32, kind: u32) -> u32 {
    if (carrier & SIDE_CARRIER) == 0u {
        return feature_id(kind, 1u, loop_id(ref_loop, side), carrier);
    }
    // Two side planes meet at their shared reference vertex.
    let other = carrier & ~SIDE_CARRIER;
    var corner = loop_id(ref_loop, other);
    if next_in_loop(other, ref_loop.y) == side {
        corner = loop_id(ref_loop, side);
    }
    return feature_id(kind ^ 1u, 0u, incident_face, corner);
}

// 5. One Sutherland–Hodgman pass: the part of polygon `src` behind the side plane
// (side_normal, offset) into polygon 1 - src.
fn clip_by_side_plane(src: u32, side_normal: vec3<f32>, offset: f32, side: u32, ref_loop: vec2<u32>, incident_face: u32, kind: u32) {
    let dst = 1u - src;
    poly_len[dst] = 0u;
    let n = poly_len[src];
    for (var k = 0u; k < n; k++) {
        let cur = poly_position[src][k];
        let next = poly_position[src][next_in_loop(k, n)];
        let carrier = poly_carrier[src][k];
        let d_cur = dot(side_normal, cur) - offset;
        let d_next = dot(side_normal, next) - offset;
        let cur_inside = d_cur <= 0.0;
        if cur_inside {
            poly_push(dst, cur, poly_id[src][k], carrier);
        }
        if cur_inside != (d_next <= 0.0) {
            let t = d_cur / (d_cur - d_next);
            let id = crossing_id(carrier, side, ref_loop, incident_face, kind);
            // Leaving: the new edge runs along this side plane; entering: along cur's edge.
            var outgoing = carrier;
            if cur_inside {
                outgoing = side | SIDE_CARRIER;
            }
            poly_push(dst, mix(cur, next, t), id, outgoing);
        }
    }
}

// 5. Clips `incident` by the side planes of `reference`; returns the buffer holding the result.
fn clip_incident_face(reference: PosedFace, incident: PosedFace, kind: u32) -> u32 {
    let inc_loop = face_loop(incident.hull, incident.face);
    poly_len[0] = 0u;
    for (var k = 0u; k < inc_loop.y; k++) {
        let v = face_loops[inc_loop.x + k];
        let position = pose_point(incident.q, incident.t, hull_vertex(incident.hull, v));
        poly_push(0u, position, feature_id(kind, 0u, reference.face, v), v);
    }
    let ref_loop = face_loop(reference.hull, reference.face);
    let normal = quat_rotate(reference.q, planes[reference.hull.first_face + reference.face].xyz);
    var src = 0u;
    for (var side = 0u; side < ref_loop.y; side++) {
        let start = pose_point(reference.q, reference.t, hull_vertex(reference.hull, face_loops[ref_loop.x + side]));
        let end_index = face_loops[ref_loop.x + next_in_loop(side, ref_loop.y)];
        let end = pose_point(reference.q, reference.t, hull_vertex(reference.hull, end_index));
        // Points out of the face polygon across this edge: (edge x normal) for a CCW loop.
        let side_normal = cross(end - start, normal);
        clip_by_side_plane(src, side_normal, dot(side_normal, start), side, ref_loop, incident.face, kind);
        src = 1u - src;
        if poly_len[src] == 0u {
            break;
        }
    }
    return src;
}

// The points a reduction runs over, as reduce_to_four's `candidate`: clip polygon `s`, or (when
// from_hull) the vertices of `hull` posed in A's frame by (q, t), each with id OTHER(0, vertex)
// (a half-space's contacts, primitives.wgsl).
struct Candidates {
    s: u32,
    from_hull: bool,
    hull: GpuShape,
    q: vec4<f32>,
    t: vec3<f32>,
    // Polygon buffer `s` holds merged contact points whose separation is -merged_depth[i]
    // (compound_merge.wgsl), not measured from a plane.
    merged: bool,
}

// The depths of the merged points in polygon buffer 0 (Candidates.merged).
var<private> merged_depth: array<f32, MAX_CLIP_VERTICES>;

fn polygon_candidates(s: u32) -> Candidates {
    var c: Candidates;
    c.s = s;
    c.from_hull = false;
    return c;
}

fn candidate_count(c: Candidates) -> u32 {
    if c.from_hull {
        return c.hull.vertex_count;
    }
    return poly_len[c.s];
}

fn candidate_position(c: Candidates, i: u32) -> vec3<f32> {
    if c.from_hull {
        return pose_point(c.q, c.t, hull_vertex(c.hull, i));
    }
    return poly_position[c.s][i];
}

fn candidate_id(c: Candidates, i: u32) -> u32 {
    if c.from_hull {
        return feature_id(FEATURE_OTHER, 0u, 0u, i);
    }
    return poly_id[c.s][i];
}

fn in_plane(v: vec3<f32>, normal: vec3<f32>) -> vec3<f32> {
    return v - normal * dot(normal, v);
}

// Scores of the reduction steps (reduce_to_four): step 1 distance from the deepest points'
// mean, step 2 distance from the first pick, step 3 triangle area, step 4 area added outside
// the triangle.
struct Reduction {
    c: Candidates,
    normal: vec3<f32>,
    offset: f32,
    margin: f32,
    deepest: f32,
    tolerance: f32,
    mean: vec3<f32>,
    first: u32,
    second: u32,
    triangle: vec3<u32>,
}

// Signed distance of candidate i in front of the plane (normal, offset).
fn candidate_separation(r: Reduction, i: u32) -> f32 {
    if r.c.merged {
        return -merged_depth[i];
    }
    return dot(r.normal, candidate_position(r.c, i)) - r.offset;
}

// Twice the area of triangle (x, y, p) projected on the plane; positive counter-clockwise.
fn signed_area(r: Reduction, x: u32, y: u32, p: u32) -> f32 {
    let px = candidate_position(r.c, x);
    return dot(r.normal, cross(candidate_position(r.c, y) - px, candidate_position(r.c, p) - px));
}

fn is_within(r: Reduction, i: u32) -> bool {
    return candidate_separation(r, i) <= r.margin;
}

fn is_deepest(r: Reduction, i: u32) -> bool {
    return is_within(r, i) && candidate_separation(r, i) <= r.deepest + r.tolerance;
}

fn added_area(r: Reduction, i: u32) -> f32 {
    var added = 0.0;
    for (var e = 0u; e < 3u; e++) {
        added = max(added, -signed_area(r, r.triangle[e], r.triangle[(e + 1u) % 3u], i));
    }
    return added;
}

fn score(r: Reduction, step: u32, i: u32) -> f32 {
    let p = candidate_position(r.c, i);
    switch step {
        case 1u: {
            return length(in_plane(p - r.mean, r.normal));
        }
        case 2u: {
            return length(in_plane(p - candidate_position(r.c, r.first), r.normal));
        }
        case 3u: {
            return abs(signed_area(r, r.first, r.second, i));
        }
        default: {
            return added_area(r, i);
        }
    }
}

// The first candidate (by index) whose step score is within `tolerance` of the best; step 1's
// candidates are the deepest points, the other steps' every point within the margin.
fn pick(r: Reduction, step: u32, tolerance: f32) -> u32 {
    let n = candidate_count(r.c);
    var best = -F32_MAX;
    for (var i = 0u; i < n; i++) {
        if (step == 1u && is_deepest(r, i)) || (step != 1u && is_within(r, i)) {
            best = max(best, score(r, step, i));
        }
    }
    for (var i = 0u; i < n; i++) {
        if ((step == 1u && is_deepest(r, i)) || (step != 1u && is_within(r, i))) && score(r, step, i) >= best - tolerance {
            return i;
        }
    }
    return 0u;
}

// At most four candidates, in candidate order: their indices and count.
struct Kept {
    indices: array<u32, 4>,
    count: u32,
}

// reduce_to_four (src/contact/clip.rs) over the candidates of `r_in` within its margin, the
// separations measured as candidate_separation does; the tolerance is a length.
fn reduce_to_four(r_in: Reduction) -> Kept {
    var r = r_in;
    let c = r.c;
    let normal = r.normal;
    let tolerance = r.tolerance;
    let n = candidate_count(c);
    var kept = array<u32, 4>(0u, 0u, 0u, 0u);
    var kept_count = 0u;
    var within_count = 0u;
    for (var i = 0u; i < n; i++) {
        if is_within(r, i) {
            within_count += 1u;
            r.deepest = min(r.deepest, candidate_separation(r, i));
        }
    }
    if within_count <= 4u {
        for (var i = 0u; i < n; i++) {
            if is_within(r, i) {
                kept[kept_count] = i;
                kept_count += 1u;
            }
        }
    } else {
        // 1. Deepest; of (nearly) equally deep ones, the farthest from their mean.
        var sum = vec3<f32>(0.0);
        var deepest_count = 0.0;
        for (var i = 0u; i < n; i++) {
            if is_deepest(r, i) {
                sum += candidate_position(c, i);
                deepest_count += 1.0;
            }
        }
        r.mean = sum / deepest_count;
        r.first = pick(r, 1u, tolerance);
        // 2. Farthest from it, in the plane.
        r.second = pick(r, 2u, tolerance);
        // 3. Largest triangle with those two; the tolerance is a height.
        let base = length(in_plane(candidate_position(c, r.second) - candidate_position(c, r.first), normal));
        let third = pick(r, 3u, tolerance * base);
        // 4. Most area added outside the counter-clockwise triangle.
        r.triangle = vec3<u32>(r.first, third, r.second);
        if signed_area(r, r.first, r.second, third) >= 0.0 {
            r.triangle = vec3<u32>(r.first, r.second, third);
        }
        let fourth = pick(r, 4u, tolerance * base);
        kept[0] = r.triangle.x;
        kept[1] = r.triangle.y;
        kept[2] = r.triangle.z;
        kept_count = 3u;
        if added_area(r, fourth) > 0.0 {
            kept[3] = fourth;
            kept_count = 4u;
        }
        // Candidate order (ascending indices), as KeptPoints.
        for (var i = 1u; i < kept_count; i++) {
            for (var j = i; j > 0u && kept[j - 1u] > kept[j]; j--) {
                let swap = kept[j];
                kept[j] = kept[j - 1u];
                kept[j - 1u] = swap;
            }
        }
        // Each point once (dedup_sorted): a pick repeats an earlier one when every candidate
        // lies within the tie tolerance of it.
        var unique = 1u;
        for (var k = 1u; k < kept_count; k++) {
            if kept[k] != kept[unique - 1u] {
                kept[unique] = kept[k];
                unique += 1u;
            }
        }
        kept_count = unique;
    }
    return Kept(kept, kept_count);
}

// 6. and 7.: reduces the candidates `c` against the plane (normal, offset) and writes the
// points into `m`, each midway between its candidate and the plane.
fn add_clipped_points(c: Candidates, normal: vec3<f32>, offset: f32, margin: f32, tolerance: f32, m: ptr<function, GpuManifold>) {
    let r = Reduction(c, normal, offset, margin, F32_MAX, tolerance, vec3<f32>(0.0), 0u, 0u, vec3<u32>(0u));
    let kept = reduce_to_four(r);
    for (var k = 0u; k < kept.count; k++) {
        let i = kept.indices[k];
        let separation = candidate_separation(r, i);
        (*m).points[k] = vec4<f32>(candidate_position(c, i) - normal * (0.5 * separation), -separation);
        (*m).ids[k] = candidate_id(c, i);
    }
    (*m).count = kept.count;
}

// Largest component magnitude of v.
fn max_abs(v: vec3<f32>) -> f32 {
    let m = abs(v);
    return max(max(m.x, m.y), m.z);
}

// 3. Closest points between segments p0->p1 and q0->q1: the parameters (s, t) in [0, 1].
fn closest_points_segments(p0: vec3<f32>, p1: vec3<f32>, q0: vec3<f32>, q1: vec3<f32>) -> vec2<f32> {
    // Scale-free, as the CPU: the differences divided by their largest component magnitude.
    let size = max(max(max_abs(p1 - p0), max_abs(q1 - q0)), max_abs(p0 - q0));
    if size == 0.0 {
        return vec2<f32>(0.0, 0.0);
    }
    let d1 = (p1 - p0) / size;
    let d2 = (q1 - q0) / size;
    let r = (p0 - q0) / size;
    let a = dot(d1, d1);
    let e = dot(d2, d2);
    let f = dot(d2, r);
    if a <= SEGMENT_TINY && e <= SEGMENT_TINY {
        return vec2<f32>(0.0, 0.0);
    }
    if a <= SEGMENT_TINY {
        return vec2<f32>(0.0, clamp(f / e, 0.0, 1.0));
    }
    let c = dot(d1, r);
    if e <= SEGMENT_TINY {
        return vec2<f32>(clamp(-c / a, 0.0, 1.0), 0.0);
    }
    let b = dot(d1, d2);
    let denom = a * e - b * b;
    if denom <= 1.0e-6 * a * e {
        // Parallel: the middle of the overlap on p.
        let s0 = clamp(-c / a, 0.0, 1.0);
        let s1 = clamp((b - c) / a, 0.0, 1.0);
        let s_mid = 0.5 * (s0 + s1);
        let t = clamp((b * s_mid + f) / e, 0.0, 1.0);
        return vec2<f32>(clamp((b * t - c) / a, 0.0, 1.0), t);
    }
    var s = clamp((b * f - c * e) / denom, 0.0, 1.0);
    var t = (b * s + f) / e;
    if t < 0.0 {
        s = clamp(-c / a, 0.0, 1.0);
        t = 0.0;
    } else if t > 1.0 {
        s = clamp((b - c) / a, 0.0, 1.0);
        t = 1.0;
    }
    return vec2<f32>(s, t);
}

// 2. One point midway between the closest points `exact` of two separated hulls (A's frame)
// along their unit `direction`, for closest features that are neither a face nor an edge pair.
// Ids: kind OTHER, the support vertex of A along the direction and of B against it.
// Where the closest feature is an edge or a face its vertices tie, and rounding picks one (as on
// the CPU).
fn closest_point_contact(a: GpuShape, b: GpuShape, q: vec4<f32>, exact: ClosestPoints, direction: vec3<f32>) -> GpuManifold {
    let vertex_a = hull_support_index(a, direction);
    let direction_b = quat_rotate(quat_conjugate(q), -direction);
    let vertex_b = hull_support_index(b, direction_b);
    var m = GpuManifold(direction, exact.distance, array<vec4<f32>, 4>(), array<u32, 4>(), 1u, MANIFOLD_CLIPPED, 0u, 0u);
    m.points[0] = vec4<f32>(0.5 * (exact.point_a + exact.point_b), -exact.distance);
    m.ids[0] = feature_id(FEATURE_OTHER, 0u, vertex_a, vertex_b);
    return m;
}

// A SAT axis as contact_on_axis reads it (crate::query::sat::SatResult's axis, normal and
// axis_separation): AXIS_* code, the features of GpuSatResult, the unit normal (A's frame, from
// A toward B) and the separation along it (length units).
struct SatAxis {
    kind: u32,
    feature_a: u32,
    feature_b: u32,
    normal: vec3<f32>,
    axis_separation: f32,
}

// 4. A face axis's reference and incident faces, posed in A's frame, the ids' kind and the
// reference plane in A's frame (normal, offset), as hull_hull.rs face_pair.
struct FacePair {
    reference: PosedFace,
    incident: PosedFace,
    kind: u32,
    normal: vec3<f32>,
    offset: f32,
}

fn face_pair(a: GpuShape, b: GpuShape, b_in_a: RelativePose, axis: SatAxis) -> FacePair {
    var faces = reference_face(a, b, b_in_a, axis);
    faces.incident.face = incident_face(axis.kind, faces);
    return faces;
}

// 4. The incident face of `faces` (reference_face's, on a face axis of `kind`): the one the
// pair's group found (found_faces), else most_antiparallel_face's search.
fn incident_face(kind: u32, faces: FacePair) -> u32 {
    for (var k = 0u; k < found_count; k++) {
        let found = found_faces[k];
        if found.kind == kind && found.reference == faces.reference.face {
            return found.face;
        }
    }
    if searches_shared {
        atomicAdd(&manifolds.searched_alone, 1u);
    }
    return most_antiparallel_face(faces.incident.hull, faces.incident.q, faces.normal);
}

// face_pair before its incident face is found (incident.face 0).
fn reference_face(a: GpuShape, b: GpuShape, b_in_a: RelativePose, axis: SatAxis) -> FacePair {
    let identity = vec4<f32>(0.0, 0.0, 0.0, 1.0);
    var reference = PosedFace(a, identity, vec3<f32>(0.0), axis.feature_a);
    var incident = PosedFace(b, b_in_a.q, b_in_a.t, 0u);
    var kind = FEATURE_FACE_A;
    if axis.kind == AXIS_FACE_B {
        reference = PosedFace(b, b_in_a.q, b_in_a.t, axis.feature_b);
        incident = PosedFace(a, identity, vec3<f32>(0.0), 0u);
        kind = FEATURE_FACE_B;
    }
    let plane = planes[reference.hull.first_face + reference.face];
    let normal = quat_rotate(reference.q, plane.xyz);
    let offset = plane.w + dot(normal, reference.t);
    return FacePair(reference, incident, kind, normal, offset);
}

// Steps 3 to 7 on one axis, as hull_hull.rs contact_on_axis: the edge contact, or the face
// contact clipped and reduced, into `m` (normal: the axis's; count 0 when the clip keeps no
// point; the separation is left as it is). False when the pair goes to the host: reference and
// incident faces of more than MAX_CLIP_VERTICES vertices together.
fn contact_on_axis(a: GpuShape, b: GpuShape, b_in_a: RelativePose, axis: SatAxis, tolerance: f32, m: ptr<function, GpuManifold>) -> bool {
    (*m).normal = axis.normal;
    if axis.kind == AXIS_EDGE_PAIR {
        // 3. Edge axis.
        let ea = edges[a.first_edge + axis.feature_a];
        let eb = edges[b.first_edge + axis.feature_b];
        let a0 = hull_vertex(a, ea.v0);
        let a1 = hull_vertex(a, ea.v1);
        let b0 = pose_point(b_in_a.q, b_in_a.t, hull_vertex(b, eb.v0));
        let b1 = pose_point(b_in_a.q, b_in_a.t, hull_vertex(b, eb.v1));
        let st = closest_points_segments(a0, a1, b0, b1);
        (*m).points[0] = vec4<f32>(0.5 * (mix(a0, a1, st.x) + mix(b0, b1, st.y)), -axis.axis_separation);
        (*m).ids[0] = feature_id(FEATURE_EDGE_PAIR, 0u, axis.feature_a, axis.feature_b);
        (*m).count = 1u;
        return true;
    }
    // 4. Reference and incident faces, posed in A's frame.
    let faces = face_pair(a, b, b_in_a, axis);
    if face_loop(faces.reference.hull, faces.reference.face).y + face_loop(faces.incident.hull, faces.incident.face).y > MAX_CLIP_VERTICES {
        return false;
    }
    // 5. to 7.
    let s = clip_incident_face(faces.reference, faces.incident, faces.kind);
    add_clipped_points(polygon_candidates(s), faces.normal, faces.offset, params.margin, tolerance, m);
    return true;
}

// 7a. The deepest axis of `sat` (deepest_kind and its features), as the CPU's retry takes it
// from query_hulls_preferring_faces_by(…, 0.0): its normal formed as sat.wgsl forms it (a face
// of A: its plane normal; of B: minus its normal turned into A's frame; an edge pair:
// edge_pair_axis of the two edges, B's posed in A's frame), its separation the SAT's
// (the deepest axis realizes the maximum). AXIS_NONE when an edge pair's axis comes out
// parallel here (rounding; the pair goes to the host).
fn deepest_axis(a: GpuShape, b: GpuShape, b_in_a: RelativePose, sat: GpuSatResult) -> SatAxis {
    var axis = SatAxis(sat.deepest_kind, sat.deepest_feature_a, sat.deepest_feature_b, vec3<f32>(0.0), sat.separation);
    if axis.kind == AXIS_FACE_A {
        axis.normal = planes[a.first_face + axis.feature_a].xyz;
    } else if axis.kind == AXIS_FACE_B {
        axis.normal = -quat_rotate(b_in_a.q, planes[b.first_face + axis.feature_b].xyz);
    } else if axis.kind == AXIS_EDGE_PAIR {
        let ea = edges[a.first_edge + axis.feature_a];
        let eb = edges[b.first_edge + axis.feature_b];
        let pa = hull_vertex(a, ea.v0);
        let pb = pose_point(b_in_a.q, b_in_a.t, hull_vertex(b, eb.v0));
        let qb = pose_point(b_in_a.q, b_in_a.t, hull_vertex(b, eb.v1));
        let edge_axis = edge_pair_axis(pa, normalize(hull_vertex(a, ea.v1) - pa), pb, qb, a.centroid);
        axis.normal = edge_axis.xyz;
        if edge_axis.w == 0.0 {
            axis.kind = AXIS_NONE;
        }
    }
    return axis;
}

// 7b. The last resort for a face axis whose clips keep no point, as hull_hull.rs
// deepest_vertex_contact: the incident hull's vertex of least signed distance to the reference
// plane (the first of them), which realizes the axis separation, as the one point of `m`,
// midway between it and its projection on the plane, id (kind, reference face, vertex); the
// normal is the axis's.
fn deepest_vertex_contact(a: GpuShape, b: GpuShape, b_in_a: RelativePose, axis: SatAxis, m: ptr<function, GpuManifold>) {
    let faces = face_pair(a, b, b_in_a, axis);
    let incident = faces.incident;
    var vertex = 0u;
    var position = pose_point(incident.q, incident.t, hull_vertex(incident.hull, 0u));
    var separation = dot(faces.normal, position) - faces.offset;
    for (var v = 1u; v < incident.hull.vertex_count; v++) {
        let p = pose_point(incident.q, incident.t, hull_vertex(incident.hull, v));
        let d = dot(faces.normal, p) - faces.offset;
        if d < separation {
            vertex = v;
            position = p;
            separation = d;
        }
    }
    (*m).normal = axis.normal;
    (*m).points[0] = vec4<f32>(position - faces.normal * (0.5 * separation), -separation);
    (*m).ids[0] = feature_id(faces.kind, 0u, faces.reference.face, vertex);
    (*m).count = 1u;
}

// A pair left to the host: no points; points[0] carries the SAT result for it (x, y, z: the
// kind word, feature_a, feature_b as u32 bits; w: axis_separation), see layout.rs GpuManifold.
fn host_manifold(sat: GpuSatResult) -> GpuManifold {
    var m = GpuManifold(sat.normal, sat.separation, array<vec4<f32>, 4>(), array<u32, 4>(), 0u, MANIFOLD_HOST, 0u, 0u);
    m.points[0] = vec4<f32>(bitcast<f32>(sat.kind), bitcast<f32>(sat.feature_a), bitcast<f32>(sat.feature_b), sat.axis_separation);
    return m;
}

// Step 1's verdict on slot `slot` (chunk pair `index`): where its pair goes.
// Nothing to list: past the chunk's end, or merged by the compound stage (compound_merge.wgsl)
// or the mesh pass (mesh_merge.wgsl), which list them.
const ROUTE_UNLISTED: u32 = 0u;
// A body or shape index out of range: listed as MANIFOLD_INVALID.
const ROUTE_INVALID: u32 = 1u;
// Separated by the SAT (complete) by more than the margin.
const ROUTE_SEPARATED: u32 = 2u;
// A sphere, capsule or half-space: primitives.wgsl.
const ROUTE_PRIMITIVES: u32 = 3u;
// A hull pair with no SAT axis or an incomplete SAT: to the host.
const ROUTE_HOST: u32 = 4u;
// A hull pair this kernel clips (steps 2 to 7).
const ROUTE_HULLS: u32 = 5u;

// The route, the slot's SAT result, and for ROUTE_HULLS the hulls and B's pose in A's frame.
struct PairRoute {
    route: u32,
    sat: GpuSatResult,
    a: GpuShape,
    b: GpuShape,
    b_in_a: RelativePose,
}

// 1. Bounds guard, and the pairs this kernel does not finish.
fn pair_route(slot: u32, index: u32) -> PairRoute {
    var route: PairRoute;
    route.route = ROUTE_UNLISTED;
    if slot >= params.pair_count || index >= params.pair_count {
        return route;
    }
    let pair = pair_to_run(pairs[index]);
    if !pair_in_range(pair) {
        route.route = ROUTE_INVALID;
        return route;
    }
    route.sat = sat_results[slot];
    let kind = route.sat.kind;
    let axis = kind & AXIS_MASK;
    if axis != AXIS_NONE && (kind & INCOMPLETE_BIT) == 0u && (kind & SEPARATED_BIT) != 0u {
        route.route = ROUTE_SEPARATED;
        return route;
    }
    let body_a = bodies[pair.x];
    let body_b = bodies[pair.y];
    route.a = shapes[body_a.shape];
    route.b = shapes[body_b.shape];
    let kind_a = route.a.kind;
    let kind_b = route.b.kind;
    if kind_a == SHAPE_COMPOUND || kind_b == SHAPE_COMPOUND || kind_a == SHAPE_TRIMESH || kind_b == SHAPE_TRIMESH {
        return route;
    }
    if !is_hull(route.a) || !is_hull(route.b) {
        route.route = ROUTE_PRIMITIVES;
    } else if axis == AXIS_NONE || (kind & INCOMPLETE_BIT) != 0u {
        route.route = ROUTE_HOST;
    } else {
        route.route = ROUTE_HULLS;
        route.b_in_a = relative_pose(body_a, body_b);
    }
    return route;
}

// The SAT's chosen axis (face-preferred) of a result.
fn chosen_axis(sat: GpuSatResult) -> SatAxis {
    return SatAxis(sat.kind & AXIS_MASK, sat.feature_a, sat.feature_b, sat.normal, sat.axis_separation);
}

// Steps 1 to 8 for chunk pair `index` given its step 1 (`route`, pair_route of its slot): the
// manifold emit_manifold stores (status MANIFOLD_SEPARATED: nothing, as for an invocation past
// the chunk's end), in the pair's given order.
fn clip_pair(route: PairRoute, index: u32) -> GpuManifold {
    // 1.
    var unlisted = GpuManifold(vec3<f32>(0.0), 0.0, array<vec4<f32>, 4>(), array<u32, 4>(), 0u, MANIFOLD_SEPARATED, 0u, 0u);
    if route.route == ROUTE_UNLISTED {
        return unlisted;
    }
    if route.route == ROUTE_INVALID {
        unlisted.status = MANIFOLD_INVALID;
        return unlisted;
    }
    let sat = route.sat;
    if route.route == ROUTE_SEPARATED {
        return GpuManifold(sat.normal, sat.separation, array<vec4<f32>, 4>(), array<u32, 4>(), 0u, MANIFOLD_SEPARATED, 0u, 0u);
    }
    if route.route == ROUTE_PRIMITIVES {
        // In the given order already (primitives.wgsl step 3).
        return collide_primitives(index, sat);
    }
    if route.route == ROUTE_HOST {
        return host_manifold(sat);
    }
    // 2. to 8.
    return in_given_order(index, clip_hulls(route));
}

// 8. A hull pair given with its higher body index first ran the other way round under
// params.canonical (pair_to_run, as every backend; primitives.wgsl's step 3 moves the other
// pairs itself): its clipped manifold in the given order, as
// Manifold::swapped (normal negated, ids swapped), the normal and points moved from the lower
// body's frame into the given A's (relative_pose, the split translations). Other statuses as
// they are (a MANIFOLD_HOST entry's SAT result is the canonical pair's).
fn in_given_order(index: u32, m: GpuManifold) -> GpuManifold {
    if m.status != MANIFOLD_CLIPPED {
        return m;
    }
    let given = pairs[index];
    if !runs_reversed(given) {
        return m;
    }
    return swapped_into(m, relative_pose(bodies[given.x], bodies[given.y]));
}

// Clipped manifold `m` of a pair run the other way round (in the lower body's frame, normal from
// it), in the given order: normal negated and ids swapped as Manifold::swapped, normal and
// points moved into the given A's frame by `lower_in_a` (the lower body's pose there).
fn swapped_into(m: GpuManifold, lower_in_a: RelativePose) -> GpuManifold {
    var out = m;
    out.normal = quat_rotate(lower_in_a.q, -m.normal);
    for (var k = 0u; k < m.count; k++) {
        out.points[k] = vec4<f32>(pose_point(lower_in_a.q, lower_in_a.t, m.points[k].xyz), m.points[k].w);
        out.ids[k] = swapped_feature_id(m.ids[k]);
    }
    return out;
}

// Steps 2 to 7 for a hull pair (ROUTE_HULLS) in the order it runs in (pair_to_run): the
// manifold in the frame of that order's A.
fn clip_hulls(route: PairRoute) -> GpuManifold {
    let sat = route.sat;
    var m = GpuManifold(sat.normal, sat.separation, array<vec4<f32>, 4>(), array<u32, 4>(), 0u, MANIFOLD_HOST, 0u, 0u);
    let host = host_manifold(sat);
    let a = route.a;
    let b = route.b;
    let b_in_a = route.b_in_a;
    let identity = vec4<f32>(0.0, 0.0, 0.0, 1.0);

    if sat.separation > 0.0 {
        // 2. Apart within the margin: GJK measures the distance.
        let exact = gjk_closest_points(gjk_hull(a, identity, vec3<f32>(0.0)), gjk_hull(b, b_in_a.q, b_in_a.t));
        if exact.found && loops_cut_short() {
            return host;
        }
        if exact.found {
            if exact.distance > params.margin {
                m.status = MANIFOLD_SEPARATED;
                return m;
            }
            let direction = exact.direction;
            let uncertainty = exact.uncertainty;
            let alignment = dot(direction, sat.normal);
            // How far the two sides' cosines may differ: the GPU's direction turned by up to
            // `uncertainty`, and the CPU's (unit, from witness points of f32 input) by up to
            // epsilon × their size ÷ the distance (twice).
            let cpu_rounding = 2.0 * GJK_EPSILON * (length(exact.point_a) + length(exact.point_b)) / exact.distance;
            let sine = length(cross(direction, sat.normal));
            if abs(alignment - CLOSEST_FEATURE_COSINE) <= cpu_rounding + sine * uncertainty + uncertainty * uncertainty {
                return host;
            }
            if alignment < CLOSEST_FEATURE_COSINE {
                var contact = closest_point_contact(a, b, b_in_a.q, exact, direction);
                if uncertainty > GPU_GJK_MAX_DIRECTION_ERROR {
                    contact = host;
                }
                return contact;
            }
        }
    }

    // 3. to 7. on the SAT's axis.
    let chosen = chosen_axis(sat);
    let tolerance = CONTACT_REDUCTION_TOLERANCE * (a.radius + b.radius);
    if !contact_on_axis(a, b, b_in_a, chosen, tolerance, &m) {
        return host;
    }
    if m.count == 0u && sat.axis_separation < sat.separation {
        // 7a. The retry on the deepest axis.
        let deepest = deepest_axis(a, b, b_in_a, sat);
        if deepest.kind == AXIS_NONE || !contact_on_axis(a, b, b_in_a, deepest, tolerance, &m) {
            return host;
        }
    }
    if m.count == 0u {
        // 7b. The deepest vertex on the SAT's axis.
        deepest_vertex_contact(a, b, b_in_a, chosen, &m);
    }
    // An edge axis runs no loop here; a face axis's loops may have been cut.
    if chosen.kind != AXIS_EDGE_PAIR && loops_cut_short() {
        return host;
    }
    m.status = MANIFOLD_CLIPPED;
    return m;
}

// Every invocation, those past the chunk's end too, reaches emit_manifold: its barriers need
// the whole workgroup.
@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(local_invocation_index) local: u32) {
    let slot = id.x;
    var index = slot;
    if slot < params.pair_count {
        index = sat_results[slot].pair - params.first_pair;
    }
    emit_manifold(index, local, clip_pair(pair_route(slot, index), index));
}

// 4. One incident-face search, for the face axis of `kind` whose reference face is `reference`:
// the faces of the hull whose faces start at `first_face`, and the direction in its frame
// (incident_direction) whose least dot product it looks for.
struct IncidentSearch {
    kind: u32,
    reference: u32,
    first_face: u32,
    face_count: u32,
    local: vec3<f32>,
}

// The searches clip_pair runs at step 4 (count of them, at most 2).
struct IncidentSearches {
    count: u32,
    items: array<IncidentSearch, 2>,
}

// The incident-face searches clip_pair runs for a hull pair: on the SAT's axis when it is a
// face's (4, and 7b's fallback), and on the deepest axis when the retry (7a) may take it. A pair
// that ends before them (GJK's closest points, 2) or whose clip keeps points searched for
// nothing; a search clip_pair needs and the plan missed runs serially (incident_face).
fn planned_searches(route: PairRoute) -> IncidentSearches {
    var searches: IncidentSearches;
    if route.route != ROUTE_HULLS {
        return searches;
    }
    let sat = route.sat;
    var axes = array<SatAxis, 2>(chosen_axis(sat), chosen_axis(sat));
    var planned = 1u;
    if sat.axis_separation < sat.separation {
        axes[1] = deepest_axis(route.a, route.b, route.b_in_a, sat);
        planned = 2u;
    }
    for (var k = 0u; k < planned; k++) {
        if axes[k].kind == AXIS_FACE_A || axes[k].kind == AXIS_FACE_B {
            let faces = reference_face(route.a, route.b, route.b_in_a, axes[k]);
            let hull = faces.incident.hull;
            let local = incident_direction(faces.incident.q, faces.normal);
            searches.items[searches.count] = IncidentSearch(axes[k].kind, faces.reference.face, hull.first_face, hull.face_count, local);
            searches.count += 1u;
        }
    }
    return searches;
}

// main_pair_per_group's searches, per pair of the workgroup (its member index) and search: the
// least dot product as the complement of its order key, the first face within the tolerance as
// its complement, and whether a lane's loops were cut short. Zeroed at the workgroup's start.
var<workgroup> search_least: array<array<atomic<u32>, 2>, CLIP_GROUP_PAIRS>;
var<workgroup> search_face: array<array<atomic<u32>, 2>, CLIP_GROUP_PAIRS>;
var<workgroup> search_cut: array<atomic<u32>, CLIP_GROUP_PAIRS>;

// An f32 (not NaN) as a u32 of the same order: negative values' bits flipped, the others' sign
// bit set.
fn order_key(x: f32) -> u32 {
    let bits = bitcast<u32>(x);
    return select(bits | 0x80000000u, ~bits, (bits & 0x80000000u) != 0u);
}

// The f32 of an order_key.
fn key_value(key: u32) -> f32 {
    return bitcast<f32>(select(~key, key & 0x7fffffffu, (key & 0x80000000u) != 0u));
}

// The clip with one pair per CLIP_GROUP_LANES invocations, CLIP_GROUP_PAIRS pairs a workgroup,
// for rounds whose SAT ran one workgroup per pair (SatMapping::PerWorkgroup: few pairs, big
// hulls): a pair's lanes share out step 4's incident-face searches, then its lane 0 runs
// clip_pair, which takes the faces found (found_faces). Same bits as main (tests/gpu_clip.rs).
// a. Every lane routes its pair and plans its searches (pair_route, planned_searches: the same
//    loads and arithmetic in each); lane 0 clips with that route.
// b. Each lane takes faces lane, lane + CLIP_GROUP_LANES, ..: their least dot product, into
//    the pair's slot as an order key (atomicMax of its complement, from zeroed memory).
// c. Each lane's first face within INCIDENT_FACE_TOLERANCE of the least; the lowest of them
//    (atomicMax of the complement) is most_antiparallel_face's first. A lane whose loops were
//    cut short (a software driver's cap) flags the pair: its lane 0 then searches alone.
// d. Lane 0 takes the found faces and clips; every invocation reaches emit_manifold.
@compute @workgroup_size(WORKGROUP_SIZE)
fn main_pair_per_group(@builtin(workgroup_id) group: vec3<u32>, @builtin(local_invocation_index) local: u32) {
    let member = local / CLIP_GROUP_LANES;
    let lane = local % CLIP_GROUP_LANES;
    let slot = group.x * CLIP_GROUP_PAIRS + member;
    var index = slot;
    if slot < params.pair_count {
        index = sat_results[slot].pair - params.first_pair;
    }
    // a.
    let route = pair_route(slot, index);
    let searches = planned_searches(route);
    // b.
    for (var k = 0u; k < searches.count; k++) {
        let search = searches.items[k];
        var least = F32_MAX;
        for (var f = lane; f < search.face_count; f += CLIP_GROUP_LANES) {
            least = min(least, face_dot(search.first_face, f, search.local));
        }
        if lane < search.face_count {
            atomicMax(&search_least[member][k], ~order_key(least));
        }
    }
    workgroupBarrier();
    // c.
    for (var k = 0u; k < searches.count; k++) {
        let search = searches.items[k];
        let within = key_value(~atomicLoad(&search_least[member][k])) + INCIDENT_FACE_TOLERANCE;
        for (var f = lane; f < search.face_count; f += CLIP_GROUP_LANES) {
            if face_dot(search.first_face, f, search.local) <= within {
                atomicMax(&search_face[member][k], ~f);
                break;
            }
        }
    }
    // Every lane checks: one whose planning loops were cut searched nothing.
    if loops_cut_short() {
        atomicOr(&search_cut[member], 1u);
    }
    workgroupBarrier();
    // d.
    var m = GpuManifold(vec3<f32>(0.0), 0.0, array<vec4<f32>, 4>(), array<u32, 4>(), 0u, MANIFOLD_SEPARATED, 0u, 0u);
    if lane == 0u {
        if atomicLoad(&search_cut[member]) == 0u {
            for (var k = 0u; k < searches.count; k++) {
                let search = searches.items[k];
                // No face stored (none within the tolerance, only with NaN): face 0, as there.
                let face = ~atomicLoad(&search_face[member][k]);
                found_faces[k] = FoundFace(search.kind, search.reference, select(face, 0u, face == ~0u));
            }
            found_count = searches.count;
        }
        searches_shared = true;
        m = clip_pair(route, index);
    }
    emit_manifold(index, local, m);
}

// The compound stage's clip pass (src/narrowphase/gpu/compound.rs): sub-pair `index`'s manifold
// in its own slot of the sub-manifold buffer (bound as the list; its head unused), separated
// ones too, moved from body A's frame by A's pose as Manifold::to_world does: a sub-pair's
// bodies are posed in the compound pair's A frame, so the result is in that frame.
@compute @workgroup_size(WORKGROUP_SIZE)
fn main_slots(@builtin(global_invocation_id) id: vec3<u32>) {
    let index = id.x;
    if index >= params.pair_count || index >= arrayLength(&manifolds.entries) {
        return;
    }
    var m = clip_pair(pair_route(index, index), index);
    if m.status == MANIFOLD_CLIPPED {
        let body_a = bodies[pairs[index].x];
        let t = body_a.translation_hi + body_a.translation_lo;
        m.normal = quat_rotate(body_a.rotation, m.normal);
        for (var k = 0u; k < m.count; k++) {
            m.points[k] = vec4<f32>(pose_point(body_a.rotation, t, m.points[k].xyz), m.points[k].w);
        }
    }
    m.pair = params.first_pair + index;
    manifolds.entries[index] = m;
}

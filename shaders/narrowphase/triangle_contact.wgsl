// The per-triangle step of the GPU mesh pass: one mesh triangle (body A, the mesh's frame)
// against a convex body B posed in A's frame, the triangle's data passed as arguments
// (MeshTriangle), so the functions serve whichever mesh layout the pass binds. Rust twins, kept
// in step (same steps, names, feature ids and margin rule): src/query/sat_triangle.rs
// (query_triangle_hull), src/contact/triangle_hull.rs (collide_triangle_hull),
// src/contact/triangle_sphere.rs, src/contact/triangle_capsule.rs, and src/trimesh/mod.rs
// (TriMesh::allows_normal_by, Triangle::feature_along, feature_at, contains_projection).
//
// 1. triangle_allows_normal: the active-edge rule (Jolt's active edges) from the triangle's
//    active bits and its neighbours' normals.
// 2. query_triangle_hull: the one-sided triangle SAT; collide_triangle_hull clips on its axis.
// 3. collide_triangle_sphere, collide_triangle_capsule: closest points in closed form (the CPU
//    runs GJK on the same triangle: the same points where they are unique; a capsule core
//    within GJK's overlap tolerance of the triangle, 1e-5 of its size, is touching there and
//    apart here, a tie within the contract's tolerance).
// 4. collide_triangle_shape: by B's kind. The result (TriangleContact) is the triangle's
//    sub-contact before the mesh merge: its normal (from the mesh toward B), separation, and
//    every point the CPU keeps, in triangle_points / triangle_ids (at most MAX_CLIP_VERTICES: a
//    face clip of a triangle and a face of up to MAX_CLIP_VERTICES - 3 vertices; larger faces
//    give TRIANGLE_HOST, as the clip kernel's pairs beyond its buffer).
//
// Compiled after CLIP_WGSL's files (quat, body, layout, geometry, clip, gjk, primitives.wgsl):
// feature_id, the clip polygon, clip_by_side_plane, most_antiparallel_face and
// closest_points_segments (clip.wgsl), closest_on_triangle (gjk.wgsl), capsule_end
// (primitives.wgsl). tests/gpu_layout.rs checks the constants below against the Rust ones.

// Mirrors the cosine of crate::constants::TRIMESH_FACE_NORMAL_DEGREES in f32, as
// TriMesh::allows_normal_by forms it: a normal this close to the face's is always allowed.
const TRIMESH_FACE_NORMAL_COSINE: f32 = 0.99999964;
// Mirrors crate::constants::TRIMESH_APART_TOLERANCE (fraction of B's size): a smaller gap
// raises no point (collide_triangle_hull step 5).
const TRIMESH_APART_TOLERANCE: f32 = 1.0e-5;
// Mirrors crate::internals::FEATURE_WEIGHT_TOLERANCE (dimensionless barycentric weight).
const FEATURE_WEIGHT_TOLERANCE: f32 = 1.0e-5;
// TriangleFeature (src/trimesh/mod.rs): x of a vec2<u32> feature; y is the edge or corner k.
const TRIANGLE_FACE: u32 = 0u;
const TRIANGLE_EDGE: u32 = 1u;
const TRIANGLE_VERTEX: u32 = 2u;
// TriangleContact.status: no contact (apart beyond the margin, behind the face, or refused
// beside the triangle), a contact, or a face too large for the clip buffer (left to the host).
const TRIANGLE_NONE: u32 = 0u;
const TRIANGLE_CONTACT: u32 = 1u;
const TRIANGLE_HOST: u32 = 2u;

// One mesh triangle in the mesh's frame (A's), as the active-edge rule needs it: corners
// counter-clockwise seen from the front (edge k runs from corner k to k + 1 mod 3), unit front
// normal, bit k of `active_edges` when edge k is active (TriMesh::active_edges), bit k of `linked`
// when edge k has a neighbour (TriMesh::neighbours), whose unit normal is neighbour_normals[k].
struct MeshTriangle {
    corners: array<vec3<f32>, 3>,
    normal: vec3<f32>,
    active_edges: u32,
    linked: u32,
    neighbour_normals: array<vec3<f32>, 3>,
}

// Each edge's unit direction and unit outward side normal in the plane (Triangle::sides).
struct TriangleSides {
    e: array<vec3<f32>, 3>,
    side: array<vec3<f32>, 3>,
}

// A triangle's sub-contact, A's frame: status TRIANGLE_*, unit normal from the mesh toward B,
// separation (length units, negative = overlapping), and `count` points in triangle_points
// (xyz position, w depth) and triangle_ids (the CPU routine's per-triangle ids).
struct TriangleContact {
    status: u32,
    normal: vec3<f32>,
    separation: f32,
    count: u32,
}

var<private> triangle_points: array<vec4<f32>, MAX_CLIP_VERTICES>;
var<private> triangle_ids: array<u32, MAX_CLIP_VERTICES>;

fn no_triangle_contact(status: u32) -> TriangleContact {
    return TriangleContact(status, vec3<f32>(0.0), 0.0, 0u);
}

fn triangle_sides(t: MeshTriangle) -> TriangleSides {
    let v = t.corners;
    var s: TriangleSides;
    for (var k = 0u; k < 3u; k++) {
        let e = normalize(v[(k + 1u) % 3u] - v[k]);
        s.e[k] = e;
        s.side[k] = cross(e, t.normal);
    }
    return s;
}

// The feature from the corners within tolerance of an extreme, bit k = corner k
// (TriangleFeature::from_corner_mask).
fn feature_from_corner_mask(mask: u32) -> vec2<u32> {
    switch mask {
        case 1u: { return vec2<u32>(TRIANGLE_VERTEX, 0u); }
        case 2u: { return vec2<u32>(TRIANGLE_VERTEX, 1u); }
        case 4u: { return vec2<u32>(TRIANGLE_VERTEX, 2u); }
        case 3u: { return vec2<u32>(TRIANGLE_EDGE, 0u); }
        case 6u: { return vec2<u32>(TRIANGLE_EDGE, 1u); }
        case 5u: { return vec2<u32>(TRIANGLE_EDGE, 2u); }
        default: { return vec2<u32>(TRIANGLE_FACE, 0u); }
    }
}

// Triangle::feature_along: the corners within `tolerance` of the furthest along `direction`.
fn triangle_feature_along(t: MeshTriangle, direction: vec3<f32>, tolerance: f32) -> vec2<u32> {
    let v = t.corners;
    let d = vec3<f32>(dot(v[0], direction), dot(v[1], direction), dot(v[2], direction));
    let top = max(max(d.x, d.y), d.z);
    var mask = 0u;
    for (var k = 0u; k < 3u; k++) {
        if d[k] >= top - tolerance {
            mask |= 1u << k;
        }
    }
    return feature_from_corner_mask(mask);
}

// Triangle::feature_at: the corners whose barycentric weights at q exceed `tolerance`.
fn triangle_feature_at(t: MeshTriangle, q: vec3<f32>, tolerance: f32) -> vec2<u32> {
    let v = t.corners;
    let area = dot(cross(v[1] - v[0], v[2] - v[0]), t.normal);
    var mask = 0u;
    for (var k = 0u; k < 3u; k++) {
        // Weight of corner k: the sub-triangle opposite it over the whole.
        let p = v[(k + 1u) % 3u];
        let r = v[(k + 2u) % 3u];
        if dot(cross(r - p, q - p), t.normal) / area > tolerance {
            mask |= 1u << k;
        }
    }
    return feature_from_corner_mask(mask);
}

// Triangle::contains_projection: q projects into the triangle or onto its boundary.
fn triangle_contains_projection(t: MeshTriangle, sides: TriangleSides, q: vec3<f32>) -> bool {
    let v = t.corners;
    for (var k = 0u; k < 3u; k++) {
        if dot(sides.side[k], q - v[k]) > 0.0 {
            return false;
        }
    }
    return true;
}

// TriMesh::edge_allows for edge k: active, and the normal between the two faces' normals about
// the edge direction (a neighbour) or on the edge's outer side (a boundary).
fn triangle_edge_allows(t: MeshTriangle, sides: TriangleSides, k: u32, normal: vec3<f32>) -> bool {
    if (t.active_edges & (1u << k)) == 0u {
        return false;
    }
    if (t.linked & (1u << k)) == 0u {
        return dot(sides.side[k], normal) >= 0.0;
    }
    let e = sides.e[k];
    return dot(cross(t.normal, normal), e) >= 0.0 && dot(cross(normal, t.neighbour_normals[k]), e) >= 0.0;
}

// 1. TriMesh::allows_normal_by: whether a contact on `feature` may take the unit `normal` (A's
// frame, from the mesh toward B).
fn triangle_allows_normal(t: MeshTriangle, sides: TriangleSides, feature: vec2<u32>, normal: vec3<f32>) -> bool {
    let along = dot(t.normal, normal);
    if along >= TRIMESH_FACE_NORMAL_COSINE {
        return true;
    }
    if along < 0.0 {
        return false;
    }
    switch feature.x {
        case TRIANGLE_EDGE: {
            return triangle_edge_allows(t, sides, feature.y, normal);
        }
        case TRIANGLE_VERTEX: {
            return triangle_edge_allows(t, sides, feature.y, normal) || triangle_edge_allows(t, sides, (feature.y + 2u) % 3u, normal);
        }
        default: {
            return false;
        }
    }
}

// The chosen axis of query_triangle_hull (TriangleAxis), A's frame: kind AXIS_FACE_A (the
// triangle's face), AXIS_FACE_B (hull face feature_b), AXIS_EDGE_PAIR (triangle edge feature_a,
// hull edge feature_b), AXIS_NONE (apart beyond the margin, or B wholly behind the plane); unit
// normal from the triangle toward B, its separation, and the largest separation over every
// axis tested (a lower bound on the distance when positive).
struct TriangleAxis {
    kind: u32,
    feature_a: u32,
    feature_b: u32,
    normal: vec3<f32>,
    separation: f32,
    max_separation: f32,
}

// sat_triangle.rs edges_meet: the closest points of segments a0 a1 and b0 b1 are `gap` apart
// (the edge axis times the separation) within `tolerance`: the lines' own, not clamped to an end.
fn edges_meet(a0: vec3<f32>, a1: vec3<f32>, b0: vec3<f32>, b1: vec3<f32>, gap: vec3<f32>, tolerance: f32) -> bool {
    let st = closest_points_segments(a0, a1, b0, b1);
    return length(b0 + (b1 - b0) * st.y - (a0 + (a1 - a0) * st.x) - gap) <= tolerance;
}

// 2. The one-sided SAT of triangle t against `hull` posed in A's frame by (q, tr); faces
// preferred by `tolerance` (length units), which also finds the features for the active-edge
// rule. Steps as sat_triangle.rs: 1. the triangle's face, 2. B's faces, 3. edge pairs whose
// Gauss arcs cross, chosen only where the edges meet across the axis (edges_meet), 4. only
// allowed axes in front of the face chosen.
fn query_triangle_hull(t: MeshTriangle, sides: TriangleSides, hull: GpuShape, q: vec4<f32>, tr: vec3<f32>, margin: f32, tolerance: f32) -> TriangleAxis {
    var none: TriangleAxis;
    none.kind = AXIS_NONE;
    let n = t.normal;
    let v = t.corners;
    // 1. The triangle's face, and B wholly behind it.
    let n_in_b = quat_rotate(quat_conjugate(q), n);
    let plane = dot(n, v[0]);
    var lowest = F32_MAX;
    var highest = -F32_MAX;
    for (var i = 0u; i < hull.vertex_count; i++) {
        let d = dot(hull_vertex(hull, i), n_in_b);
        lowest = min(lowest, d);
        highest = max(highest, d);
    }
    let face_separation = lowest + dot(n, tr) - plane;
    if face_separation > margin || highest + dot(n, tr) < plane {
        return none;
    }
    var best = TriangleAxis(AXIS_FACE_A, 0u, 0u, n, face_separation, face_separation);
    var max_separation = face_separation;
    // 2. B's faces: normal -m from the triangle toward B. Only an axis beyond `beat` can
    // replace the best: the active-edge rule is asked of those alone.
    let beat = best.separation + tolerance;
    var best_b = none;
    for (var f = 0u; f < hull.face_count; f++) {
        let plane_b = planes[hull.first_face + f];
        let m = quat_rotate(q, plane_b.xyz);
        let offset = plane_b.w + dot(m, tr);
        let separation = min(min(dot(m, v[0]), dot(m, v[1])), dot(m, v[2])) - offset;
        if separation > margin {
            return none;
        }
        max_separation = max(max_separation, separation);
        if separation > beat && (best_b.kind == AXIS_NONE || separation > best_b.separation) && dot(n, m) <= 0.0
            && triangle_allows_normal(t, sides, triangle_feature_along(t, -m, tolerance), -m) {
            best_b = TriangleAxis(AXIS_FACE_B, 0u, f, -m, separation, 0.0);
        }
    }
    if best_b.kind != AXIS_NONE && best_b.separation > best.separation + tolerance {
        best = best_b;
    }
    // 3. Edge pairs whose arcs cross (B's arc negated).
    let beat_edge = best.separation + tolerance;
    var best_edge = none;
    for (var j = 0u; j < hull.edge_count; j++) {
        let edge = edges[hull.first_edge + j];
        let c = -quat_rotate(q, planes[hull.first_face + edge_faces(edge).x].xyz);
        let d = -quat_rotate(q, planes[hull.first_face + edge_faces(edge).y].xyz);
        for (var k = 0u; k < 3u; k++) {
            // The arc c -> d crosses the great circle normal to e at x, on the side's half.
            let e = sides.e[k];
            let ce = dot(e, c);
            let de = dot(e, d);
            let x = c * abs(de) + d * abs(ce);
            if !(ce * de < 0.0 && dot(sides.side[k], x) > 0.0) {
                continue;
            }
            let p0 = hull_vertex(hull, edge.v0);
            let start = pose_point(q, tr, p0);
            let direction = quat_rotate(q, normalize(hull_vertex(hull, edge.v1) - p0));
            let axis_cross = cross(e, direction);
            let axis_length = length(axis_cross);
            if axis_length < PARALLEL_EDGE_SINE {
                continue;
            }
            var axis = axis_cross / axis_length;
            if dot(axis_cross, x) < 0.0 {
                axis = -axis_cross / axis_length;
            }
            let separation = dot(axis, start - v[k]);
            if separation > margin {
                return none;
            }
            max_separation = max(max_separation, separation);
            if separation > beat_edge && (best_edge.kind == AXIS_NONE || separation > best_edge.separation) && dot(x, n) >= 0.0
                && triangle_allows_normal(t, sides, vec2<u32>(TRIANGLE_EDGE, k), axis)
                && edges_meet(v[k], v[(k + 1u) % 3u], start, pose_point(q, tr, hull_vertex(hull, edge.v1)), axis * separation, tolerance) {
                best_edge = TriangleAxis(AXIS_EDGE_PAIR, k, j, axis, separation, 0.0);
            }
        }
    }
    if best_edge.kind != AXIS_NONE && best_edge.separation > best.separation + tolerance {
        best = best_edge;
    }
    best.max_separation = max_separation;
    return best;
}

// triangle_hull.rs add_points: the vertices of clip polygon `s` within `margin` of the plane
// (normal, offset), midway to it, each separation raised to `floor`, into triangle_points from
// `first`; returns the new count.
fn add_triangle_points(s: u32, normal: vec3<f32>, offset: f32, margin: f32, floor: f32, first: u32) -> u32 {
    var count = first;
    for (var i = 0u; i < poly_len[s]; i++) {
        let p = poly_position[s][i];
        let height = dot(normal, p) - offset;
        let separation = max(height, floor);
        if separation > margin {
            continue;
        }
        triangle_points[count] = vec4<f32>(p - normal * (0.5 * height), -separation);
        triangle_ids[count] = poly_id[s][i];
        count += 1u;
    }
    return count;
}

// clip.rs clip_by_reference_sides: clips polygon 0 by the side planes of a reference face, its
// corners (A's frame) in `corners`, counter-clockwise about the unit `normal`, named by
// `ref_loop` (clip.wgsl loop_id); returns the clip buffer holding the result.
fn clip_by_reference_sides(corners: ptr<function, array<vec3<f32>, MAX_CLIP_VERTICES>>, ref_loop: vec2<u32>, normal: vec3<f32>, incident_face: u32, kind: u32) -> u32 {
    var src = 0u;
    for (var side = 0u; side < ref_loop.y; side++) {
        let start = (*corners)[side];
        let end = (*corners)[next_in_loop(side, ref_loop.y)];
        // Points out of the face polygon across this edge: (edge x normal) for a CCW loop.
        let side_normal = cross(end - start, normal);
        clip_by_side_plane(src, side_normal, dot(side_normal, start), side, ref_loop, incident_face, kind);
        src = 1u - src;
        if poly_len[src] == 0u {
            break;
        }
    }
    return src;
}

// 2. collide_triangle_hull: the sub-contact of triangle t and `hull` posed in A's frame by
// (q, tr). Face axes: the other side's face clipped by the reference's sides, every point within
// the margin (the merge reduces them), the separation of the deepest; edge axis: one point
// midway between the edges' closest points. Apart (some axis separates): no separation below
// that axis's. Ids: FACE_A with the triangle as reference (its face 0, corners 0..=2), FACE_B
// with the hull's face, EDGE_PAIR (triangle edge, hull edge).
fn collide_triangle_hull(t: MeshTriangle, hull: GpuShape, q: vec4<f32>, tr: vec3<f32>, margin: f32, tolerance: f32) -> TriangleContact {
    let sides = triangle_sides(t);
    let sat = query_triangle_hull(t, sides, hull, q, tr, margin, tolerance);
    if sat.kind == AXIS_NONE {
        return no_triangle_contact(TRIANGLE_NONE);
    }
    let v = t.corners;
    // 5. The least separation a point may show; a gap within rounding of zero is none.
    let apart = TRIMESH_APART_TOLERANCE / PRIMITIVE_AXIS_PREFERENCE_TOLERANCE * tolerance;
    var floor = -F32_MAX;
    if sat.max_separation > apart {
        floor = sat.max_separation;
    }
    var corners: array<vec3<f32>, MAX_CLIP_VERTICES>;
    var count = 0u;
    switch sat.kind {
        case AXIS_FACE_A: {
            let face = most_antiparallel_face(hull, q, t.normal);
            let incident = face_loop(hull, face);
            if incident.y + 3u > MAX_CLIP_VERTICES {
                return no_triangle_contact(TRIANGLE_HOST);
            }
            poly_len[0] = 0u;
            for (var k = 0u; k < incident.y; k++) {
                let vertex = face_loops[incident.x + k];
                poly_push(0u, pose_point(q, tr, hull_vertex(hull, vertex)), feature_id(FEATURE_FACE_A, 0u, 0u, vertex), vertex);
            }
            corners[0] = v[0];
            corners[1] = v[1];
            corners[2] = v[2];
            let s = clip_by_reference_sides(&corners, vec2<u32>(CORNER_LOOP, 3u), t.normal, face, FEATURE_FACE_A);
            count = add_triangle_points(s, t.normal, dot(t.normal, v[0]), margin, floor, 0u);
        }
        case AXIS_FACE_B: {
            let face = sat.feature_b;
            let reference = face_loop(hull, face);
            if reference.y + 3u > MAX_CLIP_VERTICES {
                return no_triangle_contact(TRIANGLE_HOST);
            }
            let normal = quat_rotate(q, planes[hull.first_face + face].xyz);
            for (var i = 0u; i < reference.y; i++) {
                corners[i] = pose_point(q, tr, hull_vertex(hull, face_loops[reference.x + i]));
            }
            poly_len[0] = 0u;
            for (var k = 0u; k < 3u; k++) {
                poly_push(0u, v[k], feature_id(FEATURE_FACE_B, 0u, face, k), k);
            }
            let s = clip_by_reference_sides(&corners, reference, normal, 0u, FEATURE_FACE_B);
            count = add_triangle_points(s, normal, dot(normal, corners[0]), margin, floor, 0u);
        }
        default: {
            // 4. Edge axis.
            let k = sat.feature_a;
            let edge = edges[hull.first_edge + sat.feature_b];
            let a0 = v[k];
            let a1 = v[(k + 1u) % 3u];
            let b0 = pose_point(q, tr, hull_vertex(hull, edge.v0));
            let b1 = pose_point(q, tr, hull_vertex(hull, edge.v1));
            let st = closest_points_segments(a0, a1, b0, b1);
            let on_a = a0 + (a1 - a0) * st.x;
            let on_b = b0 + (b1 - b0) * st.y;
            let separation = max(sat.separation, floor);
            triangle_points[0] = vec4<f32>(0.5 * (on_a + on_b), -separation);
            triangle_ids[0] = feature_id(FEATURE_EDGE_PAIR, 0u, k, sat.feature_b);
            return TriangleContact(TRIANGLE_CONTACT, sat.normal, separation, 1u);
        }
    }
    if count == 0u {
        return no_triangle_contact(TRIANGLE_NONE);
    }
    // Face axes: the deepest clipped point, which lies over the triangle.
    var separation = F32_MAX;
    for (var i = 0u; i < count; i++) {
        separation = min(separation, -triangle_points[i].w);
    }
    return TriangleContact(TRIANGLE_CONTACT, sat.normal, separation, count);
}

// The per-triangle id of a primitive contact (triangle_sphere.rs primitive_id): kind OTHER,
// A's field the triangle feature (flag 0 and 3: the face; flag 0 and k: corner k; flag 1 and
// k: edge k), B's field `body_feature`.
fn triangle_primitive_id(feature: vec2<u32>, body_feature: u32) -> u32 {
    if feature.x == TRIANGLE_FACE {
        return feature_id(FEATURE_OTHER, 0u, 3u, body_feature);
    }
    return feature_id(FEATURE_OTHER, select(0u, 1u, feature.x == TRIANGLE_EDGE), feature.y, body_feature);
}

// A one-point sub-contact: normal, separation, the point midway from `on_triangle` along the
// normal, id from the triangle feature (B's field 0); none beyond the margin.
fn triangle_one_point(normal: vec3<f32>, separation: f32, on_triangle: vec3<f32>, feature: vec2<u32>, margin: f32) -> TriangleContact {
    if separation > margin {
        return no_triangle_contact(TRIANGLE_NONE);
    }
    triangle_points[0] = vec4<f32>(on_triangle + normal * (0.5 * separation), -separation);
    triangle_ids[0] = triangle_primitive_id(feature, 0u);
    return TriangleContact(TRIANGLE_CONTACT, normal, separation, 1u);
}

// The closest point of triangle t to the point p (gjk.wgsl's Voronoi regions).
fn closest_on_mesh_triangle(t: MeshTriangle, p: vec3<f32>) -> vec3<f32> {
    let v = t.corners;
    let w = closest_on_triangle(v[0] - p, v[1] - p, v[2] - p);
    return v[0] * w.x + v[1] * w.y + v[2] * w.z;
}

// 3. collide_triangle_sphere: a sphere of `radius` centred at `centre` (A's frame). Steps:
// 1. beyond radius + margin or wholly behind the plane: none; 2. in front: the closest point
// and its feature; its direction the normal where the rule allows it on that feature, else the
// face normal where the centre projects into the triangle, else none (the neighbour answers);
// behind (touching): the face where the centre projects into it; 3. one point midway.
fn collide_triangle_sphere(t: MeshTriangle, centre: vec3<f32>, radius: f32, margin: f32) -> TriangleContact {
    let n = t.normal;
    let height = dot(n, centre - t.corners[0]);
    if height - radius > margin || height + radius < 0.0 {
        return no_triangle_contact(TRIANGLE_NONE);
    }
    let sides = triangle_sides(t);
    var normal = n;
    var separation = height - radius;
    var feature = vec2<u32>(TRIANGLE_FACE, 0u);
    var closest_taken = false;
    if height > 0.0 {
        let on_triangle = closest_on_mesh_triangle(t, centre);
        let offset = centre - on_triangle;
        let distance = length(offset);
        let f = triangle_feature_at(t, on_triangle, FEATURE_WEIGHT_TOLERANCE);
        if f.x != TRIANGLE_FACE && triangle_allows_normal(t, sides, f, offset / distance) {
            normal = offset / distance;
            separation = distance - radius;
            feature = f;
            closest_taken = true;
        }
    }
    if !closest_taken && !triangle_contains_projection(t, sides, centre) {
        // A refused normal beside the triangle: the neighbour across that feature answers.
        return no_triangle_contact(TRIANGLE_NONE);
    }
    let on_sphere = centre - normal * radius;
    if separation > margin {
        return no_triangle_contact(TRIANGLE_NONE);
    }
    triangle_points[0] = vec4<f32>(on_sphere - normal * (0.5 * separation), -separation);
    triangle_ids[0] = triangle_primitive_id(feature, 0u);
    return TriangleContact(TRIANGLE_CONTACT, normal, separation, 1u);
}

// The closest points of triangle t and the segment s0 s1 (A's frame), as GJK's closest_points
// of the two: xyz on the triangle and on the segment, w = 1; w = 0 where they touch (the
// segment meets the triangle).
struct TriangleSegmentClosest {
    on_triangle: vec4<f32>,
    on_segment: vec3<f32>,
}

fn closest_triangle_segment(t: MeshTriangle, sides: TriangleSides, s0: vec3<f32>, s1: vec3<f32>) -> TriangleSegmentClosest {
    let v = t.corners;
    var touching: TriangleSegmentClosest;
    let h0 = dot(t.normal, s0 - v[0]);
    let h1 = dot(t.normal, s1 - v[0]);
    // Through the plane inside the triangle.
    if ((h0 <= 0.0 && h1 >= 0.0) || (h0 >= 0.0 && h1 <= 0.0)) && h0 != h1 {
        if triangle_contains_projection(t, sides, s0 + (s1 - s0) * (h0 / (h0 - h1))) {
            return touching;
        }
    }
    // Else the closest pair has an end of the segment or an edge of the triangle.
    var best = TriangleSegmentClosest(vec4<f32>(closest_on_mesh_triangle(t, s0), 1.0), s0);
    var best_d2 = dot(s0 - best.on_triangle.xyz, s0 - best.on_triangle.xyz);
    let on_end = closest_on_mesh_triangle(t, s1);
    if dot(s1 - on_end, s1 - on_end) < best_d2 {
        best = TriangleSegmentClosest(vec4<f32>(on_end, 1.0), s1);
        best_d2 = dot(s1 - on_end, s1 - on_end);
    }
    for (var k = 0u; k < 3u; k++) {
        let a0 = v[k];
        let a1 = v[(k + 1u) % 3u];
        let st = closest_points_segments(a0, a1, s0, s1);
        let on_a = a0 + (a1 - a0) * st.x;
        let on_b = s0 + (s1 - s0) * st.y;
        if dot(on_b - on_a, on_b - on_a) < best_d2 {
            best = TriangleSegmentClosest(vec4<f32>(on_a, 1.0), on_b);
            best_d2 = dot(on_b - on_a, on_b - on_a);
        }
    }
    if best_d2 == 0.0 {
        return touching;
    }
    return best;
}

// 3. collide_triangle_capsule: a capsule with core s0 s1 (A's frame) and `radius`; `tolerance`
// the face preference (length units). Steps: 1. beyond radius + margin or wholly behind the
// plane: none; 2. apart: the closest points' direction where the rule allows it on the
// triangle's feature there (one point); 3. touching: the face normal, or an allowed edge x
// segment axis beyond the face by the preference (one point); 4. the face normal: the segment
// clipped by the triangle's sides, each end within the margin a point (ids: B's field 1 + end).
// How far below the core point at t on the segment s0 s1 (along -n, unit) the capsule's surface
// lies: radius / cos tilt through the cylinder, or less through the lower end's cap where the way
// down leaves the cylinder past that end (surface_below in the Rust twin).
fn capsule_surface_below(s0: vec3<f32>, s1: vec3<f32>, t: f32, n: vec3<f32>, radius: f32) -> f32 {
    let direction = s1 - s0;
    let segment_length = length(direction);
    // Sine and cosine of the segment's tilt out of the plane.
    var sine = 0.0;
    if segment_length > 0.0 {
        sine = abs(dot(n, direction) / segment_length);
    }
    let cosine = sqrt(max(1.0 - sine * sine, 0.0));
    // The core's length from the point to its lower end.
    let room = segment_length * select(1.0 - t, t, dot(n, direction) >= 0.0);
    if radius * sine <= room * cosine {
        return radius / cosine;
    }
    // |p - n s - end| = radius, p - end along the core.
    return room * sine + sqrt(max(radius * radius - room * room * cosine * cosine, 0.0));
}

fn collide_triangle_capsule(t: MeshTriangle, s0: vec3<f32>, s1: vec3<f32>, radius: f32, margin: f32, tolerance: f32) -> TriangleContact {
    let n = t.normal;
    let v = t.corners;
    let h0 = dot(n, s0 - v[0]);
    let h1 = dot(n, s1 - v[0]);
    if min(h0, h1) - radius > margin || max(h0, h1) < 0.0 {
        return no_triangle_contact(TRIANGLE_NONE);
    }
    let sides = triangle_sides(t);
    let closest = closest_triangle_segment(t, sides, s0, s1);
    var beside = false;
    var beside_normal = vec3<f32>(0.0);
    var beside_separation = 0.0;
    var beside_feature = vec2<u32>(TRIANGLE_FACE, 0u);
    if closest.on_triangle.w != 0.0 {
        // 2. Apart: a feature's normal, or the face's (step 4, this point if nothing is clipped).
        let on_triangle = closest.on_triangle.xyz;
        let feature = triangle_feature_at(t, on_triangle, FEATURE_WEIGHT_TOLERANCE);
        let offset = closest.on_segment - on_triangle;
        let distance = length(offset);
        if feature.x != TRIANGLE_FACE && triangle_allows_normal(t, sides, feature, offset / distance) {
            if dot(n, offset / distance) < TRIMESH_FACE_NORMAL_COSINE {
                return triangle_one_point(offset / distance, distance - radius, on_triangle, feature, margin);
            }
            beside = true;
            beside_normal = offset / distance;
            beside_separation = distance - radius;
            beside_feature = feature;
        }
    } else {
        // 3. Touching: an active edge's axis beats the face only by the preference.
        let face_separation = min(h0, h1) - radius;
        let direction = s1 - s0;
        var best_axis = vec3<f32>(0.0);
        var best_separation = -F32_MAX;
        var best_edge = 3u;
        for (var k = 0u; k < 3u; k++) {
            let axis_cross = cross(sides.e[k], direction);
            let axis_length = length(axis_cross);
            if axis_length <= PARALLEL_EDGE_SINE * length(direction) {
                continue;
            }
            var axis = axis_cross / axis_length;
            if dot(axis_cross, sides.side[k]) < 0.0 {
                axis = -axis_cross / axis_length;
            }
            if dot(axis, n) < 0.0 || !triangle_allows_normal(t, sides, vec2<u32>(TRIANGLE_EDGE, k), axis) {
                continue;
            }
            let top = max(max(dot(axis, v[0]), dot(axis, v[1])), dot(axis, v[2]));
            let separation = min(dot(axis, s0), dot(axis, s1)) - top - radius;
            if best_edge == 3u || separation > best_separation {
                best_axis = axis;
                best_separation = separation;
                best_edge = k;
            }
        }
        if best_edge != 3u && best_separation > face_separation + tolerance {
            let e0 = v[best_edge];
            let e1 = v[(best_edge + 1u) % 3u];
            let st = closest_points_segments(s0, s1, e0, e1);
            return triangle_one_point(best_axis, best_separation, e0 + (e1 - e0) * st.y, vec2<u32>(TRIANGLE_EDGE, best_edge), margin);
        }
    }
    // 4. The face normal: the segment clipped by the triangle's sides pushed out by `tolerance`
    // (clip_segment_by_sides).
    var t_min = 0.0;
    var t_max = 1.0;
    var inside = true;
    for (var k = 0u; k < 3u; k++) {
        let c0 = v[k];
        let side = cross(v[(k + 1u) % 3u] - c0, n);
        let pushed = tolerance * length(side);
        let d0 = dot(side, s0 - c0) - pushed;
        let d1 = dot(side, s1 - c0) - pushed;
        if d0 > 0.0 && d1 > 0.0 {
            inside = false;
            break;
        }
        if d0 > 0.0 {
            t_min = max(t_min, d0 / (d0 - d1));
        } else if d1 > 0.0 {
            t_max = min(t_max, d0 / (d0 - d1));
        }
    }
    if !inside || !(t_min < t_max) {
        // Beside the triangle with a refused normal: the neighbour across that feature answers.
        if beside {
            return triangle_one_point(beside_normal, beside_separation, closest.on_triangle.xyz, beside_feature, margin);
        }
        return no_triangle_contact(TRIANGLE_NONE);
    }
    var count = 0u;
    var separation = F32_MAX;
    for (var end = 0u; end < 2u; end++) {
        let t_end = select(t_min, t_max, end == 1u);
        let p = s0 + (s1 - s0) * t_end;
        let below = capsule_surface_below(s0, s1, t_end, n, radius);
        let gap = dot(n, p - v[0]) - below;
        if gap <= margin {
            triangle_points[count] = vec4<f32>(p - n * (below + 0.5 * gap), -gap);
            triangle_ids[count] = triangle_primitive_id(vec2<u32>(TRIANGLE_FACE, 0u), 1u + end);
            separation = min(separation, gap);
            count += 1u;
        }
    }
    if count == 0u {
        return no_triangle_contact(TRIANGLE_NONE);
    }
    return TriangleContact(TRIANGLE_CONTACT, n, separation, count);
}

// 4. The sub-contact of triangle t and body B (`shape`: a hull, box or cylinder by its hull
// tables, a sphere or a capsule) posed in A's frame by (q, tr). `tolerance`: the face
// preference, AXIS_PREFERENCE_TOLERANCE x B's size (length units). Half-spaces, meshes and
// compounds never reach it (refused at the door, or expanded to their children).
fn collide_triangle_shape(t: MeshTriangle, shape: GpuShape, q: vec4<f32>, tr: vec3<f32>, margin: f32, tolerance: f32) -> TriangleContact {
    switch shape.kind {
        case SHAPE_SPHERE: {
            return collide_triangle_sphere(t, tr, shape.params.x, margin);
        }
        case SHAPE_CAPSULE: {
            let s0 = pose_point(q, tr, capsule_end(shape, 0u));
            let s1 = pose_point(q, tr, capsule_end(shape, 1u));
            return collide_triangle_capsule(t, s0, s1, shape.params.x, margin, tolerance);
        }
        default: {
            return collide_triangle_hull(t, shape, q, tr, margin, tolerance);
        }
    }
}

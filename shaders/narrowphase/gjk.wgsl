// Distance between two convex shapes given by support maps (GJK), in any common frame, one pair
// per invocation, in f32 (WGSL has no portable f64). Rust twin: src/query/gjk.rs (the reference,
// its simplex in f64). Why each guard is there: docs/design/gpu-narrowphase.md ("GJK in f32").
//
// 1. Start a simplex with one support point of the Minkowski difference A - B (direction +X).
// 2. Find the point v of the simplex closest to the origin (Johnson's subalgorithm), drop the
//    vertices it does not use and scale the rest's weights to sum 1 (v stays on the simplex).
// 3. v (nearly) the origin, or the origin inside the tetrahedron: the shapes overlap; unless a
//    support gap (step 4) already proved them apart beyond the overlap tolerance, then the
//    tetrahedron is flat to rounding: keep the last simplex and stop.
// 4. Add the support point w of A - B along -v (v.w / |v| bounds the distance from below). Stop
//    when |v|^2 - v.w is within GJK_RELATIVE_TOLERANCE of |v|^2, when |v| stops decreasing, or
//    after GJK_MAX_ITERATIONS.
// 5. The barycentric weights of v on the final simplex give the witness points on A and B.
// 6. (GPU only) The unit direction from A toward B and how far f32 rounding may have turned it
//    (radians, times GPU_GJK_CONDITIONING; 1 where one more support point shows GJK stopped short).
//
// Compiled after geometry.wgsl and clip.wgsl (pose_point, hull_vertex); tests/gpu_layout.rs
// checks the constants below against the Rust ones.

// Mirrors crate::constants::GJK_RELATIVE_TOLERANCE (fraction of |v|^2).
const GJK_RELATIVE_TOLERANCE: f32 = 1.0e-6;
// Mirrors crate::constants::GJK_OVERLAP_TOLERANCE (fraction of the Minkowski difference's size).
const GJK_OVERLAP_TOLERANCE: f32 = 1.0e-5;
// Mirrors crate::constants::GJK_MAX_ITERATIONS.
const GJK_MAX_ITERATIONS: u32 = 64u;
// f32::MIN_POSITIVE: a shorter squared segment is a point (the CPU uses f64's).
const GJK_TINY: f32 = 1.17549435e-38;
// f32::EPSILON: the collinear-triangle threshold (the CPU uses f64's).
const GJK_EPSILON: f32 = 1.1920929e-7;
// GjkShape.kind, as the SupportMap impls of gjk.rs: a point (p0), a segment (p0 to p1), a hull
// placed by (q, t) (its local frame to the query frame).
const GJK_POINT: u32 = 0u;
const GJK_SEGMENT: u32 = 1u;
const GJK_HULL: u32 = 2u;

// A convex shape known by its support function, in the query frame.
struct GjkShape {
    kind: u32,
    p0: vec3<f32>,
    p1: vec3<f32>,
    hull: GpuShape,
    q: vec4<f32>,
    t: vec3<f32>,
}

fn gjk_point(p: vec3<f32>) -> GjkShape {
    var s: GjkShape;
    s.kind = GJK_POINT;
    s.p0 = p;
    return s;
}

fn gjk_segment(p0: vec3<f32>, p1: vec3<f32>) -> GjkShape {
    var s: GjkShape;
    s.kind = GJK_SEGMENT;
    s.p0 = p0;
    s.p1 = p1;
    return s;
}

fn gjk_hull(hull: GpuShape, q: vec4<f32>, t: vec3<f32>) -> GjkShape {
    var s: GjkShape;
    s.kind = GJK_HULL;
    s.hull = hull;
    s.q = q;
    s.t = t;
    return s;
}

// Index of the vertex of `hull` furthest along `direction` (hull frame); the first of equals, as
// ConvexHull::support.
fn hull_support_index(hull: GpuShape, direction: vec3<f32>) -> u32 {
    var best = 0u;
    var best_dot = -F32_MAX;
    for (var i = 0u; i < hull.vertex_count; i++) {
        let d = dot(vertices[hull.first_vertex + i].xyz, direction);
        if d > best_dot {
            best_dot = d;
            best = i;
        }
    }
    return best;
}

// A point of `s` furthest along `direction` (query frame, any length).
fn gjk_support(s: GjkShape, direction: vec3<f32>) -> vec3<f32> {
    switch s.kind {
        case GJK_POINT: {
            return s.p0;
        }
        case GJK_SEGMENT: {
            if dot(s.p1, direction) > dot(s.p0, direction) {
                return s.p1;
            }
            return s.p0;
        }
        default: {
            let local = quat_rotate(quat_conjugate(s.q), direction);
            return pose_point(s.q, s.t, hull_vertex(s.hull, hull_support_index(s.hull, local)));
        }
    }
}

// A vertex of the Minkowski difference with the support points of A and B that made it.
struct SimplexVertex {
    w: vec3<f32>,
    a: vec3<f32>,
    b: vec3<f32>,
}

// Up to four vertices with the barycentric weights of the current closest point.
struct Simplex {
    vertices: array<SimplexVertex, 4>,
    weights: vec4<f32>,
    count: u32,
}

fn support_vertex(a: GjkShape, b: GjkShape, direction: vec3<f32>) -> SimplexVertex {
    let pa = gjk_support(a, direction);
    let pb = gjk_support(b, -direction);
    return SimplexVertex(pa - pb, pa, pb);
}

fn simplex_push(simplex: ptr<function, Simplex>, vertex: SimplexVertex) {
    let n = (*simplex).count;
    (*simplex).vertices[n] = vertex;
    (*simplex).weights[n] = select(0.0, 1.0, n == 0u);
    (*simplex).count = n + 1u;
}

// 2. Barycentric weights of the origin's closest point on segment a b.
fn closest_on_segment(a: vec3<f32>, b: vec3<f32>) -> vec2<f32> {
    let ab = b - a;
    let len2 = dot(ab, ab);
    if len2 <= GJK_TINY {
        return vec2<f32>(1.0, 0.0);
    }
    let t = -dot(a, ab) / len2;
    if t <= 0.0 {
        return vec2<f32>(1.0, 0.0);
    }
    if t >= 1.0 {
        return vec2<f32>(0.0, 1.0);
    }
    return vec2<f32>(1.0 - t, t);
}

// 2. Barycentric weights of the origin's closest point on triangle a b c, by Voronoi regions.
fn closest_on_triangle(a: vec3<f32>, b: vec3<f32>, c: vec3<f32>) -> vec3<f32> {
    let ab = b - a;
    let ac = c - a;
    let d1 = -dot(ab, a);
    let d2 = -dot(ac, a);
    if d1 <= 0.0 && d2 <= 0.0 {
        return vec3<f32>(1.0, 0.0, 0.0);
    }
    let d3 = -dot(ab, b);
    let d4 = -dot(ac, b);
    if d3 >= 0.0 && d4 <= d3 {
        return vec3<f32>(0.0, 1.0, 0.0);
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        let t = d1 / (d1 - d3);
        return vec3<f32>(1.0 - t, t, 0.0);
    }
    let d5 = -dot(ab, c);
    let d6 = -dot(ac, c);
    if d6 >= 0.0 && d5 <= d6 {
        return vec3<f32>(0.0, 0.0, 1.0);
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        let t = d2 / (d2 - d6);
        return vec3<f32>(1.0 - t, 0.0, t);
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && d4 - d3 >= 0.0 && d5 - d6 >= 0.0 {
        let t = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        return vec3<f32>(0.0, 1.0 - t, t);
    }
    let sum = va + vb + vc;
    if sum <= GJK_EPSILON * dot(ab, ab) * dot(ac, ac) {
        // Collinear vertices: the face region is empty, take the best edge.
        let p = array<vec3<f32>, 3>(a, b, c);
        var best = vec3<f32>(1.0, 0.0, 0.0);
        var best_dist2 = F32_MAX;
        for (var e = 0u; e < 3u; e++) {
            // Edges (0, 1), (0, 2), (1, 2).
            let i = select(0u, 1u, e == 2u);
            let j = select(e + 1u, 2u, e == 2u);
            let l = closest_on_segment(p[i], p[j]);
            let closest = p[i] * l.x + p[j] * l.y;
            let dist2 = dot(closest, closest);
            if dist2 < best_dist2 {
                best = vec3<f32>(0.0);
                best[i] = l.x;
                best[j] = l.y;
                best_dist2 = dist2;
            }
        }
        return best;
    }
    let v = vb / sum;
    let w = vc / sum;
    return vec3<f32>(1.0 - v - w, v, w);
}

// 2. and 3. Barycentric weights of the origin's closest point on tetrahedron p; w < 0 when the
// origin is inside it (no weights). A flat tetrahedron has no inside: its faces are all tried.
fn closest_on_tetrahedron(p: array<vec3<f32>, 4>) -> vec4<f32> {
    // Faces [i, j, k] with the opposite vertex: [0,1,2|3], [0,3,1|2], [0,2,3|1], [1,3,2|0].
    let faces = array<vec4<u32>, 4>(
        vec4<u32>(0u, 1u, 2u, 3u),
        vec4<u32>(0u, 3u, 1u, 2u),
        vec4<u32>(0u, 2u, 3u, 1u),
        vec4<u32>(1u, 3u, 2u, 0u),
    );
    var best = vec4<f32>(0.0, 0.0, 0.0, -1.0);
    var best_dist2 = F32_MAX;
    var outside_any = false;
    for (var f = 0u; f < 4u; f++) {
        let face = faces[f];
        let normal = cross(p[face.y] - p[face.x], p[face.z] - p[face.x]);
        let origin_side = -dot(normal, p[face.x]);
        let opposite_side = dot(normal, p[face.w] - p[face.x]);
        // The origin is beyond this face when it is not on the opposite vertex's side.
        if origin_side * opposite_side > 0.0 {
            continue;
        }
        let l = closest_on_triangle(p[face.x], p[face.y], p[face.z]);
        let closest = p[face.x] * l.x + p[face.y] * l.y + p[face.z] * l.z;
        let dist2 = dot(closest, closest);
        if !outside_any || dist2 < best_dist2 {
            best = vec4<f32>(0.0);
            best[face.x] = l.x;
            best[face.y] = l.y;
            best[face.z] = l.z;
            best_dist2 = dist2;
        }
        outside_any = true;
    }
    return best;
}

// 2. Replaces the simplex by the smallest sub-simplex holding its point closest to the origin
// (weights summing to 1) and returns that point (xyz) with w = 1; w = 0 when the origin is inside
// the tetrahedron.
fn reduce_to_closest(simplex: ptr<function, Simplex>) -> vec4<f32> {
    let n = (*simplex).count;
    let w = array<vec3<f32>, 4>(
        (*simplex).vertices[0].w,
        (*simplex).vertices[1].w,
        (*simplex).vertices[2].w,
        (*simplex).vertices[3].w,
    );
    var weights = vec4<f32>(1.0, 0.0, 0.0, 0.0);
    if n == 2u {
        weights = vec4<f32>(closest_on_segment(w[0], w[1]), 0.0, 0.0);
    } else if n == 3u {
        weights = vec4<f32>(closest_on_triangle(w[0], w[1], w[2]), 0.0);
    } else if n == 4u {
        weights = closest_on_tetrahedron(w);
        if weights.w < 0.0 {
            return vec4<f32>(0.0);
        }
    }
    // Keep only the vertices the closest point uses, in order, their weights summing to 1
    // (rounding on a sliver may leave them off 1, and v off the simplex).
    var kept = 0u;
    var total = 0.0;
    for (var i = 0u; i < n; i++) {
        if weights[i] > 0.0 {
            (*simplex).vertices[kept] = (*simplex).vertices[i];
            (*simplex).weights[kept] = weights[i];
            total += weights[i];
            kept += 1u;
        }
    }
    (*simplex).count = kept;
    var closest = vec3<f32>(0.0);
    for (var i = 0u; i < kept; i++) {
        (*simplex).weights[i] = (*simplex).weights[i] / total;
        closest += (*simplex).vertices[i].w * (*simplex).weights[i];
    }
    return vec4<f32>(closest, 1.0);
}

// Mirrors crate::constants::GPU_GJK_CONDITIONING (multiple of epsilon × the rounding ratio).
const GPU_GJK_CONDITIONING: f32 = 64.0;

// Closest points of two separated shapes, in the query frame; found = false when they overlap.
// direction: unit, from A toward B; uncertainty: its rounding error bound, radians (step 6).
struct ClosestPoints {
    found: bool,
    distance: f32,
    point_a: vec3<f32>,
    point_b: vec3<f32>,
    direction: vec3<f32>,
    uncertainty: f32,
}

// Closest points between convex shapes a and b (same frame), as gjk.rs closest_points.
fn gjk_closest_points(a: GjkShape, b: GjkShape) -> ClosestPoints {
    let none = ClosestPoints(false, 0.0, vec3<f32>(0.0), vec3<f32>(0.0), vec3<f32>(0.0), 0.0);
    // 1. One support point.
    var simplex: Simplex;
    simplex.count = 0u;
    simplex_push(&simplex, support_vertex(a, b, vec3<f32>(1.0, 0.0, 0.0)));
    var v = simplex.vertices[0].w;
    var scale = length(v);
    // 4. The largest lower bound of the distance a support point has proven so far.
    var lower = 0.0;
    for (var iteration = 0u; iteration < GJK_MAX_ITERATIONS; iteration++) {
        // 3. Overlap.
        let vv = dot(v, v);
        let overlap = GJK_OVERLAP_TOLERANCE * scale;
        if vv <= overlap * overlap {
            return none;
        }
        // 4. Converged, degenerate, or a new vertex.
        let w = support_vertex(a, b, -v);
        scale = max(scale, length(w.w));
        let vw = dot(v, w.w);
        lower = max(lower, vw / sqrt(vv));
        if vv - vw <= GJK_RELATIVE_TOLERANCE * vv {
            break;
        }
        var repeated = false;
        for (var i = 0u; i < simplex.count; i++) {
            repeated = repeated || all(simplex.vertices[i].w == w.w);
        }
        if repeated {
            break;
        }
        let previous = simplex;
        simplex_push(&simplex, w);
        // 2. Closest point of the grown simplex.
        let closer = reduce_to_closest(&simplex);
        if closer.w == 0.0 {
            // 3. The origin inside a tetrahedron, though a support gap proved the shapes apart:
            // the tetrahedron is flat to rounding, the previous simplex holds the closest point.
            if lower > overlap {
                simplex = previous;
                break;
            }
            return none;
        }
        if dot(closer.xyz, closer.xyz) > vv {
            // Worse (rounding on degenerate input): keep the last good simplex. Equal counts as
            // progress: in f32 a better direction often shortens v by less than an ulp (the
            // distance is flat, quadratic in the direction's error).
            simplex = previous;
            break;
        }
        v = closer.xyz;
    }
    // 5. Witness points.
    var point_a = vec3<f32>(0.0);
    var point_b = vec3<f32>(0.0);
    for (var i = 0u; i < simplex.count; i++) {
        point_a += simplex.vertices[i].a * simplex.weights[i];
        point_b += simplex.vertices[i].b * simplex.weights[i];
    }
    // 6. Direction and its uncertainty.
    let distance = length(v);
    var direction = -v / distance;
    var ratio = scale / distance;
    var face = false;
    if simplex.count == 3u {
        let ab = simplex.vertices[1].w - simplex.vertices[0].w;
        let ac = simplex.vertices[2].w - simplex.vertices[0].w;
        let n = cross(ab, ac);
        let area2 = length(n);
        let face_ratio = scale * (length(ab) + length(ac)) / area2;
        if area2 > 0.0 && face_ratio < ratio {
            direction = n * (-sign(dot(n, v)) / area2);
            ratio = face_ratio;
            face = true;
        }
    }
    // Certified when the support point along the direction (the Minkowski difference's point
    // nearest B's side) is a vertex of the final simplex, or for a face lies in its plane
    // within rounding: then no other feature is nearer and only rounding turns the direction.
    // Otherwise GJK stopped short of the closest feature (f32 cannot always tell): unknown.
    let rounding = GPU_GJK_CONDITIONING * GJK_EPSILON;
    let w = support_vertex(a, b, direction).w;
    var certified = face && dot(w - v, direction) <= rounding * scale;
    for (var i = 0u; i < simplex.count; i++) {
        certified = certified || all(simplex.vertices[i].w == w);
    }
    return ClosestPoints(true, distance, point_a, point_b, direction, select(1.0, rounding * ratio, certified));
}

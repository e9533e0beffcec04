// Contact manifolds of the pairs with a sphere, capsule or half-space, one pair per invocation:
// the closed forms of src/contact/{sphere_sphere, sphere_capsule, capsule_capsule,
// halfspace_sphere, halfspace_capsule, halfspace_hull, sphere_hull, capsule_hull}.rs (the
// references; keep them in step: the same steps, names, feature ids and margin rule).
//
// 1. The pair in pair_to_run's order (canonical in a resident call, as every backend); then
//    routine order, as crate::contact::collide_shapes: the routine's A is the body of lower rank
//    (half-space, sphere, capsule, hull or box); equal ranks keep the pair's order. When the
//    routine's A is the pair's B, the result is swapped (normal negated, id fields exchanged).
// 2. Each routine computes in its own frame (A's, or the hull's for sphere-hull and
//    capsule-hull) with a normal from its A toward its B, as on the CPU.
// 3. The manifold is moved into the given pair's A frame (the frame every GpuManifold is in)
//    and swapped where step 1's two orders say.
// Two half-spaces never collide. Pairs the kernel cannot finish go to the host
// (MANIFOLD_HOST): pairs with a triangle mesh or a compound (SHAPE_TRIMESH, SHAPE_COMPOUND:
// the clip kernel passes them to the mesh pass and the compound stage first), and where the driver's loop cap cut the loops short
// (loops_cut_short).
//
// Compiled after geometry.wgsl, clip.wgsl (feature_id, swapped_feature_id,
// closest_points_segments, add_clipped_points) and gjk.wgsl; tests/gpu_layout.rs checks the constants below
// against the Rust ones.

// Mirrors crate::constants::AXIS_PREFERENCE_TOLERANCE (fraction of the pair's scale).
const PRIMITIVE_AXIS_PREFERENCE_TOLERANCE: f32 = 1.0e-3;
// Mirrors crate::constants::CAPSULE_FACE_SINE.
const CAPSULE_FACE_SINE: f32 = 0.05;
// Mirrors crate::constants::CAPSULE_PARALLEL_SINE.
const CAPSULE_PARALLEL_SINE: f32 = 0.05;
// Vectors shorter than this have no finite reciprocal length (1 / f32::MAX): glam's
// try_normalize gives None for them.
const NORMALIZE_MIN_LENGTH: f32 = 2.938736e-39;

// v / |v| in xyz and w = 1, or w = 0 where glam's try_normalize gives None.
fn try_normalize(v: vec3<f32>) -> vec4<f32> {
    let l = length(v);
    if l >= NORMALIZE_MIN_LENGTH {
        return vec4<f32>(v * (1.0 / l), 1.0);
    }
    return vec4<f32>(0.0);
}

// glam's Vec3::any_orthonormal_vector of a unit vector (signum as Rust's: -1 for -0.0).
fn any_orthonormal_vector(v: vec3<f32>) -> vec3<f32> {
    let sign = select(1.0, -1.0, (bitcast<u32>(v.z) >> 31u) == 1u);
    let a = -1.0 / (sign + v.z);
    let b = v.x * v.y * a;
    return vec3<f32>(b, sign + v.y * v.y * a, -v.y);
}

// The core segment of a capsule (shape params: x radius, y half height), local frame, as
// Capsule::segment: bottom end first.
fn capsule_end(capsule: GpuShape, end: u32) -> vec3<f32> {
    let h = capsule.params.y;
    return vec3<f32>(0.0, select(-h, h, end == 1u), 0.0);
}

// An empty manifold (no points: separated until a point is pushed).
fn no_contact() -> GpuManifold {
    return GpuManifold(vec3<f32>(0.0), 0.0, array<vec4<f32>, 4>(), array<u32, 4>(), 0u, MANIFOLD_SEPARATED, 0u, 0u);
}

fn contact_manifold(normal: vec3<f32>, separation: f32) -> GpuManifold {
    return GpuManifold(normal, separation, array<vec4<f32>, 4>(), array<u32, 4>(), 0u, MANIFOLD_CLIPPED, 0u, 0u);
}

// Appends a point (position, depth) with its id, as Manifold::push.
fn push_point(m: ptr<function, GpuManifold>, position: vec3<f32>, depth: f32, id: u32) {
    let n = (*m).count;
    if n < 4u {
        (*m).points[n] = vec4<f32>(position, depth);
        (*m).ids[n] = id;
        (*m).count = n + 1u;
    }
}

// 1. Rank of a shape kind in collide_shapes' routine order.
fn primitive_rank(kind: u32) -> u32 {
    switch kind {
        case SHAPE_HALF_SPACE: {
            return 0u;
        }
        case SHAPE_SPHERE: {
            return 1u;
        }
        case SHAPE_CAPSULE: {
            return 2u;
        }
        default: {
            return 3u;
        }
    }
}

// sphere_sphere.rs, in A's frame: the centres' offset, its direction (A's local image of world
// +Y for coincident centres), one point midway between the surfaces.
fn collide_sphere_sphere(body_a: GpuBody, a: GpuShape, body_b: GpuBody, b: GpuShape, margin: f32) -> GpuManifold {
    // 1. The offset of the centres (A's frame: rotating keeps its length).
    let delta = relative_pose(body_a, body_b).t;
    let distance = length(delta);
    // 3. Separation.
    let separation = distance - a.params.x - b.params.x;
    if separation > margin {
        return no_contact();
    }
    // 2. Normal.
    var normal = quat_rotate(quat_conjugate(body_a.rotation), vec3<f32>(0.0, 1.0, 0.0));
    let unit = try_normalize(delta);
    if unit.w != 0.0 {
        normal = unit.xyz;
    }
    var m = contact_manifold(normal, separation);
    push_point(&m, normal * (a.params.x + 0.5 * separation), -separation, feature_id(FEATURE_OTHER, 0u, 0u, 0u));
    return m;
}

// sphere_capsule.rs, in A's (the sphere's) frame.
fn collide_sphere_capsule(body_a: GpuBody, sphere: GpuShape, body_b: GpuBody, capsule: GpuShape, margin: f32) -> GpuManifold {
    // 1. The capsule's segment in A's frame.
    let b_in_a = relative_pose(body_a, body_b);
    let q0 = pose_point(b_in_a.q, b_in_a.t, capsule_end(capsule, 0u));
    let q1 = pose_point(b_in_a.q, b_in_a.t, capsule_end(capsule, 1u));
    // 2. Closest point of the segment to the centre.
    let centre = vec3<f32>(0.0);
    let t = closest_points_segments(centre, centre, q0, q1).y;
    let closest = q0 + t * (q1 - q0);
    let distance = length(closest);
    // 4. Separation.
    let separation = distance - sphere.params.x - capsule.params.x;
    if separation > margin {
        return no_contact();
    }
    // 3. Normal.
    var normal = any_orthonormal_vector(normalize(q1 - q0));
    let unit = try_normalize(closest);
    if unit.w != 0.0 {
        normal = unit.xyz;
    }
    let surface_a = normal * sphere.params.x;
    let surface_b = closest - normal * capsule.params.x;
    var m = contact_manifold(normal, separation);
    push_point(&m, 0.5 * (surface_a + surface_b), -separation, feature_id(FEATURE_OTHER, 0u, 0u, 0u));
    return m;
}

// capsule_capsule.rs, in A's frame: the contact point for points on the two core segments, with
// its own gap along the normal.
fn capsule_pair_point(m: ptr<function, GpuManifold>, on_a: vec3<f32>, on_b: vec3<f32>, radius_a: f32, radius_b: f32, low: u32) -> f32 {
    let normal = (*m).normal;
    let gap = dot(on_b - on_a, normal) - radius_a - radius_b;
    let surface_a = on_a + normal * radius_a;
    let surface_b = on_b - normal * radius_b;
    (*m).points[(*m).count] = vec4<f32>(0.5 * (surface_a + surface_b), -gap);
    (*m).ids[(*m).count] = feature_id(FEATURE_OTHER, 0u, 0u, low);
    return gap;
}

fn collide_capsule_capsule(body_a: GpuBody, capsule_a: GpuShape, body_b: GpuBody, capsule_b: GpuShape, margin: f32) -> GpuManifold {
    // 1. B's segment in A's frame.
    let b_in_a = relative_pose(body_a, body_b);
    let p0 = capsule_end(capsule_a, 0u);
    let p1 = capsule_end(capsule_a, 1u);
    let q0 = pose_point(b_in_a.q, b_in_a.t, capsule_end(capsule_b, 0u));
    let q1 = pose_point(b_in_a.q, b_in_a.t, capsule_end(capsule_b, 1u));
    let radii = capsule_a.params.x + capsule_b.params.x;
    // 2. Closest points, separation, normal.
    let st = closest_points_segments(p0, p1, q0, q1);
    let closest_a = p0 + st.x * (p1 - p0);
    let closest_b = q0 + st.y * (q1 - q0);
    let separation = distance(closest_a, closest_b) - radii;
    if separation > margin {
        return no_contact();
    }
    let axis_b = q1 - q0;
    let axis_cross = cross(vec3<f32>(0.0, 1.0, 0.0), axis_b);
    let parallel = length(axis_cross) <= CAPSULE_PARALLEL_SINE * length(axis_b);
    var normal = vec3<f32>(1.0, 0.0, 0.0);
    let between = try_normalize(closest_b - closest_a);
    let across = try_normalize(axis_cross);
    if between.w != 0.0 {
        normal = between.xyz;
    } else if across.w != 0.0 && !parallel {
        normal = across.xyz;
    }
    var m = contact_manifold(normal, separation);
    // 3. Parallel: the overlap of B's segment on A's axis (local Y), clipped to A's segment.
    let lower = max(min(q0.y, q1.y), p0.y);
    let upper = min(max(q0.y, q1.y), p1.y);
    if parallel && upper > lower {
        for (var low = 0u; low < 2u; low++) {
            let y = select(lower, upper, low == 1u);
            let u = clamp((y - q0.y) / axis_b.y, 0.0, 1.0);
            let gap = capsule_pair_point(&m, vec3<f32>(0.0, y, 0.0), q0 + u * axis_b, capsule_a.params.x, capsule_b.params.x, low);
            if gap <= margin {
                m.count += 1u;
            }
        }
    }
    if m.count == 0u {
        capsule_pair_point(&m, closest_a, closest_b, capsule_a.params.x, capsule_b.params.x, 0u);
        m.count = 1u;
    }
    return m;
}

// halfspace_sphere.rs, in A's (the half-space's) frame; params: unit normal xyz, offset w.
fn collide_halfspace_sphere(body_a: GpuBody, halfspace: GpuShape, body_b: GpuBody, sphere: GpuShape, margin: f32) -> GpuManifold {
    // 1. The centre in A's frame.
    let centre = relative_pose(body_a, body_b).t;
    // 2. Separation, normal.
    let normal = halfspace.params.xyz;
    let plane_distance = dot(normal, centre) - halfspace.params.w;
    let separation = plane_distance - sphere.params.x;
    if separation > margin {
        return no_contact();
    }
    // 3. One point.
    let on_plane = centre - normal * plane_distance;
    let surface_b = centre - normal * sphere.params.x;
    var m = contact_manifold(normal, separation);
    push_point(&m, 0.5 * (on_plane + surface_b), -separation, feature_id(FEATURE_OTHER, 0u, 0u, 0u));
    return m;
}

// halfspace_capsule.rs, in A's frame.
fn collide_halfspace_capsule(body_a: GpuBody, halfspace: GpuShape, body_b: GpuBody, capsule: GpuShape, margin: f32) -> GpuManifold {
    // 1. The segment's ends in A's frame.
    let b_in_a = relative_pose(body_a, body_b);
    let normal = halfspace.params.xyz;
    let radius = capsule.params.x;
    let ends = array<vec3<f32>, 2>(
        pose_point(b_in_a.q, b_in_a.t, capsule_end(capsule, 0u)),
        pose_point(b_in_a.q, b_in_a.t, capsule_end(capsule, 1u)),
    );
    let plane_distances = vec2<f32>(dot(normal, ends[0]), dot(normal, ends[1])) - halfspace.params.w;
    // 3. The manifold separation: the lower end's.
    let separation = min(plane_distances.x, plane_distances.y) - radius;
    if separation > margin {
        return no_contact();
    }
    // 2. Each end within the margin is a point.
    var m = contact_manifold(normal, separation);
    for (var end = 0u; end < 2u; end++) {
        let end_separation = plane_distances[end] - radius;
        if end_separation > margin {
            continue;
        }
        let on_plane = ends[end] - normal * plane_distances[end];
        let surface_b = ends[end] - normal * radius;
        push_point(&m, 0.5 * (on_plane + surface_b), -end_separation, feature_id(FEATURE_OTHER, 0u, 0u, end));
    }
    return m;
}

// halfspace_hull.rs, in A's frame: the hull's vertices within the margin are reduced by
// add_clipped_points, which places each midway between its vertex and the plane.
fn collide_halfspace_hull(body_a: GpuBody, halfspace: GpuShape, body_b: GpuBody, hull: GpuShape, margin: f32) -> GpuManifold {
    // 1. Candidates and the separation.
    let b_in_a = relative_pose(body_a, body_b);
    let normal = halfspace.params.xyz;
    let offset = halfspace.params.w;
    var separation = F32_MAX;
    var candidates = 0u;
    for (var i = 0u; i < hull.vertex_count; i++) {
        let distance = dot(normal, pose_point(b_in_a.q, b_in_a.t, hull_vertex(hull, i))) - offset;
        if distance <= margin {
            separation = min(separation, distance);
            candidates += 1u;
        }
    }
    if candidates == 0u {
        return no_contact();
    }
    var m = contact_manifold(normal, separation);
    // 2. and 3.: at most four, midway between vertex and plane. Candidates that fit the polygon
    // buffer are copied there in index order (reduce_to_four's lowest-index ties are kept) so
    // the reduction's passes run over them alone; more are read from the hull in every pass.
    var vertices = Candidates(0u, true, hull, b_in_a.q, b_in_a.t, false);
    if candidates <= MAX_CLIP_VERTICES {
        poly_len[0] = 0u;
        for (var i = 0u; i < hull.vertex_count; i++) {
            let p = pose_point(b_in_a.q, b_in_a.t, hull_vertex(hull, i));
            if dot(normal, p) - offset <= margin {
                poly_push(0u, p, feature_id(FEATURE_OTHER, 0u, 0u, i), i);
            }
        }
        vertices = polygon_candidates(0u);
    }
    let tolerance = CONTACT_REDUCTION_TOLERANCE * (halfspace.radius + hull.radius);
    add_clipped_points(vertices, normal, offset, margin, tolerance, &m);
    return m;
}

// sphere_hull.rs, in B's (the hull's) frame.
fn collide_sphere_hull(body_a: GpuBody, sphere: GpuShape, body_b: GpuBody, hull: GpuShape, margin: f32) -> GpuManifold {
    let radius = sphere.params.x;
    // 1. The centre in B's frame; the face of largest plane distance.
    let centre = relative_pose(body_b, body_a).t;
    var face = 0u;
    var plane_distance = -F32_MAX;
    for (var f = 0u; f < hull.face_count; f++) {
        let plane = planes[hull.first_face + f];
        let d = dot(plane.xyz, centre) - plane.w;
        if d > plane_distance {
            face = f;
            plane_distance = d;
        }
    }
    if plane_distance - radius > margin {
        return no_contact();
    }
    // 2. Outside: GJK, point against hull.
    var outside = ClosestPoints(false, 0.0, vec3<f32>(0.0), vec3<f32>(0.0), vec3<f32>(0.0), 0.0);
    if plane_distance > 0.0 {
        outside = gjk_closest_points(gjk_point(centre), gjk_hull(hull, vec4<f32>(0.0, 0.0, 0.0, 1.0), vec3<f32>(0.0)));
    }
    var normal: vec3<f32>;
    var separation: f32;
    var on_hull: vec3<f32>;
    var id: u32;
    if outside.found {
        normal = outside.direction;
        separation = outside.distance - radius;
        on_hull = outside.point_b;
        id = feature_id(FEATURE_OTHER, 0u, 0u, 0u);
    } else {
        // 3. Inside: the face of largest plane distance.
        let face_normal = planes[hull.first_face + face].xyz;
        normal = -face_normal;
        separation = plane_distance - radius;
        on_hull = centre - face_normal * plane_distance;
        id = feature_id(FEATURE_OTHER, 1u, 0u, face);
    }
    if separation > margin {
        return no_contact();
    }
    // 4. One point.
    let on_sphere = centre + normal * radius;
    var m = contact_manifold(normal, separation);
    push_point(&m, 0.5 * (on_sphere + on_hull), -separation, id);
    return m;
}

// capsule_hull.rs step 3 (segment_hull_penetration): SAT of a penetrating segment against the
// hull (B's frame) given the best face of step 1. The normal from the segment toward the hull,
// the deepest segment point, the hull point it faces, their signed gap along the normal.
struct SegmentContact {
    normal: vec3<f32>,
    on_segment: vec3<f32>,
    on_hull: vec3<f32>,
    gap: f32,
}

fn segment_hull_penetration(hull: GpuShape, p0: vec3<f32>, p1: vec3<f32>, face: u32, face_separation: f32, radius: f32) -> SegmentContact {
    let direction = p1 - p0;
    let scale = hull.radius + 0.5 * length(direction) + radius;
    var found = false;
    var best_axis = vec3<f32>(0.0);
    var best_separation = 0.0;
    var best_edge = 0u;
    for (var i = 0u; i < hull.edge_count; i++) {
        let edge = edges[hull.first_edge + i];
        let n0 = planes[hull.first_face + edge_faces(edge).x].xyz;
        let n1 = planes[hull.first_face + edge_faces(edge).y].xyz;
        // The edge's Gauss-map arc must cross the segment's great circle.
        if dot(n0, direction) * dot(n1, direction) >= 0.0 {
            continue;
        }
        let e0 = hull_vertex(hull, edge.v0);
        let edge_direction = hull_vertex(hull, edge.v1) - e0;
        let c = cross(direction, edge_direction);
        let l = length(c);
        if l < PARALLEL_EDGE_SINE * length(direction) * length(edge_direction) {
            continue;
        }
        // Outward from the hull at this edge.
        let axis = select(c, -c, dot(c, n0 + n1) < 0.0) / l;
        let separation = dot(axis, p0 - e0);
        if !found || separation > best_separation {
            found = true;
            best_axis = axis;
            best_separation = separation;
            best_edge = i;
        }
    }
    if found && best_separation > face_separation + PRIMITIVE_AXIS_PREFERENCE_TOLERANCE * scale {
        let edge = edges[hull.first_edge + best_edge];
        let e0 = hull_vertex(hull, edge.v0);
        let e1 = hull_vertex(hull, edge.v1);
        let st = closest_points_segments(p0, p1, e0, e1);
        return SegmentContact(-best_axis, p0 + st.x * direction, e0 + st.y * (e1 - e0), best_separation);
    }
    let plane = planes[hull.first_face + face];
    var deepest = p1;
    if dot(plane.xyz, p0) - plane.w <= dot(plane.xyz, p1) - plane.w {
        deepest = p0;
    }
    return SegmentContact(-plane.xyz, deepest, deepest - plane.xyz * face_separation, face_separation);
}

// capsule_hull.rs step 4 (clip_on_face): the two-point manifold of a capsule lying on a hull
// face (B's frame), or no points when the normal or the segment is not close enough to a face,
// the face separation falls short of `separation` by more than `preference`, or no clipped end
// is within the margin.
fn clip_capsule_on_face(hull: GpuShape, p0: vec3<f32>, p1: vec3<f32>, normal: vec3<f32>, radius: f32, separation: f32, preference: f32, margin: f32) -> GpuManifold {
    var face = 0u;
    var alignment = -F32_MAX;
    for (var f = 0u; f < hull.face_count; f++) {
        let a = -dot(planes[hull.first_face + f].xyz, normal);
        if a > alignment {
            face = f;
            alignment = a;
        }
    }
    let plane = planes[hull.first_face + face];
    let face_normal = plane.xyz;
    let direction = p1 - p0;
    let max_cos = sqrt(1.0 - CAPSULE_FACE_SINE * CAPSULE_FACE_SINE);
    if alignment < max_cos || abs(dot(face_normal, direction)) > CAPSULE_FACE_SINE * length(direction) {
        return no_contact();
    }
    let face_separation = min(dot(face_normal, p0) - plane.w, dot(face_normal, p1) - plane.w) - radius;
    if face_separation < separation - preference {
        return no_contact();
    }
    // Clip the segment's parameter range by the face's side planes.
    let face_range = face_loop(hull, face);
    var t_min = 0.0;
    var t_max = 1.0;
    for (var k = 0u; k < face_range.y; k++) {
        let v0 = hull_vertex(hull, face_loops[face_range.x + k]);
        let v1 = hull_vertex(hull, face_loops[face_range.x + next_in_loop(k, face_range.y)]);
        let side = cross(v1 - v0, face_normal);
        let d0 = dot(side, p0 - v0);
        let d1 = dot(side, p1 - v0);
        if d0 > 0.0 && d1 > 0.0 {
            return no_contact();
        }
        if d0 > 0.0 {
            t_min = max(t_min, d0 / (d0 - d1));
        } else if d1 > 0.0 {
            t_max = min(t_max, d0 / (d0 - d1));
        }
    }
    if t_min >= t_max {
        return no_contact();
    }
    var m = contact_manifold(-face_normal, separation);
    for (var end = 0u; end < 2u; end++) {
        let p = p0 + select(t_min, t_max, end == 1u) * direction;
        let plane_distance = dot(face_normal, p) - plane.w;
        let gap = plane_distance - radius;
        if gap > margin {
            continue;
        }
        let position = p - face_normal * (0.5 * (plane_distance + radius));
        push_point(&m, position, -gap, feature_id(FEATURE_OTHER, 1u, end, face));
    }
    if m.count == 0u {
        return no_contact();
    }
    return m;
}

// capsule_hull.rs, in B's (the hull's) frame.
fn collide_capsule_hull(body_a: GpuBody, capsule: GpuShape, body_b: GpuBody, hull: GpuShape, margin: f32) -> GpuManifold {
    let a_in_b = relative_pose(body_b, body_a);
    let p0 = pose_point(a_in_b.q, a_in_b.t, capsule_end(capsule, 0u));
    let p1 = pose_point(a_in_b.q, a_in_b.t, capsule_end(capsule, 1u));
    let radius = capsule.params.x;
    // 1. Face query.
    var face = 0u;
    var face_separation = -F32_MAX;
    for (var f = 0u; f < hull.face_count; f++) {
        let plane = planes[hull.first_face + f];
        let s = min(dot(plane.xyz, p0) - plane.w, dot(plane.xyz, p1) - plane.w);
        if s > face_separation {
            face = f;
            face_separation = s;
        }
    }
    if face_separation - radius > margin {
        return no_contact();
    }
    // 2. and 3.: GJK (segment against hull), or the penetration SAT.
    let outside = gjk_closest_points(gjk_segment(p0, p1), gjk_hull(hull, vec4<f32>(0.0, 0.0, 0.0, 1.0), vec3<f32>(0.0)));
    var contact: SegmentContact;
    if outside.found {
        contact = SegmentContact(outside.direction, outside.point_a, outside.point_b, outside.distance);
    } else {
        contact = segment_hull_penetration(hull, p0, p1, face, face_separation, radius);
    }
    let separation = contact.gap - radius;
    if separation > margin {
        return no_contact();
    }
    // 4. A capsule lying on a face gets that face's clipped segment.
    let scale = hull.radius + capsule.params.y + radius;
    let preference = PRIMITIVE_AXIS_PREFERENCE_TOLERANCE * scale;
    let clipped = clip_capsule_on_face(hull, p0, p1, contact.normal, radius, separation, preference, margin);
    if clipped.count > 0u {
        return clipped;
    }
    var m = contact_manifold(contact.normal, separation);
    let position = 0.5 * (contact.on_segment + contact.normal * radius + contact.on_hull);
    push_point(&m, position, -separation, feature_id(FEATURE_OTHER, 0u, 0u, 0u));
    return m;
}

// The manifold of pair `index` whose shapes are not both hulls (steps 1 to 3).
fn collide_primitives(index: u32, sat: GpuSatResult) -> GpuManifold {
    let pair = pair_to_run(pairs[index]);
    let margin = params.margin;
    // 1. Routine order.
    var body_a = bodies[pair.x];
    var body_b = bodies[pair.y];
    let swap = primitive_rank(shapes[body_b.shape].kind) < primitive_rank(shapes[body_a.shape].kind);
    if swap {
        let first = body_a;
        body_a = body_b;
        body_b = first;
    }
    let a = shapes[body_a.shape];
    let b = shapes[body_b.shape];
    if a.kind == SHAPE_TRIMESH || b.kind == SHAPE_TRIMESH || a.kind == SHAPE_COMPOUND || b.kind == SHAPE_COMPOUND {
        return host_manifold(sat);
    }
    // 2. The routine; in_b: it computed in its B's frame.
    var m = no_contact();
    var in_b = false;
    switch a.kind {
        case SHAPE_HALF_SPACE: {
            if b.kind == SHAPE_SPHERE {
                m = collide_halfspace_sphere(body_a, a, body_b, b, margin);
            } else if b.kind == SHAPE_CAPSULE {
                m = collide_halfspace_capsule(body_a, a, body_b, b, margin);
            } else if is_hull(b) {
                m = collide_halfspace_hull(body_a, a, body_b, b, margin);
            }
        }
        case SHAPE_SPHERE: {
            if b.kind == SHAPE_SPHERE {
                m = collide_sphere_sphere(body_a, a, body_b, b, margin);
            } else if b.kind == SHAPE_CAPSULE {
                m = collide_sphere_capsule(body_a, a, body_b, b, margin);
            } else {
                m = collide_sphere_hull(body_a, a, body_b, b, margin);
                in_b = true;
            }
        }
        case SHAPE_CAPSULE: {
            if b.kind == SHAPE_CAPSULE {
                m = collide_capsule_capsule(body_a, a, body_b, b, margin);
            } else {
                m = collide_capsule_hull(body_a, a, body_b, b, margin);
                in_b = true;
            }
        }
        default: {
            // Both hulls: clip.wgsl's path, never here.
            m.status = MANIFOLD_HOST;
        }
    }
    if m.status == MANIFOLD_HOST || loops_cut_short() {
        return host_manifold(sat);
    }
    // 3. Into the given pair's A frame and order: the routine's frame is the given B's when it
    // is the run pair's B (in_b != swap) or the run pair is the given one reversed; its normal
    // runs from the given B when its A is the run pair's B (swap) or the pair was reversed.
    let given = pairs[index];
    let reversed = runs_reversed(given);
    if m.status == MANIFOLD_CLIPPED {
        if (in_b != swap) != reversed {
            let to_a = relative_pose(bodies[given.x], bodies[given.y]);
            m.normal = quat_rotate(to_a.q, m.normal);
            for (var k = 0u; k < m.count; k++) {
                m.points[k] = vec4<f32>(pose_point(to_a.q, to_a.t, m.points[k].xyz), m.points[k].w);
            }
        }
        if swap != reversed {
            m.normal = -m.normal;
            for (var k = 0u; k < m.count; k++) {
                m.ids[k] = swapped_feature_id(m.ids[k]);
            }
        }
    }
    return m;
}

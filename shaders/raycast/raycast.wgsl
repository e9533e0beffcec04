// Ray casts against posed bodies through a BVH, one ray per invocation. Host: src/raycast/gpu.rs.
// Every struct and constant mirrors src/raycast/layout.rs or src/bvh/cpu.rs ("must match";
// checked by tests/raycast_layout.rs). The steps are the CPU's (src/raycast/cpu.rs, bvh.rs,
// clip.rs, cast_*.rs), same numbers and names:
// 1. Bounds guard.
// 2. The ray's origin in the BVH frame, `(origin_hi - bvh_hi) + (origin_lo - bvh_lo)`.
// 3. Traverse the BVH with a stack of (node, entry distance), each inner node testing both
//    children's boxes (bvh.rs step 3); cast the ray at each leaf body in the body's frame
//    (cast_body); record hits in the ray's slots, nearest first (ties: lower body).
// 4. Cast the ray at every unbounded body (half-spaces).
// 5. Flag a ray whose loops the driver may have cut short, write the hit count.
// Triangle meshes and compounds: cast_complex, from raycast_complex.wgsl (or, for shape lists
// with neither, raycast_convex_only.wgsl, which binds no tables for them).
//
// Compiled after shaders/common/quat.wgsl (quat_rotate, quat_conjugate) and
// shaders/bvh/layout.wgsl (BvhNode, BVH_STACK_SIZE; see RAYCAST_WGSL).

// Must match crate::raycast::layout::WORKGROUP_SIZE.
const WORKGROUP_SIZE: u32 = 64u;
// Must match crate::raycast::MIN_DIRECTION_COMPONENT.
const MIN_DIRECTION_COMPONENT: f32 = 1e-20;
// Must match crate::raycast::SPHERE_TEST_SLACK.
const SPHERE_TEST_SLACK: f32 = 1e-5;
// Must match crate::raycast::layout::SHAPE_*.
const SHAPE_HULL: u32 = 0u;
const SHAPE_BOX: u32 = 1u;
const SHAPE_SPHERE: u32 = 2u;
const SHAPE_CAPSULE: u32 = 3u;
const SHAPE_HALF_SPACE: u32 = 4u;
const SHAPE_CYLINDER: u32 = 5u;
const SHAPE_TRIMESH: u32 = 6u;
const SHAPE_COMPOUND: u32 = 7u;
// Must match crate::raycast::layout::INCOMPLETE_BIT and STACK_OVERFLOW_BIT.
const INCOMPLETE_BIT: u32 = 1u;
const STACK_OVERFLOW_BIT: u32 = 2u;
// Largest finite f32: the CPU's infinities are F32_MAX here.
const F32_MAX: f32 = 0x1.fffffep+127f;

// Must match crate::raycast::layout::GpuRay (world; origin split hi + lo).
struct GpuRay {
    origin_hi: vec3<f32>,
    max_distance: f32,
    origin_lo: vec3<f32>,
    _pad0: u32,
    direction: vec3<f32>,
    _pad1: u32,
}

// Must match crate::raycast::layout::GpuRayShape.
struct GpuRayShape {
    params: vec4<f32>,
    kind: u32,
    first: u32,
    count: u32,
    _pad: u32,
}

// Must match crate::raycast::layout::GpuRayHit (normal in world space).
struct GpuRayHit {
    normal: vec3<f32>,
    distance: f32,
    body: u32,
    feature: u32,
    _pad1: u32,
    _pad2: u32,
}

// Must match crate::raycast::layout::GpuRayCount.
struct GpuRayCount {
    hits: u32,
    flags: u32,
}

// Must match crate::raycast::layout::GpuRayParams.
struct GpuRayParams {
    bvh_origin_hi: vec3<f32>,
    unbounded_count: u32,
    bvh_origin_lo: vec3<f32>,
    hit_slots: u32,
    closest: u32,
    node_count: u32,
    unbounded_first: u32,
}

// Group 0: shapes, uploaded once. Planes: unit outward normal xyz, offset w (hull frame).
@group(0) @binding(0) var<storage, read> shapes: array<GpuRayShape>;
@group(0) @binding(1) var<storage, read> planes: array<vec4<f32>>;
// Group 1: per call. `rays`, `counts` and `hits` are bound per dispatch chunk at one offset.
@group(1) @binding(0) var<storage, read> bodies: array<GpuBody>;
@group(1) @binding(1) var<storage, read> nodes: array<BvhNode>;
// The BVH's leaf bodies, then the unbounded bodies (from params.unbounded_first).
@group(1) @binding(2) var<storage, read> body_lists: array<u32>;
@group(1) @binding(3) var<storage, read> rays: array<GpuRay>;
@group(1) @binding(4) var<storage, read_write> counts: array<GpuRayCount>;
@group(1) @binding(5) var<storage, read_write> hits: array<GpuRayHit>;
@group(1) @binding(6) var<uniform> params: GpuRayParams;

// crate::raycast::LocalRay: a ray in a body's frame.
struct LocalRay {
    origin: vec3<f32>,
    direction: vec3<f32>,
    max_distance: f32,
}

// crate::raycast::LocalHit plus whether there is one and which part (GpuRayHit::feature).
struct LocalHit {
    hit: bool,
    distance: f32,
    normal: vec3<f32>,
    feature: u32,
}

fn no_hit() -> LocalHit {
    return LocalHit(false, 0.0, vec3<f32>(0.0), 0u);
}

fn inside(ray: LocalRay) -> LocalHit {
    return LocalHit(true, 0.0, -ray.direction, 0u);
}

// STACK_OVERFLOW_BIT when a mesh walk's stack was full (never for meshes TriMesh builds).
var<private> complex_flags: u32;

// clip.rs: the ray range inside the planes clipped so far.
struct Clip {
    enter: f32,
    exit: f32,
    has_entry: bool,
    entry_normal: vec3<f32>,
}

// clip.rs step 1.
fn clip_new(ray: LocalRay) -> Clip {
    return Clip(-F32_MAX, ray.max_distance, false, vec3<f32>(0.0));
}

// clip.rs steps 2 and 3: false once the ray misses.
fn clip_plane(clip: ptr<function, Clip>, ray: LocalRay, normal: vec3<f32>, offset: f32) -> bool {
    let denom = dot(normal, ray.direction);
    let distance = dot(normal, ray.origin) - offset;
    if denom == 0.0 {
        return distance <= 0.0;
    }
    let t = -distance / denom;
    if denom < 0.0 {
        if t > (*clip).enter {
            (*clip).enter = t;
            (*clip).has_entry = true;
            (*clip).entry_normal = normal;
        }
    } else if t < (*clip).exit {
        (*clip).exit = t;
    }
    return (*clip).enter <= (*clip).exit && (*clip).exit >= 0.0;
}

// clip.rs Clip::range: steps 2 and 3 for a range inside a curved surface.
fn clip_range(clip: ptr<function, Clip>, enter: f32, exit: f32, normal: vec3<f32>) -> bool {
    if enter > (*clip).enter {
        (*clip).enter = enter;
        (*clip).has_entry = true;
        (*clip).entry_normal = normal;
    }
    if exit < (*clip).exit {
        (*clip).exit = exit;
    }
    return (*clip).enter <= (*clip).exit && (*clip).exit >= 0.0;
}

// clip.rs step 4.
fn clip_hit(clip: Clip, ray: LocalRay) -> LocalHit {
    if clip.has_entry && clip.enter >= 0.0 {
        return LocalHit(true, clip.enter, clip.entry_normal, 0u);
    }
    return inside(ray);
}

// cast_hull.rs step 1: whether the ray passes the padded bounding sphere (centre xyz, radius w) by.
fn sphere_missed(sphere: vec4<f32>, ray: LocalRay) -> bool {
    let to_centre = sphere.xyz - ray.origin;
    let along = clamp(dot(to_centre, ray.direction), 0.0, ray.max_distance);
    let gap = length(ray.direction * along - to_centre);
    return gap > sphere.w + SPHERE_TEST_SLACK * (length(to_centre) + along);
}

// cast_hull.rs: 1. the bounding sphere (shape.params), 2. every face plane.
fn cast_hull(shape: GpuRayShape, ray: LocalRay) -> LocalHit {
    if sphere_missed(shape.params, ray) {
        return no_hit();
    }
    var clip = clip_new(ray);
    for (var i = 0u; i < shape.count; i++) {
        let plane = planes[shape.first + i];
        if !clip_plane(&clip, ray, plane.xyz, plane.w) {
            return no_hit();
        }
    }
    return clip_hit(clip, ray);
}

// cast_box.rs: the six axis planes, -X, +X, -Y, +Y, -Z, +Z.
fn cast_box(half_extents: vec3<f32>, ray: LocalRay) -> LocalHit {
    var clip = clip_new(ray);
    let axes = mat3x3<f32>(vec3<f32>(1.0, 0.0, 0.0), vec3<f32>(0.0, 1.0, 0.0), vec3<f32>(0.0, 0.0, 1.0));
    for (var axis = 0u; axis < 3u; axis++) {
        let normal = axes[axis];
        let h = half_extents[axis];
        if !clip_plane(&clip, ray, -normal, h) || !clip_plane(&clip, ray, normal, h) {
            return no_hit();
        }
    }
    return clip_hit(clip, ray);
}

// cast_sphere.rs, same steps.
fn cast_sphere(radius: f32, ray: LocalRay) -> LocalHit {
    let o = ray.origin;
    let d = ray.direction;
    // Step 1.
    let c = dot(o, o) - radius * radius;
    if c <= 0.0 {
        return inside(ray);
    }
    // Step 2.
    let b = dot(o, d);
    if b > 0.0 {
        return no_hit();
    }
    // Step 3.
    let q = o - b * d;
    let disc = radius * radius - dot(q, q);
    if disc < 0.0 {
        return no_hit();
    }
    // Steps 4 and 5.
    let t = c / (sqrt(disc) - b);
    if t > ray.max_distance {
        return no_hit();
    }
    return LocalHit(true, t, normalize_or(o + t * d, -d), 0u);
}

fn normalize_or(v: vec3<f32>, fallback: vec3<f32>) -> vec3<f32> {
    let length = sqrt(dot(v, v));
    if length > 0.0 {
        return v / length;
    }
    return fallback;
}

// cast_capsule.rs, same steps.
fn cast_capsule(half_height: f32, radius: f32, ray: LocalRay) -> LocalHit {
    let o = ray.origin;
    let d = ray.direction;
    // Step 1.
    let on_axis = vec3<f32>(0.0, clamp(o.y, -half_height, half_height), 0.0);
    let off_axis = o - on_axis;
    if dot(off_axis, off_axis) <= radius * radius {
        return inside(ray);
    }
    // Step 2.
    let a = d.x * d.x + d.z * d.z;
    let b = o.x * d.x + o.z * d.z;
    let c = o.x * o.x + o.z * o.z - radius * radius;
    if a > 0.0 && c > 0.0 && b < 0.0 {
        let cross_y = o.x * d.z - o.z * d.x;
        let disc = a * radius * radius - cross_y * cross_y;
        if disc >= 0.0 {
            let t = c / (sqrt(disc) - b);
            let y = o.y + t * d.y;
            if abs(y) <= half_height {
                if t > ray.max_distance {
                    return no_hit();
                }
                let normal = normalize_or(vec3<f32>(o.x + t * d.x, 0.0, o.z + t * d.z), -d);
                return LocalHit(true, t, normal, 0u);
            }
        }
    }
    // Step 3.
    var low_ray = ray;
    low_ray.origin = o - vec3<f32>(0.0, -half_height, 0.0);
    var high_ray = ray;
    high_ray.origin = o - vec3<f32>(0.0, half_height, 0.0);
    let low = cast_sphere(radius, low_ray);
    let high = cast_sphere(radius, high_ray);
    if high.hit && (!low.hit || high.distance < low.distance) {
        return high;
    }
    return low;
}

// cast_cylinder.rs, same steps.
fn cast_cylinder(half_height: f32, radius: f32, ray: LocalRay) -> LocalHit {
    let o = ray.origin;
    let d = ray.direction;
    // Step 1.
    var clip = clip_new(ray);
    if !clip_plane(&clip, ray, vec3<f32>(0.0, -1.0, 0.0), half_height) || !clip_plane(&clip, ray, vec3<f32>(0.0, 1.0, 0.0), half_height) {
        return no_hit();
    }
    // Step 2.
    let a = d.x * d.x + d.z * d.z;
    let b = o.x * d.x + o.z * d.z;
    let c = o.x * o.x + o.z * o.z - radius * radius;
    if a == 0.0 {
        if c <= 0.0 {
            return clip_hit(clip, ray);
        }
        return no_hit();
    }
    let cross_y = o.x * d.z - o.z * d.x;
    let disc = a * radius * radius - cross_y * cross_y;
    if disc < 0.0 {
        return no_hit();
    }
    let root = sqrt(disc);
    let q = -(b + select(root, -root, b < 0.0));
    let first = q / a;
    let second = select(c / q, 0.0, q == 0.0);
    let enter = min(first, second);
    let exit = max(first, second);
    let entry = o + enter * d;
    let normal = normalize_or(vec3<f32>(entry.x, 0.0, entry.z), -d);
    if !clip_range(&clip, enter, exit, normal) {
        return no_hit();
    }
    // Step 3.
    return clip_hit(clip, ray);
}

// cast_shape.rs cast_body: the world ray in the body's frame, the shape's routine.
fn cast_body(body: GpuBody, ray: GpuRay, max_distance: f32) -> LocalHit {
    let inverse = quat_conjugate(body.rotation);
    let relative = (ray.origin_hi - body.translation_hi) + (ray.origin_lo - body.translation_lo);
    let local = LocalRay(quat_rotate(inverse, relative), quat_rotate(inverse, ray.direction), max_distance);
    if any(abs(local.origin) > vec3<f32>(F32_MAX)) {
        return no_hit();
    }
    let shape = shapes[body.shape];
    if shape.kind == SHAPE_TRIMESH || shape.kind == SHAPE_COMPOUND {
        return cast_complex(shape, local);
    }
    return cast_convex(shape, local);
}

// cast_shape.rs cast_shape for every kind but meshes and compounds (a ray in the shape's frame).
fn cast_convex(shape: GpuRayShape, local: LocalRay) -> LocalHit {
    switch shape.kind {
        case SHAPE_HULL: {
            return cast_hull(shape, local);
        }
        case SHAPE_BOX: {
            return cast_box(shape.params.xyz, local);
        }
        case SHAPE_SPHERE: {
            return cast_sphere(shape.params.x, local);
        }
        case SHAPE_CAPSULE: {
            return cast_capsule(shape.params.x, shape.params.y, local);
        }
        case SHAPE_CYLINDER: {
            return cast_cylinder(shape.params.x, shape.params.y, local);
        }
        default: {
            var clip = clip_new(local);
            if !clip_plane(&clip, local, shape.params.xyz, shape.params.w) {
                return no_hit();
            }
            return clip_hit(clip, local);
        }
    }
}

// bvh.rs inverse_direction.
fn inverse_direction(d: vec3<f32>) -> vec3<f32> {
    let tiny = abs(d) < vec3<f32>(MIN_DIRECTION_COMPONENT);
    let signed_tiny = select(vec3<f32>(MIN_DIRECTION_COMPONENT), vec3<f32>(-MIN_DIRECTION_COMPONENT), d < vec3<f32>(0.0));
    return vec3<f32>(1.0) / select(d, signed_tiny, tiny);
}

// bvh.rs BvhNode::entry: the distance at which the ray enters the box within [0, limit], or
// NOT_ENTERED.
const NOT_ENTERED: f32 = -1.0;
fn node_entry(node: BvhNode, origin: vec3<f32>, inverse: vec3<f32>, limit: f32) -> f32 {
    let t1 = (node.min - origin) * inverse;
    let t2 = (node.max - origin) * inverse;
    let low = min(t1, t2);
    let high = max(t1, t2);
    let enter = max(max(max(low.x, low.y), low.z), 0.0);
    let exit = min(min(min(high.x, high.y), high.z), limit);
    return select(NOT_ENTERED, enter, enter <= exit);
}

// Current traversal limit: the nearest hit so far in closest mode, else the ray's own.
fn current_limit(base: u32, found: u32, ray: GpuRay) -> f32 {
    if params.closest != 0u && found > 0u {
        return hits[base].distance;
    }
    return ray.max_distance;
}

// Step 3/4: tests body `index` and records a hit in the ray's slots (insertion, kept sorted by
// distance then body; hits beyond the slots are only counted). Returns the new hit count.
fn test_body(index: u32, ray: GpuRay, base: u32, found: u32) -> u32 {
    let body = bodies[index];
    let local = cast_body(body, ray, current_limit(base, found, ray));
    if !local.hit {
        return found;
    }
    // Renormalized as RayHit::from_local: a rotation a rounding off unit length would leave it so.
    let normal = normalize_or(quat_rotate(body.rotation, local.normal), local.normal);
    let hit = GpuRayHit(normal, local.distance, index, local.feature, 0u, 0u);
    var j = min(found, params.hit_slots);
    while j > 0u {
        let before = hits[base + j - 1u];
        if before.distance < hit.distance || (before.distance == hit.distance && before.body < hit.body) {
            break;
        }
        if j < params.hit_slots {
            hits[base + j] = before;
        }
        j -= 1u;
    }
    if j < params.hit_slots {
        hits[base + j] = hit;
    }
    return found + 1u;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    // 1. Bounds guard.
    let index = id.x;
    if index >= arrayLength(&rays) {
        return;
    }
    let ray = rays[index];
    let base = index * params.hit_slots;
    var found = 0u;
    var flags = 0u;

    // 2. The origin in the BVH frame.
    let origin = (ray.origin_hi - params.bvh_origin_hi) + (ray.origin_lo - params.bvh_origin_lo);
    let inverse = inverse_direction(ray.direction);

    // 3. Traverse: entries (node, bitcast entry distance), the nearer child on top.
    var stack: array<vec2<u32>, BVH_STACK_SIZE>;
    var len = 0u;
    if params.node_count > 0u {
        let enter = node_entry(nodes[0], origin, inverse, ray.max_distance);
        if enter != NOT_ENTERED {
            stack[0] = vec2<u32>(0u, bitcast<u32>(enter));
            len = 1u;
        }
    }
    while len > 0u {
        len -= 1u;
        let limit = current_limit(base, found, ray);
        if bitcast<f32>(stack[len].y) > limit {
            continue;
        }
        let node = nodes[stack[len].x];
        if node.count > 0u {
            for (var i = 0u; i < node.count; i++) {
                found = test_body(body_lists[node.first + i], ray, base, found);
            }
            continue;
        }
        if len + 2u > BVH_STACK_SIZE {
            flags |= STACK_OVERFLOW_BIT;
            break;
        }
        let a = node.first;
        let b = node.first + 1u;
        let entry_a = node_entry(nodes[a], origin, inverse, limit);
        let entry_b = node_entry(nodes[b], origin, inverse, limit);
        // The nearer child on top (ties: the first).
        let b_nearer = entry_b != NOT_ENTERED && (entry_a == NOT_ENTERED || entry_b < entry_a);
        let near = select(vec2<u32>(a, bitcast<u32>(entry_a)), vec2<u32>(b, bitcast<u32>(entry_b)), b_nearer);
        let far = select(vec2<u32>(b, bitcast<u32>(entry_b)), vec2<u32>(a, bitcast<u32>(entry_a)), b_nearer);
        if bitcast<f32>(far.y) != NOT_ENTERED {
            stack[len] = far;
            len += 1u;
        }
        if bitcast<f32>(near.y) != NOT_ENTERED {
            stack[len] = near;
            len += 1u;
        }
    }

    // 4. Unbounded bodies.
    for (var i = 0u; i < params.unbounded_count; i++) {
        found = test_body(body_lists[params.unbounded_first + i], ray, base, found);
    }

    // 5. llvmpipe stops every loop of an invocation group, silently, once ~65,535 iterations
    // are spent (see crate::gpu): a two-step loop run last is cut short exactly when the loops
    // above may have been. Its bound comes from a buffer so no compiler folds it.
    let wanted = min(2u, arrayLength(&rays) + 1u);
    var steps = 0u;
    for (var i = 0u; i < wanted; i++) {
        steps += 1u;
    }
    if steps < wanted {
        flags |= INCOMPLETE_BIT;
    }
    flags |= complex_flags;
    counts[index] = GpuRayCount(found, flags);
}

// Draws hullsat's bodies and contacts from GPU buffers (examples/render_contacts.rs).
//
// 1. vs_body / fs_body: one instanced draw per shape mesh; the instance names a body
//    (`instance_bodies`), whose pose comes from the body buffer hullsat reads too. Flat shading:
//    every triangle's vertices carry its facet normal; one directional light plus ambient.
// 2. vs_contact / fs_contact: one instance per entry of the manifold list (its count copied
//    into the indirect draw on the GPU), 48 vertices: for each of its 4 points a screen-space
//    square (6 vertices) and a screen-space strip along the normal (6).
//    Manifold points and normals are in body A's frame; A is `pairs[m.pair].x`, so world =
//    quat_rotate(A.rotation, p) + A.translation_hi + A.translation_lo. Entries that are not
//    clipped manifolds, and points past `count`, are moved outside the clip volume.
//    Contacts are nudged toward the camera by `NUDGE`, so points just inside the bodies they
//    join (points lie midway between two penetrating surfaces) still pass the depth test.
//
// Compiled after hullsat's QUAT_WGSL (quat_rotate) and LAYOUT_WGSL (GpuBody, GpuManifold,
// GpuManifoldList, MANIFOLD_CLIPPED: hullsat's own text of the structs it shares, so nothing
// here can drift from them; see render_contacts.rs `shader_source`).

// Must match render_contacts.rs `Camera`.
struct Camera {
    // World to clip space.
    view_proj: mat4x4<f32>,
    // xyz: camera position, world.
    eye: vec4<f32>,
    // xyz: unit direction toward the light, world.
    light: vec4<f32>,
    // xy: target size in pixels; z: contact marker half size, pixels; w: normal length, world.
    viewport: vec4<f32>,
}

// Must match render_contacts.rs `SHAPE_COLORS` order: hullsat's `SHAPE_*` kinds.
const SHAPE_COLORS = array<vec3<f32>, 5>(
    vec3<f32>(0.23, 0.42, 0.70), // hull
    vec3<f32>(0.85, 0.60, 0.28), // box
    vec3<f32>(0.33, 0.66, 0.38), // sphere
    vec3<f32>(0.58, 0.40, 0.70), // capsule
    vec3<f32>(0.62, 0.62, 0.60), // half-space
);
// Must match render_contacts.rs `POINT_COLOR` / `NORMAL_COLOR` (the image check looks for them).
const POINT_COLOR = vec3<f32>(1.0, 0.0, 0.0);
const NORMAL_COLOR = vec3<f32>(1.0, 1.0, 0.0);
// Half width of a normal's strip, pixels.
const NORMAL_HALF_WIDTH: f32 = 1.25;
// How far contacts move toward the camera before the depth test, world length units.
const NUDGE: f32 = 0.3;
// Share of light that reaches faces turned away from the light.
const AMBIENT: f32 = 0.28;

@group(0) @binding(0) var<uniform> camera: Camera;
@group(0) @binding(1) var<storage, read> bodies: array<GpuBody>;
@group(0) @binding(2) var<storage, read> instance_bodies: array<u32>;
@group(0) @binding(3) var<storage, read> pairs: array<vec2<u32>>;
@group(0) @binding(4) var<storage, read> manifolds: GpuManifoldList;

// A point of `body`'s frame in the world.
fn to_world(body: GpuBody, p: vec3<f32>) -> vec3<f32> {
    return quat_rotate(body.rotation, p) + (body.translation_hi + body.translation_lo);
}

// Step 1: bodies.

// Must match render_contacts.rs `MeshVertex` (its vertex attributes).
struct MeshVertex {
    @location(0) position: vec3<f32>,
    @location(1) kind: u32,
    @location(2) normal: vec3<f32>,
}

struct BodyOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) @interpolate(flat) color: vec3<f32>,
}

@vertex
fn vs_body(v: MeshVertex, @builtin(instance_index) instance: u32) -> BodyOut {
    let body = bodies[instance_bodies[instance]];
    let normal = quat_rotate(body.rotation, v.normal);
    let lit = AMBIENT + (1.0 - AMBIENT) * max(dot(normal, camera.light.xyz), 0.0);
    var out: BodyOut;
    out.clip = camera.view_proj * vec4<f32>(to_world(body, v.position), 1.0);
    out.color = SHAPE_COLORS[min(v.kind, 4u)] * lit;
    return out;
}

@fragment
fn fs_body(in: BodyOut) -> @location(0) vec4<f32> {
    return vec4<f32>(in.color, 1.0);
}

// Step 2: contacts.

// Corners of a quad as two triangles: x along (-1 start, 1 end), y across.
const QUAD = array<vec2<f32>, 6>(
    vec2<f32>(-1.0, -1.0),
    vec2<f32>(1.0, -1.0),
    vec2<f32>(-1.0, 1.0),
    vec2<f32>(-1.0, 1.0),
    vec2<f32>(1.0, -1.0),
    vec2<f32>(1.0, 1.0),
);
// Vertices per contact point: a marker quad and a normal strip.
const VERTICES_PER_POINT: u32 = 12u;

struct ContactOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) @interpolate(flat) color: vec3<f32>,
}

// `p` moved NUDGE toward the camera, in clip space.
fn nudged_clip(p: vec3<f32>) -> vec4<f32> {
    let toward_eye = normalize(camera.eye.xyz - p);
    return camera.view_proj * vec4<f32>(p + NUDGE * toward_eye, 1.0);
}

// `clip` moved by `pixels` on screen.
fn offset_pixels(clip: vec4<f32>, pixels: vec2<f32>) -> vec4<f32> {
    return vec4<f32>(clip.xy + 2.0 * pixels / camera.viewport.xy * clip.w, clip.zw);
}

@vertex
fn vs_contact(@builtin(vertex_index) vertex: u32, @builtin(instance_index) entry: u32) -> ContactOut {
    var out: ContactOut;
    // Outside the clip volume: the triangle is dropped.
    out.clip = vec4<f32>(2.0, 2.0, 2.0, 1.0);
    out.color = POINT_COLOR;
    // The draw's instance count is the list's count; a count past the list's end (a faulty
    // one) is not read past it.
    if entry >= arrayLength(&manifolds.entries) {
        return out;
    }
    let m = manifolds.entries[entry];
    let k = vertex / VERTICES_PER_POINT;
    if m.status != MANIFOLD_CLIPPED || k >= min(m.count, 4u) {
        return out;
    }
    let a = bodies[pairs[m.pair].x];
    let p = to_world(a, m.points[k].xyz);
    let corner = QUAD[vertex % 6u];
    if vertex % VERTICES_PER_POINT < 6u {
        // A square marker of half size viewport.z pixels.
        out.clip = offset_pixels(nudged_clip(p), corner * camera.viewport.z);
        return out;
    }
    // The normal, from p along rotate(A, n) for viewport.w length units, NORMAL_HALF_WIDTH
    // pixels either side of its screen direction.
    let end = p + quat_rotate(a.rotation, m.normal) * camera.viewport.w;
    let clip_start = nudged_clip(p);
    let clip_end = nudged_clip(end);
    let along = (clip_end.xy / clip_end.w - clip_start.xy / clip_start.w) * camera.viewport.xy;
    var across = vec2<f32>(1.0, 0.0);
    if dot(along, along) > 1e-6 {
        across = normalize(vec2<f32>(-along.y, along.x));
    }
    let base = select(clip_start, clip_end, corner.x > 0.0);
    out.clip = offset_pixels(base, across * corner.y * NORMAL_HALF_WIDTH);
    out.color = NORMAL_COLOR;
    return out;
}

@fragment
fn fs_contact(in: ContactOut) -> @location(0) vec4<f32> {
    return vec4<f32>(in.color, 1.0);
}

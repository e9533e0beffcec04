// Shared by the kernels (sat.wgsl, clip.wgsl, resident.wgsl): constants, the kernel-only structs
// of kernel_layout.rs, the hull geometry bindings (group 0), the per-call bindings every kernel has
// (group 1: bodies, pairs, params), the relative pose of a pair and the axis of an edge pair
// (the SAT's edge queries, and the clip kernel's retry on the deepest axis). Each kernel's source is
// quat.wgsl, layout.wgsl (the structs callers share), this file, then the kernel's own (see
// SAT_WGSL, CLIP_WGSL, RESIDENT_WGSL in the Rust host modules).
//
// Rust twin: every struct has one of the same name in src/narrowphase/gpu/kernel_layout.rs;
// tests/gpu_layout.rs checks sizes, offsets and the constants against the Rust ones.

// The kernels' type of layout.wgsl's GpuManifoldList count: the clip kernel appends to the list.
alias ManifoldListCount = atomic<u32>;

// Mirrors crate::narrowphase::gpu::kernel_layout::WORKGROUP_SIZE.
const WORKGROUP_SIZE: u32 = 64u;
// Mirrors crate::narrowphase::gpu::layout::SHAPE_*: GpuShape.kind.
const SHAPE_HULL: u32 = 0u;
const SHAPE_BOX: u32 = 1u;
const SHAPE_SPHERE: u32 = 2u;
const SHAPE_CAPSULE: u32 = 3u;
const SHAPE_HALF_SPACE: u32 = 4u;
const SHAPE_TRIMESH: u32 = 5u;
const SHAPE_COMPOUND: u32 = 6u;
// Largest finite f32: the start value of the min / max searches (the CPU uses infinities).
const F32_MAX: f32 = 0x1.fffffep+127f;
// Mirrors crate::constants::PARALLEL_EDGE_SINE (sine of the angle between edge directions).
const PARALLEL_EDGE_SINE: f32 = 1.0e-3;

// Must match layout.rs `GpuShape`: one per shape (index = Body::shape); kind SHAPE_*, size
// (Shape::size), hull ranges into the shared geometry arrays (hull and box; zero counts
// otherwise; a triangle mesh: its first triangle in first_face and BVH root in first_edge of
// the mesh tables; a compound: its first part in first_face and part count in face_count), the inner radius of the SAT's bounds and the kind's sizes in params
// (layout.rs documents them).
struct GpuShape {
    centroid: vec3<f32>,
    radius: f32,
    first_vertex: u32,
    vertex_count: u32,
    first_face: u32,
    face_count: u32,
    first_edge: u32,
    edge_count: u32,
    kind: u32,
    inner_radius: f32,
    params: vec4<f32>,
}

// True for the kinds with hull geometry (hull, box), as layout.rs GpuShape::is_hull.
fn is_hull(shape: GpuShape) -> bool {
    return shape.kind <= SHAPE_BOX;
}

// Must match layout.rs `GpuEdge`: vertex and face indices local to the hull (the two faces
// packed in `faces`, edge_faces), and the arc stretch of the faces' normals (sat.wgsl max_on_arcs).
struct GpuEdge {
    v0: u32,
    v1: u32,
    faces: u32,
    stretch: f32,
}

// The face walking `edge` from v0 to v1 (x) and the one walking it the other way (y), as
// layout.rs GpuEdge::face_pair.
fn edge_faces(edge: GpuEdge) -> vec2<u32> {
    return vec2<u32>(edge.faces & 0xffffu, edge.faces >> 16u);
}

// Must match layout.rs `GpuParams`: one per dispatch chunk (bound at a dynamic offset).
// `ordered` (0 or 1): the SAT takes slot s's pair from results[s].pair (order.wgsl wrote it;
// resident.wgsl and order.wgsl decide it per chunk).
struct GpuParams {
    margin: f32,
    pair_count: u32,
    first_pair: u32,
    ordered: u32,
    canonical: u32,
}

// Must match kernel_layout.rs `GpuCompound`: one per shape of the narrowphase, its parts for the
// compound midphase (a compound's children; any other shape is its own single part, as
// src/contact/compound.rs's Body::Shape), flags COMPOUND_* and the size of its tolerances.
struct GpuCompound {
    first_part: u32,
    part_count: u32,
    flags: u32,
    size: f32,
}

// Must match kernel_layout.rs `GpuCompoundPart`: a part's pose in its body's frame (rotation
// xyzw, translation), its shape's index in the shape table, and its box in the body's frame.
struct GpuCompoundPart {
    rotation: vec4<f32>,
    translation: vec3<f32>,
    shape: u32,
    box_min: vec3<f32>,
    _pad0: u32,
    box_max: vec3<f32>,
    _pad1: u32,
}

// Must match kernel_layout.rs `GpuCompoundRange`: one per caller pair, written by the compound
// expansion: its child pairs' sub-pair slots [first, first + count), flags COMPOUND_RANGE_*,
// and the summed sizes of its two bodies (the merge's tie tolerance, times
// CONTACT_REDUCTION_TOLERANCE).
struct GpuCompoundRange {
    first: u32,
    count: u32,
    flags: u32,
    size: f32,
    lower_rotation: vec4<f32>,
    lower_translation: vec3<f32>,
    _pad: u32,
}

// Must match kernel_layout.rs `GpuMeshPairRange`: one per caller pair, written by the mesh
// midphase (mesh_expand.wgsl): its work items [first, first + count) in BVH order, flags
// COMPOUND_RANGE_* and MESH_RANGE_SWAPPED, the body's size, its pose in the mesh's frame
// (rotation xyzw, translation) and its shape index.
struct GpuMeshPairRange {
    first: u32,
    count: u32,
    flags: u32,
    size: f32,
    rotation: vec4<f32>,
    translation: vec3<f32>,
    shape: u32,
}

// Must match kernel_layout.rs `GpuMeshItem`: a (caller pair, triangle) work item, the
// triangle's corners (mesh frame), and its sub-contact (normal, separation, status
// MANIFOLD_CLIPPED, MANIFOLD_SEPARATED or MANIFOLD_HOST, points [first_point, first_point +
// count) of the point table), then the body's (a compound's child's) shape, child index and
// pose in the mesh's frame.
struct GpuMeshItem {
    corners: array<vec4<f32>, 3>,
    normal: vec3<f32>,
    separation: f32,
    pair: u32,
    triangle: u32,
    local_triangle: u32,
    status: u32,
    first_point: u32,
    count: u32,
    shape: u32,
    child: u32,
    rotation: vec4<f32>,
    translation: vec3<f32>,
    _pad0: u32,
}

// Must match kernel_layout.rs `GpuMeshPoint`: position xyz (mesh frame) and depth w, the
// per-triangle feature id.
struct GpuMeshPoint {
    point: vec4<f32>,
    id: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

// Mirrors crate::narrowphase::gpu::kernel_layout::COMPOUND_*: GpuCompound.flags.
const COMPOUND_IS_COMPOUND: u32 = 1u;
const COMPOUND_SPHERE: u32 = 2u;
const COMPOUND_HALF_SPACE: u32 = 4u;
const COMPOUND_MESH: u32 = 8u;
// Mirrors crate::narrowphase::gpu::kernel_layout::COMPOUND_RANGE_*: GpuCompoundRange.flags.
const COMPOUND_RANGE_LISTED: u32 = 1u;
const COMPOUND_RANGE_SINGLE: u32 = 2u;
const COMPOUND_RANGE_OVERFLOW: u32 = 4u;
const COMPOUND_RANGE_HOST: u32 = 8u;
const COMPOUND_RANGE_SWAPPED: u32 = 64u;
// Mirrors crate::narrowphase::gpu::kernel_layout::MESH_RANGE_SWAPPED: GpuMeshPairRange.flags.
const MESH_RANGE_SWAPPED: u32 = 16u;
// Mirrors crate::narrowphase::gpu::kernel_layout::MESH_RANGE_COMPOUND: GpuMeshPairRange.flags.
const MESH_RANGE_COMPOUND: u32 = 32u;

// Group 0: hull geometry, uploaded once. Vertices xyz (w unused); planes normal xyz, offset w;
// face_loops (layout.rs HullTables::face_loops): for face g (global index first_face + f), its
// loop's first entry and length at [2g] and [2g + 1]; the loops (hull-local vertex indices,
// counter-clockwise seen from outside) follow the ranges.
@group(0) @binding(0) var<storage, read> vertices: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> planes: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> edges: array<GpuEdge>;
@group(0) @binding(3) var<storage, read> shapes: array<GpuShape>;
@group(0) @binding(4) var<storage, read> face_loops: array<u32>;
// Group 1: per call. `pairs` and the per-pair outputs are bound per dispatch chunk to windows
// starting at the chunk's first pair; the windows may be longer than the chunk
// (params.pair_count). Binding 2 and up are the kernel's own.
@group(1) @binding(0) var<storage, read> bodies: array<GpuBody>;
@group(1) @binding(1) var<storage, read> pairs: array<vec2<u32>>;
@group(1) @binding(3) var<uniform> params: GpuParams;

// Every kernel's bounds guard for a pair the host did not validate (a resident caller's): true
// when both body indices are in the bodies buffer and distinct, and both bodies' shape indices
// are in the shape list. Pairs that fail are not computed (see layout.wgsl MANIFOLD_INVALID).
fn pair_in_range(pair: vec2<u32>) -> bool {
    let body_count = arrayLength(&bodies);
    if pair.x >= body_count || pair.y >= body_count || pair.x == pair.y {
        return false;
    }
    let shape_count = arrayLength(&shapes);
    return bodies[pair.x].shape < shape_count && bodies[pair.y].shape < shape_count;
}

// The order pair `pair` runs in: with params.canonical (resident calls) the lower body index
// first, as every backend computes a pair (crate::scene::validate: ValidatedBatch::pair;
// clip.wgsl's in_given_order and compound_merge.wgsl swap the result back); else as given
// (host rounds stage their pairs in canonical order already, and `encode`'s SAT records are
// the given pairs').
fn pair_to_run(pair: vec2<u32>) -> vec2<u32> {
    if params.canonical != 0u {
        return vec2<u32>(min(pair.x, pair.y), max(pair.x, pair.y));
    }
    return pair;
}

// Whether pair `given` runs the other way round (pair_to_run), so its result is swapped back.
fn runs_reversed(given: vec2<u32>) -> bool {
    return pair_to_run(given).x != given.x;
}

// B's pose in A's frame (rotation, translation) from the two world poses, as
// Pose::relative_to_self: the split translations are subtracted part by part (hi - hi, lo - lo)
// before rotating, so bodies far from the origin keep their relative precision.
struct RelativePose {
    q: vec4<f32>,
    t: vec3<f32>,
}

// B's world translation minus A's, the split parts subtracted part by part, as
// GpuBody::offset_to.
fn body_offset(body_a: GpuBody, body_b: GpuBody) -> vec3<f32> {
    return (body_b.translation_hi - body_a.translation_hi) + (body_b.translation_lo - body_a.translation_lo);
}

fn relative_pose(body_a: GpuBody, body_b: GpuBody) -> RelativePose {
    let inv_a = quat_conjugate(body_a.rotation);
    return RelativePose(normalize(quat_mul(inv_a, body_b.rotation)), quat_rotate(inv_a, body_offset(body_a, body_b)));
}

// A part at (rotation, translation) in its body's frame, posed by the body's pose `b_in_a`, as
// Isometry::mul_isometry.
fn pose_part(b_in_a: RelativePose, rotation: vec4<f32>, translation: vec3<f32>) -> RelativePose {
    return RelativePose(normalize(quat_mul(b_in_a.q, rotation)), quat_rotate(b_in_a.q, translation) + b_in_a.t);
}

// The axis of A's edge (start pa, unit direction da) and B's edge from pb to qb (A's frame), as
// crate::query::sat::edge_pair_axis: da x normalize(qb - pb) made unit, oriented away from A's
// centroid; w = 0 when the edges are parallel (PARALLEL_EDGE_SINE), else 1.
fn edge_pair_axis(pa: vec3<f32>, da: vec3<f32>, pb: vec3<f32>, qb: vec3<f32>, a_centroid: vec3<f32>) -> vec4<f32> {
    // Unit directions: |cross| is the sine of their angle, at any scale.
    let cross_ab = cross(da, normalize(qb - pb));
    let cross_len = length(cross_ab);
    if cross_len < PARALLEL_EDGE_SINE {
        return vec4<f32>(0.0);
    }
    let axis = cross_ab / cross_len;
    if dot(axis, pa - a_centroid) < 0.0 {
        return vec4<f32>(-axis, 1.0);
    }
    return vec4<f32>(axis, 1.0);
}

// llvmpipe stops every loop of an invocation group, silently, once ~65,535 iterations are
// spent, and the budget never refills: a two-step loop run last is cut short exactly when the
// kernel's loops may have been. The bound comes from a uniform so no compiler folds the loop.
fn loops_cut_short() -> bool {
    let wanted = min(2u, params.pair_count + 1u);
    var steps = 0u;
    for (var i = 0u; i < wanted; i++) {
        steps += 1u;
    }
    return steps < wanted;
}

// The WGSL twins of the host layout.rs structs (crate::narrowphase::gpu::layout) that a caller's shader shares
// with the kernels: the bodies it writes (GpuBody), the SAT results (GpuSatResult) and the
// manifold list it reads (GpuManifoldList of GpuManifold), with the constants of their fields.
// The one copy: the kernels are compiled after it (SAT_WGSL, CLIP_WGSL, RESIDENT_WGSL), and
// callers prepend hullsat::narrowphase::gpu::LAYOUT_WGSL (this file, the list's count a plain u32) to their
// own shaders. Structs and constants only. tests/gpu_layout.rs checks every size, offset and
// constant against the Rust ones.
//
// `ManifoldListCount`, the type of the list's count, is declared by the source this file is
// part of: `atomic<u32>` in the kernels (geometry.wgsl; the clip kernel appends), `u32` in
// LAYOUT_WGSL (a read-only binding cannot hold an atomic). Both have the same layout.

// Mirrors crate::narrowphase::gpu::layout::AXIS_*: low two bits of GpuSatResult.kind.
const AXIS_NONE: u32 = 0u;
const AXIS_FACE_A: u32 = 1u;
const AXIS_FACE_B: u32 = 2u;
const AXIS_EDGE_PAIR: u32 = 3u;
// Mirrors crate::narrowphase::gpu::layout::AXIS_MASK: the axis code bits of GpuSatResult.kind.
const AXIS_MASK: u32 = 3u;
// Mirrors crate::narrowphase::gpu::layout::SEPARATED_BIT: set in kind when separation > margin.
const SEPARATED_BIT: u32 = 4u;
// Mirrors crate::narrowphase::gpu::layout::INCOMPLETE_BIT: set in kind when the driver cut the loops short.
const INCOMPLETE_BIT: u32 = 8u;
// Mirrors crate::narrowphase::gpu::layout::MANIFOLD_*: GpuManifold.status. SEPARATED pairs are not listed;
// HOST: not finished on the GPU (count 0; layout.rs MANIFOLD_HOST says which pairs); INVALID: a
// body or shape index out of range, or a body paired with itself (not computed).
const MANIFOLD_SEPARATED: u32 = 0u;
const MANIFOLD_CLIPPED: u32 = 1u;
const MANIFOLD_HOST: u32 = 2u;
const MANIFOLD_INVALID: u32 = 3u;
// OVERFLOW: a compound pair whose child pairs did not fit the sub-pair capacity (count 0;
// points[0].x and .y: the total child pairs of the call and the capacity, as u32 bits).
const MANIFOLD_OVERFLOW: u32 = 4u;

// Must match layout.rs `GpuSatResult`: one per pair, A's frame (48 bytes).
struct GpuSatResult {
    // Unit axis, A's frame, from A toward B.
    normal: vec3<f32>,
    // Separation along `normal`, length units.
    axis_separation: f32,
    // Largest separation over the tested axes, length units.
    separation: f32,
    // AXIS_* | SEPARATED_BIT | INCOMPLETE_BIT (driver cut the loops short: recompute on the CPU).
    kind: u32,
    // Face or edge of A (0 when a face of B won).
    feature_a: u32,
    // Face or edge of B (0 when a face of A won).
    feature_b: u32,
    // The deepest axis (the face preference at tolerance 0 over the same candidates, which the
    // clip kernel retries on): its AXIS_* code, no flags; it separates by `separation`, and its
    // normal is formed again from the features.
    deepest_kind: u32,
    // The deepest axis's face or edge of A (0 when a face of B is deepest).
    deepest_feature_a: u32,
    // The deepest axis's face or edge of B (0 when a face of A is deepest).
    deepest_feature_b: u32,
    // The index in the dispatch of the pair this result is for (as GpuManifold.pair): the
    // result's own, unless a resident call ordered its pairs by cost (src/narrowphase/gpu/order.rs).
    pair: u32,
}

// Must match layout.rs `GpuManifold`: one pair's manifold, A's frame (112 bytes).
struct GpuManifold {
    // Unit, A's frame, from A (pairs[pair].x) toward B (MANIFOLD_HOST: the SAT result's, of the
    // pair in the order it ran, see GpuManifold::host_sat).
    normal: vec3<f32>,
    // Signed distance between the surfaces, length units (< 0: penetrating).
    separation: f32,
    // xyz: A's frame, midway between the surfaces; w: depth (> 0: penetrating).
    points: array<vec4<f32>, 4>,
    // Feature ids, packed as hullsat::FeatureId.
    ids: array<u32, 4>,
    // Valid points (1 to 4 when status is MANIFOLD_CLIPPED).
    count: u32,
    // MANIFOLD_CLIPPED, MANIFOLD_HOST, MANIFOLD_INVALID or MANIFOLD_OVERFLOW.
    status: u32,
    // Index of the pair in the dispatch (the caller's pair buffer for a resident call).
    pair: u32,
    _pad: u32,
}

// Must match layout.rs `GpuManifoldCount` (the head, 16 bytes) followed by `GpuManifold`s from
// byte MANIFOLD_LIST_HEAD: the compact list of a dispatch, in no particular order. The host
// zeroes `count` before the clip kernel appends.
struct GpuManifoldList {
    count: ManifoldListCount,
    // 0 in the clip kernel's list; in a host round's list put in pair order (list_order.wgsl),
    // the entries of the list it was made from (equal to count unless one was not placed).
    listed: u32,
    // Incident-face searches the clip's lane 0 ran alone where a few invocations share a pair
    // (the lanes had not made them); in a list put in pair order, the clip's list's. Speed only.
    searched_alone: ManifoldListCount,
    _pad2: u32,
    entries: array<GpuManifold>,
}

//! Not API: what hullsat's own tests and benchmarks reach inside the crate for, and may change
//! in any release. The reference (exhaustive) SAT queries the bounded ones are checked against,
//! the SAT bounds' slack, and the structs only the kernels read, checked against their WGSL
//! twins.

pub use crate::narrowphase::gpu::kernel_layout::{
    COMPOUND_HALF_SPACE, COMPOUND_IS_COMPOUND, COMPOUND_RANGE_HOST, COMPOUND_RANGE_LISTED,
    COMPOUND_RANGE_OVERFLOW, COMPOUND_RANGE_SINGLE, COMPOUND_RANGES_HEAD, COMPOUND_SPHERE, COOP_EDGE_PAIRS,
    GpuCompound, GpuCompoundPart, GpuCompoundRange, GpuEdge, GpuParams, GpuResidentSetup, GpuShape,
    HullTables, PAIR_PER_WORKGROUP_PAIRS, PAIR_PER_WORKGROUP_SPLIT_SHARE, PARAMS_STRIDE, SPLIT_EDGE_PAIRS,
    WORKGROUP_SIZE,
};
pub use crate::narrowphase::gpu::kernels::SatMapping;
pub use crate::query::bounds::SAT_BOUND_SLACK;
pub use crate::query::sat::exhaustive::{
    query_edges_exhaustive, query_faces_exhaustive, query_hulls_exhaustive,
};

/// The SAT kernel's mapping that `gpu` takes for a host call of `pairs` of `bodies` (one round).
pub fn sat_mapping(gpu: &crate::GpuNarrowphase, bodies: &[crate::Body], pairs: &[[u32; 2]]) -> SatMapping {
    gpu.sat_mapping(bodies, pairs)
}

pub use crate::bvh::gpu::{
    BVH_BUILD_WGSL, BVH_BUILD_WORKGROUP_SIZE, CYLINDER_RIM_SLACK, GpuBvhParams, GpuBvhProbe, GpuBvhShape,
    ProbedBvh, SHAPE_FLAG_COMPOUND, SHAPE_FLAG_CYLINDER, SHAPE_FLAG_STATIC, SPLIT_PADDING, UNBOUNDED_CODE,
    UNBOUNDED_EXTENT,
};

pub use crate::gpu::radix_sort::{
    GpuRadixParams, GpuRadixProbe, GpuRadixState, MAX_SCAN_LEVELS, RADIX_BINS, RADIX_BITS, RADIX_SORT_WGSL,
    RADIX_TILE, RADIX_WORKGROUP_SIZE, SCAN_BLOCK,
};

/// The CPU batch's routine for one ray (traverse `bvh`, cast exactly at each candidate): every
/// body `ray` enters, nearest first, or with `closest` the nearest. `bodies` checked, `bvh` over
/// them (any hierarchy in [`crate::raycast::Bvh`]'s layout, such as one built on the GPU).
pub fn cast_through_bvh(
    shapes: &[crate::Shape],
    bodies: &[crate::Body],
    bvh: &crate::raycast::Bvh,
    ray: &crate::Ray,
    closest: bool,
) -> Vec<crate::RayHit> {
    crate::raycast::cast_one(shapes, bodies, bvh, ray, closest)
}

//! Not API: what hullsat's own tests and benchmarks reach inside the crate for, and may change
//! in any release. The reference (exhaustive) SAT queries the bounded ones are checked against,
//! the SAT bounds' slack, and the structs only the kernels read, checked against their WGSL
//! twins.

pub use crate::narrowphase::gpu::kernel_layout::{
    COOP_EDGE_PAIRS, GpuEdge, GpuParams, GpuResidentSetup, GpuShape, HullTables, PAIR_PER_WORKGROUP_PAIRS,
    PARAMS_STRIDE, SPLIT_EDGE_PAIRS, WORKGROUP_SIZE,
};
pub use crate::narrowphase::gpu::kernels::SatMapping;
pub use crate::query::bounds::SAT_BOUND_SLACK;
pub use crate::query::sat::exhaustive::{
    query_edges_exhaustive, query_faces_exhaustive, query_hulls_exhaustive,
};

/// The SAT kernel's mapping that `gpu` takes for a host call of `pairs` pairs (one round).
pub fn sat_mapping(gpu: &crate::GpuNarrowphase, pairs: usize) -> SatMapping {
    gpu.sat_mapping(pairs)
}

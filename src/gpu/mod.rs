//! What every GPU feature shares (the narrowphase, the ray caster): the device context, device
//! buffers, pipeline helpers, the error type and the WGSL every kernel starts with. The features
//! own their kernels and depend on this module, never on each other.
//!
//! - `context`: one process-wide device ([`shared_context`]) or a caller's
//!   ([`GpuContext::with_device`]); health, bounded waits, error scopes, and a cache of each
//!   feature's compiled kernels, so every kernel is compiled once per device.
//! - `buffers`: device buffers that persist and grow, mapped staging written on all threads.
//! - `pipeline`: compute pipelines and bind group layouts, built the same way for every kernel.
//! - `radix_sort`: a stable GPU radix sort of u32 key pairs (the BVH build's and the
//!   broadphase's).
//! - [`Timestamps`]: GPU timestamps around a submission's commands, read back with it.
//! - [`StageTimer`]: GPU time per stage (compute passes by label) over runs of recorded work.
//! - [`layout`]: the encodings every kernel shares (quaternions, split f64 translations).
//! - [`mesh_layout`]: the GPU form of triangle meshes (vertices, triangles, BVH nodes).
//! - [`GpuError`]: why a GPU call failed; never a panic.

pub(crate) mod buffers;
pub(crate) mod context;
mod error;
pub mod layout;
pub mod mesh_layout;
pub(crate) mod pipeline;
pub(crate) mod radix_sort;
mod stage_log;
mod stages;
mod timestamps;

pub use context::{GpuContext, READBACK_TIMEOUT, shared_context};
pub use error::GpuError;
pub use layout::QUAT_WGSL;
pub use stage_log::MAX_TIMED_PASSES;
pub use stages::{StageTime, StageTimer, StageTimes};
pub use timestamps::Timestamps;

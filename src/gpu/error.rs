//! Why a GPU call failed: one error type for every GPU feature (narrowphase, ray casts).

use std::time::Duration;

use thiserror::Error;

use crate::scene::InputError;

/// Why a GPU call failed.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum GpuError {
    /// No wgpu adapter (GPU or software rasterizer) on this machine.
    #[error(
        "no GPU adapter found ({0}); install a Vulkan, Metal or DX12 driver \
         (on Linux without a GPU: Mesa lavapipe, `mesa-vulkan-drivers libvulkan1`) or use the CPU path"
    )]
    NoAdapter(String),
    /// The adapter refused to create a device.
    #[error("could not create a GPU device: {0}")]
    RequestDevice(String),
    /// The device was lost (driver reset, device destroyed).
    #[error("GPU device lost: {0}")]
    DeviceLost(String),
    /// wgpu reported a validation, out-of-memory or internal error.
    #[error("GPU error: {0}")]
    Wgpu(String),
    /// A buffer would exceed a device limit.
    #[error("{what} needs {bytes} bytes, more than the device limit {limit} ({limit_name})")]
    TooLarge {
        /// Which buffer.
        what: &'static str,
        /// Bytes it needs.
        bytes: u64,
        /// The limit, in bytes.
        limit: u64,
        /// Name of the wgpu limit.
        limit_name: &'static str,
    },
    /// The GPU did not finish within [`READBACK_TIMEOUT`](super::READBACK_TIMEOUT).
    #[error("GPU did not finish within {0:?}")]
    Timeout(Duration),
    /// Mapping the result buffer for reading failed.
    #[error("could not read GPU results back: {0}")]
    Readback(String),
    /// A result read back from the GPU is impossible (a feature index out of range, an unknown
    /// axis code, a non-finite number): a driver or kernel fault, reported instead of used.
    #[error("GPU result for pairs[{pair}] is invalid: {what}")]
    BadResult {
        /// Index of the pair in the batch.
        pair: usize,
        /// What is wrong.
        what: String,
    },
    /// The device cannot run what was asked for.
    #[error("{0}")]
    Unsupported(String),
    /// The GPU broadphase found more candidate pairs than allowed (`--max-pairs`, or the
    /// `max_pairs` of [`crate::broadphase::GpuBroadphase::candidate_pairs_at_most`]).
    #[error(
        "the broadphase finds more than {limit} candidate pairs (the GPU counts {}{count})",
        if *at_least { "at least " } else { "" }
    )]
    TooManyPairs {
        /// The limit that was exceeded.
        limit: usize,
        /// The pairs the GPU counted: all of them, or a lower bound when `at_least`.
        count: u64,
        /// The count stopped at 2^31 (the counter never wraps): the true count is larger.
        at_least: bool,
    },
    /// The compound pairs of a call expand to more child pairs than the narrowphase's sub-pair
    /// capacity (`GpuNarrowphase::set_compound_capacity`).
    #[error(
        "the compound pairs need {count} child pairs, more than the capacity of {capacity} \
         (GpuNarrowphase::set_compound_capacity)"
    )]
    CompoundCapacity {
        /// The capacity, in child pairs.
        capacity: u32,
        /// The child pairs the GPU counted (the true total).
        count: u32,
    },
    /// A call's mesh pairs overlapped more triangles than the narrowphase's work item
    /// capacity (`GpuNarrowphase::set_mesh_capacity`); nothing was computed for them.
    #[error(
        "the mesh pairs overlap {count} triangles, more than the capacity of {capacity} work items \
         (GpuNarrowphase::set_mesh_capacity)"
    )]
    MeshCapacity {
        /// The capacity, in work items (body-triangle pairs).
        capacity: u32,
        /// The work items the GPU counted (the true total).
        count: u32,
    },
    /// The batch was rejected before upload (same message as the CPU path).
    #[error(transparent)]
    Input(#[from] InputError),
}

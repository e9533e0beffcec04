//! Where the time of a host batch call went, and what the host finished itself.

use std::time::Duration;

/// Wall-clock times of the last [`GpuNarrowphase::sat`](super::GpuNarrowphase::sat) or
/// [`GpuNarrowphase::collide`](super::GpuNarrowphase::collide) call.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct GpuTimings {
    /// Host time spent checking the batch (none for `collide_validated`) while writing bodies,
    /// pairs and parameters into staging memory, and recording the kernels, summed over rounds.
    pub upload: Duration,
    /// Submitting, waiting for the kernel, copying the results and mapping them for reading
    /// (for `sat`, also reading them: see `cpu_clipping`).
    pub dispatch_readback: Duration,
    /// GPU time of the call's commands before the copy back (the staged bodies and pairs copied
    /// into device buffers, the kernels), summed over rounds, from GPU timestamps: part of
    /// `dispatch_readback`. `None` where the device has no timestamps inside encoders
    /// ([`crate::gpu::GpuContext::has_timestamps`]).
    pub gpu: Option<Duration>,
    /// GPU time of the copy of the results into readback memory (each round's first copy),
    /// from GPU timestamps: part of `dispatch_readback`; `None` as for `gpu`.
    pub gpu_copy_back: Option<Duration>,
    /// `collide` only (zero for `sat`): reading the mapped results (bounds checks, the CPU SAT
    /// for pairs the driver cut short), CPU clipping of hull pairs and the CPU path for the
    /// other pairs, on all threads.
    pub cpu_clipping: Duration,
    /// Pairs the driver cut short ([`super::layout::INCOMPLETE_BIT`]; only CPU drivers such as
    /// lavapipe do): hull pairs recomputed by the CPU SAT, and under [`Clipping::Gpu`](super::Clipping::Gpu) the other
    /// pairs the clip kernel left for that reason (the CPU path); their time is in
    /// `cpu_clipping` (`collide`) or `dispatch_readback` (`sat`).
    pub incomplete_pairs: usize,
    /// Under [`Clipping::Gpu`](super::Clipping::Gpu): pairs the clip kernel, the compound stage
    /// or the mesh pass left to the host (see [`super::layout::MANIFOLD_HOST`]; a compound
    /// against a mesh always), computed by the CPU path; their time is in `cpu_clipping`.
    pub host_pairs: usize,
    /// Bytes copied from the device into mapped readback memory, summed over rounds: 48 per
    /// pair under [`Clipping::Cpu`](super::Clipping::Cpu); under [`Clipping::Gpu`](super::Clipping::Gpu), each round's manifold list head
    /// (16) plus 112 per listed pair and per entry of headroom (see the module docs).
    pub readback_bytes: u64,
    /// Under [`Clipping::Gpu`](super::Clipping::Gpu): rounds whose manifold list outgrew the prefix copied with its
    /// count, so the rest took a second copy (one more round trip each).
    pub list_second_copies: usize,
    /// Under [`Clipping::Gpu`](super::Clipping::Gpu), in rounds whose clip runs a few
    /// invocations a pair (the SAT's one workgroup per pair: small calls of big hulls):
    /// incident-face searches a pair's lane 0 ran alone because its lanes had not shared them
    /// out (`GpuManifoldCount::searched_alone`). Speed only, the results are the same; near 0
    /// where the sharing works (a software driver that cuts the lanes' loops short adds some).
    pub incident_searches_alone: usize,
}

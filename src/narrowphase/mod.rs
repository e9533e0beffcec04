//! The narrowphase backends and the validation they share.
//!
//! - [`validate`]: checks a batch once, on all threads, and returns a [`ValidatedBatch`] that
//!   every backend accepts without checking again. The GPU backend, given a batch unvalidated,
//!   runs the same checks while it writes the batch into staging memory instead.
//! - [`cpu`]: the CPU reference backend ([`CpuNarrowphase`]).
//! - [`gpu`]: the GPU backend ([`GpuNarrowphase`]) and the process-wide GPU context.

pub mod cpu;
pub mod gpu;
pub mod validate;

pub use crate::gpu::GpuError;
pub use cpu::CpuNarrowphase;
pub use gpu::GpuNarrowphase;
pub use validate::ValidatedBatch;

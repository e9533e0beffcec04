//! The narrowphase backends. Both take a batch checked once
//! ([`ValidatedBatch`](crate::scene::ValidatedBatch)) or check it themselves; the GPU backend
//! runs the same checks while it writes the batch into staging memory.
//!
//! - [`cpu`]: the CPU reference backend ([`CpuNarrowphase`]).
//! - [`gpu`]: the GPU backend ([`GpuNarrowphase`]) and the process-wide GPU context.

pub mod cpu;
pub mod gpu;

pub use crate::gpu::GpuError;
pub use cpu::CpuNarrowphase;
pub use gpu::GpuNarrowphase;

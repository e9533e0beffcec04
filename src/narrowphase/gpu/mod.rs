//! The GPU batch narrowphase: the separating axis test (`sat.wgsl`) and the clipping and
//! reduction of contacts (`clip.wgsl`) in WGSL compute shaders, one pair per invocation (a
//! whole workgroup on each SAT of big hulls), in A's frame; or the SAT on the GPU and the
//! clipping on the CPU ([`Clipping`]).
//!
//! 1. Device: every [`GpuNarrowphase::new`] shares one process-wide [`GpuContext`] (instance,
//!    adapter, device, queue, compiled kernels; [`shared_context`]), created once and never torn
//!    down, so narrowphases can be created, used and dropped from any number of threads.
//!    [`GpuNarrowphase::with_device`] runs on a caller's device instead.
//! 2. Construction uploads every shape once: one [`layout::GpuShape`] per shape (kind, size,
//!    kind-specific sizes) and the geometry of hulls and boxes (vertices, face planes, face
//!    loops, edges with their two faces; boxes are hulls via [`Shape::as_hull`]); a
//!    [`layout::GpuBody`] names its shape by the same index as [`Body::shape`].
//! 3. Each call writes bodies and pairs on all threads straight into persistent mapped staging
//!    buffers, checking each on the way (the `staged` module: the checks and errors of
//!    [`ValidatedBatch::new`], one pass over the bodies and one over each round's pairs, no
//!    checked copy kept; [`GpuNarrowphase::collide_validated`] takes a batch the caller
//!    validated and skips the checks). The encoder copies them into device buffers that are
//!    reused and grown, never shrunk, with cached bind groups (see the `sat` module).
//! 4. The SAT kernel writes one [`GpuSatResult`](layout::GpuSatResult) per pair; under [`Clipping::Gpu`] the clip
//!    kernel then appends a [`GpuManifold`](layout::GpuManifold) for each pair that is not separated to a compact
//!    list with an atomic count ([`layout::GpuManifoldCount`]), each entry naming its pair, in
//!    no fixed order (each workgroup reserves its entries with one atomic; see the cost below).
//!    Batches beyond one dispatch run as chunks. Batches above 262,144 pairs (or whose outputs
//!    exceed a buffer or, for the list, a binding) run in rounds, pipelined: round k + 1 is
//!    staged and submitted before round k is waited for and read back (two pair staging, two
//!    manifold lists, two readback buffers; see the `rounds` module).
//! 5. The results are read from the mapped readback buffer on all threads, every index and
//!    number checked ([`GpuError::BadResult`], never a panic): the list's count and a prefix
//!    of it sized from the last round's share (a second copy only when the list outgrew it).
//!    Clipped manifolds are moved to world space with A's pose. Under [`Clipping::Gpu`] the clip
//!    kernel also finishes the pairs with a sphere, capsule or half-space (`primitives.wgsl`, the
//!    closed forms of [`crate::contact`]; their SAT slot says [`layout::AXIS_NONE`]) and hull
//!    pairs apart within the margin (f32 GJK, `gjk.wgsl`). It leaves to the host only: pairs the
//!    driver cut short (6.), reference and incident faces beyond
//!    [`layout::MAX_GPU_CLIP_VERTICES`] together (on the SAT's axis, or on the deepest axis the
//!    kernel retries on when a face clip keeps no point, as the CPU does, before the
//!    deepest-vertex fallback), and hull pairs apart within the margin whose f32 GJK direction
//!    is too uncertain for the CPU's choice ([`crate::constants::GPU_GJK_CONDITIONING`]). Hull pairs
//!    left to the host (and every hull pair under [`Clipping::Cpu`]) are clipped from the GPU's
//!    SAT with [`manifold_from_sat`](crate::contact::manifold_from_sat); other pairs left to it,
//!    and every non-hull pair under [`Clipping::Cpu`], take the CPU path,
//!    [`collide_shapes`](crate::contact::collide_shapes) (the `runner` module).
//!
//! 6. Software drivers: llvmpipe (lavapipe, and Mesa's GL path on it) silently stops every loop of
//!    an invocation group once about 65,535 loop iterations are spent. The kernel ends with a
//!    two-step loop that is cut short exactly then and flags the result
//!    ([`layout::INCOMPLETE_BIT`]); the host recomputes flagged pairs with the CPU SAT and counts
//!    them in [`GpuTimings::incomplete_pairs`]. The SAT kernel's bounded queries, one loop of
//!    four edge pairs per step and four vertices per step keep 64-vertex pairs below the cap,
//!    and its cooperative path (a workgroup on one pair, loops split across it) 128-vertex
//!    pairs; some pairs of 160-vertex hulls and more reach it. Real GPUs have none. A renderer reading
//!    [`GpuNarrowphase::encode`]'s buffer must treat flagged entries as missing.
//!
//! 7. Resident: [`GpuNarrowphase::encode_resident`] records the same kernels into a caller's
//!    encoder over bodies, pairs and a pair count already in the caller's GPU buffers (a prepare
//!    kernel turns the count into indirect dispatch arguments) and leaves the compact manifold
//!    list on the GPU (the WGSL structs a caller's shaders bind are [`LAYOUT_WGSL`]); see the
//!    `resident` module.
//!
//! Errors never panic: wgpu validation and out-of-memory errors are caught with error scopes (and
//! an uncaptured-error handler on the shared device), a lost device is reported, waits are
//! bounded by [`READBACK_TIMEOUT`].
//!
//! # Cost per pair (the SAT kernel, counted in vec3 dot products)
//! Units: a dot = 1, a cross product ≈ 2, a length ≈ 1, a quaternion rotation of a vector ≈ 5.
//! - Face query, per face tested: one rotation and one dot for the plane, V dots for the deepest
//!   vertex (6 + V). Hulls with F × V > 64 first bound every face from the other hull's inner
//!   sphere (1 dot per face, twice) and test only faces that can matter.
//! - Edge query, small pairs (E_a × E_b ≤ 400, hull8 and smaller): every pair runs the Gauss-map
//!   test in B's frame (A's two normals rotated once per edge of A: 13; per pair 1 cross + 4
//!   dots = 6); a crossing pair adds 2 rotations, a normalize, 1 cross, 1 length and 2 dots (17)
//!   and, when it can win, a support re-measure (6 + V_a + V_b).
//! - Edge query, larger pairs (bounded, steps 1-4 of `sat.wgsl`): per edge of A a loose arc bound
//!   (4, twice) and for survivors of it the exact one (13); per edge of B both bounds in B's frame
//!   (17); then only surviving edges of A against kept edges of B (6 per pair, as above).
//! - Box against box: the face queries (2 × 6 × 14), the 9 box axes (≈ 9 each, plus the matrix),
//!   two supporting-edge lookups and one edge pair formed and re-measured as the hull loop does.
//!
//! Measured mean counts per pair in contact (nothing separates early) on the bench particle
//! scenes (`box`, `hull8`, `hull32`, `hull64` presets), counted by an instrumented copy of the
//! kernel on lavapipe; "before" is the kernel without bounds (every edge pair, B's normals
//! rotated for each; its 64-vertex counts are the exhaustive loop's sizes, as lavapipe cut it
//! short). BENCHMARKS.md ("GPU kernel work per pair") has the breakdown.
//!
//! | pair (V, F, E) | before | after | faces tested | edge pairs tested (Gauss) | crossing | loads before → after |
//! |---|---:|---:|---:|---:|---:|---:|
//! | box vs box (8, 6, 12) | ≈ 2,900 | ≈ 300 | 12 | 9 box axes (was 144) | 1 (was 18) | 10.9 → 2.4 KB |
//! | hull8 (8, 12, 18) | ≈ 5,900 | ≈ 2,700 | 7.9 (was 24) | 324 | 16 | 21 → 20 KB |
//! | hull32 (32, 60, 90) | ≈ 136,000 | ≈ 6,100 | 12.8 (was 120) | 383 (was 8,100) | 10 (was 75) | 456 → 52 KB |
//! | hull64 (64, 124, 186) | ≈ 575,000 | ≈ 15,400 | 21.7 (was 248) | 1,213 (was 34,596) | 14 (was 149) | 1,906 → 135 KB |
//!
//! Pairs that a face separates: box 168 → 84, hull32 1,441 → 247 dot products.
//!
//! Pairs of at least `COOP_EDGE_PAIRS` = 65,536 edge pairs (96-vertex hulls and up) run on a
//! whole workgroup (`sat.wgsl`, cooperative path): 1.1× (hull128) to 2× (hull32) the dot
//! products per pair, a critical path 12× to 28× shorter; per pair, 64 lanes for as long as the
//! busiest one against a 32-lane warp for as long as its busiest pair: 0.74× at hull32, 1.1× at
//! hull64, 1.4× at hull96, 1.7× at hull128 (BENCHMARKS.md).
//!
//! Bytes per pair: 8 (pair) + 2 × 48 (bodies) + 2 × 64 (shapes) = 232 read once; geometry loads
//! (16 bytes per vertex, plane or edge; the table's last column) come from a shape library of a
//! few KB shared by every pair (cache-resident); 48 bytes written (the result with its deepest
//! axis).
//!
//! The clip kernel, box face on box face: the incident face search (6 rotations-and-dots ≈ 36),
//! 4 side planes against a polygon of at most 8 vertices (2 dots each ≈ 64) and, of more than 4
//! points within the margin, 4 reduction passes over at most 8 points (≈ 100): about 200 dot
//! products, a tenth of the SAT's; it reads the 48-byte SAT result, the pair, both bodies and
//! hull ranges again (232 bytes) plus cached geometry, and writes 112 bytes (nothing for a separated pair).
//!
//! Appending to the list (`clip.wgsl` step 8): a workgroup of 64 invocations counts its listed
//! pairs with an atomic in workgroup memory and reserves their entries with one `atomicAdd` on
//! the list's count, so every global atomic of a dispatch, all on that one address, serializes
//! once per workgroup instead of once per listed pair: at most ⌈pairs / 64⌉ (none for a
//! workgroup that lists nothing). A host round of 262,144 pairs: up to 262,144 before, at most
//! 4,096 after; a 1M-pair resident call: up to 1,000,000 before, at most 15,625 after. The price:
//! two workgroup barriers per invocation, so an invocation that finishes early (a separated
//! pair) keeps its workgroup's slot until the slowest of its 64 reaches the append. Counted,
//! not timed: lavapipe cannot show the difference.
//!
//! Host bytes per call: 48 per body and 8 per pair written to mapped staging memory (on all
//! threads); read back, under [`Clipping::Cpu`] 32 per pair, under [`Clipping::Gpu`] 16 per
//! round plus 112 per pair that is not separated and per entry of headroom (a quarter of them
//! plus 256; [`GpuTimings::readback_bytes`]): for a batch where 60% of the pairs touch, about
//! 84 bytes per pair instead of 112, for one where 5% touch, about 7.
//!
//! Timings measured on Mesa lavapipe (a CPU rasterizer standing in for a GPU in CI) say nothing
//! about GPU speed; [`GpuTimings`] is for benchmarks on real devices.

pub(crate) mod buffers;
mod clip;
pub(crate) mod context;
pub mod layout;
pub(crate) mod pipeline;
mod resident;
mod rounds;
mod runner;
mod sat;
mod staged;

use std::sync::Arc;
use std::time::Duration;

use thiserror::Error;

use crate::manifold::Manifold;
use crate::narrowphase::validate::ValidatedBatch;
use crate::query::sat::SatResult;
use crate::scene::{Body, InputError};
use crate::shape::Shape;
use buffers::GrowBuffer;
pub use clip::CLIP_WGSL;
use context::ErrorScopes;
pub use context::{GpuContext, READBACK_TIMEOUT, shared_context};
use layout::HullTables;
pub use layout::{LAYOUT_WGSL, QUAT_WGSL};
use resident::ResidentState;
pub use resident::{RESIDENT_WGSL, ResidentBatch, ResidentManifolds};
use runner::SatRunner;
pub use sat::SAT_WGSL;
use sat::SatBuffers;
use staged::{BatchInput, PairOrder, StagedBatch};

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
    /// The GPU did not finish within [`READBACK_TIMEOUT`].
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
    /// The batch was rejected before upload (same message as the CPU path).
    #[error(transparent)]
    Input(#[from] InputError),
}

/// Wall-clock times of the last [`GpuNarrowphase::sat`] or [`GpuNarrowphase::collide`] call.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct GpuTimings {
    /// Host time spent checking the batch (none for `collide_validated`) while writing bodies,
    /// pairs and parameters into staging memory, and recording the kernels, summed over rounds.
    pub upload: Duration,
    /// Submitting, waiting for the kernel, copying the results and mapping them for reading
    /// (for `sat`, also reading them: see `cpu_clipping`).
    pub dispatch_readback: Duration,
    /// `collide` only (zero for `sat`): reading the mapped results (bounds checks, the CPU SAT
    /// for pairs the driver cut short), CPU clipping of hull pairs and the CPU path for the
    /// other pairs, on all threads.
    pub cpu_clipping: Duration,
    /// Pairs the driver cut short ([`layout::INCOMPLETE_BIT`]; only CPU drivers such as
    /// lavapipe do): hull pairs recomputed by the CPU SAT, and under [`Clipping::Gpu`] the other
    /// pairs the clip kernel left for that reason (the CPU path); their time is in
    /// `cpu_clipping` (`collide`) or `dispatch_readback` (`sat`).
    pub incomplete_pairs: usize,
    /// Under [`Clipping::Gpu`]: pairs the clip kernel left to the host (see
    /// [`layout::MANIFOLD_HOST`]), computed by the CPU path; their time is in `cpu_clipping`.
    pub host_pairs: usize,
    /// Bytes copied from the device into mapped readback memory, summed over rounds: 32 per
    /// pair under [`Clipping::Cpu`]; under [`Clipping::Gpu`], each round's manifold list head
    /// (16) plus 112 per listed pair and per entry of headroom (see the module docs).
    pub readback_bytes: u64,
    /// Under [`Clipping::Gpu`]: rounds whose manifold list outgrew the prefix copied with its
    /// count, so the rest took a second copy (one more round trip each).
    pub list_second_copies: usize,
}

/// Why [`Clipping::Gpu`] is refused on a device.
const CLIP_UNSUPPORTED: &str = "GPU clipping needs 9 storage buffers per shader stage and this device \
     allows fewer; use Clipping::Cpu";

/// Where [`GpuNarrowphase::collide`] turns SAT results into manifolds.
///
/// - `Gpu` (the default where the device allows it): a second kernel clips and reduces in A's
///   frame and lists only the pairs that are not separated; the host reads back about 140
///   bytes per pair in contact (112 each plus headroom) and only moves points to world space.
///   The host's per-pair work is then a few dozen nanoseconds, so it wins wherever the host is
///   the bottleneck: few CPU cores, large batches, a fast GPU. Pairs with spheres, capsules and
///   half-spaces run on the GPU too; the few pairs the kernel cannot finish (see the module
///   docs, step 5) take the CPU path.
/// - `Cpu`: the kernel's 48-byte SAT results are read back for every pair and clipped on all
///   CPU threads ([`manifold_from_sat`](crate::contact::manifold_from_sat)). Fewer bytes cross the bus when more than about a
///   third of the pairs touch; it can win on a many-core host with a slow link, and it is the
///   only choice on devices without 9 storage buffers per stage.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Clipping {
    /// Clip and reduce in the clip kernel.
    #[default]
    Gpu,
    /// Clip on the CPU from the GPU's SAT results.
    Cpu,
}

/// Batch SAT on the GPU plus CPU clipping. See the module docs. One narrowphase serves one call
/// at a time (`&mut self`); any number of them, on any threads, share the device.
pub struct GpuNarrowphase {
    runner: SatRunner,
    shapes: Vec<Shape>,
    clipping: Clipping,
    timings: GpuTimings,
    /// The resident API's kernel and buffers, made by the first [`Self::encode_resident`].
    resident: Option<ResidentState>,
}

impl GpuNarrowphase {
    /// A narrowphase over `shapes` on the process-wide device ([`shared_context`]: created on
    /// first use, high-performance adapter; software adapters such as lavapipe count).
    /// [`GpuError::NoAdapter`] when the machine has none.
    pub fn new(shapes: &[Shape]) -> Result<Self, GpuError> {
        Self::with_context(shared_context()?, shapes)
    }

    /// Runs on a device the caller owns (a renderer's). The caller's uncaptured-error handler
    /// and device-lost callback are left in place; this type's own calls use error scopes. The
    /// kernel is compiled for this device; to share it between narrowphases, make one
    /// [`GpuContext::with_device`] and use [`Self::with_context`].
    pub fn with_device(device: wgpu::Device, queue: wgpu::Queue, shapes: &[Shape]) -> Result<Self, GpuError> {
        Self::with_context(GpuContext::with_device(device, queue)?, shapes)
    }

    /// A narrowphase over `shapes` on `context`'s device.
    pub fn with_context(context: Arc<GpuContext>, shapes: &[Shape]) -> Result<Self, GpuError> {
        context.check_health()?;
        let tables = HullTables::new(shapes);
        let context_has_clip = context.clip.is_some();
        let device = context.device();
        let scopes = ErrorScopes::push(device);
        let geometry = context.sat.geometry_group(&context, &tables);
        let buffers = SatBuffers::new(device);
        let readback = [0, 1].map(|_| {
            GrowBuffer::new(
                device,
                "sat readback",
                wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            )
        });
        scopes.pop()?;
        Ok(GpuNarrowphase {
            runner: SatRunner {
                geometry: geometry?,
                context,
                buffers,
                readback,
                listed_share: 1.0,
            },
            shapes: shapes.to_vec(),
            clipping: if context_has_clip {
                Clipping::Gpu
            } else {
                Clipping::Cpu
            },
            timings: GpuTimings::default(),
            resident: None,
        })
    }

    /// The context this narrowphase runs on.
    pub fn context(&self) -> &Arc<GpuContext> {
        &self.runner.context
    }

    /// The adapter the device came from (name, backend, device type).
    pub fn adapter_info(&self) -> &wgpu::AdapterInfo {
        self.runner.context.adapter_info()
    }

    /// The device the kernel runs on (for encoders and buffers that use [`Self::encode`]).
    pub fn device(&self) -> &wgpu::Device {
        self.runner.context.device()
    }

    /// The queue the uploads go through.
    pub fn queue(&self) -> &wgpu::Queue {
        self.runner.context.queue()
    }

    /// The shapes given at construction (body `shape` fields index this).
    pub fn shapes(&self) -> &[Shape] {
        &self.shapes
    }

    /// Timings of the last [`Self::sat`] or [`Self::collide`] call.
    pub fn timings(&self) -> GpuTimings {
        self.timings
    }

    /// Where [`Self::collide`] clips (see [`Clipping`]).
    pub fn clipping(&self) -> Clipping {
        self.clipping
    }

    /// Chooses where [`Self::collide`] clips; [`GpuError::Unsupported`] for [`Clipping::Gpu`] on a
    /// device without the clip kernel (fewer than 9 storage buffers per stage).
    pub fn set_clipping(&mut self, clipping: Clipping) -> Result<(), GpuError> {
        if clipping == Clipping::Gpu && self.runner.context.clip.is_none() {
            return Err(GpuError::Unsupported(CLIP_UNSUPPORTED.into()));
        }
        self.clipping = clipping;
        Ok(())
    }

    /// The SAT for every pair on the GPU, in A's frame (as [`crate::query::sat::query_hulls`] with
    /// B's pose relative to A's). `None` for pairs that are not hull–hull (they take the CPU path
    /// in [`Self::collide`]). `margin` in length units. Like every backend this computes the
    /// pairs in canonical order ([`ValidatedBatch::pair`]): for a pair given as `[a, b]` with
    /// `a > b` the result is that of `[b, a]` (b's frame, b's features first).
    pub fn sat(
        &mut self,
        bodies: &[Body],
        pairs: &[[u32; 2]],
        margin: f32,
    ) -> Result<Vec<Option<SatResult>>, GpuError> {
        let input = BatchInput::Unchecked {
            bodies,
            pairs,
            margin,
        };
        let (results, timings) = self.runner.sat(&self.shapes, input)?;
        self.timings = timings;
        Ok(results)
    }

    /// Manifolds for every pair, in pair order, clipped where [`Self::clipping`] says (see
    /// [`Clipping`]). `None` when a pair is farther apart than `margin` (length units). The
    /// batch is checked as it is written into staging memory (the checks and errors of
    /// [`ValidatedBatch::new`]; their time counts as upload).
    pub fn collide(
        &mut self,
        bodies: &[Body],
        pairs: &[[u32; 2]],
        margin: f32,
    ) -> Result<Vec<Option<Manifold>>, GpuError> {
        let input = BatchInput::Unchecked {
            bodies,
            pairs,
            margin,
        };
        let (results, timings) = self.runner.collide(&self.shapes, input, self.clipping)?;
        self.timings = timings;
        Ok(results)
    }

    /// [`Self::collide`] on a batch the caller validated (no second check). An
    /// [`GpuError::Input`] only when it was validated against an incompatible shape list.
    pub fn collide_validated(&mut self, batch: &ValidatedBatch) -> Result<Vec<Option<Manifold>>, GpuError> {
        batch.check_shapes(&self.shapes)?;
        let input = BatchInput::Validated(batch);
        let (results, timings) = self.runner.collide(&self.shapes, input, self.clipping)?;
        self.timings = timings;
        Ok(results)
    }

    /// Records the SAT kernel for `pairs` into `encoder` and returns the buffer that will hold one
    /// [`GpuSatResult`](layout::GpuSatResult) per pair once the encoder is submitted (pair `i` at byte `48 * i`). In
    /// WGSL, bind it as `array<GpuSatResult>` with the struct and its `kind` constants from
    /// [`LAYOUT_WGSL`] (prepend it to the shader): a unit axis in A's frame from A toward B, the
    /// separation along it and the largest over the tested axes, the axis kind (face of A, face
    /// of B, edge pair; flagged separated, or incomplete when the driver cut the loops short:
    /// recompute on the CPU, see the module docs), the features of A and B, and the deepest axis
    /// (its kind and features: the face preference at tolerance 0, which the clip kernel
    /// retries on).
    ///
    /// A consumer that wants world space adds A's pose (normal: `pose_a.rotation * normal`).
    /// Body poses, pairs and the margin are written through the queue, so they take effect at
    /// the next submission: record one `encode` per submission. The buffer stays valid until the
    /// next call that needs a larger one. Batches whose results exceed `max_buffer_size` are
    /// [`GpuError::TooLarge`] here ([`Self::sat`] splits them).
    pub fn encode(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        bodies: &[Body],
        pairs: &[[u32; 2]],
        margin: f32,
    ) -> Result<&wgpu::Buffer, GpuError> {
        let runner = &mut self.runner;
        runner.context.check_health()?;
        let input = BatchInput::Unchecked {
            bodies,
            pairs,
            margin,
        };
        let mut batch = StagedBatch::stage_bodies(
            &mut runner.buffers,
            &runner.context,
            &self.shapes,
            input,
            PairOrder::Given,
        )?;
        // Nothing is recorded into the caller's encoder unless every pair passes.
        batch.check_pairs_first()?;
        batch.stage_round(
            &mut runner.buffers,
            &runner.context,
            encoder,
            &runner.geometry,
            (0, pairs.len()),
            None,
            0,
        )?;
        Ok(runner.buffers.results())
    }

    /// The resident API: records the SAT and the clipping of a batch that is already on the
    /// GPU (bodies, pairs and the pair count in the caller's buffers, see [`ResidentBatch`])
    /// into the caller's `encoder`, and returns the list the manifolds will be in once it is
    /// submitted ([`ResidentManifolds`], which documents the WGSL structs). Nothing is read
    /// back and the host writes nothing per pair: a prepare kernel turns the count into each
    /// dispatch chunk's pair count and indirect dispatch arguments. Pairs are run as given (A
    /// is `pairs[i].x`); pairs the GPU cannot finish are listed with status
    /// [`layout::MANIFOLD_HOST`] (see [`ResidentManifolds`]), pairs with out-of-range indices
    /// with [`layout::MANIFOLD_INVALID`]. The margin and count offset are written through the
    /// queue, so they take effect at the next submission: record one `encode_resident` per
    /// submission. [`GpuError::Input`] names a field the host can check that is wrong (a
    /// buffer without `STORAGE` usage, `max_pairs` beyond the pair buffer, a misaligned count
    /// offset); [`GpuError::Unsupported`] on a device without the clip kernel.
    pub fn encode_resident(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        batch: &ResidentBatch<'_>,
    ) -> Result<ResidentManifolds, GpuError> {
        let runner = &self.runner;
        runner.context.check_health()?;
        let clip = runner
            .context
            .clip
            .as_ref()
            .ok_or_else(|| GpuError::Unsupported(CLIP_UNSUPPORTED.into()))?;
        let state = match &mut self.resident {
            Some(state) => state,
            empty => empty.insert(ResidentState::new(&runner.context)?),
        };
        state.encode(&runner.context, &runner.geometry, clip, encoder, batch)
    }
}

// A narrowphase moves between threads; the context is shared by them.
const _: () = {
    const fn send<T: Send>() {}
    const fn send_sync<T: Send + Sync>() {}
    send::<GpuNarrowphase>();
    send_sync::<GpuContext>();
};

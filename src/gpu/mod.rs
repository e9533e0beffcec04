//! The GPU batch narrowphase: the separating axis test in a WGSL compute shader
//! (`shaders/sat.wgsl`, one pair per invocation), contact clipping on the CPU.
//!
//! 1. Construction uploads every hull's geometry once (vertices, face planes, edges with their two
//!    faces, per-hull ranges; boxes are hulls via [`Shape::as_hull`]); bodies share their shape's
//!    hull.
//! 2. Each call validates the batch ([`validate_batch`], the CPU path's messages), writes body
//!    poses and pairs into buffers that are reused and grown, never shrunk.
//! 3. The kernel writes one [`GpuSatResult`] per pair (A's frame). Batches beyond one binding
//!    (`max_storage_buffer_binding_size`) or one dispatch (`max_compute_workgroups_per_dimension`
//!    × 64) are split into chunks bound at offsets; [`GpuNarrowphase::sat`] also splits batches
//!    whose results exceed `max_buffer_size` into rounds.
//! 4. [`GpuNarrowphase::collide`] reads the results back and clips hull pairs on the CPU with
//!    [`manifold_from_sat`]. Pairs with a sphere, capsule or half-space are not run on the GPU
//!    (their kernel slot says [`layout::AXIS_NONE`]): they go to the CPU path,
//!    [`collide_shapes`], which is exact and cheap for them.
//!
//! 5. Software drivers: llvmpipe (lavapipe, and Mesa's GL path on it) silently stops every loop of
//!    an invocation group once about 65,535 loop iterations are spent. The kernel ends with a
//!    two-step loop that is cut short exactly then and flags the result
//!    ([`layout::INCOMPLETE_BIT`]); the host recomputes flagged pairs with the CPU SAT and counts
//!    them in [`GpuTimings::incomplete_pairs`]. Pairs of hulls with ~150+ edges reach the cap;
//!    real GPUs have none. A renderer reading [`GpuNarrowphase::encode`]'s buffer must treat
//!    flagged entries as missing.
//!
//! Errors never panic: wgpu validation and out-of-memory errors are caught with error scopes (and
//! an uncaptured-error handler on devices this type creates), a lost device is reported, readback
//! waits are bounded by [`READBACK_TIMEOUT`].
//!
//! # Cost per pair (the kernel, counted in vec3 dot products)
//! Units: a dot = 1, a cross product ≈ 2, a length ≈ 1, a quaternion rotation of a vector ≈ 5.
//! - Face query, F faces of one hull against V vertices of the other: per face one rotation and
//!   one dot for the plane, V dots for the deepest vertex: F × (6 + V).
//! - Edge query, E_a × E_b candidates: each rotates B's two face normals and runs the Gauss-map
//!   test (2 rotations + 1 cross + 4 dots ≈ 16); a pair that passes adds 2 rotations, 1 cross,
//!   3 lengths and 2 dots (≈ 17). Two arc sets of total lengths L_a, L_b on the unit sphere cross
//!   about L_a × L_b / (2π²) times, which is how many pairs pass.
//!
//! | pair | face queries | edge candidates (test) | pass pruning | total |
//! |---|---|---|---|---|
//! | box vs box (V 8, F 6, E 12) | 2 × 6 × 14 = 168 | 144 × 16 = 2,304 | 18 of 144 (measured mean over random rotations): 306; unpruned 2,448 | ≈ 2,800 |
//! | 32-vertex hulls (F 60, E 90) | 2 × 60 × 38 = 4,560 | 8,100 × 16 = 129,600 | ≈ 62 of 8,100 (estimate: arcs ≈ 0.39 rad): ≈ 1,050; unpruned 137,700 | ≈ 135,000 |
//!
//! Pruning is what makes edge axes valid (a non-crossing pair's `dot(axis, pb - pa)` is not a
//! support distance); in dot products it saves little here because the test rotates B's normals
//! inside the inner loop (no per-invocation array is large enough to hoist them for 4,096-vertex
//! hulls). Pairs separated by a face of A stop after a few faces (14 each for boxes). The counts
//! are for pairs where nothing separates early.
//!
//! Bytes per pair: 8 (pair) + 2 × 32 (bodies) + 2 × 48 (hull ranges) = 168 read once; geometry
//! loads (16 bytes per vertex, plane or edge) are ≈ 1.7 KB for the box face queries and ≈ 8.4 KB
//! for the box edge query, all from the same 464 bytes of a box's geometry, shared by every pair
//! that uses the box (cache-resident); 32 bytes written.
//!
//! Timings measured on Mesa lavapipe (a CPU rasterizer standing in for a GPU in CI) say nothing
//! about GPU speed; [`GpuTimings`] is for benchmarks on real devices.

pub mod layout;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rayon::prelude::*;
use thiserror::Error;
use wgpu::util::DeviceExt;

use crate::contact::{collide_shapes, manifold_from_sat};
use crate::manifold::Manifold;
use crate::query::sat::{SatResult, query_hulls};
use crate::scene::{Body, InputError, validate_batch};
use crate::shape::Shape;
use layout::{GpuBody, GpuParams, GpuSatResult, HullTables, NO_HULL, WORKGROUP_SIZE};

/// Longest wait for the GPU to finish one submission before [`GpuError::Timeout`].
pub const READBACK_TIMEOUT: Duration = Duration::from_secs(120);

/// The WGSL source of the SAT kernel.
pub const SAT_WGSL: &str = include_str!("../../shaders/sat.wgsl");

/// Why a GPU call failed.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum GpuError {
    /// No wgpu adapter (GPU or software rasterizer) on this machine.
    #[error(
        "no GPU adapter found ({0}); install a Vulkan, Metal, DX12 or GL driver \
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
    /// The batch was rejected before upload (same message as the CPU path).
    #[error(transparent)]
    Input(#[from] InputError),
}

/// Wall-clock times of the last [`GpuNarrowphase::sat`] or [`GpuNarrowphase::collide`] call.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct GpuTimings {
    /// Validation and writing bodies, pairs and parameters to the GPU.
    pub upload: Duration,
    /// Recording, submitting, waiting for the kernel, copying and reading the results back.
    pub dispatch_readback: Duration,
    /// CPU clipping of hull pairs plus the CPU path for the other pairs (zero for `sat`).
    pub cpu_clipping: Duration,
    /// Hull pairs the driver cut short ([`layout::INCOMPLETE_BIT`]; only CPU drivers such as
    /// lavapipe do), recomputed by the CPU SAT; their time is in `dispatch_readback`.
    pub incomplete_pairs: usize,
}

/// A device buffer that is reused between calls and grown (doubling) when a call needs more.
struct GrowBuffer {
    buffer: wgpu::Buffer,
    label: &'static str,
    usage: wgpu::BufferUsages,
}

impl GrowBuffer {
    fn new(device: &wgpu::Device, label: &'static str, usage: wgpu::BufferUsages) -> Self {
        let buffer = create_buffer(device, label, MIN_BUFFER_BYTES, usage);
        GrowBuffer { buffer, label, usage }
    }

    /// Makes room for `bytes` (capped at `max_buffer_size`; the caller has checked `bytes` fits).
    fn reserve(&mut self, device: &wgpu::Device, bytes: u64, max_buffer_size: u64) {
        if bytes > self.buffer.size() {
            let size = (bytes.next_power_of_two()).min(max_buffer_size).max(bytes);
            self.buffer = create_buffer(device, self.label, size, self.usage);
        }
    }
}

/// Smallest buffer created (wgpu rejects zero-sized bindings).
const MIN_BUFFER_BYTES: u64 = 256;

fn create_buffer(device: &wgpu::Device, label: &str, size: u64, usage: wgpu::BufferUsages) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size: size
            .max(MIN_BUFFER_BYTES)
            .next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT),
        usage,
        mapped_at_creation: false,
    })
}

/// The device limits this type checks against, in bytes or workgroups.
#[derive(Clone, Copy, Debug)]
struct DeviceLimits {
    max_binding: u64,
    max_buffer: u64,
    max_workgroups: u64,
}

/// Errors reported outside error scopes (uncaptured) or by the device-lost callback.
#[derive(Default)]
struct DeviceHealth {
    uncaptured: Option<String>,
    lost: Option<String>,
}

/// Batch SAT on the GPU plus CPU clipping. See the module docs.
pub struct GpuNarrowphase {
    device: wgpu::Device,
    queue: wgpu::Queue,
    adapter_info: wgpu::AdapterInfo,
    limits: DeviceLimits,
    health: Arc<Mutex<DeviceHealth>>,
    shapes: Vec<Shape>,
    /// Hull index of each shape, or [`NO_HULL`].
    shape_hulls: Vec<u32>,
    pipeline: wgpu::ComputePipeline,
    geometry_group: wgpu::BindGroup,
    call_layout: wgpu::BindGroupLayout,
    params: wgpu::Buffer,
    bodies: GrowBuffer,
    pairs: GrowBuffer,
    results: GrowBuffer,
    readback: GrowBuffer,
    staged_bodies: Vec<GpuBody>,
    timings: GpuTimings,
}

impl GpuNarrowphase {
    /// Creates its own wgpu instance, adapter (high-performance preference; software adapters
    /// such as lavapipe count) and device, and uploads the hull geometry of `shapes`.
    /// [`GpuError::NoAdapter`] when the machine has none.
    pub fn new(shapes: &[Shape]) -> Result<Self, GpuError> {
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
        let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            ..Default::default()
        }))
        .map_err(|e| GpuError::NoAdapter(e.to_string()))?;
        let adapter_limits = adapter.limits();
        // Ask for the adapter's buffer limits: the defaults (128 MiB binding, 256 MiB buffer)
        // would split batches sooner than needed.
        let required_limits = wgpu::Limits {
            max_storage_buffer_binding_size: adapter_limits.max_storage_buffer_binding_size,
            max_buffer_size: adapter_limits.max_buffer_size,
            ..wgpu::Limits::default()
        };
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("hullsat"),
            required_limits,
            ..Default::default()
        }))
        .map_err(|e| GpuError::RequestDevice(e.to_string()))?;
        let health = Arc::new(Mutex::new(DeviceHealth::default()));
        let sink = Arc::clone(&health);
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            if let Ok(mut h) = sink.lock() {
                h.uncaptured.get_or_insert_with(|| e.to_string());
            }
        }));
        let sink = Arc::clone(&health);
        device.set_device_lost_callback(move |reason, message| {
            if let Ok(mut h) = sink.lock() {
                h.lost = Some(format!("{reason:?}: {message}"));
            }
        });
        Self::build(device, queue, health, shapes)
    }

    /// Runs on a device the caller owns (a renderer's). The caller's uncaptured-error handler
    /// and device-lost callback are left in place; this type's own calls use error scopes.
    pub fn with_device(device: wgpu::Device, queue: wgpu::Queue, shapes: &[Shape]) -> Result<Self, GpuError> {
        Self::build(
            device,
            queue,
            Arc::new(Mutex::new(DeviceHealth::default())),
            shapes,
        )
    }

    fn build(
        device: wgpu::Device,
        queue: wgpu::Queue,
        health: Arc<Mutex<DeviceHealth>>,
        shapes: &[Shape],
    ) -> Result<Self, GpuError> {
        let device_limits = device.limits();
        let limits = DeviceLimits {
            max_binding: device_limits.max_storage_buffer_binding_size,
            max_buffer: device_limits.max_buffer_size,
            max_workgroups: u64::from(device_limits.max_compute_workgroups_per_dimension),
        };
        let mut tables = HullTables::default();
        let shape_hulls: Vec<u32> = shapes
            .iter()
            .map(|s| s.as_hull().map_or(NO_HULL, |h| tables.push(h)))
            .collect();

        let scopes = ErrorScopes::push(&device);
        let storage = wgpu::BufferUsages::STORAGE;
        let geometry = [
            ("hull vertices", bytemuck::cast_slice::<_, u8>(&tables.vertices)),
            ("hull planes", bytemuck::cast_slice(&tables.planes)),
            ("hull edges", bytemuck::cast_slice(&tables.edges)),
            ("hull ranges", bytemuck::cast_slice(&tables.hulls)),
        ];
        let mut geometry_buffers = Vec::with_capacity(geometry.len());
        for (label, bytes) in geometry {
            check_limit(
                label,
                bytes.len() as u64,
                limits.max_binding,
                "max_storage_buffer_binding_size",
            )?;
            let mut contents = bytes.to_vec();
            contents.resize(bytes.len().max(MIN_BUFFER_BYTES as usize), 0);
            geometry_buffers.push(device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents: &contents,
                usage: storage,
            }));
        }
        let geometry_layout = bind_group_layout(&device, "hull geometry", &[true, true, true, true], false);
        let call_layout = bind_group_layout(&device, "sat call", &[true, true, false], true);
        let geometry_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("hull geometry"),
            layout: &geometry_layout,
            entries: &geometry_buffers
                .iter()
                .enumerate()
                .map(|(i, b)| wgpu::BindGroupEntry {
                    binding: i as u32,
                    resource: b.as_entire_binding(),
                })
                .collect::<Vec<_>>(),
        });
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("sat.wgsl"),
            source: wgpu::ShaderSource::Wgsl(SAT_WGSL.into()),
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("sat"),
            bind_group_layouts: &[Some(&geometry_layout), Some(&call_layout)],
            immediate_size: 0,
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("sat"),
            layout: Some(&pipeline_layout),
            module: &module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        });
        let params = create_buffer(
            &device,
            "sat params",
            size_of::<GpuParams>() as u64,
            wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        );
        let upload = storage | wgpu::BufferUsages::COPY_DST;
        let bodies = GrowBuffer::new(&device, "bodies", upload);
        let pairs = GrowBuffer::new(&device, "pairs", upload);
        let results = GrowBuffer::new(&device, "sat results", storage | wgpu::BufferUsages::COPY_SRC);
        let readback = GrowBuffer::new(
            &device,
            "sat readback",
            wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        );
        scopes.pop()?;

        let adapter_info = device.adapter_info();
        let narrowphase = GpuNarrowphase {
            device,
            queue,
            adapter_info,
            limits,
            health,
            shapes: shapes.to_vec(),
            shape_hulls,
            pipeline,
            geometry_group,
            call_layout,
            params,
            bodies,
            pairs,
            results,
            readback,
            staged_bodies: Vec::new(),
            timings: GpuTimings::default(),
        };
        narrowphase.check_health()?;
        Ok(narrowphase)
    }

    /// The adapter the device came from (name, backend, device type).
    pub fn adapter_info(&self) -> &wgpu::AdapterInfo {
        &self.adapter_info
    }

    /// The device the kernel runs on (for encoders and buffers that use [`Self::encode`]).
    pub fn device(&self) -> &wgpu::Device {
        &self.device
    }

    /// The queue the uploads go through.
    pub fn queue(&self) -> &wgpu::Queue {
        &self.queue
    }

    /// The shapes given at construction (body `shape` fields index this).
    pub fn shapes(&self) -> &[Shape] {
        &self.shapes
    }

    /// Timings of the last [`Self::sat`] or [`Self::collide`] call.
    pub fn timings(&self) -> GpuTimings {
        self.timings
    }

    /// The SAT for every pair on the GPU, in A's frame (as [`crate::query::sat::query_hulls`] with
    /// B's pose relative to A's). `None` for pairs that are not hull–hull (they take the CPU path
    /// in [`Self::collide`]). `margin` in length units.
    pub fn sat(
        &mut self,
        bodies: &[Body],
        pairs: &[[u32; 2]],
        margin: f32,
    ) -> Result<Vec<Option<SatResult>>, GpuError> {
        let start = Instant::now();
        let checked = validate_batch(&self.shapes, bodies, pairs, margin)?;
        self.sat_checked(start, &checked, pairs, margin)
    }

    /// [`Self::sat`] on validated bodies; `start` is when the call began (for the timings).
    fn sat_checked(
        &mut self,
        start: Instant,
        bodies: &[Body],
        pairs: &[[u32; 2]],
        margin: f32,
    ) -> Result<Vec<Option<SatResult>>, GpuError> {
        self.check_health()?;
        self.stage_bodies(bodies)?;
        let mut raw = Vec::with_capacity(pairs.len());
        let result_size = size_of::<GpuSatResult>() as u64;
        let round_pairs = (self.limits.max_buffer / result_size).max(1) as usize;
        let mut upload = start.elapsed();
        let mut dispatch_readback = Duration::ZERO;
        for round in pairs.chunks(round_pairs) {
            let t = Instant::now();
            let mut encoder = self
                .device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("sat") });
            self.encode_checked(&mut encoder, round, margin)?;
            upload += t.elapsed();
            let t = Instant::now();
            self.read_results(encoder, round.len(), &mut raw)?;
            dispatch_readback += t.elapsed();
        }
        let t = Instant::now();
        let incomplete_pairs = raw.iter().filter(|r| r.is_incomplete()).count();
        let out = raw
            .iter()
            .zip(pairs)
            .map(|(result, &[a, b])| {
                if result.is_incomplete() {
                    Some(self.cpu_sat(&bodies[a as usize], &bodies[b as usize], margin))
                } else {
                    result.to_sat()
                }
            })
            .collect();
        dispatch_readback += t.elapsed();
        self.timings = GpuTimings {
            upload,
            dispatch_readback,
            cpu_clipping: Duration::ZERO,
            incomplete_pairs,
        };
        Ok(out)
    }

    /// The CPU SAT for a hull pair the driver cut short (both bodies have hull shapes).
    fn cpu_sat(&self, a: &Body, b: &Body, margin: f32) -> SatResult {
        let hull = |body: &Body| {
            self.shapes[body.shape as usize]
                .as_hull()
                .expect("GPU pairs are hull pairs")
        };
        query_hulls(hull(a), hull(b), &a.pose.relative_to_self(&b.pose), margin)
    }

    /// Manifolds for every pair, in pair order: GPU SAT plus CPU clipping for hull pairs, the CPU
    /// path for the others (rayon). `None` when a pair is farther apart than `margin` (length
    /// units).
    pub fn collide(
        &mut self,
        bodies: &[Body],
        pairs: &[[u32; 2]],
        margin: f32,
    ) -> Result<Vec<Option<Manifold>>, GpuError> {
        let start = Instant::now();
        let bodies = validate_batch(&self.shapes, bodies, pairs, margin)?;
        let sats = self.sat_checked(start, &bodies, pairs, margin)?;
        let start = Instant::now();
        let manifolds = pairs
            .par_iter()
            .zip(&sats)
            .map(|(&[a, b], sat)| {
                let (body_a, body_b) = (&bodies[a as usize], &bodies[b as usize]);
                let (shape_a, shape_b) = (
                    &self.shapes[body_a.shape as usize],
                    &self.shapes[body_b.shape as usize],
                );
                match (sat, shape_a.as_hull(), shape_b.as_hull()) {
                    (Some(sat), Some(hull_a), Some(hull_b)) => {
                        manifold_from_sat(hull_a, &body_a.pose, hull_b, &body_b.pose, sat, margin)
                    }
                    _ => collide_shapes(shape_a, &body_a.pose, shape_b, &body_b.pose, margin),
                }
            })
            .collect();
        self.timings.cpu_clipping = start.elapsed();
        Ok(manifolds)
    }

    /// Records the SAT kernel for `pairs` into `encoder` and returns the buffer that will hold one
    /// [`GpuSatResult`] per pair once the encoder is submitted (pair `i` at byte `32 * i`). In
    /// WGSL, bind it as `array<GpuSatResult>` with the struct from `shaders/sat.wgsl`:
    ///
    /// ```wgsl
    /// struct GpuSatResult {
    ///     normal: vec3<f32>,      // unit axis, A's frame, from A toward B
    ///     axis_separation: f32,   // separation along `normal`
    ///     separation: f32,        // largest over the tested axes
    ///     kind: u32,              // 0 not a hull pair, 1 face A, 2 face B, 3 edge pair;
    ///                             // | 4 separated; | 8 incomplete (driver cut the loops short:
    ///                             // recompute on the CPU, see the module docs)
    ///     feature_a: u32,         // face or edge of A
    ///     feature_b: u32,         // face or edge of B
    /// }
    /// ```
    ///
    /// Body poses, pairs and the margin are written with [`wgpu::Queue::write_buffer`], so they
    /// take effect at the next submission: record one `encode` per submission. The buffer stays
    /// valid until the next call that needs a larger one. Batches whose results exceed
    /// `max_buffer_size` are [`GpuError::TooLarge`] here ([`Self::sat`] splits them).
    pub fn encode(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        bodies: &[Body],
        pairs: &[[u32; 2]],
        margin: f32,
    ) -> Result<&wgpu::Buffer, GpuError> {
        let checked = validate_batch(&self.shapes, bodies, pairs, margin)?;
        self.check_health()?;
        self.stage_bodies(&checked)?;
        self.encode_checked(encoder, pairs, margin)?;
        Ok(&self.results.buffer)
    }

    /// Writes validated bodies (normalized rotations) to the body buffer.
    fn stage_bodies(&mut self, bodies: &[Body]) -> Result<(), GpuError> {
        self.staged_bodies.clear();
        self.staged_bodies.extend(bodies.iter().map(|b| GpuBody {
            rotation: b.pose.rotation.to_array(),
            translation: b.pose.translation.as_vec3().to_array(),
            hull: self.shape_hulls[b.shape as usize],
        }));
        let bytes: &[u8] = bytemuck::cast_slice(&self.staged_bodies);
        let size = bytes.len() as u64;
        check_limit(
            "bodies",
            size,
            self.limits.max_binding,
            "max_storage_buffer_binding_size",
        )?;
        let scopes = ErrorScopes::push(&self.device);
        self.bodies.reserve(&self.device, size, self.limits.max_buffer);
        if size > 0 {
            self.queue.write_buffer(&self.bodies.buffer, 0, bytes);
        }
        scopes.pop()
    }

    /// Uploads pairs and margin and records the kernel, split into chunks that each fit one
    /// binding and one dispatch. Bodies are already staged.
    fn encode_checked(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        pairs: &[[u32; 2]],
        margin: f32,
    ) -> Result<(), GpuError> {
        let pair_size = size_of::<[u32; 2]>() as u64;
        let result_size = size_of::<GpuSatResult>() as u64;
        let count = pairs.len() as u64;
        check_limit(
            "pairs",
            count * pair_size,
            self.limits.max_buffer,
            "max_buffer_size",
        )?;
        check_limit(
            "sat results",
            count * result_size,
            self.limits.max_buffer,
            "max_buffer_size",
        )?;
        if pairs.is_empty() {
            return Ok(());
        }
        let scopes = ErrorScopes::push(&self.device);
        self.pairs
            .reserve(&self.device, count * pair_size, self.limits.max_buffer);
        self.results
            .reserve(&self.device, count * result_size, self.limits.max_buffer);
        self.queue
            .write_buffer(&self.pairs.buffer, 0, bytemuck::cast_slice(pairs));
        let params = GpuParams {
            margin,
            ..Default::default()
        };
        self.queue
            .write_buffer(&self.params, 0, bytemuck::bytes_of(&params));

        let chunk = chunk_pairs(self.limits);
        let body_bytes =
            (self.staged_bodies.len() as u64 * size_of::<GpuBody>() as u64).max(MIN_BUFFER_BYTES);
        let groups: Vec<(wgpu::BindGroup, u32)> = (0..count)
            .step_by(chunk as usize)
            .map(|first| {
                let len = chunk.min(count - first);
                let entries = [
                    binding(0, &self.bodies.buffer, 0, body_bytes),
                    binding(1, &self.pairs.buffer, first * pair_size, len * pair_size),
                    binding(2, &self.results.buffer, first * result_size, len * result_size),
                    binding(3, &self.params, 0, size_of::<GpuParams>() as u64),
                ];
                let group = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some("sat call"),
                    layout: &self.call_layout,
                    entries: &entries,
                });
                (group, len.div_ceil(u64::from(WORKGROUP_SIZE)) as u32)
            })
            .collect();
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("sat"),
                timestamp_writes: None,
            });
            pass.set_pipeline(&self.pipeline);
            pass.set_bind_group(0, &self.geometry_group, &[]);
            for (group, workgroups) in &groups {
                pass.set_bind_group(1, group, &[]);
                pass.dispatch_workgroups(*workgroups, 1, 1);
            }
        }
        scopes.pop()
    }

    /// Copies `count` results to the readback buffer, submits `encoder`, waits (bounded) and
    /// appends the converted results to `out`.
    fn read_results(
        &mut self,
        mut encoder: wgpu::CommandEncoder,
        count: usize,
        out: &mut Vec<GpuSatResult>,
    ) -> Result<(), GpuError> {
        let bytes = (count * size_of::<GpuSatResult>()) as u64;
        if count == 0 {
            return Ok(());
        }
        let scopes = ErrorScopes::push(&self.device);
        self.readback.reserve(&self.device, bytes, self.limits.max_buffer);
        encoder.copy_buffer_to_buffer(&self.results.buffer, 0, &self.readback.buffer, 0, bytes);
        let submission = self.queue.submit([encoder.finish()]);
        let (sender, receiver) = std::sync::mpsc::channel();
        self.readback
            .buffer
            .map_async(wgpu::MapMode::Read, 0..bytes, move |r| drop(sender.send(r)));
        scopes.pop()?;
        let waited = self.device.poll(wgpu::PollType::Wait {
            submission_index: Some(submission),
            timeout: Some(READBACK_TIMEOUT),
        });
        self.check_health()?;
        match waited {
            Ok(_) => {}
            Err(wgpu::PollError::Timeout) => return Err(GpuError::Timeout(READBACK_TIMEOUT)),
            Err(e) => return Err(GpuError::Readback(e.to_string())),
        }
        match receiver.try_recv() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(GpuError::Readback(e.to_string())),
            Err(_) => return Err(GpuError::Readback("map callback did not run".into())),
        }
        {
            let view = self
                .readback
                .buffer
                .get_mapped_range(0..bytes)
                .map_err(|e| GpuError::Readback(e.to_string()))?;
            out.extend(
                view.chunks_exact(size_of::<GpuSatResult>())
                    .map(bytemuck::pod_read_unaligned::<GpuSatResult>),
            );
        }
        self.readback.buffer.unmap();
        Ok(())
    }

    /// Reports a lost device or an error that escaped the error scopes.
    fn check_health(&self) -> Result<(), GpuError> {
        let mut health = self
            .health
            .lock()
            .map_err(|_| GpuError::Wgpu("error handler poisoned".into()))?;
        if let Some(lost) = &health.lost {
            return Err(GpuError::DeviceLost(lost.clone()));
        }
        match health.uncaptured.take() {
            Some(e) => Err(GpuError::Wgpu(e)),
            None => Ok(()),
        }
    }
}

/// Validation and out-of-memory error scopes around a group of wgpu calls.
struct ErrorScopes {
    out_of_memory: wgpu::ErrorScopeGuard,
    validation: wgpu::ErrorScopeGuard,
}

impl ErrorScopes {
    fn push(device: &wgpu::Device) -> Self {
        let out_of_memory = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let validation = device.push_error_scope(wgpu::ErrorFilter::Validation);
        ErrorScopes {
            out_of_memory,
            validation,
        }
    }

    /// Pops both scopes (innermost first) and returns the first error caught.
    fn pop(self) -> Result<(), GpuError> {
        let validation = pollster::block_on(self.validation.pop());
        let out_of_memory = pollster::block_on(self.out_of_memory.pop());
        match validation.or(out_of_memory) {
            Some(e) => Err(GpuError::Wgpu(e.to_string())),
            None => Ok(()),
        }
    }
}

/// Pairs per dispatch chunk: fits one storage binding of results and of pairs and one dispatch
/// dimension, and is a multiple of 256 so every chunk's byte offset (8 and 32 bytes per pair) is
/// a multiple of 2048, above any `min_storage_buffer_offset_alignment` (at most 256).
fn chunk_pairs(limits: DeviceLimits) -> u64 {
    let by_binding = limits.max_binding / size_of::<GpuSatResult>() as u64;
    let by_dispatch = limits.max_workgroups * u64::from(WORKGROUP_SIZE);
    (by_binding.min(by_dispatch) / 256 * 256).max(256)
}

fn check_limit(what: &'static str, bytes: u64, limit: u64, limit_name: &'static str) -> Result<(), GpuError> {
    if bytes > limit {
        return Err(GpuError::TooLarge {
            what,
            bytes,
            limit,
            limit_name,
        });
    }
    Ok(())
}

fn binding(index: u32, buffer: &wgpu::Buffer, offset: u64, size: u64) -> wgpu::BindGroupEntry<'_> {
    wgpu::BindGroupEntry {
        binding: index,
        resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
            buffer,
            offset,
            size: wgpu::BufferSize::new(size),
        }),
    }
}

/// A compute bind group layout: one storage buffer per entry of `read_only` (true = read-only),
/// then a uniform buffer when `uniform`.
fn bind_group_layout(
    device: &wgpu::Device,
    label: &str,
    read_only: &[bool],
    uniform: bool,
) -> wgpu::BindGroupLayout {
    let storage = read_only
        .iter()
        .map(|&read_only| wgpu::BufferBindingType::Storage { read_only });
    let entries: Vec<wgpu::BindGroupLayoutEntry> = storage
        .chain(uniform.then_some(wgpu::BufferBindingType::Uniform))
        .enumerate()
        .map(|(i, ty)| wgpu::BindGroupLayoutEntry {
            binding: i as u32,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty,
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        })
        .collect();
    device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some(label),
        entries: &entries,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_fit_one_binding_and_one_dispatch_at_aligned_offsets() {
        // lavapipe: 128 MiB bindings, 65,535 workgroups per dimension.
        let lavapipe = DeviceLimits {
            max_binding: 128 << 20,
            max_buffer: 1 << 40,
            max_workgroups: 65_535,
        };
        let small_binding = DeviceLimits {
            max_binding: 1 << 20,
            ..lavapipe
        };
        for limits in [lavapipe, small_binding] {
            let chunk = chunk_pairs(limits);
            let result_bytes = chunk * size_of::<GpuSatResult>() as u64;
            assert!(result_bytes <= limits.max_binding);
            assert!(chunk <= limits.max_workgroups * u64::from(WORKGROUP_SIZE));
            assert_eq!((chunk * size_of::<[u32; 2]>() as u64) % 256, 0);
            assert!(
                chunk * 2 > limits.max_binding / size_of::<GpuSatResult>() as u64 || chunk * 2 > 65_535 * 64
            );
        }
        assert_eq!(chunk_pairs(lavapipe), 4_194_048);
    }
}

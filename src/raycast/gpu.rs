//! The GPU batch: the kernel `raycast.wgsl` traverses the BVH and casts each ray at its
//! candidates, one ray per invocation; the host builds the BVH and turns slots into hits.
//!
//! 1. Construction uploads the shape table and the hull face planes once ([`ShapeTables`]).
//! 2. Each call validates the bodies ([`validate_batch`], the CPU path's messages), builds the
//!    [`Bvh`] on the CPU (the same one the CPU batch traverses) and writes bodies, nodes, body
//!    lists and rays into buffers that are reused and grown, never shrunk.
//! 3. The kernel writes, per ray, a [`GpuRayCount`] and up to `hit_slots` [`GpuRayHit`]s sorted
//!    by distance then body ([`GPU_HIT_SLOTS`]; 1 with `closest`). Batches beyond one binding or
//!    one dispatch are split into chunks bound at offsets.
//! 4. The host reads them back and builds [`RayHit`]s (world points from the f64 origin). Rays
//!    that entered more bodies than their slots, or that the driver cut short
//!    ([`INCOMPLETE_BIT`], llvmpipe's loop budget, see [`crate::gpu`]), are recomputed by the
//!    CPU batch's routine and counted in [`RayTimings::cpu_rays`].
//!
//! Errors never panic: wgpu validation and out-of-memory errors are caught with error scopes
//! (and an uncaptured-error handler on devices this type creates); readback waits are bounded
//! by [`crate::gpu::READBACK_TIMEOUT`]. Calls take `&mut self`; the type is `Send + Sync`.
//! Timings on Mesa lavapipe (a CPU driver) say nothing about GPU speed.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rayon::prelude::*;
use wgpu::util::DeviceExt;

use super::bvh::{Bvh, BvhNode};
use super::cpu::cast_one;
use super::layout::{
    GPU_HIT_SLOTS, GpuRay, GpuRayBody, GpuRayCount, GpuRayHit, GpuRayParams, INCOMPLETE_BIT,
    STACK_OVERFLOW_BIT, ShapeTables, WORKGROUP_SIZE,
};
use super::ray::{Ray, RayHit};
use crate::gpu::{GpuError, READBACK_TIMEOUT};
use crate::scene::{Body, validate_batch};
use crate::shape::Shape;

/// The WGSL source of the ray kernel.
pub const RAYCAST_WGSL: &str = include_str!("raycast.wgsl");

/// Smallest buffer created (wgpu rejects zero-sized bindings).
const MIN_BUFFER_BYTES: u64 = 256;

/// Wall-clock times of the last [`GpuRaycaster::cast`] call.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RayTimings {
    /// Validating the bodies and building the BVH on the CPU.
    pub bvh_build: Duration,
    /// Writing bodies, BVH, rays and parameters to the GPU.
    pub upload: Duration,
    /// Recording, submitting, waiting for the kernel and reading the slots back.
    pub dispatch_readback: Duration,
    /// Turning slots into hits, plus the CPU recomputation of `cpu_rays`.
    pub finish: Duration,
    /// Rays recomputed on the CPU: more hits than slots, or cut short by the driver.
    pub cpu_rays: usize,
}

/// A wgpu device and queue for a ray caster that was not handed one: the one place that gets
/// them (to become the process-wide GPU context). Installs an uncaptured-error handler that
/// records into `health`.
fn default_device(health: &Arc<Mutex<Option<String>>>) -> Result<(wgpu::Device, wgpu::Queue), GpuError> {
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
        power_preference: wgpu::PowerPreference::HighPerformance,
        ..Default::default()
    }))
    .map_err(|e| GpuError::NoAdapter(e.to_string()))?;
    let adapter_limits = adapter.limits();
    let required_limits = wgpu::Limits {
        max_storage_buffer_binding_size: adapter_limits.max_storage_buffer_binding_size,
        max_buffer_size: adapter_limits.max_buffer_size,
        ..wgpu::Limits::default()
    };
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("hullsat raycast"),
        required_limits,
        ..Default::default()
    }))
    .map_err(|e| GpuError::RequestDevice(e.to_string()))?;
    let sink = Arc::clone(health);
    device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
        if let Ok(mut h) = sink.lock() {
            h.get_or_insert_with(|| e.to_string());
        }
    }));
    Ok((device, queue))
}

/// A device buffer reused between calls and grown (doubling) when a call needs more.
struct GrowBuffer {
    buffer: wgpu::Buffer,
    label: &'static str,
    usage: wgpu::BufferUsages,
}

impl GrowBuffer {
    fn new(device: &wgpu::Device, label: &'static str, usage: wgpu::BufferUsages) -> Self {
        GrowBuffer {
            buffer: create_buffer(device, label, MIN_BUFFER_BYTES, usage),
            label,
            usage,
        }
    }

    /// Makes room for `bytes` (the caller checked it against `max_buffer`).
    fn reserve(&mut self, device: &wgpu::Device, bytes: u64, max_buffer: u64) {
        if bytes > self.buffer.size() {
            let size = bytes.next_power_of_two().min(max_buffer).max(bytes);
            self.buffer = create_buffer(device, self.label, size, self.usage);
        }
    }

    /// Grows to fit `data` and writes it at offset 0.
    fn write(&mut self, device: &wgpu::Device, queue: &wgpu::Queue, data: &[u8], max_buffer: u64) {
        self.reserve(device, data.len() as u64, max_buffer);
        if !data.is_empty() {
            queue.write_buffer(&self.buffer, 0, data);
        }
    }
}

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

/// Ray casts on the GPU over a fixed set of shapes. See the module docs.
pub struct GpuRaycaster {
    device: wgpu::Device,
    queue: wgpu::Queue,
    /// Errors reported outside error scopes (devices this type created).
    health: Arc<Mutex<Option<String>>>,
    max_binding: u64,
    max_buffer: u64,
    max_workgroups: u64,
    shapes: Vec<Shape>,
    pipeline: wgpu::ComputePipeline,
    shape_group: wgpu::BindGroup,
    call_layout: wgpu::BindGroupLayout,
    params: wgpu::Buffer,
    bodies: GrowBuffer,
    nodes: GrowBuffer,
    body_lists: GrowBuffer,
    rays: GrowBuffer,
    counts: GrowBuffer,
    hits: GrowBuffer,
    readback: GrowBuffer,
    timings: RayTimings,
}

impl GpuRaycaster {
    /// Gets a device (high-performance adapter; software adapters such as lavapipe count) and
    /// uploads `shapes`. [`GpuError::NoAdapter`] when the machine has none.
    pub fn new(shapes: &[Shape]) -> Result<Self, GpuError> {
        let health = Arc::new(Mutex::new(None));
        let (device, queue) = default_device(&health)?;
        Self::build(device, queue, health, shapes)
    }

    /// Runs on a device the caller owns; the caller's error handlers stay in place, this type's
    /// own calls use error scopes.
    pub fn with_device(device: wgpu::Device, queue: wgpu::Queue, shapes: &[Shape]) -> Result<Self, GpuError> {
        Self::build(device, queue, Arc::new(Mutex::new(None)), shapes)
    }

    fn build(
        device: wgpu::Device,
        queue: wgpu::Queue,
        health: Arc<Mutex<Option<String>>>,
        shapes: &[Shape],
    ) -> Result<Self, GpuError> {
        let limits = device.limits();
        let max_binding = limits.max_storage_buffer_binding_size;
        let tables = ShapeTables::new(shapes);
        let scopes = ErrorScopes::push(&device);
        let mut shape_buffers = Vec::new();
        for (label, bytes) in [
            ("ray shapes", bytemuck::cast_slice::<_, u8>(&tables.shapes)),
            ("ray hull planes", bytemuck::cast_slice(&tables.planes)),
        ] {
            check_limit(
                label,
                bytes.len() as u64,
                max_binding,
                "max_storage_buffer_binding_size",
            )?;
            let mut contents = bytes.to_vec();
            contents.resize(bytes.len().max(MIN_BUFFER_BYTES as usize), 0);
            shape_buffers.push(device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents: &contents,
                usage: wgpu::BufferUsages::STORAGE,
            }));
        }
        let shape_layout = bind_group_layout(&device, "ray shapes", &[true, true], false);
        let call_layout =
            bind_group_layout(&device, "ray call", &[true, true, true, true, false, false], true);
        let shape_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("ray shapes"),
            layout: &shape_layout,
            entries: &[
                binding(0, &shape_buffers[0], 0, shape_buffers[0].size()),
                binding(1, &shape_buffers[1], 0, shape_buffers[1].size()),
            ],
        });
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("raycast.wgsl"),
            source: wgpu::ShaderSource::Wgsl(RAYCAST_WGSL.into()),
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("raycast"),
            bind_group_layouts: &[Some(&shape_layout), Some(&call_layout)],
            immediate_size: 0,
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("raycast"),
            layout: Some(&pipeline_layout),
            module: &module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        });
        let storage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST;
        let params = create_buffer(
            &device,
            "ray params",
            size_of::<GpuRayParams>() as u64,
            wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        );
        let out = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC;
        let raycaster = GpuRaycaster {
            bodies: GrowBuffer::new(&device, "ray bodies", storage),
            nodes: GrowBuffer::new(&device, "bvh nodes", storage),
            body_lists: GrowBuffer::new(&device, "bvh body lists", storage),
            rays: GrowBuffer::new(&device, "rays", storage),
            counts: GrowBuffer::new(&device, "ray hit counts", out),
            hits: GrowBuffer::new(&device, "ray hits", out),
            readback: GrowBuffer::new(
                &device,
                "ray readback",
                wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            ),
            params,
            pipeline,
            shape_group,
            call_layout,
            max_binding,
            max_buffer: limits.max_buffer_size,
            max_workgroups: u64::from(limits.max_compute_workgroups_per_dimension),
            shapes: shapes.to_vec(),
            device,
            queue,
            health,
            timings: RayTimings::default(),
        };
        scopes.pop()?;
        Ok(raycaster)
    }

    /// The device's adapter (name, backend, device type).
    pub fn adapter_info(&self) -> wgpu::AdapterInfo {
        self.device.adapter_info()
    }

    /// The device the kernel runs on.
    pub fn device(&self) -> &wgpu::Device {
        &self.device
    }

    /// The queue the kernel is submitted to.
    pub fn queue(&self) -> &wgpu::Queue {
        &self.queue
    }

    /// The shapes, in index order.
    pub fn shapes(&self) -> &[Shape] {
        &self.shapes
    }

    /// Times of the last [`Self::cast`].
    pub fn timings(&self) -> RayTimings {
        self.timings
    }

    /// The same lists as [`super::CpuRaycaster::cast`]: one per ray, every body the ray enters
    /// within its max distance, nearest first (ties: lower body index), or with `closest` at
    /// most the nearest. Distances and normals agree with the CPU's to f32 rounding.
    pub fn cast(
        &mut self,
        bodies: &[Body],
        rays: &[Ray],
        closest: bool,
    ) -> Result<Vec<Vec<RayHit>>, GpuError> {
        // Step 2.
        let start = Instant::now();
        let bodies = validate_batch(&self.shapes, bodies, &[], 0.0)?;
        let bvh = Bvh::build(&self.shapes, &bodies);
        let bvh_build = start.elapsed();
        let start = Instant::now();
        self.check_health()?;
        let slots = if closest { 1 } else { GPU_HIT_SLOTS };
        self.upload(&bodies, &bvh, rays, slots, closest)?;
        let upload = start.elapsed();
        // Step 3.
        let start = Instant::now();
        let (counts, slot_hits) = self.dispatch_and_read(rays.len() as u64, slots)?;
        let dispatch_readback = start.elapsed();
        // Step 4.
        let start = Instant::now();
        let slots = slots as usize;
        let out: Vec<(Vec<RayHit>, bool)> = rays
            .par_iter()
            .enumerate()
            .map(|(i, ray)| {
                let count = counts[i];
                let overflow = !closest && count.hits as usize > slots;
                if overflow || count.flags & (INCOMPLETE_BIT | STACK_OVERFLOW_BIT) != 0 {
                    return (cast_one(&self.shapes, &bodies, &bvh, ray, closest), true);
                }
                let kept = (count.hits as usize).min(slots);
                let hits = slot_hits[i * slots..i * slots + kept]
                    .iter()
                    .map(|h| RayHit {
                        body: h.body,
                        distance: h.distance,
                        point: ray.point_at(h.distance),
                        normal: h.normal.into(),
                    })
                    .collect();
                (hits, false)
            })
            .collect();
        let cpu_rays = out.iter().filter(|(_, cpu)| *cpu).count();
        self.timings = RayTimings {
            bvh_build,
            upload,
            dispatch_readback,
            finish: start.elapsed(),
            cpu_rays,
        };
        Ok(out.into_iter().map(|(hits, _)| hits).collect())
    }

    /// Writes bodies, BVH, rays and parameters.
    fn upload(
        &mut self,
        bodies: &[Body],
        bvh: &Bvh,
        rays: &[Ray],
        slots: u32,
        closest: bool,
    ) -> Result<(), GpuError> {
        let gpu_bodies: Vec<GpuRayBody> = bodies
            .iter()
            .map(|b| GpuRayBody::from_pose(b.shape, &b.pose))
            .collect();
        let body_lists: Vec<u32> = bvh.bodies.iter().chain(&bvh.unbounded).copied().collect();
        let gpu_rays: Vec<GpuRay> = rays.iter().map(GpuRay::from_ray).collect();
        let (bvh_origin_hi, bvh_origin_lo) = crate::gpu::layout::split_translation(bvh.origin);
        let params = GpuRayParams {
            bvh_origin_hi,
            unbounded_count: bvh.unbounded.len() as u32,
            bvh_origin_lo,
            hit_slots: slots,
            closest: u32::from(closest),
            node_count: bvh.nodes.len() as u32,
            unbounded_first: bvh.bodies.len() as u32,
            _pad: 0,
        };
        let whole: [(&str, &[u8]); 3] = [
            ("ray bodies", bytemuck::cast_slice(&gpu_bodies)),
            ("bvh nodes", bytemuck::cast_slice::<BvhNode, u8>(&bvh.nodes)),
            ("bvh body lists", bytemuck::cast_slice(&body_lists)),
        ];
        for (what, bytes) in whole {
            check_limit(
                what,
                bytes.len() as u64,
                self.max_binding,
                "max_storage_buffer_binding_size",
            )?;
        }
        let count = rays.len() as u64;
        check_limit(
            "rays",
            count * size_of::<GpuRay>() as u64,
            self.max_buffer,
            "max_buffer_size",
        )?;
        check_limit(
            "ray hits",
            count * u64::from(slots) * size_of::<GpuRayHit>() as u64,
            self.max_buffer,
            "max_buffer_size",
        )?;
        let scopes = ErrorScopes::push(&self.device);
        let (device, queue, max) = (&self.device, &self.queue, self.max_buffer);
        self.bodies.write(device, queue, whole[0].1, max);
        self.nodes.write(device, queue, whole[1].1, max);
        self.body_lists.write(device, queue, whole[2].1, max);
        self.rays
            .write(device, queue, bytemuck::cast_slice(&gpu_rays), max);
        self.counts
            .reserve(device, count * size_of::<GpuRayCount>() as u64, max);
        self.hits.reserve(
            device,
            count * u64::from(slots) * size_of::<GpuRayHit>() as u64,
            max,
        );
        queue.write_buffer(&self.params, 0, bytemuck::bytes_of(&params));
        scopes.pop()
    }

    /// Records the kernel in chunks, submits, waits (bounded) and reads counts and slots back.
    fn dispatch_and_read(
        &mut self,
        count: u64,
        slots: u32,
    ) -> Result<(Vec<GpuRayCount>, Vec<GpuRayHit>), GpuError> {
        if count == 0 {
            return Ok((Vec::new(), Vec::new()));
        }
        let ray_size = size_of::<GpuRay>() as u64;
        let count_size = size_of::<GpuRayCount>() as u64;
        let hits_size = u64::from(slots) * size_of::<GpuRayHit>() as u64;
        let chunk = chunk_rays(self.max_binding, self.max_workgroups, hits_size);
        let scopes = ErrorScopes::push(&self.device);
        let fixed = [&self.bodies.buffer, &self.nodes.buffer, &self.body_lists.buffer];
        let mut encoder = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("raycast"),
            });
        {
            let groups: Vec<(wgpu::BindGroup, u32)> = (0..count)
                .step_by(chunk as usize)
                .map(|first| {
                    let len = chunk.min(count - first);
                    let mut entries: Vec<wgpu::BindGroupEntry> = fixed
                        .iter()
                        .enumerate()
                        .map(|(i, b)| binding(i as u32, b, 0, b.size()))
                        .collect();
                    entries.extend([
                        binding(3, &self.rays.buffer, first * ray_size, len * ray_size),
                        binding(4, &self.counts.buffer, first * count_size, len * count_size),
                        binding(5, &self.hits.buffer, first * hits_size, len * hits_size),
                        binding(6, &self.params, 0, size_of::<GpuRayParams>() as u64),
                    ]);
                    let group = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
                        label: Some("ray call"),
                        layout: &self.call_layout,
                        entries: &entries,
                    });
                    (group, len.div_ceil(u64::from(WORKGROUP_SIZE)) as u32)
                })
                .collect();
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("raycast"),
                timestamp_writes: None,
            });
            pass.set_pipeline(&self.pipeline);
            pass.set_bind_group(0, &self.shape_group, &[]);
            for (group, workgroups) in &groups {
                pass.set_bind_group(1, group, &[]);
                pass.dispatch_workgroups(*workgroups, 1, 1);
            }
        }
        let count_bytes = count * count_size;
        let hit_bytes = count * hits_size;
        self.readback
            .reserve(&self.device, count_bytes + hit_bytes, self.max_buffer);
        encoder.copy_buffer_to_buffer(&self.counts.buffer, 0, &self.readback.buffer, 0, count_bytes);
        encoder.copy_buffer_to_buffer(
            &self.hits.buffer,
            0,
            &self.readback.buffer,
            count_bytes,
            hit_bytes,
        );
        let submission = self.queue.submit([encoder.finish()]);
        let total = count_bytes + hit_bytes;
        let (sender, receiver) = std::sync::mpsc::channel();
        self.readback
            .buffer
            .map_async(wgpu::MapMode::Read, 0..total, move |r| drop(sender.send(r)));
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
        let result = {
            let view = self
                .readback
                .buffer
                .get_mapped_range(0..total)
                .map_err(|e| GpuError::Readback(e.to_string()))?;
            let (counts, hits) = view.split_at(count_bytes as usize);
            (
                counts
                    .chunks_exact(count_size as usize)
                    .map(bytemuck::pod_read_unaligned)
                    .collect(),
                hits.chunks_exact(size_of::<GpuRayHit>())
                    .map(bytemuck::pod_read_unaligned)
                    .collect(),
            )
        };
        self.readback.buffer.unmap();
        Ok(result)
    }

    /// Reports an error that escaped the error scopes.
    fn check_health(&self) -> Result<(), GpuError> {
        let mut health = self
            .health
            .lock()
            .map_err(|_| GpuError::Wgpu("error handler poisoned".into()))?;
        match health.take() {
            Some(e) => Err(GpuError::Wgpu(e)),
            None => Ok(()),
        }
    }
}

/// Rays per dispatch chunk: the chunk's rays (48 bytes each) and hit slots (`hit_bytes` per
/// ray) each fit one storage binding, its workgroups one dispatch dimension, and it is a
/// multiple of 256 so every chunk offset (a multiple of 8 bytes per ray) is 2048-aligned, above
/// any `min_storage_buffer_offset_alignment`.
fn chunk_rays(max_binding: u64, max_workgroups: u64, hit_bytes: u64) -> u64 {
    let per_ray = hit_bytes.max(size_of::<GpuRay>() as u64);
    let by_binding = max_binding / per_ray;
    let by_dispatch = max_workgroups * u64::from(WORKGROUP_SIZE);
    (by_binding.min(by_dispatch) / 256 * 256).max(256)
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

/// A compute bind group layout: one storage buffer per entry of `read_only` (true =
/// read-only), then a uniform buffer when `uniform`.
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
        for (max_binding, hit_bytes) in [(128u64 << 20, 256u64), (1 << 20, 32), (128 << 20, 32)] {
            let chunk = chunk_rays(max_binding, 65_535, hit_bytes);
            assert!(chunk * hit_bytes.max(48) <= max_binding);
            assert!(chunk <= 65_535 * 64);
            assert_eq!(chunk % 256, 0);
        }
    }
}

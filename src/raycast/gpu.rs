//! The GPU batch: the GPU builds the BVH, the kernel `raycast.wgsl` traverses it and casts each
//! ray at its candidates, one ray per invocation; the host turns slots into hits.
//!
//! 1. Construction uploads the shape table and the hull face planes once ([`ShapeTables`]), and
//!    with a triangle mesh or a compound among the shapes their tables (vertices, triangles and
//!    BVH nodes of each mesh, each compound's children as shapes of their own plus a child
//!    table) and the kernel that reads them (`raycast_complex.wgsl`).
//! 2. Each call validates the bodies ([`ValidatedBatch`], the CPU path's messages) and
//!    normalizes their rotations into memory it keeps, takes the BVH frame's origin and counts
//!    the half-spaces (`crate::bvh::frame_of`, as the CPU's BVH does), and writes bodies and
//!    rays into mapped staging memory on all threads; every buffer is reused and grown, never
//!    shrunk.
//! 3. One submission: the staged copies, the BVH built on the GPU over the bodies (the
//!    resident path's prefix tree, `crate::bvh`'s GPU builder), the half-spaces left out of it
//!    and tested by every ray as the CPU's unbounded list; then the kernel, which writes per
//!    ray a [`GpuRayCount`] and up to `hit_slots` [`GpuRayHit`]s sorted by distance then body
//!    ([`GPU_HIT_SLOTS`]; 1 with `closest`). Batches beyond one binding or one dispatch are
//!    split into chunks bound at offsets.
//! 4. The host writes [`RayHit`]s straight from the mapped slots into the caller's
//!    [`RayHitSet`], on all threads (world points from the f64 origin). Rays that entered more
//!    bodies than their slots, or that the driver cut short ([`INCOMPLETE_BIT`], llvmpipe's
//!    loop budget, see [`crate::gpu`]), are recomputed by the CPU batch's routine over a [`Bvh`]
//!    built on the CPU for them (only when there are some), and counted in
//!    [`RayTimings::cpu_rays`].
//!
//! The device is the process-wide GPU context's ([`shared_context`], shared with the
//! narrowphase) unless the caller hands one in. Errors never panic: wgpu validation and
//! out-of-memory errors are caught with error scopes (and the shared device's uncaptured-error
//! handler); readback waits are bounded by [`crate::gpu::READBACK_TIMEOUT`]. Calls take `&mut self`; the type is `Send + Sync`.
//! Timings on Mesa lavapipe (a CPU driver) say nothing about GPU speed.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use encase::ShaderType;
use glam::DVec3;
use rayon::prelude::*;

use super::cast_kernel::{CastBuffers, CastKernel};
use super::cpu::cast_one_into;
use super::hit_set::RayHitSet;
use super::layout::{
    COMPLEX_STORAGE_BUFFERS, GPU_HIT_SLOTS, GpuBody, GpuRay, GpuRayCount, GpuRayHit, GpuRayParams,
    INCOMPLETE_BIT, STACK_OVERFLOW_BIT, ShapeTables,
};
use super::ray::{Ray, RayHit};
use super::resident::{ResidentHits, ResidentRayState, ResidentRays};
use crate::bvh::gpu::{GpuBvhBuilder, TreeLayout};
use crate::bvh::{Bvh, frame_of};
use crate::gpu::buffers::{GrowBuffer, StagingBuffer, check_limit, uniform_buffer};
use crate::gpu::context::ErrorScopes;
use crate::gpu::layout::{WgslVec3, split_translation, uniform_bytes};
use crate::gpu::{GpuContext, GpuError, shared_context};
use crate::scene::Body;
use crate::scene::ValidatedBatch;
use crate::scene::validate::normalized;
use crate::shape::Shape;

pub use super::cast_kernel::{RAYCAST_COMPLEX_WGSL, RAYCAST_WGSL};

/// Wall-clock times of the last [`GpuRaycaster::cast_into`] (or [`GpuRaycaster::cast`]) call:
/// consecutive steps, which add up to the whole call (`cast`'s lists built after it excepted).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RayTimings {
    /// Validating the bodies and normalizing their rotations, the BVH frame's origin, on all
    /// threads.
    pub prepare: Duration,
    /// Building a BVH on the CPU for the rays recomputed there (`cpu_rays`; zero when none:
    /// the GPU builds its own, inside `dispatch_readback`).
    pub bvh_build: Duration,
    /// Writing bodies and rays to the GPU.
    pub upload: Duration,
    /// Recording, submitting, waiting for the BVH build and the kernel and reading the slots
    /// back.
    pub dispatch_readback: Duration,
    /// Turning slots into hits in the caller's [`RayHitSet`], plus the CPU recomputation of
    /// `cpu_rays`.
    pub finish: Duration,
    /// Rays recomputed on the CPU: more hits than slots, or cut short by the driver.
    pub cpu_rays: usize,
}

/// Ray casts on the GPU over a fixed set of shapes. See the module docs.
pub struct GpuRaycaster {
    /// The device, its queue, limits and health (the process-wide context unless handed one).
    context: Arc<GpuContext>,
    shapes: Vec<Shape>,
    kernel: CastKernel,
    params: wgpu::Buffer,
    bodies: GrowBuffer,
    /// Builds each call's BVH on the GPU (its own buffers; the resident API has another).
    builder: GpuBvhBuilder,
    rays: GrowBuffer,
    counts: GrowBuffer,
    hits: GrowBuffer,
    readback: GrowBuffer,
    /// Mapped upload memory the bodies and rays are written into on all threads, copied to
    /// `bodies` and `rays` by the call's encoder (in a mutex only to keep the type `Sync`: calls
    /// take `&mut self` and never lock it).
    staging: Mutex<[StagingBuffer; 2]>,
    /// Bytes of bodies and rays staged for the next call's copies.
    staged: [u64; 2],
    /// The resident API's BVH builder and buffers, made by the first [`Self::encode_resident`].
    resident: Option<ResidentRayState>,
    /// The last call's bodies with normalized rotations, kept for their memory.
    normalized: Vec<Body>,
    /// The CPU BVH of the last call that recomputed rays, kept for its memory.
    bvh: Bvh,
    /// The set [`Self::cast`] fills before building its lists, kept for its memory.
    lists: RayHitSet,
    timings: RayTimings,
}

impl GpuRaycaster {
    /// Runs on the process-wide GPU context ([`shared_context`]: one device for the whole
    /// process, never torn down) and uploads `shapes`. [`GpuError::NoAdapter`] when the machine
    /// has none. `shapes`: a `Vec`, a slice or an array, as for [`crate::CpuRaycaster::new`].
    pub fn new(shapes: impl AsRef<[Shape]>) -> Result<Self, GpuError> {
        Self::with_context(shared_context()?, shapes.as_ref())
    }

    /// Runs on a device the caller owns (wrapped by [`GpuContext::with_device`]); the caller's
    /// error handlers stay in place, this type's own calls use error scopes.
    pub fn with_device(device: wgpu::Device, queue: wgpu::Queue, shapes: &[Shape]) -> Result<Self, GpuError> {
        Self::with_context(GpuContext::with_device(device, queue)?, shapes)
    }

    /// Runs on `context` (the shared one, or a caller's) and uploads `shapes`. With a triangle
    /// mesh or a compound among them the kernel binds [`COMPLEX_STORAGE_BUFFERS`] storage
    /// buffers per shader stage: [`GpuError::Unsupported`] on a device that allows fewer.
    pub fn with_context(context: Arc<GpuContext>, shapes: &[Shape]) -> Result<Self, GpuError> {
        let device = context.device();
        let tables = ShapeTables::new(shapes);
        let complex = tables.has_complex();
        if complex && context.limits.max_storage_buffers < COMPLEX_STORAGE_BUFFERS {
            return Err(GpuError::Unsupported(format!(
                "GPU ray casts against triangle meshes or compounds need {COMPLEX_STORAGE_BUFFERS} storage buffers per shader stage and this device allows {}; use CpuRaycaster",
                context.limits.max_storage_buffers
            )));
        }
        let scopes = ErrorScopes::push(device);
        let kernel = CastKernel::new(&context, &tables)?;
        let builder = GpuBvhBuilder::new(&context, shapes, TreeLayout::Prefix, 0.0)?;
        let input = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST;
        let params = uniform_buffer(device, "ray params", GpuRayParams::min_size().get());
        let out = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC;
        let raycaster = GpuRaycaster {
            bodies: GrowBuffer::new(device, "ray bodies", input),
            builder,
            rays: GrowBuffer::new(device, "rays", input),
            counts: GrowBuffer::new(device, "ray hit counts", out),
            hits: GrowBuffer::new(device, "ray hits", out),
            readback: GrowBuffer::new(
                device,
                "ray readback",
                wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            ),
            staging: Mutex::new([
                StagingBuffer::new(device, "ray body staging"),
                StagingBuffer::new(device, "ray staging"),
            ]),
            staged: [0; 2],
            resident: None,
            normalized: Vec::new(),
            bvh: Bvh::default(),
            lists: RayHitSet::new(),
            params,
            kernel,
            shapes: shapes.to_vec(),
            context,
            timings: RayTimings::default(),
        };
        scopes.pop()?;
        Ok(raycaster)
    }

    /// The device's adapter (name, backend, device type).
    pub fn adapter_info(&self) -> wgpu::AdapterInfo {
        self.context.adapter_info().clone()
    }

    /// The device the kernel runs on.
    pub fn device(&self) -> &wgpu::Device {
        self.context.device()
    }

    /// The queue the kernel is submitted to.
    pub fn queue(&self) -> &wgpu::Queue {
        self.context.queue()
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
    /// [`Self::cast_into`] into a set this caster keeps, then one `Vec` per ray.
    pub fn cast(
        &mut self,
        bodies: &[Body],
        rays: &[Ray],
        closest: bool,
    ) -> Result<Vec<Vec<RayHit>>, GpuError> {
        let mut set = std::mem::take(&mut self.lists);
        let cast = self.cast_into(bodies, rays, closest, &mut set);
        let lists = cast.map(|()| set.to_lists());
        self.lists = set;
        lists
    }

    /// [`Self::cast`] into `out`, cleared first (also on error): the hits are written straight
    /// from the mapped slots into the set on all threads. The bodies' normalized copy is kept
    /// in memory the caster keeps and the BVH is built on the GPU, so with a set reused on
    /// batches of similar size nothing is allocated once warm (but a CPU BVH's scratch, about
    /// 50 bytes a body, in a call that recomputes rays on the CPU). [`Self::timings`] splits
    /// the whole call.
    pub fn cast_into(
        &mut self,
        bodies: &[Body],
        rays: &[Ray],
        closest: bool,
        out: &mut RayHitSet,
    ) -> Result<(), GpuError> {
        out.clear();
        self.timings = RayTimings::default();
        // Step 2.
        let mut clock = Instant::now();
        let checked = ValidatedBatch::new(&self.shapes, bodies, &[], 0.0)?;
        self.normalized.clear();
        self.normalized.par_extend(
            checked
                .given_bodies()
                .par_iter()
                .with_min_len(BODIES_PER_TASK)
                .map(normalized),
        );
        let frame = frame_of(&self.shapes, &self.normalized);
        let prepare = lap(&mut clock);
        let bodies = std::mem::take(&mut self.normalized);
        let cast = self.cast_prepared(&bodies, frame, rays, closest, out, &mut clock);
        self.normalized = bodies;
        let timings = cast?;
        self.timings = RayTimings { prepare, ..timings };
        Ok(())
    }

    /// Steps 2 (upload) to 4 over checked `bodies`, their BVH frame's origin and half-spaces
    /// (`frame`): the split from the upload on, each step timed from the end of the one before
    /// (`clock`).
    fn cast_prepared(
        &mut self,
        bodies: &[Body],
        frame: (DVec3, usize),
        rays: &[Ray],
        closest: bool,
        out: &mut RayHitSet,
        clock: &mut Instant,
    ) -> Result<RayTimings, GpuError> {
        self.context.check_health()?;
        let slots = if closest { 1 } else { GPU_HIT_SLOTS };
        self.upload(bodies, rays, slots)?;
        let upload = lap(clock);
        if rays.is_empty() {
            return Ok(RayTimings {
                upload,
                ..RayTimings::default()
            });
        }
        // Step 3.
        let mapped = self.dispatch(bodies.len() as u32, frame, rays.len() as u64, slots, closest)?;
        let dispatch_readback = lap(clock);
        // Step 4, read straight from the mapped slots on all threads.
        let view = self
            .readback
            .buffer
            .get_mapped_range(0..mapped)
            .map_err(|e| GpuError::Readback(e.to_string()));
        let (shapes, bvh) = (&self.shapes, &mut self.bvh);
        let mut bvh_build = Duration::ZERO;
        let filled = view.map(|view| {
            let (counts, slot_hits) = view.split_at(rays.len() * size_of::<GpuRayCount>());
            let slots = slots as usize;
            // A ray the GPU could not finish: more hits than its slots, or cut short.
            let to_recompute = |i: usize| {
                let count: GpuRayCount = read_at(counts, i);
                (!closest && count.hits as usize > slots)
                    || count.flags & (INCOMPLETE_BIT | STACK_OVERFLOW_BIT) != 0
            };
            // The CPU's BVH, only for a call that has such rays.
            if (0..rays.len())
                .into_par_iter()
                .with_min_len(FINISH_RAYS_PER_RUN)
                .any(to_recompute)
            {
                let clock = Instant::now();
                bvh.rebuild(shapes, bodies);
                bvh_build = clock.elapsed();
            }
            let bvh = &*bvh;
            out.fill_runs(rays.len(), FINISH_RAYS_PER_RUN, |first, len, run| {
                for (i, ray) in rays.iter().enumerate().skip(first).take(len) {
                    let before = run.hits.len();
                    let count: GpuRayCount = read_at(counts, i);
                    if to_recompute(i) {
                        cast_one_into(shapes, bodies, bvh, ray, closest, &mut run.hits);
                        run.tally += 1;
                    } else {
                        let kept = (count.hits as usize).min(slots);
                        run.hits.extend((i * slots..i * slots + kept).map(|k| {
                            let h: GpuRayHit = read_at(slot_hits, k);
                            RayHit {
                                body: h.body,
                                distance: h.distance,
                                point: ray.point_at(h.distance),
                                normal: h.normal.into(),
                            }
                        }));
                    }
                    run.end_ray(before);
                }
            })
        });
        self.readback.buffer.unmap();
        let cpu_rays = filled?;
        let finish = lap(clock).saturating_sub(bvh_build);
        Ok(RayTimings {
            upload,
            dispatch_readback,
            bvh_build,
            finish,
            cpu_rays,
            ..RayTimings::default()
        })
    }

    /// The resident API: records into the caller's `encoder` the build of a BVH over bodies
    /// already on the GPU and the casts of rays already there (both in the caller's buffers,
    /// see [`ResidentRays`]), and returns where the hits will be once it is submitted
    /// ([`ResidentHits`], which documents the layouts). Nothing is read back and the host
    /// writes nothing per body or ray. The same hits as [`Self::cast`] except for rays the
    /// result flags for recomputation (more hits than slots, or cut short by a software
    /// driver). Parameters are written through the queue, so they take effect at the next
    /// submission: record one `encode_resident` per submission. [`GpuError::Input`] names a
    /// field the host can check that is wrong (a buffer without `STORAGE` usage or too small
    /// for its count, an origin that is not finite).
    pub fn encode_resident(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        batch: &ResidentRays<'_>,
    ) -> Result<ResidentHits, GpuError> {
        self.context.check_health()?;
        let state = match &mut self.resident {
            Some(state) => state,
            empty => empty.insert(ResidentRayState::new(&self.context, &self.shapes)?),
        };
        state.encode(&self.context, &self.kernel, encoder, batch)
    }

    /// Writes bodies and rays (into staging memory, copied by the call's encoder) and sizes the
    /// output buffers.
    fn upload(&mut self, bodies: &[Body], rays: &[Ray], slots: u32) -> Result<(), GpuError> {
        let limits = self.context.limits;
        let body_bytes = (bodies.len() * size_of::<GpuBody>()) as u64;
        let binding_limit = "max_storage_buffer_binding_size";
        check_limit("ray bodies", body_bytes, limits.max_binding, binding_limit)?;
        let count = rays.len() as u64;
        let ray_bytes = count * size_of::<GpuRay>() as u64;
        check_limit("rays", ray_bytes, limits.max_buffer, "max_buffer_size")?;
        check_limit(
            "ray hits",
            count * u64::from(slots) * size_of::<GpuRayHit>() as u64,
            limits.max_buffer,
            "max_buffer_size",
        )?;
        let (device, max) = (self.context.device(), limits.max_buffer);
        let scopes = ErrorScopes::push(device);
        self.bodies.reserve(device, body_bytes, max);
        self.rays.reserve(device, ray_bytes, max);
        // Bodies and rays straight into mapped memory on all threads; the call's encoder copies
        // them (dispatch).
        let context = &self.context;
        let [body_staging, ray_staging] = self.staging.get_mut().unwrap_or_else(PoisonError::into_inner);
        let staged = body_staging
            .write(context, bodies.len(), |i| {
                GpuBody::from_pose(bodies[i].shape, &bodies[i].pose)
            })
            .and_then(|()| ray_staging.write(context, rays.len(), |i| GpuRay::from_ray(&rays[i])));
        self.staged = [body_bytes, ray_bytes];
        self.counts
            .reserve(device, count * size_of::<GpuRayCount>() as u64, max);
        self.hits.reserve(
            device,
            count * u64::from(slots) * size_of::<GpuRayHit>() as u64,
            max,
        );
        let popped = scopes.pop();
        staged?;
        popped
    }

    /// Records the staged copies, the BVH build over the `body_count` bodies at `origin` (the
    /// `half_spaces` apart) and the kernel in chunks, writes the parameters, submits, and waits
    /// (bounded) until the counts and slots are copied back and mapped: the readback buffer
    /// holds `count` (at least 1) counts then their slots, mapped over the returned bytes.
    fn dispatch(
        &mut self,
        body_count: u32,
        (origin, half_spaces): (DVec3, usize),
        count: u64,
        slots: u32,
        closest: bool,
    ) -> Result<u64, GpuError> {
        let count_size = size_of::<GpuRayCount>() as u64;
        let hits_size = u64::from(slots) * size_of::<GpuRayHit>() as u64;
        let limits = self.context.limits;
        let device = self.context.device();
        let scopes = ErrorScopes::push(device);
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("raycast"),
        });
        let [body_bytes, ray_bytes] = self.staged;
        let [body_staging, ray_staging] = self.staging.get_mut().unwrap_or_else(PoisonError::into_inner);
        body_staging.record_copy(&mut encoder, &self.bodies.buffer, body_bytes);
        ray_staging.record_copy(&mut encoder, &self.rays.buffer, ray_bytes);
        let recorded = self
            .builder
            .encode(
                &self.context,
                &mut encoder,
                &self.bodies.buffer,
                body_count,
                origin,
                half_spaces as u32,
            )
            .and_then(|bvh| {
                let (bvh_origin_hi, bvh_origin_lo) = split_translation(origin);
                let params = GpuRayParams {
                    bvh_origin_hi: WgslVec3(bvh_origin_hi),
                    unbounded_count: body_count - bvh.tree_bodies,
                    bvh_origin_lo: WgslVec3(bvh_origin_lo),
                    hit_slots: slots,
                    closest: u32::from(closest),
                    node_count: bvh.node_count,
                    unbounded_first: bvh.tree_bodies,
                };
                self.context
                    .queue()
                    .write_buffer(&self.params, 0, &uniform_bytes(&params)?);
                let buffers = CastBuffers {
                    bodies: &self.bodies.buffer,
                    nodes: bvh.nodes,
                    body_list: bvh.body_list,
                    rays: &self.rays.buffer,
                    counts: &self.counts.buffer,
                    hits: &self.hits.buffer,
                    params: &self.params,
                };
                self.kernel
                    .record(&self.context, &mut encoder, &buffers, count, slots);
                Ok(())
            });
        if let Err(e) = recorded {
            // Nothing is submitted (the next write maps the staging memory again); the
            // recording's error is the one to report.
            drop(scopes.pop());
            return Err(e);
        }
        let count_bytes = count * count_size;
        let hit_bytes = count * hits_size;
        self.readback
            .reserve(device, count_bytes + hit_bytes, limits.max_buffer);
        encoder.copy_buffer_to_buffer(&self.counts.buffer, 0, &self.readback.buffer, 0, count_bytes);
        encoder.copy_buffer_to_buffer(
            &self.hits.buffer,
            0,
            &self.readback.buffer,
            count_bytes,
            hit_bytes,
        );
        let submission = self.context.queue().submit([encoder.finish()]);
        body_staging.remap_after_submit();
        ray_staging.remap_after_submit();
        let total = count_bytes + hit_bytes;
        let (sender, receiver) = std::sync::mpsc::channel();
        self.readback
            .buffer
            .map_async(wgpu::MapMode::Read, 0..total, move |r| drop(sender.send(r)));
        scopes.pop()?;
        if let Err(e) = self.context.wait(submission, &receiver) {
            // A failed or timed-out mapping is cancelled, so the next call can map again.
            self.readback.buffer.unmap();
            return Err(e);
        }
        Ok(total)
    }
}

/// The time since `clock`, which is moved to now: consecutive laps split a call without a gap.
fn lap(clock: &mut Instant) -> Duration {
    let now = Instant::now();
    let elapsed = now - *clock;
    *clock = now;
    elapsed
}

/// Element `i` of a mapped array of `T` (mapped memory need not be aligned for `T`).
#[inline]
fn read_at<T: bytemuck::Pod>(bytes: &[u8], i: usize) -> T {
    let at = i * size_of::<T>();
    bytemuck::pod_read_unaligned(&bytes[at..at + size_of::<T>()])
}

/// Fewest rays a run of step 4 turns into hits (a few nanoseconds a ray).
const FINISH_RAYS_PER_RUN: usize = 4096;

/// Fewest bodies a rayon task normalizes in step 2.
const BODIES_PER_TASK: usize = 4096;

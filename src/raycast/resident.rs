//! The resident ray API: rays and bodies already in the caller's GPU buffers, the BVH built on
//! the GPU, the hits left there ([`super::GpuRaycaster::encode_resident`]).
//!
//! 1. Check what the host can: buffer usages and sizes against the counts ([`GpuError::Input`]
//!    naming the field).
//! 2. Record the BVH build over the bodies (`crate::bvh`'s GPU builder: boxes relative to the
//!    caller's origin, Morton order, the prefix tree: split at the codes' prefixes, one body a
//!    leaf), nothing read back.
//! 3. Write the parameters and record the traversal kernel ([`super::cast_kernel::CastKernel`]) over the
//!    caller's rays into this state's count and hit buffers.

use glam::DVec3;

use super::cast_kernel::{CastBuffers, CastKernel};
use super::layout::{GPU_HIT_SLOTS, GpuBody, GpuRay, GpuRayCount, GpuRayHit, GpuRayParams};
use crate::InputError;
use crate::bvh::gpu::{GpuBvhBuilder, TreeLayout};
use crate::gpu::buffers::{GrowBuffer, check_limit, uniform_buffer};
use crate::gpu::context::ErrorScopes;
use crate::gpu::layout::{WgslVec3, split_translation, uniform_bytes};
use crate::gpu::{GpuContext, GpuError};
use crate::shape::Shape;

use encase::ShaderType;

/// Rays and bodies on the GPU for [`super::GpuRaycaster::encode_resident`]: the caller's buffers
/// on the ray caster's device, each with [`wgpu::BufferUsages::STORAGE`].
#[derive(Clone, Copy, Debug)]
pub struct ResidentRays<'a> {
    /// The bodies, `array<GpuBody>` from byte 0 ([`GpuBody`]: world poses, the one body layout
    /// of every kernel, so the narrowphase's body buffer serves here too); shape indices must
    /// be valid (the host cannot check them).
    pub bodies: &'a wgpu::Buffer,
    /// Bodies to cast against (the first `body_count` of `bodies`).
    pub body_count: u32,
    /// The rays, `array<GpuRay>` from byte 0 ([`GpuRay`]: world origin split high + low, unit
    /// direction, max distance).
    pub rays: &'a wgpu::Buffer,
    /// Rays to cast (the first `ray_count` of `rays`).
    pub ray_count: u32,
    /// A world point near the bodies (f64, length units): the BVH's boxes are built in f32
    /// relative to it, so a scene far from the world origin keeps tight boxes when this is near
    /// its centre (any point is correct).
    pub origin: DVec3,
    /// Keep only the nearest hit of each ray (one slot), else up to [`GPU_HIT_SLOTS`].
    pub closest: bool,
}

/// Where [`super::GpuRaycaster::encode_resident`] leaves the hits once the encoder is submitted:
/// per ray `i`, `counts[i]` ([`GpuRayCount`]: the bodies it entered, which may exceed `slots`,
/// and flags) and its first `min(hits, slots)` entries of `hits` from slot `i * slots`
/// ([`GpuRayHit`]: body, distance along the unit direction, world normal), nearest first (ties:
/// lower body). A ray with more hits than slots, or flagged (`INCOMPLETE_BIT`: a software
/// driver cut its loops short), lists only some of them: recompute it (the CPU caster does). The
/// buffers are reused by the next call unless it needs larger ones.
#[derive(Clone, Debug)]
pub struct ResidentHits {
    /// One [`GpuRayCount`] per ray.
    pub counts: wgpu::Buffer,
    /// `slots` [`GpuRayHit`]s per ray.
    pub hits: wgpu::Buffer,
    /// Hit slots per ray: 1 with `closest`, else [`GPU_HIT_SLOTS`].
    pub slots: u32,
}

/// The BVH builder and one ray caster's resident buffers.
pub(super) struct ResidentRayState {
    builder: GpuBvhBuilder,
    params: wgpu::Buffer,
    counts: GrowBuffer,
    hits: GrowBuffer,
}

impl ResidentRayState {
    pub fn new(context: &GpuContext, shapes: &[Shape]) -> Result<Self, GpuError> {
        let device = context.device();
        let scopes = ErrorScopes::push(device);
        let out = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC;
        let state =
            GpuBvhBuilder::new(context, shapes, TreeLayout::Prefix, 0.0).map(|builder| ResidentRayState {
                builder,
                params: uniform_buffer(device, "resident ray params", GpuRayParams::min_size().get()),
                counts: GrowBuffer::new(device, "resident ray hit counts", out),
                hits: GrowBuffer::new(device, "resident ray hits", out),
            });
        scopes.pop()?;
        state
    }

    /// Steps 1 to 3 into `encoder`.
    pub fn encode(
        &mut self,
        context: &GpuContext,
        kernel: &CastKernel,
        encoder: &mut wgpu::CommandEncoder,
        batch: &ResidentRays<'_>,
    ) -> Result<ResidentHits, GpuError> {
        check_rays(batch, context.limits.max_binding)?;
        let slots = if batch.closest { 1 } else { GPU_HIT_SLOTS };
        let count = u64::from(batch.ray_count);
        let (count_bytes, hit_bytes) = (
            count * size_of::<GpuRayCount>() as u64,
            count * u64::from(slots) * size_of::<GpuRayHit>() as u64,
        );
        let max = context.limits.max_buffer;
        check_limit("resident ray hits", hit_bytes, max, "max_buffer_size")?;
        let device = context.device();
        let scopes = ErrorScopes::push(device);
        self.counts.reserve(device, count_bytes, max);
        self.hits.reserve(device, hit_bytes, max);
        // Step 2.
        let recorded = self
            .builder
            .encode(context, encoder, batch.bodies, batch.body_count, batch.origin, 0)
            .and_then(|bvh| {
                // Step 3: every body is in the tree (half-spaces under boxes no ray misses).
                let (origin_hi, origin_lo) = split_translation(batch.origin);
                let params = GpuRayParams {
                    bvh_origin_hi: WgslVec3(origin_hi),
                    unbounded_count: 0,
                    bvh_origin_lo: WgslVec3(origin_lo),
                    hit_slots: slots,
                    closest: u32::from(batch.closest),
                    node_count: bvh.node_count,
                    unbounded_first: 0,
                };
                context
                    .queue()
                    .write_buffer(&self.params, 0, &uniform_bytes(&params)?);
                let buffers = CastBuffers {
                    bodies: batch.bodies,
                    nodes: bvh.nodes,
                    body_list: bvh.body_list,
                    rays: batch.rays,
                    counts: &self.counts.buffer,
                    hits: &self.hits.buffer,
                    params: &self.params,
                };
                kernel.record(context, encoder, &buffers, count, slots);
                Ok(())
            });
        let popped = scopes.pop();
        recorded?;
        popped?;
        Ok(ResidentHits {
            counts: self.counts.buffer.clone(),
            hits: self.hits.buffer.clone(),
            slots,
        })
    }
}

/// Step 1: usages and sizes, as [`GpuError::Input`] naming the field of [`ResidentRays`], or
/// [`GpuError::TooLarge`] for a buffer beyond one binding.
fn check_rays(batch: &ResidentRays<'_>, max_binding: u64) -> Result<(), GpuError> {
    let bad = |field: &str, message: String| {
        GpuError::Input(InputError::new(format!("ResidentRays.{field}"), message))
    };
    let needs = [
        ("bodies", batch.bodies, batch.body_count, size_of::<GpuBody>()),
        ("rays", batch.rays, batch.ray_count, size_of::<GpuRay>()),
    ];
    for (field, buffer, count, element) in needs {
        if !buffer.usage().contains(wgpu::BufferUsages::STORAGE) {
            return Err(bad(
                field,
                format!("buffer usage {:?} lacks STORAGE", buffer.usage()),
            ));
        }
        let bytes = u64::from(count) * element as u64;
        if bytes > buffer.size() {
            return Err(bad(
                field,
                format!(
                    "{count} of {element} bytes need {bytes} bytes; the buffer has {}",
                    buffer.size()
                ),
            ));
        }
        check_limit(
            if field == "bodies" {
                "ResidentRays.bodies"
            } else {
                "ResidentRays.rays"
            },
            buffer.size(),
            max_binding,
            "max_storage_buffer_binding_size",
        )?;
    }
    if !batch.origin.is_finite() {
        return Err(bad("origin", format!("{} is not finite", batch.origin)));
    }
    Ok(())
}

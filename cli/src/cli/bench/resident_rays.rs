//! `hullsat bench --rays N --backend gpu-resident`: the resident ray API
//! ([`GpuRaycaster::encode_resident`]) with bodies and rays already on the GPU, the BVH built
//! there and the hits left there, as a renderer or GPU simulation would call it.
//!
//! 1. Upload the bodies (normalized poses) and the rays into buffers of our own, once, on the
//!    shared device (timestamps where the adapter has them).
//! 2. Each run records `encode_resident` (BVH build and traversal) into one encoder, submits it
//!    and waits (bounded): timed by GPU timestamps around the commands where the device has
//!    them, else from submission to completion. One warm-up run, then `repeat` timed runs.
//! 3. After the timing, the per-ray counts are read back once: the bodies the rays entered, and
//!    the rays a consumer would recompute (more hits than slots, or cut short by the driver).

use std::sync::Arc;

use hullsat::glam::DVec3;
use hullsat::gpu::Timestamps;
use hullsat::raycast::ResidentRays;
use hullsat::raycast::layout::{GpuBody, GpuRay, GpuRayCount, INCOMPLETE_BIT, STACK_OVERFLOW_BIT};
use hullsat::scene::validate_batch;
use hullsat::{GpuRaycaster, Ray, Scene};

use super::resident::{ResidentTiming, read_back, start_resident, timed_run, upload};
use super::stages::{self, StageMedian};
use super::{CliError, median, percentile_95};

/// What the resident ray runs gave.
pub(super) struct ResidentRayRuns {
    pub median: std::time::Duration,
    pub p95: std::time::Duration,
    /// Bodies entered, summed over the rays (every hit, or at most one a ray with `closest`).
    pub hits: usize,
    /// Rays with more hits than slots or flagged: a consumer recomputes them.
    pub recompute: usize,
    pub timing: ResidentTiming,
    /// The adapter, in words.
    pub device: String,
    /// With `--gpu-stages`, each stage's median over the timed runs.
    pub stages: Option<Vec<StageMedian>>,
}

/// Steps 1 to 3; `None` (after a note) when the machine has no adapter.
pub(super) fn measure(
    scene: &Scene,
    rays: &[Ray],
    closest: bool,
    repeat: u32,
    gpu_stages: bool,
) -> Result<Option<ResidentRayRuns>, CliError> {
    let Some(context) = start_resident("gpu-resident")? else {
        return Ok(None);
    };
    let (device, queue) = (context.device().clone(), context.queue().clone());
    let mut timer = Timestamps::new(&context, 2);
    let mut gpu = GpuRaycaster::with_context(Arc::clone(&context), &scene.shapes)?;
    let info = gpu.adapter_info();
    let device_name = format!("{} ({:?}, {:?})", info.name, info.backend, info.device_type);

    // Step 1.
    let bodies = validate_batch(&scene.shapes, &scene.bodies, &[], 0.0)?;
    let gpu_bodies: Vec<GpuBody> = bodies
        .iter()
        .map(|b| GpuBody::from_pose(b.shape, &b.pose))
        .collect();
    let gpu_rays: Vec<GpuRay> = rays.iter().map(GpuRay::from_ray).collect();
    let body_buffer = upload(&device, "bench ray bodies", bytemuck::cast_slice(&gpu_bodies));
    let ray_buffer = upload(&device, "bench rays", bytemuck::cast_slice(&gpu_rays));
    let count = |n: usize, what: &str| {
        u32::try_from(n).map_err(|_| CliError::Backend(format!("gpu-resident casts at most u32::MAX {what}")))
    };
    // The BVH frame's origin: the centre of the translations' range (as the CPU build takes).
    let (lo, hi) = bodies
        .iter()
        .fold((DVec3::INFINITY, DVec3::NEG_INFINITY), |(lo, hi), b| {
            (lo.min(b.pose.translation), hi.max(b.pose.translation))
        });
    let batch = ResidentRays {
        bodies: &body_buffer,
        body_count: count(bodies.len(), "bodies")?,
        rays: &ray_buffer,
        ray_count: count(rays.len(), "rays")?,
        origin: if bodies.is_empty() {
            DVec3::ZERO
        } else {
            (lo + hi) * 0.5
        },
        closest,
    };

    // Step 2.
    let mut run = || {
        timed_run(&context, &mut timer, |encoder| {
            let out = gpu.encode_resident(encoder, &batch)?;
            Ok((out.counts, out.slots))
        })
    };
    run()?;
    let stage_timer = stages::start(&context, gpu_stages, "gpu-resident")?;
    let mut times = Vec::with_capacity(repeat as usize);
    let mut last = None;
    for _ in 0..repeat {
        let (time, (counts, slots)) = run()?;
        stages::end_run(&stage_timer);
        times.push(time);
        last = Some((counts, slots));
    }
    let stages = stages::finish(stage_timer)?;
    let (counts, slots) = last.expect("at least one timed run");

    // Step 3.
    let bytes = (rays.len() * size_of::<GpuRayCount>()) as u64;
    let (mut hits, mut recompute) = (0, 0);
    for raw in read_back(&device, &queue, &counts, 0, bytes)?.chunks_exact(size_of::<GpuRayCount>()) {
        let count: GpuRayCount = bytemuck::pod_read_unaligned(raw);
        hits += if closest { count.hits.min(1) } else { count.hits } as usize;
        let flagged = count.flags & (INCOMPLETE_BIT | STACK_OVERFLOW_BIT) != 0;
        recompute += usize::from(flagged || (!closest && count.hits > slots));
    }
    Ok(Some(ResidentRayRuns {
        median: median(&times),
        p95: percentile_95(&times),
        hits,
        recompute,
        timing: ResidentTiming::of(&context),
        device: device_name,
        stages,
    }))
}

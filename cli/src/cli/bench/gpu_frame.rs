//! `hullsat bench --backend gpu-frame`: a whole frame on the GPU, as a GPU simulation would run
//! it: bodies already in a GPU buffer, the broadphase ([`GpuBroadphase::encode_resident`],
//! pairs sorted) and the narrowphase ([`GpuNarrowphase::encode_resident`]) recorded into one
//! encoder, nothing read back.
//!
//! 1. Upload the bodies (normalized poses) once, on the shared device; the pair slots are
//!    twice the CPU broadphase's count plus 1,024.
//! 2. Each run records both phases into one encoder, submits it and waits (bounded), timed as
//!    the resident backend is ([`super::resident::timed_run`]). One warm-up run, then `repeat`.
//! 3. After the timing, the pair count and the manifold list are read back once: the GPU's
//!    pairs (an error when they outgrew the slots) and its manifolds.

use std::sync::Arc;

use hullsat::broadphase::gpu::scene_centre;
use hullsat::broadphase::{GpuBroadphase, GpuPairCount, ResidentBodies};
use hullsat::gpu::Timestamps;
use hullsat::narrowphase::gpu::ResidentBatch;
use hullsat::narrowphase::gpu::layout::{GpuBody, MANIFOLD_CLIPPED, MANIFOLD_HOST};
use hullsat::scene::validate_batch;
use hullsat::{GpuNarrowphase, Scene};

use super::resident::{
    ResidentTiming, backend_error, read_back, read_list, start_resident, timed_run, upload,
};
use super::{CliError, median, percentile_95};

/// Pair slots beyond twice the CPU's count.
const SLACK_PAIRS: usize = 1024;

/// What the frame runs gave.
pub(super) struct FrameRuns {
    pub median: std::time::Duration,
    pub p95: std::time::Duration,
    /// Pairs the GPU broadphase found.
    pub gpu_pairs: u32,
    /// Entries of the manifold list with status clipped (manifolds).
    pub manifolds: usize,
    /// Entries left to the host.
    pub host_pairs: usize,
    pub timing: ResidentTiming,
    /// The adapter, in words.
    pub device: String,
}

/// Steps 1 to 3 for `scene`, whose CPU broadphase found `cpu_pairs` pairs; `None` (after a
/// note) when the machine has no adapter.
pub(super) fn measure(scene: &Scene, cpu_pairs: usize, repeat: u32) -> Result<Option<FrameRuns>, CliError> {
    let Some(context) = start_resident()? else {
        return Ok(None);
    };
    let (device, queue) = (context.device().clone(), context.queue().clone());
    let mut timer = Timestamps::new(&context, 2);
    let mut broadphase =
        GpuBroadphase::with_context(Arc::clone(&context), &scene.shapes).map_err(backend_error)?;
    let mut narrowphase =
        GpuNarrowphase::with_context(Arc::clone(&context), &scene.shapes).map_err(backend_error)?;
    let info = narrowphase.adapter_info();
    let device_name = format!("{} ({:?}, {:?})", info.name, info.backend, info.device_type);

    // Step 1.
    let bodies = validate_batch(&scene.shapes, &scene.bodies, &[], scene.margin)?;
    let gpu_bodies: Vec<GpuBody> = bodies.iter().map(GpuBody::from_body).collect();
    let body_buffer = upload(&device, "bench frame bodies", bytemuck::cast_slice(&gpu_bodies));
    let too_many = |what: &str| CliError::Backend(format!("gpu-frame runs at most u32::MAX {what}"));
    let frame = ResidentBodies {
        bodies: &body_buffer,
        body_count: u32::try_from(bodies.len()).map_err(|_| too_many("bodies"))?,
        origin: scene_centre(&scene.shapes, &bodies),
        margin: scene.margin,
        max_pairs: u32::try_from(2 * cpu_pairs + SLACK_PAIRS).map_err(|_| too_many("pairs"))?,
        sort: true,
    };

    // Step 2.
    let mut run = || {
        timed_run(&context, &mut timer, |encoder| {
            let pairs = broadphase
                .encode_resident(encoder, &frame)
                .map_err(backend_error)?;
            let batch = ResidentBatch {
                bodies: &body_buffer,
                pairs: &pairs.pairs,
                pair_count: &pairs.pair_count,
                pair_count_offset: pairs.pair_count_offset,
                max_pairs: pairs.max_pairs,
                margin: scene.margin,
            };
            let manifolds = narrowphase
                .encode_resident(encoder, &batch)
                .map_err(backend_error)?;
            Ok((pairs, manifolds.list))
        })
    };
    run()?;
    let mut times = Vec::with_capacity(repeat as usize);
    let mut last = None;
    for _ in 0..repeat {
        let (time, out) = run()?;
        times.push(time);
        last = Some(out);
    }
    let (pairs, list) = last.expect("at least one timed run");

    // Step 3.
    let head = size_of::<GpuPairCount>() as u64;
    let count: GpuPairCount = bytemuck::pod_read_unaligned(&read_back(
        &device,
        &queue,
        &pairs.pair_count,
        pairs.pair_count_offset,
        head,
    )?);
    if count.count > pairs.max_pairs || count.flags != 0 {
        return Err(CliError::Backend(format!(
            "gpu-frame: the GPU broadphase found {} pairs (flags {}) for {} slots",
            count.count, count.flags, pairs.max_pairs
        )));
    }
    let entries = read_list(&device, &queue, &list)?;
    let with = |status: u32| entries.iter().filter(|m| m.status == status).count();
    Ok(Some(FrameRuns {
        median: median(&times),
        p95: percentile_95(&times),
        gpu_pairs: count.count,
        manifolds: with(MANIFOLD_CLIPPED),
        host_pairs: with(MANIFOLD_HOST),
        timing: ResidentTiming::of(&context),
        device: device_name,
    }))
}

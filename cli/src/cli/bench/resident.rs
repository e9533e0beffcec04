//! `hullsat bench --backend gpu-resident`: the resident API ([`GpuNarrowphase::encode_resident`])
//! with bodies and pairs already on the GPU and the manifolds left there, as a renderer or GPU
//! simulation would call it.
//!
//! 1. Validate the batch once (canonical pairs, normalized poses) and upload bodies, pairs and
//!    the pair count into buffers of our own, on the shared device (which has timestamp queries
//!    where the adapter has them inside encoders).
//! 2. Each run records `encode_resident` into one encoder, submits it and waits (bounded). The
//!    time is the GPU's, from a timestamp written before the resident commands to one after
//!    them, where the adapter has timestamps; else the wall time from submission to
//!    completion. One warm-up run, then `repeat` timed runs; the median.
//! 3. After the timing, the list is read back once: the manifolds (clipped entries) and the
//!    pairs left to the host, by pair, for the check of their verdicts against the CPU's.

use std::time::{Duration, Instant};

use std::sync::Arc;

use hullsat::gpu::{GpuContext, READBACK_TIMEOUT, Timestamps, shared_context};
use hullsat::narrowphase::gpu::ResidentBatch;
use hullsat::narrowphase::gpu::layout::{
    GpuBody, GpuManifold, GpuManifoldCount, MANIFOLD_CLIPPED, MANIFOLD_HOST, MANIFOLD_LIST_HEAD,
};
use hullsat::{GpuError, GpuNarrowphase, Scene, ValidatedBatch};
use wgpu::util::DeviceExt;

use super::stages::{self, StageMedian};
use super::{CliError, median, output, percentile_95};

/// How a resident run was timed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ResidentTiming {
    /// GPU timestamps around the resident commands.
    Timestamps,
    /// Wall time from submission to completion (the adapter has no timestamps in encoders).
    SubmitAndWait,
    /// gpu-frame's `--frames`: the wall time of the whole run (every frame submitted, one
    /// wait at the end) over the frames (the adapter has no timestamps in encoders).
    WallAverage,
}

impl ResidentTiming {
    /// How runs on `context` are timed.
    pub(super) fn of(context: &GpuContext) -> Self {
        if context.has_timestamps() {
            ResidentTiming::Timestamps
        } else {
            ResidentTiming::SubmitAndWait
        }
    }

    pub(super) fn name(self) -> &'static str {
        match self {
            ResidentTiming::Timestamps => "gpu-timestamps",
            ResidentTiming::SubmitAndWait => "submit-and-wait",
            ResidentTiming::WallAverage => "wall-average",
        }
    }
}

/// What the resident runs gave.
pub(super) struct ResidentRuns {
    /// Median time of a run.
    pub median: Duration,
    /// 95th percentile of the runs (nearest rank).
    pub p95: Duration,
    /// Entries the list holds with status clipped (manifolds).
    pub manifolds: usize,
    /// Entries left to the host (not computed on the GPU).
    pub host_pairs: usize,
    /// The pairs (indices into the pair list) listed as manifolds.
    pub listed: Vec<u32>,
    /// The pairs left to the host.
    pub left_to_host: Vec<u32>,
    pub timing: ResidentTiming,
    /// The adapter, in words.
    pub device: String,
    /// With `--gpu-stages`, each stage's median over the timed runs.
    pub stages: Option<Vec<StageMedian>>,
}

/// Steps 1 to 3 for `scene`'s `pairs`; `None` (after a note) when the machine has no adapter.
pub(super) fn measure(
    scene: &Scene,
    pairs: &[[u32; 2]],
    repeat: u32,
    gpu_stages: bool,
) -> Result<Option<ResidentRuns>, CliError> {
    let Some(context) = start_resident("gpu-resident")? else {
        return Ok(None);
    };
    let (device, queue) = (context.device().clone(), context.queue().clone());
    let mut timer = Timestamps::new(&context, 2);
    let mut gpu = GpuNarrowphase::with_context(Arc::clone(&context), &scene.shapes)?;
    let info = gpu.adapter_info();
    let device_name = format!("{} ({:?}, {:?})", info.name, info.backend, info.device_type);

    // Step 1.
    let batch = ValidatedBatch::new(&scene.shapes, &scene.bodies, pairs, scene.margin)?;
    let canonical_pairs: Vec<[u32; 2]> = (0..batch.given_pairs().len()).map(|i| batch.pair(i)).collect();
    let max_pairs = u32::try_from(canonical_pairs.len())
        .map_err(|_| CliError::Backend("gpu-resident runs at most u32::MAX pairs".into()))?;
    let bodies: Vec<GpuBody> = batch.normalized_bodies().iter().map(GpuBody::from_body).collect();
    let body_buffer = upload(&device, "bench bodies", bytemuck::cast_slice(&bodies));
    let pair_buffer = upload(&device, "bench pairs", bytemuck::cast_slice(&canonical_pairs));
    let count_buffer = upload(&device, "bench pair count", bytemuck::bytes_of(&max_pairs));
    let resident = ResidentBatch {
        bodies: &body_buffer,
        pairs: &pair_buffer,
        pair_count: &count_buffer,
        pair_count_offset: 0,
        max_pairs,
        margin: batch.margin(),
    };

    // Step 2.
    let mut run = || {
        timed_run(&context, &mut timer, |encoder| {
            let out = gpu.encode_resident(encoder, &resident)?;
            Ok(out.list)
        })
    };
    run()?;
    let stage_timer = stages::start(&context, gpu_stages, "gpu-resident")?;
    let mut times = Vec::with_capacity(repeat as usize);
    let mut list = None;
    for _ in 0..repeat {
        let (time, out) = run()?;
        stages::end_run(&stage_timer);
        times.push(time);
        list = Some(out);
    }
    let stages = stages::finish(stage_timer)?;
    let list = list.expect("at least one timed run");

    // Step 3.
    let (listed, left_to_host) = read_list_pairs(&device, &queue, &list)?;
    Ok(Some(ResidentRuns {
        median: median(&times),
        p95: percentile_95(&times),
        manifolds: listed.len(),
        host_pairs: left_to_host.len(),
        listed,
        left_to_host,
        timing: ResidentTiming::of(&context),
        device: device_name,
        stages,
    }))
}

/// The shared context for resident backend `backend` (its name, for the note), or `None` after
/// a note when the machine has no adapter.
pub(super) fn start_resident(backend: &str) -> Result<Option<Arc<GpuContext>>, CliError> {
    match shared_context() {
        Ok(context) => Ok(Some(context)),
        Err(err @ GpuError::NoAdapter(_)) => {
            output::note(&format!("note: skipping backend {backend}: {err}"));
            Ok(None)
        }
        Err(err) => Err(err.into()),
    }
}

/// One timed run: `record` fills an encoder, which is submitted and waited for (bounded). The
/// time is the GPU's, between timestamps around the recorded commands, with `timer`; else the
/// wall time from submission to completion.
pub(super) fn timed_run<T>(
    context: &GpuContext,
    timer: &mut Option<Timestamps>,
    record: impl FnOnce(&mut wgpu::CommandEncoder) -> Result<T, CliError>,
) -> Result<(Duration, T), CliError> {
    let mut encoder = context
        .device()
        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("bench gpu-resident"),
        });
    if let Some(timer) = timer {
        timer.write(&mut encoder, 0);
    }
    let out = record(&mut encoder)?;
    if let Some(timer) = timer {
        timer.write(&mut encoder, 1);
        timer.resolve(&mut encoder);
    }
    let start = Instant::now();
    let submission = context.queue().submit([encoder.finish()]);
    if let Some(timer) = timer {
        timer.map();
    }
    wait(context.device(), submission.clone())?;
    let wall = start.elapsed();
    let time = match timer {
        Some(timer) => timer.read(context, submission)?[0],
        None => wall,
    };
    Ok((time, out))
}

/// Waits for `submission`, bounded by [`READBACK_TIMEOUT`].
pub(super) fn wait(device: &wgpu::Device, submission: wgpu::SubmissionIndex) -> Result<(), CliError> {
    device
        .poll(wgpu::PollType::Wait {
            submission_index: Some(submission),
            timeout: Some(READBACK_TIMEOUT),
        })
        .map(drop)
        .map_err(|e| CliError::Backend(format!("resident GPU backend failed: {e}")))
}

/// A storage buffer holding `contents` (48 zero bytes when empty: wgpu binds no empty buffer).
pub(super) fn upload(device: &wgpu::Device, label: &str, contents: &[u8]) -> wgpu::Buffer {
    device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some(label),
        contents: if contents.is_empty() { &[0; 48] } else { contents },
        usage: wgpu::BufferUsages::STORAGE,
    })
}

/// `bytes` bytes of `buffer` from `offset`, copied back once after the queue's work (bounded).
pub(super) fn read_back(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    buffer: &wgpu::Buffer,
    offset: u64,
    bytes: u64,
) -> Result<Vec<u8>, CliError> {
    if bytes == 0 {
        return Ok(Vec::new());
    }
    let staging = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("bench readback"),
        size: bytes,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    encoder.copy_buffer_to_buffer(buffer, offset, &staging, 0, bytes);
    queue.submit([encoder.finish()]);
    map_read(device, &staging, bytes)?;
    let view = staging
        .get_mapped_range(..)
        .map_err(|e| CliError::Backend(format!("GPU readback failed: {e}")))?;
    Ok(view.to_vec())
}

/// Maps `buffer`'s first `bytes` for reading after the queue's work, waiting (bounded).
fn map_read(device: &wgpu::Device, buffer: &wgpu::Buffer, bytes: u64) -> Result<(), CliError> {
    let (sender, receiver) = std::sync::mpsc::channel();
    buffer.map_async(wgpu::MapMode::Read, 0..bytes, move |r| drop(sender.send(r)));
    device
        .poll(wgpu::PollType::Wait {
            submission_index: None,
            timeout: Some(READBACK_TIMEOUT),
        })
        .map_err(|e| CliError::Backend(format!("GPU readback failed: {e}")))?;
    match receiver.recv_timeout(READBACK_TIMEOUT) {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(CliError::Backend(format!("GPU readback failed: {e}"))),
        Err(_) => Err(CliError::Backend(format!(
            "GPU readback did not finish within {READBACK_TIMEOUT:?}"
        ))),
    }
}

/// Step 3: the pairs of the list's entries, copied back once: those with a clipped manifold and
/// those left to the host, each in list order.
pub(super) fn read_list_pairs(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    list: &wgpu::Buffer,
) -> Result<(Vec<u32>, Vec<u32>), CliError> {
    let entries = read_list(device, queue, list)?;
    let with = |status: u32| -> Vec<u32> {
        entries
            .iter()
            .filter(|m| m.status == status)
            .map(|m| m.pair)
            .collect()
    };
    Ok((with(MANIFOLD_CLIPPED), with(MANIFOLD_HOST)))
}

/// The list's entries, copied back once (count first, then exactly that many).
fn read_list(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    list: &wgpu::Buffer,
) -> Result<Vec<GpuManifold>, CliError> {
    let head = read_back(device, queue, list, 0, MANIFOLD_LIST_HEAD)?;
    let count: GpuManifoldCount = bytemuck::pod_read_unaligned(&head);
    let bytes = MANIFOLD_LIST_HEAD + u64::from(count.count) * size_of::<GpuManifold>() as u64;
    if bytes > list.size() {
        return Err(CliError::Backend(format!(
            "GPU backend gpu-resident listed {} manifolds, more than its list holds",
            count.count
        )));
    }
    let list = read_back(device, queue, list, 0, bytes)?;
    Ok(list[MANIFOLD_LIST_HEAD as usize..]
        .chunks_exact(size_of::<GpuManifold>())
        .map(bytemuck::pod_read_unaligned)
        .collect())
}

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

use hullsat::gpu::{READBACK_TIMEOUT, shared_context};
use hullsat::narrowphase::gpu::ResidentBatch;
use hullsat::narrowphase::gpu::layout::{
    GpuBody, GpuManifold, GpuManifoldCount, MANIFOLD_CLIPPED, MANIFOLD_HOST, MANIFOLD_LIST_HEAD,
};
use hullsat::{GpuError, GpuNarrowphase, Scene, ValidatedBatch};
use wgpu::util::DeviceExt;

use super::{CliError, median, output, percentile_95};

/// How a resident run was timed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ResidentTiming {
    /// GPU timestamps around the resident commands.
    Timestamps,
    /// Wall time from submission to completion (the adapter has no timestamps in encoders).
    SubmitAndWait,
}

impl ResidentTiming {
    pub(super) fn name(self) -> &'static str {
        match self {
            ResidentTiming::Timestamps => "gpu-timestamps",
            ResidentTiming::SubmitAndWait => "submit-and-wait",
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
}

/// Steps 1 to 3 for `scene`'s `pairs`; `None` (after a note) when the machine has no adapter.
pub(super) fn measure(
    scene: &Scene,
    pairs: &[[u32; 2]],
    repeat: u32,
) -> Result<Option<ResidentRuns>, CliError> {
    let backend_error = |err: GpuError| match err {
        GpuError::Input(input) => CliError::Input(input),
        err => CliError::Backend(format!("GPU backend gpu-resident failed: {err}")),
    };
    let context = match shared_context() {
        Ok(context) => context,
        Err(err @ GpuError::NoAdapter(_)) => {
            output::note(&format!("note: skipping backend gpu-resident: {err}"));
            return Ok(None);
        }
        Err(err) => return Err(backend_error(err)),
    };
    let (device, queue) = (context.device().clone(), context.queue().clone());
    let has_timestamps = context.has_timestamps();
    let mut gpu = GpuNarrowphase::with_context(context, &scene.shapes).map_err(backend_error)?;
    let info = gpu.adapter_info();
    let device_name = format!("{} ({:?}, {:?})", info.name, info.backend, info.device_type);

    // Step 1.
    let batch = ValidatedBatch::new(&scene.shapes, &scene.bodies, pairs, scene.margin)?;
    let canonical_pairs: Vec<[u32; 2]> = (0..batch.given_pairs().len()).map(|i| batch.pair(i)).collect();
    let max_pairs = u32::try_from(canonical_pairs.len())
        .map_err(|_| CliError::Backend("gpu-resident runs at most u32::MAX pairs".into()))?;
    let bodies: Vec<GpuBody> = batch.normalized_bodies().iter().map(GpuBody::from_body).collect();
    let upload = |label: &str, contents: &[u8]| {
        device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(label),
            contents: if contents.is_empty() { &[0; 48] } else { contents },
            usage: wgpu::BufferUsages::STORAGE,
        })
    };
    let body_buffer = upload("bench bodies", bytemuck::cast_slice(&bodies));
    let pair_buffer = upload("bench pairs", bytemuck::cast_slice(&canonical_pairs));
    let count_buffer = upload("bench pair count", bytemuck::bytes_of(&max_pairs));
    let resident = ResidentBatch {
        bodies: &body_buffer,
        pairs: &pair_buffer,
        pair_count: &count_buffer,
        pair_count_offset: 0,
        max_pairs,
        margin: batch.margin(),
    };
    let timer = has_timestamps.then(|| Timestamps::new(&device));

    // Step 2.
    let mut run = || -> Result<(Duration, wgpu::Buffer), CliError> {
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("bench gpu-resident"),
        });
        if let Some(timer) = &timer {
            encoder.write_timestamp(&timer.queries, 0);
        }
        let out = gpu
            .encode_resident(&mut encoder, &resident)
            .map_err(backend_error)?;
        if let Some(timer) = &timer {
            encoder.write_timestamp(&timer.queries, 1);
            timer.resolve(&mut encoder);
        }
        let start = Instant::now();
        let submission = queue.submit([encoder.finish()]);
        wait(&device, submission)?;
        let wall = start.elapsed();
        let time = match &timer {
            Some(timer) => timer.read(&device, &queue)?,
            None => wall,
        };
        Ok((time, out.list))
    };
    run()?;
    let mut times = Vec::with_capacity(repeat as usize);
    let mut list = None;
    for _ in 0..repeat {
        let (time, out) = run()?;
        times.push(time);
        list = Some(out);
    }
    let list = list.expect("at least one timed run");

    // Step 3.
    let entries = read_list(&device, &queue, &list)?;
    let with = |status: u32| -> Vec<u32> {
        entries
            .iter()
            .filter(|m| m.status == status)
            .map(|m| m.pair)
            .collect()
    };
    let (listed, left_to_host) = (with(MANIFOLD_CLIPPED), with(MANIFOLD_HOST));
    Ok(Some(ResidentRuns {
        median: median(&times),
        p95: percentile_95(&times),
        manifolds: listed.len(),
        host_pairs: left_to_host.len(),
        listed,
        left_to_host,
        timing: if has_timestamps {
            ResidentTiming::Timestamps
        } else {
            ResidentTiming::SubmitAndWait
        },
        device: device_name,
    }))
}

/// Waits for `submission`, bounded by [`READBACK_TIMEOUT`].
pub(super) fn wait(device: &wgpu::Device, submission: wgpu::SubmissionIndex) -> Result<(), CliError> {
    device
        .poll(wgpu::PollType::Wait {
            submission_index: Some(submission),
            timeout: Some(READBACK_TIMEOUT),
        })
        .map(drop)
        .map_err(|e| CliError::Backend(format!("GPU backend gpu-resident failed: {e}")))
}

/// Maps `buffer`'s first `bytes` for reading after the queue's work, waiting (bounded).
pub(super) fn map_read(device: &wgpu::Device, buffer: &wgpu::Buffer, bytes: u64) -> Result<(), CliError> {
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

/// Step 3: the list's entries, copied back once (count first, then exactly that many).
fn read_list(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    list: &wgpu::Buffer,
) -> Result<Vec<GpuManifold>, CliError> {
    let copy = |bytes: u64| -> Result<wgpu::Buffer, CliError> {
        let staging = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("bench list readback"),
            size: bytes,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = device.create_command_encoder(&Default::default());
        encoder.copy_buffer_to_buffer(list, 0, &staging, 0, bytes);
        queue.submit([encoder.finish()]);
        map_read(device, &staging, bytes)?;
        Ok(staging)
    };
    let readback_error = |e: wgpu::MapRangeError| CliError::Backend(format!("GPU readback failed: {e}"));
    let head = copy(MANIFOLD_LIST_HEAD)?;
    let count: GpuManifoldCount =
        bytemuck::pod_read_unaligned(&head.get_mapped_range(..).map_err(readback_error)?);
    let bytes = MANIFOLD_LIST_HEAD + u64::from(count.count) * size_of::<GpuManifold>() as u64;
    if bytes > list.size() {
        return Err(CliError::Backend(format!(
            "GPU backend gpu-resident listed {} manifolds, more than its list holds",
            count.count
        )));
    }
    let staging = copy(bytes)?;
    let view = staging.get_mapped_range(..).map_err(readback_error)?;
    Ok(view[MANIFOLD_LIST_HEAD as usize..]
        .chunks_exact(size_of::<GpuManifold>())
        .map(bytemuck::pod_read_unaligned)
        .collect())
}

/// Two GPU timestamps around the resident commands, resolved into a buffer read after the run.
pub(super) struct Timestamps {
    pub queries: wgpu::QuerySet,
    resolved: wgpu::Buffer,
    readback: wgpu::Buffer,
}

/// Bytes of the two resolved timestamps.
const TIMESTAMP_BYTES: u64 = 2 * size_of::<u64>() as u64;

impl Timestamps {
    pub fn new(device: &wgpu::Device) -> Self {
        let buffer = |label: &str, usage| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: TIMESTAMP_BYTES,
                usage,
                mapped_at_creation: false,
            })
        };
        Timestamps {
            queries: device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("bench timestamps"),
                ty: wgpu::QueryType::Timestamp,
                count: 2,
            }),
            resolved: buffer(
                "bench timestamps resolved",
                wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            ),
            readback: buffer(
                "bench timestamps readback",
                wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            ),
        }
    }

    /// Records the resolve and the copy to the readback buffer (after the second timestamp).
    pub fn resolve(&self, encoder: &mut wgpu::CommandEncoder) {
        encoder.resolve_query_set(&self.queries, 0..2, &self.resolved, 0);
        encoder.copy_buffer_to_buffer(&self.resolved, 0, &self.readback, 0, TIMESTAMP_BYTES);
    }

    /// The time between the two timestamps of the finished run.
    pub fn read(&self, device: &wgpu::Device, queue: &wgpu::Queue) -> Result<Duration, CliError> {
        map_read(device, &self.readback, TIMESTAMP_BYTES)?;
        let ticks: [u64; 2] = {
            let view = self
                .readback
                .get_mapped_range(..)
                .map_err(|e| CliError::Backend(format!("GPU readback failed: {e}")))?;
            bytemuck::pod_read_unaligned(&view)
        };
        self.readback.unmap();
        let nanoseconds = ticks[1].saturating_sub(ticks[0]) as f64 * f64::from(queue.get_timestamp_period());
        Ok(Duration::from_secs_f64(nanoseconds * 1e-9))
    }
}

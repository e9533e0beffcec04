//! `hullsat bench --backend gpu-frame`: a whole frame on the GPU, as a GPU simulation would run
//! it: bodies already in a GPU buffer, the broadphase ([`GpuBroadphase::encode_resident`],
//! pairs sorted unless `--unsorted-pairs`) and the narrowphase
//! ([`GpuNarrowphase::encode_resident`]) recorded into one encoder, nothing read back.
//!
//! 1. Upload the bodies (normalized poses) once, on the shared device; the pair slots are
//!    twice the CPU broadphase's count plus 1,024.
//! 2. Each run records both phases into one encoder, submits it and waits (bounded), timed as
//!    the resident backend is ([`super::resident::timed_run`]). One warm-up run, then `repeat`.
//! 3. After the timing, the pair count and the manifold list are read back once: the GPU's
//!    pairs (an error when they outgrew the slots) and its manifolds.
//!
//! With `--frames N` ([`run_frames`]), step 2 becomes N frames, each moving the bodies on the
//! GPU first ([`GpuMotion`], the CPU `--frames` motion; not frame 0), each one encoder and one
//! submission, no wait between them: GPU timestamps around each frame's commands, resolved and
//! read once at the end (else the wall time of the whole run over N), and each frame's pair and
//! list counts copied into one buffer on the GPU. Step 3 then reads those counts, the last
//! frame's pairs and list, and checks them against the CPU on the CPU-moved bodies.

use std::sync::Arc;
use std::time::{Duration, Instant};

use hullsat::broadphase::gpu::scene_centre;
use hullsat::broadphase::{
    DEFAULT_MAX_CANDIDATE_PAIRS, GpuBroadphase, GpuPairCount, ResidentBodies, ResidentPairs,
};
use hullsat::generate::{GpuMotion, RandomMotion, move_bodies};
use hullsat::gpu::{GpuContext, Timestamps};
use hullsat::narrowphase::gpu::layout::{GpuBody, GpuManifoldCount, MANIFOLD_LIST_HEAD};
use hullsat::scene::validate_batch;
use hullsat::{Body, CpuNarrowphase, GpuNarrowphase, InputError, Scene};
use serde_json::json;

use super::frames::{FRAME_ANGLE_DEGREES, FRAME_SHIFT};
use super::resident::{ResidentTiming, read_back, read_list_pairs, start_resident, timed_run, upload, wait};
use super::stages::{self, StageMedian};
use super::{CliError, check_resident_list, median, output, percentile_95, scene_pairs};

/// Pair slots beyond twice the CPU's count.
const SLACK_PAIRS: usize = 1024;

/// What the frame runs gave.
pub(super) struct FrameRuns {
    pub median: std::time::Duration,
    pub p95: std::time::Duration,
    /// Pairs the GPU broadphase found.
    pub gpu_pairs: u32,
    /// Median of as many runs of the broadphase alone (timed as the frames).
    pub broadphase_median: std::time::Duration,
    /// Entries of the manifold list with status clipped (manifolds).
    pub manifolds: usize,
    /// Entries left to the host.
    pub host_pairs: usize,
    pub timing: ResidentTiming,
    /// The adapter, in words.
    pub device: String,
    /// With `--gpu-stages`, each stage's median over the timed frames.
    pub stages: Option<Vec<StageMedian>>,
}

/// The GPU side of a frame (step 1): the broadphase and narrowphase on the shared device and
/// the bodies uploaded once.
struct FrameGpu {
    context: Arc<GpuContext>,
    broadphase: GpuBroadphase,
    narrowphase: GpuNarrowphase,
    /// The validated bodies (normalized poses), as uploaded.
    bodies: Vec<Body>,
    body_buffer: wgpu::Buffer,
    body_count: u32,
    origin: hullsat::glam::DVec3,
    margin: f32,
    max_pairs: u32,
    /// The adapter, in words.
    device: String,
    /// Whether the broadphase sorts its pairs.
    sort: bool,
}

impl FrameGpu {
    /// Step 1 for `scene`, whose CPU broadphase found `cpu_pairs` pairs; `None` (after a note)
    /// when the machine has no adapter.
    fn start(scene: &Scene, cpu_pairs: usize, sort: bool) -> Result<Option<FrameGpu>, CliError> {
        let Some(context) = start_resident("gpu-frame")? else {
            return Ok(None);
        };
        let broadphase = GpuBroadphase::with_context(Arc::clone(&context), &scene.shapes)?;
        let narrowphase = GpuNarrowphase::with_context(Arc::clone(&context), &scene.shapes)?;
        let info = narrowphase.adapter_info();
        let device = format!("{} ({:?}, {:?})", info.name, info.backend, info.device_type);
        let bodies = validate_batch(&scene.shapes, &scene.bodies, &[], scene.margin)?;
        let gpu_bodies: Vec<GpuBody> = bodies.iter().map(GpuBody::from_body).collect();
        let body_buffer = upload(
            context.device(),
            "bench frame bodies",
            bytemuck::cast_slice(&gpu_bodies),
        );
        let too_many = |what: &str| CliError::Backend(format!("gpu-frame runs at most u32::MAX {what}"));
        Ok(Some(FrameGpu {
            body_count: u32::try_from(bodies.len()).map_err(|_| too_many("bodies"))?,
            origin: scene_centre(&scene.shapes, &bodies),
            margin: scene.margin,
            max_pairs: u32::try_from(2 * cpu_pairs + SLACK_PAIRS).map_err(|_| too_many("pairs"))?,
            context,
            broadphase,
            narrowphase,
            bodies,
            body_buffer,
            device,
            sort,
        }))
    }

    /// Records one frame's broadphase (pairs sorted unless `sort` is off) and narrowphase on
    /// its pairs into `encoder`; the pairs and the manifold list, once it is submitted.
    fn encode(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
    ) -> Result<(ResidentPairs, wgpu::Buffer), CliError> {
        let pairs = self.encode_broadphase(encoder)?;
        let batch = pairs.batch(&self.body_buffer, self.margin);
        let manifolds = self.narrowphase.encode_resident(encoder, &batch)?;
        Ok((pairs, manifolds.list))
    }

    /// Records one frame's broadphase (sorted unless `sort` is off) into `encoder`; its pairs,
    /// once submitted.
    fn encode_broadphase(&mut self, encoder: &mut wgpu::CommandEncoder) -> Result<ResidentPairs, CliError> {
        let frame = ResidentBodies {
            bodies: &self.body_buffer,
            body_count: self.body_count,
            origin: self.origin,
            margin: self.margin,
            max_pairs: self.max_pairs,
            sort: self.sort,
        };
        self.broadphase
            .encode_resident(encoder, &frame)
            .map_err(CliError::from)
    }
}

/// Step 3's check of a pair count: an error when the pairs outgrew their slots or a traversal
/// was cut short (`what` names the frame).
fn check_count(count: &GpuPairCount, max_pairs: u32, what: &str) -> Result<(), CliError> {
    if count.count > max_pairs || count.flags != 0 {
        return Err(CliError::Backend(format!(
            "gpu-frame: the GPU broadphase found {} pairs (flags {}) for {max_pairs} slots{what}",
            count.count, count.flags
        )));
    }
    Ok(())
}

/// Steps 1 to 3 for `scene`, whose CPU broadphase found `cpu_pairs` pairs; `None` (after a
/// note) when the machine has no adapter.
pub(super) fn measure(
    scene: &Scene,
    cpu_pairs: usize,
    repeat: u32,
    gpu_stages: bool,
    sort: bool,
) -> Result<Option<FrameRuns>, CliError> {
    let Some(mut gpu) = FrameGpu::start(scene, cpu_pairs, sort)? else {
        return Ok(None);
    };
    let context = Arc::clone(&gpu.context);
    let (device, queue) = (context.device(), context.queue());
    let mut timer = Timestamps::new(&context, 2);

    // Step 2.
    let mut run = || timed_run(&context, &mut timer, |encoder| gpu.encode(encoder));
    run()?;
    let stage_timer = stages::start(&context, gpu_stages, "gpu-frame")?;
    let mut times = Vec::with_capacity(repeat as usize);
    let mut last = None;
    for _ in 0..repeat {
        let (time, out) = run()?;
        stages::end_run(&stage_timer);
        times.push(time);
        last = Some(out);
    }
    let stages = stages::finish(stage_timer)?;
    let (pairs, list) = last.expect("at least one timed run");
    let mut broadphase_times = Vec::with_capacity(repeat as usize);
    for _ in 0..repeat {
        let (time, _) = timed_run(&context, &mut timer, |encoder| gpu.encode_broadphase(encoder))?;
        broadphase_times.push(time);
    }

    // Step 3.
    let head = size_of::<GpuPairCount>() as u64;
    let count: GpuPairCount = bytemuck::pod_read_unaligned(&read_back(
        device,
        queue,
        &pairs.pair_count,
        pairs.pair_count_offset,
        head,
    )?);
    check_count(&count, pairs.max_pairs, "")?;
    let (listed, left_to_host) = read_list_pairs(device, queue, &list)?;
    Ok(Some(FrameRuns {
        median: median(&times),
        p95: percentile_95(&times),
        gpu_pairs: count.count,
        broadphase_median: median(&broadphase_times),
        manifolds: listed.len(),
        host_pairs: left_to_host.len(),
        timing: ResidentTiming::of(&context),
        device: gpu.device,
        stages,
    }))
}

/// Bytes of one frame's counts in the history buffer: the pair count, then the list's head.
const FRAME_COUNTS_BYTES: u64 = (size_of::<GpuPairCount>() + size_of::<GpuManifoldCount>()) as u64;

/// `--frames N --backend gpu-frame` (see the module docs): runs, checks and prints the frames
/// (a table, or a JSON array under `json`). `cpu_pairs`: the CPU broadphase's pairs of the
/// unmoved scene (sizes the pair slots).
pub(super) fn run_frames(
    scene: &Scene,
    cpu_pairs: usize,
    frames: u32,
    seed: u64,
    json: bool,
) -> Result<(), CliError> {
    let Some(mut gpu) = FrameGpu::start(scene, cpu_pairs, true)? else {
        return Err(CliError::Backend(
            "no backend could run: gpu has no adapter".into(),
        ));
    };
    let context = Arc::clone(&gpu.context);
    let (device, queue) = (context.device(), context.queue());
    if context.has_timestamps() && frames > wgpu::QUERY_SET_MAX_QUERIES / 2 {
        return Err(CliError::Input(InputError::new(
            "--frames",
            format!(
                "gpu-frame times at most {} frames (two GPU timestamps each), got {frames}",
                wgpu::QUERY_SET_MAX_QUERIES / 2
            ),
        )));
    }
    let mut timer = Timestamps::new(&context, 2 * frames);
    let mut motion = GpuMotion::with_context(Arc::clone(&context), &scene.shapes)?;
    let history = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("bench frame counts"),
        size: u64::from(frames) * FRAME_COUNTS_BYTES,
        usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    // One untimed frame 0 first (buffers sized, caches warm), as the other backends warm up.
    let mut encoder = device.create_command_encoder(&Default::default());
    gpu.encode(&mut encoder)?;
    wait(device, queue.submit([encoder.finish()]))?;

    // Step 2: the frames, submitted one after another, no wait.
    let start = Instant::now();
    let mut last = None;
    let mut submission = None;
    for frame in 0..frames {
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("bench gpu-frame"),
        });
        if let Some(timer) = &timer {
            timer.write(&mut encoder, 2 * frame);
        }
        if frame > 0 {
            let step = RandomMotion {
                max_shift: FRAME_SHIFT,
                max_angle: FRAME_ANGLE_DEGREES.to_radians(),
                seed,
                frame: u64::from(frame - 1),
            };
            motion.encode(&mut encoder, &gpu.body_buffer, gpu.body_count, &step)?;
        }
        let (pairs, list) = gpu.encode(&mut encoder)?;
        if let Some(timer) = &timer {
            timer.write(&mut encoder, 2 * frame + 1);
        }
        let slot = u64::from(frame) * FRAME_COUNTS_BYTES;
        let head = size_of::<GpuPairCount>() as u64;
        encoder.copy_buffer_to_buffer(&pairs.pair_count, pairs.pair_count_offset, &history, slot, head);
        encoder.copy_buffer_to_buffer(&list, 0, &history, slot + head, MANIFOLD_LIST_HEAD);
        submission = Some(queue.submit([encoder.finish()]));
        last = Some((pairs, list));
    }
    let (pairs, list) = last.expect("at least one frame");
    let mut submission = submission.expect("at least one frame");
    if let Some(timer) = &mut timer {
        let mut encoder = device.create_command_encoder(&Default::default());
        timer.resolve(&mut encoder);
        submission = queue.submit([encoder.finish()]);
        timer.map();
    }
    let times: Vec<Duration> = match &mut timer {
        // Frame f ran between timestamps 2f and 2f + 1.
        Some(timer) => timer.read(&context, submission)?.into_iter().step_by(2).collect(),
        None => {
            wait(device, submission)?;
            vec![start.elapsed() / frames; frames as usize]
        }
    };
    let timing = if timer.is_some() {
        ResidentTiming::Timestamps
    } else {
        ResidentTiming::WallAverage
    };

    // Step 3: every frame's counts, the last frame's pairs and list, read once.
    let counts: Vec<(GpuPairCount, GpuManifoldCount)> =
        read_back(device, queue, &history, 0, history.size())?
            .chunks_exact(FRAME_COUNTS_BYTES as usize)
            .map(|c| {
                let (pairs, list) = c.split_at(size_of::<GpuPairCount>());
                (
                    bytemuck::pod_read_unaligned(pairs),
                    bytemuck::pod_read_unaligned(list),
                )
            })
            .collect();
    for (frame, (count, _)) in counts.iter().enumerate() {
        check_count(count, pairs.max_pairs, &format!(" in frame {frame}"))?;
    }
    let (last_count, _) = counts[counts.len() - 1];
    let gpu_pairs: Vec<[u32; 2]> = bytemuck::pod_collect_to_vec(&read_back(
        device,
        queue,
        &pairs.pairs,
        0,
        u64::from(last_count.count) * size_of::<[u32; 2]>() as u64,
    )?);
    let (listed, left_to_host) = read_list_pairs(device, queue, &list)?;

    // The CPU on the CPU-moved bodies of the last frame (moved by frames 0 to N - 2's motion).
    let mut moved = Scene {
        shapes: scene.shapes.clone(),
        bodies: gpu.bodies.clone(),
        pairs: None,
        margin: scene.margin,
    };
    for frame in 0..frames - 1 {
        let angle = FRAME_ANGLE_DEGREES.to_radians();
        move_bodies(
            &moved.shapes,
            &mut moved.bodies,
            FRAME_SHIFT,
            angle,
            seed,
            u64::from(frame),
        );
    }
    let cpu_pairs = scene_pairs(&moved, DEFAULT_MAX_CANDIDATE_PAIRS)?;
    let missing = cpu_pairs
        .iter()
        .filter(|pair| gpu_pairs.binary_search(pair).is_err())
        .count();
    let cpu = CpuNarrowphase::new(moved.shapes.clone()).collide(&moved.bodies, &gpu_pairs, moved.margin)?;
    let check = if missing > 0 {
        Err(CliError::Disagreement {
            backend: "gpu-frame".into(),
            disagreement: format!(
                "the GPU broadphase's last frame misses {missing} of the CPU's {} pairs",
                cpu_pairs.len()
            ),
        })
    } else {
        check_resident_list("gpu-frame", &moved, &gpu_pairs, &listed, &left_to_host, &cpu)
    };
    let tally = check.as_ref().ok().copied().unwrap_or_default();

    let rate = |pairs: u32, time: Duration| f64::from(pairs) / time.as_secs_f64();
    let mut lines = Vec::new();
    if json {
        let mut objects: Vec<_> = counts
            .iter()
            .zip(&times)
            .enumerate()
            .map(|(frame, ((count, list), time))| {
                json!({"frame": frame, "backend": "gpu-frame", "pairs": count.count,
                       "listed": list.count, "seconds": time.as_secs_f64(),
                       "pairs_per_s": rate(count.count, *time), "timing": timing.name(),
                       "adapter": gpu.device})
            })
            .collect();
        let last = objects.last_mut().expect("at least one frame");
        last["manifolds"] = json!(listed.len());
        last["host_pairs"] = json!(left_to_host.len());
        last["cpu_pairs"] = json!(cpu_pairs.len());
        last["cpu_manifolds"] = json!(tally.cpu_manifolds);
        last["verdict_ties"] = json!(tally.verdict_ties);
        lines.push(serde_json::to_string_pretty(&objects).expect("plain JSON values"));
    } else {
        let per_frame = match timing {
            ResidentTiming::Timestamps => "GPU timestamps per frame",
            _ => "the wall time of the whole run over the frames (no GPU timestamps)",
        };
        lines.push(format!(
            "gpu-frame: {frames} frames of {} bodies on {} (each body moved on the GPU up to \
             {FRAME_SHIFT} x its size and {FRAME_ANGLE_DEGREES} degrees per frame); times: {per_frame}",
            gpu.body_count, gpu.device
        ));
        lines.push("frame    gpu ms    pairs   listed".to_string());
        for (frame, ((count, list), time)) in counts.iter().zip(&times).enumerate() {
            lines.push(format!(
                "{frame:>5}  {:>8.3}  {:>7}  {:>7}",
                time.as_secs_f64() * 1e3,
                count.count,
                list.count
            ));
        }
        lines.push(format!(
            "last frame: {} GPU pairs holding the CPU's {}; {} manifolds (CPU: {}; {} verdict ties), \
             {} pairs left to the host",
            gpu_pairs.len(),
            cpu_pairs.len(),
            listed.len(),
            tally.cpu_manifolds,
            tally.verdict_ties,
            left_to_host.len()
        ));
    }
    output::print_lines(&lines)?;
    check.map(drop)
}

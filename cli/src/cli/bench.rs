//! `hullsat bench`: the narrowphase on several backends over the same pairs, timed.
//!
//! 1. Build the input: a JSON scene (its pairs, or the broadphase's) or a generated particle
//!    scene (the broadphase's pairs).
//! 2. For each backend in order: start it (a GPU without an adapter is skipped with a note),
//!    run it once to warm up, then `--repeat` timed runs; then judge every GPU backend's
//!    warm-up results by the GPU = CPU contract ([`hullsat::contract`]).
//! 3. Print the medians as a table, or as a JSON array under `--json`; a result outside the
//!    contract is then the error.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::{Args, ValueEnum};
use hullsat::broadphase::DEFAULT_MAX_CANDIDATE_PAIRS;
use hullsat::generate::ParticleSceneConfig;
use hullsat::narrowphase::gpu::{Clipping, GpuTimings};
use hullsat::raycast::workload::random_rays;
use hullsat::raycast::{RayHitSet, RayTimings};
use hullsat::{
    ContactSet, CpuNarrowphase, CpuRaycaster, GpuError, GpuNarrowphase, GpuRaycaster, Manifold, Ray, Scene,
};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;

use hullsat::contract::{Agreement, AgreementTally, verdict_tie};

use super::backend::adapter_description;
use super::{
    CliError, Shapes, check_contract, cpu_model, describe_tally, generate_scene, output, read_scene,
    scene_pairs,
};

mod frames;
mod gpu_frame;
mod resident;
mod resident_rays;
mod stages;

pub(super) const ABOUT: &str = "Times the narrowphase on several backends over the same pairs";

pub(super) const LONG_ABOUT: &str = "\
Times the narrowphase on several backends over the same pairs: those of --scene (its own list,
or the broadphase's when it has none), or the broadphase pairs of a generated particle scene
(--bodies, --shapes, --seed, --density). Each backend runs once to warm up, then --repeat timed
runs; the table gives the median and the 95th percentile (nearest rank: the slowest run of
fewer than 20) of the wall time of a whole batch (validation included), pairs per second, the
speedup over cpu1, and the device. GPU times are split into upload, dispatch and
readback, and CPU clipping (medians of each part).

BACKENDS:
  cpu1   the CPU reference path on one thread (CpuNarrowphase::collide_single_thread)
  cpu    the CPU reference path on all threads (rayon)
  gpu    the SAT and the clipping on the GPU (wgpu): host data in, world-space manifolds out;
         pairs the clip kernel cannot finish take the CPU path (counted in host_pairs)
  gpu-cpuclip
         the SAT on the GPU, clipping on the CPU (all threads)
  cpu-set, gpu-set
         cpu and gpu filling a reused ContactSet (CpuNarrowphase::collide_into,
         GpuNarrowphase::collide_into): the touching pairs only, no entry per pair; the
         per-pair view the check needs is built from the warm-up run's set, outside the timing
  gpu-resident
         the resident API (GpuNarrowphase::encode_resident): bodies, pairs and the pair count
         uploaded once into GPU buffers before timing, the manifolds left on the GPU; the time
         is from GPU timestamps around the commands where the adapter has them (\"timing\":
         \"gpu-timestamps\"), else from submission to completion (\"submit-and-wait\"). The
         list is read once after timing: its clipped entries are the manifolds, host_pairs the
         pairs the GPU did not finish (see MANIFOLD_HOST; lavapipe's loop cap)
  gpu-frame
         a whole frame on the GPU: the bodies uploaded once, then per run the GPU broadphase
         (GpuBroadphase::encode_resident, pairs sorted unless --unsorted-pairs) and the
         resident narrowphase on its
         pairs in one encoder, timed as gpu-resident, then as many runs of the broadphase
         alone; the pair count and the list are read once after timing (generated scenes
         only: it finds its own pairs). With --frames N
         and --backend gpu-frame alone: N frames, the bodies moved on the GPU before each
         (FRAMES below)
  A GPU backend is skipped with a note on stderr when no adapter exists (an error when only GPU
  backends are asked for).

CHECK: every GPU backend's results (from its warm-up run) are judged pair by pair against the
CPU's by the GPU = CPU contract (docs/gpu-cpu-contract.md; the CPU runs once for it when no CPU
backend is timed): the table's last lines count the pairs equal to rounding, within their
conditioning and at ties; gpu-resident's listed pairs must be the CPU's touching pairs, but for
verdict ties and pairs left to the host. A pair outside the contract is an error naming it.

RAYS (--rays N): time ray casts over the scene's bodies instead of the narrowphase: N seeded
random rays (--seed) from points uniform in the box of the body positions, uniform directions,
each --ray-length long (default 5 length units), every hit or with --closest the nearest.
Backends cpu1, cpu (CpuRaycaster::cast_into), gpu (GpuRaycaster::cast_into: BVH built on the GPU,
traversal and exact casts in a WGSL kernel, hits read back; both fill one RayHitSet reused across
runs) and gpu-resident (GpuRaycaster::encode_resident:
bodies and rays uploaded once before timing, the BVH built on the GPU, the hits left there; GPU
timestamps where the adapter has them, else submit-and-wait); the table gives rays per second
and hits found. JSON objects then have \"rays\", \"hits\" and \"rays_per_s\" instead of the
pair fields, gpu ones prepare_s, bvh_build_s, upload_s, dispatch_readback_s, finish_s and cpu_rays, and
gpu-resident ones \"timing\" and rays_to_recompute.

JSON OUTPUT (--json): an array on stdout, one object per backend that ran:
  {\"backend\": \"cpu1\", \"pairs\": n, \"manifolds\": m, \"runs\": k, \"median_s\": t,
   \"p95_s\": t95, \"pairs_per_s\": x, \"ratio_to_cpu1\": r, \"adapter\": \"...\", \"threads\": n}
  ratio_to_cpu1 is cpu1's median over this backend's (2 = twice as fast; null without cpu1);
  adapter is the GPU adapter's name or the CPU model; GPU objects add upload_s (validation and
  staging on the host, summed over rounds; kernel time excluded), dispatch_readback_s (submit,
  wait, copy, map), cpu_clipping_s (reading the results, CPU clipping and the CPU path for pairs
  the GPU left to the host) as medians, where the device has timestamps gpu_s (GPU time of the
  staged copies and kernels) and gpu_copy_back_s (of the copy back), both part of
  dispatch_readback_s, host_pairs and incident_searches_alone (of the warm-up run: searches the
  clip of a few invocations a pair ran on one lane, speed only, near 0) and readback_bytes
  (bytes copied back from the device in the last timed run; 0 for gpu-resident and gpu-frame,
  which add \"timing\"; gpu-frame also gpu_pairs, the pairs its GPU broadphase found,
  broadphase_s, the median of the broadphase alone, and pairs_sorted), and
  \"contract\": the check's counts (pairs, gpu_manifolds, cpu_manifolds, same,
  conditioned, verdict_ties, axis_ties, feature_ties; for gpu-resident, whose manifolds stay on
  the GPU, verdicts only: \"same\" counts pairs both find touching).

FRAMES (--frames N): N frames of the scene, every body moved per frame by a small random rigid
motion (up to 0.001 x its size and 0.1 degree; hullsat::generate::move_bodies), timed per frame
on cpu1 and cpu (cold calls) and cpu1-cached and cpu-cached (a ContactCache across frames each).
JSON: one object per frame and backend, {\"frame\", \"backend\", \"pairs\", \"manifolds\",
\"seconds\", \"pairs_per_s\"}. With --backend gpu-frame (alone) instead: the bodies uploaded
once, then per frame in one encoder the same motion on the GPU (GpuMotion; not before frame 0),
the GPU broadphase (pairs sorted) and the resident narrowphase; nothing is read back between
frames. Each frame is timed by GPU timestamps (\"timing\": \"gpu-timestamps\") where the
adapter has them, else every frame gets the wall time of the whole run over N
(\"wall-average\"). Every frame's pair count and list length (\"pairs\", \"listed\": manifolds
plus pairs left to the host) are copied on the GPU and read once at the end, with the last
frame's pairs and list, which are checked against the CPU on the CPU-moved bodies of the same
seed: the GPU's pairs must hold the CPU's, and its manifolds the CPU's but for verdict ties and
pairs left to the host (exit status 3 otherwise). The last frame's object adds \"manifolds\",
\"host_pairs\", \"cpu_pairs\", \"cpu_manifolds\" and \"verdict_ties\".

GPU STAGES (--gpu-stages, with gpu-frame and gpu-resident, narrowphase or rays): after the
warm-up run, every compute pass of the timed runs gets GPU timestamps at its start and end
(hullsat::gpu::StageTimer), read once after the runs. After the table, per backend, one line per
stage: its label (the pass's: bvh boxes, bvh morton, bvh sort, bvh tree, broadphase traversal,
pair sort, resident prepare, resident sat, resident clip, compound ..., mesh ..., ray
traversal), the median over the runs of its GPU time (the sum of its passes' in a run), and its
share of the stages' sum. The time between passes (barriers, copies, clears) is in no stage,
so the sum is below the run's median. JSON objects add \"stages\": [{\"label\": ..., \"median_s\":
t}, ...]. A device without timestamp queries gets a note on stderr, and the bench runs as
without the flag. Not with --frames.

EXIT STATUS:
  0 success; 1 a backend failed, or none could run; 2 a bad option or scene; 3 a GPU result
  outside the GPU = CPU contract.";

/// A backend `bench` can time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum BenchBackend {
    /// The CPU on one thread.
    Cpu1,
    /// The CPU on all threads.
    Cpu,
    /// The GPU SAT plus GPU clipping.
    Gpu,
    /// The GPU SAT plus CPU clipping.
    GpuCpuclip,
    /// The CPU on all threads into a reused contact set.
    CpuSet,
    /// The GPU SAT plus GPU clipping into a reused contact set.
    GpuSet,
    /// The resident API: data on the GPU, manifolds left there.
    GpuResident,
    /// A whole frame on the GPU: bodies there, the GPU broadphase and the resident narrowphase
    /// in one encoder.
    GpuFrame,
}

impl BenchBackend {
    fn name(self) -> &'static str {
        match self {
            BenchBackend::Cpu1 => "cpu1",
            BenchBackend::Cpu => "cpu",
            BenchBackend::Gpu => "gpu",
            BenchBackend::GpuCpuclip => "gpu-cpuclip",
            BenchBackend::CpuSet => "cpu-set",
            BenchBackend::GpuSet => "gpu-set",
            BenchBackend::GpuResident => "gpu-resident",
            BenchBackend::GpuFrame => "gpu-frame",
        }
    }

    /// Threads a CPU backend runs on (`None` for the GPU backends).
    fn cpu_threads(self) -> Option<usize> {
        match self {
            BenchBackend::Cpu1 => Some(1),
            BenchBackend::Cpu | BenchBackend::CpuSet => Some(rayon::current_num_threads()),
            BenchBackend::Gpu
            | BenchBackend::GpuCpuclip
            | BenchBackend::GpuSet
            | BenchBackend::GpuResident
            | BenchBackend::GpuFrame => None,
        }
    }

    /// Where a GPU backend clips.
    fn clipping(self) -> Option<Clipping> {
        match self {
            BenchBackend::Cpu1
            | BenchBackend::Cpu
            | BenchBackend::CpuSet
            | BenchBackend::GpuResident
            | BenchBackend::GpuFrame => None,
            BenchBackend::Gpu | BenchBackend::GpuSet => Some(Clipping::Gpu),
            BenchBackend::GpuCpuclip => Some(Clipping::Cpu),
        }
    }
}

#[derive(Debug, Args)]
pub(super) struct BenchArgs {
    /// Time the pairs of this JSON scene (instead of a generated one).
    #[arg(long, value_name = "SCENE.json", conflicts_with_all = ["bodies", "shapes", "seed", "density"])]
    scene: Option<PathBuf>,
    /// Number of bodies of the generated scene.
    #[arg(long, default_value_t = 20_000, value_parser = clap::value_parser!(u32).range(1..))]
    bodies: u32,
    /// Shape kinds of the generated scene.
    #[arg(long, value_enum, default_value_t = Shapes::Mixed)]
    shapes: Shapes,
    /// Seed of the generated scene.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Packing density of the generated scene, in (0, 1].
    #[arg(long, default_value_t = 0.3, allow_negative_numbers = true)]
    density: f32,
    /// Backends to time, comma-separated, in this order.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "cpu1,cpu,gpu")]
    backend: Vec<BenchBackend>,
    /// Timed runs per backend (after one warm-up run).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
    repeat: u32,
    /// Print the results as a JSON array on stdout instead of a table.
    #[arg(long)]
    json: bool,
    /// Time this many ray casts instead of the narrowphase (see RAYS above).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    rays: Option<u32>,
    /// Length of each ray of --rays, length units (>= 0).
    #[arg(
        long,
        value_name = "LENGTH",
        default_value_t = 5.0,
        requires = "rays",
        allow_negative_numbers = true
    )]
    ray_length: f32,
    /// With --rays: keep only the nearest hit of each ray.
    #[arg(long, requires = "rays")]
    closest: bool,
    /// Instead: time N frames of the scene, each body moved by a small random rigid motion per
    /// frame, on cpu1 and cpu (cold, one and all threads) and cpu1-cached and cpu-cached (a
    /// ContactCache across frames each), per frame; with --backend gpu-frame, whole frames on
    /// the GPU (see FRAMES).
    #[arg(
        long,
        value_name = "N",
        value_parser = clap::value_parser!(u32).range(1..),
        conflicts_with = "rays"
    )]
    frames: Option<u32>,
    /// With gpu-frame or gpu-resident (narrowphase or --rays): the GPU time of each stage of
    /// the timed runs, from compute-pass timestamps (see GPU STAGES).
    #[arg(long, conflicts_with = "frames")]
    gpu_stages: bool,
    /// With gpu-frame: leave the GPU broadphase's pairs in the order found (no sort; the
    /// narrowphase's list is unordered either way).
    #[arg(long, conflicts_with = "frames")]
    unsorted_pairs: bool,
}

/// The medians of one backend's timed runs.
struct Measurement {
    backend: BenchBackend,
    manifolds: usize,
    median: Duration,
    /// 95th percentile of the timed runs (nearest rank: the slowest of fewer than 20 runs).
    p95: Duration,
    /// GPU adapter name or CPU model.
    device: String,
    threads: Option<usize>,
    /// Medians of the GPU's upload, dispatch + readback and CPU clipping.
    gpu_split: Option<[Duration; 3]>,
    /// Medians of the GPU timestamps' share of dispatch + readback: the commands before the
    /// copy back (staged data into device buffers, kernels), and the copy back. `None` without
    /// timestamps on the device.
    gpu_device_split: Option<[Duration; 2]>,
    /// Pairs a GPU backend left to the host (warm-up run; gpu-resident: its list after timing).
    host_pairs: Option<usize>,
    /// GPU whole calls: incident-face searches the per-group clip ran alone in the warm-up run
    /// (`GpuTimings::incident_searches_alone`).
    searched_alone: Option<usize>,
    /// How gpu-resident or gpu-frame was timed.
    timing: Option<resident::ResidentTiming>,
    /// gpu-frame: the pairs the GPU broadphase found, the median of the broadphase alone, and
    /// whether the pairs were sorted.
    frame_pairs: Option<(u32, Duration, bool)>,
    /// Bytes a GPU backend copied back from the device in its last timed run.
    readback_bytes: Option<u64>,
    /// The warm-up run's results (CPU and GPU whole-call backends), for the contract check;
    /// dropped after it.
    results: Option<Vec<Option<Manifold>>>,
    /// gpu-resident's list after timing: the pairs it lists as manifolds, and those it left to
    /// the host (indices into the pair list); dropped after the contract check.
    resident_lists: Option<(Vec<u32>, Vec<u32>)>,
    /// A GPU backend's results judged by the GPU = CPU contract (gpu-resident: verdicts only).
    contract: Option<AgreementTally>,
    /// `--gpu-stages`: each stage's median GPU time over the timed runs.
    stages: Option<Vec<stages::StageMedian>>,
}

pub(super) fn run(args: &BenchArgs) -> Result<(), CliError> {
    // Step 1.
    let (scene, pairs, description) = match &args.scene {
        Some(path) => {
            let scene = read_scene(path)?;
            let pairs = scene_pairs(&scene, DEFAULT_MAX_CANDIDATE_PAIRS)?;
            (scene, pairs, path.display().to_string())
        }
        None => {
            let config = ParticleSceneConfig {
                bodies: args.bodies as usize,
                seed: args.seed,
                density: args.density,
                mix: args.shapes.mix(),
                margin: 0.0,
            };
            let scene = generate_scene(&config)?;
            let pairs = scene_pairs(&scene, DEFAULT_MAX_CANDIDATE_PAIRS)?;
            let description = format!(
                "{} bodies ({:?} shapes, seed {}, density {})",
                args.bodies, args.shapes, args.seed, args.density
            );
            (scene, pairs, description)
        }
    };

    let staged = |b: &BenchBackend| matches!(b, BenchBackend::GpuFrame | BenchBackend::GpuResident);
    if args.gpu_stages && !args.backend.iter().any(staged) {
        output::note("note: --gpu-stages times gpu-frame and gpu-resident only, and neither is asked for");
    }
    if args.unsorted_pairs && !args.backend.contains(&BenchBackend::GpuFrame) {
        output::note("note: --unsorted-pairs applies to gpu-frame only, which is not asked for");
    }
    if let Some(rays) = args.rays {
        return ray_bench(args, &scene, &description, rays as usize);
    }
    if let Some(frames) = args.frames {
        if !args.backend.contains(&BenchBackend::GpuFrame) {
            return frames::run(&scene, &pairs, frames, args.seed, args.json);
        }
        if args.backend.iter().any(|&b| b != BenchBackend::GpuFrame) {
            return Err(CliError::Input(hullsat::InputError::new(
                "--backend",
                "--frames times the CPU backends, or gpu-frame alone",
            )));
        }
        if scene.pairs.is_some() {
            return Err(CliError::Input(hullsat::InputError::new(
                "--backend",
                "gpu-frame finds its own pairs: give a scene without a pair list",
            )));
        }
        return gpu_frame::run_frames(&scene, pairs.len(), frames, args.seed, args.json);
    }

    // Step 2.
    let progress = !args.json && std::io::stderr().is_terminal();
    let mut measurements = Vec::new();
    for (i, &backend) in args.backend.iter().enumerate() {
        if args.backend[..i].contains(&backend) {
            continue;
        }
        measurements.extend(measure_backend(backend, &scene, &pairs, args, progress)?);
    }
    if measurements.is_empty() {
        return Err(CliError::Backend(
            "no backend could run: gpu has no adapter".into(),
        ));
    }
    // The timings are printed whatever the check finds; a disagreement is then the error.
    let check = check_contract_of_gpu_backends(&scene, &pairs, &mut measurements);

    // Step 3.
    let cpu1 = measurements
        .iter()
        .find(|m| m.backend == BenchBackend::Cpu1)
        .map(|m| m.median);
    if args.json {
        let objects: Vec<_> = measurements
            .iter()
            .map(|m| to_json(m, pairs.len(), args.repeat, cpu1))
            .collect();
        let text = serde_json::to_string_pretty(&objects).expect("plain JSON values");
        output::print_lines(&[text])?;
    } else {
        output::print_lines(&table(
            &measurements,
            &description,
            pairs.len(),
            args.repeat,
            cpu1,
        ))?;
    }
    check
}

/// Starts `backend` and times it; `None` when it is the GPU and no adapter exists (after a
/// note on stderr).
fn measure_backend(
    backend: BenchBackend,
    scene: &Scene,
    pairs: &[[u32; 2]],
    args: &BenchArgs,
    progress: bool,
) -> Result<Option<Measurement>, CliError> {
    let (bodies, margin, repeat) = (&scene.bodies, scene.margin, args.repeat);
    let measurement = match backend {
        BenchBackend::Cpu1 | BenchBackend::Cpu | BenchBackend::CpuSet => {
            let cpu = CpuNarrowphase::new(scene.shapes.clone());
            let mut set = ContactSet::new();
            let runs = time_runs(backend, repeat, progress, |keep| {
                let results = match backend {
                    BenchBackend::Cpu1 => cpu.collide_single_thread(bodies, pairs, margin)?,
                    BenchBackend::CpuSet => {
                        cpu.collide_into(bodies, pairs, margin, &mut set)?;
                        per_pair_view(&set, pairs.len(), keep)
                    }
                    _ => cpu.collide(bodies, pairs, margin)?,
                };
                Ok((results, None))
            })?;
            Measurement {
                backend,
                manifolds: runs.manifolds,
                median: median(&runs.times),
                p95: percentile_95(&runs.times),
                device: cpu_model(),
                threads: backend.cpu_threads(),
                gpu_split: None,
                gpu_device_split: None,
                host_pairs: None,
                searched_alone: None,
                timing: None,
                frame_pairs: None,
                readback_bytes: None,
                results: Some(runs.results),
                resident_lists: None,
                contract: None,
                stages: None,
            }
        }
        BenchBackend::GpuFrame => {
            if scene.pairs.is_some() {
                output::note(
                    "note: skipping backend gpu-frame: it times the broadphase too, and the scene lists its pairs",
                );
                return Ok(None);
            }
            let sort = !args.unsorted_pairs;
            let Some(runs) = gpu_frame::measure(scene, pairs.len(), repeat, args.gpu_stages, sort)? else {
                return Ok(None);
            };
            Measurement {
                backend,
                manifolds: runs.manifolds,
                median: runs.median,
                p95: runs.p95,
                device: runs.device,
                threads: None,
                gpu_split: None,
                gpu_device_split: None,
                host_pairs: Some(runs.host_pairs),
                searched_alone: None,
                timing: Some(runs.timing),
                frame_pairs: Some((runs.gpu_pairs, runs.broadphase_median, sort)),
                readback_bytes: Some(0),
                results: None,
                resident_lists: None,
                contract: None,
                stages: runs.stages,
            }
        }
        BenchBackend::GpuResident => {
            let Some(runs) = resident::measure(scene, pairs, repeat, args.gpu_stages)? else {
                return Ok(None);
            };
            Measurement {
                backend,
                manifolds: runs.manifolds,
                median: runs.median,
                p95: runs.p95,
                device: runs.device,
                threads: None,
                gpu_split: None,
                gpu_device_split: None,
                host_pairs: Some(runs.host_pairs),
                searched_alone: None,
                timing: Some(runs.timing),
                frame_pairs: None,
                readback_bytes: Some(0),
                results: None,
                resident_lists: Some((runs.listed, runs.left_to_host)),
                contract: None,
                stages: runs.stages,
            }
        }
        BenchBackend::Gpu | BenchBackend::GpuCpuclip | BenchBackend::GpuSet => {
            let mut gpu = match GpuNarrowphase::new(&scene.shapes) {
                Ok(gpu) => gpu,
                Err(err @ GpuError::NoAdapter(_)) => {
                    output::note(&format!("note: skipping backend {}: {err}", backend.name()));
                    return Ok(None);
                }
                Err(err) => return Err(err.into()),
            };
            let clipping = backend.clipping().expect("a GPU backend");
            gpu.set_clipping(clipping)?;
            let device = adapter_description(&gpu);
            let mut set = ContactSet::new();
            let runs = time_runs(backend, repeat, progress, |keep| {
                let results = if backend == BenchBackend::GpuSet {
                    gpu.collide_into(bodies, pairs, margin, &mut set)?;
                    per_pair_view(&set, pairs.len(), keep)
                } else {
                    gpu.collide(bodies, pairs, margin)?
                };
                Ok((results, Some(gpu.timings())))
            })?;
            let split =
                |part: fn(&GpuTimings) -> Duration| median(&runs.gpu.iter().map(part).collect::<Vec<_>>());
            Measurement {
                backend,
                manifolds: runs.manifolds,
                median: median(&runs.times),
                p95: percentile_95(&runs.times),
                device,
                threads: None,
                gpu_split: Some([
                    split(|t| t.upload),
                    split(|t| t.dispatch_readback),
                    split(|t| t.cpu_clipping),
                ]),
                gpu_device_split: runs
                    .gpu
                    .iter()
                    .all(|t| t.gpu.is_some() && t.gpu_copy_back.is_some())
                    .then(|| {
                        [
                            split(|t| t.gpu.unwrap_or_default()),
                            split(|t| t.gpu_copy_back.unwrap_or_default()),
                        ]
                    }),
                host_pairs: Some(runs.warm_up_gpu.map_or(0, |t| t.host_pairs)),
                searched_alone: runs.warm_up_gpu.map(|t| t.incident_searches_alone),
                timing: None,
                frame_pairs: None,
                readback_bytes: runs.gpu.last().map(|t| t.readback_bytes),
                results: Some(runs.results),
                resident_lists: None,
                contract: None,
                stages: None,
            }
        }
    };
    Ok(Some(measurement))
}

/// Judges every GPU backend's warm-up results by the GPU = CPU contract against the CPU's (the
/// CPU backends' own, or a CPU run made for the check), keeps each tally and drops the results.
/// gpu-resident, which reads back only its listed pairs, must list every pair the CPU finds
/// touching and no other, except pairs it left to the host and counted verdict ties.
fn check_contract_of_gpu_backends(
    scene: &Scene,
    pairs: &[[u32; 2]],
    measurements: &mut [Measurement],
) -> Result<(), CliError> {
    let is_cpu = |m: &Measurement| {
        matches!(
            m.backend,
            BenchBackend::Cpu1 | BenchBackend::Cpu | BenchBackend::CpuSet
        )
    };
    if measurements.iter().all(is_cpu) {
        measurements.iter_mut().for_each(|m| m.results = None);
        return Ok(());
    }
    let reference = match measurements.iter_mut().find(|m| is_cpu(m)) {
        Some(m) => m.results.take().expect("CPU results are kept"),
        None => CpuNarrowphase::new(scene.shapes.clone()).collide(&scene.bodies, pairs, scene.margin)?,
    };
    for m in measurements.iter_mut() {
        let results = m.results.take();
        match m.backend {
            BenchBackend::Gpu | BenchBackend::GpuCpuclip | BenchBackend::GpuSet => {
                let gpu = results.expect("GPU results are kept");
                m.contract = Some(check_contract(m.backend.name(), scene, pairs, &gpu, &reference)?);
            }
            BenchBackend::GpuResident => {
                let (listed, left) = m.resident_lists.take().expect("gpu-resident lists its pairs");
                m.contract = Some(check_resident_list(
                    m.backend.name(),
                    scene,
                    pairs,
                    &listed,
                    &left,
                    &reference,
                )?);
            }
            BenchBackend::Cpu1 | BenchBackend::Cpu | BenchBackend::CpuSet | BenchBackend::GpuFrame => {}
        }
    }
    Ok(())
}

/// gpu-resident's verdicts against the CPU's: a pair it lists as a manifold or not as the CPU
/// finds it touching or not, except pairs it left to the host and verdict ties (the CPU's
/// separation within rounding of the margin, [`hullsat::contract::verdict_tie`]). The tally
/// counts pairs, manifolds on each side, verdict ties; agreeing verdicts count as `same` (their
/// manifolds stay on the GPU and are not compared here).
fn check_resident_list(
    backend: &str,
    scene: &Scene,
    pairs: &[[u32; 2]],
    listed: &[u32],
    left_to_host: &[u32],
    cpu: &[Option<Manifold>],
) -> Result<AgreementTally, CliError> {
    let outside = |what: &str, index: u32| CliError::Disagreement {
        backend: backend.into(),
        disagreement: format!("it {what} pair {index}, beyond the {} pairs", pairs.len()),
    };
    let mut on_list = vec![false; pairs.len()];
    for &pair in listed {
        *on_list
            .get_mut(pair as usize)
            .ok_or_else(|| outside("listed", pair))? = true;
    }
    let mut on_host = vec![false; pairs.len()];
    for &pair in left_to_host {
        *on_host
            .get_mut(pair as usize)
            .ok_or_else(|| outside("left to the host", pair))? = true;
    }
    let mut tally = AgreementTally::default();
    for (i, (&pair, cpu)) in pairs.iter().zip(cpu).enumerate() {
        if on_host[i] {
            continue;
        }
        let agreement = if on_list[i] == cpu.is_some() {
            if on_list[i] {
                Agreement::Same
            } else {
                Agreement::NoContact
            }
        } else {
            verdict_tie(&scene.shapes, &scene.bodies, pair, scene.margin).map_err(|e| {
                CliError::Disagreement {
                    backend: backend.into(),
                    disagreement: format!(
                        "GPU and CPU disagree beyond the GPU = CPU contract on pairs[{i}] = {pair:?}: {e}"
                    ),
                }
            })?
        };
        tally.add(agreement, on_list[i], cpu.is_some());
    }
    Ok(tally)
}

/// What the timed runs of one backend gave.
struct Runs {
    /// Manifolds of the warm-up run.
    manifolds: usize,
    /// The warm-up run's results.
    results: Vec<Option<Manifold>>,
    /// Wall time of each timed run.
    times: Vec<Duration>,
    /// The GPU's own split of each timed run (empty for the CPU).
    gpu: Vec<GpuTimings>,
    /// The GPU's split of the warm-up run.
    warm_up_gpu: Option<GpuTimings>,
}

/// One warm-up call of `run(true)`, then `repeat` timed calls of `run(false)` (`run(keep)`
/// returns one entry per pair, which a contact-set backend builds only when `keep`). A progress
/// bar on stderr when `progress` and the timed runs look like they will take more than a second.
fn time_runs(
    backend: BenchBackend,
    repeat: u32,
    progress: bool,
    mut run: impl FnMut(bool) -> Result<(Vec<Option<Manifold>>, Option<GpuTimings>), CliError>,
) -> Result<Runs, CliError> {
    let t = Instant::now();
    let (results, warm_up_gpu) = run(true)?;
    let warm_up = t.elapsed();
    let bar = (progress && warm_up * repeat > Duration::from_secs(1)).then(|| {
        let bar = ProgressBar::new(u64::from(repeat));
        bar.set_style(
            ProgressStyle::with_template("{prefix:>5} [{bar:30}] {pos}/{len} runs, {elapsed}")
                .expect("a valid template")
                .progress_chars("=> "),
        );
        bar.set_prefix(backend.name());
        bar
    });
    let mut runs = Runs {
        manifolds: results.iter().flatten().count(),
        results,
        times: Vec::new(),
        gpu: Vec::new(),
        warm_up_gpu,
    };
    for _ in 0..repeat {
        let t = Instant::now();
        let (_, gpu_timings) = run(false)?;
        runs.times.push(t.elapsed());
        runs.gpu.extend(gpu_timings);
        if let Some(bar) = &bar {
            bar.inc(1);
        }
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    Ok(runs)
}

/// A contact-set backend's results as one entry per pair when `keep` (the warm-up run, for the
/// count and the check; built after the call, so outside any timing), else none.
fn per_pair_view(set: &ContactSet, pairs: usize, keep: bool) -> Vec<Option<Manifold>> {
    if keep { set.to_options(pairs) } else { Vec::new() }
}

/// The 95th percentile of a non-empty list by nearest rank: the `ceil(0.95 n)`-th smallest (the
/// largest of fewer than 20).
pub(super) fn percentile_95(times: &[Duration]) -> Duration {
    let mut sorted = times.to_vec();
    sorted.sort();
    let rank = (sorted.len() * 95).div_ceil(100).max(1);
    sorted[rank - 1]
}

/// The median of a non-empty list (the mean of the middle two for an even length).
fn median(times: &[Duration]) -> Duration {
    let mut sorted = times.to_vec();
    sorted.sort();
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2
    }
}

fn pairs_per_second(pairs: usize, time: Duration) -> f64 {
    pairs as f64 / time.as_secs_f64()
}

fn to_json(m: &Measurement, pairs: usize, repeat: u32, cpu1: Option<Duration>) -> serde_json::Value {
    let mut object = json!({
        "backend": m.backend.name(),
        "pairs": pairs,
        "manifolds": m.manifolds,
        "runs": repeat,
        "median_s": m.median.as_secs_f64(),
        "p95_s": m.p95.as_secs_f64(),
        "pairs_per_s": pairs_per_second(pairs, m.median),
        "ratio_to_cpu1": cpu1.map(|t| t.as_secs_f64() / m.median.as_secs_f64()),
        "adapter": m.device,
        "threads": m.threads,
    });
    if let Some([upload, dispatch_readback, cpu_clipping]) = m.gpu_split {
        object["upload_s"] = json!(upload.as_secs_f64());
        object["dispatch_readback_s"] = json!(dispatch_readback.as_secs_f64());
        object["cpu_clipping_s"] = json!(cpu_clipping.as_secs_f64());
    }
    if let Some([commands, copy_back]) = m.gpu_device_split {
        object["gpu_s"] = json!(commands.as_secs_f64());
        object["gpu_copy_back_s"] = json!(copy_back.as_secs_f64());
    }
    if let Some(host_pairs) = m.host_pairs {
        object["host_pairs"] = json!(host_pairs);
    }
    if let Some(searched_alone) = m.searched_alone {
        object["incident_searches_alone"] = json!(searched_alone);
    }
    if let Some((gpu_pairs, broadphase, sorted)) = m.frame_pairs {
        object["gpu_pairs"] = json!(gpu_pairs);
        object["broadphase_s"] = json!(broadphase.as_secs_f64());
        object["pairs_sorted"] = json!(sorted);
    }
    if let Some(timing) = m.timing {
        object["timing"] = json!(timing.name());
    }
    if let Some(t) = &m.contract {
        object["contract"] = json!({
            "pairs": t.pairs, "gpu_manifolds": t.gpu_manifolds, "cpu_manifolds": t.cpu_manifolds,
            "same": t.same, "conditioned": t.conditioned, "verdict_ties": t.verdict_ties,
            "axis_ties": t.axis_ties, "feature_ties": t.feature_ties,
        });
    }
    if let Some(bytes) = m.readback_bytes {
        object["readback_bytes"] = json!(bytes);
    }
    if let Some(stages) = &m.stages {
        object["stages"] = stages::to_json(stages);
    }
    object
}

/// The report as lines: a header, one row per backend, the GPU's split.
fn table(
    measurements: &[Measurement],
    description: &str,
    pairs: usize,
    repeat: u32,
    cpu1: Option<Duration>,
) -> Vec<String> {
    let mut lines = Vec::new();
    lines.push(format!(
        "hullsat bench: {description}: {pairs} pairs, median and 95th percentile of {repeat} runs after 1 warm-up"
    ));
    lines.push(format!(
        "{:<12} {:>9} {:>10} {:>12} {:>12} {:>12} {:>8}  device",
        "backend", "pairs", "manifolds", "median", "p95", "pairs/s", "vs cpu1"
    ));
    for m in measurements {
        let ratio = cpu1.map_or("-".into(), |t| {
            format!("{:.2}x", t.as_secs_f64() / m.median.as_secs_f64())
        });
        let device = device_label(&m.device, m.threads);
        lines.push(format!(
            "{:<12} {:>9} {:>10} {:>9.3} ms {:>9.3} ms {:>12.0} {:>8}  {device}",
            m.backend.name(),
            pairs,
            m.manifolds,
            m.median.as_secs_f64() * 1e3,
            m.p95.as_secs_f64() * 1e3,
            pairs_per_second(pairs, m.median),
            ratio
        ));
    }
    for m in measurements {
        if let Some([upload, dispatch_readback, cpu_clipping]) = m.gpu_split {
            lines.push(format!(
                "{} split (medians): upload {:.3} ms, dispatch+readback {:.3} ms, CPU clipping {:.3} ms, \
                 {} pairs left to the host, {:.1} bytes per pair read back",
                m.backend.name(),
                upload.as_secs_f64() * 1e3,
                dispatch_readback.as_secs_f64() * 1e3,
                cpu_clipping.as_secs_f64() * 1e3,
                m.host_pairs.unwrap_or(0),
                m.readback_bytes.unwrap_or(0) as f64 / pairs.max(1) as f64
            ));
        }
        if let Some(alone) = m.searched_alone.filter(|&n| n > 0) {
            lines.push(format!(
                "{}: {alone} incident-face searches ran on one lane where a few invocations share a \
                 pair's clip (speed only; the lanes' shared searches missed them)",
                m.backend.name()
            ));
        }
        if let Some([commands, copy_back]) = m.gpu_device_split {
            lines.push(format!(
                "{} on the GPU (timestamps, medians; part of dispatch+readback): staged copies and kernels \
                 {:.3} ms, copy back {:.3} ms",
                m.backend.name(),
                commands.as_secs_f64() * 1e3,
                copy_back.as_secs_f64() * 1e3
            ));
        }
        match (m.timing, m.frame_pairs) {
            (Some(timing), Some((gpu_pairs, broadphase, sorted))) => lines.push(format!(
                "{} ({}): bodies on the GPU, broadphase and narrowphase in one submission: {gpu_pairs} \
                 GPU pairs ({}; the CPU broadphase's {pairs}), {} manifolds, {} pairs left to the host; \
                 the broadphase alone {:.3} ms (median of as many runs)",
                m.backend.name(),
                timing.name(),
                if sorted { "sorted" } else { "unsorted" },
                m.manifolds,
                m.host_pairs.unwrap_or(0),
                broadphase.as_secs_f64() * 1e3
            )),
            (Some(timing), None) => lines.push(format!(
                "{} ({}): data and manifolds stay on the GPU, {} pairs left to the host",
                m.backend.name(),
                timing.name(),
                m.host_pairs.unwrap_or(0)
            )),
            (None, _) => {}
        }
    }
    for m in measurements {
        match (&m.contract, m.backend) {
            (Some(t), BenchBackend::GpuResident) => lines.push(format!(
                "{} against the CPU: verdicts of all {} pairs within the GPU = CPU contract \
                 ({} listed, {} touching on the CPU, {} verdict ties, {} left to the host)",
                m.backend.name(),
                pairs,
                t.gpu_manifolds,
                t.cpu_manifolds,
                t.verdict_ties,
                m.host_pairs.unwrap_or(0)
            )),
            (Some(t), _) => lines.push(format!(
                "{} against the CPU: {}",
                m.backend.name(),
                describe_tally(t)
            )),
            (None, _) => {}
        }
    }
    for m in measurements {
        if let Some(stages) = &m.stages {
            lines.extend(stages::lines(m.backend.name(), stages, repeat, m.median));
        }
    }
    lines
}

/// The ray workload (`--rays`): seeded random rays over the scene's bodies, timed on each
/// backend like the narrowphase (one warm-up run, `--repeat` timed runs, medians).
fn ray_bench(args: &BenchArgs, scene: &Scene, description: &str, count: usize) -> Result<(), CliError> {
    if !(args.ray_length >= 0.0 && args.ray_length.is_finite()) {
        return Err(CliError::Input(hullsat::InputError::new(
            "--ray-length",
            format!("expected a finite number >= 0, got {}", args.ray_length),
        )));
    }
    let rays = random_rays(&scene.bodies, count, Some(args.ray_length), args.seed);
    let mut rows: Vec<(RayMeasurement, &'static str)> = Vec::new();
    for (i, &backend) in args.backend.iter().enumerate() {
        if args.backend[..i].contains(&backend) {
            continue;
        }
        if let Some(m) = measure_rays(backend, scene, &rays, args)? {
            rows.push((m, backend.name()));
        }
    }
    if rows.is_empty() {
        return Err(CliError::Backend(
            "no backend could run: gpu has no adapter".into(),
        ));
    }
    let cpu1 = rows
        .iter()
        .find(|(_, name)| *name == "cpu1")
        .map(|(m, _)| m.median);
    let per_second = |m: &RayMeasurement| count as f64 / m.median.as_secs_f64();
    if args.json {
        let objects: Vec<_> = rows
            .iter()
            .map(|(m, name)| {
                let mut object = json!({
                            "backend": name, "rays": count, "hits": m.hits, "runs": args.repeat,
                            "median_s": m.median.as_secs_f64(),
                "p95_s": m.p95.as_secs_f64(), "rays_per_s": per_second(m),
                            "ratio_to_cpu1": cpu1.map(|t| t.as_secs_f64() / m.median.as_secs_f64()),
                            "adapter": m.device, "threads": m.threads,
                        });
                if let Some(t) = m.gpu {
                    object["prepare_s"] = json!(t.prepare.as_secs_f64());
                    object["bvh_build_s"] = json!(t.bvh_build.as_secs_f64());
                    object["upload_s"] = json!(t.upload.as_secs_f64());
                    object["dispatch_readback_s"] = json!(t.dispatch_readback.as_secs_f64());
                    object["finish_s"] = json!(t.finish.as_secs_f64());
                    object["cpu_rays"] = json!(t.cpu_rays);
                }
                if let Some((timing, recompute)) = m.resident {
                    object["timing"] = json!(timing.name());
                    object["rays_to_recompute"] = json!(recompute);
                }
                if let Some(stages) = &m.stages {
                    object["stages"] = stages::to_json(stages);
                }
                object
            })
            .collect();
        return output::print_lines(&[serde_json::to_string_pretty(&objects).expect("plain JSON values")]);
    }
    let mode = if args.closest { "closest hit" } else { "every hit" };
    let mut lines = Vec::new();
    lines.push(format!(
        "hullsat bench: {description}: {count} rays of length {} ({mode}), median and 95th percentile of {} runs after 1 warm-up",
        args.ray_length, args.repeat
    ));
    lines.push(format!(
        "{:<12} {:>9} {:>10} {:>12} {:>12} {:>12} {:>8}  device",
        "backend", "rays", "hits", "median", "p95", "rays/s", "vs cpu1"
    ));
    for (m, name) in &rows {
        let ratio = cpu1.map_or("-".into(), |t| {
            format!("{:.2}x", t.as_secs_f64() / m.median.as_secs_f64())
        });
        let device = device_label(&m.device, m.threads);
        lines.push(format!(
            "{name:<12} {count:>9} {:>10} {:>9.3} ms {:>9.3} ms {:>12.0} {ratio:>8}  {device}",
            m.hits,
            m.median.as_secs_f64() * 1e3,
            m.p95.as_secs_f64() * 1e3,
            per_second(m)
        ));
        if let Some(t) = m.gpu {
            lines.push(format!(
                "gpu split (last run): prepare {:.3} ms, CPU BVH for recomputed rays {:.3} ms, upload {:.3} ms, dispatch+readback (GPU BVH build, casts) {:.3} ms, finish {:.3} ms, {} rays recomputed on the CPU",
                t.prepare.as_secs_f64() * 1e3,
                t.bvh_build.as_secs_f64() * 1e3,
                t.upload.as_secs_f64() * 1e3,
                t.dispatch_readback.as_secs_f64() * 1e3,
                t.finish.as_secs_f64() * 1e3,
                t.cpu_rays
            ));
        }
        if let Some((timing, recompute)) = m.resident {
            lines.push(format!(
                "{name} ({}): bodies and rays stay on the GPU, BVH built there; {recompute} rays to \
                 recompute (more hits than slots, or cut short by the driver)",
                timing.name()
            ));
        }
    }
    for (m, name) in &rows {
        if let Some(stages) = &m.stages {
            lines.extend(stages::lines(name, stages, args.repeat, m.median));
        }
    }
    output::print_lines(&lines)
}

/// The device column: the device, with the thread count for a CPU backend.
fn device_label(device: &str, threads: Option<usize>) -> String {
    match threads {
        Some(1) => format!("{device} (1 thread)"),
        Some(n) => format!("{device} ({n} threads)"),
        None => device.to_string(),
    }
}

/// The medians of one backend's timed ray casts.
struct RayMeasurement {
    hits: usize,
    median: Duration,
    /// 95th percentile of the timed runs (nearest rank).
    p95: Duration,
    device: String,
    threads: Option<usize>,
    /// The GPU's split of its last run.
    gpu: Option<RayTimings>,
    /// gpu-resident: how it was timed, and the rays a consumer would recompute (more hits than
    /// slots, or cut short by the driver).
    resident: Option<(resident::ResidentTiming, usize)>,
    /// `--gpu-stages` (gpu-resident): each stage's median GPU time over the timed runs.
    stages: Option<Vec<stages::StageMedian>>,
}

/// Starts `backend` and times it on `rays`; `None` when it is the GPU and no adapter exists
/// (after a note on stderr).
fn measure_rays(
    backend: BenchBackend,
    scene: &Scene,
    rays: &[Ray],
    args: &BenchArgs,
) -> Result<Option<RayMeasurement>, CliError> {
    let (bodies, closest) = (&scene.bodies, args.closest);
    let timed =
        |run: &mut dyn FnMut() -> Result<usize, CliError>| -> Result<(usize, Duration, Duration), CliError> {
            let hits = run()?;
            let mut times = Vec::new();
            for _ in 0..args.repeat {
                let t = Instant::now();
                run()?;
                times.push(t.elapsed());
            }
            Ok((hits, median(&times), percentile_95(&times)))
        };
    let count = |lists: Vec<Vec<hullsat::RayHit>>| lists.iter().map(Vec::len).sum::<usize>();
    Ok(Some(match backend {
        BenchBackend::Cpu1 | BenchBackend::Cpu => {
            let cpu = CpuRaycaster::new(scene.shapes.clone());
            let mut set = RayHitSet::new();
            let (hits, median, p95) = timed(&mut || {
                Ok(if backend == BenchBackend::Cpu1 {
                    count(cpu.cast_single_thread(bodies, rays, closest)?)
                } else {
                    cpu.cast_into(bodies, rays, closest, &mut set)?;
                    set.hit_count()
                })
            })?;
            RayMeasurement {
                hits,
                median,
                p95,
                device: cpu_model(),
                threads: backend.cpu_threads(),
                gpu: None,
                resident: None,
                stages: None,
            }
        }
        BenchBackend::GpuCpuclip => {
            output::note("note: skipping backend gpu-cpuclip for rays: ray casts have no clipping step");
            return Ok(None);
        }
        BenchBackend::CpuSet | BenchBackend::GpuSet => {
            output::note(&format!(
                "note: skipping backend {} for rays: ray casts fill no contact set",
                backend.name()
            ));
            return Ok(None);
        }
        BenchBackend::GpuFrame => {
            output::note("note: skipping backend gpu-frame for rays: it times the narrowphase frame");
            return Ok(None);
        }
        BenchBackend::GpuResident => {
            let Some(runs) = resident_rays::measure(scene, rays, closest, args.repeat, args.gpu_stages)?
            else {
                return Ok(None);
            };
            RayMeasurement {
                hits: runs.hits,
                median: runs.median,
                p95: runs.p95,
                device: runs.device,
                threads: None,
                gpu: None,
                resident: Some((runs.timing, runs.recompute)),
                stages: runs.stages,
            }
        }
        BenchBackend::Gpu => {
            let mut gpu = match GpuRaycaster::new(&scene.shapes) {
                Ok(gpu) => gpu,
                Err(err @ GpuError::NoAdapter(_)) => {
                    output::note(&format!("note: skipping backend gpu: {err}"));
                    return Ok(None);
                }
                Err(err) => return Err(err.into()),
            };
            let info = gpu.adapter_info();
            let device = format!("{} ({:?}, {:?})", info.name, info.backend, info.device_type);
            let mut set = RayHitSet::new();
            let (hits, median, p95) = timed(&mut || {
                gpu.cast_into(bodies, rays, closest, &mut set)
                    .map(|()| set.hit_count())
                    .map_err(CliError::from)
            })?;
            RayMeasurement {
                hits,
                median,
                p95,
                device,
                threads: None,
                gpu: Some(gpu.timings()),
                resident: None,
                stages: None,
            }
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_95th_percentile_is_the_nearest_rank() {
        let ms = |v: &[u64]| v.iter().map(|&t| Duration::from_millis(t)).collect::<Vec<_>>();
        // Fewer than 20 runs: the slowest.
        assert_eq!(percentile_95(&ms(&[3, 1, 2])), Duration::from_millis(3));
        assert_eq!(percentile_95(&ms(&[5])), Duration::from_millis(5));
        // 20 runs: the 19th smallest; 40 runs: the 38th.
        let twenty: Vec<u64> = (1..=20).rev().collect();
        assert_eq!(percentile_95(&ms(&twenty)), Duration::from_millis(19));
        let forty: Vec<u64> = (1..=40).collect();
        assert_eq!(percentile_95(&ms(&forty)), Duration::from_millis(38));
    }
}

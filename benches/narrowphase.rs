//! Narrowphase throughput, pairs per second, on the same pairs for every backend.
//!
//! 1. Workloads: seeded particle scenes (`generate_particle_scene`, presets `box`, `hull32`,
//!    `hull64`, `mixed`; density 0.3, margin [`MARGIN`]) large enough to give the biggest size;
//!    the pairs are the first N broadphase candidate pairs (`candidate_pairs`), N in 1k, 10k,
//!    100k, with only the bodies they use (validation is per body). Every backend collides
//!    exactly those pairs at that margin.
//! 2. Backends, criterion ids `<workload>/<backend>/<pairs>`:
//!    - `cpu1`: `CpuNarrowphase::collide_single_thread`;
//!    - `cpu`: `CpuNarrowphase::collide` (rayon, all cores);
//!    - `cpu_set`: `CpuNarrowphase::collide_into` (rayon, all cores) into one `ContactSet`
//!      reused across iterations (the touching pairs only);
//!    - `host_finish`: the host's part of a `GpuNarrowphase::collide_into` under
//!      `Clipping::Gpu` (`internals::finish_listed_into`: the ordered manifold list read into
//!      a reused set on all cores), the list made once from the CPU's manifolds
//!      (`internals::gpu_list_from`); no GPU, so it runs on any machine;
//!    - `parry`: parry3d 0.31 `DefaultQueryDispatcher::contact_manifolds` per pair with
//!      `prediction = margin`, no workspace, one manifold `Vec` reused across pairs but cleared
//!      before each (a fresh query every pair, as hullsat does; parry frees and reallocates the
//!      manifold's point storage then). Boxes are `Cuboid`, hulls `ConvexPolyhedron` built from
//!      the triangulated faces, spheres `Ball`, capsules `Capsule::new_y`;
//!    - `gpu_upload`, `gpu_dispatch_readback`, `gpu_clipping`: one `GpuNarrowphase::collide`
//!      (`Clipping::Gpu`, the default) per iteration, timed with `iter_custom` from its
//!      `timings()` (validation + staging; submit + wait + readback; reading the results plus
//!      the CPU path for the pairs the GPU left to the host, rayon). `gpu` and `gpu_cpuclip`
//!      (not run unless named in `HULLSAT_BENCH_BACKENDS`) are the wall clock of the whole call
//!      with `Clipping::Gpu` and `Clipping::Cpu`. Skipped (with the reason printed) without an adapter; sizes
//!      above [`gpu_max_pairs`] are skipped because lavapipe (the software Vulkan driver) is too
//!      slow for them on 2 cores.
//! 3. Throughput is `Elements(pairs)`: criterion prints `thrpt: [low mid high] Kelem/s`, the
//!    middle value is pairs per second for the table in BENCHMARKS.md.
//!
//! Quick subsets: environment variables `HULLSAT_BENCH_WORKLOADS` (e.g. `box,hull32`),
//! `HULLSAT_BENCH_SIZES` (e.g. `1000,10000`) and `HULLSAT_BENCH_BACKENDS` (e.g. `cpu1,parry`)
//! skip the rest, scene generation included; a criterion filter (`cargo bench --bench
//! narrowphase -- 'hull32/(cpu1|parry)/10000'`) also works but still builds every scene.
//! `HULLSAT_BENCH_ONCE=1` runs each selected CPU backend once per size without criterion, for
//! instruction counts under `perf stat` or callgrind; it prints the manifold count, and with
//! `HULLSAT_BENCH_DIGEST=1` a digest of every bit of the results, which a pure speedup leaves
//! unchanged.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use hullsat::ValidatedBatch;
use hullsat::broadphase::candidate_pairs;
use hullsat::generate::{ParticleSceneConfig, ShapeMix, generate_particle_scene};
use hullsat::internals::{finish_listed_into, gpu_list_from};
use hullsat::narrowphase::gpu::Clipping;
use hullsat::narrowphase::gpu::layout::GpuManifold;
use hullsat::{Body, ContactSet, CpuNarrowphase, GpuNarrowphase, Shape};
use parry3d::math::Pose as PPose;
use parry3d::query::{ContactManifold, DefaultQueryDispatcher, PersistentQueryDispatcher};
use parry3d::shape::SharedShape;

// The same conversion the differential test uses.
#[path = "../tests/support/parry.rs"]
mod parry_shapes;
use parry_shapes::{to_parry_pose, to_parry_shape};

mod common;
use common::digest;

/// Speculative margin of every workload, length units (the generated shapes are about 1 across).
const MARGIN: f32 = 0.01;
/// Pair counts measured.
const SIZES: [usize; 3] = [1_000, 10_000, 100_000];
/// Largest pair count sent to the GPU backend per workload: lavapipe (a CPU driver) runs the
/// kernel at about 2k hull64 pairs per second on 2 cores, so hull workloads stop at 1k.
/// `HULLSAT_BENCH_GPU_MAX_PAIRS` overrides it for every workload (on a real GPU).
fn gpu_max_pairs(workload: &str) -> usize {
    match std::env::var("HULLSAT_BENCH_GPU_MAX_PAIRS") {
        Ok(n) => n.parse().expect("HULLSAT_BENCH_GPU_MAX_PAIRS: a pair count"),
        Err(_) if workload.starts_with("hull") => 1_000,
        Err(_) => 10_000,
    }
}
const WORKLOADS: [&str; 4] = ["box", "hull32", "hull64", "mixed"];
/// Run by default; `gpu` and `gpu_cpuclip` (the whole `collide` call, wall clock) only when asked
/// for: the three parts add up to the first.
const BACKENDS: [&str; 8] = [
    "cpu1",
    "cpu",
    "cpu_set",
    "host_finish",
    "parry",
    "gpu_upload",
    "gpu_dispatch_readback",
    "gpu_clipping",
];

/// The values of a comma-separated environment variable, or `default` when it is unset.
fn selected<T: Copy + ToString>(var: &str, default: &[T]) -> Vec<String> {
    match std::env::var(var) {
        Ok(list) => list
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect(),
        Err(_) => default.iter().map(|v| v.to_string()).collect(),
    }
}

/// A scene and its first `max_pairs` candidate pairs, with parry copies of its shapes and poses.
struct Workload {
    name: String,
    shapes: Vec<Shape>,
    bodies: Vec<Body>,
    pairs: Vec<[u32; 2]>,
    parry_shapes: Vec<SharedShape>,
    parry_poses: Vec<PPose>,
}

/// Grows the body count until the broadphase gives at least `max_pairs` pairs.
fn build_workload(name: &str, max_pairs: usize) -> Workload {
    let mix = ShapeMix::preset(name).unwrap_or_else(|| panic!("unknown workload {name:?}"));
    let mut bodies = max_pairs.max(1000);
    loop {
        let config = ParticleSceneConfig {
            bodies,
            seed: 7,
            density: 0.3,
            mix,
            margin: MARGIN,
        };
        let scene = generate_particle_scene(&config).expect("valid scene configuration");
        let mut pairs = candidate_pairs(&scene.shapes, &scene.bodies, MARGIN);
        if pairs.len() >= max_pairs {
            pairs.truncate(max_pairs);
            // Generated scenes hold no half-spaces, and every generated hull converts.
            let parry_shapes = scene
                .shapes
                .iter()
                .map(|s| to_parry_shape(s).expect("particle shapes convert to parry"))
                .collect();
            let parry_poses = scene.bodies.iter().map(|b| to_parry_pose(&b.pose)).collect();
            return Workload {
                name: name.to_string(),
                shapes: scene.shapes,
                bodies: scene.bodies,
                pairs,
                parry_shapes,
                parry_poses,
            };
        }
        bodies *= 2;
    }
}

impl Workload {
    /// The first `n` pairs and only the bodies they use (renumbered in order of first use): every
    /// backend validates or converts the bodies of a batch, so a 1k-pair batch must not carry
    /// the 100k bodies of the scene it was cut from.
    fn first_pairs(&self, n: usize) -> (Workload, Vec<[u32; 2]>) {
        let mut index = vec![u32::MAX; self.bodies.len()];
        let mut used = Vec::new();
        let pairs = self.pairs[..n.min(self.pairs.len())]
            .iter()
            .map(|pair| {
                pair.map(|body| {
                    let slot = &mut index[body as usize];
                    if *slot == u32::MAX {
                        *slot = used.len() as u32;
                        used.push(body as usize);
                    }
                    *slot
                })
            })
            .collect();
        let workload = Workload {
            name: self.name.clone(),
            shapes: self.shapes.clone(),
            bodies: used.iter().map(|&i| self.bodies[i]).collect(),
            pairs: Vec::new(),
            parry_shapes: self.parry_shapes.clone(),
            parry_poses: used.iter().map(|&i| self.parry_poses[i]).collect(),
        };
        (workload, pairs)
    }
}

/// Contacts found by parry for `pairs` (manifold points summed, so the work is not optimized out).
fn parry_collide(w: &Workload, pairs: &[[u32; 2]], manifolds: &mut Vec<ContactManifold<(), ()>>) -> usize {
    let dispatcher = DefaultQueryDispatcher;
    let mut points = 0;
    for &[a, b] in pairs {
        let (a, b) = (a as usize, b as usize);
        let pos12 = w.parry_poses[a].inv_mul(&w.parry_poses[b]);
        manifolds.clear();
        let mut workspace = None;
        dispatcher
            .contact_manifolds(
                &pos12,
                w.parry_shapes[w.bodies[a].shape as usize].as_ref(),
                w.parry_shapes[w.bodies[b].shape as usize].as_ref(),
                MARGIN,
                manifolds,
                &mut workspace,
            )
            .expect("parry supports every generated shape pair");
        points += manifolds.iter().map(|m| m.points.len()).sum::<usize>();
    }
    points
}

fn bench_cpu(group: &mut BenchmarkGroup<WallTime>, w: &Workload, pairs: &[[u32; 2]], backends: &[String]) {
    let cpu = CpuNarrowphase::new(w.shapes.clone());
    let n = pairs.len();
    if backends.iter().any(|b| b == "cpu1") {
        group.bench_function(format!("cpu1/{n}"), |bench| {
            bench.iter(|| black_box(cpu.collide_single_thread(&w.bodies, pairs, MARGIN).unwrap()))
        });
    }
    if backends.iter().any(|b| b == "cpu") {
        group.bench_function(format!("cpu/{n}"), |bench| {
            bench.iter(|| black_box(cpu.collide(&w.bodies, pairs, MARGIN).unwrap()))
        });
    }
    if backends.iter().any(|b| b == "cpu_set") {
        let mut set = ContactSet::new();
        group.bench_function(format!("cpu_set/{n}"), |bench| {
            bench.iter(|| {
                cpu.collide_into(&w.bodies, pairs, MARGIN, &mut set).unwrap();
                black_box(set.len())
            })
        });
    }
    if backends.iter().any(|b| b == "host_finish") {
        let (batch, list) = host_finish_input(&cpu, w, pairs);
        let mut set = ContactSet::new();
        group.bench_function(format!("host_finish/{n}"), |bench| {
            bench.iter(|| {
                finish_listed_into(&batch, &list, &mut set).unwrap();
                black_box(set.len())
            })
        });
    }
    if backends.iter().any(|b| b == "parry") {
        let mut manifolds = Vec::new();
        group.bench_function(format!("parry/{n}"), |bench| {
            bench.iter(|| black_box(parry_collide(w, pairs, &mut manifolds)))
        });
    }
}

/// The batch of `pairs` and the ordered manifold list a GPU round would copy back for it (from
/// the CPU's manifolds), for `host_finish`.
fn host_finish_input<'a>(
    cpu: &CpuNarrowphase,
    w: &'a Workload,
    pairs: &'a [[u32; 2]],
) -> (ValidatedBatch<'a>, Vec<GpuManifold>) {
    let batch = ValidatedBatch::new(&w.shapes, &w.bodies, pairs, MARGIN).expect("valid batch");
    let manifolds = cpu.collide(&w.bodies, pairs, MARGIN).expect("valid batch");
    let list = gpu_list_from(&batch, &manifolds);
    (batch, list)
}

fn bench_gpu(
    group: &mut BenchmarkGroup<WallTime>,
    gpu: &mut GpuNarrowphase,
    w: &Workload,
    pairs: &[[u32; 2]],
    backends: &[String],
) {
    let n = pairs.len();
    if n > gpu_max_pairs(&w.name) {
        return;
    }
    type Part = fn(&hullsat::narrowphase::gpu::GpuTimings) -> Duration;
    let parts: [(&str, Part); 3] = [
        ("gpu_upload", |t| t.upload),
        ("gpu_dispatch_readback", |t| t.dispatch_readback),
        ("gpu_clipping", |t| t.cpu_clipping),
    ];
    for (name, clipping) in [("gpu", Clipping::Gpu), ("gpu_cpuclip", Clipping::Cpu)] {
        if backends.iter().any(|b| b == name) {
            gpu.set_clipping(clipping)
                .expect("the device runs the clip kernel");
            group.bench_function(format!("{name}/{n}"), |bench| {
                bench.iter(|| black_box(gpu.collide(&w.bodies, pairs, MARGIN).unwrap()))
            });
        }
    }
    gpu.set_clipping(Clipping::Gpu)
        .expect("the device runs the clip kernel");
    for (name, part) in parts {
        if !backends.iter().any(|b| b == name) {
            continue;
        }
        group.bench_function(format!("{name}/{n}"), |bench| {
            bench.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    black_box(gpu.collide(&w.bodies, pairs, MARGIN).unwrap());
                    total += part(&gpu.timings());
                }
                total
            })
        });
    }
}

/// One pass of each CPU backend over each size, no criterion: for instruction counts
/// (`perf stat -e instructions:u`, `valgrind --tool=callgrind`), minus a run with
/// `HULLSAT_BENCH_BACKENDS=none` for the scene setup.
fn run_once(w: &Workload, sizes: &[usize], backends: &[String]) {
    let cpu = CpuNarrowphase::new(w.shapes.clone());
    let mut manifolds = Vec::new();
    for &n in sizes {
        let (w, pairs) = w.first_pairs(n);
        let (w, pairs) = (&w, &pairs[..]);
        for backend in backends {
            let results = match backend.as_str() {
                "cpu1" => cpu.collide_single_thread(&w.bodies, pairs, MARGIN).unwrap(),
                "cpu" => cpu.collide(&w.bodies, pairs, MARGIN).unwrap(),
                "parry" => {
                    let points = parry_collide(w, pairs, &mut manifolds);
                    eprintln!("once {}/parry/{}: {points} points", w.name, pairs.len());
                    continue;
                }
                _ => continue,
            };
            let found = results.iter().flatten().count();
            // The digest only when asked for: it would count in the instructions per pair.
            let digest = std::env::var_os("HULLSAT_BENCH_DIGEST")
                .map(|_| format!(" (digest {:016x})", digest(&results)))
                .unwrap_or_default();
            eprintln!("once {}/{backend}/{}: {found}{digest}", w.name, pairs.len());
        }
    }
}

fn narrowphase(c: &mut Criterion) {
    let workloads = selected("HULLSAT_BENCH_WORKLOADS", &WORKLOADS);
    let backends = selected("HULLSAT_BENCH_BACKENDS", &BACKENDS);
    let sizes: Vec<usize> = selected("HULLSAT_BENCH_SIZES", &SIZES)
        .iter()
        .map(|s| {
            s.parse()
                .expect("HULLSAT_BENCH_SIZES: comma-separated pair counts")
        })
        .collect();
    let max_pairs = sizes.iter().copied().max().unwrap_or(0);
    let wants_gpu = backends.iter().any(|b| b.starts_with("gpu"));
    for name in &workloads {
        let start = Instant::now();
        let w = build_workload(name, max_pairs);
        let built = start.elapsed();
        let contacts = CpuNarrowphase::new(w.shapes.clone())
            .collide(&w.bodies, &w.pairs, MARGIN)
            .expect("valid batch")
            .iter()
            .filter(|m| m.is_some())
            .count();
        eprintln!(
            "workload {}: {} bodies, {} pairs ({contacts} within the margin), built in {built:.1?}",
            w.name,
            w.bodies.len(),
            w.pairs.len(),
        );
        let mut gpu = if wants_gpu {
            match GpuNarrowphase::new(&w.shapes) {
                Ok(gpu) => {
                    let info = gpu.adapter_info();
                    eprintln!(
                        "gpu adapter: {} ({:?}, {:?})",
                        info.name, info.backend, info.device_type
                    );
                    Some(gpu)
                }
                Err(e) => {
                    eprintln!("gpu benchmarks skipped: {e}");
                    None
                }
            }
        } else {
            None
        };
        if std::env::var_os("HULLSAT_BENCH_ONCE").is_some() {
            run_once(&w, &sizes, &backends);
            continue;
        }
        let mut group = c.benchmark_group(name.as_str());
        group
            .sample_size(10)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(2))
            .sampling_mode(SamplingMode::Flat);
        for &n in &sizes {
            let (w, pairs) = w.first_pairs(n);
            group.throughput(Throughput::Elements(pairs.len() as u64));
            bench_cpu(&mut group, &w, &pairs, &backends);
            if let Some(gpu) = gpu.as_mut() {
                bench_gpu(&mut group, gpu, &w, &pairs, &backends);
            }
        }
        group.finish();
    }
}

criterion_group!(benches, narrowphase);
criterion_main!(benches);

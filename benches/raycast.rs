//! Ray cast throughput, rays per second, on the same rays and bodies for every backend.
//!
//! 1. Scene: a seeded particle scene (`generate_particle_scene`, preset `mixed`: boxes, hulls of
//!    8 to 64 vertices, spheres, capsules; 20,000 bodies, density 0.3; shapes about 1 across).
//!    Rays: `raycast::workload::random_rays` (origins uniform in the box of the body positions,
//!    uniform directions), N in 1k, 10k, 100k.
//! 2. Workloads: `every` (rays 5 units long, every hit, sorted) and `closest` (rays 1,000 units
//!    long, the nearest hit only).
//! 3. Backends, criterion ids `<workload>/<backend>/<rays>`:
//!    - `cpu1`: `CpuRaycaster::cast_single_thread` (validation, BVH build, casts);
//!    - `cpu`: `CpuRaycaster::cast` (rayon, all cores);
//!    - `parry1`: parry3d 0.31 on one thread, the same work: build its `Bvh` (binned SAH) over
//!      the bodies' `compute_aabb`s, then per ray `Bvh::leaves` with the node's `cast_ray` and
//!      `cast_ray_and_get_normal` (solid) on each leaf's shape, hits sorted (`every`), or
//!      `Bvh::cast_ray` with `cast_ray` on the leaves and the normal of the winner (`closest`);
//!    - `gpu`: `GpuRaycaster::cast`, the whole call, wall clock. Lavapipe (the software Vulkan
//!      driver of machines without a GPU) runs it on the CPU: its numbers say nothing about a
//!      GPU. Skipped without an adapter, and above 10k rays unless `HULLSAT_BENCH_GPU_MAX_RAYS`.
//!
//! Quick subsets: `HULLSAT_BENCH_WORKLOADS` (e.g. `every`), `HULLSAT_BENCH_SIZES` (e.g. `10000`),
//! `HULLSAT_BENCH_BACKENDS` (e.g. `cpu1,parry1`, or `none`). `HULLSAT_BENCH_ONCE=1` runs each
//! selected CPU backend once per size without criterion, for instruction counts under callgrind
//! (subtract a run with `HULLSAT_BENCH_BACKENDS=none`, divide by the ray count).

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use hullsat::generate::{ParticleSceneConfig, ShapeMix, generate_particle_scene};
use hullsat::raycast::workload::random_rays;
use hullsat::{Body, CpuRaycaster, GpuRaycaster, Ray, Shape};
use parry3d::bounding_volume::Aabb;
use parry3d::math::{Pose as PPose, Vector as PVector};
use parry3d::partitioning::{Bvh, BvhBuildStrategy};
use parry3d::query::Ray as PRay;
use parry3d::shape::SharedShape;

#[path = "../tests/support/parry.rs"]
mod parry_shapes;
use parry_shapes::{to_parry_pose, to_parry_shape};

const BODIES: usize = 20_000;
const SIZES: [usize; 3] = [1_000, 10_000, 100_000];
const WORKLOADS: [&str; 2] = ["every", "closest"];
const BACKENDS: [&str; 4] = ["cpu1", "cpu", "parry1", "gpu"];

/// The values of a comma-separated environment variable, or `default` when it is unset.
fn selected<T: ToString>(var: &str, default: &[T]) -> Vec<String> {
    match std::env::var(var) {
        Ok(list) => list
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect(),
        Err(_) => default.iter().map(ToString::to_string).collect(),
    }
}

fn gpu_max_rays() -> usize {
    std::env::var("HULLSAT_BENCH_GPU_MAX_RAYS").map_or(10_000, |n| n.parse().expect("a ray count"))
}

/// Parry's copy of the scene: shapes per body and poses.
struct ParryScene {
    shapes: Vec<SharedShape>,
    poses: Vec<PPose>,
}

impl ParryScene {
    fn new(shapes: &[Shape], bodies: &[Body]) -> Self {
        // Generated scenes hold no half-spaces, and every generated hull converts.
        let library: Vec<SharedShape> = shapes
            .iter()
            .map(|s| to_parry_shape(s).expect("particle shapes convert to parry"))
            .collect();
        ParryScene {
            shapes: bodies.iter().map(|b| library[b.shape as usize].clone()).collect(),
            poses: bodies.iter().map(|b| to_parry_pose(&b.pose)).collect(),
        }
    }

    /// `(body, distance, normal)` of every hit per ray, or of the nearest.
    fn cast(&self, rays: &[Ray], closest: bool) -> Vec<Vec<(u32, f32, PVector)>> {
        let aabbs: Vec<Aabb> = self
            .shapes
            .iter()
            .zip(&self.poses)
            .map(|(s, p)| s.compute_aabb(p))
            .collect();
        let bvh = Bvh::from_leaves(BvhBuildStrategy::Binned, &aabbs);
        rays.iter()
            .map(|ray| {
                let o = ray.origin().as_vec3();
                let d = ray.direction();
                let pray = PRay::new(PVector::new(o.x, o.y, o.z), PVector::new(d.x, d.y, d.z));
                let max = ray.max_distance().min(f32::MAX);
                if closest {
                    let best = bvh.cast_ray(&pray, max, |leaf, best| {
                        self.shapes[leaf as usize].cast_ray(&self.poses[leaf as usize], &pray, best, true)
                    });
                    return best
                        .and_then(|(leaf, _)| {
                            let (shape, pose) = (&self.shapes[leaf as usize], &self.poses[leaf as usize]);
                            let hit = shape.cast_ray_and_get_normal(pose, &pray, max, true)?;
                            Some((leaf, hit.time_of_impact, hit.normal))
                        })
                        .into_iter()
                        .collect();
                }
                let mut hits: Vec<(u32, f32, PVector)> = bvh
                    .leaves(|node| node.cast_ray(&pray, max) < f32::MAX)
                    .filter_map(|leaf| {
                        let (shape, pose) = (&self.shapes[leaf as usize], &self.poses[leaf as usize]);
                        let hit = shape.cast_ray_and_get_normal(pose, &pray, max, true)?;
                        Some((leaf, hit.time_of_impact, hit.normal))
                    })
                    .collect();
                hits.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
                hits
            })
            .collect()
    }
}

fn raycast(c: &mut Criterion) {
    let scene = generate_particle_scene(&ParticleSceneConfig {
        bodies: BODIES,
        seed: 7,
        density: 0.3,
        mix: ShapeMix::MIXED,
        margin: 0.0,
    })
    .expect("valid scene configuration");
    let (shapes, bodies) = (scene.shapes, scene.bodies);
    let backends = selected("HULLSAT_BENCH_BACKENDS", &BACKENDS);
    let sizes: Vec<usize> = selected("HULLSAT_BENCH_SIZES", &SIZES)
        .iter()
        .map(|s| s.parse().expect("HULLSAT_BENCH_SIZES: ray counts"))
        .collect();
    let cpu = CpuRaycaster::new(shapes.clone());
    let parry = ParryScene::new(&shapes, &bodies);
    let mut gpu = if backends.iter().any(|b| b == "gpu") {
        match GpuRaycaster::new(&shapes) {
            Ok(gpu) => Some(gpu),
            Err(e) => {
                eprintln!("skipping gpu: {e}");
                None
            }
        }
    } else {
        None
    };
    let once = std::env::var("HULLSAT_BENCH_ONCE").is_ok_and(|v| v == "1");
    for workload in selected("HULLSAT_BENCH_WORKLOADS", &WORKLOADS) {
        let (length, closest) = match workload.as_str() {
            "every" => (Some(5.0), false),
            "closest" => (Some(1000.0), true),
            other => panic!("unknown workload {other:?}"),
        };
        if once {
            for &n in &sizes {
                let rays = random_rays(&bodies, n, length, 1);
                for backend in &backends {
                    match backend.as_str() {
                        "cpu1" => drop(black_box(
                            cpu.cast_single_thread(&bodies, &rays, closest).unwrap(),
                        )),
                        "parry1" => drop(black_box(parry.cast(&rays, closest))),
                        _ => {}
                    }
                }
            }
            continue;
        }
        let mut group = c.benchmark_group(&workload);
        group
            .sample_size(10)
            .sampling_mode(SamplingMode::Flat)
            .measurement_time(Duration::from_secs(3))
            .warm_up_time(Duration::from_secs(1));
        for &n in &sizes {
            let rays = random_rays(&bodies, n, length, 1);
            // Both libraries must be doing the same work: print their hit counts.
            let count = |lists: &[Vec<hullsat::RayHit>]| lists.iter().map(Vec::len).sum::<usize>();
            let ours = count(&cpu.cast(&bodies, &rays, closest).unwrap());
            let theirs: usize = parry.cast(&rays, closest).iter().map(Vec::len).sum();
            eprintln!("{workload}/{n}: hullsat {ours} hits, parry {theirs}");
            group.throughput(Throughput::Elements(n as u64));
            for backend in &backends {
                let id = format!("{backend}/{n}");
                match backend.as_str() {
                    "cpu1" => group.bench_function(&id, |b| {
                        b.iter(|| black_box(cpu.cast_single_thread(&bodies, &rays, closest).unwrap()))
                    }),
                    "cpu" => group.bench_function(&id, |b| {
                        b.iter(|| black_box(cpu.cast(&bodies, &rays, closest).unwrap()))
                    }),
                    "parry1" => {
                        group.bench_function(&id, |b| b.iter(|| black_box(parry.cast(&rays, closest))))
                    }
                    "gpu" => match &mut gpu {
                        Some(gpu) if n <= gpu_max_rays() => group.bench_function(&id, |b| {
                            b.iter(|| black_box(gpu.cast(&bodies, &rays, closest).unwrap()))
                        }),
                        _ => continue,
                    },
                    other => panic!("unknown backend {other:?}"),
                };
            }
        }
        group.finish();
    }
}

criterion_group!(benches, raycast);
criterion_main!(benches);

//! The GPU narrowphase (host path and resident API) and ray casts from several threads at once:
//! every narrowphase and raycaster shares the one process-wide device, and creating, using and
//! dropping them concurrently neither deadlocks nor mixes up results. (On NVIDIA's driver,
//! per-narrowphase instances torn down concurrently deadlocked; this is the test that would
//! have caught it.)

mod support;

use std::sync::mpsc;
use std::sync::{Arc, Barrier};
use std::time::Duration;

use glam::DVec3;
use glam::{Quat, Vec3};
use hullsat::contract::compare_pair;
use hullsat::narrowphase::gpu::layout::{GpuManifold, MANIFOLD_CLIPPED};
use hullsat::{Body, CpuNarrowphase, CpuRaycaster, Cuboid, GpuNarrowphase, GpuRaycaster, Pose, Ray, Shape};
use rand::RngExt;
use support::{ResidentScene, gpu_or_skip, read_resident, seeded_rng};

/// Threads started at once.
const THREADS: usize = 8;
/// Narrowphases each thread creates, uses and drops.
const ROUNDS: usize = 4;
/// Longest the whole test may take before it counts as hung.
const WATCHDOG: Duration = Duration::from_secs(300);

/// Stacked axis-aligned boxes of half-height 0.5 (shape 0) and 0.25 (shape 1): body `2k + 1`
/// sits on body `2k` with a known overlap (positive) or gap (negative) along y, shifted
/// sideways by less than the boxes' half-widths. Returns bodies, pairs and the overlaps.
fn stacks(seed: u64, count: usize) -> (Vec<Body>, Vec<[u32; 2]>, Vec<f32>) {
    let mut rng = seeded_rng(seed);
    let mut bodies = Vec::new();
    let mut pairs = Vec::new();
    let mut overlaps = Vec::new();
    for k in 0..count {
        let base = Vec3::new(k as f32 * 10.0, rng.random_range(-5.0..5.0), 0.0);
        let (shape, half_height) = if rng.random() { (0, 0.5) } else { (1, 0.25) };
        let overlap: f32 = if rng.random() {
            rng.random_range(0.01..0.2)
        } else {
            -rng.random_range(0.05..0.2)
        };
        let shift = Vec3::new(rng.random_range(-0.3..0.3), 0.0, rng.random_range(-0.3..0.3));
        let top = base + shift + Vec3::Y * (0.5 + half_height - overlap);
        bodies.push(Body {
            shape: 0,
            pose: Pose::new(base, Quat::IDENTITY),
        });
        bodies.push(Body {
            shape,
            pose: Pose::new(top, Quat::IDENTITY),
        });
        pairs.push([2 * k as u32, 2 * k as u32 + 1]);
        overlaps.push(overlap);
    }
    (bodies, pairs, overlaps)
}

/// One thread's work: `ROUNDS` times create a narrowphase, collide, compare, drop it.
fn worker(thread: usize, shapes: &[Shape], start: &Barrier) {
    start.wait();
    for round in 0..ROUNDS {
        let gpu = GpuNarrowphase::new(shapes).expect("GPU narrowphase (an adapter exists)");
        let shared = hullsat::gpu::shared_context().expect("shared context");
        assert!(
            Arc::ptr_eq(gpu.context(), &shared),
            "thread {thread}: a narrowphase made its own device"
        );
        let mut gpu = gpu;
        let (bodies, pairs, overlaps) = stacks((thread * ROUNDS + round) as u64, 64);
        let results = gpu.collide(&bodies, &pairs, 0.0).expect("GPU collide");
        let cpu = CpuNarrowphase::new(shapes)
            .collide(&bodies, &pairs, 0.0)
            .expect("CPU collide");
        for (i, (gpu_result, overlap)) in results.iter().zip(&overlaps).enumerate() {
            let context = format!("thread {thread}, round {round}, pair {i}");
            match gpu_result {
                Some(m) => {
                    assert!(*overlap > 0.0, "{context}: apart by {} but touching", -overlap);
                    assert!(
                        (m.separation + overlap).abs() < 1e-5,
                        "{context}: separation {} for overlap {overlap}",
                        m.separation
                    );
                    assert_eq!(m.points().len(), 4, "{context}: face on face gives 4 points");
                }
                None => assert!(*overlap < 0.0, "{context}: overlap {overlap} but no manifold"),
            }
            compare_pair(
                shapes,
                &bodies,
                pairs[i],
                0.0,
                gpu_result.as_ref(),
                cpu[i].as_ref(),
            )
            .unwrap_or_else(|e| panic!("{context}: {e}"));
        }
        // Even threads also run the same batch through the resident API on the shared device.
        if thread.is_multiple_of(2) {
            let listed = resident_list(&mut gpu, &bodies, &pairs);
            let context = format!("thread {thread}, round {round}");
            assert_eq!(listed.len(), results.iter().flatten().count(), "{context}");
            for entry in &listed {
                let expected = results[entry.pair as usize].expect("listed pairs touch");
                assert_eq!(entry.status, MANIFOLD_CLIPPED, "{context}: {entry:?}");
                assert_eq!(entry.count, 4, "{context}: {entry:?}");
                // The list and the host path run the same kernels on the same device.
                assert_eq!(entry.separation, expected.separation, "{context}: {entry:?}");
            }
        }
        drop(gpu);
        // Odd threads also cast rays on the shared device meanwhile: straight down through
        // every stack, each ray entering the top box and then the base.
        if thread % 2 == 1 {
            let rays: Vec<Ray> = bodies
                .iter()
                .step_by(2)
                .map(|base| {
                    let origin = base.pose.translation + DVec3::Y * 10.0;
                    Ray::new(origin, -Vec3::Y, None).expect("a valid ray")
                })
                .collect();
            let mut gpu = GpuRaycaster::new(shapes).expect("GPU raycaster (an adapter exists)");
            let gpu_hits = gpu.cast(&bodies, &rays, false).expect("GPU ray casts");
            let cpu_hits = CpuRaycaster::new(shapes)
                .cast(&bodies, &rays, false)
                .expect("CPU ray casts");
            for (i, (g, c)) in gpu_hits.iter().zip(&cpu_hits).enumerate() {
                let context = format!("thread {thread}, round {round}, ray {i}: {g:?} vs {c:?}");
                assert_eq!(g.len(), 2, "{context}: the top box and the base");
                assert_eq!(g.len(), c.len(), "{context}");
                for (g, c) in g.iter().zip(c) {
                    assert!(
                        g.body == c.body && (g.distance - c.distance).abs() < 1e-4,
                        "{context}"
                    );
                }
            }
        }
    }
}

/// The resident API on `gpu`'s device: bodies, pairs and count uploaded into buffers of the
/// test's own, `encode_resident`, submitted, and the list read back (bounded wait).
fn resident_list(gpu: &mut GpuNarrowphase, bodies: &[Body], pairs: &[[u32; 2]]) -> Vec<GpuManifold> {
    let scene = ResidentScene::new(gpu.device(), bodies, pairs);
    read_resident(gpu, &scene.batch(0.0))
}

#[test]
fn narrowphases_created_used_and_dropped_on_eight_threads_share_one_device() {
    let shapes = vec![
        Shape::Cuboid(Cuboid::new(Vec3::splat(0.5)).expect("box")),
        Shape::Cuboid(Cuboid::new(Vec3::new(0.5, 0.25, 0.5)).expect("box")),
    ];
    // Skips (or fails under HULLSAT_REQUIRE_GPU=1) without an adapter.
    if gpu_or_skip(&shapes).is_none() {
        return;
    }
    let start = Arc::new(Barrier::new(THREADS));
    let (done, finished) = mpsc::channel();
    for thread in 0..THREADS {
        let (shapes, start, done) = (shapes.clone(), Arc::clone(&start), done.clone());
        std::thread::spawn(move || {
            let outcome = std::panic::catch_unwind(|| worker(thread, &shapes, &start));
            let _ = done.send((thread, outcome.is_ok()));
        });
    }
    for _ in 0..THREADS {
        let (thread, ok) = finished
            .recv_timeout(WATCHDOG)
            .expect("every thread finishes within the watchdog (no deadlock)");
        assert!(ok, "thread {thread} failed (its panic message is above)");
    }
}

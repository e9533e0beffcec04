//! The GPU manifold list: the compact readback of `GpuNarrowphase::collide` (only pairs that are
//! not separated come back, with their count) and the resident API (`encode_resident`: bodies,
//! pairs and the pair count in the caller's GPU buffers, manifolds left in a GPU list), both
//! against the CPU path.

mod support;

use glam::Vec3;
use hullsat::gpu::Clipping;
use hullsat::{Body, CpuNarrowphase, Cuboid, GpuNarrowphase, Manifold, Pose, Shape};
use rand::RngExt;
use rand_pcg::Pcg64;
use support::{device_or_skip, gpu_or_skip, random_rotation, seeded_rng};

/// Positions and depths agree within this fraction of the pair's size (issue 8: 1e-5).
const POINT_TOLERANCE: f32 = 1.0e-5;

/// Boxes of half extents 0.25 to 0.5 (at most 0.87 from centre to corner).
fn boxes(rng: &mut Pcg64, count: usize) -> Vec<Shape> {
    (0..count)
        .map(|_| {
            let half = Vec3::new(
                rng.random_range(0.25..0.5),
                rng.random_range(0.25..0.5),
                rng.random_range(0.25..0.5),
            );
            Shape::Cuboid(Cuboid::new(half).expect("valid box"))
        })
        .collect()
}

/// `pairs` pairs `[2k, 2k + 1]` of randomly turned boxes 10 apart from the next pair; a share
/// `touching` of them overlap (centres 0.2 to 0.5 apart), the others are clearly separated
/// (centres 2 to 3 apart, more than two corner distances).
fn scene(rng: &mut Pcg64, shapes: usize, pairs: usize, touching: f64) -> (Vec<Body>, Vec<[u32; 2]>) {
    let mut bodies = Vec::with_capacity(2 * pairs);
    for k in 0..pairs {
        let centre = Vec3::new(10.0 * k as f32, 0.0, 0.0);
        let distance = if rng.random_bool(touching) {
            rng.random_range(0.2..0.5)
        } else {
            rng.random_range(2.0..3.0)
        };
        let offset = support::random_direction(rng) * distance;
        for position in [centre, centre + offset] {
            bodies.push(Body {
                shape: rng.random_range(0..shapes as u32),
                pose: Pose::new(position, random_rotation(rng)),
            });
        }
    }
    let pairs = (0..pairs as u32).map(|k| [2 * k, 2 * k + 1]).collect();
    (bodies, pairs)
}

/// Same verdict; for contacts the same normal, separation, point count, ids, and positions and
/// depths within the tolerance (boxes: scale 2).
#[track_caller]
fn assert_same_results(gpu: &[Option<Manifold>], cpu: &[Option<Manifold>]) {
    assert_eq!(gpu.len(), cpu.len());
    let eps = POINT_TOLERANCE * 2.0;
    for (i, (g, c)) in gpu.iter().zip(cpu).enumerate() {
        let (g, c) = match (g, c) {
            (None, None) => continue,
            (Some(g), Some(c)) => (g, c),
            _ => panic!("pairs[{i}]: verdicts differ\n gpu {g:?}\n cpu {c:?}"),
        };
        assert!(
            g.normal.distance(c.normal) <= eps && (g.separation - c.separation).abs() <= eps,
            "pairs[{i}]\n gpu {g:?}\n cpu {c:?}"
        );
        assert_eq!(
            g.point_count(),
            c.point_count(),
            "pairs[{i}]\n gpu {g:?}\n cpu {c:?}"
        );
        for (gp, cp) in g.points().iter().zip(c.points()) {
            assert_eq!(gp.id, cp.id, "pairs[{i}]\n gpu {g:?}\n cpu {c:?}");
            assert!(
                gp.position.distance(cp.position) <= f64::from(eps) && (gp.depth - cp.depth).abs() <= eps,
                "pairs[{i}]\n gpu {g:?}\n cpu {c:?}"
            );
        }
    }
}

#[test]
fn mostly_separated_pairs_read_back_only_the_listed_ones() {
    const PAIRS: usize = 4_000;
    let mut rng = seeded_rng(0xc0_4ac7);
    let shapes = boxes(&mut rng, 8);
    let (bodies, pairs) = scene(&mut rng, shapes.len(), PAIRS, 0.05);
    let Some(mut gpu) = gpu_or_skip(&shapes) else {
        return;
    };
    gpu.set_clipping(Clipping::Gpu)
        .expect("the shared device runs the clip kernel");
    let cpu = CpuNarrowphase::new(shapes.clone())
        .collide(&bodies, &pairs, 0.0)
        .expect("CPU collide");
    let touching = cpu.iter().flatten().count();
    assert!((100..400).contains(&touching), "{touching} of {PAIRS} touch");

    // The first call knows no share yet: the whole list comes back with its count.
    let first = gpu.collide(&bodies, &pairs, 0.0).expect("GPU collide");
    assert_same_results(&first, &cpu);
    let whole = 16 + 112 * PAIRS as u64;
    assert_eq!(gpu.timings().readback_bytes, whole);
    // Then only the listed pairs, with headroom: about a tenth of the dense list.
    let second = gpu.collide(&bodies, &pairs, 0.0).expect("GPU collide");
    assert_eq!(second, first);
    let timings = gpu.timings();
    assert_eq!(timings.list_second_copies, 0);
    let expected = 16 + 112 * ((touching as f64 * 1.25).ceil() as u64 + 256);
    assert_eq!(timings.readback_bytes, expected, "{touching} listed");
    assert!(timings.readback_bytes < whole / 5);

    // A batch where most pairs touch outgrows that prefix: its rest takes a second copy, and
    // the results are still the CPU's; the next sparse call is sized from it again.
    let (dense_bodies, dense_pairs) = scene(&mut rng, shapes.len(), PAIRS, 0.9);
    let dense = gpu
        .collide(&dense_bodies, &dense_pairs, 0.0)
        .expect("GPU collide");
    assert_eq!(gpu.timings().list_second_copies, 1);
    let dense_cpu = CpuNarrowphase::new(shapes.clone())
        .collide(&dense_bodies, &dense_pairs, 0.0)
        .expect("CPU collide");
    assert_same_results(&dense, &dense_cpu);
    assert_eq!(gpu.collide(&bodies, &pairs, 0.0).expect("GPU collide"), first);
    assert_eq!(gpu.timings().list_second_copies, 0);
}

#[test]
fn a_round_of_several_dispatch_chunks_lists_every_pair_once() {
    // 4 workgroups per dispatch dimension: 256 pairs per chunk, so 1,000 pairs run as 4 chunks
    // appending to one list, each entry naming its pair by the chunk's first pair plus its own
    // index. Equal bit for bit to the shared device's one chunk.
    let limits = wgpu::Limits {
        max_compute_workgroups_per_dimension: 4,
        max_storage_buffers_per_shader_stage: 9,
        ..wgpu::Limits::default()
    };
    let mut rng = seeded_rng(0xc4a9);
    let shapes = boxes(&mut rng, 4);
    let (bodies, pairs) = scene(&mut rng, shapes.len(), 1_000, 0.5);
    let Some((device, queue)) = device_or_skip(limits) else {
        return;
    };
    let mut chunked = GpuNarrowphase::with_device(device, queue, &shapes).expect("narrowphase");
    chunked
        .set_clipping(Clipping::Gpu)
        .expect("9 storage buffers requested");
    let mut whole = gpu_or_skip(&shapes).expect("the adapter exists");
    let a = chunked.collide(&bodies, &pairs, 0.0).expect("chunked collide");
    let b = whole.collide(&bodies, &pairs, 0.0).expect("one-chunk collide");
    assert_eq!(a, b);
    let cpu = CpuNarrowphase::new(shapes)
        .collide(&bodies, &pairs, 0.0)
        .expect("CPU collide");
    assert_same_results(&a, &cpu);
}

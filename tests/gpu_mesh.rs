//! The GPU mesh pass (src/narrowphase/gpu/mesh.rs): mesh–convex pairs computed on the GPU
//! (midphase, per-triangle contacts, merge) in the host and resident APIs, judged against the
//! CPU by the GPU = CPU contract on terrain scenes (a tessellated flat floor, a bumpy terrain)
//! with bodies of every convex kind resting on or hovering near them, near the origin and
//! 1e6 from it, with the mesh as A and as B; the work item capacity's overflow; and, without a
//! GPU, the contract's general rules on mesh pairs against the CPU run a few ulps off.

mod support;

use glam::{DVec3, Quat, Vec3};
use hullsat::contract::compare_batch;
use hullsat::narrowphase::gpu::Clipping;
use hullsat::narrowphase::gpu::layout::{MANIFOLD_CLIPPED, MANIFOLD_OVERFLOW};
use hullsat::{Body, Capsule, CpuNarrowphase, Cuboid, Cylinder, GpuError, Pose, Shape, Sphere};
use rand::RngExt;
use support::shapes::random_rotation;
use support::worlds::{bumpy_terrain, grid_floor};
use support::{ResidentScene, gpu_or_skip, read_resident, resident_results, seeded_rng};

/// Shape indices of [`shapes`].
const FLOOR: u32 = 0;
const TERRAIN: u32 = 1;
/// The first convex kind; the rest follow it.
const CONVEX: u32 = 2;
const CONVEX_KINDS: u32 = 5;

/// A flat floor of 8 × 8 jittered cells and a bumpy terrain over `[-4, 4]²`, then one of every
/// convex kind (box, sphere, capsule, cylinder, hull).
fn shapes() -> Vec<Shape> {
    let mut rng = seeded_rng(3);
    let hull = loop {
        let points = support::shapes::random_hull_points(&mut rng, 16, Vec3::new(0.5, 0.35, 0.4));
        if let Ok(hull) = hullsat::ConvexHull::from_points(&points) {
            break hull;
        }
    };
    vec![
        Shape::from(grid_floor(8, 4.0, 0.2, 5)),
        Shape::from(bumpy_terrain(8, 4.0, 0.15, 6)),
        Shape::Cuboid(Cuboid::new(Vec3::new(0.5, 0.3, 0.4)).unwrap()),
        Shape::Sphere(Sphere::new(0.4).unwrap()),
        Shape::Capsule(Capsule::new(0.3, 0.2).unwrap()),
        Shape::Cylinder(Cylinder::new(0.3, 0.35).unwrap()),
        Shape::Hull(hull),
    ]
}

/// Bodies: the floor (0) at `offset`, `n` convex bodies cycling through the kinds (the first
/// half over the floor, the rest over the terrain 20 units along x), then the terrain (last,
/// so the canonical order makes it B), each body's lowest point from 0.2 below height 0 to 0.1 above.
fn bodies(shapes: &[Shape], n: usize, seed: u64, offset: DVec3) -> Vec<Body> {
    let mut rng = seeded_rng(seed);
    let terrain_at = DVec3::new(20.0, 0.0, 0.0);
    let mut bodies = vec![Body {
        shape: FLOOR,
        pose: Pose::new(offset, Quat::IDENTITY),
    }];
    for i in 0..n {
        let shape = CONVEX + i as u32 % CONVEX_KINDS;
        // Mostly upright or flat (resting), some turned at random.
        let rotation = match i % 3 {
            0 => Quat::IDENTITY,
            1 => Quat::from_rotation_y(rng.random_range(-3.0f32..3.0)),
            _ => random_rotation(&mut rng),
        };
        let pose = Pose::new(DVec3::ZERO, rotation);
        let low = hullsat::shape::world_aabb(&shapes[shape as usize], &pose).min.y;
        let x = rng.random_range(-3.3f64..3.3);
        let z = rng.random_range(-3.3f64..3.3);
        let y = f64::from(-low) + rng.random_range(-0.2f64..0.1);
        let base = if 2 * i < n { DVec3::ZERO } else { terrain_at };
        bodies.push(Body {
            shape,
            pose: Pose::new(offset + base + DVec3::new(x, y, z), rotation),
        });
    }
    bodies.push(Body {
        shape: TERRAIN,
        pose: Pose::new(offset + terrain_at, Quat::IDENTITY),
    });
    bodies
}

/// Each convex body with its mesh, in both given orders.
fn mesh_pairs(n: usize) -> Vec<[u32; 2]> {
    let terrain = n as u32 + 1;
    (1..=n as u32)
        .flat_map(|b| {
            let mesh = if 2 * (b - 1) < n as u32 { 0 } else { terrain };
            [[mesh, b], [b, mesh]]
        })
        .collect()
}

#[test]
fn gpu_mesh_pairs_agree_with_the_cpu_within_the_contract() {
    let shapes = shapes();
    let n = 30;
    let mut pairs = mesh_pairs(n);
    let mesh = pairs.len();
    // Convex pairs beside them, so the clip kernel and the merge share the list.
    pairs.extend((1..n as u32).map(|b| [b, b + 1]));
    let margin = 0.02;
    let Some(mut gpu) = gpu_or_skip(&shapes) else {
        return;
    };
    if gpu.clipping() != Clipping::Gpu {
        return;
    }
    for offset in [DVec3::ZERO, DVec3::new(1.0e6, -3.0e5, 7.0e5)] {
        let bodies = bodies(&shapes, n, 11, offset);
        let cpu = CpuNarrowphase::new(&shapes)
            .collide(&bodies, &pairs, margin)
            .unwrap();
        let results = gpu.collide(&bodies, &pairs, margin).unwrap();
        let tally = compare_batch(&shapes, &bodies, &pairs, margin, &results, &cpu)
            .unwrap_or_else(|e| panic!("at {offset}: {e}"));
        let touching = cpu[..mesh].iter().flatten().count();
        assert!(touching > mesh / 2, "{touching} of {mesh} mesh pairs touch");
        // Only the pairs the GPU left to the host count (llvmpipe's loop budget): most mesh
        // pairs are the GPU's.
        let host = gpu.timings().host_pairs;
        eprintln!("at {offset}: {touching} touching mesh pairs, {host} left to the host, {tally:?}");
        assert!(
            host < touching / 2,
            "{host} host pairs of {touching} at {offset}: {tally:?}"
        );
    }
}

#[test]
fn resident_mesh_pairs_are_listed_once_within_the_contract() {
    let shapes = shapes();
    let n = 20;
    let bodies = bodies(&shapes, n, 12, DVec3::new(-2.0e3, 10.0, 5.0e2));
    // Both orders of every mesh pair (the mesh pass puts the mesh as B and swaps back, as the
    // CPU does whichever body comes first).
    let pairs: Vec<[u32; 2]> = mesh_pairs(n);
    let Some(mut gpu) = gpu_or_skip(&shapes) else {
        return;
    };
    if gpu.clipping() != Clipping::Gpu {
        return;
    }
    let batch = ResidentScene::new(gpu.device(), &bodies, &pairs);
    within_the_contract(&batch, &mut gpu, &shapes, &bodies, &pairs);
    // Past a capacity of 8 work items: the pairs that do not fit are listed MANIFOLD_OVERFLOW
    // with the true total, the others as before.
    gpu.set_mesh_capacity(8).unwrap();
    let entries = read_resident(&mut gpu, &batch.batch(RESIDENT_MARGIN));
    let overflowed: Vec<_> = entries.iter().filter(|e| e.status == MANIFOLD_OVERFLOW).collect();
    assert!(!overflowed.is_empty());
    for entry in overflowed {
        let (total, capacity) = entry.overflow();
        assert!(total > capacity && capacity == 8, "{total} {capacity}");
    }
}

#[test]
fn resident_mesh_pairs_in_a_later_dispatch_chunk() {
    // A device of 4 workgroups per dimension: chunks of 256 pairs, 256 work items. The convex
    // pairs fill the first chunk; the mesh pairs fall in the second (the midphase and the merge
    // run per chunk over windows of the caller's pairs).
    let shapes = shapes();
    let n = 24;
    let bodies = bodies(&shapes, n, 14, DVec3::new(3.0e2, 0.0, -1.0e2));
    let mut pairs: Vec<[u32; 2]> = (1..=n as u32)
        .flat_map(|a| (a + 1..=n as u32).map(move |b| [a, b]))
        .collect();
    let convex = pairs.len();
    pairs.extend(mesh_pairs(n).into_iter().filter(|p| p[0] == 0).take(8));
    let limits = wgpu::Limits {
        max_compute_workgroups_per_dimension: 4,
        max_storage_buffers_per_shader_stage: 9,
        ..wgpu::Limits::default()
    };
    let Some((device, queue)) = support::device_or_skip(limits) else {
        return;
    };
    let mut gpu = hullsat::GpuNarrowphase::with_device(device, queue, &shapes).expect("narrowphase");
    assert!(convex > 256 && gpu.mesh_capacity() == 256);
    let batch = ResidentScene::new(gpu.device(), &bodies, &pairs);
    within_the_contract(&batch, &mut gpu, &shapes, &bodies, &pairs);
}

/// Margin of the resident scenes, length units.
const RESIDENT_MARGIN: f32 = 0.02;

/// The resident API's list of `scene` against the CPU under the contract, each pair listed once,
/// most touching mesh pairs finished on the GPU.
fn within_the_contract(
    scene: &ResidentScene,
    gpu: &mut hullsat::GpuNarrowphase,
    shapes: &[Shape],
    bodies: &[Body],
    pairs: &[[u32; 2]],
) {
    let margin = RESIDENT_MARGIN;
    let entries = read_resident(gpu, &scene.batch(margin));
    let results = resident_results(&entries, shapes, bodies, pairs, margin);
    let cpu = CpuNarrowphase::new(shapes)
        .collide(bodies, pairs, margin)
        .unwrap();
    compare_batch(shapes, bodies, pairs, margin, &results, &cpu).unwrap_or_else(|e| panic!("{e}"));
    let is_mesh = |e: &&hullsat::narrowphase::gpu::layout::GpuManifold| {
        pairs[e.pair as usize]
            .iter()
            .any(|&b| bodies[b as usize].shape < CONVEX)
    };
    let on_gpu = entries
        .iter()
        .filter(is_mesh)
        .filter(|e| e.status == MANIFOLD_CLIPPED)
        .count();
    let touching = (0..pairs.len())
        .filter(|&i| pairs[i].iter().any(|&b| bodies[b as usize].shape < CONVEX) && cpu[i].is_some())
        .count();
    assert!(touching > 2, "{touching} touching mesh pairs");
    assert!(
        on_gpu > touching / 2,
        "{on_gpu} of {touching} mesh pairs on the GPU"
    );
}

#[test]
fn a_call_past_the_mesh_capacity_fails_naming_the_count() {
    let shapes = shapes();
    let n = 10;
    let bodies = bodies(&shapes, n, 13, DVec3::ZERO);
    let pairs = mesh_pairs(n);
    let Some(mut gpu) = gpu_or_skip(&shapes) else {
        return;
    };
    if gpu.clipping() != Clipping::Gpu {
        return;
    }
    assert!(gpu.mesh_capacity() > 0);
    assert!(matches!(gpu.set_mesh_capacity(0), Err(GpuError::Input(_))));
    gpu.set_mesh_capacity(4).unwrap();
    match gpu.collide(&bodies, &pairs, 0.02) {
        Err(GpuError::MeshCapacity { capacity, count }) => {
            assert_eq!(capacity, 4);
            assert!(count > capacity, "{count}");
        }
        other => panic!("expected the capacity error, got {other:?}"),
    }
    gpu.set_mesh_capacity(1 << 10).unwrap();
    let cpu = CpuNarrowphase::new(&shapes)
        .collide(&bodies, &pairs, 0.02)
        .unwrap();
    let results = gpu.collide(&bodies, &pairs, 0.02).unwrap();
    compare_batch(&shapes, &bodies, &pairs, 0.02, &results, &cpu).unwrap();
}

#[test]
fn the_cpu_on_mesh_pairs_a_few_ulps_off_stays_within_the_contract() {
    // What a GPU's fused multiply-adds do to the relative pose, on the CPU: each convex body
    // moved by `ulps` f32 ulps of its distance to its mesh and turned by `ulps` × EPSILON; the
    // contract's general rules must accept the moved run's mesh manifolds (no GPU needed).
    let shapes = shapes();
    let n = 60;
    let mut rng = seeded_rng(21);
    let cpu = CpuNarrowphase::new(&shapes);
    let mut total = hullsat::contract::AgreementTally::default();
    for offset in [DVec3::ZERO, DVec3::new(1.0e6, -3.0e5, 7.0e5)] {
        let bodies = bodies(&shapes, n, 15, offset);
        let pairs = mesh_pairs(n);
        let reference = cpu.collide(&bodies, &pairs, 0.02).unwrap();
        for ulps in [1.0f32, 2.0, 4.0, 8.0] {
            let mut moved = bodies.clone();
            for body in moved.iter_mut().filter(|b| b.shape >= CONVEX) {
                let reach = (body.pose.translation - offset).length().max(1.0) as f32;
                let step = ulps * f32::EPSILON * reach;
                body.pose.translation += (support::random_direction(&mut rng) * step).as_dvec3();
                let turn = Quat::from_axis_angle(support::random_direction(&mut rng), ulps * f32::EPSILON);
                body.pose.rotation = (turn * body.pose.rotation).normalize();
            }
            let results = cpu.collide(&moved, &pairs, 0.02).unwrap();
            let tally = compare_batch(&shapes, &bodies, &pairs, 0.02, &results, &reference)
                .unwrap_or_else(|e| panic!("{ulps} ulps at {offset}: {e}"));
            total = total.merged(&tally);
        }
    }
    eprintln!("{total:?}");
    assert!(total.cpu_manifolds > total.pairs / 2, "{total:?}");
    // The perturbation must have changed something, or the proof proves nothing.
    assert!(total.conditioned + total.ties() > 0, "{total:?}");
}

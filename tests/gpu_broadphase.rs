//! The GPU broadphase (`hullsat::broadphase::GpuBroadphase`) against the CPU's
//! (`candidate_pairs`), by the contract of docs/design/gpu-broadphase.md: every CPU pair is
//! listed; every extra pair's CPU boxes come within the margin plus the documented padding;
//! sorted output in the CPU's order; overflow reported with the true count; the resident pairs
//! fed to the resident narrowphase in one encoder give the CPU's touching pairs.

mod support;

use std::collections::HashSet;
use std::f32::consts::FRAC_PI_2;
use std::time::Duration;

use glam::{DVec3, Quat, Vec3};
use hullsat::broadphase::gpu::{MAX_BODIES, scene_centre};
use hullsat::broadphase::{GpuBroadphase, GpuPairCount, ResidentBodies, candidate_pairs};
use hullsat::generate::{ParticleSceneConfig, ShapeMix, generate_particle_scene, terrain};
use hullsat::gpu::GpuContext;
use hullsat::gpu::layout::GpuBody;
use hullsat::internals::CYLINDER_RIM_SLACK;
use hullsat::narrowphase::gpu::Clipping;
use hullsat::narrowphase::gpu::layout::{GpuManifold, GpuManifoldCount, MANIFOLD_LIST_HEAD};
use hullsat::shape::world_aabb;
use hullsat::{
    Body, Capsule, CpuNarrowphase, Cuboid, GpuError, GpuNarrowphase, HalfSpace, Pose, Shape, Sphere,
};
use rand::RngExt;
use support::{device_or_skip, random_rotation, seeded_rng, started_or_skip};
use wgpu::util::DeviceExt;

/// The broadphase on the shared device, or `None` without an adapter (unless required).
fn broadphase_or_skip(shapes: &[Shape]) -> Option<GpuBroadphase> {
    started_or_skip("GPU broadphase", GpuBroadphase::new(shapes))
}

/// The documented padding of body `i`'s box (docs/design/gpu-broadphase.md): relative to its
/// coordinates about the scene centre, its extent, a hull's reach (its largest vertex distance
/// from its own origin: the rotation's rounding scales with it), a cylinder's rim slack, and its
/// world coordinates.
fn padding(shapes: &[Shape], body: &Body, centre: DVec3) -> f32 {
    let shape = &shapes[body.shape as usize];
    let b = world_aabb(shape, &body.pose);
    let relative = (b.min.as_dvec3() - centre)
        .abs()
        .max((b.max.as_dvec3() - centre).abs())
        .max_element() as f32;
    let extent = (b.max - b.min).max_element();
    let reach = match shape {
        Shape::Hull(hull) => hull.vertices().iter().map(|v| v.length()).fold(0.0, f32::max),
        _ => 0.0,
    };
    // A cylinder's rim grows by up to sqrt(CYLINDER_RIM_SLACK) of its radius.
    let rim = match shape {
        Shape::Cylinder(c) => CYLINDER_RIM_SLACK.sqrt() * c.radius(),
        _ => 0.0,
    };
    let world = b.min.abs().max(b.max.abs()).max_element();
    3e-5 * (relative + 2.0 * extent + reach) + 1e-6 * world + rim
}

/// Checks `gpu` against the CPU's pairs by the contract; returns (CPU pairs, extra GPU pairs).
#[track_caller]
fn assert_contract(shapes: &[Shape], bodies: &[Body], margin: f32, gpu: &[[u32; 2]]) -> (usize, usize) {
    let cpu = candidate_pairs(shapes, bodies, margin);
    assert!(gpu.windows(2).all(|w| w[0] < w[1]), "sorted, each pair once");
    assert!(gpu.iter().all(|&[a, b]| a < b && (b as usize) < bodies.len()));
    let listed: HashSet<[u32; 2]> = gpu.iter().copied().collect();
    for pair in &cpu {
        assert!(
            listed.contains(pair),
            "CPU pair {pair:?} missing of {} GPU pairs",
            gpu.len()
        );
    }
    let centre = scene_centre(shapes, bodies);
    let cpu_set: HashSet<[u32; 2]> = cpu.iter().copied().collect();
    let mut extra = 0;
    for &[a, b] in gpu.iter().filter(|p| !cpu_set.contains(*p)) {
        extra += 1;
        let (ba, bb) = (&bodies[a as usize], &bodies[b as usize]);
        let (sa, sb) = (&shapes[ba.shape as usize], &shapes[bb.shape as usize]);
        match (sa, sb) {
            (Shape::HalfSpace(h), _) | (_, Shape::HalfSpace(h)) => {
                let (plane, body) = if matches!(sa, Shape::HalfSpace(_)) {
                    (ba, bb)
                } else {
                    (bb, ba)
                };
                // The bounded body's padding only: a half-space's box, and so its own, is
                // unbounded.
                let pad = padding(shapes, body, centre);
                let normal = plane.pose.transform_vector(h.normal).as_dvec3();
                let offset = f64::from(h.offset) + normal.dot(plane.pose.translation);
                let x = world_aabb(&shapes[body.shape as usize], &body.pose);
                let (c, e) = ((x.min + x.max).as_dvec3() * 0.5, (x.max - x.min).as_dvec3() * 0.5);
                let lowest = normal.dot(c) - normal.abs().dot(e);
                let world = x.min.abs().max(x.max.abs()).max_element() as f64
                    + plane.pose.translation.abs().max_element()
                    + offset.abs();
                let slack = f64::from(margin + pad) + 2f64.powi(-15) * (world + 1.0);
                assert!(
                    lowest - offset <= slack,
                    "extra half-space pair [{a}, {b}]: {} > {slack}",
                    lowest - offset
                );
            }
            _ => {
                let pad = padding(shapes, ba, centre) + padding(shapes, bb, centre);
                let (x, y) = (world_aabb(sa, &ba.pose), world_aabb(sb, &bb.pose));
                let gap = (x.min - y.max).max(y.min - x.max).max_element();
                assert!(
                    gap <= margin * 1.000_01 + pad,
                    "extra pair [{a}, {b}]: gap {gap} > {margin} + {pad}"
                );
            }
        }
    }
    (cpu.len(), extra)
}

/// The GPU's pairs of `bodies` (no cap), held to the contract: (pairs, CPU pairs, extra GPU
/// pairs).
#[track_caller]
fn listed_in_contract(
    gpu: &mut GpuBroadphase,
    shapes: &[Shape],
    bodies: &[Body],
    margin: f32,
) -> (Vec<[u32; 2]>, usize, usize) {
    let pairs = gpu
        .candidate_pairs_at_most(bodies, margin, usize::MAX)
        .expect("GPU pairs");
    let (cpu, extra) = assert_contract(shapes, bodies, margin, &pairs);
    (pairs, cpu, extra)
}

fn mixed_scene(bodies: usize, seed: u64, margin: f32) -> (Vec<Shape>, Vec<Body>) {
    let scene = generate_particle_scene(&ParticleSceneConfig {
        bodies,
        seed,
        density: 0.3,
        mix: ShapeMix::MIXED,
        margin,
    })
    .expect("scene");
    (scene.shapes, scene.bodies)
}

fn shifted(bodies: &[Body], by: DVec3) -> Vec<Body> {
    bodies
        .iter()
        .map(|b| Body {
            shape: b.shape,
            pose: Pose {
                translation: b.pose.translation + by,
                ..b.pose
            },
        })
        .collect()
}

#[test]
fn mixed_scenes_list_every_cpu_pair_near_and_far_from_the_origin() {
    let margin = 0.05;
    let (mut shapes, mut bodies) = mixed_scene(800, 7, margin);
    // A floor half-space under the scene and a tilted one through it.
    let floor_y = bodies
        .iter()
        .map(|b| b.pose.translation.y)
        .fold(f64::INFINITY, f64::min);
    shapes.push(Shape::HalfSpace(HalfSpace::new(Vec3::Y, 0.0).expect("plane")));
    let plane = (shapes.len() - 1) as u32;
    bodies.push(Body {
        shape: plane,
        pose: Pose::new(Vec3::new(0.0, floor_y as f32 + 0.3, 0.0), Quat::IDENTITY),
    });
    bodies.insert(
        3,
        Body {
            shape: plane,
            pose: Pose::new(Vec3::ZERO, Quat::from_rotation_z(0.3)),
        },
    );
    let Some(mut gpu) = broadphase_or_skip(&shapes) else {
        return;
    };
    for by in [DVec3::ZERO, DVec3::new(1.0e6, -2.0e6, 3.0e6)] {
        let bodies = shifted(&bodies, by);
        let (pairs, cpu, extra) = listed_in_contract(&mut gpu, &shapes, &bodies, margin);
        eprintln!("mixed scene at {by}: {cpu} CPU pairs, {extra} extra on the GPU");
        assert!(cpu > 500, "{cpu}");
        // Determinism: the same frame twice gives the same list.
        assert_eq!(
            gpu.candidate_pairs_at_most(&bodies, margin, usize::MAX)
                .expect("again"),
            pairs
        );
    }
}

/// On a device with wgpu's default limits (8 storage buffers a shader stage, as WebGPU): the
/// BVH build and the traversal bind no more, and list the CPU's pairs.
#[test]
fn a_device_of_default_limits_runs_the_broadphase() {
    let margin = 0.02;
    let (shapes, bodies) = mixed_scene(300, 12, margin);
    let Some((device, queue)) = device_or_skip(wgpu::Limits::default()) else {
        return;
    };
    let context = GpuContext::with_device(device, queue).expect("a context on the default device");
    let mut gpu = GpuBroadphase::with_context(context, &shapes).expect("broadphase on a default device");
    let (_, cpu, _) = listed_in_contract(&mut gpu, &shapes, &bodies, margin);
    assert!(cpu > 100, "{cpu} CPU pairs");
}

/// Triangle meshes among the bodies: each pairs with the bounded bodies over it, never with
/// another mesh or a half-space (the batch's door), read from each placed box's shape flags.
#[test]
fn meshes_pair_with_bodies_but_not_with_meshes_or_half_spaces() {
    let margin = 0.02;
    let (mut shapes, mut bodies) = mixed_scene(600, 11, margin);
    let (lo, hi) = bodies
        .iter()
        .fold((DVec3::INFINITY, DVec3::NEG_INFINITY), |(lo, hi), b| {
            (lo.min(b.pose.translation), hi.max(b.pose.translation))
        });
    let centre = (lo + hi) * 0.5;
    let half = ((hi - lo).max_element() * 0.6) as f32;
    shapes.push(Shape::TriMesh(std::sync::Arc::new(
        terrain(16, half, 1.0).expect("terrain"),
    )));
    let mesh = (shapes.len() - 1) as u32;
    shapes.push(Shape::HalfSpace(HalfSpace::new(Vec3::Y, 0.0).expect("plane")));
    let plane = (shapes.len() - 1) as u32;
    // Two overlapping terrains through the middle of the scene and a floor under both.
    for (place, shape) in [(5, mesh), (300, mesh), (450, plane)] {
        let y = if shape == plane { lo.y } else { centre.y };
        bodies.insert(
            place,
            Body {
                shape,
                pose: Pose::new(DVec3::new(centre.x, y, centre.z), Quat::from_rotation_y(0.2)),
            },
        );
    }
    let Some(mut gpu) = broadphase_or_skip(&shapes) else {
        return;
    };
    let (pairs, cpu, _) = listed_in_contract(&mut gpu, &shapes, &bodies, margin);
    let is = |i: u32, kind: u32| bodies[i as usize].shape == kind;
    let static_body = |i: u32| is(i, mesh) || is(i, plane);
    assert!(
        pairs.iter().all(|&[a, b]| !(static_body(a) && static_body(b))),
        "a mesh paired with a mesh or a half-space"
    );
    let with_mesh = pairs.iter().filter(|&&[a, b]| is(a, mesh) || is(b, mesh)).count();
    assert!(
        with_mesh > 50,
        "only {with_mesh} pairs with the meshes ({cpu} CPU pairs)"
    );
}

/// Each body walks only the bodies after its place in the tree's order, skipping subtrees by
/// their last place: every tree shape (leaf counts on one level or two, a last leaf not full)
/// must still give each pair once, half-spaces included.
#[test]
fn every_tree_shape_lists_each_pair_once() {
    let margin = 0.02;
    for count in [
        1, 2, 3, 4, 5, 7, 8, 9, 12, 13, 17, 31, 33, 47, 64, 65, 100, 129, 257, 600,
    ] {
        let (mut shapes, mut bodies) = mixed_scene(count, count as u64, margin);
        shapes.push(Shape::HalfSpace(HalfSpace::new(Vec3::Y, 0.0).expect("plane")));
        bodies.insert(
            count / 2,
            Body {
                shape: (shapes.len() - 1) as u32,
                pose: Pose::new(Vec3::ZERO, Quat::from_rotation_x(0.2)),
            },
        );
        let Some(mut gpu) = broadphase_or_skip(&shapes) else {
            return;
        };
        let (_, cpu, _) = listed_in_contract(&mut gpu, &shapes, &bodies, margin);
        assert!(count < 100 || cpu > count, "{count} bodies: {cpu} CPU pairs");
    }
}

#[test]
fn cylinders_get_their_true_box_upright_or_tilted() {
    let margin = 0.0;
    let scene = generate_particle_scene(&ParticleSceneConfig {
        bodies: 600,
        seed: 11,
        density: 0.3,
        mix: ShapeMix::CYLINDER,
        margin,
    })
    .expect("scene");
    let (shapes, mut bodies) = (scene.shapes, scene.bodies);
    // Every third one upright or lying along X, where the rim's root is near 0 or 1.
    for (i, body) in bodies.iter_mut().enumerate().filter(|(i, _)| i % 3 == 0) {
        let turn = if i % 2 == 0 {
            Quat::IDENTITY
        } else {
            Quat::from_rotation_z(FRAC_PI_2)
        };
        body.pose = Pose::new(body.pose.translation, turn);
    }
    let Some(mut gpu) = broadphase_or_skip(&shapes) else {
        return;
    };
    for by in [DVec3::ZERO, DVec3::new(1.0e6, -2.0e6, 3.0e6)] {
        let bodies = shifted(&bodies, by);
        let (_, cpu, extra) = listed_in_contract(&mut gpu, &shapes, &bodies, margin);
        eprintln!("cylinders at {by}: {cpu} CPU pairs, {extra} extra on the GPU");
        assert!(cpu > 300, "{cpu}");
        if by == DVec3::ZERO {
            // The true box, not the rotated local one (which listed about half as many again).
            assert!(extra * 50 <= cpu, "{extra} extra of {cpu}");
        }
    }
}

#[test]
fn sizes_varying_1000x_and_a_long_thin_body() {
    let mut rng = seeded_rng(0xb0a7);
    let shapes = vec![
        Shape::Sphere(Sphere::new(0.01).expect("sphere")),
        Shape::Sphere(Sphere::new(10.0).expect("sphere")),
        Shape::Cuboid(Cuboid::new(Vec3::new(0.02, 0.01, 0.015)).expect("box")),
        Shape::Cuboid(Cuboid::new(Vec3::new(8.0, 5.0, 10.0)).expect("box")),
        Shape::Capsule(Capsule::new(200.0, 0.05).expect("capsule")),
    ];
    let mut bodies: Vec<Body> = (0..600)
        .map(|_| Body {
            shape: rng.random_range(0..4),
            pose: Pose::new(
                Vec3::new(
                    rng.random_range(-60.0..60.0),
                    rng.random_range(-3.0..3.0),
                    rng.random_range(-60.0..60.0),
                ),
                random_rotation(&mut rng),
            ),
        })
        .collect();
    // A long thin capsule along x through the middle.
    bodies.push(Body {
        shape: 4,
        pose: Pose::new(Vec3::ZERO, Quat::from_rotation_z(std::f32::consts::FRAC_PI_2)),
    });
    let Some(mut gpu) = broadphase_or_skip(&shapes) else {
        return;
    };
    for margin in [0.0, 0.02] {
        let (pairs, cpu, extra) = listed_in_contract(&mut gpu, &shapes, &bodies, margin);
        eprintln!("1000x sizes, margin {margin}: {cpu} CPU pairs, {extra} extra");
        let thin = (bodies.len() - 1) as u32;
        assert!(pairs.iter().filter(|p| p[1] == thin).count() > 5);
    }
}

#[test]
fn bodies_at_one_point_give_every_pair_and_the_cap_names_the_count() {
    const N: u32 = 60;
    let shapes = vec![
        Shape::Sphere(Sphere::new(0.5).expect("sphere")),
        Shape::Cuboid(Cuboid::new(Vec3::splat(0.3)).expect("box")),
    ];
    let at = Vec3::new(3.0, -2.0, 1.0);
    let bodies: Vec<Body> = (0..N)
        .map(|i| Body {
            shape: i % 2,
            pose: Pose::new(at, Quat::IDENTITY),
        })
        .collect();
    let Some(mut gpu) = broadphase_or_skip(&shapes) else {
        return;
    };
    let all = (N * (N - 1) / 2) as usize;
    let pairs = gpu
        .candidate_pairs_at_most(&bodies, 0.0, all)
        .expect("exactly at the cap");
    assert_eq!(pairs, candidate_pairs(&shapes, &bodies, 0.0));
    assert_eq!(pairs.len(), all);
    let err = gpu
        .candidate_pairs_at_most(&bodies, 0.0, 100)
        .expect_err("over the cap");
    assert_eq!(
        err,
        GpuError::TooManyPairs {
            limit: 100,
            count: all as u64,
            at_least: false
        }
    );
    assert!(
        err.to_string().contains("more than 100 candidate pairs") && err.to_string().contains("1770"),
        "{err}"
    );
    // After a large frame, a small one still lists its own pairs only.
    let two = &bodies[..2];
    assert_eq!(
        gpu.candidate_pairs_at_most(two, 0.0, 10).expect("two bodies"),
        vec![[0, 1]]
    );
}

#[test]
fn empty_single_and_bad_inputs() {
    let shapes = vec![
        Shape::Sphere(Sphere::new(1.0).expect("sphere")),
        Shape::HalfSpace(HalfSpace::new(Vec3::Y, 0.0).expect("plane")),
    ];
    let Some(mut gpu) = broadphase_or_skip(&shapes) else {
        return;
    };
    assert!(
        gpu.candidate_pairs_at_most(&[], 0.0, 10)
            .expect("no body")
            .is_empty()
    );
    let one = [Body {
        shape: 0,
        pose: Pose::IDENTITY,
    }];
    assert!(
        gpu.candidate_pairs_at_most(&one, 0.0, 10)
            .expect("one body")
            .is_empty()
    );
    // Two half-spaces never pair; a sphere on them pairs with both.
    let planes = [
        Body {
            shape: 1,
            pose: Pose::IDENTITY,
        },
        Body {
            shape: 1,
            pose: Pose::new(Vec3::new(0.0, 5.0, 0.0), Quat::IDENTITY),
        },
        Body {
            shape: 0,
            pose: Pose::new(Vec3::new(0.0, 0.5, 0.0), Quat::IDENTITY),
        },
    ];
    let pairs = gpu.candidate_pairs_at_most(&planes, 0.0, 10).expect("planes");
    assert_eq!(pairs, vec![[0, 2], [1, 2]]);
    assert_eq!(pairs, candidate_pairs(&shapes, &planes, 0.0));
    for margin in [-1.0, f32::NAN, f32::INFINITY] {
        assert!(
            matches!(
                gpu.candidate_pairs_at_most(&one, margin, 10),
                Err(GpuError::Input(_))
            ),
            "{margin}"
        );
    }
    let bad = [Body {
        shape: 7,
        pose: Pose::IDENTITY,
    }];
    assert!(matches!(
        gpu.candidate_pairs_at_most(&bad, 0.0, 10),
        Err(GpuError::Input(_))
    ));
    // Past MAX_BODIES the count could wrap: refused, before the buffer's size is looked at.
    let device = gpu.context().device().clone();
    let buffer = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("too many bodies"),
        size: 48,
        usage: wgpu::BufferUsages::STORAGE,
        mapped_at_creation: false,
    });
    let frame = ResidentBodies {
        bodies: &buffer,
        body_count: MAX_BODIES + 1,
        origin: DVec3::ZERO,
        margin: 0.0,
        max_pairs: 16,
        sort: false,
    };
    let mut encoder = device.create_command_encoder(&Default::default());
    match gpu.encode_resident(&mut encoder, &frame) {
        Err(GpuError::Input(e)) => assert!(e.to_string().contains("body_count"), "{e}"),
        other => panic!("{other:?}"),
    }
}

/// Submits `encoder` after copying `buffer`'s first `bytes` into a mapped buffer; its bytes.
fn read(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    mut encoder: wgpu::CommandEncoder,
    buffers: &[(&wgpu::Buffer, u64)],
) -> Vec<Vec<u8>> {
    let stagings: Vec<wgpu::Buffer> = buffers
        .iter()
        .map(|&(buffer, bytes)| {
            let staging = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("test readback"),
                size: bytes.max(4),
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            encoder.copy_buffer_to_buffer(buffer, 0, &staging, 0, bytes);
            staging
        })
        .collect();
    let submission = queue.submit([encoder.finish()]);
    for s in &stagings {
        s.map_async(wgpu::MapMode::Read, .., |r| r.expect("maps"));
    }
    device
        .poll(wgpu::PollType::Wait {
            submission_index: Some(submission),
            timeout: Some(Duration::from_secs(120)),
        })
        .expect("finishes");
    stagings
        .iter()
        .map(|s| s.get_mapped_range(..).expect("mapped").to_vec())
        .collect()
}

#[test]
fn resident_pairs_feed_the_resident_narrowphase_in_one_encoder() {
    let margin = 0.0;
    let (shapes, bodies) = mixed_scene(500, 11, margin);
    let Some(mut broadphase) = broadphase_or_skip(&shapes) else {
        return;
    };
    let mut narrowphase = GpuNarrowphase::new(&shapes).expect("narrowphase");
    narrowphase
        .set_clipping(Clipping::Gpu)
        .expect("the shared device clips");
    let context = broadphase.context().clone();
    let (device, queue) = (context.device(), context.queue());
    let gpu_bodies: Vec<GpuBody> = bodies
        .iter()
        .map(|b| GpuBody::from_pose(b.shape, &b.pose))
        .collect();
    let body_buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("caller bodies"),
        contents: bytemuck::cast_slice(&gpu_bodies),
        usage: wgpu::BufferUsages::STORAGE,
    });
    let cpu_pairs = candidate_pairs(&shapes, &bodies, margin);
    for (capacity, sort) in [
        (4 * bodies.len() as u32, true),
        (4 * bodies.len() as u32, false),
        (100, false),
        (100, true),
    ] {
        let mut encoder = device.create_command_encoder(&Default::default());
        let frame = ResidentBodies {
            bodies: &body_buffer,
            body_count: bodies.len() as u32,
            origin: scene_centre(&shapes, &bodies),
            margin,
            max_pairs: capacity,
            sort,
        };
        let pairs = broadphase
            .encode_resident(&mut encoder, &frame)
            .expect("broadphase");
        let manifolds = narrowphase
            .encode_resident(&mut encoder, &pairs.batch(&body_buffer, margin))
            .expect("narrowphase");
        let bytes = read(
            device,
            queue,
            encoder,
            &[
                (&pairs.pair_count, 16),
                (&pairs.pairs, u64::from(capacity) * 8),
                (&manifolds.list, manifolds.list.size()),
            ],
        );
        let count: GpuPairCount = bytemuck::pod_read_unaligned(&bytes[0][..16]);
        assert_eq!(count.flags, 0);
        let written = count.count.min(capacity) as usize;
        let gpu_pairs: Vec<[u32; 2]> = bytemuck::pod_collect_to_vec(&bytes[1][..written * 8]);
        if capacity == 100 {
            // Overflow: the true count, the first 100 slots written, the rest dropped.
            assert!(
                count.count as usize >= cpu_pairs.len(),
                "{} < {}",
                count.count,
                cpu_pairs.len()
            );
            assert_eq!(gpu_pairs.len(), 100);
            // Sorted, the slots written are sorted (the sort reads the count, clamped).
            assert!(
                !sort || gpu_pairs.windows(2).all(|w| w[0] < w[1]),
                "sorted on the GPU"
            );
            continue;
        }
        let mut sorted = gpu_pairs.clone();
        sorted.sort_unstable();
        if sort {
            assert_eq!(sorted, gpu_pairs, "sorted on the GPU");
        }
        assert_contract(&shapes, &bodies, margin, &sorted);
        // The touching pairs: the narrowphase's list against the CPU narrowphase on the CPU's pairs.
        let head: GpuManifoldCount = bytemuck::pod_read_unaligned(&bytes[2][..MANIFOLD_LIST_HEAD as usize]);
        let touching_gpu: HashSet<[u32; 2]> = bytes[2][MANIFOLD_LIST_HEAD as usize..]
            .chunks_exact(size_of::<GpuManifold>())
            .take(head.count as usize)
            .map(bytemuck::pod_read_unaligned::<GpuManifold>)
            .map(|m| gpu_pairs[m.pair as usize])
            .collect();
        let cpu = CpuNarrowphase::new(shapes.clone())
            .collide(&bodies, &cpu_pairs, margin)
            .expect("CPU");
        let touching_cpu: HashSet<[u32; 2]> = cpu_pairs
            .iter()
            .zip(&cpu)
            .filter(|(_, m)| m.is_some())
            .map(|(p, _)| *p)
            .collect();
        let differ: Vec<_> = touching_gpu.symmetric_difference(&touching_cpu).collect();
        eprintln!(
            "{} touching on the CPU, {} on the GPU, differing {:?}",
            touching_cpu.len(),
            touching_gpu.len(),
            differ
        );
        assert!(touching_cpu.len() > 50);
        assert!(differ.len() <= touching_cpu.len() / 100, "{differ:?}");
    }
}

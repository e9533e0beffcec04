//! Compounds in the batch: the door, compound pairs with every
//! other kind in either order and either given order on every CPU entry point, broadphase boxes
//! and pairs, bounding spheres, CPU ray casts, and the GPU path (compound pairs expanded, clipped
//! and merged on the GPU in the host and resident APIs, judged by the GPU = CPU contract; the
//! sub-pair capacity's overflow).

mod support;

use glam::{DVec3, Quat, Vec3};
use hullsat::broadphase::candidate_pairs;
use hullsat::contact::{CompoundScratch, collide_compound_shape, collide_shapes};
use hullsat::contract::compare_batch;
use hullsat::generate::terrain;
use hullsat::narrowphase::gpu::Clipping;
use hullsat::shape::compound::{Compound, CompoundChild};
use hullsat::shape::world_aabb;
use hullsat::{
    Body, Capsule, CpuNarrowphase, CpuRaycaster, Cuboid, Cylinder, HalfSpace, Isometry, Pose, Ray, Shape,
    Sphere, ValidatedBatch, world_bounding_sphere,
};
use hullsat::{GpuError, GpuNarrowphase};
use support::shapes::random_rotation;
use support::{
    ResidentScene, gpu_broadphase_covers_cpu, gpu_or_skip, read_resident, resident_results, seeded_rng,
};

/// Shape indices of [`shapes`].
const DUMBBELL: u32 = 0;
const L_SHAPE: u32 = 1;
const GROUND: u32 = 2;
const TERRAIN: u32 = 3;
/// The first convex kind; the rest follow it.
const CONVEX: u32 = 4;
const CONVEX_KINDS: u32 = 5;

fn child(shape: Shape, at: Vec3, rotation: Quat) -> CompoundChild {
    CompoundChild {
        shape,
        pose: Isometry::new(at, rotation),
    }
}

fn sphere(r: f32) -> Shape {
    Shape::Sphere(Sphere::new(r).unwrap())
}

fn cuboid(x: f32, y: f32, z: f32) -> Shape {
    Shape::Cuboid(Cuboid::new(Vec3::new(x, y, z)).unwrap())
}

/// Two balls of radius 0.5 at x = ±1 on a thin capsule bar along x.
fn dumbbell() -> Compound {
    let bar = Shape::Capsule(Capsule::new(0.8, 0.1).unwrap());
    Compound::new(vec![
        child(sphere(0.5), Vec3::new(-1.0, 0.0, 0.0), Quat::IDENTITY),
        child(sphere(0.5), Vec3::new(1.0, 0.0, 0.0), Quat::IDENTITY),
        child(
            bar,
            Vec3::ZERO,
            Quat::from_rotation_z(std::f32::consts::FRAC_PI_2),
        ),
    ])
    .unwrap()
}

/// An L of two boxes (a leg and a foot), a turned cylinder on the leg and a hull beside it.
fn l_shape() -> Compound {
    Compound::new(vec![
        child(cuboid(0.25, 1.0, 0.5), Vec3::new(0.0, 0.75, 0.0), Quat::IDENTITY),
        child(cuboid(0.5, 0.25, 0.5), Vec3::new(0.75, 0.0, 0.0), Quat::IDENTITY),
        child(
            Shape::Cylinder(Cylinder::new(0.2, 0.3).unwrap()),
            Vec3::new(0.0, 1.9, 0.0),
            Quat::from_rotation_x(0.7),
        ),
        child(
            Shape::Hull(support::analytic::unit_box()),
            Vec3::new(-0.4, 1.2, 0.0),
            Quat::from_rotation_y(0.5),
        ),
    ])
    .unwrap()
}

/// Two compounds, the ground, a terrain, then one of every convex kind.
fn shapes() -> Vec<Shape> {
    vec![
        Shape::from(dumbbell()),
        Shape::from(l_shape()),
        Shape::HalfSpace(HalfSpace::new(Vec3::Y, -1.0).unwrap()),
        Shape::from(terrain(8, 10.0, 0.3).unwrap()),
        cuboid(0.5, 0.3, 0.4),
        sphere(0.4),
        Shape::Capsule(Capsule::new(0.3, 0.2).unwrap()),
        Shape::Cylinder(Cylinder::new(0.3, 0.35).unwrap()),
        Shape::Hull(support::analytic::unit_box()),
    ]
}

/// Bodies: the ground (0), the terrain far below (1), then `n` bodies cycling through the
/// compounds and the convex kinds in a 3-unit cube, close enough that many touch.
fn bodies(n: usize, seed: u64) -> Vec<Body> {
    let mut rng = seeded_rng(seed);
    let mut bodies = vec![
        Body {
            shape: GROUND,
            pose: Pose::IDENTITY,
        },
        Body {
            shape: TERRAIN,
            pose: Pose::new(DVec3::new(0.0, -20.0, 0.0), Quat::IDENTITY),
        },
    ];
    let kinds: Vec<u32> = [DUMBBELL, L_SHAPE]
        .into_iter()
        .chain(CONVEX..CONVEX + CONVEX_KINDS)
        .collect();
    for i in 0..n {
        bodies.push(Body {
            shape: kinds[i % kinds.len()],
            pose: Pose::new(
                support::random_vec3(&mut rng, 1.5).as_dvec3(),
                random_rotation(&mut rng),
            ),
        });
    }
    bodies
}

fn is_compound(shapes: &[Shape], body: &Body) -> bool {
    matches!(shapes[body.shape as usize], Shape::Compound(_))
}

/// Every pair of bodies 2.. with a compound in it, plus every compound with the ground, each
/// given both ways.
fn compound_pairs(shapes: &[Shape], bodies: &[Body]) -> Vec<[u32; 2]> {
    let n = bodies.len() as u32;
    let mut pairs = Vec::new();
    for a in 2..n {
        if !is_compound(shapes, &bodies[a as usize]) {
            continue;
        }
        pairs.extend([[a, 0], [0, a]]);
        for b in 2..n {
            if b != a && (b > a || !is_compound(shapes, &bodies[b as usize])) {
                pairs.extend([[a, b], [b, a]]);
            }
        }
    }
    pairs
}

#[test]
fn a_batch_checked_against_another_list_with_a_static_shape_elsewhere_is_refused() {
    let shapes = shapes();
    let bodies = bodies(4, 1);
    let batch = ValidatedBatch::new(&shapes, &bodies, &[[2, 4], [2, 1]], 0.0).unwrap();
    // A compound moved: the same checks (compounds pair with every kind).
    let mut moved = shapes.clone();
    moved.swap(DUMBBELL as usize, CONVEX as usize);
    assert!(batch.check_shapes(&moved).is_ok());
    moved.swap(GROUND as usize, CONVEX as usize);
    assert_eq!(batch.check_shapes(&moved).unwrap_err().path, "shapes");
}

#[test]
fn compound_pairs_agree_in_every_order_and_on_every_cpu_entry_point() {
    let shapes = shapes();
    let bodies = bodies(28, 2);
    let pairs = compound_pairs(&shapes, &bodies);
    let margin = 0.05;
    let cpu = CpuNarrowphase::new(&shapes);
    let results = cpu.collide(&bodies, &pairs, margin).unwrap();
    let touching = results.iter().filter(|m| m.is_some()).count();
    assert!(
        touching > pairs.len() / 8 && touching < pairs.len(),
        "{touching} of {} pairs touch",
        pairs.len()
    );
    let mut scratch = CompoundScratch::default();
    for (given, both) in pairs.chunks(2).zip(results.chunks(2)) {
        let [a, b] = given[0];
        let (body_a, body_b) = (&bodies[a as usize], &bodies[b as usize]);
        let (shape_a, shape_b) = (&shapes[body_a.shape as usize], &shapes[body_b.shape as usize]);
        // The pair computed lower index first, the other order its swap (ids by
        // FeatureId::swapped, which the compound ids commute with).
        let [lo, hi] = if a < b { [body_a, body_b] } else { [body_b, body_a] };
        let mut canonical = collide_shapes(
            &shapes[lo.shape as usize],
            &lo.pose,
            &shapes[hi.shape as usize],
            &hi.pose,
            margin,
        );
        if a > b
            && let Some(m) = canonical.as_mut()
        {
            m.swap();
        }
        assert_eq!(both[0], canonical, "{given:?}");
        let mut swapped = both[0];
        if let Some(m) = swapped.as_mut() {
            m.swap();
        }
        assert_eq!(both[1], swapped, "{given:?}");
        // The compound routine itself, compound as A: the same contact up to rounding.
        if let (Shape::Compound(c), Some(m)) = (shape_a, &both[0]) {
            let direct = collide_compound_shape(c, &body_a.pose, shape_b, &body_b.pose, margin, &mut scratch);
            if !matches!(shape_b, Shape::Compound(_)) {
                let Some(direct) = direct else {
                    assert!(m.separation > margin - 1e-4, "{given:?}: {m:?}");
                    continue;
                };
                assert!(
                    (direct.separation - m.separation).abs() < 1e-4,
                    "{direct:?} {m:?}"
                );
                assert!(
                    direct.normal.dot(m.normal) > 0.99 || m.separation > -1e-3,
                    "{direct:?} {m:?}"
                );
            }
        }
    }
    // The other entry points: the same manifolds bit for bit.
    support::assert_cpu_entry_points_agree(&cpu, &bodies, &pairs, margin, &results);
}

#[test]
fn a_dumbbell_on_the_ground_gets_one_point_under_each_ball_either_way() {
    let shapes = shapes();
    // Lying along x, the balls' bottoms 0.01 into the ground (at y = -1), the bar clear.
    let bodies = vec![
        Body {
            shape: GROUND,
            pose: Pose::IDENTITY,
        },
        Body {
            shape: DUMBBELL,
            pose: Pose::new(DVec3::new(3.0, -0.51, 2.0), Quat::IDENTITY),
        },
    ];
    let results = CpuNarrowphase::new(&shapes)
        .collide(&bodies, &[[0, 1], [1, 0]], 0.0)
        .unwrap();
    let (up, down) = (results[0].as_ref().unwrap(), results[1].as_ref().unwrap());
    assert!(up.normal.abs_diff_eq(Vec3::Y, 1e-6) && down.normal.abs_diff_eq(-Vec3::Y, 1e-6));
    assert_eq!(up.point_count(), 2, "{up:?}");
    assert!((up.separation + 0.01).abs() < 1e-5, "{up:?}");
    let mut xs: Vec<f64> = up.points().iter().map(|p| p.position.x).collect();
    xs.sort_by(f64::total_cmp);
    assert!((xs[0] - 2.0).abs() < 1e-5 && (xs[1] - 4.0).abs() < 1e-5, "{xs:?}");
    for (p, q) in up.points().iter().zip(down.points()) {
        assert_eq!(q.id, p.id.swapped());
    }
}

#[test]
fn boxes_and_spheres_hold_every_child_and_compound_pairs_are_listed() {
    let shapes = shapes();
    let mut rng = seeded_rng(3);
    for shape in [&shapes[0], &shapes[1]] {
        let compound = shape.as_compound().unwrap();
        for _ in 0..50 {
            let pose = Pose::new(
                support::random_vec3(&mut rng, 1.0e4).as_dvec3(),
                random_rotation(&mut rng),
            );
            let b = world_aabb(shape, &pose);
            let ball = world_bounding_sphere(std::slice::from_ref(shape), &Body { shape: 0, pose }).unwrap();
            for c in compound.children() {
                let child = world_aabb(&c.shape, &pose.mul_isometry(&c.pose));
                assert!(
                    child.min.cmpge(b.min).all() && child.max.cmple(b.max).all(),
                    "{child:?} outside {b:?}"
                );
                // The child's own ball inside the compound's.
                let (centre, radius) = c.shape.bounding_sphere();
                let at = pose.transform_point(c.pose.transform_point(centre));
                assert!(
                    at.distance(ball.centre) + f64::from(radius) <= f64::from(ball.radius) * (1.0 + 1e-6)
                );
            }
        }
    }
    let bodies = bodies(40, 4);
    let margin = 0.05;
    let pairs = candidate_pairs(&shapes, &bodies, margin);
    // Every touching compound pair is listed, and the list passes the door.
    let cpu = CpuNarrowphase::new(&shapes);
    let all = compound_pairs(&shapes, &bodies);
    let results = cpu.collide(&bodies, &all, margin).unwrap();
    assert!(results.iter().filter(|m| m.is_some()).count() > 20);
    for (pair, m) in all.iter().zip(results) {
        let key = [pair[0].min(pair[1]), pair[0].max(pair[1])];
        assert!(
            m.is_none() || pairs.contains(&key),
            "{pair:?} touches but is not listed"
        );
    }
    assert!(cpu.collide(&bodies, &pairs, margin).is_ok());
}

#[test]
fn rays_hit_the_nearest_child() {
    let shapes = shapes();
    let bodies = vec![
        Body {
            shape: DUMBBELL,
            pose: Pose::new(
                DVec3::new(0.0, 2.0, 0.0),
                Quat::from_rotation_y(std::f32::consts::FRAC_PI_2),
            ),
        },
        Body {
            shape: L_SHAPE,
            pose: Pose::new(DVec3::new(10.0, 0.0, 0.0), Quat::IDENTITY),
        },
    ];
    let ray = |origin: DVec3, direction: Vec3| Ray::new(origin, direction, None).unwrap();
    let rays = [
        // Down onto the dumbbell's ball at z = +1 (turned a quarter about y: x -> -z).
        ray(DVec3::new(0.0, 10.0, -1.0), -Vec3::Y),
        // Along z through both balls: the nearer one first.
        ray(DVec3::new(0.0, 2.0, -10.0), Vec3::Z),
        // Through the bar only, between the balls.
        ray(DVec3::new(5.0, 2.0, 0.0), -Vec3::X),
        // From inside the L's foot.
        ray(DVec3::new(10.75, 0.0, 0.0), Vec3::X),
        // Into the L's crook from the right: the leg, past the foot's top.
        ray(DVec3::new(15.0, 1.0, 0.0), -Vec3::X),
        // Past the balls' ends: nothing.
        ray(DVec3::new(0.0, 10.0, 1.6), -Vec3::Y),
    ];
    let hits = CpuRaycaster::new(&shapes).cast(&bodies, &rays, true).unwrap();
    let first = |i: usize| hits[i].first().copied();
    let h = first(0).unwrap();
    assert!(
        (h.distance - 7.5).abs() < 1e-5 && h.normal.abs_diff_eq(Vec3::Y, 1e-5),
        "{h:?}"
    );
    let h = first(1).unwrap();
    assert!(
        (h.distance - 8.5).abs() < 1e-5 && h.normal.abs_diff_eq(-Vec3::Z, 1e-5),
        "{h:?}"
    );
    let h = first(2).unwrap();
    assert!(
        (h.distance - 4.9).abs() < 1e-5 && h.normal.abs_diff_eq(Vec3::X, 1e-5),
        "{h:?}"
    );
    let h = first(3).unwrap();
    assert!(h.distance == 0.0 && h.normal == -Vec3::X, "{h:?}");
    let h = first(4).unwrap();
    assert!(
        (h.distance - 4.75).abs() < 1e-5 && h.normal.abs_diff_eq(Vec3::X, 1e-5),
        "{h:?}"
    );
    assert!(first(5).is_none(), "{:?}", hits[5]);
    for h in hits.iter().flatten() {
        assert_eq!(h.body, u32::from(h.point.x > 5.0));
    }
}

/// `bodies` moved by `offset` (length units), the ground with them.
fn shifted(bodies: &[Body], offset: DVec3) -> Vec<Body> {
    bodies
        .iter()
        .map(|b| Body {
            shape: b.shape,
            pose: Pose::new(b.pose.translation + offset, b.pose.rotation),
        })
        .collect()
}

#[test]
fn gpu_compound_pairs_agree_with_the_cpu_within_the_contract() {
    let shapes = shapes();
    let near = bodies(24, 7);
    let mut pairs = compound_pairs(&shapes, &near);
    let compound = pairs.len();
    // Convex pairs too, so the clip kernel and the merge share the list.
    pairs.extend((2..near.len() as u32 - 1).map(|b| [b, b + 1]));
    pairs.extend((2..near.len() as u32).map(|b| [b, 0]));
    let margin = 0.05;
    let Some(mut gpu) = gpu_or_skip(&shapes) else {
        return;
    };
    // Near the origin, and far from it (the split translations keep the child poses exact).
    for offset in [DVec3::ZERO, DVec3::new(3.0e4, -2.0e4, 5.0e4)] {
        let bodies = shifted(&near, offset);
        let cpu = CpuNarrowphase::new(&shapes)
            .collide(&bodies, &pairs, margin)
            .unwrap();
        for clipping in [Clipping::Gpu, Clipping::Cpu] {
            if gpu.set_clipping(clipping).is_err() {
                continue;
            }
            let results = gpu.collide(&bodies, &pairs, margin).unwrap();
            let tally = compare_batch(&shapes, &bodies, &pairs, margin, &results, &cpu)
                .unwrap_or_else(|e| panic!("{clipping:?} at {offset}: {e}"));
            let touching = cpu[..compound].iter().flatten().count();
            assert!(
                touching > compound / 8,
                "{touching} of {compound} compound pairs touch"
            );
            assert!(tally.cpu_manifolds > pairs.len() / 8, "{tally:?}");
            if clipping == Clipping::Gpu {
                // Only the pairs the GPU left to the host count (llvmpipe's loop budget, big
                // faces); most compound pairs are the GPU's.
                let host = gpu.timings().host_pairs;
                assert!(host < touching / 2, "{host} host pairs of {touching}");
            }
        }
    }
}

#[test]
fn a_call_past_the_compound_capacity_fails_naming_the_count() {
    let shapes = shapes();
    let bodies = bodies(24, 7);
    let pairs = compound_pairs(&shapes, &bodies);
    let Some(mut gpu) = gpu_or_skip(&shapes) else {
        return;
    };
    if gpu.clipping() != Clipping::Gpu {
        return;
    }
    assert!(gpu.compound_capacity() > 0);
    assert!(matches!(gpu.set_compound_capacity(0), Err(GpuError::Input(_))));
    gpu.set_compound_capacity(4).unwrap();
    match gpu.collide(&bodies, &pairs, 0.05) {
        Err(GpuError::CompoundCapacity { capacity, count }) => {
            assert_eq!(capacity, 4);
            assert!(count > capacity, "{count}");
        }
        other => panic!("expected the capacity error, got {other:?}"),
    }
    gpu.set_compound_capacity(1 << 12).unwrap();
    let cpu = CpuNarrowphase::new(&shapes)
        .collide(&bodies, &pairs, 0.05)
        .unwrap();
    let results = gpu.collide(&bodies, &pairs, 0.05).unwrap();
    compare_batch(&shapes, &bodies, &pairs, 0.05, &results, &cpu).unwrap();
}

#[test]
fn resident_compound_pairs_are_listed_once_within_the_contract() {
    // No terrain: the resident API refuses meshes.
    let shapes: Vec<Shape> = shapes()
        .into_iter()
        .map(|s| match s.as_trimesh() {
            Some(_) => sphere(0.3),
            None => s,
        })
        .collect();
    let mut bodies = bodies(24, 9);
    bodies[1].pose = Pose::new(DVec3::new(0.0, 0.5, 0.0), Quat::IDENTITY);
    // Every pair, the lower body index first, and every other one the other way round (both
    // run in canonical order and come back in the given one, as on the CPU).
    let n = bodies.len() as u32;
    let pairs: Vec<[u32; 2]> = (0..n)
        .flat_map(|a| (a + 1..n).map(move |b| if (a + b) % 2 == 0 { [a, b] } else { [b, a] }))
        .collect();
    let Some(gpu) = gpu_or_skip(&shapes) else {
        return;
    };
    // One dispatch chunk, then chunks of 256 pairs (the expansion and the merge run per chunk
    // over windows of the caller's pairs; the sub-pair capacity is then 256).
    let limits = wgpu::Limits {
        max_compute_workgroups_per_dimension: 4,
        max_storage_buffers_per_shader_stage: 9,
        ..wgpu::Limits::default()
    };
    let Some((device, queue)) = support::device_or_skip(limits) else {
        return;
    };
    let chunked = GpuNarrowphase::with_device(device, queue, &shapes).expect("narrowphase");
    assert!(pairs.len() > 256 && chunked.compound_capacity() == 256);
    for gpu in [gpu, chunked] {
        resident_scene_within_the_contract(gpu, &shapes, &bodies, &pairs);
    }
}

/// The resident API on `pairs` of `bodies` against the CPU, and the host API; then, past a
/// capacity of 2, the compound pairs that do not fit listed `MANIFOLD_OVERFLOW`.
fn resident_scene_within_the_contract(
    mut gpu: GpuNarrowphase,
    shapes: &[Shape],
    bodies: &[Body],
    pairs: &[[u32; 2]],
) {
    let scene = ResidentScene::new(gpu.device(), bodies, pairs);
    let margin = 0.05;
    let batch = scene.batch(margin);
    let entries = read_resident(&mut gpu, &batch);
    let results = resident_results(&entries, shapes, bodies, pairs, margin);
    let cpu = CpuNarrowphase::new(shapes)
        .collide(bodies, pairs, margin)
        .unwrap();
    let tally =
        compare_batch(shapes, bodies, pairs, margin, &results, &cpu).unwrap_or_else(|e| panic!("{e}"));
    assert!(tally.cpu_manifolds > pairs.len() / 8, "{tally:?}");
    // The host API on the same narrowphase (its rounds run the same chunks, dispatched directly).
    let host = gpu.collide(bodies, pairs, margin).unwrap();
    compare_batch(shapes, bodies, pairs, margin, &host, &cpu).unwrap_or_else(|e| panic!("host API: {e}"));
    // Past the capacity: the compound pairs that did not fit are listed MANIFOLD_OVERFLOW with
    // the true total, the others as before.
    gpu.set_compound_capacity(2).unwrap();
    let entries = read_resident(&mut gpu, &batch);
    let overflowed: Vec<_> = entries
        .iter()
        .filter(|e| e.status == hullsat::narrowphase::gpu::layout::MANIFOLD_OVERFLOW)
        .collect();
    assert!(!overflowed.is_empty());
    for entry in overflowed {
        let (total, capacity) = entry.overflow();
        assert!(total > capacity && capacity == 2, "{total} {capacity}");
    }
}

#[test]
fn the_gpu_broadphase_lists_every_cpu_compound_pair() {
    let shapes = shapes();
    let mut bodies = bodies(40, 8);
    // The terrain up among the bodies: compound-mesh pairs listed too.
    bodies[1].pose = Pose::new(DVec3::new(0.0, 0.0, 0.0), Quat::from_rotation_z(0.1));
    let Some(cpu) = gpu_broadphase_covers_cpu(&shapes, &bodies, 0.05) else {
        return;
    };
    let compound_pairs = cpu
        .iter()
        .filter(|p| p.iter().any(|&b| is_compound(&shapes, &bodies[b as usize])))
        .count();
    assert!(compound_pairs > 20, "{compound_pairs}");
}

/// A compound of 2 to 5 random children of every convex kind (12-point hulls, boxes, spheres,
/// capsules, cylinders of sizes 0.2 to 0.6) at random local poses within ±1.
fn random_compound(rng: &mut rand_pcg::Pcg64) -> Compound {
    use rand::RngExt;
    let count = rng.random_range(2..=5);
    let children = (0..count)
        .map(|k| {
            let size: f32 = rng.random_range(0.2..0.6);
            let shape = match (k + rng.random_range(0..5)) % 5 {
                0 => loop {
                    let points = support::shapes::random_hull_points(rng, 12, Vec3::splat(size));
                    if let Ok(hull) = hullsat::ConvexHull::from_points(&points) {
                        break Shape::Hull(hull);
                    }
                },
                1 => cuboid(size, 0.7 * size, 0.5 * size),
                2 => sphere(size),
                3 => Shape::Capsule(Capsule::new(size, 0.5 * size).unwrap()),
                _ => Shape::Cylinder(Cylinder::new(size, 0.6 * size).unwrap()),
            };
            child(shape, support::random_vec3(rng, 1.0), random_rotation(rng))
        })
        .collect();
    Compound::new(children).unwrap()
}

#[test]
fn random_compound_scenes_agree_with_the_cpu_within_the_contract() {
    for seed in [0xc0b0, 2] {
        let mut rng = seeded_rng(seed);
        let mut shapes: Vec<Shape> = (0..4).map(|_| Shape::from(random_compound(&mut rng))).collect();
        shapes.extend([
            Shape::HalfSpace(HalfSpace::new(Vec3::Y, -1.5).unwrap()),
            sphere(0.5),
            cuboid(0.6, 0.4, 0.5),
            support::shapes::random_shape(&mut rng, support::shapes::Family::Hull),
        ]);
        let Some(mut gpu) = gpu_or_skip(&shapes) else {
            return;
        };
        let near: Vec<Body> = std::iter::once(Body {
            shape: 4,
            pose: Pose::IDENTITY,
        })
        .chain((0..28).map(|i| Body {
            shape: [0, 1, 2, 3, 5, 6, 7][i % 7],
            pose: Pose::new(
                support::random_vec3(&mut rng, 1.6).as_dvec3(),
                random_rotation(&mut rng),
            ),
        }))
        .collect();
        let pairs = compound_pairs(&shapes, &near);
        let margin = 0.05;
        for offset in [DVec3::ZERO, DVec3::new(-4.0e4, 1.0e4, 2.0e4)] {
            let bodies = shifted(&near, offset);
            let cpu = CpuNarrowphase::new(&shapes)
                .collide(&bodies, &pairs, margin)
                .unwrap();
            let results = gpu.collide(&bodies, &pairs, margin).unwrap();
            let tally = compare_batch(&shapes, &bodies, &pairs, margin, &results, &cpu)
                .unwrap_or_else(|e| panic!("at {offset}: {e}"));
            assert!(tally.cpu_manifolds > pairs.len() / 16, "{tally:?}");
            // Pairs the GPU leaves to the host are few (child pairs left to it, merges beyond 32
            // points, llvmpipe's loop budget): 0 to 10 of 600 over six seeds on lavapipe.
            let host = gpu.timings().host_pairs;
            assert!(
                host < tally.gpu_manifolds / 4,
                "seed {seed}: {host} host pairs, {tally:?}"
            );
        }
    }
}

//! The GPU ray caster against the CPU one: a large random scene (boxes, hulls, spheres,
//! capsules, a ground half-space) with every hit and with the closest, a scene of cylinders, the same scene far from
//! the world origin, half-spaces only or beside a few spheres (the GPU's tree leaves them out)
//! and bodies clumped at one point, rays that enter more bodies than the GPU's hit slots, empty inputs, a
//! caller's device, bad bodies, and a ray caster reused across calls of growing size; each
//! judged by the GPU = CPU contract for rays ([`hullsat::contract::rays`]). Without a GPU: that
//! contract accepts the CPU on inputs a few ulps off, counts its ties and rejects planted faults.
//!
//! Runs on whatever adapter wgpu finds (Mesa lavapipe in CI); without one the tests print a line
//! and return, unless `HULLSAT_REQUIRE_GPU=1`.

mod raycast_common;
mod support;

use glam::{DVec3, Quat, Vec3};
use hullsat::contract::rays::{RayDisagreementKind, RayTally, compare_ray_hits, hit_tolerance};
use hullsat::raycast::layout::GPU_HIT_SLOTS;
use hullsat::{
    Body, CpuRaycaster, Cuboid, GpuError, GpuRaycaster, HalfSpace, Pose, Ray, RayHit, RayHitSet, Shape,
    Sphere,
};
use rand::RngExt;
use rand_pcg::Pcg64;
use raycast_common::{cylinder_scene, gpu_or_skip, random_rays, random_scene};
use support::{device_or_skip, seeded_rng};

/// The GPU's lists judged against the CPU's by the GPU = CPU contract for rays
/// ([`hullsat::contract::rays`]); panics naming the ray outside it.
#[track_caller]
fn compare(
    shapes: &[Shape],
    bodies: &[Body],
    rays: &[Ray],
    gpu: &[Vec<RayHit>],
    cpu: &[Vec<RayHit>],
    closest: bool,
) -> RayTally {
    compare_ray_hits(shapes, bodies, rays, closest, gpu, cpu).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn a_large_random_scene_gives_the_cpu_hits() {
    let mut rng = seeded_rng(21);
    let (shapes, bodies) = random_scene(&mut rng, 3000, 60.0, Vec3::ZERO);
    let rays = random_rays(&mut rng, 30_000, 60.0, Vec3::ZERO);
    let Some(mut gpu) = gpu_or_skip(&shapes) else {
        return;
    };
    let cpu = CpuRaycaster::new(shapes.clone());
    for closest in [false, true] {
        let expected = cpu.cast(&bodies, &rays, closest).unwrap();
        let got = gpu.cast(&bodies, &rays, closest).unwrap();
        let tally = compare(&shapes, &bodies, &rays, &got, &expected, closest);
        let timings = gpu.timings();
        eprintln!("closest {closest}: {tally:?}, {timings:?}");
        assert!(tally.hits > rays.len() / 3, "{tally:?}");
        assert!(tally.ties() <= tally.hits / 1000, "{tally:?}");
        // Rays entering more bodies than the slots come from the CPU: few in this scene.
        assert!(timings.cpu_rays < rays.len() / 100, "{timings:?}");
    }
}

#[test]
fn cylinders_give_the_cpu_hits() {
    let mut rng = seeded_rng(23);
    let (shapes, bodies) = cylinder_scene(&mut rng, 300, 15.0);
    let rays = random_rays(&mut rng, 3000, 15.0, Vec3::ZERO);
    let Some(mut gpu) = gpu_or_skip(&shapes) else {
        return;
    };
    let cpu = CpuRaycaster::new(shapes.clone());
    for closest in [false, true] {
        let expected = cpu.cast(&bodies, &rays, closest).unwrap();
        let got = gpu.cast(&bodies, &rays, closest).unwrap();
        let tally = compare(&shapes, &bodies, &rays, &got, &expected, closest);
        let cylinder_hits = expected.iter().flatten().filter(|h| h.body < 300).count();
        eprintln!("closest {closest}: {tally:?}, {cylinder_hits} cylinder hits");
        assert!(cylinder_hits > rays.len() / 4, "{cylinder_hits} cylinder hits");
        assert!(tally.ties() <= tally.hits / 100, "{tally:?}");
    }
}

#[test]
fn far_from_the_origin_the_gpu_keeps_the_cpu_precision() {
    let mut rng = seeded_rng(22);
    // Translations near 1e6, where f32 positions are 1/16 apart; ray origins in f64.
    let offset = Vec3::new(1.0e6, 2.0e5, -1.0e6);
    let (shapes, bodies) = random_scene(&mut rng, 500, 30.0, offset);
    let rays = random_rays(&mut rng, 5000, 30.0, offset);
    let Some(mut gpu) = gpu_or_skip(&shapes) else {
        return;
    };
    let expected = CpuRaycaster::new(shapes.clone())
        .cast(&bodies, &rays, false)
        .unwrap();
    let got = gpu.cast(&bodies, &rays, false).unwrap();
    let tally = compare(&shapes, &bodies, &rays, &got, &expected, false);
    eprintln!("{tally:?}");
    assert!(tally.hits > 1000 && tally.ties() <= 5, "{tally:?}");
}

/// The GPU call leaves half-spaces out of its tree (they sort last) and tests them apart: a
/// scene of half-spaces only (no tree), then one, two, three and seven spheres among them
/// (trees of one place and more, several half-spaces apart), and a clump of bodies sharing
/// one Morton code.
#[test]
fn half_spaces_apart_and_clumped_bodies_give_the_cpu_hits() {
    let mut rng = seeded_rng(27);
    let shapes = vec![
        Shape::HalfSpace(HalfSpace::new(Vec3::Y, 0.0).unwrap()),
        Shape::HalfSpace(HalfSpace::new(Vec3::new(1.0, 1.0, 0.0).normalize(), 2.0).unwrap()),
        Shape::Sphere(Sphere::new(0.5).unwrap()),
    ];
    let Some(mut gpu) = gpu_or_skip(&shapes) else {
        return;
    };
    let cpu = CpuRaycaster::new(shapes.clone());
    let judge =
        |gpu: &mut GpuRaycaster, cpu: &CpuRaycaster, shapes: &[Shape], bodies: &[Body], rays: &[Ray]| {
            for closest in [false, true] {
                let expected = cpu.cast(bodies, rays, closest).unwrap();
                let got = gpu.cast(bodies, rays, closest).unwrap();
                let tally = compare(shapes, bodies, rays, &got, &expected, closest);
                assert!(tally.hits > 0, "{} bodies: no hit, a weak test", bodies.len());
            }
        };
    let rays: Vec<Ray> = random_rays(&mut rng, 200, 6.0, Vec3::splat(-1.0))
        .into_iter()
        .chain([Vec3::NEG_Y, Vec3::X].map(|d| Ray::new(DVec3::new(0.0, 5.0, 0.0), d, None).unwrap()))
        .collect();
    let half_spaces: Vec<Body> = (0..6)
        .map(|i| Body {
            shape: i % 2,
            pose: Pose::from_translation(Vec3::new(i as f32, -(i as f32), 0.5)),
        })
        .collect();
    judge(&mut gpu, &cpu, &shapes, &half_spaces, &rays);
    for spheres in [1usize, 2, 3, 7] {
        let mut bodies = half_spaces.clone();
        for j in 0..spheres {
            let pose = Pose::new(Vec3::new(j as f32 * 0.7, 1.0, 0.0), Quat::IDENTITY);
            bodies.insert(2 * j, Body { shape: 2, pose });
        }
        judge(&mut gpu, &cpu, &shapes, &bodies, &rays);
    }
    // Every other body at one point (one Morton code: the tree splits them by place).
    let (shapes, mut bodies) = random_scene(&mut rng, 4000, 30.0, Vec3::ZERO);
    let point = Vec3::new(3.0, 2.0, -1.0);
    for body in bodies.iter_mut().step_by(2) {
        if !matches!(shapes[body.shape as usize], Shape::HalfSpace(_)) {
            body.pose = Pose::new(point, body.pose.rotation);
        }
    }
    let Some(mut gpu) = gpu_or_skip(&shapes) else {
        return;
    };
    let rays = random_rays(&mut rng, 2000, 30.0, Vec3::ZERO);
    judge(
        &mut gpu,
        &CpuRaycaster::new(shapes.clone()),
        &shapes,
        &bodies,
        &rays,
    );
}

/// A device whose storage binding limit lies between a buffer's bytes and its size: buffers grow
/// past what a call needs (to a sixteenth of a power of two), so a buffer whose bytes fit the
/// limit may be larger than it; its binding must stop at the limit. 20,000 spheres: the GPU
/// tree's nodes take 1,279,968 bytes (39,999 of 32) and the boxes with their pyramid 1,280,160
/// (40,005 of 32), each in a buffer of 1,310,720 (ten sixteenths of 2 MiB), under a limit of
/// 1,294,336.
#[test]
fn buffers_grown_past_the_binding_limit_are_bound_up_to_it() {
    let limits = wgpu::Limits {
        max_storage_buffer_binding_size: 1_294_336,
        ..wgpu::Limits::default()
    };
    let Some((device, queue)) = device_or_skip(limits) else {
        return;
    };
    let shapes = vec![Shape::Sphere(Sphere::new(0.3).unwrap())];
    let bodies: Vec<Body> = (0..20_000)
        .map(|i| Body {
            shape: 0,
            pose: Pose::from_translation(Vec3::new((i % 100) as f32, (i / 100) as f32, 0.0)),
        })
        .collect();
    let mut rng = seeded_rng(28);
    let rays = random_rays(&mut rng, 500, 50.0, Vec3::new(0.0, 0.0, -1.0));
    let mut gpu = GpuRaycaster::with_device(device, queue, &shapes).unwrap();
    let cpu = CpuRaycaster::new(shapes.clone());
    for closest in [false, true] {
        let got = gpu.cast(&bodies, &rays, closest).expect("bound up to the limit");
        let expected = cpu.cast(&bodies, &rays, closest).unwrap();
        let tally = compare(&shapes, &bodies, &rays, &got, &expected, closest);
        assert!(tally.hits > 0, "{tally:?}");
    }
}

#[test]
fn rays_entering_more_bodies_than_slots_come_from_the_cpu() {
    let shapes = vec![Shape::Cuboid(Cuboid::new(Vec3::splat(0.25)).unwrap())];
    let bodies: Vec<Body> = (0..3 * GPU_HIT_SLOTS)
        .map(|i| Body {
            shape: 0,
            pose: Pose::new(Vec3::new(i as f32, 0.0, 0.0), Quat::IDENTITY),
        })
        .collect();
    let rays = [
        Ray::new(DVec3::new(-1.0, 0.0, 0.0), Vec3::X, None).unwrap(),
        Ray::new(DVec3::new(-1.0, 0.0, 0.0), Vec3::X, Some(2.0)).unwrap(),
    ];
    let Some(mut gpu) = gpu_or_skip(&shapes) else {
        return;
    };
    let cpu = CpuRaycaster::new(shapes.clone());
    let got = gpu.cast(&bodies, &rays, false).unwrap();
    assert_eq!(gpu.timings().cpu_rays, 1);
    assert_eq!(got[0].len(), bodies.len());
    let expected = cpu.cast(&bodies, &rays, false).unwrap();
    // The first ray was cast on the CPU, bit for bit; the second on the GPU, by the contract.
    assert_eq!(got[0], expected[0]);
    let tally = compare(&shapes, &bodies, &rays, &got, &expected, false);
    assert_eq!((tally.hits, tally.ties()), (bodies.len() + 2, 0), "{tally:?}");
    let closest = gpu.cast(&bodies, &rays, true).unwrap();
    assert_eq!(gpu.timings().cpu_rays, 0);
    assert_eq!(closest[0].iter().map(|h| h.body).collect::<Vec<_>>(), [0]);
    let expected = cpu.cast(&bodies, &rays, true).unwrap();
    assert_eq!(expected[0][0].distance, 0.75);
    compare(&shapes, &bodies, &rays, &closest, &expected, true);
}

#[test]
fn the_ray_caster_can_move_between_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<GpuRaycaster>();
    send_sync::<CpuRaycaster>();
}

#[test]
fn empty_inputs_errors_and_a_callers_device() {
    let shapes = vec![Shape::Cuboid(Cuboid::new(Vec3::ONE).unwrap())];
    let Some(mut gpu) = gpu_or_skip(&shapes) else {
        return;
    };
    let ray = Ray::new(DVec3::new(-5.0, 0.0, 0.0), Vec3::X, None).unwrap();
    assert!(gpu.cast(&[], &[], false).unwrap().is_empty());
    assert_eq!(gpu.cast(&[], &[ray], false).unwrap(), vec![vec![]]);
    let bad = Body {
        shape: 3,
        pose: Pose::IDENTITY,
    };
    match gpu.cast(&[bad], &[ray], false) {
        Err(GpuError::Input(e)) => assert_eq!(
            e.to_string(),
            "bodies[0].shape: shape 3 does not exist (1 shapes)"
        ),
        other => panic!("{other:?}"),
    }
    let body = Body {
        shape: 0,
        pose: Pose::IDENTITY,
    };
    let mut theirs = GpuRaycaster::with_device(gpu.device().clone(), gpu.queue().clone(), &shapes).unwrap();
    let hits = theirs.cast(&[body], &[ray], false).unwrap();
    // Distance 4, normal -x on the CPU; the GPU's within the contract.
    let expected = CpuRaycaster::new(shapes.clone())
        .cast(&[body], &[ray], false)
        .unwrap();
    assert_eq!((expected[0][0].distance, expected[0][0].normal), (4.0, -Vec3::X));
    let tally = compare(&shapes, &[body], &[ray], &hits, &expected, false);
    assert_eq!((tally.hits, tally.ties()), (1, 0), "{tally:?}");
}

#[test]
fn a_reused_ray_caster_grows_its_buffers() {
    let mut rng = seeded_rng(23);
    let (shapes, bodies) = random_scene(&mut rng, 300, 20.0, Vec3::ZERO);
    let Some(mut gpu) = gpu_or_skip(&shapes) else {
        return;
    };
    let cpu = CpuRaycaster::new(shapes.clone());
    let mut set = RayHitSet::new();
    for (count, rays) in [(10, 100), (300, 20), (100, 5000), (301, 1000)] {
        let rays = random_rays(&mut rng, rays, 20.0, Vec3::ZERO);
        let bodies = &bodies[bodies.len() - count..];
        let got = gpu.cast(bodies, &rays, false).unwrap();
        let expected = cpu.cast(bodies, &rays, false).unwrap();
        let tally = compare(&shapes, bodies, &rays, &got, &expected, false);
        assert!(tally.ties() <= 2, "{tally:?}");
        // A set reused across batches, larger and smaller: the same kernel's bits as `cast`.
        for closest in [false, true] {
            gpu.cast_into(bodies, &rays, closest, &mut set).unwrap();
            let lists = if closest {
                gpu.cast(bodies, &rays, true).unwrap()
            } else {
                got.clone()
            };
            assert_eq!(set.ray_count(), rays.len());
            assert_eq!(
                set.iter().collect::<Vec<_>>(),
                lists.iter().map(Vec::as_slice).collect::<Vec<_>>()
            );
            assert_eq!(set.hit_count(), lists.iter().map(Vec::len).sum::<usize>());
        }
    }
}

#[test]
fn rays_the_driver_cuts_short_come_from_the_cpu() {
    // 48 copies of one hull of ~2,000 faces at one place: a closest-hit ray clips against every
    // face of every copy (their entries tie), ~95,000 loop iterations, past llvmpipe's loop
    // budget (see hullsat::gpu), so there the rays are flagged and recomputed on the CPU.
    let mut rng = seeded_rng(24);
    let points: Vec<Vec3> = (0..1000).map(|_| support::random_direction(&mut rng)).collect();
    let hull = hullsat::ConvexHull::from_points(&points).unwrap();
    let faces = hull.faces().len();
    let shapes = vec![Shape::Hull(hull)];
    let bodies = vec![
        Body {
            shape: 0,
            pose: Pose::IDENTITY,
        };
        48
    ];
    let rays: Vec<Ray> = (0..128)
        .map(|_| {
            let target = support::random_direction(&mut rng) * 0.5;
            let origin = support::random_direction(&mut rng) * 3.0;
            Ray::new(origin.as_dvec3(), target - origin, None).unwrap()
        })
        .collect();
    let Some(mut gpu) = gpu_or_skip(&shapes) else {
        return;
    };
    let got = gpu.cast(&bodies, &rays, true).unwrap();
    let expected = CpuRaycaster::new(shapes.clone())
        .cast(&bodies, &rays, true)
        .unwrap();
    let tally = compare(&shapes, &bodies, &rays, &got, &expected, true);
    let (timings, info) = (gpu.timings(), gpu.adapter_info());
    eprintln!(
        "{faces} faces, {tally:?}, {timings:?} on {} ({:?})",
        info.name, info.device_type
    );
    assert!(
        tally.hits == rays.len() && tally.grazing + tally.closest_ties == 0,
        "{tally:?}"
    );
    // Every ray hits all copies at one distance: the lowest body index is the closest.
    assert!(got.iter().all(|hits| hits[0].body == 0));
    if info.name.starts_with("llvmpipe") {
        assert!(
            timings.cpu_rays > 0,
            "llvmpipe's loop budget no longer cuts these rays short"
        );
    }
}

/// The CPU's hits of `ray` as a GPU that rounds differently might give them: each body's
/// relative pose off by up to `ulps` f32 ulps of its size (translation: of the ray origin's
/// distance from it; rotation: of unit), the direction and each distance too; points from the
/// f64 origin, as the GPU's host builds them. Every hit, sorted, or with `closest` the first.
fn rounded_cast(
    rng: &mut Pcg64,
    shapes: &[Shape],
    bodies: &[Body],
    ray: &Ray,
    ulps: f32,
    closest: bool,
) -> Vec<RayHit> {
    let mut off = |scale: f32| -> f32 { rng.random_range(-ulps..=ulps) * f32::EPSILON * scale };
    let direction = ray.direction() + Vec3::new(off(1.0), off(1.0), off(1.0));
    let nudged = Ray::new(ray.origin(), direction, Some(ray.max_distance())).unwrap();
    let mut hits: Vec<RayHit> = bodies
        .iter()
        .enumerate()
        .filter_map(|(i, body)| {
            let reach = (ray.origin() - body.pose.translation).length() as f32;
            let moved = Vec3::new(off(reach), off(reach), off(reach)).as_dvec3();
            let q = body.pose.rotation;
            let turned = Quat::from_xyzw(q.x + off(1.0), q.y + off(1.0), q.z + off(1.0), q.w + off(1.0));
            let body = Body {
                shape: body.shape,
                pose: Pose::new(body.pose.translation + moved, turned.normalize()),
            };
            let hit = hullsat::raycast::cast_body(&shapes[body.shape as usize], i as u32, &body, &nudged)?;
            let distance = hit.distance * (1.0 + off(1.0));
            Some(RayHit {
                distance,
                point: ray.point_at(distance),
                ..hit
            })
        })
        .collect();
    hits.sort_by(|a, b| a.distance.total_cmp(&b.distance).then(a.body.cmp(&b.body)));
    hits.truncate(if closest { 1 } else { usize::MAX });
    hits
}

#[test]
fn the_contract_accepts_rounding_without_a_gpu() {
    // The CPU on inputs 1 to 8 ulps off, standing in for a GPU (as tests/contract.rs does for
    // manifolds): within the contract, and the ties it needs few. (At 40,000 rays 16 ulps
    // passes too; 32 ulps moves a far entry into the ground beyond τ.)
    let mut rng = seeded_rng(25);
    let (shapes, bodies) = random_scene(&mut rng, 400, 20.0, Vec3::ZERO);
    let rays = random_rays(&mut rng, 20_000, 20.0, Vec3::ZERO);
    let cpu = CpuRaycaster::new(shapes.clone());
    for closest in [false, true] {
        let expected = cpu.cast(&bodies, &rays, closest).unwrap();
        for ulps in [1.0, 8.0] {
            let rounded: Vec<Vec<RayHit>> = rays
                .iter()
                .map(|ray| rounded_cast(&mut rng, &shapes, &bodies, ray, ulps, closest))
                .collect();
            let tally = compare(&shapes, &bodies, &rays, &rounded, &expected, closest);
            eprintln!("closest {closest}, {ulps} ulps: {tally:?}");
            assert!(tally.hits > rays.len() / 4, "{tally:?}");
            assert!(tally.ties() <= tally.hits / 100, "{tally:?}");
        }
    }
}

#[test]
fn the_contract_counts_ties_and_rejects_faults_without_a_gpu() {
    // A box of half extent 1 at the origin (body 0), a sphere of radius 1 at x = 4 (body 1).
    let shapes = vec![
        Shape::Cuboid(Cuboid::new(Vec3::ONE).unwrap()),
        Shape::Sphere(hullsat::Sphere::new(1.0).unwrap()),
    ];
    let bodies = [
        Body {
            shape: 0,
            pose: Pose::IDENTITY,
        },
        Body {
            shape: 1,
            pose: Pose::new(Vec3::new(4.0, 0.0, 0.0), Quat::IDENTITY),
        },
    ];
    let ray = |origin: [f64; 3], direction: [f32; 3], max: Option<f32>| {
        Ray::new(DVec3::from_array(origin), Vec3::from_array(direction), max).unwrap()
    };
    let through = ray([-5.0, 0.0, 0.0], [1.0, 0.0, 0.0], None);
    let cpu = CpuRaycaster::new(shapes.clone());
    let judge = |rays: &[Ray], closest: bool, gpu: &[Vec<RayHit>]| {
        let expected = cpu.cast(&bodies, rays, closest).unwrap();
        compare_ray_hits(&shapes, &bodies, rays, closest, gpu, &expected)
    };
    let kind = |rays: &[Ray], closest: bool, gpu: &[Vec<RayHit>]| {
        let e = judge(rays, closest, gpu).expect_err("a fault");
        assert_eq!(e.ray, rays.len() - 1, "{e}");
        e.kind
    };
    let hits = |r: &Ray| {
        cpu.cast(&bodies, std::slice::from_ref(r), false)
            .unwrap()
            .remove(0)
    };
    let moved = |h: RayHit, r: &Ray, by: f32| RayHit {
        distance: h.distance + by,
        point: r.point_at(h.distance + by),
        ..h
    };

    // Ties: an edge entry with the other face's normal, a ray along the box's top face that
    // the GPU misses, and an origin within τ of the surface the GPU calls inside.
    let edge = ray([-5.0, 0.0, -5.0], [1.0, 0.0, 1.0], None);
    let mut other_face = hits(&edge);
    assert_eq!(other_face.len(), 1);
    other_face[0].normal = if other_face[0].normal.x != 0.0 {
        -Vec3::Z
    } else {
        -Vec3::X
    };
    let along = ray([-5.0, 1.0, 0.0], [1.0, 0.0, 0.0], Some(6.0));
    let on_surface = ray([-1.0 - 1.0e-6, 0.0, 0.5], [1.0, 1.0, 0.0], None);
    let inside = vec![RayHit {
        body: 0,
        distance: 0.0,
        point: on_surface.origin(),
        normal: -on_surface.direction(),
    }];
    let rays = [edge, along, on_surface];
    assert_eq!(hits(&along).len(), 1, "the ray along the top face enters the box");
    let tally = judge(&rays, false, &[other_face, vec![], inside]).unwrap();
    assert_eq!(
        (tally.hits, tally.other_face, tally.grazing, tally.start_ties),
        (2, 1, 1, 1),
        "{tally:?}"
    );

    // A shallow entry into the sphere: the GPU's point farther along the ray (within τ across
    // the surface) and its normal there, off the CPU's by more than the normal tolerance.
    let shallow = ray([-5.0, 0.99995, 0.0], [1.0, 0.0, 0.0], None);
    let mut sphere = hits(&shallow);
    assert_eq!(sphere.len(), 2);
    let tau = hit_tolerance(&shapes, &bodies[1], &shallow, sphere[1].distance);
    let cpu_normal = sphere[1].normal;
    sphere[1] = moved(sphere[1], &shallow, 0.5 * tau / cpu_normal.x.abs());
    sphere[1].normal = (sphere[1].point - DVec3::new(4.0, 0.0, 0.0))
        .normalize()
        .as_vec3();
    assert!(sphere[1].normal.distance(cpu_normal) > 2.0e-3);
    let tally = judge(&[shallow], false, std::slice::from_ref(&sphere)).unwrap();
    assert_eq!(
        (tally.hits, tally.conditioned, tally.ties()),
        (2, 1, 0),
        "{tally:?}"
    );
    sphere[1].normal = Quat::from_rotation_x(0.02) * sphere[1].normal;
    let e = judge(&[shallow], false, &[sphere]).expect_err("a normal beyond its conditioning");
    assert_eq!(e.kind, RayDisagreementKind::Normal, "{e}");

    // Closest: the GPU's first is the sphere when the box is only grazed.
    let graze_then_sphere = ray([-5.0, 1.0, 0.0], [1.0, 0.0, 0.0], None);
    let sphere_only = vec![hits(&graze_then_sphere)[1]];
    assert_eq!(sphere_only[0].body, 1);
    let tally = judge(&[graze_then_sphere], true, &[sphere_only]).unwrap();
    assert_eq!((tally.hits, tally.grazing), (1, 1), "{tally:?}");

    // Faults, each on the last ray.
    use RayDisagreementKind::{Distance, Malformed, Normal, Verdict};
    let good = hits(&through);
    assert_eq!(good.len(), 2);
    let mut rays = vec![edge, through];
    let both = |last: Vec<RayHit>| vec![hits(&edge), last];
    let tau = hit_tolerance(&shapes, &bodies[1], &through, good[1].distance);
    let far = vec![good[0], moved(good[1], &through, 10.0 * tau)];
    assert_eq!(kind(&rays, false, &both(far)), Distance);
    let mut tilted = good.clone();
    tilted[1].normal = Quat::from_rotation_z(0.01) * tilted[1].normal;
    assert_eq!(kind(&rays, false, &both(tilted)), Normal);
    assert_eq!(kind(&rays, false, &both(vec![good[1]])), Verdict);
    assert_eq!(kind(&rays, false, &both(vec![good[1], good[0]])), Malformed);
    assert_eq!(kind(&rays, false, &both(vec![good[0], good[0]])), Malformed);
    let mut unknown = good.clone();
    unknown[1].body = 7;
    assert_eq!(kind(&rays, false, &both(unknown)), Malformed);
    let off_ray = vec![
        good[0],
        RayHit {
            point: good[1].point + DVec3::Y,
            ..good[1]
        },
    ];
    assert_eq!(kind(&rays, false, &both(off_ray)), Malformed);
    assert_eq!(kind(&rays, true, &both(good.clone())), Malformed);
    // Closest: the sphere first where the box is entered squarely, or nothing.
    assert_eq!(kind(&rays, true, &both(vec![good[1]])), Verdict);
    assert_eq!(kind(&rays, true, &both(vec![])), Verdict);
    rays.pop();
    let e = judge(&rays, false, &[]).expect_err("a missing list");
    assert_eq!((e.ray, e.kind), (0, Malformed), "{e}");
}

//! The GPU ray caster against the CPU one: a large random scene (boxes, hulls, spheres,
//! capsules, a ground half-space) with every hit and with the closest, the same scene far from
//! the world origin, rays that enter more bodies than the GPU's hit slots, empty inputs, a
//! caller's device, bad bodies, and a ray caster reused across calls of growing size.
//!
//! Runs on whatever adapter wgpu finds (Mesa lavapipe in CI); without one the tests print a line
//! and return, unless `HULLSAT_REQUIRE_GPU=1`.

mod raycast_common;
mod support;

use glam::{DVec3, Quat, Vec3};
use hullsat::raycast::cast_body;
use hullsat::raycast::layout::GPU_HIT_SLOTS;
use hullsat::{Body, CpuRaycaster, Cuboid, GpuError, GpuRaycaster, Pose, Ray, RayHit, Shape};
use raycast_common::{random_rays, random_scene};
use support::{gpu_required, seeded_rng};

/// The GPU ray caster, or `None` (after printing why) without an adapter unless
/// `HULLSAT_REQUIRE_GPU=1`.
fn gpu_or_skip(shapes: &[Shape]) -> Option<GpuRaycaster> {
    match GpuRaycaster::new(shapes) {
        Ok(gpu) => Some(gpu),
        Err(GpuError::NoAdapter(why)) => {
            assert!(!gpu_required(), "HULLSAT_REQUIRE_GPU=1 but no GPU adapter: {why}");
            eprintln!("skipping GPU test: no adapter ({why})");
            None
        }
        Err(e) => panic!("GPU ray caster could not start: {e}"),
    }
}

/// Entry points of one body on both sides may differ by this, across the surface (distance
/// difference times the cosine between ray and normal), relative to the body's size plus the
/// ray origin's distance from it: the GPU rotates with another quaternion formula and rounds
/// differently (fused multiply-adds), a few f32 ulps of those lengths.
const ACROSS_TOLERANCE: f32 = 1.0e-5;

/// Largest distance between the two unit normals of one entry point.
const NORMAL_TOLERANCE: f32 = 1.0e-3;

/// How two hit lists compared.
#[derive(Debug, Default)]
struct Comparison {
    rays: usize,
    hits: usize,
    /// Bodies one side hits and the other misses, each at a grazing ray.
    grazing: usize,
    /// Entry points on an edge or vertex where the two sides picked different faces.
    other_face: usize,
}

/// Length of `body`'s shape, for tolerances (finite for half-spaces too).
fn body_scale(shapes: &[Shape], body: &Body, ray: &Ray) -> f32 {
    let radius = shapes[body.shape as usize].bounding_radius();
    let origin_distance = (ray.origin() - body.pose.translation).length() as f32;
    if radius.is_finite() {
        radius + origin_distance
    } else {
        1.0 + origin_distance
    }
}

/// True when nudging `ray` sideways, or its max distance, by a relative `1e-4` changes whether
/// the CPU says it enters `body`: the ray grazes it (or ends at its surface).
fn grazes(shapes: &[Shape], index: u32, body: &Body, ray: &Ray) -> bool {
    let shape = &shapes[body.shape as usize];
    let hit = cast_body(shape, index, body, ray).is_some();
    let step = 1.0e-4 * body_scale(shapes, body, ray) as f64;
    let d = ray.direction();
    let side = d.any_orthonormal_vector().as_dvec3();
    let up = d.as_dvec3().cross(side);
    let max = ray.max_distance();
    let mut nudged = vec![
        Ray::new(ray.origin(), d, Some(max * (1.0 + 1.0e-4))).unwrap(),
        Ray::new(ray.origin(), d, Some(max * (1.0 - 1.0e-4))).unwrap(),
    ];
    for offset in [side, -side, up, -up] {
        nudged.push(Ray::new(ray.origin() + offset * step, d, Some(max)).unwrap());
    }
    nudged
        .iter()
        .any(|r| cast_body(shape, index, body, r).is_some() != hit)
}

/// True when `normal` (world) is an outward face normal of the polyhedral `body` whose plane
/// passes within `tolerance` of `point`.
fn is_face_through(shape: &Shape, body: &Body, normal: Vec3, point: DVec3, tolerance: f32) -> bool {
    let Some(hull) = shape.as_hull() else {
        return false;
    };
    let local = body
        .pose
        .inverse_transform_vector((point - body.pose.translation).as_vec3());
    hull.planes().iter().any(|plane| {
        body.pose.transform_vector(plane.normal).distance(normal) <= NORMAL_TOLERANCE
            && plane.signed_distance(local).abs() <= tolerance
    })
}

/// Checks one body's GPU hit `a` against its CPU hit `b` for ray `i`: entry points within
/// [`ACROSS_TOLERANCE`], normals within [`NORMAL_TOLERANCE`] unless both are faces through the
/// entry point (counted).
#[track_caller]
fn compare_hit(
    shapes: &[Shape],
    body: &Body,
    ray: &Ray,
    i: usize,
    a: &RayHit,
    b: &RayHit,
    stats: &mut Comparison,
) {
    stats.hits += 1;
    let tolerance = ACROSS_TOLERANCE * body_scale(shapes, body, ray);
    let across = (a.distance - b.distance).abs() * b.normal.dot(ray.direction()).abs();
    let both_inside = (a.distance == 0.0) == (b.distance == 0.0);
    assert!(
        across <= tolerance && (both_inside || a.distance.max(b.distance) <= tolerance),
        "ray {i} body {}: gpu {a:?} cpu {b:?}",
        a.body
    );
    if a.normal.distance(b.normal) > NORMAL_TOLERANCE {
        let shape = &shapes[body.shape as usize];
        assert!(
            is_face_through(shape, body, a.normal, b.point, tolerance)
                && is_face_through(shape, body, b.normal, b.point, tolerance),
            "ray {i} body {}: normals differ: gpu {a:?} cpu {b:?}",
            a.body
        );
        stats.other_face += 1;
    }
}

/// Checks the GPU's lists against the CPU's: every hit (or with `closest`, the first one) of
/// the same bodies, except at grazing rays, compared by [`compare_hit`]; the GPU's lists
/// sorted. With `closest` a different first body is allowed when the CPU enters it within the
/// tolerance of its own first, or grazes its own first.
#[track_caller]
fn compare(
    shapes: &[Shape],
    bodies: &[Body],
    rays: &[Ray],
    gpu: &[Vec<RayHit>],
    cpu: &[Vec<RayHit>],
    closest: bool,
) -> Comparison {
    let bodies = hullsat::scene::validate_batch(shapes, bodies, &[], 0.0).unwrap();
    let all_hits = CpuRaycaster::new(shapes.to_vec());
    let mut stats = Comparison::default();
    assert_eq!((gpu.len(), cpu.len()), (rays.len(), rays.len()));
    for (i, ((ray, g), c)) in rays.iter().zip(gpu).zip(cpu).enumerate() {
        stats.rays += 1;
        assert!(
            g.windows(2)
                .all(|w| (w[0].distance, w[0].body) < (w[1].distance, w[1].body)),
            "ray {i}: {g:?}"
        );
        let body = |h: &RayHit| &bodies[h.body as usize];
        if closest {
            assert!(g.len() <= 1 && c.len() <= 1, "ray {i}: {g:?} {c:?}");
            match (g.first(), c.first()) {
                (None, None) => {}
                (Some(a), Some(b)) if a.body == b.body => {
                    compare_hit(shapes, body(b), ray, i, a, b, &mut stats)
                }
                (Some(a), Some(b)) => {
                    let every = all_hits
                        .cast(&bodies, std::slice::from_ref(ray), false)
                        .unwrap()
                        .remove(0);
                    let other = every.iter().find(|h| h.body == a.body);
                    let scale = body_scale(shapes, body(b), ray);
                    assert!(
                        other.is_some_and(|o| (o.distance - b.distance).abs() <= ACROSS_TOLERANCE * scale)
                            || grazes(shapes, b.body, body(b), ray),
                        "ray {i}: gpu closest {a:?}, cpu {b:?}"
                    );
                    stats.grazing += 1;
                }
                (Some(h), None) | (None, Some(h)) => {
                    assert!(
                        grazes(shapes, h.body, body(h), ray),
                        "ray {i}: gpu {g:?} cpu {c:?}"
                    );
                    stats.grazing += 1;
                }
            }
            continue;
        }
        for b in c {
            match g.iter().find(|h| h.body == b.body) {
                Some(a) => compare_hit(shapes, body(b), ray, i, a, b, &mut stats),
                None => {
                    assert!(
                        grazes(shapes, b.body, body(b), ray),
                        "ray {i}: gpu {g:?} cpu {c:?}"
                    );
                    stats.grazing += 1;
                }
            }
        }
        for a in g.iter().filter(|a| !c.iter().any(|b| b.body == a.body)) {
            assert!(
                grazes(shapes, a.body, body(a), ray),
                "ray {i}: gpu {g:?} cpu {c:?}"
            );
            stats.grazing += 1;
        }
    }
    stats
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
        let stats = compare(&shapes, &bodies, &rays, &got, &expected, closest);
        let timings = gpu.timings();
        eprintln!("closest {closest}: {stats:?}, {timings:?}");
        assert!(stats.hits > rays.len() / 3, "{stats:?}");
        assert!(stats.grazing + stats.other_face <= stats.hits / 1000, "{stats:?}");
        // Rays entering more bodies than the slots come from the CPU: few in this scene.
        assert!(timings.cpu_rays < rays.len() / 100, "{timings:?}");
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
    let stats = compare(&shapes, &bodies, &rays, &got, &expected, false);
    eprintln!("{stats:?}");
    assert!(
        stats.hits > 1000 && stats.grazing + stats.other_face <= 5,
        "{stats:?}"
    );
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
    let got = gpu.cast(&bodies, &rays, false).unwrap();
    assert_eq!(gpu.timings().cpu_rays, 1);
    assert_eq!(got[0].len(), bodies.len());
    assert_eq!(
        got,
        CpuRaycaster::new(shapes.clone())
            .cast(&bodies, &rays, false)
            .unwrap()
    );
    let closest = gpu.cast(&bodies, &rays, true).unwrap();
    assert_eq!(gpu.timings().cpu_rays, 0);
    assert_eq!(
        closest[0]
            .iter()
            .map(|h| (h.body, h.distance))
            .collect::<Vec<_>>(),
        [(0, 0.75)]
    );
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
    assert_eq!(hits[0][0].distance, 4.0);
    assert_eq!(hits[0][0].normal, -Vec3::X);
}

#[test]
fn a_reused_ray_caster_grows_its_buffers() {
    let mut rng = seeded_rng(23);
    let (shapes, bodies) = random_scene(&mut rng, 300, 20.0, Vec3::ZERO);
    let Some(mut gpu) = gpu_or_skip(&shapes) else {
        return;
    };
    let cpu = CpuRaycaster::new(shapes.clone());
    for (count, rays) in [(10, 100), (300, 20), (100, 5000), (301, 1000)] {
        let rays = random_rays(&mut rng, rays, 20.0, Vec3::ZERO);
        let bodies = &bodies[bodies.len() - count..];
        let got = gpu.cast(bodies, &rays, false).unwrap();
        let expected = cpu.cast(bodies, &rays, false).unwrap();
        let stats = compare(&shapes, bodies, &rays, &got, &expected, false);
        assert!(stats.grazing + stats.other_face <= 2, "{stats:?}");
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
    let stats = compare(&shapes, &bodies, &rays, &got, &expected, true);
    let (timings, info) = (gpu.timings(), gpu.adapter_info());
    eprintln!(
        "{faces} faces, {stats:?}, {timings:?} on {} ({:?})",
        info.name, info.device_type
    );
    assert!(stats.hits == rays.len() && stats.grazing == 0, "{stats:?}");
    // Every ray hits all copies at one distance: the lowest body index is the closest.
    assert!(got.iter().all(|hits| hits[0].body == 0));
    if info.name.starts_with("llvmpipe") {
        assert!(
            timings.cpu_rays > 0,
            "llvmpipe's loop budget no longer cuts these rays short"
        );
    }
}

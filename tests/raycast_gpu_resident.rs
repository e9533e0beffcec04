//! The resident ray API (`GpuRaycaster::encode_resident`): bodies and rays in our own GPU
//! buffers, the BVH built on the GPU, the hits read back here and judged against the CPU caster
//! by the GPU = CPU contract for rays ([`hullsat::contract::rays`]): a random scene with a
//! half-space (every hit and closest), a scene of cylinders, the same scene 1e6 from the world origin with the BVH
//! origin near it and at zero, many bodies at one point, a terrain mesh and compounds among
//! ordinary bodies, there and 1e6 away (with the triangle and child each hit names), empty inputs, and the host's
//! checks of the caller's buffers.
//!
//! Runs on whatever adapter wgpu finds (Mesa lavapipe in CI); without one the tests print a line
//! and return, unless `HULLSAT_REQUIRE_GPU=1`.

mod raycast_common;
mod support;

use glam::{DVec3, Quat, Vec3};
use hullsat::contract::rays::compare_ray_hits;
use hullsat::generate::terrain;
use hullsat::pose::Isometry;
use hullsat::raycast::layout::{GpuBody, GpuRay, GpuRayCount, GpuRayHit, INCOMPLETE_BIT, STACK_OVERFLOW_BIT};
use hullsat::raycast::{ResidentHits, ResidentRays};
use hullsat::raycast::{cast_compound, cast_trimesh};
use hullsat::scene::validate_batch;
use hullsat::shape::compound::{Compound, CompoundChild};
use hullsat::{
    Body, Capsule, CpuRaycaster, Cuboid, Cylinder, GpuError, GpuRaycaster, Pose, Ray, RayHit, Shape, Sphere,
};
use rand::RngExt;
use raycast_common::{cylinder_scene, gpu_or_skip, random_rays, random_scene};
use support::{device_or_skip, seeded_rng};
use wgpu::util::DeviceExt;

/// A storage buffer holding `contents` (at least 48 bytes, as wgpu wants no empty binding).
fn storage(gpu: &GpuRaycaster, contents: &[u8]) -> wgpu::Buffer {
    gpu.device()
        .create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("test resident input"),
            contents: if contents.is_empty() { &[0; 48] } else { contents },
            usage: wgpu::BufferUsages::STORAGE,
        })
}

/// `bytes` of `buffer` read back.
fn read(gpu: &GpuRaycaster, buffer: &wgpu::Buffer, bytes: u64) -> Vec<u8> {
    if bytes == 0 {
        return Vec::new();
    }
    let device = gpu.device();
    let staging = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("test readback"),
        size: bytes,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    encoder.copy_buffer_to_buffer(buffer, 0, &staging, 0, bytes);
    gpu.queue().submit([encoder.finish()]);
    staging.map_async(wgpu::MapMode::Read, .., |r| r.expect("mapped"));
    device
        .poll(wgpu::PollType::Wait {
            submission_index: None,
            timeout: Some(hullsat::gpu::READBACK_TIMEOUT),
        })
        .expect("the GPU finishes");
    staging.get_mapped_range(..).expect("mapped range").to_vec()
}

/// Casts `rays` at `bodies` through `encode_resident` (BVH frame at `origin`) and reads back
/// the counts and the hit slots as the kernel left them, with the slots per ray.
fn resident_slots(
    gpu: &mut GpuRaycaster,
    shapes: &[Shape],
    bodies: &[Body],
    rays: &[Ray],
    origin: DVec3,
    closest: bool,
) -> (Vec<GpuRayCount>, Vec<GpuRayHit>, u32) {
    let normalized = validate_batch(shapes, bodies, &[], 0.0).unwrap();
    let gpu_bodies: Vec<GpuBody> = normalized
        .iter()
        .map(|b| GpuBody::from_pose(b.shape, &b.pose))
        .collect();
    let gpu_rays: Vec<GpuRay> = rays.iter().map(GpuRay::from_ray).collect();
    let (body_buffer, ray_buffer) = (
        storage(gpu, bytemuck::cast_slice(&gpu_bodies)),
        storage(gpu, bytemuck::cast_slice(&gpu_rays)),
    );
    let batch = ResidentRays {
        bodies: &body_buffer,
        body_count: bodies.len() as u32,
        rays: &ray_buffer,
        ray_count: rays.len() as u32,
        origin,
        closest,
    };
    let mut encoder = gpu.device().create_command_encoder(&Default::default());
    let ResidentHits { counts, hits, slots } =
        gpu.encode_resident(&mut encoder, &batch).expect("resident cast");
    gpu.queue().submit([encoder.finish()]);
    let count_bytes = read(gpu, &counts, (rays.len() * size_of::<GpuRayCount>()) as u64);
    let hit_bytes = read(
        gpu,
        &hits,
        (rays.len() * slots as usize * size_of::<GpuRayHit>()) as u64,
    );
    let counts = bytemuck::pod_collect_to_vec(&count_bytes);
    (counts, bytemuck::pod_collect_to_vec(&hit_bytes), slots)
}

/// [`resident_slots`] turned into the hit lists a consumer would build: the GPU's, and the CPU
/// caster's for the rays it lists as incomplete (more hits than slots, or cut short by the
/// driver). Returns them with the number of such rays.
fn cast_resident(
    gpu: &mut GpuRaycaster,
    shapes: &[Shape],
    bodies: &[Body],
    rays: &[Ray],
    origin: DVec3,
    closest: bool,
) -> (Vec<Vec<RayHit>>, usize) {
    let (counts, slot_hits, slots) = resident_slots(gpu, shapes, bodies, rays, origin, closest);
    let cpu = CpuRaycaster::new(shapes);
    let mut recomputed = 0;
    let lists = rays
        .iter()
        .enumerate()
        .map(|(i, ray)| {
            let count = counts[i];
            let overflow = !closest && count.hits > slots;
            if overflow || count.flags & (INCOMPLETE_BIT | STACK_OVERFLOW_BIT) != 0 {
                recomputed += 1;
                return cpu
                    .cast(bodies, std::slice::from_ref(ray), closest)
                    .unwrap()
                    .remove(0);
            }
            (0..count.hits.min(slots) as usize)
                .map(|k| {
                    let hit = slot_hits[i * slots as usize + k];
                    RayHit {
                        body: hit.body,
                        distance: hit.distance,
                        point: ray.point_at(hit.distance),
                        normal: hit.normal.into(),
                    }
                })
                .collect()
        })
        .collect();
    (lists, recomputed)
}

/// Casts resident and on the CPU and judges the two by the contract; returns (hits, ties,
/// rays recomputed).
fn check_scene(
    shapes: &[Shape],
    bodies: &[Body],
    rays: &[Ray],
    origin: DVec3,
    closest: bool,
) -> Option<(usize, usize, usize)> {
    let mut gpu = gpu_or_skip(shapes)?;
    let (got, recomputed) = cast_resident(&mut gpu, shapes, bodies, rays, origin, closest);
    let expected = CpuRaycaster::new(shapes).cast(bodies, rays, closest).unwrap();
    let tally =
        compare_ray_hits(shapes, bodies, rays, closest, &got, &expected).unwrap_or_else(|e| panic!("{e}"));
    Some((tally.hits, tally.ties(), recomputed))
}

/// On a device with wgpu's default limits (8 storage buffers a shader stage, as WebGPU): the
/// resident cast, its BVH built on the GPU included, binds no more and gives the CPU's hits.
#[test]
fn a_device_of_default_limits_casts_resident_rays() {
    let mut rng = seeded_rng(37);
    let (shapes, bodies) = random_scene(&mut rng, 300, 20.0, Vec3::ZERO);
    let rays = random_rays(&mut rng, 2000, 20.0, Vec3::ZERO);
    let Some((device, queue)) = device_or_skip(wgpu::Limits::default()) else {
        return;
    };
    let mut gpu = GpuRaycaster::with_device(device, queue, &shapes).expect("ray caster on a default device");
    let (got, _) = cast_resident(&mut gpu, &shapes, &bodies, &rays, DVec3::splat(10.0), true);
    let expected = CpuRaycaster::new(&shapes).cast(&bodies, &rays, true).unwrap();
    let tally =
        compare_ray_hits(&shapes, &bodies, &rays, true, &got, &expected).unwrap_or_else(|e| panic!("{e}"));
    assert!(tally.hits > 100, "{} hits", tally.hits);
}

#[test]
fn a_random_scene_with_a_half_space_gives_the_cpu_hits() {
    let mut rng = seeded_rng(31);
    let (shapes, bodies) = random_scene(&mut rng, 2000, 50.0, Vec3::ZERO);
    let rays = random_rays(&mut rng, 20_000, 50.0, Vec3::ZERO);
    for closest in [false, true] {
        let Some((hits, ties, recomputed)) =
            check_scene(&shapes, &bodies, &rays, DVec3::splat(25.0), closest)
        else {
            return;
        };
        eprintln!("closest {closest}: {hits} hits, {ties} ties, {recomputed} rays recomputed");
        assert!(hits > rays.len() / 3, "{hits} hits");
        assert!(
            ties <= hits / 1000 && recomputed < rays.len() / 100,
            "{ties} ties, {recomputed} recomputed"
        );
    }
}

#[test]
fn cylinders_give_the_cpu_hits() {
    let mut rng = seeded_rng(33);
    let (shapes, bodies) = cylinder_scene(&mut rng, 300, 15.0);
    let rays = random_rays(&mut rng, 3000, 15.0, Vec3::ZERO);
    let Some((hits, ties, _)) = check_scene(&shapes, &bodies, &rays, DVec3::splat(7.5), false) else {
        return;
    };
    eprintln!("{hits} hits, {ties} ties");
    assert!(
        hits > rays.len() / 3 && ties <= hits / 100,
        "{hits} hits, {ties} ties"
    );
}

#[test]
fn far_from_the_origin_any_bvh_origin_is_correct() {
    let mut rng = seeded_rng(32);
    let offset = Vec3::new(1.0e6, 2.0e5, -1.0e6);
    let (shapes, bodies) = random_scene(&mut rng, 500, 30.0, offset);
    let rays = random_rays(&mut rng, 5000, 30.0, offset);
    // Near the scene (tight boxes) and at the world origin (boxes padded by their magnitude).
    for origin in [offset.as_dvec3() + 15.0, DVec3::ZERO] {
        let Some((hits, ties, _)) = check_scene(&shapes, &bodies, &rays, origin, false) else {
            return;
        };
        assert!(
            hits > 1000 && ties <= 5,
            "origin {origin}: {hits} hits, {ties} ties"
        );
    }
}

#[test]
fn bodies_at_one_point_and_counts_off_the_leaf_size() {
    let shapes = vec![Shape::Sphere(Sphere::new(0.5).unwrap())];
    let ray = |y: f64| Ray::new(DVec3::new(-5.0, y, 0.0), Vec3::X, None).unwrap();
    let rays = [ray(0.0), ray(0.4), ray(2.0)];
    for count in [1, 5, 9, 37] {
        let bodies = vec![
            Body {
                shape: 0,
                pose: Pose::new(Vec3::ZERO, Quat::IDENTITY),
            };
            count
        ];
        let Some((hits, _, _)) = check_scene(&shapes, &bodies, &rays, DVec3::ZERO, false) else {
            return;
        };
        // The first two rays enter every body (those past the slots from the CPU), the third none.
        assert_eq!(hits, 2 * count, "{count} bodies");
    }
}

#[test]
fn empty_inputs_and_bad_buffers() {
    let shapes = vec![Shape::Sphere(Sphere::new(0.5).unwrap())];
    let Some(mut gpu) = gpu_or_skip(&shapes) else {
        return;
    };
    let body = Body {
        shape: 0,
        pose: Pose::IDENTITY,
    };
    let ray = Ray::new(DVec3::new(-5.0, 0.0, 0.0), Vec3::X, None).unwrap();
    // No rays; no bodies.
    assert_eq!(
        cast_resident(&mut gpu, &shapes, &[body], &[], DVec3::ZERO, false).0,
        Vec::<Vec<RayHit>>::new()
    );
    assert_eq!(
        cast_resident(&mut gpu, &shapes, &[], &[ray], DVec3::ZERO, false).0,
        vec![vec![]]
    );

    let bodies = storage(&gpu, bytemuck::bytes_of(&GpuBody::from_pose(0, &body.pose)));
    let rays = storage(&gpu, bytemuck::bytes_of(&GpuRay::from_ray(&ray)));
    let uniform = gpu.device().create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: 64,
        usage: wgpu::BufferUsages::UNIFORM,
        mapped_at_creation: false,
    });
    let good = ResidentRays {
        bodies: &bodies,
        body_count: 1,
        rays: &rays,
        ray_count: 1,
        origin: DVec3::ZERO,
        closest: false,
    };
    let mut error = |batch: ResidentRays| {
        let mut encoder = gpu.device().create_command_encoder(&Default::default());
        match gpu.encode_resident(&mut encoder, &batch) {
            Err(GpuError::Input(e)) => e.to_string(),
            other => panic!("expected an input error, got {other:?}"),
        }
    };
    assert_eq!(
        error(ResidentRays {
            body_count: 2,
            ..good
        }),
        "ResidentRays.bodies: 2 of 48 bytes need 96 bytes; the buffer has 48"
    );
    assert_eq!(
        error(ResidentRays { ray_count: 3, ..good }),
        "ResidentRays.rays: 3 of 48 bytes need 144 bytes; the buffer has 48"
    );
    assert!(
        error(ResidentRays {
            rays: &uniform,
            ..good
        })
        .starts_with("ResidentRays.rays: buffer usage"),
    );
    assert_eq!(
        error(ResidentRays {
            origin: DVec3::new(f64::NAN, 0.0, 0.0),
            ..good
        }),
        "ResidentRays.origin: [NaN, 0, 0] is not finite"
    );
}

/// A terrain, a compound of a box and a sphere and one of a capsule and a cylinder.
fn terrain_and_compounds() -> Vec<Shape> {
    let child = |shape: Shape, x: f32| CompoundChild {
        shape,
        pose: Isometry {
            translation: Vec3::new(x, 0.0, 0.0),
            rotation: Quat::from_rotation_z(0.4 * x),
        },
    };
    vec![
        Shape::from(terrain(32, 20.0, 2.0).unwrap()),
        Shape::from(
            Compound::new(vec![
                child(Shape::Cuboid(Cuboid::new(Vec3::splat(0.4)).unwrap()), -0.5),
                child(Shape::Sphere(Sphere::new(0.5).unwrap()), 0.5),
            ])
            .unwrap(),
        ),
        Shape::from(
            Compound::new(vec![
                child(Shape::Capsule(Capsule::new(0.5, 0.3).unwrap()), -0.6),
                child(Shape::Cylinder(Cylinder::new(0.5, 0.4).unwrap()), 0.6),
            ])
            .unwrap(),
        ),
    ]
}

#[test]
fn meshes_and_compounds_give_the_cpu_hits_and_name_the_triangle_and_child() {
    let mut rng = seeded_rng(36);
    let (mut shapes, mut bodies) = random_scene(&mut rng, 300, 30.0, Vec3::ZERO);
    let first = shapes.len() as u32;
    shapes.extend(terrain_and_compounds());
    bodies.push(Body {
        shape: first,
        pose: Pose::new(Vec3::new(15.0, 3.0, 15.0), Quat::from_rotation_y(0.2)),
    });
    for i in 0..60 {
        bodies.push(Body {
            shape: first + 1 + i % 2,
            pose: Pose::new(
                Vec3::new(rng.random(), rng.random(), rng.random()) * 30.0,
                support::shapes::random_rotation(&mut rng),
            ),
        });
    }
    let rays = random_rays(&mut rng, 3000, 30.0, Vec3::ZERO);
    for closest in [false, true] {
        let Some((hits, ties, _)) = check_scene(&shapes, &bodies, &rays, DVec3::splat(15.0), closest) else {
            return;
        };
        eprintln!("closest {closest}: {hits} hits, {ties} ties");
        assert!(
            hits > rays.len() / 3 && ties <= hits / 100,
            "{hits} hits, {ties} ties"
        );
    }
    // The same scene 1e6 from the world origin, the BVH frame near it.
    let offset = DVec3::new(1.0e6, -2.0e5, 5.0e5);
    let far_bodies: Vec<Body> = bodies
        .iter()
        .map(|b| Body {
            pose: Pose {
                translation: b.pose.translation + offset,
                ..b.pose
            },
            ..*b
        })
        .collect();
    let far_rays: Vec<Ray> = rays
        .iter()
        .map(|r| {
            let max = r.max_distance().is_finite().then_some(r.max_distance());
            Ray::new(r.origin() + offset, r.direction(), max).unwrap()
        })
        .collect();
    let (hits, ties, _) =
        check_scene(&shapes, &far_bodies, &far_rays, offset + 15.0, true).expect("a GPU: it ran above");
    assert!(
        hits > rays.len() / 3 && ties <= hits / 100,
        "far: {hits} hits, {ties} ties"
    );
    // The slot's feature: the triangle the CPU's mesh cast names, the child its compound cast
    // names, for closest hits the two sides agree on away from edges and ties.
    let mut gpu = gpu_or_skip(&shapes).expect("a GPU: it ran above");
    let (counts, slot_hits, _) = resident_slots(&mut gpu, &shapes, &bodies, &rays, DVec3::splat(15.0), true);
    let cpu = CpuRaycaster::new(&shapes).cast(&bodies, &rays, true).unwrap();
    let mut named = [0, 0];
    for (i, ray) in rays.iter().enumerate() {
        let (Some(c), true) = (cpu[i].first(), counts[i].hits > 0 && counts[i].flags == 0) else {
            continue;
        };
        let g = slot_hits[i];
        let body = &bodies[c.body as usize];
        if g.body != c.body || body.shape < first || (g.distance - c.distance).abs() > 1e-3 {
            continue;
        }
        let local = ray.to_local(&body.pose);
        let expected = match &shapes[body.shape as usize] {
            Shape::TriMesh(mesh) => cast_trimesh(mesh, &local).map(|(_, t)| (0, t)),
            Shape::Compound(compound) => cast_compound(compound, &local).map(|(_, child)| (1, child)),
            _ => None,
        };
        let Some((kind, feature)) = expected else {
            continue;
        };
        // Rays through an edge or a child's seam may name either side: only normals that
        // agree are compared.
        if Vec3::from(g.normal).distance(c.normal) < 1e-3 {
            assert_eq!(g.feature, feature, "ray {i}: {g:?}, cpu {c:?}");
            named[kind] += 1;
        }
    }
    assert!(
        named[0] > 100 && named[1] > 20,
        "{named:?} triangle and child hits compared"
    );
}

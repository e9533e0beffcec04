//! Triangle meshes in the batch: the door's pair rules, (convex, mesh) pairs in either order and
//! either given order on every CPU entry point, broadphase boxes and pairs, CPU ray casts, and
//! the GPU path (mesh pairs run by the GPU mesh pass, judged by the GPU = CPU contract; more in
//! tests/gpu_mesh.rs).

mod support;

use glam::{DVec3, Quat, Vec3};
use hullsat::broadphase::candidate_pairs;
use hullsat::contract::compare_batch;
use hullsat::generate::terrain;
use hullsat::raycast::{LocalRay, cast_trimesh};
use hullsat::shape::world_aabb;
use hullsat::trimesh::mesh_feature_id;
use hullsat::{
    Body, Capsule, CpuNarrowphase, CpuRaycaster, Cuboid, Cylinder, FeatureId, HalfSpace, Manifold, Pose, Ray,
    Shape, Sphere, ValidatedBatch,
};
use support::shapes::random_rotation;
use support::{gpu_broadphase_covers_cpu, gpu_or_skip, seeded_rng};

/// Shape indices of [`shapes`].
const TERRAIN: u32 = 0;
const GROUND: u32 = 1;
const BOX: u32 = 2;

/// A hilly terrain (40 × 40 cells over ±10, hills 0.6 high), a half-space, then one of every
/// convex kind.
fn shapes() -> Vec<Shape> {
    vec![
        Shape::from(terrain(40, 10.0, 0.6).unwrap()),
        Shape::HalfSpace(HalfSpace::new(Vec3::Y, -5.0).unwrap()),
        Shape::Cuboid(Cuboid::new(Vec3::new(0.5, 0.3, 0.4)).unwrap()),
        Shape::Sphere(Sphere::new(0.4).unwrap()),
        Shape::Capsule(Capsule::new(0.3, 0.2).unwrap()),
        Shape::Cylinder(Cylinder::new(0.3, 0.35).unwrap()),
        Shape::Hull(support::analytic::unit_box()),
    ]
}

/// The terrain's height at `(x, z)` (as [`terrain`] builds it, between its vertices).
fn hill(x: f32, z: f32) -> f32 {
    let k = std::f32::consts::PI / 10.0;
    0.6 * (k * x).sin() * (k * z).cos()
}

/// Bodies: the terrain twice (bodies 0 and `n + 1`, so pairs come in both canonical orders),
/// the ground (body 1), and `n` convex bodies over the terrain, low enough that most touch it.
fn bodies(n: usize, seed: u64) -> Vec<Body> {
    let mut rng = seeded_rng(seed);
    let mut bodies = vec![
        Body {
            shape: TERRAIN,
            pose: Pose::IDENTITY,
        },
        Body {
            shape: GROUND,
            pose: Pose::IDENTITY,
        },
    ];
    for i in 0..n {
        let (x, z) = (
            support::random_vec3(&mut rng, 8.0).x,
            support::random_vec3(&mut rng, 8.0).z,
        );
        let y = hill(x, z) + 0.2 + 0.3 * (i % 3) as f32;
        bodies.push(Body {
            shape: BOX + (i % 5) as u32,
            pose: Pose::new(
                DVec3::new(x.into(), y.into(), z.into()),
                random_rotation(&mut rng),
            ),
        });
    }
    bodies.push(Body {
        shape: TERRAIN,
        pose: Pose::new(DVec3::new(0.0, 0.0, 0.0), Quat::IDENTITY),
    });
    bodies
}

/// Every convex body against both terrain bodies, half of the pairs given high index first.
fn mesh_pairs(bodies: &[Body]) -> Vec<[u32; 2]> {
    let last = bodies.len() as u32 - 1;
    (2..last)
        .flat_map(|b| [[0, b], [b, 0], [b, last], [last, b]])
        .collect()
}

#[test]
fn static_pairs_are_refused_at_the_door_naming_the_pair() {
    let shapes = shapes();
    let bodies = bodies(4, 1);
    let last = bodies.len() as u32 - 1;
    let cpu = CpuNarrowphase::new(&shapes);
    for (pairs, message) in [
        (
            vec![[0, 2], [0, last]],
            "pairs[1]: two triangle meshes cannot be tested against each other (meshes are static)",
        ),
        (
            vec![[2, 3], [4, 0], [1, 0]],
            "pairs[2]: a triangle mesh and a half-space cannot be tested against each other (both are static)",
        ),
        (
            vec![[last, 1]],
            "pairs[0]: a triangle mesh and a half-space cannot be tested against each other (both are static)",
        ),
    ] {
        let error = cpu.collide(&bodies, &pairs, 0.0).unwrap_err();
        assert_eq!(error.to_string(), message);
        let error = ValidatedBatch::new_on_this_thread(&shapes, &bodies, &pairs, 0.0).unwrap_err();
        assert_eq!(error.to_string(), message);
    }
    // A batch checked against a list with a mesh elsewhere is not accepted.
    let batch = ValidatedBatch::new(&shapes, &bodies, &[[0, 2]], 0.0).unwrap();
    let mut moved = shapes.clone();
    moved.swap(0, 3);
    assert_eq!(batch.check_shapes(&moved).unwrap_err().path, "shapes");
}

#[test]
fn mesh_pairs_agree_in_every_order_and_on_every_cpu_entry_point() {
    let shapes = shapes();
    let bodies = bodies(60, 2);
    let pairs = mesh_pairs(&bodies);
    let margin = 0.05;
    let cpu = CpuNarrowphase::new(&shapes);
    let results = cpu.collide(&bodies, &pairs, margin).unwrap();
    let touching = results.iter().filter(|m| m.is_some()).count();
    assert!(
        touching > pairs.len() / 4 && touching < pairs.len(),
        "{touching} of {} pairs touch",
        pairs.len()
    );
    for quad in results.chunks(4) {
        // [mesh, b], [b, mesh], [b, mesh'], [mesh', b]: one contact, the normal from the pair's
        // first body to its second, the same mesh ids whichever body comes first.
        let [mesh_first, body_first, body_first_hi, mesh_first_hi] = quad else {
            unreachable!()
        };
        assert_eq!(mesh_first.is_some(), body_first.is_some());
        let (Some(m), Some(b)) = (mesh_first, body_first) else {
            continue;
        };
        assert_eq!(b.normal, -m.normal);
        assert_eq!((b.separation, b.points()), (m.separation, m.points()));
        assert_eq!(
            body_first_hi, body_first,
            "canonical order must not change the result"
        );
        assert_eq!(mesh_first_hi, mesh_first);
        // From the mesh (at the bottom) up into the body.
        assert!(m.normal.y > 0.3, "{m:?}");
        for p in m.points() {
            let triangle = p.id.0 >> 13;
            assert!((triangle as usize) < 2 * 40 * 40, "{:?}", p.id);
        }
    }
    // The other entry points: the same manifolds bit for bit.
    support::assert_cpu_entry_points_agree(&cpu, &bodies, &pairs, margin, &results);
}

#[test]
fn a_box_resting_on_a_flat_mesh_gets_the_floors_normal_and_mesh_ids_both_ways() {
    let floor = Shape::from(terrain(8, 4.0, 0.0).unwrap());
    let cube = Shape::Cuboid(Cuboid::new(Vec3::splat(0.5)).unwrap());
    let shapes = vec![cube, floor];
    let bodies = vec![
        Body {
            shape: 0,
            pose: Pose::new(DVec3::new(0.3, 0.49, -0.2), Quat::from_rotation_y(0.4)),
        },
        Body {
            shape: 1,
            pose: Pose::IDENTITY,
        },
    ];
    let results = CpuNarrowphase::new(&shapes)
        .collide(&bodies, &[[0, 1], [1, 0]], 0.0)
        .unwrap();
    let (box_first, mesh_first): (&Manifold, &Manifold) =
        (results[0].as_ref().unwrap(), results[1].as_ref().unwrap());
    assert!(box_first.normal.abs_diff_eq(-Vec3::Y, 1e-5), "{box_first:?}");
    assert!(mesh_first.normal.abs_diff_eq(Vec3::Y, 1e-5), "{mesh_first:?}");
    assert_eq!(box_first.point_count(), 4);
    assert!((box_first.separation + 0.01).abs() < 1e-4);
    for (p, q) in box_first.points().iter().zip(mesh_first.points()) {
        assert_eq!(p.id, q.id, "mesh ids do not depend on the order");
        // The mesh's own id layout: the triangle reference face (kind FACE_A) in bits 11-12.
        assert_eq!((p.id.0 >> 11) & 3, FeatureId::FACE_A, "{:?}", p.id);
        assert_eq!(p.id, mesh_feature_id(p.id.0 >> 13, local_of(p.id)));
    }
}

/// The per-triangle id a mesh id was packed from (kind, flag and both features).
fn local_of(id: FeatureId) -> FeatureId {
    FeatureId::new(
        (id.0 >> 11) & 3,
        (id.0 >> 10) & 1 == 1,
        (id.0 >> 8) & 3,
        id.0 & 0xff,
    )
}

#[test]
fn broadphase_boxes_hold_the_mesh_and_static_pairs_are_never_listed() {
    let shapes = shapes();
    let mesh = shapes[TERRAIN as usize].as_trimesh().unwrap();
    let mut rng = seeded_rng(3);
    for _ in 0..50 {
        let pose = Pose::new(
            support::random_vec3(&mut rng, 100.0).as_dvec3(),
            random_rotation(&mut rng),
        );
        let b = world_aabb(&shapes[TERRAIN as usize], &pose);
        for &v in mesh.vertices() {
            let p = pose.transform_dpoint(v.as_dvec3());
            assert!(
                p.cmpge(b.min.as_dvec3()).all() && p.cmple(b.max.as_dvec3()).all(),
                "{p} outside {b:?}"
            );
        }
    }
    let bodies = bodies(30, 4);
    let pairs = candidate_pairs(&shapes, &bodies, 0.05);
    let last = bodies.len() as u32 - 1;
    assert!(!pairs.contains(&[0, last]) && !pairs.contains(&[0, 1]) && !pairs.contains(&[1, last]));
    // Every touching mesh pair is listed.
    let cpu = CpuNarrowphase::new(&shapes);
    let all = mesh_pairs(&bodies);
    for (pair, m) in all.iter().zip(cpu.collide(&bodies, &all, 0.05).unwrap()) {
        let key = [pair[0].min(pair[1]), pair[0].max(pair[1])];
        assert!(
            m.is_none() || pairs.contains(&key),
            "{pair:?} touches but is not listed"
        );
    }
    assert!(cpu.collide(&bodies, &pairs, 0.05).is_ok());
}

#[test]
fn rays_hit_the_nearest_triangle_from_either_side() {
    let mesh = terrain(40, 10.0, 0.6).unwrap();
    let local = |origin: Vec3, direction: Vec3| LocalRay {
        origin,
        direction: direction.normalize(),
        max_distance: 100.0,
    };
    let mut rng = seeded_rng(5);
    for _ in 0..200 {
        let (x, z) = (
            support::random_vec3(&mut rng, 9.0).x,
            support::random_vec3(&mut rng, 9.0).z,
        );
        // From above: the front face, the normal up.
        let (hit, triangle) = cast_trimesh(&mesh, &local(Vec3::new(x, 5.0, z), -Vec3::Y)).unwrap();
        let y = 5.0 - hit.distance;
        assert!((y - hill(x, z)).abs() < 0.05, "height {y} at ({x}, {z})");
        assert!(hit.normal.y > 0.5 && hit.normal == mesh.plane(triangle).normal);
        assert!(
            mesh.triangle(triangle)
                .contains_projection(Vec3::new(x, y, z) + 1e-4 * hit.normal)
        );
        // From below: the same triangle's back, the normal turned toward the ray.
        let (below, other) = cast_trimesh(&mesh, &local(Vec3::new(x, -5.0, z), Vec3::Y)).unwrap();
        assert!((-5.0 + below.distance - y).abs() < 1e-4);
        assert_eq!(below.normal, -hit.normal, "triangle {other} vs {triangle}");
    }
    // Through a seam (x on a grid line): hit, not missed between two triangles.
    for k in 0..40 {
        let x = -10.0 + k as f32 * 0.5;
        assert!(cast_trimesh(&mesh, &local(Vec3::new(x, 3.0, x * 0.37), -Vec3::Y)).is_some());
    }
    // A slanted ray over the hills meets the first hill it reaches, not a farther one.
    let (hit, _) = cast_trimesh(
        &mesh,
        &local(Vec3::new(-9.5, 0.5, 0.0), Vec3::new(1.0, -0.01, 0.0)),
    )
    .unwrap();
    let p = Vec3::new(-9.5, 0.5, 0.0) + hit.distance * Vec3::new(1.0, -0.01, 0.0).normalize();
    let first = (0..10_000)
        .map(|i| Vec3::new(-9.5, 0.5, 0.0) + i as f32 * 2e-3 * Vec3::new(1.0, -0.01, 0.0).normalize())
        .find(|q| q.y <= hill(q.x, q.z))
        .unwrap();
    assert!(p.distance(first) < 0.1, "{p} vs {first}");
    // Outside the mesh, or short of it: nothing.
    assert!(cast_trimesh(&mesh, &local(Vec3::new(11.0, 3.0, 0.0), -Vec3::Y)).is_none());
    let short = LocalRay {
        max_distance: 1.0,
        ..local(Vec3::new(0.0, 3.0, 0.0), -Vec3::Y)
    };
    assert!(cast_trimesh(&mesh, &short).is_none());
}

#[test]
fn the_ray_caster_finds_a_terrain_body_under_a_box() {
    let shapes = shapes();
    let mut bodies = bodies(0, 6);
    bodies.pop();
    bodies.push(Body {
        shape: BOX,
        pose: Pose::new(DVec3::new(2.0, 3.0, 1.0), Quat::IDENTITY),
    });
    // Moved and turned: the ray works in the mesh's frame.
    bodies[0].pose = Pose::new(DVec3::new(0.0, -1.0, 0.0), Quat::from_rotation_y(0.3));
    let down = |x: f64, z: f64| Ray::new(DVec3::new(x, 10.0, z), -Vec3::Y, None).unwrap();
    let rays = [down(2.0, 1.0), down(-3.0, 4.0), down(50.0, 0.0)];
    let hits = CpuRaycaster::new(&shapes).cast(&bodies, &rays, false).unwrap();
    let order: Vec<Vec<u32>> = hits.iter().map(|h| h.iter().map(|h| h.body).collect()).collect();
    assert_eq!(order, [vec![2, 0, 1], vec![0, 1], vec![1]]);
    let terrain_hit = hits[1][0];
    let local = bodies[0].pose.inverse_transform_point(terrain_hit.point);
    assert!((local.y - hill(local.x, local.z)).abs() < 0.05, "{local}");
    assert!(terrain_hit.normal.y > 0.5);
    let closest = CpuRaycaster::new(&shapes).cast(&bodies, &rays, true).unwrap();
    assert_eq!(closest[1], vec![terrain_hit]);
}

#[test]
fn gpu_mesh_pairs_agree_with_the_cpu_within_the_contract() {
    let shapes = shapes();
    let bodies = bodies(40, 7);
    let mut pairs = mesh_pairs(&bodies);
    // Convex pairs among them too, so the kernels run beside the mesh pass.
    pairs.extend((2..bodies.len() as u32 - 2).map(|b| [b, b + 1]));
    pairs.extend((2..bodies.len() as u32 - 1).map(|b| [1, b]));
    let margin = 0.05;
    let cpu = CpuNarrowphase::new(&shapes)
        .collide(&bodies, &pairs, margin)
        .unwrap();
    let Some(mut gpu) = gpu_or_skip(&shapes) else {
        return;
    };
    for clipping in [
        hullsat::narrowphase::gpu::Clipping::Gpu,
        hullsat::narrowphase::gpu::Clipping::Cpu,
    ] {
        if gpu.set_clipping(clipping).is_err() {
            continue;
        }
        let results = gpu.collide(&bodies, &pairs, margin).unwrap();
        let tally = compare_batch(&shapes, &bodies, &pairs, margin, &results, &cpu)
            .unwrap_or_else(|e| panic!("{clipping:?}: {e}"));
        assert!(tally.cpu_manifolds > pairs.len() / 8, "{tally:?}");
        let mesh_pairs = 4 * (bodies.len() - 3);
        if clipping == hullsat::narrowphase::gpu::Clipping::Gpu {
            // The mesh pass ran them: few left to the host (llvmpipe's loop budget).
            let touching = cpu[..mesh_pairs].iter().flatten().count();
            assert!(gpu.timings().host_pairs < touching / 2, "{:?}", gpu.timings());
        } else {
            // The CPU path computed them: the CPU's bit for bit.
            assert_eq!(results[..mesh_pairs], cpu[..mesh_pairs]);
        }
    }
    // The same door as the CPU's.
    let error = gpu
        .collide(&bodies, &[[0, bodies.len() as u32 - 1]], 0.0)
        .unwrap_err();
    assert!(
        error.to_string().contains("pairs[0]: two triangle meshes"),
        "{error}"
    );
}

#[test]
fn the_gpu_broadphase_lists_every_cpu_mesh_pair_and_no_static_pair() {
    let shapes = shapes();
    let mut bodies = bodies(40, 8);
    // Turned and moved terrains: their boxes are rotated local boxes on the GPU.
    let last = bodies.len() - 1;
    bodies[last].pose = Pose::new(
        DVec3::new(3.0, 0.5, -2.0),
        Quat::from_rotation_z(0.2) * Quat::from_rotation_y(0.7),
    );
    let Some(cpu) = gpu_broadphase_covers_cpu(&shapes, &bodies, 0.05) else {
        return;
    };
    let mesh_pairs = cpu.iter().filter(|p| p[0] == 0 || p[1] == last as u32).count();
    assert!(mesh_pairs > 20, "{mesh_pairs}");
}

//! A compound body against a triangle mesh: two boxes resting on tessellated floors (the outer
//! corners, the floor's normal at every seam), either order, feature ids, parry3d on random
//! scenes (each child against parry's `TriMesh`), and the pair in the batch, the JSON scene and
//! the GPU mesh pass (host and resident APIs, judged by the GPU = CPU contract on a flat floor
//! and a bumpy terrain under compounds of every child kind, near the origin and 1e6 from it,
//! either order; its work item capacity counting a compound's items).

mod support;

use glam::{DVec3, Quat, Vec3};
use hullsat::constants::CONTACT_REDUCTION_TOLERANCE;
use hullsat::contact::{TriMeshScratch, collide_shapes, collide_trimesh_compound};
use hullsat::contract::compare_batch;
use hullsat::scene::json::parse_scene_json;
use hullsat::shape::world_aabb;
use hullsat::trimesh::compound_mesh_feature_id;
use hullsat::{
    Body, Compound, ContactPoint, CpuNarrowphase, Cuboid, FeatureId, Manifold, Pose, Shape, TriMesh,
};
use parry3d::query::PointQuery;
use rand::RngExt;
use support::parry::{to_parry_pose, to_parry_shape};
use support::shapes::random_rotation;
use support::worlds::{bumpy_terrain, child, grid_floor, parry_trimesh, random_compound};
use support::{gpu_broadphase_covers_cpu, gpu_or_skip, seeded_rng};

/// The boxes' half extents.
const HALF: Vec3 = Vec3::new(0.5, 0.3, 0.4);

/// Two boxes side by side along x, 0.4 apart: child 0 over x ∈ [-1.2, -0.2], child 1 over
/// x ∈ [0.2, 1.2], both with their bottoms at y = -0.3.
fn two_boxes() -> Compound {
    let cuboid = || Shape::Cuboid(Cuboid::new(HALF).unwrap());
    Compound::new(vec![
        child(cuboid(), Vec3::new(-0.7, 0.0, 0.0), Quat::IDENTITY),
        child(cuboid(), Vec3::new(0.7, 0.0, 0.0), Quat::IDENTITY),
    ])
    .unwrap()
}

/// The compound's child and the triangle a [`compound_mesh_feature_id`] names.
fn child_and_triangle(id: FeatureId) -> (u32, u32) {
    ((id.0 >> 10) & 0x3f, id.0 >> 16)
}

/// The distance from `q` to triangle `t` of `mesh` (mesh frame), by parry3d's projection.
fn distance_to_triangle(mesh: &TriMesh, t: u32, q: Vec3) -> f32 {
    let vector = |v: Vec3| parry3d::math::Vector::new(v.x, v.y, v.z);
    let [a, b, c] = mesh.triangles()[t as usize].map(|v| vector(mesh.vertices()[v as usize]));
    parry3d::shape::Triangle::new(a, b, c).distance_to_point(
        &to_parry_pose(&Pose::IDENTITY),
        vector(q),
        false,
    )
}

fn collide(mesh: &TriMesh, compound: &Compound, pose: &Pose, margin: f32) -> Option<Manifold> {
    collide_trimesh_compound(
        mesh,
        &Pose::IDENTITY,
        compound,
        pose,
        margin,
        &mut TriMeshScratch::default(),
    )
}

#[test]
fn two_boxes_on_a_tessellated_floor_get_the_outer_corners_and_the_floor_normal() {
    let meshes = [
        grid_floor(1, 5.0, 0.0, 1),
        grid_floor(4, 5.0, 0.0, 1),
        grid_floor(10, 5.0, 0.0, 1),
        grid_floor(37, 5.0, 0.25, 2),
    ];
    let compound = two_boxes();
    let mut rng = seeded_rng(31);
    let depth = 0.01;
    for mesh in &meshes {
        // On grid vertices and edges, sliding along x across seams, then anywhere.
        let mut places: Vec<(Vec3, f32)> = vec![(Vec3::ZERO, 0.0), (Vec3::new(2.5, 0.0, 2.5), 0.0)];
        places.extend((0..60).map(|k| (Vec3::new(-2.5 + 0.0833 * k as f32, 0.0, 0.3), 0.2)));
        places.extend((0..40).map(|_| {
            let at = Vec3::new(rng.random_range(-3.0..3.0), 0.0, rng.random_range(-3.0..3.0));
            (at, rng.random_range(0.0..6.3f32))
        }));
        for (place, yaw) in places {
            let rotation = Quat::from_rotation_y(yaw);
            let pose = Pose::new(place + Vec3::Y * (HALF.y - depth), rotation);
            let m = collide(mesh, &compound, &pose, 0.0).expect("the boxes rest on the floor");
            assert!(m.normal.angle_between(Vec3::Y).to_degrees() < 0.5, "{m:?}");
            assert!((m.separation + depth).abs() < 1e-5, "{m:?}");
            assert_eq!(m.point_count(), 4, "{place} {m:?}");
            for (sx, box_child) in [(-1.0, 0), (1.0, 1)] {
                for sz in [-1.0, 1.0] {
                    let corner = place + rotation * Vec3::new(sx * 1.2, 0.0, sz * HALF.z);
                    let expected = corner - Vec3::Y * (0.5 * depth);
                    // The reduction may keep a clipped point on a box edge whose height over a
                    // diagonal of the footprint is within its tie tolerance of the corner's: the
                    // long edges meet the diagonal at atan(0.4 / 1.2), so up to 1 / sin of that.
                    let slope = (HALF.z / 1.2).atan().sin();
                    let ties = CONTACT_REDUCTION_TOLERANCE * compound.size() / slope;
                    let p = m
                        .points()
                        .iter()
                        .find(|p| (p.position.as_vec3() - expected).length() <= ties + 1e-5)
                        .unwrap_or_else(|| panic!("corner {corner} missing: {m:?}"));
                    assert!((p.depth - depth).abs() < 1e-5, "{m:?}");
                    // The id names the box and a triangle under the point.
                    let (c, t) = child_and_triangle(p.id);
                    assert_eq!(c, box_child, "{m:?}");
                    let to_triangle = distance_to_triangle(mesh, t, p.position.as_vec3());
                    assert!(to_triangle < 0.5 * depth + 1e-5, "{m:?}: triangle {t}");
                }
            }
        }
    }
}

#[test]
fn either_order_gives_the_same_contact_reversed_and_ids_are_stable() {
    let mesh = Shape::from(grid_floor(10, 5.0, 0.2, 3));
    let compound = Shape::from(two_boxes());
    let pose = Pose::new(
        DVec3::new(0.3, 0.28, -0.2),
        Quat::from_rotation_y(0.4) * Quat::from_rotation_x(0.01),
    );
    let m = collide_shapes(&mesh, &Pose::IDENTITY, &compound, &pose, 0.01).unwrap();
    let mut r = collide_shapes(&compound, &pose, &mesh, &Pose::IDENTITY, 0.01).unwrap();
    assert_eq!(r.normal, -m.normal);
    r.swap_keeping_ids();
    assert_eq!(r, m);
    // A tiny motion keeps every contact on its triangle and child: the same ids.
    let moved = Pose::new(pose.translation + DVec3::new(1e-4, -1e-5, 1e-4), pose.rotation);
    let n = collide_shapes(&mesh, &Pose::IDENTITY, &compound, &moved, 0.01).unwrap();
    let ids = |m: &Manifold| {
        let mut ids: Vec<u32> = m.points().iter().map(|p| p.id.0).collect();
        ids.sort();
        ids
    };
    assert_eq!(ids(&m), ids(&n), "{m:?}\n{n:?}");
    assert_eq!(
        compound_mesh_feature_id(7, 3, FeatureId::new(FeatureId::FACE_B, true, 9, 2)),
        FeatureId(7 << 16 | 3 << 10 | FeatureId::FACE_B << 8 | 1 << 7 | 2 << 5 | 9)
    );
}

/// Compounds dropped on a bumpy terrain against parry3d's `TriMesh` with each child alone (the
/// mesh routine's reference in tests/trimesh.rs, per child): the verdict, the deepest child's
/// distance where it is shallow, the normal where parry's deepest contact is a face's, and
/// every point on the triangle and the child its id names.
#[test]
fn contacts_agree_with_parry_on_each_child() {
    let mesh = bumpy_terrain(16, 8.0, 0.05, 41);
    let parry_mesh = parry_trimesh(&mesh);
    let mut rng = seeded_rng(42);
    let margin = 0.02;
    let mut scratch = TriMeshScratch::default();
    let (mut compared, mut normals, mut points) = (0, 0, 0);
    for _ in 0..400 {
        let compound = random_compound(&mut rng);
        let size = compound.size();
        // Turned at random, its lowest point from 0.08 below the terrain's mid-plane to 0.06 above.
        let place = Vec3::new(rng.random_range(-5.0..5.0), 0.0, rng.random_range(-5.0..5.0));
        let rotation = random_rotation(&mut rng);
        let low = world_aabb(&Shape::from(compound.clone()), &Pose::new(place, rotation))
            .min
            .y as f32;
        let pose = Pose::new(place + Vec3::Y * (rng.random_range(-0.08..0.06) - low), rotation);
        let ours = collide_trimesh_compound(&mesh, &Pose::IDENTITY, &compound, &pose, margin, &mut scratch);
        let parts: Vec<_> = compound
            .children()
            .iter()
            .map(|c| {
                (
                    to_parry_shape(&c.shape).unwrap(),
                    to_parry_pose(&pose.mul_isometry(&c.pose)),
                )
            })
            .collect();
        let contacts: Vec<_> = parts
            .iter()
            .filter_map(|(shape, at)| {
                parry3d::query::contact(
                    &to_parry_pose(&Pose::IDENTITY),
                    &parry_mesh,
                    at,
                    shape.as_ref(),
                    margin,
                )
                .unwrap()
            })
            .collect();
        // A child pushed out of the back (parry's mesh is two-sided, ours one-sided): not compared.
        let front = |c: &parry3d::query::Contact| {
            Vec3::new(c.normal1.x, c.normal1.y, c.normal1.z).dot(mesh.plane(c.subshape1).normal) > 0.0
        };
        if !contacts.iter().all(front) {
            continue;
        }
        let theirs = contacts.into_iter().min_by(|a, b| a.dist.total_cmp(&b.dist));
        // Children deeper than the terrain's bumps may be pushed out differently (one-sided).
        let depth_band = 0.1 * size;
        match (&ours, &theirs) {
            (Some(m), Some(c)) => {
                if c.dist < -depth_band {
                    continue;
                }
                compared += 1;
                assert!(
                    (m.separation - c.dist).abs() < 0.02 * size + 1e-3,
                    "{pose:?}: ours {m:?} parry {c:?}"
                );
                let normal = Vec3::new(c.normal1.x, c.normal1.y, c.normal1.z);
                if normal.angle_between(mesh.plane(c.subshape1).normal).to_degrees() < 0.1 {
                    normals += 1;
                    assert!(
                        m.normal.angle_between(normal).to_degrees() < 12.0,
                        "{pose:?}: ours {m:?} parry {c:?}"
                    );
                }
                // Touching points in the shallow band, but edge pairs: an edge-pair point is
                // midway between the two edges' closest points, which may lie far apart when
                // the edge axis is not where the edges meet (one body alone as well).
                let region = |p: &&ContactPoint| {
                    (0.0..depth_band).contains(&p.depth) && (p.id.0 >> 8) & 3 != FeatureId::EDGE_PAIR
                };
                for p in m.points().iter().filter(region) {
                    points += 1;
                    let (k, t) = child_and_triangle(p.id);
                    let at = p.position.as_vec3();
                    let q = parry3d::math::Vector::new(at.x, at.y, at.z);
                    let to_mesh = parry_mesh.distance_to_point(&to_parry_pose(&Pose::IDENTITY), q, false);
                    let (shape, child_pose) = &parts[k as usize];
                    // Off the child's surface by no more than half the depth, either side.
                    let to_child = shape.distance_to_point(child_pose, q, false);
                    // Midway between the surfaces: half the depth from each, up to rounding.
                    let slack = 0.5 * p.depth.abs() + 1e-3 * size + 1e-4;
                    assert!(
                        to_mesh <= slack && to_child <= slack,
                        "{pose:?}: point {p:?} is {to_mesh} from the mesh, {to_child} from child {k}: {m:?}"
                    );
                    // The triangle named: the one touched, or its neighbour whose face normal a
                    // point beside an inactive edge took (a ball, a capsule).
                    let to_triangle = distance_to_triangle(&mesh, t, at);
                    assert!(
                        to_triangle <= 0.1 * size,
                        "{pose:?}: point {p:?} {to_triangle} from triangle {t}"
                    );
                }
            }
            (Some(m), None) => assert!(m.separation > margin - 1e-3 * size, "only ours: {pose:?} {m:?}"),
            (None, Some(c)) => assert!(
                c.dist > margin - 1e-3 * size || c.dist < -depth_band,
                "only parry: {pose:?} {c:?}"
            ),
            (None, None) => {}
        }
    }
    println!("compared {compared} pairs, {normals} normals, {points} points");
    assert!(
        compared > 100 && normals > 50,
        "too few compared: {compared} {normals}"
    );
}

/// Shape indices of [`batch_shapes`].
const TERRAIN: u32 = 0;
const BOXES: u32 = 1;

/// The terrain, two boxes, and random compounds.
fn batch_shapes() -> Vec<Shape> {
    let mut rng = seeded_rng(51);
    let mut shapes = vec![
        Shape::from(hullsat::generate::terrain(16, 6.0, 0.3).unwrap()),
        Shape::from(two_boxes()),
    ];
    shapes.extend((0..4).map(|_| Shape::from(random_compound(&mut rng))));
    shapes
}

/// The terrain (body 0) and `n` compounds scattered just over it.
fn batch_bodies(shapes: &[Shape], n: usize, seed: u64) -> Vec<Body> {
    let mut rng = seeded_rng(seed);
    let mut bodies = vec![Body {
        shape: TERRAIN,
        pose: Pose::IDENTITY,
    }];
    bodies.extend((0..n).map(|i| {
        let p = support::random_vec3(&mut rng, 5.0);
        Body {
            shape: BOXES + (i % (shapes.len() - 1)) as u32,
            pose: Pose::new(DVec3::new(p.x.into(), 0.3, p.z.into()), random_rotation(&mut rng)),
        }
    }));
    bodies
}

#[test]
fn compound_mesh_pairs_agree_in_either_order_on_every_cpu_entry_point() {
    let shapes = batch_shapes();
    let bodies = batch_bodies(&shapes, 40, 52);
    let pairs: Vec<[u32; 2]> = (1..bodies.len() as u32).flat_map(|b| [[0, b], [b, 0]]).collect();
    let margin = 0.02;
    let cpu = CpuNarrowphase::new(&shapes);
    let results = cpu.collide(&bodies, &pairs, margin).unwrap();
    let touching = results.iter().filter(|m| m.is_some()).count();
    assert!(touching > pairs.len() / 4, "{touching} of {} touch", pairs.len());
    let mesh = shapes[TERRAIN as usize].as_trimesh().unwrap();
    let mut scratch = TriMeshScratch::default();
    for (given, both) in pairs.chunks(2).zip(results.chunks(2)) {
        // The mesh routine itself, mesh as A; the other order reversed with the same ids.
        let body = &bodies[given[0][1] as usize];
        let compound = shapes[body.shape as usize].as_compound().unwrap();
        let direct =
            collide_trimesh_compound(mesh, &Pose::IDENTITY, compound, &body.pose, margin, &mut scratch);
        assert_eq!(both[0], direct, "{given:?}");
        let mut reversed = direct;
        if let Some(m) = reversed.as_mut() {
            m.swap_keeping_ids();
        }
        assert_eq!(both[1], reversed, "{given:?}");
    }
    support::assert_cpu_entry_points_agree(&cpu, &bodies, &pairs, margin, &results);
    // The broadphase lists every touching pair.
    let listed = hullsat::broadphase::candidate_pairs(&shapes, &bodies, margin);
    for (b, m) in (1..).zip(results.iter().step_by(2)) {
        assert!(
            m.is_none() || listed.contains(&[0, b]),
            "body {b} touches the terrain, not listed"
        );
    }
}

#[test]
fn a_json_scene_with_a_mesh_and_a_compound_collides_them() {
    let scene = r#"{
        "shapes": [
            {"trimesh": {"vertices": [[-4, 0, -4], [-4, 0, 4], [4, 0, 4], [4, 0, -4]],
                         "triangles": [[0, 1, 3], [3, 1, 2]]}},
            {"compound": {"children": [
                {"shape": {"box": {"half_extents": [0.5, 0.3, 0.4]}}, "position": [-0.7, 0, 0]},
                {"shape": {"box": {"half_extents": [0.5, 0.3, 0.4]}}, "position": [0.7, 0, 0]}
            ]}}
        ],
        "bodies": [
            {"shape": 0, "position": [0, 0, 0], "rotation": [0, 0, 0, 1]},
            {"shape": 1, "position": [0.2, 0.29, 0.1], "rotation": [0, 0, 0, 1]}
        ],
        "pairs": [[0, 1], [1, 0]]
    }"#;
    let scene = parse_scene_json(scene).unwrap();
    let pairs = scene.pairs.clone().unwrap();
    let results = CpuNarrowphase::new(&scene.shapes)
        .collide(&scene.bodies, &pairs, scene.margin)
        .unwrap();
    let (up, down) = (results[0].unwrap(), results[1].unwrap());
    assert!(up.normal.abs_diff_eq(Vec3::Y, 1e-6) && down.normal.abs_diff_eq(-Vec3::Y, 1e-6));
    assert!((up.separation + 0.01).abs() < 1e-5, "{up:?}");
    assert_eq!(up.point_count(), 4, "{up:?}");
    let children: Vec<u32> = up.points().iter().map(|p| child_and_triangle(p.id).0).collect();
    assert_eq!(children.iter().filter(|&&c| c == 0).count(), 2, "{up:?}");
}

#[test]
fn gpu_compound_mesh_pairs_agree_with_the_cpu_and_the_gpu_broadphase_lists_them() {
    let shapes = batch_shapes();
    let bodies = batch_bodies(&shapes, 30, 61);
    let mut pairs: Vec<[u32; 2]> = (1..bodies.len() as u32).flat_map(|b| [[0, b], [b, 0]]).collect();
    let host = pairs.len();
    // Compound pairs beside them.
    pairs.extend((1..bodies.len() as u32 - 1).map(|b| [b, b + 1]));
    let margin = 0.02;
    let cpu = CpuNarrowphase::new(&shapes)
        .collide(&bodies, &pairs, margin)
        .unwrap();
    assert!(cpu[..host].iter().filter(|m| m.is_some()).count() > host / 4);
    let Some(mut gpu) = gpu_or_skip(&shapes) else {
        return;
    };
    let results = gpu.collide(&bodies, &pairs, margin).unwrap();
    compare_batch(&shapes, &bodies, &pairs, margin, &results, &cpu).unwrap();
    // Only pairs llvmpipe's loop budget cut short go to the host.
    let touching = cpu[..host].iter().flatten().count();
    assert!(gpu.timings().host_pairs < touching / 2, "{:?}", gpu.timings());
    let listed = gpu_broadphase_covers_cpu(&shapes, &bodies, margin).unwrap();
    let with_terrain = listed.iter().filter(|p| p[0] == 0).count();
    assert!(with_terrain > 5, "{with_terrain} terrain pairs listed");
}

/// Shape indices of [`terrain_shapes`].
const FLOOR: u32 = 0;
const BUMPY: u32 = 1;

/// A flat floor of 8 x 8 jittered cells and a bumpy terrain over `[-4, 4]^2`, then a compound
/// with a child of every convex kind (box, sphere, capsule, cylinder, hull) and [`two_boxes`].
fn terrain_shapes() -> Vec<Shape> {
    let mut rng = seeded_rng(71);
    let hull = support::shapes::random_shape(&mut rng, support::shapes::Family::Hull);
    let hull = support::worlds::shrink(hull.clone(), 0.4 / hull.bounding_radius().max(0.4));
    let every_kind = Compound::new(vec![
        child(
            Shape::Cuboid(Cuboid::new(Vec3::new(0.3, 0.2, 0.25)).unwrap()),
            Vec3::new(-0.8, 0.0, 0.0),
            Quat::IDENTITY,
        ),
        child(
            Shape::Sphere(hullsat::Sphere::new(0.3).unwrap()),
            Vec3::new(0.8, 0.1, 0.0),
            Quat::IDENTITY,
        ),
        child(
            Shape::Capsule(hullsat::Capsule::new(0.2, 0.3).unwrap()),
            Vec3::new(0.0, 0.0, 0.8),
            Quat::from_rotation_z(1.2),
        ),
        child(
            Shape::Cylinder(hullsat::Cylinder::new(0.25, 0.3).unwrap()),
            Vec3::new(0.0, 0.0, -0.8),
            Quat::from_rotation_x(std::f32::consts::FRAC_PI_2),
        ),
        child(hull, Vec3::new(0.0, 0.2, 0.0), Quat::from_rotation_y(0.7)),
    ])
    .unwrap();
    vec![
        Shape::from(grid_floor(8, 4.0, 0.2, 5)),
        Shape::from(bumpy_terrain(8, 4.0, 0.15, 6)),
        Shape::from(every_kind),
        Shape::from(two_boxes()),
    ]
}

/// The floor (0) and the terrain (1, 20 units along x) at `offset`, then `n` compounds
/// alternating kinds, the first half over the floor and the rest over the terrain, their lowest
/// points from 0.2 below height 0 to 0.05 above, mostly upright, some turned at random.
fn terrain_bodies(shapes: &[Shape], n: usize, seed: u64, offset: DVec3) -> Vec<Body> {
    let mut rng = seeded_rng(seed);
    let terrain_at = DVec3::new(20.0, 0.0, 0.0);
    let mut bodies = vec![
        Body {
            shape: FLOOR,
            pose: Pose::new(offset, Quat::IDENTITY),
        },
        Body {
            shape: BUMPY,
            pose: Pose::new(offset + terrain_at, Quat::IDENTITY),
        },
    ];
    for i in 0..n {
        let shape = 2 + (i % 2) as u32;
        let rotation = match i % 3 {
            0 => Quat::IDENTITY,
            1 => Quat::from_rotation_y(rng.random_range(-3.0f32..3.0)),
            _ => random_rotation(&mut rng),
        };
        let low = world_aabb(&shapes[shape as usize], &Pose::new(DVec3::ZERO, rotation))
            .min
            .y;
        let x = rng.random_range(-2.5f64..2.5);
        let z = rng.random_range(-2.5f64..2.5);
        let y = f64::from(-low) + rng.random_range(-0.2f64..0.05);
        let base = if 2 * i < n { DVec3::ZERO } else { terrain_at };
        bodies.push(Body {
            shape,
            pose: Pose::new(offset + base + DVec3::new(x, y, z), rotation),
        });
    }
    bodies
}

/// Each compound with its mesh, in both orders.
fn terrain_pairs(n: usize) -> Vec<[u32; 2]> {
    (0..n as u32)
        .flat_map(|i| {
            let mesh = if 2 * i < n as u32 { 0 } else { 1 };
            [[mesh, i + 2], [i + 2, mesh]]
        })
        .collect()
}

#[test]
fn gpu_compounds_on_terrain_agree_with_the_cpu_within_the_contract() {
    let shapes = terrain_shapes();
    let n = 12;
    let pairs = terrain_pairs(n);
    let margin = 0.02;
    let Some(mut gpu) = gpu_or_skip(&shapes) else {
        return;
    };
    for offset in [DVec3::ZERO, DVec3::new(1.0e6, -3.0e5, 7.0e5)] {
        let bodies = terrain_bodies(&shapes, n, 72, offset);
        let cpu = CpuNarrowphase::new(&shapes)
            .collide(&bodies, &pairs, margin)
            .unwrap();
        let results = gpu.collide(&bodies, &pairs, margin).unwrap();
        let tally = compare_batch(&shapes, &bodies, &pairs, margin, &results, &cpu)
            .unwrap_or_else(|e| panic!("at {offset}: {e}"));
        let touching = cpu.iter().flatten().count();
        assert!(touching > pairs.len() / 2, "{touching} of {} touch", pairs.len());
        let host = gpu.timings().host_pairs;
        eprintln!("at {offset}: {touching} touching, {host} left to the host, {tally:?}");
        assert!(
            host < touching / 2,
            "{host} host pairs of {touching} at {offset}: {tally:?}"
        );
    }
}

#[test]
fn resident_compound_mesh_pairs_are_listed_once_on_the_gpu() {
    use hullsat::narrowphase::gpu::layout::{MANIFOLD_CLIPPED, MANIFOLD_HOST};
    let shapes = terrain_shapes();
    let n = 8;
    let bodies = terrain_bodies(&shapes, n, 73, DVec3::new(-2.0e3, 10.0, 5.0e2));
    let pairs = terrain_pairs(n);
    let margin = 0.02;
    let Some(mut gpu) = gpu_or_skip(&shapes) else {
        return;
    };
    let scene = support::ResidentScene::new(gpu.device(), &bodies, &pairs);
    let batch = scene.batch(margin);
    let entries = support::read_resident(&mut gpu, &batch);
    let mut listed: Vec<u32> = entries.iter().map(|e| e.pair).collect();
    listed.sort_unstable();
    assert!(
        listed.windows(2).all(|w| w[0] != w[1]),
        "a pair listed twice: {listed:?}"
    );
    let results = support::resident_results(&entries, &shapes, &bodies, &pairs, margin);
    let cpu = CpuNarrowphase::new(&shapes)
        .collide(&bodies, &pairs, margin)
        .unwrap();
    compare_batch(&shapes, &bodies, &pairs, margin, &results, &cpu).unwrap_or_else(|e| panic!("{e}"));
    // MANIFOLD_HOST only where the merge gathered more points than its polygon buffer holds
    // (MAX_CLIP_VERTICES: docs/design/trimesh.md), so only on touching pairs.
    let touching = cpu.iter().flatten().count();
    let on_gpu = entries.iter().filter(|e| e.status == MANIFOLD_CLIPPED).count();
    let host: Vec<u32> = entries
        .iter()
        .filter(|e| e.status == MANIFOLD_HOST)
        .map(|e| e.pair)
        .collect();
    eprintln!("{on_gpu} of {touching} touching pairs on the GPU, host: {host:?}");
    assert!(
        touching > 2 && on_gpu > 2,
        "{on_gpu} of {touching} on the GPU, host {host:?}"
    );
    assert!(host.iter().all(|&p| cpu[p as usize].is_some()), "{host:?}");
}

#[test]
fn the_mesh_capacity_counts_a_compounds_items_child_by_child() {
    let shapes = terrain_shapes();
    let margin = 0.02;
    // Two boxes resting flat on the floor, away from the grid lines.
    let pose = Pose::new(DVec3::new(0.13, 0.29, 0.37), Quat::IDENTITY);
    let bodies = [
        Body {
            shape: FLOOR,
            pose: Pose::IDENTITY,
        },
        Body { shape: 3, pose },
    ];
    let pairs = [[0, 1], [1, 0]];
    let mesh = shapes[FLOOR as usize].as_trimesh().unwrap();
    let compound = shapes[3].as_compound().unwrap();
    // The CPU's midphase per child: its box grown by the margin (the padding is 1e-5 of it).
    let mut found = Vec::new();
    let per_pair: usize = compound
        .children()
        .iter()
        .map(|c| {
            let b = world_aabb(&c.shape, &pose.mul_isometry(&c.pose));
            let grow = Vec3::splat(margin);
            mesh.triangles_in_aabb(b.min - grow, b.max + grow, &mut found);
            found.len()
        })
        .sum();
    assert!(per_pair > 2, "{per_pair}");
    let Some(mut gpu) = gpu_or_skip(&shapes) else {
        return;
    };
    let capacity = per_pair as u32;
    gpu.set_mesh_capacity(capacity).unwrap();
    match gpu.collide(&bodies, &pairs, margin) {
        Err(hullsat::GpuError::MeshCapacity { capacity: c, count }) => {
            assert_eq!((c, count), (capacity, 2 * capacity));
        }
        other => panic!("expected the capacity error, got {other:?}"),
    }
    gpu.set_mesh_capacity(2 * capacity).unwrap();
    let results = gpu.collide(&bodies, &pairs, margin).unwrap();
    let cpu = CpuNarrowphase::new(&shapes)
        .collide(&bodies, &pairs, margin)
        .unwrap();
    compare_batch(&shapes, &bodies, &pairs, margin, &results, &cpu).unwrap();
    assert!(results.iter().all(Option::is_some), "{results:?}");
}

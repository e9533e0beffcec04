//! Triangle meshes: validation at the door, analytic contacts on tessellated planes, no ghost
//! contacts at seams, ridges and corners, feature-id stability, and parry3d's `TriMesh` contacts
//! on random poses.

mod support;

use glam::{Quat, Vec3};
use hullsat::constants::CONTACT_REDUCTION_TOLERANCE;
use hullsat::contact::{TriMeshScratch, collide_trimesh_shape};
use hullsat::trimesh::{MAX_TRIMESH_TRIANGLES, TriMesh, TriMeshError};
use hullsat::{Capsule, ConvexHull, Cuboid, Cylinder, Manifold, Pose, Shape, Sphere};
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64;
use support::parry::{to_parry_pose, to_parry_shape};
use support::shapes::random_rotation;
use support::worlds::{bumpy_terrain, grid_floor, parry_trimesh};

/// The floor `y = 0` over `[-half, half]²` as long slivers: a strip of `n` triangles between the
/// edges `z = ±half`, their corners staggered along x.
fn sliver_floor(n: usize, half: f32) -> TriMesh {
    let mut vertices = Vec::new();
    for i in 0..=n {
        let x = -half + 2.0 * half * i as f32 / n as f32;
        vertices.push(Vec3::new(x, 0.0, -half));
        vertices.push(Vec3::new(x, 0.0, half));
    }
    let mut triangles = Vec::new();
    for i in 0..n as u32 {
        let (a, b, c, d) = (2 * i, 2 * i + 1, 2 * i + 2, 2 * i + 3);
        triangles.push([a, b, c]);
        triangles.push([c, b, d]);
    }
    TriMesh::new(vertices, triangles).unwrap()
}

fn collide(mesh: &TriMesh, shape: &Shape, pose: &Pose, margin: f32) -> Option<Manifold> {
    collide_trimesh_shape(
        mesh,
        &Pose::IDENTITY,
        shape,
        pose,
        margin,
        &mut TriMeshScratch::default(),
    )
}

fn box_shape(half: Vec3) -> Shape {
    Shape::Cuboid(Cuboid::new(half).unwrap())
}

fn angle_degrees(a: Vec3, b: Vec3) -> f32 {
    a.angle_between(b).to_degrees()
}

#[test]
fn validation_names_the_offending_vertex_or_triangle() {
    let v = vec![Vec3::ZERO, Vec3::X, Vec3::Z, Vec3::new(2.0, 0.0, 0.0)];
    assert_eq!(TriMesh::new(v.clone(), vec![]), Err(TriMeshError::Empty));
    assert!(matches!(
        TriMesh::new(v.clone(), vec![[0, 2, 1], [0, 2, 7]]),
        Err(TriMeshError::IndexOutOfRange {
            triangle: 1,
            index: 7,
            vertex_count: 4
        })
    ));
    // A repeated vertex and three collinear ones.
    assert_eq!(
        TriMesh::new(v.clone(), vec![[0, 2, 1], [1, 1, 2]]),
        Err(TriMeshError::Degenerate { triangle: 1 })
    );
    assert_eq!(
        TriMesh::new(v.clone(), vec![[0, 3, 1]]),
        Err(TriMeshError::Degenerate { triangle: 0 })
    );
    let mut bad = v.clone();
    bad[2].y = f32::NAN;
    assert_eq!(
        TriMesh::new(bad, vec![[0, 2, 1]]),
        Err(TriMeshError::NonFinite { vertex: 2 })
    );
    let mut far = v.clone();
    far[3].x = 1e13;
    assert!(matches!(
        TriMesh::new(far, vec![[0, 2, 1]]),
        Err(TriMeshError::OutOfRange { vertex: 3, .. })
    ));
    // The size cap is checked before any triangle is looked at.
    let too_many = vec![[0, 0, 0]; MAX_TRIMESH_TRIANGLES + 1];
    assert_eq!(
        TriMesh::new(v, too_many),
        Err(TriMeshError::TooManyTriangles(MAX_TRIMESH_TRIANGLES + 1))
    );
}

#[test]
fn box_on_a_tessellated_plane_gets_its_four_corners_at_any_tessellation() {
    let meshes = [
        grid_floor(1, 5.0, 0.0, 1),
        grid_floor(4, 5.0, 0.0, 1),
        grid_floor(10, 5.0, 0.0, 1),
        grid_floor(37, 5.0, 0.25, 2),
        sliver_floor(13, 5.0),
        sliver_floor(200, 5.0),
    ];
    let half = Vec3::new(0.6, 0.5, 0.4);
    let shape = box_shape(half);
    let mut rng = Pcg64::seed_from_u64(3);
    for mesh in &meshes {
        // On grid vertices and edges, then anywhere.
        let mut places = vec![Vec3::ZERO, Vec3::new(2.5, 0.0, 0.0), Vec3::new(2.5, 0.0, 2.5)];
        places.extend(
            (0..40).map(|_| Vec3::new(rng.random_range(-3.5..3.5), 0.0, rng.random_range(-3.5..3.5))),
        );
        for (k, place) in places.into_iter().enumerate() {
            let yaw = if k < 3 { 0.0 } else { rng.random_range(0.0..6.3f32) };
            let rotation = Quat::from_rotation_y(yaw);
            let depth = 0.01;
            let pose = Pose::new(place + Vec3::Y * (half.y - depth), rotation);
            let m = collide(mesh, &shape, &pose, 0.0).expect("the box rests on the floor");
            assert!(angle_degrees(m.normal, Vec3::Y) < 1e-3, "{m:?}");
            assert!((m.separation + depth).abs() < 1e-5, "{m:?}");
            assert_eq!(m.point_count(), 4, "{place} {m:?}");
            for sx in [-1.0, 1.0] {
                for sz in [-1.0, 1.0] {
                    let corner = place + rotation * Vec3::new(sx * half.x, 0.0, sz * half.z);
                    // The reduction may keep a clipped point on a box edge whose score is within its
                    // tie tolerance of the corner's: a height against a diagonal meeting the box
                    // edges at more than 30 degrees here, so at most twice the tolerance away.
                    let ties = 2.0 * CONTACT_REDUCTION_TOLERANCE * shape.size();
                    let found = m.points().iter().any(|p| {
                        (p.position.as_vec3() - (corner - Vec3::Y * 0.5 * depth)).length() <= ties + 1e-5
                            && (p.depth - depth).abs() < 1e-5
                    });
                    assert!(found, "corner {corner} missing: {m:?}");
                }
            }
        }
    }
}

#[test]
fn a_box_sliding_across_seams_keeps_the_floor_normal() {
    let meshes = [grid_floor(20, 5.0, 0.3, 4), sliver_floor(60, 5.0)];
    let shape = box_shape(Vec3::new(0.5, 0.3, 0.4));
    for mesh in &meshes {
        for (yaw, tilt) in [(0.0f32, 0.0f32), (0.3, 0.0), (0.7, 0.2), (1.1, -0.35)] {
            let rotation = Quat::from_rotation_y(yaw) * Quat::from_rotation_x(tilt);
            let lowest = -(0..8)
                .map(|i| {
                    let s = Vec3::new(
                        if i & 1 == 0 { -0.5 } else { 0.5 },
                        if i & 2 == 0 { -0.3 } else { 0.3 },
                        if i & 4 == 0 { -0.4 } else { 0.4 },
                    );
                    (rotation * s).y
                })
                .fold(f32::INFINITY, f32::min);
            for step in 0..400 {
                let x = -3.0 + 6.0 * step as f32 / 400.0;
                let pose = Pose::new(Vec3::new(x, lowest - 0.005, 0.37 * x), rotation);
                let m = collide(mesh, &shape, &pose, 0.01).expect("on the floor");
                assert!(
                    angle_degrees(m.normal, Vec3::Y) < 0.5,
                    "x {x} yaw {yaw} tilt {tilt}: {m:?}"
                );
                assert!((m.separation + 0.005).abs() < 1e-4, "x {x}: {m:?}");
            }
        }
    }
}

#[test]
fn a_sphere_rolling_across_seams_keeps_the_floor_normal() {
    let meshes = [
        grid_floor(20, 5.0, 0.3, 5),
        sliver_floor(60, 5.0),
        grid_floor(10, 5.0, 0.0, 1),
    ];
    let shape = Shape::Sphere(Sphere::new(0.5).unwrap());
    for mesh in &meshes {
        for step in 0..1000 {
            let x = -3.0 + 6.0 * step as f32 / 1000.0;
            // Along a diagonal through grid vertices, then a line along a seam.
            for place in [Vec3::new(x, 0.49, x), Vec3::new(x, 0.49, 0.0)] {
                let m = collide(mesh, &shape, &Pose::from_translation(place), 0.0).expect("on the floor");
                assert!(angle_degrees(m.normal, Vec3::Y) < 0.5, "{place}: {m:?}");
                assert!((m.separation + 0.01).abs() < 1e-5, "{place}: {m:?}");
                assert_eq!(m.point_count(), 1, "{place}: {m:?}");
                // Midway between the floor and the ball's lowest point (0.01 below the floor).
                let p = m.points()[0].position.as_vec3();
                assert!((p.y + 0.005).abs() < 1e-5, "{place}: {m:?}");
                assert!(
                    p.abs_diff_eq(Vec3::new(place.x, p.y, place.z), 1e-3),
                    "{place}: {m:?}"
                );
            }
        }
    }
}

/// A roof: two slopes meeting at a convex ridge along z at x = 0, `bend` degrees each side, or
/// a valley (concave) with a negative `bend`.
fn roof(bend: f32) -> TriMesh {
    let drop = 4.0 * bend.to_radians().tan();
    let vertices = vec![
        Vec3::new(-4.0, -drop, -4.0),
        Vec3::new(-4.0, -drop, 4.0),
        Vec3::new(0.0, 0.0, -4.0),
        Vec3::new(0.0, 0.0, 4.0),
        Vec3::new(4.0, -drop, -4.0),
        Vec3::new(4.0, -drop, 4.0),
    ];
    let triangles = vec![[0, 1, 2], [2, 1, 3], [2, 3, 4], [4, 3, 5]];
    TriMesh::new(vertices, triangles).unwrap()
}

#[test]
fn over_a_convex_ridge_normals_lie_between_the_slopes() {
    let bend = 20.0f32;
    let mesh = roof(bend);
    let left = Vec3::new(-bend.to_radians().sin(), bend.to_radians().cos(), 0.0);
    let right = Vec3::new(-left.x, left.y, 0.0);
    // A sphere over the ridge: separation the exact distance to the roof, normal between the slopes.
    let b = bend.to_radians();
    let slopes = [
        Vec3::new(-b.cos(), -b.sin(), 0.0),
        Vec3::new(b.cos(), -b.sin(), 0.0),
    ];
    for x in [-0.3f32, -0.1, 0.0, 0.05, 0.1, 0.3] {
        let centre = Vec3::new(x, 0.4, 0.5);
        let flat = Vec3::new(x, 0.4, 0.0);
        let distance = slopes
            .iter()
            .map(|&u| (flat - u * flat.dot(u).max(0.0)).length())
            .fold(f32::INFINITY, f32::min);
        let shape = Shape::Sphere(Sphere::new(0.5).unwrap());
        let m = collide(&mesh, &shape, &Pose::from_translation(centre), 0.0).expect("touching");
        let between = angle_degrees(m.normal, left) <= 2.0 * bend + 1e-3
            && angle_degrees(m.normal, right) <= 2.0 * bend + 1e-3;
        assert!(between, "{x}: {m:?}");
        assert!(
            (m.separation - (distance - 0.5)).abs() < 1e-4,
            "{x}: {m:?} expected {}",
            distance - 0.5
        );
    }
    // A level box across the ridge: it rests on the ridge line, its normal between the slopes.
    let shape = box_shape(Vec3::new(0.5, 0.2, 0.5));
    let m = collide(
        &mesh,
        &shape,
        &Pose::from_translation(Vec3::new(0.05, 0.19, 0.0)),
        0.0,
    )
    .expect("touching");
    assert!(m.normal.y >= bend.to_radians().cos() - 1e-4, "{m:?}");
    assert!(m.separation > -0.02 && m.separation <= 0.0, "{m:?}");
}

#[test]
fn in_a_concave_corner_a_box_gets_one_faces_normal_and_no_deeper_contact() {
    // Floor y = 0 (x > 0) and wall x = 0 (y > 0) meeting at a concave edge along z.
    let vertices = vec![
        Vec3::new(0.0, 0.0, -4.0),
        Vec3::new(0.0, 0.0, 4.0),
        Vec3::new(4.0, 0.0, -4.0),
        Vec3::new(4.0, 0.0, 4.0),
        Vec3::new(0.0, 4.0, -4.0),
        Vec3::new(0.0, 4.0, 4.0),
    ];
    let triangles = vec![[0, 1, 2], [2, 1, 3], [0, 4, 1], [1, 4, 5]];
    let mesh = TriMesh::new(vertices, triangles).unwrap();
    assert_eq!(
        mesh.active_edges(0) & 1,
        0,
        "the corner edge is concave: inactive"
    );
    let shape = box_shape(Vec3::splat(0.5));
    for (floor_depth, wall_depth) in [(0.01f32, 0.03f32), (0.03, 0.01), (0.02, 0.0)] {
        let pose = Pose::from_translation(Vec3::new(0.5 - wall_depth, 0.5 - floor_depth, 0.0));
        let m = collide(&mesh, &shape, &pose, 0.0).expect("in the corner");
        let deeper = floor_depth.max(wall_depth);
        assert!(
            angle_degrees(m.normal, Vec3::Y) < 1e-3 || angle_degrees(m.normal, Vec3::X) < 1e-3,
            "{m:?}"
        );
        assert!((m.separation + deeper).abs() < 1e-4, "{m:?}");
        assert!(m.points().iter().all(|p| p.depth <= deeper + 1e-4), "{m:?}");
    }
}

#[test]
fn a_body_deep_in_a_thin_floor_is_pushed_out_of_the_front() {
    let mesh = grid_floor(4, 5.0, 0.0, 1);
    let shape = box_shape(Vec3::splat(0.5));
    let m = collide(
        &mesh,
        &shape,
        &Pose::from_translation(Vec3::new(0.3, -0.2, 0.1)),
        0.0,
    )
    .expect("deep");
    assert!(
        angle_degrees(m.normal, Vec3::Y) < 1e-3 && (m.separation + 0.7).abs() < 1e-5,
        "{m:?}"
    );
    let sphere = Shape::Sphere(Sphere::new(0.5).unwrap());
    let m = collide(
        &mesh,
        &sphere,
        &Pose::from_translation(Vec3::new(0.3, -0.3, 0.1)),
        0.0,
    )
    .expect("deep");
    assert!(
        angle_degrees(m.normal, Vec3::Y) < 1e-3 && (m.separation + 0.8).abs() < 1e-5,
        "{m:?}"
    );
    // Wholly behind: nothing, whatever the margin.
    for (shape, y) in [(&shape, -0.6), (&sphere, -0.6)] {
        for margin in [0.0, 2.0] {
            let pose = Pose::from_translation(Vec3::new(0.3, y, 0.1));
            assert!(
                collide(&mesh, shape, &pose, margin).is_none(),
                "{shape:?} {margin}"
            );
        }
    }
}

#[test]
fn capsule_lying_on_seams_gets_its_two_ends() {
    let mesh = grid_floor(10, 5.0, 0.2, 6);
    let shape = Shape::Capsule(Capsule::new(0.8, 0.3).unwrap());
    for step in 0..100 {
        let x = -2.0 + 4.0 * step as f32 / 100.0;
        let rotation = Quat::from_rotation_y(0.4 * x) * Quat::from_rotation_z(std::f32::consts::FRAC_PI_2);
        let m = collide(
            &mesh,
            &shape,
            &Pose::new(Vec3::new(x, 0.29, 0.3 * x), rotation),
            0.0,
        )
        .expect("lying");
        assert!(angle_degrees(m.normal, Vec3::Y) < 0.5, "{x}: {m:?}");
        assert!((m.separation + 0.01).abs() < 1e-5, "{x}: {m:?}");
        assert!(m.point_count() >= 2, "{x}: {m:?}");
    }
}

#[test]
fn feature_ids_are_stable_under_a_tiny_motion() {
    let mesh = grid_floor(12, 5.0, 0.3, 7);
    let shape = box_shape(Vec3::new(0.6, 0.5, 0.4));
    let mut rng = Pcg64::seed_from_u64(8);
    for _ in 0..100 {
        let place = Vec3::new(rng.random_range(-3.0..3.0), 0.49, rng.random_range(-3.0..3.0));
        let rotation = Quat::from_rotation_y(rng.random_range(0.0..6.3f32));
        let ids = |offset: Vec3| {
            let m = collide(&mesh, &shape, &Pose::new(place + offset, rotation), 0.0).unwrap();
            let mut ids: Vec<u32> = m.points().iter().map(|p| p.id.0).collect();
            ids.sort_unstable();
            ids
        };
        assert_eq!(ids(Vec3::ZERO), ids(Vec3::new(1e-5, -1e-6, 1e-5)), "{place}");
    }
}

#[test]
fn contacts_agree_with_parry_trimesh_on_random_poses() {
    let mesh = bumpy_terrain(16, 8.0, 0.05, 9);
    let parry_mesh = parry_trimesh(&mesh);
    let mut rng = Pcg64::seed_from_u64(10);
    let hull = ConvexHull::from_points(
        &(0..32)
            .map(|_| {
                Vec3::new(
                    rng.random_range(-0.5..0.5),
                    rng.random_range(-0.5..0.5),
                    rng.random_range(-0.5..0.5),
                )
            })
            .collect::<Vec<_>>(),
    )
    .unwrap();
    let shapes = [
        box_shape(Vec3::new(0.5, 0.3, 0.4)),
        Shape::Sphere(Sphere::new(0.4).unwrap()),
        Shape::Capsule(Capsule::new(0.5, 0.3).unwrap()),
        Shape::Hull(hull),
    ];
    let margin = 0.02;
    let (mut compared, mut contacts, mut faces) = (0, 0, 0);
    let mut scratch = TriMeshScratch::default();
    for shape in &shapes {
        let parry_shape = to_parry_shape(shape).unwrap();
        let size = shape.size();
        for _ in 0..400 {
            let place = Vec3::new(
                rng.random_range(-5.0..5.0),
                rng.random_range(-0.2..1.2),
                rng.random_range(-5.0..5.0),
            );
            let pose = Pose::new(place, random_rotation(&mut rng));
            let ours = collide_trimesh_shape(&mesh, &Pose::IDENTITY, shape, &pose, margin, &mut scratch);
            let theirs = parry3d::query::contact(
                &to_parry_pose(&Pose::IDENTITY),
                &parry_mesh,
                &to_parry_pose(&pose),
                parry_shape.as_ref(),
                margin,
            )
            .unwrap();
            // Bodies deeper than the terrain's bumps may be pushed out differently (one-sided).
            let depth_band = 0.1 * size;
            match (&ours, &theirs) {
                (Some(m), Some(c)) => {
                    compared += 1;
                    if c.dist > -depth_band {
                        contacts += 1;
                        assert!(
                            (m.separation - c.dist).abs() < 0.02 * size + 1e-3,
                            "{pose:?}: ours {m:?} parry {c:?}"
                        );
                        // Normals compared where parry's is its triangle's face normal (at edges and
                        // corners parry's deepest-point normal is not internal-edge corrected).
                        let normal = Vec3::new(c.normal1.x, c.normal1.y, c.normal1.z);
                        if angle_degrees(normal, mesh.plane(c.subshape1).normal) < 0.1 {
                            faces += 1;
                            assert!(
                                angle_degrees(m.normal, normal) < 12.0,
                                "{pose:?}: ours {m:?} parry {c:?}"
                            );
                        }
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
    }
    println!("compared {compared} pairs, {contacts} in the shallow band, {faces} normals");
    assert!(contacts > 100, "too few contacts compared: {contacts}");
}

/// Margins the margin-independence test sweeps, length units, ascending.
const SWEPT_MARGINS: [f32; 5] = [0.0, 0.01, 0.1, 0.5, 2.0];

/// Float rounding allowed between two margins' separations of one pair, × the body's size: the
/// separation is one triangle contact's, formed by the same operations at every margin.
const MARGIN_SEPARATION_TOLERANCE: f32 = 1e-6;

/// parry3d's distance is compared where it lies within ± this × the body's size: deeper, in the
/// bumpy terrain's concave places our exit along one face's normal is deeper than parry's
/// one-triangle distance (up to twice at 0.1 × size here).
const PARRY_SHALLOW: f32 = 0.03;

/// Most difference from parry3d's distance, × the body's size (plus 1e-3 length units), as in the
/// parry comparison above: cylinders are prisms here, exact there.
const PARRY_TOLERANCE: f32 = 0.02;

/// The margin decides only whether a pair is reported: a pair's separation is the same at every
/// margin that reports it, reported at a margin means within it, and it agrees with parry3d's
/// distance where that is shallow.
#[test]
fn separations_do_not_depend_on_the_margin() {
    let meshes = [
        ("bumpy terrain", bumpy_terrain(16, 8.0, 0.3, 21)),
        ("flat tessellated floor", grid_floor(12, 8.0, 0.3, 22)),
    ];
    let mut rng = Pcg64::seed_from_u64(23);
    let hull = ConvexHull::from_points(
        &(0..32)
            .map(|_| 0.5 * support::random_direction(&mut rng))
            .collect::<Vec<_>>(),
    )
    .unwrap();
    let shapes = [
        ("box", box_shape(Vec3::new(0.5, 0.3, 0.4))),
        ("hull32", Shape::Hull(hull)),
        ("sphere", Shape::Sphere(Sphere::new(0.4).unwrap())),
        ("capsule", Shape::Capsule(Capsule::new(0.5, 0.3).unwrap())),
        ("cylinder", Shape::Cylinder(Cylinder::new(0.4, 0.4).unwrap())),
    ];
    let mut scratch = TriMeshScratch::default();
    let (mut pairs, mut compared) = (0, 0);
    for (mesh_name, mesh) in &meshes {
        let parry_mesh = parry_trimesh(mesh);
        for (shape_name, shape) in &shapes {
            let parry_shape = to_parry_shape(shape).unwrap();
            let size = shape.size();
            let same = MARGIN_SEPARATION_TOLERANCE * size;
            for _ in 0..1000 {
                let place = Vec3::new(
                    rng.random_range(-6.0..6.0),
                    rng.random_range(-0.2..0.6),
                    rng.random_range(-6.0..6.0),
                );
                let pose = Pose::new(place, random_rotation(&mut rng));
                let reported: Vec<Option<Manifold>> = SWEPT_MARGINS
                    .iter()
                    .map(|&margin| {
                        collide_trimesh_shape(mesh, &Pose::IDENTITY, shape, &pose, margin, &mut scratch)
                    })
                    .collect();
                let what = format!("{shape_name} over the {mesh_name} at {pose:?}");
                // Reported at a margin: within it, and the same separation at every larger one.
                for (k, (&small, m)) in SWEPT_MARGINS.iter().zip(&reported).enumerate() {
                    let Some(m) = m else { continue };
                    pairs += 1;
                    assert!(
                        m.separation <= small + same,
                        "{what}: {m:?} beyond margin {small}"
                    );
                    for (&large, l) in SWEPT_MARGINS.iter().zip(&reported).skip(k + 1) {
                        let l = l.as_ref().unwrap_or_else(|| {
                            panic!("{what}: reported at margin {small} ({m:?}), not at {large}")
                        });
                        assert!(
                            (l.separation - m.separation).abs() <= same,
                            "{what}: separation {} at margin {small}, {} at {large}",
                            m.separation,
                            l.separation
                        );
                    }
                }
                // Not reported at a margin: farther than it (seen at a larger one).
                if let Some(first) = reported.iter().position(Option::is_some) {
                    let separation = reported[first].as_ref().unwrap().separation;
                    assert!(
                        first == 0 || separation > SWEPT_MARGINS[first - 1] - same,
                        "{what}: separation {separation} first reported at margin {}",
                        SWEPT_MARGINS[first]
                    );
                }
                // parry3d's distance where it is shallow and pushes the body out of the front (the mesh is
                // one-sided, parry's two-sided), against ours at the largest margin (the same at all).
                let theirs = parry3d::query::contact(
                    &to_parry_pose(&Pose::IDENTITY),
                    &parry_mesh,
                    &to_parry_pose(&pose),
                    parry_shape.as_ref(),
                    PARRY_SHALLOW * size,
                )
                .unwrap();
                if let Some(c) = theirs
                    && c.dist > -PARRY_SHALLOW * size
                    && Vec3::new(c.normal1.x, c.normal1.y, c.normal1.z).dot(mesh.plane(c.subshape1).normal)
                        > 0.0
                {
                    compared += 1;
                    let ours = reported.last().unwrap();
                    assert!(
                        ours.as_ref()
                            .is_some_and(|m| (m.separation - c.dist).abs() < PARRY_TOLERANCE * size + 1e-3),
                        "{what}: ours {ours:?} parry {c:?}"
                    );
                }
            }
        }
    }
    println!("{pairs} reported pairs, {compared} compared with parry");
    assert!(compared > 250, "too few pairs compared with parry: {compared}");
}

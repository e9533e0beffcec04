//! Cylinder contacts (the 16-sided prism, `hullsat::shape::CYLINDER_SIDES`): a cylinder standing
//! on a box face or the ground gets four points a quarter turn apart whose ids stay the same
//! frame to frame under tiny motion; random pairs against every kind agree with parry3d's exact
//! `Cylinder` within the documented prism deviation; the GPU equals the CPU on a scene of
//! cylinders among every other kind, by the GPU = CPU contract.
//!
//! The GPU test runs on whatever adapter wgpu finds (Mesa lavapipe in CI); without one it prints a
//! line and returns, unless `HULLSAT_REQUIRE_GPU=1`.

mod support;

use std::f32::consts::PI;

use glam::{DVec3, Quat, Vec3};
use hullsat::contact::collide_shapes;
use hullsat::contract::compare_batch;
use hullsat::narrowphase::gpu::Clipping;
use hullsat::shape::{CYLINDER_MAX_DEVIATION, CYLINDER_SIDES};
use hullsat::{
    Body, Capsule, CpuNarrowphase, Cuboid, Cylinder, FeatureId, HalfSpace, Manifold, Pose, Shape, Sphere,
};
use parry3d::query::contact;
use rand::RngExt;
use rand_pcg::Pcg64;
use support::parry::{to_parry_pose, to_parry_shape};
use support::shapes::{Family, random_direction, random_rotation, random_shape};
use support::{gpu_or_skip, seeded_rng};

const HALF_HEIGHT: f32 = 0.5;
const RADIUS: f32 = 0.4;
/// How deep the standing cylinder sinks into what it stands on, length units.
const DEPTH: f32 = 0.01;

fn cylinder() -> Shape {
    Shape::Cylinder(Cylinder::new(HALF_HEIGHT, RADIUS).unwrap())
}

/// The sorted ids of a manifold's points.
fn ids(m: &Manifold) -> Vec<FeatureId> {
    let mut ids: Vec<FeatureId> = m.points().iter().map(|p| p.id).collect();
    ids.sort_by_key(|id| id.0);
    ids
}

/// The cylinder standing on `floor` (top face at y = 0), `DEPTH` deep, nudged by `motion`
/// (radians about Y, a tilt about X and Z, and a translation): four points on the bottom cap's
/// rim a quarter turn apart, depth `DEPTH`, normal up.
fn standing(floor: &Shape, floor_pose: &Pose, motion: (f32, f32, Vec3)) -> Manifold {
    let (turn, tilt, shift) = motion;
    let rotation = Quat::from_rotation_y(turn) * Quat::from_rotation_x(tilt) * Quat::from_rotation_z(-tilt);
    let pose = Pose::new(Vec3::new(0.3, HALF_HEIGHT - DEPTH, -0.2) + shift, rotation);
    let m = collide_shapes(floor, floor_pose, &cylinder(), &pose, 0.0).expect("the cylinder stands");
    assert!(m.normal.abs_diff_eq(Vec3::Y, 1e-4), "{m:?}");
    assert!((m.separation + DEPTH).abs() < 1e-4, "{m:?}");
    assert_eq!(m.point_count(), 4, "{m:?}");
    let centre = DVec3::new(0.3, 0.0, -0.2) + shift.as_dvec3();
    for (i, p) in m.points().iter().enumerate() {
        assert!((p.depth - DEPTH).abs() < 1e-4, "{m:?}");
        let offset = (p.position - centre).with_y(0.0);
        assert!((offset.length() - f64::from(RADIUS)).abs() < 1e-4, "{m:?}");
        // A quarter turn between consecutive points about the axis.
        let next = (m.points()[(i + 1) % 4].position - centre).with_y(0.0);
        let cos = offset.dot(next) / (offset.length() * next.length());
        let opposite = (m.points()[(i + 2) % 4].position - centre).with_y(0.0);
        assert!(cos.abs() < 1e-3 || (offset + opposite).length() < 1e-3, "{m:?}");
    }
    m
}

#[test]
fn a_cylinder_standing_on_a_box_or_the_ground_keeps_four_points_and_their_ids() {
    let slab = Shape::Cuboid(Cuboid::new(Vec3::new(3.0, 0.5, 3.0)).unwrap());
    let slab_pose = Pose::from_translation(Vec3::new(0.0, -0.5, 0.0));
    let ground = Shape::HalfSpace(HalfSpace::new(Vec3::Y, 0.0).unwrap());
    let mut rng = seeded_rng(0xc7_11);
    for (floor, floor_pose) in [(&slab, slab_pose), (&ground, Pose::IDENTITY)] {
        for turn in [0.0, 0.3, PI / 16.0] {
            let first = ids(&standing(floor, &floor_pose, (turn, 0.0, Vec3::ZERO)));
            // Frame to frame: tiny rotations and slides keep every id.
            for frame in 0..50 {
                let motion = (
                    turn + rng.random_range(-1e-5..1e-5),
                    rng.random_range(-1e-5..1e-5),
                    Vec3::new(
                        rng.random_range(-1e-5..1e-5),
                        rng.random_range(-1e-6..1e-6),
                        rng.random_range(-1e-5..1e-5),
                    ),
                );
                let m = standing(floor, &floor_pose, motion);
                assert_eq!(ids(&m), first, "frame {frame}, turn {turn}: {m:?}");
            }
        }
    }
}

#[test]
fn a_cylinder_on_its_side_rests_on_a_prism_face_within_the_deviation() {
    // Lying along X on the ground: the lowest point of the prism is a side face (at a
    // rotation of half a side) or an edge, at most the deviation above the true rim.
    let ground = Shape::HalfSpace(HalfSpace::new(Vec3::Y, 0.0).unwrap());
    for roll in [0.0, 0.05, PI / 16.0] {
        let rotation = Quat::from_rotation_x(roll) * Quat::from_rotation_z(PI / 2.0);
        let pose = Pose::new(Vec3::new(0.0, RADIUS - DEPTH, 0.0), rotation);
        let m = collide_shapes(&ground, &Pose::IDENTITY, &cylinder(), &pose, 0.0).unwrap();
        let shortfall = m.separation + DEPTH;
        assert!(
            (-1e-6..=CYLINDER_MAX_DEVIATION * RADIUS + 1e-6).contains(&shortfall),
            "roll {roll}: {m:?}"
        );
        assert!(
            m.point_count() >= 2 && m.normal.abs_diff_eq(Vec3::Y, 1e-6),
            "{m:?}"
        );
        if roll == PI / 16.0 {
            // Half a side turned: a face is lowest, the documented deviation exactly.
            assert!(
                (shortfall - CYLINDER_MAX_DEVIATION * RADIUS).abs() < 1e-5,
                "{m:?}"
            );
        }
    }
}

/// A random shape of any kind for the parry comparison.
fn random_partner(rng: &mut Pcg64, i: usize) -> Shape {
    match i % 5 {
        0 => random_cylinder(rng),
        1 => random_shape(rng, Family::Box),
        2 => Shape::Sphere(Sphere::new(rng.random_range(0.2..1.0)).unwrap()),
        3 => Shape::Capsule(Capsule::new(rng.random_range(0.1..1.0), rng.random_range(0.1..0.6)).unwrap()),
        _ => random_shape(rng, Family::Hull),
    }
}

fn random_cylinder(rng: &mut Pcg64) -> Shape {
    Shape::Cylinder(Cylinder::new(rng.random_range(0.1..1.0), rng.random_range(0.1..1.0)).unwrap())
}

/// How far the shape's collision surface may lie inside its true one, length units.
fn deviation(shape: &Shape) -> f32 {
    match shape {
        Shape::Cylinder(c) => CYLINDER_MAX_DEVIATION * c.radius(),
        _ => 0.0,
    }
}

#[test]
fn random_pairs_agree_with_parrys_exact_cylinder_within_the_deviation() {
    let mut rng = seeded_rng(0xc7_12);
    // The prism's faces turn the true normal by at most half a side's angle.
    let normal_bound = (PI / CYLINDER_SIDES as f32).to_degrees() + 1.0;
    let (mut compared, mut normals_within, mut verdict_band) = (0, 0, 0);
    for i in 0..3000 {
        let a = random_cylinder(&mut rng);
        let b = random_partner(&mut rng, i);
        let (pa, pb) = (to_parry_shape(&a).unwrap(), to_parry_shape(&b).unwrap());
        let scale = a.bounding_radius() + b.bounding_radius();
        let pose_a = Pose::new(Vec3::new(1.0, 2.0, -3.0), random_rotation(&mut rng));
        let offset = random_direction(&mut rng) * rng.random_range(0.0..1.1) * scale;
        let pose_b = Pose::new(pose_a.translation + offset.as_dvec3(), random_rotation(&mut rng));
        let margin = if i % 3 == 0 { 0.05 * scale } else { 0.0 };
        let ours = collide_shapes(&a, &pose_a, &b, &pose_b, margin);
        let theirs = contact(
            &to_parry_pose(&pose_a),
            &*pa,
            &to_parry_pose(&pose_b),
            &*pb,
            margin,
        )
        .unwrap();
        // Signed distance is 1-Lipschitz in the Hausdorff distance between the shapes.
        let slack = deviation(&a) + deviation(&b) + 1e-4 * scale;
        let context = format!("pair {i}: {a:?} at {pose_a:?}, {b:?} at {pose_b:?}");
        match (&ours, &theirs) {
            (Some(m), Some(c)) => {
                compared += 1;
                assert!(
                    (m.separation - c.dist).abs() <= slack,
                    "{context}: separation {} vs parry {}",
                    m.separation,
                    c.dist
                );
                let n = Vec3::new(c.normal1.x, c.normal1.y, c.normal1.z);
                normals_within += usize::from(m.normal.angle_between(n).to_degrees() <= normal_bound);
            }
            (None, None) => {}
            // One side of the margin each: only within the deviation band of it.
            (Some(m), None) => {
                verdict_band += 1;
                assert!(m.separation >= margin - slack, "{context}: {m:?}, parry none");
            }
            (None, Some(c)) => {
                verdict_band += 1;
                assert!(c.dist >= margin - slack, "{context}: none, parry {c:?}");
            }
        }
    }
    eprintln!(
        "{compared} pairs compared, {normals_within} normals within {normal_bound} deg, {verdict_band} verdicts in the band"
    );
    assert!(compared > 1000, "{compared}");
    // Deep pairs can have two nearly equal escape directions, which the prism and the true
    // cylinder may rank differently: nearly every normal still agrees.
    assert!(
        normals_within * 100 >= compared * 97,
        "{normals_within} of {compared}"
    );
}

#[test]
fn gpu_equals_cpu_for_cylinders_against_every_kind() {
    let mut rng = seeded_rng(0xc7_13);
    let mut shapes: Vec<Shape> = (0..4).map(|_| random_cylinder(&mut rng)).collect();
    shapes.extend((0..8).map(|i| random_partner(&mut rng, i + 1)));
    shapes.push(cylinder());
    shapes.push(Shape::Cuboid(Cuboid::new(Vec3::new(3.0, 0.5, 3.0)).unwrap()));
    let ground = shapes.len() as u32;
    shapes.push(Shape::HalfSpace(HalfSpace::new(Vec3::Y, 0.0).unwrap()));
    let Some(mut gpu) = gpu_or_skip(&shapes) else {
        return;
    };
    let mut bodies = vec![Body {
        shape: ground,
        pose: Pose::IDENTITY,
    }];
    // A slab with the standing cylinder on it, and one on the ground.
    bodies.push(Body {
        shape: ground - 1,
        pose: Pose::from_translation(Vec3::new(20.0, -0.5, 0.0)),
    });
    for x in [20.0, -20.0] {
        bodies.push(Body {
            shape: ground - 2,
            pose: Pose::new(Vec3::new(x, HALF_HEIGHT - DEPTH, 0.0), Quat::from_rotation_y(0.3)),
        });
    }
    let mut pairs = vec![[1, 2], [0, 3]];
    let first_random = bodies.len();
    for _ in 0..150 {
        let shape = if rng.random_range(0..2) == 0 {
            rng.random_range(0..4)
        } else {
            rng.random_range(4..ground - 2)
        };
        let position = Vec3::new(
            rng.random_range(-4.0..4.0),
            rng.random_range(-0.5..2.5),
            rng.random_range(-4.0..4.0),
        );
        bodies.push(Body {
            shape,
            pose: Pose::new(position, random_rotation(&mut rng)),
        });
    }
    for i in first_random..bodies.len() {
        pairs.push([0, i as u32]);
        for j in i + 1..bodies.len() {
            let (a, b) = (
                &shapes[bodies[i].shape as usize],
                &shapes[bodies[j].shape as usize],
            );
            let cylinder_pair = matches!(a, Shape::Cylinder(_)) || matches!(b, Shape::Cylinder(_));
            let reach = a.bounding_radius() + b.bounding_radius();
            if cylinder_pair
                && bodies[i].pose.translation.distance(bodies[j].pose.translation) < f64::from(reach)
            {
                pairs.push([i as u32, j as u32]);
            }
        }
    }
    let cpu = CpuNarrowphase::new(shapes.clone());
    for (margin, clipping) in [(0.0, Clipping::Gpu), (0.05, Clipping::Gpu), (0.0, Clipping::Cpu)] {
        gpu.set_clipping(clipping).expect("lavapipe clips");
        let got = gpu.collide(&bodies, &pairs, margin).expect("GPU collide runs");
        let expected = cpu.collide(&bodies, &pairs, margin).expect("CPU collide runs");
        let tally = compare_batch(&shapes, &bodies, &pairs, margin, &got, &expected)
            .unwrap_or_else(|e| panic!("margin {margin}, {clipping:?}: {e}"));
        eprintln!("margin {margin}, {clipping:?}: {} pairs, {tally:?}", pairs.len());
        assert!(tally.cpu_manifolds > 60, "{tally:?}");
        // The standing cylinders: four points each, the same ids as the CPU's.
        for k in 0..2 {
            let (g, c) = (got[k].as_ref().unwrap(), expected[k].as_ref().unwrap());
            assert_eq!((g.point_count(), ids(g)), (4, ids(c)), "pair {k}");
        }
    }
}

//! Hull-hull (box-box) contact manifolds: analytic cases, symmetry, id stability, precision.

mod support;

use std::f32::consts::{FRAC_PI_4, SQRT_2};

use glam::{Quat, Vec3};
use hullsat::contact::collide_hull_hull;
use hullsat::query::sat::query_hulls;
use hullsat::{ConvexHull, FeatureId, Manifold, Pose};
use rand::RngExt;
use support::analytic::{
    Case, TOL, assert_distinct_points, cases, corner, crossed_edges, global_pose, octagon, resting,
    tiny_box_at_a_corner, unit_box,
};
use support::clip_paths::{ClipPath, cpu_clip_path, knife_in_slab};
use support::{
    assert_near, assert_vec_near, hull_plane_distance, random_rotation, random_unit_vector, random_vec3,
    seeded_rng,
};

/// Resting boxes (four points at the depth), a box turned 45° (four alternate corners of the
/// octagon), a corner pushed into a face (one point, from either side) and crossed edges (one
/// point between them): the answers worked out in `support/analytic.rs`, anywhere in space.
#[test]
fn analytic_box_cases_give_their_worked_answers() {
    for (name, case, check) in cases() {
        for global in [Pose::IDENTITY, global_pose()] {
            let m = case.placed(&global).collide(0.0);
            check(
                &m.unwrap_or_else(|| panic!("{name}: overlapping boxes collide")),
                &global,
            );
        }
    }
}

/// A contact region smaller than the reduction's tie tolerance: every pick can be the same
/// point, which the manifold holds once (it once held it three times).
#[test]
fn a_contact_smaller_than_the_tie_tolerance_holds_each_point_once() {
    let mut reduced = 0;
    for k in 0..200 {
        let case = tiny_box_at_a_corner(0.1 + k as f32 * 0.01);
        let m = case.collide(0.0).expect("the tiny box sinks into the slab");
        assert_distinct_points(&m);
        reduced += (m.point_count() < 4) as usize;
    }
    // The repeats did occur: fewer than four points where the polygon had more.
    assert!(reduced > 0);
}

#[test]
fn separated_boxes_have_no_manifold() {
    let above = Case {
        pose_b: Pose::from_translation(Vec3::new(0.3, 1.1, 0.2)),
        ..resting()
    };
    assert_eq!(above.collide(0.0), None);
    assert_eq!(above.collide(0.05), None);
    let beside = Case {
        pose_b: Pose::new(Vec3::new(3.0, 0.4, 0.0), Quat::from_rotation_y(0.3)),
        ..resting()
    };
    assert_eq!(beside.collide(0.0), None);
    let edges_apart = Case {
        pose_b: Pose::new(
            Vec3::new(0.1, SQRT_2 + 0.05, 0.15),
            Quat::from_rotation_x(FRAC_PI_4),
        ),
        ..crossed_edges()
    };
    assert_eq!(edges_apart.collide(0.0), None);
}

#[test]
fn speculative_margin_gives_points_with_negative_depth() {
    // 0.01 apart: a margin of 0.02 reaches, 0.005 does not.
    let case = Case {
        pose_b: Pose::from_translation(Vec3::new(0.3, 1.01, 0.2)),
        ..resting()
    };
    let m = case.collide(0.02).expect("within the margin");
    assert_near(m.separation, 0.01, TOL, "separation");
    assert_vec_near(m.normal, Vec3::Y, TOL, "normal");
    assert_eq!(m.points().len(), 4);
    for p in m.points() {
        assert_near(p.depth, -0.01, TOL, "depth");
        assert_near(p.position.as_vec3().y, 0.505, TOL, "midway height");
    }
    assert_eq!(case.collide(0.005), None);
    assert_eq!(case.collide(0.0), None);

    // Crossed edges 0.01 apart.
    let edges = Case {
        pose_b: Pose::new(
            Vec3::new(0.1, SQRT_2 + 0.01, 0.15),
            Quat::from_rotation_x(FRAC_PI_4),
        ),
        ..crossed_edges()
    };
    let m = edges.collide(0.02).expect("within the margin");
    assert_near(m.separation, 0.01, TOL, "separation");
    assert_eq!(m.points().len(), 1);
    assert_near(m.points[0].depth, -0.01, TOL, "depth");
    assert_eq!(m.points[0].id.kind(), FeatureId::EDGE_PAIR);
}

#[test]
fn swapping_bodies_negates_the_normal_and_keeps_the_separation() {
    let cases = [
        ("resting", resting(), true),
        // Swapped, the 45° box's face becomes the reference: the other square of alternate
        // octagon corners may be kept, so only counts and depths are compared.
        ("octagon", octagon(), false),
        ("corner", corner(), true),
        ("crossed edges", crossed_edges(), true),
    ];
    for (name, case, same_points) in cases {
        let case = case.placed(&global_pose());
        let m = case.collide(0.0).expect(name);
        let s = case.swapped().collide(0.0).expect(name);
        assert_vec_near(s.normal, -m.normal, TOL, name);
        assert_near(s.separation, m.separation, TOL, name);
        assert_eq!(s.points().len(), m.points().len(), "{name}");
        for p in s.points() {
            let matching = m.points().iter().filter(|q| (q.depth - p.depth).abs() <= TOL);
            if same_points {
                assert!(
                    matching
                        .clone()
                        .any(|q| q.position.as_vec3().distance(p.position.as_vec3()) <= TOL),
                    "{name}: {p:?}"
                );
            } else {
                assert!(matching.count() > 0, "{name}: {p:?}");
            }
        }
    }
}

#[test]
fn feature_ids_survive_tiny_perturbations() {
    let mut rng = seeded_rng(7);
    for (name, case) in [
        ("resting", resting()),
        ("octagon", octagon()),
        ("corner", corner()),
        ("crossed edges", crossed_edges()),
    ] {
        let ids = |m: &Manifold| m.points().iter().map(|p| p.id).collect::<Vec<_>>();
        let reference = ids(&case.collide(0.0).expect(name));
        for _ in 0..200 {
            let wobble = |rng: &mut _| {
                Pose::new(
                    random_vec3(rng, 1e-5),
                    Quat::from_axis_angle(random_unit_vector(rng), 1e-5),
                )
            };
            let perturbed = Case {
                pose_a: wobble(&mut rng).mul_pose(&case.pose_a),
                pose_b: wobble(&mut rng).mul_pose(&case.pose_b),
                a: case.a.clone(),
                b: case.b.clone(),
            };
            assert_eq!(ids(&perturbed.collide(0.0).expect(name)), reference, "{name}");
        }
    }
}

#[test]
fn contact_points_lie_midway_between_both_surfaces() {
    // Analytic cases plus random overlapping boxes of random sizes and orientations.
    let mut cases = vec![resting(), octagon(), corner(), crossed_edges()];
    let mut rng = seeded_rng(11);
    for _ in 0..300 {
        let half_a = Vec3::new(
            rng.random_range(0.2..1.0),
            rng.random_range(0.2..1.0),
            rng.random_range(0.2..1.0),
        );
        let half_b = Vec3::new(
            rng.random_range(0.2..1.0),
            rng.random_range(0.2..1.0),
            rng.random_range(0.2..1.0),
        );
        let reach = half_a.length() + half_b.length();
        let offset = random_unit_vector(&mut rng) * rng.random_range(0.2..0.7) * reach;
        cases.push(Case {
            a: ConvexHull::cuboid(half_a),
            pose_a: Pose::new(random_vec3(&mut rng, 3.0), random_rotation(&mut rng)),
            b: ConvexHull::cuboid(half_b),
            pose_b: Pose::IDENTITY,
        });
        let last = cases.last_mut().unwrap();
        last.pose_b = Pose::new(
            last.pose_a.translation + offset.as_dvec3(),
            random_rotation(&mut rng),
        );
    }
    let mut by_kind = [0; 4];
    for case in &cases {
        let b_in_a = case.pose_a.relative_to_self(&case.pose_b);
        let sat = query_hulls(&case.a, &case.b, &b_in_a, 0.0);
        // A manifold iff the SAT finds no separating axis.
        let Some(m) = case.collide(0.0) else {
            assert!(
                sat.is_separated(0.0),
                "overlapping pair without a manifold: {sat:?}"
            );
            continue;
        };
        assert_eq!(m.separation, sat.separation);
        by_kind[m.points[0].id.kind() as usize] += 1;
        // Surface tolerance: f32 rounding of coordinates ~4 in size, through two rotations.
        let tolerance = 2e-5;
        assert!((m.normal.length() - 1.0).abs() <= 1e-5, "{m:?}");
        for p in m.points() {
            let on_a = p.position.as_vec3() + 0.5 * p.depth * m.normal;
            let on_b = p.position.as_vec3() - 0.5 * p.depth * m.normal;
            let da = hull_plane_distance(&case.a, &case.pose_a, on_a);
            let db = hull_plane_distance(&case.b, &case.pose_b, on_b);
            assert!(
                da.abs() <= tolerance && db.abs() <= tolerance,
                "{da} {db} {p:?} {m:?}"
            );
        }
    }
    // Every kind of contact was exercised: face of A, face of B, edge pair.
    assert!(
        by_kind[..3].iter().all(|&n| n >= 10),
        "contacts by kind: {by_kind:?}"
    );
}

#[test]
fn poses_far_from_the_origin_keep_the_separation() {
    // Both bodies moved by 1e4: in f32 a coordinate near 1e4 is only held to half an ulp,
    // 2^-11 ≈ 4.9e-4, so B's offset from A is known to about that much per axis; the query itself
    // subtracts translations before rotating (Pose::relative_to_self) and adds nothing worse.
    // Hence the tolerance: one ulp at 1e4, 1e4 · f32::EPSILON ≈ 1.2e-3.
    let tolerance = 1e4 * f32::EPSILON;
    let far = Pose::from_translation(Vec3::new(1e4, -1e4, 1e4));
    for (name, case) in [
        ("resting", resting()),
        ("octagon", octagon()),
        ("corner", corner()),
        ("crossed edges", crossed_edges()),
    ] {
        let near = case.placed(&global_pose()).collide(0.0).expect(name);
        let moved = case
            .placed(&far.mul_pose(&global_pose()))
            .collide(0.0)
            .expect(name);
        assert_near(moved.separation, near.separation, tolerance, name);
        assert_vec_near(moved.normal, near.normal, tolerance, name);
        assert_eq!(moved.points().len(), near.points().len(), "{name}");
        for (p, q) in moved.points().iter().zip(near.points()) {
            assert_near(p.depth, q.depth, tolerance, name);
            assert_eq!(p.id, q.id, "{name}");
        }
    }
}

#[test]
fn separation_agrees_with_parry_for_random_boxes() {
    use parry3d::math::{Pose as ParryPose, Rot3, Vector};
    use parry3d::query::contact;
    use parry3d::shape::Cuboid;

    let to_parry = |p: &Pose| {
        let (t, q) = (p.translation.as_vec3(), p.rotation);
        ParryPose::from_parts(Vector::new(t.x, t.y, t.z), Rot3::from_xyzw(q.x, q.y, q.z, q.w))
    };
    let margin = 0.1;
    // Penetration depths of boxes ~1 in size agree to f32 rounding of both computations.
    let tolerance = 1e-4;
    let mut rng = seeded_rng(23);
    let mut compared = [0; 3]; // overlapping, within the margin, beyond it
    for _ in 0..400 {
        let half_a = Vec3::new(
            rng.random_range(0.2..1.0),
            rng.random_range(0.2..1.0),
            rng.random_range(0.2..1.0),
        );
        let half_b = Vec3::new(
            rng.random_range(0.2..1.0),
            rng.random_range(0.2..1.0),
            rng.random_range(0.2..1.0),
        );
        let pose_a = Pose::new(random_vec3(&mut rng, 3.0), random_rotation(&mut rng));
        let reach = half_a.length() + half_b.length();
        let offset = random_unit_vector(&mut rng) * rng.random_range(0.3..1.0) * reach;
        let pose_b = Pose::new(pose_a.translation + offset.as_dvec3(), random_rotation(&mut rng));
        let (a, b) = (ConvexHull::cuboid(half_a), ConvexHull::cuboid(half_b));
        let ours = collide_hull_hull(&a, &pose_a, &b, &pose_b, margin);
        let theirs = contact(
            &to_parry(&pose_a),
            &Cuboid::new(Vector::new(half_a.x, half_a.y, half_a.z)),
            &to_parry(&pose_b),
            &Cuboid::new(Vector::new(half_b.x, half_b.y, half_b.z)),
            margin,
        )
        .expect("parry supports cuboids");
        match (ours, theirs) {
            (Some(m), Some(c)) if c.dist <= 0.0 => {
                // Overlapping: the SAT separation is minus the exact penetration depth.
                assert_near(m.separation, c.dist, tolerance, "penetration");
                compared[0] += 1;
            }
            (Some(m), Some(c)) => {
                // Apart within the margin: the SAT separation is a lower bound of the distance.
                assert!(
                    m.separation <= c.dist + tolerance,
                    "{} > {}",
                    m.separation,
                    c.dist
                );
                compared[1] += 1;
            }
            (None, None) => compared[2] += 1,
            (None, Some(c)) => panic!("parry finds a contact at distance {} within the margin", c.dist),
            (Some(m), None) => {
                assert!(m.separation <= margin && m.separation > 0.0, "{m:?}");
                compared[2] += 1;
            }
        }
    }
    assert!(compared.iter().all(|&n| n >= 10), "cases compared: {compared:?}");
}

#[test]
fn equal_boxes_stacked_keep_four_corner_points_under_perturbation() {
    // Incident vertices lie on the reference side planes: tiny motions move them across, so
    // ids may switch between "vertex kept" and "edge cut", but the points stay at the corners.
    let mut rng = seeded_rng(5);
    for _ in 0..200 {
        let pose_b = Pose::new(
            Vec3::new(0.0, 0.99, 0.0) + random_vec3(&mut rng, 1e-5),
            Quat::from_axis_angle(random_unit_vector(&mut rng), 1e-5),
        );
        let m = collide_hull_hull(&unit_box(), &Pose::IDENTITY, &unit_box(), &pose_b, 0.0).expect("overlap");
        assert_eq!(m.points().len(), 4, "{m:?}");
        for p in m.points() {
            assert_near(p.position.as_vec3().x.abs(), 0.5, 1e-4, "corner x");
            assert_near(p.position.as_vec3().z.abs(), 0.5, 1e-4, "corner z");
            assert_near(p.depth, 0.01, 1e-4, "depth");
        }
    }
}

/// The deepest-vertex fallback (hull_hull.rs `deepest_vertex_contact`), which the GPU's clip
/// kernel mirrors (tests/gpu_clip.rs): a knife-edge hull's low end in a slab, whose incident
/// face floats above the slab, gives the one point worked out in `support::clip_paths`, from
/// either side and anywhere in space, and reads back as the fallback.
#[test]
fn a_knife_edge_in_a_slab_takes_the_deepest_vertex_fallback() {
    for depth in [0.005, 0.02, 0.05] {
        for global in [Pose::IDENTITY, global_pose()] {
            let case = knife_in_slab(depth).placed(&global);
            for (case, sign, kind) in [
                (case.swapped(), -1.0, FeatureId::FACE_B),
                (case, 1.0, FeatureId::FACE_A),
            ] {
                let m = case.collide(0.0).expect("the knife is in the slab");
                assert_eq!(
                    cpu_clip_path(&case.a, &case.pose_a, &case.b, &case.pose_b, 0.0, &m),
                    ClipPath::Fallback,
                    "{m:?}"
                );
                assert_vec_near(m.normal, global.transform_vector(sign * Vec3::Y), TOL, "normal");
                assert_near(m.separation, -depth, TOL, "separation");
                let [p] = m.points() else {
                    panic!("one point: {m:?}");
                };
                let expected = global.transform_point(Vec3::new(0.1, 0.5 - 0.5 * depth, -0.7));
                assert_vec_near(p.position.as_vec3(), expected.as_vec3(), TOL, "position");
                assert_near(p.depth, depth, TOL, "depth");
                assert_eq!(p.id, FeatureId::new(kind, false, 3, 0));
            }
        }
    }
}

//! Compound bodies: validation at the door, analytic contacts (a dumbbell and an L on the
//! ground, two compounds touching at one child pair), either order, feature-id stability, and
//! parry3d's `Compound` contacts on random poses.

mod support;

use glam::{DVec3, Quat, Vec3};
use hullsat::constants::AXIS_PREFERENCE_TOLERANCE;
use hullsat::contact::{
    CompoundScratch, collide_compound_compound, collide_compound_shape, collide_shape_compound,
    collide_shapes,
};
use hullsat::shape::compound::{MAX_COMPOUND_CHILDREN, compound_feature_id};
use hullsat::{
    Capsule, Compound, CompoundChild, CompoundError, Cuboid, HalfSpace, Isometry, Manifold, Pose, Shape,
    Sphere,
};
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64;
use support::oracle::reference;
use support::parry::{to_parry_pose, to_parry_shape};
use support::shapes::{Family, random_direction, random_rotation, random_shape};
use support::worlds::{child, parry_compound, random_compound};
use support::{assert_near, assert_points_match};

fn cuboid(x: f32, y: f32, z: f32) -> Shape {
    Shape::Cuboid(Cuboid::new(Vec3::new(x, y, z)).unwrap())
}

fn sphere(r: f32) -> Shape {
    Shape::Sphere(Sphere::new(r).unwrap())
}

fn ground() -> Shape {
    Shape::HalfSpace(HalfSpace::new(Vec3::Y, 0.0).unwrap())
}

/// Two balls of radius 0.5 at x = ±1.
fn dumbbell() -> Compound {
    Compound::new(vec![
        child(sphere(0.5), Vec3::new(-1.0, 0.0, 0.0), Quat::IDENTITY),
        child(sphere(0.5), Vec3::new(1.0, 0.0, 0.0), Quat::IDENTITY),
    ])
    .unwrap()
}

/// An L: a leg 0.5 × 2 × 1 over x ∈ [-0.25, 0.25] and a foot 1 × 0.5 × 1 over x ∈ [0.25, 1.25],
/// both with their bottoms at y = -0.25.
fn l_shape() -> Compound {
    Compound::new(vec![
        child(cuboid(0.25, 1.0, 0.5), Vec3::new(0.0, 0.75, 0.0), Quat::IDENTITY),
        child(cuboid(0.5, 0.25, 0.5), Vec3::new(0.75, 0.0, 0.0), Quat::IDENTITY),
    ])
    .unwrap()
}

#[test]
fn validation_names_the_offending_child() {
    let ok = || child(sphere(1.0), Vec3::ZERO, Quat::IDENTITY);
    assert_eq!(Compound::new(vec![]), Err(CompoundError::Empty));
    // The count is checked before any child: 65 half-spaces are too many, not non-convex.
    let many = vec![child(ground(), Vec3::ZERO, Quat::IDENTITY); MAX_COMPOUND_CHILDREN + 1];
    assert_eq!(
        Compound::new(many),
        Err(CompoundError::TooManyChildren(MAX_COMPOUND_CHILDREN + 1))
    );
    assert!(Compound::new(vec![ok(); MAX_COMPOUND_CHILDREN]).is_ok());
    let with = |bad: CompoundChild| Compound::new(vec![ok(), ok(), bad, ok()]);
    assert!(matches!(
        with(child(ground(), Vec3::ZERO, Quat::IDENTITY)),
        Err(CompoundError::NotConvex { child: 2, .. })
    ));
    for t in [
        Vec3::new(f32::NAN, 0.0, 0.0),
        Vec3::new(0.0, f32::INFINITY, 0.0),
        Vec3::splat(2e12),
    ] {
        assert!(matches!(
            with(child(sphere(1.0), t, Quat::IDENTITY)),
            Err(CompoundError::BadTranslation { child: 2, .. })
        ));
    }
    for q in [
        Quat::from_xyzw(0.0, 0.0, 0.0, 2.0),
        Quat::from_xyzw(f32::NAN, 0.0, 0.0, 1.0),
    ] {
        assert!(matches!(
            with(child(sphere(1.0), Vec3::ZERO, q)),
            Err(CompoundError::BadRotation { child: 2, .. })
        ));
    }
    let message = with(child(ground(), Vec3::ZERO, Quat::IDENTITY))
        .unwrap_err()
        .to_string();
    assert!(message.contains("child 2"), "{message}");
    // Within the tolerance a rotation is normalized.
    let nearly = Quat::from_rotation_z(0.3) * 1.0005;
    let c = Compound::new(vec![child(cuboid(1.0, 1.0, 1.0), Vec3::ZERO, nearly)]).unwrap();
    assert!((c.children()[0].pose.rotation.length() - 1.0).abs() < 1e-6);
}

#[test]
fn bounds_hold_every_child() {
    let c = Compound::new(vec![
        child(
            cuboid(0.5, 0.2, 0.1),
            Vec3::new(3.0, 0.0, 0.0),
            Quat::from_rotation_z(0.5),
        ),
        child(
            Shape::Capsule(Capsule::new(1.0, 0.2).unwrap()),
            Vec3::new(-1.0, 2.0, 0.0),
            Quat::IDENTITY,
        ),
    ])
    .unwrap();
    let (lo, hi) = c.aabb();
    assert!(
        (lo - Vec3::new(-1.2, -0.5, -0.2)).abs().max_element() < 0.5,
        "{lo}"
    );
    assert!((hi.y - 3.2).abs() < 1e-5 && lo.x <= -1.2 && hi.x >= 3.0, "{hi}");
    let (centre, radius) = c.bounding_sphere();
    let corners = [Vec3::new(-1.2, 3.2, 0.0), Vec3::new(-1.2, 0.8, 0.2)];
    for p in corners {
        assert!(p.distance(centre) <= radius, "{p} outside {centre} {radius}");
    }
}

#[test]
fn dumbbell_on_the_ground_gets_one_point_under_each_ball() {
    let dumbbell = dumbbell();
    let mut scratch = CompoundScratch::default();
    let yaw = Quat::from_rotation_y(0.6);
    let body = Pose::new(DVec3::new(30.0, 0.49, -3.0), yaw);
    let m = collide_shape_compound(&ground(), &Pose::IDENTITY, &dumbbell, &body, 0.0, &mut scratch).unwrap();
    assert!(m.normal.abs_diff_eq(Vec3::Y, 1e-6), "{m:?}");
    assert_near(m.separation, -0.01, 1e-5, "separation");
    let under = |x: f32| {
        let p = body.transform_point(Vec3::new(x, 0.0, 0.0));
        (Vec3::new(p.x as f32, -0.005, p.z as f32), 0.01)
    };
    assert_points_match(&m, &[under(-1.0), under(1.0)], 1e-5);
    // Compound as A: the same contact seen from the other side.
    let other =
        collide_compound_shape(&dumbbell, &body, &ground(), &Pose::IDENTITY, 0.0, &mut scratch).unwrap();
    assert!(other.normal.abs_diff_eq(-Vec3::Y, 1e-6), "{other:?}");
    assert_points_match(&other, &[under(-1.0), under(1.0)], 1e-5);
    // Tilted about z: the ball at local x = -1 touches, the other is lifted off: one point.
    let tilted = Pose::new(
        DVec3::new(0.0, 0.3f64.sin() + 0.49, 0.0),
        Quat::from_rotation_z(0.3),
    );
    let m =
        collide_shape_compound(&ground(), &Pose::IDENTITY, &dumbbell, &tilted, 0.0, &mut scratch).unwrap();
    assert_eq!(m.point_count(), 1, "{m:?}");
    assert_near(m.separation, -0.01, 1e-5, "separation");
    assert_eq!(
        (m.points()[0].id.low() >> 8) & 0x3f,
        0,
        "the ball at x = -1 is child 0"
    );
}

#[test]
fn l_shape_on_the_ground_gets_its_outer_corners() {
    let l = l_shape();
    let mut scratch = CompoundScratch::default();
    for (yaw, depth) in [(0.0f32, 0.01f32), (1.1, 0.002), (-2.5, 0.03)] {
        let body = Pose::new(
            DVec3::new(2.0, 0.25 - f64::from(depth), 5.0),
            Quat::from_rotation_y(yaw),
        );
        let m = collide_shape_compound(&ground(), &Pose::IDENTITY, &l, &body, 0.0, &mut scratch).unwrap();
        assert!(m.normal.abs_diff_eq(Vec3::Y, 1e-6), "{m:?}");
        assert_near(m.separation, -depth, 1e-5, "separation");
        let corner = |x: f32, z: f32| {
            let p = body.transform_point(Vec3::new(x, -0.25, z)).as_vec3();
            (Vec3::new(p.x, -0.5 * depth, p.z), depth)
        };
        let expected = [
            corner(-0.25, -0.5),
            corner(-0.25, 0.5),
            corner(1.25, -0.5),
            corner(1.25, 0.5),
        ];
        assert_points_match(&m, &expected, 1e-5);
        // The outer corners name the leg (child 0) on the left and the foot (child 1) on the right.
        for p in m.points() {
            let local = body.inverse_transform_point(p.position);
            let expected_child = if local.x < 0.5 { 0 } else { 1 };
            assert_eq!((p.id.low() >> 8) & 0x3f, expected_child, "{p:?}");
        }
    }
}

#[test]
fn compounds_touching_at_one_child_pair_equal_that_pairs_manifold() {
    let a = Compound::new(vec![
        child(cuboid(0.5, 0.5, 0.5), Vec3::new(-10.0, 0.0, 0.0), Quat::IDENTITY),
        child(
            cuboid(0.6, 0.3, 0.4),
            Vec3::new(0.0, 0.0, 0.0),
            Quat::from_rotation_x(0.3),
        ),
        child(sphere(0.4), Vec3::new(10.0, 0.0, 0.0), Quat::IDENTITY),
    ])
    .unwrap();
    let b = Compound::new(vec![
        child(sphere(0.3), Vec3::new(0.0, 10.0, 0.0), Quat::IDENTITY),
        child(
            cuboid(0.4, 0.4, 0.4),
            Vec3::new(0.0, 0.0, 0.0),
            Quat::from_rotation_z(0.2),
        ),
        child(
            Shape::Capsule(Capsule::new(0.5, 0.2).unwrap()),
            Vec3::new(0.0, -10.0, 0.0),
            Quat::IDENTITY,
        ),
    ])
    .unwrap();
    let mut scratch = CompoundScratch::default();
    let mut rng = Pcg64::seed_from_u64(3);
    let mut checked = 0;
    for _ in 0..40 {
        // B's child 1 placed against A's child 1 from a random direction.
        let pose_a = Pose::new(DVec3::new(-5e5, 2.0, 7.0), random_rotation(&mut rng));
        let direction = random_direction(&mut rng);
        let child_a = pose_a.mul_isometry(&a.children()[1].pose);
        let rotation_b = random_rotation(&mut rng);
        let mut pose_b = Pose::new(child_a.translation + (direction * 1.1).as_dvec3(), rotation_b);
        let child_b = |pose_b: &Pose| pose_b.mul_isometry(&b.children()[1].pose);
        // Slide B along the direction until the pair is 0.01 deep, by the pair's own routine.
        let pair = |pose_b: &Pose, margin: f32| {
            collide_shapes(
                &a.children()[1].shape,
                &child_a,
                &b.children()[1].shape,
                &child_b(pose_b),
                margin,
            )
        };
        let Some(probe) = pair(&pose_b, 1.0) else { continue };
        pose_b.translation -= (probe.normal * (probe.separation + 0.01)).as_dvec3();
        let expected = pair(&pose_b, 0.0).unwrap();
        // Only this child pair may touch (the others are metres apart, unless the draw lined
        // them up).
        if child_pairs(&posed_children(&a, &pose_a), &posed_children(&b, &pose_b), 0.0).len() > 1 {
            continue;
        }
        let m = collide_compound_compound(&a, &pose_a, &b, &pose_b, 0.0, &mut scratch).unwrap();
        assert!(
            m.normal.abs_diff_eq(expected.normal, 1e-5),
            "{m:?} vs {expected:?}"
        );
        assert_near(m.separation, expected.separation, 1e-5, "separation");
        assert_eq!(m.point_count(), expected.point_count(), "{m:?} vs {expected:?}");
        for (p, q) in m.points().iter().zip(expected.points()) {
            assert!(p.position.distance(q.position) < 1e-5, "{p:?} vs {q:?}");
            assert_near(p.depth, q.depth, 1e-5, "depth");
            assert_eq!(p.id, compound_feature_id(1, 1, q.id));
        }
        checked += 1;
    }
    assert!(checked > 30, "{checked}");
}

#[test]
fn either_order_gives_the_same_contact_swapped() {
    let l = l_shape();
    let cube = cuboid(0.3, 0.3, 0.3);
    let mut scratch = CompoundScratch::default();
    // A cube resting tilted on the foot, or in the crook against the leg. Tilted about two axes:
    // with two parallel faces the convex routine gives the reference face to its body A, so the
    // ids of the two orders name different reference faces (as for two convex shapes).
    let l_pose = Pose::new(DVec3::new(1.0, 2.0, 3.0), Quat::from_rotation_y(0.4));
    for (x, tilt) in [(0.8f32, 0.1f32), (0.7, -0.2), (0.58, 0.3)] {
        let rotation = Quat::from_rotation_z(tilt) * Quat::from_rotation_x(0.15);
        let cube_pose = l_pose.mul_isometry(&Isometry::new(Vec3::new(x, 0.58, 0.1), rotation));
        let ab = collide_compound_shape(&l, &l_pose, &cube, &cube_pose, 0.0, &mut scratch).unwrap();
        let ba = collide_shape_compound(&cube, &cube_pose, &l, &l_pose, 0.0, &mut scratch).unwrap();
        let swapped = ab.swapped();
        assert!(swapped.normal.abs_diff_eq(ba.normal, 1e-5), "{ab:?} {ba:?}");
        assert_near(swapped.separation, ba.separation, 1e-5, "separation");
        let mut ids: Vec<_> = swapped.points().iter().map(|p| p.id).collect();
        let mut other: Vec<_> = ba.points().iter().map(|p| p.id).collect();
        ids.sort();
        other.sort();
        assert_eq!(ids, other, "{ab:?} {ba:?}");
    }
}

#[test]
fn feature_ids_are_stable_under_a_tiny_motion() {
    let l = l_shape();
    let slab = cuboid(5.0, 0.5, 5.0);
    let mut scratch = CompoundScratch::default();
    let slab_pose = Pose::from_translation(DVec3::new(0.0, -0.5, 0.0));
    let mut rng = Pcg64::seed_from_u64(11);
    for _ in 0..50 {
        let yaw = Quat::from_rotation_y(rng.random_range(-3.0..3.0));
        let tilt = Quat::from_rotation_x(rng.random_range(-0.02..0.02));
        let at = DVec3::new(rng.random_range(-2.0..2.0), 0.24, rng.random_range(-2.0..2.0));
        let pose = Pose::new(at, tilt * yaw);
        let m = collide_shape_compound(&slab, &slab_pose, &l, &pose, 0.0, &mut scratch).unwrap();
        let nudge = Pose::new(
            at + DVec3::new(1e-4, -1e-5, 2e-5),
            Quat::from_rotation_z(1e-4) * tilt * yaw,
        );
        let n = collide_shape_compound(&slab, &slab_pose, &l, &nudge, 0.0, &mut scratch).unwrap();
        let ids = |m: &Manifold| {
            let mut ids: Vec<_> = m.points().iter().map(|p| p.id).collect();
            ids.sort();
            ids
        };
        assert_eq!(ids(&m), ids(&n), "{m:?}\n{n:?}");
    }
}

/// A posed child: its shape and world pose.
type Part = (Shape, Pose);

/// Every pair of a part of `a` and a part of `b` within `margin`, with its convex manifold.
fn child_pairs<'s>(a: &'s [Part], b: &'s [Part], margin: f32) -> Vec<(&'s Part, &'s Part, Manifold)> {
    let mut out = Vec::new();
    for ca in a {
        for cb in b {
            if let Some(m) = collide_shapes(&ca.0, &ca.1, &cb.0, &cb.1, margin) {
                out.push((ca, cb, m));
            }
        }
    }
    out
}

/// The gap between two posed convex shapes along unit `n` (from the first toward the second),
/// in f64 from their support functions: the lowest point of the second minus the highest of the
/// first. The separation of two convex shapes is the largest gap over all directions.
fn gap(a: &(Shape, Pose), b: &(Shape, Pose), n: Vec3) -> f64 {
    let n = n.as_dvec3().normalize();
    let reach = |(shape, pose): &(Shape, Pose), d: DVec3| -> f64 {
        let points: Vec<DVec3> = match shape {
            Shape::Sphere(_) => vec![DVec3::ZERO],
            Shape::Capsule(c) => c.segment().iter().map(|p| p.as_dvec3()).collect(),
            _ => shape
                .as_hull()
                .unwrap()
                .vertices()
                .iter()
                .map(|v| v.as_dvec3())
                .collect(),
        };
        let radius = match shape {
            Shape::Sphere(s) => f64::from(s.radius),
            Shape::Capsule(c) => f64::from(c.radius),
            _ => 0.0,
        };
        points
            .iter()
            .map(|&p| pose.transform_dpoint(p).dot(d))
            .fold(f64::MIN, f64::max)
            + radius
    };
    -reach(b, -n) - reach(a, n)
}

fn posed_children(c: &Compound, pose: &Pose) -> Vec<(Shape, Pose)> {
    c.children()
        .iter()
        .map(|ch| (ch.shape.clone(), pose.mul_isometry(&ch.pose)))
        .collect()
}

#[test]
fn contacts_agree_with_parry_compound_on_random_poses() {
    let mut rng = Pcg64::seed_from_u64(0xc0_4d);
    let (mut compared, mut normals, mut both_none, mut parry_misses) = (0, 0, 0, 0);
    let mut scratch = CompoundScratch::default();
    for i in 0..1500 {
        let a = random_compound(&mut rng);
        let single = i % 2 == 0;
        let b_compound = random_compound(&mut rng);
        let b_shape = random_shape(&mut rng, [Family::Hull, Family::Box][i % 4 / 2]);
        let pose_a = Pose::new(DVec3::new(100.0, -20.0, 3.0), random_rotation(&mut rng));
        let reach = a.bounding_sphere().1 + 1.5;
        let pose_b = Pose::new(
            pose_a.translation + (random_direction(&mut rng) * rng.random_range(0.0..reach)).as_dvec3(),
            random_rotation(&mut rng),
        );
        let margin = if i % 3 == 0 { 0.05 } else { 0.0 };
        let pa = parry_compound(&a);
        let (ours, theirs, b_parts) = if single {
            let pb = to_parry_shape(&b_shape).unwrap();
            let ours = collide_compound_shape(&a, &pose_a, &b_shape, &pose_b, margin, &mut scratch);
            let theirs = parry3d::query::contact(
                &to_parry_pose(&pose_a),
                &pa,
                &to_parry_pose(&pose_b),
                &*pb,
                margin,
            );
            (ours, theirs.unwrap(), vec![(b_shape.clone(), pose_b)])
        } else {
            let pb = parry_compound(&b_compound);
            let ours = collide_compound_compound(&a, &pose_a, &b_compound, &pose_b, margin, &mut scratch);
            let theirs =
                parry3d::query::contact(&to_parry_pose(&pose_a), &pa, &to_parry_pose(&pose_b), &pb, margin);
            (ours, theirs.unwrap(), posed_children(&b_compound, &pose_b))
        };
        let a_parts = posed_children(&a, &pose_a);
        let scale = a.size() + b_parts.iter().map(|p| p.0.size()).fold(0.0, f32::max);
        match (&ours, &theirs) {
            (None, None) => both_none += 1,
            (Some(m), None) => assert!(m.separation > margin - 1e-4 * scale, "{i}: only ours {m:?}"),
            (None, Some(c)) => assert!(c.dist > margin - 1e-4 * scale, "{i}: only parry {c:?}"),
            (Some(m), Some(c)) => {
                compared += 1;
                let mut pairs = child_pairs(&a_parts, &b_parts, margin);
                pairs.sort_by(|x, y| x.2.separation.total_cmp(&y.2.separation));
                let n = Vec3::new(c.normal1.x, c.normal1.y, c.normal1.z);
                let (ca, cb, _) = &pairs[0];
                let tolerance = 1e-4 * scale;
                // The routines prefer a face axis to an edge axis up to this much deeper.
                let preference = AXIS_PREFERENCE_TOLERANCE * (ca.0.size() + cb.0.size());
                if (m.separation - c.dist).abs() > tolerance {
                    // Disagreement: the support-function referee decides. The separation of two
                    // convex shapes is the largest gap along any direction, so ours must be the
                    // gap along our own normal, and parry's normal must not show a larger gap by more
                    // than the face preference allows.
                    let ours_gap = gap(ca, cb, m.normal);
                    let parry_gap = gap(ca, cb, n);
                    assert!(
                        (f64::from(m.separation) - ours_gap).abs() <= f64::from(tolerance)
                            && parry_gap <= ours_gap + f64::from(preference + tolerance),
                        "{i}: separation {} (gap {ours_gap}) vs parry {} (gap along its normal {parry_gap})",
                        m.separation,
                        c.dist
                    );
                    parry_misses += 1;
                    continue;
                }
                // Normals judged where the deepest child pair is unique and, for polytopes, its
                // deepest axis too (the f64 reference's runner-up), as tests/parry_differential.rs.
                let tie = 2.0 * AXIS_PREFERENCE_TOLERANCE * scale;
                let unique_pair = pairs.len() < 2 || pairs[1].2.separation - pairs[0].2.separation > tie;
                let unique_axis = match (ca.0.as_hull(), cb.0.as_hull()) {
                    (Some(ha), Some(hb)) => {
                        let r = reference(ha, &ca.1, hb, &cb.1);
                        r.separation > 0.0 || r.separation - r.runner_up > f64::from(tie)
                    }
                    _ => true,
                };
                if unique_pair && unique_axis {
                    normals += 1;
                    let angle = m.normal.angle_between(n).to_degrees();
                    if angle > 1.0 {
                        // Parry's normal must show a smaller gap than ours: it is not the
                        // separating direction, ours is nearer.
                        let (ours_gap, parry_gap) = (gap(ca, cb, m.normal), gap(ca, cb, n));
                        assert!(
                            parry_gap < ours_gap - 1e-6 * f64::from(scale),
                            "{i}: normal {} is {angle:.3} deg off parry's {n} (gaps {ours_gap} vs {parry_gap})",
                            m.normal
                        );
                        parry_misses += 1;
                    }
                }
                // One to four finite points.
                assert!((1..=4).contains(&m.point_count()));
                assert!(
                    m.points()
                        .iter()
                        .all(|p| p.depth.is_finite() && p.position.is_finite())
                );
            }
        }
    }
    println!(
        "{compared} pairs compared with parry ({normals} normals), {both_none} apart, {parry_misses} \
         where the support referee confirmed ours over parry's"
    );
    assert!(
        compared > 300 && both_none > 100,
        "the draw must mix both verdicts: {compared} {both_none}"
    );
}

#[test]
fn ground_contacts_agree_with_parry_on_each_child() {
    // Parry's half-space against its `Compound` reports depths unrelated to any child (a
    // compound 1 unit above the ground "2.3 deep"), so the reference is parry's half-space
    // against each child alone, the deepest kept; how often its compound path differs is printed.
    let mut rng = Pcg64::seed_from_u64(0x9_70d);
    let ground_parry = parry3d::shape::HalfSpace::new(parry3d::math::Vector::Y);
    let parry_on_ground = |shape: &dyn parry3d::shape::Shape, pose: &Pose| {
        parry3d::query::contact(
            &to_parry_pose(&Pose::IDENTITY),
            &ground_parry,
            &to_parry_pose(pose),
            shape,
            0.02,
        )
        .unwrap()
    };
    let mut scratch = CompoundScratch::default();
    let (mut compared, mut compound_differs) = (0, 0);
    for _ in 0..300 {
        let c = random_compound(&mut rng);
        let height = rng.random_range(-0.5..c.bounding_sphere().1 + 0.5);
        let pose = Pose::new(
            DVec3::new(3.0, f64::from(height), -2.0),
            random_rotation(&mut rng),
        );
        let ours = collide_shape_compound(&ground(), &Pose::IDENTITY, &c, &pose, 0.02, &mut scratch);
        let deepest = posed_children(&c, &pose)
            .iter()
            .filter_map(|(shape, child_pose)| parry_on_ground(&*to_parry_shape(shape).unwrap(), child_pose))
            .map(|t| t.dist)
            .reduce(f32::min);
        let whole = parry_on_ground(&parry_compound(&c), &pose).map(|t| t.dist);
        compound_differs += usize::from(
            whole.is_some() != deepest.is_some()
                || whole.zip(deepest).is_some_and(|(w, d)| (w - d).abs() > 1e-4),
        );
        match (ours, deepest) {
            (None, None) => {}
            (Some(m), Some(d)) => {
                compared += 1;
                assert!(m.normal.abs_diff_eq(Vec3::Y, 1e-6), "{m:?}");
                assert_near(m.separation, d, 1e-5 * (1.0 + height.abs()), "separation");
                assert!(
                    m.points().iter().all(|p| p.depth <= -m.separation + 1e-5),
                    "{m:?}"
                );
            }
            (m, d) => panic!("verdicts differ: ours {m:?}, parry's deepest child {d:?}"),
        }
    }
    println!("{compared} compared; parry's compound path differed from its children on {compound_differs}");
    assert!(compared > 100, "{compared}");
}

/// Margins the margin-independence test sweeps, length units, ascending.
const SWEPT_MARGINS: [f32; 5] = [0.0, 0.01, 0.1, 0.5, 2.0];

/// The margin decides only whether a pair is reported: a compound pair's separation (the deepest
/// child pair's) is the same at every margin that reports it, within 1e-6 × the pair's scale
/// (rounding only: the same child pair's operations), and reported at a margin means within it.
#[test]
fn separations_do_not_depend_on_the_margin() {
    let mut rng = Pcg64::seed_from_u64(0x4d_a9);
    let mut scratch = CompoundScratch::default();
    let mut reported_pairs = 0;
    for i in 0..1500 {
        let a = random_compound(&mut rng);
        let b_compound = random_compound(&mut rng);
        let b_shape = match i % 4 {
            0 => random_shape(&mut rng, Family::Hull),
            1 => random_shape(&mut rng, Family::Box),
            2 => sphere(rng.random_range(0.2..0.8)),
            _ => Shape::Capsule(Capsule::new(0.4, 0.2).unwrap()),
        };
        let pose_a = Pose::new(DVec3::new(100.0, -20.0, 3.0), random_rotation(&mut rng));
        let reach = a.bounding_sphere().1 + 2.0;
        let pose_b = Pose::new(
            pose_a.translation + (random_direction(&mut rng) * rng.random_range(0.0..reach)).as_dvec3(),
            random_rotation(&mut rng),
        );
        let scale = a.size() + b_shape.size().max(b_compound.size());
        let same = 1e-6 * scale;
        let reported: Vec<Option<Manifold>> = SWEPT_MARGINS
            .iter()
            .map(|&margin| {
                if i % 8 < 4 {
                    collide_compound_shape(&a, &pose_a, &b_shape, &pose_b, margin, &mut scratch)
                } else {
                    collide_compound_compound(&a, &pose_a, &b_compound, &pose_b, margin, &mut scratch)
                }
            })
            .collect();
        for (k, (&small, m)) in SWEPT_MARGINS.iter().zip(&reported).enumerate() {
            let Some(m) = m else { continue };
            reported_pairs += 1;
            assert!(m.separation <= small + same, "{i}: {m:?} beyond margin {small}");
            for (&large, l) in SWEPT_MARGINS.iter().zip(&reported).skip(k + 1) {
                let l = l
                    .as_ref()
                    .unwrap_or_else(|| panic!("{i}: reported at margin {small} ({m:?}), not at {large}"));
                assert!(
                    (l.separation - m.separation).abs() <= same,
                    "{i}: separation {} at margin {small}, {} at {large}",
                    m.separation,
                    l.separation
                );
            }
        }
        if let Some(first) = reported.iter().position(Option::is_some) {
            let separation = reported[first].as_ref().unwrap().separation;
            assert!(
                first == 0 || separation > SWEPT_MARGINS[first - 1] - same,
                "{i}: separation {separation} first reported at margin {}",
                SWEPT_MARGINS[first]
            );
        }
    }
    assert!(reported_pairs > 2000, "too few reported pairs: {reported_pairs}");
}

//! Property tests over random hull and box pairs (proptest draws a seed; the seeded generators
//! in tests/support/shapes.rs build the pair from it, so every failure replays from its seed).

mod support;

use glam::{Quat, Vec3};
use hullsat::constants::AXIS_PREFERENCE_TOLERANCE;
use hullsat::contact::collide_shapes;
use hullsat::{Cuboid, FeatureId, Manifold, Pose, Shape};
use proptest::prelude::*;
use proptest::test_runner::{RngSeed, TestCaseError};
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64;
use support::hull_plane_distance;
use support::oracle::reference;
use support::shapes::{FAMILIES, random_direction, random_pose, random_rotation, random_shape};

struct Pair {
    a: Shape,
    b: Shape,
    pose_a: Pose,
    pose_b: Pose,
    scale: f32,
}

/// A random overlapping-or-near pair of hulls/boxes from `seed`.
fn random_pair(seed: u64) -> Pair {
    let mut rng = Pcg64::seed_from_u64(seed);
    let (family_a, family_b) = (FAMILIES[rng.random_range(0..4)], FAMILIES[rng.random_range(0..4)]);
    let a = random_shape(&mut rng, family_a);
    let b = random_shape(&mut rng, family_b);
    let scale = a.bounding_radius() + b.bounding_radius();
    let pose_a = random_pose(&mut rng, Vec3::ZERO, 0.1);
    let pose_b = Pose::new(
        pose_a.translation + (random_direction(&mut rng) * rng.random_range(0.0..0.9) * scale).as_dvec3(),
        random_rotation(&mut rng),
    );
    Pair {
        a,
        b,
        pose_a,
        pose_b,
        scale,
    }
}

/// Whether the deepest axis is unique: per the independent f64 reference, no axis more than 1°
/// away from it separates within twice the preference tolerance. On near ties either axis is a
/// right answer, and swapping A and B may pick the other (two edge axes 0.6° apart with equal
/// separations were seen: seed 9801494870563360777).
fn has_unique_axis(p: &Pair) -> bool {
    let r = reference(
        p.a.as_hull().unwrap(),
        &p.pose_a,
        p.b.as_hull().unwrap(),
        &p.pose_b,
    );
    r.separation - r.runner_up > 2.0 * (AXIS_PREFERENCE_TOLERANCE * p.scale) as f64
}

/// The swap property for one seed.
fn check_swap(seed: u64) -> Result<(), TestCaseError> {
    let p = random_pair(seed);
    let ab = collide_shapes(&p.a, &p.pose_a, &p.b, &p.pose_b, 0.0);
    let ba = collide_shapes(&p.b, &p.pose_b, &p.a, &p.pose_a, 0.0);
    prop_assert_eq!(ab.is_some(), ba.is_some());
    if let (Some(ab), Some(ba)) = (ab, ba) {
        prop_assert!(
            (ab.separation - ba.separation).abs() <= 1e-5 * p.scale,
            "separation {} vs {}",
            ab.separation,
            ba.separation
        );
        if has_unique_axis(&p) {
            // The normal tolerance: 1 degree.
            prop_assert!(
                ab.normal.dot(-ba.normal) > 1.0f32.to_radians().cos(),
                "normal {} vs {}",
                ab.normal,
                ba.normal
            );
        }
    }
    Ok(())
}

#[test]
fn swapping_a_pair_whose_two_edge_axes_tie_keeps_the_separation() {
    check_swap(9801494870563360777).unwrap();
}

fn ids(m: &Manifold) -> Vec<FeatureId> {
    let mut ids: Vec<FeatureId> = m.points().iter().map(|p| p.id).collect();
    ids.sort();
    ids
}

proptest! {
    // A fixed seed keeps CI reproducible; failures found with other seeds become named tests.
    #![proptest_config(ProptestConfig {
        cases: 512,
        rng_seed: RngSeed::Fixed(0x0011_05a7),
        ..ProptestConfig::default()
    })]

    #[test]
    fn swapping_a_and_b_negates_the_normal_and_keeps_the_separation(seed in any::<u64>()) {
        check_swap(seed)?;
    }

    #[test]
    fn moving_both_bodies_far_from_the_origin_keeps_the_separation(seed in any::<u64>()) {
        let p = random_pair(seed);
        let offset = Vec3::new(1e4, -1e4, 1e4);
        let moved = |pose: &Pose| Pose::new(pose.translation + offset.as_dvec3(), pose.rotation);
        let near = collide_shapes(&p.a, &p.pose_a, &p.b, &p.pose_b, 0.0);
        let far = collide_shapes(&p.a, &moved(&p.pose_a), &p.b, &moved(&p.pose_b), 0.0);
        // Positions at 1e4 carry f32 rounding of ~1e-3 (ulp at 1e4 is 9.8e-4): the relative
        // pose absorbs one rounding of each translation, so allow two ulps at 1e4.
        let tolerance = 2.0 * 1e4 * f32::EPSILON + 1e-5 * p.scale;
        match (near, far) {
            (Some(n), Some(f)) => prop_assert!((n.separation - f.separation).abs() <= tolerance,
                "separation {} near vs {} far", n.separation, f.separation),
            (None, None) => {}
            (n, f) => {
                let s = n.or(f).unwrap().separation;
                prop_assert!(s.abs() <= tolerance, "verdict differs with separation {}", s);
            }
        }
    }

    #[test]
    fn every_point_lies_midway_between_both_surfaces(seed in any::<u64>()) {
        let p = random_pair(seed);
        let margin = 0.02 * p.scale;
        if let Some(m) = collide_shapes(&p.a, &p.pose_a, &p.b, &p.pose_b, margin) {
            prop_assert!(m.point_count() >= 1 && m.point_count() <= 4);
            prop_assert!((m.normal.length() - 1.0).abs() < 1e-4);
            let tolerance = 1e-4 * p.scale;
            for c in m.points() {
                let half = 0.5 * c.depth.abs() + tolerance;
                let da = hull_plane_distance(p.a.as_hull().unwrap(), &p.pose_a, c.position.as_vec3());
                let db = hull_plane_distance(p.b.as_hull().unwrap(), &p.pose_b, c.position.as_vec3());
                prop_assert!(da <= half && db <= half,
                    "point {} depth {} is {} from A and {} from B", c.position.as_vec3(), c.depth, da, db);
                // Depths are measured along the chosen (face-preferred) axis, which may be up to the
                // preference tolerance deeper than the exact separation.
                let preference = AXIS_PREFERENCE_TOLERANCE * p.scale;
                prop_assert!(c.depth <= -m.separation + preference + tolerance,
                    "point depth {} deeper than the separation {}", c.depth, m.separation);
            }
        }
    }

    #[test]
    fn tiny_perturbations_of_a_resting_pose_keep_the_feature_ids(seed in any::<u64>()) {
        let mut rng = Pcg64::seed_from_u64(seed);
        let ground = Shape::Cuboid(Cuboid::new(Vec3::new(10.0, 1.0, 10.0)).unwrap());
        let family = FAMILIES[rng.random_range(0..3)];
        let body = random_shape(&mut rng, family);
        let hull = body.as_hull().unwrap();
        // Rest a random face of the body flat on the ground's top face, 0.01 deep.
        let face = rng.random_range(0..hull.faces().len());
        let down = Quat::from_rotation_arc(hull.planes()[face].normal, -Vec3::Y);
        let rotation = Quat::from_rotation_y(rng.random_range(0.0..std::f32::consts::TAU)) * down;
        let lowest = hull.vertices().iter().map(|v| (rotation * *v).y).fold(f32::INFINITY, f32::min);
        let pose = Pose::new(Vec3::new(0.3, 1.0 - lowest - 0.01, -0.2), rotation);
        let ground_pose = Pose::IDENTITY;
        let base = collide_shapes(&ground, &ground_pose, &body, &pose, 0.0);
        prop_assert!(base.is_some());
        let base = base.unwrap();
        for _ in 0..8 {
            let nudge = Pose::new(
                pose.translation + (random_direction(&mut rng) * 1e-5).as_dvec3(),
                (Quat::from_axis_angle(random_direction(&mut rng), 1e-5) * pose.rotation).normalize(),
            );
            let nudged = collide_shapes(&ground, &ground_pose, &body, &nudge, 0.0).unwrap();
            prop_assert_eq!(ids(&base), ids(&nudged), "ids changed under a 1e-5 nudge");
        }
    }
}

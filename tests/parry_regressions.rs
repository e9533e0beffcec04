//! Pairs where parry3d 0.31 and the independent f64 reference (tests/support/oracle.rs)
//! disagreed in the differential test (tests/parry_differential.rs, seed 0x5a7_d1ff), kept as
//! named regressions. hullsat must match the f64 reference; parry's values are in the comments.

mod support;

use glam::{Quat, Vec3};
use hullsat::constants::AXIS_PREFERENCE_TOLERANCE;
use hullsat::contact::collide_shapes;
use hullsat::{ConvexHull, Cuboid, Pose, Shape};
use support::oracle::reference;

fn hull(points: &[[f32; 3]]) -> Shape {
    let points: Vec<Vec3> = points.iter().map(|&p| Vec3::from_array(p)).collect();
    Shape::Hull(ConvexHull::from_points(&points).expect("regression hull builds"))
}

fn pose(t: [f32; 3], q: [f32; 4]) -> Pose {
    Pose::new(Vec3::from_array(t), Quat::from_array(q).normalize())
}

/// hullsat's separation equals the f64 reference within 1e-4 of the pair's scale, and so does
/// the recorded reference value (the data still describes the same pair).
fn assert_matches_reference(a: Shape, pose_a: Pose, b: Shape, pose_b: Pose, margin: f32, recorded: f64) {
    let scale = (a.bounding_radius() + b.bounding_radius()) as f64;
    let r = reference(a.as_hull().unwrap(), &pose_a, b.as_hull().unwrap(), &pose_b);
    assert!(
        (r.separation - recorded).abs() < 1e-6 * scale,
        "reference {} vs recorded {recorded}",
        r.separation
    );
    let m = collide_shapes(&a, &pose_a, &b, &pose_b, margin).expect("penetrating pair has a manifold");
    assert!(
        (m.separation as f64 - r.separation).abs() <= 1e-4 * scale,
        "hullsat {} vs reference {}",
        m.separation,
        r.separation
    );
    // The normal is checked only where the deepest axis is unique (as in the differential test).
    if r.separation - r.runner_up > 2.0 * AXIS_PREFERENCE_TOLERANCE as f64 * scale {
        let angle = m.normal.as_dvec3().angle_between(r.normal).to_degrees();
        assert!(angle <= 1.0, "normal {} vs {} ({angle} deg)", m.normal, r.normal);
    }
}

/// Needle (A) into a random hull (B), 4.13e-4 deep: parry 0.31 reports +5.5e-8 (touching), the f64 reference and hullsat -4.13e-4.
#[test]
fn a_needle_grazing_a_hull_penetrates_by_4e_4() {
    let a = hull(&[
        [-0.70327103, 0.0056242016, 0.0063597313],
        [-0.67800605, -0.0056467885, 0.0013344901],
        [0.70327103, -0.004253742, -0.00056088937],
        [0.1268432, 0.004518319, -0.005860534],
        [-0.053753745, 0.0053595495, -0.0039921254],
        [0.25754002, 0.000355158, 0.0007034578],
    ]);
    let b = hull(&[
        [-0.1350486, -0.8832648, -0.5236501],
        [0.7314515, -0.35866383, -0.29835495],
        [0.54948974, -0.627352, 0.82819134],
        [-0.2836668, 0.34165648, 1.0815448],
        [0.40272814, -0.042672776, 1.186023],
        [0.12867334, 0.75835633, -0.031544507],
        [0.6406256, 0.39960164, 0.15519367],
        [-0.0047816876, -0.46734813, -1.3422133],
        [-0.2902032, -0.65677744, 0.50539935],
        [0.6128536, 0.17594418, -1.0292023],
        [-0.88175464, -0.25217715, 0.08465877],
        [-0.7181126, -0.45566586, -0.67702246],
        [-0.21017043, 0.37813398, -1.4378352],
        [0.0069638607, 0.9073807, -0.63576233],
        [-0.42175928, 0.78734994, 0.08339092],
        [-0.5074787, 0.028575374, -1.0370775],
        [-0.82101357, 0.22107406, 0.09497039],
        [-0.56014174, 0.27302137, -0.67481816],
        [-0.648569, 0.14941615, 0.64871114],
        [0.3870468, 0.69039834, -0.25703955],
        [-0.46935475, 0.43842256, 0.6133667],
    ]);
    let (pose_a, pose_b) = (
        pose(
            [-0.040997364, 0.008275014, -0.04006172],
            [-0.04878213, -0.43015411, 0.88063896, 0.19251704],
        ),
        pose(
            [0.4061919, 0.36819187, -1.1218897],
            [0.36223558, 0.06406593, 0.009035834, 0.92983836],
        ),
    );
    assert_matches_reference(a, pose_a, b, pose_b, 0.0, -0.0004127);
}

/// Two slabs crossing at (1e3, -2e3, 5e2), 0.4087 deep: parry 0.31 reports -0.40785 (8.0e-4 shallow), the f64 reference and hullsat -0.40866.
#[test]
fn deep_crossed_slabs_far_from_the_origin_have_the_exact_depth() {
    let a = Shape::Cuboid(Cuboid::new(Vec3::new(1.7455473, 0.017455472, 1.7455473)).unwrap());
    let b = Shape::Cuboid(Cuboid::new(Vec3::new(0.81483054, 0.008148305, 0.81483054)).unwrap());
    let (pose_a, pose_b) = (
        pose(
            [1000.0018, -1999.9982, 499.9968],
            [-0.950078, -0.074050315, -0.30054218, -0.03927827],
        ),
        pose(
            [1000.78174, -1999.5287, 501.85376],
            [-0.53137255, -0.5844586, -0.45564508, 0.41041315],
        ),
    );
    assert_matches_reference(a, pose_a, b, pose_b, 0.0, -0.4086575);
}

/// A random hull (A) against a needle (B), 2.15e-4 deep, margin 0.034: parry 0.31 reports +2.3e-7, the f64 reference and hullsat -2.15e-4.
#[test]
fn a_hull_grazing_a_needle_penetrates_by_2e_4() {
    let a = hull(&[
        [-0.58932877, -0.052944418, -0.11581854],
        [0.048420366, 0.28403762, -0.5271695],
        [0.4704175, -0.07131885, 0.3079722],
        [0.015659742, 0.22528061, 0.55840856],
        [0.10654793, 0.6304734, 0.14392938],
        [0.20978945, -0.23654273, 0.5328891],
        [0.08934854, 0.48902667, -0.30783305],
        [0.45807067, 0.26419732, -0.24974853],
    ]);
    let b = hull(&[
        [0.16726422, -0.0033318799, 0.0040988084],
        [-0.33661237, -0.002145449, -0.006673519],
        [0.46191582, -0.0010790249, -0.0069600134],
        [-0.13647106, 0.0058244956, -0.004734339],
        [-0.20684987, 0.0015156319, 0.0040704845],
        [-0.69563884, 0.0026653346, -0.0034701421],
        [0.2966337, 0.0032815274, 0.0027901626],
        [-0.7023387, -0.00045958516, -0.00547363],
        [0.7023387, -0.0017822738, -0.000338451],
        [0.4195664, 0.0060766865, -0.004365365],
    ]);
    let (pose_a, pose_b) = (
        pose(
            [-0.022277942, -0.0023424474, 0.010099661],
            [-0.56782323, -0.13604775, -0.7377131, -0.33889103],
        ),
        pose(
            [-0.6367626, -0.08584535, 0.06545532],
            [-0.7913536, 0.058697555, 0.48042935, 0.3734995],
        ),
    );
    assert_matches_reference(a, pose_a, b, pose_b, 0.033681665, -0.0002154);
}

//! The box-box path (`collide_box_box`, `query_boxes`, the box face clip of
//! `src/contact/box_clip.rs`, GJK on `PosedBox`) against the hull-hull path on the boxes'
//! hulls: 100k random box pairs near contact (touching, rotated, nearly parallel faces, sizes
//! 20 to 500 times apart) plus resting stacks. The same SAT result and the same manifold bit for
//! bit, except where the hull SAT itself is at a tie (two axes, or the margin, within rounding
//! of each other), where the box path's axis must be as good.

mod support;

use glam::{Quat, Vec3};
use hullsat::constants::{AXIS_PREFERENCE_TOLERANCE, pair_scale};
use hullsat::contact::{collide_box_box, collide_hull_hull};
use hullsat::query::sat::{SatAxis, SatResult, query_hulls};
use hullsat::query::sat_box_box::query_boxes;
use hullsat::{Cuboid, Isometry, Pose};
use rand::RngExt;
use support::gpu::axis_separation;
use support::{random_direction, random_rotation, seeded_rng};

/// Random pairs compared.
const PAIRS: usize = 100_000;

/// Two f32 computations of one separation (boxes of size up to 2, within a few units of the
/// origin) agree to this, relative to the pair's scale: a few ulps after a rotation and a sum of
/// three products, in two different orders. Decides what counts as a tie.
const ROUNDING: f32 = 2e-6;

/// How the two paths compared on one pair.
#[derive(Debug, PartialEq)]
enum Outcome {
    /// Same manifold (or both `None`).
    Same,
    /// The hull SAT is at a tie here, so either answer is right.
    Tie,
}

/// True when two SAT results (box path `fast`, hull path `slow`) differ only where the choice is
/// a tie within `tie` (length units): axes of equal separation, or the face preference or the
/// margin decided by rounding.
/// The box path's own axis is re-measured on the hulls ([`axis_separation`]), so a wrong
/// feature index is no tie.
fn is_tie(
    (a, b, b_in_a): (&Cuboid, &Cuboid, &Isometry),
    fast: &SatResult,
    slow: &SatResult,
    margin: f32,
    preference: f32,
    tie: f32,
) -> bool {
    let (measured, _) = axis_separation(a.hull(), b.hull(), b_in_a, fast.axis);
    if (measured - fast.axis_separation).abs() > tie {
        return false;
    }
    let d = fast.axis_separation - slow.axis_separation;
    let near = |x: f32| x.abs() <= tie;
    near(d) || near(d - preference) || near(d + preference) || near(slow.separation - margin)
}

fn compare(a: &Cuboid, pose_a: &Pose, b: &Cuboid, pose_b: &Pose, margin: f32, what: &str) -> Outcome {
    let scale = pair_scale(a.hull().radius(), b.hull().radius());
    let tie = ROUNDING * scale;
    let b_in_a = pose_a.relative_to_self(pose_b);
    let fast_sat = query_boxes(a, b, &b_in_a, margin);
    let slow_sat = query_hulls(a.hull(), b.hull(), &b_in_a, margin);
    let fast = collide_box_box(a, pose_a, b, pose_b, margin);
    let slow = collide_hull_hull(a.hull(), pose_a, b.hull(), pose_b, margin);
    let preference = AXIS_PREFERENCE_TOLERANCE * scale;
    let at_tie = || is_tie((a, b, &b_in_a), &fast_sat, &slow_sat, margin, preference, tie);
    if slow_sat.separation <= margin || fast_sat.separation <= margin {
        if fast_sat.axis != slow_sat.axis {
            assert!(at_tie(), "{what}: axes {fast_sat:?} vs {slow_sat:?}");
            return Outcome::Tie;
        }
        if fast_sat != slow_sat {
            // Same axis and value: only the SAT value (the largest over all axes) may differ,
            // when two edge pairs tie within rounding and the two loops pick different ones.
            let max_only = fast_sat.normal == slow_sat.normal
                && fast_sat.axis_separation == slow_sat.axis_separation
                && (fast_sat.separation - slow_sat.separation).abs() <= tie;
            assert!(max_only, "{what}: {fast_sat:?} vs {slow_sat:?}");
            if let (Some(f), Some(s)) = (&fast, &slow) {
                assert!(
                    f.normal == s.normal && f.points() == s.points(),
                    "{what}: {f:?}\nvs {s:?}"
                );
            }
            return Outcome::Tie;
        }
    }
    match (&fast, &slow) {
        (None, None) => Outcome::Same,
        (Some(f), Some(s)) => {
            if f == s {
                Outcome::Same
            } else {
                // On the same axis the manifolds must be equal; another axis only at a tie.
                assert!(
                    fast_sat.axis != slow_sat.axis && at_tie(),
                    "{what}: {f:?}\nvs {s:?}"
                );
                Outcome::Tie
            }
        }
        _ => {
            assert!(at_tie(), "{what}: {fast:?} vs {slow:?}");
            Outcome::Tie
        }
    }
}

/// True when the box path builds this pair's manifold with its face clip: a face axis, the
/// boxes touching or overlapping, a manifold.
fn takes_the_face_clip(a: &Cuboid, pose_a: &Pose, b: &Cuboid, pose_b: &Pose, margin: f32) -> bool {
    let sat = query_boxes(a, b, &pose_a.relative_to_self(pose_b), margin);
    !matches!(sat.axis, SatAxis::EdgePair { .. })
        && sat.separation <= 0.0
        && collide_box_box(a, pose_a, b, pose_b, margin).is_some()
}

fn random_box(rng: &mut rand_pcg::Pcg64) -> Cuboid {
    let size: f32 = rng.random_range(0.5..2.0);
    Cuboid::new(
        Vec3::new(
            rng.random_range(0.25..1.0),
            rng.random_range(0.25..1.0),
            rng.random_range(0.25..1.0),
        ) * size,
    )
    .unwrap()
}

#[test]
fn box_path_matches_the_hull_path_on_random_pairs() {
    let mut rng = seeded_rng(11);
    let (mut contacts, mut clipped, mut ties) = (0, 0, 0);
    for i in 0..PAIRS {
        let (mut a, mut b) = (random_box(&mut rng), random_box(&mut rng));
        // Very different sizes: one box 20 to 500 times smaller.
        let shrink = |c: &Cuboid, rng: &mut rand_pcg::Pcg64| {
            Cuboid::new(c.half_extents() * rng.random_range(0.002..0.05)).unwrap()
        };
        match i % 10 {
            3 => a = shrink(&a, &mut rng),
            7 => b = shrink(&b, &mut rng),
            _ => {}
        }
        let reach = a.hull().radius() + b.hull().radius();
        let pose_a = Pose::new(Vec3::new(1.0, -2.0, 0.5), random_rotation(&mut rng));
        let offset = random_direction(&mut rng) * reach * rng.random_range(0.1..1.05);
        let rotation_b = if i % 10 == 9 {
            // Nearly parallel faces: B turned from A's axes by up to 1e-3 rad.
            let tilt = Quat::from_axis_angle(random_direction(&mut rng), rng.random_range(-1e-3..1e-3));
            pose_a.rotation * tilt
        } else {
            random_rotation(&mut rng)
        };
        let mut pose_b = Pose::new(Vec3::new(1.0, -2.0, 0.5) + offset, rotation_b);
        if i % 5 == 0 {
            // Touching: B moved along the hull SAT's normal by its separation, so several axes
            // are near 0 and the margin-0 verdict is decided by rounding.
            let sat = query_hulls(a.hull(), b.hull(), &pose_a.relative_to_self(&pose_b), 1e9);
            let shift = pose_a.transform_vector(sat.normal) * -sat.separation;
            pose_b = Pose::new(pose_b.translation + shift.as_dvec3(), pose_b.rotation);
        }
        let margin = [0.0, 0.01, 0.1][i % 3];
        match compare(&a, &pose_a, &b, &pose_b, margin, &format!("pair {i}")) {
            Outcome::Same => {}
            Outcome::Tie => ties += 1,
        }
        contacts += collide_box_box(&a, &pose_a, &b, &pose_b, margin).is_some() as usize;
        clipped += takes_the_face_clip(&a, &pose_a, &b, &pose_b, margin) as usize;
    }
    assert!(contacts > PAIRS / 3, "only {contacts} contacts");
    eprintln!("random: {clipped} box face clips, {ties} ties");
    // The box face clip ran on a good share of the pairs.
    assert!(clipped > PAIRS / 4, "only {clipped} box face clips");
    assert!(ties < PAIRS / 1000, "{ties} ties");
}

#[test]
fn box_path_matches_the_hull_path_on_resting_boxes() {
    let mut rng = seeded_rng(12);
    let (mut clipped, mut ties) = (0, 0);
    for i in 0..10_000 {
        let (a, b) = (random_box(&mut rng), random_box(&mut rng));
        let height = a.half_extents().y + b.half_extents().y + rng.random_range(-0.02..0.005);
        let tilt = [0.0, 1e-4, 1e-2][i % 3];
        let pose_a = Pose::new(Vec3::ZERO, Quat::IDENTITY);
        let pose_b = Pose::new(
            Vec3::new(rng.random_range(-0.5..0.5), height, rng.random_range(-0.5..0.5)),
            Quat::from_axis_angle(random_direction(&mut rng), rng.random_range(-tilt..=tilt))
                * Quat::from_rotation_y(rng.random_range(-0.3..0.3)),
        );
        if compare(&a, &pose_a, &b, &pose_b, 0.01, &format!("resting {i}")) == Outcome::Tie {
            ties += 1;
        }
        clipped += takes_the_face_clip(&a, &pose_a, &b, &pose_b, 0.01) as usize;
    }
    eprintln!("resting: {clipped} box face clips, {ties} ties");
    assert!(clipped > 5_000, "only {clipped} box face clips");
    assert!(ties < 500, "{ties} ties");
}

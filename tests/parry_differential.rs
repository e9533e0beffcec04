//! Differential test against parry3d on random hull and box pairs: same colliding verdict,
//! separation within 1e-4 of the pair's scale, normal within 1 degree where the deepest axis is
//! unique. Where parry disagrees, an independent f64 computation (tests/support/oracle.rs)
//! decides: hullsat must agree with it; parry's misses are counted and printed.

mod support;

use glam::{DVec3, Vec3};
use hullsat::constants::AXIS_PREFERENCE_TOLERANCE;
use hullsat::contact::collide_shapes;
use hullsat::{Manifold, Pose, Shape};
use parry3d::query::contact;
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64;
use support::oracle::{Reference, reference};
use support::parry::{to_parry_pose, to_parry_shape};
use support::shapes::{FAMILIES, random_pose, random_rotation, random_shape};

const PAIRS: usize = 6000;

fn dvec(v: Vec3) -> DVec3 {
    v.as_dvec3()
}

struct Case {
    a: Shape,
    b: Shape,
    pose_a: Pose,
    pose_b: Pose,
    margin: f32,
    scale: f32,
}

/// Checks hullsat against the f64 reference; returns a description of the failure, if any.
fn check_against_reference(case: &Case, ours: &Option<Manifold>, r: &Reference) -> Option<String> {
    let (scale, margin) = (case.scale as f64, case.margin as f64);
    let expect_contact = r.separation <= margin;
    if (r.separation - margin).abs() < 1e-5 * scale {
        return None;
    }
    match ours {
        None if expect_contact => Some(format!(
            "hullsat: no contact, reference separation {}",
            r.separation
        )),
        Some(m) if !expect_contact => Some(format!(
            "hullsat: contact (sep {}), reference separation {} > margin {margin}",
            m.separation, r.separation
        )),
        Some(m) => {
            if (m.separation as f64 - r.separation).abs() > 1e-4 * scale {
                return Some(format!(
                    "hullsat separation {} vs reference {}",
                    m.separation, r.separation
                ));
            }
            let unique = r.separation - r.runner_up > 2.0 * AXIS_PREFERENCE_TOLERANCE as f64 * scale;
            let angle = dvec(m.normal).angle_between(r.normal).to_degrees();
            if unique && angle > 1.0 {
                return Some(format!(
                    "hullsat normal {} is {angle:.3} deg off reference {}",
                    m.normal, r.normal
                ));
            }
            None
        }
        None => None,
    }
}

#[test]
fn hullsat_agrees_with_parry_or_the_f64_reference() {
    let mut rng = Pcg64::seed_from_u64(0x5a7_d1ff);
    let (mut colliding, mut separated, mut touching, mut within_margin) = (0, 0, 0, 0);
    let mut parry_misses = Vec::new();
    let mut failures = Vec::new();
    for i in 0..PAIRS {
        let a = random_shape(&mut rng, FAMILIES[i % 4]);
        let b = random_shape(&mut rng, FAMILIES[(i / 4) % 4]);
        let (Some(pa), Some(pb)) = (to_parry_shape(&a), to_parry_shape(&b)) else {
            continue;
        };
        let scale = a.bounding_radius() + b.bounding_radius();
        let far = if i % 10 == 0 {
            Vec3::new(1e3, -2e3, 5e2)
        } else {
            Vec3::ZERO
        };
        let pose_a = random_pose(&mut rng, far, 0.1);
        let u: f32 = rng.random_range(0.0..1.1);
        let mut pose_b = Pose::new(
            pose_a.translation + (support::shapes::random_direction(&mut rng) * u * scale).as_dvec3(),
            random_rotation(&mut rng),
        );
        let mut margin = if i % 3 == 0 { 0.02 * scale } else { 0.0 };
        // One pair in five is moved to touch, and one in five to lie apart within a margin:
        // shift B along parry's normal so that its distance becomes the target.
        let target = match i % 5 {
            1 => Some(0.0),
            2 => {
                margin = 0.05 * scale;
                Some(rng.random_range(0.0..1.0) * margin)
            }
            _ => None,
        };
        if let Some(target) = target
            && let Ok(Some(c)) = contact(
                &to_parry_pose(&pose_a),
                &*pa,
                &to_parry_pose(&pose_b),
                &*pb,
                10.0 * scale,
            )
        {
            let n = Vec3::new(c.normal1.x, c.normal1.y, c.normal1.z);
            pose_b.translation -= (n * (c.dist - target)).as_dvec3();
            if target == 0.0 {
                touching += 1;
            } else {
                within_margin += 1;
            }
        }
        let case = Case {
            a,
            b,
            pose_a,
            pose_b,
            margin,
            scale,
        };

        let ours = collide_shapes(&case.a, &case.pose_a, &case.b, &case.pose_b, margin);
        let theirs = contact(
            &to_parry_pose(&case.pose_a),
            &*pa,
            &to_parry_pose(&case.pose_b),
            &*pb,
            margin,
        )
        .unwrap();
        match &ours {
            Some(_) => colliding += 1,
            None => separated += 1,
        }

        let agree = match (&ours, &theirs) {
            (None, None) => true,
            (Some(m), Some(c)) => {
                let n = Vec3::new(c.normal1.x, c.normal1.y, c.normal1.z);
                (m.separation - c.dist).abs() <= 1e-4 * scale && m.normal.angle_between(n).to_degrees() <= 1.0
            }
            (Some(m), None) => (m.separation - margin).abs() < 1e-5 * scale,
            (None, Some(c)) => (c.dist - margin).abs() < 1e-5 * scale,
        };
        if agree {
            continue;
        }
        // Disagreement: the f64 reference decides.
        let (ha, hb) = (case.a.as_hull().unwrap(), case.b.as_hull().unwrap());
        let r = reference(ha, &case.pose_a, hb, &case.pose_b);
        match check_against_reference(&case, &ours, &r) {
            Some(problem) => failures.push(format!("pair {i}: {problem}; parry: {theirs:?}")),
            None => parry_misses.push(i),
        }
    }
    println!(
        "{PAIRS} pairs: {colliding} with a manifold, {separated} without, {touching} moved to touch, \
         {within_margin} moved apart within the margin; where parry differed, the f64 reference \
         confirmed hullsat on {} (pairs {:?})",
        parry_misses.len(),
        &parry_misses[..parry_misses.len().min(20)]
    );
    assert!(
        colliding > PAIRS / 5 && separated > PAIRS / 5,
        "the draw must mix both verdicts"
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures[..failures.len().min(20)].join("\n")
    );
}

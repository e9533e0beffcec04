//! The CPU batch API: one result per pair in pair order, parallel equal to single-threaded,
//! and bad bodies, pairs or margins rejected before any pair is computed.

use glam::{Quat, Vec3};
use hullsat::contact::collide_shapes;
use hullsat::scene::body;
use hullsat::{Body, Capsule, CpuNarrowphase, Cuboid, HalfSpace, InputError, Pose, Shape, Sphere};
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64;

fn unit_spheres_on_x_axis(xs: &[f32]) -> (CpuNarrowphase, Vec<Body>) {
    let narrowphase = CpuNarrowphase::new(vec![Shape::Sphere(Sphere::new(1.0).unwrap())]);
    let bodies = xs
        .iter()
        .map(|&x| body(0, Vec3::new(x, 0.0, 0.0), Quat::IDENTITY))
        .collect();
    (narrowphase, bodies)
}

fn error(result: Result<Vec<Option<hullsat::Manifold>>, InputError>) -> String {
    result.unwrap_err().to_string()
}

#[test]
fn results_follow_pair_order() {
    // Unit spheres at x = 0, 1.5, 2.2, 10: only neighbours closer than 2 (+ margin) touch.
    let (narrowphase, bodies) = unit_spheres_on_x_axis(&[0.0, 1.5, 2.2, 10.0]);
    let pairs = [[2, 3], [0, 1], [3, 0], [1, 2], [0, 2], [2, 1]];
    let margin = 0.25;
    let results = narrowphase.collide(&bodies, &pairs, margin).unwrap();
    assert_eq!(results.len(), pairs.len());
    for (&[a, b], result) in pairs.iter().zip(&results) {
        let (pa, pb) = (
            bodies[a as usize].pose.translation.as_vec3(),
            bodies[b as usize].pose.translation.as_vec3(),
        );
        let gap = pa.distance(pb) - 2.0;
        assert_eq!(result.is_some(), gap <= margin, "pair [{a}, {b}], gap {gap}");
        if let Some(m) = result {
            let a_to_b = (pb - pa).normalize();
            assert!(
                m.normal.abs_diff_eq(a_to_b, 1e-5),
                "pair [{a}, {b}]: normal {}",
                m.normal
            );
            assert!(
                (m.separation - gap).abs() < 1e-5,
                "pair [{a}, {b}]: {} vs {gap}",
                m.separation
            );
        }
        let shape = &narrowphase.shapes()[0];
        assert_eq!(
            *result,
            collide_shapes(
                shape,
                &bodies[a as usize].pose,
                shape,
                &bodies[b as usize].pose,
                margin
            )
        );
    }
}

#[test]
fn no_pairs_give_no_results() {
    let (narrowphase, bodies) = unit_spheres_on_x_axis(&[0.0, 1.0]);
    assert_eq!(narrowphase.collide(&bodies, &[], 0.0).unwrap(), vec![]);
    assert_eq!(
        narrowphase.collide_single_thread(&bodies, &[], 0.0).unwrap(),
        vec![]
    );
}

/// A seeded jumble of every shape kind, with all pairs among nearby bodies.
fn random_scene(seed: u64) -> (CpuNarrowphase, Vec<Body>, Vec<[u32; 2]>) {
    let mut rng = Pcg64::seed_from_u64(seed);
    let shapes = vec![
        Shape::Cuboid(Cuboid::new(Vec3::new(0.5, 0.3, 0.8)).unwrap()),
        Shape::Cuboid(Cuboid::new(Vec3::splat(0.4)).unwrap()),
        Shape::Sphere(Sphere::new(0.45).unwrap()),
        Shape::Capsule(Capsule::new(0.5, 0.25).unwrap()),
        Shape::HalfSpace(HalfSpace::new(Vec3::Y, 0.0).unwrap()),
    ];
    let mut bodies = vec![body(4, Vec3::ZERO, Quat::IDENTITY)];
    for _ in 0..300 {
        let position = Vec3::new(
            rng.random_range(-4.0..4.0),
            rng.random_range(-0.5..3.0),
            rng.random_range(-4.0..4.0),
        );
        let axis = Vec3::new(rng.random_range(-1.0..1.0), 1.0, rng.random_range(-1.0..1.0)).normalize();
        let rotation = Quat::from_axis_angle(axis, rng.random_range(0.0..6.3));
        bodies.push(body(rng.random_range(0..4), position, rotation));
    }
    let mut pairs = Vec::new();
    for a in 0..bodies.len() {
        for b in a + 1..bodies.len() {
            let near = bodies[a].pose.translation.distance(bodies[b].pose.translation) < 2.0;
            if a == 0 || near {
                pairs.push([a as u32, b as u32]);
            }
        }
    }
    (CpuNarrowphase::new(shapes), bodies, pairs)
}

#[test]
fn parallel_equals_single_thread() {
    for seed in 0..3 {
        let (narrowphase, bodies, pairs) = random_scene(seed);
        for margin in [0.0, 0.05] {
            let parallel = narrowphase.collide(&bodies, &pairs, margin).unwrap();
            let single = narrowphase
                .collide_single_thread(&bodies, &pairs, margin)
                .unwrap();
            assert_eq!(parallel.len(), pairs.len());
            assert_eq!(parallel, single, "seed {seed}, margin {margin}");
            assert!(
                parallel.iter().any(Option::is_some),
                "seed {seed}: nothing touches"
            );
            assert!(
                parallel.iter().any(Option::is_none),
                "seed {seed}: everything touches"
            );
            // Each pair given the other way round: the same verdict, the manifold swapped (the
            // backends compute `[min, max]` and swap each result as it is written).
            let reversed: Vec<[u32; 2]> = pairs.iter().map(|&[a, b]| [b, a]).collect();
            let swapped: Vec<_> = parallel.iter().map(|m| m.as_ref().map(|m| m.swapped())).collect();
            assert_eq!(narrowphase.collide(&bodies, &reversed, margin).unwrap(), swapped);
            assert_eq!(
                narrowphase
                    .collide_single_thread(&bodies, &reversed, margin)
                    .unwrap(),
                swapped,
                "seed {seed}, margin {margin}"
            );
        }
    }
}

#[test]
fn rotations_are_normalized_before_use() {
    let narrowphase = CpuNarrowphase::new(vec![Shape::Cuboid(Cuboid::new(Vec3::splat(0.5)).unwrap())]);
    let rotation = Quat::from_rotation_y(0.3);
    let unit = [
        body(0, Vec3::ZERO, Quat::IDENTITY),
        body(0, Vec3::new(0.0, 0.99, 0.0), rotation),
    ];
    let mut scaled = unit;
    scaled[1].pose.rotation = rotation * 1.0005;
    let expected = narrowphase.collide(&unit, &[[0, 1]], 0.0).unwrap();
    assert!(expected[0].is_some());
    assert_eq!(narrowphase.collide(&scaled, &[[0, 1]], 0.0).unwrap(), expected);
}

#[test]
fn bad_input_is_rejected_with_its_place() {
    let (narrowphase, bodies) = unit_spheres_on_x_axis(&[0.0, 1.0, 2.0]);
    let ok = [[0, 1], [1, 2]];
    for collide in [CpuNarrowphase::collide, CpuNarrowphase::collide_single_thread] {
        assert_eq!(
            error(collide(&narrowphase, &bodies, &[[0, 1], [2, 3]], 0.0)),
            "pairs[1]: body 3 does not exist"
        );
        assert_eq!(
            error(collide(&narrowphase, &bodies, &[[1, 1]], 0.0)),
            "pairs[0]: body 1 is paired with itself"
        );
        assert_eq!(
            error(collide(&narrowphase, &bodies, &ok, -0.5)),
            "margin: expected a finite number >= 0, got -0.5"
        );
        assert_eq!(
            error(collide(&narrowphase, &bodies, &ok, f32::NAN)),
            "margin: expected a finite number >= 0, got NaN"
        );

        let mut bad = bodies.clone();
        bad[2].shape = 1;
        assert_eq!(
            error(collide(&narrowphase, &bad, &ok, 0.0)),
            "bodies[2].shape: shape 1 does not exist (1 shapes)"
        );
        let mut bad = bodies.clone();
        bad[1].pose = Pose::new(Vec3::new(f32::INFINITY, 0.0, 0.0), Quat::IDENTITY);
        assert_eq!(
            error(collide(&narrowphase, &bad, &ok, 0.0)),
            "bodies[1].position: expected 3 finite numbers"
        );
        let mut bad = bodies.clone();
        bad[0].pose.rotation = Quat::from_xyzw(0.0, f32::NAN, 0.0, 1.0);
        assert_eq!(
            error(collide(&narrowphase, &bad, &ok, 0.0)),
            "bodies[0].rotation: expected 4 finite numbers"
        );
        let mut bad = bodies.clone();
        bad[0].pose.rotation = Quat::from_xyzw(0.0, 0.0, 0.0, 1.01);
        assert!(
            error(collide(&narrowphase, &bad, &ok, 0.0)).starts_with("bodies[0].rotation: quaternion length")
        );
    }
}

#[test]
fn two_half_spaces_are_rejected() {
    let narrowphase = CpuNarrowphase::new(vec![Shape::HalfSpace(HalfSpace::new(Vec3::Y, 0.0).unwrap())]);
    let bodies = [
        body(0, Vec3::ZERO, Quat::IDENTITY),
        body(0, Vec3::X, Quat::IDENTITY),
    ];
    assert_eq!(
        error(narrowphase.collide(&bodies, &[[0, 1]], 0.0)),
        "pairs[0]: two half-spaces cannot be tested against each other"
    );
}

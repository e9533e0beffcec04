//! Broadphase: world AABBs and candidate pairs against brute force.

mod support;

use glam::{Quat, Vec3};
use hullsat::broadphase::{DEFAULT_MAX_CANDIDATE_PAIRS, candidate_pairs, candidate_pairs_at_most};
use hullsat::generate::{ParticleSceneConfig, ShapeMix, generate_particle_scene};
use hullsat::scene::body;
use hullsat::shape::{Aabb, world_aabb};
use hullsat::{Body, Capsule, ConvexHull, Cuboid, HalfSpace, Pose, Shape, Sphere};
use rand::RngExt;
use rand_pcg::Pcg64;
use support::{random_rotation, random_unit_vector, random_vec3, seeded_rng};

/// Every pair the O(N^2) way: bounded boxes within `margin` on every axis; half-spaces against
/// bounded bodies by the lowest of the box's eight corners along the world plane normal.
fn brute_force_pairs(shapes: &[Shape], bodies: &[Body], margin: f32) -> Vec<[u32; 2]> {
    let boxes: Vec<Aabb> = bodies
        .iter()
        .map(|b| world_aabb(&shapes[b.shape as usize], &b.pose))
        .collect();
    let half_space = |i: usize| match &shapes[bodies[i].shape as usize] {
        Shape::HalfSpace(h) => {
            let pose = &bodies[i].pose;
            let normal = pose.transform_vector(h.normal);
            Some((normal, h.offset + normal.dot(pose.translation.as_vec3())))
        }
        _ => None,
    };
    let mut pairs = Vec::new();
    for i in 0..bodies.len() {
        for j in i + 1..bodies.len() {
            let near = match (half_space(i), half_space(j)) {
                (Some(_), Some(_)) => false,
                (Some((normal, offset)), None) | (None, Some((normal, offset))) => {
                    let b = if half_space(i).is_some() {
                        &boxes[j]
                    } else {
                        &boxes[i]
                    };
                    let lowest = (0..8)
                        .map(|c| {
                            let pick = |bit: usize, k: usize| if c & bit != 0 { b.max[k] } else { b.min[k] };
                            normal.dot(Vec3::new(pick(1, 0), pick(2, 1), pick(4, 2)))
                        })
                        .fold(f32::INFINITY, f32::min);
                    lowest - offset <= margin
                }
                (None, None) => {
                    let (a, b) = (&boxes[i], &boxes[j]);
                    (0..3).all(|k| a.min[k] <= b.max[k] + margin && b.min[k] <= a.max[k] + margin)
                }
            };
            if near {
                pairs.push([i as u32, j as u32]);
            }
        }
    }
    pairs
}

/// A shape of a random kind (sphere, box, capsule, box as a hull) whose size is `scale` times a
/// random factor in [0.5, 1].
fn random_bounded_shape(rng: &mut Pcg64, scale: f32) -> Shape {
    let mut size = || scale * rng.random_range(0.5..=1.0f32);
    let (a, b, c) = (size(), size(), size());
    match rng.random_range(0..4) {
        0 => Shape::Sphere(Sphere::new(a).unwrap()),
        1 => Shape::Cuboid(Cuboid::new(Vec3::new(a, b, c)).unwrap()),
        2 => Shape::Capsule(Capsule::new(a, b).unwrap()),
        _ => Shape::Hull(ConvexHull::cuboid(Vec3::new(a, b, c))),
    }
}

/// `count` bodies in a cube of half side `half`, each with its own shape of size
/// `10^uniform(-log_spread, 0)`, plus `half_spaces` randomly placed half-spaces cutting through.
fn scattered_scene(
    seed: u64,
    count: usize,
    half: f32,
    log_spread: f32,
    half_spaces: usize,
) -> (Vec<Shape>, Vec<Body>) {
    let mut rng = seeded_rng(seed);
    let mut shapes = Vec::new();
    let mut bodies = Vec::new();
    let mut placed_half_spaces = 0;
    for i in 0..count + half_spaces {
        // Spread the half-spaces among the bounded bodies, not only at the end.
        let shape = if i % (count / half_spaces.max(1) + 1) == 1 && placed_half_spaces < half_spaces {
            placed_half_spaces += 1;
            let normal = random_unit_vector(&mut rng);
            Shape::HalfSpace(HalfSpace::new(normal, rng.random_range(-half..=half)).unwrap())
        } else {
            let scale = 10f32.powf(-rng.random_range(0.0..=log_spread));
            random_bounded_shape(&mut rng, scale)
        };
        shapes.push(shape);
        let position = random_vec3(&mut rng, half);
        bodies.push(body(i as u32, position, random_rotation(&mut rng)));
    }
    assert_eq!(placed_half_spaces, half_spaces);
    (shapes, bodies)
}

fn assert_matches_brute_force(shapes: &[Shape], bodies: &[Body], margin: f32) -> usize {
    let fast = candidate_pairs(shapes, bodies, margin);
    let slow = brute_force_pairs(shapes, bodies, margin);
    assert!(
        fast.windows(2).all(|w| w[0] < w[1]),
        "pairs sorted without duplicates"
    );
    assert!(fast.iter().all(|&[a, b]| a < b), "each pair written [min, max]");
    assert_eq!(fast.len(), slow.len(), "pair count");
    assert_eq!(fast, slow);
    fast.len()
}

#[test]
fn candidate_pairs_match_brute_force_on_particle_scenes() {
    let mix = ShapeMix {
        hulls: 0.0,
        ..ShapeMix::MIXED
    };
    for (bodies, seed, margin) in [(10, 1, 0.0), (200, 2, 0.1), (1000, 3, 0.0), (5000, 4, 0.05)] {
        let config = ParticleSceneConfig {
            bodies,
            seed,
            density: 0.3,
            mix,
            margin,
        };
        let scene = generate_particle_scene(&config).unwrap();
        let found = assert_matches_brute_force(&scene.shapes, &scene.bodies, margin);
        assert!(
            found > bodies / 10,
            "{bodies} bodies: only {found} pairs, the test would be weak"
        );
    }
}

/// 20,000 bodies in a bar four times as long as it is wide: the sweep cuts it into tiles of
/// about 4,096 bodies along its length (a cube of as many would stay one tile), so pairs across
/// tile borders, and half-spaces across the bar, must still come once each.
#[test]
fn candidate_pairs_match_brute_force_across_tiles() {
    let config = ParticleSceneConfig {
        bodies: 20_000,
        seed: 5,
        density: 0.3,
        mix: ShapeMix::MIXED,
        margin: 0.02,
    };
    let mut scene = generate_particle_scene(&config).unwrap();
    for body in &mut scene.bodies {
        body.pose.translation.x *= 4.0;
    }
    let mut rng = seeded_rng(5);
    for _ in 0..2 {
        scene.shapes.push(Shape::HalfSpace(
            HalfSpace::new(random_unit_vector(&mut rng), 0.0).unwrap(),
        ));
        scene
            .bodies
            .push(body(scene.shapes.len() as u32 - 1, Vec3::ZERO, Quat::IDENTITY));
    }
    let found = assert_matches_brute_force(&scene.shapes, &scene.bodies, 0.02);
    assert!(found > 10_000, "only {found} pairs, the test would be weak");
}

#[test]
fn candidate_pairs_match_brute_force_with_half_spaces_and_mixed_sizes() {
    // (seed, bodies, cube half side, size spread in decades, half-spaces, margin)
    let cases = [
        (10, 10, 2.0, 0.0, 1, 0.0),
        (11, 300, 5.0, 1.0, 2, 0.1),
        (12, 2000, 10.0, 2.0, 3, 0.0),
        (13, 3000, 20.0, 0.5, 0, 0.5),
        (14, 1500, 30.0, 3.0, 4, 0.02),
    ];
    for (seed, count, half, spread, half_spaces, margin) in cases {
        let (shapes, bodies) = scattered_scene(seed, count, half, spread, half_spaces);
        let found = assert_matches_brute_force(&shapes, &bodies, margin);
        assert!(found > 0, "seed {seed}: no pairs, the test would be weak");
    }
}

/// Boxes spanning much of the scene among many small ones: the sweep's grid must cut the second
/// cross axis into fewer slabs (down to one) to keep the copies of the boxes bounded, and still
/// find every pair once. A long thin box crossing everything, and many bodies at one point.
#[test]
fn candidate_pairs_match_brute_force_when_big_boxes_coarsen_the_grid() {
    let mut rng = seeded_rng(15);
    for (big, small) in [(40, 3000), (600, 1200)] {
        let mut shapes = Vec::new();
        let mut bodies = Vec::new();
        for i in 0..big + small {
            let scale = if i < big { 8.0 } else { 0.1 };
            shapes.push(random_bounded_shape(&mut rng, scale));
            bodies.push(body(
                i as u32,
                random_vec3(&mut rng, 10.0),
                random_rotation(&mut rng),
            ));
        }
        // A long thin box along a diagonal-ish axis, and 30 bodies at one point.
        shapes.push(Shape::Cuboid(Cuboid::new(Vec3::new(20.0, 0.05, 0.05)).unwrap()));
        bodies.push(body(
            shapes.len() as u32 - 1,
            Vec3::ZERO,
            random_rotation(&mut rng),
        ));
        for _ in 0..30 {
            bodies.push(body(big as u32, Vec3::new(1.0, 2.0, 3.0), Quat::IDENTITY));
        }
        let found = assert_matches_brute_force(&shapes, &bodies, 0.01);
        assert!(found > big * big / 4, "{big} big boxes: only {found} pairs");
    }
}

/// The hull box is the exact f32 enclosure of the hull's transformed vertices (f32 rotation, f64
/// translation), also far from the origin.
#[test]
fn world_aabb_of_a_hull_encloses_its_transformed_vertices_exactly() {
    let mut rng = seeded_rng(16);
    for _ in 0..200 {
        let Shape::Hull(hull) = random_bounded_shape_hull(&mut rng) else {
            unreachable!()
        };
        let offset = random_vec3(&mut rng, 1.0e6);
        let pose = Pose::new(offset, random_rotation(&mut rng));
        let points: Vec<glam::DVec3> = hull.vertices().iter().map(|&v| pose.transform_point(v)).collect();
        let min = points
            .iter()
            .copied()
            .fold(glam::DVec3::INFINITY, glam::DVec3::min);
        let max = points
            .iter()
            .copied()
            .fold(glam::DVec3::NEG_INFINITY, glam::DVec3::max);
        let shape = Shape::Hull(hull);
        assert_eq!(world_aabb(&shape, &pose), Aabb::enclosing(min, max));
    }
}

/// A random hull of 4 to 40 points.
fn random_bounded_shape_hull(rng: &mut Pcg64) -> Shape {
    let count = rng.random_range(4..=40);
    let points: Vec<Vec3> = (0..count).map(|_| random_vec3(rng, 2.0)).collect();
    Shape::Hull(ConvexHull::from_points(&points).unwrap())
}

#[test]
fn candidate_pairs_of_tiny_inputs() {
    let shapes = [Shape::Sphere(Sphere::new(1.0).unwrap())];
    assert!(candidate_pairs(&shapes, &[], 0.0).is_empty());
    let one = [body(0, Vec3::ZERO, Quat::IDENTITY)];
    assert!(candidate_pairs(&shapes, &one, 1.0).is_empty());
    // Two bodies at the same place: one pair.
    let two = [one[0], one[0]];
    assert_eq!(candidate_pairs(&shapes, &two, 0.0), vec![[0, 1]]);
}

#[test]
fn margin_bridges_the_gap_between_boxes() {
    let shapes = [Shape::Cuboid(Cuboid::new(Vec3::splat(0.5)).unwrap())];
    // Faces 0.25 apart along X.
    let bodies = [
        body(0, Vec3::new(1.25, 0.0, 0.0), Quat::IDENTITY),
        body(0, Vec3::ZERO, Quat::IDENTITY),
    ];
    assert!(candidate_pairs(&shapes, &bodies, 0.2).is_empty());
    assert_eq!(candidate_pairs(&shapes, &bodies, 0.3), vec![[0, 1]]);
}

#[test]
fn world_aabb_of_rotated_box_is_tight() {
    let mut rng = seeded_rng(20);
    for _ in 0..100 {
        let half_extents = Vec3::new(
            rng.random_range(0.1..=2.0),
            rng.random_range(0.1..=2.0),
            rng.random_range(0.1..=2.0),
        );
        let pose = Pose::new(random_vec3(&mut rng, 10.0), random_rotation(&mut rng));
        let cuboid = Cuboid::new(half_extents).unwrap();
        let corners: Vec<Vec3> = cuboid
            .hull()
            .vertices()
            .iter()
            .map(|&v| pose.transform_point(v).as_vec3())
            .collect();
        let min = corners.iter().fold(Vec3::INFINITY, |m, &c| m.min(c));
        let max = corners.iter().fold(Vec3::NEG_INFINITY, |m, &c| m.max(c));
        // Rotated half extents vs transformed corners: both are the same box up to rounding.
        let tolerance = 1e-5 * (pose.translation.as_vec3().length() + half_extents.length());
        for aabb in [
            world_aabb(&Shape::Cuboid(cuboid.clone()), &pose),
            world_aabb(&Shape::Hull(cuboid.hull().clone()), &pose),
        ] {
            for &c in &corners {
                assert!(
                    (c - aabb.min).min_element() >= -tolerance && (aabb.max - c).min_element() >= -tolerance,
                    "corner {c} outside {aabb:?}"
                );
            }
            assert!(
                (aabb.min - min).abs().max_element() <= tolerance,
                "{aabb:?} vs min {min}"
            );
            assert!(
                (aabb.max - max).abs().max_element() <= tolerance,
                "{aabb:?} vs max {max}"
            );
        }
    }
}

#[test]
fn world_aabb_of_sphere_capsule_and_half_space() {
    let pose = Pose::new(
        Vec3::new(1.0, 2.0, 3.0),
        Quat::from_rotation_z(std::f32::consts::FRAC_PI_2),
    );
    let sphere = world_aabb(&Shape::Sphere(Sphere::new(0.5).unwrap()), &pose);
    assert_eq!(sphere.min, Vec3::new(0.5, 1.5, 2.5));
    assert_eq!(sphere.max, Vec3::new(1.5, 2.5, 3.5));

    // Rotated a quarter turn about Z, the capsule's Y axis lies along world -X.
    let capsule = world_aabb(&Shape::Capsule(Capsule::new(2.0, 0.5).unwrap()), &pose);
    assert!(
        (capsule.min - Vec3::new(-1.5, 1.5, 2.5)).abs().max_element() < 1e-5,
        "{capsule:?}"
    );
    assert!(
        (capsule.max - Vec3::new(3.5, 2.5, 3.5)).abs().max_element() < 1e-5,
        "{capsule:?}"
    );

    let half_space = world_aabb(&Shape::HalfSpace(HalfSpace::new(Vec3::Y, 0.0).unwrap()), &pose);
    assert_eq!(half_space.min, Vec3::NEG_INFINITY);
    assert_eq!(half_space.max, Vec3::INFINITY);
}

#[test]
fn world_aabb_of_tilted_capsule_holds_its_extreme_points() {
    let mut rng = seeded_rng(21);
    for _ in 0..100 {
        let capsule = Capsule::new(rng.random_range(0.1..=2.0), rng.random_range(0.1..=1.0)).unwrap();
        let pose = Pose::new(random_vec3(&mut rng, 5.0), random_rotation(&mut rng));
        let aabb = world_aabb(&Shape::Capsule(capsule), &pose);
        let ends = capsule.segment().map(|p| pose.transform_point(p).as_vec3());
        // The capsule's extreme along each axis is an end point pushed out by the radius.
        let lowest = ends[0].min(ends[1]) - capsule.radius;
        let highest = ends[0].max(ends[1]) + capsule.radius;
        assert!(
            (aabb.min - lowest).abs().max_element() < 1e-5,
            "{aabb:?} vs {lowest}"
        );
        assert!(
            (aabb.max - highest).abs().max_element() < 1e-5,
            "{aabb:?} vs {highest}"
        );
    }
}

#[test]
fn half_spaces_pair_with_bodies_near_their_world_plane() {
    let shapes = [
        Shape::Sphere(Sphere::new(0.5).unwrap()),
        // Local plane x = 1, solid below.
        Shape::HalfSpace(HalfSpace::new(Vec3::X, 1.0).unwrap()),
    ];
    // The pose turns local +X into world +Y and lifts by 2: world plane y = 3, solid below.
    let ground = body(
        1,
        Vec3::new(0.0, 2.0, 0.0),
        Quat::from_rotation_z(std::f32::consts::FRAC_PI_2),
    );
    let bodies = [
        body(0, Vec3::new(0.0, 3.4, 0.0), Quat::IDENTITY), // 0: dips 0.1 into the solid
        body(0, Vec3::new(5.0, 3.6, 0.0), Quat::IDENTITY), // 1: 0.1 above the plane
        ground,                                            // 2
        body(0, Vec3::new(9.0, -50.0, 9.0), Quat::IDENTITY), // 3: deep inside the solid
        ground,                                            // 4: a second half-space
        body(0, Vec3::new(0.0, 9.0, 0.0), Quat::IDENTITY), // 5: far above
    ];
    assert_eq!(
        candidate_pairs(&shapes, &bodies, 0.0),
        vec![[0, 2], [0, 4], [2, 3], [3, 4]]
    );
    assert_eq!(
        candidate_pairs(&shapes, &bodies, 0.15),
        vec![[0, 2], [0, 4], [1, 2], [1, 4], [2, 3], [3, 4]]
    );
}

#[test]
fn the_pair_limit_is_exact_and_checked_before_listing() {
    // (seed, bodies, cube half side, size spread in decades, half-spaces, margin)
    for (seed, count, half, spread, half_spaces, margin) in
        [(30, 2000, 10.0, 1.0, 2, 0.05), (31, 500, 3.0, 0.5, 0, 0.0)]
    {
        let (shapes, bodies) = scattered_scene(seed, count, half, spread, half_spaces);
        let all = candidate_pairs(&shapes, &bodies, margin);
        assert!(
            all.len() > 100,
            "seed {seed}: only {} pairs, the test would be weak",
            all.len()
        );
        assert_eq!(
            candidate_pairs_at_most(&shapes, &bodies, margin, all.len()),
            Ok(all.clone())
        );
        let err = candidate_pairs_at_most(&shapes, &bodies, margin, all.len() - 1).unwrap_err();
        assert_eq!(err.limit, all.len() - 1);
        assert!(err.bound >= all.len(), "{err}: the bound is an upper bound");
        assert_eq!(
            candidate_pairs_at_most(&shapes, &bodies, margin, 0)
                .unwrap_err()
                .limit,
            0
        );
    }
}

#[test]
fn the_pair_limit_counts_half_space_pairs() {
    // Ten spheres apart from each other, all resting in one half-space: ten pairs, all with it.
    let shapes = [
        Shape::Sphere(Sphere::new(0.5).unwrap()),
        Shape::HalfSpace(HalfSpace::new(Vec3::Y, 0.0).unwrap()),
    ];
    let mut bodies: Vec<Body> = (0..10)
        .map(|i| body(0, Vec3::new(3.0 * i as f32, 0.4, 0.0), Quat::IDENTITY))
        .collect();
    bodies.push(body(1, Vec3::ZERO, Quat::IDENTITY));
    assert_eq!(
        candidate_pairs_at_most(&shapes, &bodies, 0.0, 10).unwrap().len(),
        10
    );
    let err = candidate_pairs_at_most(&shapes, &bodies, 0.0, 9).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the broadphase finds more than 9 candidate pairs (the sweep bounds them at 10)"
    );
}

#[test]
fn bodies_at_one_place_are_refused_without_listing_their_pairs() {
    // 20,000 boxes at one place would be 199,990,000 pairs (1.6 GB of pairs alone); the limit
    // refuses them with the exact count as the bound, without storing any.
    let shapes = [Shape::Cuboid(Cuboid::new(Vec3::ONE).unwrap())];
    let bodies = vec![body(0, Vec3::ZERO, Quat::IDENTITY); 20_000];
    let err = candidate_pairs_at_most(&shapes, &bodies, 0.0, DEFAULT_MAX_CANDIDATE_PAIRS).unwrap_err();
    assert_eq!(err.limit, DEFAULT_MAX_CANDIDATE_PAIRS);
    assert_eq!(err.bound, 20_000 * 19_999 / 2);
    // Within the limit the same pile is listed in full.
    let pile = &bodies[..1000];
    assert_eq!(
        candidate_pairs_at_most(&shapes, pile, 0.0, DEFAULT_MAX_CANDIDATE_PAIRS)
            .unwrap()
            .len(),
        1000 * 999 / 2
    );
}

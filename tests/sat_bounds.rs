//! The bounded SAT queries against the exhaustive ones, bit for bit, on random hull pairs near
//! contact, including nearly aligned boxes (many tied and nearly parallel edge pairs): the edge
//! query (`query_edges_bounded`, and `query_edges` which uses it) against
//! `query_edges_exhaustive` (same pair, axis and separation), `query_faces` against
//! `query_faces_exhaustive` (same face and separation), both ways round, and the whole SAT
//! (`query_hulls`, whose B face query and edge query skip what is below the best face) against
//! `query_hulls_exhaustive`.

mod support;

use glam::{Quat, Vec3};
use hullsat::contact::{collide_shapes, manifold_from_sat};
use hullsat::internals::{query_edges_exhaustive, query_faces_exhaustive, query_hulls_exhaustive};
use hullsat::query::sat::{query_edges, query_edges_bounded, query_faces, query_hulls};
use hullsat::query::sat_box_box::query_boxes;
use hullsat::{ConvexHull, Isometry, Pose, Shape};
use rand::RngExt;
use support::shapes::{FAMILIES, Family, random_shape};
use support::{random_direction, random_rotation, seeded_rng};

/// Pairs per family combination.
const PAIRS: usize = 1500;

/// A rotation within `angle` radians of the identity, or a random one when `angle` is `None`.
fn rotation(rng: &mut rand_pcg::Pcg64, angle: Option<f32>) -> Quat {
    match angle {
        Some(angle) => Quat::from_axis_angle(random_direction(rng), rng.random_range(-angle..=angle)),
        None => random_rotation(rng),
    }
}

/// Compares the two queries on `PAIRS` pairs of `family_a` and `family_b`; rotations within
/// `angle` of the identity when given. Returns how many pairs had an edge result.
fn compare(seed: u64, family_a: Family, family_b: Family, angle: Option<f32>) -> usize {
    let mut rng = seeded_rng(seed);
    let mut with_result = 0;
    for i in 0..PAIRS {
        let shape_a = random_shape(&mut rng, family_a);
        let shape_b = random_shape(&mut rng, family_b);
        let (a, b): (&ConvexHull, &ConvexHull) = (shape_a.as_hull().unwrap(), shape_b.as_hull().unwrap());
        // Centres between deep overlap and a little beyond touching.
        let reach = a.radius() + b.radius();
        let distance = reach * rng.random_range(0.2..1.05);
        let pose_a = Pose::new(Vec3::ZERO, rotation(&mut rng, angle));
        let pose_b = Pose::new(random_direction(&mut rng) * distance, rotation(&mut rng, angle));
        let b_in_a: Isometry = pose_a.relative_to_self(&pose_b);
        let margin = [0.0, 0.01 * reach, 0.2 * reach][i % 3];
        let fast = query_edges_bounded(a, b, &b_in_a, margin);
        let exhaustive = query_edges_exhaustive(a, b, &b_in_a, margin);
        assert_eq!(
            query_edges(a, b, &b_in_a, margin),
            exhaustive,
            "pair {i} (seed {seed})"
        );
        assert_eq!(
            fast, exhaustive,
            "pair {i} (seed {seed}, {family_a:?} vs {family_b:?}, margin {margin}): b_in_a {b_in_a:?}"
        );
        with_result += exhaustive.is_some() as usize;
        // The whole SAT with its floors against the one from the exhaustive queries.
        assert_eq!(
            query_hulls(a, b, &b_in_a, margin),
            query_hulls_exhaustive(a, b, &b_in_a, margin),
            "SAT, pair {i} (seed {seed}, {family_a:?} vs {family_b:?}, margin {margin})"
        );
        let a_in_b = b_in_a.inverse();
        assert_eq!(
            query_faces(a, b, &a_in_b, margin),
            query_faces_exhaustive(a, b, &a_in_b, margin),
            "faces of A, pair {i} (seed {seed})"
        );
        assert_eq!(
            query_faces(b, a, &b_in_a, margin),
            query_faces_exhaustive(b, a, &b_in_a, margin),
            "faces of B, pair {i} (seed {seed})"
        );
    }
    with_result
}

#[test]
fn bounded_queries_match_the_exhaustive_ones_on_random_pairs() {
    let mut seed = 0;
    for &fa in &FAMILIES {
        for &fb in &FAMILIES {
            seed += 1;
            let found = compare(seed, fa, fb, None);
            // The comparison covers pairs that have an edge result.
            assert!(found > PAIRS / 4, "{fa:?} vs {fb:?}: only {found} edge results");
        }
    }
}

#[test]
fn bounded_queries_match_the_exhaustive_ones_on_nearly_aligned_boxes() {
    for (seed, angle) in [(100, 0.0), (101, 1e-6), (102, 1e-3), (103, 0.05)] {
        for (fa, fb) in [
            (Family::Box, Family::Box),
            (Family::Slab, Family::Box),
            (Family::Box, Family::Hull),
        ] {
            compare(seed, fa, fb, Some(angle));
        }
    }
}

/// `collide_hull_hull` stops pairs whose bounding spheres are apart by more than the margin
/// before the SAT; the full path (SAT, then `manifold_from_sat`) must give the same answer, bit
/// for bit, from deep overlap to well beyond the margin (box pairs, which take the box SAT, are
/// compared too).
#[test]
fn the_bounding_sphere_shortcut_leaves_every_manifold_unchanged() {
    let mut rng = seeded_rng(200);
    let mut apart = 0;
    for i in 0..4000 {
        let (fa, fb) = (FAMILIES[i % 4], FAMILIES[(i / 4) % 4]);
        let (shape_a, shape_b) = (random_shape(&mut rng, fa), random_shape(&mut rng, fb));
        let (a, b) = (shape_a.as_hull().unwrap(), shape_b.as_hull().unwrap());
        let reach = a.radius() + b.radius();
        let pose_a = Pose::new(random_direction(&mut rng) * 3.0, rotation(&mut rng, None));
        let offset = random_direction(&mut rng) * reach * rng.random_range(0.2..1.6);
        let pose_b = Pose::new(pose_a.translation + offset.as_dvec3(), rotation(&mut rng, None));
        let margin = [0.0, 0.05 * reach, 0.3 * reach][i % 3];
        let b_in_a = pose_a.relative_to_self(&pose_b);
        let full = match (&shape_a, &shape_b) {
            (Shape::Cuboid(ca), Shape::Cuboid(cb)) => query_boxes(ca, cb, &b_in_a, margin),
            _ => query_hulls(a, b, &b_in_a, margin),
        };
        let expected = manifold_from_sat(a, &pose_a, b, &pose_b, &full, margin);
        let got = collide_shapes(&shape_a, &pose_a, &shape_b, &pose_b, margin);
        assert_eq!(got, expected, "pair {i} ({fa:?} vs {fb:?}, margin {margin})");
        let centres = b_in_a.transform_point(b.centroid()) - a.centroid();
        apart += (centres.length() > reach + margin) as usize;
    }
    // Both sides of the shortcut are covered.
    assert!(apart > 400 && apart < 3600, "{apart} of 4000 apart");
}

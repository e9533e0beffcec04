//! Helpers shared by the integration tests: seeded randomness, approximate comparisons.
#![allow(dead_code, unused_imports)] // each test binary uses its own subset

pub mod oracle;
pub mod shapes;

pub use shapes::{random_direction as random_unit_vector, random_rotation};

use glam::Vec3;
use hullsat::{ConvexHull, Manifold, Pose};
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64;

/// A reproducible random generator.
pub fn seeded_rng(seed: u64) -> Pcg64 {
    Pcg64::seed_from_u64(seed)
}

/// A vector with each coordinate uniform in `[-extent, extent]`.
pub fn random_vec3(rng: &mut Pcg64, extent: f32) -> Vec3 {
    Vec3::new(
        rng.random_range(-extent..=extent),
        rng.random_range(-extent..=extent),
        rng.random_range(-extent..=extent),
    )
}

/// A random pose: rotation uniform, translation in `[-extent, extent]³`.
pub fn random_pose(rng: &mut Pcg64, extent: f32) -> Pose {
    Pose::new(random_vec3(rng, extent), random_rotation(rng))
}

/// Panics with `what` unless `|actual - expected| <= tolerance`.
#[track_caller]
pub fn assert_near(actual: f32, expected: f32, tolerance: f32, what: &str) {
    assert!(
        (actual - expected).abs() <= tolerance,
        "{what}: got {actual}, expected {expected} (tolerance {tolerance})"
    );
}

/// Panics with `what` unless `|actual - expected| <= tolerance`.
#[track_caller]
pub fn assert_vec_near(actual: Vec3, expected: Vec3, tolerance: f32, what: &str) {
    assert!(
        actual.distance(expected) <= tolerance,
        "{what}: got {actual}, expected {expected} (tolerance {tolerance})"
    );
}

/// Panics unless `moved` is `original` carried by the rigid motion `motion`: same separation,
/// depths and ids, normal rotated, positions transformed.
#[track_caller]
pub fn assert_manifold_moved(original: &Manifold, moved: &Manifold, motion: &Pose, tolerance: f32) {
    assert_near(moved.separation, original.separation, tolerance, "separation");
    assert_vec_near(
        moved.normal,
        motion.transform_vector(original.normal),
        tolerance,
        "normal",
    );
    assert_eq!(moved.point_count, original.point_count, "point count");
    for (m, o) in moved.points().iter().zip(original.points()) {
        assert_near(m.depth, o.depth, tolerance, "depth");
        assert_vec_near(
            m.position,
            motion.transform_point(o.position),
            tolerance,
            "position",
        );
        assert_eq!(m.id, o.id, "feature id");
    }
}

/// Panics unless the manifold's points are `expected` (position, depth) in some order.
#[track_caller]
pub fn assert_points_match(manifold: &Manifold, expected: &[(Vec3, f32)], tolerance: f32) {
    assert_eq!(
        manifold.points().len(),
        expected.len(),
        "point count of {manifold:?}"
    );
    for &(position, depth) in expected {
        assert!(
            manifold
                .points()
                .iter()
                .any(|p| p.position.distance(position) <= tolerance && (p.depth - depth).abs() <= tolerance),
            "no point at {position} with depth {depth} in {:?}",
            manifold.points()
        );
    }
}

/// Signed distance-like value of world point `p` to the boundary of `hull` at `pose`: the
/// largest signed distance to a face plane. Zero on the surface, negative inside, positive
/// outside (exact distance only near faces, which is all the surface checks need).
pub fn hull_plane_distance(hull: &ConvexHull, pose: &Pose, p: Vec3) -> f32 {
    let local = pose.inverse_transform_point(p);
    hull.planes()
        .iter()
        .map(|plane| plane.signed_distance(local))
        .fold(f32::NEG_INFINITY, f32::max)
}

//! Helpers shared by the integration tests: seeded randomness, poses, and surface checks.
#![allow(dead_code)] // each test file uses its own subset

use glam::{Quat, Vec3};
use hullsat::{ConvexHull, Pose};
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64;

/// A reproducible random generator.
pub fn seeded_rng(seed: u64) -> Pcg64 {
    Pcg64::seed_from_u64(seed)
}

/// A point uniform in the cube `[-half, half]³`.
pub fn random_vec3(rng: &mut Pcg64, half: f32) -> Vec3 {
    Vec3::new(
        rng.random_range(-half..=half),
        rng.random_range(-half..=half),
        rng.random_range(-half..=half),
    )
}

/// A unit vector uniform on the sphere (rejection from the unit ball).
pub fn random_unit_vector(rng: &mut Pcg64) -> Vec3 {
    loop {
        let v = random_vec3(rng, 1.0);
        let len2 = v.length_squared();
        if (1e-4..=1.0).contains(&len2) {
            return v / len2.sqrt();
        }
    }
}

/// A uniformly distributed rotation (normalized 4-vector from the unit 4-ball).
pub fn random_rotation(rng: &mut Pcg64) -> Quat {
    loop {
        let q = Quat::from_xyzw(
            rng.random_range(-1.0..=1.0),
            rng.random_range(-1.0..=1.0),
            rng.random_range(-1.0..=1.0),
            rng.random_range(-1.0..=1.0),
        );
        let len2 = q.length_squared();
        if (1e-4..=1.0).contains(&len2) {
            return q.normalize();
        }
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

/// Asserts `|a - b| <= tolerance` componentwise, naming `what` on failure.
pub fn assert_vec3_near(a: Vec3, b: Vec3, tolerance: f32, what: &str) {
    assert!(
        (a - b).abs().max_element() <= tolerance,
        "{what}: {a:?} vs {b:?} (tolerance {tolerance})"
    );
}

/// Asserts `|a - b| <= tolerance`, naming `what` on failure.
pub fn assert_near(a: f32, b: f32, tolerance: f32, what: &str) {
    assert!(
        (a - b).abs() <= tolerance,
        "{what}: {a} vs {b} (tolerance {tolerance})"
    );
}

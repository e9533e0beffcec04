//! Helpers shared by the integration tests: seeded randomness.
#![allow(dead_code)] // Each test binary uses a different subset.

use glam::{Quat, Vec3, Vec4};
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64;

/// A deterministic RNG for tests.
pub fn seeded_rng(seed: u64) -> Pcg64 {
    Pcg64::seed_from_u64(seed)
}

/// A point with each coordinate uniform in `[-half, half]`.
pub fn random_point(rng: &mut Pcg64, half: f32) -> Vec3 {
    Vec3::new(
        rng.random_range(-half..=half),
        rng.random_range(-half..=half),
        rng.random_range(-half..=half),
    )
}

/// A unit vector drawn uniformly over the sphere (rejection sampling in the cube).
pub fn random_unit_vector(rng: &mut Pcg64) -> Vec3 {
    loop {
        let v = random_point(rng, 1.0);
        let length = v.length();
        if (0.1..=1.0).contains(&length) {
            return v / length;
        }
    }
}

/// A rotation drawn uniformly over SO(3) (a uniform point on the unit 4-sphere).
pub fn random_rotation(rng: &mut Pcg64) -> Quat {
    loop {
        let v = Vec4::new(
            rng.random_range(-1.0..=1.0),
            rng.random_range(-1.0..=1.0),
            rng.random_range(-1.0..=1.0),
            rng.random_range(-1.0..=1.0),
        );
        let length = v.length();
        if (0.1..=1.0).contains(&length) {
            return Quat::from_vec4(v / length);
        }
    }
}

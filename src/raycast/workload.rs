//! Seeded random rays over a set of bodies: the ray workload of `hullsat bench` and
//! `benches/raycast.rs`.

use glam::{DVec3, Vec3};
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64;

use super::ray::Ray;
use crate::scene::Body;

/// `count` rays from `seed`: origins uniform in the box spanned by the bodies' translations,
/// directions uniform on the sphere, each `length` long (length units; `None`: unbounded).
/// `length` must be >= 0.
pub fn random_rays(bodies: &[Body], count: usize, length: Option<f32>, seed: u64) -> Vec<Ray> {
    let (lo, hi) = bodies
        .iter()
        .fold((DVec3::INFINITY, DVec3::NEG_INFINITY), |(lo, hi), b| {
            let t = b.pose.translation;
            (lo.min(t), hi.max(t))
        });
    let (lo, hi) = if bodies.is_empty() {
        (DVec3::ZERO, DVec3::ZERO)
    } else {
        (lo, hi)
    };
    let mut rng = Pcg64::seed_from_u64(seed);
    (0..count)
        .map(|_| {
            let u = DVec3::new(rng.random(), rng.random(), rng.random());
            let origin = lo + (hi - lo) * u;
            // Uniform direction: a point of the unit ball by rejection from the cube, normalized.
            let direction = loop {
                let v = Vec3::new(
                    rng.random_range(-1.0..1.0),
                    rng.random_range(-1.0..1.0),
                    rng.random_range(-1.0..1.0),
                );
                let l2 = v.length_squared();
                if l2 > 1.0e-4 && l2 <= 1.0 {
                    break v;
                }
            };
            Ray::new(origin, direction, length).expect("finite origin, non-zero direction, length >= 0")
        })
        .collect()
}

//! Seeded random shapes and poses shared by the differential, property and GPU tests.

use std::f32::consts::PI;

use glam::{Quat, Vec3};
use hullsat::{ConvexHull, Cuboid, Pose, Shape};
use rand::{Rng, RngExt};

/// The shape families the differential tests draw from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// Hull of 4 to 64 random points in a random ellipsoid.
    Hull,
    /// Box with aspect ratios up to 4:1.
    Box,
    /// Box 100:1:100 (a thin slab).
    Slab,
    /// Hull of points along a line, 100:1 (a needle).
    Needle,
}

/// Every family, for round-robin draws.
pub const FAMILIES: [Family; 4] = [Family::Hull, Family::Box, Family::Slab, Family::Needle];

/// A uniformly distributed random rotation (Shoemake's method).
pub fn random_rotation(rng: &mut impl Rng) -> Quat {
    let (u1, u2, u3): (f32, f32, f32) = (rng.random(), rng.random(), rng.random());
    let (a, b) = ((1.0 - u1).sqrt(), u1.sqrt());
    Quat::from_xyzw(
        a * (2.0 * PI * u2).sin(),
        a * (2.0 * PI * u2).cos(),
        b * (2.0 * PI * u3).sin(),
        b * (2.0 * PI * u3).cos(),
    )
    .normalize()
}

/// A random unit vector.
pub fn random_direction(rng: &mut impl Rng) -> Vec3 {
    random_rotation(rng) * Vec3::X
}

/// Points of a random hull: `count` points in an ellipsoid with semi-axes `axes`.
pub fn random_hull_points(rng: &mut impl Rng, count: usize, axes: Vec3) -> Vec<Vec3> {
    (0..count)
        .map(|_| {
            let d = random_direction(rng);
            let r: f32 = rng.random_range(0.6..1.0);
            d * r * axes
        })
        .collect()
}

/// A random shape of `family`, with a size factor in [0.5, 2].
pub fn random_shape(rng: &mut impl Rng, family: Family) -> Shape {
    let size: f32 = rng.random_range(0.5..2.0);
    match family {
        Family::Hull => loop {
            let count = rng.random_range(4..=64);
            let axes = Vec3::new(
                rng.random_range(0.4..1.0),
                rng.random_range(0.4..1.0),
                rng.random_range(0.4..1.0),
            ) * size;
            if let Ok(hull) = ConvexHull::from_points(&random_hull_points(rng, count, axes)) {
                return Shape::Hull(hull);
            }
        },
        Family::Box => {
            let half = Vec3::new(
                rng.random_range(0.25..1.0),
                rng.random_range(0.25..1.0),
                rng.random_range(0.25..1.0),
            ) * size;
            Shape::Cuboid(Cuboid::new(half).unwrap())
        }
        Family::Slab => Shape::Cuboid(Cuboid::new(Vec3::new(1.0, 0.01, 1.0) * size).unwrap()),
        Family::Needle => loop {
            let count = rng.random_range(6..=24);
            let points: Vec<Vec3> = (0..count)
                .map(|i| {
                    let x = if i < 2 {
                        [-1.0, 1.0][i]
                    } else {
                        rng.random_range(-1.0..1.0)
                    };
                    let (y, z) = (rng.random_range(-0.01..0.01), rng.random_range(-0.01..0.01));
                    Vec3::new(x, y, z) * size
                })
                .collect();
            if let Ok(hull) = ConvexHull::from_points(&points) {
                return Shape::Hull(hull);
            }
        },
    }
}

/// A random pose near `center` (within `spread`), randomly rotated.
pub fn random_pose(rng: &mut impl Rng, center: Vec3, spread: f32) -> Pose {
    let offset = random_direction(rng) * rng.random_range(0.0..spread);
    Pose::new(center + offset, random_rotation(rng))
}

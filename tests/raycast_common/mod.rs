//! Random ray scenes shared by the ray cast tests (CPU, GPU, CLI).
#![allow(dead_code)] // each test binary uses its own subset

use glam::{Quat, Vec3};
use hullsat::{Body, Capsule, Cylinder, GpuRaycaster, HalfSpace, Pose, Ray, Shape, Sphere};
use rand::RngExt;
use rand_pcg::Pcg64;

use crate::support::shapes::{Family, random_direction, random_rotation, random_shape};
use crate::support::{random_vec3, started_or_skip};

/// Shapes in a random scene's library: boxes, hulls, spheres, capsules in turn, then a ground
/// half-space (the last shape).
pub const LIBRARY: usize = 24;

/// A random scene of `count` bodies drawn from [`LIBRARY`] shapes, placed uniformly in the cube
/// `[offset, offset + side]³` and randomly rotated, plus one ground half-space below the cube.
pub fn random_scene(rng: &mut Pcg64, count: usize, side: f32, offset: Vec3) -> (Vec<Shape>, Vec<Body>) {
    let mut shapes: Vec<Shape> = (0..LIBRARY)
        .map(|i| match i % 4 {
            0 => random_shape(rng, Family::Box),
            1 => random_shape(rng, Family::Hull),
            2 => Shape::Sphere(Sphere::new(rng.random_range(0.2..1.0)).unwrap()),
            _ => {
                Shape::Capsule(Capsule::new(rng.random_range(0.2..1.0), rng.random_range(0.1..0.5)).unwrap())
            }
        })
        .collect();
    shapes.push(Shape::HalfSpace(HalfSpace::new(Vec3::Y, 0.0).unwrap()));
    let mut bodies: Vec<Body> = (0..count)
        .map(|_| Body {
            shape: rng.random_range(0..LIBRARY as u32),
            pose: Pose::new(
                offset + (random_vec3(rng, 0.5) + 0.5) * side,
                random_rotation(rng),
            ),
        })
        .collect();
    bodies.push(Body {
        shape: LIBRARY as u32,
        pose: Pose::new(offset + Vec3::new(0.0, -0.5 * side, 0.0), Quat::IDENTITY),
    });
    (shapes, bodies)
}

/// A random scene of `count` cylinders (8 shapes, half heights and radii 0.1 to 1, from flat
/// disks to rods) in the cube `[0, side]³`, randomly rotated, plus a ground half-space below.
pub fn cylinder_scene(rng: &mut Pcg64, count: usize, side: f32) -> (Vec<Shape>, Vec<Body>) {
    let mut shapes: Vec<Shape> = (0..8)
        .map(|_| {
            Shape::Cylinder(Cylinder::new(rng.random_range(0.1..1.0), rng.random_range(0.1..1.0)).unwrap())
        })
        .collect();
    shapes.push(Shape::HalfSpace(HalfSpace::new(Vec3::Y, 0.0).unwrap()));
    let mut bodies: Vec<Body> = (0..count)
        .map(|_| Body {
            shape: rng.random_range(0..8),
            pose: Pose::new((random_vec3(rng, 0.5) + 0.5) * side, random_rotation(rng)),
        })
        .collect();
    bodies.push(Body {
        shape: 8,
        pose: Pose::new(Vec3::new(0.0, -0.5 * side, 0.0), Quat::IDENTITY),
    });
    (shapes, bodies)
}

/// `count` random rays starting in (and a little around) the scene cube, random directions;
/// every other one with a random max distance up to `side`.
pub fn random_rays(rng: &mut Pcg64, count: usize, side: f32, offset: Vec3) -> Vec<Ray> {
    (0..count)
        .map(|i| {
            let origin = offset.as_dvec3() + ((random_vec3(rng, 0.7) + 0.5) * side).as_dvec3();
            let max = (i % 2 == 0).then(|| rng.random_range(0.0..side));
            Ray::new(origin, random_direction(rng), max).unwrap()
        })
        .collect()
}

/// The GPU ray caster, or `None` (after printing why) without an adapter unless
/// `HULLSAT_REQUIRE_GPU=1`.
pub fn gpu_or_skip(shapes: &[Shape]) -> Option<GpuRaycaster> {
    started_or_skip("GPU ray caster", GpuRaycaster::new(shapes))
}

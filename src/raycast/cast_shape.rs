//! A ray against any shape, and against a posed body (world ray in, world hit out).
//!
//! Mirrored in `raycast.wgsl` (`cast_body`).

use super::cast_box::cast_box;
use super::cast_capsule::cast_capsule;
use super::cast_compound::cast_compound;
use super::cast_cylinder::cast_cylinder;
use super::cast_half_space::cast_half_space;
use super::cast_hull::cast_hull;
use super::cast_sphere::cast_sphere;
use super::cast_trimesh::cast_trimesh;
use super::ray::{LocalHit, LocalRay, Ray, RayHit};
use crate::scene::Body;
use crate::shape::Shape;

/// Where `ray` (the shape's local frame) enters `shape`, or `None`. A triangle mesh: its
/// nearest triangle, either face ([`cast_trimesh`], which also names the triangle). A compound:
/// its nearest child ([`cast_compound`], which also names the child).
pub fn cast_shape(shape: &Shape, ray: &LocalRay) -> Option<LocalHit> {
    match shape {
        Shape::Hull(hull) => cast_hull(hull, ray),
        Shape::Cuboid(cuboid) => cast_box(cuboid.half_extents(), ray),
        Shape::Sphere(sphere) => cast_sphere(sphere.radius, ray),
        Shape::Capsule(capsule) => cast_capsule(capsule.half_height, capsule.radius, ray),
        Shape::Cylinder(cylinder) => cast_cylinder(cylinder.half_height(), cylinder.radius(), ray),
        Shape::HalfSpace(half_space) => cast_half_space(half_space, ray),
        Shape::TriMesh(mesh) => cast_trimesh(mesh, ray).map(|(hit, _)| hit),
        Shape::Compound(compound) => cast_compound(compound, ray).map(|(hit, _)| hit),
    }
}

/// Where `ray` (world) enters body number `index` (`body`, of `shape`), computed in the body's
/// frame; the hit is in world space. A body farther from the origin than the f32 range is
/// missed.
pub fn cast_body(shape: &Shape, index: u32, body: &Body, ray: &Ray) -> Option<RayHit> {
    let local_ray = ray.to_local(&body.pose);
    if !local_ray.origin.is_finite() {
        return None;
    }
    let local = cast_shape(shape, &local_ray)?;
    Some(RayHit::from_local(ray, index, &body.pose, local))
}

//! A ray against any shape, and against a posed body (world ray in, world hit out); against a
//! compound, each child hit in its own frame through the same dispatch, the nearest kept, its
//! normal turned back into the compound's frame (a ray starting inside any child hits at
//! distance 0 with the normal against its direction).
//!
//! Mirrored in `raycast.wgsl` (`cast_body`) and `raycast_complex.wgsl` (`cast_compound`).

use super::cast_box::cast_box;
use super::cast_capsule::cast_capsule;
use super::cast_cylinder::cast_cylinder;
use super::cast_half_space::cast_half_space;
use super::cast_hull::cast_hull;
use super::cast_sphere::cast_sphere;
use super::cast_trimesh::cast_trimesh;
use super::ray::{LocalHit, LocalRay, Ray, RayHit};
use crate::scene::Body;
use crate::shape::Shape;
use crate::shape::compound::Compound;

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

/// Where `ray` (compound frame) first enters `compound` within its max distance, and which
/// child, or `None`. Ties in distance go to the lowest child index. Children's boxes are not
/// tested first: a compound has at most [`crate::shape::compound::MAX_COMPOUND_CHILDREN`] children.
pub fn cast_compound(compound: &Compound, ray: &LocalRay) -> Option<(LocalHit, u32)> {
    let mut best: Option<(LocalHit, u32)> = None;
    for (i, child) in compound.children().iter().enumerate() {
        let limit = best.map_or(ray.max_distance, |(hit, _)| hit.distance);
        // The ray in the child's frame (an isometry keeps distances).
        let child_ray = LocalRay {
            origin: child.pose.inverse_transform_point(ray.origin),
            direction: child.pose.inverse_transform_vector(ray.direction),
            max_distance: limit,
        };
        if let Some(hit) = cast_shape(&child.shape, &child_ray)
            && best.is_none_or(|(b, _)| hit.distance < b.distance)
        {
            let normal = child.pose.transform_vector(hit.normal);
            best = Some((LocalHit { normal, ..hit }, i as u32));
        }
    }
    best
}

//! Ray against a static triangle mesh: the triangle BVH gives the triangles whose boxes the ray
//! reaches, nearer first; each is hit by Möller–Trumbore; the nearest hit is kept.
//!
//! Both faces are hit (a ray from below a floor or inside a closed mesh stops at it): collisions
//! are one-sided so that bodies are pushed out of the front, but a ray asks what is in the way.
//! The normal is the triangle's, turned to face the ray (`normal · direction <= 0`). A mesh
//! has no inside: a ray starting on no triangle never hits at distance 0. WGSL twin:
//! `cast_trimesh` in `shaders/raycast/raycast_complex.wgsl` (the same walk and test).

use glam::Vec3;

use super::ray::{LocalHit, LocalRay};
use crate::constants::TRIMESH_RAY_EDGE_TOLERANCE;
use crate::ray_box::inverse_direction;
use crate::trimesh::{TriMesh, Triangle};

/// Where `ray` (mesh frame) first meets `mesh` within its max distance, and which triangle,
/// or `None`. Ties in distance go to the triangle found first (BVH order).
pub fn cast_trimesh(mesh: &TriMesh, ray: &LocalRay) -> Option<(LocalHit, u32)> {
    let mut best: Option<(LocalHit, u32)> = None;
    let limit = std::cell::Cell::new(ray.max_distance);
    mesh.bvh().for_each_ray_candidate(
        ray.origin,
        inverse_direction(ray.direction),
        || limit.get(),
        |t| {
            if let Some(distance) = ray_triangle(&mesh.triangle(t), ray.origin, ray.direction)
                && distance <= limit.get()
                && best.is_none_or(|(hit, _)| distance < hit.distance)
            {
                let normal = mesh.plane(t).normal;
                let facing = if normal.dot(ray.direction) > 0.0 {
                    -normal
                } else {
                    normal
                };
                limit.set(distance);
                best = Some((
                    LocalHit {
                        distance,
                        normal: facing,
                    },
                    t,
                ));
            }
        },
    );
    best
}

/// Distance along the unit `direction` from `origin` to where the ray crosses `triangle`
/// (either face, each barycentric weight at least −[`TRIMESH_RAY_EDGE_TOLERANCE`]), `None`
/// when it misses, runs parallel to the plane or crosses behind the origin (Möller–Trumbore).
fn ray_triangle(triangle: &Triangle, origin: Vec3, direction: Vec3) -> Option<f32> {
    let [a, b, c] = triangle.vertices;
    let (e1, e2) = (b - a, c - a);
    let p = direction.cross(e2);
    let det = e1.dot(p);
    if det == 0.0 || !det.is_finite() {
        return None;
    }
    let inverse = 1.0 / det;
    let s = origin - a;
    let u = s.dot(p) * inverse;
    let q = s.cross(e1);
    let v = direction.dot(q) * inverse;
    let tolerance = TRIMESH_RAY_EDGE_TOLERANCE;
    if u < -tolerance || v < -tolerance || u + v > 1.0 + tolerance {
        return None;
    }
    let distance = e2.dot(q) * inverse;
    (distance >= 0.0).then_some(distance)
}

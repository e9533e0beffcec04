//! Sphere against Sphere.

use crate::manifold::Manifold;
use crate::pose::Pose;
use crate::shape::Sphere;

/// The manifold between sphere_a (body A) and sphere_b (body B) at world poses, or `None` beyond `margin`.
pub fn collide_sphere_sphere(
    sphere_a: &Sphere,
    pose_a: &Pose,
    sphere_b: &Sphere,
    pose_b: &Pose,
    margin: f32,
) -> Option<Manifold> {
    todo!("sphere_sphere")
}

//! Sphere against Capsule.

use crate::manifold::Manifold;
use crate::pose::Pose;
use crate::shape::{Capsule, Sphere};

/// The manifold between sphere (body A) and capsule (body B) at world poses, or `None` beyond `margin`.
pub fn collide_sphere_capsule(
    sphere: &Sphere,
    pose_a: &Pose,
    capsule: &Capsule,
    pose_b: &Pose,
    margin: f32,
) -> Option<Manifold> {
    todo!("sphere_capsule")
}

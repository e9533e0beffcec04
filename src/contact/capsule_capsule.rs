//! Capsule against Capsule.

use crate::manifold::Manifold;
use crate::pose::Pose;
use crate::shape::Capsule;

/// The manifold between capsule_a (body A) and capsule_b (body B) at world poses, or `None` beyond `margin`.
pub fn collide_capsule_capsule(
    capsule_a: &Capsule,
    pose_a: &Pose,
    capsule_b: &Capsule,
    pose_b: &Pose,
    margin: f32,
) -> Option<Manifold> {
    todo!("capsule_capsule")
}

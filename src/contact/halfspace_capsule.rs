//! HalfSpace against Capsule.

use crate::manifold::Manifold;
use crate::pose::Pose;
use crate::shape::{Capsule, HalfSpace};

/// The manifold between halfspace (body A) and capsule (body B) at world poses, or `None` beyond `margin`.
pub fn collide_halfspace_capsule(
    halfspace: &HalfSpace,
    pose_a: &Pose,
    capsule: &Capsule,
    pose_b: &Pose,
    margin: f32,
) -> Option<Manifold> {
    todo!("halfspace_capsule")
}

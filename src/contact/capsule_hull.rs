//! Capsule against ConvexHull.

use crate::hull::ConvexHull;
use crate::manifold::Manifold;
use crate::pose::Pose;
use crate::shape::Capsule;

/// The manifold between capsule (body A) and hull (body B) at world poses, or `None` beyond `margin`.
pub fn collide_capsule_hull(
    capsule: &Capsule,
    pose_a: &Pose,
    hull: &ConvexHull,
    pose_b: &Pose,
    margin: f32,
) -> Option<Manifold> {
    todo!("capsule_hull")
}

//! HalfSpace against ConvexHull.

use crate::hull::ConvexHull;
use crate::manifold::Manifold;
use crate::pose::Pose;
use crate::shape::HalfSpace;

/// The manifold between halfspace (body A) and hull (body B) at world poses, or `None` beyond `margin`.
pub fn collide_halfspace_hull(
    halfspace: &HalfSpace,
    pose_a: &Pose,
    hull: &ConvexHull,
    pose_b: &Pose,
    margin: f32,
) -> Option<Manifold> {
    todo!("halfspace_hull")
}

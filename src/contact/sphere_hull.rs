//! Sphere against ConvexHull.

use crate::hull::ConvexHull;
use crate::manifold::Manifold;
use crate::pose::Pose;
use crate::shape::Sphere;

/// The manifold between sphere (body A) and hull (body B) at world poses, or `None` beyond `margin`.
pub fn collide_sphere_hull(
    sphere: &Sphere,
    pose_a: &Pose,
    hull: &ConvexHull,
    pose_b: &Pose,
    margin: f32,
) -> Option<Manifold> {
    todo!("sphere_hull")
}

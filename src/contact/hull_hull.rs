//! Hull (or box) against hull (or box): SAT, then a clipped face contact or an edge contact.

use crate::hull::ConvexHull;
use crate::manifold::Manifold;
use crate::pose::Pose;
use crate::query::sat::SatResult;

/// The manifold between hull `a` (body A) and hull `b` (body B) at world poses, or `None`
/// beyond `margin`.
pub fn collide_hull_hull(
    a: &ConvexHull,
    pose_a: &Pose,
    b: &ConvexHull,
    pose_b: &Pose,
    margin: f32,
) -> Option<Manifold> {
    todo!()
}

/// Turns a SAT result (from the CPU queries or the GPU shader) into a world-space manifold.
pub fn manifold_from_sat(
    a: &ConvexHull,
    pose_a: &Pose,
    b: &ConvexHull,
    pose_b: &Pose,
    sat: &SatResult,
    margin: f32,
) -> Option<Manifold> {
    todo!()
}

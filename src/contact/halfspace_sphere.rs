//! HalfSpace against Sphere.

use crate::manifold::Manifold;
use crate::pose::Pose;
use crate::shape::{HalfSpace, Sphere};

/// The manifold between halfspace (body A) and sphere (body B) at world poses, or `None` beyond `margin`.
pub fn collide_halfspace_sphere(
    halfspace: &HalfSpace,
    pose_a: &Pose,
    sphere: &Sphere,
    pose_b: &Pose,
    margin: f32,
) -> Option<Manifold> {
    todo!("halfspace_sphere")
}

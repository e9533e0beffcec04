//! Ray against a half-space `dot(normal, x) <= offset`: [`Clip`] with its one plane.

use super::clip::Clip;
use super::ray::{LocalHit, LocalRay};
use crate::shape::HalfSpace;

/// Where `ray` (local frame) enters `half_space`, or `None` when it stays outside within its
/// max distance.
pub fn cast_half_space(half_space: &HalfSpace, ray: &LocalRay) -> Option<LocalHit> {
    let mut clip = Clip::new(ray);
    clip.plane(ray, half_space.normal, half_space.offset)
        .then(|| clip.hit(ray))
}

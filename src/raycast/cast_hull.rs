//! Ray against a convex hull: clip the ray against every face plane ([`Clip`]).
//!
//! Mirrored in `raycast.wgsl` (`cast_hull`).

use super::clip::Clip;
use super::ray::{LocalHit, LocalRay};
use crate::hull::ConvexHull;

/// Where `ray` (hull frame) enters `hull`, or `None` when it misses within its max distance.
pub fn cast_hull(hull: &ConvexHull, ray: &LocalRay) -> Option<LocalHit> {
    let mut clip = Clip::new(ray);
    for plane in hull.planes() {
        if !clip.plane(ray, plane.normal, plane.offset) {
            return None;
        }
    }
    Some(clip.hit(ray))
}

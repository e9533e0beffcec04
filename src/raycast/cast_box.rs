//! Ray against a box: the slab test, as [`Clip`] over the six axis planes (in the order of
//! [`crate::hull::ConvexHull::cuboid`]'s faces: -X, +X, -Y, +Y, -Z, +Z).
//!
//! Mirrored in `raycast.wgsl` (`cast_box`).

use glam::Vec3;

use super::clip::Clip;
use super::ray::{LocalHit, LocalRay};

/// Where `ray` (box frame) enters the box of `half_extents` centred on the origin, or `None`.
pub fn cast_box(half_extents: Vec3, ray: &LocalRay) -> Option<LocalHit> {
    let mut clip = Clip::new(ray);
    for axis in 0..3 {
        let normal = Vec3::AXES[axis];
        let h = half_extents[axis];
        if !clip.plane(ray, -normal, h) || !clip.plane(ray, normal, h) {
            return None;
        }
    }
    Some(clip.hit(ray))
}

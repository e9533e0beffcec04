//! Ray against a compound: each child hit in its own frame ([`cast_shape`]), the nearest kept,
//! its normal turned back into the compound's frame. A ray starting inside any child hits at
//! distance 0 with the normal against its direction. WGSL twin: `cast_compound` in
//! `shaders/raycast/raycast_complex.wgsl`.

use super::cast_shape::cast_shape;
use super::ray::{LocalHit, LocalRay};
use crate::compound::Compound;

/// Where `ray` (compound frame) first enters `compound` within its max distance, and which
/// child, or `None`. Ties in distance go to the lowest child index. Children's boxes are not
/// tested first: a compound has at most [`crate::compound::MAX_COMPOUND_CHILDREN`] children.
pub fn cast_compound(compound: &Compound, ray: &LocalRay) -> Option<(LocalHit, u32)> {
    let mut best: Option<(LocalHit, u32)> = None;
    for (i, child) in compound.children().iter().enumerate() {
        let limit = best.map_or(ray.max_distance, |(hit, _)| hit.distance);
        // The ray in the child's frame (an isometry keeps distances).
        let child_ray = LocalRay {
            origin: child.pose.inverse_transform_point(ray.origin),
            direction: child.pose.inverse_transform_vector(ray.direction),
            max_distance: limit,
        };
        if let Some(hit) = cast_shape(&child.shape, &child_ray)
            && best.is_none_or(|(b, _)| hit.distance < b.distance)
        {
            let normal = child.pose.transform_vector(hit.normal);
            best = Some((LocalHit { normal, ..hit }, i as u32));
        }
    }
    best
}

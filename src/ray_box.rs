//! A ray against an axis-aligned box, as every BVH here is walked (the bodies' BVH, a mesh's
//! triangle BVH, and their WGSL twins `node_entry` in `raycast.wgsl` and `lane_entry` in
//! `raycast_complex.wgsl`): each box grown by
//! [`BVH_PADDING`] ([`padded_box`]), then the slab test on the ray's component-wise inverse
//! direction ([`inverse_direction`], [`box_entry`]).

use glam::Vec3;

/// Growth of every BVH box on each side, relative (dimensionless) to the largest coordinate
/// magnitude of the box in the BVH frame plus its extent (so the growth is a length): covers the
/// f32 rounding of the box test (a few ulps, about 1e-7 relative), so traversal stays
/// conservative. Larger only adds candidates (slower, never wrong); smaller risks skipping a box
/// whose body the ray grazes.
pub const BVH_PADDING: f32 = 1.0e-5;

/// Direction components (of the unit ray direction, dimensionless) smaller than this in
/// magnitude are replaced by it (with their sign) before inverting for the box test, so
/// `(bound - origin) / component` stays finite: at most 1e20 per unit length, far below
/// `f32::MAX` for any coordinate the scene allows. Smaller risks an infinite or NaN slab
/// distance (0 × ∞); larger tilts near-axis-parallel rays in the box test: a ray whose origin
/// lies within `MIN_DIRECTION_COMPONENT` × distance of a slab's bound may be judged to leave the
/// slab (at 1e-20, within 1e-8 after 1e12 length units). Must match `MIN_DIRECTION_COMPONENT`
/// in `raycast.wgsl`.
pub const MIN_DIRECTION_COMPONENT: f32 = 1.0e-20;

/// The box `min..max` (length units) grown on each side by [`BVH_PADDING`] of its largest
/// coordinate magnitude plus its extent.
#[inline]
pub fn padded_box(min: Vec3, max: Vec3) -> (Vec3, Vec3) {
    let pad = BVH_PADDING * (min.abs().max(max.abs()).max_element() + (max - min).max_element());
    (min - pad, max + pad)
}

/// The entry distance of a ray (`origin` in the box's frame, component-wise inverse direction
/// from [`inverse_direction`]) into the box `min..max` within `[0, limit]`, or `None`.
#[inline]
pub fn box_entry(min: Vec3, max: Vec3, origin: Vec3, inverse_direction: Vec3, limit: f32) -> Option<f32> {
    let t1 = (min - origin) * inverse_direction;
    let t2 = (max - origin) * inverse_direction;
    let enter = t1.min(t2).max_element().max(0.0);
    let exit = t1.max(t2).min_element().min(limit);
    (enter <= exit).then_some(enter)
}

/// The component-wise inverse of a unit direction, tiny components replaced by
/// [`MIN_DIRECTION_COMPONENT`] with their sign.
#[inline]
pub fn inverse_direction(direction: Vec3) -> Vec3 {
    let safe = |c: f32| {
        if c.abs() < MIN_DIRECTION_COMPONENT {
            MIN_DIRECTION_COMPONENT.copysign(c)
        } else {
            c
        }
    };
    Vec3::new(
        1.0 / safe(direction.x),
        1.0 / safe(direction.y),
        1.0 / safe(direction.z),
    )
}

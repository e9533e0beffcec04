//! Ray against a cylinder along local Y (`x² + z² <= r²`, `|y| <= h`), exactly (not its prism).
//!
//! 1. The caps: [`Clip`] by the planes `y = −h` (normal −Y) and `y = h` (normal +Y).
//! 2. The side: the ray's range inside the infinite cylinder of radius `r` about Y, in the XZ
//!    plane (`a = dx² + dz²`, `b = ox dx + oz dz`, `c = ox² + oz² − r²`, half chord from
//!    `disc = a r² − (ox dz − oz dx)²`, as in the capsule). Along the axis (`a == 0`) the ray is
//!    inside when `c <= 0` and misses otherwise; `disc < 0` misses. The roots of
//!    `a t² + 2 b t + c` without cancellation: `q = −(b ± sqrt(disc))` (the sign of `b`, + at 0), roots `q / a` and
//!    `c / q`; the range clips ([`Clip::range`]) with the radial normal at its entry.
//! 3. The hit as for planes: at the latest entry (a cap wins a tie at the rim), or at 0 against
//!    the direction when the ray starts inside.
//!
//! Mirrored in `raycast.wgsl` (`cast_cylinder`), same steps.

use glam::Vec3;

use super::clip::Clip;
use super::ray::{LocalHit, LocalRay};

/// Where `ray` enters the cylinder of `half_height` and `radius` about local Y, or `None`.
pub fn cast_cylinder(half_height: f32, radius: f32, ray: &LocalRay) -> Option<LocalHit> {
    let (o, d) = (ray.origin, ray.direction);
    // Step 1.
    let mut clip = Clip::new(ray);
    if !clip.plane(ray, Vec3::NEG_Y, half_height) || !clip.plane(ray, Vec3::Y, half_height) {
        return None;
    }
    // Step 2.
    let a = d.x * d.x + d.z * d.z;
    let b = o.x * d.x + o.z * d.z;
    let c = o.x * o.x + o.z * o.z - radius * radius;
    if a == 0.0 {
        return (c <= 0.0).then(|| clip.hit(ray));
    }
    let cross = o.x * d.z - o.z * d.x;
    let disc = a * radius * radius - cross * cross;
    if disc < 0.0 {
        return None;
    }
    let root = disc.sqrt();
    let q = -(b + if b < 0.0 { -root } else { root });
    let (first, second) = (q / a, if q == 0.0 { 0.0 } else { c / q });
    let (enter, exit) = (first.min(second), first.max(second));
    let entry = o + enter * d;
    let normal = Vec3::new(entry.x, 0.0, entry.z).normalize_or(-d);
    if !clip.range(enter, exit, normal) {
        return None;
    }
    // Step 3.
    Some(clip.hit(ray))
}

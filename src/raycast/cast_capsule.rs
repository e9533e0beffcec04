//! Ray against a capsule along local Y (segment `(0, ±h, 0)`, radius `r`).
//!
//! 1. A start within `r` of the segment is inside: distance 0, normal `-d`.
//! 2. The side: the ray against the infinite cylinder of radius `r` about Y, in the XZ plane
//!    (`a = dx² + dz²`, `b = ox dx + oz dz`, `c = ox² + oz² - r²`, half chord from the line's
//!    distance to the axis, `a r² - (ox dz - oz dx)²`, as in the sphere). An entry with
//!    `|y| <= h` is the hit (the capsule is convex, nothing of it comes earlier).
//! 3. Otherwise the nearer entry into the two end spheres ([`cast_sphere`]), if any.
//!
//! Mirrored in `raycast.wgsl` (`cast_capsule`), same steps.

use glam::Vec3;

use super::cast_sphere::cast_sphere;
use super::ray::{LocalHit, LocalRay};

/// Where `ray` enters the capsule of `half_height` and `radius`, or `None`.
pub fn cast_capsule(half_height: f32, radius: f32, ray: &LocalRay) -> Option<LocalHit> {
    let (o, d) = (ray.origin, ray.direction);
    // Step 1.
    let on_axis = Vec3::new(0.0, o.y.clamp(-half_height, half_height), 0.0);
    if (o - on_axis).length_squared() <= radius * radius {
        return Some(LocalHit::inside(ray));
    }
    // Step 2.
    let a = d.x * d.x + d.z * d.z;
    let b = o.x * d.x + o.z * d.z;
    let c = o.x * o.x + o.z * o.z - radius * radius;
    if a > 0.0 && c > 0.0 && b < 0.0 {
        let cross = o.x * d.z - o.z * d.x;
        let disc = a * radius * radius - cross * cross;
        if disc >= 0.0 {
            let t = c / (disc.sqrt() - b);
            let y = o.y + t * d.y;
            if y.abs() <= half_height {
                if t > ray.max_distance {
                    return None;
                }
                let normal = Vec3::new(o.x + t * d.x, 0.0, o.z + t * d.z).normalize_or(-d);
                return Some(LocalHit { distance: t, normal });
            }
        }
    }
    // Step 3.
    let cap = |y: f32| {
        let shifted = LocalRay {
            origin: o - Vec3::new(0.0, y, 0.0),
            ..*ray
        };
        cast_sphere(radius, &shifted)
    };
    match (cap(-half_height), cap(half_height)) {
        (Some(low), Some(high)) => Some(if high.distance < low.distance { high } else { low }),
        (low, high) => low.or(high),
    }
}

//! Ray against a sphere centred on the local origin.
//!
//! 1. `c = |o|² - r²`: `c <= 0` is a start inside (distance 0, normal `-d`).
//! 2. `b = o · d`: outside and `b > 0` moves away: miss.
//! 3. `disc = r² - |o - b d|²` (the squared half chord, from the line's distance to the centre,
//!    which keeps its precision for far rays): negative misses.
//! 4. `t = c / (-b + sqrt(disc))`, the nearer root written without cancellation.
//! 5. Beyond `max_distance` misses; else the normal is the unit vector from the centre.
//!
//! Mirrored in `raycast.wgsl` (`cast_sphere`), same steps.

use super::ray::{LocalHit, LocalRay};

/// Where `ray` enters the sphere of `radius` centred on the origin, or `None`.
pub fn cast_sphere(radius: f32, ray: &LocalRay) -> Option<LocalHit> {
    let (o, d) = (ray.origin, ray.direction);
    // Step 1.
    let c = o.length_squared() - radius * radius;
    if c <= 0.0 {
        return Some(LocalHit::inside(ray));
    }
    // Step 2.
    let b = o.dot(d);
    if b > 0.0 {
        return None;
    }
    // Step 3.
    let disc = radius * radius - (o - b * d).length_squared();
    if disc < 0.0 {
        return None;
    }
    // Steps 4 and 5.
    let t = c / (disc.sqrt() - b);
    if t > ray.max_distance {
        return None;
    }
    let normal = (o + t * d).normalize_or(-d);
    Some(LocalHit { distance: t, normal })
}

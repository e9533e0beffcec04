//! Clipping a ray against outward planes: the part of the ray inside a convex polyhedron (an
//! intersection of half-spaces) and the plane it enters through. Hulls (their face planes),
//! boxes (six axis planes: the slab test), half-spaces (one plane) and cylinders (two cap planes
//! and the range inside their side, [`Clip::range`]) share it.
//!
//! 1. Start with the whole ray: `enter = -inf`, `exit = max_distance`, no entry plane.
//! 2. For each plane, with `denom = dot(normal, direction)` and `distance = dot(normal, origin)
//!    - offset` (positive outside): a parallel ray (`denom == 0`) outside misses, inside is
//!    unconstrained; else the crossing `t = -distance / denom` raises `enter` when the ray goes
//!    in (`denom < 0`), remembering the plane, or lowers `exit` when it goes out.
//! 3. `enter > exit` (or `exit < 0`, everything behind the origin) is a miss.
//! 4. The hit is at `enter` through its plane, or at 0 against the direction when `enter < 0`
//!    (the origin is inside). Ties between planes keep the first plane.
//!
//! Mirrored in `raycast.wgsl` (`clip_*`), same steps.

use glam::Vec3;

use super::ray::{LocalHit, LocalRay};

/// The ray parameter range still inside the planes clipped so far.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Clip {
    enter: f32,
    exit: f32,
    entry_normal: Option<Vec3>,
}

impl Clip {
    /// Step 1: the whole ray.
    pub(crate) fn new(ray: &LocalRay) -> Clip {
        Clip {
            enter: f32::NEG_INFINITY,
            exit: ray.max_distance,
            entry_normal: None,
        }
    }

    /// Steps 2 and 3 for the plane `dot(normal, x) = offset` (unit outward `normal`): false once
    /// the ray misses.
    #[inline]
    pub(crate) fn plane(&mut self, ray: &LocalRay, normal: Vec3, offset: f32) -> bool {
        let denom = normal.dot(ray.direction);
        let distance = normal.dot(ray.origin) - offset;
        if denom == 0.0 {
            return distance <= 0.0;
        }
        let t = -distance / denom;
        if denom < 0.0 {
            if t > self.enter {
                self.enter = t;
                self.entry_normal = Some(normal);
            }
        } else if t < self.exit {
            self.exit = t;
        }
        self.enter <= self.exit && self.exit >= 0.0
    }

    /// Steps 2 and 3 for a range `enter..=exit` of the ray known to lie inside a curved surface,
    /// entered through outward unit `normal`: false once the ray misses.
    #[inline]
    pub(crate) fn range(&mut self, enter: f32, exit: f32, normal: Vec3) -> bool {
        if enter > self.enter {
            self.enter = enter;
            self.entry_normal = Some(normal);
        }
        if exit < self.exit {
            self.exit = exit;
        }
        self.enter <= self.exit && self.exit >= 0.0
    }

    /// Step 4: the hit, after every plane was clipped without a miss.
    pub(crate) fn hit(self, ray: &LocalRay) -> LocalHit {
        match self.entry_normal {
            Some(normal) if self.enter >= 0.0 => LocalHit {
                distance: self.enter,
                normal,
            },
            _ => LocalHit::inside(ray),
        }
    }
}

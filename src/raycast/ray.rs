//! Rays and ray hits, in world space and in a body's local frame.

use crate::constants::MAX_POSITION;
use glam::{DVec3, Vec3};
use thiserror::Error;

use crate::pose::Pose;

/// Why a ray was rejected.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum RayError {
    /// The origin has a NaN coordinate or one beyond the supported range (±[`MAX_POSITION`]).
    #[error("expected 3 finite numbers within the supported range ±{MAX_POSITION:e}")]
    BadOrigin,
    /// The direction is zero or not finite.
    #[error("expected a finite non-zero vector")]
    BadDirection,
    /// The maximum distance is negative or NaN.
    #[error("expected a number >= 0, got {0}")]
    BadMaxDistance(f32),
}

/// A ray in world space: the points `origin + t * direction` for `0 <= t <= max_distance`.
/// Built by [`Ray::new`], so its direction is unit length and every number is valid.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ray {
    origin: DVec3,
    direction: Vec3,
    max_distance: f32,
}

impl Ray {
    /// A ray from `origin` (world, f64 so rays far from the world origin keep their precision;
    /// each coordinate within ±[`MAX_POSITION`]) along `direction` (world, any finite non-zero length: it is normalized), up to
    /// `max_distance` length units along the unit direction (`None`: unbounded).
    pub fn new(origin: DVec3, direction: Vec3, max_distance: Option<f32>) -> Result<Ray, RayError> {
        if !(origin.is_finite() && origin.abs().max_element() <= MAX_POSITION) {
            return Err(RayError::BadOrigin);
        }
        // Scaled to a largest component of 1 first, so tiny and huge vectors normalize too.
        let largest = direction.abs().max_element();
        if !direction.is_finite() || largest == 0.0 {
            return Err(RayError::BadDirection);
        }
        let direction = (direction / largest).normalize();
        let max_distance = max_distance.unwrap_or(f32::INFINITY);
        if max_distance.is_nan() || max_distance < 0.0 {
            return Err(RayError::BadMaxDistance(max_distance));
        }
        Ok(Ray {
            origin,
            direction,
            max_distance,
        })
    }

    /// Start point, world space.
    pub fn origin(&self) -> DVec3 {
        self.origin
    }

    /// Unit direction, world space.
    pub fn direction(&self) -> Vec3 {
        self.direction
    }

    /// Longest distance along the direction that counts, length units (`f32::INFINITY` when
    /// unbounded).
    pub fn max_distance(&self) -> f32 {
        self.max_distance
    }

    /// The world point at `distance` along the ray (f64).
    pub fn point_at(&self, distance: f32) -> DVec3 {
        self.origin + self.direction.as_dvec3() * f64::from(distance)
    }

    /// This ray in the local frame of a body at `pose`. The origin is moved through
    /// [`Pose::inverse_transform_point`] (translation subtracted in f64, then rotated).
    pub fn to_local(&self, pose: &Pose) -> LocalRay {
        LocalRay {
            origin: pose.inverse_transform_point(self.origin),
            direction: pose.inverse_transform_vector(self.direction),
            max_distance: self.max_distance.min(f32::MAX),
        }
    }
}

/// A ray in a body's local frame (f32), what the per-shape routines take.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LocalRay {
    /// Start point, local frame.
    pub origin: Vec3,
    /// Unit direction, local frame.
    pub direction: Vec3,
    /// Longest distance that counts, length units: finite ([`f32::MAX`] when unbounded, as on
    /// the GPU), so no routine returns an infinite distance.
    pub max_distance: f32,
}

/// Where a ray enters a shape, in the shape's local frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LocalHit {
    /// Distance along the unit direction, length units, `0 <= distance <= max_distance`; 0 when
    /// the ray starts inside (or on) the shape.
    pub distance: f32,
    /// Outward unit normal of the surface at the entry point, local frame; minus the direction
    /// when the ray starts inside.
    pub normal: Vec3,
}

impl LocalHit {
    /// The hit of a ray that starts inside a shape: distance 0, normal against the direction.
    pub fn inside(ray: &LocalRay) -> LocalHit {
        LocalHit {
            distance: 0.0,
            normal: -ray.direction,
        }
    }
}

/// A ray entering a body, world space.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RayHit {
    /// Index of the body.
    pub body: u32,
    /// Distance along the ray's unit direction, length units; 0 when the ray starts inside.
    pub distance: f32,
    /// The entry point, world space (f64).
    pub point: DVec3,
    /// Outward unit normal of the body's surface at the entry point, world space (unit to f32
    /// rounding: renormalized after the body's rotation); minus the ray's direction when the
    /// ray starts inside.
    pub normal: Vec3,
}

impl RayHit {
    /// The world hit of `ray` for `local`, a hit on body `body` at `pose`.
    pub fn from_local(ray: &Ray, body: u32, pose: &Pose, local: LocalHit) -> RayHit {
        RayHit {
            body,
            distance: local.distance,
            point: ray.point_at(local.distance),
            // Renormalized: a rotation a rounding off unit length would leave the normal so.
            normal: pose.transform_vector(local.normal).normalize_or(local.normal),
        }
    }

    /// Hit order: nearer first, then the lower body index.
    pub fn precedes(&self, other: &RayHit) -> bool {
        (self.distance, self.body) < (other.distance, other.body)
    }
}

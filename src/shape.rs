//! The shapes a body can have, all in the body's local frame.

use glam::Vec3;
use thiserror::Error;

use crate::constants::{MAX_POSITION, MAX_SHAPE_SIZE, MIN_SHAPE_SIZE};
use crate::hull::ConvexHull;

/// Why a primitive shape's parameters were rejected.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ShapeError {
    /// A size parameter is not a positive finite number.
    #[error("{name} must be a positive finite number, got {value}")]
    NotPositive {
        /// Which parameter.
        name: &'static str,
        /// Its value.
        value: f32,
    },
    /// A half-space normal is zero or not finite.
    #[error("normal must be a finite non-zero vector")]
    BadNormal,
    /// A half-space offset is not finite or beyond [`MAX_POSITION`].
    #[error("offset must be a finite number within ±{MAX_POSITION:e}, got {0}")]
    BadOffset(f32),
    /// A size parameter is positive but outside the supported range.
    #[error(
        "{name} must be within {MIN_SHAPE_SIZE:e}..={MAX_SHAPE_SIZE:e} (the supported range), got {value:e}"
    )]
    OutOfRange {
        /// Which parameter.
        name: &'static str,
        /// Its value.
        value: f32,
    },
}

/// Checks a size parameter: positive, finite and within the supported range
/// ([`MIN_SHAPE_SIZE`]..=[`MAX_SHAPE_SIZE`]).
fn check_positive(name: &'static str, value: f32) -> Result<f32, ShapeError> {
    if !(value.is_finite() && value > 0.0) {
        Err(ShapeError::NotPositive { name, value })
    } else if !(MIN_SHAPE_SIZE..=MAX_SHAPE_SIZE).contains(&value) {
        Err(ShapeError::OutOfRange { name, value })
    } else {
        Ok(value)
    }
}

/// A box centred on the local origin, axis-aligned in the local frame.
#[derive(Clone, Debug, PartialEq)]
pub struct Cuboid {
    half_extents: Vec3,
    hull: ConvexHull,
}

impl Cuboid {
    /// A box with the given half extents (each positive and finite), in length units.
    pub fn new(half_extents: Vec3) -> Result<Self, ShapeError> {
        check_positive("half_extents.x", half_extents.x)?;
        check_positive("half_extents.y", half_extents.y)?;
        check_positive("half_extents.z", half_extents.z)?;
        Ok(Cuboid {
            half_extents,
            hull: ConvexHull::cuboid(half_extents),
        })
    }

    /// Half extents along local X, Y, Z.
    pub fn half_extents(&self) -> Vec3 {
        self.half_extents
    }

    /// The box as a hull (boxes take the hull routines, on the CPU and on the GPU).
    pub fn hull(&self) -> &ConvexHull {
        &self.hull
    }
}

/// A ball centred on the local origin.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sphere {
    /// Radius, positive, in length units.
    pub radius: f32,
}

impl Sphere {
    /// A sphere of the given positive finite radius.
    pub fn new(radius: f32) -> Result<Self, ShapeError> {
        Ok(Sphere {
            radius: check_positive("radius", radius)?,
        })
    }
}

/// All points within `radius` of the segment from `(0, -half_height, 0)` to
/// `(0, half_height, 0)` on the local Y axis.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Capsule {
    /// Half the length of the core segment, positive, in length units.
    pub half_height: f32,
    /// Radius around the segment, positive, in length units.
    pub radius: f32,
}

impl Capsule {
    /// A capsule with positive finite half height and radius.
    pub fn new(half_height: f32, radius: f32) -> Result<Self, ShapeError> {
        Ok(Capsule {
            half_height: check_positive("half_height", half_height)?,
            radius: check_positive("radius", radius)?,
        })
    }

    /// The core segment's end points, local frame: `[bottom, top]`.
    pub fn segment(&self) -> [Vec3; 2] {
        [
            Vec3::new(0.0, -self.half_height, 0.0),
            Vec3::new(0.0, self.half_height, 0.0),
        ]
    }
}

/// The solid `dot(normal, x) <= offset` (local frame): static ground and walls.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HalfSpace {
    /// Unit outward normal (pointing out of the solid).
    pub normal: Vec3,
    /// Distance of the boundary plane from the local origin along `normal`.
    pub offset: f32,
}

impl HalfSpace {
    /// The solid `dot(normal, x) <= offset` (local frame) for any finite non-zero `normal`:
    /// normal and offset are both divided by the normal's length, so the solid is the one
    /// written (stored with a unit normal). The scaled offset must lie within ±[`MAX_POSITION`].
    pub fn new(normal: Vec3, offset: f32) -> Result<Self, ShapeError> {
        if !offset.is_finite() {
            return Err(ShapeError::BadOffset(offset));
        }
        // Scaled to a largest component of 1 first, so tiny and huge normals normalize too.
        let largest = normal.abs().max_element();
        if !(normal.is_finite() && largest > 0.0) {
            return Err(ShapeError::BadNormal);
        }
        let scaled = normal / largest;
        let length = scaled.length();
        let offset = ((f64::from(offset) / f64::from(largest)) / f64::from(length)) as f32;
        if !(offset.is_finite() && f64::from(offset.abs()) <= MAX_POSITION) {
            return Err(ShapeError::BadOffset(offset));
        }
        Ok(HalfSpace {
            normal: scaled / length,
            offset,
        })
    }
}

/// A body's shape. Boxes carry their hull so every polyhedral pair takes the hull routine.
#[derive(Clone, Debug, PartialEq)]
pub enum Shape {
    /// A convex polyhedron.
    Hull(ConvexHull),
    /// A box.
    Cuboid(Cuboid),
    /// A ball.
    Sphere(Sphere),
    /// A capsule along local Y.
    Capsule(Capsule),
    /// A half-space (infinite; pairs of two half-spaces are not supported).
    HalfSpace(HalfSpace),
}

impl Shape {
    /// The polyhedron of a hull or box shape.
    pub fn as_hull(&self) -> Option<&ConvexHull> {
        match self {
            Shape::Hull(h) => Some(h),
            Shape::Cuboid(c) => Some(c.hull()),
            _ => None,
        }
    }

    /// The shape's size for relative tolerances ([`crate::constants::pair_scale`]), length
    /// units: a hull's or box's largest centroid-to-vertex distance, a sphere's radius, a
    /// capsule's half height plus radius, 0 for a half-space (it has no size).
    pub fn size(&self) -> f32 {
        match self {
            Shape::Hull(h) => h.radius(),
            Shape::Cuboid(c) => c.hull().radius(),
            Shape::Sphere(s) => s.radius,
            Shape::Capsule(c) => c.half_height + c.radius,
            Shape::HalfSpace(_) => 0.0,
        }
    }

    /// Radius of a ball about the local origin that contains the shape
    /// (`f32::INFINITY` for a half-space).
    pub fn bounding_radius(&self) -> f32 {
        match self {
            Shape::Hull(h) => h.centroid().length() + h.radius(),
            Shape::Cuboid(c) => c.half_extents().length(),
            Shape::Sphere(s) => s.radius,
            Shape::Capsule(c) => c.half_height + c.radius,
            Shape::HalfSpace(_) => f32::INFINITY,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_space_is_the_solid_written_whatever_the_normal_length() {
        for (normal, offset) in [
            (Vec3::new(-1.0, 0.0, 1.0), -1.0),
            (Vec3::new(0.0, 3.0, 0.0), 6.0),
            (Vec3::new(1e-20, 2e-20, -2e-20), 3e-20),
            (Vec3::new(1e30, 0.0, 1e30), 1e30),
        ] {
            let h = HalfSpace::new(normal, offset).unwrap();
            assert!((h.normal.length() - 1.0).abs() < 1e-6);
            // A boundary point of the solid as written lies on the stored plane.
            let on_plane = normal * (offset / normal.length_squared().max(f32::MIN_POSITIVE));
            if on_plane.is_finite() && normal.length_squared().is_normal() {
                assert!((h.normal.dot(on_plane) - h.offset).abs() <= 1e-5 * h.offset.abs().max(1.0));
            }
        }
        // The example from the review: dot([-1, 0, 1], x) <= -1 holds at x = (1, 0, 0) exactly.
        let h = HalfSpace::new(Vec3::new(-1.0, 0.0, 1.0), -1.0).unwrap();
        assert!((h.normal.dot(Vec3::X) - h.offset).abs() < 1e-6, "{h:?}");
        assert!(matches!(
            HalfSpace::new(Vec3::ZERO, 0.0),
            Err(ShapeError::BadNormal)
        ));
        assert!(matches!(
            HalfSpace::new(Vec3::Y, 2e12),
            Err(ShapeError::BadOffset(_))
        ));
    }
}

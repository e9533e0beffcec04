//! Rigid poses: a rotation followed by a translation.

use glam::{Quat, Vec3};

/// A rigid transform taking a body's local frame to its parent frame (usually world):
/// `x_parent = rotation * x_local + translation`. `rotation` must be a unit quaternion.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pose {
    /// Position of the local origin in the parent frame, in length units.
    pub translation: Vec3,
    /// Orientation of the local frame in the parent frame (unit quaternion).
    pub rotation: Quat,
}

impl Default for Pose {
    fn default() -> Self {
        Self::IDENTITY
    }
}

impl Pose {
    /// The pose that leaves every point where it is.
    pub const IDENTITY: Pose = Pose {
        translation: Vec3::ZERO,
        rotation: Quat::IDENTITY,
    };

    /// A pose from a translation and a unit rotation.
    pub fn new(translation: Vec3, rotation: Quat) -> Self {
        Self {
            translation,
            rotation,
        }
    }

    /// A pure translation.
    pub fn from_translation(translation: Vec3) -> Self {
        Self::new(translation, Quat::IDENTITY)
    }

    /// Maps a point from the local frame to the parent frame.
    #[inline]
    pub fn transform_point(&self, p: Vec3) -> Vec3 {
        self.rotation * p + self.translation
    }

    /// Rotates a direction from the local frame to the parent frame.
    #[inline]
    pub fn transform_vector(&self, v: Vec3) -> Vec3 {
        self.rotation * v
    }

    /// Maps a point from the parent frame to the local frame.
    #[inline]
    pub fn inverse_transform_point(&self, p: Vec3) -> Vec3 {
        self.rotation.inverse() * (p - self.translation)
    }

    /// Rotates a direction from the parent frame to the local frame.
    #[inline]
    pub fn inverse_transform_vector(&self, v: Vec3) -> Vec3 {
        self.rotation.inverse() * v
    }

    /// The inverse transform (parent frame to local frame).
    pub fn inverse(&self) -> Pose {
        let rotation = self.rotation.inverse();
        Pose::new(rotation * -self.translation, rotation)
    }

    /// `self * other`: apply `other` first, then `self`.
    pub fn mul_pose(&self, other: &Pose) -> Pose {
        Pose::new(
            self.transform_point(other.translation),
            (self.rotation * other.rotation).normalize(),
        )
    }

    /// The pose of `other` expressed in this pose's local frame (`self⁻¹ * other`).
    ///
    /// Pair queries run in body A's frame through this: the translation difference is taken
    /// before rotating, so bodies far from the world origin keep their relative precision.
    pub fn relative_to_self(&self, other: &Pose) -> Pose {
        let inv_rotation = self.rotation.inverse();
        Pose::new(
            inv_rotation * (other.translation - self.translation),
            (inv_rotation * other.rotation).normalize(),
        )
    }
}

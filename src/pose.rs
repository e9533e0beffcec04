//! Rigid transforms: a rotation followed by a translation.
//!
//! Two kinds, by what they place:
//! - [`Pose`]: a body in the world. Its translation is `f64`, so a body a million units from the
//!   origin keeps a resolution of about 1e-10 units (f32 would give 0.06).
//! - [`Isometry`]: one frame relative to another nearby one, in `f32` (B's pose in A's frame,
//!   a hull in a working frame). Pair queries run on these: [`Pose::relative_to_self`] forms the
//!   difference of two world translations in `f64` before anything is rounded to `f32`, so the
//!   relative translation is exact to f32 rounding of its own size, wherever the pair sits.
//!
//! WGSL twins: `relative_pose` in `shaders/common/geometry.wgsl`, `shaders/common/quat.wgsl`.

use glam::{DVec3, Quat, Vec3};

/// A rigid transform taking a body's local frame to the world:
/// `x_world = rotation * x_local + translation`. `rotation` must be a unit quaternion.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pose {
    /// Position of the local origin in the world, in length units (f64: precise far from the
    /// origin).
    pub translation: DVec3,
    /// Orientation of the local frame in the world (unit quaternion).
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
        translation: DVec3::ZERO,
        rotation: Quat::IDENTITY,
    };

    /// A pose from a translation (`Vec3` or `DVec3`, length units) and a unit rotation.
    pub fn new(translation: impl Into<DVec3>, rotation: Quat) -> Self {
        Self {
            translation: translation.into(),
            rotation,
        }
    }

    /// A pure translation.
    pub fn from_translation(translation: impl Into<DVec3>) -> Self {
        Self::new(translation, Quat::IDENTITY)
    }

    /// True when the translation is finite and the rotation finite and of unit length (within
    /// [`crate::constants::ROTATION_UNIT_TOLERANCE`]): what the unchecked pair queries expect.
    pub fn is_valid(&self) -> bool {
        self.translation.is_finite() && is_unit_rotation(self.rotation)
    }

    /// Maps a point from the local frame to the world, in f64.
    #[inline]
    pub fn transform_point(&self, p: Vec3) -> DVec3 {
        (self.rotation * p).as_dvec3() + self.translation
    }

    /// Maps an f64 point from the local frame to the world (rotation in f64).
    #[inline]
    pub fn transform_dpoint(&self, p: DVec3) -> DVec3 {
        self.rotation.as_dquat() * p + self.translation
    }

    /// Rotates a direction from the local frame to the world.
    #[inline]
    pub fn transform_vector(&self, v: Vec3) -> Vec3 {
        self.rotation * v
    }

    /// Maps a world point into the local frame: the translation is subtracted in f64, then the
    /// (now small) difference is rotated in f32.
    #[inline]
    pub fn inverse_transform_point(&self, p: DVec3) -> Vec3 {
        self.rotation.inverse() * (p - self.translation).as_vec3()
    }

    /// Rotates a direction from the world to the local frame.
    #[inline]
    pub fn inverse_transform_vector(&self, v: Vec3) -> Vec3 {
        self.rotation.inverse() * v
    }

    /// The pose of `other` expressed in this pose's local frame (`self⁻¹ * other`), in f32.
    ///
    /// Pair queries run in body A's frame through this: the translation difference is taken in
    /// f64 before rotating, so bodies far from the world origin keep their relative precision.
    pub fn relative_to_self(&self, other: &Pose) -> Isometry {
        let inv_rotation = self.rotation.inverse();
        Isometry::new(
            inv_rotation * (other.translation - self.translation).as_vec3(),
            (inv_rotation * other.rotation).normalize(),
        )
    }

    /// `self * other`: apply `other` first (a pose in this pose's local frame), then `self`.
    pub fn mul_pose(&self, other: &Pose) -> Pose {
        Pose::new(
            self.transform_dpoint(other.translation),
            (self.rotation * other.rotation).normalize(),
        )
    }

    /// This pose moved by `motion` applied in its local frame (`self * motion`).
    pub fn mul_isometry(&self, motion: &Isometry) -> Pose {
        Pose::new(
            self.transform_point(motion.translation),
            (self.rotation * motion.rotation).normalize(),
        )
    }

    /// The translation split into two f32 vectors whose sum is the f64 translation to about
    /// 2⁻⁴⁸ of its size: `hi = f32(t)`, `lo = f32(t - hi)`. The GPU path uploads both and forms
    /// a pair's relative translation as `(hi_b - hi_a) + (lo_b - lo_a)`.
    pub fn split_translation(&self) -> (Vec3, Vec3) {
        split_f64(self.translation)
    }
}

/// An f64 world position split in two f32 vectors, `hi = f32(v)`, `lo = f32(v - hi)`: their sum
/// keeps about 48 bits. GPU kernels subtract `hi` from `hi` and `lo` from `lo` before adding, so
/// the difference of two nearby positions is exact to f32 rounding of its own size.
pub fn split_f64(v: DVec3) -> (Vec3, Vec3) {
    let hi = v.as_vec3();
    let lo = (v - hi.as_dvec3()).as_vec3();
    (hi, lo)
}

/// A rigid transform between two nearby frames, in f32: `x_parent = rotation * x_local +
/// translation`. `rotation` must be a unit quaternion. Used for one shape's pose in another's
/// frame (from [`Pose::relative_to_self`]) and inside the pair queries.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Isometry {
    /// Position of the local origin in the parent frame, in length units.
    pub translation: Vec3,
    /// Orientation of the local frame in the parent frame (unit quaternion).
    pub rotation: Quat,
}

impl Default for Isometry {
    fn default() -> Self {
        Self::IDENTITY
    }
}

impl Isometry {
    /// The transform that leaves every point where it is.
    pub const IDENTITY: Isometry = Isometry {
        translation: Vec3::ZERO,
        rotation: Quat::IDENTITY,
    };

    /// A transform from a translation and a unit rotation.
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

    /// True when the translation is finite and the rotation finite and of unit length (within
    /// [`crate::constants::ROTATION_UNIT_TOLERANCE`]): what the unchecked pair queries expect.
    pub fn is_valid(&self) -> bool {
        self.translation.is_finite() && is_unit_rotation(self.rotation)
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
    pub fn inverse(&self) -> Isometry {
        let rotation = self.rotation.inverse();
        Isometry::new(rotation * -self.translation, rotation)
    }

    /// `self * other`: apply `other` first, then `self`.
    pub fn mul_isometry(&self, other: &Isometry) -> Isometry {
        Isometry::new(
            self.transform_point(other.translation),
            (self.rotation * other.rotation).normalize(),
        )
    }
}

fn is_unit_rotation(q: Quat) -> bool {
    q.is_finite() && (q.length() - 1.0).abs() <= crate::constants::ROTATION_UNIT_TOLERANCE
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_pose_is_precise_far_from_the_origin() {
        let far = DVec3::new(1.0e6, -2.0e6, 3.0e6);
        let a = Pose::new(far, Quat::from_rotation_y(0.3));
        let b = Pose::new(far + DVec3::new(0.123_456_7, 1.0e-4, -0.5), Quat::IDENTITY);
        let b_in_a = a.relative_to_self(&b);
        let expected = Quat::from_rotation_y(-0.3) * Vec3::new(0.123_456_7, 1.0e-4, -0.5);
        assert!(b_in_a.translation.distance(expected) < 1.0e-7, "{b_in_a:?}");
        let back = a.transform_point(b_in_a.translation);
        assert!((back - b.translation).length() < 1.0e-7);
    }

    #[test]
    fn split_translation_sums_back_to_f64() {
        let pose = Pose::from_translation(DVec3::new(123_456.789_012_345, -1.0e12 / 3.0, 0.1));
        let (hi, lo) = pose.split_translation();
        let sum = hi.as_dvec3() + lo.as_dvec3();
        assert!((sum - pose.translation).abs().max_element() <= pose.translation.abs().max_element() * 1e-13);
    }
}

//! Scenes: shapes, bodies that place them, the pairs to test, and the margin; and the checks
//! every backend runs on them before doing any work.
//!
//! - [`json`]: the scene format ([`json::parse_scene_json`] and its writer).
//! - [`validate`]: a batch checked once ([`ValidatedBatch`]), which every backend accepts
//!   without checking again.

pub mod json;
pub mod validate;

use glam::{DVec3, Quat, Vec3};

use crate::constants::MAX_POSITION;
use crate::pose::Pose;
use crate::shape::Shape;

/// Re-exported here, where batch input is checked against it.
pub use crate::constants::ROTATION_UNIT_TOLERANCE;

/// A body: one shape placed in the world.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Body {
    /// Index into the scene's shapes.
    pub shape: u32,
    /// Local-to-world pose of the shape.
    pub pose: Pose,
}

/// Everything a narrowphase call needs. `pairs: None` means "find them with the broadphase".
#[derive(Clone, Debug, PartialEq)]
pub struct Scene {
    /// Shapes, shared by any number of bodies.
    pub shapes: Vec<Shape>,
    /// Bodies.
    pub bodies: Vec<Body>,
    /// Body index pairs `[a, b]` to test; the manifold normal points from `a` to `b`.
    pub pairs: Option<Vec<[u32; 2]>>,
    /// Speculative margin in length units (>= 0): pairs with separation <= margin get a manifold.
    pub margin: f32,
}

/// Bad input, with the place it was found as a JSON-style path (`bodies[3].rotation`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct InputError {
    /// Where: a JSON path such as `pairs[7]` or `shapes[0].hull`.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

impl InputError {
    /// An error at `path`.
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        InputError {
            path: path.into(),
            message: message.into(),
        }
    }
}

/// Checks a pose: finite translation within ±[`MAX_POSITION`] on every axis, finite rotation
/// within [`ROTATION_UNIT_TOLERANCE`] of unit length. Returns the pose with its rotation
/// normalized. `path` names the body (`bodies[3]`).
pub fn check_pose(path: &str, pose: &Pose) -> Result<Pose, InputError> {
    if pose_ok(pose) {
        return Ok(unit_pose(pose));
    }
    let q: Quat = pose.rotation;
    let length = q.length();
    if !pose.translation.is_finite() {
        return Err(InputError::new(
            format!("{path}.position"),
            "expected 3 finite numbers",
        ));
    }
    if pose.translation.abs().max_element() > MAX_POSITION {
        return Err(InputError::new(
            format!("{path}.position"),
            format!(
                "coordinate {:e} is outside the supported range ±{MAX_POSITION:e}",
                pose.translation.abs().max_element()
            ),
        ));
    }
    if !q.is_finite() {
        return Err(InputError::new(
            format!("{path}.rotation"),
            "expected 4 finite numbers",
        ));
    }
    if (length - 1.0).abs() > ROTATION_UNIT_TOLERANCE {
        return Err(InputError::new(
            format!("{path}.rotation"),
            format!("quaternion length {length} is not within {ROTATION_UNIT_TOLERANCE} of 1"),
        ));
    }
    Ok(unit_pose(pose))
}

/// True when `pose` passes [`check_pose`] (without saying why not): every check at once, since
/// a NaN or an infinity fails the comparisons (a non-finite rotation has a non-finite length).
/// Small enough to inline into batch loops; it reads the pose and writes nothing.
#[inline(always)]
pub(crate) fn pose_ok(pose: &Pose) -> bool {
    let length = pose.rotation.length();
    let in_range = pose.translation.abs().cmple(DVec3::splat(MAX_POSITION)).all();
    in_range && (length - 1.0).abs() <= ROTATION_UNIT_TOLERANCE
}

/// `pose` with its rotation divided by its length: the normalization [`check_pose`] applies,
/// for a pose that passed it. Batches keep the caller's poses (checked, not copied) and call
/// it on use, getting the same bits as a checked copy.
#[inline(always)]
pub(crate) fn unit_pose(pose: &Pose) -> Pose {
    Pose::new(pose.translation, pose.rotation / pose.rotation.length())
}

pub use validate::{ValidatedBatch, validate_batch};

/// Convenience for tests and examples: a body of `shape` at `position` with `rotation`.
pub fn body(shape: u32, position: Vec3, rotation: Quat) -> Body {
    Body {
        shape,
        pose: Pose::new(position, rotation),
    }
}

//! Scenes: shapes, bodies that place them, the pairs to test, and the margin; and the checks
//! every backend runs on them before doing any work.

pub mod json;

use glam::{Quat, Vec3};

use crate::constants::{MAX_POSITION, MAX_SHAPE_SIZE};
use crate::pose::Pose;
use crate::shape::Shape;

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

/// Largest allowed deviation of a rotation quaternion's length from 1 before it is rejected
/// (smaller deviations are normalized away).
pub const ROTATION_UNIT_TOLERANCE: f32 = 1.0e-3;

/// Checks a pose: finite translation within ±[`MAX_POSITION`] on every axis, finite rotation
/// within [`ROTATION_UNIT_TOLERANCE`] of unit length. Returns the pose with its rotation
/// normalized. `path` names the body (`bodies[3]`).
pub fn check_pose(path: &str, pose: &Pose) -> Result<Pose, InputError> {
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
    let q: Quat = pose.rotation;
    if !q.is_finite() {
        return Err(InputError::new(
            format!("{path}.rotation"),
            "expected 4 finite numbers",
        ));
    }
    let length = q.length();
    if (length - 1.0).abs() > ROTATION_UNIT_TOLERANCE {
        return Err(InputError::new(
            format!("{path}.rotation"),
            format!("quaternion length {length} is not within {ROTATION_UNIT_TOLERANCE} of 1"),
        ));
    }
    Ok(Pose::new(pose.translation, q / length))
}

/// Checks bodies, pairs and margin against `shapes` before any backend uploads or computes:
/// finite unit poses, existing shape and body indices, no body paired with itself, no pair of
/// two half-spaces, a finite non-negative margin. Returns the bodies with normalized rotations.
pub fn validate_batch(
    shapes: &[Shape],
    bodies: &[Body],
    pairs: &[[u32; 2]],
    margin: f32,
) -> Result<Vec<Body>, InputError> {
    if !margin.is_finite() || margin < 0.0 {
        return Err(InputError::new(
            "margin",
            format!("expected a finite number >= 0, got {margin}"),
        ));
    }
    if margin > MAX_SHAPE_SIZE {
        return Err(InputError::new(
            "margin",
            format!("{margin:e} is outside the supported range 0..={MAX_SHAPE_SIZE:e}"),
        ));
    }
    let mut checked = Vec::with_capacity(bodies.len());
    for (i, body) in bodies.iter().enumerate() {
        if body.shape as usize >= shapes.len() {
            return Err(InputError::new(
                format!("bodies[{i}].shape"),
                format!("shape {} does not exist ({} shapes)", body.shape, shapes.len()),
            ));
        }
        let pose = check_pose(&format!("bodies[{i}]"), &body.pose)?;
        checked.push(Body {
            shape: body.shape,
            pose,
        });
    }
    for (i, &[a, b]) in pairs.iter().enumerate() {
        for body in [a, b] {
            if body as usize >= bodies.len() {
                return Err(InputError::new(
                    format!("pairs[{i}]"),
                    format!("body {body} does not exist"),
                ));
            }
        }
        if a == b {
            return Err(InputError::new(
                format!("pairs[{i}]"),
                format!("body {a} is paired with itself"),
            ));
        }
        let is_half_space =
            |body: u32| matches!(shapes[bodies[body as usize].shape as usize], Shape::HalfSpace(_));
        if is_half_space(a) && is_half_space(b) {
            return Err(InputError::new(
                format!("pairs[{i}]"),
                "two half-spaces cannot be tested against each other",
            ));
        }
    }
    Ok(checked)
}

/// Convenience for tests and examples: a body of `shape` at `position` with `rotation`.
pub fn body(shape: u32, position: Vec3, rotation: Quat) -> Body {
    Body {
        shape,
        pose: Pose::new(position, rotation),
    }
}

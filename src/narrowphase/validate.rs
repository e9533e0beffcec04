//! The checks every narrowphase backend needs before it computes anything, run once per batch.
//!
//! 1. The margin: finite and >= 0.
//! 2. Bodies (in parallel): an existing shape, a finite translation, a finite rotation within
//!    [`crate::scene::ROTATION_UNIT_TOLERANCE`] of unit length, which comes back normalized
//!    ([`check_pose`]).
//! 3. Pairs (in parallel): existing bodies, no body paired with itself, not two half-spaces.
//!
//! The result is a [`ValidatedBatch`]: backends take it and never check again. When a step
//! fails, the error is the first bad entry in input order (a failing parallel pass is followed
//! by a sequential one that finds it), so messages do not depend on thread scheduling.

use std::sync::atomic::{AtomicBool, Ordering};

use rayon::prelude::*;

use crate::scene::{Body, InputError, check_pose};
use crate::shape::Shape;

/// Fewest bodies or pairs a rayon task checks: a check costs a few nanoseconds, so smaller
/// tasks would spend most of their time on scheduling.
const CHECKS_PER_TASK: usize = 4096;

/// A batch whose bodies, pairs and margin passed every check against one shape list: the input
/// of [`crate::CpuNarrowphase::collide_validated`] and
/// [`crate::GpuNarrowphase::collide_validated`]. Validate against the narrowphase's own shapes
/// (`ValidatedBatch::new(narrowphase.shapes(), ..)`); a backend given a batch validated against
/// another shape list accepts it only when that list has the same length and half-spaces at the
/// same indices (everything the checks depend on), else it is an [`InputError`] at `shapes`.
#[derive(Clone, Debug)]
pub struct ValidatedBatch<'a> {
    shapes: &'a [Shape],
    bodies: Vec<Body>,
    pairs: &'a [[u32; 2]],
    margin: f32,
}

impl<'a> ValidatedBatch<'a> {
    /// Checks `bodies`, `pairs` and `margin` (length units) against `shapes`, on all threads.
    /// Errors name the first bad entry (`bodies[3].rotation`, `pairs[7]`, `margin`).
    pub fn new(
        shapes: &'a [Shape],
        bodies: &[Body],
        pairs: &'a [[u32; 2]],
        margin: f32,
    ) -> Result<Self, InputError> {
        Self::check(shapes, bodies, pairs, margin, true)
    }

    /// [`Self::new`] on the calling thread only (for single-threaded baselines).
    pub fn new_on_this_thread(
        shapes: &'a [Shape],
        bodies: &[Body],
        pairs: &'a [[u32; 2]],
        margin: f32,
    ) -> Result<Self, InputError> {
        Self::check(shapes, bodies, pairs, margin, false)
    }

    fn check(
        shapes: &'a [Shape],
        bodies: &[Body],
        pairs: &'a [[u32; 2]],
        margin: f32,
        parallel: bool,
    ) -> Result<Self, InputError> {
        // Step 1.
        if !margin.is_finite() || margin < 0.0 {
            return Err(InputError::new(
                "margin",
                format!("expected a finite number >= 0, got {margin}"),
            ));
        }
        // Step 2: one indexed pass writing straight into the output (a failing body is copied
        // unchecked and flagged; the sequential pass below then names the first one).
        let failed = AtomicBool::new(false);
        let check_body = |(i, body): (usize, &Body)| {
            check_body(shapes, i, body).unwrap_or_else(|_| {
                failed.store(true, Ordering::Relaxed);
                *body
            })
        };
        let mut checked = Vec::with_capacity(bodies.len());
        if parallel {
            checked.par_extend(
                bodies
                    .par_iter()
                    .with_min_len(CHECKS_PER_TASK)
                    .enumerate()
                    .map(check_body),
            );
        } else {
            checked.extend(bodies.iter().enumerate().map(check_body));
        }
        if failed.into_inner() {
            let first = bodies
                .iter()
                .enumerate()
                .map(|(i, body)| check_body_result(shapes, i, body));
            return Err(first_error(first));
        }
        let bodies = checked;
        // Step 3: the half-space rule needs each body's shape only when a half-space exists.
        let half_spaces: Vec<bool> = shapes.iter().map(|s| matches!(s, Shape::HalfSpace(_))).collect();
        let any_half_space = half_spaces.contains(&true);
        let check_pair = |(i, pair): (usize, &[u32; 2])| {
            check_pair(any_half_space.then_some(&half_spaces[..]), &bodies, i, *pair)
        };
        let pairs_ok = if parallel {
            pairs
                .par_iter()
                .with_min_len(CHECKS_PER_TASK)
                .enumerate()
                .try_for_each(check_pair)
        } else {
            pairs.iter().enumerate().try_for_each(check_pair)
        };
        pairs_ok.map_err(|_| first_error(pairs.iter().enumerate().map(check_pair)))?;
        Ok(ValidatedBatch {
            shapes,
            bodies,
            pairs,
            margin,
        })
    }

    /// The shapes the batch was checked against.
    pub fn shapes(&self) -> &'a [Shape] {
        self.shapes
    }

    /// The bodies, rotations normalized.
    pub fn bodies(&self) -> &[Body] {
        &self.bodies
    }

    /// The pairs `[a, b]` (body indices; normals point from `a` to `b`).
    pub fn pairs(&self) -> &'a [[u32; 2]] {
        self.pairs
    }

    /// The speculative margin, length units (finite, >= 0).
    pub fn margin(&self) -> f32 {
        self.margin
    }

    /// The checked bodies, rotations normalized.
    pub fn into_bodies(self) -> Vec<Body> {
        self.bodies
    }

    /// `Ok` when a backend over `shapes` may use this batch: the same list, or one with the same
    /// length and half-spaces at the same indices (all that validation depended on).
    pub fn check_shapes(&self, shapes: &[Shape]) -> Result<(), InputError> {
        let same_list = std::ptr::eq(self.shapes, shapes);
        let is_half_space = |s: &Shape| matches!(s, Shape::HalfSpace(_));
        let same_checks = self.shapes.len() == shapes.len()
            && self
                .shapes
                .iter()
                .zip(shapes)
                .all(|(a, b)| is_half_space(a) == is_half_space(b));
        if same_list || same_checks {
            Ok(())
        } else {
            Err(InputError::new(
                "shapes",
                format!(
                    "the batch was validated against another shape list ({} shapes) than this \
                     narrowphase's ({} shapes)",
                    self.shapes.len(),
                    shapes.len()
                ),
            ))
        }
    }
}

/// Checks bodies, pairs and margin against `shapes` and returns the bodies with normalized
/// rotations: [`ValidatedBatch::new`] for callers that only need the bodies.
pub fn validate_batch(
    shapes: &[Shape],
    bodies: &[Body],
    pairs: &[[u32; 2]],
    margin: f32,
) -> Result<Vec<Body>, InputError> {
    ValidatedBatch::new(shapes, bodies, pairs, margin).map(ValidatedBatch::into_bodies)
}

/// The first error of a sequence of checks (called only once a check is known to fail).
fn first_error<T>(mut checks: impl Iterator<Item = Result<T, InputError>>) -> InputError {
    checks
        .find_map(Result::err)
        .unwrap_or_else(|| InputError::new("", "a check failed, then passed when repeated"))
}

/// [`check_body`] as an iterator item.
fn check_body_result(shapes: &[Shape], i: usize, body: &Body) -> Result<Body, InputError> {
    check_body(shapes, i, body)
}

/// Step 2 for body `i`: the body with its rotation normalized. Builds no string unless it fails.
fn check_body(shapes: &[Shape], i: usize, body: &Body) -> Result<Body, InputError> {
    if body.shape as usize >= shapes.len() {
        return Err(InputError::new(
            format!("bodies[{i}].shape"),
            format!("shape {} does not exist ({} shapes)", body.shape, shapes.len()),
        ));
    }
    // `check_pose` appends `.position` / `.rotation` to the path it is given.
    let pose = check_pose("", &body.pose)
        .map_err(|e| InputError::new(format!("bodies[{i}]{}", e.path), e.message))?;
    Ok(Body {
        shape: body.shape,
        pose,
    })
}

/// Step 3 for pair `i`; `bodies` are checked (their shape indices exist). `half_spaces` (per
/// shape) is `None` when no shape is a half-space.
fn check_pair(
    half_spaces: Option<&[bool]>,
    bodies: &[Body],
    i: usize,
    [a, b]: [u32; 2],
) -> Result<(), InputError> {
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
    let Some(half_spaces) = half_spaces else {
        return Ok(());
    };
    let is_half_space = |body: u32| half_spaces[bodies[body as usize].shape as usize];
    if is_half_space(a) && is_half_space(b) {
        return Err(InputError::new(
            format!("pairs[{i}]"),
            "two half-spaces cannot be tested against each other",
        ));
    }
    Ok(())
}

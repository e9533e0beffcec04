//! The checks every narrowphase backend needs before it computes anything, run once per batch.
//!
//! 1. The margin: finite, >= 0 and at most [`MAX_SHAPE_SIZE`] (the supported range).
//! 2. Bodies (in parallel): an existing shape, a finite translation, a finite rotation within
//!    [`crate::scene::ROTATION_UNIT_TOLERANCE`] of unit length ([`check_pose`]). The pass only
//!    reads: a batch keeps the caller's bodies and normalizes a rotation where a body is used
//!    ([`ValidatedBatch::body`], `unit_pose`), the same bits [`check_pose`] returns.
//! 3. Pairs (in parallel): existing bodies, no body paired with itself, not two static shapes
//!    (two half-spaces, two triangle meshes, a mesh and a half-space).
//! 4. Backends compute each pair in canonical order, lower body index first, and swap the
//!    result of a pair given the other way round (see [`ValidatedBatch`]).
//!
//! The result is a [`ValidatedBatch`]: backends take it and never check again. When a step
//! fails, the error is the first bad entry in input order (a failing parallel pass is followed
//! by a sequential one that finds it), so messages do not depend on thread scheduling.
//!
//! The GPU backend runs the same steps, with this file's per-entry checks and first-error
//! passes, while it writes the batch into staging memory (`narrowphase::gpu::staged`).

use rayon::prelude::*;

use crate::constants::MAX_SHAPE_SIZE;
use crate::manifold::Manifold;
use crate::scene::{Body, InputError, check_pose, pose_ok, unit_pose};
use crate::shape::Shape;

/// Fewest bodies or pairs a rayon task checks: a check costs a few nanoseconds (a body about 90
/// instructions), so much smaller tasks would spend most of their time on scheduling. Rayon
/// splits a range only into tasks of at least this many, and runs an unsplit range on the
/// calling thread (not a pool thread): at 4096 the bodies of a 10k-pair batch (about 8k) were
/// checked on one thread, 4% of a box batch's work left serial.
pub(crate) const CHECKS_PER_TASK: usize = 1024;

/// A batch whose bodies, pairs and margin passed every check against one shape list: the input
/// of [`crate::CpuNarrowphase::collide_validated`] and
/// [`crate::GpuNarrowphase::collide_validated`]. Validate against the narrowphase's own shapes
/// (`ValidatedBatch::new(narrowphase.shapes(), ..)`); a backend given a batch validated against
/// another shape list accepts it only when that list has the same length and half-spaces and
/// triangle meshes at the same indices (everything the checks depend on), else it
/// is an [`InputError`] at `shapes`.
///
/// Pairs are computed in canonical order, the lower body index first ([`Self::pair`]): every
/// backend computes `[b, a]` for a pair given as `[a, b]` with `a > b` and returns that
/// manifold [`Manifold::swapped`], so the order of a pair never changes its verdict, also
/// within rounding of the margin.
///
/// The bodies are the caller's, borrowed and checked: their rotations are within
/// [`crate::scene::ROTATION_UNIT_TOLERANCE`] of unit length but not normalized
/// ([`Self::given_bodies`]); [`Self::body`] gives a body with its rotation normalized, the pose
/// every backend computes with.
#[derive(Clone, Debug)]
pub struct ValidatedBatch<'a> {
    shapes: &'a [Shape],
    /// The bodies as given (checked).
    bodies: &'a [Body],
    /// The pairs as given.
    given: &'a [[u32; 2]],
    margin: f32,
    /// Validated on all threads ([`Self::new`]) or on the calling one only (pairs added by
    /// [`Self::with_pairs`] are checked the same way).
    parallel: bool,
}

impl<'a> ValidatedBatch<'a> {
    /// Checks `bodies`, `pairs` and `margin` (length units) against `shapes`, on all threads.
    /// Errors name the first bad entry (`bodies[3].rotation`, `pairs[7]`, `margin`).
    pub fn new(
        shapes: &'a [Shape],
        bodies: &'a [Body],
        pairs: &'a [[u32; 2]],
        margin: f32,
    ) -> Result<Self, InputError> {
        Self::check(shapes, bodies, pairs, margin, true)
    }

    /// [`Self::new`] on the calling thread only (for single-threaded baselines).
    pub fn new_on_this_thread(
        shapes: &'a [Shape],
        bodies: &'a [Body],
        pairs: &'a [[u32; 2]],
        margin: f32,
    ) -> Result<Self, InputError> {
        Self::check(shapes, bodies, pairs, margin, false)
    }

    /// The same bodies and margin (not checked again) with other `pairs`, which get step 3:
    /// for pairs found from the checked bodies, such as the broadphase's over
    /// [`Self::normalized_bodies`] when a scene lists none. Errors name the first bad pair (`pairs[7]`).
    pub fn with_pairs<'b>(self, pairs: &'b [[u32; 2]]) -> Result<ValidatedBatch<'b>, InputError>
    where
        'a: 'b,
    {
        check_pairs(self.shapes, self.bodies, pairs, self.parallel)?;
        Ok(ValidatedBatch { given: pairs, ..self })
    }

    fn check(
        shapes: &'a [Shape],
        bodies: &'a [Body],
        pairs: &'a [[u32; 2]],
        margin: f32,
        parallel: bool,
    ) -> Result<Self, InputError> {
        check_margin(margin)?;
        // Step 2: a read-only pass; when a body fails, the sequential pass of
        // `first_body_error` names the first one.
        let shape_count = shapes.len();
        let body_ok = |body: &Body| body_ok(shape_count, body);
        let bodies_ok = if parallel {
            bodies.par_iter().with_min_len(CHECKS_PER_TASK).all(body_ok)
        } else {
            bodies.iter().all(body_ok)
        };
        if !bodies_ok {
            return Err(first_body_error(shapes, bodies));
        }
        check_pairs(shapes, bodies, pairs, parallel)?;
        Ok(ValidatedBatch {
            shapes,
            bodies,
            given: pairs,
            margin,
            parallel,
        })
    }

    /// The shapes the batch was checked against.
    pub fn shapes(&self) -> &'a [Shape] {
        self.shapes
    }

    /// The bodies as given: checked, rotations within
    /// [`crate::scene::ROTATION_UNIT_TOLERANCE`] of unit length but not normalized (see
    /// [`Self::body`]).
    pub fn given_bodies(&self) -> &'a [Body] {
        self.bodies
    }

    /// Body `index` (below `given_bodies().len()`) with its rotation normalized: the pose the
    /// backends compute with, the same bits [`check_pose`] returns.
    #[inline]
    pub fn body(&self, index: usize) -> Body {
        normalized(&self.bodies[index])
    }

    /// Every body with its rotation normalized ([`Self::body`]), in a new vector.
    pub fn normalized_bodies(&self) -> Vec<Body> {
        self.bodies.iter().map(normalized).collect()
    }

    /// Pair `index` (below `given_pairs().len()`) in canonical order, `[min, max]` of the given
    /// pair's body indices: what the backends compute, normal from the first to the second.
    #[inline]
    pub fn pair(&self, index: usize) -> [u32; 2] {
        canonical(self.given[index])
    }

    /// The pairs as given (normals of the returned manifolds point from `a` to `b`).
    pub fn given_pairs(&self) -> &'a [[u32; 2]] {
        self.given
    }

    /// The speculative margin, length units (finite, >= 0).
    pub fn margin(&self) -> f32 {
        self.margin
    }

    /// `Ok` when a backend over `shapes` may use this batch: the same list, or one with the same
    /// length and half-spaces and triangle meshes at the same indices (all that
    /// validation depended on).
    pub fn check_shapes(&self, shapes: &[Shape]) -> Result<(), InputError> {
        let same_list = std::ptr::eq(self.shapes, shapes);
        let same_checks = self.shapes.len() == shapes.len()
            && self
                .shapes
                .iter()
                .zip(shapes)
                .all(|(a, b)| RuleKind::of(a) == RuleKind::of(b));
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

/// Step 1: the margin (length units) is finite, >= 0 and at most [`MAX_SHAPE_SIZE`].
pub(crate) fn check_margin(margin: f32) -> Result<(), InputError> {
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
    Ok(())
}

/// Step 2 for one body, the fast form every batch pass inlines: true when its shape index is
/// below `shape_count` and its pose passes [`check_pose`] ([`first_body_error`] then names the
/// problem of a body that fails).
#[inline(always)]
pub(crate) fn body_ok(shape_count: usize, body: &Body) -> bool {
    (body.shape as usize) < shape_count && pose_ok(&body.pose)
}

/// A checked `body` with its rotation normalized ([`unit_pose`]).
#[inline(always)]
pub(crate) fn normalized(body: &Body) -> Body {
    Body {
        shape: body.shape,
        pose: unit_pose(&body.pose),
    }
}

/// Step 2's error once a fast pass found a bad body: the first bad one in input order.
pub(crate) fn first_body_error(shapes: &[Shape], bodies: &[Body]) -> InputError {
    let checks = bodies
        .iter()
        .enumerate()
        .map(|(i, body)| check_body(shapes, i, body));
    first_error(checks)
}

/// Step 3 for `pairs` over checked `bodies`: the first bad pair's error, if any.
fn check_pairs(
    shapes: &[Shape],
    bodies: &[Body],
    pairs: &[[u32; 2]],
    parallel: bool,
) -> Result<(), InputError> {
    let rule = PairRule::new(shapes, bodies);
    let pair_ok = |&pair: &[u32; 2]| rule.is_ok(pair);
    let pairs_ok = if parallel {
        pairs.par_iter().with_min_len(CHECKS_PER_TASK).all(pair_ok)
    } else {
        pairs.iter().all(pair_ok)
    };
    if pairs_ok {
        Ok(())
    } else {
        Err(rule.first_error(pairs))
    }
}

/// Step 4 for one pair: `[min, max]` of its body indices (a pair `[a, b]` with `a > b` is
/// computed as `[b, a]`, its manifold then [`Manifold::swapped`]).
#[inline(always)]
pub(crate) fn canonical([a, b]: [u32; 2]) -> [u32; 2] {
    [a.min(b), a.max(b)]
}

/// Step 4's other half for one pair: turns `result`, computed for the canonical order of
/// `given` (see [`canonical`]), into the result for `given`: a manifold of a pair given with
/// its higher body index first is [`Manifold::swap`]ped, or, for a pair with a triangle mesh
/// (`mesh_pair`, [`is_mesh_pair`]), whose ids name the same features in either order,
/// [`Manifold::swap_keeping_ids`].
#[inline(always)]
pub(crate) fn restore_pair_order([a, b]: [u32; 2], mesh_pair: bool, result: &mut Option<Manifold>) {
    if a > b
        && let Some(manifold) = result
    {
        swap_pair(manifold, mesh_pair);
    }
}

/// Exchanges A and B of a pair's manifold: [`Manifold::swap`], or
/// [`Manifold::swap_keeping_ids`] for a `mesh_pair`.
#[inline(always)]
pub(crate) fn swap_pair(manifold: &mut Manifold, mesh_pair: bool) {
    if mesh_pair {
        manifold.swap_keeping_ids();
    } else {
        manifold.swap();
    }
}

/// True when either shape is a triangle mesh: the pair's ids are
/// [`crate::trimesh::mesh_feature_id`]s whichever body comes first.
#[inline(always)]
pub(crate) fn is_mesh_pair(a: &Shape, b: &Shape) -> bool {
    matches!(a, Shape::TriMesh(_)) || matches!(b, Shape::TriMesh(_))
}

/// True when either shape is a triangle mesh or a compound: a pair the GPU's compound stage or
/// mesh pass computes, or leaves to the host's CPU routine (never the clip kernel's).
#[inline(always)]
pub(crate) fn is_host_pair(a: &Shape, b: &Shape) -> bool {
    let host = |s: &Shape| matches!(s, Shape::TriMesh(_) | Shape::Compound(_));
    host(a) || host(b)
}

/// Checks bodies, pairs and margin against `shapes` and returns the bodies with normalized
/// rotations: [`ValidatedBatch::new`] for callers that only need the bodies.
pub fn validate_batch(
    shapes: &[Shape],
    bodies: &[Body],
    pairs: &[[u32; 2]],
    margin: f32,
) -> Result<Vec<Body>, InputError> {
    ValidatedBatch::new(shapes, bodies, pairs, margin).map(|batch| batch.normalized_bodies())
}

/// The first error of a sequence of checks (called only once a check is known to fail).
fn first_error<T>(mut checks: impl Iterator<Item = Result<T, InputError>>) -> InputError {
    checks.find_map(Result::err).unwrap_or_else(inconsistent_check)
}

/// The error for a check that failed in the fast pass and passed in the sequential one (the
/// checks are pure, so this does not happen; it is an error rather than a panic all the same).
fn inconsistent_check() -> InputError {
    InputError::new("", "a check failed, then passed when repeated")
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

/// What step 3 reads of a shape: two static shapes never pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RuleKind {
    /// A body that moves (convex or a compound).
    Moving,
    HalfSpace,
    TriMesh,
}

impl RuleKind {
    #[inline(always)]
    fn of(shape: &Shape) -> RuleKind {
        match shape {
            Shape::HalfSpace(_) => RuleKind::HalfSpace,
            Shape::TriMesh(_) => RuleKind::TriMesh,
            _ => RuleKind::Moving,
        }
    }
}

/// Step 3 over a list of bodies that passed step 2 (their shape indices exist; their poses need
/// not be normalized, the rule reads only shape indices).
pub(crate) struct PairRule<'b> {
    bodies: &'b [Body],
    /// The shapes, when one of them is static, a half-space or a triangle mesh (else the rule
    /// reads no body).
    statics: Option<&'b [Shape]>,
}

impl<'b> PairRule<'b> {
    /// The rule for pairs of `bodies` (checked against `shapes`).
    pub(crate) fn new(shapes: &'b [Shape], bodies: &'b [Body]) -> Self {
        let any = shapes.iter().any(Shape::is_static);
        PairRule {
            bodies,
            statics: any.then_some(shapes),
        }
    }

    /// True when `pair` passes step 3 (the fast form every batch pass inlines).
    #[inline(always)]
    pub(crate) fn is_ok(&self, pair: [u32; 2]) -> bool {
        self.problem(pair).is_none()
    }

    /// Step 3's error once a fast pass found a bad pair: the first bad one of `pairs` in input
    /// order.
    pub(crate) fn first_error(&self, pairs: &[[u32; 2]]) -> InputError {
        let first = pairs
            .iter()
            .enumerate()
            .find_map(|(i, &pair)| self.problem(pair).map(|problem| problem.error(i)));
        first.unwrap_or_else(inconsistent_check)
    }

    /// What is wrong with one pair, if anything.
    #[inline(always)]
    fn problem(&self, [a, b]: [u32; 2]) -> Option<PairProblem> {
        for body in [a, b] {
            if body as usize >= self.bodies.len() {
                return Some(PairProblem::MissingBody(body));
            }
        }
        if a == b {
            return Some(PairProblem::SelfPair(a));
        }
        let shapes = self.statics?;
        let shape = |body: u32| &shapes[self.bodies[body as usize].shape as usize];
        kind_problem(shape(a), shape(b))
    }
}

/// Step 3's rule on the two shapes of a pair: two static shapes.
#[inline(always)]
fn kind_problem(a: &Shape, b: &Shape) -> Option<PairProblem> {
    match (RuleKind::of(a), RuleKind::of(b)) {
        (RuleKind::HalfSpace, RuleKind::HalfSpace) => Some(PairProblem::TwoHalfSpaces),
        (RuleKind::TriMesh, RuleKind::TriMesh) => Some(PairProblem::TwoMeshes),
        (RuleKind::TriMesh, RuleKind::HalfSpace) | (RuleKind::HalfSpace, RuleKind::TriMesh) => {
            Some(PairProblem::MeshAndHalfSpace)
        }
        _ => None,
    }
}

/// True when the door refuses every pair of shapes `a` and `b` (two static shapes): the
/// broadphases never list such pairs.
#[inline(always)]
pub(crate) fn never_paired(a: &Shape, b: &Shape) -> bool {
    kind_problem(a, b).is_some()
}

/// What is wrong with a pair (step 3).
enum PairProblem {
    /// This body index does not exist.
    MissingBody(u32),
    /// The body is paired with itself.
    SelfPair(u32),
    /// Both bodies are half-spaces.
    TwoHalfSpaces,
    /// Both bodies are triangle meshes.
    TwoMeshes,
    /// A triangle mesh and a half-space.
    MeshAndHalfSpace,
}

impl PairProblem {
    /// The error for pair `i`.
    fn error(&self, i: usize) -> InputError {
        let path = format!("pairs[{i}]");
        match self {
            PairProblem::MissingBody(body) => InputError::new(path, format!("body {body} does not exist")),
            PairProblem::SelfPair(body) => {
                InputError::new(path, format!("body {body} is paired with itself"))
            }
            PairProblem::TwoHalfSpaces => {
                InputError::new(path, "two half-spaces cannot be tested against each other")
            }
            PairProblem::TwoMeshes => InputError::new(
                path,
                "two triangle meshes cannot be tested against each other (meshes are static)",
            ),
            PairProblem::MeshAndHalfSpace => InputError::new(
                path,
                "a triangle mesh and a half-space cannot be tested against each other (both are static)",
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use glam::{Quat, Vec3, Vec4};

    use super::*;
    use crate::pose::Pose;
    use crate::shape::{HalfSpace, Sphere};

    fn shapes() -> Vec<Shape> {
        vec![
            Shape::Sphere(Sphere::new(1.0).unwrap()),
            Shape::HalfSpace(HalfSpace::new(Vec3::Y, 0.0).unwrap()),
        ]
    }

    /// Many bodies (enough for several rayon tasks) on a line, sphere shapes.
    fn bodies(count: usize) -> Vec<Body> {
        (0..count)
            .map(|i| Body {
                shape: 0,
                pose: Pose::new(Vec3::new(i as f32, 0.0, 0.0), Quat::IDENTITY),
            })
            .collect()
    }

    #[test]
    fn the_first_bad_body_in_input_order_is_named_on_every_path() {
        let shapes = shapes();
        let mut bodies = bodies(50_000);
        bodies[40_000].pose.rotation = Quat::from_xyzw(0.0, 0.0, 0.0, 2.0);
        bodies[12_345].pose.translation.x = f64::NAN;
        bodies[30_000].shape = 7;
        for batch in [
            ValidatedBatch::new(&shapes, &bodies, &[], 0.0),
            ValidatedBatch::new_on_this_thread(&shapes, &bodies, &[], 0.0),
        ] {
            let error = batch.unwrap_err();
            assert_eq!(error.path, "bodies[12345].position", "{error}");
        }
        bodies[12_345].pose.translation.x = 0.0;
        let error = ValidatedBatch::new(&shapes, &bodies, &[], 0.0).unwrap_err();
        assert_eq!(error.path, "bodies[30000].shape", "{error}");
    }

    #[test]
    fn the_first_bad_pair_in_input_order_is_named_and_rotations_come_back_normalized() {
        let shapes = shapes();
        let mut bodies = bodies(1000);
        bodies[10].shape = 1;
        bodies[20].shape = 1;
        bodies[3].pose.rotation = Quat::from_xyzw(0.0, 0.0, 0.0, 1.0005);
        let mut pairs: Vec<[u32; 2]> = (0..40_000).map(|i| [i % 999, i % 999 + 1]).collect();
        let batch = ValidatedBatch::new(&shapes, &bodies, &pairs, 0.0).unwrap();
        assert_eq!(batch.body(3).pose.rotation, Quat::IDENTITY);
        assert_eq!(batch.given_bodies()[3], bodies[3]);
        pairs[35_000] = [5, 5];
        pairs[20_000] = [10, 20];
        pairs[39_000] = [0, 1000];
        let error = ValidatedBatch::new(&shapes, &bodies, &pairs, 0.0).unwrap_err();
        assert_eq!(
            error.to_string(),
            "pairs[20000]: two half-spaces cannot be tested against each other"
        );
        pairs[20_000] = [10, 3];
        let error = ValidatedBatch::new_on_this_thread(&shapes, &bodies, &pairs, 0.0).unwrap_err();
        assert_eq!(error.to_string(), "pairs[35000]: body 5 is paired with itself");
    }

    #[test]
    fn pairs_added_to_a_checked_batch_are_checked_alone() {
        let shapes = shapes();
        let mut bodies = bodies(100);
        bodies[7].shape = 1;
        bodies[9].shape = 1;
        let checked = ValidatedBatch::new(&shapes, &bodies, &[], 0.5).unwrap();
        let error = checked.clone().with_pairs(&[[0, 1], [9, 7], [3, 3]]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "pairs[1]: two half-spaces cannot be tested against each other"
        );
        let given = [[2, 1], [1, 3]];
        let batch = checked.with_pairs(&given).unwrap();
        assert_eq!([batch.pair(0), batch.pair(1)], [[1, 2], [1, 3]]);
        assert_eq!(batch.given_pairs(), given);
        assert_eq!(batch.margin(), 0.5);
        assert_eq!(batch.given_bodies().len(), 100);
    }

    #[test]
    fn rotations_normalized_on_use_are_the_checked_bits() {
        // Lengths across the accepted range, in steps that hit many roundings.
        let tolerance = 0.9 * crate::scene::ROTATION_UNIT_TOLERANCE;
        for i in 0..2000 {
            let scale = 1.0 - tolerance + i as f32 * (tolerance / 1000.0);
            let axis = Vec3::new(1.0, i as f32 * 0.37, -0.5).normalize();
            let rotation = Quat::from_axis_angle(axis, i as f32 * 0.01);
            let body = Body {
                shape: 0,
                pose: Pose::new(
                    Vec3::new(i as f32, 1.0, -2.0),
                    Quat::from_vec4(Vec4::from(rotation) * scale),
                ),
            };
            assert!(body_ok(1, &body), "within the tolerance");
            let on_use = normalized(&body);
            let checked = check_body(&shapes(), 0, &body).unwrap();
            assert_eq!(
                checked.pose.rotation.to_array().map(f32::to_bits),
                on_use.pose.rotation.to_array().map(f32::to_bits)
            );
            assert_eq!(checked, on_use);
        }
    }

    #[test]
    fn a_batch_is_accepted_only_by_backends_whose_shapes_validate_the_same() {
        let shapes = shapes();
        let bodies = bodies(3);
        let batch = ValidatedBatch::new(&shapes, &bodies, &[[0, 1]], 0.0).unwrap();
        assert!(batch.check_shapes(&shapes).is_ok());
        let mut same_kinds = shapes.clone();
        same_kinds[0] = Shape::Sphere(Sphere::new(2.0).unwrap());
        assert!(batch.check_shapes(&same_kinds).is_ok());
        let error = batch.check_shapes(&shapes[..1]).unwrap_err();
        assert_eq!(error.path, "shapes");
        let swapped = vec![shapes[1].clone(), shapes[0].clone()];
        assert!(batch.check_shapes(&swapped).is_err());
    }
}

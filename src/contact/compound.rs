//! Pairs with a compound body: a compound against a convex shape or a half-space (either order)
//! and two compounds, one manifold per body pair. Computed in A's frame:
//!
//! 1. B's pose in A's frame; each of B's parts' boxes there (a single shape's tight box, a
//!    compound child's local box rotated: looser, cheaper), grown by the margin; A's children
//!    whose boxes overlap it (the midphase). The child pairs are sorted, so ties go to the lowest
//!    pair whatever order the midphase found them in.
//! 2. Each child pair through [`collide_shapes`], both children posed in A's frame.
//! 3. Merged (`contact::merge`): the deepest child pair's normal, the points of the child pairs
//!    whose normals lie within [`COMPOUND_MERGE_DEGREES`] of it (a sphere body: the deepest
//!    pair's point alone), reduced to four; ids [`compound_feature_id`].
//! 4. Normal and points to the world by A's pose.

use glam::Mat3;

use crate::constants::{COMPOUND_AABB_PADDING, COMPOUND_MERGE_DEGREES, CONTACT_REDUCTION_TOLERANCE};
use crate::contact::collide_shapes;
use crate::contact::merge::{SubManifold, merge_sub_manifolds};
use crate::manifold::{ContactPoint, Manifold};
use crate::pose::{Isometry, Pose};
use crate::shape::compound::{Compound, child_pose, compound_feature_id};
use crate::shape::{Shape, world_aabb};

/// Buffers the compound routines reuse from call to call (one per thread): the child pairs of
/// the midphase, their contacts and points. They grow to the largest pair seen and stay.
#[derive(Clone, Debug, Default)]
pub struct CompoundScratch {
    pairs: Vec<[u32; 2]>,
    subs: Vec<SubManifold>,
    points: Vec<ContactPoint>,
    merged: Vec<ContactPoint>,
}

/// The manifold between `compound` (body A) at `pose_a` and the convex shape or half-space
/// `shape` (body B) at `pose_b` (world poses), or `None` when they are farther apart than
/// `margin` (length units). Normal from A toward B, world space; ids [`compound_feature_id`]
/// (B's child 0). Unchecked as [`collide_shapes`].
pub fn collide_compound_shape(
    compound: &Compound,
    pose_a: &Pose,
    shape: &Shape,
    pose_b: &Pose,
    margin: f32,
    scratch: &mut CompoundScratch,
) -> Option<Manifold> {
    collide_bodies(
        Body::Compound(compound),
        pose_a,
        Body::Shape(shape),
        pose_b,
        margin,
        scratch,
    )
}

/// [`collide_compound_shape`] with the compound as body B: normal from `shape` toward
/// `compound`, ids with A's child 0.
pub fn collide_shape_compound(
    shape: &Shape,
    pose_a: &Pose,
    compound: &Compound,
    pose_b: &Pose,
    margin: f32,
    scratch: &mut CompoundScratch,
) -> Option<Manifold> {
    collide_bodies(
        Body::Shape(shape),
        pose_a,
        Body::Compound(compound),
        pose_b,
        margin,
        scratch,
    )
}

/// The manifold between compounds `a` at `pose_a` and `b` at `pose_b` (world poses), or `None`
/// when farther apart than `margin`; as [`collide_compound_shape`], ids naming both children.
pub fn collide_compound_compound(
    a: &Compound,
    pose_a: &Pose,
    b: &Compound,
    pose_b: &Pose,
    margin: f32,
    scratch: &mut CompoundScratch,
) -> Option<Manifold> {
    collide_bodies(
        Body::Compound(a),
        pose_a,
        Body::Compound(b),
        pose_b,
        margin,
        scratch,
    )
}

/// One side of a pair: a compound, or a single shape standing in as a compound's child 0 at the
/// body's origin.
#[derive(Clone, Copy)]
enum Body<'a> {
    Compound(&'a Compound),
    Shape(&'a Shape),
}

impl Body<'_> {
    fn len(self) -> usize {
        match self {
            Body::Compound(c) => c.children().len(),
            Body::Shape(_) => 1,
        }
    }

    /// Part `i`'s shape and its pose in the body's frame.
    fn part(&self, i: usize) -> (&Shape, Isometry) {
        match self {
            Body::Compound(c) => {
                let child = &c.children()[i];
                (&child.shape, child.pose)
            }
            Body::Shape(s) => (s, Isometry::IDENTITY),
        }
    }

    fn size(self) -> f32 {
        match self {
            Body::Compound(c) => c.size(),
            Body::Shape(s) => s.size(),
        }
    }
}

/// The pair routine behind the three entry points: see the module docs.
fn collide_bodies(
    a: Body,
    pose_a: &Pose,
    b: Body,
    pose_b: &Pose,
    margin: f32,
    scratch: &mut CompoundScratch,
) -> Option<Manifold> {
    let b_in_a = pose_a.relative_to_self(pose_b);
    // 1. Midphase, in A's frame.
    let (a_min, a_max) = match a {
        Body::Compound(c) => c.aabb(),
        Body::Shape(s) => {
            let bounds = world_aabb(s, &Pose::IDENTITY);
            (bounds.min, bounds.max)
        }
    };
    let abs_rotation = Mat3::from_quat(b_in_a.rotation).abs();
    let pairs = &mut scratch.pairs;
    pairs.clear();
    for j in 0..b.len() {
        let (min, max) = match b {
            Body::Shape(s) => {
                let bounds = world_aabb(s, &child_pose(&b_in_a));
                (bounds.min, bounds.max)
            }
            Body::Compound(c) => {
                // The rotated child box's box: half extents |R| h about the moved centre.
                let (lo, hi) = c.child_aabb(j);
                let centre = b_in_a.transform_point(0.5 * (lo + hi));
                let half = abs_rotation * (0.5 * (hi - lo));
                (centre - half, centre + half)
            }
        };
        let extent = min.abs().max(max.abs()).max_element() + (max - min).max_element();
        let grow = margin + COMPOUND_AABB_PADDING * extent;
        let (min, max) = (min - grow, max + grow);
        if a_min.cmpgt(max).any() || a_max.cmplt(min).any() {
            continue;
        }
        match a {
            Body::Compound(c) => c.children_in_aabb(min, max, |i| pairs.push([i, j as u32])),
            Body::Shape(_) => pairs.push([0, j as u32]),
        }
    }
    pairs.sort_unstable();
    // 2. Child pairs, both posed in A's frame.
    scratch.subs.clear();
    scratch.points.clear();
    for &[i, j] in pairs.iter() {
        let (shape_a, pose_in_a) = a.part(i as usize);
        let (shape_b, pose_in_b) = b.part(j as usize);
        let pose_j = child_pose(&b_in_a.mul_isometry(&pose_in_b));
        if let Some(m) = collide_shapes(shape_a, &child_pose(&pose_in_a), shape_b, &pose_j, margin) {
            let first = scratch.points.len();
            scratch.points.extend_from_slice(m.points());
            scratch.subs.push(SubManifold {
                tag: i << 8 | j,
                normal: m.normal,
                separation: m.separation,
                first,
                end: scratch.points.len(),
            });
        }
    }
    // 3. Merge (a sphere touches at one place: its deepest contact's point alone).
    let tie_tolerance = CONTACT_REDUCTION_TOLERANCE * (a.size() + b.size());
    let sphere = |body: Body| matches!(body, Body::Shape(Shape::Sphere(_)));
    let manifold = merge_sub_manifolds(
        &scratch.subs,
        &scratch.points,
        COMPOUND_MERGE_DEGREES.to_radians().cos(),
        sphere(a) || sphere(b),
        tie_tolerance,
        |tag, id| compound_feature_id(tag >> 8, tag & 0xff, id),
        &mut scratch.merged,
    )?;
    // 4. To the world.
    Some(manifold.to_world(pose_a))
}

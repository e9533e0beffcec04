//! Compound bodies: convex children (any convex shape kind) placed by local poses, validated once,
//! with their boxes and a ball containing them. Contacts: [`crate::contact::collide_compound_shape`]
//! and its siblings. Design: docs/design/compound.md.
//!
//! 1. [`Compound::new`] checks the child count against [`MAX_COMPOUND_CHILDREN`] before anything
//!    else, then each child: a convex kind, a finite local translation within [`MAX_SHAPE_SIZE`],
//!    a rotation within [`ROTATION_UNIT_TOLERANCE`] of unit length (normalized).
//! 2. Each child's tight box in the compound's frame, their union, and a ball holding every
//!    child's bounding sphere.
//! 3. Above [`COMPOUND_FLAT_CHILDREN`] children, a BVH over the child boxes (the midphase);
//!    at or below, a flat loop over the boxes.

use glam::{Quat, Vec3};
use thiserror::Error;

use super::{Shape, world_aabb};
use crate::constants::{MAX_SHAPE_SIZE, ROTATION_UNIT_TOLERANCE};
use crate::manifold::FeatureId;
use crate::pose::{Isometry, Pose};
use crate::trimesh::TriangleBvh;

/// Most children a compound may have: a child index takes 6 bits of each field of a compound
/// contact's [`FeatureId`] ([`compound_feature_id`]). V-HACD's default decomposition limit is
/// the same 64 hulls.
pub const MAX_COMPOUND_CHILDREN: usize = 64;

/// Compounds with at most this many children find the children a box touches by a flat loop
/// over their boxes; larger ones by a BVH. benches/compound.rs: at 4 and 8 children the two are
/// equal within the noise, at 64 the tree is about 1.5× faster compound against compound.
pub const COMPOUND_FLAT_CHILDREN: usize = 8;

/// Why a compound was rejected. Child indices are positions in the list given to
/// [`Compound::new`].
#[derive(Debug, Clone, PartialEq, Error)]
pub enum CompoundError {
    /// No children.
    #[error("the compound has no children")]
    Empty,
    /// More children than [`MAX_COMPOUND_CHILDREN`].
    #[error("{0} children, more than the limit of {MAX_COMPOUND_CHILDREN}")]
    TooManyChildren(usize),
    /// A child is not a convex shape of finite size (a half-space, a triangle mesh or a
    /// compound).
    #[error(
        "child {child} is a {kind}; children must be convex shapes (hull, box, sphere, capsule, cylinder)"
    )]
    NotConvex {
        /// Index of the child.
        child: usize,
        /// Its kind.
        kind: &'static str,
    },
    /// A child's local translation is not finite or beyond [`MAX_SHAPE_SIZE`] on some axis.
    #[error("child {child} position {translation} must be finite and within ±{MAX_SHAPE_SIZE:e}")]
    BadTranslation {
        /// Index of the child.
        child: usize,
        /// The translation given.
        translation: Vec3,
    },
    /// A child's local rotation is not finite or further than [`ROTATION_UNIT_TOLERANCE`] from
    /// unit length.
    #[error(
        "child {child} rotation has length {length}; it must be a unit quaternion (within {ROTATION_UNIT_TOLERANCE:e})"
    )]
    BadRotation {
        /// Index of the child.
        child: usize,
        /// The quaternion's length (NaN or infinite when not finite).
        length: f32,
    },
}

/// One child of a compound: a convex shape and its pose in the compound's frame
/// (`x_compound = pose.rotation * x_child + pose.translation`, length units).
#[derive(Clone, Debug, PartialEq)]
pub struct CompoundChild {
    /// The child's shape, in its own local frame.
    pub shape: Shape,
    /// The child's local frame in the compound's frame.
    pub pose: Isometry,
}

/// A body made of convex children, validated ([`Compound::new`]); all geometry in the
/// compound's local frame. A body's pose places the whole compound.
#[derive(Clone, Debug, PartialEq)]
pub struct Compound {
    children: Vec<CompoundChild>,
    /// Each child's box (lower, upper corner), compound frame.
    boxes: Vec<(Vec3, Vec3)>,
    /// The union of the child boxes.
    aabb: (Vec3, Vec3),
    /// Centre and radius of a ball holding every child.
    sphere: (Vec3, f32),
    /// The largest child's [`Shape::size`].
    size: f32,
    /// The midphase tree, above [`COMPOUND_FLAT_CHILDREN`] children.
    bvh: Option<TriangleBvh>,
}

impl Compound {
    /// A compound of `children`. Checks, in order: the count (1 to [`MAX_COMPOUND_CHILDREN`]),
    /// then each child's kind (convex: no half-space), local translation (finite, each
    /// coordinate within ±[`MAX_SHAPE_SIZE`]) and rotation (finite, within
    /// [`ROTATION_UNIT_TOLERANCE`] of unit length; stored normalized). The first failure names
    /// its child.
    pub fn new(mut children: Vec<CompoundChild>) -> Result<Compound, CompoundError> {
        if children.is_empty() {
            return Err(CompoundError::Empty);
        }
        if children.len() > MAX_COMPOUND_CHILDREN {
            return Err(CompoundError::TooManyChildren(children.len()));
        }
        for (index, child) in children.iter_mut().enumerate() {
            check_child(index, child)?;
            child.pose.rotation = child.pose.rotation.normalize();
        }
        let boxes: Vec<(Vec3, Vec3)> = children
            .iter()
            .map(|c| {
                let b = world_aabb(&c.shape, &child_pose(&c.pose));
                (b.min, b.max)
            })
            .collect();
        let aabb = boxes
            .iter()
            .fold((Vec3::INFINITY, Vec3::NEG_INFINITY), |(lo, hi), &(min, max)| {
                (lo.min(min), hi.max(max))
            });
        let spheres: Vec<(Vec3, f32)> = children
            .iter()
            .map(|c| {
                let (centre, radius) = c.shape.bounding_sphere();
                (c.pose.transform_point(centre), radius)
            })
            .collect();
        // The ball about the middle of the child balls' box, reaching the farthest one.
        let (lo, hi) = spheres
            .iter()
            .fold((Vec3::INFINITY, Vec3::NEG_INFINITY), |(lo, hi), &(c, r)| {
                (lo.min(c - r), hi.max(c + r))
            });
        let centre = 0.5 * (lo + hi);
        let radius = spheres
            .iter()
            .map(|&(c, r)| c.distance(centre) + r)
            .fold(0.0, f32::max);
        let size = children.iter().map(|c| c.shape.size()).fold(0.0, f32::max);
        let bvh = (children.len() > COMPOUND_FLAT_CHILDREN).then(|| TriangleBvh::from_boxes(&boxes));
        Ok(Compound {
            children,
            boxes,
            aabb,
            sphere: (centre, radius),
            size,
            bvh,
        })
    }

    /// The children, in the order given (their indices name them in errors and feature ids).
    pub fn children(&self) -> &[CompoundChild] {
        &self.children
    }

    /// Child `i`'s box in the compound's frame (lower, upper corner; tight as
    /// [`world_aabb`], rounded outward).
    pub fn child_aabb(&self, i: usize) -> (Vec3, Vec3) {
        self.boxes[i]
    }

    /// The compound's box in its own frame (lower, upper corner): the union of the child boxes.
    pub fn aabb(&self) -> (Vec3, Vec3) {
        self.aabb
    }

    /// A ball holding every child, compound frame: its centre and radius (length units). Holds
    /// each child's [`Shape::bounding_sphere`]; not the smallest such ball.
    pub fn bounding_sphere(&self) -> (Vec3, f32) {
        self.sphere
    }

    /// The size for relative tolerances, length units: the largest child's [`Shape::size`]
    /// (child pairs are what the tolerances serve).
    pub fn size(&self) -> f32 {
        self.size
    }

    /// Calls `visit` with every child whose box overlaps `[min, max]` (compound frame, closed
    /// boxes); order unspecified.
    #[inline]
    pub fn children_in_aabb(&self, min: Vec3, max: Vec3, mut visit: impl FnMut(u32)) {
        match &self.bvh {
            Some(bvh) => bvh.for_each_overlap(min, max, visit),
            None => {
                for (i, &(lo, hi)) in self.boxes.iter().enumerate() {
                    if !(lo.cmpgt(max).any() || hi.cmplt(min).any()) {
                        visit(i as u32);
                    }
                }
            }
        }
    }
}

/// A child's local pose as a [`Pose`] of the compound's frame (what the pair routines take).
#[inline]
pub(crate) fn child_pose(pose: &Isometry) -> Pose {
    Pose::new(pose.translation, pose.rotation)
}

/// [`Compound::new`]'s checks of one child.
fn check_child(child: usize, c: &CompoundChild) -> Result<(), CompoundError> {
    match &c.shape {
        Shape::Hull(_) | Shape::Cuboid(_) | Shape::Sphere(_) | Shape::Capsule(_) | Shape::Cylinder(_) => {}
        Shape::HalfSpace(_) => {
            return Err(CompoundError::NotConvex {
                child,
                kind: "half-space",
            });
        }
        Shape::TriMesh(_) => {
            return Err(CompoundError::NotConvex {
                child,
                kind: "triangle mesh",
            });
        }
        Shape::Compound(_) => {
            return Err(CompoundError::NotConvex {
                child,
                kind: "compound",
            });
        }
    }
    let t = c.pose.translation;
    if !(t.is_finite() && t.abs().max_element() <= MAX_SHAPE_SIZE) {
        return Err(CompoundError::BadTranslation {
            child,
            translation: t,
        });
    }
    let q: Quat = c.pose.rotation;
    let length = q.length();
    if !(q.is_finite() && (length - 1.0).abs() <= ROTATION_UNIT_TOLERANCE) {
        return Err(CompoundError::BadRotation { child, length });
    }
    Ok(())
}

/// The id of a compound contact point: the children of A and B that touched (0 for a body that
/// is not a compound) and the child pair's own id `local` (child A as body A), packed in the
/// [`FeatureId`] layout with each field holding a child and that child's feature:
///
/// ```text
///  31 30 | 29 | 28 ...... 23 | 22 ..... 15 | 14 | 13 ...... 8 | 7 ....... 0
///   kind |flag| child (high) | feat (high) |  0 | child (low) | feat (low)
/// ```
///
/// `kind`, `flag` and which body each field names are `local`'s ([`FeatureId::FACE_B`]: the
/// high field is B's reference face, so it holds B's child). Features keep 8 bits (modulo 256:
/// two points of one manifold may share an id on a child with more than 256 vertices, faces or
/// edges). The layout commutes with [`FeatureId::swapped`]:
/// `compound_feature_id(a, b, id).swapped() == compound_feature_id(b, a, id.swapped())`, so a
/// pair computed in either order and swapped gets the same ids.
pub fn compound_feature_id(child_a: u32, child_b: u32, local: FeatureId) -> FeatureId {
    debug_assert!((child_a as usize) < MAX_COMPOUND_CHILDREN && (child_b as usize) < MAX_COMPOUND_CHILDREN);
    let (high_child, low_child) = match local.kind() {
        FeatureId::FACE_B => (child_b, child_a),
        _ => (child_a, child_b),
    };
    let field = |child: u32, feature: u32| (child & 0x3f) << 8 | (feature & 0xff);
    FeatureId::new(
        local.kind(),
        local.flag(),
        field(high_child, local.high()),
        field(low_child, local.low()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compound_ids_commute_with_swapping() {
        for kind in 0..4 {
            for (flag, high, low) in [(false, 3, 200), (true, 255, 0), (false, 17, 4000)] {
                let local = FeatureId::new(kind, flag, high, low);
                for (a, b) in [(0, 5), (63, 1), (7, 7)] {
                    let id = compound_feature_id(a, b, local);
                    assert_eq!(
                        id.swapped(),
                        compound_feature_id(b, a, local.swapped()),
                        "{kind} {a} {b}"
                    );
                    assert_eq!((id.kind(), id.flag()), (kind, flag));
                }
            }
        }
        // Distinct children give distinct ids for the same local id.
        let local = FeatureId::new(FeatureId::OTHER, false, 1, 2);
        assert_ne!(compound_feature_id(1, 2, local), compound_feature_id(2, 1, local));
        assert_ne!(compound_feature_id(1, 2, local), compound_feature_id(1, 3, local));
    }
}

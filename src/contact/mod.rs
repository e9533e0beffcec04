//! Contact manifolds for every pair of shapes: one file per shape pair, plus the clipping and
//! point reduction they share. [`collide_shapes`] dispatches on the pair of shape kinds.

mod box_box;
mod box_clip;
mod capsule_capsule;
mod capsule_hull;
pub mod clip;
mod compound;
mod halfspace_capsule;
mod halfspace_hull;
mod halfspace_sphere;
mod hull_hull;
mod merge;
mod sphere_capsule;
mod sphere_hull;
mod sphere_sphere;
mod triangle_capsule;
mod triangle_hull;
mod triangle_sphere;
mod trimesh;
mod trimesh_compound;

pub use box_box::collide_box_box;
pub(crate) use box_box::{box_manifold_on_axis, collide_box_box_reporting_sat};
pub use capsule_capsule::collide_capsule_capsule;
pub use capsule_hull::collide_capsule_hull;
pub use compound::{
    CompoundScratch, collide_compound_compound, collide_compound_shape, collide_shape_compound,
};
pub use halfspace_capsule::collide_halfspace_capsule;
pub use halfspace_hull::collide_halfspace_hull;
pub use halfspace_sphere::collide_halfspace_sphere;
pub use hull_hull::{collide_hull_hull, manifold_from_sat};
pub(crate) use hull_hull::{collide_hull_hull_reporting_sat, manifold_on_axis};
pub use sphere_capsule::collide_sphere_capsule;
pub use sphere_hull::collide_sphere_hull;
pub use sphere_sphere::collide_sphere_sphere;
pub(crate) use triangle_capsule::collide_triangle_capsule;
pub(crate) use triangle_hull::collide_triangle_hull;
pub(crate) use triangle_sphere::{FEATURE_WEIGHT_TOLERANCE, collide_triangle_sphere};
pub use trimesh::{TriMeshScratch, collide_trimesh_shape};
pub use trimesh_compound::collide_trimesh_compound;

use std::cell::RefCell;

use crate::manifold::Manifold;
use crate::pose::Pose;
use crate::shape::Shape;

thread_local! {
    /// The mesh routine's buffers, one per thread: rayon's threads live as long as the pool, so
    /// a batch's mesh pairs allocate only until each thread's buffers fit the largest pair.
    static TRIMESH_SCRATCH: RefCell<TriMeshScratch> = RefCell::new(TriMeshScratch::default());
}

/// Runs `f` on this thread's [`TriMeshScratch`].
fn with_trimesh_scratch<R>(f: impl FnOnce(&mut TriMeshScratch) -> R) -> R {
    TRIMESH_SCRATCH.with_borrow_mut(f)
}

thread_local! {
    /// The compound routines' buffers, one per thread, as [`TRIMESH_SCRATCH`]. Their child pairs
    /// run through [`collide_shapes`] again, which never reaches this scratch (a child is convex).
    static COMPOUND_SCRATCH: RefCell<CompoundScratch> = RefCell::new(CompoundScratch::default());
}

/// Runs `f` on this thread's [`CompoundScratch`].
fn with_compound_scratch<R>(f: impl FnOnce(&mut CompoundScratch) -> R) -> R {
    COMPOUND_SCRATCH.with_borrow_mut(f)
}

/// The manifold between shape `a` at `pose_a` and shape `b` at `pose_b` (world poses), or
/// `None` when they are farther apart than `margin` (length units). Two static shapes
/// (half-spaces, triangle meshes) never collide (`None`); batch input validation rejects such
/// pairs before they get here.
///
/// A triangle mesh and a convex body, in either order, take [`collide_trimesh_shape`] (the
/// mesh as its A) on a per-thread [`TriMeshScratch`] that grows to the largest pair and stays
/// (no allocation once warm). The normal still goes from `a` to `b`: with the mesh as `b` it
/// is negated ([`Manifold::swap_keeping_ids`]); the ids are [`crate::trimesh::mesh_feature_id`]s
/// in either order (triangle, then the triangle's and the body's features), never
/// [`crate::FeatureId::swapped`].
///
/// A compound and a triangle mesh, in either order, take [`collide_trimesh_compound`] (the mesh
/// as its A) on the same [`TriMeshScratch`], normal and ids as for a convex body, the ids
/// [`crate::trimesh::compound_mesh_feature_id`]s.
///
/// A compound and any other kind, in either order, take
/// [`collide_compound_shape`], [`collide_shape_compound`] or [`collide_compound_compound`] on a
/// per-thread [`CompoundScratch`]: the normal from `a` to `b`, ids
/// [`crate::shape::compound::compound_feature_id`] (which commute with [`crate::FeatureId::swapped`]).
///
/// Unchecked: the poses must be valid ([`Pose::is_valid`]: finite, unit rotations), the
/// margin finite and non-negative, and everything within the supported range
/// ([`crate::constants`]); other input gives meaningless results. Debug builds assert it; the
/// batch APIs ([`crate::CpuNarrowphase`], [`crate::GpuNarrowphase`]) check it and return errors.
pub fn collide_shapes(a: &Shape, pose_a: &Pose, b: &Shape, pose_b: &Pose, margin: f32) -> Option<Manifold> {
    let mut manifold = None;
    collide_shapes_into(a, pose_a, b, pose_b, margin, &mut manifold);
    manifold
}

/// [`collide_shapes`] written into `out`, the batch loops' output slot: the box-box routine
/// builds its manifold there, where returning it would copy its 160 bytes at every level.
pub(crate) fn collide_shapes_into(
    a: &Shape,
    pose_a: &Pose,
    b: &Shape,
    pose_b: &Pose,
    margin: f32,
    out: &mut Option<Manifold>,
) {
    debug_assert!(
        pose_a.is_valid() && pose_b.is_valid(),
        "invalid pose: {pose_a:?} {pose_b:?}"
    );
    debug_assert!(margin.is_finite() && margin >= 0.0, "invalid margin {margin}");
    match (a, b) {
        (Shape::Cuboid(ca), Shape::Cuboid(cb)) => {
            box_box::collide_box_box_into(ca, pose_a, cb, pose_b, margin, out)
        }
        _ => *out = collide_by_kind(a, pose_a, b, pose_b, margin),
    }
}

/// [`collide_shapes`] for every pair of shape kinds but two boxes (which
/// [`collide_shapes_into`] gives to the box routine), returning the manifold.
fn collide_by_kind(a: &Shape, pose_a: &Pose, b: &Shape, pose_b: &Pose, margin: f32) -> Option<Manifold> {
    use Shape::*;
    match (a, b) {
        (TriMesh(mesh), Compound(c)) => {
            with_trimesh_scratch(|s| collide_trimesh_compound(mesh, pose_a, c, pose_b, margin, s))
        }
        (Compound(c), TriMesh(mesh)) => {
            let mut m =
                with_trimesh_scratch(|s| collide_trimesh_compound(mesh, pose_b, c, pose_a, margin, s))?;
            m.swap_keeping_ids();
            Some(m)
        }
        (Compound(ca), Compound(cb)) => {
            with_compound_scratch(|s| collide_compound_compound(ca, pose_a, cb, pose_b, margin, s))
        }
        (Compound(c), _) => {
            with_compound_scratch(|s| collide_compound_shape(c, pose_a, b, pose_b, margin, s))
        }
        (_, Compound(c)) => {
            with_compound_scratch(|s| collide_shape_compound(a, pose_a, c, pose_b, margin, s))
        }
        (TriMesh(mesh), _) => {
            with_trimesh_scratch(|s| collide_trimesh_shape(mesh, pose_a, b, pose_b, margin, s))
        }
        (_, TriMesh(mesh)) => {
            let mut m = with_trimesh_scratch(|s| collide_trimesh_shape(mesh, pose_b, a, pose_a, margin, s))?;
            m.swap_keeping_ids();
            Some(m)
        }
        (Sphere(sa), Sphere(sb)) => collide_sphere_sphere(sa, pose_a, sb, pose_b, margin),
        (Sphere(s), Capsule(c)) => collide_sphere_capsule(s, pose_a, c, pose_b, margin),
        (Capsule(c), Sphere(s)) => collide_sphere_capsule(s, pose_b, c, pose_a, margin).map(|m| m.swapped()),
        (Capsule(ca), Capsule(cb)) => collide_capsule_capsule(ca, pose_a, cb, pose_b, margin),
        (HalfSpace(_), HalfSpace(_)) => None,
        (HalfSpace(h), Sphere(s)) => collide_halfspace_sphere(h, pose_a, s, pose_b, margin),
        (Sphere(s), HalfSpace(h)) => {
            collide_halfspace_sphere(h, pose_b, s, pose_a, margin).map(|m| m.swapped())
        }
        (HalfSpace(h), Capsule(c)) => collide_halfspace_capsule(h, pose_a, c, pose_b, margin),
        (Capsule(c), HalfSpace(h)) => {
            collide_halfspace_capsule(h, pose_b, c, pose_a, margin).map(|m| m.swapped())
        }
        (HalfSpace(h), _) => collide_halfspace_hull(h, pose_a, b.as_hull()?, pose_b, margin),
        (_, HalfSpace(h)) => {
            collide_halfspace_hull(h, pose_b, a.as_hull()?, pose_a, margin).map(|m| m.swapped())
        }
        (Sphere(s), _) => collide_sphere_hull(s, pose_a, b.as_hull()?, pose_b, margin),
        (_, Sphere(s)) => collide_sphere_hull(s, pose_b, a.as_hull()?, pose_a, margin).map(|m| m.swapped()),
        (Capsule(c), _) => collide_capsule_hull(c, pose_a, b.as_hull()?, pose_b, margin),
        (_, Capsule(c)) => collide_capsule_hull(c, pose_b, a.as_hull()?, pose_a, margin).map(|m| m.swapped()),
        _ => collide_hull_hull(a.as_hull()?, pose_a, b.as_hull()?, pose_b, margin),
    }
}

//! A compound body (B) against a static triangle mesh (A): one manifold per (mesh, compound)
//! pair, computed in the mesh's frame.
//!
//! 1. The compound's pose in the mesh's frame; each child posed there.
//! 2. Each child through the mesh routine's midphase and triangle contacts, as one convex body
//!    (`TriMeshScratch::push_body_contacts`), every triangle contact tagged with its child.
//! 3. All of them merged as the mesh routine merges one body's ([`TRIMESH_MERGE_DEGREES`]:
//!    the deepest contact's normal, every contact within the angle of it, reduced to four); ids
//!    [`compound_mesh_feature_id`].
//! 4. Normal and points to the world by the mesh's pose.

#[cfg(doc)]
use crate::constants::TRIMESH_MERGE_DEGREES;
use crate::contact::trimesh::TriMeshScratch;
use crate::manifold::Manifold;
use crate::pose::Pose;
use crate::shape::compound::Compound;
use crate::trimesh::{MAX_TRIMESH_TRIANGLES, TriMesh, compound_mesh_feature_id};

/// Bits of a triangle contact's tag below its child's index (the triangle's).
const TRIANGLE_BITS: u32 = MAX_TRIMESH_TRIANGLES.trailing_zeros();

/// The manifold between `mesh` (body A) at `pose_a` and `compound` (body B) at `pose_b` (world
/// poses), or `None` when they are farther apart than `margin` (length units). Normal from the
/// mesh toward the compound, world space; ids [`compound_mesh_feature_id`]. Unchecked as
/// [`crate::contact::collide_shapes`].
pub fn collide_trimesh_compound(
    mesh: &TriMesh,
    pose_a: &Pose,
    compound: &Compound,
    pose_b: &Pose,
    margin: f32,
    scratch: &mut TriMeshScratch,
) -> Option<Manifold> {
    let b_in_a = pose_a.relative_to_self(pose_b);
    scratch.clear_contacts();
    for (i, child) in compound.children().iter().enumerate() {
        let child_in_a = b_in_a.mul_isometry(&child.pose);
        scratch.push_body_contacts(
            mesh,
            &child.shape,
            &child_in_a,
            margin,
            (i as u32) << TRIANGLE_BITS,
        );
    }
    let triangle_mask = (1 << TRIANGLE_BITS) - 1;
    let id = |tag: u32, local| compound_mesh_feature_id(tag & triangle_mask, tag >> TRIANGLE_BITS, local);
    let manifold = scratch.merge(false, compound.size(), id)?;
    Some(manifold.to_world(pose_a))
}

//! A convex body (B) against a static triangle mesh (A): one manifold per (mesh, body) pair.
//!
//! 1. B's box in the mesh's frame, grown by the margin; the mesh's BVH gives the triangles whose
//!    boxes overlap it (the midphase), into a reusable scratch list.
//! 2. Each triangle against B by kind ([`collide_triangle_hull`], [`collide_triangle_sphere`],
//!    [`collide_triangle_capsule`]), in the mesh's frame, internal edges handled there by the
//!    active-edge rule ([`TriMesh::allows_normal`]).
//! 3. Merge: the deepest triangle contact's normal (ties within the reduction tolerance to the
//!    first in BVH order); the points of every triangle contact whose normal is within
//!    [`TRIMESH_MERGE_DEGREES`] of it, reduced to four, points within the tolerance of a kept one
//!    dropped (the merge compounds share: `contact::merge`); ids [`mesh_feature_id`].
//! 4. Normal, points to the world by the mesh's pose.
//!
//! Steps 1 and 2 are one call per convex body ([`TriMeshScratch`]'s `push_body_contacts`), so a
//! compound's children go through them one by one (`contact::trimesh_compound`).

use glam::Vec3;

use crate::constants::{
    AXIS_PREFERENCE_TOLERANCE, CONTACT_REDUCTION_TOLERANCE, TRIMESH_AABB_PADDING, TRIMESH_MERGE_DEGREES,
};
use crate::contact::merge::{SubManifold, merge_sub_manifolds};
use crate::contact::triangle_capsule::collide_triangle_capsule;
use crate::contact::triangle_hull::collide_triangle_hull;
use crate::contact::triangle_sphere::collide_triangle_sphere;
use crate::manifold::{ContactPoint, FeatureId, Manifold};
use crate::pose::{Isometry, Pose};
use crate::query::sat_triangle::PosedHull;
use crate::shape::Shape;
use crate::trimesh::{TriMesh, mesh_feature_id};

/// Buffers [`collide_trimesh_shape`] reuses from call to call (one per thread): the midphase's
/// triangles and the triangle contacts. They grow to the largest pair seen and stay.
#[derive(Clone, Debug, Default)]
pub struct TriMeshScratch {
    triangles: Vec<u32>,
    posed: PosedHull,
    contacts: Vec<SubManifold>,
    points: Vec<ContactPoint>,
    merged: Vec<ContactPoint>,
}

/// The manifold between `mesh` (body A) at `pose_a` and the convex `shape` (body B) at `pose_b`
/// (world poses), or `None` when they are farther apart than `margin` (length units) or `shape`
/// is a half-space (static against static). Normal from the mesh toward the body, world
/// space; ids [`mesh_feature_id`]. Unchecked as [`crate::contact::collide_shapes`].
pub fn collide_trimesh_shape(
    mesh: &TriMesh,
    pose_a: &Pose,
    shape: &Shape,
    pose_b: &Pose,
    margin: f32,
    scratch: &mut TriMeshScratch,
) -> Option<Manifold> {
    let b_in_a = pose_a.relative_to_self(pose_b);
    scratch.clear_contacts();
    scratch.push_body_contacts(mesh, shape, &b_in_a, margin, 0);
    // A sphere touches at one place: its deepest contact's point alone.
    let sphere = matches!(shape, Shape::Sphere(_));
    let manifold = scratch.merge(sphere, shape.size(), mesh_feature_id)?;
    Some(manifold.to_world(pose_a))
}

impl TriMeshScratch {
    /// Forgets the triangle contacts of the last pair.
    pub(crate) fn clear_contacts(&mut self) {
        self.contacts.clear();
        self.points.clear();
    }

    /// Steps 1 and 2 for one convex body: appends the contacts of every triangle within `margin`
    /// (length units) of `shape` at `b_in_a` (its pose in the mesh's frame), in the mesh's
    /// frame, each tagged `tag | triangle` (`tag` in the bits above the triangle's 19). A
    /// half-space, mesh or compound appends nothing.
    pub(crate) fn push_body_contacts(
        &mut self,
        mesh: &TriMesh,
        shape: &Shape,
        b_in_a: &Isometry,
        margin: f32,
        tag: u32,
    ) {
        let tolerance = AXIS_PREFERENCE_TOLERANCE * shape.size();
        // 1. Midphase (a hull posed in A's frame once for every triangle).
        let hull = shape.as_hull();
        if let Some(hull) = hull {
            self.posed.pose(hull, b_in_a);
        }
        let Some((min, max)) = box_in_a(shape, b_in_a, &self.posed) else {
            return;
        };
        let grow = margin
            + TRIMESH_AABB_PADDING * (min.abs().max(max.abs()).max_element() + (max - min).max_element());
        mesh.triangles_in_aabb(min - grow, max + grow, &mut self.triangles);
        // 2. Triangle contacts.
        let points = &mut self.points;
        let posed = &mut self.posed;
        for &t in &self.triangles {
            let first = points.len();
            let from_manifold = |m: Manifold, points: &mut Vec<ContactPoint>| {
                points.extend_from_slice(m.points());
                (m.normal, m.separation)
            };
            let contact = match (shape, hull) {
                (Shape::Sphere(s), _) => {
                    collide_triangle_sphere(mesh, t, b_in_a.translation, s.radius, margin)
                        .map(|m| from_manifold(m, points))
                }
                (Shape::Capsule(c), _) => {
                    let segment = c.segment().map(|p| b_in_a.transform_point(p));
                    collide_triangle_capsule(mesh, t, segment, c.radius, margin, tolerance)
                        .map(|m| from_manifold(m, points))
                }
                (_, Some(hull)) => {
                    collide_triangle_hull(mesh, t, hull, posed, b_in_a, margin, tolerance, points)
                }
                (_, None) => None,
            };
            if let Some((normal, separation)) = contact {
                self.contacts.push(SubManifold {
                    tag: tag | t,
                    normal,
                    separation,
                    first,
                    end: points.len(),
                });
            }
        }
    }

    /// Step 3: the contacts pushed since [`Self::clear_contacts`] merged into one manifold (mesh
    /// frame), or `None` when there are none; `single` keeps the deepest contact's points alone;
    /// ties within [`CONTACT_REDUCTION_TOLERANCE`] × `size` (length units); ids `id(tag, id)`.
    pub(crate) fn merge(
        &mut self,
        single: bool,
        size: f32,
        id: impl Fn(u32, FeatureId) -> FeatureId,
    ) -> Option<Manifold> {
        merge_sub_manifolds(
            &self.contacts,
            &self.points,
            TRIMESH_MERGE_DEGREES.to_radians().cos(),
            single,
            CONTACT_REDUCTION_TOLERANCE * size,
            id,
            &mut self.merged,
        )
    }
}

/// B's box in A's frame (lower and upper corners), `None` for a shape that is not convex; a
/// hull's from `posed` (the hull posed at `b_in_a`).
fn box_in_a(shape: &Shape, b_in_a: &Isometry, posed: &PosedHull) -> Option<(Vec3, Vec3)> {
    let centre = b_in_a.translation;
    let half = match shape {
        Shape::Sphere(s) => Vec3::splat(s.radius),
        Shape::Capsule(c) => (b_in_a.rotation * Vec3::new(0.0, c.half_height, 0.0)).abs() + c.radius,
        Shape::HalfSpace(_) | Shape::TriMesh(_) | Shape::Compound(_) => return None,
        _ => {
            let (mut lo, mut hi) = (Vec3::INFINITY, Vec3::NEG_INFINITY);
            for &p in posed.vertices() {
                (lo, hi) = (lo.min(p), hi.max(p));
            }
            return Some((lo, hi));
        }
    };
    Some((centre - half, centre + half))
}

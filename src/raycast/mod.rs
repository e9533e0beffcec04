//! Ray casts in bulk: for each ray (world origin, unit direction, optional max distance), every
//! body it enters, nearest first, or only the nearest.
//!
//! 1. A [`Ray`] is checked and normalized when built; ray origins are f64, like world positions.
//! 2. A [`Bvh`] over the bodies' world AABBs picks each ray's candidate bodies; half-spaces are
//!    tested by every ray.
//! 3. Each candidate is hit exactly in its body's frame ([`cast_shape()`]); a ray that starts inside
//!    a body hits it at distance 0 with the normal opposite to its direction. A triangle mesh
//!    is hit on either face at its nearest triangle, through its own BVH ([`cast_trimesh()`],
//!    which names the triangle; [`RayHit`] has no field for it); a compound at its nearest
//!    child ([`cast_compound()`]).
//! 4. The CPU batch ([`CpuRaycaster`], rayon) and the GPU batch ([`GpuRaycaster`]; WGSL twin
//!    `shaders/raycast/raycast.wgsl`, steps 2–3 per ray; meshes and compounds in
//!    `raycast_complex.wgsl`) return the same lists. The resident
//!    API ([`GpuRaycaster::encode_resident`]) builds the BVH on the GPU from bodies already
//!    there and leaves the hits there.
//!
//! Distances are along the unit direction, length units, `0 <= distance <= max_distance`; hit
//! points are world space (f64); normals are unit, world space, pointing out of the body.
//! "Enters": the ray's closed segment meets the closed body; grazing counts, up to f32 rounding.

mod cast_box;
mod cast_capsule;
mod cast_cylinder;
mod cast_half_space;
mod cast_hull;
mod cast_kernel;
mod cast_shape;
mod cast_sphere;
mod cast_trimesh;
mod clip;
mod cpu;
pub mod gpu;
mod hit_set;
pub mod json;
pub mod layout;
mod ray;
mod resident;
#[cfg(feature = "generate")]
pub mod workload;

pub use crate::bvh::{BVH_LEAF_SIZE, BVH_STACK_SIZE, Bvh, BvhNode};
pub use crate::ray_box::{BVH_PADDING, MIN_DIRECTION_COMPONENT, inverse_direction};
pub use cast_box::cast_box;
pub use cast_capsule::cast_capsule;
pub use cast_cylinder::cast_cylinder;
pub use cast_half_space::cast_half_space;
pub use cast_hull::{SPHERE_TEST_SLACK, bounding_sphere, cast_hull};
pub use cast_shape::{cast_body, cast_compound, cast_shape};
pub use cast_sphere::cast_sphere;
pub use cast_trimesh::cast_trimesh;
pub use cpu::CpuRaycaster;
pub(crate) use cpu::cast_one;
pub use gpu::{GpuRaycaster, RayTimings};
pub use hit_set::RayHitSet;
pub use ray::{LocalHit, LocalRay, Ray, RayError, RayHit};
pub use resident::{ResidentHits, ResidentRays};

use crate::scene::{Body, InputError};
use crate::shape::Shape;

/// Every body each ray enters (or with `closest`, at most the nearest), one list per ray in
/// ray order, nearest first: [`CpuRaycaster::cast`] over `shapes` and `bodies`.
pub fn raycast(
    shapes: &[Shape],
    bodies: &[Body],
    rays: &[Ray],
    closest: bool,
) -> Result<Vec<Vec<RayHit>>, InputError> {
    CpuRaycaster::new(shapes).cast(bodies, rays, closest)
}

//! hullsat: batch narrowphase collision detection between convex shapes.
//!
//! Given shapes (convex hulls, boxes, spheres, capsules, cylinders, half-spaces), bodies that place them
//! with rigid [`Pose`]s, and a list of body pairs, hullsat returns one [`Manifold`] per pair
//! whose separation is at most the margin. Hull and box pairs use the separating axis test
//! with Gauss-map pruning of edge pairs ([`query::sat`]); face contacts are clipped
//! (Sutherland–Hodgman) and reduced to at most four points ([`contact::clip`]). The CPU path
//! ([`CpuNarrowphase`]) is the reference; the GPU path runs the SAT in a WGSL compute shader.
//!
//! ```
//! use glam::{Quat, Vec3};
//! use hullsat::{Body, CpuNarrowphase, Cuboid, Pose, Shape};
//!
//! // A unit box resting 0.01 deep on a wide slab.
//! let shapes = vec![
//!     Shape::Cuboid(Cuboid::new(Vec3::new(5.0, 0.5, 5.0)).unwrap()),
//!     Shape::Cuboid(Cuboid::new(Vec3::splat(0.5)).unwrap()),
//! ];
//! let bodies = [
//!     Body { shape: 0, pose: Pose::IDENTITY },
//!     Body { shape: 1, pose: Pose::new(Vec3::new(0.0, 0.99, 0.0), Quat::IDENTITY) },
//! ];
//! let narrowphase = CpuNarrowphase::new(shapes);
//! let manifolds = narrowphase.collide(&bodies, &[[0, 1]], 0.0).unwrap();
//! let m = manifolds[0].as_ref().expect("the box rests on the slab");
//! assert!(m.normal.abs_diff_eq(Vec3::Y, 1e-6)); // from body 0 toward body 1
//! assert!((m.separation + 0.01).abs() < 1e-6); // 0.01 deep
//! assert_eq!(m.points().len(), 4); // the box's bottom face
//! ```
//!
//! # Conventions (in full: docs/formats.md)
//! - **Frames**: shapes in their body's local frame; a [`Pose`] maps local to world. Lengths in
//!   the caller's unit; tolerances scale with shape size ([`constants`]).
//! - **Normal**: unit, world space, from body A toward body B (the pair's first body to its second).
//! - **Separation**: signed distance of the surfaces, length units: negative when penetrating, the
//!   exact distance when apart; a pair gets a manifold when `separation <= margin`. Between
//!   nearly equal SAT axes a face wins ([`constants::AXIS_PREFERENCE_TOLERANCE`]).
//! - **Points**: world space (f64), midway between the surfaces; depth positive when penetrating.
//! - **Pair order**: `[a, b]` is computed with the lower index as A and swapped back
//!   ([`Manifold::swapped`]); ids: [`FeatureId`].

pub mod broadphase;
mod bvh;
pub mod cache;
pub mod constants;
pub mod contact;
pub mod contact_set;
pub mod contract;
#[cfg(feature = "generate")]
pub mod generate;
pub mod gpu;
pub mod hull;
pub mod internals;
pub mod manifold;
pub mod narrowphase;
mod parallel;
pub mod pose;
pub mod query;
mod ray_box;
pub mod raycast;
pub mod scene;
pub mod shape;
#[cfg(test)]
mod test_rng;
pub mod trimesh;

/// The glam hullsat's API is written in (`Vec3`, `Quat`, `DVec3`): use it instead of adding a
/// glam of a matching version yourself.
pub use glam;

pub use cache::ContactCache;
pub use contact_set::ContactSet;
pub use hull::{ConvexHull, HullError};
pub use manifold::{ContactPoint, FeatureId, Manifold};
pub use narrowphase::{CpuNarrowphase, GpuError, GpuNarrowphase};
pub use pose::{Isometry, Pose};
pub use query::bounding_sphere::{BoundingSphere, world_bounding_sphere};
pub use raycast::{CpuRaycaster, GpuRaycaster, Ray, RayHit, RayHitSet};
pub use scene::{Body, InputError, Scene, ValidatedBatch};
pub use shape::compound::{Compound, CompoundChild, CompoundError};
pub use shape::{Capsule, Cuboid, Cylinder, HalfSpace, Shape, ShapeError, Sphere};
pub use trimesh::{TriMesh, TriMeshError};

/// The README's library example, compiled and run by `cargo test`.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExample;

//! hullsat: batch narrowphase collision detection between convex shapes.
//!
//! Given shapes (convex hulls, boxes, spheres, capsules, half-spaces), bodies that place them
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
//! # Conventions (stated once, used everywhere)
//! - **Units**: lengths in whatever unit the caller uses; tolerances scale with shape size.
//! - **Frames**: shapes are defined in their body's local frame; a [`Pose`] maps local to world
//!   (`x_world = rotation * x_local + translation`). Pair queries run in body A's frame and
//!   return world-space results.
//! - **Normal**: unit, world space, pointing from body A toward body B (the first body of the
//!   pair toward the second).
//! - **Separation**: signed distance between the surfaces, in length units: negative when
//!   penetrating (by `-separation`, the minimum translation distance), positive when apart (the
//!   exact distance). A pair gets a manifold when `separation <= margin` (the speculative
//!   margin, length units, default 0). For overlapping hulls the normal is the SAT axis chosen
//!   with a face preference: a face of B wins over a face of A, and an edge pair over a face,
//!   only when it separates more by [`constants::AXIS_PREFERENCE_TOLERANCE`] × the pair's scale
//!   ([`constants::pair_scale`]), so the manifold does not flicker between nearly equal axes;
//!   along that normal the surfaces may be up to that tolerance deeper than `separation`.
//! - **Depth** of a contact point: positive when penetrating, negative for speculative points.
//! - **Position** of a contact point: world space (f64), midway between the two surfaces.
//! - **Pair order**: batches compute `[a, b]` with the lower body index as A and swap the
//!   result back ([`Manifold::swapped`]), so the order never changes the verdict.
//! - **Range**: sizes 1e-6..1e12, positions within ±1e12 (see [`constants`]); world positions
//!   are f64 ([`Pose`]), pair queries run on f32 relative poses ([`Isometry`]).
//! - **Feature ids**: see [`FeatureId`] for the bit layout.

pub mod broadphase;
pub mod cache;
pub mod constants;
pub mod contact;
pub mod contract;
#[cfg(feature = "cli")]
pub mod generate;
pub mod gpu;
pub mod hull;
pub mod internals;
pub mod manifold;
pub mod narrowphase;
pub mod pose;
pub mod query;
pub mod raycast;
pub mod scene;
pub mod shape;
#[cfg(test)]
mod test_rng;

/// The glam hullsat's API is written in (`Vec3`, `Quat`, `DVec3`): use it instead of adding a
/// glam of a matching version yourself.
pub use glam;

pub use cache::ContactCache;
pub use hull::{ConvexHull, HullError};
pub use manifold::{ContactPoint, FeatureId, Manifold};
pub use narrowphase::{CpuNarrowphase, GpuError, GpuNarrowphase, ValidatedBatch};
pub use pose::{Isometry, Pose};
pub use raycast::{CpuRaycaster, GpuRaycaster, Ray, RayHit};
pub use scene::{Body, InputError, Scene};
pub use shape::{Capsule, Cuboid, HalfSpace, Shape, ShapeError, Sphere};

/// The README's library example, compiled and run by `cargo test`.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExample;

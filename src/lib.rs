//! hullsat: batch narrowphase collision detection between convex shapes.
//!
//! Given shapes (convex hulls, boxes, spheres, capsules, half-spaces), bodies that place them
//! with rigid [`Pose`]s, and a list of body pairs, hullsat returns one [`Manifold`] per pair
//! whose separation is at most the margin. Hull and box pairs use the separating axis test
//! with Gauss-map pruning of edge pairs ([`query::sat`]); face contacts are clipped
//! (Sutherland–Hodgman) and reduced to at most four points ([`contact::clip`]). The CPU path
//! ([`CpuNarrowphase`]) is the reference; the GPU path runs the SAT in a WGSL compute shader.
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
//!   only when it separates more by [`constants::AXIS_PREFERENCE_TOLERANCE`] × (sum of the
//!   bounding radii), so the manifold does not flicker between nearly equal axes; along that
//!   normal the surfaces may be up to that tolerance deeper than `separation`.
//! - **Depth** of a contact point: positive when penetrating, negative for speculative points.
//! - **Position** of a contact point: world space, midway between the two surfaces.
//! - **Feature ids**: see [`FeatureId`] for the bit layout.

pub mod batch;
pub mod broadphase;
pub mod cache;
pub mod constants;
pub mod contact;
pub mod generate;
pub mod gpu;
pub mod hull;
pub mod manifold;
pub mod pose;
pub mod query;
pub mod scene;
pub mod shape;

pub use batch::CpuNarrowphase;
pub use cache::ContactCache;
pub use gpu::{GpuError, GpuNarrowphase};
pub use hull::{ConvexHull, HullError};
pub use manifold::{ContactPoint, FeatureId, Manifold};
pub use pose::{Isometry, Pose};
pub use scene::{Body, InputError, Scene};
pub use shape::{Capsule, Cuboid, HalfSpace, Shape, ShapeError, Sphere};

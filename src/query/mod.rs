//! Geometric queries between shapes, independent of manifolds, batches and the GPU.
//!
//! Unchecked: every query expects finite input, valid relative poses ([`crate::Isometry::is_valid`])
//! and shapes within the supported range ([`crate::constants`]); other input gives meaningless
//! results. Debug builds assert the poses; the batch APIs validate before calling these.

pub mod bounding_sphere;
pub(crate) mod bounds;
pub mod gjk;
pub mod sat;
pub mod sat_box_box;
pub mod sat_triangle;
pub mod segment;
pub mod support_box;

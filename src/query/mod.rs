//! Geometric queries between shapes, independent of manifolds, batches and the GPU.

pub mod gjk;
pub mod sat;
pub mod segment;

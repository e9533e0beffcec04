//! Bounding volume hierarchies over the bodies' world boxes, shared by the GPU features that
//! need one (the ray caster, the GPU broadphase), which never import each other.
//!
//! - `cpu`: the [`Bvh`] built on the CPU (median splits) and its ray traversal; re-exported by
//!   [`crate::raycast`] under the same names.
//! - `gpu`: the BVH built on the GPU from bodies already in a GPU buffer (Morton order, then
//!   the broadphase's heap tree or the rays' prefix tree), in [`BvhNode`] layout; WGSL twin
//!   `shaders/bvh/bvh_build.wgsl`. Design notes: `docs/design/gpu-bvh.md`.

mod cpu;
pub(crate) mod gpu;

pub(crate) use cpu::frame_of;
pub use cpu::{BVH_LEAF_SIZE, BVH_STACK_SIZE, Bvh, BvhNode};

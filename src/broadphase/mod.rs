//! Broadphase: which body pairs are worth a narrowphase test.
//!
//! - `sweep`: the CPU broadphase ([`candidate_pairs`], [`candidate_pairs_at_most`]), sweep and
//!   prune tile by tile on all threads; the reference.
//! - `grid`: its slabs, tiles and cells; `packed`: its member lists and pairs packed into bits.
//! - `gpu`: the GPU broadphase ([`GpuBroadphase`]): a BVH built on the GPU over bodies in a GPU
//!   buffer, traversed per body, the pairs left on the GPU for the resident narrowphase.

pub mod gpu;
mod grid;
mod packed;
mod sweep;

pub use gpu::{GpuBroadphase, GpuPairCount, ResidentBodies, ResidentPairs};
pub use sweep::{DEFAULT_MAX_CANDIDATE_PAIRS, TooManyPairs, candidate_pairs, candidate_pairs_at_most};

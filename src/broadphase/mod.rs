//! Broadphase: which body pairs are worth a narrowphase test.
//!
//! - `aabb`: each body's world box ([`world_aabb`]), tight for every shape kind.
//! - `sweep`: the CPU broadphase ([`candidate_pairs`], [`candidate_pairs_at_most`]), sweep and
//!   prune on all threads; the reference.

mod aabb;
mod sweep;

pub use aabb::{Aabb, world_aabb};
pub use sweep::{DEFAULT_MAX_CANDIDATE_PAIRS, TooManyPairs, candidate_pairs, candidate_pairs_at_most};

//! What the benches share: the digest of their results for bit-identity checks.

use std::collections::hash_map::DefaultHasher;
use std::hash::Hasher;

use hullsat::Manifold;

/// A hash of every bit of `results` (normals, separations, points, ids, in order), so a change
/// meant to be a pure speedup can be checked to leave the results bit for bit unchanged.
pub fn digest(results: &[Option<Manifold>]) -> u64 {
    let mut hasher = DefaultHasher::new();
    for manifold in results {
        let Some(m) = manifold else {
            hasher.write_u8(0);
            continue;
        };
        hasher.write_u8(1);
        for x in m.normal.to_array().into_iter().chain([m.separation]) {
            hasher.write_u32(x.to_bits());
        }
        for point in m.points() {
            for x in point.position.to_array() {
                hasher.write_u64(x.to_bits());
            }
            hasher.write_u32(point.depth.to_bits());
            hasher.write_u32(point.id.0);
        }
    }
    hasher.finish()
}

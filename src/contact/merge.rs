//! Several sub-manifolds of one body pair (a mesh's triangle contacts, a compound's child-pair
//! contacts) merged into the pair's one manifold, in the caller's frame.
//!
//! 1. The deepest sub-manifold's normal (ties within the tolerance to the first in input order).
//! 2. The points of every sub-manifold whose normal is within the merge angle of it (or, for a
//!    body that touches at one place, the chosen one's alone), ids renamed by the caller.
//! 3. Reduced to four ([`reduce_to_four`]); a point within the tolerance of a kept one dropped.

use glam::Vec3;

use crate::contact::clip::reduce_to_four;
use crate::manifold::{ContactPoint, FeatureId, Manifold};

/// One sub-manifold awaiting the merge: its normal and separation (caller's frame, from body A
/// toward body B), its points in the caller's point list from `first` to `end`, and a `tag` the
/// id renaming receives (a triangle, a pair of children).
#[derive(Clone, Copy, Debug)]
pub(crate) struct SubManifold {
    pub(crate) tag: u32,
    pub(crate) normal: Vec3,
    pub(crate) separation: f32,
    pub(crate) first: usize,
    pub(crate) end: usize,
}

/// The merged manifold of `subs` (their points in `points`), or `None` when there are none.
/// Keeps the points of the subs whose normal's cosine with the deepest one's is at least
/// `min_cos` (only the deepest one's when `single`), renamed by `id(tag, point id)`; separation
/// the deepest sub's; `tie_tolerance` in length units. `merged` is scratch. Frame: the caller's.
pub(crate) fn merge_sub_manifolds(
    subs: &[SubManifold],
    points: &[ContactPoint],
    min_cos: f32,
    single: bool,
    tie_tolerance: f32,
    id: impl Fn(u32, FeatureId) -> FeatureId,
    merged: &mut Vec<ContactPoint>,
) -> Option<Manifold> {
    let deepest = subs.iter().map(|c| c.separation).fold(f32::INFINITY, f32::min);
    let chosen = subs
        .iter()
        .position(|c| c.separation <= deepest + tie_tolerance)?;
    let normal = subs[chosen].normal;
    merged.clear();
    for (k, c) in subs.iter().enumerate() {
        if c.normal.dot(normal) < min_cos || (single && k != chosen) {
            continue;
        }
        merged.extend(points[c.first..c.end].iter().map(|p| ContactPoint {
            id: id(c.tag, p.id),
            ..*p
        }));
    }
    let candidate = |i: usize| {
        let p: &ContactPoint = &merged[i];
        Some((p.position.as_vec3(), -p.depth))
    };
    let kept = reduce_to_four(merged.len(), candidate, normal, tie_tolerance);
    let mut manifold = Manifold::new(normal, deepest);
    for &i in kept.indices() {
        let p = merged[i];
        let close = |q: &ContactPoint| (q.position - p.position).length() as f32 <= tie_tolerance;
        if !manifold.points().iter().any(close) {
            manifold.push(p);
        }
    }
    Some(manifold)
}

//! A frame-coherent contact cache for the CPU path: per body pair, what the last full query
//! learned, so the next frames can skip work while the pair's relative pose barely changed.
//!
//! Everything rests on one bound: when B's pose in A's frame moves from a reference pose by a
//! translation `Δt` and a rotation of angle `θ`, the separation along any axis fixed in either
//! body, and the SAT value (the largest separation over all axes), change by at most
//! `δ = |Δt| + θ × reach` (`reach` bounds every vertex's distance from the other body's
//! origin; [`CACHE_ROUNDING`] is added for rounding). Hull and box pairs only (other pairs always run the full query):
//! 1. Separated at the reference pose along a cached axis by `s > margin`: while `s − δ` stays
//!    beyond the margin the pair is apart (`None`) without any geometry; else the axis is
//!    re-measured, and if it still separates the reference moves to now.
//! 2. Penetrating at the reference pose with SAT value `S` (on any axis), hull pairs (a box
//!    pair's cold query is as cheap as this): the face queries run as in a cold call, and when `S + δ` is below both 0 and the best face's choice plus the
//!    face-preference tolerance, no edge pair can win, so the edge query is skipped. The
//!    manifold is then the cold call's: the same axis, normal, points and ids, with
//!    `separation` the best face's value instead of the largest over all axes, which is at most
//!    that plus [`AXIS_PREFERENCE_TOLERANCE`] × the pair's scale (the documented tolerance).
//! 3. Otherwise a cold call, which refreshes the pair's entry.
//!
//! One assumption beyond the bound: the SAT skips nearly parallel edge pairs
//! ([`crate::constants::PARALLEL_EDGE_SINE`]), so `S` can miss a face of the Minkowski difference that such a pair
//! builds; if a later frame turns it into a tested pair deeper than `S + δ`, step 2 keeps the
//! face where a cold call would take that edge pair. The tests (`tests/contact_cache.rs`) have not
//! met it, but nothing here excludes it.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::constants::{AXIS_PREFERENCE_TOLERANCE, pair_scale};
use crate::contact::{collide_shapes, manifold_from_sat};
use crate::hull::ConvexHull;
use crate::manifold::Manifold;
use crate::pose::{Isometry, Pose};
use crate::query::sat::{
    SatAxis, SatResult, edge_pair_separation, face_separation, prefer_faces, query_faces, query_hulls,
};
use crate::query::sat_box_box::query_boxes;
use crate::scene::{Body, InputError};
use crate::shape::Shape;
use crate::{CpuNarrowphase, ValidatedBatch};

/// Rounding allowance of the cache's bounds, relative to the pair's reach (dimensionless; times
/// the reach, a length, it is a length): added to every motion
/// bound and required beyond the margin before a re-measured axis counts as separating (box
/// pairs' cold queries round differently from the hull formulas used here; GJK's distance is
/// within 1e-6 of exact). Larger runs more cold calls; smaller risks a verdict off by rounding.
pub const CACHE_ROUNDING: f32 = 1.0e-5;

/// What the last full query of a pair left for the next frames.
#[derive(Clone, Copy, Debug)]
enum Cached {
    /// Apart along `axis` by `separation` (more than the margin) at the reference pose.
    Separated { axis: SatAxis, separation: f32 },
    /// Overlapping with SAT value `separation` (< 0) at the reference pose.
    Penetrating { separation: f32 },
    /// Nothing to reuse.
    Cold,
}

/// A hasher for body index pairs: a multiplicative mix, far cheaper than the default SipHash
/// (a box pair costs about a microsecond, and keys come from the caller, not from an attacker).
#[derive(Default)]
struct PairHasher(u64);

impl Hasher for PairHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.write_u64(u64::from(byte));
        }
    }

    fn write_u32(&mut self, value: u32) {
        self.write_u64(u64::from(value));
    }

    fn write_u64(&mut self, value: u64) {
        // Fibonacci hashing; the rotation spreads low bits into the high ones the table uses.
        self.0 = (self.0.rotate_left(29) ^ value).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// One pair's entry.
#[derive(Clone, Copy, Debug)]
struct Entry {
    /// The margin it was computed with; another margin invalidates it.
    margin: f32,
    /// B's pose in A's frame when `cached` was measured.
    reference: Isometry,
    cached: Cached,
}

/// How the pairs of the calls so far were answered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Full queries (first sight, other shapes, or the cached facts no longer sufficed).
    pub cold: u64,
    /// Apart by the motion bound alone, no geometry.
    pub skipped: u64,
    /// Apart by re-measuring the cached separating axis.
    pub remeasured: u64,
    /// Contacts built without the edge query.
    pub faces_only: u64,
}

/// Per body pair facts from earlier frames (see the module docs), owned by the caller and
/// keyed by the caller's body indices `[a, b]` (A's index first: the pair `[b, a]` is another
/// entry; [`Self::collide_batch`] keys every pair `[min, max]`, as the batches compute it). One cache per scene; entries of pairs no longer queried stay until [`Self::clear`].
#[derive(Clone, Debug, Default)]
pub struct ContactCache {
    entries: HashMap<[u32; 2], Entry, BuildHasherDefault<PairHasher>>,
    stats: CacheStats,
}

impl ContactCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// Forgets every pair (e.g. after teleporting bodies; not needed for correctness).
    pub fn clear(&mut self) {
        self.entries.clear();
    }

    /// Counts of how the pairs were answered since the cache was made.
    pub fn stats(&self) -> CacheStats {
        self.stats
    }

    /// [`CpuNarrowphase::collide_single_thread`] through the cache: the same input checks and
    /// output, each pair keyed by its body indices in canonical order (`[min, max]`). Manifolds equal a cold call's except
    /// `separation`, within the tolerance of the module docs.
    pub fn collide_batch(
        &mut self,
        narrowphase: &CpuNarrowphase,
        bodies: &[Body],
        pairs: &[[u32; 2]],
        margin: f32,
    ) -> Result<Vec<Option<Manifold>>, InputError> {
        let shapes = narrowphase.shapes();
        // Canonical pair order (lower body index first) as every backend, restored at the end.
        let batch = ValidatedBatch::new_on_this_thread(shapes, bodies, pairs, margin)?;
        let bodies = batch.bodies();
        let mut results: Vec<Option<Manifold>> = batch
            .pairs()
            .iter()
            .map(|&[a, b]| {
                let (body_a, body_b) = (&bodies[a as usize], &bodies[b as usize]);
                self.collide(
                    [a, b],
                    &shapes[body_a.shape as usize],
                    &body_a.pose,
                    &shapes[body_b.shape as usize],
                    &body_b.pose,
                    margin,
                )
            })
            .collect();
        batch.restore_order(&mut results);
        Ok(results)
    }

    /// [`collide_shapes`] for the pair `key` through the cache (same contract, same
    /// unchecked input; see the module docs for what may differ).
    pub fn collide(
        &mut self,
        key: [u32; 2],
        a: &Shape,
        pose_a: &Pose,
        b: &Shape,
        pose_b: &Pose,
        margin: f32,
    ) -> Option<Manifold> {
        let (Some(hull_a), Some(hull_b)) = (polytope(a), polytope(b)) else {
            self.stats.cold += 1;
            return collide_shapes(a, pose_a, b, pose_b, margin);
        };
        let pair = Pair {
            a,
            b,
            hull_a,
            hull_b,
            b_in_a: pose_a.relative_to_self(pose_b),
            margin,
        };
        if let Some(entry) = self.entries.get_mut(&key)
            && entry.margin == margin
        {
            let motion = pair.motion_bound(&entry.reference);
            match entry.cached {
                Cached::Separated { axis, separation } => {
                    if separation - motion > margin + pair.guard() {
                        self.stats.skipped += 1;
                        return None;
                    }
                    if let Some(now) = pair.axis_separation(axis)
                        && now > margin + pair.guard()
                    {
                        self.stats.remeasured += 1;
                        *entry = pair.entry(Cached::Separated {
                            axis,
                            separation: now,
                        });
                        return None;
                    }
                }
                Cached::Penetrating { separation } => {
                    if let Some(manifold) = pair.faces_only(separation + motion, pose_a, pose_b) {
                        self.stats.faces_only += 1;
                        return Some(manifold);
                    }
                }
                Cached::Cold => {}
            }
        }
        self.stats.cold += 1;
        let (manifold, cached) = pair.cold(pose_a, pose_b);
        self.entries.insert(key, pair.entry(cached));
        manifold
    }
}

/// The hull of a hull or box shape.
fn polytope(shape: &Shape) -> Option<&ConvexHull> {
    match shape {
        Shape::Hull(_) | Shape::Cuboid(_) => shape.as_hull(),
        _ => None,
    }
}

/// One hull or box pair this frame.
struct Pair<'s> {
    a: &'s Shape,
    b: &'s Shape,
    hull_a: &'s ConvexHull,
    hull_b: &'s ConvexHull,
    b_in_a: Isometry,
    margin: f32,
}

impl Pair<'_> {
    /// An entry for this frame's pose.
    fn entry(&self, cached: Cached) -> Entry {
        Entry {
            margin: self.margin,
            reference: self.b_in_a,
            cached,
        }
    }

    /// Bound on every vertex's distance from the other body's origin at `reference` and now.
    fn reach(&self, reference: &Isometry) -> f32 {
        self.hull_a.centroid().length()
            + self.hull_a.radius()
            + self.hull_b.centroid().length()
            + self.hull_b.radius()
            + reference
                .translation
                .length()
                .max(self.b_in_a.translation.length())
    }

    /// [`CACHE_ROUNDING`] × the reach, length units.
    fn guard(&self) -> f32 {
        CACHE_ROUNDING * self.reach(&self.b_in_a)
    }

    /// How much any axis's separation, and the SAT value, may have changed since `reference`
    /// (length units; see the module docs).
    fn motion_bound(&self, reference: &Isometry) -> f32 {
        let turn = self.b_in_a.rotation * reference.rotation.conjugate();
        let angle = 2.0 * turn.xyz().length().atan2(turn.w.abs());
        let reach = self.reach(reference);
        let shift = (self.b_in_a.translation - reference.translation).length();
        // 1e-3: relative rounding of the bound itself.
        (shift + angle * reach) * (1.0 + 1.0e-3) + CACHE_ROUNDING * reach
    }

    /// The separation along a cached axis at this frame's pose, as the SAT measures it;
    /// `None` when an edge pair has become parallel.
    fn axis_separation(&self, axis: SatAxis) -> Option<f32> {
        let (a, b) = (self.hull_a, self.hull_b);
        Some(match axis {
            SatAxis::FaceA(face) => face_separation(&a.planes()[face as usize], b, &self.b_in_a.inverse()),
            SatAxis::FaceB(face) => face_separation(&b.planes()[face as usize], a, &self.b_in_a),
            SatAxis::EdgePair { edge_a, edge_b } => {
                edge_pair_separation(a, b, &self.b_in_a, edge_a, edge_b)?.1
            }
        })
    }

    /// The full query: the manifold and what the next frames may reuse.
    fn cold(&self, pose_a: &Pose, pose_b: &Pose) -> (Option<Manifold>, Cached) {
        let sat = match (self.a, self.b) {
            (Shape::Cuboid(a), Shape::Cuboid(b)) => query_boxes(a, b, &self.b_in_a, self.margin),
            _ => query_hulls(self.hull_a, self.hull_b, &self.b_in_a, self.margin),
        };
        let manifold = manifold_from_sat(self.hull_a, pose_a, self.hull_b, pose_b, &sat, self.margin);
        let cached = if sat.is_separated(self.margin) {
            Cached::Separated {
                axis: sat.axis,
                separation: sat.separation,
            }
        } else if sat.separation < 0.0 {
            Cached::Penetrating {
                separation: sat.separation,
            }
        } else {
            Cached::Cold
        };
        (manifold, cached)
    }

    /// Step 2 of the module docs, given `ceiling`, a bound on this frame's SAT value: the face
    /// queries and choice of a cold call, and its manifold, when no edge pair can win; else
    /// `None`.
    fn faces_only(&self, ceiling: f32, pose_a: &Pose, pose_b: &Pose) -> Option<Manifold> {
        let (a, b) = (self.hull_a, self.hull_b);
        if ceiling >= 0.0 {
            return None;
        }
        // Box pairs: the box SAT is as cheap as the face queries; the cold call runs.
        if matches!((self.a, self.b), (Shape::Cuboid(_), Shape::Cuboid(_))) {
            return None;
        }
        let face_a = query_faces(a, b, &self.b_in_a.inverse(), self.margin);
        let face_b = query_faces(b, a, &self.b_in_a, self.margin);
        let normal_a = a.planes()[face_a.face as usize].normal;
        let normal_b = -(self.b_in_a.rotation * b.planes()[face_b.face as usize].normal);
        let tolerance = self.tolerance();
        let sat = prefer_faces((face_a, normal_a), (face_b, normal_b), None, tolerance);
        // An edge pair wins only above the chosen face plus the tolerance; every axis is at
        // most `ceiling`.
        if ceiling >= sat.axis_separation + tolerance {
            return None;
        }
        face_only_manifold(a, pose_a, b, pose_b, sat, ceiling, self.margin)
    }

    /// The face preference tolerance of the SAT, length units.
    fn tolerance(&self) -> f32 {
        AXIS_PREFERENCE_TOLERANCE * pair_scale(self.hull_a.radius(), self.hull_b.radius())
    }
}

/// The manifold on the face axis of `sat` (the face queries' choice, `sat.separation` their
/// best value), computed as a cold call would with its SAT value somewhere up to `ceiling`:
/// passing `ceiling` (above every axis) makes a clip that keeps nothing retry the deepest axis
/// as the cold call does; the manifold's separation is then the faces' best value.
fn face_only_manifold(
    a: &ConvexHull,
    pose_a: &Pose,
    b: &ConvexHull,
    pose_b: &Pose,
    sat: SatResult,
    ceiling: f32,
    margin: f32,
) -> Option<Manifold> {
    let best_face = sat.separation;
    let mut manifold = manifold_from_sat(
        a,
        pose_a,
        b,
        pose_b,
        &SatResult {
            separation: ceiling,
            ..sat
        },
        margin,
    )?;
    manifold.separation = best_face;
    Some(manifold)
}

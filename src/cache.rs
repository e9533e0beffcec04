//! A frame-coherent contact cache for the CPU path: per body pair, what the last full (cold)
//! query learned, so the next frames can skip work while the pair's relative pose barely changed.
//!
//! The bound: B's pose in A's frame moving by `Δt` and a rotation `θ` since the pair's last cold
//! call moves every vertex of B by at most `δ = |Δt| + θ × lever` (plus [`CACHE_ROUNDING`] × the
//! reach), so every gap, the distance and the SAT value change by at most `δ`. Hull and box pairs:
//! 1. Apart by `s > margin`: apart while `s − δ` stays beyond the margin, else re-measured.
//! 2. Penetrating on axis `f`: the manifold is rebuilt on `f` while the pair still penetrates
//!    and no other axis can be deeper by more than [`CACHE_CONTACT_DRIFT`] × the pair's scale.
//! 3. Otherwise a cold call ([`collide_shapes`], bit for bit), which refreshes the entry.
//!
//! One assumption: the SAT skips nearly parallel edge pairs, so it can miss the face of the
//! Minkowski difference such a pair builds. Entries follow the last batch's pair order (a hash
//! index for pairs out of step). The argument in full: docs/design/contact-cache.md.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::OnceLock;

use glam::Vec3;
use rayon::prelude::*;

use crate::constants::{CACHE_CONTACT_DRIFT, CACHE_ROUNDING, pair_scale};
use crate::contact::{
    box_manifold_on_axis, collide_box_box_reporting_sat, collide_hull_hull_reporting_sat, collide_shapes,
    manifold_on_axis,
};
use crate::hull::ConvexHull;
use crate::manifold::Manifold;
use crate::narrowphase::CpuNarrowphase;
use crate::narrowphase::cpu::{PAIRS_PER_TASK, prefetch_bodies_ahead};
use crate::pose::{Isometry, Pose};
use crate::query::sat::{SatAxis, SatResult, edge_pair_separation, face_separation, is_minkowski_face};
use crate::query::sat_box_box::box_axis_separation;
use crate::scene::ValidatedBatch;
use crate::scene::validate::{is_mesh_pair, restore_pair_order};
use crate::scene::{Body, InputError};
use crate::shape::{Cuboid, Shape};

/// What the last cold query of a pair left for the next frames.
#[derive(Clone, Copy, Debug)]
enum Cached {
    /// Bounding spheres apart by `gap` (more than the margin) at the reference pose.
    SpheresApart { gap: f32 },
    /// Apart along `axis` by `separation` (more than the margin) at the reference pose.
    Separated { axis: SatAxis, separation: f32 },
    /// Penetrating with SAT value `separation` (< 0) at the reference pose, the manifold on
    /// `axis`.
    Touching { axis: SatAxis, separation: f32 },
    /// Nothing to reuse.
    Cold,
}

/// A hasher for body index pairs: a multiplicative mix, far cheaper than the default SipHash
/// (keys come from the caller, not from an attacker).
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
    /// The pair, lower body index first.
    key: [u32; 2],
    /// The bodies' shape indices it was computed with; a body given another shape invalidates it.
    shapes: [u32; 2],
    /// The margin it was computed with; another margin invalidates it.
    margin: f32,
    /// B's pose in A's frame at the last cold call.
    reference: Isometry,
    cached: Cached,
    /// How the pair was answered in the batch that kept this entry.
    answered: Answer,
}

/// How one pair of a batch was answered (the [`CacheStats`] counts).
#[derive(Clone, Copy, Debug)]
enum Answer {
    Cold,
    Skipped,
    Remeasured,
    Reused,
}

/// How the pairs of the calls so far were answered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Cold queries (first sight, other shapes, or the cached facts no longer sufficed).
    pub cold: u64,
    /// Apart by the motion bound alone, no geometry.
    pub skipped: u64,
    /// Apart by re-measuring the cached separating axis.
    pub remeasured: u64,
    /// Penetrating contacts rebuilt on their cached axis, without the SAT.
    pub reused: u64,
}

/// Per body pair facts from earlier frames (see the module docs), owned by the caller: one cache
/// per scene, fed the scene's batches frame after frame. An entry is used only with the margin
/// and the bodies' shape indices it was made with, and every entry is dropped when the cache is
/// given another narrowphase (recognized by the address and length of its shape list).
#[derive(Clone, Debug, Default)]
pub struct ContactCache {
    /// The last batch's entries, in its pair order.
    entries: Vec<Entry>,
    /// Address and length of the shape list of the narrowphase the entries were made with.
    shape_list: (usize, usize),
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
    /// output, each pair keyed by its body indices in canonical order (`[min, max]`). Manifolds
    /// equal a cold call's except as the module docs' step 2 allows (docs/design/contact-cache.md).
    pub fn collide_batch(
        &mut self,
        narrowphase: &CpuNarrowphase,
        bodies: &[Body],
        pairs: &[[u32; 2]],
        margin: f32,
    ) -> Result<Vec<Option<Manifold>>, InputError> {
        let shapes = narrowphase.shapes();
        let batch = ValidatedBatch::new_on_this_thread(shapes, bodies, pairs, margin)?;
        let last = self.take_entries(shapes);
        let mut finder = EntryFinder::new(&last);
        let (results, entries): (Vec<_>, Vec<_>) = (0..pairs.len())
            .map(|position| {
                let key = batch.pair(position);
                collide_pair(&batch, position, key, finder.find(key))
            })
            .unzip();
        self.finish(entries);
        Ok(results)
    }

    /// [`Self::collide_batch`] on all threads (rayon), as [`CpuNarrowphase::collide`]: the same
    /// results. Pairs in the last batch's order find their entries by position; the others
    /// through a hash index built once, on first need, by whichever thread needs it.
    pub fn collide_batch_parallel(
        &mut self,
        narrowphase: &CpuNarrowphase,
        bodies: &[Body],
        pairs: &[[u32; 2]],
        margin: f32,
    ) -> Result<Vec<Option<Manifold>>, InputError> {
        let shapes = narrowphase.shapes();
        let batch = ValidatedBatch::new(shapes, bodies, pairs, margin)?;
        let last = self.take_entries(shapes);
        let index = OnceLock::new();
        let find = |position: usize, key: [u32; 2]| match last.get(position) {
            Some(entry) if entry.key == key => Some(entry),
            _ if last.is_empty() => None,
            _ => index.get_or_init(|| index_of(&last)).get(&key).map(|&i| &last[i]),
        };
        let (results, entries): (Vec<_>, Vec<_>) = (0..pairs.len())
            .into_par_iter()
            .with_min_len(PAIRS_PER_TASK)
            .map(|position| {
                let key = batch.pair(position);
                collide_pair(&batch, position, key, find(position, key))
            })
            .unzip();
        self.finish(entries);
        Ok(results)
    }

    /// The last batch's entries when it ran on the shape list `shapes`, else none.
    fn take_entries(&mut self, shapes: &[Shape]) -> Vec<Entry> {
        let shape_list = (shapes.as_ptr() as usize, shapes.len());
        let entries = std::mem::take(&mut self.entries);
        let same = std::mem::replace(&mut self.shape_list, shape_list) == shape_list;
        if same { entries } else { Vec::new() }
    }

    /// Keeps a batch's entries for the next one and counts how its pairs were answered.
    fn finish(&mut self, entries: Vec<Entry>) {
        for entry in &entries {
            match entry.answered {
                Answer::Cold => self.stats.cold += 1,
                Answer::Skipped => self.stats.skipped += 1,
                Answer::Remeasured => self.stats.remeasured += 1,
                Answer::Reused => self.stats.reused += 1,
            }
        }
        self.entries = entries;
    }
}

/// Pair `key` (canonical order), at `position` in the validated batch, through its entry from
/// the last batch: the manifold for the pair as given (swapped where it was given with its
/// higher body index first, as every backend) and the entry to keep.
fn collide_pair(
    batch: &ValidatedBatch,
    position: usize,
    key: [u32; 2],
    entry: Option<&Entry>,
) -> (Option<Manifold>, Entry) {
    let (mut manifold, entry) = collide_canonical_pair(batch, position, key, entry);
    let shape = |body: u32| &batch.shapes()[batch.given_bodies()[body as usize].shape as usize];
    let mesh_pair = is_mesh_pair(shape(key[0]), shape(key[1]));
    restore_pair_order(batch.given_pairs()[position], mesh_pair, &mut manifold);
    (manifold, entry)
}

/// [`collide_pair`]'s manifold for `key` as it is, normal from `key[0]` to `key[1]`. The
/// entry is used only when made with the same margin and the same shapes.
#[inline(always)]
fn collide_canonical_pair(
    batch: &ValidatedBatch,
    position: usize,
    key: [u32; 2],
    entry: Option<&Entry>,
) -> (Option<Manifold>, Entry) {
    let (shapes, bodies, margin) = (batch.shapes(), batch.given_bodies(), batch.margin());
    prefetch_bodies_ahead(bodies, batch.given_pairs(), position);
    let (body_a, body_b) = (batch.body(key[0] as usize), batch.body(key[1] as usize));
    let pair = Pair::new(
        &shapes[body_a.shape as usize],
        &body_a.pose,
        &shapes[body_b.shape as usize],
        &body_b.pose,
        margin,
    );
    let shape_indices = [body_a.shape, body_b.shape];
    let entry = entry.filter(|entry| entry.margin == margin && entry.shapes == shape_indices);
    let Some(polytopes) = &pair.polytopes else {
        let manifold = collide_shapes(pair.a, pair.pose_a, pair.b, pair.pose_b, margin);
        return (
            manifold,
            pair.entry(key, shape_indices, Cached::Cold, Answer::Cold),
        );
    };
    if let Some(entry) = entry {
        let motion = polytopes.motion_bound(&entry.reference);
        let beyond_margin = margin + polytopes.guard();
        let kept = Entry {
            answered: Answer::Skipped,
            ..*entry
        };
        match entry.cached {
            Cached::SpheresApart { gap } if gap - motion > beyond_margin => return (None, kept),
            Cached::Separated { separation, .. } if separation - motion > beyond_margin => {
                return (None, kept);
            }
            Cached::Separated { axis, .. } => {
                if let Some((_, now)) = polytopes.axis_now(axis)
                    && now > beyond_margin
                {
                    let cached = Cached::Separated {
                        axis,
                        separation: now,
                    };
                    return (None, pair.entry(key, shape_indices, cached, Answer::Remeasured));
                }
            }
            Cached::Touching { axis, separation } => {
                if let Some(manifold) = polytopes.rebuild_on_axis(&pair, axis, separation + motion) {
                    let kept = Entry {
                        answered: Answer::Reused,
                        ..*entry
                    };
                    return (Some(manifold), kept);
                }
            }
            Cached::SpheresApart { .. } | Cached::Cold => {}
        }
    }
    let (manifold, cached) = polytopes.cold(&pair);
    (manifold, pair.entry(key, shape_indices, cached, Answer::Cold))
}

/// The position of every entry of `last` by its key.
fn index_of(last: &[Entry]) -> PairIndex {
    last.iter().enumerate().map(|(i, entry)| (entry.key, i)).collect()
}

/// Entry positions by pair key.
type PairIndex = HashMap<[u32; 2], usize, BuildHasherDefault<PairHasher>>;

/// Finds the last batch's entry of a pair: by position while the pairs come in the last batch's
/// order, else through a hash index of the last batch, built on first need.
struct EntryFinder<'e> {
    last: &'e [Entry],
    /// Position in `last` where the next pair is looked for first.
    next: usize,
    index: Option<PairIndex>,
}

impl<'e> EntryFinder<'e> {
    fn new(last: &'e [Entry]) -> Self {
        EntryFinder {
            last,
            next: 0,
            index: None,
        }
    }

    fn find(&mut self, key: [u32; 2]) -> Option<&'e Entry> {
        let position = match self.last.get(self.next) {
            Some(entry) if entry.key == key => self.next,
            _ if self.last.is_empty() => return None,
            _ => {
                let last = self.last;
                *self.index.get_or_insert_with(|| index_of(last)).get(&key)?
            }
        };
        self.next = position + 1;
        Some(&self.last[position])
    }
}

/// One pair this frame.
struct Pair<'s> {
    a: &'s Shape,
    pose_a: &'s Pose,
    b: &'s Shape,
    pose_b: &'s Pose,
    margin: f32,
    /// Set for hull and box pairs, the ones the cache serves.
    polytopes: Option<Polytopes<'s>>,
}

impl<'s> Pair<'s> {
    fn new(a: &'s Shape, pose_a: &'s Pose, b: &'s Shape, pose_b: &'s Pose, margin: f32) -> Self {
        let polytopes = match (polytope(a), polytope(b)) {
            (Some(hull_a), Some(hull_b)) => Some(Polytopes {
                hull_a,
                hull_b,
                boxes: match (a, b) {
                    (Shape::Cuboid(a), Shape::Cuboid(b)) => Some((a, b)),
                    _ => None,
                },
                b_in_a: pose_a.relative_to_self(pose_b),
            }),
            _ => None,
        };
        Pair {
            a,
            pose_a,
            b,
            pose_b,
            margin,
            polytopes,
        }
    }

    /// An entry whose reference is this frame's pose.
    fn entry(&self, key: [u32; 2], shapes: [u32; 2], cached: Cached, answered: Answer) -> Entry {
        Entry {
            key,
            shapes,
            margin: self.margin,
            reference: self.polytopes.as_ref().map_or(Isometry::IDENTITY, |p| p.b_in_a),
            cached,
            answered,
        }
    }
}

/// The hull of a hull, box or cylinder (its prism) shape.
fn polytope(shape: &Shape) -> Option<&ConvexHull> {
    match shape {
        Shape::Hull(_) | Shape::Cuboid(_) | Shape::Cylinder(_) => shape.as_hull(),
        _ => None,
    }
}

/// The hulls of a hull or box pair, B posed in A's frame.
struct Polytopes<'s> {
    hull_a: &'s ConvexHull,
    hull_b: &'s ConvexHull,
    /// Both shapes when they are boxes, whose axes the box SAT measures in closed form.
    boxes: Option<(&'s Cuboid, &'s Cuboid)>,
    b_in_a: Isometry,
}

impl Polytopes<'_> {
    /// Bound on B's vertices' distance from B's origin, length units.
    fn lever(&self) -> f32 {
        self.hull_b.centroid().length() + self.hull_b.radius()
    }

    /// Bound on every vertex's distance from A's origin at `reference` and now: the scale of
    /// the coordinates whose rounding the cache allows for.
    fn reach(&self, reference: &Isometry) -> f32 {
        self.hull_a.centroid().length()
            + self.hull_a.radius()
            + self.lever()
            + reference
                .translation
                .length()
                .max(self.b_in_a.translation.length())
    }

    /// [`CACHE_ROUNDING`] × the reach, length units.
    fn guard(&self) -> f32 {
        CACHE_ROUNDING * self.reach(&self.b_in_a)
    }

    /// How far any vertex of B moved in A's frame since `reference`, so how much the gap along
    /// any direction fixed in A's frame, the distance and the SAT value may have changed, plus
    /// the rounding allowance (length units; see the module docs).
    fn motion_bound(&self, reference: &Isometry) -> f32 {
        let turn = self.b_in_a.rotation * reference.rotation.conjugate();
        // The turn's angle θ = 2 atan(|xyz| / |w|) ≤ 2 |xyz| / |w|; past a quarter turn
        // (|w| < 0.7) the bound is kept from growing without limit by θ ≤ π.
        let (sine, cosine) = (turn.xyz().length(), turn.w.abs());
        let angle = if cosine > 0.7 {
            2.0 * sine / cosine
        } else {
            std::f32::consts::PI
        };
        let shift = (self.b_in_a.translation - reference.translation).length();
        // 1e-3: relative rounding of the bound itself.
        (shift + angle * self.lever()) * (1.0 + 1.0e-3) + CACHE_ROUNDING * self.reach(reference)
    }

    /// A cached axis at this frame's pose, as the SAT forms it: its unit normal (A's frame,
    /// from A toward B) and the separation along it; `None` when an edge pair has become
    /// parallel.
    fn axis_now(&self, axis: SatAxis) -> Option<(Vec3, f32)> {
        if let Some((a, b)) = self.boxes {
            return box_axis_separation(a, b, &self.b_in_a, axis);
        }
        let (a, b) = (self.hull_a, self.hull_b);
        Some(match axis {
            SatAxis::FaceA(face) => {
                let plane = &a.planes()[face as usize];
                (plane.normal, face_separation(plane, b, &self.b_in_a.inverse()))
            }
            SatAxis::FaceB(face) => {
                let plane = &b.planes()[face as usize];
                let normal = -(self.b_in_a.rotation * plane.normal);
                (normal, face_separation(plane, a, &self.b_in_a))
            }
            SatAxis::EdgePair { edge_a, edge_b } => edge_pair_separation(a, b, &self.b_in_a, edge_a, edge_b)?,
        })
    }

    /// The cold query: [`collide_shapes`]'s manifold and what the next frames may reuse.
    fn cold(&self, pair: &Pair) -> (Option<Manifold>, Cached) {
        let margin = pair.margin;
        let sat = match (pair.a, pair.b) {
            (Shape::Cuboid(a), Shape::Cuboid(b)) => {
                collide_box_box_reporting_sat(a, pair.pose_a, b, &self.b_in_a, margin)
            }
            _ => {
                let (manifold, sat) = collide_hull_hull_reporting_sat(
                    self.hull_a,
                    pair.pose_a,
                    self.hull_b,
                    &self.b_in_a,
                    margin,
                );
                let Some(sat) = sat else {
                    return (manifold, self.spheres_apart());
                };
                (manifold, sat)
            }
        };
        let (manifold, sat) = sat;
        let cached = if sat.is_separated(margin) {
            Cached::Separated {
                axis: sat.axis,
                separation: sat.separation,
            }
        } else if sat.separation < 0.0 {
            Cached::Touching {
                axis: sat.axis,
                separation: sat.separation,
            }
        } else {
            Cached::Cold
        };
        (manifold, cached)
    }

    /// The bounding spheres' gap (length units) for a pair whose cold call stopped at them.
    fn spheres_apart(&self) -> Cached {
        let (a, b) = (self.hull_a, self.hull_b);
        let centres = (self.b_in_a.transform_point(b.centroid()) - a.centroid()).length();
        Cached::SpheresApart {
            gap: centres - a.radius() - b.radius(),
        }
    }

    /// Step 2 of the module docs, given `ceiling`, a bound on this frame's SAT value: the
    /// manifold on cached `axis` at this frame's pose when the pair surely still penetrates,
    /// `ceiling` is within [`CACHE_CONTACT_DRIFT`] × scale of the axis's separation and an edge
    /// pair still passes the SAT's Gauss-map test; else `None` (the cold call decides).
    fn rebuild_on_axis(&self, pair: &Pair, axis: SatAxis, ceiling: f32) -> Option<Manifold> {
        let (a, b) = (self.hull_a, self.hull_b);
        if ceiling >= 0.0 {
            return None;
        }
        if let SatAxis::EdgePair { edge_a, edge_b } = axis
            && !self.edges_form_minkowski_face(edge_a, edge_b)
        {
            return None;
        }
        let (normal, separation) = self.axis_now(axis)?;
        if ceiling - separation > CACHE_CONTACT_DRIFT * pair_scale(a.radius(), b.radius()) {
            return None;
        }
        let sat = SatResult {
            axis,
            normal,
            axis_separation: separation,
            separation,
        };
        match (pair.a, pair.b) {
            (Shape::Cuboid(box_a), Shape::Cuboid(box_b)) => {
                box_manifold_on_axis(box_a, pair.pose_a, box_b, &self.b_in_a, &sat, pair.margin)
            }
            _ => manifold_on_axis(a, pair.pose_a, b, &self.b_in_a, &sat, pair.margin),
        }
    }

    /// The SAT's Gauss-map test ([`is_minkowski_face`]) of edge `edge_a` of A against edge
    /// `edge_b` of B at this frame's pose: A's edge by its two face normals, B's by its two
    /// face normals negated, in A's frame.
    fn edges_form_minkowski_face(&self, edge_a: u32, edge_b: u32) -> bool {
        let (a, b) = (self.hull_a, self.hull_b);
        let faces_a = a.edges()[edge_a as usize].faces;
        let faces_b = b.edges()[edge_b as usize].faces;
        let normal_a = |side: usize| a.planes()[faces_a[side] as usize].normal;
        let normal_b = |side: usize| -(self.b_in_a.rotation * b.planes()[faces_b[side] as usize].normal);
        let (na0, na1, nb0, nb1) = (normal_a(0), normal_a(1), normal_b(0), normal_b(1));
        is_minkowski_face(na0, na1, na1.cross(na0), nb0, nb1, nb1.cross(nb0))
    }
}

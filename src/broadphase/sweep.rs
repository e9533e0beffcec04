//! The CPU broadphase: sweep and prune over the bodies' world AABBs, tile by tile, on all
//! threads. Beyond the pairs themselves it holds each tile's members and pairs packed into bits
//! ([`MemberList`], [`PlacePairs`]: about a third of the pairs' size at 1M mixed bodies) and
//! each thread's tile; never a box per body of the whole scene.
//!
//! 1. Set the half-spaces aside. Bound each other body's box without computing it: a ball
//!    around the body's position that its shape's box cannot leave ([`box_reach`]), grown for
//!    rounding ([`conservative_box`]).
//! 2. Cut the scene into tiles ([`Tiles`]: about [`BODIES_PER_TILE`] bodies each) and list each
//!    tile's members, the bodies whose bounding ball reaches it, on all threads, and pack each
//!    tile's list.
//! 3. Sweep each tile on its own ([`Sweep::sweep_tile`]), tiles in parallel: compute its
//!    members' world AABBs ([`world_aabb`]), keep those that reach the tile, sort them by their
//!    lower bound on the axis along which the bodies vary most, cut the tile into cells across
//!    the two other axes ([`Cells`]); in each cell, walk the boxes after each box while their
//!    lower bound is within its reach (upper bound plus the margin), and keep those within the
//!    margin along the other two axes too. A pair counts in one tile and one cell only, those
//!    holding the larger of the two boxes' lower corners. Each half-space is paired, in the
//!    tile holding a body's lower corner, with the body whose box comes within the margin of
//!    its plane. Two static shapes (triangle meshes, half-spaces) are never paired (the batch
//!    refuses them). A tile keeps its pairs as places in its members, counted as they come
//!    (past a limit, [`candidate_pairs_at_most`], every tile stops), packs them, and counts them
//!    by bucket: the high bits of the pair's first body.
//! 4. Allocate the list once, at its length, bucket after bucket, and write each tile's pairs
//!    into its part of each bucket as body indices `[min, max]`.
//! 5. Sort each bucket, so the output is sorted and does not depend on threads.

use std::sync::atomic::{AtomicUsize, Ordering};

use glam::{DVec3, Quat, Vec3, Vec4};
use rayon::prelude::*;

use crate::scene::Body;

use super::grid::{BODIES_PER_TILE, Cells, Tiles};
use super::packed::{BitWriter, MemberList, PlacePairs};
use crate::constants::COMPOUND_AABB_PADDING;
use crate::parallel::{SharedPtr, prefetch};
use crate::scene::validate::never_paired;
use crate::shape::{Aabb, Shape, world_aabb};

/// All pairs of bodies that may be within `margin` (length units, >= 0) of each other: bounded
/// bodies whose world AABBs are within `margin` on every axis ([`Aabb::overlaps`]), and each
/// half-space with every bounded body whose AABB reaches within `margin` of its plane (two
/// static shapes, half-spaces or triangle meshes, are never paired). Each pair is `[a, b]` with `a < b`; the list is sorted.
///
/// Expects checked input (see [`crate::scene::validate_batch`]): existing shape indices, finite
/// unit poses, finite non-negative margin. Runs in parallel; the result does not depend on the
/// number of threads. Unbounded: N bodies at one place give N(N-1)/2 pairs; use
/// [`candidate_pairs_at_most`] for input from outside.
pub fn candidate_pairs(shapes: &[Shape], bodies: &[Body], margin: f32) -> Vec<[u32; 2]> {
    match candidate_pairs_at_most(shapes, bodies, margin, usize::MAX) {
        Ok(pairs) => pairs,
        Err(err) => unreachable!("{err}: no list exceeds usize::MAX pairs"),
    }
}

/// Default for the `max_pairs` of [`candidate_pairs_at_most`] in the command line: ten million
/// pairs, about 1.1 GB of pairs and results (8 bytes per pair, ~104 per result).
pub const DEFAULT_MAX_CANDIDATE_PAIRS: usize = 10_000_000;

/// The broadphase would list more than the allowed number of candidate pairs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the broadphase finds more than {limit} candidate pairs (the sweep bounds them at {bound})")]
pub struct TooManyPairs {
    /// The limit that was exceeded.
    pub limit: usize,
    /// An upper bound on the number of pairs, found without listing them: the sum of the sweep
    /// windows of every tile's cells (exact when every box overlaps every other in one cell)
    /// plus half-spaces times bounded bodies.
    pub bound: usize,
}

/// [`candidate_pairs`], refusing to list more than `max_pairs` pairs. The pairs are counted
/// before any is stored, stopping as soon as the count passes `max_pairs`, so memory stays
/// proportional to the bodies plus `max_pairs` however close together the bodies are.
///
/// # Errors
/// [`TooManyPairs`] when there are more than `max_pairs` pairs.
pub fn candidate_pairs_at_most(
    shapes: &[Shape],
    bodies: &[Body],
    margin: f32,
    max_pairs: usize,
) -> Result<Vec<[u32; 2]>, TooManyPairs> {
    pairs_tile_by_tile(shapes, bodies, margin, max_pairs, BODIES_PER_TILE)
}

/// [`candidate_pairs_at_most`] with tiles of about `per_tile` bodies.
fn pairs_tile_by_tile(
    shapes: &[Shape],
    bodies: &[Body],
    margin: f32,
    max_pairs: usize,
    per_tile: usize,
) -> Result<Vec<[u32; 2]>, TooManyPairs> {
    // Steps 1 and 2.
    let sweep = Sweep::new(shapes, bodies, margin, per_tile);

    // Step 3: each tile's pairs, kept compact, counted as they come; every tile stops
    // once the count passes the limit.
    let counted = AtomicUsize::new(0);
    let tiles: Vec<Option<TileList>> = (0..sweep.tiles.count())
        .into_par_iter()
        .map_init(TileScratch::default, |scratch, tile| {
            sweep.tile_pairs(tile, scratch, &counted, max_pairs)
        })
        .collect();
    let total = tiles.iter().try_fold(0usize, |sum, list| {
        list.as_ref().map(|list| sum.saturating_add(list.pairs.len()))
    });
    let total = match total {
        Some(total) if total <= max_pairs => total,
        _ => {
            drop(tiles);
            return Err(TooManyPairs {
                limit: max_pairs,
                bound: sweep.bound(),
            });
        }
    };

    // Step 4: the list, allocated once; each tile writes its own part of each bucket, as body
    // indices. Each tile's count in a bucket becomes where its part there starts.
    let mut lists: Vec<TileList> = tiles.into_iter().flatten().collect();
    let mut bucket_ends = Vec::with_capacity(sweep.buckets());
    let mut next = 0;
    for bucket in 0..sweep.buckets() {
        for list in &mut lists {
            (list.per_bucket[bucket], next) = (next, next + list.per_bucket[bucket]);
        }
        bucket_ends.push(next);
    }
    let mut pairs = vec![[0u32; 2]; total];
    let out = SharedPtr(pairs.as_mut_ptr());
    lists
        .into_par_iter()
        .enumerate()
        .for_each_init(Vec::new, |members, (t, mut list)| {
            sweep.members[t].unpack_into(members);
            list.pairs.for_each(|a, b| {
                let pair = sweep.bodies_at(members, [a, b]);
                let at = &mut list.per_bucket[sweep.bucket(pair)];
                assert!(*at < total, "step 3 counted every pair of each bucket");
                // SAFETY: `at` runs over this tile's own part of the bucket (the pairs decode as
                // step 3 found and counted them: packing is lossless), disjoint from every
                // other tile's and every other bucket's and below `total`, the length of
                // `pairs`, which nothing reads until every tile is done.
                unsafe { out.get().add(*at).write(pair) };
                *at += 1;
            });
        });

    // Step 5: each bucket sorted.
    let mut buckets = Vec::with_capacity(bucket_ends.len());
    let (mut rest, mut start) = (pairs.as_mut_slice(), 0);
    for end in bucket_ends {
        let (bucket, tail) = rest.split_at_mut(end - start);
        buckets.push(bucket);
        (rest, start) = (tail, end);
    }
    buckets
        .into_par_iter()
        .for_each_init(BucketScratch::default, |scratch, bucket| {
            sort_bucket(bucket, sweep.bucket_shift, scratch)
        });
    Ok(pairs)
}

/// Most pairs a bucket sorts by counting (step 5): 512 KB of pairs a thread, beside a count per
/// first body of a bucket (16 KB at 1M bodies).
const COUNTED_BUCKET: usize = 1 << 16;

/// What step 5 reuses from bucket to bucket: a count per first body, the pairs in their order.
#[derive(Default)]
struct BucketScratch {
    counts: Vec<u32>,
    sorted: Vec<[u32; 2]>,
}

/// Sorts a bucket's pairs, whose first bodies agree but in their low `shift` bits: by first
/// body with a counting sort, then each first body's pairs by second body. A bucket of more than
/// [`COUNTED_BUCKET`] pairs is sorted by comparisons, on all threads, in place; one of fewer
/// pairs than an eighth of its first bodies too (counting would cost more than it spares).
fn sort_bucket(bucket: &mut [[u32; 2]], shift: u32, scratch: &mut BucketScratch) {
    let key = |&[a, b]: &[u32; 2]| u64::from(a) << 32 | u64::from(b);
    if bucket.len() > COUNTED_BUCKET {
        bucket.par_sort_unstable_by_key(key);
        return;
    }
    if bucket.len() < (1 << shift) / 8 {
        bucket.sort_unstable_by_key(key);
        return;
    }
    let low = |a: u32| (a & ((1 << shift) - 1)) as usize;
    let BucketScratch { counts, sorted } = scratch;
    counts.clear();
    counts.resize((1 << shift) + 1, 0);
    for &[a, _] in bucket.iter() {
        counts[low(a) + 1] += 1;
    }
    for i in 0..1 << shift {
        counts[i + 1] += counts[i];
    }
    sorted.clear();
    sorted.resize(bucket.len(), [0; 2]);
    for &pair in bucket.iter() {
        let next = &mut counts[low(pair[0])];
        sorted[*next as usize] = pair;
        *next += 1;
    }
    bucket.copy_from_slice(sorted);
    // `counts[i]` now ends the pairs of low bits `i`, all of one first body.
    let mut start = 0;
    for &end in &counts[..1 << shift] {
        let end = end as usize;
        if end - start > 1 {
            bucket[start..end].sort_unstable_by_key(|&[_, b]| b);
        }
        start = end;
    }
}

/// How far from a body's origin its shape's world AABB ([`world_aabb`]) reaches at any unit
/// rotation, and the longest vector the body's rotation turns on the way (both length units,
/// before rounding). The first is the bounding ball's radius, plus for a compound its box's
/// padding ([`COMPOUND_AABB_PADDING`] of each child's reach from the compound's origin, which a
/// child far from its own origin makes large against the ball) taken twice, the second time for
/// the f32 rounding of those far child coordinates. The second is the ball's radius, for a
/// compound that largest child reach.
fn box_reach(shape: &Shape) -> (f32, f32) {
    let ball = shape.bounding_radius();
    match shape {
        Shape::Compound(compound) => {
            let lever = compound
                .children()
                .iter()
                .map(|child| child.pose.translation.length() + child.shape.bounding_radius())
                .fold(ball, f32::max);
            (ball + lever * (2.0 * COMPOUND_AABB_PADDING), lever)
        }
        _ => (ball, ball),
    }
}

/// A box holding a bounded body's world AABB ([`world_aabb`]) with its upper side grown by
/// `margin`, found without computing the AABB: a ball of radius `reach` around the body's
/// origin `position` (with `lever`: [`box_reach`]), grown by a thousandth of the radius and a
/// millionth of the position for the rounding of the radius, the f32 rotations and the AABB's
/// outward rounding to f32 (each a few parts in 1e7), and by what a rotation `q` off unit
/// length (by up to the validated 1e-3) adds: it scales each turned vector by at most
/// `1 + 2 ||q|^2 - 1|`, so twice that of the lever is taken.
fn conservative_box(
    position: DVec3,
    rotation: Quat,
    (reach, lever): (f32, f32),
    margin: f32,
) -> (Vec3, Vec3) {
    let off_unit = (f64::from(rotation.length_squared()) - 1.0).abs();
    let grown = f64::from(reach) * (1.0 + 1e-3) + f64::from(lever) * 4.0 * off_unit;
    let grown = DVec3::splat(grown) + position.abs() * 1e-6;
    (
        (position - grown).as_vec3(),
        (position + grown + f64::from(margin)).as_vec3(),
    )
}

/// Bits of a pair's first body that choose its bucket in steps 3 to 5: 256 buckets, each sorted
/// on its own by counting ([`sort_bucket`]). At 1M demo bodies, about 5,400 pairs a bucket,
/// sorted in 6 ms on two threads (a comparison sort of the whole list takes 20).
const BUCKET_BITS: u32 = 8;

/// Members ahead of the one being boxed whose body step 3 asks the memory for.
const PREFETCH_AHEAD: usize = 16;

/// What the sweep of step 3 reads of a box, as the one whose window is walked and as one in
/// another's window.
#[derive(Clone, Copy, Debug, Default)]
struct SweepEntry {
    /// `(max_u + margin, max_v + margin, -min_u, -min_v)` on the two cross axes.
    key: Vec4,
    /// Lower bound on the sweep axis.
    lower: f32,
    /// Upper bound on the sweep axis plus the margin: the end of its window.
    reach: f32,
    /// The body.
    body: u32,
    /// Its place in the tile's members.
    place: u32,
}

impl SweepEntry {
    /// The lower bound's bits, in the order [`f32::total_cmp`] gives the bounds.
    #[inline]
    fn lower_key(&self) -> u32 {
        let bits = self.lower.to_bits();
        if bits >> 31 == 1 { !bits } else { bits | 1 << 31 }
    }

    /// `[min_u, max_u + margin, min_v, max_v + margin]`, as [`Cells`] reads a box.
    fn cross(&self) -> [f32; 4] {
        [-self.key.z, self.key.x, -self.key.w, self.key.y]
    }
}

/// Sorts a tile's `entries`, gathered in body order, into the sweep order: by lower bound, then
/// by body. Each entry's key (its bound's bits, then its index) is radix sorted on the bound's
/// bytes, lowest first, each pass stable (so one bound's bodies stay in body order; a byte every
/// bound shares takes no pass), then the entries are moved once, cycle by cycle, to their keys'
/// places. `keys` and `spare` are room for the keys (8 bytes an entry each, where sorting the
/// entries through a spare would take 32).
fn into_sweep_order(entries: &mut [SweepEntry], (keys, spare): (&mut Vec<u64>, &mut Vec<u64>)) {
    let n = entries.len();
    let mut counts = [[0u32; 256]; 4];
    keys.clear();
    keys.extend(entries.iter().enumerate().map(|(i, entry)| {
        let bound = entry.lower_key();
        for (byte, count) in counts.iter_mut().enumerate() {
            count[(bound >> (8 * byte)) as usize & 255] += 1;
        }
        u64::from(bound) << 32 | i as u64
    }));
    let Some(&first) = keys.first() else {
        return;
    };
    spare.resize(n, 0);
    // Each pass moves the keys from one of the two to the other.
    let mut in_spare = false;
    for (byte, count) in counts.iter_mut().enumerate() {
        let digit = |key: u64| (key >> (32 + 8 * byte)) as usize & 255;
        if count[digit(first)] as usize == n {
            continue;
        }
        // Each digit's first place, then each key at its digit's next place.
        let mut sum = 0;
        for c in count.iter_mut() {
            (*c, sum) = (sum, sum + *c);
        }
        let (from, to) = if in_spare {
            (&*spare, &mut *keys)
        } else {
            (&*keys, &mut *spare)
        };
        for &key in from {
            let next = &mut count[digit(key)];
            to[*next as usize] = key;
            *next += 1;
        }
        in_spare = !in_spare;
    }
    let order = if in_spare { spare } else { keys };
    // The entry for place `i` is at `order[i]`'s index; a place filled gets its own index.
    let source = |order: &[u64], i: usize| order[i] as u32 as usize;
    for start in 0..n {
        let mut from = source(order, start);
        if from == start {
            continue;
        }
        let held = entries[start];
        let mut at = start;
        while from != start {
            entries[at] = entries[from];
            order[at] = at as u64;
            at = from;
            from = source(order, at);
        }
        entries[at] = held;
        order[at] = at as u64;
    }
}

/// What one thread's tile sweeps reuse from tile to tile.
#[derive(Default)]
struct TileScratch {
    /// The tile's boxes, sorted by their lower bound on the sweep axis.
    entries: Vec<SweepEntry>,
    /// Room for the boxes' keys while they are sorted.
    keys: Vec<u64>,
    spare: Vec<u64>,
    /// Cell `c`'s boxes are `copies[starts[c]..starts[c + 1]]`.
    starts: Vec<u32>,
    /// Indices into `entries`, cell by cell, each cell in sweep order.
    copies: Vec<u32>,
    /// The tile's members, unpacked.
    members: Vec<u32>,
    /// The tile's pairs as they are found, each `[a, b]` with place `a < b`.
    pairs: Vec<[u32; 2]>,
    /// What packing the pairs uses ([`PlacePairs::pack`]).
    counts: Vec<usize>,
    grouped: Vec<[u32; 2]>,
    writer: BitWriter,
}

/// One tile's pairs until the list is allocated, and how many of them fall in each bucket.
struct TileList {
    pairs: PlacePairs,
    per_bucket: Box<[usize]>,
}

/// The scene as the sweep reads it (steps 1 and 2).
struct Sweep<'a> {
    shapes: &'a [Shape],
    bodies: &'a [Body],
    /// Length units, >= 0.
    margin: f32,
    /// Each half-space as (body, world normal, world offset).
    half_spaces: Vec<(u32, Vec3, f32)>,
    /// Number of bounded bodies (every body but the half-spaces).
    bounded: usize,
    /// Whether a shape is a triangle mesh: only then may two bounded bodies be refused.
    meshes: bool,
    /// The sweep axis (along which the bodies vary most), then the two cross axes.
    axes: [usize; 3],
    tiles: Tiles,
    /// Tile `t`'s members, the bodies whose [`conservative_box`] reaches it, in body order.
    members: Vec<MemberList>,
    /// A pair's bucket is its first body shifted right by this.
    bucket_shift: u32,
}

impl<'a> Sweep<'a> {
    /// The scene cut into tiles of about `per_tile` bodies.
    fn new(shapes: &'a [Shape], bodies: &'a [Body], margin: f32, per_tile: usize) -> Sweep<'a> {
        // Step 1: the half-spaces aside; each bounded body's conservative box.
        let reach: Vec<(f32, f32)> = shapes.iter().map(box_reach).collect();
        let bounded = |body: &Body| !matches!(shapes[body.shape as usize], Shape::HalfSpace(_));
        let conservative = |body: &Body| {
            conservative_box(
                body.pose.translation,
                body.pose.rotation,
                reach[body.shape as usize],
                margin,
            )
        };
        // A pass over the bodies only when a shape is a half-space.
        let half_spaces: Vec<(u32, Vec3, f32)> =
            if shapes.iter().any(|shape| matches!(shape, Shape::HalfSpace(_))) {
                bodies
                    .par_iter()
                    .enumerate()
                    .filter_map(|(i, body)| match &shapes[body.shape as usize] {
                        Shape::HalfSpace(half_space) => {
                            let normal = body.pose.transform_vector(half_space.normal);
                            let offset =
                                f64::from(half_space.offset) + normal.as_dvec3().dot(body.pose.translation);
                            Some((i as u32, normal, offset as f32))
                        }
                        _ => None,
                    })
                    .collect()
            } else {
                Vec::new()
            };
        let stats = bodies
            .par_iter()
            .fold(SceneStats::default, |mut stats, body| {
                if bounded(body) {
                    stats.add(body.pose.translation, conservative(body));
                }
                stats
            })
            .reduce(SceneStats::default, SceneStats::merge);

        // Step 2: the tiles and their members, listed on all threads: runs of the bodies count
        // their memberships per tile (also how the tiles are sized), the counts give each run
        // its places in each tile (runs in order, so a tile lists its members in body order),
        // and each run writes them there.
        let runs = (rayon::current_num_threads() * 2).min(bodies.len()).max(1);
        let run_len = bodies.len().div_ceil(runs).max(1);
        let mut places: Vec<Vec<usize>> = Vec::new();
        let tiles = Tiles::new(
            (stats.lo, stats.hi),
            stats.mean_width(),
            (stats.count, per_tile),
            |tiles| {
                places = bodies
                    .par_chunks(run_len)
                    .map(|run| {
                        let mut counts = vec![0usize; tiles.count()];
                        for body in run.iter().filter(|body| bounded(body)) {
                            let (lo, hi) = conservative(body);
                            tiles.for_each_tile(lo, hi, |t| counts[t] += 1);
                        }
                        counts
                    })
                    .collect();
                places.iter().flatten().sum()
            },
        );
        let mut starts = Vec::with_capacity(tiles.count() + 1);
        let mut total = 0;
        for t in 0..tiles.count() {
            starts.push(total);
            for run in &mut places {
                (run[t], total) = (total, total + run[t]);
            }
        }
        starts.push(total);
        let mut members = vec![0u32; total];
        let out = SharedPtr(members.as_mut_ptr());
        bodies
            .par_chunks(run_len)
            .enumerate()
            .zip(places.par_iter_mut())
            .for_each(|((r, run), next)| {
                for (i, body) in run.iter().enumerate().filter(|(_, body)| bounded(body)) {
                    let (lo, hi) = conservative(body);
                    tiles.for_each_tile(lo, hi, |t| {
                        // SAFETY: `next[t]` runs over this run's own places in tile `t`, disjoint
                        // from every other run's and below `total`, the length of `members`,
                        // which nothing reads until every run is done.
                        unsafe { out.get().add(next[t]).write((r * run_len + i) as u32) };
                        next[t] += 1;
                    });
                }
            });
        let members = (0..tiles.count())
            .into_par_iter()
            .map_init(BitWriter::default, |writer, t| {
                MemberList::pack(&members[starts[t]..starts[t + 1]], writer)
            })
            .collect();

        Sweep {
            shapes,
            bodies,
            margin,
            half_spaces,
            bounded: stats.count,
            meshes: shapes.iter().any(|s| matches!(s, Shape::TriMesh(_))),
            axes: stats.axes_by_variance(),
            tiles,
            members,
            bucket_shift: (usize::BITS - bodies.len().saturating_sub(1).leading_zeros())
                .saturating_sub(BUCKET_BITS),
        }
    }

    /// Number of buckets (steps 3 to 5).
    fn buckets(&self) -> usize {
        (self.bodies.len().saturating_sub(1) >> self.bucket_shift) + 1
    }

    /// The bucket of `pair`, `[first, second]` bodies.
    #[inline]
    fn bucket(&self, [first, _]: [u32; 2]) -> usize {
        (first >> self.bucket_shift) as usize
    }

    /// The bodies `[first, second]` at places `[a, b]` of a tile whose `members` are unpacked:
    /// its member at each place, or past the members a half-space.
    #[inline]
    fn bodies_at(&self, members: &[u32], [a, b]: [u32; 2]) -> [u32; 2] {
        let body = |place: u32| match members.get(place as usize) {
            Some(&body) => body,
            None => self.half_spaces[place as usize - members.len()].0,
        };
        let (a, b) = (body(a), body(b));
        [a.min(b), a.max(b)]
    }

    fn shape_of(&self, body: u32) -> &Shape {
        &self.shapes[self.bodies[body as usize].shape as usize]
    }

    /// Whether the batch refuses the pair (two static shapes, e.g. two triangle meshes).
    #[inline]
    fn refused(&self, a: u32, b: u32) -> bool {
        self.meshes && never_paired(self.shape_of(a), self.shape_of(b))
    }

    /// Whether half-space `h` pairs with bounded body `body` of box `b`: the lowest point of the
    /// box along the plane normal is within the margin of the plane.
    fn half_space_pairs(&self, &(h, normal, offset): &(u32, Vec3, f32), body: u32, b: &Aabb) -> bool {
        let centre = (b.min + b.max) * 0.5;
        let half = (b.max - b.min) * 0.5;
        let lowest = normal.dot(centre) - normal.abs().dot(half);
        lowest - offset <= self.margin && !self.refused(h, body)
    }

    /// Step 3's first half for `tile`: its members' boxes that reach it, sorted into
    /// `scratch.entries`, and its cells, listed in `scratch.starts` and `scratch.copies`.
    /// `home(place, body, box)` is called for each body whose box's lower corner lies in the
    /// tile (once in the whole scene), `place` its place in the tile's members; `None` when it
    /// returned false.
    fn gather(
        &self,
        tile: usize,
        scratch: &mut TileScratch,
        mut home: impl FnMut(u32, u32, &Aabb) -> bool,
    ) -> Option<Cells> {
        let [axis, u, v] = self.axes;
        let at = self.tiles.coordinates(tile);
        let TileScratch {
            entries,
            keys,
            spare,
            starts,
            copies,
            members,
            ..
        } = scratch;
        entries.clear();
        self.members[tile].unpack_into(members);
        // At most one box a member: room for exactly that, not twice as a push would grow it.
        entries.reserve_exact(members.len());
        for (place, &body) in members.iter().enumerate() {
            // A tile's members lie anywhere in the body list: ask for a later one's body early.
            if let Some(&later) = members.get(place + PREFETCH_AHEAD) {
                prefetch(&self.bodies[later as usize]);
            }
            let b = world_aabb(self.shape_of(body), &self.bodies[body as usize].pose);
            let reach = b.max + self.margin;
            let span = self.tiles.span(b.min, reach);
            if !(0..3).all(|i| span[i][0] <= at[i] && at[i] <= span[i][1]) {
                continue;
            }
            if (0..3).all(|i| span[i][0] == at[i]) && !home(place as u32, body, &b) {
                return None;
            }
            entries.push(SweepEntry {
                key: Vec4::new(reach[u], reach[v], -b.min[u], -b.min[v]),
                lower: b.min[axis],
                reach: reach[axis],
                body,
                place: place as u32,
            });
        }
        into_sweep_order(entries, (keys, spare));

        // Each cell lists, in sweep order, every box that reaches into it: counts, their prefix
        // sums (each cell's start), the indices written at each cell's next place, and the
        // starts restored.
        let region = [self.tiles.axes[u].ends(at[u]), self.tiles.axes[v].ends(at[v])];
        let cells = Cells::new(region, entries.iter().map(SweepEntry::cross));
        starts.clear();
        starts.resize(cells.count() + 1, 0);
        for entry in entries.iter() {
            cells.for_each_cell(entry.cross(), |c| starts[c + 1] += 1);
        }
        for c in 0..cells.count() {
            starts[c + 1] += starts[c];
        }
        copies.clear();
        copies.resize(starts[cells.count()] as usize, 0);
        for (i, entry) in entries.iter().enumerate() {
            cells.for_each_cell(entry.cross(), |c| {
                copies[starts[c] as usize] = i as u32;
                starts[c] += 1;
            });
        }
        starts.copy_within(..cells.count(), 1);
        starts[0] = 0;
        Some(cells)
    }

    /// Step 3 for `tile`: calls `emit` with each of its pairs, half-space pairs first, as the
    /// bodies' places ([`Sweep::bodies_at`]); false (and the sweep stopped) when `emit` returned false.
    fn sweep_tile(
        &self,
        tile: usize,
        scratch: &mut TileScratch,
        mut emit: impl FnMut([u32; 2]) -> bool,
    ) -> bool {
        let members = self.members[tile].len();
        let Some(cells) = self.gather(tile, scratch, |place, body, b| {
            self.half_spaces
                .iter()
                .enumerate()
                .all(|(k, h)| !self.half_space_pairs(h, body, b) || emit([(members + k) as u32, place]))
        }) else {
            return false;
        };
        let [axis, u, v] = self.axes;
        let at = self.tiles.coordinates(tile);
        let (entries, starts, copies) = (&scratch.entries, &scratch.starts, &scratch.copies);
        // The window of a box is the boxes after it in its cell that reach it on the sweep axis
        // (sorting makes `a.min <= b.min`; the window ends at `b.min > a.max + margin`). Boxes a
        // and b are within the margin on u and v iff `probe(a) <= b.key` lane by lane, where
        // `probe(a) = (min_u, min_v, -(max_u + m), -(max_v + m))`, `-key(a)` swizzled (negation
        // is exact, so this is the same test as `Aabb::overlaps`). The pair's lower corner is
        // `(b.min, max(a.min_u, b.min_u), max(a.min_v, b.min_v))`: it counts in its cell and tile.
        for c in 0..cells.count() {
            let cell = &copies[starts[c] as usize..starts[c + 1] as usize];
            for (k, &i) in cell.iter().enumerate() {
                let a = entries[i as usize];
                let probe = -Vec4::new(a.key.z, a.key.w, a.key.x, a.key.y);
                for &j in &cell[k + 1..] {
                    let b = &entries[j as usize];
                    if b.lower > a.reach {
                        break;
                    }
                    if !probe.cmple(b.key).all() {
                        continue;
                    }
                    let (corner_u, corner_v) = (probe.x.max(-b.key.z), probe.y.max(-b.key.w));
                    if cells.holding(corner_u, corner_v) != c
                        || self.tiles.axes[axis].index(b.lower) != at[axis]
                        || self.tiles.axes[u].index(corner_u) != at[u]
                        || self.tiles.axes[v].index(corner_v) != at[v]
                        || self.refused(a.body, b.body)
                    {
                        continue;
                    }
                    if !emit([a.place, b.place]) {
                        return false;
                    }
                }
            }
        }
        true
    }

    /// `tile`'s pairs ([`Sweep::sweep_tile`]), adding their number to `counted` as they come;
    /// `None` once `counted` passes `max_pairs` (the sweep stopped).
    fn tile_pairs(
        &self,
        tile: usize,
        scratch: &mut TileScratch,
        counted: &AtomicUsize,
        max_pairs: usize,
    ) -> Option<TileList> {
        /// Pairs a tile finds between looks at the shared count.
        const REPORT: usize = 1 << 12;
        if counted.load(Ordering::Relaxed) > max_pairs {
            return None;
        }
        let mut found = std::mem::take(&mut scratch.pairs);
        found.clear();
        let mut unreported = 0;
        let complete = self.sweep_tile(tile, scratch, |[a, b]| {
            found.push([a.min(b), a.max(b)]);
            unreported += 1;
            unreported < REPORT || {
                unreported = 0;
                counted
                    .fetch_add(REPORT, Ordering::Relaxed)
                    .saturating_add(REPORT)
                    <= max_pairs
            }
        });
        counted.fetch_add(unreported, Ordering::Relaxed);
        let places = self.members[tile].len() + self.half_spaces.len();
        let TileScratch {
            members,
            counts,
            grouped,
            writer,
            ..
        } = scratch;
        let list = complete.then(|| {
            let mut per_bucket = vec![0; self.buckets()].into_boxed_slice();
            for &pair in &found {
                per_bucket[self.bucket(self.bodies_at(members, pair))] += 1;
            }
            TileList {
                pairs: PlacePairs::pack(&found, places, (counts, grouped, writer)),
                per_bucket,
            }
        });
        scratch.pairs = found;
        list
    }

    /// An upper bound on the number of pairs, without walking a window: the sum of every tile's
    /// windows (exact when every box overlaps every other in one cell) plus half-spaces times
    /// bounded bodies.
    fn bound(&self) -> usize {
        (0..self.tiles.count())
            .into_par_iter()
            .map_init(TileScratch::default, |scratch, tile| {
                let Some(cells) = self.gather(tile, scratch, |_, _, _| true) else {
                    unreachable!("gather stops only when `home` returns false")
                };
                let (entries, starts, copies) = (&scratch.entries, &scratch.starts, &scratch.copies);
                (0..cells.count())
                    .flat_map(|c| {
                        let cell = &copies[starts[c] as usize..starts[c + 1] as usize];
                        (0..cell.len()).map(move |k| {
                            let reach = entries[cell[k] as usize].reach;
                            cell[k + 1..].partition_point(|&j| entries[j as usize].lower <= reach)
                        })
                    })
                    .fold(0usize, usize::saturating_add)
            })
            .reduce(|| 0, usize::saturating_add)
            .saturating_add(self.half_spaces.len().saturating_mul(self.bounded))
    }
}

/// What step 2 needs of the bounded bodies, gathered in one parallel pass: their number, the
/// box holding their conservative boxes, the sum of those boxes' sides (three a box), and their
/// positions' sums and squared sums (for the axis along which they vary most).
#[derive(Clone, Copy, Debug)]
struct SceneStats {
    count: usize,
    lo: Vec3,
    hi: Vec3,
    size_sum: f64,
    sum: DVec3,
    square_sum: DVec3,
}

impl Default for SceneStats {
    fn default() -> Self {
        SceneStats {
            count: 0,
            lo: Vec3::INFINITY,
            hi: Vec3::NEG_INFINITY,
            size_sum: 0.0,
            sum: DVec3::ZERO,
            square_sum: DVec3::ZERO,
        }
    }
}

impl SceneStats {
    /// Adds a body at `position` with conservative box `lo..hi`.
    #[inline]
    fn add(&mut self, position: DVec3, (lo, hi): (Vec3, Vec3)) {
        self.count += 1;
        self.lo = self.lo.min(lo);
        self.hi = self.hi.max(hi);
        self.size_sum += f64::from((hi - lo).element_sum());
        self.sum += position;
        self.square_sum += position * position;
    }

    fn merge(self, other: SceneStats) -> SceneStats {
        SceneStats {
            count: self.count + other.count,
            lo: self.lo.min(other.lo),
            hi: self.hi.max(other.hi),
            size_sum: self.size_sum + other.size_sum,
            sum: self.sum + other.sum,
            square_sum: self.square_sum + other.square_sum,
        }
    }

    /// Mean size of the conservative boxes, their three sides' mean (length units; 0 without
    /// bodies).
    fn mean_width(&self) -> f32 {
        (self.size_sum / (3 * self.count.max(1)) as f64) as f32
    }

    /// World axes (0, 1, 2 for X, Y, Z) ordered by how much the positions spread along them,
    /// most first; `[0, 1, 2]` without bodies.
    fn axes_by_variance(&self) -> [usize; 3] {
        let n = self.count.max(1) as f64;
        let mean = self.sum / n;
        let variance = self.square_sum / n - mean * mean;
        let mut axes = [0, 1, 2];
        axes.sort_by(|&i, &j| variance[j].total_cmp(&variance[i]));
        axes
    }
}

#[cfg(test)]
mod tests {
    use glam::{DVec3, Quat, Vec3};

    use super::*;
    use crate::hull::ConvexHull;
    use crate::pose::{Isometry, Pose};
    use crate::shape::compound::{Compound, CompoundChild};
    use crate::shape::{Capsule, Cuboid, Cylinder, HalfSpace, Sphere};
    use crate::test_rng::unit_floats;

    /// `count` bodies in a cube of half side `half` around `centre`, sizes spread over
    /// `decades` (10^-decades to 1, times `scale`), every kind of bounded shape, with
    /// `half_spaces` half-spaces through the cube among them.
    fn scene(
        seed: u32,
        count: usize,
        (centre, half): (DVec3, f32),
        (scale, decades): (f32, f32),
        half_spaces: usize,
    ) -> (Vec<Shape>, Vec<Body>) {
        let mut random = unit_floats(seed);
        let mut signed = move || 2.0 * random() - 1.0;
        let mut shapes = Vec::new();
        let mut bodies = Vec::new();
        for i in 0..count + half_spaces {
            let shape = if i % (count / half_spaces.max(1) + 1) == 1
                && shapes.iter().filter(|s| matches!(s, Shape::HalfSpace(_))).count() < half_spaces
            {
                let normal = Vec3::new(signed(), signed(), signed())
                    .try_normalize()
                    .unwrap_or(Vec3::Y);
                Shape::HalfSpace(HalfSpace::new(normal, signed() * half).unwrap())
            } else {
                let size = scale * 10f32.powf(-decades * (signed() * 0.5 + 0.5));
                let mut side = || size * (0.75 + 0.25 * signed());
                let (a, b, c) = (side(), side(), side());
                match i % 4 {
                    0 => Shape::Sphere(Sphere::new(a).unwrap()),
                    1 => Shape::Cuboid(Cuboid::new(Vec3::new(a, b, c)).unwrap()),
                    2 => Shape::Capsule(Capsule::new(a, b).unwrap()),
                    _ => Shape::Hull(ConvexHull::cuboid(Vec3::new(a, b, c))),
                }
            };
            shapes.push(shape);
            let offset = Vec3::new(signed(), signed(), signed()) * half;
            let rotation = Quat::from_xyzw(signed(), signed(), signed(), signed()).normalize();
            bodies.push(Body {
                shape: i as u32,
                pose: Pose::new(centre + offset.as_dvec3(), rotation),
            });
        }
        (shapes, bodies)
    }

    /// The pairs with tiles of about `per_tile` bodies, checking that there are at least
    /// `tiles` of them.
    fn pairs_with_tiles(
        shapes: &[Shape],
        bodies: &[Body],
        margin: f32,
        (per_tile, tiles): (usize, usize),
    ) -> Vec<[u32; 2]> {
        let count = Sweep::new(shapes, bodies, margin, per_tile).tiles.count();
        assert!(
            count >= tiles,
            "{count} tiles of about {per_tile} bodies, wanted {tiles} or more"
        );
        pairs_tile_by_tile(shapes, bodies, margin, usize::MAX, per_tile).unwrap()
    }

    /// Cutting a scene into many tiles finds the pairs of one tile (the plain sweep, which the
    /// integration tests hold against brute force): a pair on a tile border counts once, a body
    /// spanning many tiles pairs in each, half-spaces pair once, far from the origin too.
    #[test]
    fn tiles_find_the_pairs_of_one_tile() {
        let far = DVec3::new(1.0e6, -2.0e6, 5.0e5);
        // (seed, bodies, centre and half side, scale and decades of sizes, half-spaces, margin)
        let cases = [
            (1, 3000, (DVec3::ZERO, 12.0), (0.5, 0.0), 0, 0.0),
            (2, 3000, (DVec3::ZERO, 15.0), (1.0, 1.5), 3, 0.05),
            (3, 2000, (far, 10.0), (0.6, 1.0), 2, 0.02),
            (4, 2500, (DVec3::ZERO, 20.0), (6.0, 2.5), 1, 0.0),
            // A margin four times the sizes: the tiles a body reaches are its box's grown by it.
            (8, 3000, (DVec3::ZERO, 10.0), (0.1, 0.0), 0, 0.4),
        ];
        for (seed, count, place, sizes, half_spaces, margin) in cases {
            let (shapes, bodies) = scene(seed, count, place, sizes, half_spaces);
            let one = pairs_tile_by_tile(&shapes, &bodies, margin, usize::MAX, usize::MAX).unwrap();
            assert!(
                one.len() > count / 4,
                "seed {seed}: only {} pairs, the test would be weak",
                one.len()
            );
            for per_tile in [16, 100] {
                let tiled = pairs_with_tiles(&shapes, &bodies, margin, (per_tile, 8));
                assert_eq!(tiled, one, "seed {seed}, tiles of about {per_tile} bodies");
            }
        }
    }

    /// A long thin box across the scene and a pile of bodies at one point on a tile border,
    /// among small bodies in many tiles.
    #[test]
    fn tiles_find_the_pairs_of_a_long_box_and_a_pile() {
        let (mut shapes, mut bodies) = scene(5, 3000, (DVec3::ZERO, 10.0), (0.3, 0.5), 0);
        shapes.push(Shape::Cuboid(Cuboid::new(Vec3::new(15.0, 0.05, 0.05)).unwrap()));
        let rotation = Quat::from_rotation_arc(Vec3::X, Vec3::new(1.0, 0.7, 0.4).normalize());
        bodies.push(Body {
            shape: shapes.len() as u32 - 1,
            pose: Pose::new(DVec3::ZERO, rotation),
        });
        for _ in 0..40 {
            bodies.push(Body {
                shape: 0,
                pose: Pose::from_translation(DVec3::ZERO),
            });
        }
        let one = pairs_tile_by_tile(&shapes, &bodies, 0.01, usize::MAX, usize::MAX).unwrap();
        let long = bodies.len() as u32 - 41;
        assert!(
            one.iter().filter(|pair| pair.contains(&long)).count() > 20,
            "the long box crosses many bodies"
        );
        assert_eq!(pairs_with_tiles(&shapes, &bodies, 0.01, (32, 27)), one);
    }

    /// A tile of more than 2^16 places packs its places in 17 bits: the same pairs as tiles of
    /// 13- or 14-bit places.
    #[test]
    fn a_tile_past_two_to_the_sixteen_places_keeps_its_pairs() {
        let (shapes, bodies) = scene(6, 70_000, (DVec3::ZERO, 60.0), (0.6, 0.3), 2);
        let one = pairs_tile_by_tile(&shapes, &bodies, 0.0, usize::MAX, usize::MAX).unwrap();
        assert!(
            one.len() > 10_000,
            "only {} pairs, the test would be weak",
            one.len()
        );
        assert_eq!(pairs_with_tiles(&shapes, &bodies, 0.0, (BODIES_PER_TILE, 8)), one);
    }

    /// With many tiles the limit still stops the count exactly: the list at the limit, an error
    /// one below it whose bound holds the count.
    #[test]
    fn tiles_keep_the_pair_limit_exact() {
        let (shapes, bodies) = scene(7, 2000, (DVec3::ZERO, 10.0), (0.6, 0.5), 2);
        let all = pairs_with_tiles(&shapes, &bodies, 0.02, (50, 8));
        assert_eq!(
            pairs_tile_by_tile(&shapes, &bodies, 0.02, all.len(), 50),
            Ok(all.clone())
        );
        let err = pairs_tile_by_tile(&shapes, &bodies, 0.02, all.len() - 1, 50).unwrap_err();
        assert!(err.bound >= all.len(), "{err}: the bound is an upper bound");
    }

    /// Boxes come out of the radix sort in the sweep order: by lower bound as `total_cmp`
    /// orders it (negative, -0 before +0, ties), then by body; also when every bound shares
    /// bytes, and for no box or one.
    #[test]
    fn boxes_sort_into_the_sweep_order() {
        let mut next = unit_floats(9);
        let (mut keys, mut spare) = (Vec::new(), Vec::new());
        let spread: Vec<f32> = (0..3000).map(|_| (next() - 0.5) * 1e4).collect();
        let close: Vec<f32> = (0..3000)
            .map(|_| 1000.0 + (next() * 64.0).floor() / 64.0)
            .collect();
        let signed = vec![
            -0.0,
            0.0,
            -1.0,
            1.0,
            -0.0,
            f32::MIN,
            f32::MAX,
            0.0,
            -1e-30,
            1e-30,
            -1.0,
        ];
        for lowers in [vec![], vec![3.0], vec![2.0; 40], spread, close, signed] {
            let mut entries: Vec<SweepEntry> = lowers
                .iter()
                .enumerate()
                .map(|(body, &lower)| SweepEntry {
                    lower,
                    body: body as u32,
                    ..SweepEntry::default()
                })
                .collect();
            let mut expected = entries.clone();
            expected.sort_by(|a, b| a.lower.total_cmp(&b.lower).then(a.body.cmp(&b.body)));
            into_sweep_order(&mut entries, (&mut keys, &mut spare));
            let order = |entries: &[SweepEntry]| -> Vec<(u32, u32)> {
                entries.iter().map(|e| (e.lower.to_bits(), e.body)).collect()
            };
            assert_eq!(order(&entries), order(&expected), "{} boxes", lowers.len());
        }
    }

    /// A bucket sorts like a sort by comparisons: first bodies agreeing but in 0, 3 or 12 low
    /// bits, one first body with a thousand second ones, a bucket too small and one too big to
    /// count.
    #[test]
    fn buckets_sort_their_pairs() {
        let mut next = unit_floats(5);
        let mut scratch = BucketScratch::default();
        for (shift, len, firsts) in [
            (0, 50, 1),
            (3, 3000, 8),
            (12, 5000, 4096),
            (12, 1000, 1),
            (12, 100, 4096),
            (12, COUNTED_BUCKET + 7, 4096),
        ] {
            let high = 77 << shift;
            let mut bucket: Vec<[u32; 2]> = (0..len)
                .map(|_| {
                    let first = high + (next() * (firsts - 1) as f32) as u32;
                    [first, first + 1 + (next() * 1e6) as u32]
                })
                .collect();
            let mut expected = bucket.clone();
            expected.sort_unstable();
            sort_bucket(&mut bucket, shift, &mut scratch);
            assert_eq!(bucket, expected, "shift {shift}, {len} pairs");
        }
    }

    /// A compound whose one child is a small hull far from the child's own origin, placed back
    /// at the compound's: its world box is padded by the child's far reach, not its ball.
    fn far_child_compound() -> Shape {
        let centre = Vec3::new(-1.0e4, 0.0, 0.0);
        let points: Vec<Vec3> = [Vec3::X, Vec3::NEG_X, Vec3::Y, Vec3::NEG_Y, Vec3::Z, Vec3::NEG_Z]
            .iter()
            .map(|&d| centre + d * 0.01)
            .collect();
        let child = CompoundChild {
            shape: Shape::Hull(ConvexHull::from_points(&points).unwrap()),
            pose: Isometry::new(Vec3::new(1.0e4, 0.0, 0.0), Quat::IDENTITY),
        };
        Shape::from(Compound::new(vec![child]).unwrap())
    }

    /// Every kind of bounded shape, small and large, at random rotations up to the validated
    /// 1e-3 off unit length, near and far from the origin, with and without a margin: the
    /// world box grown by the margin lies in the conservative box.
    #[test]
    fn conservative_boxes_hold_the_world_boxes() {
        let mut random = unit_floats(9);
        let mut signed = move || 2.0 * random() - 1.0;
        let mut shapes = vec![
            far_child_compound(),
            Shape::from(crate::generate::terrain(4, 3.0, 0.5).unwrap()),
        ];
        for size in [1.0e-4f32, 1.0, 1.0e3] {
            shapes.extend([
                Shape::Sphere(Sphere::new(size).unwrap()),
                Shape::Cuboid(Cuboid::new(Vec3::new(size, 0.3 * size, 0.01 * size)).unwrap()),
                Shape::Capsule(Capsule::new(size, (0.001 * size).max(1.0e-4)).unwrap()),
                Shape::Cylinder(Cylinder::new(size, 0.2 * size).unwrap()),
                Shape::Hull(ConvexHull::cuboid(Vec3::new(size, size, 0.5 * size))),
            ]);
        }
        for shape in &shapes {
            let reach = box_reach(shape);
            for k in 0..200 {
                let unit = Quat::from_xyzw(signed(), signed(), signed(), signed()).normalize();
                let rotation = unit * [1.0, 1.0009, 0.9991][k % 3];
                let position = [DVec3::ZERO, DVec3::new(1.0e6, -3.0e5, 2.0e6)][k % 2];
                let margin = [0.0, 0.5][k / 2 % 2];
                let b = world_aabb(shape, &Pose::new(position, rotation));
                let (lo, hi) = conservative_box(position, rotation, reach, margin);
                assert!(
                    lo.cmple(b.min).all() && (b.max + margin).cmple(hi).all(),
                    "{shape:?} at {position}, |q| {}: box {:?}..{:?} (+{margin}) outside {lo}..{hi}",
                    rotation.length(),
                    b.min,
                    b.max
                );
            }
        }
    }

    /// Compounds of a far child in a row, each with a sphere just past its ball but within its
    /// padded box: tiles find the pairs one tile finds.
    #[test]
    fn tiles_find_the_pairs_of_a_compound_with_a_far_child() {
        let shapes = vec![far_child_compound(), Shape::Sphere(Sphere::new(0.01).unwrap())];
        let bodies: Vec<Body> = (0..400)
            .flat_map(|i| {
                let x = f64::from(i) * 0.5;
                [(0, x), (1, x + 0.13)].map(|(shape, x)| Body {
                    shape,
                    pose: Pose::from_translation(DVec3::new(x, 0.0, 0.0)),
                })
            })
            .collect();
        let one = pairs_tile_by_tile(&shapes, &bodies, 0.0, usize::MAX, usize::MAX).unwrap();
        assert!(one.len() >= 400, "only {} pairs", one.len());
        assert_eq!(pairs_with_tiles(&shapes, &bodies, 0.0, (16, 8)), one);
    }
}

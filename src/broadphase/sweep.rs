//! The CPU broadphase: sweep and prune over the bodies' world AABBs, on all threads.
//!
//! 1. Compute every bounded body's world AABB ([`world_aabb`]) in parallel.
//! 2. Sort the boxes by their lower bound on the axis along which the AABB centres vary most
//!    (sweep and prune), and cut the scene into a grid of cells across the two other axes, each
//!    cell about three times the mean box width (fewer across the second cross axis while the
//!    boxes would be copied into more than [`COPIES_PER_BOX`] cells each). Each cell holds, in
//!    sweep order and contiguous, a copy of every box that reaches into it.
//! 3. In each cell, for each box, in parallel, walk the boxes after it while their lower bound
//!    is within reach (its upper bound plus the margin), and keep those within the margin along
//!    the other two axes as well, counting each pair in one cell only.
//! 4. Pair each half-space with every bounded body whose AABB comes within the margin of it.
//!    Two static shapes (triangle meshes, half-spaces) are never paired (the batch refuses them).
//! 5. Write each pair as `[min, max]` and sort them, so the output does not depend on threads.
//!
//! With a limit ([`candidate_pairs_at_most`]), steps 3 and 4 first count (a bound, then exactly
//! with an early stop) before storing any pair.

use std::sync::atomic::{AtomicUsize, Ordering};

use glam::{Vec3, Vec4};
use rayon::prelude::*;

use crate::scene::Body;
use crate::shape::Shape;

use super::aabb::{Aabb, world_aabb};
use crate::narrowphase::validate::never_paired;
use crate::parallel::SharedPtr;

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
    /// windows (exact when every box overlaps every other) plus half-spaces times bounded bodies.
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
    // Step 1: bounded bodies' boxes, and the half-spaces aside.
    let shape_of = |body: &Body| &shapes[body.shape as usize];
    let mut boxes: Vec<(u32, Aabb)> = bodies
        .par_iter()
        .enumerate()
        .filter(|(_, body)| !matches!(shape_of(body), Shape::HalfSpace(_)))
        .map(|(i, body)| (i as u32, world_aabb(shape_of(body), &body.pose)))
        .collect();
    // Triangle meshes: never paired with each other or a half-space.
    let meshes = shapes.iter().any(|s| matches!(s, Shape::TriMesh(_)));
    let refused = move |a: u32, b: u32| {
        meshes && never_paired(shape_of(&bodies[a as usize]), shape_of(&bodies[b as usize]))
    };
    // Each half-space as (body, world normal, world offset).
    let half_spaces: Vec<(u32, Vec3, f32)> = bodies
        .iter()
        .enumerate()
        .filter_map(|(i, body)| match shape_of(body) {
            Shape::HalfSpace(half_space) => {
                let normal = body.pose.transform_vector(half_space.normal);
                Some((
                    i as u32,
                    normal,
                    (f64::from(half_space.offset) + normal.as_dvec3().dot(body.pose.translation)) as f32,
                ))
            }
            _ => None,
        })
        .collect();

    // Step 2: sort along the axis of largest variance; cut slabs across the second largest.
    let [axis, u, v] = axes_by_variance(&boxes);
    boxes.par_sort_unstable_by(|(ia, a), (ib, b)| a.min[axis].total_cmp(&b.min[axis]).then(ia.cmp(ib)));
    let cells = Cells::new(&boxes, [u, v], margin);
    // Each cell holds, in sweep order, a copy of what the sweep reads of every box reaching into
    // it, contiguous so a window is read in order: cell `c` is `entries[starts[c]..starts[c + 1]]`.
    // Filled on all threads: runs of the sorted boxes count their copies per cell, the counts
    // give each run its place in each cell (runs in order, so a cell stays in sweep order), and
    // each run writes its copies there.
    let runs = (rayon::current_num_threads() * 2).min(boxes.len()).max(1);
    let run_len = boxes.len().div_ceil(runs);
    let mut places: Vec<Vec<usize>> = boxes
        .par_chunks(run_len.max(1))
        .map(|run| {
            let mut counts = vec![0usize; cells.count()];
            for (_, b) in run {
                cells.for_each_cell(b, margin, |c| counts[c] += 1);
            }
            counts
        })
        .collect();
    let mut starts = Vec::with_capacity(cells.count() + 1);
    let mut total = 0;
    for c in 0..cells.count() {
        starts.push(total);
        for run in &mut places {
            (run[c], total) = (total, total + run[c]);
        }
    }
    starts.push(total);
    let mut entries = vec![SlabEntry::default(); total];
    let out = SharedPtr(entries.as_mut_ptr());
    boxes
        .par_chunks(run_len.max(1))
        .zip(places.par_iter_mut())
        .for_each(|(run, next)| {
            for &(body, b) in run {
                let entry = SlabEntry {
                    key: Vec4::new(b.max[u] + margin, b.max[v] + margin, -b.min[u], -b.min[v]),
                    lower: b.min[axis],
                    reach: b.max[axis] + margin,
                    body,
                };
                cells.for_each_cell(&b, margin, |c| {
                    // SAFETY: `next[c]` runs over this run's own places in cell `c`, disjoint
                    // from every other run's and below `total`, the length of `entries`, which
                    // nothing reads until every run is done.
                    unsafe { out.get().add(next[c]).write(entry) };
                    next[c] += 1;
                });
            }
        });
    let members = |c: usize| &entries[starts[c]..starts[c + 1]];
    // Boxes a and b are within the margin on u and v iff `probe(a) <= b.key` lane by lane, where
    // `probe(a) = (min_u, min_v, -(max_u + m), -(max_v + m))`, `-key(a)` swizzled (negation is
    // exact, so this is the same test as `Aabb::overlaps`).
    let probe = |key: Vec4| -Vec4::new(key.z, key.w, key.x, key.y);

    // Step 3: the sweep. Sorting makes `a.min <= b.min <= b.max + margin` on the sweep axis, so
    // the window end (`b.min <= a.max + margin`) settles that axis. A pair is kept only in the
    // cell holding `(max(a.min_u, b.min_u), max(a.min_v, b.min_v))`, which both boxes reach, so
    // once. The window of the `k`-th entry of a cell is the entries after it that reach it on
    // the sweep axis: `window_len` counts them (a binary search, for the bound), `sweep_pairs`
    // walks them.
    let cells = &cells;
    let window_len = move |c: usize, k: usize| {
        let cell = members(c);
        let reach = cell[k].reach;
        cell[k + 1..].partition_point(|e| e.lower <= reach)
    };
    let sweep_pairs = move |c: usize, k: usize| {
        let cell = members(c);
        let a = cell[k];
        let probe = probe(a.key);
        cell[k + 1..]
            .iter()
            .take_while(move |e| e.lower <= a.reach)
            .filter(move |e| {
                probe.cmple(e.key).all() && cells.holding(probe.x.max(-e.key.z), probe.y.max(-e.key.w)) == c
            })
            .filter(move |e| !refused(a.body, e.body))
            .map(move |e| [a.body.min(e.body), a.body.max(e.body)])
    };
    // Step 4's test: the pair of half-space `h` with bounded body `ib`, when the lowest point of
    // the body's box along the plane normal is within the margin of the plane.
    let half_space_pair = move |&(h, normal, offset): &(u32, Vec3, f32), &(ib, b): &(u32, Aabb)| {
        let centre = (b.min + b.max) * 0.5;
        let half = (b.max - b.min) * 0.5;
        let lowest = normal.dot(centre) - normal.abs().dot(half);
        (lowest - offset <= margin && !refused(h, ib)).then_some([h.min(ib), h.max(ib)])
    };

    // Before listing anything: bound the count by the sweep windows, and where the bound is
    // over the limit count the pairs exactly, stopping once the count passes it.
    let bound = (0..cells.count())
        .into_par_iter()
        .map(|c| (0..members(c).len()).map(|k| window_len(c, k)).sum::<usize>())
        .reduce(|| 0, usize::saturating_add)
        .saturating_add(half_spaces.len().saturating_mul(boxes.len()));
    if bound > max_pairs {
        let counted = AtomicUsize::new(0);
        let add = |n: usize| counted.fetch_add(n, Ordering::Relaxed).saturating_add(n) > max_pairs;
        let over = (0..cells.count()).into_par_iter().any(|c| {
            (0..members(c).len())
                .into_par_iter()
                .any(|k| add(sweep_pairs(c, k).count()))
        }) || half_spaces.par_iter().any(|h| {
            add(boxes
                .par_iter()
                .filter(|b| half_space_pair(h, b).is_some())
                .count())
        });
        if over {
            return Err(TooManyPairs {
                limit: max_pairs,
                bound,
            });
        }
    }

    let mut pairs: Vec<[u32; 2]> = (0..cells.count())
        .into_par_iter()
        .flat_map(|c| {
            (0..members(c).len())
                .into_par_iter()
                .flat_map_iter(move |k| sweep_pairs(c, k))
        })
        .collect();

    // Step 4: half-spaces against bounded bodies.
    for h in &half_spaces {
        pairs.par_extend(boxes.par_iter().filter_map(|b| half_space_pair(h, b)));
    }

    // Step 5: deterministic order.
    pairs.par_sort_unstable();
    Ok(pairs)
}

/// A box's copy in one cell (step 2): what the sweep reads of a box, as the one whose window is
/// walked and as one in another's window.
#[derive(Clone, Copy, Debug, Default)]
struct SlabEntry {
    /// `(max_u + margin, max_v + margin, -min_u, -min_v)` on the two cross axes.
    key: Vec4,
    /// Lower bound on the sweep axis.
    lower: f32,
    /// Upper bound on the sweep axis plus the margin: the end of its window.
    reach: f32,
    /// The body.
    body: u32,
}

/// Most slabs the sweep cuts the scene into; bounds the copies of a box spanning them all.
const MAX_SLABS: usize = 256;

/// Equal-width slabs across one world axis, each about three times the mean box width on it, so a
/// typical box reaches into one or two slabs (wider slabs copy fewer boxes and walk longer
/// windows: at 1M mixed bodies 3 was faster than 2 and 4, with fewer copies than 2).
struct Slabs {
    /// Lower end of the first slab on the axis.
    origin: f32,
    /// Slabs per length unit.
    per_length: f32,
    /// Number of slabs, at least 1.
    count: usize,
}

impl Slabs {
    /// Slabs over `axis` covering every box grown by `margin` on its upper side.
    fn new(boxes: &[(u32, Aabb)], axis: usize, margin: f32) -> Slabs {
        let origin = boxes
            .iter()
            .map(|(_, b)| b.min[axis])
            .fold(f32::INFINITY, f32::min);
        let top = boxes
            .iter()
            .map(|(_, b)| b.max[axis] + margin)
            .fold(f32::NEG_INFINITY, f32::max);
        let span = top - origin;
        let mean_width = boxes
            .iter()
            .map(|(_, b)| b.max[axis] - b.min[axis] + margin)
            .sum::<f32>()
            / boxes.len().max(1) as f32;
        let count = if span > 0.0 && mean_width > 0.0 {
            ((span / (3.0 * mean_width)).ceil() as usize).clamp(1, MAX_SLABS)
        } else {
            1
        };
        let per_length = if span > 0.0 { count as f32 / span } else { 0.0 };
        Slabs {
            origin,
            per_length,
            count,
        }
    }

    /// Half as many slabs over the same span (at least one).
    fn coarser(&self) -> Slabs {
        let count = self.count.div_ceil(2);
        Slabs {
            origin: self.origin,
            per_length: self.per_length * count as f32 / self.count as f32,
            count,
        }
    }

    /// The slab holding coordinate `x`; non-decreasing in `x`, clamped to the existing slabs.
    #[inline]
    fn index(&self, x: f32) -> usize {
        // `as` saturates: coordinates below the origin land in slab 0.
        (((x - self.origin) * self.per_length) as usize).min(self.count - 1)
    }
}

/// Most copies of the boxes the cells may hold, per box: past it the cross axis is cut into
/// fewer slabs (down to one, the plain slabs of the first cross axis), so boxes spanning many
/// cells cannot multiply memory.
const COPIES_PER_BOX: usize = 4;

/// The grid of step 2: slabs across the two cross axes `[u, v]`; cell `(su, sv)` is
/// `su * v.count + sv`.
struct Cells {
    u: Slabs,
    v: Slabs,
    axes: [usize; 2],
}

impl Cells {
    /// Slabs about three times the mean box width on each cross axis, with fewer on `v` while the
    /// boxes would be copied into more than [`COPIES_PER_BOX`] cells each on average.
    fn new(boxes: &[(u32, Aabb)], axes: [usize; 2], margin: f32) -> Cells {
        let mut u = Slabs::new(boxes, axes[0], margin);
        let mut v = Slabs::new(boxes, axes[1], margin);
        let budget = COPIES_PER_BOX.saturating_mul(boxes.len());
        loop {
            let cells = Cells { u, v, axes };
            let copies: usize = boxes
                .par_iter()
                .map(|(_, b)| {
                    let ([u0, u1], [v0, v1]) = cells.span(b, margin);
                    (u1 - u0 + 1) * (v1 - v0 + 1)
                })
                .sum();
            if copies <= budget || cells.v.count == 1 {
                return cells;
            }
            (u, v) = (cells.u, cells.v.coarser());
        }
    }

    /// Number of cells.
    fn count(&self) -> usize {
        self.u.count * self.v.count
    }

    /// The cell `(su, sv)`.
    #[inline]
    fn cell(&self, su: usize, sv: usize) -> usize {
        su * self.v.count + sv
    }

    /// The cell holding cross coordinates `(x_u, x_v)`.
    #[inline]
    fn holding(&self, x_u: f32, x_v: f32) -> usize {
        self.cell(self.u.index(x_u), self.v.index(x_v))
    }

    /// Calls `f` with every cell a box reaches, grown by `margin` on its upper side.
    #[inline]
    fn for_each_cell(&self, b: &Aabb, margin: f32, mut f: impl FnMut(usize)) {
        let ([u0, u1], [v0, v1]) = self.span(b, margin);
        for su in u0..=u1 {
            (self.cell(su, v0)..=self.cell(su, v1)).for_each(&mut f);
        }
    }

    /// The slabs `[first, last]` on `u` and on `v` a box reaches, grown by `margin` on its upper
    /// side.
    #[inline]
    fn span(&self, b: &Aabb, margin: f32) -> ([usize; 2], [usize; 2]) {
        let [u, v] = self.axes;
        (
            [self.u.index(b.min[u]), self.u.index(b.max[u] + margin)],
            [self.v.index(b.min[v]), self.v.index(b.max[v] + margin)],
        )
    }
}

/// World axes (0, 1, 2 for X, Y, Z) ordered by how much the box centres spread along them,
/// most first; `[0, 1, 2]` when there are no boxes.
fn axes_by_variance(boxes: &[(u32, Aabb)]) -> [usize; 3] {
    if boxes.is_empty() {
        return [0, 1, 2];
    }
    let centre = |b: &Aabb| ((b.min + b.max) * 0.5).as_dvec3();
    let mean = boxes.iter().map(|(_, b)| centre(b)).sum::<glam::DVec3>() / boxes.len() as f64;
    let variance: glam::DVec3 = boxes
        .iter()
        .map(|(_, b)| {
            let d = centre(b) - mean;
            d * d
        })
        .sum();
    let mut axes = [0, 1, 2];
    axes.sort_by(|&i, &j| variance[j].total_cmp(&variance[i]));
    axes
}

//! The CPU broadphase: sweep and prune over the bodies' world AABBs, on all threads.
//!
//! 1. Compute every bounded body's world AABB ([`world_aabb`]) in parallel.
//! 2. Sort the boxes by their lower bound on the axis along which the AABB centres vary most
//!    (sweep and prune), and cut the scene into slabs across the axis of second most variance;
//!    each slab lists the boxes that reach into it.
//! 3. In each slab, for each box, in parallel, walk the boxes after it while their lower bound
//!    is within reach (its upper bound plus the margin), and keep those within the margin along
//!    the other two axes as well, counting each pair in one slab only.
//! 4. Pair each half-space with every bounded body whose AABB comes within the margin of it.
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

/// All pairs of bodies that may be within `margin` (length units, >= 0) of each other: bounded
/// bodies whose world AABBs are within `margin` on every axis ([`Aabb::overlaps`]), and each
/// half-space with every bounded body whose AABB reaches within `margin` of its plane (two
/// half-spaces are never paired). Each pair is `[a, b]` with `a < b`; the list is sorted.
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
    let slabs = Slabs::new(&boxes, u, margin);
    // Each slab lists the (sorted) boxes that reach into it, in sorted order.
    let mut members = vec![Vec::new(); slabs.count];
    for (i, (_, b)) in boxes.iter().enumerate() {
        for slab in &mut members[slabs.index(b.min[u])..=slabs.index(b.max[u] + margin)] {
            slab.push(i as u32);
        }
    }
    // The inner loop reads the lower bounds on the sweep axis, then one packed vector per box
    // for the other two axes: `(max_u + m, max_v + m, -min_u, -min_v)`. Boxes a and b are within
    // the margin on u and v iff `cross_probe(a) <= cross_key(b)` lane by lane (negation is
    // exact, so this is the same test as `Aabb::overlaps`).
    let lower: Vec<f32> = boxes.iter().map(|(_, b)| b.min[axis]).collect();
    let cross_key: Vec<Vec4> = boxes
        .iter()
        .map(|(_, b)| Vec4::new(b.max[u] + margin, b.max[v] + margin, -b.min[u], -b.min[v]))
        .collect();
    let cross_probe = |a: &Aabb| Vec4::new(a.min[u], a.min[v], -(a.max[u] + margin), -(a.max[v] + margin));

    // Step 3: the sweep. Sorting makes `a.min <= b.min <= b.max + margin` on the sweep axis, so
    // the window end (`b.min <= a.max + margin`) settles that axis. A pair is kept only in the
    // slab holding `max(a.min_u, b.min_u)`, which both boxes reach, so once. The window of the
    // `k`-th box of a slab is the `window_len` boxes after it that reach it on the sweep axis;
    // `sweep_pairs` keeps those near it on the other two axes.
    let (boxes, lower, cross_key, slabs, members) = (&boxes, &lower, &cross_key, &slabs, &members);
    let window_len = move |s: usize, k: usize| {
        let slab = &members[s];
        let reach = boxes[slab[k] as usize].1.max[axis] + margin;
        slab[k + 1..].partition_point(|&j| lower[j as usize] <= reach)
    };
    let sweep_pairs = move |s: usize, k: usize| {
        let slab = &members[s];
        let (ia, a) = boxes[slab[k] as usize];
        let probe = cross_probe(&a);
        slab[k + 1..k + 1 + window_len(s, k)]
            .iter()
            .map(|&j| j as usize)
            .filter(move |&j| {
                probe.cmple(cross_key[j]).all() && slabs.index(a.min[u].max(boxes[j].1.min[u])) == s
            })
            .map(move |j| {
                let ib = boxes[j].0;
                [ia.min(ib), ia.max(ib)]
            })
    };
    // Step 4's test: the pair of half-space `h` with bounded body `ib`, when the lowest point of
    // the body's box along the plane normal is within the margin of the plane.
    let half_space_pair = move |&(h, normal, offset): &(u32, Vec3, f32), &(ib, b): &(u32, Aabb)| {
        let centre = (b.min + b.max) * 0.5;
        let half = (b.max - b.min) * 0.5;
        let lowest = normal.dot(centre) - normal.abs().dot(half);
        (lowest - offset <= margin).then_some([h.min(ib), h.max(ib)])
    };

    // Before listing anything: bound the count by the sweep windows, and where the bound is
    // over the limit count the pairs exactly, stopping once the count passes it.
    let bound = members
        .par_iter()
        .enumerate()
        .map(|(s, slab)| (0..slab.len()).map(|k| window_len(s, k)).sum::<usize>())
        .reduce(|| 0, usize::saturating_add)
        .saturating_add(half_spaces.len().saturating_mul(boxes.len()));
    if bound > max_pairs {
        let counted = AtomicUsize::new(0);
        let add = |n: usize| counted.fetch_add(n, Ordering::Relaxed).saturating_add(n) > max_pairs;
        let over = members.par_iter().enumerate().any(|(s, slab)| {
            (0..slab.len())
                .into_par_iter()
                .any(|k| add(sweep_pairs(s, k).count()))
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

    let mut pairs: Vec<[u32; 2]> = members
        .par_iter()
        .enumerate()
        .flat_map(|(s, slab)| {
            (0..slab.len())
                .into_par_iter()
                .flat_map_iter(move |k| sweep_pairs(s, k))
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

/// Most slabs the sweep cuts the scene into; bounds the copies of a box spanning them all.
const MAX_SLABS: usize = 256;

/// Equal-width slabs across one world axis, each about twice the mean box width on it, so a
/// typical box reaches into one or two slabs.
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
            ((span / (2.0 * mean_width)).ceil() as usize).clamp(1, MAX_SLABS)
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

    /// The slab holding coordinate `x`; non-decreasing in `x`, clamped to the existing slabs.
    #[inline]
    fn index(&self, x: f32) -> usize {
        // `as` saturates: coordinates below the origin land in slab 0.
        (((x - self.origin) * self.per_length) as usize).min(self.count - 1)
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

//! Broadphase: which body pairs are worth a narrowphase test.
//!
//! 1. Compute every bounded body's world AABB ([`world_aabb`]) in parallel.
//! 2. Pick the axis along which the AABB centres vary most, and sort the boxes by their lower
//!    bound on it (sweep and prune).
//! 3. For each box, in parallel, walk the boxes after it in sorted order while their lower
//!    bound is within reach (its upper bound plus the margin), and keep those whose gap to it is
//!    at most the margin along the other two axes as well.
//! 4. Pair each half-space with every bounded body whose AABB reaches within the margin of its
//!    world plane (support point of the box against the plane).
//! 5. Write each pair as `[min, max]` and sort them, so the output does not depend on threads.

use glam::{Mat3, Vec3, Vec4};
use rayon::prelude::*;

use crate::pose::Pose;
use crate::scene::Body;
use crate::shape::Shape;

/// An axis-aligned box in world space, length units. `min <= max` on every axis for bounded
/// shapes; a half-space's box is the whole space (`-inf..inf`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Aabb {
    /// Lower corner.
    pub min: Vec3,
    /// Upper corner.
    pub max: Vec3,
}

impl Aabb {
    /// True when the gap between the two boxes along every axis is at most `margin` (length
    /// units, >= 0): the boxes overlap once each is grown by `margin / 2` on every side. A gap
    /// larger than `margin` on one axis proves the shapes are farther apart than `margin`.
    #[inline]
    pub fn overlaps(&self, other: &Aabb, margin: f32) -> bool {
        // Same form as the sweep's reach test (`min <= max + margin`), so rounding agrees.
        self.min.cmple(other.max + margin).all() && other.min.cmple(self.max + margin).all()
    }
}

/// World AABB of `shape` placed at `pose`. Tight for hulls (every vertex transformed), boxes
/// (rotated half extents), spheres and capsules (the world core segment grown by the radius).
/// A half-space is unbounded: its box is `-inf..inf` on every axis.
pub fn world_aabb(shape: &Shape, pose: &Pose) -> Aabb {
    let around = |centre: Vec3, half: Vec3| Aabb {
        min: centre - half,
        max: centre + half,
    };
    match shape {
        Shape::Hull(hull) => {
            let mut min = Vec3::INFINITY;
            let mut max = Vec3::NEG_INFINITY;
            for &v in hull.vertices() {
                let p = pose.transform_point(v);
                min = min.min(p);
                max = max.max(p);
            }
            Aabb { min, max }
        }
        Shape::Cuboid(cuboid) => {
            // Half extent along world axis i is sum_j |R_ij| h_j.
            let abs_rotation = Mat3::from_quat(pose.rotation).abs();
            around(pose.translation, abs_rotation * cuboid.half_extents())
        }
        Shape::Sphere(sphere) => around(pose.translation, Vec3::splat(sphere.radius)),
        Shape::Capsule(capsule) => {
            let axis = pose.transform_vector(Vec3::new(0.0, capsule.half_height, 0.0));
            around(pose.translation, axis.abs() + capsule.radius)
        }
        Shape::HalfSpace(_) => Aabb {
            min: Vec3::NEG_INFINITY,
            max: Vec3::INFINITY,
        },
    }
}

/// All pairs of bodies that may be within `margin` (length units, >= 0) of each other: bounded
/// bodies whose world AABBs are within `margin` on every axis ([`Aabb::overlaps`]), and each
/// half-space with every bounded body whose AABB reaches within `margin` of its plane (two
/// half-spaces are never paired). Each pair is `[a, b]` with `a < b`; the list is sorted.
///
/// Expects checked input (see [`crate::scene::validate_batch`]): existing shape indices, finite
/// unit poses, finite non-negative margin. Runs in parallel; the result does not depend on the
/// number of threads.
pub fn candidate_pairs(shapes: &[Shape], bodies: &[Body], margin: f32) -> Vec<[u32; 2]> {
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
                    half_space.offset + normal.dot(body.pose.translation),
                ))
            }
            _ => None,
        })
        .collect();

    // Step 2: sort along the axis of largest variance.
    let axis = axis_of_largest_variance(&boxes);
    boxes.par_sort_unstable_by(|(ia, a), (ib, b)| a.min[axis].total_cmp(&b.min[axis]).then(ia.cmp(ib)));
    // The sweep's inner loop reads contiguous lower bounds on the sweep axis, then one packed
    // vector per box for the other two axes (u, v): `(max_u + m, max_v + m, -min_u, -min_v)`.
    // Boxes a and b are within the margin on u and v iff `cross_probe(a) <= cross_key(b)`
    // lane by lane (negation is exact, so this is the same test as `Aabb::overlaps`).
    let (u, v) = ((axis + 1) % 3, (axis + 2) % 3);
    let lower: Vec<f32> = boxes.iter().map(|(_, b)| b.min[axis]).collect();
    let cross_key: Vec<Vec4> = boxes
        .iter()
        .map(|(_, b)| Vec4::new(b.max[u] + margin, b.max[v] + margin, -b.min[u], -b.min[v]))
        .collect();
    let cross_probe = |a: &Aabb| Vec4::new(a.min[u], a.min[v], -(a.max[u] + margin), -(a.max[v] + margin));

    // Step 3: sweep. Sorting makes `a.min <= b.min <= b.max + margin` on the sweep axis, so
    // the window end (`b.min <= a.max + margin`) settles that axis.
    let (boxes_ref, cross_key) = (&boxes, &cross_key);
    let mut pairs: Vec<[u32; 2]> = (0..boxes.len())
        .into_par_iter()
        .flat_map_iter(|i| {
            let (ia, a) = boxes[i];
            let reach = a.max[axis] + margin;
            let end = i + 1 + lower[i + 1..].partition_point(|&l| l <= reach);
            let probe = cross_probe(&a);
            (i + 1..end)
                .filter(move |&j| probe.cmple(cross_key[j]).all())
                .map(move |j| {
                    let ib = boxes_ref[j].0;
                    [ia.min(ib), ia.max(ib)]
                })
        })
        .collect();

    // Step 4: half-spaces against bounded bodies.
    for &(h, normal, offset) in &half_spaces {
        pairs.par_extend(boxes.par_iter().filter_map(|&(ib, b)| {
            // Lowest point of the box along the plane normal.
            let centre = (b.min + b.max) * 0.5;
            let half = (b.max - b.min) * 0.5;
            let lowest = normal.dot(centre) - normal.abs().dot(half);
            (lowest - offset <= margin).then_some([h.min(ib), h.max(ib)])
        }));
    }

    // Step 5: deterministic order.
    pairs.par_sort_unstable();
    pairs
}

/// Index (0, 1, 2 for X, Y, Z) of the world axis along which the box centres spread most; 0 when
/// there are no boxes.
fn axis_of_largest_variance(boxes: &[(u32, Aabb)]) -> usize {
    if boxes.is_empty() {
        return 0;
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
    variance.max_position()
}

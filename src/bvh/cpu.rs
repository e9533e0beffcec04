//! A flat bounding volume hierarchy over the bodies' world AABBs, built on the CPU and traversed
//! by the CPU batch and by the GPU kernel (`raycast.wgsl`) the same way.
//!
//! 1. Each bounded body's box: its shape's AABB under the body's rotation, placed at the body's
//!    translation minus the BVH origin (the centre of all translations) in f64, rounded outward
//!    to f32 and grown by [`BVH_PADDING`](crate::ray_box::BVH_PADDING), so a box test in f32 never drops a body the exact
//!    test would hit. Half-spaces are unbounded: every ray tests them ([`Bvh::unbounded`]).
//! 2. Build top-down: split the bodies of a node at the median of their box centres along the
//!    axis where the centres spread most, until at most [`BVH_LEAF_SIZE`] remain. The two
//!    children of a node are adjacent in [`Bvh::nodes`] (depth at most ~log2(bodies), so a
//!    traversal stack of [`BVH_STACK_SIZE`] entries always suffices). The tree's shape depends
//!    on the body count alone, so every subtree's place in the arrays is known before it is
//!    built, and the two halves of a large node are built on two threads.
//! 3. Traverse with a stack of (node, entry distance), from the root if the ray enters it: a
//!    popped node entered beyond the current limit is skipped; a leaf's bodies are tested
//!    exactly; an inner node tests both children's boxes and pushes those the ray enters, the
//!    nearer (by entry distance; ties: the first child) last, so it is next.

use bytemuck::{Pod, Zeroable};
use glam::{DVec3, Vec3};
use rayon::prelude::*;

use crate::pose::Pose;
use crate::ray_box::{box_entry, inverse_direction, padded_box};
use crate::scene::Body;
use crate::shape::{Shape, world_aabb};

/// Most bodies in a leaf: one, so a ray tests each body's own box before its exact cast (on
/// the bench's ray scene a closest-hit ray casts at 2 bodies instead of 10 with leaves of 4,
/// for 10% more node visits). Must match nothing in WGSL (the kernel reads counts from the
/// nodes).
pub const BVH_LEAF_SIZE: usize = 1;

/// Entries of the traversal stack, on the CPU and in `raycast.wgsl` (`BVH_STACK_SIZE`, must
/// match): a traversal holds at most one entry per level plus one; a median split over at most
/// 2^32 bodies is at most 32 levels deep, the GPU's prefix tree at most 61
/// (`crate::bvh::gpu::TreeLayout::Prefix`).
pub const BVH_STACK_SIZE: usize = 64;

/// Fewest bodies a rayon task boxes in step 1.
const BOXES_PER_TASK: usize = 256;

/// Fewest bodies a rayon task folds into the frame's bounds ([`frame_of`]: a few nanoseconds a
/// body).
const FRAME_BODIES_PER_TASK: usize = 4096;

/// Fewest bodies of a node whose two children are built on two threads in step 2.
const PARALLEL_SPLIT: usize = 4096;

/// A BVH node in the BVH frame; must match `BvhNode` in `shaders/raycast/raycast.wgsl`
/// and `shaders/bvh/bvh_build.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct BvhNode {
    /// Lower corner of the box, BVH frame (world minus [`Bvh::origin`]), length units.
    pub min: [f32; 3],
    /// Inner node: index of the first child (the second follows it). Leaf: index of the first
    /// body in [`Bvh::bodies`].
    pub first: u32,
    /// Upper corner of the box, BVH frame.
    pub max: [f32; 3],
    /// Number of bodies of a leaf; 0 for an inner node.
    pub count: u32,
}

const _: () = assert!(size_of::<BvhNode>() == 32);

impl BvhNode {
    /// The box `min..max` (BVH frame, length units) grown on each side by
    /// [`BVH_PADDING`](crate::raycast::BVH_PADDING) of its largest coordinate magnitude plus
    /// its extent, as every box of a BVH is, with no children.
    pub fn padded(min: Vec3, max: Vec3) -> BvhNode {
        let (min, max) = padded_box(min, max);
        BvhNode {
            min: min.to_array(),
            first: 0,
            max: max.to_array(),
            count: 0,
        }
    }

    /// True for a leaf.
    pub fn is_leaf(&self) -> bool {
        self.count > 0
    }

    /// The entry distance of a ray (BVH frame origin, component-wise inverse direction from
    /// [`inverse_direction`]) into this box within `[0, limit]`, or `None`.
    #[inline]
    pub fn entry(&self, origin: Vec3, inverse_direction: Vec3, limit: f32) -> Option<f32> {
        box_entry(self.min.into(), self.max.into(), origin, inverse_direction, limit)
    }

    fn centre(&self) -> Vec3 {
        (Vec3::from(self.min) + Vec3::from(self.max)) * 0.5
    }
}

/// The hierarchy (see the module docs).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Bvh {
    /// World position of the BVH frame's origin (f64): node boxes are relative to it.
    pub origin: DVec3,
    /// Nodes; the root is node 0 (absent when no body is bounded).
    pub nodes: Vec<BvhNode>,
    /// Body indices in leaf order.
    pub bodies: Vec<u32>,
    /// Bodies with unbounded shapes (half-spaces), in index order.
    pub unbounded: Vec<u32>,
}

impl Bvh {
    /// Builds the hierarchy over `bodies` (indices into `shapes` already checked), on all
    /// threads.
    pub fn build(shapes: &[Shape], bodies: &[Body]) -> Bvh {
        let mut bvh = Bvh::default();
        bvh.rebuild(shapes, bodies);
        bvh
    }

    /// [`Self::build`] in place: the same hierarchy, in this one's memory (its arrays are reused
    /// and grown, so a caller building every frame faults no fresh pages once warm).
    pub fn rebuild(&mut self, shapes: &[Shape], bodies: &[Body]) {
        self.rebuild_split_from(shapes, bodies, PARALLEL_SPLIT);
    }

    /// [`Self::rebuild`], splitting nodes of at least `parallel_from` bodies on two threads: the
    /// same hierarchy whatever `parallel_from` is.
    fn rebuild_split_from(&mut self, shapes: &[Shape], bodies: &[Body], parallel_from: usize) {
        let unbounded = &mut self.unbounded;
        unbounded.clear();
        let mut bounded = Vec::with_capacity(bodies.len());
        for (i, body) in bodies.iter().enumerate() {
            let shape = &shapes[body.shape as usize];
            if matches!(shape, Shape::HalfSpace(_)) {
                unbounded.push(i as u32);
            } else {
                bounded.push((i as u32, body));
            }
        }
        let (origin, _) = frame_of(shapes, bodies);
        // Step 1 (in parallel: a hull's box transforms all its vertices).
        let mut leaves: Vec<(u32, BvhNode)> = bounded
            .par_iter()
            .with_min_len(BOXES_PER_TASK)
            .map(|&(i, body)| (i, body_box(&shapes[body.shape as usize], body, origin)))
            .collect();
        // Step 2.
        let counts = NodeCounts::new(leaves.len());
        // No root when no body is bounded.
        let node_count = if leaves.is_empty() {
            0
        } else {
            counts.nodes(leaves.len())
        };
        // Every node and body slot is written by the fill.
        self.origin = origin;
        self.nodes.clear();
        self.nodes.resize(node_count, BvhNode::default());
        self.bodies.clear();
        self.bodies.resize(leaves.len(), 0);
        if let Some((root, below)) = self.nodes.split_first_mut() {
            let subtree = Subtree {
                node: root,
                below,
                below_first: 1,
                bodies: &mut self.bodies,
                bodies_first: 0,
            };
            subtree.fill(&mut leaves, &counts, parallel_from);
        }
    }

    /// Visits every body whose box a ray (world origin, unit direction) reaches within
    /// `limit()` (step 3), in the order the GPU kernel does; `limit` is read again before every
    /// node and pair of children, so a closest-hit search can shrink it. Then every unbounded
    /// body.
    pub fn traverse(
        &self,
        origin: DVec3,
        direction: Vec3,
        mut limit: impl FnMut() -> f32,
        mut visit: impl FnMut(u32),
    ) {
        let o = (origin - self.origin).as_vec3();
        let inv = inverse_direction(direction);
        let mut stack = [(0u32, 0.0f32); BVH_STACK_SIZE];
        let mut len = 0;
        if let Some(enter) = self.nodes.first().and_then(|root| root.entry(o, inv, limit())) {
            stack[0] = (0, enter);
            len = 1;
        }
        while len > 0 {
            len -= 1;
            let (k, enter) = stack[len];
            if enter > limit() {
                continue;
            }
            let node = self.nodes[k as usize];
            if node.is_leaf() {
                let bodies = &self.bodies[node.first as usize..(node.first + node.count) as usize];
                bodies.iter().for_each(|&b| visit(b));
                continue;
            }
            let (a, b) = (node.first, node.first + 1);
            let bound = limit();
            let entry_a = self.nodes[a as usize].entry(o, inv, bound).map(|e| (a, e));
            let entry_b = self.nodes[b as usize].entry(o, inv, bound).map(|e| (b, e));
            // The nearer child on top (ties: the first).
            let (near, far) = match (entry_a, entry_b) {
                (Some(ea), Some(eb)) if eb.1 < ea.1 => (Some(eb), Some(ea)),
                (Some(ea), eb) => (Some(ea), eb),
                (None, eb) => (eb, None),
            };
            for entry in [far, near].into_iter().flatten() {
                stack[len] = entry;
                len += 1;
            }
        }
        self.unbounded.iter().for_each(|&b| visit(b));
    }
}

/// The BVH frame's origin over `bodies` (step 1): the centre of the range of the bounded
/// bodies' translations (zero when none is bounded); and how many are half-spaces. On all
/// threads. A body whose shape index is not in `shapes` counts as bounded (the caller checks
/// indices).
pub(crate) fn frame_of(shapes: &[Shape], bodies: &[Body]) -> (DVec3, usize) {
    let none = (DVec3::INFINITY, DVec3::NEG_INFINITY, 0);
    let (lo, hi, unbounded) = bodies
        .par_iter()
        .with_min_len(FRAME_BODIES_PER_TASK)
        .map(|b| match shapes.get(b.shape as usize) {
            Some(Shape::HalfSpace(_)) => (DVec3::INFINITY, DVec3::NEG_INFINITY, 1),
            _ => (b.pose.translation, b.pose.translation, 0),
        })
        .reduce(|| none, |a, b| (a.0.min(b.0), a.1.max(b.1), a.2 + b.2));
    let origin = if unbounded == bodies.len() {
        DVec3::ZERO
    } else {
        (lo + hi) * 0.5
    };
    (origin, unbounded)
}

/// Step 2's node counts: a subtree over `n` bodies has `nodes(n)` nodes (the median split makes
/// the shape of the tree a function of `n` alone). Its children hold floor(n / 2) and
/// ceil(n / 2) bodies, so one depth of the tree has at most two sizes: about 2 log2(n) entries.
struct NodeCounts(Vec<(usize, usize)>);

impl NodeCounts {
    /// The counts of every subtree size a tree over `n` bodies has, sorted by size.
    fn new(n: usize) -> Self {
        let mut sizes = vec![n];
        let mut depth = vec![n];
        while depth.iter().any(|&m| m > BVH_LEAF_SIZE) {
            let mut next: Vec<usize> = depth
                .iter()
                .filter(|&&m| m > BVH_LEAF_SIZE)
                .flat_map(|&m| [m / 2, m - m / 2])
                .collect();
            next.sort_unstable();
            next.dedup();
            sizes.extend(&next);
            depth = next;
        }
        sizes.sort_unstable();
        sizes.dedup();
        let mut counts: Vec<(usize, usize)> = Vec::with_capacity(sizes.len());
        for m in sizes {
            let nodes = if m <= BVH_LEAF_SIZE {
                1
            } else {
                let of = |k: usize| counts[counts.partition_point(|&(size, _)| size < k)].1;
                1 + of(m / 2) + of(m - m / 2)
            };
            counts.push((m, nodes));
        }
        NodeCounts(counts)
    }

    /// Nodes of a subtree over `n` bodies (a size the tree has).
    fn nodes(&self, n: usize) -> usize {
        self.0[self.0.partition_point(|&(size, _)| size < n)].1
    }
}

/// Where step 2 writes one subtree: its node, the block after it holding its descendants (the
/// children as a pair, then the left child's descendants, then the right's: the order of a
/// depth-first build that appends each node's children), and its bodies in leaf order.
struct Subtree<'a> {
    node: &'a mut BvhNode,
    below: &'a mut [BvhNode],
    /// Index of `below[0]` in the node array.
    below_first: usize,
    bodies: &'a mut [u32],
    /// Index of `bodies[0]` in the body list.
    bodies_first: usize,
}

impl Subtree<'_> {
    /// Step 2 for `leaves` (this subtree's bodies and boxes), recursing into the children, on two
    /// threads from `parallel_from` bodies.
    fn fill(self, leaves: &mut [(u32, BvhNode)], counts: &NodeCounts, parallel_from: usize) {
        let (mut min, mut max) = (Vec3::INFINITY, Vec3::NEG_INFINITY);
        let (mut centre_min, mut centre_max) = (Vec3::INFINITY, Vec3::NEG_INFINITY);
        for (_, b) in leaves.iter() {
            min = min.min(b.min.into());
            max = max.max(b.max.into());
            centre_min = centre_min.min(b.centre());
            centre_max = centre_max.max(b.centre());
        }
        self.node.min = min.to_array();
        self.node.max = max.to_array();
        if leaves.len() <= BVH_LEAF_SIZE {
            self.node.first = self.bodies_first as u32;
            self.node.count = leaves.len() as u32;
            for (slot, (i, _)) in self.bodies.iter_mut().zip(leaves.iter()) {
                *slot = *i;
            }
            return;
        }
        // Split at the median centre along the axis where the centres spread most.
        let axis = (centre_max - centre_min).max_position();
        let middle = leaves.len() / 2;
        leaves.select_nth_unstable_by(middle, |(i, a), (j, b)| {
            a.centre()[axis].total_cmp(&b.centre()[axis]).then(i.cmp(j))
        });
        self.node.first = self.below_first as u32;
        let (pair, rest) = self.below.split_at_mut(2);
        let (left_below, right_below) = rest.split_at_mut(counts.nodes(middle) - 1);
        let (left_node, right_node) = pair.split_at_mut(1);
        let (left_bodies, right_bodies) = self.bodies.split_at_mut(middle);
        let in_parallel = leaves.len() >= parallel_from;
        let (left_leaves, right_leaves) = leaves.split_at_mut(middle);
        let left = Subtree {
            node: &mut left_node[0],
            below: left_below,
            below_first: self.below_first + 2,
            bodies: left_bodies,
            bodies_first: self.bodies_first,
        };
        let right = Subtree {
            node: &mut right_node[0],
            below: right_below,
            below_first: self.below_first + 1 + counts.nodes(middle),
            bodies: right_bodies,
            bodies_first: self.bodies_first + middle,
        };
        if in_parallel {
            rayon::join(
                || left.fill(left_leaves, counts, parallel_from),
                || right.fill(right_leaves, counts, parallel_from),
            );
        } else {
            left.fill(left_leaves, counts, parallel_from);
            right.fill(right_leaves, counts, parallel_from);
        }
    }
}

/// Step 1: the box of `body` (bounded `shape`) in the frame of a BVH at `origin`.
fn body_box(shape: &Shape, body: &Body, origin: DVec3) -> BvhNode {
    let rotated = world_aabb(shape, &Pose::new(Vec3::ZERO, body.pose.rotation));
    let offset = body.pose.translation - origin;
    BvhNode::padded(
        round_down(offset + rotated.min.as_dvec3()),
        round_up(offset + rotated.max.as_dvec3()),
    )
}

fn round_down(v: DVec3) -> Vec3 {
    let f = v.as_vec3();
    Vec3::select(f.as_dvec3().cmpgt(v), f.map(f32::next_down), f)
}

fn round_up(v: DVec3) -> Vec3 {
    let f = v.as_vec3();
    Vec3::select(f.as_dvec3().cmplt(v), f.map(f32::next_up), f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shape::Sphere;
    use glam::Quat;

    #[test]
    fn every_body_is_in_one_leaf_and_inside_its_ancestors() {
        let shapes = vec![Shape::Sphere(Sphere::new(0.5).unwrap())];
        let bodies: Vec<Body> = (0..100)
            .map(|i| Body {
                shape: 0,
                pose: Pose::new(
                    Vec3::new((i % 7) as f32, (i / 7) as f32, (i * 3 % 5) as f32),
                    Quat::IDENTITY,
                ),
            })
            .collect();
        let bvh = Bvh::build(&shapes, &bodies);
        let mut seen = bvh.bodies.clone();
        seen.sort_unstable();
        assert_eq!(seen, (0..100).collect::<Vec<u32>>());
        for node in &bvh.nodes {
            if node.is_leaf() {
                assert!(node.count as usize <= BVH_LEAF_SIZE);
                continue;
            }
            for child in [node.first, node.first + 1] {
                let child = bvh.nodes[child as usize];
                assert!(Vec3::from(child.min).cmpge(node.min.into()).all());
                assert!(Vec3::from(child.max).cmple(node.max.into()).all());
            }
        }
    }

    #[test]
    fn the_parallel_build_is_the_sequential_one() {
        let shapes = vec![Shape::Sphere(Sphere::new(0.5).unwrap())];
        let mut reused = Bvh::default();
        for n in [0, 1, 4, 5, 9, 100, 1000, 4099, 7] {
            let bodies: Vec<Body> = (0..n)
                .map(|i| Body {
                    shape: 0,
                    pose: Pose::new(
                        Vec3::new((i * 37 % 101) as f32, (i * 11 % 13) as f32, (i % 7) as f32 * 0.5),
                        Quat::IDENTITY,
                    ),
                })
                .collect();
            let mut sequential = Bvh::default();
            sequential.rebuild_split_from(&shapes, &bodies, usize::MAX);
            let mut parallel = Bvh::default();
            parallel.rebuild_split_from(&shapes, &bodies, 1);
            assert_eq!(parallel, sequential, "{n} bodies");
            // Rebuilt over a larger tree's memory: the same hierarchy.
            reused.rebuild(&shapes, &bodies);
            assert_eq!(reused, sequential, "{n} bodies, rebuilt");
            // As many nodes as the tree has: every node written, none left over.
            let leaves = sequential.nodes.iter().filter(|node| node.is_leaf()).count();
            assert_eq!(
                sequential.nodes.len(),
                (2 * leaves).saturating_sub(1),
                "{n} bodies"
            );
        }
    }

    #[test]
    fn boxes_are_rounded_outward() {
        let v = DVec3::new(0.1, -0.1, 1.0e7 + 0.3);
        assert!(round_down(v).as_dvec3().cmple(v).all());
        assert!(round_up(v).as_dvec3().cmpge(v).all());
    }
}

//! A BVH over a mesh's triangles (local frame), built once: the midphase.
//!
//! 1. Each triangle's box (its corners' min and max).
//! 2. Top-down: split a node's triangles at the median of their box centres along the axis where
//!    the centres spread most, until at most [`LEAF_TRIANGLES`] remain; children adjacent.
//! 3. Query: a depth-first walk with a fixed stack, reporting each leaf triangle whose box
//!    overlaps the query box. No allocation.
//! 4. Ray query: the same walk over the boxes a ray reaches (grown by [`BVH_PADDING`] as the
//!    body BVH's are), the nearer child first.

use glam::Vec3;

use crate::bvh::{BVH_PADDING, BvhNode};

/// Most triangles in a leaf.
const LEAF_TRIANGLES: usize = 4;

/// Traversal stack entries: a median split of at most 2^32 triangles is at most 32 levels deep,
/// and the walk holds at most one entry per level plus one.
const STACK_SIZE: usize = 64;

/// A node: its box, and either its first child (the second follows it) or its leaf range.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Node {
    min: Vec3,
    max: Vec3,
    /// Inner node: index of the first child. Leaf: first entry in [`TriangleBvh::order`].
    first: u32,
    /// Leaf: number of triangles; 0 for an inner node.
    count: u32,
}

/// The BVH: flat nodes (root first) and the triangle indices in leaf order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TriangleBvh {
    nodes: Vec<Node>,
    order: Vec<u32>,
    /// Each triangle's box (lower, upper corner), in `order`'s order.
    boxes: Vec<(Vec3, Vec3)>,
}

impl TriangleBvh {
    /// Builds the tree over `triangles` (indices into `vertices`, already validated).
    pub(crate) fn build(vertices: &[Vec3], triangles: &[[u32; 3]]) -> TriangleBvh {
        let boxes: Vec<(Vec3, Vec3)> = triangles
            .iter()
            .map(|t| {
                let [a, b, c] = t.map(|i| vertices[i as usize]);
                (a.min(b).min(c), a.max(b).max(c))
            })
            .collect();
        let mut bvh = TriangleBvh {
            nodes: vec![Node::default()],
            order: (0..triangles.len() as u32).collect(),
            boxes: Vec::new(),
        };
        let mut pending = vec![(0usize, 0usize, triangles.len())];
        while let Some((node, start, end)) = pending.pop() {
            let items = &mut bvh.order[start..end];
            let (mut min, mut max) = (Vec3::INFINITY, Vec3::NEG_INFINITY);
            let (mut cmin, mut cmax) = (Vec3::INFINITY, Vec3::NEG_INFINITY);
            for &t in items.iter() {
                let (lo, hi) = boxes[t as usize];
                (min, max) = (min.min(lo), max.max(hi));
                let centre = lo + hi;
                (cmin, cmax) = (cmin.min(centre), cmax.max(centre));
            }
            bvh.nodes[node].min = min;
            bvh.nodes[node].max = max;
            if items.len() <= LEAF_TRIANGLES {
                bvh.nodes[node].first = start as u32;
                bvh.nodes[node].count = items.len() as u32;
                continue;
            }
            let spread = cmax - cmin;
            let axis = if spread.x >= spread.y && spread.x >= spread.z {
                0
            } else if spread.y >= spread.z {
                1
            } else {
                2
            };
            let key = |t: &u32| {
                let (lo, hi) = boxes[*t as usize];
                (lo + hi)[axis]
            };
            let mid = items.len() / 2;
            items.select_nth_unstable_by(mid, |x, y| key(x).total_cmp(&key(y)));
            let child = bvh.nodes.len();
            bvh.nodes[node].first = child as u32;
            bvh.nodes.extend([Node::default(); 2]);
            pending.push((child, start, start + mid));
            pending.push((child + 1, start + mid, end));
        }
        bvh.boxes = bvh.order.iter().map(|&t| boxes[t as usize]).collect();
        bvh
    }

    /// The root box (lower and upper corner): the extremes of every triangle's corners.
    pub fn bounds(&self) -> (Vec3, Vec3) {
        (self.nodes[0].min, self.nodes[0].max)
    }

    /// Calls `visit` with every triangle whose box overlaps `[min, max]` (closed boxes).
    #[inline]
    pub fn for_each_overlap(&self, min: Vec3, max: Vec3, mut visit: impl FnMut(u32)) {
        let mut stack = [0u32; STACK_SIZE];
        let mut top = 1;
        while top > 0 {
            top -= 1;
            let node = self.nodes[stack[top] as usize];
            if node.min.cmpgt(max).any() || node.max.cmplt(min).any() {
                continue;
            }
            if node.count > 0 {
                for i in node.first as usize..(node.first + node.count) as usize {
                    let (lo, hi) = self.boxes[i];
                    if !(lo.cmpgt(max).any() || hi.cmplt(min).any()) {
                        visit(self.order[i]);
                    }
                }
            } else {
                stack[top] = node.first + 1;
                stack[top + 1] = node.first;
                top += 2;
            }
        }
    }
}

impl TriangleBvh {
    /// Step 4: calls `visit` with the triangles of every leaf whose box a ray (local origin,
    /// component-wise inverse direction from [`crate::bvh::inverse_direction`]) reaches within
    /// `limit()`, nearer boxes first; `limit` is read again before every node, so a nearest-hit
    /// search can shrink it. No allocation.
    pub fn for_each_ray_candidate(
        &self,
        origin: Vec3,
        inverse_direction: Vec3,
        mut limit: impl FnMut() -> f32,
        mut visit: impl FnMut(u32),
    ) {
        let entry = |node: &Node, limit: f32| {
            let pad = BVH_PADDING
                * (node.min.abs().max(node.max.abs()).max_element() + (node.max - node.min).max_element());
            let padded = BvhNode {
                min: (node.min - pad).to_array(),
                first: 0,
                max: (node.max + pad).to_array(),
                count: 0,
            };
            padded.entry(origin, inverse_direction, limit)
        };
        let mut stack = [0u32; STACK_SIZE];
        let mut top = 1;
        while top > 0 {
            top -= 1;
            let node = self.nodes[stack[top] as usize];
            if entry(&node, limit()).is_none() {
                continue;
            }
            if node.count > 0 {
                let range = node.first as usize..(node.first + node.count) as usize;
                self.order[range].iter().for_each(|&t| visit(t));
                continue;
            }
            let (a, b) = (node.first, node.first + 1);
            let far = f32::INFINITY;
            let near_a = entry(&self.nodes[a as usize], far).unwrap_or(far)
                <= entry(&self.nodes[b as usize], far).unwrap_or(far);
            let (near, far) = if near_a { (a, b) } else { (b, a) };
            stack[top] = far;
            stack[top + 1] = near;
            top += 2;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rng::unit_floats;

    #[test]
    fn overlap_query_finds_exactly_the_overlapping_boxes() {
        let mut unit = unit_floats(7);
        let mut range = |lo: f32, hi: f32| lo + (hi - lo) * unit();
        let mut point = |lo: f32, hi: f32| Vec3::new(range(lo, hi), range(lo, hi), range(lo, hi));
        let mut vertices = Vec::new();
        let mut triangles = Vec::new();
        for t in 0..500u32 {
            let base = point(-10.0, 10.0);
            for _ in 0..3 {
                vertices.push(base + point(0.0, 1.0));
            }
            triangles.push([3 * t, 3 * t + 1, 3 * t + 2]);
        }
        let bvh = TriangleBvh::build(&vertices, &triangles);
        for _ in 0..50 {
            let min = point(-10.0, 8.0);
            let max = min + point(0.0, 4.0);
            let mut found = Vec::new();
            bvh.for_each_overlap(min, max, |t| found.push(t));
            found.sort_unstable();
            let expected: Vec<u32> = (0..triangles.len() as u32)
                .filter(|&t| {
                    let [a, b, c] = triangles[t as usize].map(|i| vertices[i as usize]);
                    let (lo, hi) = (a.min(b).min(c), a.max(b).max(c));
                    !(lo.cmpgt(max).any() || hi.cmplt(min).any())
                })
                .collect();
            assert_eq!(found, expected);
        }
    }
}

//! A BVH over a mesh's triangles (local frame), built once: the midphase.
//!
//! 1. Each triangle's box (its corners' min and max).
//! 2. Top-down: split a node's triangles at the median of their box centres along the axis where
//!    the centres spread most, until at most [`LEAF_TRIANGLES`] remain; children adjacent.
//! 3. The binary tree collapsed to four children per node (a node's children, or an inner
//!    child's two children in its place), each node's child boxes and each leaf's triangle boxes
//!    four at a time by coordinate.
//! 4. Query: a depth-first walk with a fixed stack, children in the binary tree's order, so
//!    triangles come in its depth-first leaf order; four boxes tested at a time. No allocation.
//! 5. Ray query: the same walk over the boxes a ray reaches (grown as the body BVH's are:
//!    [`padded_box`]), the nearer children first.

use glam::{Vec3, Vec4};

use crate::ray_box::{box_entry, padded_box};

/// Most triangles in a leaf (one lane each).
const LEAF_TRIANGLES: usize = 4;

/// Traversal stack entries: a median split of at most 2^32 triangles is at most 32 binary levels
/// deep (16 four-wide), and the walk holds at most three entries per level plus one. The GPU's
/// walk uses the same ([`crate::gpu::mesh_layout::MESH_STACK_SIZE`]).
pub const TRIANGLE_BVH_STACK_SIZE: usize = 64;
const STACK_SIZE: usize = TRIANGLE_BVH_STACK_SIZE;

/// A [`Node4`] child or stack entry naming a leaf (its index in [`TriangleBvh::leaves`]) rather
/// than a node.
const LEAF_BIT: u32 = 1 << 31;

/// A binary node while building: its box, and either its first child (the second follows it)
/// or its leaf range.
#[derive(Clone, Copy, Debug, Default)]
struct Node {
    min: Vec3,
    max: Vec3,
    /// Inner node: index of the first child. Leaf: first entry in the triangle order.
    first: u32,
    /// Leaf: number of triangles; 0 for an inner node.
    count: u32,
}

/// Four boxes by coordinate: lower x, y, z lanes then upper x, y, z lanes. An unused lane is
/// empty (lower +∞, upper −∞) and overlaps nothing.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Boxes4([Vec4; 6]);

impl Boxes4 {
    const EMPTY: Boxes4 = Boxes4([
        Vec4::INFINITY,
        Vec4::INFINITY,
        Vec4::INFINITY,
        Vec4::NEG_INFINITY,
        Vec4::NEG_INFINITY,
        Vec4::NEG_INFINITY,
    ]);

    /// Box `i` (lower, upper corner); empty lanes have lower > upper.
    fn lane(&self, i: usize) -> (Vec3, Vec3) {
        let [lx, ly, lz, hx, hy, hz] = self.0;
        (Vec3::new(lx[i], ly[i], lz[i]), Vec3::new(hx[i], hy[i], hz[i]))
    }

    /// Writes box `(min, max)` into lane `i`.
    fn set(&mut self, i: usize, min: Vec3, max: Vec3) {
        for k in 0..3 {
            self.0[k][i] = min[k];
            self.0[3 + k][i] = max[k];
        }
    }

    /// Bit `i` set when box `i` overlaps `[min, max]` (closed boxes; lanes of `min`, `max`).
    #[inline]
    fn overlaps(&self, [min, max]: &[[Vec4; 3]; 2]) -> u32 {
        let [lx, ly, lz, hx, hy, hz] = self.0;
        (lx.cmple(max[0])
            & ly.cmple(max[1])
            & lz.cmple(max[2])
            & hx.cmpge(min[0])
            & hy.cmpge(min[1])
            & hz.cmpge(min[2]))
        .bitmask()
    }
}

/// A four-wide node: its children's boxes and what each child is (a node index, or a leaf index
/// with [`LEAF_BIT`]); unused children have empty boxes.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Node4 {
    /// The children's boxes.
    boxes: Boxes4,
    /// Each child: a node index, or a leaf index with [`LEAF_BIT`].
    children: [u32; 4],
}

/// A leaf: its triangles' boxes and indices (unused lanes empty).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Leaf {
    /// The triangles' boxes.
    boxes: Boxes4,
    /// The triangles' indices in the mesh.
    triangles: [u32; 4],
}

/// The BVH: four-wide nodes and leaves; the root is a node or (four triangles or fewer) a leaf.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TriangleBvh {
    /// Four-wide nodes.
    nodes: Vec<Node4>,
    /// Leaves of up to four triangles.
    leaves: Vec<Leaf>,
    /// The root: a node index, or a leaf index with [`LEAF_BIT`].
    root: u32,
    /// The root box (lower, upper corner).
    bounds: (Vec3, Vec3),
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
        Self::from_boxes(&boxes)
    }

    /// Builds the tree over any boxes (lower, upper corner; a compound's children too): item `i`
    /// is `boxes[i]`.
    pub(crate) fn from_boxes(boxes: &[(Vec3, Vec3)]) -> TriangleBvh {
        let mut nodes = vec![Node::default()];
        let mut order: Vec<u32> = (0..boxes.len() as u32).collect();
        let mut pending = vec![(0usize, 0usize, boxes.len())];
        while let Some((node, start, end)) = pending.pop() {
            let items = &mut order[start..end];
            let (mut min, mut max) = (Vec3::INFINITY, Vec3::NEG_INFINITY);
            let (mut cmin, mut cmax) = (Vec3::INFINITY, Vec3::NEG_INFINITY);
            for &t in items.iter() {
                let (lo, hi) = boxes[t as usize];
                (min, max) = (min.min(lo), max.max(hi));
                let centre = lo + hi;
                (cmin, cmax) = (cmin.min(centre), cmax.max(centre));
            }
            nodes[node].min = min;
            nodes[node].max = max;
            if items.len() <= LEAF_TRIANGLES {
                nodes[node].first = start as u32;
                nodes[node].count = items.len() as u32;
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
            let child = nodes.len();
            nodes[node].first = child as u32;
            nodes.extend([Node::default(); 2]);
            pending.push((child, start, start + mid));
            pending.push((child + 1, start + mid, end));
        }
        let mut bvh = TriangleBvh {
            bounds: (nodes[0].min, nodes[0].max),
            ..TriangleBvh::default()
        };
        bvh.root = bvh.collapse(&nodes, 0, &order, boxes);
        bvh
    }

    /// Step 3: binary node `node` as a four-wide node or a leaf; returns its child entry.
    fn collapse(&mut self, nodes: &[Node], node: usize, order: &[u32], boxes: &[(Vec3, Vec3)]) -> u32 {
        let n = nodes[node];
        if n.count > 0 {
            let mut leaf = Leaf {
                boxes: Boxes4::EMPTY,
                triangles: [0; 4],
            };
            for (i, &t) in order[n.first as usize..(n.first + n.count) as usize]
                .iter()
                .enumerate()
            {
                let (lo, hi) = boxes[t as usize];
                leaf.boxes.set(i, lo, hi);
                leaf.triangles[i] = t;
            }
            self.leaves.push(leaf);
            return (self.leaves.len() - 1) as u32 | LEAF_BIT;
        }
        // The children, an inner child replaced by its two children, in order.
        let mut slots = [0usize; 4];
        let mut count = 0;
        for c in [n.first as usize, n.first as usize + 1] {
            if nodes[c].count > 0 {
                slots[count] = c;
                count += 1;
            } else {
                slots[count] = nodes[c].first as usize;
                slots[count + 1] = nodes[c].first as usize + 1;
                count += 2;
            }
        }
        let index = self.nodes.len();
        self.nodes.push(Node4 {
            boxes: Boxes4::EMPTY,
            children: [0; 4],
        });
        for (i, &slot) in slots[..count].iter().enumerate() {
            let child = self.collapse(nodes, slot, order, boxes);
            self.nodes[index].boxes.set(i, nodes[slot].min, nodes[slot].max);
            self.nodes[index].children[i] = child;
        }
        index as u32
    }

    /// Calls `visit` with every triangle whose box overlaps `[min, max]` (closed boxes), in the
    /// binary tree's depth-first leaf order.
    #[inline]
    pub fn for_each_overlap(&self, min: Vec3, max: Vec3, mut visit: impl FnMut(u32)) {
        let query = [min, max].map(|c| [Vec4::splat(c.x), Vec4::splat(c.y), Vec4::splat(c.z)]);
        let mut stack = [0u32; STACK_SIZE];
        stack[0] = self.root;
        let mut top = 1;
        while top > 0 {
            top -= 1;
            let entry = stack[top];
            if entry & LEAF_BIT != 0 {
                let leaf = &self.leaves[(entry & !LEAF_BIT) as usize];
                let mut mask = leaf.boxes.overlaps(&query);
                while mask != 0 {
                    visit(leaf.triangles[mask.trailing_zeros() as usize]);
                    mask &= mask - 1;
                }
            } else {
                let node = &self.nodes[entry as usize];
                // Pushed last child first: the first child is walked first.
                let mut mask = node.boxes.overlaps(&query);
                while mask != 0 {
                    let i = 31 - mask.leading_zeros();
                    stack[top] = node.children[i as usize];
                    top += 1;
                    mask &= !(1 << i);
                }
            }
        }
    }
}

impl TriangleBvh {
    /// The root box (lower and upper corner): the extremes of every item's box.
    pub fn bounds(&self) -> (Vec3, Vec3) {
        self.bounds
    }

    /// The tree flattened for another walker (the GPU's), appended to `out`: the nodes, then the
    /// leaves, each as `node(lanes)`, a used lane `Some((min, max, entry))` with its box grown
    /// as [`Self::for_each_ray_candidate`] grows it. A node's entry is its index in `out`, a
    /// leaf's its index ORed with `leaf_bit`, item `t` is `first_item + t`. Returns the root's
    /// entry.
    pub(crate) fn flatten_into<N>(
        &self,
        out: &mut Vec<N>,
        first_item: u32,
        leaf_bit: u32,
        node: impl Fn([Option<([f32; 3], [f32; 3], u32)>; 4]) -> N,
    ) -> u32 {
        let base = out.len() as u32;
        let leaf_base = base + self.nodes.len() as u32;
        let entry = |e: u32| {
            if e & LEAF_BIT != 0 {
                (leaf_base + (e & !LEAF_BIT)) | leaf_bit
            } else {
                base + e
            }
        };
        let lanes = |boxes: &Boxes4, items: [u32; 4], item: &dyn Fn(u32) -> u32| {
            std::array::from_fn(|i| {
                let (min, max) = boxes.lane(i);
                min.cmple(max).all().then(|| {
                    let (min, max) = padded_box(min, max);
                    (min.to_array(), max.to_array(), item(items[i]))
                })
            })
        };
        out.extend(
            self.nodes
                .iter()
                .map(|n| node(lanes(&n.boxes, n.children, &entry))),
        );
        out.extend(
            self.leaves
                .iter()
                .map(|l| node(lanes(&l.boxes, l.triangles, &|t| first_item + t))),
        );
        entry(self.root)
    }

    /// Step 5: calls `visit` with every triangle whose box a ray (local origin, component-wise
    /// inverse direction from [`crate::ray_box::inverse_direction`]) reaches within `limit()`, nearer
    /// boxes first; `limit` is read again before every node and leaf, so a nearest-hit search can
    /// shrink it. No allocation.
    pub fn for_each_ray_candidate(
        &self,
        origin: Vec3,
        inverse_direction: Vec3,
        mut limit: impl FnMut() -> f32,
        mut visit: impl FnMut(u32),
    ) {
        // Entry distance into a box grown as the body BVH grows its boxes; `None` if missed,
        // empty or beyond `limit`.
        let entry = |(min, max): (Vec3, Vec3), limit: f32| {
            if min.cmpgt(max).any() {
                return None;
            }
            let (min, max) = padded_box(min, max);
            box_entry(min, max, origin, inverse_direction, limit)
        };
        // Entries with the distance at which the ray enters them.
        let mut stack = [(0u32, 0.0f32); STACK_SIZE];
        stack[0] = (self.root, f32::NEG_INFINITY);
        let mut top = 1;
        while top > 0 {
            top -= 1;
            let (item, at) = stack[top];
            let bound = limit();
            if at > bound {
                continue;
            }
            if item & LEAF_BIT != 0 {
                let leaf = &self.leaves[(item & !LEAF_BIT) as usize];
                for (i, &t) in leaf.triangles.iter().enumerate() {
                    if entry(leaf.boxes.lane(i), limit()).is_some() {
                        visit(t);
                    }
                }
                continue;
            }
            let node = &self.nodes[item as usize];
            let mut entered = [(0u32, 0.0f32); 4];
            let mut count = 0;
            for (i, &child) in node.children.iter().enumerate() {
                if let Some(t) = entry(node.boxes.lane(i), bound) {
                    entered[count] = (child, t);
                    count += 1;
                }
            }
            // Pushed farthest first, so the nearest is walked first (ties: the earlier child).
            entered[..count].reverse();
            entered[..count].sort_by(|a, b| b.1.total_cmp(&a.1));
            for &e in &entered[..count] {
                stack[top] = e;
                top += 1;
            }
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
        // A root leaf, a root with leaf children, mixed children, a deep tree.
        for count in [1, 4, 7, 11, 500] {
            let mut vertices = Vec::new();
            let mut triangles = Vec::new();
            for t in 0..count {
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
}

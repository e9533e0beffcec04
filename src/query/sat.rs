//! Separating axis test between two convex hulls, in hull A's local frame.
//!
//! 1. Face query of A: for every face plane of A, the deepest vertex of B below it (faces whose
//!    bound from B's inner sphere cannot matter are skipped; the result is the exhaustive loop's).
//! 2. Face query of B: the same with the roles swapped (B's planes moved into A's frame).
//! 3. Edge query: only edge pairs whose Gauss-map arcs cross (the pair builds a face of the
//!    Minkowski difference) can give a separating axis; their cross product, oriented away
//!    from A's centroid, is tested. Parallel pairs are skipped (a face axis covers them).
//!    A pair that would become the best is re-measured with both hulls' support points along
//!    its axis: for nearly parallel edges the arcs nearly coincide, the crossing test is decided
//!    by rounding, and the edge points then overstate the separation (a resting slab nudged by
//!    1e-5 read as apart by 0.015). The support value is exact for the axis whatever the test said.
//!    Edges whose Gauss-map bound cannot reach what decides the result are dropped before the
//!    pairwise loop ([`query_edges`]); the result is the exhaustive loop's.
//! 4. Each query returns early once an axis separates by more than the margin. B's face query
//!    skips faces below A's best face, the edge query pairs below the best face of either: such
//!    an axis cannot change the result of step 5 ([`query_hulls_exhaustive`] is the reference).
//! 5. The winner prefers faces: face B beats face A, and an edge pair beats the best face, only
//!    when it separates more by [`AXIS_PREFERENCE_TOLERANCE`] × scale. The reported separation
//!    is the exact maximum over all tested axes.
//!
//! `src/narrowphase/gpu/sat.wgsl` runs the same steps on the GPU; keep the two in step.

use std::cell::RefCell;

use glam::{Quat, Vec3, Vec4};

use crate::constants::{AXIS_PREFERENCE_TOLERANCE, PARALLEL_EDGE_SINE, pair_scale};
use crate::hull::{ConvexHull, EdgeLanes, Plane};
use crate::pose::Isometry;
use crate::query::bounds::{SAT_BOUND_SLACK, inner_radius, max_on_arcs_loose};

/// The best face of one hull: its index and the separation of the other hull along its normal.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FaceQuery {
    /// Face index on the hull whose planes were tested.
    pub face: u32,
    /// Largest separation over the faces tested, in length units (negative = overlap).
    pub separation: f32,
}

/// The best edge pair: edge indices on A and B, the separation and the axis (A's frame,
/// unit, pointing from A toward B).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EdgeQuery {
    /// Edge index on A.
    pub edge_a: u32,
    /// Edge index on B.
    pub edge_b: u32,
    /// Separation along `axis`, in length units.
    pub separation: f32,
    /// Unit axis in A's frame, from A toward B.
    pub axis: Vec3,
}

/// Which axis the SAT chose.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SatAxis {
    /// A face of A: the manifold normal is that face's normal.
    FaceA(u32),
    /// A face of B: the manifold normal is minus that face's normal.
    FaceB(u32),
    /// An edge of A against an edge of B.
    EdgePair {
        /// Edge index on A.
        edge_a: u32,
        /// Edge index on B.
        edge_b: u32,
    },
}

/// Result of the SAT between two hulls, in A's frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SatResult {
    /// The chosen axis (after the face preference).
    pub axis: SatAxis,
    /// Unit normal of the chosen axis in A's frame, from A toward B.
    pub normal: Vec3,
    /// Separation along the chosen axis, in length units.
    pub axis_separation: f32,
    /// Largest separation over all tested axes (exact SAT value), in length units. When it
    /// exceeds the margin, the queries stopped early and `axis` is the separating one.
    pub separation: f32,
}

impl SatResult {
    /// True when an axis separates the hulls by more than `margin`.
    pub fn is_separated(&self, margin: f32) -> bool {
        self.separation > margin
    }
}

/// Up to this many face-vertex products (A's faces × B's vertices; a box against a box has 48)
/// the bounds of [`query_faces`] cost more than the support scans they skip, and it runs the
/// exhaustive loop (the same result either way).
const EXHAUSTIVE_FACE_WORK: usize = 64;

/// Best face of `a` against `b`: for each face plane of `a`, moved into B's frame by `a_in_b`
/// (A's pose in B's frame), the deepest vertex of `b`. Stops early once a face separates by more
/// than `margin`. Working in B's frame moves one plane per face instead of every vertex.
///
/// The result is [`query_faces_exhaustive`]'s: the first face in index order that separates by
/// more than `margin` if one does, else the first of largest separation. Faces whose bound
/// ([`crate::query::bounds`]: B's inner sphere) is below `min(L, margin)`, `L` the separation of
/// the face of largest bound, or not above the best so far, cannot change it and are skipped.
pub fn query_faces(a: &ConvexHull, b: &ConvexHull, a_in_b: &Isometry, margin: f32) -> FaceQuery {
    query_faces_above(a, b, (a_in_b, &a_in_b.inverse()), margin, f32::NEG_INFINITY)
}

/// [`query_faces`] for a caller that only needs faces separating by at least `floor` (length
/// units, at most `margin`; `-∞` for all), given A's pose in B's frame and its inverse: faces whose bound is below it are skipped too, and
/// the seed face is not measured when the floor is finite. The result is [`query_faces`]'s
/// whenever that separates by at least `floor`; else a face separating by less than `floor`, or
/// face 0 at `-∞`. (The SAT passes A's best face to B's query: a face of B below it changes
/// neither the axis nor the separation, see [`query_hulls_with`].)
fn query_faces_above(
    a: &ConvexHull,
    b: &ConvexHull,
    (a_in_b, b_in_a): (&Isometry, &Isometry),
    margin: f32,
    floor: f32,
) -> FaceQuery {
    debug_assert!(floor <= margin, "floor {floor} above the margin {margin}");
    if a.planes().len() * b.vertices().len() <= EXHAUSTIVE_FACE_WORK {
        return query_faces_exhaustive(a, b, a_in_b, margin);
    }
    // Bounds in A's frame: one dot product per face, four faces at a time.
    let b_centroid = b_in_a.transform_point(b.centroid());
    let reach =
        a_in_b.translation.length() + a.centroid().length() + a.radius() + b.centroid().length() + b.radius();
    let lift = Vec4::splat(SAT_BOUND_SLACK * reach - inner_radius(b));
    let (cx, cy, cz) = (
        Vec4::splat(b_centroid.x),
        Vec4::splat(b_centroid.y),
        Vec4::splat(b_centroid.z),
    );
    let bounds = |[nx, ny, nz, offset]: &[Vec4; 4]| nx * cx + ny * cy + nz * cz - *offset + lift;
    let (planes, plane_lanes) = (a.planes(), a.plane_lanes());
    let threshold = if floor > f32::NEG_INFINITY {
        floor
    } else {
        // Any face gives a separation the result reaches; one of largest bound the most useful
        // one. Per lane the largest bound and its group, then the best lane.
        let (mut top, mut top_group) = (Vec4::NEG_INFINITY, Vec4::ZERO);
        for (group, lanes) in plane_lanes.iter().enumerate() {
            let u = bounds(lanes);
            let higher = u.cmpgt(top);
            top = Vec4::select(higher, u, top);
            top_group = Vec4::select(higher, Vec4::splat(group as f32), top_group);
        }
        let lane = (1..4).fold(0, |best, i| if top[i] > top[best] { i } else { best });
        // Padding lanes repeat the last plane.
        let seed = (4 * top_group[lane] as usize + lane).min(planes.len() - 1);
        face_separation(&planes[seed], b, a_in_b).min(margin)
    };
    let mut best = FaceQuery {
        face: 0,
        separation: f32::NEG_INFINITY,
    };
    for (group, lanes) in plane_lanes.iter().enumerate() {
        let u = bounds(lanes);
        let mut passing = u.cmpge(Vec4::splat(threshold)).bitmask();
        while passing != 0 {
            let lane = passing.trailing_zeros() as usize;
            passing &= passing - 1;
            let face = 4 * group + lane;
            if face >= planes.len() || u[lane] <= best.separation {
                continue;
            }
            let separation = face_separation(&planes[face], b, a_in_b);
            if separation > best.separation {
                best = FaceQuery {
                    face: face as u32,
                    separation,
                };
                if separation > margin {
                    return best;
                }
            }
        }
    }
    best
}

/// The reference face query: [`query_faces`]'s result by testing every face of `a` in order.
pub fn query_faces_exhaustive(a: &ConvexHull, b: &ConvexHull, a_in_b: &Isometry, margin: f32) -> FaceQuery {
    let mut best = FaceQuery {
        face: 0,
        separation: f32::NEG_INFINITY,
    };
    for (face, plane) in a.planes().iter().enumerate() {
        let separation = face_separation(plane, b, a_in_b);
        if separation > best.separation {
            best = FaceQuery {
                face: face as u32,
                separation,
            };
            if separation > margin {
                break;
            }
        }
    }
    best
}

/// Separation of `b` below `plane` (of a hull posed at `a_in_b` in B's frame): B's deepest
/// vertex along the plane normal minus the plane's offset, in B's frame (length units).
#[inline]
pub fn face_separation(plane: &Plane, b: &ConvexHull, a_in_b: &Isometry) -> f32 {
    let normal = a_in_b.rotation * plane.normal;
    let offset = plane.offset + normal.dot(a_in_b.translation);
    b.lowest_along(normal) - offset
}

/// True when the Gauss-map arcs `a→b` (edge of A: its two face normals) and `c→d` (edge of B:
/// its two face normals, negated) cross on the unit sphere. `b_x_a = b × a`, `d_x_c = d × c`.
#[inline]
pub fn is_minkowski_face(a: Vec3, b: Vec3, b_x_a: Vec3, c: Vec3, d: Vec3, d_x_c: Vec3) -> bool {
    let cba = c.dot(b_x_a);
    let dba = d.dot(b_x_a);
    let adc = a.dot(d_x_c);
    let bdc = b.dot(d_x_c);
    cba * dba < 0.0 && adc * bdc < 0.0 && cba * bdc > 0.0
}

/// An edge of B moved into A's frame, with what the edge loop reads for a Gauss-map crossing.
#[derive(Clone, Copy, Debug, Default)]
struct EdgeInA {
    /// Edge index on B.
    index: u32,
    /// Start vertex, A's frame.
    start: Vec3,
    /// End vertex, A's frame.
    end: Vec3,
    /// The negated normals of the edge's two faces (`faces[0]`, `faces[1]`), A's frame: the ends
    /// of its Gauss-map arc as seen from A.
    normals: [Vec3; 2],
}

/// Per-thread buffers of the edge query, refilled for every pair. They only grow, so after the
/// first pairs the edge query allocates nothing.
#[derive(Default)]
struct EdgeScratch {
    /// The edges of B the pairwise loop visits, in B's edge order, in A's frame.
    kept: Vec<EdgeInA>,
    /// `kept`'s negated normals and their cross product, four edges per entry by coordinate
    /// (`[n0.x, n0.y, n0.z, n1.x, n1.y, n1.z, c.x, c.y, c.z]`, `c = n1 × n0`, lane `i` = edge
    /// `4 * entry + i` of `kept`, zero padding: a zero normal never crosses), so the Gauss-map
    /// test runs four edges at a time.
    lanes: Vec<[Vec4; 9]>,
}

impl EdgeInA {
    /// Edge `index` of `b` moved into A's frame by `b_in_a` (B's pose in A's frame).
    #[inline]
    fn new(b: &ConvexHull, b_in_a: &Isometry, index: usize) -> Self {
        let edge = b.edges()[index];
        let rotation: Quat = b_in_a.rotation;
        // Indexing, not `array::map` (which the compiler leaves as a call per element here).
        let vertex = |side: usize| b_in_a.transform_point(b.vertices()[edge.vertices[side] as usize]);
        let normal = |side: usize| -(rotation * b.planes()[edge.faces[side] as usize].normal);
        EdgeInA {
            index: index as u32,
            start: vertex(0),
            end: vertex(1),
            normals: [normal(0), normal(1)],
        }
    }
}

impl EdgeScratch {
    /// Fills `lanes` from `kept`.
    fn fill_lanes(&mut self) {
        self.lanes.clear();
        for (i, edge) in self.kept.iter().enumerate() {
            let [n0, n1] = edge.normals;
            let c = n1.cross(n0);
            if i % 4 == 0 {
                self.lanes.push([Vec4::ZERO; 9]);
            }
            let lanes = self.lanes.last_mut().expect("pushed above");
            for (lane, value) in lanes
                .iter_mut()
                .zip([n0.x, n0.y, n0.z, n1.x, n1.y, n1.z, c.x, c.y, c.z])
            {
                lane[i % 4] = value;
            }
        }
    }
}

thread_local! {
    static EDGE_SCRATCH: RefCell<EdgeScratch> = RefCell::new(EdgeScratch::default());
}

/// Up to this many edge pairs (boxes have 144) the bounds of [`query_edges`] cost more than the
/// pairs they drop, and it runs the exhaustive loop (the same result either way).
const EXHAUSTIVE_EDGE_PAIRS: usize = 400;

/// Best edge pair between `a` and `b` (B's geometry rotated and moved by `b_in_a`), testing only
/// Gauss-map-crossing pairs; stops early once one separates by more than `margin`.
/// Returns `None` when no pair qualifies. Small pairs run [`query_edges_exhaustive`], larger ones
/// [`query_edges_bounded`].
///
/// The result is [`query_edges_exhaustive`]'s (the same pair, axis and separation, ties to the
/// lowest A edge, then the lowest B edge): among the pairs the exhaustive loop tests, it is the
/// first in index order that separates by more than `margin` if one does, else the first of
/// largest separation. So dropping pairs that can neither exceed `min(L, margin)` (`L`: the
/// separation of any tested pair) nor the best so far leaves it unchanged. Steps:
/// 1. Bound every edge of A and of B ([`crate::query::bounds`]).
/// 2. Seed `L`: test all pairs of A's edge with the largest bound.
/// 3. Keep B's edges whose bound reaches `min(L, margin)`.
/// 4. Run the exhaustive loop in index order over A's edges whose bound reaches both
///    `min(L, margin)` and beyond the best so far, against the kept edges of B.
pub fn query_edges(a: &ConvexHull, b: &ConvexHull, b_in_a: &Isometry, margin: f32) -> Option<EdgeQuery> {
    if a.edges().len() * b.edges().len() <= EXHAUSTIVE_EDGE_PAIRS {
        query_edges_exhaustive(a, b, b_in_a, margin)
    } else {
        query_edges_bounded(a, b, b_in_a, margin)
    }
}

/// [`query_edges`] with the bounds whatever the hulls' size (see there).
pub fn query_edges_bounded(
    a: &ConvexHull,
    b: &ConvexHull,
    b_in_a: &Isometry,
    margin: f32,
) -> Option<EdgeQuery> {
    query_edges_above(a, b, b_in_a, margin, f32::NEG_INFINITY)
}

/// [`query_edges_bounded`] for a caller that only needs the pairs separating by at least
/// `floor` (length units, at most `margin`; `-∞` for all): pairs whose bound is below it are
/// dropped too, and the seed (step 2), which needs all of B's edges in A's frame, is skipped
/// when the floor is finite. The result is [`query_edges_exhaustive`]'s whenever that
/// separates by at least `floor`; else it is `None` or a pair separating by less than `floor`.
/// (The SAT passes its best face separation: an edge pair below it changes neither the axis nor
/// the separation, see [`query_hulls_with`].) Bounds are formed four edges at a
/// time in each hull's own frame ([`max_on_arcs_loose`]; rounding is within the slack), and only
/// the kept edges of B are moved into A's frame.
fn query_edges_above(
    a: &ConvexHull,
    b: &ConvexHull,
    b_in_a: &Isometry,
    margin: f32,
    floor: f32,
) -> Option<EdgeQuery> {
    debug_assert!(floor <= margin, "floor {floor} above the margin {margin}");
    EDGE_SCRATCH.with_borrow_mut(|scratch| {
        let scan = EdgeScan::new(a, b, b_in_a, margin);
        let b_centroid = b_in_a.transform_point(b.centroid());

        // 1. Loose bounds of A's edges, four at a time: A reaches `pa` along the axis, B reaches
        // down to its centroid minus its inner radius. (The exact arc bound, `max_on_arc`, is
        // not worth its cost on top of these, here or in step 3: it dropped a fifth of the
        // edges that pass, and the query ran 3% more instructions with it.)
        let a_lift = Vec4::splat(scan.slack - inner_radius(b));
        let a_loose = |lanes: &EdgeLanes| max_on_arcs_loose(lanes, b_centroid) + a_lift;

        // 2. Seed, when no floor is given: all pairs of A's edge with the largest loose bound.
        let mut threshold = floor;
        if floor == f32::NEG_INFINITY {
            let seed_edge = a
                .edge_lanes()
                .iter()
                .flat_map(|lanes| a_loose(lanes).to_array())
                .take(a.edges().len())
                .enumerate()
                .fold(
                    (0, f32::NEG_INFINITY),
                    |best, (i, u)| if u > best.1 { (i, u) } else { best },
                )
                .0;
            scratch.kept.clear();
            scratch
                .kept
                .extend((0..b.edges().len()).map(|ib| EdgeInA::new(b, b_in_a, ib)));
            scratch.fill_lanes();
            let mut seed = None;
            scan.edge(seed_edge, &scratch.kept, &scratch.lanes, &mut seed);
            threshold = seed.map_or(f32::NEG_INFINITY, |q| q.separation.min(margin));
        }

        // 3. Keep B's edges whose loose bound reaches the threshold (in B's frame: B reaches
        // `pb` against the axis, A reaches its centroid plus its inner radius), moved into A's
        // frame.
        let a_centroid_in_b = b_in_a.inverse_transform_point(a.centroid());
        let b_lift = scan.slack - inner_radius(a);
        scratch.kept.clear();
        for (group, lanes) in b.edge_lanes().iter().enumerate() {
            let loose = max_on_arcs_loose(lanes, a_centroid_in_b) + Vec4::splat(b_lift);
            let mut passing = loose.cmpge(Vec4::splat(threshold)).bitmask();
            while passing != 0 {
                let ib = 4 * group + passing.trailing_zeros() as usize;
                passing &= passing - 1;
                if ib >= b.edges().len() {
                    break;
                }
                scratch.kept.push(EdgeInA::new(b, b_in_a, ib));
            }
        }
        if scratch.kept.is_empty() {
            return None;
        }
        scratch.fill_lanes();

        // 4. The exhaustive loop over what can still matter, in A's edge order.
        let mut best: Option<EdgeQuery> = None;
        let cannot_matter = |bound: f32, best: Option<EdgeQuery>| {
            bound < threshold || best.is_some_and(|q| bound <= q.separation)
        };
        for (group, lanes) in a.edge_lanes().iter().enumerate() {
            let loose = a_loose(lanes);
            let mut passing = loose.cmpge(Vec4::splat(threshold)).bitmask();
            while passing != 0 {
                let lane = passing.trailing_zeros() as usize;
                passing &= passing - 1;
                let ia = 4 * group + lane;
                if ia >= a.edges().len() || cannot_matter(loose[lane], best) {
                    continue;
                }
                if scan.edge(ia, &scratch.kept, &scratch.lanes, &mut best) {
                    return best;
                }
            }
        }
        best
    })
}

/// The reference edge query: [`query_edges`]'s result by testing every Gauss-map-crossing pair
/// of A's and B's edges in index order (A's edge outer). Kept for the exactness tests and
/// benchmarks of [`query_edges`].
pub fn query_edges_exhaustive(
    a: &ConvexHull,
    b: &ConvexHull,
    b_in_a: &Isometry,
    margin: f32,
) -> Option<EdgeQuery> {
    EDGE_SCRATCH.with_borrow_mut(|scratch| {
        scratch.kept.clear();
        scratch
            .kept
            .extend((0..b.edges().len()).map(|ib| EdgeInA::new(b, b_in_a, ib)));
        scratch.fill_lanes();
        let scan = EdgeScan::new(a, b, b_in_a, margin);
        let mut best = None;
        for ia in 0..a.edges().len() {
            if scan.edge(ia, &scratch.kept, &scratch.lanes, &mut best) {
                break;
            }
        }
        best
    })
}

/// Bit `i` set when edge `i` of a group of four edges of B (`lanes`, see
/// [`EdgeScratch::lanes`]) and A's edge with face normals `a`, `b` (`b_x_a = b × a`) pass
/// [`is_minkowski_face`]: the same products and comparisons, per lane.
#[inline]
fn minkowski_faces(lanes: &[Vec4; 9], a: Vec3, b: Vec3, b_x_a: Vec3) -> u32 {
    let [cx, cy, cz, dx, dy, dz, dcx, dcy, dcz] = *lanes;
    let dot = |x: Vec4, y: Vec4, z: Vec4, v: Vec3| {
        (x * Vec4::splat(v.x)) + (y * Vec4::splat(v.y)) + (z * Vec4::splat(v.z))
    };
    let cba = dot(cx, cy, cz, b_x_a);
    let dba = dot(dx, dy, dz, b_x_a);
    let adc = dot(dcx, dcy, dcz, a);
    let bdc = dot(dcx, dcy, dcz, b);
    let crossing =
        (cba * dba).cmplt(Vec4::ZERO) & (adc * bdc).cmplt(Vec4::ZERO) & (cba * bdc).cmpgt(Vec4::ZERO);
    crossing.bitmask()
}

/// The pairwise step of the edge queries for one pair of hulls.
struct EdgeScan<'h> {
    a: &'h ConvexHull,
    b: &'h ConvexHull,
    b_in_a: &'h Isometry,
    margin: f32,
    /// Rounding allowance of the bounds, length units ([`SAT_BOUND_SLACK`] × the coordinate reach).
    slack: f32,
}

impl<'h> EdgeScan<'h> {
    fn new(a: &'h ConvexHull, b: &'h ConvexHull, b_in_a: &'h Isometry, margin: f32) -> Self {
        let reach = b_in_a.translation.length()
            + a.centroid().length()
            + a.radius()
            + b.centroid().length()
            + b.radius();
        EdgeScan {
            a,
            b,
            b_in_a,
            margin,
            slack: SAT_BOUND_SLACK * reach,
        }
    }

    /// Tests A's edge `ia` against `kept` (B's edges in A's frame, index order; `lanes` their
    /// Gauss-map lanes), updating `best` (strictly larger separation wins). Returns true when a
    /// pair separates by more than the margin (then `best` is that pair).
    fn edge(&self, ia: usize, kept: &[EdgeInA], lanes: &[[Vec4; 9]], best: &mut Option<EdgeQuery>) -> bool {
        let ea = self.a.edges()[ia];
        let a_normals = self.a.planes();
        let a_vertices = self.a.vertices();
        let na0 = a_normals[ea.faces[0] as usize].normal;
        let na1 = a_normals[ea.faces[1] as usize].normal;
        let pa = a_vertices[ea.vertices[0] as usize];
        let da = self.a.edge_directions()[ia];
        let na1_x_na0 = na1.cross(na0);
        let a_centroid = self.a.centroid();
        for (group, lanes) in lanes.iter().enumerate() {
            let mut crossing = minkowski_faces(lanes, na0, na1, na1_x_na0);
            while crossing != 0 {
                let eb = &kept[4 * group + crossing.trailing_zeros() as usize];
                crossing &= crossing - 1;
                // B's direction is formed here, only for crossing pairs (few), not for all of
                // B's edges.
                let pb = eb.start;
                let Some(axis) = edge_pair_axis(pa, da, pb, eb.end, a_centroid) else {
                    continue;
                };
                // The edge points bound the support value from above (up to rounding, hence
                // the slack): re-measure only if it can win.
                if best.is_some_and(|q| axis.dot(pb - pa) + self.slack <= q.separation) {
                    continue;
                }
                let separation = separation_along(self.a, self.b, self.b_in_a, axis);
                if best.is_none_or(|q| separation > q.separation) {
                    *best = Some(EdgeQuery {
                        edge_a: ia as u32,
                        edge_b: eb.index,
                        separation,
                        axis,
                    });
                    if separation > self.margin {
                        return true;
                    }
                }
            }
        }
        false
    }
}

/// The axis of A's edge (start `pa`, unit direction `da`) and B's edge from `pb` to `qb` (A's
/// frame) as the edge query forms it: `da × normalize(qb − pb)` made unit, oriented away from
/// A's centroid `a_centroid`; `None` when the edges are parallel ([`PARALLEL_EDGE_SINE`]).
/// Unit directions so the cross product cannot overflow f32 whatever the hull's size, and its
/// length is the sine of their angle at any scale.
#[inline]
pub fn edge_pair_axis(pa: Vec3, da: Vec3, pb: Vec3, qb: Vec3, a_centroid: Vec3) -> Option<Vec3> {
    let cross = da.cross((qb - pb).normalize());
    let length = cross.length();
    if length < PARALLEL_EDGE_SINE {
        return None;
    }
    let axis = cross / length;
    Some(if axis.dot(pa - a_centroid) < 0.0 {
        -axis
    } else {
        axis
    })
}

/// The axis ([`edge_pair_axis`]) and separation ([`separation_along`]) of edge `edge_a` of `a`
/// and edge `edge_b` of `b` (posed at `b_in_a`), bit for bit as the edge query computes them;
/// `None` when they are parallel.
pub fn edge_pair_separation(
    a: &ConvexHull,
    b: &ConvexHull,
    b_in_a: &Isometry,
    edge_a: u32,
    edge_b: u32,
) -> Option<(Vec3, f32)> {
    let axis = edge_pair_axis_of(a, b, b_in_a, edge_a, edge_b)?;
    Some((axis, separation_along(a, b, b_in_a, axis)))
}

/// The axis of [`edge_pair_separation`] alone: [`edge_pair_axis`] of edge `edge_a` of `a` and
/// edge `edge_b` of `b` (posed at `b_in_a`), A's frame; `None` when they are parallel.
pub(crate) fn edge_pair_axis_of(
    a: &ConvexHull,
    b: &ConvexHull,
    b_in_a: &Isometry,
    edge_a: u32,
    edge_b: u32,
) -> Option<Vec3> {
    let pa = a.vertices()[a.edges()[edge_a as usize].vertices[0] as usize];
    let [vb0, vb1] = b.edges()[edge_b as usize].vertices;
    let pb = b_in_a.transform_point(b.vertices()[vb0 as usize]);
    let qb = b_in_a.transform_point(b.vertices()[vb1 as usize]);
    let da = a.edge_directions()[edge_a as usize];
    edge_pair_axis(pa, da, pb, qb, a.centroid())
}

/// Separation of `b` (posed at `b_in_a`) from `a` along the unit `axis` (A's frame, from A toward
/// B): the gap between A's and B's support points, in length units (negative = overlap).
pub fn separation_along(a: &ConvexHull, b: &ConvexHull, b_in_a: &Isometry, axis: Vec3) -> f32 {
    let axis_in_b = b_in_a.inverse_transform_vector(axis);
    let b_lowest = b.lowest_along(axis_in_b);
    // Negating the axis negates every product exactly: this is A's highest vertex along `axis`.
    let a_highest = -a.lowest_along(-axis);
    b_lowest + axis.dot(b_in_a.translation) - a_highest
}

/// The full SAT between hull `a` and hull `b` posed at `b_in_a` (B's pose in A's frame), with
/// the face preference of [`AXIS_PREFERENCE_TOLERANCE`] × the pair's scale ([`pair_scale`]).
pub fn query_hulls(a: &ConvexHull, b: &ConvexHull, b_in_a: &Isometry, margin: f32) -> SatResult {
    debug_assert!(b_in_a.is_valid(), "invalid pose {b_in_a:?}");
    let tolerance = AXIS_PREFERENCE_TOLERANCE * pair_scale(a.radius(), b.radius());
    query_hulls_preferring_faces_by(a, b, b_in_a, margin, tolerance)
}

/// [`query_hulls`] with an explicit face preference `tolerance` in length units; 0 picks the
/// axis of largest separation (ties to face A, then face B).
pub fn query_hulls_preferring_faces_by(
    a: &ConvexHull,
    b: &ConvexHull,
    b_in_a: &Isometry,
    margin: f32,
    tolerance: f32,
) -> SatResult {
    query_hulls_with(a, b, b_in_a, margin, tolerance, false)
}

/// The reference SAT: [`query_hulls`]'s result from the exhaustive queries
/// ([`query_faces_exhaustive`], [`query_edges_exhaustive`]) with no floors; for the exactness
/// tests of the bounds and floors.
pub fn query_hulls_exhaustive(a: &ConvexHull, b: &ConvexHull, b_in_a: &Isometry, margin: f32) -> SatResult {
    let tolerance = AXIS_PREFERENCE_TOLERANCE * pair_scale(a.radius(), b.radius());
    query_hulls_with(a, b, b_in_a, margin, tolerance, true)
}

/// Steps 1 to 5 with the bounded queries and floors, or (`exhaustive`) the reference queries.
///
/// Floors: B's face query skips faces below A's best face separation `fa`, the edge query pairs
/// below `F = max(fa, fb)`. Neither changes the result: a skipped face or pair separates by less
/// than what is already found, so it is not over the margin (`F` is at most the margin here), it
/// cannot beat the chosen face by the tolerance (the chosen face is within the tolerance of
/// `F`), and `max` with it is `F` again; what reaches the floor is found as without it.
fn query_hulls_with(
    a: &ConvexHull,
    b: &ConvexHull,
    b_in_a: &Isometry,
    margin: f32,
    tolerance: f32,
    exhaustive: bool,
) -> SatResult {
    let a_in_b = b_in_a.inverse();
    let face_a = if exhaustive {
        query_faces_exhaustive(a, b, &a_in_b, margin)
    } else {
        query_faces_above(a, b, (&a_in_b, b_in_a), margin, f32::NEG_INFINITY)
    };
    let face_a_normal = a.planes()[face_a.face as usize].normal;
    if face_a.separation > margin {
        return SatResult::on_face_a(face_a, face_a_normal);
    }

    let face_b = if exhaustive {
        query_faces_exhaustive(b, a, b_in_a, margin)
    } else {
        query_faces_above(b, a, (b_in_a, &a_in_b), margin, face_a.separation)
    };
    let face_b_normal = -(b_in_a.rotation * b.planes()[face_b.face as usize].normal);
    if face_b.separation > margin {
        return SatResult::on_face_b(face_b, face_b_normal);
    }

    let floor = face_a.separation.max(face_b.separation);
    let edge = if exhaustive || a.edges().len() * b.edges().len() <= EXHAUSTIVE_EDGE_PAIRS {
        query_edges_exhaustive(a, b, b_in_a, margin)
    } else {
        query_edges_above(a, b, b_in_a, margin, floor)
    };
    if let Some(e) = edge
        && e.separation > margin
    {
        return SatResult::on_edge_pair(e);
    }
    prefer_faces((face_a, face_a_normal), (face_b, face_b_normal), edge, tolerance)
}

impl SatResult {
    /// The result on face `face` of A (normal `normal`, A's frame).
    pub(crate) fn on_face_a(face: FaceQuery, normal: Vec3) -> SatResult {
        SatResult {
            axis: SatAxis::FaceA(face.face),
            normal,
            axis_separation: face.separation,
            separation: face.separation,
        }
    }

    /// The result on face `face` of B (`normal`: minus its normal, A's frame).
    pub(crate) fn on_face_b(face: FaceQuery, normal: Vec3) -> SatResult {
        SatResult {
            axis: SatAxis::FaceB(face.face),
            normal,
            axis_separation: face.separation,
            separation: face.separation,
        }
    }

    /// The result on an edge pair.
    pub(crate) fn on_edge_pair(edge: EdgeQuery) -> SatResult {
        SatResult {
            axis: SatAxis::EdgePair {
                edge_a: edge.edge_a,
                edge_b: edge.edge_b,
            },
            normal: edge.axis,
            axis_separation: edge.separation,
            separation: edge.separation,
        }
    }
}

/// Step 5 once no axis separates by more than the margin: the best face of A and of B (each with
/// its manifold normal, A's frame) and the best edge pair, with the face preference `tolerance`
/// (length units). The separation is the largest of the three.
pub(crate) fn prefer_faces(
    (face_a, face_a_normal): (FaceQuery, Vec3),
    (face_b, face_b_normal): (FaceQuery, Vec3),
    edge: Option<EdgeQuery>,
    tolerance: f32,
) -> SatResult {
    let mut result = if face_b.separation > face_a.separation + tolerance {
        SatResult::on_face_b(face_b, face_b_normal)
    } else {
        SatResult::on_face_a(face_a, face_a_normal)
    };
    result.separation = face_a.separation.max(face_b.separation);
    if let Some(e) = edge {
        if e.separation > result.axis_separation + tolerance {
            result.axis = SatAxis::EdgePair {
                edge_a: e.edge_a,
                edge_b: e.edge_b,
            };
            result.normal = e.axis;
            result.axis_separation = e.separation;
        }
        result.separation = result.separation.max(e.separation);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Unit vectors spread over the sphere (a golden-angle spiral), deterministic.
    fn directions(count: usize) -> Vec<Vec3> {
        (0..count)
            .map(|i| {
                let z = 1.0 - 2.0 * (i as f32 + 0.5) / count as f32;
                let angle = i as f32 * 2.399_963;
                let r = (1.0 - z * z).sqrt();
                Vec3::new(r * angle.cos(), r * angle.sin(), z)
            })
            .collect()
    }

    #[test]
    fn lane_gauss_map_test_matches_the_scalar_one() {
        let normals = directions(24);
        // Arcs between neighbouring spiral points (short) and far apart ones (long).
        let arcs: Vec<(Vec3, Vec3)> = (0..normals.len())
            .flat_map(|i| {
                [
                    (normals[i], normals[(i + 1) % 24]),
                    (normals[i], normals[(i + 7) % 24]),
                ]
            })
            .collect();
        let (mut tested, mut crossing) = (0, 0);
        for &(a, b) in &arcs {
            let b_x_a = b.cross(a);
            for group in arcs.chunks(4) {
                let mut lanes = [Vec4::ZERO; 9];
                for (i, &(c, d)) in group.iter().enumerate() {
                    let d_x_c = d.cross(c);
                    for (lane, value) in lanes
                        .iter_mut()
                        .zip([c.x, c.y, c.z, d.x, d.y, d.z, d_x_c.x, d_x_c.y, d_x_c.z])
                    {
                        lane[i] = value;
                    }
                }
                let mask = minkowski_faces(&lanes, a, b, b_x_a);
                for (i, &(c, d)) in group.iter().enumerate() {
                    let expected = is_minkowski_face(a, b, b_x_a, c, d, d.cross(c));
                    assert_eq!(mask & (1 << i) != 0, expected, "arc {a} {b} against {c} {d}");
                    tested += 1;
                    crossing += expected as usize;
                }
            }
        }
        // Both outcomes occur, so the comparison covers both.
        assert!(crossing > 0 && crossing < tested, "{crossing} of {tested}");
    }

    #[test]
    fn lowest_along_matches_the_scalar_minimum() {
        let hull = ConvexHull::from_points(&directions(37).iter().map(|d| *d * 1.5).collect::<Vec<_>>())
            .expect("points on a sphere make a hull");
        for direction in directions(50) {
            let scalar = hull
                .vertices()
                .iter()
                .map(|v| v.dot(direction))
                .fold(f32::INFINITY, f32::min);
            assert_eq!(hull.lowest_along(direction), scalar);
        }
    }
}

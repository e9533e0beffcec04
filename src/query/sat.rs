//! Separating axis test between two convex hulls, in hull A's local frame.
//!
//! 1. Face query of A: for every face plane of A, the deepest vertex of B below it (faces whose
//!    bound from B's inner sphere cannot matter are skipped; the result is the exhaustive loop's).
//! 2. Face query of B: the same with the roles swapped (B's planes moved into A's frame).
//! 3. Edge query ([`query_edges`]): pairs whose Gauss-map arcs cross, parallel ones skipped, the
//!    axis oriented away from A's centroid; a pair that would become the best is re-measured with
//!    both hulls' support points. Edges whose bound cannot matter are dropped first.
//! 4. Each query returns early once an axis separates by more than the margin; axes below the best
//!    face are skipped (`query_hulls_exhaustive` is the reference).
//! 5. Face preference: face B beats face A, an edge pair the best face, only by
//!    [`AXIS_PREFERENCE_TOLERANCE`] × scale; the separation is the exact maximum over all axes.
//!
//! WGSL twin: `shaders/narrowphase/sat.wgsl`. Why the skips are exact: see docs/design/sat.md.

use std::cell::RefCell;

use glam::{Mat4, Quat, Vec3, Vec4};

use crate::constants::{AXIS_PREFERENCE_TOLERANCE, PARALLEL_EDGE_SINE, pair_scale};
use crate::hull::{ConvexHull, EdgeLanes, Plane};
use crate::pose::Isometry;
use crate::query::bounds::{SAT_BOUND_SLACK, inner_radius, max_on_arcs};

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

/// [`query_faces`] keeps the bounds of this many groups of four faces at a time (a buffer on the
/// stack), and the faces whose bound passes as one 64-bit mask.
const FACE_CHUNK_GROUPS: usize = 16;

/// Best face of `a` against `b`: for each face plane of `a`, moved into B's frame by `a_in_b`
/// (A's pose in B's frame), the deepest vertex of `b`. Stops early once a face separates by more
/// than `margin`. Working in B's frame moves one plane per face instead of every vertex.
///
/// The result is `query_faces_exhaustive`'s: the first face in index order that separates by
/// more than `margin` if one does, else the first of largest separation. Faces whose bound
/// (`query::bounds`: B's inner sphere) is below `min(L, margin)`, `L` the separation of
/// the face of largest bound, or not above the best so far, cannot change it and are skipped.
/// That face, measured first, is not measured again.
pub fn query_faces(a: &ConvexHull, b: &ConvexHull, a_in_b: &Isometry, margin: f32) -> FaceQuery {
    query_faces_above(a, b, (a_in_b, &a_in_b.inverse()), margin, f32::NEG_INFINITY)
}

/// [`query_faces`] for a caller that only needs faces separating by at least `floor` (length
/// units, at most `margin`; `-∞` for all), given A's pose in B's frame and its inverse: faces
/// whose bound is below it are skipped too, and the seed face is not measured when the floor is
/// finite. The result is [`query_faces`]'s
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
        return exhaustive::query_faces_exhaustive(a, b, a_in_b, margin);
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
    // The bounds of one chunk of groups. Without a floor the seed's loop fills it: for a hull
    // of one chunk the bounds are then formed once.
    let mut chunk_bounds = [[0.0f32; 4]; FACE_CHUNK_GROUPS];
    let bounds_kept = floor == f32::NEG_INFINITY && plane_lanes.len() <= FACE_CHUNK_GROUPS;
    // The threshold, the best face so far, and the face already measured (`u32::MAX`: none).
    let no_face = FaceQuery {
        face: 0,
        separation: f32::NEG_INFINITY,
    };
    let (threshold, mut best, seed) = if floor > f32::NEG_INFINITY {
        (floor, no_face, u32::MAX)
    } else {
        // Any face gives a separation the result reaches; one of largest bound the most useful
        // one. Per lane the largest bound and its group, then the best lane.
        let (mut top, mut top_group) = (Vec4::NEG_INFINITY, Vec4::ZERO);
        for (group, lanes) in plane_lanes.iter().enumerate() {
            let u = bounds(lanes);
            // Kept when one chunk holds them all (else overwritten, and formed again below).
            chunk_bounds[group % FACE_CHUNK_GROUPS] = u.to_array();
            let higher = u.cmpgt(top);
            top = Vec4::select(higher, u, top);
            top_group = Vec4::select(higher, Vec4::splat(group as f32), top_group);
        }
        let (top, top_group) = (top.to_array(), top_group.to_array());
        let lane = (1..4).fold(0, |best, i| if top[i] > top[best] { i } else { best });
        // Padding lanes repeat the last plane.
        let seed = (4 * top_group[lane] as usize + lane).min(planes.len() - 1);
        let separation = face_separation(&planes[seed], b, a_in_b);
        if separation > margin {
            // The result is the first face in index order beyond the margin: search for it.
            (margin, no_face, u32::MAX)
        } else {
            // The seed is the best so far, and is not measured again. The loop below keeps
            // the first face of largest separation in index order whatever order it meets the
            // seed in (ties go to the lower index).
            let seed = FaceQuery {
                face: seed as u32,
                separation,
            };
            (separation, seed, seed.face)
        }
    };
    // The faces whose bound passes, one bit each, a chunk of groups at a time; then up to four
    // not skipped by the best so far have their separations formed together
    // ([`face_separations`]) before the loop's decisions are taken on them in order. (A face
    // skipped when its four are gathered is skipped by the loop too: the best only grows.)
    for (chunk, groups) in plane_lanes.chunks(FACE_CHUNK_GROUPS).enumerate() {
        let mut passing = 0u64;
        for (i, lanes) in groups.iter().enumerate() {
            if !bounds_kept {
                chunk_bounds[i] = bounds(lanes).to_array();
            }
            let mask = Vec4::from_array(chunk_bounds[i])
                .cmpge(Vec4::splat(threshold))
                .bitmask()
                & real_lanes(chunk * FACE_CHUNK_GROUPS + i, planes.len());
            passing |= u64::from(mask) << (4 * i);
        }
        while passing != 0 {
            let mut four = [(0u32, 0.0f32); 4];
            let mut taken = 0;
            while passing != 0 && taken < 4 {
                let lane = passing.trailing_zeros() as usize;
                passing &= passing - 1;
                let (face, bound) = ((64 * chunk + lane) as u32, chunk_bounds[lane / 4][lane % 4]);
                four[taken] = (face, bound);
                taken += (face != seed && bound > best.separation) as usize;
            }
            // Entries from `taken` on are ignored.
            let faces = four.map(|(face, _)| &planes[face as usize]);
            let separations = face_separations(faces, b, a_in_b);
            for (&(face, bound), separation) in four[..taken].iter().zip(separations) {
                // The loop's decision (skipped when the bound does not beat the best, else
                // taken when strictly larger, or as large at a lower index: the seed may
                // come later) as selects, not branches.
                let better = bound > best.separation
                    && (separation > best.separation || (separation == best.separation && face < best.face));
                best.face = if better { face } else { best.face };
                best.separation = if better { separation } else { best.separation };
                if better && separation > margin {
                    return best;
                }
            }
        }
    }
    best
}

/// [`face_separation`] of four planes at once, bit for bit: B's vertices are read once for the
/// four, and the four minima are independent (the loop's latency overlaps). The planes are
/// moved by lanes ([`rotate_lanes`]), so their normals never go through memory as `Vec3`s (a
/// store of three floats read back as four stalls the load).
#[inline]
fn face_separations(planes: [&Plane; 4], b: &ConvexHull, a_in_b: &Isometry) -> [f32; 4] {
    // By lane: a transpose of the four `[normal, offset]` rows.
    let rows = planes.map(|p| Vec4::new(p.normal.x, p.normal.y, p.normal.z, p.offset));
    let lanes = Mat4::from_cols(rows[0], rows[1], rows[2], rows[3]).transpose();
    let [nx, ny, nz] = rotate_lanes(a_in_b.rotation, [lanes.x_axis, lanes.y_axis, lanes.z_axis]);
    let t = a_in_b.translation;
    // `offset + normal · t`, the dot product rounded as `Vec3::dot` does.
    let offsets =
        lanes.w_axis + (((nx * Vec4::splat(t.x)) + (ny * Vec4::splat(t.y))) + (nz * Vec4::splat(t.z)));
    (b.lowest_along_four([nx, ny, nz]) - offsets).to_array()
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
    /// Unit direction, `normalize(end − start)` with both ends in A's frame (the value
    /// [`edge_pair_axis`] forms from them, bit for bit), formed once per kept edge instead of once
    /// per crossing.
    direction: Vec3,
}

/// A Gauss-map crossing (from a [`CrossingMask`]) waiting for its axis ([`EdgeScan::settle`]).
#[derive(Clone, Copy, Debug, Default)]
struct Crossing {
    /// Edge index on A.
    edge_a: u32,
    /// Index into [`EdgeScratch::kept`].
    kept: u32,
    /// The bound of A's edge that decides whether its pairs can matter (length units; `+∞` when
    /// the caller bounds nothing).
    bound: f32,
}

/// The axis of a [`Crossing`] and what decides whether it is re-measured.
#[derive(Clone, Copy, Debug, Default)]
struct CrossingAxis {
    /// [`edge_pair_axis`]'s unit axis, A's frame (meaningless when `parallel`).
    axis: Vec3,
    /// `axis · (pb − pa)`: the separation of the two edges' points along the axis, an upper bound
    /// of the pair's separation up to rounding (length units).
    edge_gap: f32,
    /// The edges are parallel ([`PARALLEL_EDGE_SINE`]): no axis.
    parallel: bool,
}

/// Per-thread buffers of the edge query, refilled for every pair. They only grow, so after the
/// first pairs the edge query allocates nothing.
#[derive(Default)]
struct EdgeScratch {
    /// Edge indices of B whose bound passes (step 3), then moved into `kept`.
    passing_b: Vec<u32>,
    /// The edges of B the pairwise loop visits, in B's edge order, in A's frame.
    kept: Vec<EdgeInA>,
    /// `kept`'s negated normals and their cross product, four edges per entry by coordinate
    /// (`[n0.x, n0.y, n0.z, n1.x, n1.y, n1.z, c.x, c.y, c.z]`, `c = n1 × n0`, lane `i` = edge
    /// `4 * entry + i` of `kept`, zero padding: a zero normal never crosses), so the Gauss-map
    /// test runs four edges at a time.
    lanes: Vec<[Vec4; 9]>,
    /// The edges of A the pairwise loop visits, in index order, with their bounds.
    passing_a: Vec<(u32, f32)>,
    /// Crossings waiting to be settled and their axes ([`EdgeScan::scan`]).
    batch: CrossingBatch,
}

/// The Gauss-map crossings of one edge of A with up to 64 kept edges of B, found by
/// [`EdgeScan::edge`].
#[derive(Clone, Copy, Debug, Default)]
struct CrossingMask {
    /// Edge index on A.
    edge_a: u32,
    /// The bound of A's edge (see [`Crossing`]).
    bound: f32,
    /// Bit `i` set when kept edge `first + i` of B crosses.
    bits: u64,
    /// Index into [`EdgeScratch::kept`] of bit 0.
    first: u32,
}

/// Crossings found by [`EdgeScan::edge`] and not yet settled ([`EdgeScan::settle`]).
#[derive(Default)]
struct CrossingBatch {
    /// Crossing masks in the exhaustive loop's order, none empty; entries from `masks_count` on
    /// are scratch.
    masks: Vec<CrossingMask>,
    /// How many of `masks` are waiting.
    masks_count: usize,
    /// How many crossings `masks` hold.
    count: usize,
    /// The waiting crossings one by one, in order (formed by [`EdgeScan::settle`]).
    crossings: Vec<Crossing>,
    /// The axes of the waiting crossings, same order.
    axes: Vec<CrossingAxis>,
}

/// Calls `found(index, bound)` for every item of `groups` (lane groups of `len` items, the last
/// one padded) whose lane of `bound(group)` reaches `threshold`, in index order. The passing
/// lanes of 16 groups are one 64-bit mask, read with trailing_zeros: no store per lane that
/// fails and no branch per group (a branch on each group's mask mispredicts about once per
/// group when the masks are irregular, as they are here).
#[inline]
fn for_each_passing<L>(
    groups: &[L],
    len: usize,
    threshold: f32,
    bound: impl Fn(&L) -> Vec4,
    mut found: impl FnMut(u32, f32),
) {
    for (chunk, groups) in groups.chunks(16).enumerate() {
        let mut bounds = [[0.0f32; 4]; 16];
        let mut passing = 0u64;
        for (i, lanes) in groups.iter().enumerate() {
            let u = bound(lanes);
            // By value: indexing a `Vec4` by a variable lane is a jump table.
            bounds[i] = u.to_array();
            let mask = u.cmpge(Vec4::splat(threshold)).bitmask() & real_lanes(16 * chunk + i, len);
            passing |= u64::from(mask) << (4 * i);
        }
        while passing != 0 {
            let lane = passing.trailing_zeros() as usize;
            passing &= passing - 1;
            found((64 * chunk + lane) as u32, bounds[lane / 4][lane % 4]);
        }
    }
}

/// The lanes of lane group `group` that hold one of `len` items (the last group's padding lanes
/// repeat its last item and are left out), as a 4-bit mask.
#[inline]
pub(crate) fn real_lanes(group: usize, len: usize) -> u32 {
    (1 << (len - 4 * group).min(4)) - 1
}

impl EdgeScratch {
    /// Moves B's edges `passing_b` (B's pose in A's frame: `b_in_a`) into A's frame, four at a
    /// time, into `kept` and `lanes`. Each value is the one the scalar code forms, bit for bit:
    /// end points `b_in_a.transform_point(v)`, direction `(end − start).normalize()`,
    /// negated face normals `-(b_in_a.rotation * n)` ([`rotate_lanes`]) and their cross product.
    fn keep(&mut self, b: &ConvexHull, b_in_a: &Isometry) {
        let packed = b.edge_records();
        let q = b_in_a.rotation;
        let t = b_in_a.translation;
        self.kept.clear();
        self.lanes.clear();
        for group in self.passing_b.chunks(4) {
            // Lane `i` is edge `group[i]`; unused lanes repeat the first edge, and their normals
            // are zeroed below (a zero normal never crosses). By coordinate: start, end, the two
            // face normals, each x, y, z.
            // Four packed records ([`ConvexHull::edge_records`]) transposed by shuffles.
            let records: [&[Vec4; 3]; 4] =
                std::array::from_fn(|i| &packed[group.get(i).copied().unwrap_or(group[0]) as usize]);
            let by_lane = |k: usize| {
                let m =
                    Mat4::from_cols(records[0][k], records[1][k], records[2][k], records[3][k]).transpose();
                [m.x_axis, m.y_axis, m.z_axis, m.w_axis]
            };
            let ([a0, a1, a2, a3], [b0, b1, b2, b3], [c0, c1, c2, c3]) = (by_lane(0), by_lane(1), by_lane(2));
            let local = [a0, a1, a2, a3, b0, b1, b2, b3, c0, c1, c2, c3];
            let coordinates = |k: usize| [local[3 * k], local[3 * k + 1], local[3 * k + 2]];
            let moved = |k: usize| {
                let [x, y, z] = rotate_lanes(q, coordinates(k));
                [x + Vec4::splat(t.x), y + Vec4::splat(t.y), z + Vec4::splat(t.z)]
            };
            let (start, end) = (moved(0), moved(1));
            let valid = Vec4::select(
                glam::BVec4A::from_array(std::array::from_fn(|i| i < group.len())),
                Vec4::ONE,
                Vec4::ZERO,
            );
            let normal = |k: usize| rotate_lanes(q, coordinates(k)).map(|c| -c * valid);
            let ([n0x, n0y, n0z], [n1x, n1y, n1z]) = (normal(2), normal(3));
            // `n1 × n0` as `Vec3::cross` forms it.
            let (cx, cy, cz) = (
                n1y * n0z - n0y * n1z,
                n1z * n0x - n0z * n1x,
                n1x * n0y - n0x * n1y,
            );
            self.lanes.push([n0x, n0y, n0z, n1x, n1y, n1z, cx, cy, cz]);
            // `normalize` as `Vec3::normalize` forms it: times the reciprocal of the length.
            let [dx, dy, dz] = [end[0] - start[0], end[1] - start[1], end[2] - start[2]];
            let recip = Vec4::ONE / ((dx * dx) + (dy * dy) + (dz * dz)).sqrt();
            let [dx, dy, dz] = [dx * recip, dy * recip, dz * recip].map(|v| v.to_array());
            let [sx, sy, sz] = start.map(|v| v.to_array());
            self.kept
                .extend(group.iter().enumerate().map(|(i, &index)| EdgeInA {
                    index,
                    start: Vec3::new(sx[i], sy[i], sz[i]),
                    direction: Vec3::new(dx[i], dy[i], dz[i]),
                }));
        }
    }
}

/// `q * v` for four vectors by coordinate (`v = [x, y, z]` lanes), bit for bit as glam's
/// `Quat * Vec3` (its SSE2 `mul_vec3a`): `v (w² − b·b) + b (2 (v·b)) + (b × v)(2 w)` with
/// `b = (q.x, q.y, q.z)`, every product and sum in the same order.
#[inline]
pub(crate) fn rotate_lanes(q: Quat, [x, y, z]: [Vec4; 3]) -> [Vec4; 3] {
    let (bx, by, bz, w) = (q.x, q.y, q.z, q.w);
    let b2 = (bx * bx + by * by) + bz * bz;
    let scale = Vec4::splat(w * w - b2);
    let w2 = Vec4::splat(w * 2.0);
    let (bx, by, bz) = (Vec4::splat(bx), Vec4::splat(by), Vec4::splat(bz));
    let vb2 = (((x * bx) + (y * by)) + (z * bz)) * Vec4::splat(2.0);
    let cross = [by * z - bz * y, bz * x - bx * z, bx * y - by * x];
    [
        ((x * scale) + (bx * vb2)) + (cross[0] * w2),
        ((y * scale) + (by * vb2)) + (cross[1] * w2),
        ((z * scale) + (bz * vb2)) + (cross[2] * w2),
    ]
}

thread_local! {
    static EDGE_SCRATCH: RefCell<EdgeScratch> = RefCell::new(EdgeScratch::default());
}

/// Up to this many edge pairs (a tetrahedron against a triangular prism has 54) the bounds of
/// [`query_edges`] cost more than the pairs they drop, and it runs the exhaustive loop (the
/// same result either way). Above it, given the SAT's floor (the best face), the bounded query
/// is the cheaper (8-vertex hulls, 324 edge pairs: docs/benchmarks-history.md). Mirrored by
/// sat.wgsl's `EXHAUSTIVE_EDGE_PAIRS`.
const EXHAUSTIVE_EDGE_PAIRS: usize = 64;

/// The edge loop settles its crossings ([`EdgeScan::settle`]) once this many are waiting: enough
/// to overlap their square roots and divisions, few enough that a pair beyond the margin found
/// early does not leave many axes formed for nothing.
const SETTLE_CROSSINGS: usize = 8;

/// Best edge pair between `a` and `b` (B's geometry rotated and moved by `b_in_a`), testing only
/// Gauss-map-crossing pairs; stops early once one separates by more than `margin`.
/// Returns `None` when no pair qualifies. Small pairs run `query_edges_exhaustive`, larger ones
/// [`query_edges_bounded`], with the same result (pair, axis and separation; ties to the lowest A
/// edge, then the lowest B edge; see docs/design/sat.md). Steps:
/// 1. Bound every edge of A and of B (`query::bounds`).
/// 2. Seed `L`: test all pairs of A's edge with the largest bound.
/// 3. Keep B's edges whose bound reaches `min(L, margin)`.
/// 4. Run the exhaustive loop in index order over A's edges whose bound reaches both
///    `min(L, margin)` and beyond the best so far, against the kept edges of B.
pub fn query_edges(a: &ConvexHull, b: &ConvexHull, b_in_a: &Isometry, margin: f32) -> Option<EdgeQuery> {
    if a.edges().len() * b.edges().len() <= EXHAUSTIVE_EDGE_PAIRS {
        exhaustive::query_edges_exhaustive(a, b, b_in_a, margin)
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
/// when the floor is finite. The result is `query_edges_exhaustive`'s whenever that
/// separates by at least `floor`; else it is `None` or a pair separating by less than `floor`.
/// (The SAT passes its best face separation: an edge pair below it changes neither the axis nor
/// the separation, see [`query_hulls_with`].) Bounds are formed four edges at a
/// time in each hull's own frame ([`max_on_arcs`]; rounding is within the slack), and only
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

        // 1. Bounds of A's edges from their arcs' end values, four at a time: A reaches `pa`
        // along the axis, B reaches down to its centroid minus its inner radius.
        let a_lift = Vec4::splat(scan.slack - inner_radius(b));
        let a_bound = |lanes: &EdgeLanes| max_on_arcs(lanes, b_centroid) + a_lift;

        // 2. Seed, when no floor is given: all pairs of A's edge with the largest bound.
        let mut threshold = floor;
        if floor == f32::NEG_INFINITY {
            let seed_edge = a
                .edge_lanes()
                .iter()
                .flat_map(|lanes| a_bound(lanes).to_array())
                .take(a.edges().len())
                .enumerate()
                .fold(
                    (0, f32::NEG_INFINITY),
                    |best, (i, u)| if u > best.1 { (i, u) } else { best },
                )
                .0;
            scratch.passing_b.clear();
            scratch.passing_b.extend(0..b.edges().len() as u32);
            scratch.keep(b, b_in_a);
            let mut seed = None;
            let seed_edge = [(seed_edge as u32, f32::INFINITY)];
            scan.scan(
                &seed_edge,
                &scratch.kept,
                &scratch.lanes,
                &mut scratch.batch,
                &mut seed,
                |_, _| false,
            );
            threshold = seed.map_or(f32::NEG_INFINITY, |q| q.separation.min(margin));
        }

        // 3. Keep B's edges whose bound reaches the threshold (in B's frame: B reaches
        // `pb` against the axis, A reaches its centroid plus its inner radius), moved into A's
        // frame.
        let a_centroid_in_b = b_in_a.inverse_transform_point(a.centroid());
        let b_lift = Vec4::splat(scan.slack - inner_radius(a));
        let b_lanes = b.edge_lanes();
        scratch.passing_b.clear();
        for_each_passing(
            b_lanes,
            b.edges().len(),
            threshold,
            |lanes| max_on_arcs(lanes, a_centroid_in_b) + b_lift,
            |ib, _| scratch.passing_b.push(ib),
        );
        if scratch.passing_b.is_empty() {
            return None;
        }
        scratch.keep(b, b_in_a);

        // 4. The exhaustive loop over what can still matter, in A's edge order.
        let mut best: Option<EdgeQuery> = None;
        let cannot_matter = |bound: f32, best: Option<EdgeQuery>| {
            bound < threshold || best.is_some_and(|q| bound <= q.separation)
        };
        scratch.passing_a.clear();
        for_each_passing(
            a.edge_lanes(),
            a.edges().len(),
            threshold,
            a_bound,
            |ia, bound| scratch.passing_a.push((ia, bound)),
        );
        scan.scan(
            &scratch.passing_a,
            &scratch.kept,
            &scratch.lanes,
            &mut scratch.batch,
            &mut best,
            cannot_matter,
        );
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

/// The number of set bits of each 4-bit mask.
const NIBBLE_ONES: [u8; 16] = [0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4];

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

    /// The exhaustive loop over A's edges `edges` (index order, each with its bound, see
    /// [`Crossing`]) against `kept` (B's edges in A's frame, index order; `lanes` their
    /// Gauss-map lanes), updating `best` (strictly larger separation wins): an edge for which
    /// `cannot_matter(bound, best)` holds is skipped, then every Gauss-map crossing pair that is
    /// not parallel is re-measured if its edge points can beat `best`. Returns true when a pair
    /// separates by more than the margin (then `best` is that pair).
    ///
    /// Crossings are found first ([`Self::edge`]) and settled in batches ([`Self::settle`]), so
    /// the square roots and divisions of several pairs' axes overlap instead of each waiting
    /// behind the branch on the pair before; the decisions are the loop's, in its order.
    /// `cannot_matter` must only grow with `best` (then skipping an edge before the batch it
    /// falls in is settled skips only what the loop skips).
    fn scan(
        &self,
        edges: &[(u32, f32)],
        kept: &[EdgeInA],
        lanes: &[[Vec4; 9]],
        batch: &mut CrossingBatch,
        best: &mut Option<EdgeQuery>,
        cannot_matter: impl Fn(f32, Option<EdgeQuery>) -> bool,
    ) -> bool {
        batch.masks.resize(
            SETTLE_CROSSINGS + lanes.len().div_ceil(16),
            CrossingMask::default(),
        );
        batch.masks_count = 0;
        batch.count = 0;
        for &(ia, bound) in edges {
            if cannot_matter(bound, *best) {
                continue;
            }
            self.edge(ia, bound, lanes, batch);
            if batch.count >= SETTLE_CROSSINGS && self.settle(kept, batch, best, &cannot_matter) {
                return true;
            }
        }
        self.settle(kept, batch, best, &cannot_matter)
    }

    /// Appends the Gauss-map crossings of A's edge `ia` (bound `bound`) with the kept edges of B
    /// (`lanes`, four at a time) to `batch`, in B's edge order (room for them is made by
    /// [`Self::scan`]).
    #[inline]
    fn edge(&self, ia: u32, bound: f32, lanes: &[[Vec4; 9]], batch: &mut CrossingBatch) {
        let ea = self.a.edges()[ia as usize];
        let a_normals = self.a.planes();
        let na0 = a_normals[ea.faces[0] as usize].normal;
        let na1 = a_normals[ea.faces[1] as usize].normal;
        let na1_x_na0 = na1.cross(na0);
        for (block, groups) in lanes.chunks(16).enumerate() {
            let mut bits = 0u64;
            for (group, lanes) in groups.iter().enumerate() {
                let mask = minkowski_faces(lanes, na0, na1, na1_x_na0);
                bits |= u64::from(mask) << (4 * group);
                // Counted per group: `u64::count_ones` is a dozen instructions without POPCNT
                // (the baseline x86-64 target has none).
                batch.count += NIBBLE_ONES[mask as usize] as usize;
            }
            // Kept without a branch: the entry is overwritten unless it holds a crossing.
            batch.masks[batch.masks_count] = CrossingMask {
                edge_a: ia,
                bound,
                bits,
                first: 64 * block as u32,
            };
            batch.masks_count += (bits != 0) as usize;
        }
    }

    /// Settles the waiting crossings of `batch` in order and empties it (see [`Self::scan`]):
    /// every axis first, then the decisions. Returns true when a pair separates by more than
    /// the margin.
    fn settle(
        &self,
        kept: &[EdgeInA],
        batch: &mut CrossingBatch,
        best: &mut Option<EdgeQuery>,
        cannot_matter: impl Fn(f32, Option<EdgeQuery>) -> bool,
    ) -> bool {
        let (a_edges, a_vertices, a_directions) =
            (self.a.edges(), self.a.vertices(), self.a.edge_directions());
        let a_centroid = self.a.centroid();
        batch.crossings.clear();
        for mask in &batch.masks[..batch.masks_count] {
            let mut bits = mask.bits;
            while bits != 0 {
                batch.crossings.push(Crossing {
                    edge_a: mask.edge_a,
                    kept: mask.first + bits.trailing_zeros(),
                    bound: mask.bound,
                });
                bits &= bits - 1;
            }
        }
        batch.masks_count = 0;
        batch.count = 0;
        let crossings = &batch.crossings[..];
        batch.axes.clear();
        batch.axes.extend(crossings.iter().map(|c| {
            let pa = a_vertices[a_edges[c.edge_a as usize].vertices[0] as usize];
            let eb = &kept[c.kept as usize];
            let (axis, parallel) =
                oriented_edge_axis(pa, a_directions[c.edge_a as usize], eb.direction, a_centroid);
            CrossingAxis {
                axis,
                edge_gap: axis.dot(eb.start - pa),
                parallel,
            }
        }));
        let mut edge = u32::MAX;
        let mut skip = false;
        for (c, x) in crossings.iter().zip(&batch.axes) {
            if c.edge_a != edge {
                // Decided when the loop reaches the edge: `best` has not changed since.
                edge = c.edge_a;
                skip = cannot_matter(c.bound, *best);
            }
            // The edge points bound the support value from above (up to rounding, hence the
            // slack): re-measure only if it can win.
            if skip || x.parallel || best.is_some_and(|q| x.edge_gap + self.slack <= q.separation) {
                continue;
            }
            let separation = separation_along(self.a, self.b, self.b_in_a, x.axis);
            if best.is_none_or(|q| separation > q.separation) {
                *best = Some(EdgeQuery {
                    edge_a: c.edge_a,
                    edge_b: kept[c.kept as usize].index,
                    separation,
                    axis: x.axis,
                });
                if separation > self.margin {
                    return true;
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
    let (axis, parallel) = oriented_edge_axis(pa, da, (qb - pb).normalize(), a_centroid);
    (!parallel).then_some(axis)
}

/// [`edge_pair_axis`] given B's unit direction `db` (`normalize(qb − pb)`), without a branch:
/// the axis, and true when the edges are parallel (then the axis means nothing).
#[inline]
fn oriented_edge_axis(pa: Vec3, da: Vec3, db: Vec3, a_centroid: Vec3) -> (Vec3, bool) {
    let cross = da.cross(db);
    let length = cross.length();
    let axis = cross / length;
    // Negated (the sign bits flipped, as `-axis` does) when it points toward the centroid: by
    // bits, since the compiler turned the select into a branch that mispredicts half the time.
    let sign = u32::from(axis.dot(pa - a_centroid) < 0.0) << 31;
    let flip = |x: f32| f32::from_bits(x.to_bits() ^ sign);
    (
        Vec3::new(flip(axis.x), flip(axis.y), flip(axis.z)),
        length < PARALLEL_EDGE_SINE,
    )
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
        exhaustive::query_faces_exhaustive(a, b, &a_in_b, margin)
    } else {
        query_faces_above(a, b, (&a_in_b, b_in_a), margin, f32::NEG_INFINITY)
    };
    let face_a_normal = a.planes()[face_a.face as usize].normal;
    if face_a.separation > margin {
        return SatResult::on_face_a(face_a, face_a_normal);
    }

    let face_b = if exhaustive {
        exhaustive::query_faces_exhaustive(b, a, b_in_a, margin)
    } else {
        query_faces_above(b, a, (b_in_a, &a_in_b), margin, face_a.separation)
    };
    let face_b_normal = -(b_in_a.rotation * b.planes()[face_b.face as usize].normal);
    if face_b.separation > margin {
        return SatResult::on_face_b(face_b, face_b_normal);
    }

    let floor = face_a.separation.max(face_b.separation);
    let edge = if exhaustive || a.edges().len() * b.edges().len() <= EXHAUSTIVE_EDGE_PAIRS {
        exhaustive::query_edges_exhaustive(a, b, b_in_a, margin)
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

/// The reference queries, testing every face and every Gauss-map-crossing edge pair: the
/// bounded queries fall back to them on small hulls, and hullsat's exactness tests compare
/// against them (through [`crate::internals`]). Not API.
pub(crate) mod exhaustive {
    use super::*;

    /// The reference face query: [`query_faces`]'s result by testing every face of `a` in order.
    pub fn query_faces_exhaustive(
        a: &ConvexHull,
        b: &ConvexHull,
        a_in_b: &Isometry,
        margin: f32,
    ) -> FaceQuery {
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
            scratch.passing_b.clear();
            scratch.passing_b.extend(0..b.edges().len() as u32);
            scratch.keep(b, b_in_a);
            let scan = EdgeScan::new(a, b, b_in_a, margin);
            let mut best = None;
            scratch.passing_a.clear();
            scratch
                .passing_a
                .extend((0..a.edges().len() as u32).map(|ia| (ia, f32::INFINITY)));
            scan.scan(
                &scratch.passing_a,
                &scratch.kept,
                &scratch.lanes,
                &mut scratch.batch,
                &mut best,
                |_, _| false,
            );
            best
        })
    }
    /// The reference SAT: [`query_hulls`]'s result from the exhaustive queries
    /// ([`query_faces_exhaustive`], [`query_edges_exhaustive`]) with no floors; for the exactness
    /// tests of the bounds and floors.
    pub fn query_hulls_exhaustive(
        a: &ConvexHull,
        b: &ConvexHull,
        b_in_a: &Isometry,
        margin: f32,
    ) -> SatResult {
        let tolerance = AXIS_PREFERENCE_TOLERANCE * pair_scale(a.radius(), b.radius());
        query_hulls_with(a, b, b_in_a, margin, tolerance, true)
    }
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
    fn kept_edges_match_the_scalar_transforms_bit_for_bit() {
        let hull = ConvexHull::from_points(&directions(29).iter().map(|d| *d * 1.3).collect::<Vec<_>>())
            .expect("points on a sphere make a hull");
        let b_in_a = Isometry::new(
            Vec3::new(0.7, -1.9, 0.4),
            Quat::from_axis_angle(Vec3::new(0.3, 0.5, -0.8).normalize(), 1.1),
        );
        // Every third edge: groups mix edges from all over the hull, the last one padded.
        let mut scratch = EdgeScratch {
            passing_b: (0..hull.edges().len() as u32).step_by(3).collect(),
            ..EdgeScratch::default()
        };
        scratch.keep(&hull, &b_in_a);
        assert_eq!(scratch.kept.len(), scratch.passing_b.len());
        let bits = |v: Vec3| v.to_array().map(f32::to_bits);
        for (k, kept) in scratch.kept.iter().enumerate() {
            let edge = hull.edges()[kept.index as usize];
            assert_eq!(kept.index, scratch.passing_b[k]);
            let [start, end] = edge
                .vertices
                .map(|v| b_in_a.transform_point(hull.vertices()[v as usize]));
            assert_eq!(bits(kept.start), bits(start), "edge {k}");
            assert_eq!(bits(kept.direction), bits((end - start).normalize()), "edge {k}");
            let [n0, n1] = edge
                .faces
                .map(|f| -(b_in_a.rotation * hull.planes()[f as usize].normal));
            let lanes = scratch.lanes[k / 4].map(|lane| lane.to_array()[k % 4]);
            let lane = |i: usize| Vec3::new(lanes[i], lanes[i + 1], lanes[i + 2]);
            assert_eq!(bits(lane(0)), bits(n0), "edge {k}");
            assert_eq!(bits(lane(3)), bits(n1), "edge {k}");
            assert_eq!(bits(lane(6)), bits(n1.cross(n0)), "edge {k}");
        }
    }

    #[test]
    fn lane_rotation_matches_glam_bit_for_bit() {
        let dirs = directions(64);
        for (i, &axis) in dirs.iter().enumerate() {
            let q = Quat::from_axis_angle(axis, 0.37 + i as f32 * 0.71);
            for group in dirs
                .chunks(4)
                .map(|c| c.iter().map(|d| *d * (1.0 + i as f32)).collect::<Vec<_>>())
            {
                let lanes = [0, 1, 2].map(|c| Vec4::from_array(std::array::from_fn(|l| group[l][c])));
                let rotated = rotate_lanes(q, lanes).map(|v| v.to_array());
                for (l, &v) in group.iter().enumerate() {
                    let expected = q * v;
                    let got = Vec3::new(rotated[0][l], rotated[1][l], rotated[2][l]);
                    assert_eq!(
                        got.to_array().map(f32::to_bits),
                        expected.to_array().map(f32::to_bits),
                        "{q} * {v}"
                    );
                }
            }
        }
    }

    #[test]
    fn four_lowest_values_match_lowest_along() {
        let hull = ConvexHull::from_points(&directions(37).iter().map(|d| *d * 1.5).collect::<Vec<_>>())
            .expect("points on a sphere make a hull");
        for four in directions(48).chunks(4) {
            let expected: Vec<u32> = four.iter().map(|&d| hull.lowest_along(d).to_bits()).collect();
            let lanes = [0, 1, 2].map(|c| Vec4::from_array(std::array::from_fn(|i| four[i][c])));
            let lowest = hull.lowest_along_four(lanes).to_array().map(f32::to_bits);
            assert_eq!(lowest.to_vec(), expected);
        }
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

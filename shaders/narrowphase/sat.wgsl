// Separating axis test between two convex hulls, in hull A's frame: one body pair per
// invocation (`main`), or for big hulls one pair per workgroup (the cooperative path, below
// sat_serial); small calls take one pair per workgroup for every pair (`main_pair_per_workgroup`).
// Rust twin: src/query/sat.rs (the reference) with src/query/bounds.rs; keep them in step.
//
// 1. Bounds guard (pair_in_range); pairs not both hulls (or boxes) get AXIS_NONE: the CPU's.
//    Each pair runs in pair_to_run's order (canonical in a resident call).
//    Slot s of the chunk runs pair s, or with params.ordered the pair order.wgsl put there
//    (pair_of_slot); results[s] is the slot's, naming its pair (GpuSatResult.pair, an index in
//    the dispatch as params.first_pair counts).
// 2. B's pose in A's frame (relative_pose, as Pose::relative_to_self) and its inverse.
// 3-4. Face queries of A and of B (query_faces): deepest vertex below each plane, bounded.
// 5. Edge query (query_edges; bounded: query_edges_above): Gauss-map-crossing pairs, parallel
//    ones skipped, the best re-measured with support points (separation_along). Two boxes:
//    sat_box.wgsl for 3 to 5.
// 6. Each query stops once an axis separates by more than the margin.
// 7. Face preference (prefer_faces): exact maximum separation, and the deepest axis for clip.wgsl.
// Why the bounds and the cooperative split return the serial loops' results: docs/design/sat.md.
// Compiled after quat.wgsl, layout.wgsl and geometry.wgsl, with sat_box.wgsl and one of
// sat_reduce.wgsl or sat_reduce_subgroup.wgsl (the reductions, `Invocation` and `enter`);
// tests/gpu_layout.rs checks the constants below against the Rust ones.

// Mirrors crate::constants::AXIS_PREFERENCE_TOLERANCE (fraction of the pair's scale).
const AXIS_PREFERENCE_TOLERANCE: f32 = 1.0e-3;
// Mirrors crate::query::bounds::SAT_BOUND_SLACK (times the pair's coordinate reach).
const SAT_BOUND_SLACK: f32 = 1.0e-3;
// Mirror crate::query::sat's private EXHAUSTIVE_FACE_WORK and EXHAUSTIVE_EDGE_PAIRS: up to
// this many face-vertex products, edge pairs, the bounds cost more than they skip and the
// exhaustive loop runs. The results do not depend on them: overridable so that the tests can
// run the exhaustive loops, with no bound and no floor, as the serial path's reference.
override EXHAUSTIVE_FACE_WORK: u32 = 64u;
override EXHAUSTIVE_EDGE_PAIRS: u32 = 64u;
// Words of the kept-edge bit set of query_edges_above (step 3). It is a function variable,
// which WGSL zero-fills on every call, so it stays small: B hulls of up to 32 x KEPT_WORDS edges
// (about 87 vertices) keep only the edges that can matter, larger ones keep every edge.
const KEPT_WORDS: u32 = 8u;
// No edge: an unused slot of scan_four.
const NO_EDGE: u32 = 0xffffffffu;
// Group 1, binding 2: one result per slot of the chunk.
@group(1) @binding(2) var<storage, read_write> results: array<GpuSatResult>;

// The index of the pair slot `slot` (< params.pair_count) runs: with params.ordered the one the
// cost ordering wrote there (order.wgsl), else `slot`.
fn pair_of_slot(slot: u32) -> u32 {
    if params.ordered != 0u {
        return results[slot].pair - params.first_pair;
    }
    return slot;
}

// Slot `slot`'s result for pair `index` not run here (step 1): AXIS_NONE.
fn write_none(slot: u32, index: u32) {
    results[slot] = GpuSatResult(vec3<f32>(0.0), 0.0, 0.0, AXIS_NONE, 0u, 0u, AXIS_NONE, 0u, 0u, params.first_pair + index);
}

struct FaceQuery {
    face: u32,
    separation: f32,
}

struct EdgeQuery {
    found: bool,
    edge_a: u32,
    edge_b: u32,
    separation: f32,
    axis: vec3<f32>,
}

// An upper bound of n . w over the unit n on the short great-circle arc from the unit u to the
// unit v, from its end values alone: the larger one, m, and m times the edge's `stretch`
// (GpuEdge: 1 / cos of half the arc) when m >= 0. One arc of crate::query::bounds::max_on_arcs
// (which takes four; why it holds: docs/design/sat.md).
fn max_on_arcs(u: vec3<f32>, v: vec3<f32>, w: vec3<f32>, stretch: f32) -> f32 {
    let ends = max(dot(u, w), dot(v, w));
    return max(ends, ends * stretch);
}

// Lowest vertex of `hull` along `direction` (hull frame), as ConvexHull::lowest_along (which
// also takes four vertices at a time). Four per iteration keep the loop short: a software
// driver caps an invocation group's loop iterations (see loops_cut_short). The last group reads
// the last vertex again in place of the missing ones, which leaves the minimum unchanged.
fn lowest_along(hull: GpuShape, direction: vec3<f32>) -> f32 {
    var lowest = vec4<f32>(F32_MAX);
    let last = hull.first_vertex + hull.vertex_count - 1u;
    for (var i = hull.first_vertex; i <= last; i += 4u) {
        lowest = min(lowest, four_along(direction, i, last));
    }
    return min(min(lowest.x, lowest.y), min(lowest.z, lowest.w));
}

// `direction` dotted with vertices i to i + 3 (global indices), the last one, `last`, again in
// place of those beyond it.
fn four_along(direction: vec3<f32>, i: u32, last: u32) -> vec4<f32> {
    return vec4<f32>(
        dot(direction, vertices[i].xyz),
        dot(direction, vertices[min(i + 1u, last)].xyz),
        dot(direction, vertices[min(i + 2u, last)].xyz),
        dot(direction, vertices[min(i + 3u, last)].xyz),
    );
}

// Separation of `b` below `plane` of a hull posed by (q, t) in B's frame, in B's frame, as
// crate::query::sat::face_separation: face_separation_above with no floor (no finite distance
// is below -F32_MAX), so the seed and the bounded loop measure a face with the same code.
fn face_separation(plane: vec4<f32>, b: GpuShape, q: vec4<f32>, t: vec3<f32>) -> f32 {
    return face_separation_above(plane, b, q, t, -F32_MAX);
}

// face_separation when it reaches `floor`, else a value below `floor`: the scan stops after the
// four vertices where one first lies closer than `floor` to the plane (its signed distance below
// it), as the separation, the least of those distances, is then below it too (subtracting the
// offset keeps the order). A face that can neither reach the query's threshold nor beat its
// best so far so reads fewer vertices: a hull32 face query 206 -> 87 on the kit's scene,
// counted on the CPU. The CPU's query (four faces at a time) scans every vertex; the queries'
// results are the same whenever they reach the threshold (why: docs/design/sat.md).
fn face_separation_above(plane: vec4<f32>, b: GpuShape, q: vec4<f32>, t: vec3<f32>, floor: f32) -> f32 {
    let normal = quat_rotate(q, plane.xyz);
    let offset = plane.w + dot(normal, t);
    var lowest = vec4<f32>(F32_MAX);
    let last = b.first_vertex + b.vertex_count - 1u;
    for (var i = b.first_vertex; i <= last; i += 4u) {
        lowest = min(lowest, four_along(normal, i, last));
        if any(lowest - offset < vec4<f32>(floor)) {
            break;
        }
    }
    return min(min(lowest.x, lowest.y), min(lowest.z, lowest.w)) - offset;
}

// The faces' bounds of query_faces, in A's frame (crate::query::sat's `bounds`): B's centroid,
// and the lift that makes a face's bound (B's inner sphere below its plane) at least its
// separation.
struct FaceBounds {
    b_centroid: vec3<f32>,
    lift: f32,
}

fn face_bounds(a: GpuShape, b: GpuShape, q: vec4<f32>, t: vec3<f32>) -> FaceBounds {
    let q_inv = quat_conjugate(q);
    let b_centroid = quat_rotate(q_inv, b.centroid) + quat_rotate(q_inv, -t);
    let reach = length(t) + length(a.centroid) + a.radius + length(b.centroid) + b.radius;
    return FaceBounds(b_centroid, SAT_BOUND_SLACK * reach - b.inner_radius);
}

// The bound of the face of A on `plane`: one dot product.
fn face_bound(bounds: FaceBounds, plane: vec4<f32>) -> f32 {
    return dot(plane.xyz, bounds.b_centroid) - plane.w + bounds.lift;
}

// One face of the bounded loop: measured unless its bound is below `threshold` or not above
// the best so far, then kept in `best` when it separates more (a face below the threshold may
// be kept with its scan's partial minimum, face_separation_above, until a face that reaches the
// threshold replaces it). True when it separates by more than the margin: the loop stops.
fn bounded_face(
    a: GpuShape,
    b: GpuShape,
    q: vec4<f32>,
    t: vec3<f32>,
    bounds: FaceBounds,
    face: u32,
    threshold: f32,
    margin: f32,
    best: ptr<function, FaceQuery>,
) -> bool {
    let plane = planes[a.first_face + face];
    let u = face_bound(bounds, plane);
    if u < threshold || u <= (*best).separation {
        return false;
    }
    let separation = face_separation_above(plane, b, q, t, max((*best).separation, threshold));
    if separation > (*best).separation {
        *best = FaceQuery(face, separation);
        return separation > margin;
    }
    return false;
}

// Best face of `a` against `b`: A's planes moved into B's frame by (q, t) = A's pose in B's
// frame, deepest vertex of `b` below each. Stops once a face separates by more than `margin`.
// As crate::query::sat::query_faces_above, `floor` (at most the margin) its floor, -F32_MAX
// for none (its -inf): faces whose bound (B's inner sphere) is below the threshold, or not
// above the best so far, are skipped. The threshold is the floor, or without one min(L,
// margin), L the separation of the face of largest bound. The result is the exhaustive loop's
// whenever that reaches the floor; else a face below it (its value possibly a partial minimum
// above its separation, face_separation_above), or face 0 at -F32_MAX (the SAT gives
// B's query A's best separation as its floor: a face of B below it changes neither the axis
// nor the separation, docs/design/sat.md).
fn query_faces(a: GpuShape, b: GpuShape, q: vec4<f32>, t: vec3<f32>, margin: f32, floor: f32) -> FaceQuery {
    if a.face_count * b.vertex_count <= EXHAUSTIVE_FACE_WORK {
        return query_faces_exhaustive(a, b, q, t, margin);
    }
    // Bounds in A's frame: one dot product per face.
    let bounds = face_bounds(a, b, q, t);
    var threshold = floor;
    if floor == -F32_MAX {
        var seed = 0u;
        var seed_bound = -F32_MAX;
        for (var face = 0u; face < a.face_count; face++) {
            let u = face_bound(bounds, planes[a.first_face + face]);
            if u > seed_bound {
                seed = face;
                seed_bound = u;
            }
        }
        threshold = min(face_separation(planes[a.first_face + seed], b, q, t), margin);
    }
    var best = FaceQuery(0u, -F32_MAX);
    for (var face = 0u; face < a.face_count; face++) {
        if bounded_face(a, b, q, t, bounds, face, threshold, margin, &best) {
            break;
        }
    }
    return best;
}

// The reference face query: query_faces's result by testing every face of `a` in order.
fn query_faces_exhaustive(a: GpuShape, b: GpuShape, q: vec4<f32>, t: vec3<f32>, margin: f32) -> FaceQuery {
    var best = FaceQuery(0u, -F32_MAX);
    for (var face = 0u; face < a.face_count; face++) {
        let separation = face_separation(planes[a.first_face + face], b, q, t);
        if separation > best.separation {
            best = FaceQuery(face, separation);
            if separation > margin {
                break;
            }
        }
    }
    return best;
}

// Separation of `b` (posed in A's frame by (q, t)) from `a` along the unit `axis` (A's frame):
// the gap between the support points, as crate::query::sat::separation_along.
fn separation_along(a: GpuShape, b: GpuShape, q: vec4<f32>, t: vec3<f32>, axis: vec3<f32>) -> f32 {
    let b_lowest = lowest_along(b, quat_rotate(quat_conjugate(q), axis));
    // Negating the axis negates every product exactly: this is A's highest vertex along `axis`.
    let a_highest = -lowest_along(a, -axis);
    return b_lowest + dot(axis, t) - a_highest;
}

// True when the Gauss-map arcs a->b (edge of A) and c->d (edge of B, normals negated) cross.
fn is_minkowski_face(a: vec3<f32>, b: vec3<f32>, b_x_a: vec3<f32>, c: vec3<f32>, d: vec3<f32>, d_x_c: vec3<f32>) -> bool {
    let cba = dot(c, b_x_a);
    let dba = dot(d, b_x_a);
    let adc = dot(a, d_x_c);
    let bdc = dot(b, d_x_c);
    return cba * dba < 0.0 && adc * bdc < 0.0 && cba * bdc > 0.0;
}

// The pairwise step of the edge queries for one pair of hulls (crate::query::sat::EdgeScan):
// B posed in A's frame by (q, t); slack = SAT_BOUND_SLACK x the coordinate reach.
struct EdgeScan {
    a: GpuShape,
    b: GpuShape,
    q: vec4<f32>,
    t: vec3<f32>,
    margin: f32,
    slack: f32,
}

fn edge_scan(a: GpuShape, b: GpuShape, q: vec4<f32>, t: vec3<f32>, margin: f32) -> EdgeScan {
    let reach = length(t) + length(a.centroid) + a.radius + length(b.centroid) + b.radius;
    return EdgeScan(a, b, q, t, margin, SAT_BOUND_SLACK * reach);
}

// A's edge as the pairwise step reads it: its face normals rotated into B's frame (gauss0,
// gauss1: the ends of its Gauss-map arc seen from B) with gauss1 x gauss0, its start pa and unit
// direction da (A's frame). The Gauss-map test runs in B's frame so that B's face normals are
// read as stored (why: docs/design/sat.md).
struct EdgeOfA {
    index: u32,
    gauss0: vec3<f32>,
    gauss1: vec3<f32>,
    gauss1_x_gauss0: vec3<f32>,
    pa: vec3<f32>,
    da: vec3<f32>,
}

fn edge_of_a(s: EdgeScan, ia: u32) -> EdgeOfA {
    let ea = edges[s.a.first_edge + ia];
    let q_ab = quat_conjugate(s.q);
    let gauss0 = quat_rotate(q_ab, planes[s.a.first_face + edge_faces(ea).x].xyz);
    let gauss1 = quat_rotate(q_ab, planes[s.a.first_face + edge_faces(ea).y].xyz);
    let pa = vertices[s.a.first_vertex + ea.v0].xyz;
    let da = normalize(vertices[s.a.first_vertex + ea.v1].xyz - pa);
    return EdgeOfA(ia, gauss0, gauss1, cross(gauss1, gauss0), pa, da);
}

// True when A's edge `ea` and B's edge `ib` pass the Gauss-map test (is_minkowski_face), in B's
// frame; false for ib beyond B's edges (the unused slots of a group of four).
fn crosses(s: EdgeScan, ea: EdgeOfA, ib: u32) -> bool {
    if ib >= s.b.edge_count {
        return false;
    }
    let eb = edges[s.b.first_edge + ib];
    // B's face normals negated (the Gauss map of -B), in B's frame.
    let nb0 = -planes[s.b.first_face + edge_faces(eb).x].xyz;
    let nb1 = -planes[s.b.first_face + edge_faces(eb).y].xyz;
    return is_minkowski_face(ea.gauss0, ea.gauss1, ea.gauss1_x_gauss0, nb0, nb1, cross(nb1, nb0));
}

// The rest of the pairwise step for a crossing pair (A's edge `ea`, B's edge `ib`): its axis,
// and its support separation when it can beat `best`, which it replaces when larger (one
// crossing of EdgeScan::settle: the CPU forms the axes of a batch of crossings first, then takes
// these decisions in the same order). True when the pair separates by more than the margin
// (then `best` is that pair).
fn measure_pair(s: EdgeScan, ea: EdgeOfA, ib: u32, best: ptr<function, EdgeQuery>) -> bool {
    let eb = edges[s.b.first_edge + ib];
    let pb = quat_rotate(s.q, vertices[s.b.first_vertex + eb.v0].xyz) + s.t;
    let qb = quat_rotate(s.q, vertices[s.b.first_vertex + eb.v1].xyz) + s.t;
    let axis = edge_pair_axis(ea.pa, ea.da, pb, qb, s.a.centroid);
    if axis.w == 0.0 {
        return false;
    }
    // The edge points bound the support value from above (up to rounding, hence the slack):
    // re-measure only if it can win.
    if (*best).found && dot(axis.xyz, pb - ea.pa) + s.slack <= (*best).separation {
        return false;
    }
    let separation = separation_along(s.a, s.b, s.q, s.t, axis.xyz);
    if !(*best).found || separation > (*best).separation {
        *best = EdgeQuery(true, ea.index, ib, separation, axis.xyz);
        return separation > s.margin;
    }
    return false;
}

// Tests A's edge `ea` against B's edges ib.x < ib.y < ib.z < ib.w (slots beyond B's edges
// unused) in that order: the Gauss-map test for all four (EdgeScan::edge, which also tests
// four at a time), then the crossing ones in order (EdgeScan::settle; one measure_pair in the
// code, run once per crossing). True when a pair separates by more than the margin. Four per
// loop iteration keep the loops short: a software driver caps an invocation group's loop
// iterations (see loops_cut_short).
fn scan_four(s: EdgeScan, ea: EdgeOfA, ib: vec4<u32>, best: ptr<function, EdgeQuery>) -> bool {
    var crossing = select(0u, 1u, crosses(s, ea, ib.x)) | select(0u, 2u, crosses(s, ea, ib.y))
        | select(0u, 4u, crosses(s, ea, ib.z)) | select(0u, 8u, crosses(s, ea, ib.w));
    while crossing != 0u {
        let slot = countTrailingZeros(crossing);
        crossing &= crossing - 1u;
        if measure_pair(s, ea, ib[slot], best) {
            return true;
        }
    }
    return false;
}

// EdgeScan::edge against every edge of B in index order.
fn scan_edge_all(s: EdgeScan, ia: u32, best: ptr<function, EdgeQuery>) -> bool {
    let ea = edge_of_a(s, ia);
    for (var ib = 0u; ib < s.b.edge_count; ib += 4u) {
        if scan_four(s, ea, ib + vec4<u32>(0u, 1u, 2u, 3u), best) {
            return true;
        }
    }
    return false;
}

// Word `word` of query_edges_above's kept edges of B (bit i: edge 32 * word + i): from `kept`,
// or from the workgroup's coop_kept when `in_workgroup` (the cooperative path), or every edge of the
// word when B keeps all (`keep_all`, `edge_count` edges).
fn kept_word(
    kept: ptr<function, array<u32, KEPT_WORDS>>,
    in_workgroup: bool,
    keep_all: bool,
    edge_count: u32,
    word: u32,
) -> u32 {
    if !keep_all {
        // Only the cooperative path passes in_workgroup; the pipeline without it (COOP_PATH
        // false) never reads workgroup memory, which it leaves unzeroed.
        if COOP_PATH {
            if in_workgroup {
                return atomicLoad(&coop_kept[word]);
            }
        }
        return (*kept)[word];
    }
    let left = edge_count - 32u * word;
    if left >= 32u {
        return 0xffffffffu;
    }
    return (1u << left) - 1u;
}

// The lowest edge index left in `bits` (bit i = edge 32 * word + i), removed from it; NO_EDGE
// when none is left.
fn take_kept(bits: ptr<function, u32>, word: u32) -> u32 {
    if *bits == 0u {
        return NO_EDGE;
    }
    let ib = 32u * word + countTrailingZeros(*bits);
    *bits &= *bits - 1u;
    return ib;
}

// Best Gauss-map-crossing edge pair, B posed in A's frame by (q, t); stops once one separates
// by more than `margin`. `found` is false when no pair qualifies. Small pairs run
// query_edges_exhaustive, larger ones query_edges_above from `floor` (the faces' best
// separation, at most the margin); the result is the same whenever it reaches the floor.
fn query_edges(a: GpuShape, b: GpuShape, q: vec4<f32>, t: vec3<f32>, margin: f32, floor: f32) -> EdgeQuery {
    if a.edge_count * b.edge_count <= EXHAUSTIVE_EDGE_PAIRS {
        return query_edges_exhaustive(a, b, q, t, margin);
    }
    return query_edges_above(a, b, q, t, margin, floor);
}

// The reference edge query: every Gauss-map-crossing pair in index order (A's edge outer).
fn query_edges_exhaustive(a: GpuShape, b: GpuShape, q: vec4<f32>, t: vec3<f32>, margin: f32) -> EdgeQuery {
    let s = edge_scan(a, b, q, t, margin);
    var best = EdgeQuery(false, 0u, 0u, -F32_MAX, vec3<f32>(0.0));
    for (var ia = 0u; ia < a.edge_count; ia++) {
        if scan_edge_all(s, ia, &best) {
            break;
        }
    }
    return best;
}

// Upper bound of the separation of any pair of A's edge `ia` (crate::query::bounds): A reaches
// its edge's start along the axis, B down to its centroid (`b_centroid`, A's frame) minus its
// inner radius.
fn a_edge_bound(s: EdgeScan, ia: u32, b_centroid: vec3<f32>) -> f32 {
    let ea = edges[s.a.first_edge + ia];
    let pa = vertices[s.a.first_vertex + ea.v0].xyz;
    let na0 = planes[s.a.first_face + edge_faces(ea).x].xyz;
    let na1 = planes[s.a.first_face + edge_faces(ea).y].xyz;
    return max_on_arcs(na0, na1, b_centroid - pa, ea.stretch) - s.b.inner_radius + s.slack;
}

// 3. True when B's edge `ib` can still matter: its bound (B reaches its edge's start against
// the axis, A its centroid plus its inner radius: `lift` is the slack minus A's inner radius)
// reaches `threshold`. Evaluated in B's frame (A's centroid moved there once,
// `a_centroid_in_b`), where B's normals and vertices are read as stored: the arc bound does not
// depend on the frame, and its rounding is within the slack.
fn b_edge_reaches(b: GpuShape, ib: u32, a_centroid_in_b: vec3<f32>, lift: f32, threshold: f32) -> bool {
    let eb = edges[b.first_edge + ib];
    let n0 = -planes[b.first_face + edge_faces(eb).x].xyz;
    let n1 = -planes[b.first_face + edge_faces(eb).y].xyz;
    let w = vertices[b.first_vertex + eb.v0].xyz - a_centroid_in_b;
    return max_on_arcs(n0, n1, w, eb.stretch) + lift >= threshold;
}

// True when an edge of bound `bound` can change neither the result nor the best so far.
fn cannot_matter(bound: f32, threshold: f32, best: EdgeQuery) -> bool {
    return bound < threshold || (best.found && bound <= best.separation);
}

// query_edges with the bounds from a floor, as crate::query::sat::query_edges_above (the SAT
// always has one: the faces' best separation; its seed step, for a call without a floor, is
// the CPU's alone):
// 1. Bound every edge of A and of B.
// 3. Keep B's edges whose bound reaches the floor.
// 4. Run the exhaustive loop in index order over A's edges whose bound reaches both the floor
//    and beyond the best so far, against the kept edges of B.
// A's bounds are computed where used (step 4) instead of stored per edge. The result is the
// exhaustive loop's whenever that reaches the floor.
fn query_edges_above(a: GpuShape, b: GpuShape, q: vec4<f32>, t: vec3<f32>, margin: f32, floor: f32) -> EdgeQuery {
    let s = edge_scan(a, b, q, t, margin);
    let b_centroid = quat_rotate(q, b.centroid) + t;
    let threshold = floor;

    // 3. Bounds of B's edges (b_edge_reaches): bit ib of `kept` set when B's edge ib can still
    // matter; B hulls beyond the bit set keep every edge (kept_word).
    var kept: array<u32, KEPT_WORDS>;
    let keep_all = b.edge_count > 32u * KEPT_WORDS;
    let lift = s.slack - a.inner_radius;
    let a_centroid_in_b = quat_rotate(quat_conjugate(q), a.centroid - t);
    for (var ib = 0u; ib < select(b.edge_count, 0u, keep_all); ib++) {
        if b_edge_reaches(b, ib, a_centroid_in_b, lift, threshold) {
            kept[ib / 32u] |= 1u << (ib % 32u);
        }
    }

    // 4. The exhaustive loop over what can still matter.
    return scan_kept(s, b_centroid, threshold, &kept, false, keep_all, 0u, 1u);
}

// Step 4 of query_edges_above for A's edges first, first + stride, ... (in index order)
// against B's kept edges (kept_word of `kept` or, when `in_workgroup`, of coop_kept; every edge when
// `keep_all`): the exhaustive loop over what
// can still matter, flattened into one loop whose every iteration does one thing (bounds A's
// next edge, moves to the next word of kept edges, or tests up to four pairs): an invocation
// group then runs as many iterations as its busiest invocation, not the union of every
// invocation's nested loops. Returns the first pair in (A edge, B edge) order of those visited
// that separates by more than the margin (then it stops), else the first of largest separation.
fn scan_kept(
    s: EdgeScan,
    b_centroid: vec3<f32>,
    threshold: f32,
    kept: ptr<function, array<u32, KEPT_WORDS>>,
    in_workgroup: bool,
    keep_all: bool,
    first: u32,
    stride: u32,
) -> EdgeQuery {
    var best = EdgeQuery(false, 0u, 0u, -F32_MAX, vec3<f32>(0.0));
    let words = (s.b.edge_count + 31u) / 32u;
    var ia = first;
    var ea: EdgeOfA;
    var scanning = false;
    var word = 0u;
    var bits = 0u;
    loop {
        if !scanning {
            if ia >= s.a.edge_count {
                break;
            }
            if cannot_matter(a_edge_bound(s, ia, b_centroid), threshold, best) {
                ia += stride;
                continue;
            }
            ea = edge_of_a(s, ia);
            scanning = true;
            word = 0u;
            bits = kept_word(kept, in_workgroup, keep_all, s.b.edge_count, 0u);
        }
        if bits == 0u {
            word++;
            if word == words {
                scanning = false;
                ia += stride;
            } else {
                bits = kept_word(kept, in_workgroup, keep_all, s.b.edge_count, word);
            }
            continue;
        }
        let ib0 = take_kept(&bits, word);
        let ib1 = take_kept(&bits, word);
        let ib2 = take_kept(&bits, word);
        let ib3 = take_kept(&bits, word);
        if scan_four(s, ea, vec4<u32>(ib0, ib1, ib2, ib3), &best) {
            break;
        }
    }
    return best;
}

// One pair's SAT result before it is stored (GpuSatResult without the flags).
struct SatOut {
    kind: u32,
    feature_a: u32,
    feature_b: u32,
    normal: vec3<f32>,
    axis_separation: f32,
    separation: f32,
    // The deepest axis (step 7): AXIS_* code and features.
    deepest_kind: u32,
    deepest_feature_a: u32,
    deepest_feature_b: u32,
}

// The result on one axis that separates by more than the margin (steps 3-5's early exits); it
// is also the deepest axis.
fn separating(kind: u32, fa: u32, fb: u32, normal: vec3<f32>, separation: f32) -> SatOut {
    return SatOut(kind, fa, fb, normal, separation, separation, kind, fa, fb);
}

// Step 7's candidates: the best face of A and of B, each with its manifold normal (A's frame),
// and the best edge pair.
struct SatCandidates {
    face_a: FaceQuery,
    face_a_normal: vec3<f32>,
    face_b: FaceQuery,
    face_b_normal: vec3<f32>,
    edge: EdgeQuery,
}

// Step 7 once no axis separates by more than the margin: the axis preferred by `tolerance` with
// the exact maximum separation, and the deepest axis (the preference at tolerance 0).
fn prefer_faces(c: SatCandidates, tolerance: f32) -> SatOut {
    var out = prefer_faces_by(c, tolerance);
    let deepest = prefer_faces_by(c, 0.0);
    out.deepest_kind = deepest.kind;
    out.deepest_feature_a = deepest.feature_a;
    out.deepest_feature_b = deepest.feature_b;
    return out;
}

// The face preference by `tolerance` (length units), exact maximum separation (as
// crate::query::sat::prefer_faces); the deepest-axis fields are the chosen axis's.
fn prefer_faces_by(c: SatCandidates, tolerance: f32) -> SatOut {
    var out = separating(AXIS_FACE_A, c.face_a.face, 0u, c.face_a_normal, c.face_a.separation);
    if c.face_b.separation > c.face_a.separation + tolerance {
        out = separating(AXIS_FACE_B, 0u, c.face_b.face, c.face_b_normal, c.face_b.separation);
    }
    var separation = max(c.face_a.separation, c.face_b.separation);
    if c.edge.found {
        if c.edge.separation > out.axis_separation + tolerance {
            out = separating(AXIS_EDGE_PAIR, c.edge.edge_a, c.edge.edge_b, c.edge.axis, c.edge.separation);
        }
        separation = max(separation, c.edge.separation);
    }
    out.separation = separation;
    return out;
}

// Stores pair `index`'s result in slot `slot`; `cut` sets INCOMPLETE_BIT (the driver cut loops
// short).
fn write_result(slot: u32, index: u32, out: SatOut, cut: bool) {
    var flags = out.kind;
    if out.separation > params.margin {
        flags |= SEPARATED_BIT;
    }
    if cut {
        flags |= INCOMPLETE_BIT;
    }
    results[slot] = GpuSatResult(out.normal, out.axis_separation, out.separation, flags, out.feature_a, out.feature_b, out.deepest_kind, out.deepest_feature_a, out.deepest_feature_b, params.first_pair + index);
}

// The pair's two bodies and shapes, the relative poses of step 2 and the face preference
// tolerance (step 7).
struct PairSetup {
    a: GpuShape,
    b: GpuShape,
    // B in A's frame (b_in_a) and A in B's frame (a_in_b).
    q_ba: vec4<f32>,
    t_ba: vec3<f32>,
    q_ab: vec4<f32>,
    t_ab: vec3<f32>,
    tolerance: f32,
}

// Step 2 for a pair that passed step 1.
fn pair_setup(pair: vec2<u32>) -> PairSetup {
    let body_a = bodies[pair.x];
    let body_b = bodies[pair.y];
    let a = shapes[body_a.shape];
    let b = shapes[body_b.shape];
    let b_in_a = relative_pose(body_a, body_b);
    let q_ab = quat_conjugate(b_in_a.q);
    return PairSetup(a, b, b_in_a.q, b_in_a.t, q_ab, quat_rotate(q_ab, -b_in_a.t), AXIS_PREFERENCE_TOLERANCE * (a.radius + b.radius));
}

// Step 1: true when pair `index` runs on the GPU (in range, both shapes hulls or boxes).
fn runs_here(index: u32) -> bool {
    let pair = pair_to_run(pairs[index]);
    return pair_in_range(pair) && is_hull(shapes[bodies[pair.x].shape]) && is_hull(shapes[bodies[pair.y].shape]);
}

// Steps 2-7 of one pair by one invocation.
fn sat_serial(index: u32) -> SatOut {
    let p = pair_setup(pair_to_run(pairs[index]));
    let a = p.a;
    let b = p.b;
    let margin = params.margin;

    // Two boxes take the closed-form box SAT in steps 3-5 (sat_box.wgsl).
    let boxes = a.kind == SHAPE_BOX && b.kind == SHAPE_BOX;

    // 3. Face query of A.
    var face_a: FaceQuery;
    if boxes {
        face_a = box_faces_a(a, b, p.q_ba, p.t_ba, margin);
    } else {
        face_a = query_faces(a, b, p.q_ab, p.t_ab, margin, -F32_MAX);
    }
    let face_a_normal = planes[a.first_face + face_a.face].xyz;
    if face_a.separation > margin {
        return separating(AXIS_FACE_A, face_a.face, 0u, face_a_normal, face_a.separation);
    }

    // 4. Face query of B.
    var face_b: FaceQuery;
    var face_b_normal: vec3<f32>;
    if boxes {
        face_b = box_faces_b(a, b, p.q_ba, p.t_ba, margin);
        face_b_normal = box_face_b_normal(p.q_ba, face_b.face);
    } else {
        face_b = query_faces(b, a, p.q_ba, p.t_ba, margin, face_a.separation);
        face_b_normal = -quat_rotate(p.q_ba, planes[b.first_face + face_b.face].xyz);
    }
    if face_b.separation > margin {
        return separating(AXIS_FACE_B, 0u, face_b.face, face_b_normal, face_b.separation);
    }

    // 5. Edge query.
    var edge: EdgeQuery;
    if boxes {
        edge = query_box_edges(a, b, p.q_ba, p.t_ba);
    } else {
        edge = query_edges(a, b, p.q_ba, p.t_ba, margin, max(face_a.separation, face_b.separation));
    }
    if edge.found && edge.separation > margin {
        return separating(AXIS_EDGE_PAIR, edge.edge_a, edge.edge_b, edge.axis, edge.separation);
    }

    // 7. Face preference, exact maximum separation, deepest axis.
    return prefer_faces(SatCandidates(face_a, face_a_normal, face_b, face_b_normal, edge), p.tolerance);
}

// ---------------------------------------------------------------------------------------------
// The cooperative path: a workgroup on one pair of big hulls (COOP_EDGE_PAIRS edge pairs or more,
// not two boxes). Each workgroup runs its small pairs one per invocation and lists its big ones;
// then all WORKGROUP_SIZE invocations run each listed pair: invocation `lane` takes items lane,
// lane + WORKGROUP_SIZE, ... of every loop in increasing order with the serial loop's skips and
// early exit. The results are reduced (reduce_faces, reduce_edges: in workgroup memory,
// sat_reduce.wgsl, or with subgroup operations, sat_reduce_subgroup.wgsl): above the margin
// before not above, then the lowest index among those above, else the largest separation, then
// the lowest index. A total order (each item's index is its own), so every grouping of the
// reduction picks the same winner, the serial loop's (docs/design/sat.md).

// Edge pairs (A's edges x B's edges) from which a pair runs cooperatively (96-vertex hulls and
// up; docs/design/sat.md). Overridable at pipeline creation so the tests can run every pair
// either way (tests/gpu_sat.rs); the results do not depend on it.
override COOP_EDGE_PAIRS: u32 = 65536u;
// Whether the cooperative path is compiled in: the host builds a pipeline without it (false)
// for shapes that cannot form a big pair, which drops its barriers and workgroup variables
// (tests/gpu_layout.rs checks what reaches them). Every use is a branch on it, uniform, so the
// barriers under it stay in uniform control flow. The results do not depend on it.
override COOP_PATH: bool = true;
// No item (an invocation that tested none): loses every comparison of the reductions.
const NO_ITEM: u32 = 0xffffffffu;

// The workgroup's big pairs (slot and pair index in the chunk) and their count.
var<workgroup> coop_list: array<vec2<u32>, WORKGROUP_SIZE>;
var<workgroup> coop_count: atomic<u32>;
var<workgroup> coop_listed: u32;
// Invocations that finished a cooperative pair with no loop cut short, summed over the pairs.
var<workgroup> coop_done: atomic<u32>;
// The reductions' slots, one per invocation (or per subgroup).
var<workgroup> face_slots: array<FaceQuery, WORKGROUP_SIZE>;
var<workgroup> edge_slots: array<EdgeQuery, WORKGROUP_SIZE>;
// Words of coop_kept: B hulls of up to 1,024 edges (about 340 vertices) keep only the edges that
// can matter, larger ones every edge.
const COOP_KEPT_WORDS: u32 = 32u;
// The kept-edge bit set of the bounded edge query's step 3, filled by all invocations.
var<workgroup> coop_kept: array<atomic<u32>, COOP_KEPT_WORDS>;

// True when pair `index` (which runs here) has `least` edge pairs or more and is not two boxes
// (those take the box SAT, which has nothing to split).
fn has_edge_pairs(index: u32, least: u32) -> bool {
    let pair = pair_to_run(pairs[index]);
    let a = shapes[bodies[pair.x].shape];
    let b = shapes[bodies[pair.y].shape];
    let boxes = a.kind == SHAPE_BOX && b.kind == SHAPE_BOX;
    return !boxes && a.edge_count * b.edge_count >= least;
}

// True when pair `index` (which runs here) goes cooperative in `main`.
fn is_big(index: u32) -> bool {
    return has_edge_pairs(index, COOP_EDGE_PAIRS);
}

// The reduction's order by separation (see above), shared by faces and edge pairs: 1 when the
// result separating by `x` comes first, -1 when the one by `y` does, 0 when their separations
// leave it to their indices.
fn separation_order(x: f32, y: f32, margin: f32) -> i32 {
    let x_above = x > margin;
    let y_above = y > margin;
    if x_above != y_above {
        return select(-1, 1, x_above);
    }
    if !x_above && x != y {
        return select(-1, 1, x > y);
    }
    return 0;
}

// The reduction's order of face results (see above): x when x comes first, else y.
fn first_face(x: FaceQuery, y: FaceQuery, margin: f32) -> FaceQuery {
    let order = separation_order(x.separation, y.separation, margin);
    if order > 0 || (order == 0 && x.face <= y.face) {
        return x;
    }
    return y;
}

// The reduction's order of edge pairs (see above), found pairs before none.
fn first_edge(x: EdgeQuery, y: EdgeQuery, margin: f32) -> EdgeQuery {
    if x.found != y.found {
        if x.found {
            return x;
        }
        return y;
    }
    let order = separation_order(x.separation, y.separation, margin);
    let x_lower = x.edge_a < y.edge_a || (x.edge_a == y.edge_a && x.edge_b <= y.edge_b);
    if order > 0 || (order == 0 && x_lower) {
        return x;
    }
    return y;
}

// query_faces by the workgroup (the bounded loop, split by face).
fn coop_query_faces(
    a: GpuShape,
    b: GpuShape,
    q: vec4<f32>,
    t: vec3<f32>,
    margin: f32,
    floor: f32,
    lane: u32,
) -> FaceQuery {
    let bounds = face_bounds(a, b, q, t);
    // The threshold: the floor (uniform: a reduction's result), or without one the seed's.
    var threshold = floor;
    if floor == -F32_MAX {
        // The seed: the first of largest bound (a reduction with no bound above the margin).
        var seed = FaceQuery(NO_ITEM, -F32_MAX);
        for (var face = lane; face < a.face_count; face += WORKGROUP_SIZE) {
            let u = face_bound(bounds, planes[a.first_face + face]);
            if u > seed.separation {
                seed = FaceQuery(face, u);
            }
        }
        let seed_face = reduce_faces(seed, lane, F32_MAX).face;
        // The seed's face_separation with B's vertices split across the invocations: the
        // lowest of the same products, taken in any order, is the same number; reduced as the
        // largest of their negations (nothing is above F32_MAX).
        let seed_plane = planes[a.first_face + seed_face];
        let normal = quat_rotate(q, seed_plane.xyz);
        let offset = seed_plane.w + dot(normal, t);
        var lowest = F32_MAX;
        for (var i = lane; i < b.vertex_count; i += WORKGROUP_SIZE) {
            lowest = min(lowest, dot(normal, vertices[b.first_vertex + i].xyz));
        }
        let b_lowest = -reduce_faces(FaceQuery(0u, -lowest), lane, F32_MAX).separation;
        threshold = min(b_lowest - offset, margin);
    }
    var best = FaceQuery(NO_ITEM, -F32_MAX);
    for (var face = lane; face < a.face_count; face += WORKGROUP_SIZE) {
        if bounded_face(a, b, q, t, bounds, face, threshold, margin, &best) {
            break;
        }
    }
    let first = reduce_faces(best, lane, margin);
    if first.face == NO_ITEM {
        // No face tested anywhere: the serial loop's initial value.
        return FaceQuery(0u, -F32_MAX);
    }
    return first;
}

// query_edges_above by the workgroup: step 3 split by B's edge, step 4 by A's edge.
fn coop_query_edges(
    a: GpuShape,
    b: GpuShape,
    q: vec4<f32>,
    t: vec3<f32>,
    margin: f32,
    floor: f32,
    lane: u32,
) -> EdgeQuery {
    let s = edge_scan(a, b, q, t, margin);
    let b_centroid = quat_rotate(q, b.centroid) + t;
    let threshold = floor;

    // 3. Bounds of B's edges (as query_edges_above), into the workgroup's bit set.
    let keep_all = b.edge_count > 32u * COOP_KEPT_WORDS;
    if lane < COOP_KEPT_WORDS {
        atomicStore(&coop_kept[lane], 0u);
    }
    workgroupBarrier();
    let lift = s.slack - a.inner_radius;
    let a_centroid_in_b = quat_rotate(quat_conjugate(q), a.centroid - t);
    for (var ib = lane; ib < select(b.edge_count, 0u, keep_all); ib += WORKGROUP_SIZE) {
        if b_edge_reaches(b, ib, a_centroid_in_b, lift, threshold) {
            atomicOr(&coop_kept[ib / 32u], 1u << (ib % 32u));
        }
    }
    workgroupBarrier();

    // 4. The exhaustive loop over what can still matter, split by A's edge (`unused`: the
    // kept edges are coop_kept).
    var unused: array<u32, KEPT_WORDS>;
    let best = scan_kept(s, b_centroid, threshold, &unused, true, keep_all, lane, WORKGROUP_SIZE);
    return reduce_edges(best, lane, margin);
}

// Steps 2-7 of pair `index` by the whole workgroup (`index` the same for all); the result is
// the same for all invocations.
fn sat_coop(index: u32, lane: u32) -> SatOut {
    let p = pair_setup(pair_to_run(pairs[index]));
    let a = p.a;
    let b = p.b;
    let margin = params.margin;

    // 3. Face query of A.
    let face_a = coop_query_faces(a, b, p.q_ab, p.t_ab, margin, -F32_MAX, lane);
    let face_a_normal = planes[a.first_face + face_a.face].xyz;
    if face_a.separation > margin {
        return separating(AXIS_FACE_A, face_a.face, 0u, face_a_normal, face_a.separation);
    }

    // 4. Face query of B.
    let face_b = coop_query_faces(b, a, p.q_ba, p.t_ba, margin, face_a.separation, lane);
    let face_b_normal = -quat_rotate(p.q_ba, planes[b.first_face + face_b.face].xyz);
    if face_b.separation > margin {
        return separating(AXIS_FACE_B, 0u, face_b.face, face_b_normal, face_b.separation);
    }

    // 5. Edge query.
    let edge = coop_query_edges(a, b, p.q_ba, p.t_ba, margin, max(face_a.separation, face_b.separation), lane);
    if edge.found && edge.separation > margin {
        return separating(AXIS_EDGE_PAIR, edge.edge_a, edge.edge_b, edge.axis, edge.separation);
    }

    // 7. Face preference, exact maximum separation, deepest axis.
    return prefer_faces(SatCandidates(face_a, face_a_normal, face_b, face_b_normal, edge), p.tolerance);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) id: vec3<u32>, invocation: Invocation) {
    let lane = enter(invocation);
    if COOP_PATH {
        if lane == 0u {
            atomicStore(&coop_count, 0u);
            atomicStore(&coop_done, 0u);
        }
        workgroupBarrier();
    }

    // 1. Bounds guard, CPU-routed pairs; small pairs run here, big ones are listed.
    let slot = id.x;
    if slot < params.pair_count {
        let index = pair_of_slot(slot);
        if !runs_here(index) {
            write_none(slot, index);
        } else {
            var listed = false;
            if COOP_PATH {
                listed = list_if_big(slot, index);
            }
            if !listed {
                write_result(slot, index, sat_serial(index), loops_cut_short());
            }
        }
    }

    if COOP_PATH {
        run_listed(lane);
    }
}

// Lists pair `index` (which runs here, in slot `slot`) for the workgroup when it is big
// (is_big): its result stays flagged until the workgroup stores it, so a pair the driver's loop
// cap keeps the workgroup from reaching comes back flagged. False when it is not big.
fn list_if_big(slot: u32, index: u32) -> bool {
    if !is_big(index) {
        return false;
    }
    coop_list[atomicAdd(&coop_count, 1u)] = vec2<u32>(slot, index);
    write_result(slot, index, separating(AXIS_NONE, 0u, 0u, vec3<f32>(0.0), 0.0), true);
    return true;
}

// The workgroup's listed (big) pairs, one after another by the whole workgroup. A pair is
// complete when every invocation finished it with no loop cut short: the driver's loop cap
// applies per invocation group, and a group it stopped leaves stale slots in the reductions.
// The storage barrier orders main's flagged stores before lane 0's. Called by every invocation.
fn run_listed(lane: u32) {
    storageBarrier();
    workgroupBarrier();
    if lane == 0u {
        coop_listed = atomicLoad(&coop_count);
    }
    let listed = workgroupUniformLoad(&coop_listed);
    for (var k = 0u; k < listed; k++) {
        let listed_pair = workgroupUniformLoad(&coop_list[k]);
        let out = sat_coop(listed_pair.y, lane);
        if !loops_cut_short() {
            atomicAdd(&coop_done, 1u);
        }
        workgroupBarrier();
        if lane == 0u {
            write_result(listed_pair.x, listed_pair.y, out, atomicLoad(&coop_done) != WORKGROUP_SIZE * (k + 1u));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// One pair per workgroup, for small calls (the host's choice: SatMapping in
// src/narrowphase/gpu/kernels.rs): workgroup w takes pair w with all WORKGROUP_SIZE invocations,
// so a call of few pairs keeps 64 lanes busy per pair instead of one.

// Edge pairs from which main_pair_per_workgroup splits a pair over its workgroup (sat_coop);
// smaller pairs and two boxes run on lane 0 (sat_serial). Mirrors
// crate::narrowphase::gpu::kernel_layout::SPLIT_EDGE_PAIRS; overridable so the tests can run
// every pair either way (tests/gpu_sat.rs). The results do not depend on it.
override SPLIT_EDGE_PAIRS: u32 = 64u;

// The slot's pair index, as all invocations share it (pair_of_slot reads it from a read-write
// buffer, which WGSL does not count as uniform).
var<workgroup> slot_pair: u32;

// Slot `workgroup.x` by the whole workgroup. Every branch below depends only on the workgroup's
// pair (uniform), so the barriers of sat_coop stay in uniform control flow. Without COOP_PATH
// every pair runs on lane 0 and no workgroup memory is reached.
@compute @workgroup_size(WORKGROUP_SIZE)
fn main_pair_per_workgroup(@builtin(workgroup_id) workgroup: vec3<u32>, invocation: Invocation) {
    let lane = enter(invocation);
    // 1. Bounds guard.
    let slot = workgroup.x;
    if slot >= params.pair_count {
        return;
    }
    if COOP_PATH {
        if lane == 0u {
            slot_pair = pair_of_slot(slot);
        }
        run_pair(slot, workgroupUniformLoad(&slot_pair), lane);
    } else {
        run_pair(slot, pair_of_slot(slot), lane);
    }
}

// Pair `index` (uniform) in slot `slot` by the whole workgroup: CPU-routed pairs, then split
// pairs by all invocations, the others by lane 0.
fn run_pair(slot: u32, index: u32, lane: u32) {
    if !runs_here(index) {
        if lane == 0u {
            write_none(slot, index);
        }
        return;
    }
    if COOP_PATH {
        if has_edge_pairs(index, SPLIT_EDGE_PAIRS) {
            run_split(slot, index, lane);
            return;
        }
    }
    if lane == 0u {
        write_result(slot, index, sat_serial(index), loops_cut_short());
    }
}

// Pair `index` by sat_coop, stored by lane 0 in slot `slot`; complete (as in run_listed) when
// every invocation finished it with no loop cut short. Called by every invocation.
fn run_split(slot: u32, index: u32, lane: u32) {
    if lane == 0u {
        atomicStore(&coop_done, 0u);
    }
    // sat_coop's first barrier orders the store before every invocation's add.
    let out = sat_coop(index, lane);
    if !loops_cut_short() {
        atomicAdd(&coop_done, 1u);
    }
    workgroupBarrier();
    if lane == 0u {
        write_result(slot, index, out, atomicLoad(&coop_done) != WORKGROUP_SIZE);
    }
}

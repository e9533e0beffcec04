//! Separating axis test of a one-sided triangle (body A, its frame) against a hull (body B).
//!
//! A triangle is a flat polytope: its face normal both ways, and three edges whose Gauss-map
//! arcs are half circles from `n` through the edge's outward side normal to `−n`.
//! 1. Triangle face `n`: B's lowest point along `n` over the plane. Beyond the margin, or B
//!    wholly behind the plane, no contact.
//! 2. B's faces: the triangle's lowest corner under each face plane.
//! 3. Edge pairs whose arcs cross (B's arc negated), separation from the two edges. An edge
//!    axis may be chosen only where the two segments' closest points are the lines' (within
//!    the tolerance): elsewhere the edges do not meet across it (the one-sided, active-edge
//!    choice can land there, when deep or apart), and their midpoint would lie off both.
//! 4. Every axis may separate (the flat triangle's SAT); only axes in front of the triangle
//!    (`normal · n >= 0`) that `allows` accepts (the caller's internal-edge policy) may be
//!    chosen, with the hull SAT's face preference. The largest separation over every axis, chosen
//!    or not, is returned beside the chosen one: when positive, a lower bound on the distance.
//!
//! B is posed in A's frame once per pair ([`PosedHull`]) and steps 2 and 3 run four faces or
//! edges at a time, the edge axes and their separations too; every value is the one the scalar
//! per-triangle transform forms, bit for bit.
//! WGSL twin: `query_triangle_hull` in shaders/narrowphase/triangle_contact.wgsl.

use glam::{Vec3, Vec4};

use crate::constants::PARALLEL_EDGE_SINE;
use crate::hull::{ConvexHull, Plane};
use crate::pose::Isometry;
use crate::query::sat::{SatAxis, real_lanes, rotate_lanes};
use crate::query::segment::closest_points_segments;
use crate::trimesh::{Triangle, TriangleFeature};

/// A hull posed in A's frame once for many triangles: its vertices, face planes (four per group
/// by coordinate), the Gauss arcs of its edges negated and (on first use) the edges' starts and
/// directions (four per group). Each value is bit for bit the scalar one:
/// `b_in_a.transform_point(v)`, `m = b_in_a.rotation * n` with offset `offset + m · t`,
/// `-(b_in_a.rotation * n)`, `b_in_a.rotation * d`. Reused from pair to pair (allocates only to
/// grow).
#[derive(Clone, Debug, Default)]
pub struct PosedHull {
    /// Vertices, A's frame.
    vertices: Vec<Vec3>,
    /// Face planes, A's frame: normal x, y, z lanes and offset lanes; padding lanes repeat the
    /// last face.
    plane_lanes: Vec<[Vec4; 4]>,
    /// Each edge's face normals negated, A's frame: `faces[0]`'s x, y, z lanes, then `faces[1]`'s.
    arc_lanes: Vec<[Vec4; 6]>,
    /// Each edge's start vertex and unit direction, A's frame: x, y, z lanes of each; a group
    /// holds them once `edge_posed` says so.
    edge_lanes: Vec<[Vec4; 6]>,
    /// Per group of `edge_lanes`: posed at the current pose yet.
    edge_posed: Vec<bool>,
    /// Face and edge counts (the real lanes).
    faces: usize,
    edges: usize,
}

impl PosedHull {
    /// Poses `hull` at `b_in_a` (B's pose in A's frame), replacing what was held.
    pub fn pose(&mut self, hull: &ConvexHull, b_in_a: &Isometry) {
        let (q, t) = (b_in_a.rotation, b_in_a.translation);
        let (tx, ty, tz) = (Vec4::splat(t.x), Vec4::splat(t.y), Vec4::splat(t.z));
        self.vertices.clear();
        for &lanes in hull.vertex_lanes() {
            let [x, y, z] = rotate_lanes(q, lanes);
            let [x, y, z] = [x + tx, y + ty, z + tz];
            self.vertices.extend((0..4).map(|i| Vec3::new(x[i], y[i], z[i])));
        }
        self.vertices.truncate(hull.vertices().len());
        self.plane_lanes.clear();
        self.plane_lanes
            .extend(hull.plane_lanes().iter().map(|&[nx, ny, nz, offset]| {
                let [mx, my, mz] = rotate_lanes(q, [nx, ny, nz]);
                [mx, my, mz, offset + (((mx * tx) + (my * ty)) + (mz * tz))]
            }));
        self.arc_lanes.clear();
        self.arc_lanes.extend(hull.edge_lanes().iter().map(|lanes| {
            let [cx, cy, cz] = rotate_lanes(q, lanes.normal0);
            let [dx, dy, dz] = rotate_lanes(q, lanes.normal1);
            [-cx, -cy, -cz, -dx, -dy, -dz]
        }));
        // The edges' starts and directions are posed group by group on first use.
        let groups = hull.edge_lanes().len();
        if self.edge_lanes.len() < groups {
            self.edge_lanes.resize(groups, [Vec4::ZERO; 6]);
        }
        self.edge_posed.clear();
        self.edge_posed.resize(groups, false);
        self.faces = hull.planes().len();
        self.edges = hull.edges().len();
    }

    /// Edge group `group`'s start vertices and unit directions, A's frame (x, y, z lanes of
    /// each; padding lanes repeat the last edge): `b_in_a.transform_point(v)` and
    /// `b_in_a.rotation * d` bit for bit, posed on first use (`hull` and `b_in_a` those of the
    /// last [`Self::pose`]).
    #[inline]
    fn edge_group(&mut self, hull: &ConvexHull, b_in_a: &Isometry, group: usize) -> &[Vec4; 6] {
        if !self.edge_posed[group] {
            self.pose_edge_group(hull, b_in_a, group);
        }
        &self.edge_lanes[group]
    }

    /// Poses [`Self::edge_group`]'s group `group` (out of line: the SAT's loop stays small).
    #[inline(never)]
    fn pose_edge_group(&mut self, hull: &ConvexHull, b_in_a: &Isometry, group: usize) {
        let (q, t) = (b_in_a.rotation, b_in_a.translation);
        let [sx, sy, sz] = rotate_lanes(q, hull.edge_lanes()[group].start);
        let directions = hull.edge_directions();
        let [a, b, c, d] = [0, 1, 2, 3].map(|i| directions[(4 * group + i).min(directions.len() - 1)]);
        let [ux, uy, uz] = rotate_lanes(
            q,
            [
                Vec4::new(a.x, b.x, c.x, d.x),
                Vec4::new(a.y, b.y, c.y, d.y),
                Vec4::new(a.z, b.z, c.z, d.z),
            ],
        );
        let (tx, ty, tz) = (Vec4::splat(t.x), Vec4::splat(t.y), Vec4::splat(t.z));
        self.edge_lanes[group] = [sx + tx, sy + ty, sz + tz, ux, uy, uz];
        self.edge_posed[group] = true;
    }

    /// Vertices, A's frame.
    #[inline]
    pub fn vertices(&self) -> &[Vec3] {
        &self.vertices
    }

    /// Face `face`'s plane, A's frame.
    #[inline]
    pub fn plane(&self, face: usize) -> Plane {
        let [x, y, z, offset] = self.plane_lanes[face / 4].map(|l| l[face % 4]);
        Plane {
            normal: Vec3::new(x, y, z),
            offset,
        }
    }
}

/// The chosen axis of [`query_triangle_hull`], A's (the triangle's) frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TriangleAxis {
    /// `FaceA(0)`: the triangle's face; `FaceB(j)`: hull face `j`; `EdgePair { edge_a: k,
    /// edge_b: j }`: triangle edge `k` (corner `k` to `k + 1`) and hull edge `j`.
    pub axis: SatAxis,
    /// Unit normal from the triangle toward the hull, A's frame.
    pub normal: Vec3,
    /// Separation along it, length units (negative = overlapping).
    pub separation: f32,
    /// The largest separation over every axis tested, chosen or refused, length units: when
    /// positive the triangle and the hull are at least this far apart (the chosen axis, refused
    /// the separating one, may show less).
    pub max_separation: f32,
}

/// The SAT of `triangle` against `hull` posed at `b_in_a` (`posed`: the same hull posed there,
/// [`PosedHull::pose`]; `sides`: the triangle's [`Triangle::sides`]): `None` when an axis
/// separates them by more than `margin` or the hull lies wholly behind the triangle's plane; else
/// the best allowed axis (module docs; an edge axis only where its edges meet) with faces
/// preferred by `tolerance` (length units).
/// Features for `allows`, and whether edges meet, are judged within `tolerance` too.
#[allow(clippy::too_many_arguments)]
pub fn query_triangle_hull(
    triangle: &Triangle,
    sides: &[(Vec3, Vec3); 3],
    hull: &ConvexHull,
    posed: &mut PosedHull,
    b_in_a: &Isometry,
    margin: f32,
    tolerance: f32,
    allows: impl Fn(TriangleFeature, Vec3) -> bool,
) -> Option<TriangleAxis> {
    let n = triangle.normal;
    let [v0, v1, v2] = triangle.vertices;
    let t = b_in_a.translation;
    // 1. The triangle's face, and B wholly behind it.
    let n_in_b = b_in_a.inverse_transform_vector(n);
    let plane = n.dot(v0);
    let (lowest, highest) = hull.lowest_and_highest_along(n_in_b);
    let face_separation = lowest + n.dot(t) - plane;
    if face_separation > margin || highest + n.dot(t) < plane {
        return None;
    }
    let mut best = TriangleAxis {
        axis: SatAxis::FaceA(0),
        normal: n,
        separation: face_separation,
        max_separation: face_separation,
    };
    // 2. B's faces, four at a time: normal −m from the triangle toward B.
    let splat = |v: Vec3| [Vec4::splat(v.x), Vec4::splat(v.y), Vec4::splat(v.z)];
    let dots = |[x, y, z]: [Vec4; 3], [mx, my, mz]: [Vec4; 3]| ((mx * x) + (my * y)) + (mz * z);
    let corners = [v0, v1, v2].map(splat);
    let (margin4, n4) = (Vec4::splat(margin), splat(n));
    // Only an axis beyond `beat` can replace the best: `allows` is asked of those alone.
    let beat = best.separation + tolerance;
    let mut best_b: Option<TriangleAxis> = None;
    // Padding lanes repeat a real face: the lane-wise maximum is over real faces only.
    let mut max_b = Vec4::splat(face_separation);
    for (group, &[mx, my, mz, offset]) in posed.plane_lanes.iter().enumerate() {
        let m = [mx, my, mz];
        let separations = dots(corners[0], m)
            .min(dots(corners[1], m))
            .min(dots(corners[2], m))
            - offset;
        if separations.cmpgt(margin4).any() {
            return None;
        }
        max_b = max_b.max(separations);
        let floor = Vec4::splat(best_b.map_or(beat, |b| b.separation.max(beat)));
        let mut mask = (separations.cmpgt(floor) & dots(n4, m).cmple(Vec4::ZERO)).bitmask()
            & real_lanes(group, posed.faces);
        while mask != 0 {
            let i = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            let separation = separations[i];
            let m = Vec3::new(mx[i], my[i], mz[i]);
            if best_b.is_none_or(|b| separation > b.separation)
                && allows(triangle.feature_along(-m, tolerance), -m)
            {
                best_b = Some(TriangleAxis {
                    axis: SatAxis::FaceB((4 * group + i) as u32),
                    normal: -m,
                    separation,
                    max_separation: 0.0,
                });
            }
        }
    }
    let max_separation = max_b.max_element();
    if let Some(b) = best_b
        && b.separation > best.separation + tolerance
    {
        best = b;
    }
    // 3. Edge pairs whose arcs cross, four hull edges at a time.
    let edges = hull.edges();
    let sides4 = sides.map(|(e, side)| (splat(e), splat(side)));
    let beat = Vec4::splat(best.separation + tolerance);
    let mut best_edge: Option<TriangleAxis> = None;
    let parallel = Vec4::splat(PARALLEL_EDGE_SINE);
    // Padding lanes repeat a real edge: the lane-wise maximum is over real edges only.
    let mut max_edge = Vec4::NEG_INFINITY;
    for group in 0..posed.arc_lanes.len() {
        let [cx, cy, cz, dx, dy, dz] = posed.arc_lanes[group];
        // The arc c→d crosses the great circle ⟂ e at x; it must be on the side's half.
        let crossing = |(e, side): ([Vec4; 3], [Vec4; 3])| {
            let (ce, de) = (dots(e, [cx, cy, cz]), dots(e, [dx, dy, dz]));
            let (ca, da) = (ce.abs(), de.abs());
            let x = [
                (cx * da) + (dx * ca),
                (cy * da) + (dy * ca),
                (cz * da) + (dz * ca),
            ];
            ((ce * de).cmplt(Vec4::ZERO) & dots(side, x).cmpgt(Vec4::ZERO), x)
        };
        let crossings = [crossing(sides4[0]), crossing(sides4[1]), crossing(sides4[2])];
        if !(crossings[0].0 | crossings[1].0 | crossings[2].0).any() {
            continue;
        }
        // Each crossing's axis e × d (toward x) and separation, four hull edges at once, as the
        // scalar `e.cross(d)`, `length`, `/` and `dot` form them; the axes beyond `beat`.
        let &[sx, sy, sz, ux, uy, uz] = posed.edge_group(hull, b_in_a, group);
        let mut axes = [([Vec4::ZERO; 3], Vec4::ZERO, 0u32); 3];
        for (k, &(crossing, x)) in crossings.iter().enumerate() {
            if !crossing.any() {
                continue;
            }
            let [ex, ey, ez] = sides4[k].0;
            let cross = [ey * uz - uy * ez, ez * ux - uz * ex, ex * uy - ux * ey];
            let length = dots(cross, cross).sqrt();
            let flip = dots(cross, x).cmplt(Vec4::ZERO);
            let toward = |c: Vec4| Vec4::select(flip, -c, c) / length;
            let axis = [toward(cross[0]), toward(cross[1]), toward(cross[2])];
            let [vx, vy, vz] = corners[k];
            let separation = dots(axis, [sx - vx, sy - vy, sz - vz]);
            let valid = crossing & length.cmpge(parallel);
            if (separation.cmpgt(margin4) & valid).any() {
                return None;
            }
            max_edge = max_edge.max(Vec4::select(valid, separation, Vec4::NEG_INFINITY));
            let beyond = (valid & separation.cmpgt(beat)).bitmask() & real_lanes(group, posed.edges);
            axes[k] = (axis, separation, beyond);
        }
        // Candidates in edge order, then side order.
        let mut lanes = axes[0].2 | axes[1].2 | axes[2].2;
        while lanes != 0 {
            let i = lanes.trailing_zeros() as usize;
            lanes &= lanes - 1;
            let j = 4 * group + i;
            for (k, &([ax, ay, az], separations, beyond)) in axes.iter().enumerate() {
                let separation = separations[i];
                if beyond & 1 << i == 0 || best_edge.is_some_and(|b| separation <= b.separation) {
                    continue;
                }
                let (x, axis) = (crossings[k].1, Vec3::new(ax[i], ay[i], az[i]));
                let [start, end] = edges[j].vertices.map(|v| posed.vertices[v as usize]);
                let triangle_edge = [triangle.vertices[k], triangle.vertices[(k + 1) % 3]];
                if Vec3::new(x[0][i], x[1][i], x[2][i]).dot(n) >= 0.0
                    && allows(TriangleFeature::Edge(k), axis)
                    && edges_meet(triangle_edge, [start, end], axis * separation, tolerance)
                {
                    best_edge = Some(TriangleAxis {
                        axis: SatAxis::EdgePair {
                            edge_a: k as u32,
                            edge_b: j as u32,
                        },
                        normal: axis,
                        separation,
                        max_separation: 0.0,
                    });
                }
            }
        }
    }
    let max_separation = max_separation.max(max_edge.max_element());
    if let Some(e) = best_edge
        && e.separation > best.separation + tolerance
    {
        best = e;
    }
    best.max_separation = max_separation;
    Some(best)
}

/// Whether segments `a` and `b` (A's frame) meet across an edge axis: their closest points are
/// `gap` apart (the axis times the separation) within `tolerance` (length units), so they are
/// the lines' closest points, not clamped to an end.
fn edges_meet(a: [Vec3; 2], b: [Vec3; 2], gap: Vec3, tolerance: f32) -> bool {
    let (s, t) = closest_points_segments(a[0], a[1], b[0], b[1]);
    (b[0].lerp(b[1], t) - a[0].lerp(a[1], s) - gap).length() <= tolerance
}

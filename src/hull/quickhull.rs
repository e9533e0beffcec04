//! `ConvexHull::from_points`: quickhull over a point cloud, computed in f64.
//!
//! 1. Check the input (4 to `MAX_HULL_INPUT_POINTS` finite points); centre it on its bounding
//!    box, whose diagonal scales every tolerance.
//! 2. The first tetrahedron from extreme points (else `Coincident`, `Collinear` or `Coplanar`).
//! 3. Every other point to the first face it lies in front of (that face's outside set).
//! 4. While a face has an outside set: its farthest point's visible region becomes a fan to the
//!    horizon, and the region's outside points go to the new faces.
//! 5. Merge adjacent triangles within `HULL_PLANE_TOLERANCE` of one plane into convex polygons.
//! 6. Drop vertices between two faces that lie on their neighbours' line.
//! 7. Renumber the used vertices, check the output limits, build the flat layout.
//!
//! Tolerances and the merge's fallback: docs/design/hull-building.md.

use std::collections::HashMap;

use glam::{DVec3, Vec3};

use super::{ConvexHull, HullError, MAX_FACE_VERTICES, MAX_HULL_INPUT_POINTS, MAX_HULL_VERTICES, topology};
use crate::constants::{
    HULL_COINCIDENT_TOLERANCE, HULL_FLATNESS_TOLERANCE, HULL_PLANE_TOLERANCE, HULL_ROUNDING_TOLERANCE,
};

/// A triangle of the hull under construction, counter-clockwise seen from outside.
struct Triangle {
    vertices: [usize; 3],
    /// `neighbors[i]` lies across the edge `vertices[i] -> vertices[(i + 1) % 3]`.
    neighbors: [usize; 3],
    /// Unit outward normal.
    normal: DVec3,
    offset: f64,
    /// Points in front of this triangle, not yet on the hull.
    outside: Vec<usize>,
    alive: bool,
}

impl Triangle {
    fn new(points: &[DVec3], vertices: [usize; 3]) -> Triangle {
        let [a, b, c] = vertices.map(|i| points[i]);
        let normal = (b - a).cross(c - a).normalize_or_zero();
        Triangle {
            vertices,
            neighbors: [usize::MAX; 3],
            normal,
            offset: normal.dot(a),
            outside: Vec::new(),
            alive: true,
        }
    }

    /// Signed distance of `p` from the triangle's plane, positive in front (outside).
    fn distance(&self, p: DVec3) -> f64 {
        self.normal.dot(p) - self.offset
    }
}

impl ConvexHull {
    /// The convex hull of a point cloud (local frame, any length unit).
    ///
    /// Interior and duplicate points are dropped; coplanar triangles (within
    /// [`HULL_PLANE_TOLERANCE`] of the bounding-box diagonal) become one convex polygon face,
    /// counter-clockwise seen from outside, without collinear vertices. Every input point lies on
    /// or behind every face plane to within about twice that tolerance. The vertices are input
    /// points, renumbered compactly. Limits: 4 to [`MAX_HULL_INPUT_POINTS`] (65,536) input points,
    /// at most [`MAX_HULL_VERTICES`] (4096) hull vertices and [`MAX_FACE_VERTICES`] (256) per face.
    ///
    /// # Errors
    /// [`HullError`]: `TooFewPoints`, `TooManyPoints`, `NonFinite`, `Coincident`, `Collinear`,
    /// `Coplanar` (relative to the bounding-box diagonal, see [`crate::constants`]),
    /// `TooManyVertices`, `FaceTooLarge`.
    pub fn from_points(points: &[Vec3]) -> Result<ConvexHull, HullError> {
        // Step 1.
        if points.len() < 4 {
            return Err(HullError::TooFewPoints(points.len()));
        }
        if points.len() > MAX_HULL_INPUT_POINTS {
            return Err(HullError::TooManyPoints(points.len()));
        }
        if let Some(index) = points.iter().position(|p| !p.is_finite()) {
            return Err(HullError::NonFinite { index });
        }
        super::check_extent(points)?;
        let (min, max) = points.iter().fold((DVec3::MAX, DVec3::MIN), |(lo, hi), p| {
            (lo.min(p.as_dvec3()), hi.max(p.as_dvec3()))
        });
        let center = (min + max) * 0.5;
        let cloud: Vec<DVec3> = points.iter().map(|p| p.as_dvec3() - center).collect();
        let diagonal = (max - min).length();
        let magnitude = min.abs().max(max.abs()).max_element();
        if diagonal <= HULL_COINCIDENT_TOLERANCE * magnitude || diagonal == 0.0 {
            return Err(HullError::Coincident);
        }

        // Steps 2 to 4.
        let mut triangles = initial_tetrahedron(&cloud, diagonal)?;
        let eps = HULL_ROUNDING_TOLERANCE * diagonal;
        assign_outside(&cloud, &mut triangles, 0..4, 0..cloud.len(), eps);
        let mut next = 0;
        while next < triangles.len() {
            if triangles[next].alive && !triangles[next].outside.is_empty() {
                add_farthest_point(&cloud, &mut triangles, next, eps);
            } else {
                next += 1;
            }
        }

        // Steps 5 to 7.
        let plane_tolerance = HULL_PLANE_TOLERANCE * diagonal;
        let triangles = compact_triangles(triangles);
        let mut loops = merge_coplanar_triangles(&cloud, &triangles, plane_tolerance);
        // A vertex shared by two faces lies within the tolerance of both planes, so of their line
        // to within about twice it.
        remove_collinear_vertices(&cloud, &mut loops, 2.0 * plane_tolerance);
        let mut renumber = vec![u32::MAX; points.len()];
        let mut vertices = Vec::new();
        for face_loop in &mut loops {
            for v in face_loop.iter_mut() {
                if renumber[*v as usize] == u32::MAX {
                    renumber[*v as usize] = vertices.len() as u32;
                    vertices.push(points[*v as usize]);
                }
                *v = renumber[*v as usize];
            }
        }
        if vertices.len() > MAX_HULL_VERTICES {
            return Err(HullError::TooManyVertices(vertices.len()));
        }
        if let Some((face, l)) = loops
            .iter()
            .enumerate()
            .find(|(_, l)| l.len() > MAX_FACE_VERTICES)
        {
            return Err(HullError::FaceTooLarge { face, count: l.len() });
        }
        Ok(topology::build(vertices, &loops))
    }
}

/// Step 2: a tetrahedron of extreme points, faces outward; or why the cloud has no volume.
fn initial_tetrahedron(cloud: &[DVec3], diagonal: f64) -> Result<Vec<Triangle>, HullError> {
    let argmax = |f: &dyn Fn(DVec3) -> f64| {
        (0..cloud.len())
            .max_by(|&i, &j| f(cloud[i]).total_cmp(&f(cloud[j])))
            .unwrap_or(0)
    };
    // The most distant pair among the six axis extremes spans at least diagonal / sqrt(3).
    let extremes: Vec<usize> = (0..3)
        .flat_map(|axis| [argmax(&|p: DVec3| p[axis]), argmax(&|p: DVec3| -p[axis])])
        .collect();
    let (i0, i1) = extremes
        .iter()
        .flat_map(|&a| extremes.iter().map(move |&b| (a, b)))
        .max_by(|&(a, b), &(c, d)| {
            cloud[a]
                .distance_squared(cloud[b])
                .total_cmp(&cloud[c].distance_squared(cloud[d]))
        })
        .unwrap_or((0, 0));
    let (p0, p1) = (cloud[i0], cloud[i1]);
    let axis = (p1 - p0).normalize();
    let line_distance = |p: DVec3| (p - p0).cross(axis).length();
    let i2 = argmax(&line_distance);
    if line_distance(cloud[i2]) <= HULL_FLATNESS_TOLERANCE * diagonal {
        return Err(HullError::Collinear);
    }
    let normal = (p1 - p0).cross(cloud[i2] - p0).normalize();
    let i3 = argmax(&|p: DVec3| normal.dot(p - p0).abs());
    let height = normal.dot(cloud[i3] - p0);
    if height.abs() <= HULL_FLATNESS_TOLERANCE * diagonal {
        return Err(HullError::Coplanar);
    }
    // The base [i0, a, b] must face away from i3.
    let (a, b) = if height > 0.0 { (i2, i1) } else { (i1, i2) };
    let mut triangles: Vec<Triangle> = [[i0, a, b], [i0, i3, a], [a, i3, b], [b, i3, i0]]
        .into_iter()
        .map(|v| Triangle::new(cloud, v))
        .collect();
    for t in 0..4 {
        for e in 0..3 {
            let (from, to) = (triangles[t].vertices[e], triangles[t].vertices[(e + 1) % 3]);
            triangles[t].neighbors[e] = (0..4)
                .find(|&u| {
                    (0..3)
                        .any(|f| triangles[u].vertices[f] == to && triangles[u].vertices[(f + 1) % 3] == from)
                })
                .unwrap_or(usize::MAX);
        }
    }
    Ok(triangles)
}

/// Step 3: gives each point of `candidates` to the first triangle of `targets` it lies more than
/// `eps` in front of; points behind all of them are dropped (interior).
fn assign_outside(
    cloud: &[DVec3],
    triangles: &mut [Triangle],
    targets: std::ops::Range<usize>,
    candidates: impl IntoIterator<Item = usize>,
    eps: f64,
) {
    for i in candidates {
        if let Some(t) = targets.clone().find(|&t| triangles[t].distance(cloud[i]) > eps) {
            triangles[t].outside.push(i);
        }
    }
}

/// Step 4: adds the farthest outside point of triangle `start` to the hull.
fn add_farthest_point(cloud: &[DVec3], triangles: &mut Vec<Triangle>, start: usize, eps: f64) {
    let outside = &triangles[start].outside;
    let apex = outside
        .iter()
        .copied()
        .max_by(|&i, &j| {
            let t = &triangles[start];
            t.distance(cloud[i]).total_cmp(&t.distance(cloud[j]))
        })
        .unwrap_or(outside[0]);
    let p = cloud[apex];

    // Grow the visible region from `start`; collect its horizon as (from, to, outer triangle).
    let mut visible = vec![start];
    let mut seen: HashMap<usize, bool> = HashMap::from([(start, true)]);
    let mut horizon: Vec<(usize, usize, usize)> = Vec::new();
    let mut k = 0;
    while k < visible.len() {
        let t = visible[k];
        k += 1;
        for e in 0..3 {
            let nb = triangles[t].neighbors[e];
            let is_visible = *seen.entry(nb).or_insert_with(|| {
                let sees = triangles[nb].distance(p) > eps;
                if sees {
                    visible.push(nb);
                }
                sees
            });
            if !is_visible {
                let v = triangles[t].vertices;
                horizon.push((v[e], v[(e + 1) % 3], nb));
            }
        }
    }

    // Order the horizon into one loop; if rounding made it anything else, skip the point (it is
    // then within rounding of the hull).
    let Some(ordered) = horizon_loop(&horizon) else {
        triangles[start].outside.retain(|&i| i != apex);
        return;
    };

    // Replace the region by a fan from the apex; new triangle k spans horizon edge k.
    let first = triangles.len();
    let n = ordered.len();
    for (k, &(from, to, outer)) in ordered.iter().enumerate() {
        let mut t = Triangle::new(cloud, [from, to, apex]);
        t.neighbors = [outer, first + (k + 1) % n, first + (k + n - 1) % n];
        let slot = (0..3)
            .find(|&f| triangles[outer].vertices[f] == to && triangles[outer].vertices[(f + 1) % 3] == from)
            .unwrap_or(0);
        triangles[outer].neighbors[slot] = first + k;
        triangles.push(t);
    }
    let mut orphans = Vec::new();
    for &t in &visible {
        triangles[t].alive = false;
        orphans.append(&mut triangles[t].outside);
    }
    orphans.retain(|&i| i != apex);
    assign_outside(cloud, triangles, first..first + n, orphans, eps);
}

/// The horizon edges chained into one loop (each edge's end is the next one's start), or `None`
/// when they do not form exactly one simple loop.
fn horizon_loop(edges: &[(usize, usize, usize)]) -> Option<Vec<(usize, usize, usize)>> {
    let mut by_start: HashMap<usize, usize> = HashMap::with_capacity(edges.len());
    for (k, e) in edges.iter().enumerate() {
        if by_start.insert(e.0, k).is_some() {
            return None;
        }
    }
    let mut ordered = Vec::with_capacity(edges.len());
    let mut k = 0;
    for _ in 0..edges.len() {
        ordered.push(edges[k]);
        k = *by_start.get(&edges[k].1)?;
    }
    (k == 0).then_some(ordered)
}

/// Drops dead triangles and renumbers the neighbour links of the live ones.
fn compact_triangles(triangles: Vec<Triangle>) -> Vec<Triangle> {
    let mut renumber = vec![usize::MAX; triangles.len()];
    let mut live = 0;
    for (t, slot) in triangles.iter().zip(renumber.iter_mut()) {
        if t.alive {
            *slot = live;
            live += 1;
        }
    }
    triangles
        .into_iter()
        .filter(|t| t.alive)
        .map(|mut t| {
            t.neighbors = t.neighbors.map(|n| renumber[n]);
            t
        })
        .collect()
}

/// Step 5: groups adjacent triangles within `tolerance` of a common plane (the plane of the
/// group's largest triangle) and returns each group's outline, counter-clockwise from outside.
///
/// On gently curved parts, a group may border triangles an earlier group took, and its outline
/// may then be non-convex or not one loop; the group is then regrown with a quarter of the
/// tolerance, down to the seed triangle alone.
fn merge_coplanar_triangles(cloud: &[DVec3], triangles: &[Triangle], tolerance: f64) -> Vec<Vec<u32>> {
    const RETRIES: i32 = 4;
    let twice_area = |t: &Triangle| {
        let [a, b, c] = t.vertices.map(|i| cloud[i]);
        (b - a).cross(c - a).length()
    };
    let mut order: Vec<usize> = (0..triangles.len()).collect();
    order.sort_by(|&a, &b| twice_area(&triangles[b]).total_cmp(&twice_area(&triangles[a])));

    let mut group = vec![usize::MAX; triangles.len()];
    let mut loops = Vec::new();
    for seed in order {
        if group[seed] != usize::MAX {
            continue;
        }
        let id = loops.len();
        let plane = &triangles[seed];
        for retry in 0..=RETRIES {
            // The last try (negative tolerance) keeps the seed alone, which always succeeds.
            let tol = if retry < RETRIES {
                tolerance * 0.25f64.powi(retry)
            } else {
                -1.0
            };
            let on_plane = |t: &Triangle| {
                t.normal.dot(plane.normal) > 0.0
                    && t.vertices.iter().all(|&v| plane.distance(cloud[v]).abs() <= tol)
            };
            group[seed] = id;
            let mut members = vec![seed];
            let mut k = 0;
            while k < members.len() {
                for nb in triangles[members[k]].neighbors {
                    if group[nb] == usize::MAX && on_plane(&triangles[nb]) {
                        group[nb] = id;
                        members.push(nb);
                    }
                }
                k += 1;
            }
            let outline = group_outline(triangles, &group, id, &members)
                .filter(|outline| is_convex_outline(cloud, outline, plane.normal, tol.max(0.0)));
            if let Some(outline) = outline {
                loops.push(outline);
                break;
            }
            for &m in &members[1..] {
                group[m] = usize::MAX;
            }
        }
    }
    loops
}

/// Whether every corner of `outline` turns left about `normal`, allowing a reflex corner at most
/// `tolerance` from the line through its neighbours.
fn is_convex_outline(cloud: &[DVec3], outline: &[u32], normal: DVec3, tolerance: f64) -> bool {
    let n = outline.len();
    (0..n).all(|i| {
        let [a, b, c] = [i + n - 1, i, i + 1].map(|k| cloud[outline[k % n] as usize]);
        let turn = (b - a).cross(c - b).dot(normal);
        turn >= -tolerance * (c - a).length()
    })
}

/// The boundary of the triangles `members` (all in group `id`) as one counter-clockwise loop,
/// or `None` when it is not a single simple loop.
fn group_outline(triangles: &[Triangle], group: &[usize], id: usize, members: &[usize]) -> Option<Vec<u32>> {
    let mut next: HashMap<usize, usize> = HashMap::new();
    let mut start = usize::MAX;
    for &m in members {
        let t = &triangles[m];
        for e in 0..3 {
            if group[t.neighbors[e]] != id {
                start = start.min(t.vertices[e]);
                if next.insert(t.vertices[e], t.vertices[(e + 1) % 3]).is_some() {
                    return None;
                }
            }
        }
    }
    let mut outline = vec![start as u32];
    let mut v = *next.get(&start)?;
    while v != start {
        if outline.len() >= next.len() {
            return None;
        }
        outline.push(v as u32);
        v = *next.get(&v)?;
    }
    (outline.len() == next.len()).then_some(outline)
}

/// Step 6: removes each vertex that only two faces share and that lies within `tolerance` of the
/// line through its neighbours, from both loops (the two faces keep at least 3 vertices).
fn remove_collinear_vertices(cloud: &[DVec3], loops: &mut [Vec<u32>], tolerance: f64) {
    let mut faces_of: HashMap<u32, Vec<usize>> = HashMap::new();
    for (f, face_loop) in loops.iter().enumerate() {
        for &v in face_loop {
            faces_of.entry(v).or_default().push(f);
        }
    }
    let mut candidates: Vec<(u32, usize, usize)> = faces_of
        .iter()
        .filter(|(_, faces)| faces.len() == 2)
        .map(|(&v, faces)| (v, faces[0], faces[1]))
        .collect();
    candidates.sort_unstable();
    for (v, a, b) in candidates {
        if loops[a].len() <= 3 || loops[b].len() <= 3 {
            continue;
        }
        let Some(i) = loops[a].iter().position(|&x| x == v) else {
            continue;
        };
        let n = loops[a].len();
        let (prev, next) = (loops[a][(i + n - 1) % n], loops[a][(i + 1) % n]);
        let (p, q, r) = (cloud[prev as usize], cloud[v as usize], cloud[next as usize]);
        let off_line = (q - p).cross(r - p).length() / (r - p).length().max(f64::MIN_POSITIVE);
        if off_line <= tolerance {
            loops[a].remove(i);
            loops[b].retain(|&x| x != v);
        }
    }
}

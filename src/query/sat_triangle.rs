//! Separating axis test of a one-sided triangle (body A, its frame) against a hull (body B).
//!
//! A triangle is a flat polytope: its face normal both ways, and three edges whose Gauss-map
//! arcs are half circles from `n` through the edge's outward side normal to `−n`.
//! 1. Triangle face `n`: B's lowest point along `n` over the plane. Beyond the margin, or B
//!    wholly behind the plane, no contact.
//! 2. B's faces: the triangle's lowest corner under each face plane.
//! 3. Edge pairs whose arcs cross (B's arc negated), separation from the two edges.
//! 4. Every axis may separate (the flat triangle's SAT); only axes in front of the triangle
//!    (`normal · n >= 0`) that `allows` accepts (the caller's internal-edge policy) may be
//!    chosen, with the hull SAT's face preference.

use glam::Vec3;

use crate::constants::PARALLEL_EDGE_SINE;
use crate::hull::ConvexHull;
use crate::pose::Isometry;
use crate::query::sat::SatAxis;
use crate::trimesh::{Triangle, TriangleFeature};

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
}

/// The SAT of `triangle` against `hull` posed at `b_in_a`: `None` when an axis separates them
/// by more than `margin` or the hull lies wholly behind the triangle's plane; else the best
/// allowed axis (module docs) with faces preferred by `tolerance` (length units). Features
/// for `allows` are found within `tolerance` too.
pub fn query_triangle_hull(
    triangle: &Triangle,
    hull: &ConvexHull,
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
    let face_separation = hull.lowest_along(n_in_b) + n.dot(t) - plane;
    if face_separation > margin || -hull.lowest_along(-n_in_b) + n.dot(t) < plane {
        return None;
    }
    let mut best = TriangleAxis {
        axis: SatAxis::FaceA(0),
        normal: n,
        separation: face_separation,
    };
    // 2. B's faces: normal −m from the triangle toward B.
    let mut best_b: Option<TriangleAxis> = None;
    for (j, p) in hull.planes().iter().enumerate() {
        let m = b_in_a.rotation * p.normal;
        let offset = p.offset + m.dot(t);
        let separation = m.dot(v0).min(m.dot(v1)).min(m.dot(v2)) - offset;
        if separation > margin {
            return None;
        }
        if best_b.is_none_or(|b| separation > b.separation)
            && -m.dot(n) >= 0.0
            && allows(triangle.feature_along(-m, tolerance), -m)
        {
            best_b = Some(TriangleAxis {
                axis: SatAxis::FaceB(j as u32),
                normal: -m,
                separation,
            });
        }
    }
    if let Some(b) = best_b
        && b.separation > best.separation + tolerance
    {
        best = b;
    }
    // 3. Edge pairs.
    let sides = [0, 1, 2].map(|k| (triangle.edge_direction(k), triangle.side_normal(k)));
    let vertices = hull.vertices();
    let planes = hull.planes();
    let mut best_edge: Option<TriangleAxis> = None;
    for (j, edge) in hull.edges().iter().enumerate() {
        // B's arc negated, A's frame.
        let c = -(b_in_a.rotation * planes[edge.faces[0] as usize].normal);
        let d = -(b_in_a.rotation * planes[edge.faces[1] as usize].normal);
        let start = b_in_a.transform_point(vertices[edge.vertices[0] as usize]);
        let direction = b_in_a.rotation * hull.edge_directions()[j];
        for (k, &(e, side)) in sides.iter().enumerate() {
            // The arc c→d crosses the great circle ⟂ e at x; it must be on the side's half.
            let (ce, de) = (c.dot(e), d.dot(e));
            if ce * de >= 0.0 {
                continue;
            }
            let x = c * de.abs() + d * ce.abs();
            if x.dot(side) <= 0.0 {
                continue;
            }
            let cross = e.cross(direction);
            let length = cross.length();
            if length < PARALLEL_EDGE_SINE {
                continue;
            }
            let axis = if cross.dot(x) < 0.0 { -cross } else { cross } / length;
            let separation = axis.dot(start - triangle.vertices[k]);
            if separation > margin {
                return None;
            }
            if best_edge.is_none_or(|b| separation > b.separation)
                && x.dot(n) >= 0.0
                && allows(TriangleFeature::Edge(k), axis)
            {
                best_edge = Some(TriangleAxis {
                    axis: SatAxis::EdgePair {
                        edge_a: k as u32,
                        edge_b: j as u32,
                    },
                    normal: axis,
                    separation,
                });
            }
        }
    }
    if let Some(e) = best_edge
        && e.separation > best.separation + tolerance
    {
        best = e;
    }
    Some(best)
}

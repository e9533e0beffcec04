//! Upper bounds on what a face or an edge of a hull can give in the SAT, used to skip faces and
//! drop edges without changing the queries' results (the argument: docs/design/sat.md).
//!
//! A face of A (normal `n`, offset `d`) separates B by at most `n · c_b − r_b − d` (`c_b` B's
//! centroid, `r_b` its [`inner_radius`]); a pair of A's edge by at most the largest
//! `n · (c_b − p_a) − r_b` over the edge's Gauss-map arc (`p_a` its start; [`max_on_arcs`]), and
//! B's edges alike. Each bound gets a slack of [`SAT_BOUND_SLACK`] × the pair's coordinate reach.
//!
//! WGSL twin: the same bounds in `shaders/narrowphase/sat.wgsl`.

use glam::{Vec3, Vec4};

use crate::hull::{ConvexHull, EdgeLanes};

/// Relative slack (dimensionless) added to every face and edge bound, times the pair's
/// coordinate reach (translation plus both hulls' centroid offsets and radii, a length), so the
/// slack is a length. It covers f32 rounding of the bound and of the separation it bounds, and
/// axes that leave the exact Gauss-map arc by up to this angle (a rounding-decided crossing test
/// moves the axis by far less, about 1e-5 rad, at the parallel cut-off sine of 1e-3). Larger
/// keeps more edges (slower, never wrong); smaller risks dropping a face or an edge pair the
/// exhaustive query would pick.
pub const SAT_BOUND_SLACK: f32 = 1.0e-3;

/// Radius of the largest sphere about the hull's centroid that lies inside it: the smallest
/// distance from the centroid to a face plane (local length units, positive for a valid hull).
/// Computed once when the hull is built ([`ConvexHull::inner_radius`]).
pub fn inner_radius(hull: &ConvexHull) -> f32 {
    hull.inner_radius()
}

/// An upper bound of `max_on_arc` (this module's tests) for four edges at a time from the end values alone: lane
/// `i` bounds `n · (c − p)` over the arc of edge `i` of `lanes` (`p` its start vertex, the arc
/// from its `normal0` to its `normal1`), all in the hull's local frame, by `max(m, m k)`, `m`
/// the larger end value and `k` the edge's [`EdgeLanes::stretch`] (up to rounding, which the
/// slack covers). On the arc `n = α n0 + β n1` with `α, β ≥ 0` and `1 ≤ α + β ≤ k`, so
/// `n · w ≤ (α + β) m` is at most `m k` when `m ≥ 0` and at most `m` when `m < 0`. No square
/// root, and within half of `max_on_arc_loose`'s rise over `m` for short arcs.
#[inline]
pub fn max_on_arcs(lanes: &EdgeLanes, c: Vec3) -> Vec4 {
    let [px, py, pz] = lanes.start;
    let (wx, wy, wz) = (
        Vec4::splat(c.x) - px,
        Vec4::splat(c.y) - py,
        Vec4::splat(c.z) - pz,
    );
    let dot = |[nx, ny, nz]: [Vec4; 3]| nx * wx + ny * wy + nz * wz;
    let ends = dot(lanes.normal0).max(dot(lanes.normal1));
    ends.max(ends * lanes.stretch)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hull::arc_stretch;

    /// Largest `n · w` over the unit vectors `n` on the short great-circle arc from the unit `u` to
    /// the unit `v` (same frame as `w`).
    #[inline]
    fn max_on_arc(u: Vec3, v: Vec3, w: Vec3) -> f32 {
        let at_ends = u.dot(w).max(v.dot(w));
        let pole = u.cross(v);
        let pole_sq = pole.length_squared();
        if pole_sq <= f32::MIN_POSITIVE {
            // u and v (nearly) coincide: the arc is its ends.
            return at_ends;
        }
        // w's part in the arc's plane; its direction is the maximizer on the whole great circle.
        let in_plane = w - pole * (w.dot(pole) / pole_sq);
        if u.cross(in_plane).dot(pole) >= 0.0 && in_plane.cross(v).dot(pole) >= 0.0 {
            in_plane.length().max(at_ends)
        } else {
            at_ends
        }
    }

    /// An upper bound of [`max_on_arc`] for a third of its cost: the larger end value plus
    /// `|w| (1 − u · v) / 2`. (On an arc of angle `β ≤ π` the maximizer lies within `β / 2` of an
    /// end, and `1 − cos(β / 2) ≤ (1 − cos β) / 2`.)
    #[inline]
    fn max_on_arc_loose(u: Vec3, v: Vec3, w: Vec3) -> f32 {
        u.dot(w).max(v.dot(w)) + w.length() * (0.5 * (1.0 - u.dot(v))).max(0.0)
    }

    #[test]
    fn arc_maximum_matches_dense_sampling() {
        let dirs = [
            Vec3::X,
            Vec3::new(0.6, 0.8, 0.0),
            Vec3::new(-0.6, 0.0, 0.8),
            Vec3::new(0.0, -1.0, 0.0),
            Vec3::new(0.3, 0.3, -0.9).normalize(),
        ];
        let ws = [
            Vec3::new(1.0, 2.0, 3.0),
            Vec3::new(-2.0, 0.5, 0.1),
            Vec3::new(0.0, 0.0, -1.0),
            Vec3::new(0.2, -3.0, 0.4),
        ];
        for &u in &dirs {
            for &v in &dirs {
                if u.dot(v) < -0.99 {
                    continue;
                }
                for &w in &ws {
                    let sampled = (0..=1000)
                        .map(|i| u.slerp(v, i as f32 / 1000.0).dot(w))
                        .fold(f32::NEG_INFINITY, f32::max);
                    let bound = max_on_arc(u, v, w);
                    assert!(bound >= sampled - 1e-5, "{u} {v} {w}: {bound} < {sampled}");
                    assert!(bound <= sampled + 1e-3, "{u} {v} {w}: {bound} >> {sampled}");
                    let loose = max_on_arc_loose(u, v, w);
                    assert!(loose >= bound - 1e-5, "{u} {v} {w}: loose {loose} < {bound}");
                }
            }
        }
    }

    #[test]
    fn lane_bounds_are_at_least_the_exact_arc_maximum_and_below_the_loose_one() {
        // A hull with edges of many arc lengths and a lane group padded with a repeated edge.
        let points: Vec<Vec3> = (0..23)
            .map(|i| {
                let z = 1.0 - 2.0 * (i as f32 + 0.5) / 23.0;
                let angle = i as f32 * 2.399_963;
                let r = (1.0 - z * z).sqrt();
                Vec3::new(1.5 * r * angle.cos(), r * angle.sin(), 0.7 * z)
            })
            .collect();
        let hull = ConvexHull::from_points(&points).expect("points on an ellipsoid make a hull");
        let (edges, planes, vertices) = (hull.edges(), hull.planes(), hull.vertices());
        for c in [Vec3::ZERO, Vec3::new(2.0, -1.0, 0.5), Vec3::new(-0.3, 3.0, -2.0)] {
            for (group, lanes) in hull.edge_lanes().iter().enumerate() {
                let bounds = max_on_arcs(lanes, c).to_array();
                for (lane, &bound) in bounds.iter().enumerate() {
                    let edge = edges[(4 * group + lane).min(edges.len() - 1)];
                    let [n0, n1] = edge.faces.map(|f| planes[f as usize].normal);
                    let w = c - vertices[edge.vertices[0] as usize];
                    let exact = max_on_arc(n0, n1, w);
                    assert!(bound >= exact - 1e-5, "edge {edge:?}: {bound} < {exact}");
                    let loose = max_on_arc_loose(n0, n1, w);
                    assert!(bound <= loose + 1e-5, "edge {edge:?}: {bound} > loose {loose}");
                }
            }
        }
    }

    #[test]
    fn end_value_bound_holds_on_short_and_nearly_opposite_arcs() {
        // Arcs from 1 to about 179.4 degrees, against offsets on every side.
        let u = Vec3::new(0.3, -0.2, 0.9).normalize();
        let side = u.cross(Vec3::X).normalize();
        let ws = [
            Vec3::new(1.0, 2.0, 3.0),
            Vec3::new(-2.0, 0.5, 0.1),
            Vec3::new(0.0, 0.0, -1.0),
            Vec3::new(0.2, -3.0, 0.4),
            side * 2.0 - u * 0.01,
        ];
        for step in 1..=60 {
            let angle = (step as f32 * 2.99).to_radians();
            let v = (u * angle.cos() + side * angle.sin()).normalize();
            let lane = |x: f32| Vec4::splat(x);
            let lanes = EdgeLanes {
                start: [lane(0.0); 3],
                normal0: [lane(u.x), lane(u.y), lane(u.z)],
                normal1: [lane(v.x), lane(v.y), lane(v.z)],
                stretch: lane(arc_stretch(u, v)),
            };
            for &w in &ws {
                let sampled = (0..=2000)
                    .map(|i| u.slerp(v, i as f32 / 2000.0).dot(w))
                    .fold(f32::NEG_INFINITY, f32::max);
                let bound = max_on_arcs(&lanes, w).x;
                assert!(bound >= sampled - 1e-5, "{angle} rad, w {w}: {bound} < {sampled}");
                assert!(bound.is_finite(), "{angle} rad, w {w}");
            }
        }
    }

    #[test]
    fn inner_radius_of_a_box_is_its_smallest_half_extent() {
        let hull = ConvexHull::cuboid(Vec3::new(1.0, 0.25, 2.0));
        assert!((inner_radius(&hull) - 0.25).abs() < 1e-6);
    }
}

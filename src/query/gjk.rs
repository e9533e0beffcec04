//! Distance between two convex shapes given by support maps (GJK), in any common frame.
//!
//! 1. Start a simplex with one support point of the Minkowski difference `A − B`.
//! 2. Find the point `v` of the simplex closest to the origin (Johnson's subalgorithm by Voronoi
//!    regions, in f64, for simplices up to a tetrahedron), drop the vertices it does not use and
//!    scale the weights of the rest to sum 1, so that `v` stays on the simplex (an upper bound of
//!    the distance) however rounding sets the weights of a sliver.
//! 3. If `v` is (nearly) the origin, or the origin lies inside the tetrahedron, the shapes
//!    overlap: `None`. But once a support gap (step 4) has proven them apart by more than the
//!    overlap tolerance, a tetrahedron that seems to hold the origin is flat to rounding (its
//!    new vertex in the plane of the old triangle): keep the last simplex and stop.
//! 4. Add the support point `w` of `A − B` in direction `−v`; `v·w / |v|` is a lower bound of
//!    the distance (no point of `A − B` lies nearer along `−v`). Stop when `|v|² − v·w` (the gap
//!    between the upper and lower distance bounds, times `|v|`) is within
//!    [`GJK_RELATIVE_TOLERANCE`] of `|v|²`, when `|v|` stops decreasing (degenerate input), or
//!    after [`GJK_MAX_ITERATIONS`].
//! 5. The barycentric weights of `v` on the final simplex give the witness points on A and B.
//!
//! WGSL twin: `shaders/narrowphase/gjk.wgsl` (in f32).

use glam::{DVec3, Vec3};

use crate::constants::{GJK_MAX_ITERATIONS, GJK_OVERLAP_TOLERANCE, GJK_RELATIVE_TOLERANCE};
use crate::hull::ConvexHull;
use crate::pose::Isometry;
use crate::trimesh::Triangle;

/// A convex shape known by its support function, in one frame shared by both query shapes.
pub trait SupportMap {
    /// A point of the shape furthest along `direction` (which need not be unit length).
    fn support(&self, direction: Vec3) -> Vec3;
}

/// A single point.
impl SupportMap for Vec3 {
    fn support(&self, _direction: Vec3) -> Vec3 {
        *self
    }
}

/// A segment between its two end points.
impl SupportMap for [Vec3; 2] {
    fn support(&self, direction: Vec3) -> Vec3 {
        if self[1].dot(direction) > self[0].dot(direction) {
            self[1]
        } else {
            self[0]
        }
    }
}

/// A flat triangle (a mesh's, in its frame): its vertex furthest along the direction.
impl SupportMap for Triangle {
    fn support(&self, direction: Vec3) -> Vec3 {
        let d = self.vertices.map(|v| v.dot(direction));
        let k = if d[0] >= d[1] && d[0] >= d[2] {
            0
        } else if d[1] >= d[2] {
            1
        } else {
            2
        };
        self.vertices[k]
    }
}

/// A hull placed by `pose` (its local frame to the query frame).
#[derive(Clone, Copy, Debug)]
pub struct PosedHull<'a> {
    /// The hull, in its local frame.
    pub hull: &'a ConvexHull,
    /// Maps the hull's local frame to the query frame.
    pub pose: Isometry,
}

/// Support in the pose's parent frame.
impl SupportMap for PosedHull<'_> {
    fn support(&self, direction: Vec3) -> Vec3 {
        let (_, local) = self.hull.support(self.pose.inverse_transform_vector(direction));
        self.pose.transform_point(local)
    }
}

/// Closest points of two separated shapes, in the query frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClosestPoints {
    /// Distance between the shapes, positive, in length units.
    pub distance: f32,
    /// The point of A closest to B.
    pub point_a: Vec3,
    /// The point of B closest to A.
    pub point_b: Vec3,
    /// Unit direction from `point_a` toward `point_b`, normalized in f64 (the f32 points'
    /// difference divided by `distance` is off unit length by up to f32 rounding × their size ÷
    /// the distance).
    pub direction: Vec3,
}

/// Closest points between convex shapes `a` and `b` (same frame), or `None` when they overlap
/// or are closer than [`GJK_OVERLAP_TOLERANCE`] times the size of their Minkowski difference.
pub fn closest_points(a: &impl SupportMap, b: &impl SupportMap) -> Option<ClosestPoints> {
    let mut simplex = Simplex::default();
    simplex.push(support_vertex(a, b, DVec3::X));
    let mut v = simplex.vertices[0].w;
    let mut scale = v.length();
    // 4. The largest lower bound of the distance a support point has proven so far.
    let mut lower = 0.0f64;
    for _ in 0..GJK_MAX_ITERATIONS {
        // 3. Overlap.
        let vv = v.length_squared();
        let overlap = GJK_OVERLAP_TOLERANCE * scale;
        if vv <= overlap * overlap {
            return None;
        }
        // 4. Converged, degenerate, or a new vertex.
        let w = support_vertex(a, b, -v);
        scale = scale.max(w.w.length());
        let vw = v.dot(w.w);
        lower = lower.max(vw / vv.sqrt());
        // Converged: no support point is closer along -v than the lower bound allows.
        if vv - vw <= GJK_RELATIVE_TOLERANCE * vv {
            break;
        }
        // Degenerate: a repeated support point cannot make progress.
        if simplex.vertices[..simplex.count].iter().any(|s| s.w == w.w) {
            break;
        }
        let previous = simplex;
        simplex.push(w);
        // 2. Closest point of the grown simplex.
        let Some(closer) = simplex.reduce_to_closest() else {
            // 3. The origin inside a tetrahedron, though a support gap proved the shapes apart:
            // the tetrahedron is flat to rounding, the previous simplex holds the closest point.
            if lower > overlap {
                simplex = previous;
                break;
            }
            return None;
        };
        if closer.length_squared() >= vv {
            // No progress (rounding on degenerate input): keep the last good simplex.
            simplex = previous;
            break;
        }
        v = closer;
    }
    let (point_a, point_b) = simplex.witness_points();
    Some(ClosestPoints {
        distance: v.length() as f32,
        point_a: point_a.as_vec3(),
        point_b: point_b.as_vec3(),
        direction: (point_b - point_a).normalize().as_vec3(),
    })
}

/// A vertex of the Minkowski difference with the support points of A and B that made it.
#[derive(Clone, Copy, Debug, Default)]
struct SimplexVertex {
    w: DVec3,
    a: DVec3,
    b: DVec3,
}

/// Support vertex of `A − B` in `direction`.
fn support_vertex(a: &impl SupportMap, b: &impl SupportMap, direction: DVec3) -> SimplexVertex {
    let d = direction.as_vec3();
    let a = a.support(d).as_dvec3();
    let b = b.support(-d).as_dvec3();
    SimplexVertex { w: a - b, a, b }
}

/// Up to four vertices with the barycentric weights of the current closest point.
#[derive(Clone, Copy, Debug, Default)]
struct Simplex {
    vertices: [SimplexVertex; 4],
    weights: [f64; 4],
    count: usize,
}

impl Simplex {
    fn push(&mut self, vertex: SimplexVertex) {
        self.vertices[self.count] = vertex;
        self.weights[self.count] = if self.count == 0 { 1.0 } else { 0.0 };
        self.count += 1;
    }

    /// Replaces the simplex by the smallest sub-simplex holding its point closest to the
    /// origin (weights summing to 1) and returns that point; `None` when the origin is inside
    /// the tetrahedron.
    fn reduce_to_closest(&mut self) -> Option<DVec3> {
        let w = [
            self.vertices[0].w,
            self.vertices[1].w,
            self.vertices[2].w,
            self.vertices[3].w,
        ];
        let weights = match self.count {
            1 => [1.0, 0.0, 0.0, 0.0],
            2 => {
                let [a, b] = closest_on_segment(w[0], w[1]);
                [a, b, 0.0, 0.0]
            }
            3 => {
                let [a, b, c] = closest_on_triangle(w[0], w[1], w[2]);
                [a, b, c, 0.0]
            }
            _ => closest_on_tetrahedron(w)?,
        };
        // Keep only the vertices the closest point uses, in order, their weights summing to 1
        // (rounding on a sliver may leave them off 1, and v off the simplex).
        let mut kept = 0;
        let mut total = 0.0;
        for (i, &weight) in weights.iter().enumerate().take(self.count) {
            if weight > 0.0 {
                self.vertices[kept] = self.vertices[i];
                self.weights[kept] = weight;
                total += weight;
                kept += 1;
            }
        }
        self.count = kept;
        for weight in &mut self.weights[..kept] {
            *weight /= total;
        }
        Some(
            self.vertices[..kept]
                .iter()
                .zip(&self.weights)
                .map(|(v, &l)| v.w * l)
                .sum(),
        )
    }

    /// The points on A and on B that the current weights combine.
    fn witness_points(&self) -> (DVec3, DVec3) {
        let pairs = self.vertices[..self.count].iter().zip(&self.weights);
        pairs.fold((DVec3::ZERO, DVec3::ZERO), |(pa, pb), (v, &l)| {
            (pa + v.a * l, pb + v.b * l)
        })
    }
}

/// Barycentric weights of the origin's closest point on segment `a b`.
fn closest_on_segment(a: DVec3, b: DVec3) -> [f64; 2] {
    let ab = b - a;
    let len2 = ab.length_squared();
    if len2 <= f64::MIN_POSITIVE {
        return [1.0, 0.0];
    }
    let t = -a.dot(ab) / len2;
    if t <= 0.0 {
        [1.0, 0.0]
    } else if t >= 1.0 {
        [0.0, 1.0]
    } else {
        [1.0 - t, t]
    }
}

/// Barycentric weights of the origin's closest point on triangle `a b c`, by Voronoi regions.
fn closest_on_triangle(a: DVec3, b: DVec3, c: DVec3) -> [f64; 3] {
    let ab = b - a;
    let ac = c - a;
    let d1 = -ab.dot(a);
    let d2 = -ac.dot(a);
    if d1 <= 0.0 && d2 <= 0.0 {
        return [1.0, 0.0, 0.0];
    }
    let d3 = -ab.dot(b);
    let d4 = -ac.dot(b);
    if d3 >= 0.0 && d4 <= d3 {
        return [0.0, 1.0, 0.0];
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        let t = d1 / (d1 - d3);
        return [1.0 - t, t, 0.0];
    }
    let d5 = -ab.dot(c);
    let d6 = -ac.dot(c);
    if d6 >= 0.0 && d5 <= d6 {
        return [0.0, 0.0, 1.0];
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        let t = d2 / (d2 - d6);
        return [1.0 - t, 0.0, t];
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && d4 - d3 >= 0.0 && d5 - d6 >= 0.0 {
        let t = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        return [0.0, 1.0 - t, t];
    }
    let sum = va + vb + vc;
    if sum <= f64::EPSILON * ab.length_squared() * ac.length_squared() {
        // Collinear vertices: the face region is empty, take the best edge.
        let edges = [(0, 1), (0, 2), (1, 2)];
        let p = [a, b, c];
        let mut best = ([1.0, 0.0, 0.0], f64::INFINITY);
        for (i, j) in edges {
            let [li, lj] = closest_on_segment(p[i], p[j]);
            let dist2 = (p[i] * li + p[j] * lj).length_squared();
            if dist2 < best.1 {
                let mut weights = [0.0; 3];
                weights[i] = li;
                weights[j] = lj;
                best = (weights, dist2);
            }
        }
        return best.0;
    }
    let v = vb / sum;
    let w = vc / sum;
    [1.0 - v - w, v, w]
}

/// Barycentric weights of the origin's closest point on tetrahedron `p`, or `None` when the
/// origin is inside it. A flat tetrahedron has no inside: its faces are all tried.
fn closest_on_tetrahedron(p: [DVec3; 4]) -> Option<[f64; 4]> {
    const FACES: [[usize; 4]; 4] = [[0, 1, 2, 3], [0, 3, 1, 2], [0, 2, 3, 1], [1, 3, 2, 0]];
    let mut best: Option<([f64; 4], f64)> = None;
    let mut outside_any = false;
    for [i, j, k, opposite] in FACES {
        let normal = (p[j] - p[i]).cross(p[k] - p[i]);
        let origin_side = -normal.dot(p[i]);
        let opposite_side = normal.dot(p[opposite] - p[i]);
        // The origin is beyond this face when it is not on the opposite vertex's side.
        if origin_side * opposite_side > 0.0 {
            continue;
        }
        outside_any = true;
        let [li, lj, lk] = closest_on_triangle(p[i], p[j], p[k]);
        let dist2 = (p[i] * li + p[j] * lj + p[k] * lk).length_squared();
        if best.is_none_or(|(_, d)| dist2 < d) {
            let mut weights = [0.0; 4];
            weights[i] = li;
            weights[j] = lj;
            weights[k] = lk;
            best = Some((weights, dist2));
        }
    }
    if !outside_any {
        return None;
    }
    best.map(|(weights, _)| weights)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn triangle_regions() {
        let a = DVec3::new(-1.0, 1.0, 1.0);
        let b = DVec3::new(1.0, 1.0, 1.0);
        let c = DVec3::new(0.0, 1.0, -1.0);
        // The origin projects inside the face (0, 1, 0).
        let l = closest_on_triangle(a, b, c);
        let p = a * l[0] + b * l[1] + c * l[2];
        assert!((p - DVec3::new(0.0, 1.0, 0.0)).length() < 1e-12, "{p}");
        // Collinear triangle falls back to its edges.
        let l = closest_on_triangle(
            DVec3::new(-1.0, 1.0, 0.0),
            DVec3::new(0.0, 1.0, 0.0),
            DVec3::new(1.0, 1.0, 0.0),
        );
        assert!(l.iter().all(|w| w.is_finite()) && (l.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn tetrahedron_containing_origin_is_overlap() {
        let p = [
            DVec3::new(1.0, 0.0, -1.0),
            DVec3::new(-1.0, 0.0, -1.0),
            DVec3::new(0.0, 1.0, 1.0),
            DVec3::new(0.0, -1.0, 1.0),
        ];
        assert!(closest_on_tetrahedron(p).is_none());
    }
}

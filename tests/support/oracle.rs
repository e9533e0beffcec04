//! An independent f64 reference for two posed convex hulls: brute-force SAT over every face
//! normal and every edge-pair cross product (no Gauss-map pruning) for overlapping hulls, and
//! the exact distance over every feature pair for separated ones. Slow and simple on purpose:
//! it shares no code with the library beyond reading the hull's vertices and faces.

use glam::{DQuat, DVec3};
use hullsat::{ConvexHull, Pose};

/// A hull in world space, in f64.
pub struct WorldHull {
    vertices: Vec<DVec3>,
    faces: Vec<Vec<usize>>,
    edges: Vec<(usize, usize)>,
}

impl WorldHull {
    /// The hull's vertices and faces moved to world space in f64.
    pub fn new(hull: &ConvexHull, pose: &Pose) -> Self {
        let rotation = DQuat::from_xyzw(
            pose.rotation.x as f64,
            pose.rotation.y as f64,
            pose.rotation.z as f64,
            pose.rotation.w as f64,
        )
        .normalize();
        let translation = pose.translation;
        let vertices = hull
            .vertices()
            .iter()
            .map(|v| rotation * v.as_dvec3() + translation)
            .collect();
        let faces: Vec<Vec<usize>> = (0..hull.faces().len())
            .map(|f| hull.face_loop(f).iter().map(|&v| v as usize).collect())
            .collect();
        let edges = hull
            .edges()
            .iter()
            .map(|e| (e.vertices[0] as usize, e.vertices[1] as usize))
            .collect();
        WorldHull {
            vertices,
            faces,
            edges,
        }
    }

    fn face_normal(&self, face: &[usize]) -> DVec3 {
        let mut n = DVec3::ZERO;
        for i in 0..face.len() {
            let p = self.vertices[face[i]];
            let q = self.vertices[face[(i + 1) % face.len()]];
            n += p.cross(q);
        }
        n.normalize()
    }

    fn extent(&self, axis: DVec3) -> (f64, f64) {
        self.vertices
            .iter()
            .map(|v| v.dot(axis))
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), d| {
                (lo.min(d), hi.max(d))
            })
    }
}

/// The f64 answer for a pair: signed distance (negative = penetration depth) and the unit
/// normal from A toward B realizing it.
#[derive(Clone, Copy, Debug)]
pub struct Reference {
    /// Signed distance: exact distance when apart, minus the minimum translation distance when
    /// overlapping.
    pub separation: f64,
    /// Unit normal from A toward B.
    pub normal: DVec3,
    /// The separation of the best axis that is not parallel to `normal` (within 1 degree):
    /// how unique the deepest axis is. `NEG_INFINITY` when there is none.
    pub runner_up: f64,
}

fn axis_separation(a: &WorldHull, b: &WorldHull, axis: DVec3) -> f64 {
    let (_, a_hi) = a.extent(axis);
    let (b_lo, _) = b.extent(axis);
    b_lo - a_hi
}

fn closest_on_segment(p: DVec3, a: DVec3, b: DVec3) -> DVec3 {
    let d = b - a;
    let t = if d.length_squared() > 0.0 {
        ((p - a).dot(d) / d.length_squared()).clamp(0.0, 1.0)
    } else {
        0.0
    };
    a + d * t
}

fn segment_segment(p0: DVec3, p1: DVec3, q0: DVec3, q1: DVec3) -> (DVec3, DVec3) {
    // Exact by enumeration: interior critical point if it exists, else end-point cases.
    let mut best = (p0, q0);
    let mut best_d = f64::INFINITY;
    let mut consider = |p: DVec3, q: DVec3| {
        let d = p.distance_squared(q);
        if d < best_d {
            best_d = d;
            best = (p, q);
        }
    };
    consider(p0, closest_on_segment(p0, q0, q1));
    consider(p1, closest_on_segment(p1, q0, q1));
    consider(closest_on_segment(q0, p0, p1), q0);
    consider(closest_on_segment(q1, p0, p1), q1);
    let (d1, d2, r) = (p1 - p0, q1 - q0, p0 - q0);
    let (a, b, c, e, f) = (d1.dot(d1), d1.dot(d2), d1.dot(r), d2.dot(d2), d2.dot(r));
    let denom = a * e - b * b;
    if denom > 1e-18 * a * e {
        let s = (b * f - c * e) / denom;
        let t = (a * f - b * c) / denom;
        if (0.0..=1.0).contains(&s) && (0.0..=1.0).contains(&t) {
            consider(p0 + d1 * s, q0 + d2 * t);
        }
    }
    best
}

/// Point-to-face distance when the point projects inside the (convex) face, else `None`.
fn point_face(hull: &WorldHull, face: &[usize], p: DVec3) -> Option<(DVec3, DVec3)> {
    let n = hull.face_normal(face);
    let v0 = hull.vertices[face[0]];
    let projected = p - n * (p - v0).dot(n);
    for i in 0..face.len() {
        let a = hull.vertices[face[i]];
        let b = hull.vertices[face[(i + 1) % face.len()]];
        if (b - a).cross(projected - a).dot(n) < 0.0 {
            return None;
        }
    }
    Some((projected, p))
}

/// Exact closest points between two separated hulls: over all edge pairs and all
/// vertex/face pairs.
fn closest_points(a: &WorldHull, b: &WorldHull) -> (DVec3, DVec3) {
    let mut best = (a.vertices[0], b.vertices[0]);
    let mut best_d = f64::INFINITY;
    let mut consider = |pa: DVec3, pb: DVec3| {
        let d = pa.distance_squared(pb);
        if d < best_d {
            best_d = d;
            best = (pa, pb);
        }
    };
    for &(a0, a1) in &a.edges {
        for &(b0, b1) in &b.edges {
            let (pa, pb) = segment_segment(a.vertices[a0], a.vertices[a1], b.vertices[b0], b.vertices[b1]);
            consider(pa, pb);
        }
    }
    for face in &b.faces {
        for &v in &a.vertices {
            if let Some((on_face, p)) = point_face(b, face, v) {
                consider(p, on_face);
            }
        }
    }
    for face in &a.faces {
        for &v in &b.vertices {
            if let Some((on_face, p)) = point_face(a, face, v) {
                consider(on_face, p);
            }
        }
    }
    best
}

/// The f64 reference for hull `a` at `pose_a` and hull `b` at `pose_b`.
pub fn reference(a: &ConvexHull, pose_a: &Pose, b: &ConvexHull, pose_b: &Pose) -> Reference {
    let (wa, wb) = (WorldHull::new(a, pose_a), WorldHull::new(b, pose_b));
    let mut axes: Vec<DVec3> = Vec::new();
    axes.extend(wa.faces.iter().map(|f| wa.face_normal(f)));
    axes.extend(wb.faces.iter().map(|f| -wb.face_normal(f)));
    for &(a0, a1) in &wa.edges {
        for &(b0, b1) in &wb.edges {
            let ea = wa.vertices[a1] - wa.vertices[a0];
            let eb = wb.vertices[b1] - wb.vertices[b0];
            let c = ea.cross(eb);
            if c.length() > 1e-9 * ea.length() * eb.length() {
                axes.push(c.normalize());
                axes.push(-c.normalize());
            }
        }
    }
    let scored: Vec<(f64, DVec3)> = axes.iter().map(|&n| (axis_separation(&wa, &wb, n), n)).collect();
    let &(best, normal) = scored.iter().max_by(|x, y| x.0.total_cmp(&y.0)).unwrap();
    let runner_up = scored
        .iter()
        .filter(|(_, n)| n.dot(normal) < (1.0f64).to_radians().cos())
        .map(|(s, _)| *s)
        .fold(f64::NEG_INFINITY, f64::max);
    if best <= 0.0 {
        return Reference {
            separation: best,
            normal,
            runner_up,
        };
    }
    let (pa, pb) = closest_points(&wa, &wb);
    let d = pb - pa;
    let distance = d.length();
    let normal = if distance > 0.0 { d / distance } else { normal };
    Reference {
        separation: distance,
        normal,
        runner_up,
    }
}

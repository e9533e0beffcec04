//! The GPU's f32 GJK (shaders/narrowphase/gjk.wgsl) against the exact distance, where rounding
//! hurts it most: a capsule's core segment nearly parallel to a hull face, closest to a hull edge
//! (the simplex a sliver, the next support point a tie between vertices of one face of A − B).
//!
//! `hullsat demo --bodies 500000` (seed 0, mixed shapes, margin 0) on an NVIDIA H200 put one such
//! pair outside the GPU = CPU contract: its separation 1.8e-4 below the CPU's, 21 τ. With fused
//! multiply-adds, f32 GJK found the origin inside a tetrahedron that was flat to rounding (its
//! new vertex in the plane of the triangle), reported an overlap, and the capsule took the
//! penetration SAT, whose face separation lies below the distance. Mesa's lavapipe rounds like
//! the CPU and never showed it, so besides running the pair on whatever adapter wgpu finds, these
//! tests run [`emulated`], gjk.wgsl transcribed to Rust in f32, under the roundings a GPU may use:
//! each multiply-add fused or not, each division and square root a few ulps off (WGSL allows 2.5
//! and 2), over that pair and a generated family of near-parallel pairs, against the gap computed
//! in f64 ([`exact_gap`]).
//!
//! The GPU tests run on whatever adapter wgpu finds; without one they print a line and return,
//! unless `HULLSAT_REQUIRE_GPU=1`.

mod support;

use glam::{DVec3, Quat, Vec3};
use hullsat::contract::{compare_batch, compare_pair, pair_tolerance};
use hullsat::{Body, Capsule, ConvexHull, CpuNarrowphase, Pose, Shape};
use rand::RngExt;
use rand_pcg::Pcg64;
use support::shapes::{Family, random_shape};
use support::{gpu_or_skip, random_rotation, seeded_rng};

/// The 17-vertex hull of the H200 pair (pair 399569, bodies 172828 and 418631 of the demo's
/// scene), its local frame.
const H200_HULL: [[f32; 3]; 17] = [
    [-0.337041, 0.07439745, -0.23123282],
    [0.024859922, 0.37717408, -0.26597434],
    [0.11993716, -0.011514639, -0.41094434],
    [-0.19456932, -0.21339104, 0.32606634],
    [-0.22551078, 0.3430445, 0.18473832],
    [-0.38244402, -0.15780154, 0.037663307],
    [-0.06666829, 0.45215678, -0.12952445],
    [0.16449113, -0.14208905, 0.37237337],
    [-0.02631083, 0.27392268, 0.35265806],
    [0.3496734, -0.23950595, 0.048464585],
    [0.18076356, -0.3197053, -0.2585387],
    [0.3540576, 0.17786558, -0.13945532],
    [-0.16903712, -0.3975388, -0.1638148],
    [0.06647595, -0.42847845, 0.18293233],
    [0.3067259, 0.057320304, 0.2777017],
    [0.2018446, 0.41374803, 0.05200717],
    [-0.1500174, -0.21155159, -0.35232636],
];

/// The H200 pair: shapes (capsule, hull) and bodies (the capsule first, as in the demo's pair).
fn h200_pair() -> (Vec<Shape>, [Body; 2]) {
    let points = H200_HULL.map(Vec3::from);
    let hull = ConvexHull::from_points(&points).expect("the demo's hull");
    assert_eq!(hull.vertices(), points, "the hull keeps its vertices in order");
    let capsule = Capsule::new(0.16110514, 0.2083093).expect("the demo's capsule");
    let bodies = [
        Body {
            shape: 0,
            pose: Pose::new(
                DVec3::new(24.66488265991211, -11.12834358215332, 23.385101318359375),
                Quat::from_xyzw(0.7620112, 0.3224844, -0.52431417, -0.20109057),
            ),
        },
        Body {
            shape: 1,
            pose: Pose::new(
                DVec3::new(24.9592227935791, -10.896162033081055, 23.22462272644043),
                Quat::from_xyzw(-0.2822436, 0.19097568, 0.04788461, 0.9389217),
            ),
        },
    ];
    (vec![Shape::Capsule(capsule), Shape::Hull(hull)], bodies)
}

/// The capsule's core segment in the hull's frame, in f64 from the f64 poses.
fn segment_in_hull_frame(capsule: &Capsule, pose: &Pose, hull_pose: &Pose) -> [DVec3; 2] {
    let (rotation, hull_rotation) = (
        pose.rotation.as_dquat().normalize(),
        hull_pose.rotation.as_dquat(),
    );
    let to_hull = hull_rotation.normalize().inverse();
    capsule
        .segment()
        .map(|p| to_hull * (rotation * p.as_dvec3() + pose.translation - hull_pose.translation))
}

/// Distance from `p` to segment `a b`, f64.
fn point_segment_distance(p: DVec3, a: DVec3, b: DVec3) -> f64 {
    let ab = b - a;
    let t = ((p - a).dot(ab) / ab.length_squared()).clamp(0.0, 1.0);
    (a + ab * t - p).length()
}

/// Signed distance from `p` to the hull's surface (its frame), f64: outside, the nearest of the
/// faces whose polygon `p` projects into and of all edges; inside, minus the nearest face plane.
fn point_hull_distance(hull: &ConvexHull, p: DVec3) -> f64 {
    let vertex = |i: u32| hull.vertices()[i as usize].as_dvec3();
    let mut nearest = f64::INFINITY;
    let mut outside = false;
    for (face, plane) in hull.planes().iter().enumerate() {
        let normal = plane.normal.as_dvec3();
        let height = normal.dot(p) - plane.offset as f64;
        outside |= height > 0.0;
        let face_loop = hull.face_loop(face);
        let edges = || {
            (0..face_loop.len()).map(|k| (vertex(face_loop[k]), vertex(face_loop[(k + 1) % face_loop.len()])))
        };
        let on_plane = p - normal * height;
        if edges().all(|(v0, v1)| (v1 - v0).cross(normal).dot(on_plane - v0) <= 0.0) {
            nearest = nearest.min(height.abs());
        }
        for (v0, v1) in edges() {
            nearest = nearest.min(point_segment_distance(p, v0, v1));
        }
    }
    if outside { nearest } else { -nearest }
}

/// The gap between segment `p0 p1` and the hull (its frame), f64; not positive where they
/// meet. Golden-section search of the distance along the segment, which is convex outside.
fn exact_gap(hull: &ConvexHull, [p0, p1]: [DVec3; 2]) -> f64 {
    let at = |t: f64| point_hull_distance(hull, p0 + (p1 - p0) * t);
    let ratio = 0.5 * (5f64.sqrt() - 1.0);
    let (mut lo, mut hi) = (0.0, 1.0);
    let (mut c, mut d) = (hi - ratio * (hi - lo), lo + ratio * (hi - lo));
    let (mut at_c, mut at_d) = (at(c), at(d));
    for _ in 0..80 {
        if at_c < at_d {
            (hi, d, at_d) = (d, c, at_c);
            c = hi - ratio * (hi - lo);
            at_c = at(c);
        } else {
            (lo, c, at_c) = (c, d, at_d);
            d = lo + ratio * (hi - lo);
            at_d = at(d);
        }
    }
    at(0.5 * (lo + hi)).min(at(0.0)).min(at(1.0))
}

/// gjk.wgsl in f32 Rust, operation for operation, under a chosen rounding; with the capsule's
/// segment in the hull's frame as geometry.wgsl's `relative_pose` and clip.wgsl's `pose_point`
/// compute it (primitives.wgsl's `collide_capsule_hull`).
mod emulated {
    use glam::{DVec3, Quat, Vec3, Vec4};

    /// Which multiply-adds a GPU's compiler fuses into one rounding.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Fusing {
        /// None, as lavapipe and the CPU.
        Never,
        /// Every `a * b + c` it may (which product of `a * b - c * d` is a free pick).
        Always,
        /// Each one by a coin toss.
        Random,
    }

    /// A GPU's rounding: fused multiply-adds, and divisions and square roots up to `ulps` ulps
    /// off correctly rounded (a seeded pick per operation).
    pub struct Rounding {
        fusing: Fusing,
        ulps: u32,
        state: u64,
    }

    impl Rounding {
        pub fn new(fusing: Fusing, ulps: u32, seed: u64) -> Self {
            let state = (seed + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            Self { fusing, ulps, state }
        }

        /// xorshift64.
        fn next(&mut self) -> u64 {
            self.state ^= self.state << 13;
            self.state ^= self.state >> 7;
            self.state ^= self.state << 17;
            self.state
        }

        fn fuses(&mut self) -> bool {
            match self.fusing {
                Fusing::Never => false,
                Fusing::Always => true,
                Fusing::Random => self.next() & 1 == 1,
            }
        }

        /// `x` moved by up to `ulps` ulps either way.
        fn off(&mut self, x: f32) -> f32 {
            if self.ulps == 0 {
                return x;
            }
            let steps = (self.next() % (2 * self.ulps as u64 + 1)) as i64 - self.ulps as i64;
            (0..steps.abs()).fold(x, |y, _| if steps > 0 { y.next_up() } else { y.next_down() })
        }

        /// `a * b + c`.
        fn mad(&mut self, a: f32, b: f32, c: f32) -> f32 {
            if self.fuses() { a.mul_add(b, c) } else { a * b + c }
        }

        /// `a * b - c * d`.
        fn dop(&mut self, a: f32, b: f32, c: f32, d: f32) -> f32 {
            if !self.fuses() {
                a * b - c * d
            } else if self.next() & 1 == 0 {
                a.mul_add(b, -(c * d))
            } else {
                (-c).mul_add(d, a * b)
            }
        }

        pub fn dot(&mut self, a: Vec3, b: Vec3) -> f32 {
            let xy = self.mad(a.y, b.y, a.x * b.x);
            self.mad(a.z, b.z, xy)
        }

        fn cross(&mut self, a: Vec3, b: Vec3) -> Vec3 {
            Vec3::new(
                self.dop(a.y, b.z, a.z, b.y),
                self.dop(a.z, b.x, a.x, b.z),
                self.dop(a.x, b.y, a.y, b.x),
            )
        }

        /// `p * s + q`, per lane.
        fn vmad(&mut self, p: Vec3, s: f32, q: Vec3) -> Vec3 {
            Vec3::new(
                self.mad(p.x, s, q.x),
                self.mad(p.y, s, q.y),
                self.mad(p.z, s, q.z),
            )
        }

        fn div(&mut self, a: f32, b: f32) -> f32 {
            self.off(a / b)
        }

        fn sqrt(&mut self, a: f32) -> f32 {
            self.off(a.sqrt())
        }

        fn length(&mut self, v: Vec3) -> f32 {
            let vv = self.dot(v, v);
            self.sqrt(vv)
        }

        /// quat.wgsl's `quat_rotate`.
        fn quat_rotate(&mut self, q: Vec4, v: Vec3) -> Vec3 {
            let u = q.truncate();
            let uu = self.dot(u, u);
            let real = self.dop(q.w, q.w, 1.0, uu);
            let along = 2.0 * self.dot(u, v);
            let turned = self.cross(u, v);
            let sum = self.vmad(v, real, u * along);
            self.vmad(turned, 2.0 * q.w, sum)
        }

        /// quat.wgsl's `quat_mul`.
        fn quat_mul(&mut self, a: Vec4, b: Vec4) -> Vec4 {
            let first = b.truncate() * a.w;
            let sum = self.vmad(a.truncate(), b.w, first);
            let xyz = sum + self.cross(a.truncate(), b.truncate());
            let d = self.dot(a.truncate(), b.truncate());
            xyz.extend(self.dop(a.w, b.w, 1.0, d))
        }
    }

    /// The core segment of a capsule (half height `half_height`) at `(t_a, q_a)` in the frame of
    /// a body at `(t_b, q_b)`, as the kernel computes it (translations split in two f32 parts).
    pub fn segment(
        r: &mut Rounding,
        half_height: f32,
        (t_a, q_a): (DVec3, Quat),
        (t_b, q_b): (DVec3, Quat),
    ) -> [Vec3; 2] {
        let ((hi_a, lo_a), (hi_b, lo_b)) = (hullsat::pose::split_f64(t_a), hullsat::pose::split_f64(t_b));
        let inverse = Vec4::new(-q_b.x, -q_b.y, -q_b.z, q_b.w);
        let q = r.quat_mul(inverse, Vec4::from(q_a));
        // normalize(q), as q * inverseSqrt(dot(q, q)).
        let xyz = r.dot(q.truncate(), q.truncate());
        let qq = r.mad(q.w, q.w, xyz);
        let length = r.sqrt(qq);
        let q = q * r.div(1.0, length);
        let t = r.quat_rotate(inverse, (hi_a - hi_b) + (lo_a - lo_b));
        [-half_height, half_height].map(|y| r.quat_rotate(q, Vec3::new(0.0, y, 0.0)) + t)
    }

    /// A support point of A − B (the points of A and B that made it only give the witness
    /// points, which the distance does not use).
    #[derive(Clone, Copy, Debug, Default)]
    struct SimplexVertex {
        w: Vec3,
    }

    /// The two shapes, in the hull's frame: a segment against the hull's vertices.
    struct Pair<'a> {
        segment: [Vec3; 2],
        hull: &'a [Vec3],
    }

    impl Pair<'_> {
        /// `support_vertex(gjk_segment, gjk_hull at identity, direction)`.
        fn support(&self, r: &mut Rounding, direction: Vec3) -> SimplexVertex {
            let [p0, p1] = self.segment;
            let a = if r.dot(p1, direction) > r.dot(p0, direction) {
                p1
            } else {
                p0
            };
            // hull_support_index on -direction (quat_rotate by the identity is exact).
            let mut best = (0, f32::MIN);
            for (i, &v) in self.hull.iter().enumerate() {
                let d = r.dot(v, -direction);
                if d > best.1 {
                    best = (i, d);
                }
            }
            SimplexVertex {
                w: a - self.hull[best.0],
            }
        }
    }

    fn closest_on_segment(r: &mut Rounding, a: Vec3, b: Vec3) -> [f32; 2] {
        let ab = b - a;
        let len2 = r.dot(ab, ab);
        if len2 <= f32::MIN_POSITIVE {
            return [1.0, 0.0];
        }
        let along = -r.dot(a, ab);
        let t = r.div(along, len2);
        if t <= 0.0 {
            [1.0, 0.0]
        } else if t >= 1.0 {
            [0.0, 1.0]
        } else {
            [1.0 - t, t]
        }
    }

    fn closest_on_triangle(r: &mut Rounding, a: Vec3, b: Vec3, c: Vec3) -> [f32; 3] {
        let (ab, ac) = (b - a, c - a);
        let (d1, d2) = (-r.dot(ab, a), -r.dot(ac, a));
        if d1 <= 0.0 && d2 <= 0.0 {
            return [1.0, 0.0, 0.0];
        }
        let (d3, d4) = (-r.dot(ab, b), -r.dot(ac, b));
        if d3 >= 0.0 && d4 <= d3 {
            return [0.0, 1.0, 0.0];
        }
        let vc = r.dop(d1, d4, d3, d2);
        if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
            let t = r.div(d1, d1 - d3);
            return [1.0 - t, t, 0.0];
        }
        let (d5, d6) = (-r.dot(ab, c), -r.dot(ac, c));
        if d6 >= 0.0 && d5 <= d6 {
            return [0.0, 0.0, 1.0];
        }
        let vb = r.dop(d5, d2, d1, d6);
        if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
            let t = r.div(d2, d2 - d6);
            return [1.0 - t, 0.0, t];
        }
        let va = r.dop(d3, d6, d5, d4);
        if va <= 0.0 && d4 - d3 >= 0.0 && d5 - d6 >= 0.0 {
            let t = r.div(d4 - d3, (d4 - d3) + (d5 - d6));
            return [0.0, 1.0 - t, t];
        }
        let sum = va + vb + vc;
        let (ab2, ac2) = (r.dot(ab, ab), r.dot(ac, ac));
        if sum <= f32::EPSILON * ab2 * ac2 {
            let p = [a, b, c];
            let mut best = ([1.0, 0.0, 0.0], f32::MAX);
            for (i, j) in [(0, 1), (0, 2), (1, 2)] {
                let l = closest_on_segment(r, p[i], p[j]);
                let closest = r.vmad(p[j], l[1], p[i] * l[0]);
                let dist2 = r.dot(closest, closest);
                if dist2 < best.1 {
                    let mut weights = [0.0; 3];
                    (weights[i], weights[j]) = (l[0], l[1]);
                    best = (weights, dist2);
                }
            }
            return best.0;
        }
        let (v, w) = (r.div(vb, sum), r.div(vc, sum));
        [1.0 - v - w, v, w]
    }

    /// `None` when the origin is inside.
    fn closest_on_tetrahedron(r: &mut Rounding, p: [Vec3; 4]) -> Option<[f32; 4]> {
        let mut best: Option<([f32; 4], f32)> = None;
        for [i, j, k, opposite] in [[0, 1, 2, 3], [0, 3, 1, 2], [0, 2, 3, 1], [1, 3, 2, 0]] {
            let normal = r.cross(p[j] - p[i], p[k] - p[i]);
            let origin_side = -r.dot(normal, p[i]);
            let opposite_side = r.dot(normal, p[opposite] - p[i]);
            if origin_side * opposite_side > 0.0 {
                continue;
            }
            let l = closest_on_triangle(r, p[i], p[j], p[k]);
            let closest = p[i] * l[0];
            let closest = r.vmad(p[j], l[1], closest);
            let closest = r.vmad(p[k], l[2], closest);
            let dist2 = r.dot(closest, closest);
            if best.is_none_or(|(_, d)| dist2 < d) {
                let mut weights = [0.0; 4];
                (weights[i], weights[j], weights[k]) = (l[0], l[1], l[2]);
                best = Some((weights, dist2));
            }
        }
        best.map(|(weights, _)| weights)
    }

    #[derive(Clone, Copy, Default)]
    struct Simplex {
        vertices: [SimplexVertex; 4],
        weights: [f32; 4],
        count: usize,
    }

    /// `reduce_to_closest`: `None` when the origin is inside the tetrahedron.
    fn reduce_to_closest(r: &mut Rounding, s: &mut Simplex) -> Option<Vec3> {
        let p = s.vertices.map(|v| v.w);
        let weights = match s.count {
            2 => {
                let [a, b] = closest_on_segment(r, p[0], p[1]);
                [a, b, 0.0, 0.0]
            }
            3 => {
                let [a, b, c] = closest_on_triangle(r, p[0], p[1], p[2]);
                [a, b, c, 0.0]
            }
            4 => closest_on_tetrahedron(r, p)?,
            _ => [1.0, 0.0, 0.0, 0.0],
        };
        let (mut kept, mut total) = (0, 0.0);
        for (i, &weight) in weights.iter().enumerate().take(s.count) {
            if weight > 0.0 {
                s.vertices[kept] = s.vertices[i];
                s.weights[kept] = weight;
                total += weight;
                kept += 1;
            }
        }
        s.count = kept;
        let mut closest = Vec3::ZERO;
        for i in 0..kept {
            s.weights[i] = r.div(s.weights[i], total);
            closest = r.vmad(s.vertices[i].w, s.weights[i], closest);
        }
        Some(closest)
    }

    /// How the kernel decides a tetrahedron's overlap verdict.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Kernel {
        /// As now: only while no support gap has proven the shapes apart (step 3).
        Guarded,
        /// As before the H200 report: always.
        Unguarded,
    }

    /// `gjk_closest_points(gjk_segment(segment), gjk_hull(hull at identity))`'s distance, or
    /// `None` where it reports an overlap.
    pub fn distance(r: &mut Rounding, kernel: Kernel, segment: [Vec3; 2], hull: &[Vec3]) -> Option<f32> {
        let pair = Pair { segment, hull };
        // 1. One support point.
        let mut simplex = Simplex::default();
        simplex.vertices[0] = pair.support(r, Vec3::X);
        (simplex.weights[0], simplex.count) = (1.0, 1);
        let mut v = simplex.vertices[0].w;
        let mut scale = r.length(v);
        let mut lower = 0.0f32;
        for _ in 0..hullsat::constants::GJK_MAX_ITERATIONS {
            // 3. Overlap.
            let vv = r.dot(v, v);
            let overlap = hullsat::constants::GJK_OVERLAP_TOLERANCE as f32 * scale;
            if vv <= overlap * overlap {
                return None;
            }
            // 4. Converged, degenerate, or a new vertex.
            let w = pair.support(r, -v);
            scale = scale.max(r.length(w.w));
            let vw = r.dot(v, w.w);
            let length = r.sqrt(vv);
            lower = lower.max(r.div(vw, length));
            if vv - vw <= hullsat::constants::GJK_RELATIVE_TOLERANCE as f32 * vv {
                break;
            }
            if simplex.vertices[..simplex.count].iter().any(|s| s.w == w.w) {
                break;
            }
            // (The kernel keeps the previous simplex where it stops below: only its witness
            // points need it.)
            simplex.vertices[simplex.count] = w;
            simplex.weights[simplex.count] = 0.0;
            simplex.count += 1;
            // 2. Closest point of the grown simplex.
            let Some(closer) = reduce_to_closest(r, &mut simplex) else {
                if kernel == Kernel::Guarded && lower > overlap {
                    break;
                }
                return None;
            };
            if r.dot(closer, closer) > vv {
                break;
            }
            v = closer;
        }
        Some(r.length(v))
    }

    /// `distance` for a capsule (half height `half_height`) at `capsule` against `hull` at
    /// `hull_pose`, as primitives.wgsl computes both.
    pub fn capsule_hull_distance(
        r: &mut Rounding,
        kernel: Kernel,
        half_height: f32,
        capsule: (DVec3, Quat),
        hull: &[Vec3],
        hull_pose: (DVec3, Quat),
    ) -> Option<f32> {
        let segment = segment(r, half_height, capsule, hull_pose);
        distance(r, kernel, segment, hull)
    }
}

use emulated::{Fusing, Kernel, Rounding, capsule_hull_distance};

/// The roundings each pair of the family is emulated under: (fusing, ulps, seeds).
const ROUNDINGS: [(Fusing, u32, u64); 4] = [
    (Fusing::Never, 0, 1),
    (Fusing::Always, 0, 2),
    (Fusing::Always, 2, 2),
    (Fusing::Random, 2, 4),
];

/// The roundings the H200 pair is emulated under, more seeds of each.
const H200_ROUNDINGS: [(Fusing, u32, u64); 4] = [
    (Fusing::Never, 0, 1),
    (Fusing::Always, 0, 32),
    (Fusing::Always, 2, 32),
    (Fusing::Random, 2, 64),
];

/// Emulated distances of a capsule-hull pair under every rounding of `roundings` (`None`: an
/// overlap), with the rounding that gave each.
fn emulated_distances(
    roundings: &[(Fusing, u32, u64)],
    kernel: Kernel,
    capsule: &Capsule,
    capsule_pose: &Pose,
    hull: &ConvexHull,
    hull_pose: &Pose,
) -> Vec<((Fusing, u32, u64), Option<f32>)> {
    let pose = |p: &Pose| (p.translation, p.rotation);
    roundings
        .iter()
        .flat_map(|&(fusing, ulps, seeds)| (0..seeds).map(move |seed| (fusing, ulps, seed)))
        .map(|(fusing, ulps, seed)| {
            let mut rounding = Rounding::new(fusing, ulps, seed);
            let distance = capsule_hull_distance(
                &mut rounding,
                kernel,
                capsule.half_height,
                pose(capsule_pose),
                hull.vertices(),
                pose(hull_pose),
            );
            ((fusing, ulps, seed), distance)
        })
        .collect()
}

#[test]
fn h200_pair_exact_gap_is_the_cpus() {
    let (shapes, bodies) = h200_pair();
    let (Shape::Capsule(capsule), Shape::Hull(hull)) = (&shapes[0], &shapes[1]) else {
        unreachable!()
    };
    let gap = exact_gap(
        hull,
        segment_in_hull_frame(capsule, &bodies[0].pose, &bodies[1].pose),
    );
    // examples/scratch_pair.rs's f64 gap, from rotations not normalized: 2e-8 apart.
    assert!((gap - 0.033700640).abs() < 1e-7, "{gap}");
    let tolerance = pair_tolerance(&shapes, &bodies, [0, 1]);
    let cpu = CpuNarrowphase::new(shapes.clone())
        .collide(&bodies, &[[0, 1]], 0.0)
        .unwrap()[0]
        .expect("touching");
    let truth = (gap - capsule.radius as f64) as f32;
    assert!(
        (cpu.separation - truth).abs() <= 0.01 * tolerance,
        "{cpu:?}, exact {truth}"
    );
}

#[test]
fn emulated_gpu_rounding_of_the_h200_pair_measures_its_gap() {
    let (shapes, bodies) = h200_pair();
    let (Shape::Capsule(capsule), Shape::Hull(hull)) = (&shapes[0], &shapes[1]) else {
        unreachable!()
    };
    let gap = exact_gap(
        hull,
        segment_in_hull_frame(capsule, &bodies[0].pose, &bodies[1].pose),
    );
    let tolerance = pair_tolerance(&shapes, &bodies, [0, 1]) as f64;
    let (capsule_pose, hull_pose) = (&bodies[0].pose, &bodies[1].pose);
    for (rounding, distance) in emulated_distances(
        &H200_ROUNDINGS,
        Kernel::Guarded,
        capsule,
        capsule_pose,
        hull,
        hull_pose,
    ) {
        let distance = distance.unwrap_or_else(|| panic!("{rounding:?}: overlap reported, gap {gap}"));
        assert!(
            (distance as f64 - gap).abs() <= tolerance,
            "{rounding:?}: distance {distance}, exact {gap}, tau {tolerance}"
        );
    }
    // The kernel as it was reports an overlap under fused multiply-adds: the H200's failure.
    let before = emulated_distances(
        &H200_ROUNDINGS,
        Kernel::Unguarded,
        capsule,
        capsule_pose,
        hull,
        hull_pose,
    );
    assert!(before.iter().any(|(_, d)| d.is_none()), "{before:?}");
    assert!(
        before
            .iter()
            .all(|((fusing, ..), d)| d.is_some() || *fusing != Fusing::Never)
    );
}

/// A family of capsules lying nearly parallel over a hull face, across one of its edges (their
/// closest features mostly the segment's inside against that edge), at a random pose far from
/// the origin: shapes (the hulls, then one capsule per pair), bodies and pairs (capsule, hull),
/// and each pair's exact gap between the core segment and the hull.
struct NearParallelFamily {
    shapes: Vec<Shape>,
    bodies: Vec<Body>,
    pairs: Vec<[u32; 2]>,
    gaps: Vec<f64>,
}

/// Pairs in the family.
const FAMILY_PAIRS: usize = 400;

fn near_parallel_family(rng: &mut Pcg64) -> NearParallelFamily {
    let mut shapes: Vec<Shape> = (0..6).map(|_| random_shape(rng, Family::Hull)).collect();
    shapes.push(h200_pair().0.swap_remove(1));
    let hull_count = shapes.len();
    let (mut bodies, mut pairs, mut gaps) = (Vec::new(), Vec::new(), Vec::new());
    while pairs.len() < FAMILY_PAIRS {
        let hull_shape = rng.random_range(0..hull_count);
        let hull = shapes[hull_shape].as_hull().expect("a hull").clone();
        let size = hull.radius();
        // A face, one of its edges from v0 to v1, and the edge's outward direction in the face.
        let face = rng.random_range(0..hull.planes().len());
        let face_loop = hull.face_loop(face);
        let k = rng.random_range(0..face_loop.len());
        let v0 = hull.vertices()[face_loop[k] as usize];
        let v1 = hull.vertices()[face_loop[(k + 1) % face_loop.len()] as usize];
        let normal = hull.planes()[face].normal;
        let along = (v1 - v0).normalize();
        let out = along.cross(normal).normalize();
        // The segment crosses the edge at a height above the face, turned in the face's plane
        // and tilted toward it (mostly) by a small angle.
        let turn: f32 = rng.random_range(-0.6..0.6);
        let tilt = rng.random_range(1e-4f32..0.05) * if rng.random_range(0..4) == 0 { -1.0 } else { 1.0 };
        let direction =
            ((out * turn.cos() + along * turn.sin()) * tilt.cos() - normal * tilt.sin()).normalize();
        let crossing =
            v0 + (v1 - v0) * rng.random_range(0.2..0.8) + normal * size * rng.random_range(0.005..0.15);
        let length = size * rng.random_range(0.3..1.2);
        let before = length * rng.random_range(0.05..0.95);
        let centre = crossing + direction * (0.5 * length - before);
        let sign = if rng.random_range(0..2) == 0 { 1.0 } else { -1.0 };
        let local = Pose::new(centre, Quat::from_rotation_arc(Vec3::Y, direction * sign));
        let hull_pose = Pose::new(
            DVec3::new(
                rng.random_range(-30.0..30.0),
                rng.random_range(-30.0..30.0),
                rng.random_range(-30.0..30.0),
            ),
            random_rotation(rng),
        );
        let capsule_pose = Pose::new(
            hull_pose.transform_dpoint(local.translation),
            (hull_pose.rotation * local.rotation).normalize(),
        );
        let capsule = Capsule::new(0.5 * length, 0.1).expect("sizes positive");
        let gap = exact_gap(&hull, segment_in_hull_frame(&capsule, &capsule_pose, &hull_pose));
        if gap <= 0.0 {
            continue;
        }
        // Sunk into the hull by up to its gap again, so that every pair has a manifold at margin 0.
        let radius = (gap * rng.random_range(1.0..2.0)) as f32 + 0.01 * size;
        let capsule = Capsule::new(0.5 * length, radius).expect("sizes positive");
        shapes.push(Shape::Capsule(capsule));
        let first = bodies.len() as u32;
        bodies.push(Body {
            shape: (shapes.len() - 1) as u32,
            pose: capsule_pose,
        });
        bodies.push(Body {
            shape: hull_shape as u32,
            pose: hull_pose,
        });
        pairs.push([first, first + 1]);
        gaps.push(gap);
    }
    NearParallelFamily {
        shapes,
        bodies,
        pairs,
        gaps,
    }
}

#[test]
fn emulated_gpu_rounding_of_near_parallel_capsules_measures_their_gaps() {
    let family = near_parallel_family(&mut seeded_rng(0x0617_a7e1));
    let mut overlaps_before = 0;
    for (&[ia, ib], &gap) in family.pairs.iter().zip(&family.gaps) {
        let (capsule_body, hull_body) = (&family.bodies[ia as usize], &family.bodies[ib as usize]);
        let (Shape::Capsule(capsule), Shape::Hull(hull)) = (
            &family.shapes[capsule_body.shape as usize],
            &family.shapes[hull_body.shape as usize],
        ) else {
            unreachable!()
        };
        let tolerance = pair_tolerance(&family.shapes, &family.bodies, [ia, ib]) as f64;
        let (capsule_pose, hull_pose) = (&capsule_body.pose, &hull_body.pose);
        for (rounding, distance) in emulated_distances(
            &ROUNDINGS,
            Kernel::Guarded,
            capsule,
            capsule_pose,
            hull,
            hull_pose,
        ) {
            let distance =
                distance.unwrap_or_else(|| panic!("pair {ia}: {rounding:?}: overlap reported, gap {gap}"));
            assert!(
                (distance as f64 - gap).abs() <= tolerance,
                "pair {ia}: {rounding:?}: distance {distance}, exact {gap}, tau {tolerance}"
            );
        }
        let before = emulated_distances(
            &ROUNDINGS,
            Kernel::Unguarded,
            capsule,
            capsule_pose,
            hull,
            hull_pose,
        );
        overlaps_before += before.iter().filter(|(_, d)| d.is_none()).count();
    }
    // The family exercises the failure: the kernel as it was reported overlaps.
    eprintln!("{overlaps_before} overlaps reported by the unguarded kernel");
    assert!(overlaps_before > 0);
}

#[test]
fn gpu_h200_pair_is_within_the_contract() {
    let (shapes, bodies) = h200_pair();
    let Some(mut gpu) = gpu_or_skip(&shapes) else {
        return;
    };
    let g = gpu.collide(&bodies, &[[0, 1]], 0.0).expect("GPU collide runs")[0];
    let c = CpuNarrowphase::new(shapes.clone())
        .collide(&bodies, &[[0, 1]], 0.0)
        .unwrap()[0];
    compare_pair(&shapes, &bodies, [0, 1], 0.0, g.as_ref(), c.as_ref()).expect("the GPU = CPU contract");
    let (Shape::Capsule(capsule), Shape::Hull(hull)) = (&shapes[0], &shapes[1]) else {
        unreachable!()
    };
    let gap = exact_gap(
        hull,
        segment_in_hull_frame(capsule, &bodies[0].pose, &bodies[1].pose),
    );
    let separation = g.expect("touching").separation as f64;
    let tolerance = pair_tolerance(&shapes, &bodies, [0, 1]) as f64;
    assert!(
        (separation - (gap - capsule.radius as f64)).abs() <= tolerance,
        "GPU separation {separation}, exact {}",
        gap - capsule.radius as f64
    );
}

#[test]
fn gpu_near_parallel_capsules_measure_their_gaps() {
    let family = near_parallel_family(&mut seeded_rng(0x0617_a7e2));
    let Some(mut gpu) = gpu_or_skip(&family.shapes) else {
        return;
    };
    let (shapes, bodies, pairs) = (&family.shapes, &family.bodies, &family.pairs);
    let on_gpu = gpu.collide(bodies, pairs, 0.0).expect("GPU collide runs");
    assert_eq!(
        gpu.timings().host_pairs,
        0,
        "every capsule pair finishes on the GPU"
    );
    let on_cpu = CpuNarrowphase::new(shapes.clone())
        .collide(bodies, pairs, 0.0)
        .unwrap();
    let tally = compare_batch(shapes, bodies, pairs, 0.0, &on_gpu, &on_cpu).unwrap_or_else(|e| panic!("{e}"));
    eprintln!("{tally:?}");
    for (i, (&pair, &gap)) in pairs.iter().zip(&family.gaps).enumerate() {
        let Shape::Capsule(capsule) = &shapes[bodies[pair[0] as usize].shape as usize] else {
            unreachable!()
        };
        let exact = gap - capsule.radius as f64;
        let separation = on_gpu[i]
            .unwrap_or_else(|| panic!("pair {i}: no GPU manifold"))
            .separation as f64;
        let tolerance = pair_tolerance(shapes, bodies, pair) as f64;
        assert!(
            (separation - exact).abs() <= tolerance,
            "pair {i}: GPU separation {separation}, exact {exact}, tau {tolerance}"
        );
    }
}

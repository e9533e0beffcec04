//! The GPU path against the CPU reference on the shape families of the CPU differential test
//! (random hulls of 4 to 64 points, boxes, thin slabs, needles), posed to penetrate, touch or
//! stay apart: `GpuNarrowphase::sat` against `query::sat::query_hulls` (`query_boxes` for two
//! boxes) and
//! `GpuNarrowphase::collide` against `CpuNarrowphase::collide`, on bodies that share a library
//! of shapes as real scenes do. Also the analytic box cases of tests/hull_contacts.rs through
//! the GPU, a mixed scene whose sphere, capsule and half-space pairs run primitives.wgsl, the
//! timings, buffer growth and the empty batch.
//!
//! Runs on whatever adapter wgpu finds (Mesa lavapipe in CI); without one the tests print a line
//! and return, unless `HULLSAT_REQUIRE_GPU=1`.

mod support;

use std::f32::consts::{FRAC_PI_4, SQRT_2};
use std::time::Duration;

use glam::{Quat, Vec3};
use hullsat::gpu::Clipping;
use hullsat::query::sat::{SatResult, query_hulls};
use hullsat::{
    Body, Capsule, ConvexHull, CpuNarrowphase, FeatureId, GpuNarrowphase, HalfSpace, Isometry, Manifold,
    Pose, Shape, Sphere,
};
use rand::RngExt;
use rand_pcg::Pcg64;
use support::analytic::{TOL, cases, global_pose, slab, unit_box};
use support::gpu::{Comparison, NORMAL_TOLERANCE, SEPARATION_TOLERANCE, compare_sat, reference_sat};
use support::shapes::{FAMILIES, random_direction, random_rotation, random_shape};
use support::{assert_near, assert_vec_near, gpu_one_pair, gpu_or_skip, seeded_rng};

/// Shapes in the library the random bodies draw from.
const LIBRARY: usize = 64;

/// Random pairs per margin (two margins: 20,000 pairs in all).
const PAIRS_PER_MARGIN: usize = 10_000;

/// Speculative margins tested, in length units (the shapes are 0.5 to 2 units across).
const MARGINS: [f32; 2] = [0.0, 0.05];

/// A library of `LIBRARY` random shapes, the families in turn.
fn shape_library(rng: &mut Pcg64) -> Vec<Shape> {
    (0..LIBRARY)
        .map(|i| random_shape(rng, FAMILIES[i % FAMILIES.len()]))
        .collect()
}

/// How a random pair was placed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Placement {
    /// B at a random direction and distance from A (penetrating or apart).
    Random,
    /// As `Random`, then B moved along the CPU's SAT normal by the separation: touching.
    Touching,
    /// Identity rotations and an axis-aligned offset: exact face-face ties.
    Aligned,
    /// A random face of B resting on a random face of A (B turned about their common normal,
    /// tilted by 1e-5 rad), moved to touch and then nudged by up to 1e-3 × scale: the edges of
    /// the two faces have Gauss-map arcs that (nearly) share end points, so the crossing test is
    /// decided by rounding.
    Resting,
}

/// Bodies and pairs for `count` random pairs of `shapes` (all hulls or boxes): A anywhere in a
/// 20-unit cube, B at a distance of 0 to 1.1 × the sum of the bounding radii. One pair in five
/// is then moved to touch, one in ten is axis-aligned, one in ten resting.
/// Returns each pair's placement too.
fn random_pairs(
    rng: &mut Pcg64,
    shapes: &[Shape],
    count: usize,
) -> (Vec<Body>, Vec<[u32; 2]>, Vec<Placement>) {
    let mut bodies = Vec::with_capacity(2 * count);
    let mut pairs = Vec::with_capacity(count);
    let mut placements = Vec::with_capacity(count);
    for i in 0..count {
        let (sa, sb) = (
            rng.random_range(0..shapes.len()),
            rng.random_range(0..shapes.len()),
        );
        let radii = shapes[sa].bounding_radius() + shapes[sb].bounding_radius();
        let position = Vec3::new(
            rng.random_range(-10.0..10.0),
            rng.random_range(-10.0..10.0),
            rng.random_range(-10.0..10.0),
        );
        let distance = radii * rng.random_range(0.0f32..1.1);
        let placement = match i % 10 {
            0 => Placement::Aligned,
            5 => Placement::Resting,
            1 | 6 => Placement::Touching,
            _ => Placement::Random,
        };
        let axis = [Vec3::X, Vec3::Y, Vec3::Z][rng.random_range(0..3)];
        let (rotation_a, rotation_b, direction) = match placement {
            Placement::Aligned => (Quat::IDENTITY, Quat::IDENTITY, axis),
            Placement::Resting => {
                let (a, b) = (shapes[sa].as_hull().unwrap(), shapes[sb].as_hull().unwrap());
                let face_a = a.planes()[rng.random_range(0..a.planes().len())].normal;
                let face_b = b.planes()[rng.random_range(0..b.planes().len())].normal;
                let turn = Quat::from_axis_angle(axis, rng.random_range(0.0..std::f32::consts::TAU));
                let tilt = Quat::from_axis_angle(random_direction(rng), 1e-5);
                (
                    Quat::from_rotation_arc(face_a, axis),
                    (tilt * turn * Quat::from_rotation_arc(face_b, -axis)).normalize(),
                    axis,
                )
            }
            _ => (random_rotation(rng), random_rotation(rng), random_direction(rng)),
        };
        let pose_a = Pose::new(position, rotation_a);
        let mut pose_b = Pose::new(position + direction * distance, rotation_b);
        if matches!(placement, Placement::Touching | Placement::Resting) {
            let (a, b) = (shapes[sa].as_hull().unwrap(), shapes[sb].as_hull().unwrap());
            let sat = query_hulls(a, b, &pose_a.relative_to_self(&pose_b), f32::INFINITY);
            let nudge = if placement == Placement::Resting {
                rng.random_range(-1e-3..1e-3) * radii
            } else {
                0.0
            };
            pose_b.translation -= (pose_a.transform_vector(sat.normal) * (sat.separation - nudge)).as_dvec3();
        }
        pairs.push([bodies.len() as u32, bodies.len() as u32 + 1]);
        bodies.push(Body {
            shape: sa as u32,
            pose: pose_a,
        });
        bodies.push(Body {
            shape: sb as u32,
            pose: pose_b,
        });
        placements.push(placement);
    }
    (bodies, pairs, placements)
}

/// How the GPU and CPU manifolds of a batch compared.
#[derive(Debug, Default)]
struct ManifoldComparison {
    /// Pairs with a manifold on both sides.
    both: usize,
    /// Pairs with a manifold on neither side.
    neither: usize,
    /// Pairs with a manifold on one side only, all within the tolerance of the margin.
    near_margin_only_one: usize,
    /// Pairs whose points were compared one by one (same SAT axis on both sides).
    points_compared: usize,
    /// Of those, pairs in the margin band (separation within the tolerance of the margin) whose
    /// contact differs: a point at the margin kept on one side and dropped on the other, which
    /// also changes the fallback taken (GPU clipping rounds differently from the CPU).
    margin_band: usize,
    /// Of those, pairs whose face clip keeps nothing where the deepest axis differs from the
    /// preferred one on one side only (an edge pair parallel to the face axis, found or missed
    /// by a Gauss-map crossing that rounding decides): only that side can retry on it, the other
    /// takes the deepest-vertex fallback. Both are right answers at that tie.
    retry_ties: usize,
    /// Of those, closest-point contacts (kind OTHER: vertex-vertex or vertex-edge, GJK on both
    /// sides) whose ids name other support vertices that tie within the tolerance along the
    /// normal (an edge's two ends): rounding of the direction picks one.
    support_ties: usize,
    /// Contact points compared.
    points: usize,
    /// Largest position or depth difference of a compared point, as a fraction of the scale.
    largest_point_difference: f32,
}

/// Checks a GPU manifold against the CPU's for one pair of hulls or boxes: the same `Some` / `None`
/// unless within the tolerance of the margin; separations within [`SEPARATION_TOLERANCE`] ×
/// scale; and, when both SATs chose the same axis, the same normal, the same points (matched
/// by feature id) at positions and depths within the same tolerance (lavapipe: within 3e-7 ×
/// scale). `gpu_sat` is the GPU's SAT for the pair.
#[allow(clippy::too_many_arguments)]
fn compare_manifolds(
    shapes: (&Shape, &Shape),
    pose_a: &Pose,
    b_in_a: &Isometry,
    margin: f32,
    gpu_sat: &SatResult,
    gpu: &Option<Manifold>,
    cpu: &Option<Manifold>,
    stats: &mut ManifoldComparison,
    context: &str,
) {
    let (a, b) = (
        shapes.0.as_hull().expect("hull or box"),
        shapes.1.as_hull().expect("hull or box"),
    );
    let scale = a.radius() + b.radius();
    let eps = SEPARATION_TOLERANCE * scale;
    let (gpu, cpu) = match (gpu, cpu) {
        (None, None) => {
            stats.neither += 1;
            return;
        }
        (Some(g), Some(c)) => (g, c),
        (Some(m), None) | (None, Some(m)) => {
            let cpu_sat = reference_sat(shapes.0, shapes.1, b_in_a, margin);
            assert!(
                (cpu_sat.separation - margin).abs() <= eps || (gpu_sat.separation - margin).abs() <= eps,
                "{context}: only one side has a manifold ({m:?}), not near the margin\n gpu sat {gpu_sat:?}\n cpu sat {cpu_sat:?}"
            );
            stats.near_margin_only_one += 1;
            return;
        }
    };
    stats.both += 1;
    assert!(
        (gpu.separation - cpu.separation).abs() <= eps,
        "{context}: separations differ\n gpu {gpu:?}\n cpu {cpu:?}"
    );
    let cpu_sat = reference_sat(shapes.0, shapes.1, b_in_a, margin);
    if gpu_sat.axis != cpu_sat.axis {
        return;
    }
    stats.points_compared += 1;
    let same_contact = gpu.normal.distance(cpu.normal) <= NORMAL_TOLERANCE
        && gpu.point_count() == cpu.point_count()
        && cpu.points().iter().all(|c| {
            gpu.points().iter().any(|g| {
                g.id == c.id
                    && g.position.distance(c.position) <= f64::from(eps)
                    && (g.depth - c.depth).abs() <= eps
            })
        });
    if !same_contact && (gpu.separation - margin).abs() <= eps {
        stats.margin_band += 1;
        return;
    }
    let retry_possible = |sat: &SatResult| sat.axis_separation < sat.separation;
    if !same_contact && retry_possible(gpu_sat) != retry_possible(&cpu_sat) {
        stats.retry_ties += 1;
        return;
    }
    assert!(
        gpu.normal.distance(cpu.normal) <= NORMAL_TOLERANCE,
        "{context}: normals differ\n gpu {gpu:?}\n cpu {cpu:?}"
    );
    if !same_contact && support_tie(a, b, pose_a, b_in_a, gpu, cpu, eps) {
        stats.support_ties += 1;
        return;
    }
    assert_eq!(
        gpu.point_count(),
        cpu.point_count(),
        "{context}: point counts differ\n gpu {gpu:?}\n cpu {cpu:?}"
    );
    for c in cpu.points() {
        let g = gpu.points().iter().find(|g| g.id == c.id).unwrap_or_else(|| {
            panic!(
                "{context}: no GPU point with id {:?}\n gpu {gpu:?}\n cpu {cpu:?}",
                c.id
            )
        });
        assert!(
            g.position.as_vec3().distance(c.position.as_vec3()) <= eps && (g.depth - c.depth).abs() <= eps,
            "{context}: point {:?} differs\n gpu {g:?}\n cpu {c:?}",
            c.id
        );
        stats.points += 1;
        let difference = g
            .position
            .as_vec3()
            .distance(c.position.as_vec3())
            .max((g.depth - c.depth).abs())
            / scale;
        stats.largest_point_difference = stats.largest_point_difference.max(difference);
    }
}

/// True when both manifolds are one closest-point contact (kind OTHER) at the same position
/// and the GPU's ids name vertices that support A along the CPU's normal, and B against it,
/// as far as the CPU's within `eps` and the two normals' difference allow (a tie that rounding
/// of the direction decides).
fn support_tie(
    a: &ConvexHull,
    b: &ConvexHull,
    pose_a: &Pose,
    b_in_a: &Isometry,
    gpu: &Manifold,
    cpu: &Manifold,
    eps: f32,
) -> bool {
    let ([g], [c]) = (gpu.points(), cpu.points()) else {
        return false;
    };
    if g.id.kind() != FeatureId::OTHER
        || c.id.kind() != FeatureId::OTHER
        || g.position.as_vec3().distance(c.position.as_vec3()) > eps
    {
        return false;
    }
    let normal = pose_a.rotation.inverse() * cpu.normal;
    let normal_b = b_in_a.rotation.inverse() * -normal;
    // The GPU's vertex supports along the GPU's normal; along the CPU's it may fall short by
    // twice the normals' difference times the vertex's distance from the frame's origin.
    let turn = gpu.normal.distance(cpu.normal);
    let ties = |hull: &ConvexHull, direction: Vec3, gpu_vertex: u32, cpu_vertex: u32| {
        let reach = 2.0 * turn * (hull.centroid().length() + hull.radius());
        let vertices = hull.vertices();
        let support = |v: u32| {
            vertices
                .get(v as usize)
                .map_or(f32::NEG_INFINITY, |p| p.dot(direction))
        };
        (support(gpu_vertex) - support(cpu_vertex)).abs() <= eps + reach
    };
    ties(a, normal, g.id.high(), c.id.high()) && ties(b, normal_b, g.id.low(), c.id.low())
}

/// SAT and manifolds of a batch of hull pairs through the GPU and the CPU, compared pair by
/// pair.
fn check_hull_batch(
    gpu: &mut GpuNarrowphase,
    cpu: &CpuNarrowphase,
    bodies: &[Body],
    pairs: &[[u32; 2]],
    margin: f32,
) -> (Comparison, ManifoldComparison) {
    let shapes = cpu.shapes();
    let sats = gpu.sat(bodies, pairs, margin).expect("GPU SAT runs");
    let gpu_manifolds = gpu.collide(bodies, pairs, margin).expect("GPU collide runs");
    let cpu_manifolds = cpu.collide(bodies, pairs, margin).expect("CPU collide runs");
    assert_eq!(sats.len(), pairs.len());
    assert_eq!(gpu_manifolds.len(), pairs.len());
    let mut sat_stats = Comparison::default();
    let mut manifold_stats = ManifoldComparison::default();
    for (i, &[ia, ib]) in pairs.iter().enumerate() {
        let (body_a, body_b) = (bodies[ia as usize], bodies[ib as usize]);
        let (a, b) = (&shapes[body_a.shape as usize], &shapes[body_b.shape as usize]);
        let b_in_a = body_a.pose.relative_to_self(&body_b.pose);
        let sat = sats[i].as_ref().expect("hull pairs run on the GPU");
        let context = format!("margin {margin}, pairs[{i}]");
        compare_sat(a, b, &b_in_a, margin, sat, &mut sat_stats, &context);
        compare_manifolds(
            (a, b),
            &body_a.pose,
            &b_in_a,
            margin,
            sat,
            &gpu_manifolds[i],
            &cpu_manifolds[i],
            &mut manifold_stats,
            &context,
        );
    }
    (sat_stats, manifold_stats)
}

#[test]
fn gpu_equals_cpu_on_random_pairs_of_every_family() {
    let mut rng = seeded_rng(0x9e0e9a1);
    let shapes = shape_library(&mut rng);
    let Some(mut gpu) = gpu_or_skip(&shapes) else {
        return;
    };
    eprintln!("adapter: {:?}", gpu.adapter_info());
    let cpu = CpuNarrowphase::new(shapes.clone());
    for (margin, clipping) in MARGINS
        .into_iter()
        .flat_map(|m| [(m, Clipping::Gpu), (m, Clipping::Cpu)])
    {
        gpu.set_clipping(clipping)
            .expect("the shared device runs the clip kernel");
        let (bodies, pairs, placements) = random_pairs(&mut rng, &shapes, PAIRS_PER_MARGIN);
        let start = std::time::Instant::now();
        let (sat, manifolds) = check_hull_batch(&mut gpu, &cpu, &bodies, &pairs, margin);
        let host_pairs = gpu.timings().host_pairs;
        eprintln!(
            "margin {margin}, {clipping:?} clipping: {:?}, {host_pairs} pairs left to the host\n {sat:?}\n {manifolds:?}",
            start.elapsed()
        );
        if clipping == Clipping::Gpu && margin == 0.0 {
            // At margin 0 only big faces and driver-cut pairs go to the host: the retry on the
            // deepest axis and the deepest-vertex fallback run on the GPU (lavapipe: none left,
            // 171 when empty clips went to the host).
            assert!(
                host_pairs <= manifolds.both / 100,
                "{host_pairs} host pairs: {manifolds:?}"
            );
        }
        let touching = placements.iter().filter(|&&p| p == Placement::Touching).count();
        // The comparison must be about something: both verdicts, every kind of axis, touching
        // pairs, few exceptions.
        assert!(touching >= PAIRS_PER_MARGIN / 5);
        assert!(
            sat.separated > sat.pairs / 10 && sat.separated < sat.pairs * 9 / 10,
            "{sat:?}"
        );
        assert!(sat.contact_axes.iter().all(|&n| n > sat.pairs / 100), "{sat:?}");
        if margin == 0.0 {
            assert!(
                sat.near_margin >= touching / 2,
                "touching pairs sit at the margin: {sat:?}"
            );
        }
        assert!(sat.other_axis < sat.pairs / 100, "{sat:?}");
        assert!(
            manifolds.both > sat.pairs / 4 && manifolds.points_compared > manifolds.both * 9 / 10,
            "{manifolds:?}"
        );
        assert!(
            manifolds.margin_band <= manifolds.points_compared / 50
                && manifolds.retry_ties <= manifolds.points_compared / 500
                && manifolds.support_ties <= manifolds.points_compared / 50,
            "margin-band differences are rare: {manifolds:?}"
        );
    }
}

/// A mixed scene: hulls from the library, spheres, capsules and a ground half-space, bodies
/// scattered over a small region so many pairs touch. Every body is paired with the ground and
/// with its neighbours within reach.
fn mixed_scene(rng: &mut Pcg64) -> (Vec<Shape>, Vec<Body>, Vec<[u32; 2]>) {
    let mut shapes = shape_library(rng);
    shapes.truncate(16);
    let first_primitive = shapes.len() as u32;
    shapes.extend([
        Shape::Sphere(Sphere::new(0.5).unwrap()),
        Shape::Sphere(Sphere::new(0.2).unwrap()),
        Shape::Capsule(Capsule::new(0.6, 0.25).unwrap()),
        Shape::Capsule(Capsule::new(0.1, 0.4).unwrap()),
    ]);
    let ground = shapes.len() as u32;
    shapes.push(Shape::HalfSpace(HalfSpace::new(Vec3::Y, 0.0).unwrap()));
    let mut bodies = vec![Body {
        shape: ground,
        pose: Pose::IDENTITY,
    }];
    for i in 0..400 {
        let shape = if i % 3 == 0 {
            first_primitive + rng.random_range(0..4)
        } else {
            rng.random_range(0..first_primitive)
        };
        let position = Vec3::new(
            rng.random_range(-6.0..6.0),
            rng.random_range(-0.5..3.0),
            rng.random_range(-6.0..6.0),
        );
        bodies.push(Body {
            shape,
            pose: Pose::new(position, random_rotation(rng)),
        });
    }
    let mut pairs = Vec::new();
    for i in 1..bodies.len() {
        // Half the ground pairs with the ground as B, to check the flipped routes.
        pairs.push(if i % 2 == 0 { [0, i as u32] } else { [i as u32, 0] });
        for j in i + 1..bodies.len() {
            let reach = shapes[bodies[i].shape as usize].bounding_radius()
                + shapes[bodies[j].shape as usize].bounding_radius();
            if bodies[i].pose.translation.distance(bodies[j].pose.translation) < f64::from(1.1 * reach) {
                pairs.push([i as u32, j as u32]);
            }
        }
    }
    (shapes, bodies, pairs)
}

#[test]
fn gpu_collide_computes_primitive_pairs_in_pair_order() {
    let mut rng = seeded_rng(0x3137ed);
    let (shapes, bodies, pairs) = mixed_scene(&mut rng);
    let Some(mut gpu) = gpu_or_skip(&shapes) else {
        return;
    };
    let cpu = CpuNarrowphase::new(shapes.clone());
    for margin in MARGINS {
        let sats = gpu.sat(&bodies, &pairs, margin).expect("GPU SAT runs");
        let gpu_manifolds = gpu.collide(&bodies, &pairs, margin).expect("GPU collide runs");
        let cpu_manifolds = cpu.collide(&bodies, &pairs, margin).expect("CPU collide runs");
        assert_eq!(gpu_manifolds.len(), pairs.len());
        let (mut sat_stats, mut manifold_stats) = (Comparison::default(), ManifoldComparison::default());
        let (mut primitive_pairs, mut primitive_contacts) = (0, 0);
        for (i, &[ia, ib]) in pairs.iter().enumerate() {
            let (body_a, body_b) = (bodies[ia as usize], bodies[ib as usize]);
            let (shape_a, shape_b) = (&shapes[body_a.shape as usize], &shapes[body_b.shape as usize]);
            let hulls = (shape_a.as_hull(), shape_b.as_hull());
            let context = format!("margin {margin}, pairs[{i}] = [{ia}, {ib}]");
            match (hulls, &sats[i]) {
                ((Some(_), Some(_)), Some(sat)) => {
                    let b_in_a = body_a.pose.relative_to_self(&body_b.pose);
                    compare_sat(shape_a, shape_b, &b_in_a, margin, sat, &mut sat_stats, &context);
                    compare_manifolds(
                        (shape_a, shape_b),
                        &body_a.pose,
                        &b_in_a,
                        margin,
                        sat,
                        &gpu_manifolds[i],
                        &cpu_manifolds[i],
                        &mut manifold_stats,
                        &context,
                    );
                }
                ((Some(_), Some(_)), None) => panic!("{context}: hull pair not run on the GPU"),
                (_, Some(sat)) => panic!("{context}: non-hull pair run on the GPU: {sat:?}"),
                (_, None) => {
                    // primitives.wgsl's closed forms, in pair order: tests/gpu_primitives.rs
                    // compares positions in detail; here the same verdicts, separations,
                    // normals and ids.
                    let scale = shapes[body_a.shape as usize].size() + shapes[body_b.shape as usize].size();
                    let eps = SEPARATION_TOLERANCE * scale;
                    match (&gpu_manifolds[i], &cpu_manifolds[i]) {
                        (None, None) => {}
                        (Some(g), Some(c)) => {
                            assert!(
                                g.normal.distance(c.normal) <= NORMAL_TOLERANCE
                                    && (g.separation - c.separation).abs() <= eps
                                    && g.point_count() == c.point_count()
                                    && g.points().iter().zip(c.points()).all(|(p, q)| p.id == q.id),
                                "{context}\n gpu {g:?}\n cpu {c:?}"
                            );
                        }
                        (g, c) => assert!(
                            (c.or(*g).map_or(0.0, |m| m.separation) - margin).abs() <= eps,
                            "{context}: verdicts differ away from the margin\n gpu {g:?}\n cpu {c:?}"
                        ),
                    }
                    primitive_pairs += 1;
                    primitive_contacts += usize::from(cpu_manifolds[i].is_some());
                }
            }
        }
        eprintln!(
            "margin {margin}: {} pairs, {primitive_pairs} with a primitive ({primitive_contacts} touching)\n {sat_stats:?}\n {manifold_stats:?}",
            pairs.len()
        );
        assert!(primitive_contacts > 50 && primitive_pairs > primitive_contacts);
        assert!(manifold_stats.both > 50, "{manifold_stats:?}");
        assert!(sat_stats.other_axis < sat_stats.pairs / 50 + 1, "{sat_stats:?}");
    }
}

/// The GPU manifolds of hull `a` at `pose_a` against hull `b` at `pose_b` for each of
/// `margins`; `None` without an adapter.
fn gpu_collide_margins(
    a: &ConvexHull,
    pose_a: Pose,
    b: &ConvexHull,
    pose_b: Pose,
    margins: &[f32],
) -> Option<Vec<Option<Manifold>>> {
    let (a, b) = (Shape::Hull(a.clone()), Shape::Hull(b.clone()));
    gpu_one_pair(a, pose_a, b, pose_b, margins).map(|(manifolds, _)| manifolds)
}

/// The GPU manifold of hull `a` at `pose_a` against hull `b` at `pose_b`, with margin 0.
fn gpu_collide_one(a: &ConvexHull, pose_a: Pose, b: &ConvexHull, pose_b: Pose) -> Option<Option<Manifold>> {
    gpu_collide_margins(a, pose_a, b, pose_b, &[0.0]).map(|m| m[0])
}

/// The analytic box cases of `support/analytic.rs` (resting, octagon, corner from either side,
/// crossed edges) give their worked answers on the GPU, anywhere in space.
#[test]
fn gpu_analytic_box_cases_give_their_worked_answers() {
    for (name, case, check) in cases() {
        for global in [Pose::IDENTITY, global_pose()] {
            let case = case.placed(&global);
            let Some(m) = gpu_collide_one(&case.a, case.pose_a, &case.b, case.pose_b) else {
                return;
            };
            check(
                &m.unwrap_or_else(|| panic!("{name}: overlapping boxes collide")),
                &global,
            );
        }
    }
}

#[test]
fn gpu_collide_fills_timings_grows_buffers_and_accepts_an_empty_batch() {
    let mut rng = seeded_rng(0x714195);
    let shapes = shape_library(&mut rng);
    let Some(mut gpu) = gpu_or_skip(&shapes) else {
        return;
    };
    let cpu = CpuNarrowphase::new(shapes.clone());
    let (bodies, pairs, _) = random_pairs(&mut rng, &shapes, 3_000);

    // Empty first: nothing to do, an empty answer.
    assert_eq!(gpu.collide(&bodies, &[], 0.0).expect("empty batch"), Vec::new());
    assert_eq!(gpu.sat(&bodies, &[], 0.0).expect("empty batch"), Vec::new());

    // Small, then 300 times as many pairs and bodies (pair i uses bodies 2i and 2i + 1; the
    // body, pair, result and readback buffers grow), then small again (the grown buffers are
    // reused and must not leak stale results).
    let mut small = None;
    for count in [10, 3_000, 10] {
        let (bodies, pairs) = (&bodies[..2 * count], &pairs[..count]);
        let manifolds = gpu.collide(bodies, pairs, 0.0).expect("GPU collide runs");
        let timings = gpu.timings();
        eprintln!("{count} pairs: {timings:?}");
        assert!(
            timings.upload > Duration::ZERO
                && timings.dispatch_readback > Duration::ZERO
                && timings.cpu_clipping > Duration::ZERO,
            "{timings:?}"
        );
        assert_eq!(manifolds.len(), count);
        let (sat, compared) = check_hull_batch(&mut gpu, &cpu, bodies, pairs, 0.0);
        assert_eq!(sat.pairs, count);
        assert_eq!(
            compared.both + compared.neither + compared.near_margin_only_one,
            count
        );
        if count == 10 {
            assert_eq!(small.get_or_insert_with(|| manifolds.clone()), &manifolds);
        }
    }
    // `sat` reports no clipping time.
    gpu.sat(&bodies, &pairs, 0.0).expect("GPU SAT runs");
    assert_eq!(gpu.timings().cpu_clipping, Duration::ZERO);
    assert!(gpu.timings().dispatch_readback > Duration::ZERO);
}

#[test]
fn gpu_separated_boxes_have_no_manifold_and_the_margin_gives_speculative_points() {
    // The unit box 0.01 above the slab: a margin of 0.02 reaches, 0.005 and 0 do not.
    let above = Pose::from_translation(Vec3::new(0.3, 1.01, 0.2));
    let Some(m) = gpu_collide_margins(&slab(), Pose::IDENTITY, &unit_box(), above, &[0.02, 0.005, 0.0])
    else {
        return;
    };
    assert_eq!(m[1..], [None, None]);
    let m = m[0].expect("within the margin");
    assert_near(m.separation, 0.01, TOL, "separation");
    assert_vec_near(m.normal, Vec3::Y, TOL, "normal");
    assert_eq!(m.points().len(), 4);
    for p in m.points() {
        assert_near(p.depth, -0.01, TOL, "depth");
        assert_near(p.position.as_vec3().y, 0.505, TOL, "midway height");
    }
    // Beside the slab, turned: apart for any small margin.
    let beside = Pose::new(Vec3::new(3.0, 0.4, 0.0), Quat::from_rotation_y(0.3));
    let m = gpu_collide_margins(&slab(), Pose::IDENTITY, &unit_box(), beside, &[0.0, 0.05]).unwrap();
    assert_eq!(m, [None, None]);

    // Crossed edges: 0.05 apart has no manifold; 0.01 apart is within a margin of 0.02, one
    // edge-pair point with depth -0.01.
    let pose_a = Pose::new(Vec3::ZERO, Quat::from_rotation_z(FRAC_PI_4));
    let edges_at = |height: f32| Pose::new(Vec3::new(0.1, height, 0.15), Quat::from_rotation_x(FRAC_PI_4));
    let m = gpu_collide_margins(&unit_box(), pose_a, &unit_box(), edges_at(SQRT_2 + 0.05), &[0.0]).unwrap();
    assert_eq!(m, [None]);
    let m = gpu_collide_margins(&unit_box(), pose_a, &unit_box(), edges_at(SQRT_2 + 0.01), &[0.02]).unwrap();
    let m = m[0].expect("within the margin");
    assert_near(m.separation, 0.01, TOL, "separation");
    assert_eq!(m.points().len(), 1);
    assert_near(m.points[0].depth, -0.01, TOL, "depth");
    assert_eq!(m.points[0].id.kind(), FeatureId::EDGE_PAIR);
}

/// The pairs of a particle scene of `bodies` hulls of `vertices` vertices through the GPU and
/// the CPU, compared pair by pair; returns the number of pairs and of pairs the driver cut short
/// (recomputed on the CPU, so compared with itself). Both verdicts and every kind of axis occur,
/// so the comparison is about something.
fn check_large_hulls(vertices: usize, bodies: usize) -> Option<(usize, usize)> {
    use hullsat::generate::{ParticleSceneConfig, ShapeMix, generate_particle_scene_with_pairs};
    let config = ParticleSceneConfig {
        bodies,
        mix: ShapeMix::hulls_only(vertices),
        ..Default::default()
    };
    let scene = generate_particle_scene_with_pairs(&config).expect("scene");
    let pairs = scene.pairs.clone().expect("broadphase pairs");
    assert!(pairs.len() > 500, "{} pairs", pairs.len());
    let mut gpu = gpu_or_skip(&scene.shapes)?;
    let cpu = CpuNarrowphase::new(scene.shapes.clone());
    let (sat_stats, manifold_stats) = check_hull_batch(&mut gpu, &cpu, &scene.bodies, &pairs, scene.margin);
    let incomplete = gpu.timings().incomplete_pairs;
    eprintln!(
        "{} pairs of {vertices}-vertex hulls on {}: {incomplete} cut short; {sat_stats:?} {manifold_stats:?}",
        pairs.len(),
        gpu.adapter_info().name,
    );
    assert!(sat_stats.separated > pairs.len() / 10 && sat_stats.separated < pairs.len() * 9 / 10);
    assert!(
        sat_stats.contact_axes.iter().all(|&n| n > pairs.len() / 20),
        "{sat_stats:?}"
    );
    Some((pairs.len(), incomplete))
}

/// Pairs of 64-vertex hulls (186 edges each, one pair per invocation): the kernel's bounded
/// queries and short loops keep every invocation group below lavapipe's loop cap (it cuts loops
/// short silently past ~65,535 iterations), so the shader itself runs every pair and the GPU's
/// own results are compared with the CPU's. On a real GPU nothing is cut short either.
#[test]
fn large_hulls_run_on_the_gpu_and_equal_the_cpu() {
    for bodies in [400, 600] {
        let Some((_, incomplete)) = check_large_hulls(64, bodies) else {
            return;
        };
        assert_eq!(
            incomplete, 0,
            "pairs the driver cut short (recomputed on the CPU)"
        );
    }
}

/// Pairs of 96-vertex hulls (282 edges) and of 128-vertex hulls (about 378 edges), the kernel's
/// cooperative path (a workgroup on one pair), equal the CPU too, and the shader runs all of
/// them on lavapipe: one pair per invocation, its loop cap cut 8 of the 729 128-vertex pairs
/// short (recomputed on the CPU, so compared with itself); the workgroup's split loops cut none.
#[test]
fn hulls_beyond_the_kept_edge_set_run_on_the_gpu_and_equal_the_cpu() {
    for (vertices, bodies) in [(96, 600), (128, 400), (128, 600)] {
        let Some((pairs, incomplete)) = check_large_hulls(vertices, bodies) else {
            return;
        };
        assert_eq!(
            incomplete, 0,
            "{vertices}-vertex hulls: {incomplete} of {pairs} pairs cut short (recomputed on the CPU)"
        );
    }
}

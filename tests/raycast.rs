//! Ray casts on the CPU: exact closed-form cases for every shape (axis rays, starts inside,
//! max distance, tangent and grazing rays, rays along faces and edges), random rays against an
//! independent f64 oracle (signed distance functions, root-found), hulls against parry3d's
//! `cast_ray_and_get_normal`, the batch (BVH) against brute force, hit order, `closest`, and
//! precision far from the world origin.

mod raycast_common;
mod support;

use std::f32::consts::PI;

use glam::{DVec2, DVec3, Quat, Vec3};
use hullsat::raycast::{
    LocalRay, cast_box, cast_capsule, cast_cylinder, cast_half_space, cast_hull, cast_shape, cast_sphere,
};
use hullsat::{
    Body, Capsule, ConvexHull, CpuRaycaster, Cuboid, Cylinder, HalfSpace, Pose, Ray, RayHit, RayHitSet,
    Shape, Sphere,
};
use parry3d::query::Ray as PRay;
use rand::RngExt;
use rand_pcg::Pcg64;
use raycast_common::random_scene;
use support::parry::{to_parry_pose, to_parry_shape};
use support::seeded_rng;
use support::shapes::{Family, random_direction, random_rotation, random_shape};

/// Closed-form cases computed in f32 agree with the exact value to this (a few ulps of the
/// lengths involved, which are about 1 to 10 units).
const EXACT_TOLERANCE: f32 = 1.0e-5;

/// Rays passing within this of a surface, relative to the shape's size plus the origin's
/// distance, are grazing: f32 rounding may decide either way and the entry distance is
/// ill-conditioned there, so the random tests skip (and count) them.
const GRAZING_TOLERANCE: f64 = 1.0e-4;

/// Random rays: entry distances agree with the f64 oracle to this, relative to the shape's size
/// plus the origin's distance plus the distance (f32 rounding of the local origin and of the
/// routine).
const DISTANCE_TOLERANCE: f64 = 1.0e-5;

/// A hit normal is unit to this, and moving along it leaves the shape at unit rate to
/// `RATE_TOLERANCE` (the oracle's finite difference over a step of 1e-3 of the size).
const UNIT_TOLERANCE: f32 = 1.0e-5;
const RATE_TOLERANCE: f64 = 2.0e-3;

/// Parry: hull faces are planar only to the hull tolerance (1e-5 of the diagonal, about twice
/// that for vertices) and parry triangulates them, so its surface may sit this far (relative to
/// size plus origin distance) off ours, across the surface.
const PARRY_SURFACE_TOLERANCE: f32 = 1.0e-4;

/// Two unit normals closer than this are the same direction.
const NORMAL_TOLERANCE: f32 = 1.0e-3;

fn local(origin: Vec3, direction: Vec3) -> LocalRay {
    LocalRay {
        origin,
        direction: direction.normalize(),
        max_distance: f32::MAX,
    }
}

fn ray(origin: DVec3, direction: Vec3, max_distance: Option<f32>) -> Ray {
    Ray::new(origin, direction, max_distance).expect("a valid ray")
}

fn body(shape: u32, position: Vec3, rotation: Quat) -> Body {
    Body {
        shape,
        pose: Pose::new(position, rotation),
    }
}

#[test]
fn axis_rays_hit_each_shape_where_the_closed_form_says() {
    let from_left = local(Vec3::new(-5.0, 0.0, 0.0), Vec3::X);
    let hit = cast_box(Vec3::new(1.0, 2.0, 3.0), &from_left).unwrap();
    assert_eq!((hit.distance, hit.normal), (4.0, -Vec3::X));
    let hit = cast_sphere(0.5, &from_left).unwrap();
    assert_eq!((hit.distance, hit.normal), (4.5, -Vec3::X));
    // Capsule side, then its top cap from above.
    let hit = cast_capsule(0.5, 0.25, &from_left).unwrap();
    assert_eq!((hit.distance, hit.normal), (4.75, -Vec3::X));
    let hit = cast_capsule(0.5, 0.25, &local(Vec3::new(0.0, 5.0, 0.0), -Vec3::Y)).unwrap();
    assert_eq!((hit.distance, hit.normal), (4.25, Vec3::Y));
    // Off-centre onto the cap: the sphere of radius 0.25 at y = 0.5, entered at x = 0.15.
    let hit = cast_capsule(0.5, 0.25, &local(Vec3::new(0.15, 5.0, 0.0), -Vec3::Y)).unwrap();
    assert!((hit.distance - (4.5 - 0.2)).abs() < EXACT_TOLERANCE, "{hit:?}");
    assert!(
        hit.normal.distance(Vec3::new(0.6, 0.8, 0.0)) < EXACT_TOLERANCE,
        "{hit:?}"
    );
    let ground = HalfSpace::new(Vec3::Y, -1.0).unwrap();
    let hit = cast_half_space(&ground, &local(Vec3::new(3.0, 4.0, 0.0), -Vec3::Y)).unwrap();
    assert_eq!((hit.distance, hit.normal), (5.0, Vec3::Y));
    // Slanted onto the ground: distance = height / cos(angle).
    let hit = cast_half_space(
        &ground,
        &local(Vec3::new(0.0, 2.0, 0.0), Vec3::new(1.0, -1.0, 0.0)),
    )
    .unwrap();
    assert!(
        (hit.distance - 3.0 * 2f32.sqrt()).abs() < EXACT_TOLERANCE,
        "{hit:?}"
    );
    // A box as a hull gives the box's answer.
    let cube = ConvexHull::cuboid(Vec3::new(1.0, 2.0, 3.0));
    let hit = cast_hull(&cube, &from_left).unwrap();
    assert_eq!((hit.distance, hit.normal), (4.0, -Vec3::X));
}

#[test]
fn cylinder_rays_hit_the_true_side_and_caps() {
    let (h, r) = (0.5, 0.25);
    // The side head-on, and between two prism vertices (where the prism lies 1.9 % of r inside).
    let hit = cast_cylinder(h, r, &local(Vec3::new(-5.0, 0.0, 0.0), Vec3::X)).unwrap();
    assert_eq!((hit.distance, hit.normal), (4.75, -Vec3::X));
    let radial = Vec3::new((PI / 16.0).cos(), 0.0, (PI / 16.0).sin());
    let between = local(radial * 4.0 + Vec3::Y * 0.3, -radial);
    let hit = cast_cylinder(h, r, &between).unwrap();
    assert!((hit.distance - (4.0 - r)).abs() < EXACT_TOLERANCE, "{hit:?}");
    assert!(hit.normal.distance(radial) < EXACT_TOLERANCE, "{hit:?}");
    // The top cap from above, off-centre; the bottom cap from below.
    let hit = cast_cylinder(h, r, &local(Vec3::new(0.2, 5.0, -0.1), -Vec3::Y)).unwrap();
    assert_eq!((hit.distance, hit.normal), (4.5, Vec3::Y));
    let hit = cast_cylinder(h, r, &local(Vec3::new(0.0, -3.0, 0.0), Vec3::Y)).unwrap();
    assert_eq!((hit.distance, hit.normal), (2.5, -Vec3::Y));
    // Just outside the rim, along the axis: a miss; a slanted ray through the cap.
    assert!(cast_cylinder(h, r, &local(Vec3::new(0.2, 5.0, 0.2), -Vec3::Y)).is_none());
    let slant = Vec3::new(1.0, -1.0, 0.0).normalize();
    let hit = cast_cylinder(h, r, &local(Vec3::new(-1.0, 1.6, 0.0), slant)).unwrap();
    // Enters y = 0.5 at x = 0.1 (inside the radius): distance 1.1 × √2.
    assert!(
        (hit.distance - 1.1 * 2f32.sqrt()).abs() < EXACT_TOLERANCE,
        "{hit:?}"
    );
    assert_eq!(hit.normal, Vec3::Y);
    // A slanted ray that passes over the cap and enters the side: x = -r at y = 0.35.
    let hit = cast_cylinder(h, r, &local(Vec3::new(-1.0, 1.1, 0.0), slant)).unwrap();
    assert!(
        (hit.distance - 0.75 * 2f32.sqrt()).abs() < EXACT_TOLERANCE,
        "{hit:?}"
    );
    assert!(hit.normal.distance(-Vec3::X) < EXACT_TOLERANCE, "{hit:?}");
    // Inside: distance 0 against the direction; pointing away from outside: a miss; beyond the
    // max distance: a miss.
    let d = Vec3::new(0.3, 0.4, 0.5).normalize();
    assert_eq!(
        cast_cylinder(h, r, &local(Vec3::new(0.1, 0.4, 0.0), d)).map(|hit| (hit.distance, hit.normal)),
        Some((0.0, -d))
    );
    assert!(cast_cylinder(h, r, &local(Vec3::new(-5.0, 0.0, 0.0), -Vec3::X)).is_none());
    let short = LocalRay {
        max_distance: 4.7,
        ..local(Vec3::new(-5.0, 0.0, 0.0), Vec3::X)
    };
    assert!(cast_cylinder(h, r, &short).is_none());
    // Through the shape enum: the exact cylinder, not the prism.
    let shape = Shape::Cylinder(Cylinder::new(h, r).unwrap());
    assert_eq!(cast_shape(&shape, &between), cast_cylinder(h, r, &between));
}

#[test]
fn rays_starting_inside_hit_at_zero_against_their_direction() {
    let shapes = [
        Shape::Cuboid(Cuboid::new(Vec3::ONE).unwrap()),
        Shape::Hull(ConvexHull::cuboid(Vec3::ONE)),
        Shape::Sphere(Sphere::new(1.0).unwrap()),
        Shape::Capsule(Capsule::new(1.0, 0.5).unwrap()),
        Shape::HalfSpace(HalfSpace::new(Vec3::Y, 0.5).unwrap()),
    ];
    let d = Vec3::new(0.3, -0.2, 0.9).normalize();
    for shape in &shapes {
        for origin in [Vec3::ZERO, Vec3::new(0.1, 0.4, -0.2)] {
            let hit = cast_shape(shape, &local(origin, d)).unwrap_or_else(|| panic!("{shape:?}"));
            assert_eq!((hit.distance, hit.normal), (0.0, -d), "{shape:?}");
        }
    }
}

#[test]
fn max_distance_is_inclusive_and_nothing_behind_the_origin_counts() {
    let shapes = vec![Shape::Cuboid(Cuboid::new(Vec3::ONE).unwrap())];
    let bodies = [body(0, Vec3::ZERO, Quat::IDENTITY)];
    let cpu = CpuRaycaster::new(shapes);
    let origin = DVec3::new(-5.0, 0.0, 0.0);
    let rays = [
        ray(origin, Vec3::X, Some(4.0)),
        ray(origin, Vec3::X, Some(3.999)),
        ray(origin, -Vec3::X, None),
        ray(origin, Vec3::X * 7.0, Some(0.0)),
    ];
    let hits = cpu.cast(&bodies, &rays, false).unwrap();
    assert_eq!(hits[0].len(), 1);
    assert_eq!(hits[0][0].distance, 4.0);
    assert_eq!(hits[0][0].point, DVec3::new(-1.0, 0.0, 0.0));
    assert!(
        hits[1].is_empty() && hits[2].is_empty() && hits[3].is_empty(),
        "{hits:?}"
    );
    // A zero-length ray inside a body still hits it.
    let inside = cpu
        .cast(&bodies, &[ray(DVec3::ZERO, Vec3::Y, Some(0.0))], false)
        .unwrap();
    assert_eq!(inside[0][0].distance, 0.0);
}

#[test]
fn rays_along_faces_and_edges_and_tangent_rays_touch() {
    let half = Vec3::ONE;
    let cube = ConvexHull::cuboid(half);
    let along = |origin: Vec3| local(origin, Vec3::X);
    // In a face plane (y = 1), along an edge (y = z = 1): the closed box is touched at x = -1.
    for origin in [
        Vec3::new(-5.0, 1.0, 0.0),
        Vec3::new(-5.0, 1.0, 1.0),
        Vec3::new(-5.0, -1.0, -1.0),
    ] {
        for hit in [cast_box(half, &along(origin)), cast_hull(&cube, &along(origin))] {
            let hit = hit.unwrap_or_else(|| panic!("ray along the surface from {origin} missed"));
            assert_eq!((hit.distance, hit.normal), (4.0, -Vec3::X), "{origin}");
        }
        // One f32 step outside misses.
        let outside = Vec3::new(
            origin.x,
            origin.y.next_up().max(origin.y.next_down().abs()) * origin.y.signum(),
            origin.z,
        );
        assert!(cast_box(half, &along(outside)).is_none(), "{outside}");
        assert!(cast_hull(&cube, &along(outside)).is_none(), "{outside}");
    }
    // Starting on a face and running along it: inside at distance 0.
    let hit = cast_box(half, &along(Vec3::new(0.0, 1.0, 0.0))).unwrap();
    assert_eq!((hit.distance, hit.normal), (0.0, -Vec3::X));
    // Tangent to a sphere and to a capsule's side: touched, normal perpendicular to the ray.
    let hit = cast_sphere(1.0, &along(Vec3::new(-5.0, 1.0, 0.0))).unwrap();
    assert_eq!((hit.distance, hit.normal), (5.0, Vec3::Y));
    let hit = cast_capsule(1.0, 1.0, &local(Vec3::new(1.0, -5.0, 0.0), Vec3::Y)).unwrap();
    assert_eq!(hit.normal, Vec3::X);
    assert!((hit.distance - 4.0).abs() <= EXACT_TOLERANCE, "{hit:?}");
    assert!(cast_sphere(1.0, &along(Vec3::new(-5.0, 1.0001, 0.0))).is_none());
    // A hull grazed at a vertex (octahedron tip at x = 1): just inside hits, just outside misses.
    let octahedron =
        ConvexHull::from_points(&[Vec3::X, -Vec3::X, Vec3::Y, -Vec3::Y, Vec3::Z, -Vec3::Z]).unwrap();
    let up = |x: f32| local(Vec3::new(x, -5.0, 0.0), Vec3::Y);
    assert!(cast_hull(&octahedron, &up(1.0 - 1e-4)).is_some());
    assert!(cast_hull(&octahedron, &up(1.0 + 1e-4)).is_none());
    // Parallel to the ground, above it: never; in its plane: touched from the start.
    let ground = HalfSpace::new(Vec3::Y, 0.0).unwrap();
    assert!(cast_half_space(&ground, &along(Vec3::new(0.0, 1e-3, 0.0))).is_none());
    assert_eq!(
        cast_half_space(&ground, &along(Vec3::ZERO)).unwrap().distance,
        0.0
    );
}

/// Signed distance-like function of a shape (local frame, f64): zero on the surface, negative
/// inside, convex. Exact distance for spheres, capsules, cylinders, boxes and half-spaces; the largest
/// face-plane distance for hulls. Not for triangle meshes (no inside; tests/trimesh_batch.rs)
/// nor compounds (a union, not convex; tests/compound_batch.rs).
fn sdf(shape: &Shape, p: DVec3) -> f64 {
    match shape {
        Shape::Sphere(s) => p.length() - f64::from(s.radius),
        Shape::Capsule(c) => {
            let h = f64::from(c.half_height);
            (p - DVec3::new(0.0, p.y.clamp(-h, h), 0.0)).length() - f64::from(c.radius)
        }
        Shape::Cuboid(c) => {
            let q = p.abs() - c.half_extents().as_dvec3();
            q.max(DVec3::ZERO).length() + q.max_element().min(0.0)
        }
        Shape::Cylinder(c) => {
            let q = DVec2::new(
                DVec2::new(p.x, p.z).length() - f64::from(c.radius()),
                p.y.abs() - f64::from(c.half_height()),
            );
            q.max(DVec2::ZERO).length() + q.max_element().min(0.0)
        }
        Shape::HalfSpace(h) => p.dot(h.normal.as_dvec3()) - f64::from(h.offset),
        Shape::Hull(hull) => hull
            .planes()
            .iter()
            .map(|pl| p.dot(pl.normal.as_dvec3()) - f64::from(pl.offset))
            .fold(f64::NEG_INFINITY, f64::max),
        Shape::TriMesh(_) => unreachable!("meshes have no signed distance"),
        Shape::Compound(_) => unreachable!("a compound's distance is not convex"),
    }
}

/// The oracle: `Some((entry, min_sdf))` when the f64 ray (local frame) enters `shape` within
/// `max`, by ternary search for the minimum of the convex `sdf` along the ray and bisection
/// for its first zero; `None` with the minimum otherwise. `min_sdf` says how close to
/// grazing the ray is.
fn oracle(shape: &Shape, o: DVec3, d: DVec3, max: f64) -> (Option<f64>, f64) {
    let f = |t: f64| sdf(shape, o + d * t);
    if f(0.0) <= 0.0 {
        return (Some(0.0), f(0.0));
    }
    let (mut lo, mut hi) = (0.0, max);
    for _ in 0..300 {
        let (a, b) = (lo + (hi - lo) / 3.0, hi - (hi - lo) / 3.0);
        if f(a) <= f(b) {
            hi = b;
        } else {
            lo = a;
        }
    }
    let (t_min, f_min) = (lo, f(lo));
    if f_min > 0.0 {
        return (None, f_min);
    }
    let (mut lo, mut hi) = (0.0, t_min);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if f(mid) > 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (Some(hi), f_min)
}

/// A ray aimed at a random point near a shape of size `size` from up to `4 size` away; one in
/// ten starts inside the bounding ball.
fn random_local_ray(rng: &mut Pcg64, size: f32) -> (Vec3, Vec3) {
    let target = random_direction(rng) * size * rng.random_range(0.0f32..1.3);
    if rng.random_range(0..10) == 0 {
        return (target * 0.5, random_direction(rng));
    }
    let origin = random_direction(rng) * size * rng.random_range(1.5f32..4.0);
    (origin, (target - origin).normalize())
}

/// One random ray (drawn with `rng`) against `shape`, checked against the f64 oracle; `counts`
/// tallies hits, misses and grazing rays (skipped).
fn check_random_ray(shape: &Shape, i: usize, rng: &mut Pcg64, counts: &mut [usize; 3]) {
    let size = if let Shape::HalfSpace(_) = shape {
        2.0
    } else {
        shape.bounding_radius()
    };
    let (o, d) = random_local_ray(rng, size);
    let max = if i.is_multiple_of(3) {
        rng.random_range(0.0..6.0 * size)
    } else {
        f32::MAX
    };
    let ours = cast_shape(
        shape,
        &LocalRay {
            origin: o,
            direction: d,
            max_distance: max,
        },
    );
    let bound = f64::from(max.min(1.0e3 * size));
    let (expected, min_sdf) = oracle(shape, o.as_dvec3(), d.as_dvec3(), bound);
    // Rays passing within this of the surface (relative to the shape) are grazing: f32
    // rounding may decide either way, and the entry distance is ill-conditioned there.
    let scale = f64::from(size) + o.as_dvec3().length();
    if min_sdf.abs() <= GRAZING_TOLERANCE * scale
        || expected.is_some_and(|t| (t - f64::from(max)).abs() <= DISTANCE_TOLERANCE * scale)
    {
        counts[2] += 1;
        return;
    }
    let context = format!("ray {i}: {shape:?} origin {o} direction {d} max {max}");
    match (ours, expected) {
        (None, None) => counts[1] += 1,
        (Some(hit), Some(t)) => {
            counts[0] += 1;
            assert!(
                (f64::from(hit.distance) - t).abs() <= DISTANCE_TOLERANCE * (scale + t),
                "{context}: distance {} expected {t}",
                hit.distance
            );
            if t == 0.0 {
                assert_eq!(hit.normal, -d, "{context}");
                return;
            }
            // The normal: unit, and moving along it from the entry point leaves the shape at
            // unit rate (true for the face of a polyhedron as for smooth surfaces).
            let p = o.as_dvec3() + d.as_dvec3() * t;
            let n = hit.normal.as_dvec3();
            assert!(
                (n.length() - 1.0).abs() < f64::from(UNIT_TOLERANCE),
                "{context}: normal {n}"
            );
            let step = 1e-3 * f64::from(size);
            let rate = (sdf(shape, p + n * step) - sdf(shape, p)) / step;
            assert!(
                (rate - 1.0).abs() < RATE_TOLERANCE,
                "{context}: normal {n} leaves at rate {rate}"
            );
        }
        (ours, expected) => {
            panic!("{context}: hullsat {ours:?}, oracle {expected:?} (min sdf {min_sdf})")
        }
    }
}

#[test]
fn random_rays_agree_with_an_f64_oracle_for_every_shape() {
    let mut rng = seeded_rng(12);
    let mut counts = [0usize; 3]; // hits, misses, grazing (skipped)
    for i in 0..4000 {
        let shape = match i % 5 {
            0 => Shape::Sphere(Sphere::new(rng.random_range(0.2..2.0)).unwrap()),
            1 => {
                Shape::Capsule(Capsule::new(rng.random_range(0.1..2.0), rng.random_range(0.1..1.0)).unwrap())
            }
            2 => random_shape(&mut rng, Family::Box),
            3 => random_shape(&mut rng, Family::Hull),
            _ => Shape::HalfSpace(
                HalfSpace::new(random_direction(&mut rng), rng.random_range(-1.0..1.0)).unwrap(),
            ),
        };
        check_random_ray(&shape, i, &mut rng, &mut counts);
    }
    eprintln!(
        "hits {}, misses {}, grazing skipped {}",
        counts[0], counts[1], counts[2]
    );
    assert!(
        counts[0] > 1000 && counts[1] > 1000 && counts[2] < 100,
        "{counts:?}"
    );
}

#[test]
fn random_cylinder_rays_agree_with_the_f64_oracle() {
    let mut rng = seeded_rng(13);
    let mut counts = [0usize; 3];
    for i in 0..2000 {
        let shape =
            Shape::Cylinder(Cylinder::new(rng.random_range(0.05..2.0), rng.random_range(0.05..2.0)).unwrap());
        check_random_ray(&shape, i, &mut rng, &mut counts);
    }
    eprintln!(
        "hits {}, misses {}, grazing skipped {}",
        counts[0], counts[1], counts[2]
    );
    assert!(counts[0] > 500 && counts[1] > 500 && counts[2] < 50, "{counts:?}");
}

#[test]
fn hull_rays_agree_with_parry() {
    let mut rng = seeded_rng(7);
    let (mut compared, mut grazing, mut other_normal) = (0, 0, 0);
    for i in 0..3000 {
        let family = [Family::Hull, Family::Needle, Family::Hull, Family::Box][i % 4];
        let shape = random_shape(&mut rng, family);
        let hull = shape.as_hull().unwrap().clone();
        let pose = Pose::new(support::random_vec3(&mut rng, 10.0), random_rotation(&mut rng));
        let size = shape.bounding_radius();
        let (o, d) = random_local_ray(&mut rng, size);
        let world_o = pose.transform_point(o);
        let world_d = pose.transform_vector(d);
        let r = ray(world_o, world_d, None);
        let cpu = CpuRaycaster::new(vec![Shape::Hull(hull.clone())]);
        let ours = cpu
            .cast(&[Body { shape: 0, pose }], &[r], false)
            .unwrap()
            .remove(0);
        let parry_shape = to_parry_shape(&Shape::Hull(hull.clone())).expect("parry accepts the hull");
        let pray = PRay::new(
            parry3d::math::Vector::new(world_o.x as f32, world_o.y as f32, world_o.z as f32),
            parry3d::math::Vector::new(r.direction().x, r.direction().y, r.direction().z),
        );
        let theirs = parry_shape.cast_ray_and_get_normal(&to_parry_pose(&pose), &pray, f32::MAX, true);
        let (_, min_sdf) = oracle(
            &Shape::Hull(hull.clone()),
            o.as_dvec3(),
            d.as_dvec3(),
            f64::from(10.0 * size),
        );
        let scale = size + o.length();
        if f64::abs(min_sdf) <= GRAZING_TOLERANCE * f64::from(scale) {
            grazing += 1;
            continue;
        }
        let context = format!("ray {i}: {ours:?} parry {theirs:?}");
        match (ours.first(), theirs) {
            (None, None) => {}
            (Some(hit), Some(p)) => {
                // The gap between the two entry points across the surface: hull faces are planar
                // to the hull tolerance and parry triangulates them, so its surface may sit that
                // far off ours, which a shallow ray turns into a larger distance along itself.
                let across = (hit.distance - p.time_of_impact).abs() * hit.normal.dot(r.direction()).abs();
                assert!(
                    across <= PARRY_SURFACE_TOLERANCE * scale,
                    "{context}: entry points {across} apart across the surface"
                );
                let pn = Vec3::new(p.normal.x, p.normal.y, p.normal.z);
                if hit.distance > 0.0 {
                    // Ours is a face of the hull through the entry point. Parry's is the normal
                    // of one triangle of the fan-triangulated face loops; faces are planar only
                    // to the hull tolerance, so a sliver triangle's normal may tilt: count those.
                    let on_face = hull.planes().iter().any(|pl| {
                        pose.transform_vector(pl.normal).distance(hit.normal) < UNIT_TOLERANCE
                            && pl.signed_distance(o + d * hit.distance).abs() < UNIT_TOLERANCE * scale
                    });
                    assert!(
                        on_face,
                        "{context}: our normal is not a face through the entry point"
                    );
                    if hit.normal.distance(pn) >= NORMAL_TOLERANCE {
                        other_normal += 1;
                    }
                }
            }
            _ => panic!("{context}: verdicts differ (min sdf {min_sdf})"),
        }
        compared += 1;
    }
    eprintln!(
        "compared {compared}, grazing skipped {grazing}, parry's normal from another plane {other_normal}"
    );
    assert!(grazing < 60 && other_normal < 30, "{grazing} {other_normal}");
}

#[test]
fn the_batch_finds_what_brute_force_finds() {
    let mut rng = seeded_rng(3);
    let (shapes, bodies) = random_scene(&mut rng, 600, 30.0, Vec3::ZERO);
    let rays: Vec<Ray> = (0..3000)
        .map(|i| {
            let o = (support::random_vec3(&mut rng, 0.7) + 0.5) * 30.0;
            let max = if i % 2 == 0 {
                Some(rng.random_range(0.0..20.0))
            } else {
                None
            };
            ray(o.as_dvec3(), random_direction(&mut rng), max)
        })
        .collect();
    let cpu = CpuRaycaster::new(shapes.clone());
    let all = cpu.cast(&bodies, &rays, false).unwrap();
    let closest = cpu.cast(&bodies, &rays, true).unwrap();
    let single = cpu.cast_single_thread(&bodies, &rays, false).unwrap();
    for (i, (a, b)) in all.iter().zip(&single).enumerate() {
        assert_eq!(a, b, "ray {i}: rayon vs one thread");
    }
    // The flat set, reused: every hit, then the closest, then every hit of fewer rays.
    let mut set = RayHitSet::new();
    for (closest, count, lists) in [
        (false, rays.len(), &all),
        (true, rays.len(), &closest),
        (false, 700, &all),
    ] {
        cpu.cast_into(&bodies, &rays[..count], closest, &mut set).unwrap();
        assert_eq!(set.ray_count(), count);
        assert_eq!(set.to_lists(), lists[..count]);
        assert_eq!(
            set.all_hits().len(),
            lists[..count].iter().map(Vec::len).sum::<usize>()
        );
    }
    // Brute force on the bodies the batch uses (rotations renormalized by validation).
    let bodies = hullsat::scene::validate_batch(&shapes, &bodies, &[], 0.0).unwrap();

    let mut total = 0;
    for (i, r) in rays.iter().enumerate() {
        let mut expected: Vec<RayHit> = bodies
            .iter()
            .enumerate()
            .filter_map(|(b, body)| {
                hullsat::raycast::cast_body(&shapes[body.shape as usize], b as u32, body, r)
            })
            .collect();
        expected.sort_by(|a, b| a.distance.total_cmp(&b.distance).then(a.body.cmp(&b.body)));
        assert_eq!(all[i], expected, "ray {i}");
        assert_eq!(
            closest[i],
            expected.first().copied().into_iter().collect::<Vec<_>>(),
            "ray {i}"
        );
        total += expected.len();
    }
    assert!(total > rays.len() / 2, "too few hits to test anything: {total}");
}

#[test]
fn hits_are_sorted_and_ties_keep_the_lower_body_first() {
    let shapes = vec![Shape::Cuboid(Cuboid::new(Vec3::splat(0.5)).unwrap())];
    // Bodies 0..5 along X at x = 8, 6, 4, 2, 0, and body 5 exactly where body 2 is.
    let mut bodies: Vec<Body> = (0..5)
        .map(|i| body(0, Vec3::new(8.0 - 2.0 * i as f32, 0.0, 0.0), Quat::IDENTITY))
        .collect();
    bodies.push(bodies[2]);
    let r = ray(DVec3::new(-10.0, 0.0, 0.0), Vec3::X, None);
    let cpu = CpuRaycaster::new(shapes);
    let hits = cpu.cast(&bodies, &[r], false).unwrap().remove(0);
    let order: Vec<(u32, f32)> = hits.iter().map(|h| (h.body, h.distance)).collect();
    assert_eq!(
        order,
        [(4, 9.5), (3, 11.5), (2, 13.5), (5, 13.5), (1, 15.5), (0, 17.5)]
    );
    let closest = cpu.cast(&bodies, &[r], true).unwrap().remove(0);
    assert_eq!(closest, vec![hits[0]]);
    // Ties on the closest hit too.
    let tie = cpu
        .cast(&bodies, &[ray(DVec3::new(4.0, 10.0, 0.0), -Vec3::Y, None)], true)
        .unwrap();
    assert_eq!(tie[0].iter().map(|h| h.body).collect::<Vec<_>>(), [2]);
}

#[test]
fn far_from_the_origin_hits_keep_their_precision() {
    // A sphere at x = 1e7, where f32 positions are 1 apart; the ray origin is in f64.
    let shapes = vec![Shape::Sphere(Sphere::new(0.5).unwrap())];
    let bodies = [body(0, Vec3::new(1.0e7, 0.0, 0.0), Quat::from_rotation_z(0.3))];
    let origin = DVec3::new(1.0e7 - 5.0 + 0.125, 0.1, 0.0);
    let hits = CpuRaycaster::new(shapes)
        .cast(&bodies, &[ray(origin, Vec3::X, None)], false)
        .unwrap();
    let expected = 4.875 - (0.25f64 - 0.01).sqrt();
    let hit = hits[0][0];
    // The f32 rounding of a 4.6 unit distance (ulp 5e-7), where an f32 world position would be
    // off by up to 0.5.
    let tolerance = 1.0e-6;
    assert!((f64::from(hit.distance) - expected).abs() < tolerance, "{hit:?}");
    let point = DVec3::new(1.0e7 - (0.25f64 - 0.01).sqrt(), 0.1, 0.0);
    assert!((hit.point - point).length() < tolerance, "{hit:?}");
    assert!(
        hit.normal.distance(Vec3::new(-(0.24f32).sqrt() / 0.5, 0.2, 0.0)) < EXACT_TOLERANCE,
        "{hit:?}"
    );
}

#[test]
fn hits_are_world_space_through_the_body_pose() {
    let shapes = vec![Shape::Capsule(Capsule::new(1.0, 0.5).unwrap())];
    // The capsule lies along world X (rotated a quarter turn about Z), centred at (3, 0, 0).
    let rotation = Quat::from_rotation_z(std::f32::consts::FRAC_PI_2);
    let pose = Pose::new(Vec3::new(3.0, 0.0, 0.0), rotation);
    let bodies = [Body { shape: 0, pose }];
    let r = ray(DVec3::new(3.5, 5.0, 0.0), -Vec3::Y, None);
    let hit = CpuRaycaster::new(shapes).cast(&bodies, &[r], false).unwrap()[0][0];
    assert!((hit.distance - 4.5).abs() < EXACT_TOLERANCE, "{hit:?}");
    assert!(
        (hit.point - DVec3::new(3.5, 0.5, 0.0)).length() < f64::from(EXACT_TOLERANCE),
        "{hit:?}"
    );
    assert!(hit.normal.distance(Vec3::Y) < EXACT_TOLERANCE, "{hit:?}");
}

/// A rotation rounded to f32 is a few ulps off unit length; the world normal is renormalized
/// so that it is unit to rounding and an axis normal is the axis (examples/rays.json printed
/// -1.0000001 for a capsule turned a quarter about Z by the quaternion written in it).
#[test]
fn world_normals_are_unit_whatever_the_rotation_rounding() {
    let shapes = vec![
        Shape::Capsule(Capsule::new(0.5, 0.25).unwrap()),
        Shape::Sphere(Sphere::new(0.5).unwrap()),
    ];
    // As examples/rays.json writes it: one f32 step above FRAC_1_SQRT_2.
    #[allow(clippy::approx_constant)]
    let quarter = Quat::from_xyzw(0.0, 0.0, 0.7071068, 0.7071068);
    let bodies = [body(0, Vec3::new(8.0, 0.0, 0.0), quarter)];
    let r = ray(DVec3::new(-5.0, 0.0, 0.0), Vec3::X, None);
    let caster = CpuRaycaster::new(shapes);
    let hit = caster.cast(&bodies, &[r], false).unwrap()[0][0];
    assert_eq!(hit.normal, -Vec3::X, "{hit:?}");
    let mut rng = seeded_rng(41);
    let mut worst = 0.0f32;
    for i in 0..2000 {
        let rotation = random_rotation(&mut rng);
        let bodies = [body(i % 2, Vec3::ZERO, rotation)];
        let origin = random_direction(&mut rng).as_dvec3() * 3.0;
        let r = ray(origin, -origin.as_vec3(), None);
        for hit in &caster.cast(&bodies, &[r], false).unwrap()[0] {
            worst = worst.max((hit.normal.length() - 1.0).abs());
            assert!(hit.normal.abs().max_element() <= 1.0, "{hit:?}");
        }
    }
    assert!(worst <= f32::EPSILON, "a normal {worst} off unit length");
}

#[test]
fn bad_rays_and_bodies_are_errors() {
    use hullsat::raycast::RayError;
    assert_eq!(
        Ray::new(DVec3::ZERO, Vec3::ZERO, None),
        Err(RayError::BadDirection)
    );
    assert_eq!(
        Ray::new(DVec3::ZERO, Vec3::new(f32::NAN, 1.0, 0.0), None),
        Err(RayError::BadDirection)
    );
    assert_eq!(
        Ray::new(DVec3::new(1e300, 0.0, 0.0), Vec3::X, None),
        Err(RayError::BadOrigin)
    );
    assert_eq!(
        Ray::new(DVec3::ZERO, Vec3::X, Some(-1.0)),
        Err(RayError::BadMaxDistance(-1.0))
    );
    assert!(Ray::new(DVec3::ZERO, Vec3::X, Some(f32::NAN)).is_err());
    assert_eq!(
        Ray::new(DVec3::ZERO, Vec3::X * 1e-40, None).unwrap().direction(),
        Vec3::X
    );
    assert_eq!(
        Ray::new(DVec3::ZERO, Vec3::splat(3e38), None)
            .unwrap()
            .direction(),
        Vec3::splat(1.0 / 3f32.sqrt())
    );
    let cpu = CpuRaycaster::new(vec![Shape::Sphere(Sphere::new(1.0).unwrap())]);
    let err = cpu
        .cast(&[body(1, Vec3::ZERO, Quat::IDENTITY)], &[], false)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "bodies[0].shape: shape 1 does not exist (1 shapes)"
    );
    assert_eq!(
        cpu.cast(&[], &[ray(DVec3::ZERO, Vec3::X, None)], false).unwrap(),
        vec![vec![]]
    );
}

//! Robustness at every scale and position (issue 10, items 1, 2 and 7): bodies far from the
//! origin get the manifolds they get at the origin; configurations scaled across the supported
//! range get scaled answers; a capsule lying on a face keeps the face normal only within the
//! preference tolerance of an exact f64 reference; input outside the supported range is refused.

mod support;

use glam::{DVec3, Quat, Vec3};
use hullsat::constants::{AXIS_PREFERENCE_TOLERANCE, MAX_POSITION, MAX_SHAPE_SIZE, MIN_SHAPE_SIZE};
use hullsat::contact::collide_shapes;
use hullsat::scene::validate_batch;
use hullsat::{Body, Capsule, ConvexHull, CpuNarrowphase, Cuboid, Manifold, Pose, Shape, ShapeError, Sphere};
use rand::RngExt;
use rand_pcg::Pcg64;
use support::shapes::{Family, random_rotation, random_shape};
use support::{random_direction, seeded_rng};

/// A scene of `count` pairs (bodies 2i and 2i+1) of random hulls, boxes, slabs and needles,
/// each pair placed within a unit ball of the origin and overlapping, touching or a little
/// apart, and the shapes it uses.
fn pair_scene(rng: &mut Pcg64, count: usize) -> (Vec<Shape>, Vec<Body>) {
    let families = [Family::Hull, Family::Box, Family::Slab, Family::Needle];
    let mut shapes = Vec::new();
    let mut bodies = Vec::new();
    for i in 0..count {
        let a = random_shape(rng, families[i % 4]);
        let b = random_shape(rng, families[(i / 4) % 4]);
        let reach = a.bounding_radius() + b.bounding_radius();
        let centre = random_direction(rng) * rng.random_range(0.0..1.0);
        let offset = random_direction(rng) * reach * rng.random_range(0.2..0.8);
        for (shape, position) in [(a, centre), (b, centre + offset)] {
            bodies.push(Body {
                shape: shapes.len() as u32,
                pose: Pose::new(position, random_rotation(rng)),
            });
            shapes.push(shape);
        }
    }
    (shapes, bodies)
}

/// `bodies` translated by `offset` (world, f64).
fn moved_by(bodies: &[Body], offset: DVec3) -> Vec<Body> {
    bodies
        .iter()
        .map(|b| Body {
            shape: b.shape,
            pose: Pose::new(b.pose.translation + offset, b.pose.rotation),
        })
        .collect()
}

fn pairs_of(bodies: &[Body]) -> Vec<[u32; 2]> {
    (0..bodies.len() as u32 / 2).map(|i| [2 * i, 2 * i + 1]).collect()
}

#[test]
fn far_from_the_origin_gives_the_manifolds_found_at_the_origin() {
    let mut rng = seeded_rng(0xfa4);
    let (shapes, bodies) = pair_scene(&mut rng, 400);
    let pairs = pairs_of(&bodies);
    let margin = 0.05;
    let narrowphase = CpuNarrowphase::new(shapes);
    let at_origin = narrowphase.collide(&bodies, &pairs, margin).unwrap();
    let contacts = at_origin.iter().flatten().count();
    assert!(contacts > 150, "only {contacts} contacts: the scene tests little");
    // Integer and fractional offsets, all three axes, up to the millions (f32 resolution there:
    // 0.06, far coarser than the 1e-5 tolerance below).
    let offsets = [
        DVec3::splat(1.0e4),
        DVec3::new(1.0e5, -1.0e5, 0.5e5),
        DVec3::new(1.0e6 + 0.123_456_789, -3.0e6 / 7.0, 2.5e6),
    ];
    for offset in offsets {
        let moved = moved_by(&bodies, offset);
        let far = narrowphase.collide(&moved, &pairs, margin).unwrap();
        for (i, (near, far)) in at_origin.iter().zip(&far).enumerate() {
            let context = format!("pair {i} moved by {offset}");
            match (near, far) {
                (None, None) => {}
                (Some(near), Some(far)) => assert_same_manifold_moved(near, far, offset, &context),
                _ => panic!("{context}: verdict changed: {near:?} vs {far:?}"),
            }
        }
    }
}

#[test]
fn far_from_the_origin_the_gpu_keeps_its_precision() {
    // The GPU receives positions as two f32 parts (hi + lo) and differences them part by part:
    // with one f32 per coordinate its relative translations would be off by up to 0.06 at 1e6.
    let mut rng = seeded_rng(0xfa5);
    let (shapes, bodies) = pair_scene(&mut rng, 400);
    let pairs = pairs_of(&bodies);
    let margin = 0.05;
    let Some(mut gpu) = support::gpu_or_skip(&shapes) else {
        return;
    };
    let at_origin = CpuNarrowphase::new(shapes)
        .collide(&bodies, &pairs, margin)
        .unwrap();
    let tolerance = 1.0e-5;
    let (mut compared, mut matched) = (0, 0);
    for offset in [
        DVec3::new(1.0e6 + 0.123_456_789, -3.0e6 / 7.0, 2.5e6),
        DVec3::splat(-7.5e5),
    ] {
        let moved = moved_by(&bodies, offset);
        let far = gpu.collide(&moved, &pairs, margin).expect("the GPU runs");
        for (i, (near, far)) in at_origin.iter().zip(&far).enumerate() {
            let context = format!("pair {i} moved by {offset}: {near:?}\n vs {far:?}");
            match (near, far) {
                (None, None) => {}
                (Some(n), Some(f)) => {
                    compared += 1;
                    assert!((n.separation - f.separation).abs() <= tolerance, "{context}");
                    // Points named alike (ids may differ only at ties) lie where the CPU put
                    // them at the origin, moved by the offset.
                    for p in f.points() {
                        if let Some(q) = n.points().iter().find(|q| q.id == p.id) {
                            matched += 1;
                            let moved = (p.position - offset - q.position).length();
                            assert!(moved <= f64::from(tolerance), "{context}: point {p:?} vs {q:?}");
                        }
                    }
                }
                (Some(m), None) | (None, Some(m)) => {
                    assert!(
                        (m.separation - margin).abs() <= tolerance,
                        "{context}: verdict changed"
                    )
                }
            }
        }
    }
    assert!(
        compared > 300 && matched > 600,
        "only {compared} contacts, {matched} points compared"
    );
}

/// Panics unless `far` is `near` moved by `offset`: same separation, normal and ids; positions
/// moved (tolerance 1e-5 length units: the pairs here are of unit size).
#[track_caller]
fn assert_same_manifold_moved(near: &Manifold, far: &Manifold, offset: DVec3, context: &str) {
    let tolerance = 1.0e-5f32;
    assert!(
        (near.separation - far.separation).abs() <= tolerance
            && near.normal.distance(far.normal) <= tolerance
            && near.points().len() == far.points().len(),
        "{context}: {near:?}\n vs {far:?}"
    );
    for (n, f) in near.points().iter().zip(far.points()) {
        assert_eq!(n.id, f.id, "{context}: feature ids");
        assert!(
            (f.position - offset - n.position).length() <= f64::from(tolerance)
                && (n.depth - f.depth).abs() <= tolerance,
            "{context}: point {n:?} vs {f:?}"
        );
    }
}

/// A shape scaled by `s` (hulls rebuilt from scaled vertices).
fn scaled_shape(shape: &Shape, s: f32) -> Shape {
    match shape {
        Shape::Hull(h) => {
            let points: Vec<Vec3> = h.vertices().iter().map(|&v| v * s).collect();
            Shape::Hull(ConvexHull::from_points(&points).expect("a scaled hull builds"))
        }
        Shape::Cuboid(c) => Shape::Cuboid(Cuboid::new(c.half_extents() * s).unwrap()),
        _ => unreachable!("the scene has hulls and boxes only"),
    }
}

/// True when two hulls have the same faces (vertex loops), so feature ids mean the same.
fn same_topology(a: &Shape, b: &Shape) -> bool {
    let (a, b) = (a.as_hull().unwrap(), b.as_hull().unwrap());
    a.vertices().len() == b.vertices().len()
        && a.faces().len() == b.faces().len()
        && (0..a.faces().len()).all(|f| a.face_loop(f) == b.face_loop(f))
}

#[test]
fn scaled_configurations_give_scaled_answers() {
    // Hulls and boxes of size 0.125..2 within a unit ball, so every scale below keeps sizes
    // within 1e-6..1e12 and positions within ±1e12 (the supported range).
    let mut rng = seeded_rng(0x5ca1e);
    let families = [Family::Hull, Family::Box];
    let mut cases = Vec::new();
    while cases.len() < 300 {
        // Rebuilt from their own vertices, as every scaled copy is, so vertex order matches.
        let a = scaled_shape(&random_shape(&mut rng, families[cases.len() % 2]), 1.0);
        let b = scaled_shape(&random_shape(&mut rng, families[(cases.len() / 2) % 2]), 1.0);
        let reach = a.bounding_radius() + b.bounding_radius();
        let centre = random_direction(&mut rng) * rng.random_range(0.0..0.5);
        let offset = random_direction(&mut rng) * reach * rng.random_range(0.2..0.8);
        let pose_a = Pose::new(centre, random_rotation(&mut rng));
        let pose_b = Pose::new(centre + offset, random_rotation(&mut rng));
        cases.push((a, pose_a, b, pose_b));
    }
    let margin = 0.02;
    let (mut compared, mut ids_compared) = (0, 0);
    for s in [1.0e-5f32, 1.0e-2, 1.0e3, 1.0e6, 1.0e9, 4.0e11] {
        for (i, (a, pose_a, b, pose_b)) in cases.iter().enumerate() {
            let unit = collide_shapes(a, pose_a, b, pose_b, margin);
            let (sa, sb) = (scaled_shape(a, s), scaled_shape(b, s));
            let scale_pose = |p: &Pose| Pose::new(p.translation * f64::from(s), p.rotation);
            let scaled = collide_shapes(&sa, &scale_pose(pose_a), &sb, &scale_pose(pose_b), margin * s);
            let pair_scale = a.size() + b.size();
            let context = format!("case {i} scaled by {s:e}");
            match (&unit, &scaled) {
                (None, None) => {}
                (Some(u), Some(v)) => {
                    compared += 1;
                    let tolerance = 1.0e-5 * pair_scale;
                    assert!(
                        v.normal.is_finite() && (v.normal.length() - 1.0).abs() < 1e-5,
                        "{context}: normal {}",
                        v.normal
                    );
                    assert!(
                        (v.separation / s - u.separation).abs() <= tolerance,
                        "{context}: separation {} vs {}",
                        v.separation / s,
                        u.separation
                    );
                    // The normal may only differ where two axes are tied within the preference.
                    let normal_ok = u.normal.distance(v.normal) <= 1.0e-3;
                    assert!(
                        normal_ok
                            || (u.separation - v.separation / s).abs()
                                <= AXIS_PREFERENCE_TOLERANCE * pair_scale,
                        "{context}: normal {} vs {}",
                        v.normal,
                        u.normal
                    );
                    for p in v.points() {
                        assert!(p.position.is_finite() && p.depth.is_finite(), "{context}: {p:?}");
                    }
                    if normal_ok && same_topology(a, &sa) && same_topology(b, &sb) {
                        ids_compared += 1;
                        assert_eq!(u.points().len(), v.points().len(), "{context}: point count");
                        for (p, q) in u.points().iter().zip(v.points()) {
                            assert_eq!(p.id, q.id, "{context}: ids");
                            let moved = (q.position / f64::from(s) - p.position).length();
                            assert!(
                                moved <= f64::from(tolerance) && (q.depth / s - p.depth).abs() <= tolerance,
                                "{context}: point {p:?} vs {q:?} (scaled back)"
                            );
                        }
                    }
                }
                // Within rounding of the margin the verdict may differ.
                (Some(m), None) | (None, Some(m)) => {
                    let separation = if unit.is_some() {
                        m.separation
                    } else {
                        m.separation / s
                    };
                    assert!(
                        (separation - margin).abs() <= 1.0e-5 * pair_scale,
                        "{context}: verdict changed: {unit:?} vs {scaled:?}"
                    );
                }
            }
        }
    }
    assert!(
        compared > 1000 && ids_compared > 800,
        "{compared} compared, {ids_compared} with ids"
    );
}

/// Exact separation (f64) of a capsule (segment `p0..p1`, radius `r`) from the box of half
/// extents `h` at the origin: the largest separation over the SAT axes (box faces, segment ×
/// box edges) when they overlap, else the segment-to-box distance (golden-section search over
/// the segment, the point-box distance being convex along it), minus the radius.
fn capsule_box_separation(p0: DVec3, p1: DVec3, r: f64, h: DVec3) -> f64 {
    let point_box_distance = |p: DVec3| (p.abs() - h).max(DVec3::ZERO).length();
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    let g = (5f64.sqrt() - 1.0) / 2.0;
    for _ in 0..200 {
        let (x1, x2) = (hi - g * (hi - lo), lo + g * (hi - lo));
        if point_box_distance(p0.lerp(p1, x1)) <= point_box_distance(p0.lerp(p1, x2)) {
            hi = x2;
        } else {
            lo = x1;
        }
    }
    let distance = point_box_distance(p0.lerp(p1, 0.5 * (lo + hi)));
    if distance > 1e-12 {
        return distance - r;
    }
    let direction = p1 - p0;
    let mut axes = vec![DVec3::X, DVec3::Y, DVec3::Z];
    for edge in [DVec3::X, DVec3::Y, DVec3::Z] {
        let c = direction.cross(edge);
        if c.length() > 1e-9 * direction.length() {
            axes.push(c.normalize());
        }
    }
    axes.iter()
        .map(|&n| {
            // Separation along ±n: the gap between the box's extent and the segment's.
            let box_extent = (n.abs() * h).element_sum();
            let (s0, s1) = (n.dot(p0), n.dot(p1));
            let (seg_min, seg_max) = (s0.min(s1), s0.max(s1));
            (seg_min - box_extent).max(-box_extent - seg_max)
        })
        .fold(f64::NEG_INFINITY, f64::max)
        - r
}

#[test]
fn capsule_lying_on_a_face_keeps_the_face_normal_only_within_the_preference() {
    let half = Vec3::new(1.0, 0.5, 0.75);
    let cuboid = Shape::Cuboid(Cuboid::new(half).unwrap());
    let mut rng = seeded_rng(0xca95);
    let mut two_point = 0;
    for i in 0..2000 {
        let capsule = Capsule::new(rng.random_range(0.3..1.2), rng.random_range(0.05..0.3)).unwrap();
        // Lying on the top face within 4 degrees of flat: half the cases anywhere over it or past
        // its rim, half across the rim at x = 1 with the outer end tilted down past it, where
        // the closest features are the rim edge and the face normal is not the true normal.
        let tilt = rng.random_range(-4.0f32..4.0).to_radians();
        let (heading, over) = if i % 2 == 0 {
            let over = Vec3::new(rng.random_range(-1.6..1.6), 0.0, rng.random_range(-1.3..1.3));
            (rng.random_range(0.0..std::f32::consts::TAU), over)
        } else {
            let over = Vec3::new(
                1.0 + rng.random_range(-0.2..1.0) * capsule.half_height,
                0.0,
                rng.random_range(-0.7..0.7),
            );
            (rng.random_range(-0.1..0.1), over)
        };
        let rotation =
            Quat::from_rotation_y(heading) * Quat::from_rotation_z(std::f32::consts::FRAC_PI_2 + tilt);
        let height = half.y + capsule.radius + rng.random_range(-0.05..0.05);
        let pose_capsule = Pose::new(over + Vec3::Y * height, rotation);
        let margin = 0.06;
        let Some(m) = collide_shapes(
            &Shape::Capsule(capsule),
            &pose_capsule,
            &cuboid,
            &Pose::IDENTITY,
            margin,
        ) else {
            continue;
        };
        let [p0, p1] = capsule.segment().map(|p| pose_capsule.transform_point(p));
        let r = f64::from(capsule.radius);
        let exact = capsule_box_separation(p0, p1, r, half.as_dvec3());
        let scale = f64::from(half.length() + capsule.half_height + capsule.radius);
        let context = format!("case {i}: {m:?}, exact separation {exact}");
        assert!(
            (f64::from(m.separation) - exact).abs() <= 1e-5 * scale,
            "{context}"
        );
        // Along the reported normal (from the capsule toward the box) the shapes are apart by
        // at most the true separation, and at least the true separation minus the preference.
        let n = -m.normal.as_dvec3();
        let box_extent = (n.abs() * half.as_dvec3()).element_sum();
        let along = n.dot(p0).min(n.dot(p1)) - box_extent - r;
        assert!(
            along <= exact + 1e-5 * scale
                && along >= exact - f64::from(AXIS_PREFERENCE_TOLERANCE) * scale - 1e-5 * scale,
            "{context}: separation along the normal {along}"
        );
        if m.points().len() == 2 {
            two_point += 1;
        }
    }
    assert!(
        two_point > 200,
        "only {two_point} two-point contacts: the case is barely tested"
    );
}

#[test]
fn input_outside_the_supported_range_is_refused() {
    assert!(matches!(Sphere::new(3.0e38), Err(ShapeError::OutOfRange { .. })));
    assert!(matches!(
        Sphere::new(MAX_SHAPE_SIZE * 2.0),
        Err(ShapeError::OutOfRange { .. })
    ));
    assert!(matches!(
        Cuboid::new(Vec3::splat(MIN_SHAPE_SIZE * 0.5)),
        Err(ShapeError::OutOfRange { .. })
    ));
    assert!(Capsule::new(MIN_SHAPE_SIZE, MAX_SHAPE_SIZE).is_ok());
    let shapes = [Shape::Sphere(Sphere::new(1.0).unwrap())];
    let at = |x: f64| Body {
        shape: 0,
        pose: Pose::new(DVec3::new(x, 0.0, 0.0), Quat::IDENTITY),
    };
    assert!(validate_batch(&shapes, &[at(MAX_POSITION), at(-MAX_POSITION)], &[[0, 1]], 0.0).is_ok());
    let error = validate_batch(&shapes, &[at(0.0), at(2.0e38)], &[[0, 1]], 0.0).unwrap_err();
    assert_eq!(error.path, "bodies[1].position");
    let error = validate_batch(&shapes, &[at(0.0), at(1.0)], &[[0, 1]], 3.0e38).unwrap_err();
    assert_eq!(error.path, "margin");
    let huge = [Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::Z * 2.0e12];
    assert!(matches!(
        ConvexHull::from_points(&huge),
        Err(hullsat::HullError::OutOfRange(_))
    ));
}

#[test]
fn pair_order_never_changes_the_verdict_even_exactly_at_the_margin() {
    // Boxes moved until they touch (separation within rounding of 0), tested at margin 0 as
    // [0, 1] and as [1, 0]: the batch must give the same verdict and the swapped manifold.
    let mut rng = seeded_rng(0x0de5);
    let cuboid = Shape::Cuboid(Cuboid::new(Vec3::new(0.5, 0.3, 0.7)).unwrap());
    let narrowphase = CpuNarrowphase::new(vec![cuboid.clone()]);
    let (mut touching, mut order_dependent_before) = (0, 0);
    for i in 0..2000 {
        let pose_a = Pose::new(random_direction(&mut rng), random_rotation(&mut rng));
        let mut pose_b = Pose::new(
            pose_a.translation + random_direction(&mut rng).as_dvec3(),
            random_rotation(&mut rng),
        );
        // Two Newton-like steps along the contact normal bring the separation to rounding level.
        for _ in 0..2 {
            if let Some(m) = collide_shapes(&cuboid, &pose_a, &cuboid, &pose_b, 10.0) {
                pose_b.translation -= (m.normal * m.separation).as_dvec3();
            }
        }
        let bodies = [
            Body {
                shape: 0,
                pose: pose_a,
            },
            Body {
                shape: 0,
                pose: pose_b,
            },
        ];
        let results = narrowphase.collide(&bodies, &[[0, 1], [1, 0]], 0.0).unwrap();
        let context = format!("case {i}: {results:?}");
        match (&results[0], &results[1]) {
            (Some(ab), Some(ba)) => {
                touching += 1;
                assert_eq!(ba, &ab.swapped(), "{context}");
            }
            (None, None) => {}
            _ => panic!("{context}: the verdict depends on the order"),
        }
        // What a single-pair call in each order gives (they run in different frames).
        let direct = collide_shapes(&cuboid, &pose_a, &cuboid, &pose_b, 0.0).is_some();
        let reverse = collide_shapes(&cuboid, &pose_b, &cuboid, &pose_a, 0.0).is_some();
        order_dependent_before += usize::from(direct != reverse);
    }
    assert!(touching > 200, "only {touching} touching pairs");
    // The configurations really are at the threshold: computed in each body's own frame, some
    // verdicts differ (this is what the batch's canonical order removes).
    assert!(
        order_dependent_before > 0,
        "no configuration was decided by rounding"
    );
}

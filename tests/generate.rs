//! Seeded particle scene generation.

mod support;

use hullsat::broadphase::candidate_pairs;
use hullsat::generate::{
    BOX_LIBRARY_SIZE, CAPSULE_LIBRARY_SIZE, CYLINDER_LIBRARY_SIZE, HULL_LIBRARY_SIZE, ParticleSceneConfig,
    SPHERE_LIBRARY_SIZE, ShapeMix, container_half_size, generate_particle_scene,
    generate_particle_scene_with_pairs, move_bodies,
};
use hullsat::scene::validate_batch;
use hullsat::{Scene, Shape};

/// Boxes, spheres and capsules in equal measure (no hulls).
const PRIMITIVES: ShapeMix = ShapeMix {
    boxes: 1.0,
    hulls: 0.0,
    spheres: 1.0,
    capsules: 1.0,
    cylinders: 0.0,
    compounds: 0.0,
    hull_vertices: [8, 8],
};

fn config(bodies: usize, seed: u64, density: f32, mix: ShapeMix) -> ParticleSceneConfig {
    ParticleSceneConfig {
        bodies,
        seed,
        density,
        mix,
        margin: 0.01,
    }
}

fn radii(scene: &Scene) -> Vec<f32> {
    scene
        .bodies
        .iter()
        .map(|b| scene.shapes[b.shape as usize].bounding_radius())
        .collect()
}

#[test]
fn same_seed_same_scene_and_different_seeds_differ() {
    let a = generate_particle_scene(&config(500, 7, 0.3, PRIMITIVES)).unwrap();
    let b = generate_particle_scene(&config(500, 7, 0.3, PRIMITIVES)).unwrap();
    assert_eq!(a, b);
    let c = generate_particle_scene(&config(500, 8, 0.3, PRIMITIVES)).unwrap();
    assert_ne!(a.shapes, c.shapes);
    let moved = a
        .bodies
        .iter()
        .zip(&c.bodies)
        .filter(|(x, y)| x.pose != y.pose)
        .count();
    assert_eq!(moved, 500, "every body placed differently");
}

#[test]
fn scene_has_the_requested_bodies_and_valid_shapes() {
    let config = config(3000, 1, 0.3, PRIMITIVES);
    let scene = generate_particle_scene(&config).unwrap();
    assert_eq!(scene.bodies.len(), 3000);
    assert_eq!(scene.pairs, None);
    assert_eq!(scene.margin, config.margin);
    assert_eq!(
        scene.shapes.len(),
        BOX_LIBRARY_SIZE + SPHERE_LIBRARY_SIZE + CAPSULE_LIBRARY_SIZE
    );
    // Poses already unit and finite: validation changes nothing.
    let checked = validate_batch(&scene.shapes, &scene.bodies, &[], scene.margin).unwrap();
    for (body, checked) in scene.bodies.iter().zip(&checked) {
        assert!((body.pose.rotation.length() - 1.0).abs() < 1e-5);
        assert_eq!(body.shape, checked.shape);
    }
    // Equal weights: each kind gets about a third of the bodies.
    let share = |kind: fn(&Shape) -> bool| {
        let n = scene
            .bodies
            .iter()
            .filter(|b| kind(&scene.shapes[b.shape as usize]))
            .count();
        n as f32 / 3000.0
    };
    for (name, s) in [
        ("boxes", share(|s| matches!(s, Shape::Cuboid(_)))),
        ("spheres", share(|s| matches!(s, Shape::Sphere(_)))),
        ("capsules", share(|s| matches!(s, Shape::Capsule(_)))),
    ] {
        assert!((s - 1.0 / 3.0).abs() < 0.05, "{name}: share {s}");
    }
    // Every library shape is used by some body.
    for shape in 0..scene.shapes.len() as u32 {
        assert!(
            scene.bodies.iter().any(|b| b.shape == shape),
            "shape {shape} unused"
        );
    }
}

#[test]
fn lesson_preset_makes_boxes_spheres_and_cylinders_that_collide() {
    let scene = generate_particle_scene(&config(1500, 3, 0.3, ShapeMix::preset("lesson").unwrap())).unwrap();
    assert_eq!(
        scene.shapes.len(),
        BOX_LIBRARY_SIZE + SPHERE_LIBRARY_SIZE + CYLINDER_LIBRARY_SIZE
    );
    let cylinders: Vec<u32> = (0..scene.bodies.len() as u32)
        .filter(|&i| {
            matches!(
                scene.shapes[scene.bodies[i as usize].shape as usize],
                Shape::Cylinder(_)
            )
        })
        .collect();
    let share = cylinders.len() as f32 / 1500.0;
    assert!((share - 1.0 / 3.0).abs() < 0.05, "cylinder share {share}");
    // Radii within the particles' documented 0.3 to 0.8, and cylinders touching others.
    assert!(radii(&scene).iter().all(|r| (0.3..=0.8).contains(r)));
    let pairs = candidate_pairs(&scene.shapes, &scene.bodies, scene.margin);
    let manifolds = hullsat::CpuNarrowphase::new(scene.shapes.clone())
        .collide(&scene.bodies, &pairs, scene.margin)
        .unwrap();
    let cylinder_contacts = pairs
        .iter()
        .zip(&manifolds)
        .filter(|(pair, m)| m.is_some() && pair.iter().any(|b| cylinders.contains(b)))
        .count();
    assert!(cylinder_contacts > 100, "{cylinder_contacts} cylinder contacts");
    assert_eq!(ShapeMix::preset("Cylinder"), Some(ShapeMix::CYLINDER));
}

#[test]
fn box_preset_makes_only_boxes() {
    let scene = generate_particle_scene(&config(200, 2, 0.3, ShapeMix::BOX)).unwrap();
    assert_eq!(scene.shapes.len(), BOX_LIBRARY_SIZE);
    assert!(scene.shapes.iter().all(|s| matches!(s, Shape::Cuboid(_))));
}

#[test]
fn bodies_lie_inside_the_container() {
    for (bodies, density) in [(1, 0.3), (10, 0.9), (2000, 0.3), (2000, 0.05)] {
        let scene = generate_particle_scene(&config(bodies, 3, density, PRIMITIVES)).unwrap();
        let radii = radii(&scene);
        let half = container_half_size(&radii, density);
        for (body, r) in scene.bodies.iter().zip(&radii) {
            let reach = body.pose.translation.as_vec3().abs().max_element() + r;
            // A single body bigger than its container sits at the centre instead.
            assert!(
                reach <= half.max(*r) * (1.0 + 1e-6),
                "reach {reach} > half side {half}"
            );
        }
    }
}

#[test]
fn packing_density_is_as_asked() {
    for density in [0.05, 0.3, 0.5] {
        let scene = generate_particle_scene(&config(5000, 4, density, PRIMITIVES)).unwrap();
        // Measure the cube the bounding spheres actually span, independently of the generator.
        let mut lo = f32::INFINITY;
        let mut hi = f32::NEG_INFINITY;
        let mut ball_volume = 0.0;
        for (body, r) in scene.bodies.iter().zip(radii(&scene)) {
            lo = lo.min((body.pose.translation.as_vec3() - r).min_element());
            hi = hi.max((body.pose.translation.as_vec3() + r).max_element());
            ball_volume += 4.0 / 3.0 * std::f32::consts::PI * r.powi(3);
        }
        let measured = ball_volume / (hi - lo).powi(3);
        // The spanned cube is inside the container and, with 5000 bodies, nearly all of it.
        assert!(
            measured >= density * 0.999 && measured <= density * 1.1,
            "asked {density}, measured {measured}"
        );
    }
}

#[test]
fn scene_with_pairs_holds_the_broadphase_pairs() {
    let scene = generate_particle_scene_with_pairs(&config(1000, 5, 0.3, PRIMITIVES)).unwrap();
    let pairs = scene.pairs.clone().unwrap();
    assert_eq!(pairs, candidate_pairs(&scene.shapes, &scene.bodies, scene.margin));
    assert!(
        pairs.len() > 500,
        "a dense scene has many neighbours: {}",
        pairs.len()
    );
    validate_batch(&scene.shapes, &scene.bodies, &pairs, scene.margin).unwrap();
}

#[test]
fn bad_configurations_are_rejected_by_field() {
    let good = config(10, 0, 0.3, PRIMITIVES);
    let cases = [
        (ParticleSceneConfig { density: 0.0, ..good }, "density"),
        (
            ParticleSceneConfig {
                density: f32::NAN,
                ..good
            },
            "density",
        ),
        (ParticleSceneConfig { density: 1.5, ..good }, "density"),
        (ParticleSceneConfig { margin: -1.0, ..good }, "margin"),
        (
            ParticleSceneConfig {
                margin: f32::INFINITY,
                ..good
            },
            "margin",
        ),
        (
            ParticleSceneConfig {
                mix: ShapeMix {
                    spheres: -1.0,
                    ..PRIMITIVES
                },
                ..good
            },
            "mix.spheres",
        ),
        (
            ParticleSceneConfig {
                mix: ShapeMix {
                    boxes: 0.0,
                    spheres: 0.0,
                    capsules: 0.0,
                    cylinders: 0.0,
                    ..PRIMITIVES
                },
                ..good
            },
            "mix",
        ),
        (
            ParticleSceneConfig {
                mix: ShapeMix::hulls_only(3),
                ..good
            },
            "mix.hull_vertices",
        ),
        (
            ParticleSceneConfig {
                mix: ShapeMix {
                    hull_vertices: [40, 20],
                    ..ShapeMix::MIXED
                },
                ..good
            },
            "mix.hull_vertices",
        ),
    ];
    for (bad, path) in cases {
        let error = generate_particle_scene(&bad).unwrap_err();
        assert_eq!(error.path, path, "{error}");
    }
}

#[test]
fn presets_by_name() {
    assert_eq!(ShapeMix::preset("Hull32"), Some(ShapeMix::HULL32));
    assert_eq!(ShapeMix::preset("mixed"), Some(ShapeMix::MIXED));
    assert_eq!(ShapeMix::preset("box"), Some(ShapeMix::BOX));
    assert_eq!(ShapeMix::preset("hull9"), None);
}

#[test]
fn hull_presets_have_the_requested_vertex_counts() {
    for (mix, vertices) in [
        (ShapeMix::HULL8, 8),
        (ShapeMix::HULL32, 32),
        (ShapeMix::HULL64, 64),
    ] {
        let scene = generate_particle_scene(&config(100, 6, 0.3, mix)).unwrap();
        assert_eq!(scene.shapes.len(), HULL_LIBRARY_SIZE);
        for shape in &scene.shapes {
            let Shape::Hull(hull) = shape else {
                panic!("a hull preset made {shape:?}")
            };
            assert_eq!(hull.vertices().len(), vertices);
        }
    }
}

#[test]
fn mixed_preset_makes_every_kind() {
    let scene = generate_particle_scene(&config(2000, 7, 0.3, ShapeMix::MIXED)).unwrap();
    let count = |kind: fn(&Shape) -> bool| scene.shapes.iter().filter(|s| kind(s)).count();
    assert_eq!(count(|s| matches!(s, Shape::Cuboid(_))), BOX_LIBRARY_SIZE);
    assert_eq!(count(|s| matches!(s, Shape::Sphere(_))), SPHERE_LIBRARY_SIZE);
    assert_eq!(count(|s| matches!(s, Shape::Capsule(_))), CAPSULE_LIBRARY_SIZE);
    let hull_sizes: Vec<usize> = scene
        .shapes
        .iter()
        .filter_map(|s| s.as_hull())
        .map(|h| h.vertices().len())
        .collect();
    // Boxes are hulls too (8 vertices); the 16 library hulls have 8 to 64.
    assert_eq!(hull_sizes.len(), BOX_LIBRARY_SIZE + HULL_LIBRARY_SIZE);
    assert!(hull_sizes.iter().all(|n| (8..=64).contains(n)), "{hull_sizes:?}");
    assert!(generate_particle_scene(&config(2000, 7, 0.3, ShapeMix::MIXED)).unwrap() == scene);
    let pairs = candidate_pairs(&scene.shapes, &scene.bodies, scene.margin);
    validate_batch(&scene.shapes, &scene.bodies, &pairs, scene.margin).unwrap();
}

#[test]
fn move_bodies_stays_within_its_bounds_and_is_the_same_motion_per_seed_and_frame() {
    let scene = generate_particle_scene(&config(500, 4, 0.3, ShapeMix::MIXED)).unwrap();
    let (max_shift, max_angle) = (1e-3, 0.1f32.to_radians());
    let moved = |seed, frame| {
        let mut bodies = scene.bodies.clone();
        move_bodies(&scene.shapes, &mut bodies, max_shift, max_angle, seed, frame);
        bodies
    };
    let once = moved(7, 3);
    assert_eq!(once, moved(7, 3));
    assert_ne!(once, moved(7, 4));
    assert_ne!(once, moved(8, 3));
    let (mut longest, mut widest) = (0.0f32, 0.0f32);
    for (before, after) in scene.bodies.iter().zip(&once) {
        let size = scene.shapes[before.shape as usize].size();
        let shift = (after.pose.translation - before.pose.translation).length() as f32 / size;
        // The turn's vector part is sin(angle / 2) long (precise for small angles, unlike acos).
        let turn = after.pose.rotation * before.pose.rotation.conjugate();
        let angle = 2.0 * turn.xyz().length().min(1.0).asin();
        assert!(shift <= max_shift * 1.000_01, "{shift}");
        assert!(angle <= max_angle + 1e-6, "{angle}");
        (longest, widest) = (longest.max(shift), widest.max(angle));
    }
    // Drawn across the range: 500 bodies reach well past half of each bound.
    assert!(
        longest > 0.5 * max_shift && widest > 0.5 * max_angle,
        "{longest}, {widest}"
    );
}

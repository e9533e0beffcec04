//! `ContactCache` against cold calls over moving scenes: every frame, every pair, the same
//! verdict, normal, points and ids as a cold `CpuNarrowphase` call, and a separation at most the documented
//! tolerance (face preference × scale) below the cold one; the cache's fast paths do occur.

use hullsat::broadphase::candidate_pairs;
use hullsat::constants::{AXIS_PREFERENCE_TOLERANCE, pair_scale};
use hullsat::generate::{ParticleSceneConfig, ShapeMix, generate_particle_scene, move_bodies};
use hullsat::{ContactCache, CpuNarrowphase, Manifold};

/// Runs `frames` frames of scene `mix` with per-frame motion `max_shift` (× size) and
/// `max_angle` (radians), checking the cache against cold calls; returns the cache's stats.
fn run(mix: ShapeMix, frames: u64, max_shift: f32, max_angle: f32) -> hullsat::cache::CacheStats {
    let config = ParticleSceneConfig {
        bodies: 400,
        seed: 5,
        density: 0.3,
        mix,
        margin: 0.02,
    };
    let mut scene = generate_particle_scene(&config).unwrap();
    let margin = scene.margin;
    let pairs = candidate_pairs(&scene.shapes, &scene.bodies, margin + 0.1);
    let narrowphase = CpuNarrowphase::new(scene.shapes.clone());
    let mut cache = ContactCache::new();
    for frame in 0..frames {
        let cached = cache
            .collide_batch(&narrowphase, &scene.bodies, &pairs, margin)
            .unwrap();
        let cold = narrowphase
            .collide_single_thread(&scene.bodies, &pairs, margin)
            .unwrap();
        for ((&[a, b], got), cold) in pairs.iter().zip(&cached).zip(&cold) {
            let (body_a, body_b) = (&scene.bodies[a as usize], &scene.bodies[b as usize]);
            let (shape_a, shape_b) = (
                &scene.shapes[body_a.shape as usize],
                &scene.shapes[body_b.shape as usize],
            );
            let tolerance = AXIS_PREFERENCE_TOLERANCE * pair_scale(shape_a.size(), shape_b.size());
            check(got, cold, tolerance, &format!("frame {frame}, pair [{a}, {b}]"));
        }
        move_bodies(&scene.shapes, &mut scene.bodies, max_shift, max_angle, 9, frame);
    }
    cache.stats()
}

#[track_caller]
fn check(got: &Option<Manifold>, cold: &Option<Manifold>, tolerance: f32, what: &str) {
    match (got, cold) {
        (None, None) => {}
        (Some(g), Some(c)) => {
            assert_eq!(g.normal, c.normal, "{what}");
            assert_eq!(g.points(), c.points(), "{what}");
            let below = c.separation - g.separation;
            assert!(
                (0.0..=tolerance).contains(&below),
                "{what}: separation {} vs cold {}",
                g.separation,
                c.separation
            );
        }
        _ => panic!("{what}: cached {got:?} vs cold {cold:?}"),
    }
}

#[test]
fn cache_matches_cold_calls_under_the_benchmark_motion() {
    // 0.1% of the size and 0.1 degree per frame, as `hullsat bench --frames`.
    for mix in [ShapeMix::BOX, ShapeMix::HULL32, ShapeMix::MIXED] {
        let stats = run(mix, 12, 1e-3, 0.1f32.to_radians());
        eprintln!("{mix:?}: {stats:?}");
        assert!(stats.skipped + stats.remeasured > 0, "{mix:?}: {stats:?}");
    }
}

#[test]
fn cache_matches_cold_calls_for_resting_bodies() {
    // Bodies that barely move (a settled stack): the face-only path carries the contacts.
    let stats = run(ShapeMix::HULL32, 12, 1e-6, 1e-6);
    eprintln!("resting: {stats:?}");
    assert!(stats.faces_only > stats.cold / 4, "{stats:?}");
    assert!(stats.skipped > 0, "{stats:?}");
}

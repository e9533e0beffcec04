//! `ContactCache` against cold calls over moving scenes: every frame, every pair, the same
//! verdict as a cold `CpuNarrowphase` call and a separation at most the documented drift
//! (`CACHE_CONTACT_DRIFT` × scale) below the cold one; where the cache kept the cold call's axis
//! (the same normal), the same points and ids bit for bit; the cache's fast paths do occur.

use hullsat::broadphase::candidate_pairs;
use hullsat::constants::{CACHE_CONTACT_DRIFT, pair_scale};
use hullsat::generate::{ParticleSceneConfig, ShapeMix, generate_particle_scene, move_bodies};
use hullsat::{ContactCache, CpuNarrowphase, Manifold, Scene};

/// How a run's cached manifolds compared with the cold ones.
#[derive(Debug, Default)]
struct Comparison {
    /// Manifolds on both paths.
    contacts: usize,
    /// Of those, on another axis than the cold call's (a different normal).
    other_axis: usize,
}

/// A particle scene of `bodies` bodies of `mix` (margin 0.02) and its candidate pairs with 0.1
/// to spare, so pairs that come within the margin as bodies move are listed from the start.
fn moving_scene(mix: ShapeMix, bodies: usize, seed: u64) -> (Scene, Vec<[u32; 2]>, CpuNarrowphase) {
    let config = ParticleSceneConfig {
        bodies,
        seed,
        density: 0.3,
        mix,
        margin: 0.02,
    };
    let scene = generate_particle_scene(&config).unwrap();
    let pairs = candidate_pairs(&scene.shapes, &scene.bodies, scene.margin + 0.1);
    let narrowphase = CpuNarrowphase::new(scene.shapes.clone());
    (scene, pairs, narrowphase)
}

/// Runs `frames` frames of scene `mix` with per-frame motion `max_shift` (× size) and
/// `max_angle` (radians), checking the cache against cold calls; returns the cache's stats.
fn run(mix: ShapeMix, frames: u64, max_shift: f32, max_angle: f32) -> hullsat::cache::CacheStats {
    let (mut scene, pairs, narrowphase) = moving_scene(mix, 400, 5);
    let margin = scene.margin;
    let (mut cache, mut parallel_cache) = (ContactCache::new(), ContactCache::new());
    let mut comparison = Comparison::default();
    for frame in 0..frames {
        let cached = cache
            .collide_batch(&narrowphase, &scene.bodies, &pairs, margin)
            .unwrap();
        // The parallel batch answers every pair exactly as the single-threaded one.
        let parallel = parallel_cache
            .collide_batch_parallel(&narrowphase, &scene.bodies, &pairs, margin)
            .unwrap();
        assert_eq!(parallel, cached, "frame {frame}");
        let cold = narrowphase
            .collide_single_thread(&scene.bodies, &pairs, margin)
            .unwrap();
        for ((&[a, b], got), cold) in pairs.iter().zip(&cached).zip(&cold) {
            let (body_a, body_b) = (&scene.bodies[a as usize], &scene.bodies[b as usize]);
            let (shape_a, shape_b) = (
                &scene.shapes[body_a.shape as usize],
                &scene.shapes[body_b.shape as usize],
            );
            let scale = pair_scale(shape_a.size(), shape_b.size());
            let what = format!("frame {frame}, pair [{a}, {b}]");
            check(got, cold, scale, &mut comparison, &what);
        }
        move_bodies(&scene.shapes, &mut scene.bodies, max_shift, max_angle, 9, frame);
    }
    eprintln!("{mix:?}: {comparison:?}");
    assert_eq!(parallel_cache.stats(), cache.stats());
    // The cache keeps a cached axis only while another one could be deeper by the drift: most
    // contacts stay on the cold call's axis (measured: 0 to 3% move under the benchmark's
    // motion), the point of a cache that must not change answers more than it saves.
    assert!(
        comparison.other_axis * 10 <= comparison.contacts,
        "{mix:?}: {comparison:?}"
    );
    cache.stats()
}

/// One pair's cached result against the cold one (`scale`: the pair's scale, length units).
#[track_caller]
fn check(
    got: &Option<Manifold>,
    cold: &Option<Manifold>,
    scale: f32,
    comparison: &mut Comparison,
    what: &str,
) {
    match (got, cold) {
        (None, None) => {}
        (Some(g), Some(c)) => {
            comparison.contacts += 1;
            if g.normal == c.normal {
                assert_eq!(g.points(), c.points(), "{what}");
            } else {
                comparison.other_axis += 1;
                assert!((g.normal.length() - 1.0).abs() < 1e-5, "{what}: {g:?}");
            }
            // The cached axis's gap is at most the SAT value (to rounding: the box SAT's closed
            // forms against the hull formulas), and at least the drift below it.
            let below = c.separation - g.separation;
            assert!(
                (-1e-6 * scale..=CACHE_CONTACT_DRIFT * scale).contains(&below),
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
        assert!(
            stats.skipped + stats.remeasured > 0 && stats.reused > 0,
            "{mix:?}: {stats:?}"
        );
    }
}

#[test]
fn cache_matches_cold_calls_for_resting_bodies() {
    // Bodies that barely move (a settled stack): contacts are rebuilt on their cached axes.
    let stats = run(ShapeMix::HULL32, 12, 1e-6, 1e-6);
    eprintln!("resting: {stats:?}");
    assert!(stats.reused > stats.cold, "{stats:?}");
    assert!(stats.skipped > 0, "{stats:?}");
}

#[test]
fn entries_follow_their_pairs_when_the_batch_order_changes() {
    // One cache sees the pairs in the same order every frame (entries found by position), the
    // other in a new order every frame (found through the hash index), alternating its single-
    // and multi-threaded batches: both hold the same facts, so they answer every pair alike.
    let (mut scene, pairs, narrowphase) = moving_scene(ShapeMix::MIXED, 300, 11);
    let margin = scene.margin;
    let (mut in_order, mut shuffled) = (ContactCache::new(), ContactCache::new());
    for frame in 0..8u64 {
        // A different order every frame (a multiplicative permutation of the positions), with
        // some pairs given as [b, a].
        let n = pairs.len() as u64;
        let step = (frame * 2 + 1) * 7919 % n;
        let step = if gcd(step, n) == 1 { step } else { 1 };
        let order: Vec<usize> = (0..n).map(|i| ((i * step + frame) % n) as usize).collect();
        let permuted: Vec<[u32; 2]> = order
            .iter()
            .map(|&i| {
                let [a, b] = pairs[i];
                if i % 3 == 0 { [b, a] } else { [a, b] }
            })
            .collect();
        let expected = in_order
            .collide_batch(&narrowphase, &scene.bodies, &pairs, margin)
            .unwrap();
        let got = if frame % 2 == 0 {
            shuffled.collide_batch(&narrowphase, &scene.bodies, &permuted, margin)
        } else {
            shuffled.collide_batch_parallel(&narrowphase, &scene.bodies, &permuted, margin)
        }
        .unwrap();
        for (k, &i) in order.iter().enumerate() {
            let swapped = permuted[k] != pairs[i];
            let got = if swapped {
                got[k].map(|m| m.swapped())
            } else {
                got[k]
            };
            assert_eq!(got, expected[i], "frame {frame}, pair {:?}", pairs[i]);
        }
        move_bodies(
            &scene.shapes,
            &mut scene.bodies,
            1e-3,
            0.1f32.to_radians(),
            3,
            frame,
        );
    }
    assert_eq!(shuffled.stats(), in_order.stats());
    assert!(in_order.stats().reused > 0, "{:?}", in_order.stats());
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

#[test]
fn entries_are_not_reused_when_shapes_change() {
    use glam::Vec3;
    use hullsat::{Body, Cuboid, Pose, Shape};
    let boxes = |small: f32, large: f32| {
        CpuNarrowphase::new(vec![
            Shape::Cuboid(Cuboid::new(Vec3::splat(small)).unwrap()),
            Shape::Cuboid(Cuboid::new(Vec3::splat(large)).unwrap()),
        ])
    };
    let narrowphase = boxes(0.5, 0.48);
    // Two unit boxes overlapping by 0.1 along x, then body 1 becomes the other box in place:
    // an entry kept would be reused (its bound still holds the new overlap), a cold call runs.
    let mut bodies = vec![
        Body {
            shape: 0,
            pose: Pose::IDENTITY,
        },
        Body {
            shape: 0,
            pose: Pose::from_translation(Vec3::new(0.9, 0.0, 0.0)),
        },
    ];
    let pairs = [[0, 1]];
    let mut cache = ContactCache::new();
    let cold = |narrowphase: &CpuNarrowphase, bodies: &[Body]| {
        narrowphase.collide_single_thread(bodies, &pairs, 0.0).unwrap()
    };
    for _ in 0..2 {
        let cached = cache.collide_batch(&narrowphase, &bodies, &pairs, 0.0).unwrap();
        assert_eq!(cached, cold(&narrowphase, &bodies));
    }
    assert_eq!(cache.stats().reused, 1, "{:?}", cache.stats());
    bodies[1].shape = 1;
    let cached = cache.collide_batch(&narrowphase, &bodies, &pairs, 0.0).unwrap();
    assert_eq!(cached, cold(&narrowphase, &bodies));
    assert!((cached[0].unwrap().separation + 0.08).abs() < 1e-5, "{cached:?}");
    assert_eq!(cache.stats().reused, 1, "{:?}", cache.stats());
    // Another narrowphase whose shape 1 is smaller, overlapping by 0.06: the entries made with
    // the first are dropped (a kept entry would be reused).
    let other = boxes(0.5, 0.46);
    let cached = cache.collide_batch(&other, &bodies, &pairs, 0.0).unwrap();
    assert_eq!(cached, cold(&other, &bodies));
    assert_eq!(cache.stats().reused, 1, "{:?}", cache.stats());
}

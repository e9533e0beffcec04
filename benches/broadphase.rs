//! The CPU broadphase (`candidate_pairs`) on `hullsat demo`'s scene: seeded mixed shapes,
//! density 0.3, margin 0, about 1.4 pairs a body. Ids `broadphase/<bodies>`, throughput in
//! bodies (criterion's `thrpt` middle value is bodies per second). `HULLSAT_BENCH_SIZES` (e.g.
//! `100000`) picks the sizes; by default 100k and 1M bodies. Each size prints its pair count
//! and a digest of the pairs, which a pure speedup leaves unchanged. Its memory is counted in
//! tests/broadphase_memory.rs.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use hullsat::broadphase::candidate_pairs;
use hullsat::generate::{ParticleSceneConfig, generate_particle_scene};

fn broadphase(c: &mut Criterion) {
    let sizes: Vec<usize> = match std::env::var("HULLSAT_BENCH_SIZES") {
        Ok(list) => list
            .split(',')
            .map(|size| {
                size.trim()
                    .parse()
                    .expect("HULLSAT_BENCH_SIZES: comma-separated body counts")
            })
            .collect(),
        Err(_) => vec![100_000, 1_000_000],
    };
    let mut group = c.benchmark_group("broadphase");
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .measurement_time(Duration::from_secs(5));
    for bodies in sizes {
        let scene = generate_particle_scene(&ParticleSceneConfig {
            bodies,
            ..ParticleSceneConfig::default()
        })
        .unwrap();
        let pairs = candidate_pairs(&scene.shapes, &scene.bodies, scene.margin);
        let mut digest = DefaultHasher::new();
        pairs.hash(&mut digest);
        println!(
            "broadphase/{bodies}: {} pairs, digest {:016x}",
            pairs.len(),
            digest.finish()
        );
        group.throughput(Throughput::Elements(bodies as u64));
        group.bench_function(bodies.to_string(), |b| {
            b.iter(|| black_box(candidate_pairs(&scene.shapes, &scene.bodies, scene.margin)))
        });
    }
    group.finish();
}

criterion_group!(benches, broadphase);
criterion_main!(benches);

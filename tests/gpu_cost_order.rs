//! The resident API's ordering of pairs by cost (`GpuNarrowphase::set_cost_ordering`): the
//! manifold list is the same bit for bit with the ordering on and off, and each chunk's slots
//! hold a permutation of its pairs in key order (`internals::cost_class`).

mod support;

use std::sync::Arc;

use glam::{Quat, Vec3};
use hullsat::generate::{ParticleSceneConfig, ShapeMix, generate_particle_scene_with_pairs, terrain};
use hullsat::internals::{HullTables, cost_class, resident_sat_results};
use hullsat::narrowphase::gpu::layout::{GpuManifold, GpuSatResult};
use hullsat::{Body, GpuNarrowphase, HalfSpace, Pose, Shape};
use support::{ResidentScene, device_or_skip, read_bytes, read_resident};

/// A particle scene of every convex kind (boxes, hulls of 8 to 32 vertices, spheres, capsules,
/// cylinders, compounds) with its broadphase pairs, and a floor mesh and a half-space under it
/// paired with the lowest bodies: every shape kind the resident path takes.
fn mixed_scene() -> (Vec<Shape>, Vec<Body>, Vec<[u32; 2]>) {
    let config = ParticleSceneConfig {
        bodies: 300,
        mix: ShapeMix {
            boxes: 0.25,
            hulls: 0.3,
            spheres: 0.15,
            capsules: 0.1,
            cylinders: 0.1,
            compounds: 0.1,
            hull_vertices: [8, 32],
        },
        ..Default::default()
    };
    let scene = generate_particle_scene_with_pairs(&config).expect("scene");
    let mut pairs = scene.pairs.clone().expect("broadphase pairs");
    let (mut shapes, mut bodies) = (scene.shapes, scene.bodies);
    let lowest = bodies
        .iter()
        .map(|b| b.pose.translation.y)
        .fold(f64::INFINITY, f64::min) as f32;
    let floor = terrain(4, 50.0, 0.0).expect("a floor");
    shapes.push(Shape::TriMesh(Arc::new(floor)));
    shapes.push(Shape::HalfSpace(
        HalfSpace::new(Vec3::Y, 0.0).expect("a half-space"),
    ));
    let mut by_height: Vec<u32> = (0..bodies.len() as u32).collect();
    by_height.sort_by(|&a, &b| {
        let y = |i: u32| bodies[i as usize].pose.translation.y;
        y(a).total_cmp(&y(b))
    });
    for shape in [shapes.len() - 2, shapes.len() - 1] {
        let index = bodies.len() as u32;
        bodies.push(Body {
            shape: shape as u32,
            pose: Pose::new(Vec3::new(0.0, lowest + 0.2, 0.0), Quat::IDENTITY),
        });
        pairs.extend(by_height.iter().take(30).map(|&b| [index, b]));
    }
    (shapes, bodies, pairs)
}

/// The bytes of `buffer` on `gpu`'s device.
fn read_buffer(gpu: &GpuNarrowphase, buffer: &wgpu::Buffer) -> Vec<u8> {
    let encoder = gpu.device().create_command_encoder(&Default::default());
    read_bytes(gpu.device(), gpu.queue(), encoder, buffer)
}

/// The list's entries sorted by pair, as bytes (bit-for-bit comparisons).
fn sorted_bytes(mut entries: Vec<GpuManifold>) -> Vec<Vec<u8>> {
    entries.sort_by_key(|m| m.pair);
    entries.iter().map(|m| bytemuck::bytes_of(m).to_vec()).collect()
}

/// Checks the last resident call's slots: per chunk of `chunk` slots, the pairs they name are
/// a permutation of the chunk's, in non-decreasing [`cost_class`] order when `ordered`, else in
/// the caller's order. Returns the keys met, slot order.
fn check_slots(
    gpu: &GpuNarrowphase,
    bodies: &[Body],
    pairs: &[[u32; 2]],
    chunk: usize,
    ordered: bool,
) -> Vec<u32> {
    let bytes = read_buffer(gpu, &resident_sat_results(gpu).expect("a resident call"));
    let results: &[GpuSatResult] = bytemuck::cast_slice(&bytes[..pairs.len() * size_of::<GpuSatResult>()]);
    let table = HullTables::new(gpu.shapes()).shapes;
    let key = |pair: usize| {
        let [a, b] = pairs[pair].map(|i| &table[bodies[i as usize].shape as usize]);
        cost_class(a, b)
    };
    let mut keys = Vec::with_capacity(pairs.len());
    for (k, slots) in results.chunks(chunk).enumerate() {
        let mut named: Vec<usize> = slots.iter().map(|r| r.pair as usize).collect();
        if !ordered {
            assert!(
                named.iter().enumerate().all(|(s, &p)| p == k * chunk + s),
                "chunk {k}"
            );
        }
        let chunk_keys: Vec<u32> = named.iter().map(|&p| key(p)).collect();
        if ordered {
            assert!(chunk_keys.is_sorted(), "chunk {k}: keys {chunk_keys:?}");
        }
        keys.extend(chunk_keys);
        named.sort_unstable();
        let expected: Vec<usize> = (k * chunk..k * chunk + slots.len()).collect();
        assert_eq!(named, expected, "chunk {k}: not a permutation of its pairs");
    }
    keys
}

#[test]
fn ordering_pairs_by_cost_leaves_every_manifold_bit_for_bit() {
    let (shapes, bodies, pairs) = mixed_scene();
    assert!(pairs.len() > 256, "{} pairs", pairs.len());
    // 4 workgroups per dimension: 256-pair chunks, one pair per invocation from 5 pairs on. 65,535:
    // one chunk, one workgroup per pair below 16,384 pairs (hulls of 8 vertices split).
    for (workgroups, chunk) in [(4u32, 256usize), (65_535, usize::MAX)] {
        let limits = wgpu::Limits {
            max_compute_workgroups_per_dimension: workgroups,
            max_storage_buffers_per_shader_stage: 9,
            ..wgpu::Limits::default()
        };
        let Some((device, queue)) = device_or_skip(limits) else {
            return;
        };
        let mut gpu = GpuNarrowphase::with_device(device.clone(), queue, &shapes).expect("narrowphase");
        assert!(gpu.cost_ordering(), "on by default");
        let resident = ResidentScene::new(&device, &bodies, &pairs);
        let batch = resident.batch(0.01);
        let ordered = read_resident(&mut gpu, &batch);
        let keys = check_slots(&gpu, &bodies, &pairs, chunk.min(pairs.len()), true);
        gpu.set_cost_ordering(false);
        let given = read_resident(&mut gpu, &batch);
        check_slots(&gpu, &bodies, &pairs, chunk.min(pairs.len()), false);
        assert!(ordered.len() > 100, "{} listed", ordered.len());
        assert_eq!(
            sorted_bytes(ordered),
            sorted_bytes(given),
            "{workgroups} workgroups"
        );
        // The scene meets the keys of hull pairs, two boxes, hulls with primitives and the rest.
        let mut met = keys;
        met.sort_unstable();
        met.dedup();
        assert!(met.len() >= 5, "keys met: {met:?}");
    }
}

//! The resident API's ordering of pairs by cost (`GpuNarrowphase::set_cost_ordering`): the
//! manifold list is the same bit for bit with the ordering on and off, and each chunk's slots
//! hold a permutation of its pairs in key order (`internals::order_key`: the cost class, then
//! the gap bucket), or the chunk's own order where the GPU skips the ordering (one workgroup per
//! pair, a chunk of one key).

mod support;

use std::sync::Arc;

use glam::{Quat, Vec3};
use hullsat::generate::{ParticleSceneConfig, ShapeMix, generate_particle_scene_with_pairs, terrain};
use hullsat::gpu::layout::GpuBody;
use hullsat::internals::{
    GAP_BUCKETS, HullTables, KEY_BOX_BOX, KEY_CHEAP, KEY_HULL_PRIMITIVE, KEY_SMALL_HULLS, call_sat_results,
    order_key, resident_sat_results,
};
use hullsat::narrowphase::gpu::Clipping;
use hullsat::narrowphase::gpu::layout::{GpuManifold, GpuSatResult};
use hullsat::{Body, ContactSet, ConvexHull, GpuNarrowphase, HalfSpace, Pose, Shape};
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64 as StdRng;
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

/// The tests' margin, length units.
const MARGIN: f32 = 0.01;

/// Checks the last resident call's slots: per chunk of `chunk` slots, the pairs they name are
/// a permutation of the chunk's, in non-decreasing [`order_key`] order when `ordered(k)` for
/// chunk `k`, else in the caller's order. Returns the keys met (the lower of each range), slot
/// order.
fn check_slots(
    gpu: &GpuNarrowphase,
    bodies: &[Body],
    pairs: &[[u32; 2]],
    chunk: usize,
    ordered: impl Fn(usize) -> bool,
) -> Vec<u32> {
    let results = resident_sat_results(gpu).expect("a resident call");
    check_slots_of(gpu, &results, bodies, pairs, chunk, ordered)
}

/// [`check_slots`] on the SAT results `results` (a resident call's or a host call's).
fn check_slots_of(
    gpu: &GpuNarrowphase,
    results: &wgpu::Buffer,
    bodies: &[Body],
    pairs: &[[u32; 2]],
    chunk: usize,
    ordered: impl Fn(usize) -> bool,
) -> Vec<u32> {
    let bytes = read_buffer(gpu, results);
    let results: &[GpuSatResult] = bytemuck::cast_slice(&bytes[..pairs.len() * size_of::<GpuSatResult>()]);
    let tables = HullTables::new(gpu.shapes());
    // The key the GPU may give a pair: its gap bucket taken with the reach a little longer and
    // a little shorter, as a GPU that fuses the bucket's f32 steps may put a pair at a step's
    // edge in the next bucket.
    let keys_of = |pair: usize| {
        let [a, b] = pairs[pair].map(|i| &bodies[i as usize]);
        let [shape_a, shape_b] = [a, b].map(|body| &tables.shapes[body.shape as usize]);
        let [a, b] = [a, b].map(GpuBody::from_body);
        [MARGIN + 1e-4, MARGIN - 1e-4]
            .map(|margin| order_key((shape_a, shape_b), &tables.vertices, (&a, &b), margin))
    };
    let mut keys = Vec::with_capacity(pairs.len());
    for (k, slots) in results.chunks(chunk).enumerate() {
        let mut named: Vec<usize> = slots.iter().map(|r| r.pair as usize).collect();
        let chunk_keys: Vec<[u32; 2]> = named.iter().map(|&p| keys_of(p)).collect();
        if ordered(k) {
            // Some key within each pair's range, non-decreasing slot by slot.
            let mut least = 0;
            for (slot, &[low, high]) in chunk_keys.iter().enumerate() {
                least = least.max(low);
                assert!(least <= high, "chunk {k}, slot {slot}: keys {chunk_keys:?}");
            }
        } else {
            assert!(
                named.iter().enumerate().all(|(s, &p)| p == k * chunk + s),
                "chunk {k}: not in the caller's order"
            );
        }
        keys.extend(chunk_keys.iter().map(|[low, _]| low));
        named.sort_unstable();
        let expected: Vec<usize> = (k * chunk..k * chunk + slots.len()).collect();
        assert_eq!(named, expected, "chunk {k}: not a permutation of its pairs");
    }
    keys
}

/// A narrowphase on a device of at most `workgroups` workgroups per dimension (256-pair chunks
/// at 4, one chunk at 65,535), or `None` where the test is skipped.
fn narrowphase(shapes: &[Shape], workgroups: u32) -> Option<(wgpu::Device, GpuNarrowphase)> {
    let limits = wgpu::Limits {
        max_compute_workgroups_per_dimension: workgroups,
        max_storage_buffers_per_shader_stage: 9,
        ..wgpu::Limits::default()
    };
    let (device, queue) = device_or_skip(limits)?;
    let gpu = GpuNarrowphase::with_device(device.clone(), queue, shapes).expect("narrowphase");
    Some((device, gpu))
}

/// The list of a resident call on `pairs` with the ordering on, checked as [`check_slots`]
/// says, and the same bit for bit as with the ordering off (whose slots are in the caller's
/// order). Returns the keys met, slot order.
fn ordered_as_unordered(
    (device, gpu): (&wgpu::Device, &mut GpuNarrowphase),
    bodies: &[Body],
    pairs: &[[u32; 2]],
    chunk: usize,
    ordered: impl Fn(usize) -> bool,
) -> Vec<u32> {
    let resident = ResidentScene::new(device, bodies, pairs);
    let batch = resident.batch(MARGIN);
    gpu.set_cost_ordering(true);
    let with_order = read_resident(gpu, &batch);
    let keys = check_slots(gpu, bodies, pairs, chunk, ordered);
    gpu.set_cost_ordering(false);
    let given = read_resident(gpu, &batch);
    check_slots(gpu, bodies, pairs, chunk, |_| false);
    assert!(with_order.len() > 100, "{} listed", with_order.len());
    assert_eq!(sorted_bytes(with_order), sorted_bytes(given));
    keys
}

#[test]
fn ordering_pairs_by_cost_leaves_every_manifold_bit_for_bit() {
    let (shapes, bodies, pairs) = mixed_scene();
    assert!(pairs.len() > 256, "{} pairs", pairs.len());
    // 256-pair chunks, one pair per invocation from 5 pairs on: every chunk ordered.
    let Some((device, mut gpu)) = narrowphase(&shapes, 4) else {
        return;
    };
    assert!(gpu.cost_ordering(), "on by default");
    let keys = ordered_as_unordered((&device, &mut gpu), &bodies, &pairs, 256, |_| true);
    // The scene meets the keys of every pair kind: hull pairs by their edge pairs and their
    // gaps, two boxes, hulls with primitives by the hull's edges, and the rest.
    let mut buckets: Vec<u32> = keys
        .iter()
        .filter(|&&k| k / GAP_BUCKETS <= KEY_SMALL_HULLS)
        .map(|k| k % GAP_BUCKETS)
        .collect();
    buckets.sort_unstable();
    buckets.dedup();
    assert!(buckets.len() >= 4, "gap buckets met: {buckets:?}");
    let mut met: Vec<u32> = keys.iter().map(|k| k / GAP_BUCKETS).collect();
    met.sort_unstable();
    met.dedup();
    for kind in [
        KEY_BOX_BOX,
        KEY_HULL_PRIMITIVE,
        KEY_HULL_PRIMITIVE + 1,
        KEY_CHEAP - 1,
        KEY_CHEAP,
    ] {
        assert!(met.contains(&kind), "key {kind} not met: {met:?}");
    }
    assert!(
        met.iter().filter(|&&k| k <= KEY_SMALL_HULLS).count() >= 3,
        "keys met: {met:?}"
    );
}

#[test]
fn pairs_of_one_hull_size_are_ordered_by_their_gap() {
    // Two 24-vertex hulls whose centroids lie off their origins (so a kernel that left the
    // centroids unrotated would misjudge the gap), 600 pairs from centroids together to spheres
    // apart, in random order: one cost class, so the keys differ by their gap bucket alone.
    let mut rng = StdRng::seed_from_u64(21);
    let hull = |offset: Vec3, rng: &mut StdRng| {
        let points: Vec<Vec3> = (0..24)
            .map(|_| {
                Vec3::new(
                    rng.random_range(-1.0..1.0),
                    rng.random_range(-1.0..1.0),
                    rng.random_range(-1.0..1.0),
                )
                .normalize_or(Vec3::X)
                    + offset
            })
            .collect();
        Shape::Hull(ConvexHull::from_points(&points).expect("a hull"))
    };
    let shapes = vec![
        hull(Vec3::new(0.7, 0.0, 0.0), &mut rng),
        hull(Vec3::new(0.0, -0.5, 0.3), &mut rng),
    ];
    let mut bodies = Vec::new();
    let mut pairs = Vec::new();
    for i in 0..600u32 {
        let direction = Vec3::new(
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
        )
        .normalize_or(Vec3::Y);
        let rotation = |rng: &mut StdRng| Quat::from_axis_angle(direction, rng.random_range(0.0..6.0));
        bodies.push(Body {
            shape: i % 2,
            pose: Pose::new(Vec3::ZERO, rotation(&mut rng)),
        });
        let distance = rng.random_range(0.0..3.0);
        bodies.push(Body {
            shape: (i + 1) % 2,
            pose: Pose::new(direction * distance, rotation(&mut rng)),
        });
        pairs.push([2 * i, 2 * i + 1]);
    }
    let Some((device, mut gpu)) = narrowphase(&shapes, 4) else {
        return;
    };
    let keys = ordered_as_unordered((&device, &mut gpu), &bodies, &pairs, 256, |_| true);
    let mut buckets: Vec<u32> = keys.iter().map(|k| k % GAP_BUCKETS).collect();
    buckets.sort_unstable();
    buckets.dedup();
    assert_eq!(
        buckets,
        (0..GAP_BUCKETS).collect::<Vec<u32>>(),
        "every bucket met"
    );
}

#[test]
fn one_workgroup_per_pair_runs_the_pairs_unordered() {
    let (shapes, bodies, pairs) = mixed_scene();
    // One chunk; one workgroup per pair below 16,384 pairs (hulls of 8 vertices split): each
    // pair has its own workgroup, so the GPU skips the ordering.
    let Some((device, mut gpu)) = narrowphase(&shapes, 65_535) else {
        return;
    };
    assert!(pairs.len() < 16_384);
    ordered_as_unordered((&device, &mut gpu), &bodies, &pairs, usize::MAX, |_| false);
}

#[test]
fn a_chunk_of_one_key_is_not_scattered() {
    let (shapes, bodies, pairs) = mixed_scene();
    let is_box = |body: u32| matches!(shapes[bodies[body as usize].shape as usize], Shape::Cuboid(_));
    let box_pairs: Vec<[u32; 2]> = pairs
        .iter()
        .copied()
        .filter(|&[a, b]| is_box(a) && is_box(b))
        .collect();
    assert!(!box_pairs.is_empty());
    // Chunk 0 holds one pair of two boxes 256 times: one key, left in the caller's order; the
    // mixed chunks after it are ordered.
    let mut with_boxes: Vec<[u32; 2]> = vec![box_pairs[0]; 256];
    with_boxes.extend(&pairs);
    let Some((device, mut gpu)) = narrowphase(&shapes, 4) else {
        return;
    };
    // First an ordered call, so chunk 0's results hold a permutation that must not be followed.
    ordered_as_unordered((&device, &mut gpu), &bodies, &pairs, 256, |_| true);
    let keys = ordered_as_unordered((&device, &mut gpu), &bodies, &with_boxes, 256, |k| k > 0);
    assert!(
        keys[..256]
            .iter()
            .all(|&k| k == keys[0] && k / GAP_BUCKETS == KEY_BOX_BOX)
    );
}

/// A host call's manifolds, `collide`'s and `collide_into`'s, as their `Debug` text (which
/// tells every two `f32` bit patterns apart, `-0.0` from `0.0` too), with ordering `on`; and
/// the call's SAT results checked as [`check_slots`] says.
fn host_call(
    gpu: &mut GpuNarrowphase,
    (bodies, pairs): (&[Body], &[[u32; 2]]),
    chunk: usize,
    (on, ordered): (bool, &dyn Fn(usize) -> bool),
) -> (String, String) {
    gpu.set_cost_ordering(on);
    let manifolds = gpu.collide(bodies, pairs, MARGIN).expect("collide");
    check_slots_of(gpu, &call_sat_results(gpu), bodies, pairs, chunk, ordered);
    let mut set = ContactSet::new();
    gpu.collide_into(bodies, pairs, MARGIN, &mut set)
        .expect("collide_into");
    check_slots_of(gpu, &call_sat_results(gpu), bodies, pairs, chunk, ordered);
    assert!(set.len() > 100, "{} touching", set.len());
    (format!("{manifolds:?}"), format!("{set:?}"))
}

#[test]
fn host_calls_ordered_by_cost_return_the_same_manifolds() {
    let (shapes, bodies, pairs) = mixed_scene();
    // 256-pair chunks, one pair per invocation: under the clip kernel every chunk is ordered.
    let Some((_, mut gpu)) = narrowphase(&shapes, 4) else {
        return;
    };
    let batch = (&bodies[..], &pairs[..]);
    let ordered = host_call(&mut gpu, batch, 256, (true, &|_| true));
    let given = host_call(&mut gpu, batch, 256, (false, &|_| false));
    assert_eq!(ordered, given);
    // The CPU clips from the SAT results by pair: no ordering there.
    gpu.set_clipping(Clipping::Cpu).expect("CPU clipping");
    let cpu_clipped = host_call(&mut gpu, batch, 256, (true, &|_| false));
    assert_eq!(cpu_clipped, host_call(&mut gpu, batch, 256, (false, &|_| false)));
}

#[test]
fn host_calls_of_one_workgroup_per_pair_run_the_pairs_unordered() {
    let (shapes, bodies, pairs) = mixed_scene();
    // One chunk under 16,384 pairs with split pairs: one workgroup per pair, not ordered.
    let Some((_, mut gpu)) = narrowphase(&shapes, 65_535) else {
        return;
    };
    let batch = (&bodies[..], &pairs[..]);
    let ordered = host_call(&mut gpu, batch, usize::MAX, (true, &|_| false));
    assert_eq!(
        ordered,
        host_call(&mut gpu, batch, usize::MAX, (false, &|_| false))
    );
}

//! The GPU manifold list: the compact readback of `GpuNarrowphase::collide` (only pairs that are
//! not separated come back, with their count) and the resident API (`encode_resident`: bodies,
//! pairs and the pair count in the caller's GPU buffers, manifolds left in a GPU list), both
//! against the CPU path by the GPU = CPU contract (`hullsat::contract`).

mod support;

use std::time::Duration;

use glam::Vec3;
use hullsat::contract::{AgreementTally, compare_batch};
use hullsat::internals::{
    CLIP_GROUP_PAIRS, PAIR_PER_WORKGROUP_PAIRS, SatMapping, WORKGROUP_SIZE, resident_dispatch_args,
    sat_mapping,
};
use hullsat::narrowphase::gpu::layout::{
    GpuBody, GpuManifold, GpuManifoldCount, MANIFOLD_CLIPPED, MANIFOLD_INVALID, MANIFOLD_LIST_HEAD,
};
use hullsat::narrowphase::gpu::{Clipping, ResidentBatch};
use hullsat::{
    Body, ContactPoint, CpuNarrowphase, Cuboid, FeatureId, GpuError, GpuNarrowphase, Manifold, Pose, Shape,
};
use rand::RngExt;
use rand_pcg::Pcg64;
use support::{ResidentScene, device_or_skip, gpu_or_skip, random_rotation, seeded_rng};
use wgpu::util::DeviceExt;

/// Boxes of half extents 0.25 to 0.5 (at most 0.87 from centre to corner).
fn boxes(rng: &mut Pcg64, count: usize) -> Vec<Shape> {
    (0..count)
        .map(|_| {
            let half = Vec3::new(
                rng.random_range(0.25..0.5),
                rng.random_range(0.25..0.5),
                rng.random_range(0.25..0.5),
            );
            Shape::Cuboid(Cuboid::new(half).expect("valid box"))
        })
        .collect()
}

/// `pairs` pairs `[2k, 2k + 1]` of randomly turned boxes 10 apart from the next pair; a share
/// `touching` of them overlap (centres 0.2 to 0.5 apart), the others are clearly separated
/// (centres 2 to 3 apart, more than two corner distances).
fn scene(rng: &mut Pcg64, shapes: usize, pairs: usize, touching: f64) -> (Vec<Body>, Vec<[u32; 2]>) {
    scene_by(rng, shapes, pairs, |rng, _| rng.random_bool(touching))
}

/// [`scene`] with pair k overlapping where `touches(rng, k)`.
fn scene_by(
    rng: &mut Pcg64,
    shapes: usize,
    pairs: usize,
    mut touches: impl FnMut(&mut Pcg64, usize) -> bool,
) -> (Vec<Body>, Vec<[u32; 2]>) {
    let mut bodies = Vec::with_capacity(2 * pairs);
    for k in 0..pairs {
        let centre = Vec3::new(10.0 * k as f32, 0.0, 0.0);
        let distance = if touches(rng, k) {
            rng.random_range(0.2..0.5)
        } else {
            rng.random_range(2.0..3.0)
        };
        let offset = support::random_direction(rng) * distance;
        for position in [centre, centre + offset] {
            bodies.push(Body {
                shape: rng.random_range(0..shapes as u32),
                pose: Pose::new(position, random_rotation(rng)),
            });
        }
    }
    let pairs = (0..pairs as u32).map(|k| [2 * k, 2 * k + 1]).collect();
    (bodies, pairs)
}

/// The GPU's results for `pairs` of `bodies` (margin 0) within the GPU = CPU contract
/// (`hullsat::contract`) of the CPU's; the tally.
#[track_caller]
fn assert_same_results(
    shapes: &[Shape],
    bodies: &[Body],
    pairs: &[[u32; 2]],
    gpu: &[Option<Manifold>],
    cpu: &[Option<Manifold>],
) -> AgreementTally {
    compare_batch(shapes, bodies, pairs, 0.0, gpu, cpu).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn mostly_separated_pairs_read_back_only_the_listed_ones() {
    const PAIRS: usize = 4_000;
    let mut rng = seeded_rng(0xc0_4ac7);
    let shapes = boxes(&mut rng, 8);
    let (bodies, pairs) = scene(&mut rng, shapes.len(), PAIRS, 0.05);
    let Some(mut gpu) = gpu_or_skip(&shapes) else {
        return;
    };
    gpu.set_clipping(Clipping::Gpu)
        .expect("the shared device runs the clip kernel");
    let cpu = CpuNarrowphase::new(shapes.clone())
        .collide(&bodies, &pairs, 0.0)
        .expect("CPU collide");
    let touching = cpu.iter().flatten().count();
    assert!((100..400).contains(&touching), "{touching} of {PAIRS} touch");

    // The first call knows no share yet: the whole list comes back with its count.
    let first = gpu.collide(&bodies, &pairs, 0.0).expect("GPU collide");
    assert_same_results(&shapes, &bodies, &pairs, &first, &cpu);
    let whole = 16 + 112 * PAIRS as u64;
    assert_eq!(gpu.timings().readback_bytes, whole);
    // Then only the listed pairs, with headroom: about a tenth of the dense list.
    let second = gpu.collide(&bodies, &pairs, 0.0).expect("GPU collide");
    assert_eq!(second, first);
    let timings = gpu.timings();
    assert_eq!(timings.list_second_copies, 0);
    let expected = 16 + 112 * ((touching as f64 * 1.25).ceil() as u64 + 256);
    assert_eq!(timings.readback_bytes, expected, "{touching} listed");
    assert!(timings.readback_bytes < whole / 5);

    // A batch where most pairs touch outgrows that prefix: its rest takes a second copy, and
    // the results are still the CPU's; the next sparse call is sized from it again.
    let (dense_bodies, dense_pairs) = scene(&mut rng, shapes.len(), PAIRS, 0.9);
    let dense = gpu
        .collide(&dense_bodies, &dense_pairs, 0.0)
        .expect("GPU collide");
    assert_eq!(gpu.timings().list_second_copies, 1);
    let dense_cpu = CpuNarrowphase::new(shapes.clone())
        .collide(&dense_bodies, &dense_pairs, 0.0)
        .expect("CPU collide");
    assert_same_results(&shapes, &dense_bodies, &dense_pairs, &dense, &dense_cpu);
    assert_eq!(gpu.collide(&bodies, &pairs, 0.0).expect("GPU collide"), first);
    assert_eq!(gpu.timings().list_second_copies, 0);
}

#[test]
fn a_round_of_several_dispatch_chunks_lists_every_pair_once() {
    // 4 workgroups per dispatch dimension: 256 pairs per chunk, so 1,000 pairs run as 4 chunks
    // appending to one list, each entry naming its pair by the chunk's first pair plus its own
    // index. Equal bit for bit to the shared device's one chunk.
    let limits = wgpu::Limits {
        max_compute_workgroups_per_dimension: 4,
        max_storage_buffers_per_shader_stage: 9,
        ..wgpu::Limits::default()
    };
    let mut rng = seeded_rng(0xc4a9);
    let shapes = boxes(&mut rng, 4);
    let (bodies, pairs) = scene(&mut rng, shapes.len(), 1_000, 0.5);
    let Some((device, queue)) = device_or_skip(limits) else {
        return;
    };
    let mut chunked = GpuNarrowphase::with_device(device, queue, &shapes).expect("narrowphase");
    chunked
        .set_clipping(Clipping::Gpu)
        .expect("9 storage buffers requested");
    let mut whole = gpu_or_skip(&shapes).expect("the adapter exists");
    let a = chunked.collide(&bodies, &pairs, 0.0).expect("chunked collide");
    let b = whole.collide(&bodies, &pairs, 0.0).expect("one-chunk collide");
    assert_eq!(a, b);
    let cpu = CpuNarrowphase::new(shapes.clone())
        .collide(&bodies, &pairs, 0.0)
        .expect("CPU collide");
    assert_same_results(&shapes, &bodies, &pairs, &a, &cpu);
}

/// Limits of a device for the resident tests: the clip kernel's 9 storage buffers, and
/// `workgroups` per dispatch dimension (4: 256-pair chunks, so a call runs several).
fn resident_limits(workgroups: u32) -> wgpu::Limits {
    wgpu::Limits {
        max_compute_workgroups_per_dimension: workgroups,
        max_storage_buffers_per_shader_stage: 9,
        ..wgpu::Limits::default()
    }
}

/// A buffer of `contents` with STORAGE usage (and COPY_DST), as a caller's own.
fn storage_buffer(device: &wgpu::Device, label: &str, contents: &[u8]) -> wgpu::Buffer {
    device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some(label),
        contents,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
    })
}

/// Submits `encoder` after copying `buffer` into a mapped buffer, waits, and returns its bytes.
fn read_back(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    mut encoder: wgpu::CommandEncoder,
    buffer: &wgpu::Buffer,
) -> Vec<u8> {
    let staging = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("test readback"),
        size: buffer.size(),
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    encoder.copy_buffer_to_buffer(buffer, 0, &staging, 0, buffer.size());
    let submission = queue.submit([encoder.finish()]);
    staging.map_async(wgpu::MapMode::Read, .., |r| r.expect("maps"));
    device
        .poll(wgpu::PollType::Wait {
            submission_index: Some(submission),
            timeout: Some(Duration::from_secs(60)),
        })
        .expect("finishes");
    let view = staging.get_mapped_range(..).expect("mapped");
    view.to_vec()
}

/// Submits `encoder` after copying `list` into a mapped buffer, waits, and returns its count and
/// entries (what a caller would bind instead).
fn read_list(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    encoder: wgpu::CommandEncoder,
    list: &wgpu::Buffer,
) -> (u32, Vec<GpuManifold>) {
    let bytes = read_back(device, queue, encoder, list);
    let head: GpuManifoldCount = bytemuck::pod_read_unaligned(&bytes[..MANIFOLD_LIST_HEAD as usize]);
    let entries = bytes[MANIFOLD_LIST_HEAD as usize..]
        .chunks_exact(size_of::<GpuManifold>())
        .take(head.count as usize)
        .map(bytemuck::pod_read_unaligned)
        .collect();
    (head.count, entries)
}

/// A clipped GPU manifold (A's frame) moved to the world with A's pose, as the library does.
fn world_manifold(raw: &GpuManifold, pose_a: &Pose) -> Manifold {
    let mut manifold = Manifold::new(raw.normal.into(), raw.separation);
    for (point, &id) in raw.points.iter().zip(&raw.ids).take(raw.count as usize) {
        manifold.push(ContactPoint {
            position: Vec3::new(point[0], point[1], point[2]).as_dvec3(),
            depth: point[3],
            id: FeatureId(id),
        });
    }
    manifold.to_world(pose_a)
}

/// The list as one result per pair of `pairs` (`None` where unlisted), after checking every
/// entry is clipped and names a distinct pair.
fn results_by_pair(entries: &[GpuManifold], bodies: &[Body], pairs: &[[u32; 2]]) -> Vec<Option<Manifold>> {
    let mut results = vec![None; pairs.len()];
    for entry in entries {
        assert_eq!(entry.status, MANIFOLD_CLIPPED, "{entry:?}");
        let pair = entry.pair as usize;
        assert!(pair < pairs.len(), "{entry:?} names a pair beyond the count");
        assert!(results[pair].is_none(), "pair {pair} listed twice");
        let pose_a = &bodies[pairs[pair][0] as usize].pose;
        results[pair] = Some(world_manifold(entry, pose_a));
    }
    results
}

/// `gpu`'s resident call on every pair of `pairs` (margin 0, buffers made on its device): one
/// result per pair ([`results_by_pair`]).
fn resident_run(gpu: &mut GpuNarrowphase, bodies: &[Body], pairs: &[[u32; 2]]) -> Vec<Option<Manifold>> {
    let (device, queue) = (gpu.device().clone(), gpu.queue().clone());
    let resident = ResidentScene::new(&device, bodies, pairs);
    let mut encoder = device.create_command_encoder(&Default::default());
    let out = gpu
        .encode_resident(&mut encoder, &resident.batch(0.0))
        .expect("encodes");
    let (_, entries) = read_list(&device, &queue, encoder, &out.list);
    results_by_pair(&entries, bodies, pairs)
}

#[test]
fn resident_manifolds_equal_the_cpu_with_a_count_below_the_pair_buffer() {
    const PAIRS: usize = 1_500;
    const MAX_PAIRS: u32 = 1_400;
    let mut rng = seeded_rng(0x7e51d);
    let shapes = boxes(&mut rng, 8);
    let (bodies, pairs) = scene(&mut rng, shapes.len(), PAIRS, 0.5);
    let cpu = CpuNarrowphase::new(shapes.clone());
    // One chunk, then 256-pair chunks (several indirect dispatches appending to one list).
    for workgroups in [65_535, 4] {
        let Some((device, queue)) = device_or_skip(resident_limits(workgroups)) else {
            return;
        };
        let mut gpu =
            GpuNarrowphase::with_device(device.clone(), queue.clone(), &shapes).expect("narrowphase");
        let gpu_bodies: Vec<GpuBody> = bodies.iter().map(GpuBody::from_body).collect();
        let body_buffer = storage_buffer(&device, "bodies", bytemuck::cast_slice(&gpu_bodies));
        let pair_buffer = storage_buffer(&device, "pairs", bytemuck::cast_slice(&pairs));
        // The count at byte 8 of a small buffer, as a broadphase might leave it.
        let count_buffer = storage_buffer(&device, "count", bytemuck::cast_slice(&[0u32, 0, 1_000, 0]));
        let batch = ResidentBatch {
            bodies: &body_buffer,
            pairs: &pair_buffer,
            pair_count: &count_buffer,
            pair_count_offset: 8,
            max_pairs: MAX_PAIRS,
            margin: 0.0,
        };
        // Counts below max_pairs, and one above it (clamped to max_pairs).
        for (count, run) in [(1_000u32, 1_000usize), (1_400, 1_400), (5_000, 1_400)] {
            queue.write_buffer(&count_buffer, 8, bytemuck::bytes_of(&count));
            let mut encoder = device.create_command_encoder(&Default::default());
            let out = gpu.encode_resident(&mut encoder, &batch).expect("encodes");
            assert_eq!(out.capacity, MAX_PAIRS);
            let (listed, entries) = read_list(&device, &queue, encoder, &out.list);
            let expected = cpu.collide(&bodies, &pairs[..run], 0.0).expect("CPU collide");
            let touching = expected.iter().flatten().count();
            assert!(touching > run / 3, "{touching} of {run} touch");
            let results = results_by_pair(&entries, &bodies, &pairs[..run]);
            let tally = assert_same_results(&shapes, &bodies, &pairs[..run], &results, &expected);
            // The listed count differs from the CPU's only by counted verdict ties.
            assert!(
                (listed as usize).abs_diff(touching) <= tally.verdict_ties,
                "count {count}, workgroups {workgroups}: {listed} listed, {touching} touch; {tally:?}"
            );
        }
    }
}

#[test]
fn workgroups_listing_all_none_or_some_of_their_pairs_append_each_once() {
    // The clip kernel appends per workgroup of 64 (one global atomic for the workgroup's
    // total): workgroup 0 lists all its pairs, 1 none, 2 every other, 3 only its last lane,
    // and a last partial workgroup of 17 lists all of its pairs.
    const PAIRS: usize = 4 * 64 + 17;
    let pattern = |k: usize| match k / 64 {
        0 | 4 => true,
        1 => false,
        2 => k.is_multiple_of(2),
        _ => k % 64 == 63,
    };
    let mut rng = seeded_rng(0x3a99);
    let shapes = boxes(&mut rng, 4);
    let (bodies, pairs) = scene_by(&mut rng, shapes.len(), PAIRS, |_, k| pattern(k));
    let expected = CpuNarrowphase::new(shapes.clone())
        .collide(&bodies, &pairs, 0.0)
        .expect("CPU collide");
    let touching: Vec<bool> = expected.iter().map(Option::is_some).collect();
    assert_eq!(touching, (0..PAIRS).map(pattern).collect::<Vec<_>>());
    let Some((device, queue)) = device_or_skip(resident_limits(65_535)) else {
        return;
    };
    let mut gpu = GpuNarrowphase::with_device(device.clone(), queue.clone(), &shapes).expect("narrowphase");
    let gpu_bodies: Vec<GpuBody> = bodies.iter().map(GpuBody::from_body).collect();
    let body_buffer = storage_buffer(&device, "bodies", bytemuck::cast_slice(&gpu_bodies));
    let pair_buffer = storage_buffer(&device, "pairs", bytemuck::cast_slice(&pairs));
    let count_buffer = storage_buffer(&device, "count", bytemuck::bytes_of(&(PAIRS as u32)));
    let batch = ResidentBatch {
        bodies: &body_buffer,
        pairs: &pair_buffer,
        pair_count: &count_buffer,
        pair_count_offset: 0,
        max_pairs: PAIRS as u32,
        margin: 0.0,
    };
    let mut encoder = device.create_command_encoder(&Default::default());
    let out = gpu.encode_resident(&mut encoder, &batch).expect("encodes");
    let (count, entries) = read_list(&device, &queue, encoder, &out.list);
    let listed = results_by_pair(&entries, &bodies, &pairs);
    let tally = assert_same_results(&shapes, &bodies, &pairs, &listed, &expected);
    assert_eq!(count as usize, tally.gpu_manifolds);
    assert!(
        (count as usize).abs_diff(touching.iter().filter(|&&t| t).count()) <= tally.verdict_ties,
        "{tally:?}"
    );
    // The host path lists the same set.
    gpu.set_clipping(Clipping::Gpu)
        .expect("9 storage buffers requested");
    let host = gpu.collide(&bodies, &pairs, 0.0).expect("GPU collide");
    assert_same_results(&shapes, &bodies, &pairs, &host, &expected);
}

#[test]
fn resident_pairs_with_indices_out_of_range_are_listed_invalid() {
    let shapes = vec![Shape::Cuboid(Cuboid::new(Vec3::splat(0.5)).expect("valid box"))];
    let Some((device, queue)) = device_or_skip(resident_limits(65_535)) else {
        return;
    };
    let mut gpu = GpuNarrowphase::with_device(device.clone(), queue.clone(), &shapes).expect("narrowphase");
    // Bodies 0 and 1 overlap by 0.1; body 2 names shape 7 of a one-shape list.
    let mut gpu_bodies: Vec<GpuBody> = (0..3)
        .map(|i| {
            GpuBody::from_body(&Body {
                shape: 0,
                pose: Pose::from_translation(Vec3::new(0.0, 0.9 * i as f32, 0.0)),
            })
        })
        .collect();
    gpu_bodies[2].shape = 7;
    let pairs: [[u32; 2]; 6] = [[0, 1], [0, 3], [1, 1], [1, 2], [u32::MAX, 0], [1, 0]];
    let body_buffer = storage_buffer(&device, "bodies", bytemuck::cast_slice(&gpu_bodies));
    let pair_buffer = storage_buffer(&device, "pairs", bytemuck::cast_slice(&pairs));
    let count_buffer = storage_buffer(&device, "count", bytemuck::bytes_of(&(pairs.len() as u32)));
    let mut encoder = device.create_command_encoder(&Default::default());
    let out = gpu
        .encode_resident(
            &mut encoder,
            &ResidentBatch {
                bodies: &body_buffer,
                pairs: &pair_buffer,
                pair_count: &count_buffer,
                pair_count_offset: 0,
                max_pairs: pairs.len() as u32,
                margin: 0.0,
            },
        )
        .expect("encodes");
    let (count, mut entries) = read_list(&device, &queue, encoder, &out.list);
    assert_eq!(count, 6);
    entries.sort_by_key(|m| m.pair);
    let statuses: Vec<u32> = entries.iter().map(|m| m.status).collect();
    assert_eq!(
        statuses,
        [
            MANIFOLD_CLIPPED,
            MANIFOLD_INVALID,
            MANIFOLD_INVALID,
            MANIFOLD_INVALID,
            MANIFOLD_INVALID,
            MANIFOLD_CLIPPED
        ]
    );
    // [1, 0] has body 1 as A (run as [0, 1] and swapped back, as the CPU does).
    let bodies: Vec<Body> = (0..2)
        .map(|i| Body {
            shape: 0,
            pose: Pose::from_translation(Vec3::new(0.0, 0.9 * i as f32, 0.0)),
        })
        .collect();
    let cpu = CpuNarrowphase::new(shapes.clone());
    for entry in [&entries[0], &entries[5]] {
        let pair = [pairs[entry.pair as usize]];
        let expected = cpu.collide(&bodies, &pair, 0.0).expect("CPU collide");
        let pose_a = &bodies[pair[0][0] as usize].pose;
        assert_same_results(
            &shapes,
            &bodies,
            &pair,
            &[Some(world_manifold(entry, pose_a))],
            &expected,
        );
    }
}

#[test]
fn resident_batches_the_host_can_see_are_wrong_are_refused_by_field() {
    let shapes = vec![Shape::Cuboid(Cuboid::new(Vec3::splat(0.5)).expect("valid box"))];
    let Some((device, queue)) = device_or_skip(resident_limits(65_535)) else {
        return;
    };
    let mut gpu = GpuNarrowphase::with_device(device.clone(), queue, &shapes).expect("narrowphase");
    let bodies = storage_buffer(&device, "bodies", &[0; 96]);
    let pairs = storage_buffer(&device, "pairs", &[0; 64]);
    let count = storage_buffer(&device, "count", &[0; 16]);
    let uniform = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("not storage"),
        size: 256,
        usage: wgpu::BufferUsages::UNIFORM,
        mapped_at_creation: false,
    });
    let good = ResidentBatch {
        bodies: &bodies,
        pairs: &pairs,
        pair_count: &count,
        pair_count_offset: 0,
        max_pairs: 8,
        margin: 0.0,
    };
    let cases = [
        (
            ResidentBatch {
                bodies: &uniform,
                ..good
            },
            "ResidentBatch.bodies",
        ),
        (ResidentBatch { max_pairs: 9, ..good }, "ResidentBatch.max_pairs"),
        (ResidentBatch { max_pairs: 0, ..good }, "ResidentBatch.max_pairs"),
        (
            ResidentBatch {
                pair_count_offset: 2,
                ..good
            },
            "ResidentBatch.pair_count_offset",
        ),
        (
            ResidentBatch {
                pair_count_offset: 16,
                ..good
            },
            "ResidentBatch.pair_count_offset",
        ),
        (
            ResidentBatch {
                margin: f32::NAN,
                ..good
            },
            "ResidentBatch.margin",
        ),
    ];
    for (batch, field) in cases {
        let mut encoder = device.create_command_encoder(&Default::default());
        match gpu.encode_resident(&mut encoder, &batch) {
            Err(GpuError::Input(e)) => assert_eq!(e.path, field, "{e}"),
            other => panic!("{field}: expected an input error, got {other:?}"),
        }
    }
    let mut encoder = device.create_command_encoder(&Default::default());
    gpu.encode_resident(&mut encoder, &good)
        .expect("the good batch encodes");
}

/// Workgroups of the first chunk's dispatches in `gpu`'s last resident call, once submitted:
/// the caller pairs' (clip kernel), the SAT's one pair per invocation, the SAT's one workgroup
/// per pair (`internals::resident_dispatch_args`; a call of `chunks` chunks).
fn first_chunk_workgroups(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    gpu: &GpuNarrowphase,
    chunks: usize,
) -> [u32; 4] {
    let args = resident_dispatch_args(gpu).expect("a resident call was encoded");
    let bytes = read_back(
        device,
        queue,
        device.create_command_encoder(&Default::default()),
        &args,
    );
    let args: &[wgpu::util::DispatchIndirectArgs] = bytemuck::cast_slice(&bytes[..bytes.len() / 12 * 12]);
    [0, 1, 2, 3].map(|set| args[set * chunks].x)
}

/// Runs `gpu`'s resident call on `batch` with the count `count` (at byte 0 of `count_buffer`),
/// checks its list against the CPU's results on the first `count` of `pairs` by the contract,
/// and returns [`first_chunk_workgroups`] (the call being of one chunk).
#[allow(clippy::too_many_arguments)]
fn resident_against_cpu(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    gpu: &mut GpuNarrowphase,
    shapes: &[Shape],
    bodies: &[Body],
    pairs: &[[u32; 2]],
    batch: &ResidentBatch<'_>,
    count: usize,
) -> [u32; 4] {
    queue.write_buffer(batch.pair_count, 0, bytemuck::bytes_of(&(count as u32)));
    let mut encoder = device.create_command_encoder(&Default::default());
    let out = gpu.encode_resident(&mut encoder, batch).expect("encodes");
    let (listed, entries) = read_list(device, queue, encoder, &out.list);
    let pairs = &pairs[..count];
    let expected = CpuNarrowphase::new(shapes)
        .collide(bodies, pairs, 0.0)
        .expect("CPU collide");
    let touching = expected.iter().flatten().count();
    assert!(touching > 0, "count {count}: no pair touches");
    let results = results_by_pair(&entries, bodies, pairs);
    let tally = assert_same_results(shapes, bodies, pairs, &results, &expected);
    assert!(
        (listed as usize).abs_diff(touching) <= tally.verdict_ties,
        "count {count}: {listed} listed, {touching} touch; {tally:?}"
    );
    first_chunk_workgroups(device, queue, gpu, 1)
}

/// `[caller, SAT per invocation, SAT per workgroup, clip per group]` workgroups of a one-chunk
/// call of `count` pairs: one workgroup per pair below `below` pairs (and CLIP_GROUP_PAIRS
/// pairs per clip workgroup), else one pair per invocation (the clip's from the SAT's set).
fn expected_workgroups(count: usize, below: usize) -> [u32; 4] {
    let per_invocation = count.div_ceil(WORKGROUP_SIZE as usize) as u32;
    if count < below {
        let groups = count.div_ceil(CLIP_GROUP_PAIRS as usize) as u32;
        [per_invocation, 0, count as u32, groups]
    } else {
        [per_invocation, per_invocation, 0, 0]
    }
}

#[test]
fn small_resident_batches_of_big_hulls_take_one_workgroup_per_pair() {
    use hullsat::generate::{ParticleSceneConfig, ShapeMix, generate_particle_scene_with_pairs};
    let config = ParticleSceneConfig {
        bodies: 600,
        mix: ShapeMix::hulls_only(32),
        ..Default::default()
    };
    let scene = generate_particle_scene_with_pairs(&config).expect("scene");
    let pairs = scene.pairs.clone().expect("broadphase pairs");
    let (shapes, bodies) = (&scene.shapes, &scene.bodies);
    assert!(pairs.len() > 100, "{} pairs", pairs.len());
    // 65,535 workgroups per dimension: below PAIR_PER_WORKGROUP_PAIRS. 64: below 65, the
    // workgroups one dimension holds, so 65 pairs take one pair per invocation.
    for (workgroups, counts) in [(65_535, vec![pairs.len()]), (64, vec![64, 65])] {
        let Some((device, queue)) = device_or_skip(resident_limits(workgroups)) else {
            return;
        };
        let mut gpu =
            GpuNarrowphase::with_device(device.clone(), queue.clone(), shapes).expect("narrowphase");
        let resident = ResidentScene::new(&device, bodies, &pairs);
        let batch = resident.batch(0.0);
        let below = (PAIR_PER_WORKGROUP_PAIRS as usize).min(workgroups as usize + 1);
        for count in counts {
            // The host's call of these pairs (all split) takes the same mapping.
            let host = sat_mapping(&gpu, bodies, &pairs[..count]);
            assert_eq!(host == SatMapping::PerWorkgroup, count < below, "{count} pairs");
            let run = resident_against_cpu(&device, &queue, &mut gpu, shapes, bodies, &pairs, &batch, count);
            assert_eq!(
                run,
                expected_workgroups(count, below),
                "{workgroups} workgroups, {count} pairs"
            );
        }
    }
}

#[test]
fn resident_batches_take_one_workgroup_per_pair_by_the_count_alone() {
    // Box pairs only, over shapes with a 32-vertex hull (which can form split pairs): the
    // mapping follows the count, up to PAIR_PER_WORKGROUP_PAIRS - 1 pairs, whatever their shapes.
    let mut rng = seeded_rng(0x5ca1_ab1e);
    let mut shapes = boxes(&mut rng, 4);
    let points = support::shapes::random_hull_points(&mut rng, 32, Vec3::splat(0.5));
    shapes.push(Shape::Hull(
        hullsat::ConvexHull::from_points(&points).expect("a hull"),
    ));
    let limit = PAIR_PER_WORKGROUP_PAIRS as usize;
    let (bodies, pairs) = scene(&mut rng, 4, limit, 0.05);
    let Some((device, queue)) = device_or_skip(resident_limits(65_535)) else {
        return;
    };
    let mut gpu = GpuNarrowphase::with_device(device.clone(), queue.clone(), &shapes).expect("narrowphase");
    let resident = ResidentScene::new(&device, &bodies, &pairs[..limit]);
    let batch = resident.batch(0.0);
    for count in [limit - 1, limit] {
        let run = resident_against_cpu(&device, &queue, &mut gpu, &shapes, &bodies, &pairs, &batch, count);
        assert_eq!(run, expected_workgroups(count, limit), "{count} pairs");
    }
    // Boxes alone form no split pair: one set of arguments, the SAT's from the caller pairs'.
    let box_shapes = &shapes[..4];
    let mut boxes_only =
        GpuNarrowphase::with_device(device.clone(), queue.clone(), box_shapes).expect("narrowphase");
    let run = resident_against_cpu(
        &device,
        &queue,
        &mut boxes_only,
        box_shapes,
        &bodies,
        &pairs,
        &batch,
        100,
    );
    assert_eq!(
        run,
        [2, 0, 0, 0],
        "the SAT's and the clip's sets are never written"
    );
}

/// A resident call of hull pairs below `PAIR_PER_WORKGROUP_PAIRS` over several dispatch chunks
/// (128 KiB bindings: 1,024 pairs a chunk, and the list, bound whole, holds 1,170; 1,100 pairs
/// take 2 chunks): every chunk's SAT runs one
/// workgroup per pair and its clip 8 invocations a pair (the prepare kernel's fourth set, per
/// chunk), each entry naming its pair; the same bits as the default device's one chunk, and
/// the CPU's results by the contract.
#[test]
fn per_group_clipping_over_several_chunks_lists_every_pair_once() {
    let limits = wgpu::Limits {
        max_storage_buffer_binding_size: 1 << 17,
        max_storage_buffers_per_shader_stage: 9,
        ..wgpu::Limits::default()
    };
    let Some((device, queue)) = device_or_skip(limits) else {
        return;
    };
    let mut rng = seeded_rng(0x96_c11b);
    let shapes: Vec<Shape> = [16, 24, 32, 32]
        .map(|count| {
            let points = support::shapes::random_hull_points(&mut rng, count, Vec3::splat(0.45));
            Shape::Hull(hullsat::ConvexHull::from_points(&points).expect("a hull"))
        })
        .into();
    // 2,200 bodies of 48 bytes: within one binding.
    let (bodies, pairs) = scene(&mut rng, shapes.len(), 1_100, 0.6);
    let chunk = 1_024;
    let chunks = pairs.len().div_ceil(chunk);
    let mut chunked =
        GpuNarrowphase::with_device(device.clone(), queue.clone(), &shapes).expect("narrowphase");
    let results = resident_run(&mut chunked, &bodies, &pairs);
    // Every chunk's SAT one workgroup per pair and its clip per group.
    let args = resident_dispatch_args(&chunked).expect("encoded");
    let bytes = read_back(
        &device,
        &queue,
        device.create_command_encoder(&Default::default()),
        &args,
    );
    let args: &[wgpu::util::DispatchIndirectArgs] = bytemuck::cast_slice(&bytes[..bytes.len() / 12 * 12]);
    for k in 0..chunks {
        let len = chunk.min(pairs.len() - k * chunk) as u32;
        let set = |s: usize| args[s * chunks + k].x;
        assert_eq!(
            [set(1), set(2), set(3)],
            [0, len, len.div_ceil(CLIP_GROUP_PAIRS)],
            "chunk {k}"
        );
    }
    // The shared device: one chunk.
    let mut whole = gpu_or_skip(&shapes).expect("the adapter exists");
    assert_eq!(results, resident_run(&mut whole, &bodies, &pairs));
    let cpu = CpuNarrowphase::new(shapes.clone())
        .collide(&bodies, &pairs, 0.0)
        .expect("CPU collide");
    let touching = cpu.iter().flatten().count();
    assert!(touching > 300 && touching < 1_000, "{touching} of 1100 touch");
    assert_same_results(&shapes, &bodies, &pairs, &results, &cpu);
}

/// Pairs given with the higher body index first are computed in canonical order and swapped
/// back, as every backend does (`scene::validate`), so a resident call agrees with the CPU by
/// the contract whichever way round the caller gives them. Computed as given, 29 of 3,000 such
/// hull pairs took another reference face than the CPU within the face preference tolerance,
/// outside the contract. Hulls, a box, a sphere and a capsule (the primitives' own swap).
#[test]
fn pairs_given_either_way_round_agree_with_the_cpu() {
    use hullsat::{Capsule, Sphere};
    let mut rng = seeded_rng(0x5a_a9ed);
    let mut shapes: Vec<Shape> = [16, 24, 32, 32]
        .map(|count| {
            let points = support::shapes::random_hull_points(&mut rng, count, Vec3::splat(0.45));
            Shape::Hull(hullsat::ConvexHull::from_points(&points).expect("a hull"))
        })
        .into();
    shapes.extend(boxes(&mut rng, 1));
    shapes.push(Shape::Sphere(Sphere::new(0.3).unwrap()));
    shapes.push(Shape::Capsule(Capsule::new(0.3, 0.2).unwrap()));
    let (bodies, ascending) = scene(&mut rng, shapes.len(), 3_000, 1.0);
    let Some(mut gpu) = gpu_or_skip(&shapes) else {
        return;
    };
    let cpu = CpuNarrowphase::new(shapes.clone());
    for pairs in [
        ascending.clone(),
        ascending.iter().map(|&[a, b]| [b, a]).collect(),
    ] {
        let results = resident_run(&mut gpu, &bodies, &pairs);
        let expected = cpu.collide(&bodies, &pairs, 0.0).expect("CPU collide");
        let touching = expected.iter().flatten().count();
        assert!(touching > 2_500, "{touching} of 3000 touch");
        assert_same_results(&shapes, &bodies, &pairs, &results, &expected);
    }
}

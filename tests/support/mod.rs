//! Helpers shared by the integration tests: seeded randomness, approximate comparisons.
#![allow(dead_code, unused_imports)] // each test binary uses its own subset

pub mod analytic;
pub mod clip_paths;
pub mod oracle;
pub mod parry;
pub mod shapes;
pub mod suites;
pub mod triangle_kernel;
pub mod wgsl;
pub mod worlds;

pub use shapes::{random_direction, random_direction as random_unit_vector, random_rotation};

use glam::Vec3;
use hullsat::{Body, ConvexHull, GpuError, GpuNarrowphase, Manifold, Pose, Shape};
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64;

/// A reproducible random generator.
pub fn seeded_rng(seed: u64) -> Pcg64 {
    Pcg64::seed_from_u64(seed)
}

/// A vector with each coordinate uniform in `[-extent, extent]`.
pub fn random_vec3(rng: &mut Pcg64, extent: f32) -> Vec3 {
    Vec3::new(
        rng.random_range(-extent..=extent),
        rng.random_range(-extent..=extent),
        rng.random_range(-extent..=extent),
    )
}

/// A random pose: rotation uniform, translation in `[-extent, extent]³`.
pub fn random_pose(rng: &mut Pcg64, extent: f32) -> Pose {
    Pose::new(random_vec3(rng, extent), random_rotation(rng))
}

/// Panics with `what` unless `|actual - expected| <= tolerance`.
#[track_caller]
pub fn assert_near(actual: f32, expected: f32, tolerance: f32, what: &str) {
    assert!(
        (actual - expected).abs() <= tolerance,
        "{what}: got {actual}, expected {expected} (tolerance {tolerance})"
    );
}

/// Panics with `what` unless `|actual - expected| <= tolerance`.
#[track_caller]
pub fn assert_vec_near(actual: Vec3, expected: Vec3, tolerance: f32, what: &str) {
    assert!(
        actual.distance(expected) <= tolerance,
        "{what}: got {actual}, expected {expected} (tolerance {tolerance})"
    );
}

/// Panics unless `moved` is `original` carried by the rigid motion `motion`: same separation,
/// depths and ids, normal rotated, positions transformed.
#[track_caller]
pub fn assert_manifold_moved(original: &Manifold, moved: &Manifold, motion: &Pose, tolerance: f32) {
    assert_near(moved.separation, original.separation, tolerance, "separation");
    assert_vec_near(
        moved.normal,
        motion.transform_vector(original.normal),
        tolerance,
        "normal",
    );
    assert_eq!(moved.point_count(), original.point_count(), "point count");
    for (m, o) in moved.points().iter().zip(original.points()) {
        assert_near(m.depth, o.depth, tolerance, "depth");
        assert_vec_near(
            m.position.as_vec3(),
            motion.transform_dpoint(o.position).as_vec3(),
            tolerance,
            "position",
        );
        assert_eq!(m.id, o.id, "feature id");
    }
}

/// Panics unless the manifold's points are `expected` (position, depth) in some order.
#[track_caller]
pub fn assert_points_match(manifold: &Manifold, expected: &[(Vec3, f32)], tolerance: f32) {
    assert_eq!(
        manifold.points().len(),
        expected.len(),
        "point count of {manifold:?}"
    );
    for &(position, depth) in expected {
        assert!(
            manifold
                .points()
                .iter()
                .any(|p| p.position.as_vec3().distance(position) <= tolerance
                    && (p.depth - depth).abs() <= tolerance),
            "no point at {position} with depth {depth} in {:?}",
            manifold.points()
        );
    }
}

/// Signed distance-like value of world point `p` to the boundary of `hull` at `pose`: the
/// largest signed distance to a face plane. Zero on the surface, negative inside, positive
/// outside (exact distance only near faces, which is all the surface checks need).
pub fn hull_plane_distance(hull: &ConvexHull, pose: &Pose, p: Vec3) -> f32 {
    let local = pose.inverse_transform_point(p.as_dvec3());
    hull.planes()
        .iter()
        .map(|plane| plane.signed_distance(local))
        .fold(f32::NEG_INFINITY, f32::max)
}

/// Box half extents around `size` (length units): cube-like, a thin slab (100:1), or a needle
/// (100:1), each about a third of the time, in a random axis order.
pub fn random_half_extents(rng: &mut Pcg64, size: f32) -> Vec3 {
    let jitter = |rng: &mut Pcg64| rng.random_range(0.5f32..1.5);
    let mut e = match rng.random_range(0..3) {
        0 => Vec3::new(jitter(rng), jitter(rng), jitter(rng)),
        1 => Vec3::new(jitter(rng), jitter(rng), 0.01),
        _ => Vec3::new(jitter(rng) * 0.01, 0.01, 1.0),
    } * size;
    match rng.random_range(0..3) {
        0 => {}
        1 => e = Vec3::new(e.y, e.z, e.x),
        _ => e = Vec3::new(e.z, e.x, e.y),
    }
    e
}

/// True when the environment demands a GPU adapter (CI sets `HULLSAT_REQUIRE_GPU=1`).
pub fn gpu_required() -> bool {
    std::env::var("HULLSAT_REQUIRE_GPU").is_ok_and(|v| v == "1")
}

/// What a GPU object's start gave, or `None` (after printing why) when this machine has no
/// adapter and `HULLSAT_REQUIRE_GPU=1` is not set. Any other error fails the test, naming
/// `what`.
pub fn started_or_skip<T>(what: &str, started: Result<T, GpuError>) -> Option<T> {
    match started {
        Ok(value) => Some(value),
        Err(GpuError::NoAdapter(why)) => {
            assert!(!gpu_required(), "HULLSAT_REQUIRE_GPU=1 but no GPU adapter: {why}");
            eprintln!("skipping GPU test: no adapter ({why}); set HULLSAT_REQUIRE_GPU=1 to fail instead");
            None
        }
        Err(e) => panic!("{what} could not start: {e}"),
    }
}

/// The GPU narrowphase for `shapes`, or `None` as for [`started_or_skip`].
pub fn gpu_or_skip(shapes: &[Shape]) -> Option<GpuNarrowphase> {
    started_or_skip("GPU narrowphase", GpuNarrowphase::new(shapes))
}

/// `make(shared context)` (a probe of a GPU stage), or `None` as for [`started_or_skip`].
pub fn on_shared_context_or_skip<T>(
    what: &str,
    make: impl FnOnce(std::sync::Arc<hullsat::gpu::GpuContext>) -> Result<T, GpuError>,
) -> Option<T> {
    started_or_skip(what, hullsat::gpu::shared_context().and_then(make))
}

/// The GPU manifolds of one pair, shape `a` at `pose_a` (body 0) against `b` at `pose_b`
/// (body 1), once per margin in `margins`, with the host-pair count of the last call; `None` as
/// for [`gpu_or_skip`].
pub fn gpu_one_pair(
    a: Shape,
    pose_a: Pose,
    b: Shape,
    pose_b: Pose,
    margins: &[f32],
) -> Option<(Vec<Option<Manifold>>, usize)> {
    let mut gpu = gpu_or_skip(&[a, b])?;
    let bodies = [
        Body {
            shape: 0,
            pose: pose_a,
        },
        Body {
            shape: 1,
            pose: pose_b,
        },
    ];
    let manifolds = margins
        .iter()
        .map(|&margin| gpu.collide(&bodies, &[[0, 1]], margin).expect("GPU collide runs")[0])
        .collect();
    Some((manifolds, gpu.timings().host_pairs))
}

/// The test device for each distinct `limits`: created once per process and kept.
type TestDevices = Vec<(wgpu::Limits, wgpu::Device, wgpu::Queue)>;

/// A second device with `limits` (as a renderer would make one), from the shared context's
/// adapter: no second wgpu instance. `None` as for [`gpu_or_skip`].
///
/// One device per distinct `limits` per process: the first call creates it (behind a lock, so
/// creations never run concurrently), every call returns a clone, and it is never dropped.
/// NVIDIA's driver deadlocks when devices are destroyed (or one destroyed while another is
/// created) on several threads at once. Tests running at once share the device: none may
/// destroy it or set its callbacks. tests/gpu_devices.rs keeps
/// device requests to here and the files it names.
pub fn device_or_skip(limits: wgpu::Limits) -> Option<(wgpu::Device, wgpu::Queue)> {
    static DEVICES: std::sync::OnceLock<std::sync::Mutex<TestDevices>> = std::sync::OnceLock::new();
    let context = started_or_skip("GPU context", hullsat::gpu::shared_context())?;
    // A test that panicked while holding the lock left the list as it was: still usable.
    let mut devices = DEVICES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((_, device, queue)) = devices.iter().find(|(l, _, _)| *l == limits) {
        return Some((device.clone(), queue.clone()));
    }
    let adapter = context.adapter().expect("the shared context keeps its adapter");
    let descriptor = wgpu::DeviceDescriptor {
        required_limits: limits.clone(),
        ..Default::default()
    };
    let (device, queue) =
        pollster::block_on(adapter.request_device(&descriptor)).expect("device with these limits");
    devices.push((limits, device.clone(), queue.clone()));
    Some((device, queue))
}

/// The CPU broadphase's pairs of `bodies`, after asserting that the GPU broadphase's host call
/// lists every one of them and that its list passes the narrowphase's door as it is; `None`
/// without an adapter.
pub fn gpu_broadphase_covers_cpu(shapes: &[Shape], bodies: &[Body], margin: f32) -> Option<Vec<[u32; 2]>> {
    let cpu = hullsat::broadphase::candidate_pairs(shapes, bodies, margin);
    let mut gpu = started_or_skip("GPU broadphase", hullsat::broadphase::GpuBroadphase::new(shapes))?;
    let listed = gpu.candidate_pairs_at_most(bodies, margin, 1 << 20).unwrap();
    let missing: Vec<_> = cpu.iter().filter(|p| listed.binary_search(p).is_err()).collect();
    assert!(missing.is_empty(), "CPU pairs the GPU missed: {missing:?}");
    assert!(
        hullsat::CpuNarrowphase::new(shapes)
            .collide(bodies, &listed, margin)
            .is_ok(),
        "the GPU's list passes the door"
    );
    Some(cpu)
}

/// Panics unless every other CPU entry point (single thread, `collide_into`, the contact cache
/// cold and warm, serial and parallel) gives `results`, `collide`'s answer, bit for bit.
pub fn assert_cpu_entry_points_agree(
    cpu: &hullsat::CpuNarrowphase,
    bodies: &[Body],
    pairs: &[[u32; 2]],
    margin: f32,
    results: &[Option<Manifold>],
) {
    assert_eq!(cpu.collide_single_thread(bodies, pairs, margin).unwrap(), results);
    let mut set = hullsat::ContactSet::new();
    cpu.collide_into(bodies, pairs, margin, &mut set).unwrap();
    assert_eq!(set.to_options(pairs.len()), results);
    let mut cache = hullsat::ContactCache::new();
    for _ in 0..2 {
        assert_eq!(cache.collide_batch(cpu, bodies, pairs, margin).unwrap(), results);
        assert_eq!(
            cache.collide_batch_parallel(cpu, bodies, pairs, margin).unwrap(),
            results
        );
    }
}

/// A resident batch's buffers, as a caller's own (STORAGE and COPY_DST) on `device`: the bodies
/// in the GPU layout, the pairs, and a pair count holding the number of pairs.
pub struct ResidentScene {
    pub bodies: wgpu::Buffer,
    pub pairs: wgpu::Buffer,
    pub count: wgpu::Buffer,
    pub pair_count: u32,
}

impl ResidentScene {
    pub fn new(device: &wgpu::Device, bodies: &[Body], pairs: &[[u32; 2]]) -> Self {
        use hullsat::narrowphase::gpu::layout::GpuBody;
        use wgpu::util::DeviceExt;
        let storage = |label: &str, contents: &[u8]| {
            device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            })
        };
        let gpu_bodies: Vec<GpuBody> = bodies.iter().map(GpuBody::from_body).collect();
        ResidentScene {
            bodies: storage("bodies", bytemuck::cast_slice(&gpu_bodies)),
            pairs: storage("pairs", bytemuck::cast_slice(pairs)),
            count: storage("pair count", bytemuck::bytes_of(&(pairs.len() as u32))),
            pair_count: pairs.len() as u32,
        }
    }

    /// The batch of every pair at `margin` (length units).
    pub fn batch(&self, margin: f32) -> hullsat::narrowphase::gpu::ResidentBatch<'_> {
        hullsat::narrowphase::gpu::ResidentBatch {
            bodies: &self.bodies,
            pairs: &self.pairs,
            pair_count: &self.count,
            pair_count_offset: 0,
            max_pairs: self.pair_count,
            margin,
        }
    }
}

/// Longest a test waits for the GPU to finish a submission and map its read-back buffer.
pub const GPU_WAIT: std::time::Duration = std::time::Duration::from_secs(300);

/// Records `batch` on `gpu`'s resident API, submits, and reads the list's entries back, the wait
/// bounded by [`GPU_WAIT`] (safe while other threads poll the same device).
pub fn read_resident(
    gpu: &mut GpuNarrowphase,
    batch: &hullsat::narrowphase::gpu::ResidentBatch,
) -> Vec<hullsat::narrowphase::gpu::layout::GpuManifold> {
    let (device, queue) = (gpu.device().clone(), gpu.queue().clone());
    let mut encoder = device.create_command_encoder(&Default::default());
    let out = gpu.encode_resident(&mut encoder, batch).expect("encodes");
    read_list(&device, &queue, encoder, &out.list)
}

/// Submits `encoder` after copying `buffer` into a mapped one; its bytes, the wait bounded by
/// [`GPU_WAIT`] (safe while other threads poll the device: any poll may run the callback).
pub fn read_bytes(
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
    let (sender, receiver) = std::sync::mpsc::channel();
    staging.map_async(wgpu::MapMode::Read, .., move |r| drop(sender.send(r)));
    device
        .poll(wgpu::PollType::Wait {
            submission_index: Some(submission),
            timeout: Some(GPU_WAIT),
        })
        .expect("finishes");
    receiver
        .recv_timeout(GPU_WAIT)
        .expect("mapped in time")
        .expect("maps");
    let view = staging.get_mapped_range(..).expect("mapped");
    view.to_vec()
}

/// Submits `encoder` after copying the resident manifold `list` into a mapped buffer; the
/// list's entries ([`read_bytes`]).
pub fn read_list(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    encoder: wgpu::CommandEncoder,
    list: &wgpu::Buffer,
) -> Vec<hullsat::narrowphase::gpu::layout::GpuManifold> {
    use hullsat::narrowphase::gpu::layout::{GpuManifold, GpuManifoldCount, MANIFOLD_LIST_HEAD};
    let bytes = read_bytes(device, queue, encoder, list);
    let head: GpuManifoldCount = bytemuck::pod_read_unaligned(&bytes[..MANIFOLD_LIST_HEAD as usize]);
    bytes[MANIFOLD_LIST_HEAD as usize..]
        .chunks_exact(size_of::<GpuManifold>())
        .take(head.count as usize)
        .map(bytemuck::pod_read_unaligned)
        .collect()
}

/// One result per pair from a resident list's `entries` (each pair listed at most once):
/// clipped manifolds moved to the world by A's pose, pairs left to the host computed by the
/// CPU routine as the host API does.
pub fn resident_results(
    entries: &[hullsat::narrowphase::gpu::layout::GpuManifold],
    shapes: &[Shape],
    bodies: &[Body],
    pairs: &[[u32; 2]],
    margin: f32,
) -> Vec<Option<Manifold>> {
    use hullsat::narrowphase::gpu::layout::{MANIFOLD_CLIPPED, MANIFOLD_HOST};
    let mut results: Vec<Option<Manifold>> = vec![None; pairs.len()];
    for raw in entries {
        let pair = raw.pair as usize;
        assert!(results[pair].is_none(), "pair {pair} listed twice");
        let a = &bodies[pairs[pair][0] as usize];
        results[pair] = match raw.status {
            MANIFOLD_CLIPPED => {
                let mut m = Manifold::new(raw.normal.into(), raw.separation);
                for (p, &id) in raw.points.iter().zip(&raw.ids).take(raw.count as usize) {
                    m.push(hullsat::ContactPoint {
                        position: Vec3::new(p[0], p[1], p[2]).as_dvec3(),
                        depth: p[3],
                        id: hullsat::FeatureId(id),
                    });
                }
                Some(m.to_world(&a.pose))
            }
            // As the host API finishes it: canonical order, swapped back.
            MANIFOLD_HOST => hullsat::contract::reference_manifold(shapes, bodies, pairs[pair], margin),
            status => panic!("pair {pair}: status {status}"),
        };
    }
    results
}

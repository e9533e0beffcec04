//! The stage timer (`hullsat::gpu::StageTimer`): a gpu-frame recording (the GPU broadphase,
//! pairs sorted, then the resident narrowphase, one encoder) timed per compute pass by label,
//! with the manifolds bit-identical to those of the same frame untimed.
//!
//! One test in this binary: the timer times every pass on the shared context, so no other test
//! may record on it meanwhile.

mod support;

use std::sync::Arc;

use hullsat::broadphase::gpu::scene_centre;
use hullsat::broadphase::{GpuBroadphase, ResidentBodies};
use hullsat::generate::{ParticleSceneConfig, ShapeMix, generate_particle_scene};
use hullsat::gpu::layout::GpuBody;
use hullsat::gpu::{GpuContext, StageTimer};
use hullsat::narrowphase::gpu::layout::GpuManifold;
use hullsat::{GpuError, GpuNarrowphase, Scene};
use support::{gpu_or_skip, gpu_required, read_list};
use wgpu::util::DeviceExt;

/// The passes of one gpu-frame recording, in order (no "resident order": with fewer than 16,384
/// pair slots a device that can run one workgroup per pair does not order the pairs).
const FRAME_STAGES: [&str; 9] = [
    "bvh boxes",
    "bvh morton",
    "bvh sort",
    "bvh tree",
    "broadphase traversal",
    "pair sort",
    "resident prepare",
    "resident sat",
    "resident clip",
];

/// Timed runs.
const RUNS: usize = 3;

/// One frame on the GPU: the broadphase over `scene`'s bodies in `bodies` (pairs sorted), the
/// resident narrowphase on its pairs, one encoder; the list's entries sorted by pair.
fn frame(
    context: &GpuContext,
    broadphase: &mut GpuBroadphase,
    narrowphase: &mut GpuNarrowphase,
    scene: &Scene,
    bodies: &wgpu::Buffer,
) -> Vec<GpuManifold> {
    let mut encoder = context.device().create_command_encoder(&Default::default());
    let frame = ResidentBodies {
        bodies,
        body_count: scene.bodies.len() as u32,
        origin: scene_centre(&scene.shapes, &scene.bodies),
        margin: scene.margin,
        max_pairs: 16 * scene.bodies.len() as u32,
        sort: true,
    };
    let pairs = broadphase
        .encode_resident(&mut encoder, &frame)
        .expect("broadphase");
    let batch = pairs.batch(bodies, scene.margin);
    let out = narrowphase
        .encode_resident(&mut encoder, &batch)
        .expect("narrowphase");
    let mut entries = read_list(context.device(), context.queue(), encoder, &out.list);
    // The clip kernel appends in whatever order its invocations finish.
    entries.sort_by_key(|m| m.pair);
    entries
}

/// The entries' bytes, to compare bit for bit.
fn bytes(entries: &[GpuManifold]) -> &[u8] {
    bytemuck::cast_slice(entries)
}

#[test]
fn a_timed_frame_lists_its_stages_and_the_same_manifolds() {
    let config = ParticleSceneConfig {
        bodies: 400,
        seed: 3,
        density: 0.3,
        mix: ShapeMix::MIXED,
        margin: 0.0,
    };
    let scene = generate_particle_scene(&config).expect("scene");
    let Some(mut narrowphase) = gpu_or_skip(&scene.shapes) else {
        return;
    };
    let context = Arc::clone(narrowphase.context());
    let mut broadphase =
        GpuBroadphase::with_context(Arc::clone(&context), &scene.shapes).expect("broadphase");
    let gpu_bodies: Vec<GpuBody> = scene.bodies.iter().map(GpuBody::from_body).collect();
    let bodies = context
        .device()
        .create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("stage test bodies"),
            contents: bytemuck::cast_slice(&gpu_bodies),
            usage: wgpu::BufferUsages::STORAGE,
        });
    let mut run = || frame(&context, &mut broadphase, &mut narrowphase, &scene, &bodies);

    let untimed = run();
    assert!(!untimed.is_empty(), "the scene has contacts");
    let Some(timer) = StageTimer::start(&context).expect("starts") else {
        assert!(
            !gpu_required(),
            "HULLSAT_REQUIRE_GPU=1 but {} has no timestamp queries",
            context.adapter_info().name
        );
        eprintln!("skipping: the device has no timestamp queries");
        return;
    };
    assert!(
        matches!(StageTimer::start(&context), Err(GpuError::Unsupported(_))),
        "one timer per context"
    );
    for _ in 0..RUNS {
        let timed = run();
        assert_eq!(bytes(&timed), bytes(&untimed), "the timer changes no result");
        timer.end_run();
    }
    let times = timer.finish().expect("reads back");
    assert_eq!(times.runs, RUNS);
    assert_eq!(times.untimed_passes, 0);
    let labels: Vec<&str> = times.stages.iter().map(|s| s.label).collect();
    assert_eq!(labels, FRAME_STAGES);
    for stage in &times.stages {
        assert_eq!(stage.runs.len(), RUNS, "{stage:?}");
    }
    for run in 0..RUNS {
        let total: f64 = times.stages.iter().map(|s| s.runs[run].as_secs_f64()).sum();
        assert!(total.is_finite() && total > 0.0, "run {run}: {times:?}");
    }

    // Finished, the log is off: another frame records no pass, and a new timer may start.
    assert_eq!(bytes(&run()), bytes(&untimed));
    let timer = StageTimer::start(&context).expect("starts").expect("timestamps");
    drop(timer);
    let empty = StageTimer::start(&context)
        .expect("starts after a drop")
        .expect("timestamps");
    let nothing = empty.finish().expect("reads nothing");
    assert_eq!((nothing.runs, nothing.stages.len()), (0, 0));
}

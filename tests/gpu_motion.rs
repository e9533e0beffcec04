//! The random motion kernel (`hullsat::generate::GpuMotion`, shaders/motion/motion.wgsl): its
//! layout matches the Rust side (no device needed), and it moves bodies as the CPU's
//! `move_bodies` does, up to the documented rounding, also 1e6 from the origin.

mod support;

use std::time::Duration;

use glam::DVec3;
use hullsat::generate::motion::{
    GpuMotionParams, MOTION_WGSL, MOTION_WORKGROUP_SIZE, RandomMotion, UNIT_DRAW,
};
use hullsat::generate::{GpuMotion, ParticleSceneConfig, ShapeMix, generate_particle_scene, move_bodies};
use hullsat::gpu::shared_context;
use hullsat::narrowphase::gpu::layout::GpuBody;
use hullsat::{Body, HalfSpace, Pose, Shape};
use support::started_or_skip;
use support::wgsl::{assert_consts, assert_same_layout, parse, validate};
use wgpu::util::DeviceExt;

/// Per frame, length units: the GPU's shift may round differently from the CPU's by a few f32
/// ulps of itself (at most 1e-3 × a size below 1, so ulps of 1e-10).
const SHIFT_ROUNDING: f64 = 1e-9;
/// Relative to the coordinate: the upload's hi + lo split keeps about 48 bits (2^-48); four
/// times that.
const SPLIT_ROUNDING: f64 = 1.0 / (1u64 << 46) as f64;
/// Per frame, relative to the low part: the GPU adds the shift to it in f32 (half an ulp,
/// 2^-24); twice that.
const LOW_ROUNDING: f64 = 1.0 / (1u64 << 23) as f64;
/// Per frame, per quaternion component: the turn's normalization, the product and the final
/// normalization round differently (a few f32 ulps of 1, 1.2e-7 each).
const ROTATION_ROUNDING: f32 = 1e-6;

fn module() -> naga::Module {
    let read = |path: &str| {
        std::fs::read_to_string(format!("{}/shaders/{path}", env!("CARGO_MANIFEST_DIR")))
            .unwrap_or_else(|e| panic!("{path}: {e}"))
    };
    assert_eq!(
        MOTION_WGSL,
        hullsat::gpu::QUAT_WGSL.to_string()
            + &read("common/body.wgsl")
            + &read("bvh/layout.wgsl")
            + &read("motion/motion.wgsl"),
        "the embedded shader is the files"
    );
    parse("motion.wgsl", MOTION_WGSL)
}

#[test]
fn the_motion_kernel_validates_and_matches_the_rust_layout() {
    use naga::Literal::{F32, U32};
    let module = module();
    validate("motion.wgsl", &module);
    assert_same_layout(
        &module,
        "GpuMotionParams",
        encase_layout!(GpuMotionParams {
            body_count,
            key,
            shift_scale,
            half_angle_scale
        }),
    );
    assert_consts(
        &module,
        &[
            ("WORKGROUP_SIZE", U32(MOTION_WORKGROUP_SIZE)),
            ("UNIT_DRAW", F32(UNIT_DRAW)),
        ],
    );
}

/// A mixed particle scene with a half-space (size 0: it only turns) and some bodies moved 1e6
/// from the origin (the GPU's hi + lo translations).
fn scene(bodies: usize) -> (Vec<Shape>, Vec<Body>) {
    let config = ParticleSceneConfig {
        bodies,
        seed: 5,
        mix: ShapeMix::MIXED,
        ..ParticleSceneConfig::default()
    };
    let mut scene = generate_particle_scene(&config).unwrap();
    for body in scene.bodies.iter_mut().step_by(7) {
        body.pose.translation += DVec3::new(1.0e6, -2.0e6, 0.5e6);
    }
    scene.bodies.push(Body {
        shape: scene.shapes.len() as u32,
        pose: Pose::IDENTITY,
    });
    scene
        .shapes
        .push(Shape::HalfSpace(HalfSpace::new(glam::Vec3::Y, -3.0).unwrap()));
    (scene.shapes, scene.bodies)
}

#[test]
fn gpu_moved_bodies_match_move_bodies_within_rounding() {
    let Some(context) = started_or_skip("GPU context", shared_context()) else {
        return;
    };
    let (shapes, mut bodies) = scene(300);
    let start = bodies.clone();
    let (device, queue) = (context.device(), context.queue());
    let gpu_bodies: Vec<GpuBody> = bodies.iter().map(GpuBody::from_body).collect();
    let buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("test bodies"),
        contents: bytemuck::cast_slice(&gpu_bodies),
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
    });
    let mut gpu = GpuMotion::with_context(context.clone(), &shapes).unwrap();
    let frames = 3;
    let (max_shift, max_angle) = (1e-3, 0.1f32.to_radians());
    for frame in 0..frames {
        let motion = RandomMotion {
            max_shift,
            max_angle,
            seed: 42,
            frame,
        };
        let mut encoder = device.create_command_encoder(&Default::default());
        gpu.encode(&mut encoder, &buffer, bodies.len() as u32, &motion)
            .unwrap();
        queue.submit([encoder.finish()]);
        move_bodies(&shapes, &mut bodies, max_shift, max_angle, 42, frame);
    }
    let moved: Vec<GpuBody> = bytemuck::pod_collect_to_vec(&read(device, queue, &buffer));
    let mut largest_shift = 0.0f64;
    for (i, ((gpu, cpu), before)) in moved.iter().zip(&bodies).zip(&start).enumerate() {
        let joined = DVec3::from_array(gpu.translation_hi.map(f64::from))
            + DVec3::from_array(gpu.translation_lo.map(f64::from));
        let low = DVec3::from_array(gpu.translation_lo.map(f64::from))
            .abs()
            .max_element();
        let tolerance = SPLIT_ROUNDING * cpu.pose.translation.abs().max_element()
            + frames as f64 * (SHIFT_ROUNDING + LOW_ROUNDING * low);
        let error = (joined - cpu.pose.translation).abs().max_element();
        assert!(
            error <= tolerance,
            "body {i}: {joined} vs {}",
            cpu.pose.translation
        );
        let rotation = glam::Quat::from_array(gpu.rotation);
        let turn_error = (rotation - cpu.pose.rotation).to_array().map(f32::abs);
        assert!(
            turn_error.iter().all(|&e| e <= frames as f32 * ROTATION_ROUNDING),
            "body {i}: {rotation} vs {}",
            cpu.pose.rotation
        );
        largest_shift = largest_shift.max((cpu.pose.translation - before.pose.translation).length());
    }
    // The bodies did move (by up to 3 frames × 1e-3 × sizes below 1).
    assert!(largest_shift > 1e-4 && largest_shift < 3e-3, "{largest_shift}");
}

/// `buffer`'s bytes, copied back after the queue's work.
fn read(device: &wgpu::Device, queue: &wgpu::Queue, buffer: &wgpu::Buffer) -> Vec<u8> {
    let staging = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("test readback"),
        size: buffer.size(),
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    encoder.copy_buffer_to_buffer(buffer, 0, &staging, 0, buffer.size());
    let submission = queue.submit([encoder.finish()]);
    staging.map_async(wgpu::MapMode::Read, .., |r| r.expect("maps"));
    device
        .poll(wgpu::PollType::Wait {
            submission_index: Some(submission),
            timeout: Some(Duration::from_secs(120)),
        })
        .expect("finishes");
    staging.get_mapped_range(..).expect("mapped").to_vec()
}

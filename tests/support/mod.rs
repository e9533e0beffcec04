//! Helpers shared by the integration tests: seeded random input and the GPU device.
#![allow(dead_code)]

use glam::{Quat, Vec3};
use hullsat::{GpuError, GpuNarrowphase, Shape};
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64;

/// A seeded random number generator (tests are reproducible).
pub fn rng(seed: u64) -> Pcg64 {
    Pcg64::seed_from_u64(seed)
}

/// A uniformly distributed unit quaternion (Shoemake's method).
pub fn random_rotation(rng: &mut Pcg64) -> Quat {
    let (u1, u2, u3): (f32, f32, f32) = (rng.random(), rng.random(), rng.random());
    let (a, b) = ((1.0 - u1).sqrt(), u1.sqrt());
    let tau = std::f32::consts::TAU;
    Quat::from_xyzw(
        a * (tau * u2).sin(),
        a * (tau * u2).cos(),
        b * (tau * u3).sin(),
        b * (tau * u3).cos(),
    )
    .normalize()
}

/// A uniformly distributed unit vector.
pub fn random_direction(rng: &mut Pcg64) -> Vec3 {
    random_rotation(rng) * Vec3::X
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

/// Prints why a GPU test is skipped, or fails it when `HULLSAT_REQUIRE_GPU=1`.
fn skip_without_adapter(why: &str) {
    assert!(!gpu_required(), "HULLSAT_REQUIRE_GPU=1 but no GPU adapter: {why}");
    eprintln!("skipping GPU test: no adapter ({why}); set HULLSAT_REQUIRE_GPU=1 to fail instead");
}

/// The GPU narrowphase for `shapes`, or `None` (after printing why) when this machine has no
/// adapter and `HULLSAT_REQUIRE_GPU=1` is not set. Any other error fails the test.
pub fn gpu_or_skip(shapes: &[Shape]) -> Option<GpuNarrowphase> {
    match GpuNarrowphase::new(shapes) {
        Ok(gpu) => Some(gpu),
        Err(GpuError::NoAdapter(why)) => {
            skip_without_adapter(&why);
            None
        }
        Err(e) => panic!("GPU narrowphase could not start: {e}"),
    }
}

/// A device with `limits` from the first adapter (as a renderer would make one), or `None` as
/// for [`gpu_or_skip`].
pub fn device_or_skip(limits: wgpu::Limits) -> Option<(wgpu::Device, wgpu::Queue)> {
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let adapter = match pollster::block_on(instance.request_adapter(&Default::default())) {
        Ok(adapter) => adapter,
        Err(e) => {
            skip_without_adapter(&e.to_string());
            return None;
        }
    };
    let descriptor = wgpu::DeviceDescriptor {
        required_limits: limits,
        ..Default::default()
    };
    Some(pollster::block_on(adapter.request_device(&descriptor)).expect("device with these limits"))
}

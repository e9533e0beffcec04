//! The benchmarks' random rigid motion, one frame at a time, on the CPU ([`move_bodies`]) and
//! on the GPU ([`GpuMotion`], over bodies in a GPU buffer, so a multi-frame run never reads
//! back). WGSL twin: `shaders/motion/motion.wgsl`; both run these steps, by these names, and
//! differ only by rounding: the GPU adds the shift to the translation's low f32 part (see
//! [`GpuMotion`]).
//!
//! Per body `i`, with `key` = `frame_key(seed, frame)` (a counter-based hash: no RNG state, so
//! every body of every frame is drawn independently):
//! 1. `body_state`: a 32-bit state hashed from `(key, i)`.
//! 2. `signed_draw` k (k = 0..5): six draws uniform in `[-1, 1)`, 24 bits each.
//! 3. `body_shift`: draws 0..2 times `max_shift × size / √3`, at most `max_shift × size` long.
//! 4. `body_turn`: the unit quaternion `(v, 1)` normalized, `v` = draws 3..5 times
//!    `max_angle / (2√3)`: a turn by `2 atan(|v|) <= max_angle` radians about `v`.
//! 5. The new pose: translation plus the shift, `turn * rotation` normalized.

use std::sync::Arc;

use encase::ShaderType;
use glam::{Quat, Vec3};
use rayon::prelude::*;
use wgpu::util::DeviceExt;

use crate::gpu::buffers::{MIN_BUFFER_BYTES, binding, uniform_buffer};
use crate::gpu::context::ErrorScopes;
use crate::gpu::layout::uniform_bytes;
use crate::gpu::pipeline::{bind_group, bind_group_layout, compute_pipeline, grid, storage, uniform};
use crate::gpu::{GpuContext, GpuError};
use crate::pose::Pose;
use crate::scene::{Body, InputError};
use crate::shape::Shape;

/// The WGSL source of the motion kernel: the quaternion helpers ([`crate::gpu::QUAT_WGSL`]),
/// the BVH's shared structs (`shaders/bvh/layout.wgsl`: the `GpuBody` layout, `linear_id`),
/// then `shaders/motion/motion.wgsl`.
pub const MOTION_WGSL: &str = concat!(
    include_str!("../../shaders/common/quat.wgsl"),
    include_str!("../../shaders/common/body.wgsl"),
    include_str!("../../shaders/bvh/layout.wgsl"),
    include_str!("../../shaders/motion/motion.wgsl")
);

/// Invocations per workgroup of the motion kernel; must match `WORKGROUP_SIZE` in motion.wgsl.
pub const MOTION_WORKGROUP_SIZE: u32 = 64;

/// 1/√3 (f32): scales a per-axis bound so that a vector of three such components is at most as
/// long as the bound.
const FRAC_1_SQRT_3: f32 = 0.577_350_26;

/// Step of a 24-bit draw, 2^-24 (dimensionless); must match `UNIT_DRAW` in motion.wgsl.
pub const UNIT_DRAW: f32 = 1.0 / (1u32 << 24) as f32;

/// One frame of the random motion: every body moves by a translation of at most `max_shift` ×
/// its shape's size ([`Shape::size`]; 0 for a half-space) and a rotation of at most
/// `max_angle`, both about its own origin in world space. The same values always give the same
/// motion.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RandomMotion {
    /// Largest translation, relative to the shape's size (dimensionless, finite, >= 0).
    pub max_shift: f32,
    /// Largest rotation, radians (finite, >= 0).
    pub max_angle: f32,
    /// Seed of the motion.
    pub seed: u64,
    /// Frame number: frame `n` of a seed is always the same motion.
    pub frame: u64,
}

impl RandomMotion {
    /// `max_shift / √3`: times a size, the largest shift per axis (length units).
    fn shift_scale(&self) -> f32 {
        self.max_shift * FRAC_1_SQRT_3
    }

    /// `max_angle / (2√3)`: the largest quaternion vector part per axis.
    fn half_angle_scale(&self) -> f32 {
        0.5 * self.max_angle * FRAC_1_SQRT_3
    }

    /// Steps 1 to 5 for body `index` of shape size `size` (length units) at `pose`.
    fn moved(&self, key: u32, index: u32, size: f32, pose: &Pose) -> Pose {
        let state = body_state(key, index);
        let shift = body_shift(state, self.shift_scale() * size);
        let turn = body_turn(state, self.half_angle_scale());
        Pose::new(
            pose.translation + shift.as_dvec3(),
            (turn * pose.rotation).normalize(),
        )
    }

    /// An error naming a bound that is not finite and >= 0.
    fn check(&self) -> Result<(), InputError> {
        for (name, value) in [("max_shift", self.max_shift), ("max_angle", self.max_angle)] {
            if !value.is_finite() || value < 0.0 {
                return Err(InputError::new(
                    name,
                    format!("expected a finite number >= 0, got {value}"),
                ));
            }
        }
        Ok(())
    }
}

/// Moves every body by a small random rigid motion, as one simulation frame would (see the
/// module docs): a translation of at most `max_shift` × the body's shape size
/// ([`Shape::size`]; each axis uniform in ±`max_shift` × size / √3) and a rotation of at most
/// `max_angle` radians (about an axis drawn the same way), applied in world space about the
/// body's origin. Seeded by `seed` and `frame`, and drawn per body index, so frame `n` of a
/// seed is always the same motion, whatever the thread count, and [`GpuMotion`] moves bodies
/// alike up to rounding. Runs on all threads. Panics if a body's shape index is out of range.
pub fn move_bodies(
    shapes: &[Shape],
    bodies: &mut [Body],
    max_shift: f32,
    max_angle: f32,
    seed: u64,
    frame: u64,
) {
    let motion = RandomMotion {
        max_shift,
        max_angle,
        seed,
        frame,
    };
    let key = frame_key(seed, frame);
    bodies.par_iter_mut().enumerate().for_each(|(i, body)| {
        let size = shapes[body.shape as usize].size();
        body.pose = motion.moved(key, i as u32, size, &body.pose);
    });
}

/// A 32-bit integer hash (PCG's output permutation, Jarzynski and Olano 2020, "Hash Functions
/// for GPU Rendering").
fn motion_hash(v: u32) -> u32 {
    let state = v.wrapping_mul(747_796_405).wrapping_add(2_891_336_453);
    let word = ((state >> ((state >> 28) + 4)) ^ state).wrapping_mul(277_803_737);
    (word >> 22) ^ word
}

/// The frame's key, hashed from the seed's and the frame's 32-bit halves (host only; the kernel
/// gets it as a parameter).
fn frame_key(seed: u64, frame: u64) -> u32 {
    [seed, seed >> 32, frame, frame >> 32]
        .into_iter()
        .fold(0, |key, word| motion_hash(key ^ word as u32))
}

/// Step 1.
fn body_state(key: u32, body: u32) -> u32 {
    motion_hash(key ^ motion_hash(body))
}

/// Step 2: the top 24 bits of a hash as a multiple of 2^-24 in `[0, 1)`, then `[-1, 1)` (exact).
fn signed_draw(state: u32, k: u32) -> f32 {
    2.0 * ((motion_hash(state.wrapping_add(k)) >> 8) as f32 * UNIT_DRAW) - 1.0
}

/// Step 3.
fn body_shift(state: u32, scale: f32) -> Vec3 {
    Vec3::new(
        signed_draw(state, 0),
        signed_draw(state, 1),
        signed_draw(state, 2),
    ) * scale
}

/// Step 4.
fn body_turn(state: u32, half_angle_scale: f32) -> Quat {
    let v = Vec3::new(
        signed_draw(state, 3),
        signed_draw(state, 4),
        signed_draw(state, 5),
    ) * half_angle_scale;
    Quat::from_xyzw(v.x, v.y, v.z, 1.0).normalize()
}

/// The kernel's parameters (a uniform, written with encase); must match `GpuMotionParams` in
/// motion.wgsl.
#[derive(Clone, Copy, Debug, Default, PartialEq, ShaderType)]
pub struct GpuMotionParams {
    /// Bodies to move.
    pub body_count: u32,
    /// The frame's key (`frame_key` of the seed and frame).
    pub key: u32,
    /// `max_shift / √3`: times a size, the largest shift per axis (length units).
    pub shift_scale: f32,
    /// `max_angle / (2√3)`: the largest quaternion vector part per axis.
    pub half_angle_scale: f32,
}

/// The kernel, compiled once per device.
struct MotionKernel {
    layout: wgpu::BindGroupLayout,
    pipeline: wgpu::ComputePipeline,
}

impl MotionKernel {
    fn compile(context: &GpuContext) -> MotionKernel {
        let device = context.device();
        let layout = bind_group_layout(
            device,
            "motion",
            &[
                storage(true),
                storage(false),
                uniform(false, Some(GpuMotionParams::min_size())),
            ],
        );
        let pipeline = compute_pipeline(device, "motion", "motion.wgsl", MOTION_WGSL, &[&layout]);
        MotionKernel { layout, pipeline }
    }
}

/// [`move_bodies`] on the GPU, in place, over bodies in the caller's buffer (the `GpuBody`
/// layout of [`crate::narrowphase::gpu::layout::GpuBody`]): the shapes' sizes uploaded once,
/// one dispatch per frame recorded into the caller's encoder. The shift is added to
/// `translation_lo` (`translation_hi` is kept), so a body's position carries the f32 rounding
/// of its distance moved since its upload, per frame (2^-24 of it) besides the split's own.
pub struct GpuMotion {
    context: Arc<GpuContext>,
    kernel: Arc<MotionKernel>,
    sizes: wgpu::Buffer,
    params: wgpu::Buffer,
}

impl GpuMotion {
    /// The kernel on `context`'s device, for bodies whose shape indices point into `shapes`
    /// (a body with another index is left in place).
    ///
    /// # Errors
    /// [`GpuError`] when the device is lost or the kernel does not build.
    pub fn with_context(context: Arc<GpuContext>, shapes: &[Shape]) -> Result<Self, GpuError> {
        context.check_health()?;
        let kernel = context.kernels(MotionKernel::compile)?;
        let device = context.device();
        let scopes = ErrorScopes::push(device);
        let sizes: Vec<f32> = shapes.iter().map(Shape::size).collect();
        let sizes = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("motion sizes"),
            // A storage binding cannot be empty: no shapes keeps one unused size.
            contents: bytemuck::cast_slice(if sizes.is_empty() { &[0.0] } else { &sizes }),
            usage: wgpu::BufferUsages::STORAGE,
        });
        let params = uniform_buffer(device, "motion params", MIN_BUFFER_BYTES);
        scopes.pop()?;
        Ok(GpuMotion {
            context,
            kernel,
            sizes,
            params,
        })
    }

    /// Records into `encoder` the motion of `motion.frame` for the first `body_count` bodies of
    /// `bodies` (a `STORAGE` buffer on this device), moved in place. The parameters go through
    /// the queue: submit the encoder before the next call.
    ///
    /// # Errors
    /// [`GpuError::Input`] naming a bound of `motion` that is not finite and >= 0, or `bodies`
    /// when the buffer lacks `STORAGE` or is too small; [`GpuError::TooLarge`] past the
    /// device's dispatch limit; [`GpuError::Wgpu`] when wgpu rejects the commands.
    pub fn encode(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        bodies: &wgpu::Buffer,
        body_count: u32,
        motion: &RandomMotion,
    ) -> Result<(), GpuError> {
        self.context.check_health()?;
        motion.check()?;
        if !bodies.usage().contains(wgpu::BufferUsages::STORAGE) {
            return Err(InputError::new("bodies", "the buffer needs BufferUsages::STORAGE").into());
        }
        let body_bytes = u64::from(body_count) * size_of::<crate::narrowphase::gpu::layout::GpuBody>() as u64;
        if body_bytes > bodies.size() {
            return Err(InputError::new(
                "bodies",
                format!(
                    "the buffer holds {} bytes, {body_count} bodies need {body_bytes}",
                    bodies.size()
                ),
            )
            .into());
        }
        if body_count == 0 {
            return Ok(());
        }
        let context = &*self.context;
        let (x, y) = grid(
            "motion dispatch",
            u64::from(body_count),
            MOTION_WORKGROUP_SIZE,
            context.limits.max_workgroups,
        )?;
        let params = GpuMotionParams {
            body_count,
            key: frame_key(motion.seed, motion.frame),
            shift_scale: motion.shift_scale(),
            half_angle_scale: motion.half_angle_scale(),
        };
        context
            .queue()
            .write_buffer(&self.params, 0, &uniform_bytes(&params)?);
        let device = context.device();
        let scopes = ErrorScopes::push(device);
        let group = bind_group(
            device,
            "motion",
            &self.kernel.layout,
            &[
                binding(0, &self.sizes, 0, self.sizes.size()),
                binding(1, bodies, 0, body_bytes),
                binding(2, &self.params, 0, GpuMotionParams::min_size().get()),
            ],
        );
        {
            let mut pass = context.begin_pass(encoder, "motion");
            pass.set_pipeline(&self.kernel.pipeline);
            pass.set_bind_group(0, &group, &[]);
            pass.dispatch_workgroups(x, y, 1);
        }
        scopes.pop()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_draws_are_exact_multiples_of_the_draw_step_in_range() {
        for state in [0, 1, 0xdead_beef, u32::MAX] {
            for k in 0..6 {
                let draw = signed_draw(state, k);
                assert!((-1.0..1.0).contains(&draw), "{draw}");
                // (draw + 1) / 2 is a whole number of steps.
                let steps = (draw + 1.0) * 0.5 / UNIT_DRAW;
                assert_eq!(steps, steps.round(), "{draw}");
            }
        }
        assert_ne!(frame_key(0, 1), frame_key(1, 0));
        assert_ne!(frame_key(0, 1 << 32), frame_key(0, 1));
    }
}

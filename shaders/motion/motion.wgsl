// The bench's random rigid motion on the GPU: every body of a GpuBody buffer moved in place by
// one frame's motion. Rust twin: src/generate/motion.rs (`move_bodies` runs the same steps, by
// the same names, on the CPU; `GpuMotion` hosts this kernel); tests/gpu_motion.rs checks the
// layout and that both move bodies alike. Compiled after shaders/common/quat.wgsl (quat_mul)
// shaders/common/body.wgsl (GpuBody) and shaders/bvh/layout.wgsl (linear_id), see MOTION_WGSL.
//
// Per body i, with `key` = frame_key(seed, frame) from the host:
// 1. body_state: a 32-bit state hashed from (key, i), so bodies move independently.
// 2. signed_draw k (k = 0..5): six draws uniform in [-1, 1), 24 bits each.
// 3. body_shift: draws 0..2 times max_shift * size / sqrt(3) (at most max_shift * size long).
// 4. body_turn: the unit quaternion (v, 1) normalized, v = draws 3..5 times max_angle /
//    (2 sqrt(3)): a turn by 2 atan(|v|) <= max_angle radians about v.
// 5. The new pose: translation + shift (added to the low part: f32 rounding of the distance
//    moved since the upload), turn * rotation normalized.

// Must match crate::generate::motion::MOTION_WORKGROUP_SIZE.
const WORKGROUP_SIZE: u32 = 64u;
// Must match crate::generate::motion::UNIT_DRAW: 2^-24, a 24-bit draw's step.
const UNIT_DRAW: f32 = 0x1p-24f;

// Must match crate::generate::motion::GpuMotionParams.
struct GpuMotionParams {
    // Bodies to move (the first body_count of `bodies`).
    body_count: u32,
    // The frame's key (frame_key of the seed and frame).
    key: u32,
    // max_shift / sqrt(3): times a shape's size, the largest shift per axis (length units).
    shift_scale: f32,
    // max_angle / (2 sqrt(3)), radians: the largest quaternion vector part per axis.
    half_angle_scale: f32,
}

// Each shape's size (Shape::size), length units.
@group(0) @binding(0) var<storage, read> sizes: array<f32>;
@group(0) @binding(1) var<storage, read_write> bodies: array<GpuBody>;
@group(0) @binding(2) var<uniform> params: GpuMotionParams;

// A 32-bit integer hash (PCG's output permutation, Jarzynski and Olano 2020).
fn motion_hash(v: u32) -> u32 {
    let state = v * 747796405u + 2891336453u;
    let word = ((state >> ((state >> 28u) + 4u)) ^ state) * 277803737u;
    return (word >> 22u) ^ word;
}

// Step 1.
fn body_state(key: u32, body: u32) -> u32 {
    return motion_hash(key ^ motion_hash(body));
}

// Step 2: the top 24 bits of a hash as a multiple of 2^-24 in [0, 1), then [-1, 1) (exact).
fn signed_draw(state: u32, k: u32) -> f32 {
    return 2.0 * (f32(motion_hash(state + k) >> 8u) * UNIT_DRAW) - 1.0;
}

// Step 3.
fn body_shift(state: u32, scale: f32) -> vec3<f32> {
    return vec3<f32>(signed_draw(state, 0u), signed_draw(state, 1u), signed_draw(state, 2u)) * scale;
}

// Step 4.
fn body_turn(state: u32, half_angle_scale: f32) -> vec4<f32> {
    let v = vec3<f32>(signed_draw(state, 3u), signed_draw(state, 4u), signed_draw(state, 5u))
        * half_angle_scale;
    return normalize(vec4<f32>(v, 1.0));
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = linear_id(id, groups);
    if i >= params.body_count {
        return;
    }
    let body = bodies[i];
    if body.shape >= arrayLength(&sizes) {
        return;
    }
    let state = body_state(params.key, i);
    let shift = body_shift(state, params.shift_scale * sizes[body.shape]);
    let turn = body_turn(state, params.half_angle_scale);
    // Step 5. The shift goes into the low part only: hi + lo stays the position, and no
    // error-free sum is needed (compilers may simplify its cancellations away).
    bodies[i].translation_lo = body.translation_lo + shift;
    bodies[i].rotation = normalize(quat_mul(turn, body.rotation));
}

// A body's world pose and shape, the one body layout every kernel reads (narrowphase, BVH
// build, broadphase, rays, motion), so one caller buffer serves them all. Rust twin:
// crate::gpu::layout::GpuBody (48 bytes; checked by tests/gpu_layout.rs and
// tests/raycast_layout.rs).
struct GpuBody {
    // Unit quaternion xyzw, body to world.
    rotation: vec4<f32>,
    // World translation rounded to f32, length units.
    translation_hi: vec3<f32>,
    // Index into the shape list (Body::shape).
    shape: u32,
    // World translation minus translation_hi (0 is fine); world = hi + lo.
    translation_lo: vec3<f32>,
    _pad: u32,
}

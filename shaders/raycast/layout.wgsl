// The ray, shared by the traversal (raycast.wgsl) and the ray order (ray_order.wgsl). Rust twin:
// src/raycast/layout.rs (checked by tests/raycast_layout.rs).

// Must match crate::raycast::layout::GpuRay (world; origin split hi + lo).
struct GpuRay {
    origin_hi: vec3<f32>,
    max_distance: f32,
    origin_lo: vec3<f32>,
    // The ordered copy's only: the ray's index in the caller's batch.
    index: u32,
    direction: vec3<f32>,
    _pad1: u32,
}

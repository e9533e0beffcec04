//! The test kernel of the per-triangle mesh contacts: the clip kernel's files (`CLIP_WGSL`),
//! shaders/narrowphase/triangle_contact.wgsl and the entry point tests/gpu_triangle_contact.wgsl.

use hullsat::narrowphase::gpu::CLIP_WGSL;

/// shaders/narrowphase/triangle_contact.wgsl.
pub const TRIANGLE_CONTACT_WGSL: &str = include_str!("../../shaders/narrowphase/triangle_contact.wgsl");

/// The test kernel's entry point (`triangle_main`) and its buffer structs.
pub const TRIANGLE_ENTRY_WGSL: &str = include_str!("../gpu_triangle_contact.wgsl");

/// The whole source of the test kernel.
pub fn triangle_kernel_source() -> String {
    format!("{CLIP_WGSL}{TRIANGLE_CONTACT_WGSL}{TRIANGLE_ENTRY_WGSL}")
}

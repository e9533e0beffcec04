//! The narrowphase's kernels, compiled once per device and kept with its context
//! ([`GpuContext::kernels`]): the SAT kernel (`shaders/narrowphase/sat.wgsl`, two pipelines of
//! one module) and the clip kernel (`shaders/narrowphase/clip.wgsl` with `gjk.wgsl` and
//! `primitives.wgsl`), with their bind group layouts. Group 0 (hull geometry) is shared by both.

use std::sync::Arc;

use encase::ShaderType;

use super::kernel_layout::GpuParams;
use crate::gpu::GpuContext;
use crate::gpu::pipeline::{bind_group_layout, compute_pipeline, compute_pipeline_variants, storage};

/// The WGSL source of the SAT kernel: the shared declarations (quaternions, the structs callers
/// share, the kernels' own), then the kernel and its box-box edge query.
pub const SAT_WGSL: &str = concat!(
    include_str!("../../../shaders/common/quat.wgsl"),
    include_str!("../../../shaders/common/layout.wgsl"),
    include_str!("../../../shaders/common/geometry.wgsl"),
    include_str!("../../../shaders/narrowphase/sat.wgsl"),
    include_str!("../../../shaders/narrowphase/sat_box.wgsl")
);

/// The WGSL source of the clip kernel: the shared declarations, the kernel (hull pairs), GJK
/// (hull pairs apart within the margin, spheres and capsules against hulls) and the closed
/// forms of the pairs with a sphere, capsule or half-space.
pub const CLIP_WGSL: &str = concat!(
    include_str!("../../../shaders/common/quat.wgsl"),
    include_str!("../../../shaders/common/layout.wgsl"),
    include_str!("../../../shaders/common/geometry.wgsl"),
    include_str!("../../../shaders/narrowphase/clip.wgsl"),
    include_str!("../../../shaders/narrowphase/gjk.wgsl"),
    include_str!("../../../shaders/narrowphase/primitives.wgsl")
);

/// Storage buffers the clip kernel binds in one shader stage (5 geometry, bodies, pairs, SAT
/// results, manifolds): more than wgpu's default limit of 8, so devices must allow it.
pub(crate) const CLIP_STORAGE_BUFFERS: u32 = 9;

/// Why [`super::Clipping::Gpu`] is refused on a device.
pub(crate) const CLIP_UNSUPPORTED: &str = "GPU clipping needs 9 storage buffers per shader stage and this device \
     allows fewer; use Clipping::Cpu";

/// The narrowphase's compiled kernels on one device.
pub(crate) struct NarrowphaseKernels {
    pub sat: SatKernel,
    /// `None` when the device allows fewer than [`CLIP_STORAGE_BUFFERS`] storage buffers per
    /// stage: clipping then runs on the CPU.
    pub clip: Option<ClipKernel>,
}

impl NarrowphaseKernels {
    /// The kernels of `context`'s device, compiled by the first call on that device.
    pub fn of(context: &GpuContext) -> Result<Arc<Self>, crate::gpu::GpuError> {
        context.kernels(|context| {
            let device = context.device();
            let sat = SatKernel::new(device);
            let clip = (context.limits.max_storage_buffers >= CLIP_STORAGE_BUFFERS)
                .then(|| ClipKernel::new(device, &sat.geometry_layout));
            NarrowphaseKernels { sat, clip }
        })
    }
}

/// The compiled SAT pipelines and their bind group layouts (one per device): `cooperative` with
/// sat.wgsl's cooperative path (`COOP_PATH` true, the WGSL default) and `serial` without it, for
/// narrowphases whose shapes can form no big pair (docs/design/gpu-narrowphase.md counts what
/// `serial` leaves out).
pub(crate) struct SatKernel {
    pub cooperative: wgpu::ComputePipeline,
    pub serial: wgpu::ComputePipeline,
    pub geometry_layout: wgpu::BindGroupLayout,
    pub call_layout: wgpu::BindGroupLayout,
}

impl SatKernel {
    /// Compiles the kernel on `device` (inside the caller's error scopes).
    fn new(device: &wgpu::Device) -> Self {
        let geometry_layout = bind_group_layout(device, "hull geometry", &[storage(true); 5]);
        let call_layout = bind_group_layout(
            device,
            "sat call",
            &[
                storage(true),
                storage(true),
                storage(false),
                wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Uniform,
                    has_dynamic_offset: true,
                    min_binding_size: Some(GpuParams::min_size()),
                },
            ],
        );
        let serial = wgpu::PipelineCompilationOptions {
            constants: &[("COOP_PATH", 0.0)],
            // No invocation of this pipeline reaches the workgroup variables (all behind
            // COOP_PATH), so zeroing them would be work for nothing.
            zero_initialize_workgroup_memory: false,
        };
        let [cooperative, serial] = compute_pipeline_variants(
            device,
            "sat.wgsl",
            SAT_WGSL,
            &[Some(&geometry_layout), Some(&call_layout)],
            [("sat", Default::default()), ("sat (no cooperative path)", serial)],
        );
        SatKernel {
            cooperative,
            serial,
            geometry_layout,
            call_layout,
        }
    }

    /// The pipeline with the cooperative path, or without it (see [`super::geometry::HullGeometry`]).
    pub fn pipeline(&self, cooperative: bool) -> &wgpu::ComputePipeline {
        if cooperative {
            &self.cooperative
        } else {
            &self.serial
        }
    }
}

/// The compiled clip pipeline and its per-call bind group layout (one per device).
pub(crate) struct ClipKernel {
    pub pipeline: wgpu::ComputePipeline,
    pub call_layout: wgpu::BindGroupLayout,
}

impl ClipKernel {
    /// Compiles the kernel on `device` (inside the caller's error scopes); group 0 is the SAT
    /// kernel's geometry layout, so both kernels share one geometry bind group.
    fn new(device: &wgpu::Device, geometry_layout: &wgpu::BindGroupLayout) -> Self {
        let call_layout = bind_group_layout(
            device,
            "clip call",
            &[
                storage(true),
                storage(true),
                storage(true),
                wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Uniform,
                    has_dynamic_offset: true,
                    min_binding_size: Some(GpuParams::min_size()),
                },
                storage(false),
            ],
        );
        let pipeline = compute_pipeline(
            device,
            "clip",
            "clip.wgsl",
            CLIP_WGSL,
            &[geometry_layout, &call_layout],
        );
        ClipKernel {
            pipeline,
            call_layout,
        }
    }
}

//! The narrowphase's kernels, compiled once per device and kept with its context
//! ([`GpuContext::kernels`]): the SAT kernel (`shaders/narrowphase/sat.wgsl`, three pipelines of
//! one module, one per [`SatMapping`]; the one pair per workgroup pipeline from a second module
//! on devices with subgroups) and the clip kernel (`shaders/narrowphase/clip.wgsl` with
//! `gjk.wgsl` and `primitives.wgsl`), with their bind group layouts. Group 0 (hull geometry) is
//! shared by both. Also what every dispatch path shares: the pairs per dispatch chunk
//! ([`chunk_pairs`]) and the prepare kernel (`resident.wgsl`) that turns a GPU-side count into
//! indirect dispatch arguments (the resident API, the compound stage and the mesh pass).

use std::sync::Arc;

use encase::ShaderType;

use super::kernel_layout::{
    CLIP_GROUP_PAIRS, GpuResidentSetup, PAIR_PER_WORKGROUP_PAIRS, PAIR_PER_WORKGROUP_SPLIT_SHARE,
    WORKGROUP_SIZE, params_layout,
};
use super::layout::MANIFOLD_BYTES;
use crate::gpu::GpuContext;
use crate::gpu::context::DeviceLimits;
use crate::gpu::pipeline::{
    bind_group_layout, compute_pipeline_variants, compute_pipeline_with_gaps, storage, uniform,
};

/// The WGSL source of the SAT kernel: the shared declarations (quaternions, the structs callers
/// share, the kernels' own), then the kernel, its box-box SAT and its cooperative path's
/// reductions in workgroup memory.
pub const SAT_WGSL: &str = concat!(
    include_str!("../../../shaders/common/quat.wgsl"),
    include_str!("../../../shaders/common/body.wgsl"),
    include_str!("../../../shaders/common/layout.wgsl"),
    include_str!("../../../shaders/common/geometry.wgsl"),
    include_str!("../../../shaders/narrowphase/sat.wgsl"),
    include_str!("../../../shaders/narrowphase/sat_box.wgsl"),
    include_str!("../../../shaders/narrowphase/sat_reduce.wgsl")
);

/// [`SAT_WGSL`] with the cooperative path's reductions by subgroup operations, for the one pair
/// per workgroup pipeline on devices with [`wgpu::Features::SUBGROUP`]. The same results, bit
/// for bit.
pub const SAT_SUBGROUP_WGSL: &str = concat!(
    include_str!("../../../shaders/common/quat.wgsl"),
    include_str!("../../../shaders/common/body.wgsl"),
    include_str!("../../../shaders/common/layout.wgsl"),
    include_str!("../../../shaders/common/geometry.wgsl"),
    include_str!("../../../shaders/narrowphase/sat.wgsl"),
    include_str!("../../../shaders/narrowphase/sat_box.wgsl"),
    include_str!("../../../shaders/narrowphase/sat_reduce_subgroup.wgsl")
);

/// The WGSL source of the clip kernel: the shared declarations, the kernel (hull pairs), GJK
/// (hull pairs apart within the margin, spheres and capsules against hulls) and the closed
/// forms of the pairs with a sphere, capsule or half-space.
pub const CLIP_WGSL: &str = with_clip_sources!();

/// [`CLIP_WGSL`]'s sources, then the given files under `shaders/`, as one `&'static str`: the
/// source of a kernel compiled with the clip kernel's functions (the merges, the per-triangle
/// kernel).
macro_rules! with_clip_sources {
    ($($file:literal),*) => {
        concat!(
            include_str!("../../../shaders/common/quat.wgsl"),
            include_str!("../../../shaders/common/body.wgsl"),
            include_str!("../../../shaders/common/layout.wgsl"),
            include_str!("../../../shaders/common/geometry.wgsl"),
            include_str!("../../../shaders/narrowphase/clip.wgsl"),
            include_str!("../../../shaders/narrowphase/gjk.wgsl"),
            include_str!("../../../shaders/narrowphase/primitives.wgsl")
            $(, include_str!(concat!("../../../shaders/", $file)))*
        )
    };
}
pub(crate) use with_clip_sources;

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
            let sat = SatKernel::new(device, context.has_subgroups());
            let clip = (context.limits.max_storage_buffers >= CLIP_STORAGE_BUFFERS)
                .then(|| ClipKernel::new(device, &sat.geometry_layout));
            NarrowphaseKernels { sat, clip }
        })
    }
}

/// How one SAT dispatch maps pairs to invocations (chosen per host round by `SatMapping::choose`;
/// docs/design/gpu-narrowphase.md counts the choice).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SatMapping {
    /// One pair per invocation (sat.wgsl `main`); with `cooperative`, its big pairs are listed
    /// per workgroup and run by the whole workgroup.
    PerInvocation {
        /// Whether the pipeline has the cooperative path (`COOP_PATH`).
        cooperative: bool,
    },
    /// One pair per workgroup (sat.wgsl `main_pair_per_workgroup`), for small calls.
    PerWorkgroup,
}

impl SatMapping {
    /// Whether a dispatch of `pairs` pairs may take one workgroup per pair on a device of at most
    /// `max_workgroups` workgroups per dimension: fewer than [`PAIR_PER_WORKGROUP_PAIRS`], and
    /// its workgroups fit one dimension (below [`Self::per_workgroup_below`]). Only then are its
    /// split pairs counted.
    pub(crate) fn fits_per_workgroup(pairs: u64, max_workgroups: u64) -> bool {
        pairs < Self::per_workgroup_below(max_workgroups)
    }

    /// Pairs below which a dispatch may take one workgroup per pair on a device of at most
    /// `max_workgroups` workgroups per dimension: [`PAIR_PER_WORKGROUP_PAIRS`], or fewer where
    /// one dimension holds fewer workgroups.
    pub(crate) fn per_workgroup_below(max_workgroups: u64) -> u64 {
        u64::from(PAIR_PER_WORKGROUP_PAIRS).min(max_workgroups.saturating_add(1))
    }

    /// The mapping of a dispatch of `pairs` pairs of which `split_pairs` run split over a
    /// workgroup under one workgroup per pair ([`super::geometry::forms_split_pair`]), over
    /// shapes that can form a big pair (`cooperative`, [`super::geometry::may_form_big_pairs`]),
    /// on a device of at most `max_workgroups` workgroups per dimension: one workgroup per pair
    /// when it fits ([`Self::fits_per_workgroup`]) and at least one pair in
    /// [`PAIR_PER_WORKGROUP_SPLIT_SHARE`] is split; else one pair per invocation.
    pub(crate) fn choose(pairs: u64, split_pairs: u64, cooperative: bool, max_workgroups: u64) -> Self {
        let share = u64::from(PAIR_PER_WORKGROUP_SPLIT_SHARE);
        if Self::fits_per_workgroup(pairs, max_workgroups) && split_pairs > 0 && split_pairs * share >= pairs
        {
            SatMapping::PerWorkgroup
        } else {
            SatMapping::PerInvocation { cooperative }
        }
    }

    /// Pairs one workgroup of this mapping runs (its dispatch is ⌈pairs / this⌉ workgroups).
    pub(crate) fn pairs_per_workgroup(self) -> u64 {
        match self {
            SatMapping::PerInvocation { .. } => u64::from(WORKGROUP_SIZE),
            SatMapping::PerWorkgroup => 1,
        }
    }
}

/// The compiled SAT pipelines and their bind group layouts (one per device): `cooperative` with
/// sat.wgsl's cooperative path (`COOP_PATH` true, the WGSL default) and `serial` without it, for
/// narrowphases whose shapes can form no big pair (docs/design/gpu-narrowphase.md counts what
/// `serial` leaves out), both one pair per invocation (`main`); `per_workgroup` one pair per
/// workgroup (`main_pair_per_workgroup`). On a device with subgroups `per_workgroup` is built
/// from [`SAT_SUBGROUP_WGSL`]; `cooperative` reduces in workgroup memory everywhere (its
/// subgroup reductions chose other axes on an NVIDIA H200: sat_reduce_subgroup.wgsl).
pub(crate) struct SatKernel {
    pub cooperative: wgpu::ComputePipeline,
    pub serial: wgpu::ComputePipeline,
    pub per_workgroup: wgpu::ComputePipeline,
    pub geometry_layout: wgpu::BindGroupLayout,
    pub call_layout: wgpu::BindGroupLayout,
}

impl SatKernel {
    /// Compiles the kernel on `device` (inside the caller's error scopes), the one pair per
    /// workgroup reductions with subgroup operations when `subgroups` (the device has
    /// [`wgpu::Features::SUBGROUP`]).
    fn new(device: &wgpu::Device, subgroups: bool) -> Self {
        let geometry_layout = bind_group_layout(device, "hull geometry", &[storage(true); 5]);
        let call_layout = bind_group_layout(
            device,
            "sat call",
            &[storage(true), storage(true), storage(false), params_layout()],
        );
        let groups = [Some(&geometry_layout), Some(&call_layout)];
        let serial = || {
            let options = wgpu::PipelineCompilationOptions {
                constants: &[("COOP_PATH", 0.0)],
                // No invocation of this pipeline reaches the workgroup variables (all behind
                // COOP_PATH), so zeroing them would be work for nothing.
                zero_initialize_workgroup_memory: false,
            };
            ("sat (no cooperative path)", "main", options)
        };
        let cooperative = || ("sat", "main", Default::default());
        let per_workgroup = || {
            let options = wgpu::PipelineCompilationOptions {
                // Every workgroup variable it reads it writes first (run_split's count, the
                // reductions' slots, the kept-edge bits): zeroing them per pair would be wasted.
                zero_initialize_workgroup_memory: false,
                ..Default::default()
            };
            ("sat (one pair per workgroup)", "main_pair_per_workgroup", options)
        };
        let [cooperative, serial, per_workgroup] = if subgroups {
            let [cooperative, serial] =
                compute_pipeline_variants(device, "sat.wgsl", SAT_WGSL, &groups, [cooperative(), serial()]);
            let [per_workgroup] = compute_pipeline_variants(
                device,
                "sat.wgsl (subgroups)",
                SAT_SUBGROUP_WGSL,
                &groups,
                [per_workgroup()],
            );
            [cooperative, serial, per_workgroup]
        } else {
            compute_pipeline_variants(
                device,
                "sat.wgsl",
                SAT_WGSL,
                &groups,
                [cooperative(), serial(), per_workgroup()],
            )
        };
        SatKernel {
            cooperative,
            serial,
            per_workgroup,
            geometry_layout,
            call_layout,
        }
    }

    /// The pipeline of `mapping`.
    pub fn pipeline(&self, mapping: SatMapping) -> &wgpu::ComputePipeline {
        match mapping {
            SatMapping::PerInvocation { cooperative: true } => &self.cooperative,
            SatMapping::PerInvocation { cooperative: false } => &self.serial,
            SatMapping::PerWorkgroup => &self.per_workgroup,
        }
    }
}

/// The compiled clip pipelines and their per-call bind group layout (one per device):
/// `per_invocation` one pair per invocation (clip.wgsl `main`), `per_group` one pair per
/// [`super::kernel_layout::CLIP_GROUP_LANES`] invocations (`main_pair_per_group`), for rounds whose SAT took one
/// workgroup per pair.
pub(crate) struct ClipKernel {
    pub per_invocation: wgpu::ComputePipeline,
    pub per_group: wgpu::ComputePipeline,
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
                params_layout(),
                storage(false),
            ],
        );
        // Workgroup memory zeroed (wgpu's default): both entry points count from zero in it.
        let [per_invocation, per_group] = compute_pipeline_variants(
            device,
            "clip.wgsl",
            CLIP_WGSL,
            &[Some(geometry_layout), Some(&call_layout)],
            [
                ("clip", "main", Default::default()),
                (
                    "clip (pairs per group)",
                    "main_pair_per_group",
                    Default::default(),
                ),
            ],
        );
        ClipKernel {
            per_invocation,
            per_group,
            call_layout,
        }
    }

    /// The pipeline that clips after a SAT dispatch of `mapping`, and the pairs one of its
    /// workgroups clips.
    pub fn pipeline(&self, mapping: SatMapping) -> (&wgpu::ComputePipeline, u64) {
        match mapping {
            SatMapping::PerInvocation { .. } => (&self.per_invocation, u64::from(WORKGROUP_SIZE)),
            SatMapping::PerWorkgroup => (&self.per_group, u64::from(CLIP_GROUP_PAIRS)),
        }
    }
}

/// The WGSL source of the resident prepare kernel: the shared declarations, then the kernel.
pub const RESIDENT_WGSL: &str = concat!(
    include_str!("../../../shaders/common/quat.wgsl"),
    include_str!("../../../shaders/common/body.wgsl"),
    include_str!("../../../shaders/common/layout.wgsl"),
    include_str!("../../../shaders/common/geometry.wgsl"),
    include_str!("../../../shaders/narrowphase/resident.wgsl")
);

/// Bytes of one chunk's indirect dispatch arguments.
pub(super) const DISPATCH_BYTES: u64 = size_of::<wgpu::util::DispatchIndirectArgs>() as u64;

/// The prepare kernel (resident.wgsl) and its group 2 layout, compiled on `device` inside the
/// caller's error scopes (the resident API's and the compound stage's sub-pair dispatch).
pub(super) fn prepare_kernel(device: &wgpu::Device) -> (wgpu::ComputePipeline, wgpu::BindGroupLayout) {
    let layout = bind_group_layout(
        device,
        "resident prepare",
        &[
            uniform(false, Some(GpuResidentSetup::min_size())),
            storage(true),
            storage(false),
            storage(false),
        ],
    );
    let pipeline = compute_pipeline_with_gaps(
        device,
        "resident prepare",
        "resident.wgsl",
        RESIDENT_WGSL,
        &[None, None, Some(&layout)],
    );
    (pipeline, layout)
}

/// Pairs per dispatch chunk: fits one storage binding of the largest per-pair record (a
/// manifold) and one dispatch dimension, and is a multiple of 256 so every chunk's byte offset
/// (8, 32 and 112 bytes per pair) is a multiple of 2048, above any
/// `min_storage_buffer_offset_alignment` (at most 256).
pub(crate) fn chunk_pairs(limits: DeviceLimits) -> u64 {
    let by_binding = limits.max_binding / MANIFOLD_BYTES;
    let by_dispatch = limits.max_workgroups * u64::from(WORKGROUP_SIZE);
    (by_binding.min(by_dispatch) / 256 * 256).max(256)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::narrowphase::gpu::layout::PAIR_BYTES;

    #[test]
    fn chunks_fit_one_binding_and_one_dispatch_at_aligned_offsets() {
        // lavapipe: 128 MiB bindings, 65,535 workgroups per dimension.
        let lavapipe = DeviceLimits {
            max_binding: 128 << 20,
            max_buffer: 1 << 40,
            max_workgroups: 65_535,
            max_storage_buffers: 9,
        };
        let small_binding = DeviceLimits {
            max_binding: 1 << 20,
            ..lavapipe
        };
        for limits in [lavapipe, small_binding] {
            let chunk = chunk_pairs(limits);
            assert!(chunk * MANIFOLD_BYTES <= limits.max_binding);
            assert!(chunk <= limits.max_workgroups * u64::from(WORKGROUP_SIZE));
            assert_eq!((chunk * PAIR_BYTES) % 256, 0);
            assert!(chunk * 2 > limits.max_binding / MANIFOLD_BYTES || chunk * 2 > 65_535 * 64);
        }
        // 128 MiB / 112 bytes, rounded down to a multiple of 256.
        assert_eq!(chunk_pairs(lavapipe), 1_198_336);
    }
}

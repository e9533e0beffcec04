//! Rays ordered by origin before the traversal, so that the invocations of one GPU lane group
//! start close together and walk the same part of the BVH. WGSL twin:
//! `shaders/raycast/ray_order.wgsl`, one entry point per step:
//!
//! 1. `codes_main`: each ray's 30-bit Morton code of its origin in the BVH frame, in the BVH's
//!    bounds (the GPU build's centre bounds, or the CPU tree's root box), clamped outside.
//! 2. A stable radix sort of the (code, ray index) pairs (`crate::gpu::radix_sort`, 4 passes).
//! 3. `gather_main`: the rays copied in that order, each carrying its index in the caller's
//!    batch ([`GpuRay::index`]), where the traversal writes its count and hits.
//!
//! Each ray's traversal is unchanged, so the results are bit for bit those of the unordered
//! cast. Counts of the gain and the cost: `docs/raycast.md`.

use std::sync::Arc;

use encase::ShaderType;
use glam::{DVec3, Vec3};

use super::layout::{GpuRay, GpuRayOrderParams, WORKGROUP_SIZE};
use crate::gpu::buffers::{GrowBuffer, MIN_BUFFER_BYTES, binding, check_limit, create_buffer};
use crate::gpu::context::ErrorScopes;
use crate::gpu::layout::{WgslVec3, split_translation, uniform_bytes};
use crate::gpu::pipeline::{bind_group_layout, compute_pipeline_variants, storage};
use crate::gpu::radix_sort::{GpuRadixSort, RadixKeys};
use crate::gpu::{GpuContext, GpuError};

/// The WGSL source of the order's kernels: the Morton codes (`shaders/common/morton.wgsl`),
/// the ray (`shaders/raycast/layout.wgsl`), then `shaders/raycast/ray_order.wgsl`.
pub const RAY_ORDER_WGSL: &str = concat!(
    include_str!("../../shaders/common/morton.wgsl"),
    include_str!("../../shaders/raycast/layout.wgsl"),
    include_str!("../../shaders/raycast/ray_order.wgsl")
);

/// Fewest rays a batch has for the GPU ray caster to order them by default
/// ([`super::GpuRaycaster::set_ray_order_min`]). The order costs 23 dispatches whatever the
/// count (from 2^16 to 2^20 rays) plus about 270 bytes of memory traffic a ray; the unordered
/// traversal costs about 10 ns a ray (an H200, 100,000 bodies), 0.7 ms at this count, where
/// ordering cuts the nodes a 32-lane group loads about 3.5 times (`docs/raycast.md`). Below it
/// the cut shrinks (2 times at 4,096 rays) while the fixed cost stays.
pub const RAY_ORDER_MIN_RAYS: u32 = 65_536;

/// Bits of the Morton code sorted (10 per axis).
const CODE_BITS: u32 = 30;

/// The kernels, compiled once per device.
struct RayOrderKernels {
    layout: wgpu::BindGroupLayout,
    /// `codes_main`, `gather_main`.
    pipelines: [wgpu::ComputePipeline; 2],
}

impl RayOrderKernels {
    fn compile(context: &GpuContext) -> RayOrderKernels {
        let device = context.device();
        let uniform = wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Uniform,
            has_dynamic_offset: false,
            min_binding_size: Some(GpuRayOrderParams::min_size()),
        };
        let layout = bind_group_layout(
            device,
            "ray order",
            &[
                storage(true),
                storage(true),
                storage(false),
                storage(false),
                uniform,
            ],
        );
        let pipelines = compute_pipeline_variants(
            device,
            "ray_order.wgsl",
            RAY_ORDER_WGSL,
            &[Some(&layout)],
            ["codes_main", "gather_main"].map(|entry| (entry, entry, Default::default())),
        );
        RayOrderKernels { layout, pipelines }
    }
}

/// The box the Morton codes span, BVH frame.
pub(super) enum OrderBounds<'a> {
    /// The GPU BVH build's encoded centre bounds (`crate::bvh::gpu::GpuBvh::bounds`).
    Encoded(&'a wgpu::Buffer),
    /// A box known on the host (the CPU tree's root), length units.
    Host(Vec3, Vec3),
}

/// One caller's ray order: its parameters, keys, ordered copy and sort, reused and grown.
pub(super) struct RayOrder {
    kernels: Arc<RayOrderKernels>,
    params: wgpu::Buffer,
    /// Step 1's (code, index) pairs.
    keys: GrowBuffer,
    /// Step 3's ordered copy of the rays.
    ordered: GrowBuffer,
    /// Bound as the encoded bounds when the host gives them.
    no_bounds: wgpu::Buffer,
    sorter: GpuRadixSort,
}

impl RayOrder {
    /// Compiles the kernels on `context`'s device (once per device) and makes the buffers.
    pub fn new(context: &GpuContext) -> Result<Self, GpuError> {
        let kernels = context.kernels(RayOrderKernels::compile)?;
        let sorter = GpuRadixSort::new(context)?;
        let device = context.device();
        let scopes = ErrorScopes::push(device);
        let order = RayOrder {
            kernels,
            params: create_buffer(
                device,
                "ray order params",
                GpuRayOrderParams::min_size().get(),
                wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            ),
            keys: GrowBuffer::new(device, "ray order keys", wgpu::BufferUsages::STORAGE),
            ordered: GrowBuffer::new(device, "ordered rays", wgpu::BufferUsages::STORAGE),
            no_bounds: create_buffer(
                device,
                "ray order no bounds",
                MIN_BUFFER_BYTES,
                wgpu::BufferUsages::STORAGE,
            ),
            sorter,
        };
        scopes.pop()?;
        Ok(order)
    }

    /// Records steps 1 to 3 over the first `count` rays of `rays` (world, [`GpuRay`]; more than
    /// 0, within one dispatch of [`WORKGROUP_SIZE`] invocations per workgroup) into
    /// `encoder`, codes taken in the frame of a BVH at the f64 world point `bvh_origin` within
    /// `bounds`. Returns the ordered copy, valid once the encoder is submitted. The parameters
    /// go through the queue: submit the encoder before the next `encode`.
    pub fn encode(
        &mut self,
        context: &GpuContext,
        encoder: &mut wgpu::CommandEncoder,
        rays: &wgpu::Buffer,
        count: u32,
        bvh_origin: DVec3,
        bounds: OrderBounds<'_>,
    ) -> Result<&wgpu::Buffer, GpuError> {
        debug_assert!(count > 0);
        let limits = context.limits;
        let n = u64::from(count);
        let ray_bytes = n * size_of::<GpuRay>() as u64;
        let key_bytes = n * 8;
        let binding_limit = "max_storage_buffer_binding_size";
        check_limit("ordered rays", ray_bytes, limits.max_binding, binding_limit)?;
        check_limit("ray order keys", key_bytes, limits.max_binding, binding_limit)?;
        let (origin_hi, origin_lo) = split_translation(bvh_origin);
        let (encoded, lo, hi) = match bounds {
            OrderBounds::Encoded(buffer) => (Some(buffer), Vec3::ZERO, Vec3::ZERO),
            OrderBounds::Host(lo, hi) => (None, lo, hi),
        };
        let params = GpuRayOrderParams {
            bvh_origin_hi: WgslVec3(origin_hi),
            ray_count: count,
            bvh_origin_lo: WgslVec3(origin_lo),
            bounds_encoded: u32::from(encoded.is_some()),
            bounds_min: WgslVec3(lo.to_array()),
            bounds_max: WgslVec3(hi.to_array()),
        };
        let device = context.device();
        let scopes = ErrorScopes::push(device);
        let max = limits.max_buffer;
        self.keys.reserve(device, key_bytes, max);
        self.ordered.reserve(device, ray_bytes, max);
        let recorded = self.record(context, encoder, rays, encoded, &params, key_bytes);
        let popped = scopes.pop();
        recorded?;
        popped?;
        Ok(&self.ordered.buffer)
    }

    /// Writes the parameters and records the codes, the sort and the gather.
    fn record(
        &mut self,
        context: &GpuContext,
        encoder: &mut wgpu::CommandEncoder,
        rays: &wgpu::Buffer,
        encoded: Option<&wgpu::Buffer>,
        params: &GpuRayOrderParams,
        key_bytes: u64,
    ) -> Result<(), GpuError> {
        let bounds = encoded.unwrap_or(&self.no_bounds);
        context
            .queue()
            .write_buffer(&self.params, 0, &uniform_bytes(params)?);
        let ray_bytes = u64::from(params.ray_count) * size_of::<GpuRay>() as u64;
        let groups = params.ray_count.div_ceil(WORKGROUP_SIZE);
        let group = |keys: &wgpu::Buffer| {
            context.device().create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("ray order"),
                layout: &self.kernels.layout,
                entries: &[
                    binding(0, rays, 0, ray_bytes),
                    binding(1, bounds, 0, bounds.size()),
                    binding(2, keys, 0, key_bytes),
                    binding(3, &self.ordered.buffer, 0, ray_bytes),
                    binding(4, &self.params, 0, GpuRayOrderParams::min_size().get()),
                ],
            })
        };
        // Step 1.
        let codes = group(&self.keys.buffer);
        {
            let mut pass = context.begin_pass(encoder, "ray order codes");
            pass.set_pipeline(&self.kernels.pipelines[0]);
            pass.set_bind_group(0, &codes, &[]);
            pass.dispatch_workgroups(groups, 1, 1);
        }
        // Step 2.
        let keys = RadixKeys {
            keys: &self.keys.buffer,
            max_keys: params.ray_count,
            count: None,
            low_bits: 0,
            key_bits: CODE_BITS,
            stage: "ray sort",
        };
        let sorted = self.sorter.encode(context, encoder, &keys)?;
        // Step 3.
        let gather = group(&sorted);
        let mut pass = context.begin_pass(encoder, "ray order gather");
        pass.set_pipeline(&self.kernels.pipelines[1]);
        pass.set_bind_group(0, &gather, &[]);
        pass.dispatch_workgroups(groups, 1, 1);
        Ok(())
    }
}

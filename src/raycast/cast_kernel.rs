//! The ray traversal kernel (`shaders/raycast/raycast.wgsl`), shared by the host call
//! ([`super::gpu::GpuRaycaster::cast_into`]) and the resident one (`resident.rs`): its WGSL, its
//! pipeline and shape tables, and the recording of a cast in dispatch chunks.

use encase::ShaderType;

use super::layout::{GpuRay, GpuRayCount, GpuRayHit, GpuRayParams, ShapeTables, WORKGROUP_SIZE};
use crate::gpu::buffers::{binding, binding_up_to, upload_storage};
use crate::gpu::pipeline::{bind_group, bind_group_layout, compute_pipeline, storage, uniform};
use crate::gpu::{GpuContext, GpuError};

/// The WGSL source of the ray kernel for shape lists without triangle meshes or compounds: the
/// narrowphase kernels' quaternion helpers ([`crate::gpu::QUAT_WGSL`]), the body, the BVH's
/// shared structs (`shaders/bvh/layout.wgsl`), the kernel, then its `cast_complex` that is never
/// reached (`raycast_convex_only.wgsl`).
pub const RAYCAST_WGSL: &str = concat!(
    include_str!("../../shaders/common/quat.wgsl"),
    include_str!("../../shaders/common/body.wgsl"),
    include_str!("../../shaders/bvh/layout.wgsl"),
    include_str!("../../shaders/raycast/raycast.wgsl"),
    include_str!("../../shaders/raycast/raycast_convex_only.wgsl")
);

/// The WGSL source of the ray kernel for shape lists with a triangle mesh or a compound: as
/// [`RAYCAST_WGSL`] with the meshes' layout (`shaders/common/mesh.wgsl`) and
/// `raycast_complex.wgsl`, which binds their tables as group 2.
pub const RAYCAST_COMPLEX_WGSL: &str = concat!(
    include_str!("../../shaders/common/quat.wgsl"),
    include_str!("../../shaders/common/body.wgsl"),
    include_str!("../../shaders/bvh/layout.wgsl"),
    include_str!("../../shaders/common/mesh.wgsl"),
    include_str!("../../shaders/raycast/raycast.wgsl"),
    include_str!("../../shaders/raycast/raycast_complex.wgsl")
);

/// The traversal kernel (`raycast.wgsl`): its pipeline, the shapes it binds as group 0 and,
/// with meshes or compounds among them, their tables as group 2.
pub(super) struct CastKernel {
    pipeline: wgpu::ComputePipeline,
    shape_group: wgpu::BindGroup,
    complex_group: Option<wgpu::BindGroup>,
    call_layout: wgpu::BindGroupLayout,
}

/// What one cast of `count` rays binds as group 1 (`raycast.wgsl` bindings 0 to 6): bodies
/// (`GpuBody`), BVH nodes and body list, rays (`GpuRay`), and where the kernel writes a
/// `GpuRayCount` and the hit slots of each ray, and the `GpuRayParams` uniform.
pub(super) struct CastBuffers<'b> {
    pub bodies: &'b wgpu::Buffer,
    pub nodes: &'b wgpu::Buffer,
    pub body_list: &'b wgpu::Buffer,
    pub rays: &'b wgpu::Buffer,
    pub counts: &'b wgpu::Buffer,
    pub hits: &'b wgpu::Buffer,
    pub params: &'b wgpu::Buffer,
}

impl CastKernel {
    /// Compiles the kernel for `tables` (with their meshes' and compounds' layout when they have
    /// any) on `context`'s device and uploads the shapes it binds.
    pub fn new(context: &GpuContext, tables: &ShapeTables) -> Result<CastKernel, GpuError> {
        let device = context.device();
        let max_binding = context.limits.max_binding;
        let complex = tables.has_complex();
        let upload = |label: &'static str, bytes: &[u8]| upload_storage(device, label, bytes, max_binding);
        let shape_buffers = [
            upload("ray shapes", bytemuck::cast_slice(&tables.shapes))?,
            upload("ray hull planes", bytemuck::cast_slice(&tables.planes))?,
        ];
        let shape_layout = bind_group_layout(device, "ray shapes", &[storage(true); 2]);
        let call_layout = bind_group_layout(
            device,
            "ray call",
            &[
                storage(true),
                storage(true),
                storage(true),
                storage(true),
                storage(false),
                storage(false),
                uniform(false, None),
            ],
        );
        let shape_group = bind_group(
            device,
            "ray shapes",
            &shape_layout,
            &[
                binding(0, &shape_buffers[0], 0, shape_buffers[0].size()),
                binding(1, &shape_buffers[1], 0, shape_buffers[1].size()),
            ],
        );
        // Group 2, meshes and compounds: node, vertex, triangle and child tables.
        let complex_group = if complex {
            let [nodes, vertices, triangles] = tables.meshes.upload(device, max_binding)?;
            let buffers = [
                nodes,
                vertices,
                triangles,
                upload("ray compound children", bytemuck::cast_slice(&tables.children))?,
            ];
            let layout = bind_group_layout(device, "ray meshes and compounds", &[storage(true); 4]);
            let entries: Vec<wgpu::BindGroupEntry> = (0..4)
                .map(|i| binding(i as u32, &buffers[i], 0, buffers[i].size()))
                .collect();
            let group = bind_group(device, "ray meshes and compounds", &layout, &entries);
            Some((layout, group))
        } else {
            None
        };
        let pipeline = match &complex_group {
            Some((layout, _)) => compute_pipeline(
                device,
                "raycast",
                "raycast.wgsl",
                RAYCAST_COMPLEX_WGSL,
                &[&shape_layout, &call_layout, layout],
            ),
            None => compute_pipeline(
                device,
                "raycast",
                "raycast.wgsl",
                RAYCAST_WGSL,
                &[&shape_layout, &call_layout],
            ),
        };
        Ok(CastKernel {
            pipeline,
            shape_group,
            complex_group: complex_group.map(|(_, group)| group),
            call_layout,
        })
    }

    /// Records the kernel over `count` rays with `slots` hit slots each into `encoder`, in
    /// chunks that fit one binding and one dispatch (bound at offsets of the ray, count and hit
    /// buffers).
    pub fn record(
        &self,
        context: &GpuContext,
        encoder: &mut wgpu::CommandEncoder,
        buffers: &CastBuffers,
        count: u64,
        slots: u32,
    ) {
        let ray_size = size_of::<GpuRay>() as u64;
        let count_size = size_of::<GpuRayCount>() as u64;
        let hits_size = u64::from(slots) * size_of::<GpuRayHit>() as u64;
        let limits = context.limits;
        let chunk = chunk_rays(limits.max_binding, limits.max_workgroups, hits_size);
        let groups: Vec<(wgpu::BindGroup, u32)> = (0..count)
            .step_by(chunk as usize)
            .map(|first| {
                let len = chunk.min(count - first);
                // Grown buffers may be larger than a binding may be: bound up to the limit (the
                // bytes the kernel reads were checked against it).
                let entries = [
                    binding_up_to(0, buffers.bodies, limits.max_binding),
                    binding_up_to(1, buffers.nodes, limits.max_binding),
                    binding_up_to(2, buffers.body_list, limits.max_binding),
                    binding(3, buffers.rays, first * ray_size, len * ray_size),
                    binding(4, buffers.counts, first * count_size, len * count_size),
                    binding(5, buffers.hits, first * hits_size, len * hits_size),
                    binding(6, buffers.params, 0, GpuRayParams::min_size().get()),
                ];
                let group = bind_group(context.device(), "ray call", &self.call_layout, &entries);
                (group, len.div_ceil(u64::from(WORKGROUP_SIZE)) as u32)
            })
            .collect();
        let mut pass = context.begin_pass(encoder, "ray traversal");
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, &self.shape_group, &[]);
        if let Some(group) = &self.complex_group {
            pass.set_bind_group(2, group, &[]);
        }
        for (group, workgroups) in &groups {
            pass.set_bind_group(1, group, &[]);
            pass.dispatch_workgroups(*workgroups, 1, 1);
        }
    }
}

/// Rays per dispatch chunk: the chunk's rays (48 bytes each) and hit slots (`hit_bytes` per
/// ray) each fit one storage binding, its workgroups one dispatch dimension, and it is a
/// multiple of 256 so every chunk offset (a multiple of 8 bytes per ray) is 2048-aligned, above
/// any `min_storage_buffer_offset_alignment`.
fn chunk_rays(max_binding: u64, max_workgroups: u64, hit_bytes: u64) -> u64 {
    let per_ray = hit_bytes.max(size_of::<GpuRay>() as u64);
    let by_binding = max_binding / per_ray;
    let by_dispatch = max_workgroups * u64::from(WORKGROUP_SIZE);
    (by_binding.min(by_dispatch) / 256 * 256).max(256)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_fit_one_binding_and_one_dispatch_at_aligned_offsets() {
        for (max_binding, hit_bytes) in [(128u64 << 20, 256u64), (1 << 20, 32), (128 << 20, 32)] {
            let chunk = chunk_rays(max_binding, 65_535, hit_bytes);
            assert!(chunk * hit_bytes.max(48) <= max_binding);
            assert!(chunk <= 65_535 * 64);
            assert_eq!(chunk % 256, 0);
        }
    }
}

//! The mesh pass: pairs of a triangle mesh and a convex body (either order) computed on the
//! GPU, recorded after the clip kernel of a host round or a resident call, in the mesh's frame
//! (A is the mesh, as the CPU's); the GPU twin of [`crate::contact::collide_trimesh_shape`].
//! The clip kernel lists no mesh pair; this pass lists each once.
//!
//! 1. Midphase (`shaders/narrowphase/mesh_expand.wgsl`, one caller pair per invocation,
//!    dispatched per chunk as the SAT kernel): the body's box in the mesh's frame, the mesh's
//!    BVH walked in the CPU's order, the overlapping triangles written as work items into a
//!    contiguous range reserved with one atomic add (the item's place in it is its BVH rank).
//! 2. The resident prepare kernel turns the item total into the item dispatch's parameters and
//!    indirect arguments, clamped to the capacity (one dispatch chunk).
//! 3. Per triangle (`mesh_triangle.wgsl`, one item per invocation): `collide_triangle_shape`,
//!    the sub-contact into the item, its points appended to a point table (a second atomic).
//! 4. Merge (`mesh_merge.wgsl`, one caller pair per invocation): `merge.wgsl`'s steps (shared
//!    with the compound stage) at [`crate::constants::TRIMESH_MERGE_DEGREES`], ids
//!    [`crate::trimesh::mesh_feature_id`], appended to the call's list in A's frame
//!    (`MANIFOLD_HOST` where an item was left to the host, `MANIFOLD_OVERFLOW` where its range
//!    passed the capacity).
//!
//! A compound against a mesh (the twin of [`crate::contact::collide_trimesh_compound`]) walks
//! the BVH once per child, its items child by child, each carrying its child's pose and shape;
//! one merge over them all, ids [`crate::trimesh::compound_mesh_feature_id`].
//!
//! The mesh tables are uploaded once (shared with the ray caster: [`MeshTables::upload`]); the
//! item, point and range buffers persist; the few bind groups are built per call. Costs:
//! docs/design/trimesh.md.

use std::sync::Arc;

use encase::ShaderType;

use super::compound::{CallerPairs, check_capacity, expand_call_layout, max_capacity};
use super::geometry::HullGeometry;
use super::kernel_layout::{
    GpuMeshItem, GpuMeshPairRange, GpuMeshPoint, GpuResidentSetup, HullTables, MESH_TABLE_HEAD,
    PARAMS_STRIDE, params_binding, params_layout,
};
use super::kernels::{DISPATCH_BYTES, prepare_kernel};
use super::kernels::{NarrowphaseKernels, with_clip_sources};
use crate::gpu::buffers::{
    GrowBuffer, binding, binding_up_to, check_limit, create_buffer, uniform_buffer, upload_storage,
};
use crate::gpu::context::ErrorScopes;
use crate::gpu::layout::uniform_bytes;
use crate::gpu::mesh_layout::MeshTables;
use crate::gpu::pipeline::{bind_group, bind_group_layout_at, compute_pipeline_variants, storage};
use crate::gpu::{GpuContext, GpuError};

/// The WGSL source of the mesh midphase: the shared declarations, the mesh layout, then the
/// kernel.
pub const MESH_EXPAND_WGSL: &str = concat!(
    include_str!("../../../shaders/common/quat.wgsl"),
    include_str!("../../../shaders/common/body.wgsl"),
    include_str!("../../../shaders/common/layout.wgsl"),
    include_str!("../../../shaders/common/geometry.wgsl"),
    include_str!("../../../shaders/common/mesh.wgsl"),
    include_str!("../../../shaders/narrowphase/mesh_expand.wgsl")
);

/// The WGSL source of the per-triangle kernel: the clip kernel's source, the mesh layout, the
/// per-triangle contact functions, then the kernel.
pub const MESH_TRIANGLE_WGSL: &str = with_clip_sources!(
    "common/mesh.wgsl",
    "narrowphase/triangle_contact.wgsl",
    "narrowphase/mesh_triangle.wgsl"
);

/// The WGSL source of the mesh merge: the clip kernel's source (its reduction and list), the
/// merge steps shared with the compound stage, then the kernel.
pub const MESH_MERGE_WGSL: &str = with_clip_sources!("narrowphase/merge.wgsl", "narrowphase/mesh_merge.wgsl");

/// Work items (body-triangle pairs) of a new narrowphase with meshes (at most one dispatch
/// chunk), with as many slots in the point table: 160 bytes each on the device, 10.5 MB in all.
pub const DEFAULT_MESH_CAPACITY: u32 = 1 << 16;

/// Bytes of one work item.
const ITEM_BYTES: u64 = size_of::<GpuMeshItem>() as u64;
/// Bytes of one point.
const POINT_BYTES: u64 = size_of::<GpuMeshPoint>() as u64;
/// Bytes of one caller pair's range.
const RANGE_BYTES: u64 = size_of::<GpuMeshPairRange>() as u64;

/// The pass's pipelines and layouts on one device (compiled by the first narrowphase with a
/// mesh).
pub(crate) struct MeshKernels {
    expand: wgpu::ComputePipeline,
    expand_geometry_layout: wgpu::BindGroupLayout,
    expand_call_layout: wgpu::BindGroupLayout,
    expand_layout: wgpu::BindGroupLayout,
    triangles: wgpu::ComputePipeline,
    params_layout: wgpu::BindGroupLayout,
    triangles_layout: wgpu::BindGroupLayout,
    merge: wgpu::ComputePipeline,
    merge_call_layout: wgpu::BindGroupLayout,
    merge_layout: wgpu::BindGroupLayout,
    prepare: wgpu::ComputePipeline,
    prepare_layout: wgpu::BindGroupLayout,
}

impl MeshKernels {
    /// The kernels of `context`'s device, compiled by the first call on that device.
    fn of(context: &GpuContext, kernels: &NarrowphaseKernels) -> Result<Arc<Self>, GpuError> {
        context.kernels(|context| {
            let device = context.device();
            let params = params_layout();
            // The midphase binds 9 storage buffers, the clip kernel's limit: of the geometry
            // only the hull vertices and the shapes (a compound's parts ride in the ranges).
            let expand_geometry_layout = bind_group_layout_at(
                device,
                "mesh expand geometry",
                &[(0, storage(true)), (3, storage(true))],
            );
            let expand_call_layout = expand_call_layout(device, "mesh expand call");
            let expand_layout = bind_group_layout_at(
                device,
                "mesh expand",
                &[
                    (0, storage(true)),
                    (1, storage(true)),
                    (2, storage(true)),
                    (3, storage(false)),
                    (4, storage(false)),
                ],
            );
            let [expand] = compute_pipeline_variants(
                device,
                "mesh_expand.wgsl",
                MESH_EXPAND_WGSL,
                &[
                    Some(&expand_geometry_layout),
                    Some(&expand_call_layout),
                    Some(&expand_layout),
                ],
                [("mesh expand", "main", Default::default())],
            );
            let geometry = &kernels.sat.geometry_layout;
            let params_layout = bind_group_layout_at(device, "mesh triangles call", &[(3, params)]);
            let triangles_layout = bind_group_layout_at(
                device,
                "mesh triangles",
                &[
                    (0, storage(false)),
                    (1, storage(true)),
                    (2, storage(true)),
                    (3, storage(false)),
                ],
            );
            let [triangles] = compute_pipeline_variants(
                device,
                "mesh_triangle.wgsl",
                MESH_TRIANGLE_WGSL,
                &[Some(geometry), Some(&params_layout), Some(&triangles_layout)],
                [("mesh triangles", "main_triangles", Default::default())],
            );
            let merge_call_layout =
                bind_group_layout_at(device, "mesh merge call", &[(3, params), (4, storage(false))]);
            let merge_layout = bind_group_layout_at(
                device,
                "mesh merge",
                &[(0, storage(true)), (1, storage(true)), (2, storage(true))],
            );
            let [merge] = compute_pipeline_variants(
                device,
                "mesh_merge.wgsl",
                MESH_MERGE_WGSL,
                &[Some(geometry), Some(&merge_call_layout), Some(&merge_layout)],
                [("mesh merge", "main_mesh_merge", Default::default())],
            );
            let (prepare, prepare_layout) = prepare_kernel(device);
            MeshKernels {
                expand,
                expand_geometry_layout,
                expand_call_layout,
                expand_layout,
                triangles,
                params_layout,
                triangles_layout,
                merge,
                merge_call_layout,
                merge_layout,
                prepare,
                prepare_layout,
            }
        })
    }
}

/// One narrowphase's mesh tables on the device and the pass's buffers.
pub(crate) struct MeshStage {
    kernels: Arc<MeshKernels>,
    /// BVH nodes, vertices, triangles ([`MeshTables::upload`]).
    tables: [wgpu::Buffer; 3],
    /// Each triangle's contact data, indexed as the triangle table.
    contacts: wgpu::Buffer,
    /// The range table's head (the part count) and every compound part as a record (pose in
    /// its compound's frame, shape), copied to the range table each call.
    part_records: wgpu::Buffer,
    /// Records in `part_records` (one per entry of [`HullTables::parts`]).
    part_count: u64,
    work: WorkItems,
    item_params: wgpu::Buffer,
    item_dispatch: wgpu::Buffer,
    setup: wgpu::Buffer,
    ranges: GrowBuffer,
}

/// The work item and point buffers, `capacity` entries each.
struct WorkItems {
    capacity: u32,
    items: wgpu::Buffer,
    /// The points reserved (head), then the points.
    points: wgpu::Buffer,
}

impl WorkItems {
    /// The buffers of `capacity` items and points on `context`'s device (inside the caller's
    /// error scopes).
    fn new(context: &GpuContext, capacity: u32) -> Self {
        let device = context.device();
        let n = u64::from(capacity);
        let usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST;
        WorkItems {
            capacity,
            items: create_buffer(device, "mesh work items", n * ITEM_BYTES, usage),
            points: create_buffer(device, "mesh points", MESH_TABLE_HEAD + n * POINT_BYTES, usage),
        }
    }
}

impl MeshStage {
    /// Uploads `tables`' meshes and their contact data and allocates the work buffers at
    /// [`DEFAULT_MESH_CAPACITY`] (or one dispatch chunk, if smaller).
    pub fn new(
        context: &GpuContext,
        kernels: &NarrowphaseKernels,
        tables: &HullTables,
    ) -> Result<Self, GpuError> {
        let mesh_kernels = MeshKernels::of(context, kernels)?;
        let device = context.device();
        let max_binding = context.limits.max_binding;
        let scopes = ErrorScopes::push(device);
        let (part_records, part_count) = part_records(device, tables);
        let mesh_tables: &MeshTables = &tables.meshes;
        let uploaded = mesh_tables.upload(device, max_binding).and_then(|meshes| {
            let contacts = bytemuck::cast_slice(&tables.mesh_contacts);
            Ok((
                meshes,
                upload_storage(device, "mesh contacts", contacts, max_binding)?,
            ))
        });
        let capacity = DEFAULT_MESH_CAPACITY.min(max_capacity(context));
        let storage = wgpu::BufferUsages::STORAGE;
        let small = |label, usage| create_buffer(device, label, PARAMS_STRIDE, usage);
        let work = WorkItems::new(context, capacity);
        let item_params = small("mesh item params", storage | wgpu::BufferUsages::UNIFORM);
        let item_dispatch = small("mesh item dispatch", storage | wgpu::BufferUsages::INDIRECT);
        let setup = uniform_buffer(device, "mesh setup", GpuResidentSetup::min_size().get());
        let ranges = GrowBuffer::new(device, "mesh ranges", storage | wgpu::BufferUsages::COPY_DST);
        scopes.pop()?;
        let (tables, contacts) = uploaded?;
        Ok(MeshStage {
            kernels: mesh_kernels,
            tables,
            contacts,
            part_records,
            part_count,
            work,
            item_params,
            item_dispatch,
            setup,
            ranges,
        })
    }

    /// Work items (and point slots) per call.
    pub fn capacity(&self) -> u32 {
        self.work.capacity
    }

    /// Sets the work items per call (1 to one dispatch chunk), reallocating the buffers.
    pub fn set_capacity(&mut self, context: &GpuContext, capacity: u32) -> Result<(), GpuError> {
        check_capacity(context, capacity, "work items")?;
        let scopes = ErrorScopes::push(context.device());
        self.work = WorkItems::new(context, capacity);
        scopes.pop()
    }

    /// Steps 1 to 4 into `encoder`, after the clip kernel of the same call (see the module
    /// docs).
    pub fn record(
        &mut self,
        context: &GpuContext,
        geometry: &HullGeometry,
        encoder: &mut wgpu::CommandEncoder,
        caller: CallerPairs<'_>,
    ) -> Result<(), GpuError> {
        let (device, limits) = (context.device(), context.limits);
        let ranges_bytes = MESH_TABLE_HEAD + (self.part_count + caller.pair_count) * RANGE_BYTES;
        check_limit(
            "mesh ranges",
            ranges_bytes,
            limits.max_binding,
            "max_storage_buffer_binding_size",
        )?;
        let scopes = ErrorScopes::push(device);
        self.ranges.reserve(device, ranges_bytes, limits.max_binding);
        let n = u64::from(self.work.capacity);
        let setup = GpuResidentSetup::one_chunk(caller.margin, self.work.capacity);
        context
            .queue()
            .write_buffer(&self.setup, 0, &uniform_bytes(&setup)?);
        let head = self.part_records.size();
        encoder.copy_buffer_to_buffer(&self.part_records, 0, &self.ranges.buffer, 0, head);
        encoder.clear_buffer(&self.work.points, 0, Some(MESH_TABLE_HEAD));
        let k = &self.kernels;
        let group = |label: &str, layout, entries: &[_]| bind_group(device, label, layout, entries);
        fn whole(index: u32, buffer: &wgpu::Buffer) -> wgpu::BindGroupEntry<'_> {
            binding(index, buffer, 0, buffer.size())
        }
        let items = |index: u32| binding(index, &self.work.items, 0, n * ITEM_BYTES);
        let ranges = |index: u32| binding(index, &self.ranges.buffer, 0, ranges_bytes);
        let points = |index: u32| binding(index, &self.work.points, 0, MESH_TABLE_HEAD + n * POINT_BYTES);
        let [(vertices, vertex_bytes), (shapes, shape_bytes)] =
            [0, 3].map(|i| (&geometry.buffers[i].0, geometry.buffers[i].1));
        let expand_geometry = group(
            "mesh expand geometry",
            &k.expand_geometry_layout,
            &[
                binding(0, vertices, 0, vertex_bytes),
                binding(3, shapes, 0, shape_bytes),
            ],
        );
        let [nodes, mesh_vertices, triangles] = &self.tables;
        let expand_group = group(
            "mesh expand",
            &k.expand_layout,
            &[
                whole(0, nodes),
                whole(1, mesh_vertices),
                whole(2, triangles),
                items(3),
                ranges(4),
            ],
        );
        let prepare_group = group(
            "mesh prepare",
            &k.prepare_layout,
            &[
                whole(0, &self.setup),
                ranges(1),
                binding(2, &self.item_params, 0, PARAMS_STRIDE),
                binding(3, &self.item_dispatch, 0, DISPATCH_BYTES),
            ],
        );
        let item_params = group(
            "mesh item params",
            &k.params_layout,
            &[params_binding(3, &self.item_params)],
        );
        let triangles_group = group(
            "mesh triangles",
            &k.triangles_layout,
            &[items(0), ranges(1), whole(2, &self.contacts), points(3)],
        );
        let merge_call = group(
            "mesh merge call",
            &k.merge_call_layout,
            &[
                params_binding(3, caller.params),
                binding_up_to(4, caller.list, limits.max_binding),
            ],
        );
        let merge_group = group("mesh merge", &k.merge_layout, &[items(0), ranges(1), points(2)]);
        let expand_calls = caller.expand_calls(context, "mesh expand call", &k.expand_call_layout);
        // 1. Midphase, per caller chunk.
        {
            let mut pass = context.begin_pass(encoder, "mesh expand");
            pass.set_pipeline(&k.expand);
            pass.set_bind_group(0, &expand_geometry, &[]);
            pass.set_bind_group(2, &expand_group, &[]);
            caller.dispatch_chunks(&mut pass, |c| &expand_calls[c]);
        }
        // 2. The item dispatch's size.
        {
            let mut pass = context.begin_pass(encoder, "mesh prepare");
            pass.set_pipeline(&k.prepare);
            pass.set_bind_group(2, &prepare_group, &[]);
            pass.dispatch_workgroups(1, 1, 1);
        }
        // 3. Per triangle.
        {
            let mut pass = context.begin_pass(encoder, "mesh triangles");
            pass.set_pipeline(&k.triangles);
            pass.set_bind_group(0, &geometry.group, &[]);
            pass.set_bind_group(1, &item_params, &[0]);
            pass.set_bind_group(2, &triangles_group, &[]);
            pass.dispatch_workgroups_indirect(&self.item_dispatch, 0);
        }
        // 4. Merge, per caller chunk.
        {
            let mut pass = context.begin_pass(encoder, "mesh merge");
            pass.set_pipeline(&k.merge);
            pass.set_bind_group(0, &geometry.group, &[]);
            pass.set_bind_group(2, &merge_group, &[]);
            caller.dispatch_chunks(&mut pass, |_| &merge_call);
        }
        scopes.pop()
    }
}

/// The range table's head on the device: the item total (0), the part count, then each of
/// `tables`' compound parts as a [`GpuMeshPairRange`] (its pose in its compound's frame and its
/// shape; the mesh midphase poses a compound's children from them); and the part count.
fn part_records(device: &wgpu::Device, tables: &HullTables) -> (wgpu::Buffer, u64) {
    use wgpu::util::DeviceExt;
    let count = tables.parts.len() as u32;
    let mut bytes = [0, count, 0, 0].map(u32::to_le_bytes).concat();
    for part in &tables.parts {
        let record = GpuMeshPairRange {
            rotation: part.rotation,
            translation: part.translation,
            shape: part.shape,
            ..GpuMeshPairRange::default()
        };
        bytes.extend_from_slice(bytemuck::bytes_of(&record));
    }
    let buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("mesh part records"),
        contents: &bytes,
        usage: wgpu::BufferUsages::COPY_SRC,
    });
    (buffer, u64::from(count))
}

//! The compound stage: pairs with a compound (against a convex shape or a half-space, in either
//! order, or two compounds) computed on the GPU, recorded after the clip kernel of a host round
//! or a resident call, in A's frame; the GPU twin of [`crate::contact::collide_compound_shape`]
//! and its siblings. The clip kernel lists no compound pair; this stage lists each once.
//!
//! 1. Expansion (`shaders/narrowphase/compound_expand.wgsl`, one caller pair per invocation,
//!    dispatched per chunk as the SAT kernel): each compound pair's child pairs (the CPU
//!    midphase's box test), a contiguous range of sub-pair slots reserved with one atomic add,
//!    written in the CPU's (i, j) order as two virtual bodies posed in A's frame. A resident
//!    pair given with its higher body first runs in canonical order (as the CPU) and is flagged
//!    `COMPOUND_RANGE_SWAPPED` with the lower body's pose in the given A's frame.
//! 2. The resident prepare kernel turns the total into the sub-pair dispatch's parameters and
//!    indirect arguments, clamped to the capacity (one dispatch chunk).
//! 3. The SAT kernel, then the clip kernel's `main_slots`, over the sub-pairs `[2k, 2k + 1]`:
//!    one sub-manifold per slot, in A's frame.
//! 4. The merge (`compound_merge.wgsl`, one caller pair per invocation) appends each compound
//!    pair's manifold to the call's list (`MANIFOLD_HOST` where a child pair was left to the
//!    host, `MANIFOLD_OVERFLOW` where its range passed the capacity), moved into the given
//!    order and frame where the expansion flagged it.
//!
//! The buffers persist (sized by the capacity, the range table grown to the largest call); the
//! few bind groups are built per call. Costs: docs/design/gpu-narrowphase.md.

use encase::ShaderType;

use super::geometry::HullGeometry;
use super::kernel_layout::{
    COMPOUND_RANGES_HEAD, GpuCompoundRange, GpuResidentSetup, HullTables, PARAMS_STRIDE, WORKGROUP_SIZE,
    params_binding, params_layout,
};
use super::kernels::{CLIP_WGSL, ClipKernel, NarrowphaseKernels, with_clip_sources};
use super::kernels::{DISPATCH_BYTES, prepare_kernel};
use super::layout::{GpuBody, MANIFOLD_BYTES, MANIFOLD_LIST_HEAD, PAIR_BYTES, RESULT_BYTES};
use crate::gpu::buffers::{GrowBuffer, binding, binding_up_to, check_limit, create_buffer, uniform_buffer};
use crate::gpu::context::ErrorScopes;
use crate::gpu::layout::uniform_bytes;
use crate::gpu::pipeline::{bind_group, bind_group_layout_at, compute_pipeline_variants, storage};
use crate::gpu::{GpuContext, GpuError};
use crate::scene::InputError;

/// The WGSL source of the compound expansion: the shared declarations, then the kernel.
pub const COMPOUND_EXPAND_WGSL: &str = concat!(
    include_str!("../../../shaders/common/quat.wgsl"),
    include_str!("../../../shaders/common/body.wgsl"),
    include_str!("../../../shaders/common/layout.wgsl"),
    include_str!("../../../shaders/common/geometry.wgsl"),
    include_str!("../../../shaders/narrowphase/compound_expand.wgsl")
);

/// The WGSL source of the compound merge: the clip kernel's source (its reduction, ids and
/// list), the merge steps it shares with the mesh pass (`merge.wgsl`), then the kernel.
pub const COMPOUND_MERGE_WGSL: &str =
    with_clip_sources!("narrowphase/merge.wgsl", "narrowphase/compound_merge.wgsl");

/// Sub-pair slots of a new narrowphase with compounds (at most one dispatch chunk): 268 bytes
/// each on the device (two bodies, a pair, a tag, a SAT result, a manifold), 17.6 MB in all.
pub const DEFAULT_COMPOUND_CAPACITY: u32 = 1 << 16;

/// Bytes of one range.
const RANGE_BYTES: u64 = size_of::<GpuCompoundRange>() as u64;
/// Bytes of one virtual body.
const BODY_BYTES: u64 = size_of::<GpuBody>() as u64;

/// The stage's pipelines and layouts on one device (compiled by the first narrowphase with a
/// compound).
pub(crate) struct CompoundKernels {
    expand: wgpu::ComputePipeline,
    expand_call_layout: wgpu::BindGroupLayout,
    expand_layout: wgpu::BindGroupLayout,
    slots: wgpu::ComputePipeline,
    merge: wgpu::ComputePipeline,
    merge_layout: wgpu::BindGroupLayout,
    prepare: wgpu::ComputePipeline,
    prepare_layout: wgpu::BindGroupLayout,
}

impl CompoundKernels {
    /// The kernels of `context`'s device, compiled by the first call on that device.
    fn of(
        context: &GpuContext,
        kernels: &NarrowphaseKernels,
        clip: &ClipKernel,
    ) -> Result<std::sync::Arc<Self>, GpuError> {
        context.kernels(|context| {
            let device = context.device();
            let params = params_layout();
            let expand_call_layout = expand_call_layout(device, "compound expand call");
            let expand_layout = bind_group_layout_at(
                device,
                "compound expand",
                &[
                    (0, storage(true)),
                    (1, storage(true)),
                    (2, storage(false)),
                    (3, storage(false)),
                    (4, storage(false)),
                ],
            );
            let [expand] = compute_pipeline_variants(
                device,
                "compound_expand.wgsl",
                COMPOUND_EXPAND_WGSL,
                &[None, Some(&expand_call_layout), Some(&expand_layout)],
                [("compound expand", "main", Default::default())],
            );
            let geometry = &kernels.sat.geometry_layout;
            let [slots] = compute_pipeline_variants(
                device,
                "clip.wgsl (slots)",
                CLIP_WGSL,
                &[Some(geometry), Some(&clip.call_layout)],
                [("compound clip", "main_slots", Default::default())],
            );
            let merge_layout = bind_group_layout_at(
                device,
                "compound merge",
                &[
                    (3, params),
                    (4, storage(false)),
                    (5, storage(true)),
                    (6, storage(true)),
                    (7, storage(true)),
                ],
            );
            let [merge] = compute_pipeline_variants(
                device,
                "compound_merge.wgsl",
                COMPOUND_MERGE_WGSL,
                &[Some(geometry), Some(&merge_layout)],
                [("compound merge", "main_merge", Default::default())],
            );
            let (prepare, prepare_layout) = prepare_kernel(device);
            CompoundKernels {
                expand,
                expand_call_layout,
                expand_layout,
                slots,
                merge,
                merge_layout,
                prepare,
                prepare_layout,
            }
        })
    }
}

/// The layout of an expansion kernel's group 1, which [`CallerPairs::expand_calls`] fills:
/// the caller's bodies (0), a chunk's pairs (1), the chunks' parameters (3, dynamic offset).
pub(super) fn expand_call_layout(device: &wgpu::Device, label: &str) -> wgpu::BindGroupLayout {
    let params = params_layout();
    bind_group_layout_at(
        device,
        label,
        &[(0, storage(true)), (1, storage(true)), (3, params)],
    )
}

/// How a call dispatches its caller pairs: per chunk of `chunk` pairs over windows of the pair
/// buffer, chunk k's [`GpuParams`](super::kernel_layout::GpuParams) at `k * PARAMS_STRIDE` in
/// `params`.
pub(crate) struct CallerPairs<'a> {
    pub bodies: &'a wgpu::Buffer,
    pub pairs: &'a wgpu::Buffer,
    pub params: &'a wgpu::Buffer,
    /// The call's manifold list, which the merge appends to.
    pub list: &'a wgpu::Buffer,
    /// Pairs per chunk.
    pub chunk: u64,
    /// Pairs of the whole call (a host round's, or a resident call's `max_pairs`).
    pub pair_count: u64,
    /// Speculative margin, length units.
    pub margin: f32,
    /// `None`: chunk sizes from `pair_count`; `Some`: each chunk's indirect arguments (a
    /// resident call's, at `k * DISPATCH_BYTES`).
    pub indirect: Option<&'a wgpu::Buffer>,
}

impl CallerPairs<'_> {
    /// Dispatch chunks of the call.
    pub fn chunks(&self) -> u64 {
        self.pair_count.div_ceil(self.chunk)
    }

    /// Chunk `c`'s window of the pair buffer: its byte offset and length.
    pub fn pair_window(&self, c: u64) -> (u64, u64) {
        let at = c * self.chunk * PAIR_BYTES;
        (
            at,
            (self.chunk * PAIR_BYTES).min(self.pair_count * PAIR_BYTES - at),
        )
    }

    /// One group per chunk for an expansion kernel's group 1 (`layout`, from
    /// [`expand_call_layout`]): the caller's bodies, the chunk's pair window, the parameters.
    pub fn expand_calls(
        &self,
        context: &GpuContext,
        label: &str,
        layout: &wgpu::BindGroupLayout,
    ) -> Vec<wgpu::BindGroup> {
        (0..self.chunks())
            .map(|c| {
                let (at, len) = self.pair_window(c);
                let entries = [
                    binding_up_to(0, self.bodies, context.limits.max_binding),
                    binding(1, self.pairs, at, len),
                    params_binding(3, self.params),
                ];
                bind_group(context.device(), label, layout, &entries)
            })
            .collect()
    }

    /// Records every chunk into `pass` (its pipeline and other groups set): `call(c)` at group
    /// 1 with chunk c's parameter offset, then [`Self::dispatch`].
    pub fn dispatch_chunks<'g>(
        &self,
        pass: &mut wgpu::ComputePass,
        call: impl Fn(usize) -> &'g wgpu::BindGroup,
    ) {
        for c in 0..self.chunks() {
            pass.set_bind_group(1, call(c as usize), &[(c * PARAMS_STRIDE) as u32]);
            self.dispatch(pass, c);
        }
    }

    /// Dispatches chunk `c` of one caller pair per invocation: from its size, or from the
    /// caller's indirect arguments.
    pub fn dispatch(&self, pass: &mut wgpu::ComputePass, c: u64) {
        match self.indirect {
            Some(args) => pass.dispatch_workgroups_indirect(args, c * DISPATCH_BYTES),
            None => {
                let len = self.chunk.min(self.pair_count - c * self.chunk);
                pass.dispatch_workgroups(len.div_ceil(u64::from(WORKGROUP_SIZE)) as u32, 1, 1);
            }
        }
    }
}

/// One narrowphase's compound tables on the device and the stage's buffers.
pub(crate) struct CompoundStage {
    kernels: std::sync::Arc<CompoundKernels>,
    compounds: wgpu::Buffer,
    parts: wgpu::Buffer,
    sub: SubPairs,
    sub_params: wgpu::Buffer,
    sub_dispatch: wgpu::Buffer,
    setup: wgpu::Buffer,
    ranges: GrowBuffer,
}

/// The sub-pair buffers, `capacity` slots each.
struct SubPairs {
    capacity: u32,
    /// Two virtual bodies per slot.
    bodies: wgpu::Buffer,
    /// `[2k, 2k + 1]` for slot k, written once.
    pairs: wgpu::Buffer,
    /// The child pair of each slot, `i << 8 | j`.
    tags: wgpu::Buffer,
    results: wgpu::Buffer,
    /// A manifold list's head (unused), then one manifold per slot.
    manifolds: wgpu::Buffer,
}

impl SubPairs {
    /// The buffers of `capacity` slots on `context`'s device (inside the caller's error scopes).
    fn new(context: &GpuContext, capacity: u32) -> Self {
        let device = context.device();
        let n = u64::from(capacity);
        let storage = wgpu::BufferUsages::STORAGE;
        let pairs = create_buffer(
            device,
            "compound sub-pairs",
            n * PAIR_BYTES,
            storage | wgpu::BufferUsages::COPY_DST,
        );
        let indices: Vec<[u32; 2]> = (0..capacity).map(|k| [2 * k, 2 * k + 1]).collect();
        context
            .queue()
            .write_buffer(&pairs, 0, bytemuck::cast_slice(&indices));
        SubPairs {
            capacity,
            bodies: create_buffer(device, "compound sub-bodies", 2 * n * BODY_BYTES, storage),
            pairs,
            tags: create_buffer(device, "compound sub-tags", n * 4, storage),
            results: create_buffer(device, "compound sub-results", n * RESULT_BYTES, storage),
            manifolds: create_buffer(
                device,
                "compound sub-manifolds",
                MANIFOLD_LIST_HEAD + n * MANIFOLD_BYTES,
                storage,
            ),
        }
    }
}

impl CompoundStage {
    /// Uploads `tables`' compound records and parts and allocates the sub-pair buffers at
    /// [`DEFAULT_COMPOUND_CAPACITY`] (or one dispatch chunk, if smaller).
    pub fn new(
        context: &GpuContext,
        kernels: &NarrowphaseKernels,
        clip: &ClipKernel,
        tables: &HullTables,
    ) -> Result<Self, GpuError> {
        let compound_kernels = CompoundKernels::of(context, kernels, clip)?;
        let device = context.device();
        let scopes = ErrorScopes::push(device);
        let upload = |label: &str, bytes: &[u8]| {
            let buffer = create_buffer(
                device,
                label,
                bytes.len() as u64,
                wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            );
            context.queue().write_buffer(&buffer, 0, bytes);
            buffer
        };
        let compounds = upload("compound records", bytemuck::cast_slice(&tables.compounds));
        let parts = upload("compound parts", bytemuck::cast_slice(&tables.parts));
        let capacity = DEFAULT_COMPOUND_CAPACITY.min(max_capacity(context));
        let storage = wgpu::BufferUsages::STORAGE;
        let small = |label, usage| create_buffer(device, label, PARAMS_STRIDE, usage);
        let stage = CompoundStage {
            kernels: compound_kernels,
            compounds,
            parts,
            sub: SubPairs::new(context, capacity),
            sub_params: small("compound sub-params", storage | wgpu::BufferUsages::UNIFORM),
            sub_dispatch: small("compound sub-dispatch", storage | wgpu::BufferUsages::INDIRECT),
            setup: uniform_buffer(device, "compound setup", GpuResidentSetup::min_size().get()),
            ranges: GrowBuffer::new(device, "compound ranges", storage | wgpu::BufferUsages::COPY_DST),
        };
        scopes.pop()?;
        Ok(stage)
    }

    /// Sub-pair slots per call.
    pub fn capacity(&self) -> u32 {
        self.sub.capacity
    }

    /// Sets the sub-pair slots per call (1 to one dispatch chunk), reallocating the buffers.
    pub fn set_capacity(&mut self, context: &GpuContext, capacity: u32) -> Result<(), GpuError> {
        check_capacity(context, capacity, "sub-pairs")?;
        let scopes = ErrorScopes::push(context.device());
        self.sub = SubPairs::new(context, capacity);
        scopes.pop()
    }

    /// Steps 1 to 4 into `encoder`, after the clip kernel of the same call (see the module
    /// docs).
    pub fn record(
        &mut self,
        context: &GpuContext,
        kernels: &NarrowphaseKernels,
        clip: &ClipKernel,
        geometry: &HullGeometry,
        encoder: &mut wgpu::CommandEncoder,
        caller: CallerPairs<'_>,
    ) -> Result<(), GpuError> {
        let (device, limits) = (context.device(), context.limits);
        let ranges_bytes = COMPOUND_RANGES_HEAD + caller.pair_count * RANGE_BYTES;
        check_limit(
            "compound ranges",
            ranges_bytes,
            limits.max_binding,
            "max_storage_buffer_binding_size",
        )?;
        let scopes = ErrorScopes::push(device);
        self.ranges.reserve(device, ranges_bytes, limits.max_binding);
        let setup = GpuResidentSetup::one_chunk(caller.margin, self.sub.capacity);
        context
            .queue()
            .write_buffer(&self.setup, 0, &uniform_bytes(&setup)?);
        encoder.clear_buffer(&self.ranges.buffer, 0, Some(COMPOUND_RANGES_HEAD));
        let (sub, n) = (&self.sub, u64::from(self.sub.capacity));
        let k = &self.kernels;
        let group = |label: &str, layout, entries: &[_]| bind_group(device, label, layout, entries);
        let ranges = binding(6, &self.ranges.buffer, 0, ranges_bytes);
        let tags = binding(7, &sub.tags, 0, n * 4);
        let sub_call = [
            binding(0, &sub.bodies, 0, 2 * n * BODY_BYTES),
            binding(1, &sub.pairs, 0, n * PAIR_BYTES),
            binding(2, &sub.results, 0, n * RESULT_BYTES),
            params_binding(3, &self.sub_params),
        ];
        let sub_manifolds = binding(4, &sub.manifolds, 0, MANIFOLD_LIST_HEAD + n * MANIFOLD_BYTES);
        let expand_group = group(
            "compound expand",
            &k.expand_layout,
            &[
                binding(0, &self.compounds, 0, self.compounds.size()),
                binding(1, &self.parts, 0, self.parts.size()),
                binding(2, &sub.bodies, 0, 2 * n * BODY_BYTES),
                binding(3, &sub.tags, 0, n * 4),
                binding(4, &self.ranges.buffer, 0, ranges_bytes),
            ],
        );
        let prepare_group = group(
            "compound prepare",
            &k.prepare_layout,
            &[
                binding(0, &self.setup, 0, self.setup.size()),
                binding(1, &self.ranges.buffer, 0, ranges_bytes),
                binding(2, &self.sub_params, 0, PARAMS_STRIDE),
                binding(3, &self.sub_dispatch, 0, DISPATCH_BYTES),
            ],
        );
        let sat_group = group("compound sat", &kernels.sat.call_layout, &sub_call);
        let mut slots_entries = sub_call.to_vec();
        slots_entries.push(sub_manifolds.clone());
        let slots_group = group("compound clip", &clip.call_layout, &slots_entries);
        let merge_group = group(
            "compound merge",
            &k.merge_layout,
            &[
                params_binding(3, caller.params),
                binding_up_to(4, caller.list, limits.max_binding),
                binding(5, &sub.manifolds, 0, MANIFOLD_LIST_HEAD + n * MANIFOLD_BYTES),
                ranges,
                tags,
            ],
        );
        let expand_calls = caller.expand_calls(context, "compound expand call", &k.expand_call_layout);
        // 1. Expansion, per caller chunk.
        {
            let mut pass = context.begin_pass(encoder, "compound expand");
            pass.set_pipeline(&k.expand);
            pass.set_bind_group(2, &expand_group, &[]);
            caller.dispatch_chunks(&mut pass, |c| &expand_calls[c]);
        }
        // 2. The sub-pair dispatch's size.
        {
            let mut pass = context.begin_pass(encoder, "compound prepare");
            pass.set_pipeline(&k.prepare);
            pass.set_bind_group(2, &prepare_group, &[]);
            pass.dispatch_workgroups(1, 1, 1);
        }
        // 3. SAT, then clip into the slots.
        let sat = kernels.sat.pipeline(geometry.resident_sat_mapping());
        for (pipeline, call, label) in [
            (sat, &sat_group, "compound sat"),
            (&k.slots, &slots_group, "compound clip"),
        ] {
            let mut pass = context.begin_pass(encoder, label);
            pass.set_pipeline(pipeline);
            pass.set_bind_group(0, &geometry.group, &[]);
            pass.set_bind_group(1, call, &[0]);
            pass.dispatch_workgroups_indirect(&self.sub_dispatch, 0);
        }
        // 4. Merge, per caller chunk.
        {
            let mut pass = context.begin_pass(encoder, "compound merge");
            pass.set_pipeline(&k.merge);
            pass.set_bind_group(0, &geometry.group, &[]);
            caller.dispatch_chunks(&mut pass, |_| &merge_group);
        }
        scopes.pop()
    }
}

/// The most sub-pair slots (or mesh work items) on `context`'s device: one dispatch chunk.
pub(super) fn max_capacity(context: &GpuContext) -> u32 {
    super::kernels::chunk_pairs(context.limits).min(u64::from(u32::MAX)) as u32
}

/// `Ok` when `capacity` (of `unit`: "sub-pairs", "work items") is 1 to [`max_capacity`], else
/// the error naming the range.
pub(super) fn check_capacity(context: &GpuContext, capacity: u32, unit: &str) -> Result<(), GpuError> {
    let most = max_capacity(context);
    if !(1..=most).contains(&capacity) {
        return Err(InputError::new(
            "capacity",
            format!("{capacity} {unit}: expected 1 to {most} (one dispatch chunk on this device)"),
        )
        .into());
    }
    Ok(())
}

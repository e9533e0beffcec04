//! A host round's manifold list put in pair order on the GPU before it is copied back, so the
//! host reads it front to back: no table of entries per pair, no random reads of the list, each
//! entry written at its own place in a [`crate::ContactSet`] (entries the host leaves out are
//! removed after). WGSL twin: `shaders/narrowphase/list_order.wgsl`.
//!
//! The list's entries name distinct pairs of the round, so an entry's place in pair order is the
//! number of listed pairs before its own. Pairs go in blocks of [`LIST_ORDER_WORKGROUP`].
//! 1. `mark_main`: each entry marks its pair in a table of the round's pairs and counts it in
//!    its block; an entry naming a pair outside the round, or one already marked, is not placed.
//! 2. `offsets_main`: one workgroup turns the block counts into each block's first place (an
//!    exclusive scan) and writes the ordered list's head: the entries placed and those listed
//!    (the host fails the call when they differ, `rounds::complete_list`).
//! 3. `place_main`: a workgroup per block; a marked pair's place is its block's first place plus
//!    the marked pairs before it in the block (a workgroup scan), and its entry is copied there.
//!
//! Steps 2 and 3 leave the table and the block counts zero again (wgpu zeroes new buffers). Three
//! dependent dispatches a round whatever its size. Bytes per round: 4 per listed entry read and
//! two atomics (step 1), 4 per pair of the table read and cleared, 112 per entry read and
//! written (step 3), 4 per block of 256 pairs (step 2).

use std::sync::Arc;

use encase::ShaderType;

use super::layout::{GpuManifold, GpuManifoldCount, MANIFOLD_BYTES, MANIFOLD_LIST_HEAD, with_layout_sources};
use crate::gpu::buffers::{GrowBuffer, MIN_BUFFER_BYTES, StagingBuffer, binding_up_to, uniform_buffer};
use crate::gpu::context::ErrorScopes;
use crate::gpu::layout::uniform_bytes;
use crate::gpu::pipeline::{
    BindGroupCache, bind_group, bind_group_layout, compute_pipeline_variants, grid, storage, uniform,
};
use crate::gpu::{GpuContext, GpuError};

/// The WGSL source of the ordering kernels: the shared layout (as
/// [`super::layout::LAYOUT_WGSL`], the list's count a plain `u32`), then the kernels.
pub const LIST_ORDER_WGSL: &str = with_layout_sources!("narrowphase/list_order.wgsl");

/// Invocations per workgroup of the three kernels, and pairs per block (one per invocation of
/// step 3); must match list_order.wgsl.
pub const LIST_ORDER_WORKGROUP: u32 = 256;

/// Bytes of a table or block count entry (`u32`).
const COUNT_BYTES: u64 = 4;

/// A round's parameters (uniform, written with encase); must match `GpuListOrderParams` in
/// list_order.wgsl.
#[derive(Clone, Copy, Debug, Default, PartialEq, ShaderType)]
pub struct GpuListOrderParams {
    /// Pairs of the round: the list's entries must name a pair below it.
    pub pairs: u32,
    /// Blocks of [`LIST_ORDER_WORKGROUP`] pairs: `pairs` divided by it, rounded up.
    pub blocks: u32,
}

/// The three kernels and their bind group layout, compiled once per device.
struct ListOrderKernels {
    layout: wgpu::BindGroupLayout,
    /// Steps 1, 2 and 3.
    steps: [wgpu::ComputePipeline; 3],
}

impl ListOrderKernels {
    fn compile(context: &GpuContext) -> ListOrderKernels {
        let device = context.device();
        let layout = bind_group_layout(
            device,
            "list order",
            &[
                uniform(false, GpuListOrderParams::min_size().into()),
                storage(true),
                storage(false),
                storage(false),
                storage(false),
            ],
        );
        let steps = compute_pipeline_variants(
            device,
            "list_order.wgsl",
            LIST_ORDER_WGSL,
            &[Some(&layout)],
            [
                ("list order mark", "mark_main", Default::default()),
                ("list order offsets", "offsets_main", Default::default()),
                ("list order place", "place_main", Default::default()),
            ],
        );
        ListOrderKernels { layout, steps }
    }
}

/// The ordering of one narrowphase's host rounds: kernels, the pair table and block counts
/// (zero between rounds) and one ordered list per round slot (a pipelined round's list stays
/// intact until it is read back).
pub(crate) struct ListOrder {
    kernels: Arc<ListOrderKernels>,
    params: wgpu::Buffer,
    /// Each slot's round parameters, copied into `params`.
    params_staging: [StagingBuffer; 2],
    table: GrowBuffer,
    block_counts: GrowBuffer,
    ordered: [GrowBuffer; 2],
    /// One group per slot's list.
    groups: BindGroupCache<wgpu::BindGroup, 2>,
}

impl ListOrder {
    /// Compiles the kernels on `context`'s device (once per device) and makes empty buffers.
    pub fn new(context: &GpuContext) -> Result<Self, GpuError> {
        let kernels = context.kernels(ListOrderKernels::compile)?;
        let device = context.device();
        let ordered = [0, 1].map(|_| {
            GrowBuffer::new(
                device,
                "ordered manifold list",
                wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            )
        });
        Ok(ListOrder {
            kernels,
            params: uniform_buffer(device, "list order params", MIN_BUFFER_BYTES),
            params_staging: [0, 1].map(|_| StagingBuffer::new(device, "list order params staging")),
            table: GrowBuffer::new(device, "list order pair table", wgpu::BufferUsages::STORAGE),
            block_counts: GrowBuffer::new(device, "list order block counts", wgpu::BufferUsages::STORAGE),
            ordered,
            groups: BindGroupCache::default(),
        })
    }

    /// Call after submitting an encoder [`Self::record`] recorded into with `slot`: its staging
    /// buffer is mapped again for the slot's next round.
    pub fn after_submit(&mut self, slot: usize) {
        self.params_staging[slot].remap_after_submit();
    }

    /// The ordered list of `slot` after a [`Self::record`] with it: its head (the entries
    /// placed, and those the clip kernel's list held as `listed`), then the entries in
    /// increasing pair order.
    pub fn ordered(&self, slot: usize) -> &wgpu::Buffer {
        &self.ordered[slot].buffer
    }

    /// Records steps 1 to 3 for the `list` of a round of `pairs` pairs (at most the list's
    /// capacity, which the caller checked against the binding limit) into `encoder`, the
    /// result in [`Self::ordered`] of `slot`. The round's parameters go through the slot's
    /// mapped staging buffer: call [`Self::after_submit`] once the encoder is submitted (else
    /// the slot's next `record` waits for the device to map it again).
    pub fn record(
        &mut self,
        context: &GpuContext,
        encoder: &mut wgpu::CommandEncoder,
        list: &wgpu::Buffer,
        pairs: u32,
        slot: usize,
    ) -> Result<(), GpuError> {
        if pairs == 0 {
            return Ok(());
        }
        let (device, limits) = (context.device(), context.limits);
        let params = GpuListOrderParams {
            pairs,
            blocks: pairs.div_ceil(LIST_ORDER_WORKGROUP),
        };
        self.table
            .reserve(device, u64::from(pairs) * COUNT_BYTES, limits.max_binding);
        let block_bytes = u64::from(params.blocks) * COUNT_BYTES;
        self.block_counts.reserve(device, block_bytes, limits.max_binding);
        let list_bytes = MANIFOLD_LIST_HEAD + u64::from(pairs) * MANIFOLD_BYTES;
        self.ordered[slot].reserve(device, list_bytes, limits.max_binding);
        let bytes = uniform_bytes(&params)?;
        let staging = &mut self.params_staging[slot];
        staging.write_bytes(context, &bytes)?;
        staging.record_copy(encoder, &self.params, bytes.len() as u64);
        let max_groups = limits.max_workgroups;
        let entries = grid("list order", u64::from(pairs), LIST_ORDER_WORKGROUP, max_groups)?;
        let blocks = grid("list order", u64::from(params.blocks), 1, max_groups)?;
        // Whole buffers, up to the binding limit (the kernels stop at the round's pairs and
        // the list's count), so the groups depend on the buffers alone.
        let whole = |index, buffer| binding_up_to(index, buffer, limits.max_binding);
        let (kernels, table, counts) = (&self.kernels, &self.table.buffer, &self.block_counts.buffer);
        let ordered = &self.ordered[slot].buffer;
        let group = self.groups.get(&[list, table, counts, ordered], || {
            bind_group(
                device,
                "list order",
                &kernels.layout,
                &[
                    whole(0, &self.params),
                    whole(1, list),
                    whole(2, table),
                    whole(3, counts),
                    whole(4, ordered),
                ],
            )
        });
        // One pass: each dispatch sees what the one before wrote (WebGPU orders dispatches).
        let mut pass = context.begin_pass(encoder, "list order");
        pass.set_bind_group(0, &group, &[]);
        for (pipeline, (x, y)) in self.kernels.steps.iter().zip([entries, (1, 1), blocks]) {
            pass.set_pipeline(pipeline);
            pass.dispatch_workgroups(x, y, 1);
        }
        Ok(())
    }
}

/// Not API (reached through [`crate::internals`] by the tests): a `ListOrder` fed a manifold
/// list from the host, its ordered list read back.
pub struct ListOrderProbe {
    context: Arc<GpuContext>,
    order: ListOrder,
    list: GrowBuffer,
    readback: GrowBuffer,
}

impl ListOrderProbe {
    /// An ordering on `context`.
    pub fn new(context: Arc<GpuContext>) -> Result<Self, GpuError> {
        let device = context.device();
        let usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST;
        Ok(ListOrderProbe {
            order: ListOrder::new(&context)?,
            list: GrowBuffer::new(device, "list order probe list", usage),
            readback: GrowBuffer::new(
                device,
                "list order probe readback",
                wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            ),
            context,
        })
    }

    /// Uploads a list of `entries` (its count their number, or `count` when given; its
    /// `searched_alone` as given), orders it as a round of `pairs` pairs in `slot` and reads
    /// back the ordered list's head and its first `count` entries (at most `pairs`).
    pub fn order(
        &mut self,
        entries: &[GpuManifold],
        (count, searched_alone): (Option<u32>, u32),
        pairs: u32,
        slot: usize,
    ) -> Result<(GpuManifoldCount, Vec<GpuManifold>), GpuError> {
        let context = &*self.context;
        let (device, max) = (context.device(), context.limits.max_binding);
        let head = GpuManifoldCount {
            count: count.unwrap_or(entries.len() as u32),
            searched_alone,
            ..GpuManifoldCount::default()
        };
        let capacity = entries.len().max(pairs as usize);
        let mut bytes = vec![0u8; MANIFOLD_LIST_HEAD as usize + capacity * MANIFOLD_BYTES as usize];
        bytes[..MANIFOLD_LIST_HEAD as usize].copy_from_slice(bytemuck::bytes_of(&head));
        let listed = &mut bytes[MANIFOLD_LIST_HEAD as usize..][..size_of_val(entries)];
        listed.copy_from_slice(bytemuck::cast_slice(entries));
        let scopes = ErrorScopes::push(device);
        self.list.write(device, context.queue(), &bytes, max);
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("list order probe"),
        });
        let recorded = self
            .order
            .record(context, &mut encoder, &self.list.buffer, pairs, slot);
        let size = MANIFOLD_LIST_HEAD + u64::from(pairs) * MANIFOLD_BYTES;
        if recorded.is_ok() {
            self.readback.reserve(device, size, max);
            encoder.copy_buffer_to_buffer(self.order.ordered(slot), 0, &self.readback.buffer, 0, size);
        }
        let popped = scopes.pop();
        recorded?;
        popped?;
        let submission = context.queue().submit([encoder.finish()]);
        self.order.after_submit(slot);
        let bytes: Vec<u8> = context.read_mapped(submission, &self.readback.buffer, size, <[u8]>::to_vec)?;
        let head: GpuManifoldCount = bytemuck::pod_read_unaligned(&bytes[..MANIFOLD_LIST_HEAD as usize]);
        let count = (head.count.min(pairs)) as usize;
        let ordered = bytes[MANIFOLD_LIST_HEAD as usize..]
            .chunks_exact(MANIFOLD_BYTES as usize)
            .take(count)
            .map(bytemuck::pod_read_unaligned)
            .collect();
        Ok((head, ordered))
    }
}

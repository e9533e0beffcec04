//! A host round's manifold list put in pair order on the GPU before it is copied back, so the
//! host reads it front to back: no table of entries per pair, no random reads of the list, each
//! entry written at its own place in a [`crate::ContactSet`] (entries the host leaves out are
//! removed after). WGSL twin: `shaders/narrowphase/list_order.wgsl`.
//!
//! 1. `keys_main`: each entry of the clip kernel's list (in no order) becomes a key (its pair,
//!    its index).
//! 2. [`GpuRadixSort`] sorts the keys by pair over the bits a round's pair index needs, the
//!    count read from the list's head on the GPU.
//! 3. `gather_main`: the entries copied into the ordered list of the round's slot, in key
//!    order, with the list's count.
//!
//! The list's entries name distinct pairs of the round, so the order is the pair order whatever
//! order the clip kernel's workgroups appended in; the host checks it as it reads
//! (`rounds::read_listed_into`). Costs: about 3 sort passes of the listed entries at the largest
//! round (2^18 pairs), and 112 bytes read and written per entry by the gather.

use std::sync::Arc;

use super::layout::{MANIFOLD_BYTES, MANIFOLD_LIST_HEAD, with_layout_sources};
use crate::gpu::buffers::{GrowBuffer, binding_up_to};
use crate::gpu::pipeline::{BindGroupCache, bind_group_layout, compute_pipeline_variants, grid, storage};
use crate::gpu::radix_sort::{GpuRadixSort, RadixKeys};
use crate::gpu::{GpuContext, GpuError};

/// The WGSL source of the ordering kernels: the shared layout (as
/// [`super::layout::LAYOUT_WGSL`], the list's count a plain `u32`), then the kernels.
pub const LIST_ORDER_WGSL: &str = with_layout_sources!("narrowphase/list_order.wgsl");

/// Invocations per workgroup of both kernels; must match list_order.wgsl.
pub const LIST_ORDER_WORKGROUP: u32 = 64;

/// Bytes of one sort key: `(pair, entry)` as `vec2<u32>`.
const KEY_BYTES: u64 = 8;

/// The two kernels and their bind group layouts, compiled once per device.
struct ListOrderKernels {
    keys_layout: wgpu::BindGroupLayout,
    gather_layout: wgpu::BindGroupLayout,
    keys: wgpu::ComputePipeline,
    gather: wgpu::ComputePipeline,
}

impl ListOrderKernels {
    fn compile(context: &GpuContext) -> ListOrderKernels {
        let device = context.device();
        let keys_layout = bind_group_layout(device, "list order keys", &[storage(true), storage(false)]);
        let gather_layout = bind_group_layout(
            device,
            "list order gather",
            &[storage(true), storage(true), storage(false)],
        );
        let file = "list_order.wgsl";
        let [keys] = compute_pipeline_variants(
            device,
            file,
            LIST_ORDER_WGSL,
            &[Some(&keys_layout)],
            [("list order keys", "keys_main", Default::default())],
        );
        let [gather] = compute_pipeline_variants(
            device,
            file,
            LIST_ORDER_WGSL,
            &[None, Some(&gather_layout)],
            [("list order gather", "gather_main", Default::default())],
        );
        ListOrderKernels {
            keys_layout,
            gather_layout,
            keys,
            gather,
        }
    }
}

/// The ordering of one narrowphase's host rounds: kernels, keys, the sort and one ordered list
/// per round slot (a pipelined round's list stays intact until it is read back).
pub(crate) struct ListOrder {
    kernels: Arc<ListOrderKernels>,
    keys: GrowBuffer,
    sorter: GpuRadixSort,
    ordered: [GrowBuffer; 2],
    /// Step 1's groups, one per slot's list.
    keys_groups: BindGroupCache<wgpu::BindGroup, 2>,
    /// Step 3's groups: per slot, the sort's result in either of its two buffers.
    gather_groups: BindGroupCache<wgpu::BindGroup, 4>,
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
            keys: GrowBuffer::new(device, "list order keys", wgpu::BufferUsages::STORAGE),
            sorter: GpuRadixSort::new(context)?,
            ordered,
            keys_groups: BindGroupCache::default(),
            gather_groups: BindGroupCache::default(),
        })
    }

    /// The ordered list of `slot` after a [`Self::record`] with it: the head of the clip
    /// kernel's list, then its entries in increasing pair order.
    pub fn ordered(&self, slot: usize) -> &wgpu::Buffer {
        &self.ordered[slot].buffer
    }

    /// Records steps 1 to 3 for the `list` of a round of `pairs` pairs (at most the list's
    /// capacity, which the caller checked against the binding limit) into `encoder`, the
    /// result in [`Self::ordered`] of `slot`. The sort's parameters go through the queue:
    /// submit the encoder before the next `record`.
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
        let key_bytes = u64::from(pairs) * KEY_BYTES;
        self.keys.reserve(device, key_bytes, limits.max_buffer);
        let list_bytes = MANIFOLD_LIST_HEAD + u64::from(pairs) * MANIFOLD_BYTES;
        self.ordered[slot].reserve(device, list_bytes, limits.max_binding);
        let (x, y) = grid(
            "list order",
            u64::from(pairs),
            LIST_ORDER_WORKGROUP,
            limits.max_workgroups,
        )?;
        // Whole buffers, up to the binding limit (the kernels stop at the list's count), so
        // the groups depend on the buffers alone.
        let whole = |index, buffer| binding_up_to(index, buffer, limits.max_binding);
        let kernels = &self.kernels;
        // 1.
        let keys = &self.keys.buffer;
        let keys_group = self.keys_groups.get(&[list, keys], || {
            device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("list order keys"),
                layout: &kernels.keys_layout,
                entries: &[whole(0, list), whole(1, keys)],
            })
        });
        {
            let mut pass = context.begin_pass(encoder, "list order");
            pass.set_pipeline(&self.kernels.keys);
            pass.set_bind_group(0, &keys_group, &[]);
            pass.dispatch_workgroups(x, y, 1);
        }
        // 2. By pair: the bits of the round's last pair index.
        let key_bits = (u32::BITS - (pairs - 1).leading_zeros()).max(1);
        let sorted = self.sorter.encode(
            context,
            encoder,
            &RadixKeys {
                keys: &self.keys.buffer,
                max_keys: pairs,
                count: Some(list),
                low_bits: 0,
                key_bits,
                stage: "list order",
            },
        )?;
        // 3.
        let ordered = &self.ordered[slot].buffer;
        let gather_group = self.gather_groups.get(&[list, &sorted, ordered], || {
            device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("list order gather"),
                layout: &kernels.gather_layout,
                entries: &[whole(0, list), whole(1, &sorted), whole(2, ordered)],
            })
        });
        let mut pass = context.begin_pass(encoder, "list order");
        pass.set_pipeline(&self.kernels.gather);
        pass.set_bind_group(1, &gather_group, &[]);
        pass.dispatch_workgroups(x, y, 1);
        Ok(())
    }
}

//! A stable LSD radix sort of `(hi, lo)` u32 key pairs in a GPU buffer, recorded into a
//! caller's encoder (the BVH build's Morton keys, the broadphase's pairs). WGSL twin:
//! `shaders/common/radix_sort.wgsl`. The sorted key is the composite `hi * 2^low_bits + lo`
//! (`lo < 2^low_bits`), over its first `key_bits` bits, [`RADIX_BITS`] per pass:
//!
//! 1. One invocation reads the key count (the host's, or a GPU counter clamped to the
//!    capacity) and writes every later dispatch's indirect arguments.
//! 2. Per pass: each workgroup's digit histogram of its tile of [`RADIX_TILE`] keys into a
//!    digit-major table; an exclusive scan of the table (reduce-then-scan, one dispatch per
//!    level up and down, [`SCAN_BLOCK`] entries per workgroup); a stable scatter, each tile's
//!    keys ranked within their digit by a bitonic sort of (digit, slot) in workgroup memory.
//!
//! The keys ping-pong between the caller's buffer and the sorter's: an odd number of passes
//! leaves them in the sorter's ([`GpuRadixSort::encode`] says which). Buffers grow with the
//! capacity and are reused. Costs: `docs/design/gpu-bvh.md`.

use std::sync::Arc;

use bytemuck::{Pod, Zeroable};
use encase::ShaderType;

use super::buffers::{
    GrowBuffer, MIN_BUFFER_BYTES, UNIFORM_WRITE, binding, binding_up_to, check_limit, create_buffer,
};
use super::context::ErrorScopes;
use super::layout::write_uniform;
use super::pipeline::{
    BindGroupCache, bind_group, bind_group_layout, compute_pipeline_variants, storage, uniform,
};
use super::{GpuContext, GpuError};

/// The WGSL source of the sort's kernels (`shaders/common/radix_sort.wgsl`).
pub const RADIX_SORT_WGSL: &str = include_str!("../../shaders/common/radix_sort.wgsl");

/// Bits of the key sorted per pass. Must match `RADIX_BITS` in radix_sort.wgsl.
pub const RADIX_BITS: u32 = 8;

/// Digit values of a pass: `2^RADIX_BITS`. Must match `RADIX_BINS` in radix_sort.wgsl.
pub const RADIX_BINS: u32 = 1 << RADIX_BITS;

/// Invocations per workgroup of every kernel but the first, one per digit. Must match
/// `RADIX_WORKGROUP_SIZE` in radix_sort.wgsl.
pub const RADIX_WORKGROUP_SIZE: u32 = RADIX_BINS;

/// Keys per workgroup of the histogram and the scatter (12 KiB of workgroup memory: the keys
/// and their packed (digit, slot) ranks; slots fit 16 bits). Must match `RADIX_TILE` in
/// radix_sort.wgsl.
pub const RADIX_TILE: u32 = 1024;

/// Table entries per workgroup of the scan, [`RADIX_WORKGROUP_SIZE`] times a few. Must match
/// `SCAN_BLOCK` in radix_sort.wgsl.
pub const SCAN_BLOCK: u32 = 1024;

/// Scan levels the first kernel writes arguments for: 2^32 keys need 3 (2^30 table entries,
/// 2^20 block sums, 2^10). Must match `MAX_SCAN_LEVELS` in radix_sort.wgsl.
pub const MAX_SCAN_LEVELS: u32 = 4;

const _: () = assert!(RADIX_TILE <= 1 << 16 && RADIX_TILE.is_power_of_two());
const _: () = assert!(SCAN_BLOCK.is_multiple_of(RADIX_WORKGROUP_SIZE));

/// Per-dispatch parameters (uniform at a dynamic offset, written with encase); must match
/// `GpuRadixParams` in radix_sort.wgsl.
#[derive(Clone, Copy, Debug, Default, PartialEq, ShaderType)]
pub struct GpuRadixParams {
    /// Keys sorted at most (the capacity).
    pub max_keys: u32,
    /// 1: the key count is the first u32 of the counter buffer (clamped to `max_keys`);
    /// 0: it is `max_keys`.
    pub counted: u32,
    /// Bits of `lo` in the composite key (0: the key is `hi` alone).
    pub low_bits: u32,
    /// The pass's first bit of the composite key.
    pub shift: u32,
    /// Scan kernels: the level (0: the digit table).
    pub level: u32,
    /// Scan kernels: the level's first entry in the scan buffer.
    pub level_offset: u32,
    /// Scan kernels: the first entry of the level above (its block sums).
    pub parent_offset: u32,
    /// Scan kernels: 1 on the top level (one block, no level above).
    pub top: u32,
    /// `max_compute_workgroups_per_dimension`, for the indirect arguments.
    pub max_groups: u32,
}

/// What the first kernel leaves for the others; must match `GpuRadixState` in radix_sort.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct GpuRadixState {
    /// Keys sorted.
    pub key_count: u32,
    /// Tiles of [`RADIX_TILE`] keys: `ceil(key_count / RADIX_TILE)`.
    pub tile_count: u32,
    /// Padding.
    pub _pad0: u32,
    /// Padding.
    pub _pad1: u32,
}

const _: () = assert!(size_of::<GpuRadixState>() == 16);

/// Bytes between two dispatches' parameters: the largest `min_uniform_buffer_offset_alignment`.
const PARAMS_STRIDE: u64 = 256;

/// Bytes of one indirect dispatch's arguments.
const DISPATCH_BYTES: u64 = size_of::<wgpu::util::DispatchIndirectArgs>() as u64;

/// The entry points after `prepare_main`, indexed by [`RadixDispatch::kernel`].
const ENTRY_POINTS: [&str; 4] = [
    "histogram_main",
    "scan_reduce_main",
    "scan_down_main",
    "scatter_main",
];
const HISTOGRAM: usize = 0;
const SCAN_REDUCE: usize = 1;
const SCAN_DOWN: usize = 2;
const SCATTER: usize = 3;

/// The keys of one sort.
pub(crate) struct RadixKeys<'a> {
    /// `array<vec2<u32>>` of `(hi, lo)` pairs from byte 0, `max_keys` of them at least
    /// (STORAGE); the sort's input, and its output after an even number of passes.
    pub keys: &'a wgpu::Buffer,
    /// Keys sorted at most.
    pub max_keys: u32,
    /// A STORAGE buffer whose first u32 is the key count on the GPU (clamped to `max_keys`);
    /// `None`: `max_keys` keys.
    pub count: Option<&'a wgpu::Buffer>,
    /// Bits of `lo` in the composite key `hi * 2^low_bits + lo`; every `lo` is below
    /// `2^low_bits` (0: `lo` is ignored).
    pub low_bits: u32,
    /// Low bits of the composite key sorted by (higher bits are ignored).
    pub key_bits: u32,
    /// The sort's pass label, its stage under a [`super::StageTimer`].
    pub stage: &'static str,
}

/// One dispatch after the first: kernel, parameters, indirect argument slot, pass.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct RadixDispatch {
    pub kernel: usize,
    pub params: GpuRadixParams,
    /// Slot of its arguments (0: the tiles; 1 + level: a scan level's blocks).
    pub args_slot: u32,
    /// Pass (even: reads the caller's buffer; odd: the sorter's).
    pub pass: u32,
}

/// Entries of each scan level for up to `max_keys` keys: the digit table, then block sums
/// until one block holds them (none for no key).
pub(crate) fn scan_levels(max_keys: u32) -> Vec<u64> {
    let mut levels = Vec::new();
    let mut entries = u64::from(max_keys.div_ceil(RADIX_TILE)) * u64::from(RADIX_BINS);
    if entries > 0 {
        levels.push(entries);
        while entries > u64::from(SCAN_BLOCK) {
            entries = entries.div_ceil(u64::from(SCAN_BLOCK));
            levels.push(entries);
        }
    }
    levels
}

/// Every dispatch after the first of a sort of up to `max_keys` keys over `key_bits` bits
/// of the composite key, in order (`base` carries the count and key fields).
pub(crate) fn radix_plan(base: GpuRadixParams, key_bits: u32) -> Vec<RadixDispatch> {
    let levels = scan_levels(base.max_keys);
    let mut offsets = vec![0u64];
    for &entries in &levels {
        offsets.push(offsets.last().copied().unwrap_or(0) + entries);
    }
    let passes = if levels.is_empty() {
        0
    } else {
        key_bits.div_ceil(RADIX_BITS)
    };
    let top = levels.len().saturating_sub(1);
    let mut plan = Vec::new();
    for pass in 0..passes {
        let at = |kernel, level: usize, args_slot| RadixDispatch {
            kernel,
            params: GpuRadixParams {
                shift: pass * RADIX_BITS,
                level: level as u32,
                level_offset: offsets[level] as u32,
                parent_offset: offsets[level + 1] as u32,
                top: u32::from(level == top),
                ..base
            },
            args_slot,
            pass,
        };
        plan.push(at(HISTOGRAM, 0, 0));
        plan.extend((0..top).map(|level| at(SCAN_REDUCE, level, 1 + level as u32)));
        plan.extend(
            (0..=top)
                .rev()
                .map(|level| at(SCAN_DOWN, level, 1 + level as u32)),
        );
        plan.push(at(SCATTER, 0, 0));
    }
    plan
}

/// The kernels, compiled once per device.
struct RadixKernels {
    layout: wgpu::BindGroupLayout,
    prepare_layout: wgpu::BindGroupLayout,
    prepare: wgpu::ComputePipeline,
    /// One per [`ENTRY_POINTS`] entry.
    pipelines: [wgpu::ComputePipeline; 4],
}

impl RadixKernels {
    fn compile(context: &GpuContext) -> RadixKernels {
        let device = context.device();
        let params = |dynamic| uniform(dynamic, Some(GpuRadixParams::min_size()));
        let layout = bind_group_layout(
            device,
            "radix sort",
            &[
                storage(true),
                storage(false),
                storage(false),
                storage(true),
                params(true),
            ],
        );
        let prepare_layout = bind_group_layout(
            device,
            "radix sort prepare",
            &[params(false), storage(true), storage(false), storage(false)],
        );
        let [prepare] = compute_pipeline_variants(
            device,
            "radix_sort.wgsl",
            RADIX_SORT_WGSL,
            &[None, Some(&prepare_layout)],
            [("radix sort prepare", "prepare_main", Default::default())],
        );
        let pipelines = compute_pipeline_variants(
            device,
            "radix_sort.wgsl",
            RADIX_SORT_WGSL,
            &[Some(&layout)],
            ENTRY_POINTS.map(|entry| (entry, entry, Default::default())),
        );
        RadixKernels {
            layout,
            prepare_layout,
            prepare,
            pipelines,
        }
    }
}

/// The sort's kernels and working buffers (see the module docs), reused across sorts.
pub(crate) struct GpuRadixSort {
    kernels: Arc<RadixKernels>,
    /// The keys' ping-pong partner.
    spare: GrowBuffer,
    /// The digit table and the scan's block sums, u32.
    scan: GrowBuffer,
    /// The [`GpuRadixState`].
    state: wgpu::Buffer,
    /// Indirect arguments: the tiles, then each scan level's blocks.
    args: wgpu::Buffer,
    /// A zero count bound when the host gives the count.
    no_count: wgpu::Buffer,
    /// The first kernel's [`GpuRadixParams`], then one per dispatch, [`PARAMS_STRIDE`] apart.
    params: GrowBuffer,
    /// The prepare kernel's group and the passes' two, for the last two sets of buffers (a
    /// caller may alternate between two key or count buffers).
    groups: BindGroupCache<[wgpu::BindGroup; 3], 2>,
}

impl GpuRadixSort {
    /// Compiles the kernels on `context`'s device (once per device) and makes the small buffers.
    pub fn new(context: &GpuContext) -> Result<Self, GpuError> {
        let kernels = context.kernels(RadixKernels::compile)?;
        let device = context.device();
        let scopes = ErrorScopes::push(device);
        let storage_usage = wgpu::BufferUsages::STORAGE;
        let args_bytes = (1 + u64::from(MAX_SCAN_LEVELS)) * DISPATCH_BYTES;
        let sort = GpuRadixSort {
            kernels,
            spare: GrowBuffer::new(
                device,
                "radix sort keys",
                storage_usage | wgpu::BufferUsages::COPY_SRC,
            ),
            scan: GrowBuffer::new(device, "radix sort scan", storage_usage),
            state: create_buffer(device, "radix sort state", MIN_BUFFER_BYTES, storage_usage),
            args: create_buffer(
                device,
                "radix sort dispatch",
                args_bytes.max(MIN_BUFFER_BYTES),
                storage_usage | wgpu::BufferUsages::INDIRECT,
            ),
            no_count: create_buffer(device, "radix sort no count", MIN_BUFFER_BYTES, storage_usage),
            params: GrowBuffer::new(device, "radix sort params", UNIFORM_WRITE),
            groups: BindGroupCache::default(),
        };
        scopes.pop()?;
        Ok(sort)
    }

    /// Records into `encoder` (a compute pass of its own) the sort of `keys` and returns the
    /// buffer that holds them sorted once it is submitted: `keys.keys` after an even number of
    /// passes, else the sorter's own (valid until the next `encode`). The parameters go
    /// through the queue: submit the encoder before the next `encode`.
    pub fn encode(
        &mut self,
        context: &GpuContext,
        encoder: &mut wgpu::CommandEncoder,
        keys: &RadixKeys<'_>,
    ) -> Result<wgpu::Buffer, GpuError> {
        let limits = context.limits;
        let base = GpuRadixParams {
            max_keys: keys.max_keys,
            counted: u32::from(keys.count.is_some()),
            low_bits: keys.low_bits,
            max_groups: limits.max_workgroups.min(u64::from(u32::MAX)) as u32,
            ..GpuRadixParams::default()
        };
        let plan = radix_plan(base, keys.key_bits);
        let Some(last) = plan.last() else {
            return Ok(keys.keys.clone());
        };
        let key_bytes = u64::from(keys.max_keys) * 8;
        let scan_bytes = scan_levels(keys.max_keys).iter().sum::<u64>() * 4;
        let params_bytes = (1 + plan.len() as u64) * PARAMS_STRIDE;
        let binding_limit = "max_storage_buffer_binding_size";
        check_limit("radix sort keys", key_bytes, limits.max_binding, binding_limit)?;
        check_limit("radix sort scan", scan_bytes, limits.max_binding, binding_limit)?;
        let device = context.device();
        let scopes = ErrorScopes::push(device);
        let max = limits.max_buffer;
        self.spare.reserve(device, key_bytes, max);
        self.scan.reserve(device, scan_bytes, max);
        self.params.reserve(device, params_bytes, max);
        let recorded = self.record(context, encoder, keys, base, &plan);
        let popped = scopes.pop();
        recorded?;
        popped?;
        let sorted = if last.pass % 2 == 0 {
            &self.spare.buffer
        } else {
            keys.keys
        };
        Ok(sorted.clone())
    }

    /// Writes the parameters and records the first kernel and every dispatch of `plan`.
    fn record(
        &mut self,
        context: &GpuContext,
        encoder: &mut wgpu::CommandEncoder,
        keys: &RadixKeys<'_>,
        base: GpuRadixParams,
        plan: &[RadixDispatch],
    ) -> Result<(), GpuError> {
        let stride = PARAMS_STRIDE as usize;
        let mut bytes = vec![0u8; (1 + plan.len()) * stride];
        let mut slots = bytes.chunks_exact_mut(stride);
        write_uniform(&base, slots.next().expect("a slot per dispatch"))?;
        for (dispatch, slot) in plan.iter().zip(slots) {
            write_uniform(&dispatch.params, slot)?;
        }
        context.queue().write_buffer(&self.params.buffer, 0, &bytes);
        let device = context.device();
        let counter = keys.count.unwrap_or(&self.no_count);
        let (spare, scan, params) = (&self.spare.buffer, &self.scan.buffer, &self.params.buffer);
        let (kernels, state, args) = (&self.kernels, &self.state, &self.args);
        // Every key buffer bound up to the binding limit (the kernels read `max_keys` keys, which
        // the caller checked fit), so the groups depend on the buffers alone.
        let max_binding = context.limits.max_binding;
        let buffers = [keys.keys, counter, spare, scan, params];
        let [prepare, even, odd] = self.groups.get(&buffers, || {
            let params_size = GpuRadixParams::min_size().get();
            let prepare = bind_group(
                device,
                "radix sort prepare",
                &kernels.prepare_layout,
                &[
                    binding(0, params, 0, params_size),
                    binding_up_to(1, counter, max_binding),
                    binding_up_to(2, state, max_binding),
                    binding_up_to(3, args, max_binding),
                ],
            );
            // Pass p reads groups[p % 2]'s input and writes its output.
            let [even, odd] = [(keys.keys, spare), (spare, keys.keys)].map(|(from, to)| {
                bind_group(
                    device,
                    "radix sort",
                    &kernels.layout,
                    &[
                        binding_up_to(0, from, max_binding),
                        binding_up_to(1, to, max_binding),
                        binding_up_to(2, scan, max_binding),
                        binding_up_to(3, state, max_binding),
                        binding(4, params, 0, params_size),
                    ],
                )
            });
            [prepare, even, odd]
        });
        let groups = [even, odd];
        let mut pass = context.begin_pass(encoder, keys.stage);
        pass.set_pipeline(&self.kernels.prepare);
        pass.set_bind_group(1, &prepare, &[]);
        pass.dispatch_workgroups(1, 1, 1);
        for (i, dispatch) in (1..).zip(plan) {
            pass.set_pipeline(&self.kernels.pipelines[dispatch.kernel]);
            let offset = (i * PARAMS_STRIDE) as u32;
            pass.set_bind_group(0, &groups[(dispatch.pass % 2) as usize], &[offset]);
            let args = u64::from(dispatch.args_slot) * DISPATCH_BYTES;
            pass.dispatch_workgroups_indirect(&self.args, args);
        }
        Ok(())
    }
}

/// Not API (reached through [`crate::internals`] by the tests): a `GpuRadixSort` fed from
/// host keys, its result read back.
pub struct GpuRadixProbe {
    context: Arc<GpuContext>,
    sorter: GpuRadixSort,
    keys: GrowBuffer,
    count: wgpu::Buffer,
    readback: GrowBuffer,
}

impl GpuRadixProbe {
    /// A sorter on `context`.
    pub fn new(context: Arc<GpuContext>) -> Result<Self, GpuError> {
        let sorter = GpuRadixSort::new(&context)?;
        let device = context.device();
        let usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
        Ok(GpuRadixProbe {
            sorter,
            keys: GrowBuffer::new(device, "radix probe keys", usage),
            count: create_buffer(device, "radix probe count", MIN_BUFFER_BYTES, usage),
            readback: GrowBuffer::new(
                device,
                "radix probe readback",
                wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            ),
            context,
        })
    }

    /// Uploads `keys` (`[hi, lo]`, every `lo` below `2^low_bits`), sorts them on the GPU by
    /// the first `key_bits` bits of `hi * 2^low_bits + lo`, and reads back the sorted keys:
    /// all of them, or with `count` the first `min(count, keys.len())`, that count given to
    /// the sort in a GPU buffer.
    pub fn sort(
        &mut self,
        keys: &[[u32; 2]],
        count: Option<u32>,
        low_bits: u32,
        key_bits: u32,
    ) -> Result<Vec<[u32; 2]>, GpuError> {
        let context = &*self.context;
        let device = context.device();
        let max = context.limits.max_buffer;
        let max_keys = u32::try_from(keys.len())
            .map_err(|_| GpuError::Unsupported(format!("{} keys: more than u32::MAX", keys.len())))?;
        let scopes = ErrorScopes::push(device);
        self.keys
            .write(device, context.queue(), bytemuck::cast_slice(keys), max);
        context
            .queue()
            .write_buffer(&self.count, 0, bytemuck::bytes_of(&count.unwrap_or(0)));
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("radix probe"),
        });
        let input = RadixKeys {
            keys: &self.keys.buffer,
            max_keys,
            count: count.map(|_| &self.count),
            low_bits,
            key_bits,
            stage: "radix sort",
        };
        let sorted = self.sorter.encode(context, &mut encoder, &input);
        let bytes = u64::from(count.unwrap_or(max_keys).min(max_keys)) * 8;
        if let Ok(sorted) = &sorted {
            self.readback.reserve(device, bytes.max(8), max);
            encoder.copy_buffer_to_buffer(sorted, 0, &self.readback.buffer, 0, bytes);
        }
        let popped = scopes.pop();
        sorted?;
        popped?;
        let submission = context.queue().submit([encoder.finish()]);
        if bytes == 0 {
            return Ok(Vec::new());
        }
        context.read_mapped(
            submission,
            &self.readback.buffer,
            bytes,
            bytemuck::pod_collect_to_vec,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scan_levels_end_in_one_block() {
        assert!(scan_levels(0).is_empty());
        assert_eq!(scan_levels(1), vec![256]);
        assert_eq!(scan_levels(4 * RADIX_TILE), vec![1024]);
        assert_eq!(scan_levels(4 * RADIX_TILE + 1), vec![1280, 2]);
        assert_eq!(scan_levels(1 << 20), vec![1 << 18, 256]);
        assert_eq!(scan_levels(u32::MAX), vec![1 << 30, 1 << 20, 1 << 10]);
        assert!(scan_levels(u32::MAX).len() <= MAX_SCAN_LEVELS as usize);
    }

    #[test]
    fn each_pass_counts_scans_up_and_down_then_scatters() {
        let base = GpuRadixParams {
            max_keys: 1 << 20,
            ..GpuRadixParams::default()
        };
        let plan = radix_plan(base, 32);
        // 4 passes of 5 dispatches (histogram, reduce, top scan, scan down, scatter).
        assert_eq!(plan.len(), 20);
        let kernels: Vec<usize> = plan[..5].iter().map(|d| d.kernel).collect();
        assert_eq!(kernels, [HISTOGRAM, SCAN_REDUCE, SCAN_DOWN, SCAN_DOWN, SCATTER]);
        let (reduce, top, down) = (plan[1].params, plan[2].params, plan[3].params);
        assert_eq!(
            (reduce.level, reduce.level_offset, reduce.parent_offset),
            (0, 0, 1 << 18)
        );
        assert_eq!((top.level, top.level_offset, top.top), (1, 1 << 18, 1));
        assert_eq!((down.level, down.parent_offset, down.top), (0, 1 << 18, 0));
        assert_eq!(
            (plan[1].args_slot, plan[2].args_slot, plan[4].args_slot),
            (1, 2, 0)
        );
        let shifts: Vec<(u32, u32)> = plan.iter().map(|d| (d.pass, d.params.shift)).collect();
        assert!(shifts.iter().all(|&(pass, shift)| shift == pass * RADIX_BITS));
        // A pair key of 2 x 17 bits: 5 passes, 3 dispatches each below 4 tiles of keys.
        let small = GpuRadixParams {
            max_keys: 3000,
            ..base
        };
        assert_eq!(radix_plan(small, 34).len(), 15);
        assert!(radix_plan(small, 0).is_empty());
    }
}

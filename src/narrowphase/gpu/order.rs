//! Cost-class ordering of a resident call's pairs before the SAT
//! (`shaders/narrowphase/order.wgsl`): per dispatch chunk, a counting sort of the pairs by
//! [`cost_class`] (most expensive first) into a permutation left in the SAT results' `pair`
//! fields, which the SAT and clip kernels follow (`GpuParams::ordered`), so a warp holds pairs
//! of like cost instead of waiting on its one expensive pair. Every output stays per pair.
//!
//! 1. The host zeroes each chunk's [`GpuOrderCounters`].
//! 2. `count_classes` (one pair per invocation, the caller pairs' indirect arguments): each
//!    pair's key into the class buffer, the workgroup's histogram into the chunk's counts.
//! 3. `scatter`: each pair's slot, from its key's first slot (a prefix over the 16 counts) and
//!    its workgroup's run of the key (one atomic per key per workgroup).
//!
//! A counting sort over 16 keys, not [`crate::gpu::radix_sort`]: one key digit, so the radix
//! sort's per-tile scans would be as many passes for nothing. Why and what it costs:
//! docs/design/gpu-narrowphase.md ("Pairs ordered by cost").

use std::sync::Arc;

use bytemuck::{Pod, Zeroable};

use super::geometry::HullGeometry;
use super::kernel_layout::{GpuShape, PARAMS_STRIDE};
use super::kernels::{DISPATCH_BYTES, NarrowphaseKernels};
use super::layout::{SHAPE_BOX, SHAPE_COMPOUND, SHAPE_TRIMESH};
use crate::gpu::buffers::{GrowBuffer, binding};
use crate::gpu::pipeline::{bind_group_layout_at, compute_pipeline_variants, storage};
use crate::gpu::{GpuContext, GpuError};

/// The WGSL source of the ordering kernels: the shared declarations, then the kernels.
pub const ORDER_WGSL: &str = concat!(
    include_str!("../../../shaders/common/quat.wgsl"),
    include_str!("../../../shaders/common/body.wgsl"),
    include_str!("../../../shaders/common/layout.wgsl"),
    include_str!("../../../shaders/common/geometry.wgsl"),
    include_str!("../../../shaders/narrowphase/order.wgsl")
);

/// Keys of [`cost_class`], 0 (most expensive) to 15; must match order.wgsl.
pub const COST_CLASSES: u32 = 16;
/// Pairs the SAT runs of `2^18` edge pairs and more take key 0, each halving one key more (to
/// [`KEY_SMALL_HULLS`]); must match order.wgsl.
pub const HULL_KEY_TOP_LOG2: u32 = 18;
/// The last key of pairs the SAT runs: fewer than `2^7` edge pairs.
pub const KEY_SMALL_HULLS: u32 = 12;
/// Two boxes (the closed-form box SAT).
pub const KEY_BOX_BOX: u32 = 13;
/// A hull or box with a sphere, capsule or half-space (no SAT; the clip kernel's closed forms
/// and GJK over the hull's vertices).
pub const KEY_HULL_PRIMITIVE: u32 = 14;
/// Pairs with no hull geometry, with a compound or mesh (the SAT and clip kernels skip them),
/// or out of range.
pub const KEY_CHEAP: u32 = 15;
/// Edge counts are clamped to this before their product, so it fits a `u32` in WGSL.
pub const EDGE_COUNT_CLAMP: u32 = 0xffff;

const _: () = assert!(KEY_CHEAP == COST_CLASSES - 1);
const _: () = assert!(KEY_SMALL_HULLS == HULL_KEY_TOP_LOG2 - 6);

/// The cost key of a pair of shapes `a` and `b` (order.wgsl `cost_class`, the reference of the
/// kernel's): pairs the SAT runs (hulls or boxes, not two boxes) by `log2` of their edge pairs,
/// [`HULL_KEY_TOP_LOG2`] minus it, clamped to `0..=`[`KEY_SMALL_HULLS`]; then
/// [`KEY_BOX_BOX`], [`KEY_HULL_PRIMITIVE`], [`KEY_CHEAP`]. Symmetric in `a` and `b`.
pub fn cost_class(a: &GpuShape, b: &GpuShape) -> u32 {
    if a.is_hull() && b.is_hull() {
        if a.kind == SHAPE_BOX && b.kind == SHAPE_BOX {
            return KEY_BOX_BOX;
        }
        let edge_pairs = a.edge_count.min(EDGE_COUNT_CLAMP) * b.edge_count.min(EDGE_COUNT_CLAMP);
        let log2 = edge_pairs.max(1).ilog2();
        return (HULL_KEY_TOP_LOG2 - log2.min(HULL_KEY_TOP_LOG2)).min(KEY_SMALL_HULLS);
    }
    let other = if a.is_hull() { b.kind } else { a.kind };
    let skipped = other == SHAPE_COMPOUND || other == SHAPE_TRIMESH;
    if (a.is_hull() || b.is_hull()) && !skipped {
        KEY_HULL_PRIMITIVE
    } else {
        KEY_CHEAP
    }
}

/// One dispatch chunk's counters (zeroed by the host before each call); must match order.wgsl
/// `GpuOrderCounters`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct GpuOrderCounters {
    /// Pairs of the chunk per key (`count_classes`).
    pub counts: [u32; COST_CLASSES as usize],
    /// Slots of each key handed out so far (`scatter`).
    pub cursors: [u32; COST_CLASSES as usize],
}

/// Bytes between two chunks' counters: a multiple of every device's storage offset alignment.
const COUNTERS_STRIDE: u64 = 256;
const _: () = assert!(size_of::<GpuOrderCounters>() as u64 <= COUNTERS_STRIDE);

/// Bytes of one pair's key in the class buffer.
const CLASS_BYTES: u64 = 4;

/// The two ordering pipelines and their layouts on one device: group 0 the shape table alone,
/// group 1 the SAT kernel's call layout (its bind groups serve), group 2 the sort's own.
pub(crate) struct OrderKernels {
    count: wgpu::ComputePipeline,
    scatter: wgpu::ComputePipeline,
    shapes_layout: wgpu::BindGroupLayout,
    sort_layout: wgpu::BindGroupLayout,
}

impl OrderKernels {
    /// The kernels of `context`'s device, compiled by the first call on that device.
    fn of(context: &GpuContext, kernels: &NarrowphaseKernels) -> Result<Arc<Self>, GpuError> {
        context.kernels(|context| {
            let device = context.device();
            let shapes_layout = bind_group_layout_at(device, "order shapes", &[(3, storage(true))]);
            let sort_layout =
                bind_group_layout_at(device, "order sort", &[(0, storage(false)), (1, storage(false))]);
            let groups = [
                Some(&shapes_layout),
                Some(&kernels.sat.call_layout),
                Some(&sort_layout),
            ];
            let [count, scatter] = compute_pipeline_variants(
                device,
                "order.wgsl",
                ORDER_WGSL,
                &groups,
                [
                    ("order count", "count_classes", Default::default()),
                    ("order scatter", "scatter", Default::default()),
                ],
            );
            OrderKernels {
                count,
                scatter,
                shapes_layout,
                sort_layout,
            }
        })
    }
}

/// One narrowphase's ordering: its kernels, class buffer and counters, and the bind groups
/// built on them.
pub(crate) struct OrderStage {
    kernels: Arc<OrderKernels>,
    classes: GrowBuffer,
    counters: GrowBuffer,
    /// The shape table's group, then one sort group per chunk, and the key they were built for.
    groups: Option<(OrderGroupsKey, wgpu::BindGroup, Vec<wgpu::BindGroup>)>,
}

/// What the cached groups were built on: pairs, chunks, pairs per chunk, buffer generations.
#[derive(PartialEq)]
struct OrderGroupsKey {
    max_pairs: u64,
    chunks: u64,
    chunk: u64,
    generations: [u64; 2],
}

impl OrderStage {
    /// The stage on `context`'s device (its kernels compiled by the first on the device).
    pub fn new(context: &GpuContext, kernels: &NarrowphaseKernels) -> Result<Self, GpuError> {
        let device = context.device();
        let usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST;
        Ok(OrderStage {
            kernels: OrderKernels::of(context, kernels)?,
            classes: GrowBuffer::new(device, "order classes", usage),
            counters: GrowBuffer::new(device, "order counters", usage),
            groups: None,
        })
    }

    /// Records steps 1 to 3 for a call of `max_pairs` pairs in `chunks` chunks of `chunk`:
    /// `sat_groups` are the SAT's group 1 per chunk (its pair and result windows, parameters
    /// at `k * PARAMS_STRIDE`), `dispatch` the caller pairs' indirect arguments (chunk `k` at
    /// `k * DISPATCH_BYTES`).
    #[allow(clippy::too_many_arguments)]
    pub fn record(
        &mut self,
        context: &GpuContext,
        geometry: &HullGeometry,
        encoder: &mut wgpu::CommandEncoder,
        sat_groups: &[wgpu::BindGroup],
        dispatch: &wgpu::Buffer,
        max_pairs: u64,
        (chunks, chunk): (u64, u64),
    ) {
        let device = context.device();
        let max_buffer = context.limits.max_buffer;
        self.classes.reserve(device, max_pairs * CLASS_BYTES, max_buffer);
        self.counters
            .reserve(device, chunks * COUNTERS_STRIDE, max_buffer);
        self.ensure_groups(device, geometry, max_pairs, (chunks, chunk));
        let (_, shapes, sort) = self.groups.as_ref().expect("built above");
        // 1.
        encoder.clear_buffer(&self.counters.buffer, 0, Some(chunks * COUNTERS_STRIDE));
        // 2, 3: every chunk's counts before any chunk's scatter (wgpu orders the dispatches).
        let mut pass = context.begin_pass(encoder, "resident order");
        pass.set_bind_group(0, shapes, &[]);
        for pipeline in [&self.kernels.count, &self.kernels.scatter] {
            pass.set_pipeline(pipeline);
            for (k, (sat, sort)) in sat_groups.iter().zip(sort).enumerate() {
                let k = k as u64;
                pass.set_bind_group(1, sat, &[(k * PARAMS_STRIDE) as u32]);
                pass.set_bind_group(2, sort, &[]);
                pass.dispatch_workgroups_indirect(dispatch, k * DISPATCH_BYTES);
            }
        }
    }

    /// Builds the bind groups unless those cached were built on the same buffers and chunks.
    fn ensure_groups(
        &mut self,
        device: &wgpu::Device,
        geometry: &HullGeometry,
        max_pairs: u64,
        (chunks, chunk): (u64, u64),
    ) {
        let key = OrderGroupsKey {
            max_pairs,
            chunks,
            chunk,
            generations: [self.classes.generation, self.counters.generation],
        };
        if self.groups.as_ref().is_some_and(|(cached, ..)| *cached == key) {
            return;
        }
        let (shapes, shape_bytes) = &geometry.buffers[3];
        let shapes = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("order shapes"),
            layout: &self.kernels.shapes_layout,
            entries: &[binding(3, shapes, 0, *shape_bytes)],
        });
        let sort = (0..chunks)
            .map(|k| {
                let first = k * chunk;
                let pairs = chunk.min(max_pairs - first);
                device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some("order sort"),
                    layout: &self.kernels.sort_layout,
                    entries: &[
                        binding(0, &self.classes.buffer, first * CLASS_BYTES, pairs * CLASS_BYTES),
                        binding(
                            1,
                            &self.counters.buffer,
                            k * COUNTERS_STRIDE,
                            size_of::<GpuOrderCounters>() as u64,
                        ),
                    ],
                })
            })
            .collect();
        self.groups = Some((key, shapes, sort));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::narrowphase::gpu::layout::{SHAPE_CAPSULE, SHAPE_HALF_SPACE, SHAPE_HULL, SHAPE_SPHERE};

    fn shape(kind: u32, edges: u32) -> GpuShape {
        GpuShape {
            kind,
            edge_count: edges,
            ..Default::default()
        }
    }

    #[test]
    fn keys_run_from_the_largest_hull_pairs_to_pairs_without_hull_geometry() {
        let hull = |edges| shape(SHAPE_HULL, edges);
        let boxed = shape(SHAPE_BOX, 12);
        // 2^18 edge pairs and up: key 0; each halving one more; below 2^7: key 12.
        assert_eq!(cost_class(&hull(512), &hull(512)), 0);
        assert_eq!(cost_class(&hull(512), &hull(511)), 1);
        assert_eq!(cost_class(&hull(90), &hull(90)), 18 - 12, "8,100 edge pairs");
        assert_eq!(cost_class(&hull(186), &boxed), 18 - 11, "2,232 edge pairs");
        assert_eq!(cost_class(&boxed, &hull(186)), cost_class(&hull(186), &boxed));
        assert_eq!(cost_class(&hull(6), &hull(6)), KEY_SMALL_HULLS, "36 edge pairs");
        assert_eq!(cost_class(&hull(0), &hull(0)), KEY_SMALL_HULLS);
        // Beyond the clamp the product still fits.
        assert_eq!(cost_class(&hull(u32::MAX), &hull(u32::MAX)), 0);
        assert_eq!(cost_class(&boxed, &boxed), KEY_BOX_BOX);
        for primitive in [SHAPE_SPHERE, SHAPE_CAPSULE, SHAPE_HALF_SPACE] {
            assert_eq!(cost_class(&hull(90), &shape(primitive, 0)), KEY_HULL_PRIMITIVE);
            assert_eq!(cost_class(&shape(primitive, 0), &boxed), KEY_HULL_PRIMITIVE);
            assert_eq!(
                cost_class(&shape(primitive, 0), &shape(SHAPE_SPHERE, 0)),
                KEY_CHEAP
            );
        }
        for skipped in [SHAPE_COMPOUND, SHAPE_TRIMESH] {
            assert_eq!(cost_class(&hull(90), &shape(skipped, 0)), KEY_CHEAP);
            assert_eq!(cost_class(&shape(skipped, 0), &boxed), KEY_CHEAP);
        }
    }
}

//! Cost-class ordering of a call's pairs (resident, or a host round's under the clip kernel)
//! before the SAT (`shaders/narrowphase/order.wgsl`): per dispatch chunk, a counting sort of
//! the pairs by [`order_key`] ([`cost_class`], then for pairs with hull geometry and a size
//! [`gap_bucket`]; most expensive first) into a permutation left in the SAT results' `pair` fields, which the SAT
//! and clip kernels follow (`GpuParams::ordered`), so a warp holds pairs of like cost instead
//! of waiting on its one expensive pair. Every output stays per pair.
//!
//! 1. `setup` (one invocation per chunk): zeroes the chunk's [`GpuOrderCounters`] and writes
//!    the count's indirect arguments, none where the prepare kernel (or the host) left
//!    `ordered` at 0 (one workgroup per pair: each pair has its own workgroup, so ordering
//!    cannot help).
//! 2. `count_classes` ([`PAIRS_PER_INVOCATION`] pairs per invocation): each pair's key into the
//!    class buffer, counted per workgroup, then into the chunk's counts.
//! 3. `decide` (one invocation per chunk): with two keys present or more, each key's first slot
//!    and the scatter's arguments; else no scatter and the chunk's `ordered` cleared.
//! 4. `scatter`: each pair's slot, from its key's cursor and its rank in the workgroup's run of
//!    the key.
//!
//! A counting sort over [`ORDER_KEYS`] keys, not [`crate::gpu::radix_sort`]: one key digit, so the radix
//! sort's per-tile scans would be as many passes for nothing. Why and what it costs:
//! docs/design/gpu-narrowphase.md ("Pairs ordered by cost").

use std::cmp::Ordering;
use std::mem::offset_of;
use std::sync::Arc;

use bytemuck::{Pod, Zeroable};
use encase::ShaderType;

use super::geometry::HullGeometry;
use super::kernel_layout::{GpuParams, GpuShape, PARAMS_STRIDE};
use super::kernels::NarrowphaseKernels;
use super::layout::{SHAPE_BOX, SHAPE_COMPOUND, SHAPE_HALF_SPACE, SHAPE_TRIMESH};
use crate::gpu::buffers::{GrowBuffer, binding};
use crate::gpu::layout::GpuBody;
use crate::gpu::pipeline::{bind_group, bind_group_layout_at, compute_pipeline_variants, storage};
use crate::gpu::{GpuContext, GpuError};
use glam::{Quat, Vec3, Vec4};

/// The WGSL source of the ordering kernels: the shared declarations, then the kernels.
pub const ORDER_WGSL: &str = concat!(
    include_str!("../../../shaders/common/quat.wgsl"),
    include_str!("../../../shaders/common/body.wgsl"),
    include_str!("../../../shaders/common/layout.wgsl"),
    include_str!("../../../shaders/common/geometry.wgsl"),
    include_str!("../../../shaders/narrowphase/order.wgsl")
);

/// Classes of [`cost_class`], 0 (most expensive) to 15; must match order.wgsl.
pub const COST_CLASSES: u32 = 16;
/// Sub-keys of a class with gap buckets ([`has_gap_buckets`], [`gap_bucket`]); must match
/// order.wgsl.
pub const GAP_BUCKETS: u32 = 8;
/// Keys of [`order_key`]: `class * GAP_BUCKETS + bucket`; must match order.wgsl.
pub const ORDER_KEYS: u32 = COST_CLASSES * GAP_BUCKETS;
/// [`gap_bucket`] tests pairs of hulls of at most this many vertices each along their centre
/// line: a loop over both hulls' vertices, 8 pairs an invocation, kept far below the loop cap of
/// a software driver (`layout::INCOMPLETE_BIT`); must match order.wgsl.
pub const CENTRE_LINE_VERTICES: u32 = 64;
// An invocation of `count_classes` loops over at most this many vertices, far below the ~65,535
// loop iterations after which lavapipe stops an invocation group's loops (a key left stale
// there would break the permutation, unflagged).
const _: () = assert!(PAIRS_PER_INVOCATION * 2 * CENTRE_LINE_VERTICES <= 4096);
/// Pairs the SAT runs of `2^16` edge pairs and more (the SAT's cooperative pairs,
/// `COOP_EDGE_PAIRS`) take class 0, each halving one class more (to [`KEY_SMALL_HULLS`]); must
/// match order.wgsl.
pub const HULL_KEY_TOP_LOG2: u32 = 16;
/// The last class of pairs the SAT runs: fewer than `2^7` edge pairs.
pub const KEY_SMALL_HULLS: u32 = 10;
/// Two boxes (the closed-form box SAT, a 4 × 4 face clip).
pub const KEY_BOX_BOX: u32 = 11;
/// The first class of a hull or box with a sphere, capsule or half-space (no SAT; the clip
/// kernel's face loops and GJK over the hull): hulls of `2^`[`PRIMITIVE_KEY_TOP_LOG2`] edges
/// and more, each halving one class more, to `KEY_CHEAP - 1` (boxes and hulls under 32 edges).
pub const KEY_HULL_PRIMITIVE: u32 = 12;
/// Pairs with no hull geometry (closed forms), with a compound or mesh (the SAT and clip
/// kernels skip them), or out of range.
pub const KEY_CHEAP: u32 = 15;
/// A hull of `2^6` edges and more (about 22 vertices) with a sphere or capsule takes
/// [`KEY_HULL_PRIMITIVE`]; must match order.wgsl.
pub const PRIMITIVE_KEY_TOP_LOG2: u32 = 6;
/// A half-space's pair counts its hull's edges shifted right by this: its clip is one pass
/// over the vertices, against about three times as much work for a sphere or capsule (face
/// loops and GJK); must match order.wgsl.
pub const HALF_SPACE_EDGE_SHIFT: u32 = 2;
/// Edge counts are clamped to this before their product, so it fits a `u32` in WGSL.
pub const EDGE_COUNT_CLAMP: u32 = 0xffff;
/// Pairs each invocation of the count and scatter kernels takes: 512 per workgroup, so a chunk
/// of one key meets its counts' and cursors' atomics once per 512 pairs (8 lanes' worth of work
/// per lane, still about two thirds of an H200's lanes for 1.4M pairs); must match order.wgsl.
pub const PAIRS_PER_INVOCATION: u32 = 8;

const _: () = assert!(KEY_CHEAP == COST_CLASSES - 1);
const _: () = assert!(KEY_SMALL_HULLS == HULL_KEY_TOP_LOG2 - 6);
const _: () = assert!(KEY_BOX_BOX == KEY_SMALL_HULLS + 1 && KEY_HULL_PRIMITIVE == KEY_BOX_BOX + 1);

/// The cost key of a pair of shapes `a` and `b` (order.wgsl `cost_class`, the reference of the
/// kernel's): pairs the SAT runs (hulls or boxes, not two boxes) by `log2` of their edge pairs,
/// [`HULL_KEY_TOP_LOG2`] minus it, clamped to `0..=`[`KEY_SMALL_HULLS`]; then
/// [`KEY_BOX_BOX`]; a hull or box with a sphere, capsule or half-space by `log2` of the hull's
/// edges (a half-space's shifted by [`HALF_SPACE_EDGE_SHIFT`]), [`KEY_HULL_PRIMITIVE`] plus
/// [`PRIMITIVE_KEY_TOP_LOG2`] minus it, up to `KEY_CHEAP - 1`; then [`KEY_CHEAP`]. Symmetric in
/// `a` and `b`.
pub fn cost_class(a: &GpuShape, b: &GpuShape) -> u32 {
    if a.is_hull() && b.is_hull() {
        if a.kind == SHAPE_BOX && b.kind == SHAPE_BOX {
            return KEY_BOX_BOX;
        }
        let edge_pairs = a.edge_count.min(EDGE_COUNT_CLAMP) * b.edge_count.min(EDGE_COUNT_CLAMP);
        let log2 = edge_pairs.max(1).ilog2();
        return (HULL_KEY_TOP_LOG2 - log2.min(HULL_KEY_TOP_LOG2)).min(KEY_SMALL_HULLS);
    }
    let (hull, other) = if a.is_hull() { (a, b.kind) } else { (b, a.kind) };
    if !hull.is_hull() || other == SHAPE_COMPOUND || other == SHAPE_TRIMESH {
        return KEY_CHEAP;
    }
    let edges = if other == SHAPE_HALF_SPACE {
        hull.edge_count >> HALF_SPACE_EDGE_SHIFT
    } else {
        hull.edge_count
    };
    let below_top = PRIMITIVE_KEY_TOP_LOG2 - edges.max(1).ilog2().min(PRIMITIVE_KEY_TOP_LOG2);
    KEY_HULL_PRIMITIVE + below_top.min(KEY_CHEAP - 1 - KEY_HULL_PRIMITIVE)
}

/// The highest of `shape`'s vertices (in `vertices`, the hull tables') along `direction`, in
/// the shape's frame (order.wgsl `highest_along`).
fn highest_along(shape: &GpuShape, vertices: &[[f32; 4]], direction: Vec3) -> f32 {
    let range = shape.first_vertex as usize..(shape.first_vertex + shape.vertex_count) as usize;
    vertices[range]
        .iter()
        .map(|v| Vec4::from_array(*v).truncate().dot(direction))
        .fold(-f32::MAX, f32::max)
}

/// The sub-key of a pair of a class with gap buckets ([`has_gap_buckets`]; order.wgsl
/// `gap_bucket`, the reference of the kernel's):
/// the gap between the shapes' bounding spheres (centroid and radius, posed by the bodies;
/// world frame, length units) over their reach (the radii plus `margin`), in `GAP_BUCKETS - 1`
/// equal steps from 0 (centroids together: the deepest pairs, whose SAT runs longest) to 1;
/// `GAP_BUCKETS - 1` for pairs apart (a face separates them early): spheres apart, or, for two
/// hulls or boxes of at most [`CENTRE_LINE_VERTICES`] vertices each (`vertices`: the hull
/// tables'), vertices apart by more than `margin` along the line between the centroids. The same f32 steps as the
/// kernel's; a GPU that fuses them may put a pair at a step's edge in the next bucket.
pub fn gap_bucket(
    (a, b): (&GpuShape, &GpuShape),
    vertices: &[[f32; 4]],
    (body_a, body_b): (&GpuBody, &GpuBody),
    margin: f32,
) -> u32 {
    let [qa, qb] = [body_a.rotation, body_b.rotation].map(Quat::from_array);
    let centre_a = qa * Vec3::from_array(a.centroid);
    let centre_b = qb * Vec3::from_array(b.centroid);
    let apart = body_a.offset_to(body_b);
    let between = apart + centre_b - centre_a;
    let gap = between.length();
    let reach = a.radius + b.radius + margin;
    // Apart, or not a number (the kernel's `!(gap <= reach)`).
    if !matches!(gap.partial_cmp(&reach), Some(Ordering::Less | Ordering::Equal)) {
        return GAP_BUCKETS - 1;
    }
    let small = a.is_hull()
        && b.is_hull()
        && a.vertex_count <= CENTRE_LINE_VERTICES
        && b.vertex_count <= CENTRE_LINE_VERTICES;
    if gap > 0.0 && small {
        // B's lowest point along the centre line minus A's highest.
        let line = between / gap;
        let reach_a = highest_along(a, vertices, qa.conjugate() * line);
        let reach_b = highest_along(b, vertices, qb.conjugate() * -line);
        if apart.dot(line) - reach_b - reach_a > margin {
            return GAP_BUCKETS - 1;
        }
    }
    ((gap / reach * (GAP_BUCKETS - 1) as f32) as u32).min(GAP_BUCKETS - 2)
}

/// True for the classes whose pairs take a gap bucket (order.wgsl `has_gap_buckets`): every
/// class with hull geometry, below [`KEY_CHEAP`] (the SAT's, two boxes, a hull or box with a
/// sphere or capsule, whose clip's face loop ends a pair apart and runs GJK near the surface),
/// not a pair with a half-space (it has no size). A table of boxes alone is still never
/// ordered (`ordering_may_pay`).
pub fn has_gap_buckets(class: u32, a: &GpuShape, b: &GpuShape) -> bool {
    class < KEY_CHEAP && a.kind != SHAPE_HALF_SPACE && b.kind != SHAPE_HALF_SPACE
}

/// The key a pair of bodies sorts by (order.wgsl `order_key`): [`cost_class`] of their shapes
/// times [`GAP_BUCKETS`], plus [`gap_bucket`] for a class with gap buckets
/// ([`has_gap_buckets`]), 0 for the others.
pub fn order_key(
    (a, b): (&GpuShape, &GpuShape),
    vertices: &[[f32; 4]],
    bodies: (&GpuBody, &GpuBody),
    margin: f32,
) -> u32 {
    let class = cost_class(a, b);
    let bucket = if has_gap_buckets(class, a, b) {
        gap_bucket((a, b), vertices, bodies, margin)
    } else {
        0
    };
    class * GAP_BUCKETS + bucket
}

/// Distinct (kind, edge count) entries past which [`ordering_may_pay`] answers true
/// without pairing them all.
const COST_SIGNATURES: usize = 64;

/// True when ordering pairs of `shapes` may pay: when two of them (a shape with itself
/// included) may take different keys ([`order_key`]), but for a table of boxes alone (below).
/// Keys differ between two cost classes ([`cost_class`], which reads kinds and edge counts only),
/// and within a class the SAT runs by [`gap_bucket`] (a class of a hull with a
/// sphere or capsule never comes alone: the hull meets itself and the sphere itself). A table
/// of spheres and capsules alone gives every pair one key: ordering its pairs would cost four
/// passes and change no warp. A table of boxes alone is left unordered too, though its pairs
/// differ by their bucket: its chunks would pay the order's passes for a box clip (on an H200
/// they took a 10k-box resident call from 0.083 to 0.169 ms).
pub(crate) fn ordering_may_pay(shapes: &[GpuShape]) -> bool {
    let mut kinds: Vec<&GpuShape> = Vec::new();
    for shape in shapes {
        if !kinds
            .iter()
            .any(|k| k.kind == shape.kind && k.edge_count == shape.edge_count)
        {
            if kinds.len() == COST_SIGNATURES {
                return true;
            }
            kinds.push(shape);
        }
    }
    let mut classes = kinds
        .iter()
        .enumerate()
        .flat_map(|(i, a)| kinds[i..].iter().map(move |b| cost_class(a, b)));
    let Some(first) = classes.next() else {
        return false;
    };
    first <= KEY_SMALL_HULLS || classes.any(|class| class != first)
}

/// One dispatch chunk's counters (zeroed by `setup`); must match order.wgsl `GpuOrderCounters`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
pub struct GpuOrderCounters {
    /// Pairs of the chunk per key (`count_classes`).
    pub counts: [u32; ORDER_KEYS as usize],
    /// The next free slot of each key (from its first, `decide`; handed out by `scatter`).
    pub cursors: [u32; ORDER_KEYS as usize],
}

/// One dispatch chunk's indirect arguments of its count and scatter, written on the GPU by
/// `setup` and `decide` (a buffer of their own: a dispatch cannot read its arguments from a
/// buffer it binds read-write); must match order.wgsl `GpuOrderArgs`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct GpuOrderArgs {
    /// `count_classes`' workgroups (x, y, z, as `wgpu::util::DispatchIndirectArgs`).
    pub count: [u32; 3],
    /// `scatter`'s workgroups (x, y, z): none unless the chunk holds two keys or more.
    pub scatter: [u32; 3],
}

/// Bytes between two chunks' counters: a multiple of every device's storage offset alignment
/// (at most 256).
const CHUNK_STRIDE: u64 = 1024;
/// Bytes between two chunks' arguments, likewise.
const ARGS_STRIDE: u64 = 256;
const _: () =
    assert!(size_of::<GpuOrderCounters>() as u64 <= CHUNK_STRIDE && CHUNK_STRIDE.is_multiple_of(256));
const _: () = assert!(size_of::<GpuOrderArgs>() as u64 <= ARGS_STRIDE && ARGS_STRIDE.is_multiple_of(256));

/// Bytes of one pair's key in the class buffer.
const CLASS_BYTES: u64 = 4;

/// The four ordering pipelines and their layouts on one device: count and scatter over group 0
/// (the vertices and the shape table), group 1 (the SAT kernel's call layout, whose bind groups serve) and
/// group 2 (the sort's own); setup and decide over group 2 and group 3 (the chunk's parameters).
pub(crate) struct OrderKernels {
    setup: wgpu::ComputePipeline,
    count: wgpu::ComputePipeline,
    decide: wgpu::ComputePipeline,
    scatter: wgpu::ComputePipeline,
    shapes_layout: wgpu::BindGroupLayout,
    sort_layout: wgpu::BindGroupLayout,
    params_layout: wgpu::BindGroupLayout,
}

impl OrderKernels {
    /// The kernels of `context`'s device, compiled by the first call on that device.
    fn of(context: &GpuContext, kernels: &NarrowphaseKernels) -> Result<Arc<Self>, GpuError> {
        context.kernels(|context| {
            let device = context.device();
            let shapes_layout =
                bind_group_layout_at(device, "order shapes", &[(0, storage(true)), (3, storage(true))]);
            let sort_layout =
                bind_group_layout_at(device, "order sort", &[(0, storage(false)), (1, storage(false))]);
            let params_layout = bind_group_layout_at(
                device,
                "order params",
                &[(0, storage(false)), (1, storage(false))],
            );
            let sort_groups = [
                Some(&shapes_layout),
                Some(&kernels.sat.call_layout),
                Some(&sort_layout),
            ];
            let [count, scatter] = compute_pipeline_variants(
                device,
                "order.wgsl",
                ORDER_WGSL,
                &sort_groups,
                [
                    ("order count", "count_classes", Default::default()),
                    ("order scatter", "scatter", Default::default()),
                ],
            );
            // No group 1 here: the chunk's parameters are bound read-write in group 3.
            let chunk_groups = [None, None, Some(&sort_layout), Some(&params_layout)];
            let [setup, decide] = compute_pipeline_variants(
                device,
                "order.wgsl",
                ORDER_WGSL,
                &chunk_groups,
                [
                    ("order setup", "setup", Default::default()),
                    ("order decide", "decide", Default::default()),
                ],
            );
            OrderKernels {
                setup,
                count,
                decide,
                scatter,
                shapes_layout,
                sort_layout,
                params_layout,
            }
        })
    }
}

/// One narrowphase's ordering: its kernels, class buffer, counters and arguments, and the bind
/// groups built on them.
pub(crate) struct OrderStage {
    kernels: Arc<OrderKernels>,
    classes: GrowBuffer,
    counters: GrowBuffer,
    args: GrowBuffer,
    groups: Option<(OrderGroupsKey, OrderGroups)>,
}

/// The vertices' and shape table's group, then per chunk a sort group and a parameter group.
struct OrderGroups {
    shapes: wgpu::BindGroup,
    sort: Vec<wgpu::BindGroup>,
    params: Vec<wgpu::BindGroup>,
}

/// What the cached groups were built on: pairs, chunks, pairs per chunk, the parameter buffer,
/// buffer generations.
#[derive(PartialEq)]
struct OrderGroupsKey {
    max_pairs: u64,
    chunks: u64,
    chunk: u64,
    params: wgpu::Buffer,
    generations: [u64; 3],
}

impl OrderStage {
    /// The stage on `context`'s device (its kernels compiled by the first on the device).
    pub fn new(context: &GpuContext, kernels: &NarrowphaseKernels) -> Result<Self, GpuError> {
        let device = context.device();
        let usage = wgpu::BufferUsages::STORAGE;
        Ok(OrderStage {
            kernels: OrderKernels::of(context, kernels)?,
            classes: GrowBuffer::new(device, "order classes", usage),
            counters: GrowBuffer::new(device, "order counters", usage),
            args: GrowBuffer::new(device, "order args", usage | wgpu::BufferUsages::INDIRECT),
            groups: None,
        })
    }

    /// Records steps 1 to 4 for a call of `max_pairs` pairs in `chunks` chunks of `chunk`:
    /// `sat_groups` are the SAT's group 1 per chunk (its pair and result windows, parameters
    /// at `k * PARAMS_STRIDE`), `params` the buffer those parameters are in (the prepare
    /// kernel's or the host's, written before; a storage buffer too). `stage` labels the passes.
    pub fn record(
        &mut self,
        context: &GpuContext,
        geometry: &HullGeometry,
        (encoder, stage): (&mut wgpu::CommandEncoder, &'static str),
        (sat_groups, params): (&[wgpu::BindGroup], &wgpu::Buffer),
        max_pairs: u64,
        (chunks, chunk): (u64, u64),
    ) {
        let device = context.device();
        let max_buffer = context.limits.max_buffer;
        self.classes.reserve(device, max_pairs * CLASS_BYTES, max_buffer);
        self.counters.reserve(device, chunks * CHUNK_STRIDE, max_buffer);
        self.args.reserve(device, chunks * ARGS_STRIDE, max_buffer);
        self.ensure_groups(device, geometry, params, max_pairs, (chunks, chunk));
        let (_, groups) = self.groups.as_ref().expect("built above");
        let kernels = &self.kernels;
        // Every chunk's step before any chunk's next, one pass each: a pass switching between
        // the two pipeline layouts lost group 2's binding on lavapipe (wgpu skipped re-setting
        // the same group, which Vulkan invalidates when a lower set's layout changes).
        for (pipeline, indirect) in [
            (&kernels.setup, None),
            (&kernels.count, Some(offset_of!(GpuOrderArgs, count))),
            (&kernels.decide, None),
            (&kernels.scatter, Some(offset_of!(GpuOrderArgs, scatter))),
        ] {
            let mut pass = context.begin_pass(encoder, stage);
            pass.set_pipeline(pipeline);
            if indirect.is_some() {
                pass.set_bind_group(0, &groups.shapes, &[]);
            }
            let chunk_groups = groups.sort.iter().zip(&groups.params).zip(sat_groups);
            for (k, ((sort, params), sat)) in chunk_groups.enumerate() {
                let k = k as u64;
                pass.set_bind_group(2, sort, &[]);
                match indirect {
                    // Steps 1 and 3: one invocation per chunk.
                    None => {
                        pass.set_bind_group(3, params, &[]);
                        pass.dispatch_workgroups(1, 1, 1);
                    }
                    // Steps 2 and 4: the arguments steps 1 and 3 wrote.
                    Some(field) => {
                        pass.set_bind_group(1, sat, &[(k * PARAMS_STRIDE) as u32]);
                        let offset = k * ARGS_STRIDE + field as u64;
                        pass.dispatch_workgroups_indirect(&self.args.buffer, offset);
                    }
                }
            }
        }
    }

    /// Builds the bind groups unless those cached were built on the same buffers and chunks.
    fn ensure_groups(
        &mut self,
        device: &wgpu::Device,
        geometry: &HullGeometry,
        params: &wgpu::Buffer,
        max_pairs: u64,
        (chunks, chunk): (u64, u64),
    ) {
        let key = OrderGroupsKey {
            max_pairs,
            chunks,
            chunk,
            params: params.clone(),
            generations: [
                self.classes.generation,
                self.counters.generation,
                self.args.generation,
            ],
        };
        if self.groups.as_ref().is_some_and(|(cached, _)| *cached == key) {
            return;
        }
        let [(vertices, vertex_bytes), (shapes, shape_bytes)] = [0, 3].map(|i| &geometry.buffers[i]);
        let shapes = bind_group(
            device,
            "order shapes",
            &self.kernels.shapes_layout,
            &[
                binding(0, vertices, 0, *vertex_bytes),
                binding(3, shapes, 0, *shape_bytes),
            ],
        );
        let sort = (0..chunks)
            .map(|k| {
                let first = k * chunk;
                let pairs = chunk.min(max_pairs - first);
                bind_group(
                    device,
                    "order sort",
                    &self.kernels.sort_layout,
                    &[
                        binding(0, &self.classes.buffer, first * CLASS_BYTES, pairs * CLASS_BYTES),
                        binding(
                            1,
                            &self.counters.buffer,
                            k * CHUNK_STRIDE,
                            size_of::<GpuOrderCounters>() as u64,
                        ),
                    ],
                )
            })
            .collect();
        let params = (0..chunks)
            .map(|k| {
                bind_group(
                    device,
                    "order params",
                    &self.kernels.params_layout,
                    &[
                        binding(0, params, k * PARAMS_STRIDE, GpuParams::min_size().get()),
                        binding(
                            1,
                            &self.args.buffer,
                            k * ARGS_STRIDE,
                            size_of::<GpuOrderArgs>() as u64,
                        ),
                    ],
                )
            })
            .collect();
        self.groups = Some((key, OrderGroups { shapes, sort, params }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::narrowphase::gpu::kernel_layout::HullTables;
    use crate::narrowphase::gpu::layout::{SHAPE_CAPSULE, SHAPE_HULL, SHAPE_SPHERE};
    use crate::shape::{Cuboid, Shape, Sphere};
    use glam::Vec3;

    fn shape(kind: u32, edges: u32) -> GpuShape {
        GpuShape {
            kind,
            edge_count: edges,
            ..Default::default()
        }
    }

    #[test]
    fn ordering_may_pay_only_where_keys_can_differ() {
        let shapes = |list: &[Shape]| HullTables::new(list).shapes;
        let hull = |edges| shape(SHAPE_HULL, edges);
        let cuboid = || Shape::Cuboid(Cuboid::new(Vec3::ONE).unwrap());
        let sphere = || Shape::Sphere(Sphere::new(1.0).unwrap());
        // Left unordered: boxes alone (by choice), spheres alone (one key), no shape.
        assert!(!ordering_may_pay(&shapes(&[cuboid(), cuboid()])));
        assert!(!ordering_may_pay(&shapes(&[sphere()])));
        assert!(!ordering_may_pay(&[]));
        // Two: a box and a sphere (box-box, box-sphere), two hull sizes, and one hull size
        // alone (its pairs differ by their gap).
        assert!(ordering_may_pay(&shapes(&[cuboid(), sphere()])));
        assert!(ordering_may_pay(&[hull(12), hull(180)]));
        assert!(ordering_may_pay(&[hull(90), hull(90)]));
        assert!(ordering_may_pay(&[hull(90)]));
        // Past COST_SIGNATURES distinct entries: true without pairing them.
        let many: Vec<GpuShape> = (0..=COST_SIGNATURES as u32).map(|e| hull(e + 6)).collect();
        assert!(ordering_may_pay(&many));
    }

    #[test]
    fn gap_buckets_run_from_centroids_together_to_shapes_apart() {
        use crate::pose::Pose;
        use glam::DVec3;
        // Octahedra of radius 1 about a centroid 0.5 off their origin along x; the second
        // shape the same with 59 more vertices at its centroid (65: beyond CENTRE_LINE_VERTICES).
        let centroid = [0.5, 0.0, 0.0];
        let mut vertices: Vec<[f32; 4]> = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
            .iter()
            .flat_map(|&[x, y, z]| [[x + 0.5, y, z, 1.0], [0.5 - x, -y, -z, 1.0]])
            .collect();
        vertices.extend(std::iter::repeat_n([0.5, 0.0, 0.0, 1.0], 59));
        let ball = GpuShape {
            kind: SHAPE_HULL,
            centroid,
            radius: 1.0,
            vertex_count: 6,
            ..Default::default()
        };
        let big = GpuShape {
            vertex_count: 65,
            ..ball
        };
        let at = |position: DVec3, rotation: Quat| GpuBody::from_pose(0, &Pose::new(position, rotation));
        let turned = Quat::from_rotation_z(std::f32::consts::PI);
        let origin = at(DVec3::ZERO, Quat::IDENTITY);
        let bucket_of = |shape: &GpuShape, position: DVec3, margin: f32| {
            gap_bucket(
                (shape, shape),
                &vertices,
                (&origin, &at(position, turned)),
                margin,
            )
        };
        let bucket = |x: f64, margin: f32| bucket_of(&ball, DVec3::new(x, 0.0, 0.0), margin);
        // B turned half a turn about z: its centroid at x - 0.5, A's at 0.5, reach 2 + margin;
        // along x the octahedra's tips reach as far as their spheres.
        assert_eq!(bucket(1.0, 0.0), 0, "centroids together");
        assert_eq!(bucket(2.0, 0.0), 3, "gap 1 of reach 2: 3.5 steps");
        assert_eq!(bucket(2.99, 0.0), GAP_BUCKETS - 2);
        assert_eq!(bucket(3.0, 0.0), GAP_BUCKETS - 2, "touching spheres");
        assert_eq!(bucket(3.01, 0.0), GAP_BUCKETS - 1, "apart");
        assert_eq!(bucket(3.01, 0.02), GAP_BUCKETS - 2, "within the margin");
        assert_eq!(bucket(0.0, 0.0), 3, "B's centroid on the other side of A's");
        // Centroids 1.9 apart along the diagonal of x and y, where each octahedron reaches
        // 0.71: the spheres overlap (6.65 steps) but the vertices are 0.49 apart on that line,
        // unless a shape has more than CENTRE_LINE_VERTICES vertices.
        let diagonal = 1.9 / 2f64.sqrt();
        let position = DVec3::new(1.0 + diagonal, diagonal, 0.0);
        assert_eq!(bucket_of(&ball, position, 0.0), GAP_BUCKETS - 1);
        assert_eq!(
            bucket_of(&ball, position, 0.5),
            5,
            "within the margin: 5.32 steps of 2.5"
        );
        assert_eq!(bucket_of(&big, position, 0.0), GAP_BUCKETS - 2);
        // The class first, the bucket after.
        let boxed = GpuShape {
            kind: SHAPE_BOX,
            edge_count: 12,
            ..ball
        };
        let key = |a: &GpuShape, b: &GpuShape, x: f64| {
            let b_body = at(DVec3::new(x, 0.0, 0.0), turned);
            order_key((a, b), &vertices, (&origin, &b_body), 0.0)
        };
        assert_eq!(key(&ball, &ball, 2.0), cost_class(&ball, &ball) * GAP_BUCKETS + 3);
        assert_eq!(key(&boxed, &boxed, 2.0), KEY_BOX_BOX * GAP_BUCKETS + 3);
        assert_eq!(key(&boxed, &boxed, 9.0), KEY_BOX_BOX * GAP_BUCKETS + 7);
        // A sphere of radius 1 with the octahedron: buckets by the spheres' gap, but no centre
        // line (a sphere has no vertices): its centre 1.9 from A's centroid along the diagonal
        // is 6.65 steps of reach 2, though the octahedron reaches only 0.71 that way.
        let sphere = GpuShape {
            kind: SHAPE_SPHERE,
            radius: 1.0,
            ..Default::default()
        };
        let sphere_key = |position: DVec3| {
            let b_body = at(position, Quat::IDENTITY);
            order_key((&ball, &sphere), &vertices, (&origin, &b_body), 0.0)
        };
        let class = cost_class(&ball, &sphere);
        let on_diagonal = DVec3::new(0.5 + diagonal, diagonal, 0.0);
        assert_eq!(sphere_key(on_diagonal), class * GAP_BUCKETS + GAP_BUCKETS - 2);
        assert_eq!(
            sphere_key(DVec3::new(2.6, 0.0, 0.0)),
            class * GAP_BUCKETS + 7,
            "apart"
        );
        assert_eq!(sphere_key(DVec3::new(0.5, 0.0, 0.0)), class * GAP_BUCKETS);
        // A half-space has no size: no bucket.
        let half_space = GpuShape {
            kind: SHAPE_HALF_SPACE,
            ..Default::default()
        };
        let class = cost_class(&ball, &half_space);
        assert!(has_gap_buckets(cost_class(&ball, &sphere), &ball, &sphere));
        assert!(!has_gap_buckets(class, &ball, &half_space));
        assert!(has_gap_buckets(KEY_BOX_BOX, &boxed, &boxed));
        let b_body = at(DVec3::new(9.0, 0.0, 0.0), Quat::IDENTITY);
        assert_eq!(
            order_key((&ball, &half_space), &vertices, (&origin, &b_body), 0.0),
            class * GAP_BUCKETS
        );
    }

    #[test]
    fn the_centre_line_separates_as_the_world_vertices_do() {
        use crate::pose::Pose;
        use glam::{DQuat, DVec3};
        // An uneven hull (no symmetry hides a rotation taken the wrong way), its sphere made
        // too large to decide anything: only the centre line can give bucket 7.
        let points = [
            [1.0, 0.2, 0.0],
            [-0.7, 0.5, 0.1],
            [0.1, 1.1, -0.3],
            [0.0, -0.9, 0.4],
            [0.3, 0.1, 1.2],
            [-0.2, -0.3, -1.0],
        ];
        let vertices: Vec<[f32; 4]> = points.iter().map(|&[x, y, z]| [x + 0.3, y, z, 1.0]).collect();
        let shape = GpuShape {
            kind: SHAPE_HULL,
            centroid: [0.3, 0.0, 0.0],
            radius: 10.0,
            vertex_count: 6,
            ..Default::default()
        };
        let rotations = [
            DQuat::IDENTITY,
            DQuat::from_rotation_x(std::f64::consts::FRAC_PI_2),
            DQuat::from_rotation_y(std::f64::consts::FRAC_PI_2),
            DQuat::from_axis_angle(DVec3::ONE.normalize(), 2.1),
            DQuat::from_axis_angle(DVec3::new(0.3, -0.5, 0.8).normalize(), 0.65),
        ];
        let directions = [DVec3::X, DVec3::new(0.2, 1.0, -0.4), DVec3::new(-0.6, 0.3, 0.7)];
        let margin = 0.05;
        let (mut apart, mut near) = (0, 0);
        for (qa, qb) in rotations
            .iter()
            .flat_map(|a| rotations.iter().map(move |b| (a, b)))
        {
            for direction in directions {
                for distance in [0.8, 1.6, 2.2, 2.8, 3.6] {
                    let position = direction.normalize() * distance;
                    let [pose_a, pose_b] = [(DVec3::ZERO, qa), (position, qb)]
                        .map(|(t, q)| Pose::new(t, q.as_quat().normalize()));
                    // B's lowest world vertex minus A's highest along the centroids' line, f64.
                    let world =
                        |pose: &Pose, v: &[f32; 4]| pose.transform_point(Vec4::from_array(*v).truncate());
                    let centre = |pose: &Pose| pose.transform_point(Vec3::from_array(shape.centroid));
                    let line = (centre(&pose_b) - centre(&pose_a)).normalize();
                    let highest_a = vertices
                        .iter()
                        .map(|v| world(&pose_a, v).dot(line))
                        .fold(f64::MIN, f64::max);
                    let lowest_b = vertices
                        .iter()
                        .map(|v| world(&pose_b, v).dot(line))
                        .fold(f64::MAX, f64::min);
                    let separation = lowest_b - highest_a;
                    if (separation - f64::from(margin)).abs() < 1e-3 {
                        continue;
                    }
                    let bodies = [pose_a, pose_b].map(|pose| GpuBody::from_pose(0, &pose));
                    let bucket = gap_bucket((&shape, &shape), &vertices, (&bodies[0], &bodies[1]), margin);
                    let expected_apart = separation > f64::from(margin);
                    assert_eq!(
                        bucket == GAP_BUCKETS - 1,
                        expected_apart,
                        "{qa:?} {qb:?} {position}: {separation}"
                    );
                    if expected_apart {
                        apart += 1;
                    } else {
                        near += 1;
                    }
                }
            }
        }
        assert!(apart > 50 && near > 50, "{apart} apart, {near} near");
    }

    #[test]
    fn keys_run_from_the_largest_hull_pairs_to_pairs_without_hull_geometry() {
        let hull = |edges| shape(SHAPE_HULL, edges);
        let boxed = shape(SHAPE_BOX, 12);
        // 2^16 edge pairs and up: key 0; each halving one more; below 2^7: key 10.
        assert_eq!(cost_class(&hull(256), &hull(256)), 0);
        assert_eq!(cost_class(&hull(512), &hull(512)), 0);
        assert_eq!(cost_class(&hull(256), &hull(255)), 1);
        assert_eq!(cost_class(&hull(90), &hull(90)), 16 - 12, "8,100 edge pairs");
        assert_eq!(cost_class(&hull(186), &boxed), 16 - 11, "2,232 edge pairs");
        assert_eq!(cost_class(&boxed, &hull(186)), cost_class(&hull(186), &boxed));
        assert_eq!(cost_class(&hull(6), &hull(6)), KEY_SMALL_HULLS, "36 edge pairs");
        assert_eq!(cost_class(&hull(0), &hull(0)), KEY_SMALL_HULLS);
        // Beyond the clamp the product still fits.
        assert_eq!(cost_class(&hull(u32::MAX), &hull(u32::MAX)), 0);
        assert_eq!(cost_class(&boxed, &boxed), KEY_BOX_BOX);
        for primitive in [SHAPE_SPHERE, SHAPE_CAPSULE] {
            let other = shape(primitive, 0);
            // 64 edges and up: the first primitive key; 32 to 63: the next; fewer: the last.
            assert_eq!(cost_class(&hull(186), &other), KEY_HULL_PRIMITIVE);
            assert_eq!(cost_class(&other, &hull(64)), KEY_HULL_PRIMITIVE);
            assert_eq!(cost_class(&hull(63), &other), KEY_HULL_PRIMITIVE + 1);
            assert_eq!(cost_class(&hull(42), &other), KEY_HULL_PRIMITIVE + 1);
            assert_eq!(cost_class(&hull(18), &other), KEY_CHEAP - 1);
            assert_eq!(cost_class(&other, &boxed), KEY_CHEAP - 1);
            assert_eq!(cost_class(&hull(0), &other), KEY_CHEAP - 1);
            assert_eq!(cost_class(&hull(u32::MAX), &other), KEY_HULL_PRIMITIVE);
        }
        // A half-space's hull counts a quarter of its edges.
        let half_space = shape(SHAPE_HALF_SPACE, 0);
        assert_eq!(cost_class(&hull(256), &half_space), KEY_HULL_PRIMITIVE);
        assert_eq!(cost_class(&half_space, &hull(186)), KEY_HULL_PRIMITIVE + 1);
        assert_eq!(cost_class(&hull(90), &half_space), KEY_CHEAP - 1);
        assert_eq!(cost_class(&boxed, &half_space), KEY_CHEAP - 1);
        for primitive in [SHAPE_SPHERE, SHAPE_CAPSULE, SHAPE_HALF_SPACE] {
            assert_eq!(
                cost_class(&shape(primitive, 0), &shape(SHAPE_SPHERE, 0)),
                KEY_CHEAP
            );
        }
        for skipped in [SHAPE_COMPOUND, SHAPE_TRIMESH] {
            assert_eq!(cost_class(&hull(90), &shape(skipped, 0)), KEY_CHEAP);
            assert_eq!(cost_class(&shape(skipped, 0), &boxed), KEY_CHEAP);
            assert_eq!(cost_class(&shape(skipped, 0), &shape(SHAPE_SPHERE, 0)), KEY_CHEAP);
        }
    }
}

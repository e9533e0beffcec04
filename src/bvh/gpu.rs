//! The ray-cast BVH built on the GPU from bodies already in a GPU buffer (no readback, sized on
//! the host by the body count alone), in the layout [`super::Bvh`] has, so `raycast.wgsl`
//! traverses it unchanged (half-spaces in the tree, or left apart for the kernel's unbounded
//! list by a caller that counted them). WGSL twin:
//! `shaders/bvh/bvh_build.wgsl`, one entry point per step:
//!
//! 1. Each body's box in the BVH frame (world minus the f64 `origin`, length units). A hull of at
//!    most `MAX_BOXED_VERTICES` (4,096) vertices: the extremes of its vertices rotated as the CPU's
//!    [`world_aabb`] rotates them, translated. Other shapes: their local box ([`GpuBvhShape`],
//!    from [`world_aabb`] at the identity, once per shape) rotated (centre R·c, half |R|·h, plus
//!    a sphere's or capsule's radius) and translated. Grown by [`BVH_PADDING`](crate::ray_box::BVH_PADDING)
//!    as the CPU grows its boxes plus the f32 error of the rotation and of the split
//!    translations, so it contains the CPU's box. A half-space's box is ±[`UNBOUNDED_EXTENT`].
//!    Bounds of the bounded box centres by atomic max on order-preserving u32 encodings, per
//!    workgroup first.
//! 2. Each body's 30-bit Morton code in those bounds ([`UNBOUNDED_CODE`] for half-spaces).
//! 3. A stable radix sort of the (code, body index) pairs by code (`crate::gpu::radix_sort`,
//!    4 passes of 8 bits): written in index order, ties stay so, and the build is
//!    deterministic.
//!
//! Then the tree, in the builder's [`TreeLayout`]. [`TreeLayout::Heap`] (the broadphase's, which
//! walks it without a stack by heap index):
//!
//! 4. An implicit complete binary tree in heap order over L = ceil(n / [`HEAP_LEAF_SIZE`])
//!    leaves (2L - 1 nodes, children of k at 2k + 1 and 2k + 2): leaf i in order holds sorted
//!    bodies `i * HEAP_LEAF_SIZE..`, its box their union.
//! 5. Inner nodes, one dispatch per tree level from the bottom up: the union of the children.
//!
//! [`TreeLayout::Prefix`] (the rays'): n - 1 inner nodes split where the sorted keys' highest
//! differing bit flips (Karras' radix tree), one body a leaf, 2n - 1 nodes:
//!
//! 6. The body list; and the box pyramid's level 1, after the body boxes in their buffer: over
//!    the tree's places in sorted order (level 0, each place's own box), level k + 1 block b
//!    the union of level k's blocks 2b and 2b + 1.
//! 7. One dispatch per pyramid level above 1, from the bottom up.
//! 8. Inner node i finds its range and split from the keys alone and writes its two children:
//!    at nodes 2i + 1 and 2i + 2 (the root at 0), each a leaf (one body) or inner node j
//!    (children at 2j + 1), its box the union of the at most two blocks a level that tile its
//!    range.
//!
//! Design notes, cost and what it leaves out: `docs/design/gpu-bvh.md`.

use std::sync::Arc;

use bytemuck::{Pod, Zeroable};
use encase::ShaderType;
use glam::{DVec3, Vec3};

use super::cpu::BvhNode;
use crate::gpu::buffers::{GrowBuffer, MIN_BUFFER_BYTES, UNIFORM_WRITE, binding, binding_up_to, check_limit};
use crate::gpu::context::ErrorScopes;
use crate::gpu::layout::{GpuBody, WgslVec3, split_translation, write_uniform};
use crate::gpu::pipeline::{
    bind_group, bind_group_layout, compute_pipeline_variants, grid, storage, uniform,
};
use crate::gpu::radix_sort::{GpuRadixSort, RadixKeys};
use crate::gpu::{GpuContext, GpuError};
use crate::hull::MAX_HULL_VERTICES;
use crate::pose::Pose;
use crate::scene::Body;
use crate::shape::{Shape, world_aabb};

/// The WGSL source of the build kernels: the quaternion helpers ([`crate::gpu::QUAT_WGSL`]),
/// the BVH's shared structs (`shaders/bvh/layout.wgsl`), then `shaders/bvh/bvh_build.wgsl`.
pub const BVH_BUILD_WGSL: &str = concat!(
    include_str!("../../shaders/common/quat.wgsl"),
    include_str!("../../shaders/common/body.wgsl"),
    include_str!("../../shaders/bvh/layout.wgsl"),
    include_str!("../../shaders/bvh/bvh_build.wgsl")
);

/// Invocations per workgroup of every build kernel; must match `WORKGROUP_SIZE` in
/// bvh_build.wgsl.
pub const BVH_BUILD_WORKGROUP_SIZE: u32 = 64;

/// Added to `1 - a²` under the square root of a cylinder's box (dimensionless): covers the f32
/// error of `a²` for the rotated unit axis `a` (a few ulps of 1), so the box still holds the
/// CPU's; it grows an upright cylinder's box by at most 2^-9 of its radius. Must match
/// `CYLINDER_RIM_SLACK` in bvh_build.wgsl.
pub const CYLINDER_RIM_SLACK: f32 = 1.0 / (1 << 18) as f32;

/// Extra growth of each body box, relative (dimensionless) to the largest coordinate magnitude
/// of the body's and the origin's high translation parts: the split `hi + lo` carries a world
/// translation to 2^-48 of its size ([`split_translation`]), 2^-44 covers both with room.
/// Must match `SPLIT_PADDING` in bvh_build.wgsl.
pub const SPLIT_PADDING: f32 = 1.0 / (1u64 << 44) as f32;

/// Most vertices of a hull whose box step 1 takes over its rotated vertices (one loop iteration
/// each, in one invocation); a larger hull keeps its rotated local box. llvmpipe silently stops
/// an invocation group's loops after ~65,535 iterations (see [`crate::gpu`]) and the build has
/// no flag to report it, so the loop stays far below: every hull today ([`MAX_HULL_VERTICES`]).
pub const MAX_BOXED_VERTICES: u32 = 4096;

const _: () = assert!(MAX_HULL_VERTICES <= MAX_BOXED_VERTICES as usize);

// Step 1 covers the GPU's rotation against the CPU's, under 2^-18 of each vertex's |v|
// (docs/design/gpu-bvh.md), with BVH_PADDING × the hull's reach: keep 2x room.
const _: () = assert!(crate::ray_box::BVH_PADDING >= 2.0 / (1u32 << 18) as f32);

/// Half side of a half-space's box about the BVH origin, length units. Large enough that a ray
/// misses it only where its hit on the half-space lies beyond 1e18 (the CPU's unbounded list
/// would find that hit; no scene of coordinates up to `MAX_POSITION` = 1e12 meets one but at a
/// grazing angle under 2e-6 radians); small enough that the kernel's slab distances stay finite:
/// (1e18 + 2e12) × 1e20 (the inverse of [`crate::ray_box::MIN_DIRECTION_COMPONENT`]) < `f32::MAX`, as
/// WGSL does not promise infinities. Must match `UNBOUNDED_EXTENT` in bvh_build.wgsl.
pub const UNBOUNDED_EXTENT: f32 = 1.0e18;

/// Sort code of a half-space: after every 30-bit Morton code, so half-spaces share the last
/// leaves. Must match `UNBOUNDED_CODE` in bvh_build.wgsl.
pub const UNBOUNDED_CODE: u32 = u32::MAX;

/// Most bodies in a leaf of the heap tree ([`TreeLayout::Heap`]; every leaf but the last holds
/// this many). Must match `HEAP_LEAF_SIZE` in bvh/layout.wgsl.
pub const HEAP_LEAF_SIZE: u32 = 4;

/// Bytes between two dispatches' [`GpuBvhParams`] in the parameter buffer: the largest
/// `min_uniform_buffer_offset_alignment` wgpu allows.
const PARAMS_STRIDE: u64 = 256;

/// The shape of the tree a `GpuBvhBuilder` builds over the sorted bodies (both in
/// [`BvhNode`]'s layout, root at node 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TreeLayout {
    /// Steps 4-5: an implicit complete binary tree in heap order over leaves of
    /// [`HEAP_LEAF_SIZE`] sorted bodies, which the broadphase walks without a stack by heap
    /// index. Its splits fall at body counts, not at code boundaries: a node's bodies may lie
    /// in far apart cells.
    Heap,
    /// Steps 6-8: split where the sorted keys' highest differing bit flips, one body a leaf:
    /// every node holds one Morton cell's bodies (on the bench's ray scene a ray visits about
    /// 2.5 times fewer nodes and tests 18 times fewer bodies than through [`Self::Heap`]). At
    /// most 61 levels of inner nodes (a deeper prefix at every level: 30 code bits, then 31
    /// bits of place), so a traversal's stack holds at most 62 entries.
    Prefix,
}

/// Most bodies [`TreeLayout::Prefix`] builds over: its range searches step in `i32`.
const MAX_PREFIX_BODIES: u32 = 1 << 30;

/// A shape's local box, shape frame, length units: the box `centre ± half` grown by `radius`
/// on every side (a sphere or capsule keeps its radius apart so its rotated box stays tight),
/// and a hull's vertex range, boxed vertex by vertex instead; must match `GpuBvhShape` in
/// bvh_build.wgsl and pairs.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuBvhShape {
    /// Centre of the core box, shape frame. Half-space: its unit outward normal, shape frame.
    pub centre: [f32; 3],
    /// Growth on every side after rotation (sphere, capsule radius; 0 otherwise). Half-space:
    /// its offset (the plane is `normal · x = offset`, shape frame, length units).
    pub radius: f32,
    /// Half extents of the core box, shape frame.
    pub half: [f32; 3],
    /// 1 for a half-space (no box), 0 otherwise.
    pub unbounded: u32,
    /// Hull: index of its first vertex in the builder's vertex buffer; 0 otherwise.
    pub first_vertex: u32,
    /// Hull of at most `MAX_BOXED_VERTICES` (4,096) vertices: their number, its box taken over them;
    /// 0 otherwise (the rotated local box).
    pub vertex_count: u32,
    /// Largest distance of a boxed hull's vertex from the shape origin, rounded up (length
    /// units; scales the padding for the rotation's f32 error); 0 otherwise.
    pub reach: f32,
    /// [`SHAPE_FLAG_CYLINDER`] and [`SHAPE_FLAG_STATIC`] bits.
    pub flags: u32,
}

/// [`GpuBvhShape::flags`] bit: a cylinder along local Y (`half.y` its half height, `radius` its
/// radius), whose box is the true cylinder's, `h |a| + r sqrt(1 - a²)` per axis with `a` the
/// world axis ([`crate::shape::Cylinder::rotated_half_extents`]). Must match bvh/layout.wgsl.
pub const SHAPE_FLAG_CYLINDER: u32 = 1;

/// [`GpuBvhShape::flags`] bit: a bounded static shape (a triangle mesh), which the broadphase
/// pairs with no other static body (a mesh, or a half-space: `unbounded`), as the
/// batch refuses such pairs (`scene::validate::never_paired`). Must match
/// bvh/layout.wgsl.
pub const SHAPE_FLAG_STATIC: u32 = 2;

const _: () = assert!(size_of::<GpuBvhShape>() == 48);

impl GpuBvhShape {
    /// The local box of `shape`; a hull of at most `MAX_BOXED_VERTICES` (4,096) vertices also gets
    /// the range of its vertices, starting at `first_vertex` in the vertex buffer.
    pub fn new(shape: &Shape, first_vertex: u32) -> GpuBvhShape {
        let (centre, half, radius, unbounded) = match shape {
            Shape::Sphere(s) => (Vec3::ZERO, Vec3::ZERO, s.radius, 0),
            Shape::Capsule(c) => (Vec3::ZERO, Vec3::new(0.0, c.half_height, 0.0), c.radius, 0),
            // No box: the fields carry the plane (local normal, offset) for the broadphase.
            Shape::HalfSpace(h) => (h.normal, Vec3::ZERO, h.offset, 1),
            Shape::Cylinder(c) => (Vec3::ZERO, Vec3::new(0.0, c.half_height(), 0.0), c.radius(), 0),
            // A mesh or compound: its local box (padded as `world_aabb` pads it), rotated by the
            // kernel: it holds every child's rotated box.
            Shape::Hull(_) | Shape::Cuboid(_) | Shape::TriMesh(_) | Shape::Compound(_) => {
                let b = world_aabb(shape, &Pose::IDENTITY);
                // Centre and half rounded up so that centre ± half still covers min..max.
                let centre = (b.min + b.max) * 0.5;
                let half = (b.max - centre).max(centre - b.min);
                (centre, half.map(f32::next_up), 0.0, 0)
            }
        };
        let (first_vertex, vertex_count, reach) = match shape {
            Shape::Hull(hull) if hull.vertices().len() <= MAX_BOXED_VERTICES as usize => {
                let reach = hull
                    .vertices()
                    .iter()
                    .map(|v| v.as_dvec3().length())
                    .fold(0.0, f64::max);
                // Rounded up: the padding must not shrink.
                let reach32 = reach as f32;
                let reach = if f64::from(reach32) < reach {
                    reach32.next_up()
                } else {
                    reach32
                };
                (first_vertex, hull.vertices().len() as u32, reach)
            }
            _ => (0, 0, 0.0),
        };
        GpuBvhShape {
            centre: centre.to_array(),
            radius,
            half: half.to_array(),
            unbounded,
            first_vertex,
            vertex_count,
            reach,
            flags: match shape {
                Shape::Cylinder(_) => SHAPE_FLAG_CYLINDER,
                Shape::TriMesh(_) => SHAPE_FLAG_STATIC,
                _ => 0,
            },
        }
    }

    /// The shape table of `shapes` and the vertex buffer's contents: each boxed hull's
    /// vertices, shape frame, `[x, y, z, 0]`, in shape order.
    pub fn tables(shapes: &[Shape]) -> (Vec<GpuBvhShape>, Vec<[f32; 4]>) {
        let mut vertices: Vec<[f32; 4]> = Vec::new();
        let table = shapes
            .iter()
            .map(|shape| {
                let local = GpuBvhShape::new(shape, vertices.len() as u32);
                if let (Shape::Hull(hull), true) = (shape, local.vertex_count > 0) {
                    vertices.extend(hull.vertices().iter().map(|v| v.extend(0.0).to_array()));
                }
                local
            })
            .collect();
        (table, vertices)
    }
}

/// Per-dispatch parameters (uniform at a dynamic offset, written with encase); must match
/// `GpuBvhParams` in bvh_build.wgsl.
#[derive(Clone, Copy, Debug, Default, PartialEq, ShaderType)]
pub struct GpuBvhParams {
    /// World position of the BVH frame's origin, high part ([`split_translation`]).
    pub origin_hi: WgslVec3,
    /// Bodies in the tree.
    pub body_count: u32,
    /// World position of the BVH frame's origin, low part.
    pub origin_lo: WgslVec3,
    /// Leaves: ceil(body_count / [`HEAP_LEAF_SIZE`]) in the heap tree; in the prefix tree the
    /// bodies in the tree (one a leaf, the first of the sorted order).
    pub leaf_count: u32,
    /// Step 5: first node of the tree level. Steps 6-8: first box of the pyramid level
    /// written, in the boxes' buffer (steps 6 and 8: of level 1).
    pub level_first: u32,
    /// Step 5: inner nodes of the level. Step 7: blocks of the level.
    pub level_count: u32,
    /// Extra growth of each bounded box, relative (dimensionless) to a bound on its largest
    /// world coordinate magnitude (|translation| + the largest |coordinate| of the rotated
    /// vertices of a boxed hull, else |rotated local centre| + half extent): 0 for
    /// the ray BVH; the broadphase's `WORLD_PADDING` covers the CPU's f32 world boxes.
    pub world_padding: f32,
    /// Step 7: first block of the level below.
    pub source_first: u32,
    /// Step 7: blocks of the level below.
    pub source_count: u32,
}

/// The entry points of bvh_build.wgsl, in step order (`Step::kernel` indexes them); from
/// [`LEAVES`] on they build the tree.
const ENTRY_POINTS: [&str; 7] = [
    "boxes_main",
    "codes_main",
    "leaves_main",
    "inner_main",
    "sorted_main",
    "blocks_main",
    "prefix_main",
];
/// Indices into [`ENTRY_POINTS`].
const BOXES: usize = 0;
const CODES: usize = 1;
const LEAVES: usize = 2;
const INNER: usize = 3;
const SORTED: usize = 4;
const BLOCKS: usize = 5;
const PREFIX: usize = 6;

/// The passes' labels (their stages under a [`crate::gpu::StageTimer`]), by kernel: the boxes,
/// the Morton codes, and the tree (steps 4-5 or 6-8, one pass).
const STAGE_LABELS: [&str; 3] = ["bvh boxes", "bvh morton", "bvh tree"];

/// The build kernels, compiled once per device ([`GpuContext::kernels`]).
struct BvhBuildKernels {
    layout: wgpu::BindGroupLayout,
    /// One per [`ENTRY_POINTS`] entry.
    pipelines: [wgpu::ComputePipeline; 7],
}

impl BvhBuildKernels {
    fn compile(context: &GpuContext) -> BvhBuildKernels {
        let device = context.device();
        let layout = bind_group_layout(
            device,
            "bvh build",
            &[
                storage(true),
                storage(true),
                storage(false),
                storage(false),
                storage(false),
                storage(false),
                storage(false),
                uniform(true, Some(GpuBvhParams::min_size())),
                storage(true),
            ],
        );
        let variants = ENTRY_POINTS.map(|entry| (entry, entry, wgpu::PipelineCompilationOptions::default()));
        let pipelines = compute_pipeline_variants(
            device,
            "bvh_build.wgsl",
            BVH_BUILD_WGSL,
            &[Some(&layout)],
            variants,
        );
        BvhBuildKernels { layout, pipelines }
    }
}

/// One dispatch of the build: which kernel, its parameters, how many workgroups.
struct Step {
    kernel: usize,
    params: GpuBvhParams,
    groups: u32,
}

/// Builds BVHs on the GPU over bodies in a GPU buffer (see the module docs). Its buffers grow
/// with the body count and are reused; a build is valid until the next [`Self::encode`].
pub(crate) struct GpuBvhBuilder {
    kernels: Arc<BvhBuildKernels>,
    /// The tree it builds.
    layout: TreeLayout,
    /// [`GpuBvhParams::world_padding`] of every build.
    world_padding: f32,
    /// One [`GpuBvhShape`] per shape.
    shapes: wgpu::Buffer,
    /// The boxed hulls' vertices, shape frame, `[x, y, z, 0]` ([`GpuBvhShape::tables`]).
    vertices: wgpu::Buffer,
    /// Step 1's body boxes ([`BvhNode`], `first` = body index); for [`TreeLayout::Prefix`],
    /// the box pyramid after them.
    boxes: GrowBuffer,
    /// Step 1's encoded centre bounds (6 u32).
    bounds: wgpu::Buffer,
    /// Steps 2 and 3's (code, index) pairs.
    keys: GrowBuffer,
    /// The tree ([`BvhNode`]).
    nodes: GrowBuffer,
    /// Leaf body lists (u32 body indices).
    body_list: GrowBuffer,
    /// One [`GpuBvhParams`] per dispatch, [`PARAMS_STRIDE`] apart.
    params: GrowBuffer,
    /// Step 3's sort.
    sorter: GpuRadixSort,
}

/// A BVH recorded by [`GpuBvhBuilder::encode`], valid once its encoder is submitted: the
/// layout of [`super::Bvh`] (root node 0), the bodies left apart (if any) at the end of the
/// body list.
pub(crate) struct GpuBvh<'a> {
    /// One [`GpuBvhShape`] per shape (half-spaces carry their plane).
    pub shapes: &'a wgpu::Buffer,
    /// Each body's box, BVH frame ([`BvhNode`], `first` = body index), by body index.
    pub boxes: &'a wgpu::Buffer,
    /// [`BvhNode`]s, BVH frame, `node_count` of them (0 for no body).
    pub nodes: &'a wgpu::Buffer,
    /// Nodes written.
    pub node_count: u32,
    /// Body indices (u32) in leaf order, one per body: the tree's, then those left apart.
    pub body_list: &'a wgpu::Buffer,
    /// Bodies in the tree (the rest, from this place of the body list on, were left apart).
    pub tree_bodies: u32,
}

impl GpuBvhBuilder {
    /// Compiles the kernels on `context`'s device (once per device) and uploads each shape's
    /// local box and the boxed hulls' vertices; it builds trees of `layout`, each bounded box
    /// grown by `world_padding` ([`GpuBvhParams::world_padding`]: 0 for rays).
    pub fn new(
        context: &GpuContext,
        shapes: &[Shape],
        layout: TreeLayout,
        world_padding: f32,
    ) -> Result<Self, GpuError> {
        let kernels = context.kernels(BvhBuildKernels::compile)?;
        let sorter = GpuRadixSort::new(context)?;
        let device = context.device();
        let (local, vertices) = GpuBvhShape::tables(shapes);
        let tables: [(&str, &[u8]); 2] = [
            ("bvh shapes", bytemuck::cast_slice(&local)),
            ("bvh hull vertices", bytemuck::cast_slice(&vertices)),
        ];
        for (what, bytes) in tables {
            check_limit(
                what,
                bytes.len() as u64,
                context.limits.max_binding,
                "max_storage_buffer_binding_size",
            )?;
        }
        let scopes = ErrorScopes::push(device);
        let [shapes_buffer, vertices_buffer] = tables.map(|(label, bytes)| {
            let mut contents = bytes.to_vec();
            contents.resize(bytes.len().max(MIN_BUFFER_BYTES as usize), 0);
            wgpu::util::DeviceExt::create_buffer_init(
                device,
                &wgpu::util::BufferInitDescriptor {
                    label: Some(label),
                    contents: &contents,
                    usage: wgpu::BufferUsages::STORAGE,
                },
            )
        });
        let work = wgpu::BufferUsages::STORAGE;
        let out = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC;
        let builder = GpuBvhBuilder {
            kernels,
            layout,
            world_padding,
            shapes: shapes_buffer,
            vertices: vertices_buffer,
            boxes: GrowBuffer::new(device, "bvh body boxes", work),
            bounds: crate::gpu::buffers::create_buffer(
                device,
                "bvh centre bounds",
                MIN_BUFFER_BYTES,
                work | wgpu::BufferUsages::COPY_DST,
            ),
            keys: GrowBuffer::new(device, "bvh sort keys", out),
            nodes: GrowBuffer::new(device, "bvh nodes", out),
            body_list: GrowBuffer::new(device, "bvh body list", out),
            params: GrowBuffer::new(device, "bvh build params", UNIFORM_WRITE),
            sorter,
        };
        scopes.pop()?;
        Ok(builder)
    }

    /// Records into `encoder` the build of a BVH over the first `body_count` bodies of `bodies`
    /// (a STORAGE buffer of [`GpuBody`], unit rotations, shape indices below the shape
    /// count), boxes relative to the f64 world point `origin` (length units). A prefix tree
    /// leaves out the last `apart` bodies of the sorted order (half-spaces sort last: a caller
    /// that counted them tests them apart, as the CPU's unbounded list; 0 keeps every body in
    /// the tree; the heap tree takes 0). Returns its nodes and body list, valid once the
    /// encoder is submitted. The parameters go through the queue: submit the encoder before
    /// the next `encode`. Boxes are padded in proportion to their BVH-frame coordinates: pick
    /// `origin` near the bodies (their translations' centre).
    pub fn encode(
        &mut self,
        context: &GpuContext,
        encoder: &mut wgpu::CommandEncoder,
        bodies: &wgpu::Buffer,
        body_count: u32,
        origin: DVec3,
        apart: u32,
    ) -> Result<GpuBvh<'_>, GpuError> {
        let n = u64::from(body_count);
        // Bodies in the tree (the heap tree holds them all).
        let places = match self.layout {
            TreeLayout::Heap => body_count,
            TreeLayout::Prefix => body_count.saturating_sub(apart),
        };
        let steps = plan(self.layout, body_count, places, origin, self.world_padding);
        let (node_count, box_slots) = slots(self.layout, body_count, places, &steps);
        let limits = context.limits;
        let binding_limit = "max_storage_buffer_binding_size";
        let body_bytes = n * size_of::<GpuBody>() as u64;
        let box_bytes = box_slots * size_of::<BvhNode>() as u64;
        let key_bytes = n * 8;
        let node_bytes = node_count * size_of::<BvhNode>() as u64;
        let list_bytes = n * 4;
        for (what, bytes) in [
            ("ray bodies", body_bytes),
            ("bvh body boxes", box_bytes),
            ("bvh sort keys", key_bytes),
            ("bvh nodes", node_bytes),
            ("bvh body list", list_bytes),
        ] {
            check_limit(what, bytes, limits.max_binding, binding_limit)?;
        }
        // Every node index stays within u32.
        let max_bodies = match self.layout {
            TreeLayout::Heap => 1 << 31,
            TreeLayout::Prefix => MAX_PREFIX_BODIES,
        };
        if body_count > max_bodies {
            return Err(GpuError::Unsupported(format!(
                "{body_count} bodies: this GPU BVH builds over at most {max_bodies}"
            )));
        }
        if body_bytes > bodies.size() {
            return Err(GpuError::Unsupported(format!(
                "the body buffer holds {} bytes, {body_count} bodies need {body_bytes}",
                bodies.size()
            )));
        }
        let params_bytes = steps.len() as u64 * PARAMS_STRIDE;
        check_limit(
            "bvh build params",
            params_bytes,
            limits.max_buffer,
            "max_buffer_size",
        )?;
        let device = context.device();
        let scopes = ErrorScopes::push(device);
        let max = limits.max_buffer;
        self.boxes.reserve(device, box_bytes, max);
        self.keys.reserve(device, key_bytes, max);
        self.nodes.reserve(device, node_bytes, max);
        self.body_list.reserve(device, list_bytes, max);
        self.params.reserve(device, params_bytes, max);
        let mut recorded = Ok(());
        if !steps.is_empty() {
            recorded = self.record(context, encoder, bodies, body_count, body_bytes, &steps);
        }
        let popped = scopes.pop();
        recorded?;
        popped?;
        Ok(GpuBvh {
            shapes: &self.shapes,
            boxes: &self.boxes.buffer,
            nodes: &self.nodes.buffer,
            node_count: node_count as u32,
            body_list: &self.body_list.buffer,
            tree_bodies: places,
        })
    }

    /// Writes the steps' parameters and records the bounds clear and every dispatch.
    fn record(
        &mut self,
        context: &GpuContext,
        encoder: &mut wgpu::CommandEncoder,
        bodies: &wgpu::Buffer,
        body_count: u32,
        body_bytes: u64,
        steps: &[Step],
    ) -> Result<(), GpuError> {
        let mut bytes = vec![0u8; steps.len() * PARAMS_STRIDE as usize];
        for (step, slot) in steps.iter().zip(bytes.chunks_exact_mut(PARAMS_STRIDE as usize)) {
            write_uniform(&step.params, slot)?;
        }
        context.queue().write_buffer(&self.params.buffer, 0, &bytes);
        // Grown buffers may be larger than a binding may be: bound up to the limit (the bytes
        // the build uses were checked against it).
        let max_binding = context.limits.max_binding;
        let group = bind_group(
            context.device(),
            "bvh build",
            &self.kernels.layout,
            &[
                binding(0, &self.shapes, 0, self.shapes.size()),
                binding(1, bodies, 0, body_bytes),
                binding_up_to(2, &self.boxes.buffer, max_binding),
                binding(3, &self.bounds, 0, self.bounds.size()),
                binding_up_to(4, &self.keys.buffer, max_binding),
                binding_up_to(5, &self.nodes.buffer, max_binding),
                binding_up_to(6, &self.body_list.buffer, max_binding),
                binding(7, &self.params.buffer, 0, GpuBvhParams::min_size().get()),
                binding(8, &self.vertices, 0, self.vertices.size()),
            ],
        );
        // Step 1's atomics start from 0 (no centre seen).
        encoder.clear_buffer(&self.bounds, 0, None);
        let max_groups = context.limits.max_workgroups;
        // One pass per stage: step 1, step 2, the sort (step 3), then the tree (steps 4 and 5,
        // or 6 to 8).
        let stage = |step: &Step| STAGE_LABELS[step.kernel.min(LEAVES)];
        let mut i = 0;
        for stage_steps in steps.chunk_by(|a, b| stage(a) == stage(b)) {
            if stage_steps[0].kernel >= LEAVES {
                let keys = RadixKeys {
                    keys: &self.keys.buffer,
                    max_keys: body_count,
                    count: None,
                    low_bits: 0,
                    key_bits: u32::BITS,
                    stage: "bvh sort",
                };
                self.sorter.encode(context, encoder, &keys)?;
            }
            let mut pass = context.begin_pass(encoder, stage(&stage_steps[0]));
            for step in stage_steps {
                // A 2-D grid when one dimension cannot hold the workgroups.
                let (x, y) = grid("bvh build dispatch", u64::from(step.groups), 1, max_groups)?;
                pass.set_pipeline(&self.kernels.pipelines[step.kernel]);
                pass.set_bind_group(0, &group, &[(i as u64 * PARAMS_STRIDE) as u32]);
                pass.dispatch_workgroups(x, y, 1);
                i += 1;
            }
        }
        Ok(())
    }
}

/// Not API (reached through [`crate::internals`] by the tests): a `GpuBvhBuilder` fed from
/// host bodies, its result read back.
pub struct GpuBvhProbe {
    context: Arc<GpuContext>,
    builder: GpuBvhBuilder,
    bodies: GrowBuffer,
    readback: GrowBuffer,
}

/// What [`GpuBvhProbe::build`] reads back.
#[derive(Clone, Debug, Default)]
pub struct ProbedBvh {
    /// The tree, BVH frame.
    pub nodes: Vec<BvhNode>,
    /// Body indices in leaf order.
    pub body_list: Vec<u32>,
    /// Step 3's sorted (Morton code, body index) keys, one per body.
    pub keys: Vec<[u32; 2]>,
}

impl GpuBvhProbe {
    /// A builder of trees of `layout` for `shapes` on `context`.
    pub fn new(context: Arc<GpuContext>, shapes: &[Shape], layout: TreeLayout) -> Result<Self, GpuError> {
        let builder = GpuBvhBuilder::new(&context, shapes, layout, 0.0)?;
        let device = context.device();
        let bodies = GrowBuffer::new(
            device,
            "bvh probe bodies",
            wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
        );
        let readback = GrowBuffer::new(
            device,
            "bvh probe readback",
            wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        );
        Ok(GpuBvhProbe {
            context,
            builder,
            bodies,
            readback,
        })
    }

    /// Uploads `bodies` (checked: shape indices valid, unit rotations), builds their BVH at
    /// `origin` on the GPU, the last `apart` of the sorted order left out of a prefix tree (0
    /// for a heap tree), and reads back its nodes, body list (the tree's, then those left
    /// apart) and the first `bodies.len()` sorted (Morton code, body index) keys.
    pub fn build(&mut self, bodies: &[Body], origin: DVec3, apart: u32) -> Result<ProbedBvh, GpuError> {
        let context = &*self.context;
        let device = context.device();
        let gpu_bodies: Vec<GpuBody> = bodies
            .iter()
            .map(|b| GpuBody::from_pose(b.shape, &b.pose))
            .collect();
        let max = context.limits.max_buffer;
        let body_count = u32::try_from(bodies.len())
            .map_err(|_| GpuError::Unsupported(format!("{} bodies: more than u32::MAX", bodies.len())))?;
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("bvh probe"),
        });
        let scopes = ErrorScopes::push(device);
        self.bodies
            .write(device, context.queue(), bytemuck::cast_slice(&gpu_bodies), max);
        let built = self.builder.encode(
            context,
            &mut encoder,
            &self.bodies.buffer,
            body_count,
            origin,
            apart,
        );
        // The build's buffers are the builder's own: read them once its borrow ends.
        let built = built.map(|bvh| bvh.node_count);
        let key_bytes = u64::from(body_count) * 8;
        let (node_bytes, list_bytes) = match built {
            Ok(node_count) => {
                let node_bytes = u64::from(node_count) * size_of::<BvhNode>() as u64;
                let list_bytes = u64::from(body_count) * 4;
                self.readback
                    .reserve(device, node_bytes + list_bytes + key_bytes, max);
                if list_bytes > 0 {
                    let (out, builder) = (&self.readback.buffer, &self.builder);
                    if node_bytes > 0 {
                        encoder.copy_buffer_to_buffer(&builder.nodes.buffer, 0, out, 0, node_bytes);
                    }
                    encoder.copy_buffer_to_buffer(&builder.body_list.buffer, 0, out, node_bytes, list_bytes);
                    encoder.copy_buffer_to_buffer(
                        &builder.keys.buffer,
                        0,
                        out,
                        node_bytes + list_bytes,
                        key_bytes,
                    );
                }
                (node_bytes, list_bytes)
            }
            Err(_) => (0, 0),
        };
        let popped = scopes.pop();
        built?;
        popped?;
        let submission = context.queue().submit([encoder.finish()]);
        if list_bytes == 0 {
            return Ok(ProbedBvh::default());
        }
        let total = node_bytes + list_bytes + key_bytes;
        context.read_mapped(submission, &self.readback.buffer, total, |view| {
            let (nodes, rest) = view.split_at(node_bytes as usize);
            let (list, keys) = rest.split_at(list_bytes as usize);
            ProbedBvh {
                nodes: bytemuck::pod_collect_to_vec(nodes),
                body_list: bytemuck::pod_collect_to_vec(list),
                keys: bytemuck::pod_collect_to_vec(keys),
            }
        })
    }
}

/// The tree's nodes and the boxes' buffer's slots (the body boxes, then for
/// [`TreeLayout::Prefix`] the box pyramid's levels from 1) of a build of `body_count` bodies,
/// `places` of them in a prefix tree, planned as `steps`.
fn slots(layout: TreeLayout, body_count: u32, places: u32, steps: &[Step]) -> (u64, u64) {
    let n = u64::from(body_count);
    match layout {
        TreeLayout::Heap => ((2 * n.div_ceil(u64::from(HEAP_LEAF_SIZE))).saturating_sub(1), n),
        TreeLayout::Prefix => {
            // The pyramid ends with its last level.
            let end = steps
                .iter()
                .filter(|s| s.kernel == SORTED || s.kernel == BLOCKS)
                .map(|s| match s.kernel {
                    SORTED => u64::from(s.params.level_first) + u64::from(places.div_ceil(2)),
                    _ => u64::from(s.params.level_first) + u64::from(s.params.level_count),
                })
                .max()
                .unwrap_or(n);
            ((2 * u64::from(places)).saturating_sub(1), end)
        }
    }
}

/// Every dispatch of a build over `body_count` bodies at `origin`, in order (none for no body),
/// into a tree of `layout` (a prefix tree over the first `places` of the sorted order).
fn plan(layout: TreeLayout, body_count: u32, places: u32, origin: DVec3, world_padding: f32) -> Vec<Step> {
    if body_count == 0 {
        return Vec::new();
    }
    let n = body_count;
    let leaves = n.div_ceil(HEAP_LEAF_SIZE);
    let (origin_hi, origin_lo) = split_translation(origin);
    let base = GpuBvhParams {
        origin_hi: WgslVec3(origin_hi),
        body_count: n,
        origin_lo: WgslVec3(origin_lo),
        leaf_count: leaves,
        world_padding,
        ..GpuBvhParams::default()
    };
    let step = |kernel: usize, threads: u32, params: GpuBvhParams| Step {
        kernel,
        params,
        groups: threads.div_ceil(BVH_BUILD_WORKGROUP_SIZE),
    };
    let mut steps = vec![step(BOXES, n, base), step(CODES, n, base)];
    match layout {
        TreeLayout::Heap => {
            steps.push(step(LEAVES, leaves, base));
            // Levels above the deepest (depth = floor(log2(2L - 1))), bottom up; level l holds
            // nodes 2^l - 1 ..= 2^(l+1) - 2, of which those below L - 1 are inner.
            let depth = (2 * leaves - 1).ilog2();
            for level in (0..depth).rev() {
                let first = (1u32 << level) - 1;
                let last = ((1u32 << (level + 1)) - 2).min(leaves - 2);
                let count = last - first + 1;
                let params = GpuBvhParams {
                    level_first: first,
                    level_count: count,
                    ..base
                };
                steps.push(step(INNER, count, params));
            }
        }
        TreeLayout::Prefix => {
            // The pyramid after the n body boxes: level 0 the places' own boxes (not stored),
            // level 1 (written with the body list, for every body) half of it rounded up, and
            // so on until one block.
            let level1 = GpuBvhParams {
                leaf_count: places,
                level_first: n,
                ..base
            };
            steps.push(step(SORTED, n, level1));
            if places == 0 {
                return steps;
            }
            let (mut source_first, mut source_count) = (n, places.div_ceil(2));
            while source_count > 1 {
                let count = source_count.div_ceil(2);
                let params = GpuBvhParams {
                    level_first: source_first + source_count,
                    level_count: count,
                    source_first,
                    source_count,
                    ..base
                };
                steps.push(step(BLOCKS, count, params));
                (source_first, source_count) = (params.level_first, count);
            }
            steps.push(step(PREFIX, (places - 1).max(1), level1));
        }
    }
    steps
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_levels_cover_every_inner_node_once_children_first() {
        for n in [1u32, 4, 5, 8, 9, 17, 1000, 4097] {
            let steps = plan(TreeLayout::Heap, n, n, DVec3::ZERO, 0.0);
            let leaves = n.div_ceil(HEAP_LEAF_SIZE);
            let mut done = vec![false; (2 * leaves - 1) as usize];
            done[(leaves - 1) as usize..].iter_mut().for_each(|d| *d = true);
            for step in steps.iter().filter(|s| s.kernel == INNER) {
                let p = step.params;
                for k in p.level_first..p.level_first + p.level_count {
                    let k = k as usize;
                    assert!(
                        !done[k] && done[2 * k + 1] && done[2 * k + 2],
                        "{n} bodies, node {k}"
                    );
                    done[k] = true;
                }
            }
            assert!(done.iter().all(|&d| d), "{n} bodies");
        }
    }

    #[test]
    fn the_pyramid_halves_to_one_block_after_the_body_boxes() {
        let cases = [
            (1u32, 1u32),
            (2, 2),
            (3, 3),
            (5, 5),
            (8, 8),
            (9, 9),
            (1000, 1000),
            (4097, 4097),
            (9, 3),
            (5, 1),
        ];
        for (n, places) in cases {
            let steps = plan(TreeLayout::Prefix, n, places, DVec3::ZERO, 0.0);
            let sorted: Vec<_> = steps.iter().filter(|s| s.kernel == SORTED).collect();
            assert_eq!(sorted.len(), 1);
            assert_eq!(sorted[0].params.level_first, n, "{n}: level 1 after the boxes");
            // Each level reads the one written before it and halves it, rounded up.
            let (mut first, mut count) = (n, places.div_ceil(2));
            for step in steps.iter().filter(|s| s.kernel == BLOCKS) {
                let p = step.params;
                assert_eq!((p.source_first, p.source_count), (first, count), "{n} bodies");
                assert_eq!(p.level_first, first + count, "{n} bodies");
                assert_eq!(p.level_count, count.div_ceil(2), "{n} bodies");
                (first, count) = (p.level_first, p.level_count);
            }
            assert_eq!(count, 1, "{n} bodies: the pyramid ends in one block");
            let last = steps.last().unwrap();
            assert_eq!((last.kernel, last.params.level_first), (PREFIX, n));
            assert_eq!(
                slots(TreeLayout::Prefix, n, places, &steps),
                (u64::from(2 * places - 1), u64::from(first + count)),
                "{n} bodies"
            );
        }
        // Every body apart: the body list alone.
        let steps = plan(TreeLayout::Prefix, 4, 0, DVec3::ZERO, 0.0);
        let kernels: Vec<usize> = steps.iter().map(|s| s.kernel).collect();
        assert_eq!(kernels, [BOXES, CODES, SORTED]);
        assert_eq!(slots(TreeLayout::Prefix, 4, 0, &steps), (0, 4));
    }

    #[test]
    fn local_boxes_cover_the_shapes() {
        let hull = crate::hull::ConvexHull::cuboid(Vec3::new(1.0, 2.0, 3.0));
        let (table, vertices) = GpuBvhShape::tables(&[
            Shape::Sphere(crate::shape::Sphere::new(1.0).unwrap()),
            Shape::Hull(hull.clone()),
        ]);
        let local = table[1];
        assert_eq!(
            (local.first_vertex, local.vertex_count),
            (0, hull.vertices().len() as u32)
        );
        for (&v, w) in hull.vertices().iter().zip(&vertices) {
            let d = (v - Vec3::from(local.centre)).abs();
            assert!(d.cmple(local.half.into()).all());
            assert_eq!(v.extend(0.0).to_array(), *w);
            assert!(v.length() <= local.reach);
        }
    }
}

//! The GPU broadphase: candidate pairs from bodies already in a GPU buffer, left in GPU buffers
//! that [`crate::GpuNarrowphase::encode_resident`] reads through its indirect dispatch; nothing
//! is read back. WGSL twin: `shaders/broadphase/pairs.wgsl`; the CPU reference is
//! [`super::candidate_pairs`]. Per frame, into the caller's encoder:
//!
//! 1. The BVH build over the bodies (`crate::bvh`'s GPU builder: padded boxes in a frame
//!    centred on the caller's f64 `origin`, Morton codes, a radix sort, the implicit heap tree),
//!    with each box also grown by [`WORLD_PADDING`] of its world coordinates, so it contains the
//!    box the CPU computes in f32 world coordinates.
//! 2. One stackless traversal per bounded body, in the tree's body order (neighbouring
//!    invocations walk the same nodes), its box grown by the margin, over the bodies after its
//!    place in that order only (each pair is met once): each body j of an overlapping leaf gives
//!    `[min, max]` when j is bounded and the boxes overlap, or when j is a half-space (they come
//!    last) and the box comes within the margin of its plane (the CPU's rule plus
//!    [`HALF_SPACE_SLACK`]). Pairs are appended with an atomic counter, up to four per
//!    append: past the capacity they are counted, not written, so [`GpuPairCount::count`] is
//!    the true count.
//! 3. Optionally, a stable radix sort of the written pairs (`crate::gpu`'s, the count read on
//!    the GPU), by b then a, over the bits the body count needs: the CPU's order, so a frame's
//!    output is deterministic.
//!
//! The pairs are a superset of the CPU's (never one missing), the extra ones within the
//! padding; method, costs and the contract: `docs/design/gpu-broadphase.md`.

use std::sync::Arc;

use bytemuck::{Pod, Zeroable};
use encase::ShaderType;
use glam::DVec3;

use crate::bvh::gpu::{GpuBvhBuilder, TreeLayout};
use crate::gpu::buffers::{
    GrowBuffer, MIN_BUFFER_BYTES, binding, binding_up_to, check_limit, create_buffer, uniform_buffer,
};
use crate::gpu::context::ErrorScopes;
use crate::gpu::layout::GpuBody;
use crate::gpu::layout::{WgslVec3, split_translation, uniform_bytes};
use crate::gpu::pipeline::{
    bind_group, bind_group_layout, compute_pipeline_variants, grid, storage, uniform,
};
use crate::gpu::radix_sort::{GpuRadixSort, RadixKeys};
use crate::gpu::{GpuContext, GpuError, shared_context};
use crate::narrowphase::gpu::ResidentBatch;
use crate::scene::validate::validate_batch;
use crate::scene::{Body, InputError};
use crate::shape::Shape;

/// The WGSL source of the broadphase kernels: the quaternion helpers ([`crate::gpu::QUAT_WGSL`]),
/// the BVH's shared structs (`shaders/bvh/layout.wgsl`), then `shaders/broadphase/pairs.wgsl`.
pub const BROADPHASE_WGSL: &str = concat!(
    include_str!("../../shaders/common/quat.wgsl"),
    include_str!("../../shaders/common/body.wgsl"),
    include_str!("../../shaders/bvh/layout.wgsl"),
    include_str!("../../shaders/broadphase/pairs.wgsl")
);

/// Invocations per workgroup of the broadphase kernels; must match `WORKGROUP_SIZE` in
/// pairs.wgsl.
pub const BROADPHASE_WORKGROUP_SIZE: u32 = 64;

/// Growth of every body box, relative (dimensionless) to a bound on its largest world
/// coordinate magnitude: the CPU rounds each world bound outward to f32 (one ulp, at most 2^-23
/// of the coordinate) and adds the margin in f32, so its boxes of two bodies can be up to
/// 1.5 × 2^-23 of each box's coordinates farther apart than the exact ones; 2^-22 per box covers
/// that (the bound on the coordinates it multiplies is itself generous). Passed to the BVH
/// builder (no WGSL constant).
pub const WORLD_PADDING: f32 = 1.0 / (1u32 << 22) as f32;

/// Slack of the half-space test, relative (dimensionless) to a bound on the world coordinates
/// involved (the body's, the plane's translation and offset): covers the CPU's f32 world
/// arithmetic (a few ulps each) and the two sides' f32 plane normals. Must match
/// `HALF_SPACE_SLACK` in pairs.wgsl.
pub const HALF_SPACE_SLACK: f32 = 1.0 / (1u32 << 16) as f32;

/// Relative growth of the margin on the GPU, covering the f32 rounding of `margin + bound`.
pub const MARGIN_GROWTH: f32 = 1.0 / (1u32 << 20) as f32;

/// A traversal whose append finds the count at or above this stops; appends are of at most
/// four pairs, so each traversal adds at most four past it and the atomic counter never wraps
/// ([`MAX_BODIES`]); the count then means "at least" and [`SATURATED_BIT`] is set. Must match
/// `COUNT_SATURATED` in pairs.wgsl.
pub const COUNT_SATURATED: u32 = 1 << 31;

/// Most bodies [`GpuBroadphase::encode_resident`] takes: past [`COUNT_SATURATED`] each of them
/// adds at most four pairs to the count, which then stays below 2^32.
pub const MAX_BODIES: u32 = (1 << 29) - 1;

/// [`GpuPairCount::flags`] bit: the driver cut a traversal short (llvmpipe's loop budget, see
/// [`crate::gpu`]): pairs may be missing. Must match `INCOMPLETE_BIT` in pairs.wgsl.
pub const INCOMPLETE_BIT: u32 = 1;
/// [`GpuPairCount::flags`] bit: the count reached [`COUNT_SATURATED`]. Must match
/// `SATURATED_BIT` in pairs.wgsl.
pub const SATURATED_BIT: u32 = 4;

/// The pair count the kernels leave on the GPU (16 bytes at [`ResidentPairs::pair_count_offset`]);
/// must match `GpuPairCount` in pairs.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct GpuPairCount {
    /// Pairs found (all of them, also those past the capacity, which are not written).
    pub count: u32,
    /// `*_BIT` flags; 0 when the count is exact and complete.
    pub flags: u32,
    /// Padding.
    pub _pad0: u32,
    /// Padding.
    pub _pad1: u32,
}

const _: () = assert!(size_of::<GpuPairCount>() == 16);

/// Per-dispatch parameters (uniform at a dynamic offset, written with encase); must match
/// `GpuBroadphaseParams` in pairs.wgsl.
#[derive(Clone, Copy, Debug, Default, PartialEq, ShaderType)]
pub struct GpuBroadphaseParams {
    /// World position of the BVH frame's origin, high part ([`split_translation`]).
    pub origin_hi: WgslVec3,
    /// Bodies.
    pub body_count: u32,
    /// World position of the BVH frame's origin, low part.
    pub origin_lo: WgslVec3,
    /// Nodes of the tree.
    pub node_count: u32,
    /// The margin grown by [`MARGIN_GROWTH`], length units.
    pub margin: f32,
    /// Pair slots written at most.
    pub capacity: u32,
}

/// Bodies on the GPU for [`GpuBroadphase::encode_resident`]: the caller's buffer on the
/// broadphase's device, with [`wgpu::BufferUsages::STORAGE`].
#[derive(Clone, Copy, Debug)]
pub struct ResidentBodies<'a> {
    /// `array<GpuBody>` from byte 0 (the narrowphase's `GpuBody` layout, 48 bytes: unit
    /// rotation, world translation split high + low, shape index), so one buffer serves the
    /// broadphase, the narrowphase and the ray caster. Shape indices must be valid.
    pub bodies: &'a wgpu::Buffer,
    /// Bodies in the scene (the first `body_count` of `bodies`).
    pub body_count: u32,
    /// A world point near the bodies (f64, length units; their translations' centre): boxes are
    /// built in f32 relative to it, so far scenes keep tight boxes (any point is correct).
    pub origin: DVec3,
    /// Pairs within this gap of each other's boxes, length units (finite, >= 0).
    pub margin: f32,
    /// Pair slots: more pairs are counted, not written.
    pub max_pairs: u32,
    /// Sort the written pairs (`[a, b]` lexicographic), so a frame's output is deterministic.
    pub sort: bool,
}

/// Where [`GpuBroadphase::encode_resident`] leaves the pairs once the encoder is submitted,
/// named as [`crate::narrowphase::gpu::ResidentBatch`]'s fields: `pairs` holds
/// `min(count, max_pairs)` pairs `[a, b]` (`array<vec2<u32>>`, `a < b`), where `count` is the
/// first `u32` of the [`GpuPairCount`] at `pair_count_offset` of `pair_count`: the true number
/// of pairs, which may exceed `max_pairs` (read it to detect overflow; its `flags` say whether
/// it is complete). Buffers are reused by the next call unless it needs larger ones; sorted
/// pairs may lie in either of two buffers (the sort's passes ping-pong), so take `pairs` from
/// each call.
#[derive(Clone, Debug)]
pub struct ResidentPairs {
    /// The pairs, `array<vec2<u32>>` from byte 0.
    pub pairs: wgpu::Buffer,
    /// The [`GpuPairCount`].
    pub pair_count: wgpu::Buffer,
    /// Byte offset of the count in `pair_count`.
    pub pair_count_offset: u64,
    /// Pair slots: the pairs written are at most this many.
    pub max_pairs: u32,
}

impl ResidentPairs {
    /// The narrowphase's resident batch of these pairs over `bodies` (the buffer the broadphase
    /// read) with speculative `margin` (length units, >= 0): every pair slot, the count read on
    /// the GPU.
    pub fn batch<'a>(&'a self, bodies: &'a wgpu::Buffer, margin: f32) -> ResidentBatch<'a> {
        ResidentBatch {
            bodies,
            pairs: &self.pairs,
            pair_count: &self.pair_count,
            pair_count_offset: self.pair_count_offset,
            max_pairs: self.max_pairs,
            margin,
        }
    }
}

/// The kernels, compiled once per device.
struct BroadphaseKernels {
    layout: wgpu::BindGroupLayout,
    pairs: wgpu::ComputePipeline,
}

impl BroadphaseKernels {
    fn compile(context: &GpuContext) -> BroadphaseKernels {
        let device = context.device();
        let layout = bind_group_layout(
            device,
            "broadphase",
            &[
                storage(true),
                storage(true),
                storage(true),
                storage(true),
                storage(true),
                storage(false),
                storage(false),
                uniform(false, Some(GpuBroadphaseParams::min_size())),
            ],
        );
        let [pairs] = compute_pipeline_variants(
            device,
            "pairs.wgsl",
            BROADPHASE_WGSL,
            &[Some(&layout)],
            [("broadphase pairs", "pairs_main", Default::default())],
        );
        BroadphaseKernels { layout, pairs }
    }
}

/// Candidate pairs on the GPU (see the module docs): the BVH builder over the shapes, and the
/// pair, count and parameter buffers, allocated once per capacity and reused across frames.
pub struct GpuBroadphase {
    context: Arc<GpuContext>,
    shapes: Vec<Shape>,
    kernels: Arc<BroadphaseKernels>,
    builder: GpuBvhBuilder,
    pairs: GrowBuffer,
    count: wgpu::Buffer,
    params: wgpu::Buffer,
    /// Step 3's sort.
    sorter: GpuRadixSort,
    /// Host calls: uploaded bodies, the readback buffer, the last capacity used.
    bodies: GrowBuffer,
    readback: GrowBuffer,
    host_capacity: u32,
}

impl GpuBroadphase {
    /// A broadphase over `shapes` on the process-wide device ([`shared_context`]).
    ///
    /// # Errors
    /// [`GpuError`] when no device starts or the kernels do not build.
    pub fn new(shapes: impl AsRef<[Shape]>) -> Result<Self, GpuError> {
        Self::with_context(shared_context()?, shapes.as_ref())
    }

    /// A broadphase over `shapes` on `context`'s device (a renderer's, say); the kernels are
    /// compiled once per device.
    ///
    /// # Errors
    /// [`GpuError`] when the device is lost or the kernels do not build.
    pub fn with_context(context: Arc<GpuContext>, shapes: &[Shape]) -> Result<Self, GpuError> {
        context.check_health()?;
        let kernels = context.kernels(BroadphaseKernels::compile)?;
        let builder = GpuBvhBuilder::new(&context, shapes, TreeLayout::Heap, WORLD_PADDING)?;
        let sorter = GpuRadixSort::new(&context)?;
        let device = context.device();
        let scopes = ErrorScopes::push(device);
        let storage_usage = wgpu::BufferUsages::STORAGE;
        let copy = wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
        let broadphase = GpuBroadphase {
            shapes: shapes.to_vec(),
            kernels,
            builder,
            pairs: GrowBuffer::new(device, "broadphase pairs", storage_usage | copy),
            count: create_buffer(
                device,
                "broadphase pair count",
                MIN_BUFFER_BYTES,
                storage_usage | copy,
            ),
            params: uniform_buffer(
                device,
                "broadphase params",
                GpuBroadphaseParams::min_size().get().max(MIN_BUFFER_BYTES),
            ),
            sorter,
            bodies: GrowBuffer::new(
                device,
                "broadphase host bodies",
                storage_usage | wgpu::BufferUsages::COPY_DST,
            ),
            readback: GrowBuffer::new(
                device,
                "broadphase readback",
                wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            ),
            host_capacity: 0,
            context,
        };
        scopes.pop()?;
        Ok(broadphase)
    }

    /// The context this broadphase runs on.
    pub fn context(&self) -> &Arc<GpuContext> {
        &self.context
    }

    /// Records into `encoder` the broadphase over `frame`'s bodies (steps 1 to 3 of the module
    /// docs) and returns where the pairs and their count will be once it is submitted. The
    /// parameters go through the queue: submit the encoder before the next call. To run the
    /// narrowphase on the pairs in the same encoder:
    ///
    /// ```no_run
    /// # fn frame(
    /// #     broadphase: &mut hullsat::broadphase::GpuBroadphase,
    /// #     narrowphase: &mut hullsat::GpuNarrowphase,
    /// #     bodies: &wgpu::Buffer,
    /// #     body_count: u32,
    /// #     encoder: &mut wgpu::CommandEncoder,
    /// # ) -> Result<(), hullsat::GpuError> {
    /// use hullsat::broadphase::ResidentBodies;
    ///
    /// let margin = 0.01;
    /// let frame = ResidentBodies {
    ///     bodies,
    ///     body_count,
    ///     origin: hullsat::glam::DVec3::ZERO,
    ///     margin,
    ///     max_pairs: 1 << 20,
    ///     sort: false,
    /// };
    /// let pairs = broadphase.encode_resident(encoder, &frame)?;
    /// let manifolds = narrowphase.encode_resident(encoder, &pairs.batch(bodies, margin))?;
    /// # let _ = manifolds;
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// [`GpuError::Input`] naming the [`ResidentBodies`] field (a margin not finite or negative,
    /// a body buffer without `STORAGE` or too small), [`GpuError::TooLarge`] past a device
    /// limit, [`GpuError::Wgpu`] when wgpu rejects the commands.
    pub fn encode_resident(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        frame: &ResidentBodies<'_>,
    ) -> Result<ResidentPairs, GpuError> {
        self.context.check_health()?;
        check_frame(frame)?;
        let context = &*self.context;
        let limits = context.limits;
        let pair_bytes = u64::from(frame.max_pairs) * 8;
        check_limit(
            "broadphase pairs",
            pair_bytes,
            limits.max_binding,
            "max_storage_buffer_binding_size",
        )?;
        let device = context.device();
        let scopes = ErrorScopes::push(device);
        self.pairs.reserve(device, pair_bytes, limits.max_buffer);
        let recorded = self.record(encoder, frame);
        let popped = scopes.pop();
        let pairs = recorded?;
        popped?;
        Ok(ResidentPairs {
            pairs,
            pair_count: self.count.clone(),
            pair_count_offset: 0,
            max_pairs: frame.max_pairs,
        })
    }

    /// Step 1 (the builder), then the parameters and steps 2 and 3; returns the buffer that
    /// will hold the pairs.
    fn record(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        frame: &ResidentBodies<'_>,
    ) -> Result<wgpu::Buffer, GpuError> {
        let context = &*self.context;
        // The count starts at 0 whatever happens below.
        encoder.clear_buffer(&self.count, 0, None);
        if frame.body_count == 0 {
            return Ok(self.pairs.buffer.clone());
        }
        let bvh = self
            .builder
            .encode(context, encoder, frame.bodies, frame.body_count, frame.origin, 0)?;
        let (origin_hi, origin_lo) = split_translation(frame.origin);
        let params = GpuBroadphaseParams {
            origin_hi: WgslVec3(origin_hi),
            body_count: frame.body_count,
            origin_lo: WgslVec3(origin_lo),
            node_count: bvh.node_count,
            margin: frame.margin * (1.0 + MARGIN_GROWTH),
            capacity: frame.max_pairs,
        };
        context
            .queue()
            .write_buffer(&self.params, 0, &uniform_bytes(&params)?);
        let body_bytes = u64::from(frame.body_count) * size_of::<GpuBody>() as u64;
        let device = context.device();
        // Grown buffers may be larger than a binding may be: bound up to the limit.
        let whole = |index, buffer| binding_up_to(index, buffer, context.limits.max_binding);
        let group = bind_group(
            device,
            "broadphase",
            &self.kernels.layout,
            &[
                whole(0, bvh.shapes),
                binding(1, frame.bodies, 0, body_bytes),
                whole(2, bvh.boxes),
                whole(3, bvh.nodes),
                whole(4, bvh.body_list),
                whole(5, &self.pairs.buffer),
                whole(6, &self.count),
                binding(7, &self.params, 0, GpuBroadphaseParams::min_size().get()),
            ],
        );
        {
            let mut pass = context.begin_pass(encoder, "broadphase traversal");
            pass.set_bind_group(0, &group, &[]);
            pass.set_pipeline(&self.kernels.pairs);
            let (x, y) = grid(
                "broadphase dispatch",
                u64::from(frame.body_count),
                BROADPHASE_WORKGROUP_SIZE,
                context.limits.max_workgroups,
            )?;
            pass.dispatch_workgroups(x, y, 1);
        }
        if !frame.sort {
            return Ok(self.pairs.buffer.clone());
        }
        // Pairs [a, b] as the composite a * 2^bits + b, both below the body count.
        let bits = u32::BITS - (frame.body_count - 1).leading_zeros();
        let keys = RadixKeys {
            keys: &self.pairs.buffer,
            max_keys: frame.max_pairs,
            count: Some(&self.count),
            low_bits: bits,
            key_bits: 2 * bits,
            stage: "pair sort",
        };
        self.sorter.encode(context, encoder, &keys)
    }

    /// Every candidate pair of `bodies` within `margin` (length units, finite, >= 0), as
    /// [`super::candidate_pairs_at_most`] lists them: `[a, b]` with `a < b`, sorted, a superset
    /// of the CPU's list (the extra pairs within the padding of `docs/design/gpu-broadphase.md`),
    /// pairs the batch refuses (two static shapes) left out as there
    /// (here on the host: the resident list of [`Self::encode_resident`] may hold mesh-mesh,
    /// mesh-half-space pairs).
    /// Uploads the bodies, runs [`Self::encode_resident`] (sorted) and reads back; when the
    /// pairs outgrow the slots of the last call it runs again with as many slots as the count.
    ///
    /// # Errors
    /// [`GpuError::Input`] for bad bodies or margin (the CPU's messages);
    /// [`GpuError::TooManyPairs`] naming the true count when it exceeds `max_pairs`;
    /// [`GpuError::Unsupported`] when the driver cut the traversal short; device errors.
    pub fn candidate_pairs_at_most(
        &mut self,
        bodies: &[Body],
        margin: f32,
        max_pairs: usize,
    ) -> Result<Vec<[u32; 2]>, GpuError> {
        let checked = validate_batch(&self.shapes, bodies, &[], margin)?;
        let body_count = u32::try_from(checked.len())
            .map_err(|_| GpuError::Unsupported(format!("{} bodies: more than u32::MAX", checked.len())))?;
        let gpu_bodies: Vec<GpuBody> = checked
            .iter()
            .map(|b| GpuBody::from_pose(b.shape, &b.pose))
            .collect();
        let origin = scene_centre(&self.shapes, &checked);
        let limit = u32::try_from(max_pairs)
            .unwrap_or(u32::MAX)
            .min(COUNT_SATURATED - 1);
        let mut capacity = self
            .host_capacity
            .max(body_count.saturating_mul(4))
            .clamp(1, limit.max(1));
        {
            let context = &*self.context;
            self.bodies.write(
                context.device(),
                context.queue(),
                bytemuck::cast_slice(&gpu_bodies),
                context.limits.max_buffer,
            );
        }
        loop {
            let (count, pairs) = self.run_host(body_count, origin, margin, capacity)?;
            if count.flags & INCOMPLETE_BIT != 0 {
                return Err(GpuError::Unsupported(format!(
                    "the GPU broadphase's traversal was cut short (flags {:#x}): a software \
                     driver's loop budget; use the CPU broadphase",
                    count.flags
                )));
            }
            let saturated = count.flags & SATURATED_BIT != 0;
            if saturated || count.count as usize > max_pairs {
                return Err(GpuError::TooManyPairs {
                    limit: max_pairs,
                    count: u64::from(count.count),
                    at_least: saturated,
                });
            }
            if count.count <= capacity {
                self.host_capacity = capacity;
                return Ok(pairs);
            }
            capacity = count.count;
        }
    }

    /// One host frame: encode over the uploaded bodies, read back the count and the pairs.
    fn run_host(
        &mut self,
        body_count: u32,
        origin: DVec3,
        margin: f32,
        capacity: u32,
    ) -> Result<(GpuPairCount, Vec<[u32; 2]>), GpuError> {
        let context = Arc::clone(&self.context);
        let device = context.device();
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("broadphase host"),
        });
        let bodies = self.bodies.buffer.clone();
        let frame = ResidentBodies {
            bodies: &bodies,
            body_count,
            origin,
            margin,
            max_pairs: capacity,
            sort: true,
        };
        let out = self.encode_resident(&mut encoder, &frame)?;
        let pair_bytes = u64::from(capacity) * 8;
        let total = 16 + pair_bytes;
        let scopes = ErrorScopes::push(device);
        self.readback.reserve(device, total, context.limits.max_buffer);
        encoder.copy_buffer_to_buffer(&out.pair_count, 0, &self.readback.buffer, 0, 16);
        encoder.copy_buffer_to_buffer(&out.pairs, 0, &self.readback.buffer, 16, pair_bytes);
        scopes.pop()?;
        let submission = context.queue().submit([encoder.finish()]);
        context.read_mapped(submission, &self.readback.buffer, total, |view| {
            let count: GpuPairCount = bytemuck::pod_read_unaligned(&view[..16]);
            let written = (count.count.min(capacity) as usize) * 8;
            let pairs: Vec<[u32; 2]> = bytemuck::pod_collect_to_vec(&view[16..16 + written]);
            (count, pairs)
        })
    }
}

/// The host checks of a frame.
fn check_frame(frame: &ResidentBodies<'_>) -> Result<(), GpuError> {
    if !frame.margin.is_finite() || frame.margin < 0.0 {
        return Err(InputError::new("margin", "expected a finite number >= 0").into());
    }
    if frame.body_count > MAX_BODIES {
        return Err(InputError::new(
            "body_count",
            format!("{} bodies: at most {MAX_BODIES} (2^29 - 1)", frame.body_count),
        )
        .into());
    }
    if !frame.bodies.usage().contains(wgpu::BufferUsages::STORAGE) {
        return Err(InputError::new("bodies", "the buffer needs BufferUsages::STORAGE").into());
    }
    let need = u64::from(frame.body_count) * size_of::<GpuBody>() as u64;
    if need > frame.bodies.size() {
        return Err(InputError::new(
            "bodies",
            format!(
                "the buffer holds {} bytes, {} bodies need {need}",
                frame.bodies.size(),
                frame.body_count
            ),
        )
        .into());
    }
    Ok(())
}

/// The centre of the bounded bodies' translations (f64 world, length units; the world origin
/// when there is none): the BVH frame's origin for host calls.
pub fn scene_centre(shapes: &[Shape], bodies: &[Body]) -> DVec3 {
    crate::bvh::frame_of(shapes, bodies).0
}

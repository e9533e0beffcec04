//! The GPU batch narrowphase: the separating axis test and the clipping and reduction of
//! contacts in WGSL compute shaders (`shaders/narrowphase/`), one pair per invocation (a whole
//! workgroup on each SAT of big hulls, and on every SAT of a small call, whose clip then takes a
//! few invocations a pair), in A's frame. Its twin is the CPU path
//! ([`crate::narrowphase::CpuNarrowphase`]); they agree within the GPU = CPU contract
//! ([`crate::contract`]). A call runs in this order:
//!
//! 1. Validate and stage: bodies and pairs are checked as they are written into mapped staging
//!    memory on all threads (`staged`, `call_buffers`).
//! 2. Record: the SAT kernel, then the clip kernel, per dispatch chunk (`call_buffers`).
//! 3. Submit, in rounds of at most 262,144 pairs, round k + 1 before round k is read (`rounds`).
//! 4. Read back: the SAT results, or the clip kernel's compact list of pairs in contact.
//! 5. Finish each pair on the host: move it to world space, or clip or run it on the CPU where
//!    the GPU left it (`finish`). Pairs with a compound run on the GPU under [`Clipping::Gpu`]
//!    (`compound`: expanded to child pairs, SAT and clip per child pair, merged in WGSL), and
//!    so do pairs of a triangle mesh and a convex body (`mesh`: a midphase into body-triangle
//!    work items, the per-triangle contacts, merged in WGSL), both recorded after the clip
//!    kernel, in both APIs, a compound against a mesh in the mesh pass. Under
//!    [`Clipping::Cpu`] the host runs [`crate::contact::collide_compound_shape`],
//!    [`crate::contact::collide_trimesh_shape`] and their siblings.
//! 6. Restore the pair order the caller gave: [`GpuNarrowphase::collide_into`] appends the
//!    touching pairs to a [`ContactSet`] in pair order (the GPU's list comes back in pair order,
//!    `list_order`), [`GpuNarrowphase::collide`] writes its one entry per pair straight from the
//!    records read back.
//!
//! The kernels are compiled once per device (`kernels`); the hulls are uploaded once per
//! narrowphase (`geometry`). [`GpuNarrowphase::encode`] and [`GpuNarrowphase::encode_resident`]
//! record into a caller's encoder instead (`resident`: data already on the GPU). Costs, the
//! kernels' design and llvmpipe's loop budget: docs/design/gpu-narrowphase.md.

mod call_buffers;
mod compound;
pub(crate) mod finish;
mod geometry;
pub(crate) mod kernel_layout;
pub(crate) mod kernels;
pub mod layout;
pub(crate) mod list_order;
mod mesh;
pub(crate) mod order;
mod resident;
mod rounds;
mod staged;
mod timings;

use std::sync::Arc;

use crate::contact_set::ContactSet;
use crate::gpu::{GpuContext, GpuError, shared_context};
use crate::manifold::Manifold;
use crate::query::sat::SatResult;
use crate::scene::Body;
use crate::scene::validate::ValidatedBatch;
use crate::shape::Shape;
use compound::CompoundStage;
pub use compound::{COMPOUND_EXPAND_WGSL, COMPOUND_MERGE_WGSL, DEFAULT_COMPOUND_CAPACITY};
use finish::{HostFinish, ShapeFeatures};
use geometry::HullGeometry;
use kernel_layout::HullTables;
use kernels::{CLIP_UNSUPPORTED, NarrowphaseKernels};
pub use kernels::{CLIP_WGSL, RESIDENT_WGSL, SAT_SUBGROUP_WGSL, SAT_WGSL};
pub use layout::LAYOUT_WGSL;
use layout::{GpuManifold, GpuSatResult};
use mesh::MeshStage;
pub use mesh::{DEFAULT_MESH_CAPACITY, MESH_EXPAND_WGSL, MESH_MERGE_WGSL, MESH_TRIANGLE_WGSL};
use resident::ResidentState;
pub use resident::{ResidentBatch, ResidentManifolds};
use rounds::RoundRunner;
use staged::{BatchInput, PairOrder, StagedBatch};
pub use timings::GpuTimings;

/// Where [`GpuNarrowphase::collide`] turns SAT results into manifolds.
///
/// - `Gpu` (the default where the device allows it): a second kernel clips and reduces in A's
///   frame and lists only the pairs that are not separated; the host reads back about 140
///   bytes per pair in contact (112 each plus headroom) and only moves points to world space.
///   The host's per-pair work is then a few dozen nanoseconds, so it wins wherever the host is
///   the bottleneck: few CPU cores, large batches, a fast GPU. Pairs with spheres, capsules,
///   half-spaces and compounds run on the GPU too; the few pairs the kernels cannot finish (see
///   the module docs, step 5) take the CPU path.
/// - `Cpu`: the kernel's 48-byte SAT results are read back for every pair and clipped on all
///   CPU threads ([`manifold_from_sat`](crate::contact::manifold_from_sat)). Fewer bytes cross the bus when more than about a
///   third of the pairs touch; it can win on a many-core host with a slow link, and it is the
///   only choice on devices without 9 storage buffers per stage.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Clipping {
    /// Clip and reduce in the clip kernel.
    #[default]
    Gpu,
    /// Clip on the CPU from the GPU's SAT results.
    Cpu,
}

/// Batch SAT on the GPU plus CPU clipping. See the module docs. One narrowphase serves one call
/// at a time (`&mut self`); any number of them, on any threads, share the device.
pub struct GpuNarrowphase {
    /// Its device, kernels, hulls on the device and call buffers (steps 1 to 5).
    runner: RoundRunner,
    shapes: Vec<Shape>,
    /// What the feature ids of each shape's manifolds may name, for the host's checks.
    features: Vec<ShapeFeatures>,
    clipping: Clipping,
    timings: GpuTimings,
    /// The resident API's kernel and buffers, made by the first [`Self::encode_resident`].
    resident: Option<ResidentState>,
}

impl GpuNarrowphase {
    /// A narrowphase over `shapes` on the process-wide device ([`shared_context`]: created on
    /// first use, high-performance adapter; software adapters such as lavapipe count).
    /// [`GpuError::NoAdapter`] when the machine has none. `shapes`: a `Vec`, a slice or an array,
    /// as for [`crate::CpuNarrowphase::new`].
    pub fn new(shapes: impl AsRef<[Shape]>) -> Result<Self, GpuError> {
        Self::with_context(shared_context()?, shapes.as_ref())
    }

    /// Runs on a device the caller owns (a renderer's). The caller's uncaptured-error handler
    /// and device-lost callback are left in place; this type's own calls use error scopes. The
    /// kernel is compiled for this device; to share it between narrowphases, make one
    /// [`GpuContext::with_device`] and use [`Self::with_context`].
    pub fn with_device(device: wgpu::Device, queue: wgpu::Queue, shapes: &[Shape]) -> Result<Self, GpuError> {
        Self::with_context(GpuContext::with_device(device, queue)?, shapes)
    }

    /// A narrowphase over `shapes` on `context`'s device.
    pub fn with_context(context: Arc<GpuContext>, shapes: &[Shape]) -> Result<Self, GpuError> {
        context.check_health()?;
        kernel_layout::check_face_counts(shapes)?;
        let kernels = NarrowphaseKernels::of(&context)?;
        let tables = HullTables::new(shapes);
        let orderable = order::ordering_may_pay(&tables.shapes);
        let geometry = HullGeometry::upload(&context, &kernels.sat.geometry_layout, &tables, orderable)?;
        let clipping = if kernels.clip.is_some() {
            Clipping::Gpu
        } else {
            Clipping::Cpu
        };
        let compound = match &kernels.clip {
            Some(clip) if tables.has_compounds() => {
                Some(CompoundStage::new(&context, &kernels, clip, &tables)?)
            }
            _ => None,
        };
        let mesh = match &kernels.clip {
            Some(_) if tables.has_meshes() => Some(MeshStage::new(&context, &kernels, &tables)?),
            _ => None,
        };
        let mut runner = RoundRunner::new(context, kernels, geometry)?;
        runner.compound = compound;
        runner.mesh = mesh;
        Ok(GpuNarrowphase {
            runner,
            shapes: shapes.to_vec(),
            features: shapes.iter().map(ShapeFeatures::of).collect(),
            clipping,
            timings: GpuTimings::default(),
            resident: None,
        })
    }

    /// The context this narrowphase runs on.
    pub fn context(&self) -> &Arc<GpuContext> {
        &self.runner.context
    }

    /// The SAT kernel's mapping of a host call of `pairs` of `bodies` (one round) on this
    /// narrowphase: the choice [`Self::sat`], [`Self::collide`] and [`Self::encode`] make.
    pub(crate) fn sat_mapping(&self, bodies: &[Body], pairs: &[[u32; 2]]) -> kernels::SatMapping {
        let (geometry, limits) = (&self.runner.geometry, self.runner.context.limits);
        let count = pairs.len() as u64;
        let split_pairs = if geometry.counts_split_pairs(count, limits) {
            pairs
                .iter()
                .filter(|&&pair| geometry.is_split_pair(bodies, pair))
                .count() as u64
        } else {
            0
        };
        geometry.sat_mapping(count, split_pairs, limits)
    }

    /// The indirect dispatch arguments of the last [`Self::encode_resident`]
    /// (`ResidentState::dispatch_args`); `None` before the first.
    pub(crate) fn resident_dispatch_args(&self) -> Option<&wgpu::Buffer> {
        self.resident.as_ref().map(ResidentState::dispatch_args)
    }

    /// The SAT results of the last [`Self::encode_resident`], by slot (`None` before the first).
    pub(crate) fn resident_sat_results(&self) -> Option<&wgpu::Buffer> {
        self.resident.as_ref().map(ResidentState::sat_results)
    }

    /// The SAT results of the last host round, by slot.
    pub(crate) fn call_sat_results(&self) -> &wgpu::Buffer {
        self.runner.buffers.results()
    }

    /// Whether [`Self::encode_resident`], and [`Self::collide`] and its variants under
    /// [`Clipping::Gpu`], order each call's pairs by cost on the GPU before the SAT (true unless
    /// [`Self::set_cost_ordering`] switched it off).
    pub fn cost_ordering(&self) -> bool {
        self.runner.cost_ordering
    }

    /// Switches the ordering of pairs by cost on or off (on by default; the resident API's, and
    /// the host calls' under [`Clipping::Gpu`] where the SAT takes one pair per invocation): with it,
    /// each warp of the SAT and clip kernels runs pairs of like cost (by the kinds and sizes of
    /// their shapes, then for pairs with hull geometry by how far apart they lie) instead of
    /// waiting on its one expensive pair, for four more passes per call. Every output is the
    /// same either way (the list's order aside, which is unspecified); off leaves the pairs in
    /// the caller's order.
    pub fn set_cost_ordering(&mut self, on: bool) {
        self.runner.cost_ordering = on;
    }

    /// The adapter the device came from (name, backend, device type).
    pub fn adapter_info(&self) -> &wgpu::AdapterInfo {
        self.runner.context.adapter_info()
    }

    /// The device the kernel runs on (for encoders and buffers that use [`Self::encode`]).
    pub fn device(&self) -> &wgpu::Device {
        self.runner.context.device()
    }

    /// The queue the uploads go through.
    pub fn queue(&self) -> &wgpu::Queue {
        self.runner.context.queue()
    }

    /// The shapes given at construction (body `shape` fields index this).
    pub fn shapes(&self) -> &[Shape] {
        &self.shapes
    }

    /// Timings of the last [`Self::sat`] or [`Self::collide`] call.
    pub fn timings(&self) -> GpuTimings {
        self.timings
    }

    /// Child pairs (sub-pairs) one call's compound pairs may expand to on the GPU, all rounds'
    /// pairs counted per round (0 without a compound or the clip kernel). Beyond it a call fails
    /// with [`GpuError::CompoundCapacity`] naming the true count (the resident API lists the
    /// pairs [`layout::MANIFOLD_OVERFLOW`]). Each slot holds 268 bytes on the device.
    pub fn compound_capacity(&self) -> u32 {
        self.runner.compound.as_ref().map_or(0, CompoundStage::capacity)
    }

    /// Sets [`Self::compound_capacity`] (1 to one dispatch chunk of the device, at least
    /// 65,536 on devices with WebGPU's default limits), reallocating its buffers;
    /// [`GpuError::Input`] outside that range. Does nothing without compounds.
    pub fn set_compound_capacity(&mut self, sub_pairs: u32) -> Result<(), GpuError> {
        match &mut self.runner.compound {
            Some(stage) => stage.set_capacity(&self.runner.context, sub_pairs),
            None => Ok(()),
        }
    }

    /// Work items (body-triangle pairs) one call's mesh pairs may reach on the GPU, all rounds'
    /// pairs counted per round, with as many contact points (0 without a mesh or the clip
    /// kernel). Beyond it a call fails with [`GpuError::MeshCapacity`] naming the true count
    /// (the resident API lists the pairs [`layout::MANIFOLD_OVERFLOW`]); points beyond it leave
    /// their pairs to the host. Each item holds 128 bytes on the device.
    pub fn mesh_capacity(&self) -> u32 {
        self.runner.mesh.as_ref().map_or(0, MeshStage::capacity)
    }

    /// Sets [`Self::mesh_capacity`] (1 to one dispatch chunk of the device, at least 65,536 on
    /// devices with WebGPU's default limits), reallocating its buffers; [`GpuError::Input`]
    /// outside that range. Does nothing without meshes.
    pub fn set_mesh_capacity(&mut self, items: u32) -> Result<(), GpuError> {
        match &mut self.runner.mesh {
            Some(stage) => stage.set_capacity(&self.runner.context, items),
            None => Ok(()),
        }
    }

    /// Where [`Self::collide`] clips (see [`Clipping`]).
    pub fn clipping(&self) -> Clipping {
        self.clipping
    }

    /// Chooses where [`Self::collide`] clips; [`GpuError::Unsupported`] for [`Clipping::Gpu`] on a
    /// device without the clip kernel (fewer than 9 storage buffers per stage).
    pub fn set_clipping(&mut self, clipping: Clipping) -> Result<(), GpuError> {
        if clipping == Clipping::Gpu && self.runner.kernels.clip.is_none() {
            return Err(GpuError::Unsupported(CLIP_UNSUPPORTED.into()));
        }
        self.clipping = clipping;
        Ok(())
    }

    /// The SAT for every pair on the GPU, in A's frame (as [`crate::query::sat::query_hulls`] with
    /// B's pose relative to A's). `None` for pairs that are not hull–hull (they take the CPU path
    /// in [`Self::collide`]). `margin` in length units. Like every backend this computes the
    /// pairs in canonical order ([`ValidatedBatch::pair`]): for a pair given as `[a, b]` with
    /// `a > b` the result is that of `[b, a]` (b's frame, b's features first).
    pub fn sat(
        &mut self,
        bodies: &[Body],
        pairs: &[[u32; 2]],
        margin: f32,
    ) -> Result<Vec<Option<SatResult>>, GpuError> {
        let input = BatchInput::Unchecked {
            bodies,
            pairs,
            margin,
        };
        let counts = HostFinish::new(&self.features);
        let (results, timings) =
            self.runner
                .run_per_pair(&self.shapes, input, |batch, pair, raw: &GpuSatResult, result| {
                    *result = counts.sat_result(batch, pair, raw)?;
                    Ok(())
                })?;
        // No clipping here: reading the results counts as readback.
        self.timings = counts.add_to(GpuTimings {
            dispatch_readback: timings.dispatch_readback + timings.cpu_clipping,
            cpu_clipping: std::time::Duration::ZERO,
            ..timings
        });
        Ok(results)
    }

    /// Manifolds for every pair, in pair order, clipped where [`Self::clipping`] says (see
    /// [`Clipping`]). `None` when a pair is farther apart than `margin` (length units). The
    /// batch is checked as it is written into staging memory (the checks and errors of
    /// [`ValidatedBatch::new`]; their time counts as upload).
    pub fn collide(
        &mut self,
        bodies: &[Body],
        pairs: &[[u32; 2]],
        margin: f32,
    ) -> Result<Vec<Option<Manifold>>, GpuError> {
        let input = BatchInput::Unchecked {
            bodies,
            pairs,
            margin,
        };
        self.collide_input(input)
    }

    /// [`Self::collide`] on a batch the caller validated (no second check). An
    /// [`GpuError::Input`] only when it was validated against an incompatible shape list.
    pub fn collide_validated(&mut self, batch: &ValidatedBatch) -> Result<Vec<Option<Manifold>>, GpuError> {
        batch.check_shapes(&self.shapes)?;
        self.collide_input(BatchInput::Validated(batch))
    }

    /// [`Self::collide`] into `out`: cleared, then filled with the touching pairs only (pair
    /// index and manifold, in pair order; the same manifolds, bit for bit, as [`Self::collide`]
    /// on this narrowphase, which reads the same kernel output). Under [`Clipping::Gpu`] only
    /// the clip kernel's list of pairs in contact is read: the host's work is per listed pair,
    /// none per pair left out. A set reused across calls allocates nothing once warm. On an
    /// error the set is left empty.
    pub fn collide_into(
        &mut self,
        bodies: &[Body],
        pairs: &[[u32; 2]],
        margin: f32,
        out: &mut ContactSet,
    ) -> Result<(), GpuError> {
        let input = BatchInput::Unchecked {
            bodies,
            pairs,
            margin,
        };
        self.collide_input_into(input, out)
    }

    /// [`Self::collide_into`] on a batch the caller validated (no second check). An
    /// [`GpuError::Input`] (the set left empty) only when it was validated against an
    /// incompatible shape list.
    pub fn collide_validated_into(
        &mut self,
        batch: &ValidatedBatch,
        out: &mut ContactSet,
    ) -> Result<(), GpuError> {
        out.clear();
        batch.check_shapes(&self.shapes)?;
        self.collide_input_into(BatchInput::Validated(batch), out)
    }

    /// Steps 1 to 6 of a host batch into a [`ContactSet`]: rounds read straight into `out`
    /// (`rounds::read_listed_into`, `rounds::read_dense_into`), the pair order restored as each
    /// manifold is appended.
    fn collide_input_into(&mut self, input: BatchInput, out: &mut ContactSet) -> Result<(), GpuError> {
        out.clear();
        let counts = HostFinish::new(&self.features);
        let shapes = &self.shapes;
        let ran = match self.clipping {
            Clipping::Gpu => self
                .runner
                .run_with::<GpuManifold>(shapes, input, &mut |batch, round| {
                    let per_pair = |batch: &_, pair, raw: &_, manifold: &mut _| {
                        counts.clipped_on_gpu(batch, pair, raw, manifold)
                    };
                    rounds::read_listed_into(batch, round, &per_pair, out)
                }),
            Clipping::Cpu => self
                .runner
                .run_with::<GpuSatResult>(shapes, input, &mut |batch, round| {
                    let per_pair = |batch: &_, pair, raw: &_| counts.clipped_on_cpu(batch, pair, raw);
                    rounds::read_dense_into(batch, round, &per_pair, out)
                }),
        };
        match ran {
            Ok((timings, _)) => {
                self.timings = counts.add_to(timings);
                Ok(())
            }
            Err(e) => {
                out.clear();
                Err(e)
            }
        }
    }

    /// Steps 1 to 6 of a host batch (see the module docs) under [`Self::clipping`]: one entry
    /// per pair written straight from each round's records on all threads
    /// (`rounds::read_per_pair`; under [`Clipping::Gpu`] the ordered list's entries, the pairs
    /// it does not name `None`), the pair order restored as each manifold is written.
    fn collide_input(&mut self, input: BatchInput) -> Result<Vec<Option<Manifold>>, GpuError> {
        let counts = HostFinish::new(&self.features);
        let (results, timings) = match self.clipping {
            // Built in its place in the result vector, as `collide_into` builds it in the set.
            Clipping::Gpu => self.runner.run_per_pair(
                &self.shapes,
                input,
                |batch, pair, raw: &GpuManifold, result: &mut Option<Manifold>| {
                    let manifold = result.insert(Manifold::default());
                    if counts.clipped_on_gpu(batch, pair, raw, manifold)? {
                        batch.restore_pair_order(pair, manifold);
                    } else {
                        *result = None;
                    }
                    Ok(())
                },
            )?,
            Clipping::Cpu => self.runner.run_per_pair(
                &self.shapes,
                input,
                |batch, pair, raw: &GpuSatResult, result: &mut Option<Manifold>| {
                    *result = counts.clipped_on_cpu(batch, pair, raw)?;
                    if let Some(manifold) = result {
                        batch.restore_pair_order(pair, manifold);
                    }
                    Ok(())
                },
            )?,
        };
        self.timings = counts.add_to(timings);
        Ok(results)
    }

    /// Records the SAT kernel for `pairs` into `encoder` and returns the buffer that will hold one
    /// [`GpuSatResult`] per pair once the encoder is submitted (pair `i` at byte `48 * i`). In
    /// WGSL, bind it as `array<GpuSatResult>` with the struct and its `kind` constants from
    /// [`LAYOUT_WGSL`] (prepend it to the shader): a unit axis in A's frame from A toward B, the
    /// separation along it and the largest over the tested axes, the axis kind (face of A, face
    /// of B, edge pair; flagged separated, or incomplete when the driver cut the loops short:
    /// recompute on the CPU, see the module docs), the features of A and B, and the deepest axis
    /// (its kind and features: the face preference at tolerance 0, which the clip kernel
    /// retries on).
    ///
    /// A consumer that wants world space adds A's pose (normal: `pose_a.rotation * normal`).
    /// Body poses, pairs and the margin are written through the queue, so they take effect at
    /// the next submission: record one `encode` per submission. The buffer stays valid until the
    /// next call that needs a larger one. Batches whose results exceed `max_buffer_size` are
    /// [`GpuError::TooLarge`] here ([`Self::sat`] splits them).
    pub fn encode(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        bodies: &[Body],
        pairs: &[[u32; 2]],
        margin: f32,
    ) -> Result<&wgpu::Buffer, GpuError> {
        let runner = &mut self.runner;
        runner.context.check_health()?;
        let input = BatchInput::Unchecked {
            bodies,
            pairs,
            margin,
        };
        let mut batch = StagedBatch::stage_bodies(
            &mut runner.buffers,
            &runner.context,
            &self.shapes,
            input,
            PairOrder::Given,
        )?;
        // Nothing is recorded into the caller's encoder unless every pair passes.
        batch.check_pairs_first()?;
        let round = batch.round((0, pairs.len()), None, 0);
        runner.buffers.encode(
            &runner.context,
            &runner.kernels,
            encoder,
            &runner.geometry,
            round,
            (None, None),
        )?;
        Ok(runner.buffers.results())
    }

    /// The resident API: records the SAT and the clipping of a batch that is already on the
    /// GPU (bodies, pairs and the pair count in the caller's buffers, see [`ResidentBatch`])
    /// into the caller's `encoder`, and returns the list the manifolds will be in once it is
    /// submitted ([`ResidentManifolds`], which documents the WGSL structs). Nothing is read
    /// back and the host writes nothing per pair: a prepare kernel turns the count into each
    /// dispatch chunk's pair count and indirect dispatch arguments (the SAT takes one workgroup
    /// per pair below 16,384 pairs, `PAIR_PER_WORKGROUP_PAIRS`, when the shapes can form pairs
    /// worth splitting, as [`Self::collide`] may). Each pair runs in canonical order (the lower
    /// body index first, as on the host and the CPU) and is listed in the given order (A is
    /// `pairs[i].x`: the normal from it, the points in its frame); pairs the GPU cannot finish are listed with status
    /// [`layout::MANIFOLD_HOST`] (see [`ResidentManifolds`]), pairs with out-of-range indices
    /// with [`layout::MANIFOLD_INVALID`]. The margin and count offset are written through the
    /// queue, so they take effect at the next submission: record one `encode_resident` per
    /// submission. [`GpuError::Input`] names a field the host can check that is wrong (a
    /// buffer without `STORAGE` usage, `max_pairs` 0 or beyond the pair buffer, a misaligned count
    /// offset; with compounds, `max_pairs` beyond one binding of their ranges);
    /// [`GpuError::Unsupported`] on a device without the clip kernel. Compound pairs are
    /// merged on the GPU and listed once each (`MANIFOLD_OVERFLOW` when a call's child pairs
    /// exceed [`Self::compound_capacity`]), and so are mesh pairs (`MANIFOLD_OVERFLOW` past
    /// [`Self::mesh_capacity`]); a compound against a mesh is listed `MANIFOLD_HOST` (the
    /// caller computes it, e.g. with [`crate::contact::collide_shapes`]).
    pub fn encode_resident(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        batch: &ResidentBatch<'_>,
    ) -> Result<ResidentManifolds, GpuError> {
        let runner = &mut self.runner;
        runner.context.check_health()?;
        let clip = runner
            .kernels
            .clip
            .as_ref()
            .ok_or_else(|| GpuError::Unsupported(CLIP_UNSUPPORTED.into()))?;
        let state = match &mut self.resident {
            Some(state) => state,
            empty => empty.insert(ResidentState::new(&runner.context, &runner.kernels)?),
        };
        state.encode(
            &runner.context,
            &runner.kernels,
            &runner.geometry,
            clip,
            encoder,
            (batch, runner.cost_ordering),
            runner.compound.as_mut(),
            runner.mesh.as_mut(),
        )
    }
}

// A narrowphase moves between threads; the context is shared by them.
const _: () = {
    const fn send<T: Send>() {}
    const fn send_sync<T: Send + Sync>() {}
    send::<GpuNarrowphase>();
    send_sync::<GpuContext>();
};

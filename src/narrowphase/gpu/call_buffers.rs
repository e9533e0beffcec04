//! One narrowphase's per-call device buffers (bodies, pairs, SAT results, two manifold lists,
//! chunk parameters, mapped staging), their cached bind groups, and the recording of one round:
//! `shaders/narrowphase/sat.wgsl` then `clip.wgsl`, per dispatch chunk.
//!
//! 1. Bodies are written straight into a persistent mapped staging buffer on all threads
//!    ([`StagingBuffer`]) and copied to the device by the encoder; pairs and the chunks'
//!    parameters likewise, through one of two staging buffers each, so a pipelined round can be
//!    staged while the last one's copy is in flight.
//! 2. Batches beyond one binding (`max_storage_buffer_binding_size`) or one dispatch
//!    (`max_compute_workgroups_per_dimension` × 64) run as chunks, each bound to a fixed window of
//!    the pair and result buffers at a [`PARAMS_STRIDE`]-byte dynamic offset of its
//!    [`GpuParams`]. The windows depend only on the buffers, so the bind groups are built once
//!    and reused until a buffer grows. The SAT kernel runs one pair per invocation, or one
//!    workgroup per pair for a small round with enough pairs worth splitting, counted while its
//!    pairs are staged ([`super::kernels::SatMapping`]; its workgroups fit one dispatch
//!    dimension).
//!    With the clip kernel and one pair per invocation the pairs are ordered by cost first
//!    ([`OrderStage`], [`Round::ordered`]).
//! 3. The clip kernel appends every pair that is not separated to the round's compact manifold
//!    list (one pair per invocation, or a few invocations per pair after one workgroup per pair:
//!    [`ClipKernel::pipeline`]; all chunks share the list; [`GpuParams::first_pair`] makes each entry's `pair` an index in
//!    the round), whose count the encoder zeroes first. Two lists, one per pair staging slot.
//! 4. After the compound stage and the mesh pass (which list their pairs too), the list is put
//!    in pair order into the slot's ordered list ([`ListOrder`]), the one copied back; one per
//!    slot, so a pipelined round's stays intact until it is read back (a second copy of its
//!    rest may come after the next round is submitted).

use super::compound::{CallerPairs, CompoundStage};
use super::geometry::HullGeometry;
use super::kernel_layout::{GpuParams, PARAMS_STRIDE, params_binding};
use super::kernels::{ClipKernel, NarrowphaseKernels, SatMapping, chunk_pairs};
use super::layout::{GpuBody, MANIFOLD_BYTES, MANIFOLD_LIST_HEAD, PAIR_BYTES, RESULT_BYTES};
use super::list_order::ListOrder;
use super::mesh::MeshStage;
use super::order::OrderStage;
use crate::gpu::buffers::{GrowBuffer, StagingBuffer, binding, binding_up_to, check_limit};
use crate::gpu::context::ErrorScopes;
use crate::gpu::layout::write_uniform;
use crate::gpu::pipeline::bind_group;
use crate::gpu::{GpuContext, GpuError};
use crate::scene::Body;

/// What one [`CallBuffers::encode`] records.
pub(crate) struct Round<'a, P> {
    /// Number of pairs in this round.
    pub pair_count: usize,
    /// Pair `i` of this round, as the kernels read it (called once per pair, on all threads,
    /// while it is written into staging memory).
    pub pair: P,
    /// The batch's bodies (their shapes tell which pairs are split:
    /// [`HullGeometry::is_split_pair`]).
    pub bodies: &'a [Body],
    /// Speculative margin, length units.
    pub margin: f32,
    /// The clip kernel, recorded after the SAT kernel when given.
    pub clip: Option<&'a ClipKernel>,
    /// Which pair staging buffer (0 or 1) stages the pairs.
    pub slot: usize,
    /// Whether to order the pairs by cost before the SAT ([`OrderStage`]); taken only with the
    /// clip kernel (the host then reads the manifold list, whose entries name their pairs, not
    /// the results by slot) and one pair per invocation.
    pub ordered: bool,
}

/// One narrowphase's per-call buffers and their cached bind groups.
pub(crate) struct CallBuffers {
    params: GrowBuffer,
    bodies: GrowBuffer,
    pairs: GrowBuffer,
    results: GrowBuffer,
    /// The compact manifold lists, one per slot (see step 3).
    manifolds: [GrowBuffer; 2],
    /// Bodies are written here, then copied into `bodies` by the next [`Self::encode`].
    body_staging: StagingBuffer,
    /// Bytes of `body_staging` still to be copied into `bodies`.
    bodies_to_copy: u64,
    /// Pairs are written here by [`Self::encode`], then copied into `pairs`; two, so a
    /// pipelined batch can stage a round while the previous one's copy is in flight.
    pair_staging: [StagingBuffer; 2],
    /// The chunks' parameters of the round in each slot, copied into `params` (no staging
    /// buffer of the queue's own per call).
    params_staging: [StagingBuffer; 2],
    /// One SAT bind group per chunk window and one clip bind group per slot and chunk window,
    /// valid while the buffers have `groups_key`'s generations.
    groups: Vec<wgpu::BindGroup>,
    clip_groups: [Vec<wgpu::BindGroup>; 2],
    groups_key: [u64; 6],
    /// The cost ordering of [`Round::ordered`], made by the first round that takes it.
    order: Option<OrderStage>,
    /// Step 4, made by the first round with the clip kernel.
    list_order: Option<ListOrder>,
}

impl CallBuffers {
    pub fn new(device: &wgpu::Device) -> Self {
        let upload = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST;
        CallBuffers {
            params: GrowBuffer::new(
                device,
                "sat params",
                // Storage too: the ordering's `decide` clears a chunk's `ordered` on the GPU.
                wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            ),
            bodies: GrowBuffer::new(device, "bodies", upload),
            pairs: GrowBuffer::new(device, "pairs", upload),
            results: GrowBuffer::new(
                device,
                "sat results",
                wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            ),
            manifolds: [0, 1].map(|_| {
                GrowBuffer::new(
                    device,
                    "manifold list",
                    wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
                )
            }),
            body_staging: StagingBuffer::new(device, "body staging"),
            bodies_to_copy: 0,
            pair_staging: [0, 1].map(|_| StagingBuffer::new(device, "pair staging")),
            params_staging: [0, 1].map(|_| StagingBuffer::new(device, "sat params staging")),
            groups: Vec::new(),
            clip_groups: [Vec::new(), Vec::new()],
            groups_key: [u64::MAX; 6],
            order: None,
            list_order: None,
        }
    }

    /// The ordered manifold list of `slot` (step 4): after an [`Self::encode`] with `clip` and
    /// that slot, its count (a [`super::layout::GpuManifoldCount`]) and from byte
    /// [`MANIFOLD_LIST_HEAD`] that many manifolds of the round's pairs, in increasing pair
    /// order; `None` before the first round with the clip kernel.
    pub fn ordered_list(&self, slot: usize) -> Option<&wgpu::Buffer> {
        self.list_order.as_ref().map(|order| order.ordered(slot))
    }

    /// The result buffer: pair `i` of the last [`Self::encode`] at byte `48 * i`.
    pub fn results(&self) -> &wgpu::Buffer {
        &self.results.buffer
    }

    /// Step 1: writes `count` bodies `body(i)` into the staging buffer, on all threads; the next
    /// [`Self::encode`] copies them to the body buffer.
    pub fn stage_bodies(
        &mut self,
        context: &GpuContext,
        count: usize,
        body: impl Fn(usize) -> GpuBody + Sync,
    ) -> Result<(), GpuError> {
        let size = (count * size_of::<GpuBody>()) as u64;
        let max_binding = context.limits.max_binding;
        check_limit("bodies", size, max_binding, "max_storage_buffer_binding_size")?;
        let scopes = ErrorScopes::push(context.device());
        self.bodies.reserve(context.device(), size, max_binding);
        self.body_staging.write(context, count, body)?;
        self.bodies_to_copy = size;
        scopes.pop()
    }

    /// Call after submitting an encoder that [`Self::encode`] recorded into with `slot`: the
    /// staging buffers it used are mapped again for the next call.
    pub fn after_submit(&mut self, slot: usize) {
        self.body_staging.remap_after_submit();
        self.pair_staging[slot].remap_after_submit();
        self.params_staging[slot].remap_after_submit();
        if let Some(order) = &mut self.list_order {
            order.after_submit(slot);
        }
    }

    /// Steps 1 to 4: writes the round's pairs (through its pair staging buffer) and the chunks'
    /// parameters and records the SAT kernel into `encoder`, then the clip kernel when the round
    /// has it, then the compound stage and the mesh pass when given with the clip kernel, then
    /// the list's ordering. Bodies are staged. The outputs exceed no buffer limit (the caller
    /// splits rounds).
    pub fn encode(
        &mut self,
        context: &GpuContext,
        kernels: &NarrowphaseKernels,
        encoder: &mut wgpu::CommandEncoder,
        geometry: &HullGeometry,
        round: Round<impl Fn(usize) -> [u32; 2] + Sync>,
        (compound, mesh): (Option<&mut CompoundStage>, Option<&mut MeshStage>),
    ) -> Result<(), GpuError> {
        let Round {
            pair_count,
            pair,
            bodies,
            margin,
            clip,
            slot,
            ordered,
        } = round;
        let (device, limits) = (context.device(), context.limits);
        let count = pair_count as u64;
        check_limit("pairs", count * PAIR_BYTES, limits.max_buffer, "max_buffer_size")?;
        check_limit(
            "sat results",
            count * RESULT_BYTES,
            limits.max_buffer,
            "max_buffer_size",
        )?;
        // The manifold list is bound whole: it must fit one binding.
        let list_bytes = MANIFOLD_LIST_HEAD + count * MANIFOLD_BYTES;
        if clip.is_some() {
            check_limit(
                "manifold list",
                list_bytes,
                limits.max_binding,
                "max_storage_buffer_binding_size",
            )?;
        }
        if pair_count == 0 {
            return Ok(());
        }
        let scopes = ErrorScopes::push(device);
        self.body_staging
            .record_copy(encoder, &self.bodies.buffer, self.bodies_to_copy);
        self.bodies_to_copy = 0;
        let chunk = chunk_pairs(limits);
        let chunks = count.div_ceil(chunk);
        self.params
            .reserve(device, chunks * PARAMS_STRIDE, limits.max_buffer);
        self.pairs.reserve(device, count * PAIR_BYTES, limits.max_buffer);
        self.results
            .reserve(device, count * RESULT_BYTES, limits.max_buffer);
        if clip.is_some() {
            let list = &mut self.manifolds[slot];
            list.reserve(device, list_bytes, limits.max_binding);
            encoder.clear_buffer(&list.buffer, 0, Some(MANIFOLD_LIST_HEAD));
        }
        // The split pairs that choose the SAT kernel's mapping, counted as the pairs are staged
        // (only where one workgroup per pair is possible).
        let counting = geometry.counts_split_pairs(count, limits);
        let staging = &mut self.pair_staging[slot];
        let split_pairs = staging.write_tallied(context, pair_count, |i| {
            let pair = pair(i);
            (pair, counting && geometry.is_split_pair(bodies, pair))
        })?;
        staging.record_copy(encoder, &self.pairs.buffer, count * PAIR_BYTES);
        // The SAT kernel's mapping, from the round's pairs (a call's, below the rounds' size);
        // its workgroups per chunk stay within one dispatch dimension. One workgroup per pair
        // is not ordered: each pair has its own workgroup.
        let mapping = geometry.sat_mapping(count, split_pairs, limits);
        let ordered = ordered && geometry.orderable && clip.is_some() && mapping != SatMapping::PerWorkgroup;
        let mut params = vec![0u8; (chunks * PARAMS_STRIDE) as usize];
        for k in 0..chunks {
            let chunk_params = GpuParams {
                margin,
                pair_count: chunk.min(count - k * chunk) as u32,
                first_pair: (k * chunk) as u32,
                ordered: u32::from(ordered),
                canonical: 0,
            };
            let at = (k * PARAMS_STRIDE) as usize;
            write_uniform(&chunk_params, &mut params[at..at + PARAMS_STRIDE as usize])?;
        }
        let staging = &mut self.params_staging[slot];
        staging.write_bytes(context, &params)?;
        staging.record_copy(encoder, &self.params.buffer, params.len() as u64);
        self.ensure_groups(context, kernels, chunk, chunks as usize, clip, slot);
        if ordered {
            let order = match &mut self.order {
                Some(order) => order,
                empty => empty.insert(OrderStage::new(context, kernels)?),
            };
            let sat = (&self.groups[..chunks as usize], &self.params.buffer);
            order.record(context, geometry, (encoder, "order"), sat, count, (chunks, chunk));
        }
        // The clip kernel follows the SAT's mapping (a few invocations a pair after one
        // workgroup per pair).
        let passes = [
            Some((
                kernels.sat.pipeline(mapping),
                &self.groups,
                "sat",
                mapping.pairs_per_workgroup(),
            )),
            clip.map(|clip| {
                let (pipeline, per_workgroup) = clip.pipeline(mapping);
                (pipeline, &self.clip_groups[slot], "clip", per_workgroup)
            }),
        ];
        // One pass per kernel: the clip pass reads what the SAT pass wrote.
        for (pipeline, groups, label, per_workgroup) in passes.into_iter().flatten() {
            let mut pass = context.begin_pass(encoder, label);
            pass.set_pipeline(pipeline);
            pass.set_bind_group(0, &geometry.group, &[]);
            for k in 0..chunks {
                let len = chunk.min(count - k * chunk);
                pass.set_bind_group(1, &groups[k as usize], &[(k * PARAMS_STRIDE) as u32]);
                pass.dispatch_workgroups(len.div_ceil(per_workgroup) as u32, 1, 1);
            }
        }
        if let Some(clip) = clip {
            let caller = || CallerPairs {
                bodies: &self.bodies.buffer,
                pairs: &self.pairs.buffer,
                params: &self.params.buffer,
                list: &self.manifolds[slot].buffer,
                chunk,
                pair_count: count,
                margin,
                indirect: None,
            };
            if let Some(stage) = compound {
                stage.record(context, kernels, clip, geometry, encoder, caller())?;
            }
            if let Some(stage) = mesh {
                stage.record(context, geometry, encoder, caller())?;
            }
            let order = match &mut self.list_order {
                Some(order) => order,
                empty => empty.insert(ListOrder::new(context)?),
            };
            order.record(context, encoder, &self.manifolds[slot].buffer, count as u32, slot)?;
        }
        scopes.pop()
    }

    /// Builds the bind groups of the first `chunks` windows (and the clip kernel's of `slot`,
    /// when given), dropping all of them first when a buffer was reallocated since they were
    /// built.
    fn ensure_groups(
        &mut self,
        context: &GpuContext,
        kernels: &NarrowphaseKernels,
        chunk: u64,
        chunks: usize,
        clip: Option<&ClipKernel>,
        slot: usize,
    ) {
        let key = [
            self.params.generation,
            self.bodies.generation,
            self.pairs.generation,
            self.results.generation,
            self.manifolds[0].generation,
            self.manifolds[1].generation,
        ];
        if key != self.groups_key {
            self.groups.clear();
            self.clip_groups.iter_mut().for_each(Vec::clear);
            self.groups_key = key;
        }
        // The window of chunk k in a buffer of `bytes_per_pair` records.
        let window = |k: usize, buffer: &wgpu::Buffer, bytes_per_pair: u64| {
            let offset = k as u64 * chunk * bytes_per_pair;
            (offset, (chunk * bytes_per_pair).min(buffer.size() - offset))
        };
        // Bindings 0 to 3 of chunk k, the same in both kernels' call groups.
        let (bodies, pairs, results, params) = (
            &self.bodies.buffer,
            &self.pairs.buffer,
            &self.results.buffer,
            &self.params.buffer,
        );
        let call_entries = |k: usize| {
            let (pairs_at, pairs_len) = window(k, pairs, PAIR_BYTES);
            let (results_at, results_len) = window(k, results, RESULT_BYTES);
            [
                binding_up_to(0, bodies, context.limits.max_binding),
                binding(1, pairs, pairs_at, pairs_len),
                binding(2, results, results_at, results_len),
                params_binding(3, params),
            ]
        };
        while self.groups.len() < chunks {
            let entries = call_entries(self.groups.len());
            self.groups.push(bind_group(
                context.device(),
                "sat call",
                &kernels.sat.call_layout,
                &entries,
            ));
        }
        let Some(clip) = clip else {
            return;
        };
        let list = &self.manifolds[slot].buffer;
        while self.clip_groups[slot].len() < chunks {
            let [bodies, pairs, results, params] = call_entries(self.clip_groups[slot].len());
            let entries = [
                bodies,
                pairs,
                results,
                params,
                binding_up_to(4, list, context.limits.max_binding),
            ];
            self.clip_groups[slot].push(bind_group(
                context.device(),
                "clip call",
                &clip.call_layout,
                &entries,
            ));
        }
    }
}

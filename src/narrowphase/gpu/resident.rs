//! The resident API's device side ([`super::GpuNarrowphase::encode_resident`]): bodies, pairs
//! and the pair count in the caller's GPU buffers, the manifolds left in a GPU list; nothing is
//! read back or written per pair by the host.
//!
//! 1. Host checks, per call, of what the host can see: buffer usages and sizes, the count's
//!    offset, the limits. What it cannot see (the indices in the caller's pairs and bodies, the
//!    count's value) the kernels guard: a count above `max_pairs` is clamped, a pair whose body
//!    or shape index is out of range is listed as [`super::layout::MANIFOLD_INVALID`]. The
//!    range is the GPU shape table's, which holds the compounds' children after the caller's
//!    shapes: a shape index past the caller's shapes but inside the table is not caught, and
//!    its body is computed as that child.
//! 2. The prepare kernel (`resident.wgsl`, one invocation per dispatch chunk) reads the count
//!    and writes each chunk's [`GpuParams`](super::kernel_layout::GpuParams) and indirect
//!    dispatch arguments. Unless switched off
//!    ([`super::GpuNarrowphase::set_cost_ordering`]), the ordering kernels then sort each chunk's
//!    pairs by cost into a permutation the SAT and clip kernels follow (`super::order`), on
//!    the GPU's word: not under one workgroup per pair, nor in a chunk of one key.
//! 3. The SAT kernel, then the clip kernel, run per chunk with `dispatch_workgroups_indirect`
//!    over windows of the caller's pair buffer (enough chunks recorded for `max_pairs`; chunks
//!    past the count dispatch no workgroup). When the shapes can form split pairs the SAT is
//!    recorded twice, one pair per invocation and one workgroup per pair, from two more sets of
//!    arguments of which the prepare kernel leaves one empty by the count
//!    ([`HullGeometry::resident_per_workgroup_below`]), and so is the clip kernel (one pair per
//!    invocation from the first of them, a few invocations per pair from a fourth set, written
//!    only when the SAT takes one workgroup per pair); else once, one pair per invocation. The
//!    clip kernel appends to one list whose count the encoder zeroes first.
//! 4. Buffers (parameters, dispatch arguments, SAT results, the list) persist and grow; the
//!    bind groups are cached while the caller's buffers and ours stay the same.

use encase::ShaderType;

use super::compound::{CallerPairs, CompoundStage};
use super::geometry::HullGeometry;
use super::kernel_layout::{GpuResidentSetup, PARAMS_STRIDE, WORKGROUP_SIZE, params_binding};
use super::kernels::{ClipKernel, NarrowphaseKernels, SatMapping};
use super::kernels::{DISPATCH_BYTES, chunk_pairs, prepare_kernel};
use super::layout::{MANIFOLD_BYTES, MANIFOLD_LIST_HEAD, PAIR_BYTES, RESULT_BYTES};
use super::mesh::MeshStage;
use super::order::OrderStage;
use crate::gpu::buffers::{GrowBuffer, binding, binding_up_to, check_limit, uniform_buffer};
use crate::gpu::context::ErrorScopes;
use crate::gpu::layout::uniform_bytes;
use crate::gpu::pipeline::bind_group;
use crate::gpu::{GpuContext, GpuError};
use crate::scene::InputError;

/// A batch whose bodies, pairs and pair count live in the caller's GPU buffers (on the
/// narrowphase's device, each with [`wgpu::BufferUsages::STORAGE`]), for
/// [`super::GpuNarrowphase::encode_resident`].
///
/// `bodies` is read as an array of [`super::layout::GpuBody`] (48 bytes each) from byte 0,
/// bound whole, so any index below `size / 48` is a body. A caller's shader that writes it
/// declares nothing itself: it prepends [`super::LAYOUT_WGSL`] (the `GpuBody` struct the kernels
/// are compiled with, field by field documented there) and, to place points with a body's
/// rotation, [`crate::gpu::QUAT_WGSL`].
///
/// `pairs` is read as `array<vec2<u32>>` (body indices `[a, b]`) from byte 0; the first
/// `min(count, max_pairs)` are run, where `count` is the `u32` at byte `pair_count_offset` of
/// `pair_count` (which may be the pair buffer itself, or the caller's broadphase output). A is
/// `pairs[i].x`; each pair runs in canonical order (the lower body index first, as every
/// backend) and its manifold is swapped back, so a pair given either way round agrees with the
/// CPU by the GPU = CPU contract. Rotations must be unit quaternions and
/// numbers finite (the host cannot check them; results are unspecified otherwise, but nothing
/// is read out of bounds).
#[derive(Clone, Copy, Debug)]
pub struct ResidentBatch<'a> {
    /// The bodies, `array<GpuBody>` from byte 0.
    pub bodies: &'a wgpu::Buffer,
    /// The pairs, `array<vec2<u32>>` from byte 0; at least `max_pairs` of them.
    pub pairs: &'a wgpu::Buffer,
    /// The buffer holding the pair count (a `u32`).
    pub pair_count: &'a wgpu::Buffer,
    /// Byte offset of the count in `pair_count` (a multiple of 4).
    pub pair_count_offset: u64,
    /// Most pairs a call runs (a larger count is clamped): sizes the manifold list; at least 1.
    pub max_pairs: u32,
    /// Speculative margin, length units (>= 0).
    pub margin: f32,
}

/// Where [`super::GpuNarrowphase::encode_resident`] leaves the manifolds once the encoder is
/// submitted: `list` holds a [`super::layout::GpuManifoldCount`] head (the count: the first
/// `u32`), then that many [`super::layout::GpuManifold`]s from byte 16, one per pair that is not
/// separated, in no particular order. A caller's shader binds it as `GpuManifoldList` from
/// [`super::LAYOUT_WGSL`] (prepend it; it documents every field): `status` is
/// `MANIFOLD_CLIPPED` (1 to 4 points), `MANIFOLD_HOST` (not finished on the GPU, count 0; see
/// [`super::layout::MANIFOLD_HOST`] for which pairs: e.g. faces of more than 32 vertices
/// together, loops cut short by a software driver, a compound pair one of whose child pairs is
/// such; its SAT result, [`super::layout::GpuManifold::host_sat`], is of the pair in canonical
/// order, the lower body index first), `MANIFOLD_INVALID` (a body or shape index out of range, or a body paired with
/// itself: not computed; with compounds among the shapes, an index past the caller's shapes
/// that falls on a child is not caught) or `MANIFOLD_OVERFLOW` (a compound or mesh pair whose child pairs or
/// triangles passed the narrowphase's `compound_capacity` or `mesh_capacity`: not computed;
/// see [`super::layout::MANIFOLD_OVERFLOW`]); `pair` indexes the caller's pair buffer, whose
/// `.x` is A. A compound pair is listed once, merged from its child pairs as the CPU does; a
/// mesh pair once, merged from its triangles' contacts (its points' ids
/// [`crate::trimesh::mesh_feature_id`]s, the mesh A or B); a compound against a mesh once,
/// merged from all its children's triangle contacts (ids
/// [`crate::trimesh::compound_mesh_feature_id`]).
///
/// A consumer moves points to the world with A's pose (`quat_rotate(q_a, p) + translation_hi +
/// translation_lo`) and the normal with A's rotation. To use the count alone, bind `list` at
/// offset 0 with size 16, or copy its bytes 0..4 (into indirect draw arguments, say). The
/// buffer is reused by the next call (which overwrites it when it is submitted) unless that
/// call needs a larger one.
#[derive(Clone, Debug)]
pub struct ResidentManifolds {
    /// The list: head (count), then entries from byte 16.
    pub list: wgpu::Buffer,
    /// Entries the list can hold (`max_pairs`): the count never exceeds it.
    pub capacity: u32,
}

/// The prepare pipeline, one narrowphase's resident buffers and its cached bind groups.
pub(crate) struct ResidentState {
    prepare: wgpu::ComputePipeline,
    prepare_layout: wgpu::BindGroupLayout,
    setup: wgpu::Buffer,
    params: GrowBuffer,
    dispatch: GrowBuffer,
    results: GrowBuffer,
    list: GrowBuffer,
    order: OrderStage,
    groups: Option<(GroupsKey, Groups)>,
}

/// What the cached bind groups were built on.
#[derive(PartialEq)]
struct GroupsKey {
    bodies: wgpu::Buffer,
    pairs: wgpu::Buffer,
    pair_count: wgpu::Buffer,
    /// The last chunk's windows end at `max_pairs`.
    max_pairs: u32,
    chunks: u64,
    dispatch_sets: u64,
    generations: [u64; 4],
}

/// The prepare group, and one SAT and one clip group per chunk.
struct Groups {
    prepare: wgpu::BindGroup,
    sat: Vec<wgpu::BindGroup>,
    clip: Vec<wgpu::BindGroup>,
}

impl ResidentState {
    /// Compiles the prepare kernel on `context`'s device and creates the (small) buffers.
    pub fn new(context: &GpuContext, kernels: &NarrowphaseKernels) -> Result<Self, GpuError> {
        let device = context.device();
        let scopes = ErrorScopes::push(device);
        let (prepare, prepare_layout) = prepare_kernel(device);
        let storage_usage = wgpu::BufferUsages::STORAGE;
        let state = ResidentState {
            prepare,
            prepare_layout,
            setup: uniform_buffer(device, "resident setup", GpuResidentSetup::min_size().get()),
            params: GrowBuffer::new(
                device,
                "resident params",
                wgpu::BufferUsages::UNIFORM | storage_usage,
            ),
            dispatch: GrowBuffer::new(
                device,
                "resident dispatch",
                wgpu::BufferUsages::INDIRECT | storage_usage | wgpu::BufferUsages::COPY_SRC,
            ),
            results: GrowBuffer::new(
                device,
                "resident sat results",
                storage_usage | wgpu::BufferUsages::COPY_SRC,
            ),
            list: GrowBuffer::new(
                device,
                "resident manifold list",
                storage_usage | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
            ),
            order: OrderStage::new(context, kernels)?,
            groups: None,
        };
        scopes.pop()?;
        Ok(state)
    }

    /// Records steps 2 and 3 into `encoder` after the host checks (step 1), the pairs ordered
    /// by cost first when `ordered`, then the compound stage and the mesh pass when the
    /// narrowphase has them.
    #[allow(clippy::too_many_arguments)]
    pub fn encode(
        &mut self,
        context: &GpuContext,
        kernels: &NarrowphaseKernels,
        geometry: &HullGeometry,
        clip: &ClipKernel,
        encoder: &mut wgpu::CommandEncoder,
        (batch, ordered): (&ResidentBatch<'_>, bool),
        compound: Option<&mut CompoundStage>,
        mesh: Option<&mut MeshStage>,
    ) -> Result<ResidentManifolds, GpuError> {
        let limits = context.limits;
        check_batch(batch, limits.max_binding)?;
        let device = context.device();
        let max_pairs = u64::from(batch.max_pairs);
        let chunk = chunk_pairs(limits);
        let chunks = max_pairs.div_ceil(chunk);
        let per_workgroup_below = geometry.resident_per_workgroup_below(limits);
        // Ordering pays only when pairs may differ in cost and, when one workgroup per pair is
        // possible, when the capacity reaches past it (the GPU skips it per call below it).
        let ordered = ordered
            && geometry.orderable
            && (per_workgroup_below == 0 || batch.max_pairs >= per_workgroup_below);
        // The caller pairs' set, and when the SAT may take one workgroup per pair its two and
        // the clip's per-group one.
        let dispatch_sets = if per_workgroup_below == 0 { 1 } else { 4 };
        let list_bytes = MANIFOLD_LIST_HEAD + max_pairs * MANIFOLD_BYTES;
        check_limit(
            "resident manifold list",
            list_bytes,
            limits.max_binding,
            "max_storage_buffer_binding_size",
        )?;
        check_limit(
            "resident sat results",
            max_pairs * RESULT_BYTES,
            limits.max_buffer,
            "max_buffer_size",
        )?;
        let scopes = ErrorScopes::push(device);
        self.params
            .reserve(device, chunks * PARAMS_STRIDE, limits.max_buffer);
        self.dispatch
            .reserve(device, dispatch_sets * chunks * DISPATCH_BYTES, limits.max_buffer);
        self.results
            .reserve(device, max_pairs * RESULT_BYTES, limits.max_buffer);
        self.list.reserve(device, list_bytes, limits.max_binding);
        let setup = GpuResidentSetup {
            margin: batch.margin,
            max_pairs: batch.max_pairs,
            count_index: (batch.pair_count_offset / 4) as u32,
            chunk_pairs: chunk as u32,
            chunks: chunks as u32,
            per_workgroup_below,
            ordered: u32::from(ordered),
        };
        context
            .queue()
            .write_buffer(&self.setup, 0, &uniform_bytes(&setup)?);
        encoder.clear_buffer(&self.list.buffer, 0, Some(MANIFOLD_LIST_HEAD));
        if chunks > 0 {
            self.ensure_groups(context, kernels, clip, batch, chunk, (chunks, dispatch_sets));
            let (_, groups) = self.groups.as_ref().expect("built above");
            // Step 2.
            {
                let mut pass = context.begin_pass(encoder, "resident prepare");
                pass.set_pipeline(&self.prepare);
                pass.set_bind_group(2, &groups.prepare, &[]);
                pass.dispatch_workgroups(chunks.div_ceil(u64::from(WORKGROUP_SIZE)) as u32, 1, 1);
            }
            if ordered {
                self.order.record(
                    context,
                    geometry,
                    (encoder, "resident order"),
                    (&groups.sat, &self.params.buffer),
                    max_pairs,
                    (chunks, chunk),
                );
            }
            // Step 3: the SAT pass (dispatches of its mappings, each from its set of arguments:
            // the caller pairs' set, or the SAT's two), then the clip pass reading what it wrote
            // (its mappings follow the SAT's: the caller pairs' set, or the SAT's one pair per
            // invocation and the per-group set). One workgroup per pair only in the chunks that
            // start below the threshold.
            let per_invocation = geometry.resident_sat_mapping();
            let per_workgroup_chunks = u64::from(per_workgroup_below).div_ceil(chunk).min(chunks);
            let runs = match dispatch_sets {
                1 => [
                    (per_invocation, [0, 0], chunks),
                    (SatMapping::PerWorkgroup, [0, 0], 0),
                ],
                _ => [
                    (per_invocation, [1, 1], chunks),
                    (SatMapping::PerWorkgroup, [2, 3], per_workgroup_chunks),
                ],
            };
            let sat = runs.map(|(mapping, [set, _], count)| (kernels.sat.pipeline(mapping), set, count));
            let clip_runs = runs.map(|(mapping, [_, set], count)| (clip.pipeline(mapping).0, set, count));
            let passes = [
                (&sat[..], &groups.sat, "resident sat"),
                (&clip_runs[..], &groups.clip, "resident clip"),
            ];
            for (runs, chunk_groups, label) in passes {
                let mut pass = context.begin_pass(encoder, label);
                pass.set_bind_group(0, &geometry.group, &[]);
                for &(pipeline, set, count) in runs.iter().filter(|run| run.2 > 0) {
                    pass.set_pipeline(pipeline);
                    for (k, group) in chunk_groups.iter().enumerate().take(count as usize) {
                        let k = k as u64;
                        pass.set_bind_group(1, group, &[(k * PARAMS_STRIDE) as u32]);
                        let args = (set * chunks + k) * DISPATCH_BYTES;
                        pass.dispatch_workgroups_indirect(&self.dispatch.buffer, args);
                    }
                }
            }
            let caller = || CallerPairs {
                bodies: batch.bodies,
                pairs: batch.pairs,
                params: &self.params.buffer,
                list: &self.list.buffer,
                chunk,
                pair_count: max_pairs,
                margin: batch.margin,
                indirect: Some(&self.dispatch.buffer),
            };
            if let Some(stage) = compound {
                stage.record(context, kernels, clip, geometry, encoder, caller())?;
            }
            if let Some(stage) = mesh {
                stage.record(context, geometry, encoder, caller())?;
            }
        }
        scopes.pop()?;
        Ok(ResidentManifolds {
            list: self.list.buffer.clone(),
            capacity: batch.max_pairs,
        })
    }

    /// The indirect dispatch arguments the last call's prepare kernel writes: per chunk the
    /// caller pairs' (one per invocation: compound, mesh, and the clip without split pairs),
    /// then with split pairs possible the SAT's one-pair-per-invocation set (the clip's too) and
    /// one-workgroup-per-pair set and the clip's per-group set.
    pub fn dispatch_args(&self) -> &wgpu::Buffer {
        &self.dispatch.buffer
    }

    /// The SAT results of the last call, by slot: chunk `k`'s from result `k * chunk` on, each
    /// naming the pair its slot ran ([`super::layout::GpuSatResult::pair`]).
    pub fn sat_results(&self) -> &wgpu::Buffer {
        &self.results.buffer
    }

    /// Step 4: builds the bind groups unless those cached were built on the same buffers.
    fn ensure_groups(
        &mut self,
        context: &GpuContext,
        kernels: &NarrowphaseKernels,
        clip: &ClipKernel,
        batch: &ResidentBatch<'_>,
        chunk: u64,
        (chunks, dispatch_sets): (u64, u64),
    ) {
        let key = GroupsKey {
            bodies: batch.bodies.clone(),
            pairs: batch.pairs.clone(),
            pair_count: batch.pair_count.clone(),
            max_pairs: batch.max_pairs,
            chunks,
            dispatch_sets,
            generations: [
                self.params.generation,
                self.dispatch.generation,
                self.results.generation,
                self.list.generation,
            ],
        };
        if self.groups.as_ref().is_some_and(|(cached, _)| *cached == key) {
            return;
        }
        let device = context.device();
        // Caller and grown buffers may be larger than a binding may be: bound up to the limit.
        let max_binding = context.limits.max_binding;
        let prepare = bind_group(
            device,
            "resident prepare",
            &self.prepare_layout,
            &[
                binding_up_to(0, &self.setup, max_binding),
                binding_up_to(1, batch.pair_count, max_binding),
                binding(2, &self.params.buffer, 0, chunks * PARAMS_STRIDE),
                binding(
                    3,
                    &self.dispatch.buffer,
                    0,
                    dispatch_sets * chunks * DISPATCH_BYTES,
                ),
            ],
        );
        // The window of chunk k in `buffer` of `bytes_per_pair` records, `len` of them in all.
        let window = |k: u64, bytes_per_pair: u64, len: u64| {
            let offset = k * chunk * bytes_per_pair;
            (offset, (chunk * bytes_per_pair).min(len - offset))
        };
        let pair_bytes = u64::from(batch.max_pairs) * PAIR_BYTES;
        let result_bytes = u64::from(batch.max_pairs) * RESULT_BYTES;
        let list = &self.list.buffer;
        let mut sat = Vec::with_capacity(chunks as usize);
        let mut clip_groups = Vec::with_capacity(chunks as usize);
        for k in 0..chunks {
            let (pairs_at, pairs_len) = window(k, PAIR_BYTES, pair_bytes);
            let (results_at, results_len) = window(k, RESULT_BYTES, result_bytes);
            let common = [
                binding_up_to(0, batch.bodies, max_binding),
                binding(1, batch.pairs, pairs_at, pairs_len),
                binding(2, &self.results.buffer, results_at, results_len),
                params_binding(3, &self.params.buffer),
            ];
            sat.push(bind_group(
                device,
                "resident sat",
                &kernels.sat.call_layout,
                &common,
            ));
            let mut entries = common.to_vec();
            entries.push(binding_up_to(4, list, max_binding));
            clip_groups.push(bind_group(device, "resident clip", &clip.call_layout, &entries));
        }
        self.groups = Some((
            key,
            Groups {
                prepare,
                sat,
                clip: clip_groups,
            },
        ));
    }
}

/// Step 1: what the host can check of a resident batch, as [`GpuError::Input`] naming the
/// field, or [`GpuError::TooLarge`] for a buffer beyond one binding.
fn check_batch(batch: &ResidentBatch<'_>, max_binding: u64) -> Result<(), GpuError> {
    let bad = |field: &str, message: String| {
        GpuError::Input(InputError::new(format!("ResidentBatch.{field}"), message))
    };
    let buffers = [
        ("bodies", batch.bodies),
        ("pairs", batch.pairs),
        ("pair_count", batch.pair_count),
    ];
    for (field, buffer) in buffers {
        if !buffer.usage().contains(wgpu::BufferUsages::STORAGE) {
            return Err(bad(
                field,
                format!("buffer usage {:?} lacks STORAGE", buffer.usage()),
            ));
        }
    }
    if batch.bodies.size() < size_of::<super::layout::GpuBody>() as u64 {
        return Err(bad(
            "bodies",
            format!("{} bytes hold no GpuBody (48 bytes)", batch.bodies.size()),
        ));
    }
    check_limit(
        "ResidentBatch.bodies",
        batch.bodies.size(),
        max_binding,
        "max_storage_buffer_binding_size",
    )?;
    check_limit(
        "ResidentBatch.pair_count",
        batch.pair_count.size(),
        max_binding,
        "max_storage_buffer_binding_size",
    )?;
    if batch.max_pairs == 0 {
        return Err(bad(
            "max_pairs",
            "must be at least 1 (it sizes the manifold list and the dispatches)".into(),
        ));
    }
    let pair_bytes = u64::from(batch.max_pairs) * PAIR_BYTES;
    if pair_bytes > batch.pairs.size() {
        return Err(bad(
            "max_pairs",
            format!(
                "{} pairs need {pair_bytes} bytes, the pair buffer has {}",
                batch.max_pairs,
                batch.pairs.size()
            ),
        ));
    }
    let offset = batch.pair_count_offset;
    if !offset.is_multiple_of(4) || offset.saturating_add(4) > batch.pair_count.size() {
        return Err(bad(
            "pair_count_offset",
            format!(
                "{offset} is not a multiple of 4 within the count buffer's {} bytes",
                batch.pair_count.size()
            ),
        ));
    }
    if !(batch.margin >= 0.0 && batch.margin.is_finite()) {
        return Err(bad(
            "margin",
            format!("expected a finite number >= 0, got {}", batch.margin),
        ));
    }
    Ok(())
}

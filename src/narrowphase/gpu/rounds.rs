//! The host side of a batch call: rounds staged, submitted, read back and finished, pipelined.
//!
//! 1. A batch's bodies are staged (and checked, unless the caller validated them: see the
//!    `staged` module) once; its pairs run in rounds that fit one device buffer (and, for the
//!    compact manifold list, one binding) and at most [`PIPELINE_PAIRS`] pairs, each round's
//!    pairs staged (and checked) with it. Round k + 1 is staged and submitted before round k is
//!    waited for, read back and finished (two slots: pair staging, manifold lists, readback
//!    buffers).
//! 2. Dense records (the SAT kernel's [`GpuSatResult`], one per pair) are copied back whole.
//! 3. The clip kernel's compact list (only pairs that are not separated, each naming its pair),
//!    put in pair order on the GPU (`list_order`), is copied back as its count plus a prefix of
//!    entries sized from the last round's share of listed pairs (times [`LIST_HEADROOM`], plus
//!    [`LIST_SLACK`] entries; the whole list on a narrowphase's first round). When the count
//!    exceeds the prefix, the rest is copied by a second submission once the count is known:
//!    one more round trip, only when the share of listed pairs grew past the headroom. Bytes
//!    per round: 16 + 112 × (listed pairs + headroom), against 112 × pairs for a dense list.
//!    Where the device has timestamps, each round's commands are timed on the GPU: up to the
//!    copy back (staged data into device buffers, the kernels), and the copy back.
//! 4. Finishing a round reads the mapped records on all threads, front to back, each entry of
//!    the ordered list checked to name a pair of the round after the one before it, and the
//!    list's head to hold every entry listed ([`GpuError::BadResult`] otherwise). One result per pair (`sat`, `collide`) reads every
//!    dense record (`read_per_pair`), or each span of pairs' entries, found by a binary search
//!    (`read_listed_per_pair`); a [`ContactSet`] takes every dense record's touching pair
//!    (`read_dense_into`), or each entry of the ordered list written at its own place
//!    (`read_listed_into`): no work per pair left out of the list.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytemuck::Pod;
use rayon::prelude::*;

use super::call_buffers::{CallBuffers, Round};
use super::compound::CompoundStage;
use super::geometry::HullGeometry;
use super::kernels::{CLIP_UNSUPPORTED, ClipKernel, NarrowphaseKernels};
use super::layout::{GpuManifold, GpuManifoldCount, GpuSatResult, MANIFOLD_BYTES, MANIFOLD_LIST_HEAD};
use super::mesh::MeshStage;
use super::staged::{BatchInput, PairOrder, StagedBatch};
use super::timings::GpuTimings;
use crate::contact_set::ContactSet;
use crate::gpu::Timestamps;
use crate::gpu::buffers::{GrowBuffer, check_limit};
use crate::gpu::context::ErrorScopes;
use crate::gpu::{GpuContext, GpuError};
use crate::manifold::Manifold;
use crate::shape::Shape;

/// Pairs per round of a pipelined batch (larger batches overlap staging, GPU work and reading
/// back): 2 MiB of pairs, 28 MiB of manifolds per round.
const PIPELINE_PAIRS: usize = 1 << 18;

/// Fewest pairs a rayon task reads back and finishes: a clipped pair costs well under a
/// microsecond on the host, so smaller tasks would spend a noticeable share on scheduling.
const PAIRS_PER_TASK: usize = 256;

/// Step 3: the prefix of a manifold list copied with its count is the last round's share of
/// listed pairs times this, so a share that grows by up to a quarter costs no second copy.
const LIST_HEADROOM: f64 = 1.25;

/// Step 3: entries added to every prefix, so small rounds (a game's frame) whose share varies
/// more still fit: 28 KiB, a few microseconds of transfer.
const LIST_SLACK: usize = 256;

/// A record read back from the GPU: the SAT kernel's (dense), or the clip kernel's (compact).
pub(super) trait Readout: Pod {
    /// True for the clip kernel's compact list: the clip kernel runs, and only the listed
    /// pairs' records are read (pairs missing from the list are separated).
    const COMPACT: bool;
}

impl Readout for GpuSatResult {
    const COMPACT: bool = false;
}

impl Readout for GpuManifold {
    const COMPACT: bool = true;
}

/// The device side of one narrowphase: the context and kernels it runs on, its hulls on the
/// device, its call buffers and two readback buffers; runs a host batch in rounds.
pub(super) struct RoundRunner {
    pub context: Arc<GpuContext>,
    pub kernels: Arc<NarrowphaseKernels>,
    pub geometry: HullGeometry,
    pub buffers: CallBuffers,
    /// The compound stage, for a narrowphase with a compound under the clip kernel.
    pub compound: Option<CompoundStage>,
    /// The mesh pass, for a narrowphase with a triangle mesh under the clip kernel.
    pub mesh: Option<MeshStage>,
    /// Two readback buffers: a pipelined batch reads one round while the next is mapped.
    readback: [GrowBuffer; 2],
    /// Per slot, timestamps at the start of a round's commands, before its copy back and after
    /// it (`None` without timestamps on the device).
    timestamps: [Option<Timestamps>; 2],
    /// Listed (not separated) pairs per pair of the last round read back: sizes the prefix of
    /// the next manifold list copied with its count (step 3; 1 at first).
    listed_share: f64,
    /// Whether rounds with the clip kernel, and resident calls, order their pairs by cost.
    pub cost_ordering: bool,
}

/// A submitted round whose records are being mapped for reading.
struct PendingRound {
    /// Which slot (pair staging, manifold list, readback buffer) it uses.
    slot: usize,
    /// Index of its first pair in the batch.
    first: usize,
    /// Its number of pairs.
    pairs: usize,
    /// Bytes copied to the readback buffer and being mapped.
    copied: u64,
    submission: wgpu::SubmissionIndex,
    mapped: std::sync::mpsc::Receiver<Result<(), wgpu::BufferAsyncError>>,
}

impl RoundRunner {
    /// A runner over `geometry` (uploaded on `context` for `kernels`) with empty buffers.
    pub fn new(
        context: Arc<GpuContext>,
        kernels: Arc<NarrowphaseKernels>,
        geometry: HullGeometry,
    ) -> Result<Self, GpuError> {
        let device = context.device();
        let scopes = ErrorScopes::push(device);
        let buffers = CallBuffers::new(device);
        let readback = [0, 1].map(|_| {
            GrowBuffer::new(
                device,
                "readback",
                wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            )
        });
        let timestamps = [0, 1].map(|_| Timestamps::new(&context, 3));
        scopes.pop()?;
        Ok(RoundRunner {
            context,
            kernels,
            geometry,
            buffers,
            compound: None,
            mesh: None,
            readback,
            timestamps,
            listed_share: 1.0,
            cost_ordering: true,
        })
    }

    /// Stages the batch (checked unless validated: see the `staged` module; `shapes` are the
    /// narrowphase's), runs it round by round, and maps every pair's record through
    /// `per_pair(batch, pair index, record, result)` on all threads, in pair order, each result
    /// written in its place (given as `R::default()`): a dense record each, or for the ordered
    /// compact list the listed pairs' entries (the others keep `R::default()` without a call).
    /// Returns them with the timings (`incomplete_pairs` is left 0).
    pub fn run_per_pair<'a, T: Readout, R: Send + Default>(
        &mut self,
        shapes: &'a [Shape],
        input: BatchInput<'a>,
        per_pair: impl Fn(&StagedBatch<'a>, usize, &T, &mut R) -> Result<(), GpuError> + Sync,
    ) -> Result<(Vec<R>, GpuTimings), GpuError> {
        let mut out = Vec::new();
        let (timings, _) = self.run_with::<T>(shapes, input, &mut |batch, round| {
            if out.capacity() == 0 {
                out.reserve_exact(batch.pair_count());
            }
            if T::COMPACT {
                read_listed_per_pair(batch, round, &per_pair, &mut out)
            } else {
                read_per_pair(batch, round, &per_pair, &mut out)
            }
        })?;
        Ok((out, timings))
    }

    /// Stages the batch and runs it as [`Self::run_per_pair`] does, handing each round's mapped records
    /// to `read(batch, round)` in round order (pair order). Returns the timings (the reading
    /// counts as `cpu_clipping`; `incomplete_pairs` is left 0) and the staged batch.
    pub fn run_with<'a, T: Readout>(
        &mut self,
        shapes: &'a [Shape],
        input: BatchInput<'a>,
        read: &mut impl FnMut(&StagedBatch<'a>, RoundRecords<'_>) -> Result<(), GpuError>,
    ) -> Result<(GpuTimings, StagedBatch<'a>), GpuError> {
        let kernels = Arc::clone(&self.kernels);
        let clip = if T::COMPACT {
            let kernel = kernels.clip.as_ref();
            Some(kernel.ok_or_else(|| GpuError::Unsupported(CLIP_UNSUPPORTED.into()))?)
        } else {
            None
        };
        let has_timestamps = self.timestamps[0].is_some();
        let mut timings = GpuTimings {
            gpu: has_timestamps.then_some(Duration::ZERO),
            gpu_copy_back: has_timestamps.then_some(Duration::ZERO),
            ..GpuTimings::default()
        };
        self.context.check_health()?;
        let t = Instant::now();
        let batch = StagedBatch::stage_bodies(
            &mut self.buffers,
            &self.context,
            shapes,
            input,
            PairOrder::Canonical,
        )?;
        timings.upload += t.elapsed();
        // Step 1: rounds fit `max_buffer_size` (the list also one binding).
        let limits = self.context.limits;
        let per_round = if T::COMPACT {
            (limits.max_binding.min(limits.max_buffer) - MANIFOLD_LIST_HEAD) / MANIFOLD_BYTES
        } else {
            limits.max_buffer / size_of::<T>() as u64
        };
        let round_pairs = per_round.clamp(1, PIPELINE_PAIRS as u64) as usize;
        let ran = self.run_rounds::<T>(&batch, clip, round_pairs, read, &mut timings);
        if ran.is_err() {
            // Cancel mappings still pending so the next call can use the buffers; errors from
            // unmapping a buffer that is not mapped are caught here and dropped.
            let scopes = ErrorScopes::push(self.context.device());
            for readback in &self.readback {
                readback.buffer.unmap();
            }
            self.timestamps.iter_mut().flatten().for_each(Timestamps::cancel);
            let _ = scopes.pop();
        }
        ran?;
        Ok((timings, batch))
    }

    /// The rounds of [`Self::run_with`], each staged (its pairs checked) and submitted before the
    /// previous one is finished.
    fn run_rounds<'a, T: Readout>(
        &mut self,
        batch: &StagedBatch<'a>,
        clip: Option<&ClipKernel>,
        round_pairs: usize,
        read: &mut impl FnMut(&StagedBatch<'a>, RoundRecords<'_>) -> Result<(), GpuError>,
        timings: &mut GpuTimings,
    ) -> Result<(), GpuError> {
        let mut pending: Option<PendingRound> = None;
        let count = batch.pair_count();
        for (round, first) in (0..count).step_by(round_pairs).enumerate() {
            let pairs = round_pairs.min(count - first);
            let slot = round % 2;
            let t = Instant::now();
            let mut encoder = self
                .context
                .device()
                .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("sat") });
            let round = Round {
                ordered: self.cost_ordering,
                ..batch.round((first, pairs), clip, slot)
            };
            let (context, kernels) = (&self.context, &self.kernels);
            let timestamps = self.timestamps[slot].as_ref();
            if let Some(timestamps) = timestamps {
                timestamps.write(&mut encoder, 0);
            }
            let stages = (self.compound.as_mut(), self.mesh.as_mut());
            self.buffers
                .encode(context, kernels, &mut encoder, &self.geometry, round, stages)?;
            if let Some(timestamps) = timestamps {
                timestamps.write(&mut encoder, 1);
            }
            batch.pairs_passed()?;
            timings.upload += t.elapsed();
            let t = Instant::now();
            let submitted = self.submit_round::<T>(encoder, pairs, slot, first)?;
            timings.dispatch_readback += t.elapsed();
            if let Some(previous) = pending.replace(submitted) {
                self.finish_round::<T>(batch, previous, read, timings)?;
            }
        }
        match pending.take() {
            Some(last) => self.finish_round::<T>(batch, last, read, timings),
            None => Ok(()),
        }
    }

    /// Steps 2 and 3: copies the round's records (SAT results, or the manifold list's count and
    /// a prefix of it) to readback buffer `slot`, submits `encoder` and asks for the copy to be
    /// mapped (no wait). `first` is the round's first pair in the batch.
    fn submit_round<T: Readout>(
        &mut self,
        mut encoder: wgpu::CommandEncoder,
        pairs: usize,
        slot: usize,
        first: usize,
    ) -> Result<PendingRound, GpuError> {
        let (device, limits) = (self.context.device(), self.context.limits);
        let (capacity, copied, source) = if T::COMPACT {
            let expected = (self.listed_share * LIST_HEADROOM * pairs as f64).ceil() as usize;
            let prefix = (expected + LIST_SLACK).min(pairs) as u64;
            let whole = MANIFOLD_LIST_HEAD + pairs as u64 * MANIFOLD_BYTES;
            let source = self.buffers.ordered_list(slot).ok_or_else(no_list)?;
            (whole, MANIFOLD_LIST_HEAD + prefix * MANIFOLD_BYTES, source)
        } else {
            let bytes = (pairs * size_of::<T>()) as u64;
            (bytes, bytes, self.buffers.results())
        };
        check_limit("readback", capacity, limits.max_buffer, "max_buffer_size")?;
        let scopes = ErrorScopes::push(device);
        let readback = &mut self.readback[slot];
        // Room for the whole list, so a second copy (step 3) lands in the same buffer.
        readback.reserve(device, capacity, limits.max_buffer);
        encoder.copy_buffer_to_buffer(source, 0, &readback.buffer, 0, copied);
        let timestamps = &mut self.timestamps[slot];
        if let Some(timestamps) = timestamps {
            timestamps.write(&mut encoder, 2);
            timestamps.resolve(&mut encoder);
        }
        let submission = self.context.queue().submit([encoder.finish()]);
        if let Some(timestamps) = timestamps {
            timestamps.map();
        }
        self.buffers.after_submit(slot);
        let (sender, receiver) = std::sync::mpsc::channel();
        readback
            .buffer
            .map_async(wgpu::MapMode::Read, 0..copied, move |r| drop(sender.send(r)));
        scopes.pop()?;
        Ok(PendingRound {
            slot,
            first,
            pairs,
            copied,
            submission,
            mapped: receiver,
        })
    }

    /// Step 3 after the first copy is mapped: reads the list's count, checks it against the
    /// round, learns the share of listed pairs, and copies the rest of the list when the prefix
    /// was too short. Returns the count; the readback buffer is then mapped over the whole list.
    fn complete_list(&mut self, round: &PendingRound, timings: &mut GpuTimings) -> Result<usize, GpuError> {
        let readback = &self.readback[round.slot].buffer;
        let head: GpuManifoldCount = {
            let view = readback
                .get_mapped_range(0..MANIFOLD_LIST_HEAD)
                .map_err(|e| GpuError::Readback(e.to_string()))?;
            bytemuck::pod_read_unaligned(&view)
        };
        let count = head.count as usize;
        if head.listed != head.count {
            return Err(GpuError::BadResult {
                pair: round.first,
                what: format!(
                    "{} manifolds listed but {count} put in pair order: an entry named a pair \
                     outside the round of {} pairs or one listed before",
                    head.listed, round.pairs
                ),
            });
        }
        if count > round.pairs {
            return Err(GpuError::BadResult {
                pair: round.first,
                what: format!("{count} manifolds listed for a round of {} pairs", round.pairs),
            });
        }
        self.listed_share = count as f64 / round.pairs.max(1) as f64;
        timings.incident_searches_alone += head.searched_alone as usize;
        let needed = MANIFOLD_LIST_HEAD + count as u64 * MANIFOLD_BYTES;
        timings.readback_bytes += round.copied;
        if needed <= round.copied {
            return Ok(count);
        }
        // The second copy: the rest of the list, into the same readback buffer.
        readback.unmap();
        let device = self.context.device();
        let scopes = ErrorScopes::push(device);
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("manifold list rest"),
        });
        let rest = needed - round.copied;
        encoder.copy_buffer_to_buffer(
            self.buffers.ordered_list(round.slot).ok_or_else(no_list)?,
            round.copied,
            readback,
            round.copied,
            rest,
        );
        let submission = self.context.queue().submit([encoder.finish()]);
        let (sender, receiver) = std::sync::mpsc::channel();
        readback.map_async(wgpu::MapMode::Read, 0..needed, move |r| drop(sender.send(r)));
        scopes.pop()?;
        self.context.wait(submission, &receiver)?;
        timings.readback_bytes += rest;
        timings.list_second_copies += 1;
        Ok(count)
    }

    /// Step 4: waits (bounded) for a submitted round's records, hands them to `read` while
    /// mapped, and unmaps.
    fn finish_round<'a, T: Readout>(
        &mut self,
        batch: &StagedBatch<'a>,
        round: PendingRound,
        read: &mut impl FnMut(&StagedBatch<'a>, RoundRecords<'_>) -> Result<(), GpuError>,
        timings: &mut GpuTimings,
    ) -> Result<(), GpuError> {
        let t = Instant::now();
        self.context.wait(round.submission.clone(), &round.mapped)?;
        if let Some(timestamps) = &mut self.timestamps[round.slot] {
            let times = timestamps.read(&self.context, round.submission.clone())?;
            add_time(&mut timings.gpu, times[0]);
            add_time(&mut timings.gpu_copy_back, times[1]);
        }
        let listed = if T::COMPACT {
            Some(self.complete_list(&round, timings)?)
        } else {
            timings.readback_bytes += round.copied;
            None
        };
        timings.dispatch_readback += t.elapsed();
        let t = Instant::now();
        let (start, end) = match listed {
            Some(count) => (
                MANIFOLD_LIST_HEAD,
                MANIFOLD_LIST_HEAD + count as u64 * MANIFOLD_BYTES,
            ),
            None => (0, round.copied),
        };
        let readback = &self.readback[round.slot].buffer;
        let read = readback
            .get_mapped_range(0..end)
            .map_err(|e| GpuError::Readback(e.to_string()))
            .and_then(|view| {
                let records = RoundRecords {
                    first: round.first,
                    pairs: round.pairs,
                    records: &view[start as usize..],
                };
                read(batch, records)
            });
        readback.unmap();
        read?;
        timings.cpu_clipping += t.elapsed();
        Ok(())
    }
}

/// Adds `time` to a GPU time that is measured (`Some`).
fn add_time(total: &mut Option<Duration>, time: Duration) {
    if let Some(total) = total {
        *total += time;
    }
}

/// The error of a round copied back before any round recorded its ordered list (not reached:
/// a round with the clip kernel records it).
fn no_list() -> GpuError {
    GpuError::Readback("no ordered manifold list was recorded".into())
}

/// A round's records, mapped for reading (step 4).
pub(super) struct RoundRecords<'r> {
    /// Index of the round's first pair in the batch.
    pub first: usize,
    /// The round's number of pairs.
    pub pairs: usize,
    /// One record per pair (dense), or the entries of the ordered compact list.
    pub records: &'r [u8],
}

impl RoundRecords<'_> {
    /// Record `i` (a pair of the round, or an entry of the list).
    #[inline]
    fn record<T: Readout>(&self, i: usize) -> T {
        bytemuck::pod_read_unaligned(&self.records[i * size_of::<T>()..(i + 1) * size_of::<T>()])
    }

    /// The round-local pair entry `k` of the ordered list names, checked: within the round and
    /// above the pair of entry `k - 1` (the message of a [`GpuError::BadResult`] otherwise).
    fn ordered_pair(&self, k: usize) -> Result<usize, String> {
        let pair = listed_pair(self.records, k) as usize;
        if pair >= self.pairs {
            return Err(format!(
                "manifold list entry {k} names pair {pair} of a round of {}",
                self.pairs
            ));
        }
        match k
            .checked_sub(1)
            .map(|before| listed_pair(self.records, before) as usize)
        {
            Some(before) if before == pair => Err(format!("pair {pair} listed twice in the manifold list")),
            Some(before) if before > pair => Err(format!(
                "manifold list entry {k} (pair {pair}) after pair {before}: not in pair order"
            )),
            _ => Ok(pair),
        }
    }
}

/// The lowest failing pair's error among a round's readers (shared by its threads).
#[derive(Default)]
struct FirstError(Mutex<Option<(usize, GpuError)>>);

impl FirstError {
    /// Keeps `error` of pair `pair` when no lower pair failed.
    fn fail(&self, pair: usize, error: GpuError) {
        if let Ok(mut slot) = self.0.lock()
            && slot.as_ref().is_none_or(|(p, _)| pair < *p)
        {
            *slot = Some((pair, error));
        }
    }

    /// `write(result)`; on its error, `result` back to `R::default()` and the error kept as
    /// pair `pair`'s ([`Self::fail`]).
    #[inline]
    fn write_or_default<R: Default>(
        &self,
        pair: usize,
        result: &mut R,
        write: impl FnOnce(&mut R) -> Result<(), GpuError>,
    ) {
        if let Err(e) = write(result) {
            *result = R::default();
            self.fail(pair, e);
        }
    }

    /// The kept error, if any.
    fn into_result(self) -> Result<(), GpuError> {
        match self.0.into_inner() {
            Ok(None) => Ok(()),
            Ok(Some((_, error))) => Err(error),
            Err(_) => Err(GpuError::Readback("a result reader panicked".into())),
        }
    }
}

/// Step 4 for [`RoundRunner::run_per_pair`]: maps every pair's dense record of a round through
/// `per_pair` on all threads straight into `out` (in pair order). A failing pair leaves its
/// default; the error of the lowest failing pair is returned.
fn read_per_pair<'a, T: Readout, R: Send + Default>(
    batch: &StagedBatch<'a>,
    round: RoundRecords<'_>,
    per_pair: &(impl Fn(&StagedBatch<'a>, usize, &T, &mut R) -> Result<(), GpuError> + Sync),
    out: &mut Vec<R>,
) -> Result<(), GpuError> {
    let errors = FirstError::default();
    let start = out.len();
    out.reserve(round.pairs);
    out.spare_capacity_mut()[..round.pairs]
        .par_chunks_mut(PAIRS_PER_TASK)
        .enumerate()
        .for_each(|(task, slots)| {
            for (i, slot) in (task * PAIRS_PER_TASK..).zip(slots) {
                let pair = round.first + i;
                errors.write_or_default(pair, slot.write(R::default()), |result| {
                    per_pair(batch, pair, &round.record::<T>(i), result)
                });
            }
        });
    // SAFETY: every slot of the round was written above (each chunk writes all of its own).
    unsafe { out.set_len(start + round.pairs) };
    errors.into_result()
}

/// Step 4 for [`RoundRunner::run_per_pair`], ordered compact list: every pair of a round gets
/// `per_pair` of its entry or `R::default()` when it has none, on all threads straight into
/// `out` ([`spread_listed`]). A failing pair leaves its default; the error of the lowest
/// failing pair is returned.
fn read_listed_per_pair<'a, T: Readout, R: Send + Default>(
    batch: &StagedBatch<'a>,
    round: RoundRecords<'_>,
    per_pair: &(impl Fn(&StagedBatch<'a>, usize, &T, &mut R) -> Result<(), GpuError> + Sync),
    out: &mut Vec<R>,
) -> Result<(), GpuError> {
    spread_listed(&round, out, |pair, k, result| {
        per_pair(batch, pair, &round.record::<T>(k), result)
    })
}

/// One result per pair of a round from its ordered list (whole [`GpuManifold`]s), appended to
/// `out`, each built in its place: `value(pair, entry, result)` writes each listed pair's (its
/// index in the batch, its entry), the others keep `R::default()`. Each task takes a span of
/// pairs and the entries from the first naming a pair of the span (a binary search: the list
/// is in pair order) to the first naming a later one, each checked as it is read
/// ([`RoundRecords::ordered_pair`]); a task that does not use up exactly that range found the
/// list out of order ([`GpuError::BadResult`]). The error of the lowest failing pair or entry
/// is returned.
fn spread_listed<R: Send + Default>(
    round: &RoundRecords<'_>,
    out: &mut Vec<R>,
    value: impl Fn(usize, usize, &mut R) -> Result<(), GpuError> + Sync,
) -> Result<(), GpuError> {
    let errors = FirstError::default();
    let count = round.records.len() / size_of::<GpuManifold>();
    // The first entry naming pair `i` of the round or a later one.
    let first_entry = |i: usize| {
        let (mut low, mut high) = (0, count);
        while low < high {
            let middle = (low + high) / 2;
            if (listed_pair(round.records, middle) as usize) < i {
                low = middle + 1;
            } else {
                high = middle;
            }
        }
        low
    };
    let bad_list = |k: usize, what: String| {
        let pair = round.first;
        errors.fail(pair + k, GpuError::BadResult { pair, what });
    };
    let start = out.len();
    out.reserve(round.pairs);
    let slots = &mut out.spare_capacity_mut()[..round.pairs];
    slots
        .par_chunks_mut(PAIRS_PER_TASK)
        .enumerate()
        .for_each(|(task, slots)| {
            let span = task * PAIRS_PER_TASK..task * PAIRS_PER_TASK + slots.len();
            let (mut k, end) = (first_entry(span.start), first_entry(span.end));
            for (i, slot) in span.clone().zip(slots) {
                let listed = k < end && listed_pair(round.records, k) as usize == i;
                let result = slot.write(R::default());
                match listed.then(|| round.ordered_pair(k)) {
                    Some(Ok(_)) => {
                        k += 1;
                        let pair = round.first + i;
                        errors.write_or_default(pair, result, |result| value(pair, k - 1, result));
                    }
                    Some(Err(what)) => bad_list(k, what),
                    None => {}
                }
            }
            // Entries of the span left unread: out of order, repeated, or past the round.
            if k < end || (span.end == round.pairs && end < count) {
                let what = match round.ordered_pair(k) {
                    Err(what) => what,
                    Ok(pair) => format!("manifold list entry {k} (pair {pair}) not in pair order"),
                };
                bad_list(k, what);
            }
        });
    // SAFETY: every slot of the round was written above (each chunk writes all of its own).
    unsafe { out.set_len(start + round.pairs) };
    errors.into_result()
}

/// Step 4 into a [`ContactSet`], dense records: each pair's record of a round through
/// `per_pair` (its manifold as computed, canonical order) on all threads, the touching pairs
/// appended to `out` in pair order with the given pair order restored.
pub(super) fn read_dense_into<'a, T: Readout>(
    batch: &StagedBatch<'a>,
    round: RoundRecords<'_>,
    per_pair: &(impl Fn(&StagedBatch<'a>, usize, &T) -> Result<Option<Manifold>, GpuError> + Sync),
    out: &mut ContactSet,
) -> Result<(), GpuError> {
    let errors = FirstError::default();
    out.append_chunked(round.pairs, PAIRS_PER_TASK, |first, count, buffer| {
        for i in first..first + count {
            let pair = round.first + i;
            match per_pair(batch, pair, &round.record::<T>(i)) {
                Ok(Some(mut manifold)) => {
                    batch.restore_pair_order(pair, &mut manifold);
                    buffer.push(pair, manifold);
                }
                Ok(None) => {}
                Err(e) => errors.fail(pair, e),
            }
        }
    });
    errors.into_result()
}

/// Step 4 into a [`ContactSet`], compact list: the entries of the ordered list, each checked
/// ([`RoundRecords::ordered_pair`]), go through `per_pair` on all threads and land at their own
/// places in `out` (entry k at k past the set's end, the pairs left out removed after), the
/// given pair order restored. Work per listed pair only.
pub(super) fn read_listed_into<'a>(
    batch: &StagedBatch<'a>,
    round: RoundRecords<'_>,
    per_pair: &(impl Fn(&StagedBatch<'a>, usize, &GpuManifold, &mut Manifold) -> Result<bool, GpuError> + Sync),
    out: &mut ContactSet,
) -> Result<(), GpuError> {
    let errors = FirstError::default();
    let count = round.records.len() / size_of::<GpuManifold>();
    out.append_ordered(count, PAIRS_PER_TASK, |k, manifold| {
        let pair = match round.ordered_pair(k) {
            Ok(i) => round.first + i,
            Err(what) => {
                // Keyed by the entry (below its pair's index): the first bad entry's error wins.
                let pair = round.first;
                errors.fail(pair + k, GpuError::BadResult { pair, what });
                return None;
            }
        };
        match per_pair(batch, pair, &round.record::<GpuManifold>(k), manifold) {
            Ok(true) => {
                batch.restore_pair_order(pair, manifold);
                Some(pair as u32)
            }
            Ok(false) => None,
            Err(e) => {
                errors.fail(pair, e);
                None
            }
        }
    });
    errors.into_result()
}

/// The round-local pair entry `k` of a compact list (whole [`GpuManifold`]s) names.
#[inline]
fn listed_pair(list: &[u8], k: usize) -> u32 {
    let at = k * size_of::<GpuManifold>() + std::mem::offset_of!(GpuManifold, pair);
    bytemuck::pod_read_unaligned(&list[at..at + 4])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A list of entries naming `pairs`, as the ordering leaves it.
    fn list(pairs: &[u32]) -> Vec<u8> {
        let entries: Vec<GpuManifold> = pairs
            .iter()
            .map(|&pair| GpuManifold {
                pair,
                ..GpuManifold::default()
            })
            .collect();
        bytemuck::cast_slice(&entries).to_vec()
    }

    /// Each entry's checked pair, for a round of `pairs` pairs at batch pair 100.
    fn checked(listed: &[u32], pairs: usize) -> Vec<Result<usize, String>> {
        let bytes = list(listed);
        let round = RoundRecords {
            first: 100,
            pairs,
            records: &bytes,
        };
        (0..listed.len()).map(|k| round.ordered_pair(k)).collect()
    }

    #[test]
    fn ordered_list_entries_are_checked_in_range_and_increasing() {
        assert_eq!(checked(&[0, 2, 3, 9], 10), [Ok(0), Ok(2), Ok(3), Ok(9)]);
        let outside = checked(&[1, 10], 10);
        assert_eq!(
            outside[1],
            Err("manifold list entry 1 names pair 10 of a round of 10".into())
        );
        let twice = checked(&[1, 4, 4], 10);
        assert_eq!(twice[2], Err("pair 4 listed twice in the manifold list".into()));
        let unordered = checked(&[1, 5, 3], 10);
        assert_eq!(
            unordered[2],
            Err("manifold list entry 2 (pair 3) after pair 5: not in pair order".into())
        );
        assert_eq!(unordered[1], Ok(5));
    }

    /// Each pair's entry (as `Some(entry)`) from a list naming `listed` in a round of `pairs`
    /// pairs at batch pair 100, or the error.
    fn spread(listed: &[u32], pairs: usize) -> Result<Vec<Option<usize>>, GpuError> {
        let bytes = list(listed);
        let round = RoundRecords {
            first: 100,
            pairs,
            records: &bytes,
        };
        let mut out = Vec::new();
        spread_listed(&round, &mut out, |pair, k, result| {
            assert_eq!(pair, 100 + listed[k] as usize);
            *result = Some(k);
            Ok(())
        })?;
        Ok(out)
    }

    #[test]
    fn an_ordered_list_spreads_over_its_pairs_and_a_disordered_one_fails() {
        // Spans of PAIRS_PER_TASK pairs: entries in several spans, one span without any.
        let pairs = 3 * PAIRS_PER_TASK + 5;
        let listed: Vec<u32> = [1, 2, PAIRS_PER_TASK - 1, 2 * PAIRS_PER_TASK + 7, pairs - 1]
            .map(|p| p as u32)
            .to_vec();
        let spread_out = spread(&listed, pairs).expect("an ordered list");
        assert_eq!(spread_out.len(), pairs);
        for (k, &pair) in listed.iter().enumerate() {
            assert_eq!(spread_out[pair as usize], Some(k));
        }
        assert_eq!(spread_out.iter().flatten().count(), listed.len());
        let bad = |listed: &[u32]| match spread(listed, pairs) {
            Err(GpuError::BadResult { pair: 100, what }) => what,
            other => panic!("{listed:?}: {other:?}"),
        };
        let p = PAIRS_PER_TASK as u32;
        assert!(bad(&[1, 4, 4]).contains("pair 4 listed twice"));
        assert!(
            bad(&[1, p + 3, 2]).contains("not in pair order"),
            "{}",
            bad(&[1, p + 3, 2])
        );
        assert!(bad(&[1, 2 * p, p]).contains("not in pair order"));
        assert!(bad(&[1, pairs as u32]).contains(&format!("names pair {pairs} of a round")));
    }
}

//! Per-stage GPU times of recorded work, from compute-pass timestamps.
//!
//! 1. Every compute pass of this crate begins through [`GpuContext::begin_pass`], labelled by
//!    its stage ("bvh morton", "resident sat", ...). With no [`StageTimer`] on the context that
//!    is a plain pass: one relaxed atomic load more, nothing written.
//! 2. [`StageTimer::start`] turns the log on: each pass then gets a begin and an end timestamp
//!    in query sets of `SET_QUERIES`, made as the passes need them (at most
//!    [`MAX_TIMED_PASSES`](super::MAX_TIMED_PASSES); passes past it run untimed and are counted).
//!    [`StageTimer::end_run`] closes a run (one frame, one call).
//! 3. [`StageTimer::finish`] turns the log off, resolves every query set into one buffer, reads
//!    it once (bounded wait) and sums each run's pass times by label.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use super::context::ErrorScopes;
use super::stage_log::{SET_QUERIES, StageRecord};
use super::timestamps::{TIMESTAMP_BYTES, resolve_buffers};
use super::{GpuContext, GpuError};

impl GpuContext {
    /// Step 1: a compute pass in `encoder` labelled `label`, timed as stage `label` while a
    /// [`StageTimer`] is on for this context (a plain pass otherwise).
    pub fn begin_pass<'e>(
        &self,
        encoder: &'e mut wgpu::CommandEncoder,
        label: &'static str,
    ) -> wgpu::ComputePass<'e> {
        let timed = self.stages.next_pass(self.device(), label);
        encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some(label),
            timestamp_writes: timed
                .as_ref()
                .map(|(query_set, first)| wgpu::ComputePassTimestampWrites {
                    query_set,
                    beginning_of_pass_write_index: Some(*first),
                    end_of_pass_write_index: Some(first + 1),
                }),
        })
    }
}

/// One stage's GPU time in each run: the sum over its passes, from their timestamps.
#[derive(Clone, Debug, PartialEq)]
pub struct StageTime {
    /// The passes' label ([`GpuContext::begin_pass`]).
    pub label: &'static str,
    /// Per run in order, the time between each pass's begin and end timestamps, summed (zero
    /// in a run without such a pass, or where the device's clock did not advance).
    pub runs: Vec<Duration>,
}

/// What a [`StageTimer`] measured.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StageTimes {
    /// The stages in the order their first pass was recorded.
    pub stages: Vec<StageTime>,
    /// Runs: those closed by [`StageTimer::end_run`], plus one for passes recorded after the
    /// last close.
    pub runs: usize,
    /// Passes recorded untimed, past [`MAX_TIMED_PASSES`](super::MAX_TIMED_PASSES).
    pub untimed_passes: usize,
}

/// Times every compute pass recorded on a context, by stage (see the module docs). Every pass
/// on the context is timed while it is on, from any thread; one timer per context at a time.
/// Dropped without [`Self::finish`], it turns the log off and reads nothing.
pub struct StageTimer {
    context: Arc<GpuContext>,
}

impl StageTimer {
    /// Step 2: turns the stage log of `context` on. `None` when the device has no timestamp
    /// queries ([`wgpu::Features::TIMESTAMP_QUERY`]); [`GpuError::Unsupported`] when a timer is
    /// already on for it.
    pub fn start(context: &Arc<GpuContext>) -> Result<Option<StageTimer>, GpuError> {
        if !context
            .device()
            .features()
            .contains(wgpu::Features::TIMESTAMP_QUERY)
        {
            return Ok(None);
        }
        let log = &context.stages;
        let mut record = log
            .record
            .lock()
            .map_err(|_| GpuError::Wgpu("stage log poisoned".into()))?;
        if record.is_some() {
            return Err(GpuError::Unsupported(
                "a stage timer is already on for this GPU context".into(),
            ));
        }
        *record = Some(StageRecord {
            sets: Vec::new(),
            passes: Vec::new(),
            run: 0,
            untimed: 0,
        });
        log.on.store(true, Ordering::Relaxed);
        Ok(Some(StageTimer {
            context: Arc::clone(context),
        }))
    }

    /// Step 2: closes the current run; passes recorded next belong to the next one.
    pub fn end_run(&self) {
        if let Ok(mut record) = self.context.stages.record.lock()
            && let Some(record) = record.as_mut()
        {
            record.run += 1;
        }
    }

    /// Step 3: turns the log off, reads every timestamp back (bounded wait) and gives each
    /// stage's time per run. Submit every encoder recorded while on first: a pass never
    /// submitted leaves its timestamps unwritten.
    pub fn finish(self) -> Result<StageTimes, GpuError> {
        let context = &*self.context;
        let Some(record) = context.stages.take() else {
            return Ok(StageTimes::default());
        };
        let runs = record.run + usize::from(record.passes.last().is_some_and(|p| p.1 == record.run));
        let mut times = StageTimes {
            stages: Vec::new(),
            runs,
            untimed_passes: record.untimed,
        };
        if record.passes.is_empty() {
            return Ok(times);
        }
        let ticks = read_ticks(context, &record)?;
        let nanos_per_tick = f64::from(context.queue().get_timestamp_period());
        for (pass, &(label, run)) in record.passes.iter().enumerate() {
            let ticks = ticks[2 * pass + 1].saturating_sub(ticks[2 * pass]);
            let time = Duration::from_nanos((ticks as f64 * nanos_per_tick) as u64);
            let stage = match times.stages.iter().position(|s| s.label == label) {
                Some(found) => found,
                None => {
                    times.stages.push(StageTime {
                        label,
                        runs: vec![Duration::ZERO; runs],
                    });
                    times.stages.len() - 1
                }
            };
            times.stages[stage].runs[run] += time;
        }
        Ok(times)
    }
}

impl Drop for StageTimer {
    fn drop(&mut self) {
        self.context.stages.take();
    }
}

/// Step 3: every timestamp of `record`, in ticks, resolved set by set into one buffer and read
/// back once.
fn read_ticks(context: &GpuContext, record: &StageRecord) -> Result<Vec<u64>, GpuError> {
    let device = context.device();
    let queries = 2 * record.passes.len() as u64;
    let bytes = queries * TIMESTAMP_BYTES;
    let scopes = ErrorScopes::push(device);
    let (resolved, readback) = resolve_buffers(device, bytes, "stage timestamps");
    let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
        label: Some("stage timestamps"),
    });
    // Set k's queries land at k * SET_QUERIES (a multiple of the 256-byte resolve alignment).
    for (k, set) in record.sets.iter().enumerate() {
        let first = k as u64 * u64::from(SET_QUERIES);
        let count = (queries - first).min(u64::from(SET_QUERIES)) as u32;
        encoder.resolve_query_set(set, 0..count, &resolved, first * TIMESTAMP_BYTES);
    }
    encoder.copy_buffer_to_buffer(&resolved, 0, &readback, 0, bytes);
    let submission = context.queue().submit([encoder.finish()]);
    scopes.pop()?;
    context.read_mapped(submission, &readback, bytes, |view| {
        bytemuck::pod_collect_to_vec(view)
    })
}

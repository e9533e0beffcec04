//! `hullsat bench --gpu-stages`: the GPU time of each stage of a resident backend's timed runs,
//! from compute-pass timestamps ([`StageTimer`]).
//!
//! 1. After the warm-up run, [`start`] turns the shared context's stage timer on (a note on
//!    stderr, and no timer, when the device has no timestamp queries).
//! 2. Each timed run ends with [`StageTimer::end_run`]; [`finish`] then reads every timestamp
//!    once and gives each stage's median over the runs (a pass's time is its begin-to-end
//!    timestamps; a stage's in a run is the sum over its passes).
//! 3. [`lines`] and [`to_json`] print them after the table and on the backend's JSON object.

use std::time::Duration;

use hullsat::gpu::{GpuContext, MAX_TIMED_PASSES, StageTimer};
use serde_json::json;

use super::{CliError, median, output};

/// One stage's median GPU time over the timed runs.
#[derive(Clone, Debug)]
pub(super) struct StageMedian {
    /// The passes' label.
    pub label: &'static str,
    pub median: Duration,
}

/// Step 1: the stage timer on `context` when `wanted` (the flag); `None` when not wanted or
/// after a note that the device (`backend` runs on it) has no timestamp queries.
pub(super) fn start(
    context: &std::sync::Arc<GpuContext>,
    wanted: bool,
    backend: &str,
) -> Result<Option<StageTimer>, CliError> {
    if !wanted {
        return Ok(None);
    }
    let timer = StageTimer::start(context)?;
    if timer.is_none() {
        output::note(&format!(
            "note: --gpu-stages: {} has no timestamp queries; {backend}'s stages are not timed",
            context.adapter_info().name
        ));
    }
    Ok(timer)
}

/// Step 2: closes a timed run.
pub(super) fn end_run(timer: &Option<StageTimer>) {
    if let Some(timer) = timer {
        timer.end_run();
    }
}

/// Step 2: each stage's median over the runs, in the order the stages first ran.
pub(super) fn finish(timer: Option<StageTimer>) -> Result<Option<Vec<StageMedian>>, CliError> {
    let Some(timer) = timer else {
        return Ok(None);
    };
    let times = timer.finish()?;
    if times.untimed_passes > 0 {
        output::note(&format!(
            "note: --gpu-stages timed the first {MAX_TIMED_PASSES} passes; {} more ran untimed",
            times.untimed_passes
        ));
    }
    Ok(Some(
        times
            .stages
            .iter()
            .map(|stage| StageMedian {
                label: stage.label,
                median: median(&stage.runs),
            })
            .collect(),
    ))
}

/// Step 3: a header naming `backend` and the sum against `run_median` (the runs' median),
/// then one line per stage: label, median, share of the stages' sum.
pub(super) fn lines(backend: &str, stages: &[StageMedian], runs: u32, run_median: Duration) -> Vec<String> {
    let ms = |t: Duration| t.as_secs_f64() * 1e3;
    let sum: Duration = stages.iter().map(|s| s.median).sum();
    let mut lines = vec![format!(
        "{backend} GPU stages (compute-pass timestamps, medians of {runs} runs): {:.3} ms in all, \
         the run's median {:.3} ms",
        ms(sum),
        ms(run_median)
    )];
    for stage in stages {
        let share = 100.0 * stage.median.as_secs_f64() / sum.as_secs_f64().max(f64::MIN_POSITIVE);
        lines.push(format!(
            "  {:<22} {:>9.3} ms {:>6.1}%",
            stage.label,
            ms(stage.median),
            share
        ));
    }
    lines
}

/// Step 3: the JSON `stages` array, `{label, median_s}` per stage.
pub(super) fn to_json(stages: &[StageMedian]) -> serde_json::Value {
    stages
        .iter()
        .map(|s| json!({"label": s.label, "median_s": s.median.as_secs_f64()}))
        .collect()
}

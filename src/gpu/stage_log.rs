//! The log of timed passes a [`super::GpuContext`] holds for its [`super::StageTimer`]
//! (`stages.rs`): whether timing is on, the query sets, and each timed pass's label and run.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// Queries per query set: wgpu's most.
pub(super) const SET_QUERIES: u32 = wgpu::QUERY_SET_MAX_QUERIES;

/// Passes one timer times at most (two timestamps each, 8 bytes a timestamp: 1 MiB read back).
pub const MAX_TIMED_PASSES: usize = 1 << 16;

/// The passes timed while a [`super::StageTimer`] is on: a context's, empty and off by default.
#[derive(Default)]
pub(super) struct StageLog {
    /// Whether passes are timed now.
    pub on: AtomicBool,
    /// The timer's record while one is on.
    pub record: Mutex<Option<StageRecord>>,
}

/// The record of stages.rs step 2: the query sets, each timed pass's label and run, in
/// recording order.
pub(super) struct StageRecord {
    /// The query sets, [`SET_QUERIES`] timestamps each.
    pub sets: Vec<wgpu::QuerySet>,
    /// Pass `i` wrote timestamps `2i` (begin) and `2i + 1` (end), counting across the sets.
    pub passes: Vec<(&'static str, usize)>,
    /// Runs closed so far (the run of passes recorded now).
    pub run: usize,
    /// Passes past [`MAX_TIMED_PASSES`], recorded untimed.
    pub untimed: usize,
}

impl StageLog {
    /// The query set and begin index for a pass labelled `label`, or `None` when off
    /// or full.
    pub fn next_pass(&self, device: &wgpu::Device, label: &'static str) -> Option<(wgpu::QuerySet, u32)> {
        if !self.on.load(Ordering::Relaxed) {
            return None;
        }
        let mut guard = self.record.lock().ok()?;
        let record = guard.as_mut()?;
        if record.passes.len() >= MAX_TIMED_PASSES {
            record.untimed += 1;
            return None;
        }
        let query = 2 * record.passes.len() as u32;
        let set = (query / SET_QUERIES) as usize;
        if set == record.sets.len() {
            record
                .sets
                .push(device.create_query_set(&wgpu::QuerySetDescriptor {
                    label: Some("stage timestamps"),
                    ty: wgpu::QueryType::Timestamp,
                    count: SET_QUERIES,
                }));
        }
        record.passes.push((label, record.run));
        Some((record.sets[set].clone(), query % SET_QUERIES))
    }

    /// Turns the log off and takes its record.
    pub fn take(&self) -> Option<StageRecord> {
        self.on.store(false, Ordering::Relaxed);
        self.record.lock().ok()?.take()
    }
}

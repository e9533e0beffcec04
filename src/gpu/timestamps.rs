//! GPU timestamps around the commands of one submission, read back with its results.
//!
//! 1. [`Timestamps::new`] makes a query set of a few timestamps, a buffer to resolve them into
//!    and a small mapped-for-reading buffer, on devices with timestamp queries inside encoders
//!    ([`GpuContext::has_timestamps`]; the shared context asks for them where the adapter has
//!    them). Made once, reused for every submission.
//! 2. [`Timestamps::write`] records timestamp `i` between commands of an encoder;
//!    [`Timestamps::resolve`] records their copy into the readback buffer, last in the encoder.
//! 3. After the submission, [`Timestamps::map`] asks for the buffer to be mapped; once the
//!    submission is waited for, [`Timestamps::read`] gives the time between consecutive
//!    timestamps (the device's ticks times the queue's period), then unmaps.

use std::sync::mpsc::Receiver;
use std::time::Duration;

use super::{GpuContext, GpuError};

/// Bytes of one resolved timestamp.
pub(crate) const TIMESTAMP_BYTES: u64 = size_of::<u64>() as u64;

/// A query set of `count` timestamps with its resolve and readback buffers (see the module
/// docs): what hullsat's host calls and benchmarks time the GPU's own work with.
pub struct Timestamps {
    queries: wgpu::QuerySet,
    count: u32,
    resolve: wgpu::Buffer,
    readback: wgpu::Buffer,
    /// Nanoseconds per tick of the queue's timestamps.
    period: f32,
    mapped: Option<Receiver<Result<(), wgpu::BufferAsyncError>>>,
}

/// The buffer timestamps of `bytes` resolve into, and its mapped copy (labelled `what`).
pub(crate) fn resolve_buffers(device: &wgpu::Device, bytes: u64, what: &str) -> (wgpu::Buffer, wgpu::Buffer) {
    let buffer = |label: String, usage| {
        device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(&label),
            size: bytes,
            usage,
            mapped_at_creation: false,
        })
    };
    (
        buffer(
            format!("{what} resolved"),
            wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
        ),
        buffer(
            format!("{what} readback"),
            wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        ),
    )
}

impl Timestamps {
    /// Step 1: `count` timestamps on `context`'s device; `None` when it has no timestamp
    /// queries inside encoders.
    pub fn new(context: &GpuContext, count: u32) -> Option<Self> {
        if !context.has_timestamps() {
            return None;
        }
        let device = context.device();
        let (resolve, readback) = resolve_buffers(device, u64::from(count) * TIMESTAMP_BYTES, "timestamps");
        Some(Timestamps {
            queries: device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("timestamps"),
                ty: wgpu::QueryType::Timestamp,
                count,
            }),
            count,
            resolve,
            readback,
            period: context.queue().get_timestamp_period(),
            mapped: None,
        })
    }

    /// Step 2: timestamp `index` (below the set's count) at this point of `encoder`.
    pub fn write(&self, encoder: &mut wgpu::CommandEncoder, index: u32) {
        encoder.write_timestamp(&self.queries, index);
    }

    /// Step 2: the copy of every timestamp into the readback buffer (record after the last
    /// [`Self::write`]).
    pub fn resolve(&self, encoder: &mut wgpu::CommandEncoder) {
        encoder.resolve_query_set(&self.queries, 0..self.count, &self.resolve, 0);
        encoder.copy_buffer_to_buffer(&self.resolve, 0, &self.readback, 0, self.resolve.size());
    }

    /// Step 3: asks for the readback buffer to be mapped once the submission is done.
    pub fn map(&mut self) {
        let (sender, receiver) = std::sync::mpsc::channel();
        self.readback
            .slice(..)
            .map_async(wgpu::MapMode::Read, move |r| drop(sender.send(r)));
        self.mapped = Some(receiver);
    }

    /// Step 3: the `count - 1` times between consecutive timestamps of `submission` (zero where
    /// the device's clock did not advance), waited for (bounded); then unmaps.
    pub fn read(
        &mut self,
        context: &GpuContext,
        submission: wgpu::SubmissionIndex,
    ) -> Result<Vec<Duration>, GpuError> {
        let mapped = self
            .mapped
            .take()
            .ok_or_else(|| GpuError::Readback("timestamps read before being mapped".into()))?;
        context.wait(submission, &mapped)?;
        let ticks: Vec<u64> = {
            let view = self
                .readback
                .get_mapped_range(..)
                .map_err(|e| GpuError::Readback(e.to_string()))?;
            bytemuck::pod_collect_to_vec(&view)
        };
        self.readback.unmap();
        let nanos = |ticks: u64| Duration::from_nanos((ticks as f64 * f64::from(self.period)) as u64);
        Ok(ticks
            .windows(2)
            .map(|t| nanos(t[1].saturating_sub(t[0])))
            .collect())
    }

    /// Unmaps the readback buffer if a mapping is pending or done (after a failed call).
    pub fn cancel(&mut self) {
        if self.mapped.take().is_some() {
            self.readback.unmap();
        }
    }
}

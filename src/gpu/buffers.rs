//! Device buffers that persist between calls, and the host side of filling them.
//!
//! 1. [`GrowBuffer`]: created small, grown ([`grown_size`]) when a call needs more, never shrunk;
//!    each reallocation bumps a generation so bind groups built on the old buffer are rebuilt.
//! 2. [`StagingBuffer`]: a host-visible buffer kept allocated and mapped again after each use;
//!    elements are written straight into it, one per index, on all threads (no intermediate host
//!    copy, no per-call allocation), and the command encoder copies it to the device buffer.
//! 3. Limits: [`check_limit`] turns a buffer that would exceed a device limit into an error.

use std::sync::mpsc::Receiver;

use bytemuck::Pod;
use rayon::prelude::*;

use super::GpuError;
use super::context::GpuContext;

/// Smallest buffer created (wgpu rejects zero-sized bindings).
pub(crate) const MIN_BUFFER_BYTES: u64 = 256;

/// Elements built on the stack before one copy into mapped memory.
const WRITE_BLOCK: usize = 64;

/// Fewest elements one rayon task writes in [`fill_parallel`]. A body costs about 13 ns (checked,
/// normalized, split and written; one VM thread), so a task is some 25 µs of work against a
/// few µs of scheduling, and a 10k-pair frame's 20k bodies spread over 10 tasks.
const ELEMENTS_PER_TASK: usize = 2048;

/// A device buffer that is reused between calls and grown when a call needs more.
pub(crate) struct GrowBuffer {
    pub buffer: wgpu::Buffer,
    /// Bumped at every reallocation (starts at 0).
    pub generation: u64,
    label: &'static str,
    usage: wgpu::BufferUsages,
}

impl GrowBuffer {
    pub fn new(device: &wgpu::Device, label: &'static str, usage: wgpu::BufferUsages) -> Self {
        let buffer = create_buffer(device, label, MIN_BUFFER_BYTES, usage);
        GrowBuffer {
            buffer,
            generation: 0,
            label,
            usage,
        }
    }

    /// Makes room for `bytes` ([`grown_size`], capped at `cap`; the caller has checked
    /// `bytes <= cap`).
    pub fn reserve(&mut self, device: &wgpu::Device, bytes: u64, cap: u64) {
        if bytes > self.buffer.size() {
            let size = grown_size(self.buffer.size(), bytes, cap);
            self.buffer = create_buffer(device, self.label, size, self.usage);
            self.generation += 1;
        }
    }

    /// Grows to fit `data` (capped at `cap`, which the caller has checked) and writes it at
    /// offset 0.
    pub fn write(&mut self, device: &wgpu::Device, queue: &wgpu::Queue, data: &[u8], cap: u64) {
        self.reserve(device, data.len() as u64, cap);
        if !data.is_empty() {
            queue.write_buffer(&self.buffer, 0, data);
        }
    }
}

/// The size, in bytes, a buffer of `current` bytes grows to so that `bytes` fit: at least 1.5
/// times `current` (a call that grows a little each time reallocates a logarithmic number of
/// times), rounded up to a sixteenth of the power of two at or above that (less than 12.5%
/// past it, where the next power of two could double it), capped at `cap` but never below
/// `bytes`.
pub(crate) fn grown_size(current: u64, bytes: u64, cap: u64) -> u64 {
    let wanted = bytes.max(current.saturating_add(current / 2));
    let step = (wanted.checked_next_power_of_two().unwrap_or(1 << 63) / 16).max(MIN_BUFFER_BYTES);
    wanted
        .checked_next_multiple_of(step)
        .unwrap_or(u64::MAX)
        .min(cap)
        .max(bytes)
}

/// Usage of a uniform buffer the host writes with `Queue::write_buffer`.
pub(crate) const UNIFORM_WRITE: wgpu::BufferUsages =
    wgpu::BufferUsages::UNIFORM.union(wgpu::BufferUsages::COPY_DST);

/// A uniform buffer of `size` bytes ([`UNIFORM_WRITE`]), as [`create_buffer`].
pub(crate) fn uniform_buffer(device: &wgpu::Device, label: &str, size: u64) -> wgpu::Buffer {
    create_buffer(device, label, size, UNIFORM_WRITE)
}

pub(crate) fn create_buffer(
    device: &wgpu::Device,
    label: &str,
    size: u64,
    usage: wgpu::BufferUsages,
) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size: size
            .max(MIN_BUFFER_BYTES)
            .next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT),
        usage,
        mapped_at_creation: false,
    })
}

/// Where a [`StagingBuffer`] is in its cycle.
enum StagingState {
    /// Mapped for writing: ready.
    Mapped,
    /// Written and unmapped; its copy is recorded, perhaps submitted.
    Unmapped,
    /// Mapping requested after a submission; the receiver reports when it is done.
    Remapping(Receiver<Result<(), wgpu::BufferAsyncError>>),
}

/// A host-visible upload buffer that stays allocated and is mapped again after each use: the
/// host writes straight into it (no per-call allocation, no page faults on fresh memory, no
/// intermediate copy), the command encoder copies it into a device buffer.
pub(crate) struct StagingBuffer {
    buffer: wgpu::Buffer,
    state: StagingState,
    label: &'static str,
}

impl StagingBuffer {
    pub fn new(device: &wgpu::Device, label: &'static str) -> Self {
        StagingBuffer {
            buffer: Self::create(device, label, MIN_BUFFER_BYTES),
            state: StagingState::Mapped,
            label,
        }
    }

    fn create(device: &wgpu::Device, label: &str, size: u64) -> wgpu::Buffer {
        device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: size
                .max(MIN_BUFFER_BYTES)
                .next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT),
            usage: wgpu::BufferUsages::MAP_WRITE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: true,
        })
    }

    /// Writes `count` elements `element(i)` from byte 0, on all threads, after waiting (bounded)
    /// for the buffer to be mapped again; grows it ([`grown_size`]) when they do not fit. Leaves
    /// it unmapped, ready for [`Self::record_copy`].
    pub fn write<T: Pod + Send>(
        &mut self,
        context: &GpuContext,
        count: usize,
        element: impl Fn(usize) -> T + Sync,
    ) -> Result<(), GpuError> {
        self.write_tallied(context, count, |i| (element(i), false))
            .map(drop)
    }

    /// [`Self::write`] for a uniform's `bytes` (a multiple of 4, as every WGSL uniform's size is).
    pub fn write_bytes(&mut self, context: &GpuContext, bytes: &[u8]) -> Result<(), GpuError> {
        debug_assert!(bytes.len().is_multiple_of(4), "{} bytes", bytes.len());
        self.write(context, bytes.len() / 4, |i| {
            bytemuck::pod_read_unaligned::<u32>(&bytes[4 * i..4 * i + 4])
        })
    }

    /// [`Self::write`] for `element(i)`'s first field, counting the indices whose second field
    /// is true (each task counts its own, no shared counter): what the caller learns of the
    /// elements in the same pass.
    pub fn write_tallied<T: Pod + Send>(
        &mut self,
        context: &GpuContext,
        count: usize,
        element: impl Fn(usize) -> (T, bool) + Sync,
    ) -> Result<u64, GpuError> {
        let bytes = (count * size_of::<T>()) as u64;
        if bytes > self.buffer.size() {
            let size = grown_size(self.buffer.size(), bytes, context.limits.max_buffer);
            self.buffer = Self::create(context.device(), self.label, size);
            self.state = StagingState::Mapped;
        }
        self.wait_mapped(context)?;
        let tally = {
            let mut view = self
                .buffer
                .get_mapped_range_mut(0..bytes.max(wgpu::COPY_BUFFER_ALIGNMENT))
                .map_err(|e| GpuError::Wgpu(format!("staging buffer: {e}")))?;
            fill_parallel(view.slice(..bytes as usize), count, element)
        };
        self.buffer.unmap();
        self.state = StagingState::Unmapped;
        Ok(tally)
    }

    /// Records the copy of the first `bytes` into `target` (call after [`Self::write`]).
    pub fn record_copy(&self, encoder: &mut wgpu::CommandEncoder, target: &wgpu::Buffer, bytes: u64) {
        if bytes > 0 {
            encoder.copy_buffer_to_buffer(&self.buffer, 0, target, 0, bytes);
        }
    }

    /// Asks for the buffer to be mapped again once the submitted copy is done (call after the
    /// submission; the next wait on the device completes it).
    pub fn remap_after_submit(&mut self) {
        if matches!(self.state, StagingState::Unmapped) {
            let (sender, receiver) = std::sync::mpsc::channel();
            self.buffer
                .map_async(wgpu::MapMode::Write, .., move |r| drop(sender.send(r)));
            self.state = StagingState::Remapping(receiver);
        }
    }

    /// Waits (bounded) until the buffer is mapped, asking for the mapping first when no one has
    /// (a caller of `encode` submitted the copy itself).
    fn wait_mapped(&mut self, context: &GpuContext) -> Result<(), GpuError> {
        self.remap_after_submit();
        if let StagingState::Remapping(receiver) = &self.state {
            context.wait_for_map(receiver)?;
        }
        self.state = StagingState::Mapped;
        Ok(())
    }
}

/// Fills `view` with `count` elements, the first fields of `element(i)`, on all threads; returns
/// how many second fields are true.
fn fill_parallel<T: Pod + Send>(
    view: wgpu::WriteOnly<'_, [u8]>,
    count: usize,
    element: impl Fn(usize) -> (T, bool) + Sync,
) -> u64 {
    let mut rest = view;
    // Split the write-only view into disjoint per-task pieces.
    let tasks = count
        .div_ceil(ELEMENTS_PER_TASK)
        .min(rayon::current_num_threads() * 4)
        .max(1);
    let per_task = count.div_ceil(tasks);
    let mut pieces = Vec::with_capacity(tasks);
    let mut first = 0;
    while first < count {
        let len = per_task.min(count - first);
        let (piece, tail) = rest.split_at(len * size_of::<T>());
        pieces.push((first, SendPiece(piece)));
        rest = tail;
        first += len;
    }
    pieces
        .into_par_iter()
        .map(|(first, SendPiece(mut piece))| {
            // Elements are built in a small block on the stack, then copied to the mapped memory.
            let mut block = [T::zeroed(); WRITE_BLOCK];
            let mut tally = 0;
            let len = piece.len() / size_of::<T>();
            for start in (0..len).step_by(WRITE_BLOCK) {
                let n = WRITE_BLOCK.min(len - start);
                for (k, slot) in block[..n].iter_mut().enumerate() {
                    let (value, counted) = element(first + start + k);
                    *slot = value;
                    tally += u64::from(counted);
                }
                let bytes: &[u8] = bytemuck::cast_slice(&block[..n]);
                let at = start * size_of::<T>();
                piece.slice(at..at + bytes.len()).copy_from_slice(bytes);
            }
            tally
        })
        .sum()
}

/// A piece of mapped memory handed to one rayon task. wgpu 30 implements `Send` for
/// `WriteOnly<T>` only for sized `T`, so a byte slice needs this wrapper.
struct SendPiece<'a>(wgpu::WriteOnly<'a, [u8]>);

// SAFETY: a `WriteOnly<[u8]>` is an exclusive, write-only borrow of bytes (like `&mut [u8]`,
// which is `Send`); the pieces are disjoint (`split_at`), so each task writes only its own.
unsafe impl Send for SendPiece<'_> {}

/// A [`GpuError::TooLarge`] when `bytes` exceeds `limit`.
pub(crate) fn check_limit(
    what: &'static str,
    bytes: u64,
    limit: u64,
    limit_name: &'static str,
) -> Result<(), GpuError> {
    if bytes > limit {
        return Err(GpuError::TooLarge {
            what,
            bytes,
            limit,
            limit_name,
        });
    }
    Ok(())
}

/// A read-only storage buffer on `device` holding `bytes` (zero-padded to at least
/// [`MIN_BUFFER_BYTES`]), labelled `label`; [`GpuError::TooLarge`] beyond `max_binding` bytes.
pub(crate) fn upload_storage(
    device: &wgpu::Device,
    label: &'static str,
    bytes: &[u8],
    max_binding: u64,
) -> Result<wgpu::Buffer, GpuError> {
    use wgpu::util::DeviceExt;
    check_limit(
        label,
        bytes.len() as u64,
        max_binding,
        "max_storage_buffer_binding_size",
    )?;
    let mut contents = bytes.to_vec();
    contents.resize(bytes.len().max(MIN_BUFFER_BYTES as usize), 0);
    Ok(device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some(label),
        contents: &contents,
        usage: wgpu::BufferUsages::STORAGE,
    }))
}

/// A bind group entry for `size` bytes of `buffer` from `offset`.
pub(crate) fn binding(index: u32, buffer: &wgpu::Buffer, offset: u64, size: u64) -> wgpu::BindGroupEntry<'_> {
    wgpu::BindGroupEntry {
        binding: index,
        resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
            buffer,
            offset,
            size: wgpu::BufferSize::new(size),
        }),
    }
}

/// A bind group entry for `buffer` from its start, whole or up to `max_binding` bytes (the
/// device's `max_storage_buffer_binding_size`): a range that follows from the buffer alone.
pub(crate) fn binding_up_to(index: u32, buffer: &wgpu::Buffer, max_binding: u64) -> wgpu::BindGroupEntry<'_> {
    binding(index, buffer, 0, buffer.size().min(max_binding))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_grow_by_half_at_least_to_a_sixteenth_of_a_power_of_two() {
        const MB: u64 = 1 << 20;
        // A first call's size: a sixteenth of 128 MB past 65 MB, not the 128 MB power of two.
        assert_eq!(grown_size(MIN_BUFFER_BYTES, 65 * MB, u64::MAX), 72 * MB);
        assert_eq!(grown_size(MIN_BUFFER_BYTES, 96 * MB, u64::MAX), 96 * MB);
        // Growing a little: at least half again.
        assert_eq!(grown_size(96 * MB, 97 * MB, u64::MAX), 144 * MB);
        // Small sizes keep the 256-byte minimum step.
        assert_eq!(grown_size(MIN_BUFFER_BYTES, 300, u64::MAX), 512);
        assert_eq!(grown_size(0, 1, u64::MAX), 256);
        // The cap bounds the growth, never below what is asked.
        assert_eq!(grown_size(96 * MB, 97 * MB, 100 * MB), 100 * MB);
        assert_eq!(grown_size(96 * MB, 97 * MB, 90 * MB), 97 * MB);
        // Every size fits what was asked and half the old again, and goes at most 12.5 % (or to
        // the 256-byte step) past that.
        for current in [0, 256, 1000, 4096, 3 * MB] {
            for bytes in [1, 255, 257, 5000, 70_000, 9 * MB, 77 * MB + 3] {
                let size = grown_size(current, bytes, u64::MAX);
                let wanted = bytes.max(current + current / 2);
                assert!(size >= bytes && size >= wanted, "{current} {bytes}: {size}");
                let bound = (wanted + wanted / 8).max(wanted.next_multiple_of(MIN_BUFFER_BYTES));
                assert!(size <= bound, "{current} {bytes}: {size}");
            }
        }
    }
}

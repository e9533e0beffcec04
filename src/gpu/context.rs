//! The GPU device and its health: one process-wide context, shared by every GPU user.
//!
//! 1. [`shared_context`] creates, on first use, one wgpu instance with only the backends hullsat
//!    needs (Vulkan, Metal, DX12; `WGPU_BACKEND` overrides, e.g. `gl`), its high-performance
//!    adapter (software adapters such as lavapipe count), one device and queue. It lives until
//!    the process exits: it is never dropped, so no thread can tear an instance or device down
//!    while another uses or destroys one (NVIDIA's driver deadlocks then). A failure (no
//!    adapter) is remembered too. The instance skips wgpu's indirect-call validation
//!    ([`wgpu::InstanceFlags::VALIDATION_INDIRECT_CALL`]; `WGPU_VALIDATION_INDIRECT_CALL=1` turns
//!    it back on): every indirect argument hullsat dispatches is written by its own kernels,
//!    clamped to the device's workgroups per dimension, and the validation adds a dispatch and
//!    two barriers before each indirect dispatch.
//! 2. [`GpuContext::with_device`] wraps a caller's device (a renderer's) the same way; the
//!    caller owns that device's lifetime (on NVIDIA: drop devices from one thread at a time).
//! 3. Health: errors outside error scopes and a lost device are recorded by callbacks on the
//!    shared device and reported by the next call; every call of this crate wraps its wgpu calls
//!    in error scopes ([`ErrorScopes`], per thread in wgpu 30), so calls from several threads do
//!    not see each other's errors.
//! 4. Waits are bounded: [`GpuContext::wait`] polls with [`READBACK_TIMEOUT`] and then waits at
//!    most the rest of it for the map callback, which another thread's poll may be running.
//! 5. Kernels: each GPU feature compiles its kernels once per device through
//!    [`GpuContext::kernels`], which keeps them with the context; the context knows no kernel.

use std::any::Any;
use std::sync::mpsc::Receiver;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use super::GpuError;
use super::stage_log::StageLog;

/// Longest wait for the GPU to finish one submission before [`GpuError::Timeout`].
pub const READBACK_TIMEOUT: Duration = Duration::from_secs(120);

/// Storage buffers per shader stage asked of the device (up to what the adapter allows): the
/// most any kernel binds (the ray kernel with meshes or compounds,
/// [`crate::raycast::layout::COMPLEX_STORAGE_BUFFERS`]).
const MAX_STORAGE_BUFFERS: u32 = 12;

/// The features GPU timestamps need: queries written between commands of an encoder.
pub(crate) const TIMESTAMP_FEATURES: wgpu::Features =
    wgpu::Features::TIMESTAMP_QUERY.union(wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS);

/// The device limits hullsat checks against, in bytes or workgroups.
#[derive(Clone, Copy, Debug)]
pub(crate) struct DeviceLimits {
    /// `max_storage_buffer_binding_size`, bytes.
    pub max_binding: u64,
    /// `max_buffer_size`, bytes.
    pub max_buffer: u64,
    /// `max_compute_workgroups_per_dimension`.
    pub max_workgroups: u64,
    /// `max_storage_buffers_per_shader_stage`.
    pub max_storage_buffers: u32,
}

/// Errors reported outside error scopes (uncaptured) or by the device-lost callback.
#[derive(Default)]
struct DeviceHealth {
    uncaptured: Option<String>,
    lost: Option<String>,
}

/// A device, its queue and the kernels compiled on it. Cheap to share (`Arc`); safe to use from
/// several threads at once (wgpu devices and queues are).
pub struct GpuContext {
    device: wgpu::Device,
    queue: wgpu::Queue,
    adapter: Option<wgpu::Adapter>,
    adapter_info: wgpu::AdapterInfo,
    pub(crate) limits: DeviceLimits,
    health: Arc<Mutex<DeviceHealth>>,
    /// Step 5: each feature's compiled kernels, one value per type.
    kernels: Mutex<Vec<Arc<dyn Any + Send + Sync>>>,
    /// The passes a [`super::StageTimer`] times (off by default).
    pub(super) stages: StageLog,
}

/// The process-wide context: created on the first call (instance, adapter, device, queue),
/// then the same `Arc` for every caller, on every thread, until the process exits.
/// [`GpuError::NoAdapter`] (remembered) when the machine has no adapter. Other GPU features
/// (ray casts) get their device and queue here. Its instance has wgpu's indirect-call
/// validation off (module docs, step 1): a caller recording its own indirect dispatches or
/// draws on this device must keep their arguments within the device's limits itself.
pub fn shared_context() -> Result<Arc<GpuContext>, GpuError> {
    static SHARED: OnceLock<Result<Arc<GpuContext>, GpuError>> = OnceLock::new();
    SHARED.get_or_init(GpuContext::create_shared).clone()
}

impl GpuContext {
    /// Step 1: the shared context's instance, adapter, device and queue.
    fn create_shared() -> Result<Arc<GpuContext>, GpuError> {
        let mut descriptor = wgpu::InstanceDescriptor::new_without_display_handle();
        descriptor.backends = wgpu::Backends::VULKAN | wgpu::Backends::METAL | wgpu::Backends::DX12;
        // Step 1's indirect arguments: hullsat's own, clamped (see the module docs).
        descriptor
            .flags
            .remove(wgpu::InstanceFlags::VALIDATION_INDIRECT_CALL);
        let instance = wgpu::Instance::new(descriptor.with_env());
        let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            ..Default::default()
        }))
        .map_err(|e| GpuError::NoAdapter(e.to_string()))?;
        let adapter_limits = adapter.limits();
        // Ask for the adapter's buffer limits: the defaults (128 MiB binding, 256 MiB buffer)
        // would split batches sooner than needed.
        // Kernels may bind more storage buffers than the default 8 (the clip kernel 9, the ray
        // kernel with meshes 12; Vulkan,
        // Metal and DX12 adapters allow at least 31; a feature checks what it needs).
        let required_limits = wgpu::Limits {
            max_storage_buffer_binding_size: adapter_limits.max_storage_buffer_binding_size,
            max_buffer_size: adapter_limits.max_buffer_size,
            max_storage_buffers_per_shader_stage: adapter_limits
                .max_storage_buffers_per_shader_stage
                .min(MAX_STORAGE_BUFFERS)
                .max(wgpu::Limits::default().max_storage_buffers_per_shader_stage),
            ..wgpu::Limits::default()
        };
        // Timestamps where the adapter has them, for GpuTimings' device times and the stage
        // timer's pass timestamps; subgroup operations where it has them, for the SAT kernel's
        // reductions.
        let required_features = adapter.features() & (wgpu::Features::SUBGROUP | TIMESTAMP_FEATURES);
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("hullsat"),
            required_features,
            required_limits,
            ..Default::default()
        }))
        .map_err(|e| GpuError::RequestDevice(e.to_string()))?;
        let health = Arc::new(Mutex::new(DeviceHealth::default()));
        let sink = Arc::clone(&health);
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            if let Ok(mut h) = sink.lock() {
                h.uncaptured.get_or_insert_with(|| e.to_string());
            }
        }));
        let sink = Arc::clone(&health);
        device.set_device_lost_callback(move |reason, message| {
            if let Ok(mut h) = sink.lock() {
                h.lost = Some(format!("{reason:?}: {message}"));
            }
        });
        // The instance is not kept: the adapter and device keep what they need alive.
        Self::build(device, queue, Some(adapter), health)
    }

    /// Step 2: a context on a device the caller owns (a renderer's). The caller's
    /// uncaptured-error handler and device-lost callback are left in place; hullsat's own calls
    /// use error scopes. Kernels are compiled for this device on first use.
    ///
    /// The context keeps a clone of `device` (and so does every narrowphase or raycaster made
    /// on it, through the context): the device is destroyed only when the caller's last clone
    /// and the last of these are dropped, on whichever thread drops last. On NVIDIA's driver,
    /// drop devices from one thread at a time: never two `wgpu::Device`s destroyed, or one
    /// destroyed and one created, on different threads at once (the driver deadlocks). Keeping
    /// the device for the life of the process, as [`shared_context`] does, avoids the question.
    ///
    /// Indirect dispatches on `device` follow its instance's flags: hullsat's indirect arguments
    /// are its own kernels', clamped, so an instance without
    /// [`wgpu::InstanceFlags::VALIDATION_INDIRECT_CALL`] is safe and saves a validation dispatch
    /// before each of them.
    pub fn with_device(device: wgpu::Device, queue: wgpu::Queue) -> Result<Arc<GpuContext>, GpuError> {
        Self::build(device, queue, None, Arc::new(Mutex::new(DeviceHealth::default())))
    }

    fn build(
        device: wgpu::Device,
        queue: wgpu::Queue,
        adapter: Option<wgpu::Adapter>,
        health: Arc<Mutex<DeviceHealth>>,
    ) -> Result<Arc<GpuContext>, GpuError> {
        let device_limits = device.limits();
        let limits = DeviceLimits {
            max_binding: device_limits.max_storage_buffer_binding_size,
            max_buffer: device_limits.max_buffer_size,
            max_workgroups: u64::from(device_limits.max_compute_workgroups_per_dimension),
            max_storage_buffers: device_limits.max_storage_buffers_per_shader_stage,
        };
        let context = GpuContext {
            adapter_info: device.adapter_info(),
            device,
            queue,
            adapter,
            limits,
            health,
            kernels: Mutex::new(Vec::new()),
            stages: StageLog::default(),
        };
        context.check_health()?;
        Ok(Arc::new(context))
    }

    /// The device (for buffers, encoders and pipelines of the caller's own).
    pub fn device(&self) -> &wgpu::Device {
        &self.device
    }

    /// The queue hullsat submits to.
    pub fn queue(&self) -> &wgpu::Queue {
        &self.queue
    }

    /// The adapter of the shared context (`None` for a caller's device): to request more
    /// devices without creating another instance.
    pub fn adapter(&self) -> Option<&wgpu::Adapter> {
        self.adapter.as_ref()
    }

    /// The adapter the device came from (name, backend, device type).
    pub fn adapter_info(&self) -> &wgpu::AdapterInfo {
        &self.adapter_info
    }

    /// True when the device has subgroup operations ([`wgpu::Features::SUBGROUP`]; the shared
    /// context asks for them where the adapter has them): the SAT kernel's cooperative path then
    /// reduces with them.
    pub fn has_subgroups(&self) -> bool {
        self.device.features().contains(wgpu::Features::SUBGROUP)
    }

    /// True when the device has timestamp queries inside encoders (the shared context asks for
    /// them where the adapter has them; a caller's device has what the caller asked for).
    pub fn has_timestamps(&self) -> bool {
        self.device.features().contains(TIMESTAMP_FEATURES)
    }

    /// Step 5: the kernels of type `K` compiled on this device, built by `compile` on the first
    /// call for `K` (inside error scopes; other callers wait for it) and shared afterwards.
    pub(crate) fn kernels<K: Any + Send + Sync>(
        &self,
        compile: impl FnOnce(&GpuContext) -> K,
    ) -> Result<Arc<K>, GpuError> {
        let mut kernels = self
            .kernels
            .lock()
            .map_err(|_| GpuError::Wgpu("kernel cache poisoned".into()))?;
        if let Some(found) = kernels.iter().find_map(|k| Arc::clone(k).downcast::<K>().ok()) {
            return Ok(found);
        }
        let scopes = ErrorScopes::push(&self.device);
        let compiled = Arc::new(compile(self));
        scopes.pop()?;
        self.check_health()?;
        kernels.push(compiled.clone());
        Ok(compiled)
    }

    /// Step 3: reports a lost device or an error that escaped the error scopes.
    pub(crate) fn check_health(&self) -> Result<(), GpuError> {
        let mut health = self
            .health
            .lock()
            .map_err(|_| GpuError::Wgpu("error handler poisoned".into()))?;
        if let Some(lost) = &health.lost {
            return Err(GpuError::DeviceLost(lost.clone()));
        }
        match health.uncaptured.take() {
            Some(e) => Err(GpuError::Wgpu(e)),
            None => Ok(()),
        }
    }

    /// Maps the first `bytes` of `buffer` (MAP_READ) once `submission` is done (bounded by
    /// [`READBACK_TIMEOUT`]), hands them to `read`, and unmaps; a failed or timed-out mapping is
    /// unmapped too, so the buffer can map again.
    pub(crate) fn read_mapped<T>(
        &self,
        submission: wgpu::SubmissionIndex,
        buffer: &wgpu::Buffer,
        bytes: u64,
        read: impl FnOnce(&[u8]) -> T,
    ) -> Result<T, GpuError> {
        let (sender, receiver) = std::sync::mpsc::channel();
        buffer.map_async(wgpu::MapMode::Read, 0..bytes, move |r| drop(sender.send(r)));
        if let Err(e) = self.wait(submission, &receiver) {
            buffer.unmap();
            return Err(e);
        }
        let view = buffer.get_mapped_range(0..bytes).map(|view| read(&view));
        buffer.unmap();
        view.map_err(|e| GpuError::Readback(e.to_string()))
    }

    /// Step 4: waits (bounded by [`READBACK_TIMEOUT`] in all) for `submission` and for the map
    /// callback that reports into `mapped`.
    pub(crate) fn wait(
        &self,
        submission: wgpu::SubmissionIndex,
        mapped: &Receiver<Result<(), wgpu::BufferAsyncError>>,
    ) -> Result<(), GpuError> {
        self.wait_until(Some(submission), mapped)
    }

    /// Step 4 for a mapping requested after some earlier submission: returns at once when its
    /// callback already ran, else waits (bounded) for the device.
    pub(crate) fn wait_for_map(
        &self,
        mapped: &Receiver<Result<(), wgpu::BufferAsyncError>>,
    ) -> Result<(), GpuError> {
        match mapped.try_recv() {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(GpuError::Readback(e.to_string())),
            Err(_) => self.wait_until(None, mapped),
        }
    }

    fn wait_until(
        &self,
        submission: Option<wgpu::SubmissionIndex>,
        mapped: &Receiver<Result<(), wgpu::BufferAsyncError>>,
    ) -> Result<(), GpuError> {
        let start = Instant::now();
        let waited = self.device.poll(wgpu::PollType::Wait {
            submission_index: submission,
            timeout: Some(READBACK_TIMEOUT),
        });
        self.check_health()?;
        match waited {
            Ok(_) => {}
            Err(wgpu::PollError::Timeout) => return Err(GpuError::Timeout(READBACK_TIMEOUT)),
            Err(e) => return Err(GpuError::Readback(e.to_string())),
        }
        // Another thread's poll may have taken the callback and not run it yet.
        let rest = READBACK_TIMEOUT.saturating_sub(start.elapsed());
        match mapped.recv_timeout(rest) {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(GpuError::Readback(e.to_string())),
            Err(_) => Err(GpuError::Timeout(READBACK_TIMEOUT)),
        }
    }
}

/// Validation and out-of-memory error scopes around a group of wgpu calls (per thread).
/// Dropped without [`Self::pop`] (an early return), the guards pop in field order: the inner
/// (validation) scope first, as wgpu requires.
pub(crate) struct ErrorScopes {
    validation: wgpu::ErrorScopeGuard,
    out_of_memory: wgpu::ErrorScopeGuard,
}

impl ErrorScopes {
    pub(crate) fn push(device: &wgpu::Device) -> Self {
        let out_of_memory = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let validation = device.push_error_scope(wgpu::ErrorFilter::Validation);
        ErrorScopes {
            out_of_memory,
            validation,
        }
    }

    /// Pops both scopes (innermost first) and returns the first error caught. On native wgpu
    /// the futures are ready at once (no wait).
    pub(crate) fn pop(self) -> Result<(), GpuError> {
        let validation = pollster::block_on(self.validation.pop());
        let out_of_memory = pollster::block_on(self.out_of_memory.pop());
        match validation.or(out_of_memory) {
            Some(e) => Err(GpuError::Wgpu(e.to_string())),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_scopes_dropped_without_pop_leave_the_device_usable() {
        let Ok(context) = shared_context() else {
            return;
        };
        let device = context.device();
        // An early return drops the scopes unpopped: they must unwind innermost first.
        drop(ErrorScopes::push(device));
        let outer = ErrorScopes::push(device);
        drop(ErrorScopes::push(device));
        assert!(outer.pop().is_ok());
    }
}

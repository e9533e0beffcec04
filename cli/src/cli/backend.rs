//! Where a command's narrowphase or ray casts run (`--backend auto|gpu|cpu`).
//!
//! `auto` takes the CPU when the GPU would be slower ([`auto_choice`]):
//! 1. a batch of fewer than [`AUTO_GPU_PAIRS_PER_THREAD`] pairs per CPU thread (decided before
//!    any device is made);
//! 2. a software adapter (`DeviceType::Cpu`, e.g. Mesa's lavapipe), which runs the kernels on the
//!    same CPU cores, slower than the CPU path;
//! 3. no adapter, or a GPU that fails: one note on stderr.
//!
//! Otherwise the GPU. `gpu` runs the GPU or fails; `cpu` never makes a device.

use clap::ValueEnum;
use hullsat::{GpuError, GpuNarrowphase, Shape};

use super::{CliError, output};

/// The backend a batch runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(super) enum Backend {
    /// The faster of the two for the batch: the CPU for small batches and software adapters,
    /// else the GPU when one is available.
    Auto,
    /// The GPU only (fails when it is unavailable).
    Gpu,
    /// The CPU reference path (rayon).
    Cpu,
}

/// Pairs per CPU thread from which `auto` runs a hardware GPU: the crossover of the whole GPU call
/// (host bodies and pairs in, manifolds out; the device's one-time setup not counted) against the
/// CPU on all threads, measured on an NVIDIA H200 with 16 host threads (BENCHMARKS.md): the CPU
/// wins 10,000 box pairs (1.8x) and 10,000 hull32 pairs (1.3x), the GPU 200,000 hull32 (3.4x),
/// 1M box (1.2x) and 698k mixed pairs (2.2x on an H100). 3,000 a thread is 48,000 at 16 threads,
/// between the box crossover (about 75,000 by those figures) and the hull32 one (about 15,000).
pub(super) const AUTO_GPU_PAIRS_PER_THREAD: usize = 3_000;

/// What `auto` decided, with the reason for `--verbose` and the demo's report.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum AutoChoice {
    /// Run the GPU, for the reason given (one clause, no final period).
    Gpu(String),
    /// Run the CPU, for the reason given (one clause, no final period).
    Cpu(String),
}

/// Rules 1 and 2 of the module doc, for a batch of `pairs` pairs on `threads` CPU threads and the
/// adapter's name and kind (`None` when not looked at yet: only rule 1 is decided then, and `Gpu`
/// means "look at the adapter").
pub(super) fn auto_choice(
    pairs: usize,
    threads: usize,
    adapter: Option<(&str, wgpu::DeviceType)>,
) -> AutoChoice {
    let crossover = AUTO_GPU_PAIRS_PER_THREAD * threads.max(1);
    if pairs < crossover {
        return AutoChoice::Cpu(format!(
            "{pairs} pairs are fewer than the GPU's crossover, {crossover} ({AUTO_GPU_PAIRS_PER_THREAD} per CPU \
             thread, {threads} threads)"
        ));
    }
    let enough = format!("{pairs} pairs reach the GPU's crossover, {crossover}");
    match adapter {
        Some((name, wgpu::DeviceType::Cpu)) => AutoChoice::Cpu(format!(
            "{enough}, but the adapter {name} is a software renderer running on the CPU"
        )),
        Some((name, kind)) => AutoChoice::Gpu(format!("{enough}, on the adapter {name} ({kind:?})")),
        None => AutoChoice::Gpu(enough),
    }
}

/// The GPU narrowphase for a batch of `pairs` pairs over `shapes` under `backend`, or `None`, with
/// the reason for either: `cpu` asked; `auto` by [`auto_choice`], or after one line on stderr
/// saying why the GPU cannot run; for `gpu`, that reason as an error.
pub(super) fn start_gpu(
    backend: Backend,
    shapes: &[Shape],
    pairs: usize,
) -> Result<(Option<GpuNarrowphase>, String), CliError> {
    let threads = rayon::current_num_threads();
    let cpu = |why: String| Ok((None, why));
    let why_gpu = match backend {
        Backend::Cpu => return cpu("--backend cpu".into()),
        Backend::Gpu => "--backend gpu".into(),
        Backend::Auto => {
            if let AutoChoice::Cpu(why) = auto_choice(pairs, threads, None) {
                return cpu(format!("auto: {why}"));
            }
            let info = match shared_adapter(backend)? {
                Ok(info) => info,
                Err(why) => return cpu(why),
            };
            match auto_choice(pairs, threads, Some((&info.name, info.device_type))) {
                AutoChoice::Cpu(why) => return cpu(format!("auto: {why}")),
                AutoChoice::Gpu(why) => format!("auto: {why}"),
            }
        }
    };
    match GpuNarrowphase::new(shapes) {
        Ok(gpu) => Ok((Some(gpu), why_gpu)),
        Err(err) => {
            gpu_failed(backend, &err)?;
            cpu(format!("auto: the GPU failed: {err}"))
        }
    }
}

/// The shared GPU context's adapter (made on first use), or, when there is none, the reason
/// for `auto` to take the CPU, after one line on stderr ([`gpu_failed`]).
fn shared_adapter(backend: Backend) -> Result<Result<wgpu::AdapterInfo, String>, CliError> {
    match hullsat::gpu::shared_context() {
        Ok(context) => Ok(Ok(context.adapter_info().clone())),
        Err(err) => {
            gpu_failed(backend, &err)?;
            Ok(Err(format!("auto: {err}")))
        }
    }
}

/// Whether `auto` casts rays on the GPU: not on a software adapter (rule 2; no crossover in
/// rays is measured yet) nor without an adapter (rule 3).
pub(super) fn auto_casts_on_gpu() -> Result<bool, CliError> {
    Ok(matches!(shared_adapter(Backend::Auto)?, Ok(info) if info.device_type != wgpu::DeviceType::Cpu))
}

/// After a GPU failure: under `auto`, one line on stderr and `Ok` (the caller uses the CPU);
/// under `gpu`, the error (input problems keep exit code 2).
pub(super) fn gpu_failed(backend: Backend, err: &GpuError) -> Result<(), CliError> {
    match err {
        _ if backend == Backend::Gpu || matches!(err, GpuError::Input(_)) => Err(err.clone().into()),
        GpuError::NoAdapter(_) => {
            output::note(&format!("note: using the CPU: {err}"));
            Ok(())
        }
        _ => {
            output::note(&format!("note: GPU backend failed, using the CPU instead: {err}"));
            Ok(())
        }
    }
}

/// `name (backend, device type)` of the GPU's adapter.
pub(super) fn adapter_description(gpu: &GpuNarrowphase) -> String {
    let info = gpu.adapter_info();
    format!("{} ({:?}, {:?})", info.name, info.backend, info.device_type)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_takes_the_cpu_below_the_crossover_and_for_software_adapters() {
        let gpu = ("test adapter", wgpu::DeviceType::DiscreteGpu);
        let software = ("test adapter", wgpu::DeviceType::Cpu);
        // 16 threads: the crossover is 48,000 pairs, decided before any adapter is known.
        let small = auto_choice(47_999, 16, None);
        assert_eq!(
            small,
            AutoChoice::Cpu(
                "47999 pairs are fewer than the GPU's crossover, 48000 (3000 per CPU thread, 16 threads)"
                    .into()
            )
        );
        assert_eq!(auto_choice(47_999, 16, Some(gpu)), small);
        assert_eq!(
            auto_choice(48_000, 16, None),
            AutoChoice::Gpu("48000 pairs reach the GPU's crossover, 48000".into())
        );
        assert_eq!(
            auto_choice(48_000, 16, Some(gpu)),
            AutoChoice::Gpu(
                "48000 pairs reach the GPU's crossover, 48000, on the adapter test adapter (DiscreteGpu)"
                    .into()
            )
        );
        let integrated = auto_choice(1_000_000, 2, Some(("igpu", wgpu::DeviceType::IntegratedGpu)));
        assert!(matches!(integrated, AutoChoice::Gpu(_)), "{integrated:?}");
        assert_eq!(
            auto_choice(1_000_000, 16, Some(software)),
            AutoChoice::Cpu(
                "1000000 pairs reach the GPU's crossover, 48000, but the adapter test adapter is a software \
                 renderer running on the CPU"
                    .into()
            )
        );
        // Fewer threads, a lower crossover; no threads counts as one.
        assert!(matches!(auto_choice(6_000, 2, None), AutoChoice::Gpu(_)));
        assert!(matches!(auto_choice(3_000, 0, None), AutoChoice::Gpu(_)));
        assert!(matches!(auto_choice(2_999, 0, None), AutoChoice::Cpu(_)));
    }
}

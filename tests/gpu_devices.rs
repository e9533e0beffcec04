//! Devices are created in few places and never dropped concurrently: NVIDIA's driver deadlocks
//! when several threads destroy `wgpu::Device`s (or one destroys while another creates) at
//! once.
//!
//! 1. Over the sources: only the files in [`ALLOWED`] ask an adapter for a device.
//! 2. The tests' helper (`support::device_or_skip`) hands every thread asking for the same
//!    limits the same device, created once, without hanging.

mod support;

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::{Arc, Barrier};
use std::time::Duration;

use support::device_or_skip;

/// The adapter call that creates a device (spelled in two pieces so that this file does not
/// match it).
const DEVICE_REQUEST: &str = concat!("request_", "device");
/// Device creation from a raw HAL device: allowed nowhere.
const DEVICE_FROM_HAL: &str = concat!("create_device_", "from_hal");

/// The files that may ask for a device (paths from the repository root), and why.
const ALLOWED: &[(&str, &str)] = &[
    (
        "src/gpu/context.rs",
        "the process-wide shared context (never dropped) and its docs",
    ),
    (
        "tests/support/mod.rs",
        "device_or_skip: one device per limits set, kept in a static",
    ),
    (
        "cli/src/cli/bench/resident.rs",
        "the bench's resident device (timestamp queries), made once per process in a OnceLock",
    ),
    (
        "examples/render_contacts.rs",
        "a renderer's own device, in a single-threaded example",
    ),
];

/// Allowed files that must keep their device in a `static OnceLock` (created once, never
/// dropped), since they may run on several threads.
const KEPT_IN_ONCE_LOCK: &[&str] = &["tests/support/mod.rs", "cli/src/cli/bench/resident.rs"];

/// Directories (from the repository root) whose `.rs` files are read: the library's and the
/// command line's (`cli/`).
const SOURCE_DIRS: &[&str] = &["src", "tests", "benches", "examples", "cli"];

/// Threads asking for devices at once.
const THREADS: usize = 4;
/// Longest the concurrent test may take before it counts as hung.
const WATCHDOG: Duration = Duration::from_secs(120);

/// Every `.rs` file under `dir`, recursively.
fn rust_files(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return; // a directory the crate does not have
    };
    for entry in entries {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            rust_files(&path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
}

/// The path of `file` from the crate root, with `/` separators.
fn relative(root: &Path, file: &Path) -> String {
    let parts: Vec<String> = file
        .strip_prefix(root)
        .expect("under the crate root")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    parts.join("/")
}

#[test]
fn devices_are_requested_only_where_they_are_kept() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in SOURCE_DIRS {
        rust_files(&root.join(dir), &mut files);
    }
    files.sort();
    assert!(
        files.len() > 20,
        "read only {} source files: {files:?}",
        files.len()
    );
    let mut offences = Vec::new();
    let mut seen_allowed = Vec::new();
    for file in &files {
        let name = relative(root, file);
        let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{name}: {e}"));
        let allowed = ALLOWED.iter().any(|(path, _)| *path == name);
        for (number, line) in text.lines().enumerate() {
            if line.contains(DEVICE_FROM_HAL) {
                offences.push(format!("{name}:{}: {}", number + 1, line.trim()));
            }
            if line.contains(DEVICE_REQUEST) {
                if allowed {
                    seen_allowed.push(name.clone());
                } else {
                    offences.push(format!("{name}:{}: {}", number + 1, line.trim()));
                }
            }
        }
        if KEPT_IN_ONCE_LOCK.contains(&name.as_str()) && text.contains(DEVICE_REQUEST) {
            assert!(
                text.contains("OnceLock"),
                "{name} requests a device but keeps none in a static OnceLock: a device it \
                 drops may be destroyed while another thread creates or destroys one"
            );
        }
    }
    assert!(
        offences.is_empty(),
        "devices requested outside the allowed files (NVIDIA's driver deadlocks when devices \
         are dropped from several threads at once; use hullsat::gpu::shared_context() in the \
         library, support::device_or_skip in tests, or add the file to ALLOWED with a reason):\n{}",
        offences.join("\n")
    );
    // The walk saw the shared context's request: it is not reading the wrong directories.
    assert!(
        seen_allowed.iter().any(|n| n == "src/gpu/context.rs"),
        "the scan did not find the shared context's device request; read: {files:?}"
    );
}

/// One thread's devices: the two limits sets asked for twice each, with a buffer written on
/// each device. `None` when there is no adapter (the helper skipped).
fn ask_for_devices(start: &Barrier) -> Option<[wgpu::Device; 2]> {
    let limits = [
        wgpu::Limits {
            max_storage_buffers_per_shader_stage: 9,
            ..wgpu::Limits::default()
        },
        wgpu::Limits::downlevel_defaults(),
    ];
    start.wait();
    let mut devices = Vec::new();
    for limits in limits {
        let (first, _) = device_or_skip(limits.clone())?;
        let (device, queue) = device_or_skip(limits)?;
        assert_eq!(first, device, "the same limits twice on one thread");
        let buffer = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("gpu_devices"),
            size: 16,
            usage: wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        queue.write_buffer(&buffer, 0, &[7; 16]);
        let submission = queue.submit([]);
        device
            .poll(wgpu::PollType::Wait {
                submission_index: Some(submission),
                timeout: Some(WATCHDOG),
            })
            .expect("the write finishes");
        drop(buffer);
        devices.push(device);
    }
    Some(devices.try_into().expect("two devices"))
}

#[test]
fn threads_asking_for_the_same_limits_at_once_share_one_device() {
    let start = Arc::new(Barrier::new(THREADS));
    let (done, finished) = mpsc::channel();
    for thread in 0..THREADS {
        let (start, done) = (Arc::clone(&start), done.clone());
        std::thread::spawn(move || {
            let outcome = std::panic::catch_unwind(|| ask_for_devices(&start));
            let _ = done.send((thread, outcome));
        });
    }
    let mut devices = Vec::new();
    for _ in 0..THREADS {
        let (thread, outcome) = finished
            .recv_timeout(WATCHDOG)
            .expect("every thread finishes within the watchdog (no deadlock)");
        let Ok(outcome) = outcome else {
            panic!("thread {thread} failed (its panic message is above)");
        };
        devices.push(outcome);
    }
    if devices.iter().any(Option::is_none) {
        // No adapter: the helper printed why (or failed under HULLSAT_REQUIRE_GPU=1).
        assert!(
            devices.iter().all(Option::is_none),
            "only some threads found an adapter"
        );
        return;
    }
    let devices: Vec<[wgpu::Device; 2]> = devices.into_iter().flatten().collect();
    for (thread, pair) in devices.iter().enumerate() {
        assert_eq!(
            pair[0], devices[0][0],
            "thread {thread}: first limits, another device"
        );
        assert_eq!(
            pair[1], devices[0][1],
            "thread {thread}: second limits, another device"
        );
    }
    assert_ne!(devices[0][0], devices[0][1], "two limits sets, one device");
    let shared = hullsat::gpu::shared_context().expect("an adapter exists");
    assert_ne!(
        *shared.device(),
        devices[0][0],
        "the helper's device is a second device, not the shared one"
    );
    // A device from another call later still is the same.
    let (again, _) = device_or_skip(wgpu::Limits::downlevel_defaults()).expect("an adapter exists");
    assert_eq!(again, devices[0][1], "the same limits later");
}

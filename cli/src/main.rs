//! The `hullsat` binary: `hullsat collide`, `hullsat demo`, `hullsat bench` (see `hullsat --help`).

mod cli;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    quiet_device_select();
    match cli::run(cli::Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            err.report();
            ExitCode::from(err.exit_code())
        }
    }
}

/// Mesa's device-select Vulkan layer prints `error: XDG_RUNTIME_DIR is invalid or not set in the
/// environment.` twice on every run where that variable is unset or not a folder (a root shell,
/// a container), which makes a successful run look like a failure. wgpu chooses its adapter
/// itself, so the layer is not needed: it is turned off (`NODEVICE_SELECT=1`) there, unless the
/// user set `NODEVICE_SELECT` either way.
fn quiet_device_select() {
    let runtime_dir_valid =
        std::env::var_os("XDG_RUNTIME_DIR").is_some_and(|dir| std::path::Path::new(&dir).is_dir());
    if !runtime_dir_valid && std::env::var_os("NODEVICE_SELECT").is_none() {
        // SAFETY: the first thing `main` does, before any other thread exists, so nothing reads
        // or writes the environment at the same time.
        unsafe { std::env::set_var("NODEVICE_SELECT", "1") };
    }
}

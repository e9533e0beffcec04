//! Running the `hullsat` binary and reading what it printed, for the command-line tests.

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;

/// Runs `hullsat args` and waits for it. `NODEVICE_SELECT=1` silences Mesa's device-select
/// layer, so stderr holds only hullsat's own lines.
pub fn hullsat(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hullsat"))
        .args(args)
        .env("NODEVICE_SELECT", "1")
        .output()
        .expect("the hullsat binary runs")
}

/// A fresh path named `name` in a scratch folder of this test binary's own (any old file
/// removed), so test binaries running at once never share a file.
pub fn scratch(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let stem = exe
        .file_stem()
        .and_then(|s| s.to_str())
        .expect("a UTF-8 file name");
    let binary = stem.split('-').next().unwrap_or(stem);
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(binary);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    let _ = std::fs::remove_file(&path);
    path
}

/// `text` written to a fresh `{name}.json` scratch file.
pub fn scene_file(name: &str, text: &str) -> PathBuf {
    let path = scratch(&format!("{name}.json"));
    std::fs::write(&path, text).unwrap();
    path
}

/// What the process printed on stdout (UTF-8).
pub fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

/// What the process printed on stderr (UTF-8).
pub fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).unwrap()
}

/// A JSON array of numbers as f64s.
pub fn floats(value: &Value) -> Vec<f64> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

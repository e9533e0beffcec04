//! `hullsat bench --frames N`: one cpu1, cpu1-cached, cpu and cpu-cached entry per frame, the
//! same pairs and manifold counts on all; with `--backend gpu-frame`, one GPU entry per frame,
//! the last one checked against the CPU on the CPU-moved bodies.

use std::process::Command;

mod support;
use support::cli::{hullsat, stderr};
use support::gpu_required;

#[test]
fn bench_frames_reports_every_backend_per_frame() {
    let output = Command::new(env!("CARGO_BIN_EXE_hullsat"))
        .args([
            "bench", "--bodies", "300", "--shapes", "hull32", "--frames", "3", "--json",
        ])
        .output()
        .expect("hullsat runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&output.stdout).expect("a JSON array");
    assert_eq!(rows.len(), 12);
    for (frame, entries) in rows.chunks(4).enumerate() {
        let backends: Vec<_> = entries.iter().map(|e| e["backend"].as_str().unwrap()).collect();
        assert_eq!(backends, ["cpu1", "cpu1-cached", "cpu", "cpu-cached"]);
        let cold = &entries[0];
        assert!(cold["pairs"].as_u64().unwrap() > 0);
        for entry in entries {
            assert_eq!(entry["frame"], frame);
            assert_eq!(entry["pairs"], cold["pairs"]);
            assert_eq!(entry["manifolds"], cold["manifolds"]);
            assert!(entry["seconds"].as_f64().unwrap() > 0.0);
        }
    }
}

/// gpu-frame's frames: bodies moved on the GPU every frame, nothing read back in between; the
/// last frame's pairs hold the CPU's (on the CPU-moved bodies of the same seed), and its
/// manifolds are the CPU's but for verdict ties and pairs left to the host.
#[test]
fn bench_frames_on_gpu_frame_moves_the_bodies_on_the_gpu() {
    let output = hullsat(&[
        "bench",
        "--bodies",
        "300",
        "--seed",
        "4",
        "--frames",
        "3",
        "--backend",
        "gpu-frame",
        "--json",
    ]);
    if !output.status.success() && stderr(&output).contains("no backend could run") {
        assert!(
            !gpu_required(),
            "HULLSAT_REQUIRE_GPU=1 but no GPU ran: {}",
            stderr(&output)
        );
        eprintln!("skipping: {}", stderr(&output));
        return;
    }
    assert!(output.status.success(), "{}", stderr(&output));
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&output.stdout).expect("a JSON array");
    assert_eq!(rows.len(), 3);
    for (frame, row) in rows.iter().enumerate() {
        assert_eq!(row["frame"], frame, "{row}");
        assert_eq!(row["backend"], "gpu-frame", "{row}");
        assert!(row["pairs"].as_u64().unwrap() > 0, "{row}");
        assert!(
            row["listed"].as_u64().unwrap() <= row["pairs"].as_u64().unwrap(),
            "{row}"
        );
        assert!(row["seconds"].as_f64().unwrap() > 0.0, "{row}");
        assert!(["gpu-timestamps", "wall-average"].contains(&row["timing"].as_str().unwrap()));
    }
    let last = &rows[2];
    let count = |key: &str| last[key].as_u64().unwrap_or_else(|| panic!("{key} in {last}"));
    assert!(count("pairs") >= count("cpu_pairs"), "{last}");
    assert!(
        count("manifolds").abs_diff(count("cpu_manifolds")) <= count("verdict_ties") + count("host_pairs"),
        "{last}"
    );
    // Bodies touch, so the check above is not vacuous.
    assert!(count("cpu_manifolds") > 0, "{last}");
}

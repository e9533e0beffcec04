//! `hullsat bench --frames N`: one cpu1, cpu1-cached, cpu and cpu-cached entry per frame, the
//! same pairs and manifold counts on all.

use std::process::Command;

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

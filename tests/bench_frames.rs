//! `hullsat bench --frames N`: one cpu1 and one cpu1-cached entry per frame, the same pairs and
//! manifold counts on both.

use std::process::Command;

#[test]
fn bench_frames_reports_both_backends_per_frame() {
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
    assert_eq!(rows.len(), 6);
    for frame in rows.chunks(2) {
        let (cold, cached) = (&frame[0], &frame[1]);
        assert_eq!(cold["backend"], "cpu1");
        assert_eq!(cached["backend"], "cpu1-cached");
        assert_eq!(cold["frame"], cached["frame"]);
        assert_eq!(cold["pairs"], cached["pairs"]);
        assert!(cold["pairs"].as_u64().unwrap() > 0);
        assert_eq!(cold["manifolds"], cached["manifolds"]);
        assert!(cached["seconds"].as_f64().unwrap() > 0.0);
    }
}

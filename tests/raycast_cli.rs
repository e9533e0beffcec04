//! The `hullsat raycast` command line: hits on stdout or in `--out`, `--closest`, every backend
//! giving the same lists, `--help`, and bad input refused with exit code 2, one line on stderr
//! naming the JSON path, and no output.

use std::process::Output;

use serde_json::Value;

mod support;
use support::cli::{floats, hullsat, scene_file, scratch, stderr};
use support::gpu_required;

/// A unit box at the origin, a sphere (0.5) at x = 4, a capsule lying along X at x = 8 (half
/// height 0.5, radius 0.25), the ground y <= -1, an octahedron at z = 5.
const EXAMPLE: &str = include_str!("../examples/rays.json");

fn hits(output: &Output) -> Value {
    assert!(output.status.success(), "{}", stderr(output));
    serde_json::from_slice(&output.stdout).expect("JSON on stdout")
}

/// `(body, distance)` of every hit of every ray.
fn summary(hits: &Value) -> Vec<Vec<(u64, f64)>> {
    hits["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|list| {
            list.as_array()
                .unwrap()
                .iter()
                .map(|h| (h["body"].as_u64().unwrap(), h["distance"].as_f64().unwrap()))
                .collect()
        })
        .collect()
}

#[test]
fn the_example_gives_every_hit_in_order() {
    let path = scene_file("example", EXAMPLE);
    let out = hits(&hullsat(&["raycast", path.to_str().unwrap(), "--backend", "cpu"]));
    assert_eq!(
        summary(&out),
        [
            vec![(1, 4.0), (2, 8.5), (3, 12.25)],
            vec![],
            vec![(4, 4.0), (0, 6.0)],
            vec![(1, 0.0), (4, 4.0)],
        ]
    );
    let first = &out["hits"][0][0];
    assert_eq!(floats(&first["point"]), [-1.0, 0.0, 0.0]);
    assert_eq!(floats(&first["normal"]), [-1.0, 0.0, 0.0]);
    // Starting inside the box: distance 0, normal against the direction.
    assert_eq!(floats(&out["hits"][3][0]["normal"]), [0.0, 0.0, -1.0]);
    // The ground's hit, from above.
    assert_eq!(floats(&out["hits"][2][1]["point"]), [0.0, -1.0, 5.0]);
    assert_eq!(floats(&out["hits"][2][1]["normal"]), [0.0, 1.0, 0.0]);
    let closest = hits(&hullsat(&[
        "raycast",
        path.to_str().unwrap(),
        "--backend",
        "cpu",
        "--closest",
    ]));
    assert_eq!(
        summary(&closest),
        [vec![(1, 4.0)], vec![], vec![(4, 4.0)], vec![(1, 0.0)]]
    );
}

#[test]
fn every_backend_gives_the_same_lists_and_out_writes_a_file() {
    let path = scene_file("backends", EXAMPLE);
    let cpu = summary(&hits(&hullsat(&[
        "raycast",
        path.to_str().unwrap(),
        "--backend",
        "cpu",
    ])));
    let auto = hullsat(&["raycast", path.to_str().unwrap()]);
    assert_eq!(summary(&hits(&auto)), cpu);
    let gpu = hullsat(&["raycast", path.to_str().unwrap(), "--backend", "gpu"]);
    if gpu.status.success() {
        assert_eq!(summary(&hits(&gpu)), cpu);
    } else {
        assert!(!gpu_required(), "HULLSAT_REQUIRE_GPU=1 but: {}", stderr(&gpu));
        assert_eq!(gpu.status.code(), Some(1), "{}", stderr(&gpu));
        assert!(stderr(&auto).contains("note: using the CPU"), "{}", stderr(&auto));
    }
    let out = scratch("hits.json");
    let run = hullsat(&[
        "raycast",
        path.to_str().unwrap(),
        "--backend",
        "cpu",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(run.status.success() && run.stdout.is_empty(), "{}", stderr(&run));
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(summary(&written), cpu);
}

#[test]
fn bad_input_exits_2_naming_the_path() {
    let cases = [
        (
            "[1, 0, 0]}",
            "[0, 0, 0]}",
            "rays[0].direction: expected a finite non-zero vector",
        ),
        (
            "\"max_distance\": 3",
            "\"max_distance\": -3",
            "rays[1].max_distance: expected a number >= 0, got -3",
        ),
        (
            "\"rays\"",
            "\"pairs\"",
            "pairs: unknown field (expected one of: shapes, bodies, rays)",
        ),
        (
            "{\"shape\": 3,",
            "{\"shape\": 9,",
            "bodies[0].shape: shape 9 does not exist (5 shapes)",
        ),
        (
            "[0, 0, 0, 1]}",
            "[0, 0, 1, 1]}",
            "bodies[0].rotation: quaternion length 1.4142135 is not within 0.001 of 1",
        ),
    ];
    for (i, (from, to, expected)) in cases.into_iter().enumerate() {
        let text = EXAMPLE.replacen(from, to, 1);
        assert_ne!(text, EXAMPLE, "{from}");
        let path = scene_file(&format!("bad{i}"), &text);
        let out = scratch(&format!("bad{i}_hits.json"));
        for backend in ["cpu", "auto"] {
            let run = hullsat(&[
                "raycast",
                path.to_str().unwrap(),
                "--backend",
                backend,
                "--out",
                out.to_str().unwrap(),
            ]);
            assert_eq!(run.status.code(), Some(2), "{}", stderr(&run));
            assert_eq!(stderr(&run), format!("error: {expected}\n"));
            assert!(run.stdout.is_empty() && !out.exists());
        }
    }
    let missing = hullsat(&["raycast", "/nonexistent/scene.json"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(stderr(&missing).starts_with("error: cannot read scene file /nonexistent/scene.json"));
}

#[test]
fn help_documents_the_formats_and_conventions() {
    let help = hullsat(&["raycast", "--help"]);
    assert!(help.status.success());
    let text = String::from_utf8(help.stdout).unwrap();
    for needle in [
        "\"rays\"",
        "max_distance",
        "--closest",
        "--backend",
        "--out",
        "distance 0 with the normal opposite",
        "sorted by distance",
        "a zero direction is",
        "EXIT STATUS",
    ] {
        assert!(text.contains(needle), "--help lacks {needle:?}:\n{text}");
    }
}

#[test]
fn bench_times_the_ray_workload() {
    let run = hullsat(&[
        "bench",
        "--bodies",
        "300",
        "--rays",
        "500",
        "--repeat",
        "1",
        "--backend",
        "cpu1,cpu,gpu",
        "--json",
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    let rows: Value = serde_json::from_slice(&run.stdout).unwrap();
    let rows = rows.as_array().unwrap();
    let cpu1 = &rows[0];
    assert_eq!(cpu1["backend"], "cpu1");
    assert_eq!(cpu1["rays"], 500);
    assert_eq!(cpu1["threads"], 1);
    assert!(cpu1["rays_per_s"].as_f64().unwrap() > 0.0);
    let hits = cpu1["hits"].as_u64().unwrap();
    assert!(hits > 0, "{cpu1}");
    // Every backend that ran found the same hits.
    for row in rows {
        assert_eq!(row["hits"].as_u64(), Some(hits), "{row}");
    }
    match rows.iter().find(|r| r["backend"] == "gpu") {
        Some(gpu) => {
            assert!(gpu["dispatch_readback_s"].as_f64().is_some() && gpu["cpu_rays"].as_u64().is_some())
        }
        None => assert!(!gpu_required(), "{}", stderr(&run)),
    }
    let table = hullsat(&[
        "bench",
        "--bodies",
        "300",
        "--rays",
        "100",
        "--repeat",
        "1",
        "--backend",
        "cpu",
        "--closest",
    ]);
    let text = String::from_utf8(table.stdout).unwrap();
    assert!(
        text.contains("100 rays of length 5 (closest hit)") && text.contains("rays/s"),
        "{text}"
    );
    let bad = hullsat(&["bench", "--bodies", "30", "--rays", "10", "--ray-length", "-1"]);
    assert_eq!(bad.status.code(), Some(2));
    assert_eq!(
        stderr(&bad),
        "error: --ray-length: expected a finite number >= 0, got -1\n"
    );
    let without_rays = hullsat(&["bench", "--closest"]);
    assert_eq!(without_rays.status.code(), Some(2));
}

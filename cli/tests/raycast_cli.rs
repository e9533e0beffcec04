//! The `hullsat raycast` command line: hits on stdout or in `--out`, `--closest`, every backend
//! giving the same lists, `--help`, and bad input refused with exit code 2, one line on stderr
//! naming the JSON path, and no output.

use std::process::Output;

use glam::DVec3;
use hullsat::RayHit;
use hullsat::contract::rays::{RayTally, compare_ray_hits, ray_grazes};
use hullsat::generate::{ParticleSceneConfig, ShapeMix, generate_particle_scene};
use hullsat::raycast::json::parse_ray_scene_json;
use hullsat::raycast::workload::random_rays;
use serde_json::Value;

mod support;
use support::cli::{floats, hullsat, scene_file, scratch, stderr};
use support::gpu_required;

/// A unit box at the origin, a sphere (0.5) at x = 4, a capsule lying along X at x = 8 (half
/// height 0.5, radius 0.25), the ground y <= -1, an octahedron at z = 5.
const EXAMPLE: &str = include_str!("../../examples/rays.json");

fn hits(output: &Output) -> Value {
    assert!(output.status.success(), "{}", stderr(output));
    serde_json::from_slice(&output.stdout).expect("JSON on stdout")
}

/// `(body, distance)` of every hit of every ray ([`ray_hits`]).
fn summary(hits: &Value) -> Vec<Vec<(u32, f32)>> {
    ray_hits(hits)
        .iter()
        .map(|list| list.iter().map(|h| (h.body, h.distance)).collect())
        .collect()
}

/// Every hit of every ray, as the CLI wrote them.
fn ray_hits(hits: &Value) -> Vec<Vec<RayHit>> {
    let vec3 = |v: &Value| DVec3::from_slice(&floats(v));
    hits["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|list| {
            list.as_array()
                .unwrap()
                .iter()
                .map(|h| RayHit {
                    body: h["body"].as_u64().unwrap() as u32,
                    distance: h["distance"].as_f64().unwrap() as f32,
                    point: vec3(&h["point"]),
                    normal: vec3(&h["normal"]).as_vec3(),
                })
                .collect()
        })
        .collect()
}

/// The hits `gpu` of a GPU backend judged against the CPU's `cpu` on the ray scene `scene`
/// (JSON text) by the GPU = CPU contract for rays; panics naming the ray outside it.
#[track_caller]
fn assert_ray_outputs_agree(scene: &str, closest: bool, gpu: &Value, cpu: &Value) -> RayTally {
    let scene = parse_ray_scene_json(scene).expect("a ray scene");
    let (gpu, cpu) = (ray_hits(gpu), ray_hits(cpu));
    compare_ray_hits(&scene.shapes, &scene.bodies, &scene.rays, closest, &gpu, &cpu)
        .unwrap_or_else(|e| panic!("{e}"))
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
    let run = |extra: &[&str]| hullsat(&[&["raycast", path.to_str().unwrap()], extra].concat());
    let cpu = hits(&run(&["--backend", "cpu"]));
    let cpu_closest = hits(&run(&["--backend", "cpu", "--closest"]));
    // auto runs on a hardware GPU where one can (judged by the GPU = CPU contract, as gpu is),
    // on the CPU with a software adapter or none.
    let auto = run(&[]);
    let software = hullsat::gpu::shared_context()
        .map_or(true, |c| c.adapter_info().device_type == wgpu::DeviceType::Cpu);
    let tally = assert_ray_outputs_agree(EXAMPLE, false, &hits(&auto), &cpu);
    assert_eq!((tally.rays, tally.cpu_hits), (4, 7), "{tally:?}");
    let gpu = run(&["--backend", "gpu"]);
    if software {
        // The CPU on both sides: the same lists, bit for bit.
        assert_eq!(summary(&hits(&auto)), summary(&cpu));
    }
    if gpu.status.success() {
        assert!(
            !stderr(&auto).contains("note: using the CPU"),
            "{}",
            stderr(&auto)
        );
        let tally = assert_ray_outputs_agree(EXAMPLE, false, &hits(&gpu), &cpu);
        // Rays 2 and 3 enter the octahedron at a vertex: the two may pick other faces there.
        assert_eq!((tally.gpu_hits, tally.hits), (7, 7), "{tally:?}");
        let closest = hits(&run(&["--backend", "gpu", "--closest"]));
        let tally = assert_ray_outputs_agree(EXAMPLE, true, &closest, &cpu_closest);
        assert_eq!((tally.gpu_hits, tally.hits), (3, 3), "{tally:?}");
    } else {
        assert!(!gpu_required(), "HULLSAT_REQUIRE_GPU=1 but: {}", stderr(&gpu));
        assert_eq!(gpu.status.code(), Some(1), "{}", stderr(&gpu));
        assert!(stderr(&auto).contains("note: using the CPU"), "{}", stderr(&auto));
    }
    let out = scratch("hits.json");
    let written = run(&["--backend", "cpu", "--out", out.to_str().unwrap()]);
    assert!(
        written.status.success() && written.stdout.is_empty(),
        "{}",
        stderr(&written)
    );
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(written, cpu);
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
        "--shapes",
        "mixed",
        "--seed",
        "0",
        "--density",
        "0.3",
        "--rays",
        "500",
        "--ray-length",
        "5",
        "--repeat",
        "1",
        "--backend",
        "cpu1,cpu,gpu,gpu-resident",
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
    // The same workload here: the bench's scene and rays from the same settings.
    let config = ParticleSceneConfig {
        bodies: 300,
        seed: 0,
        density: 0.3,
        mix: ShapeMix::MIXED,
        margin: 0.0,
    };
    let scene = generate_particle_scene(&config).unwrap();
    let rays = random_rays(&scene.bodies, 500, Some(5.0), 0);
    let lists = hullsat::raycast::raycast(&scene.shapes, &scene.bodies, &rays, false).unwrap();
    assert_eq!(
        lists.iter().map(Vec::len).sum::<usize>() as u64,
        hits,
        "not the bench's workload"
    );
    // The CPU backends found the same hits.
    assert_eq!(rows[1]["backend"], "cpu");
    assert_eq!(rows[1]["hits"].as_u64(), Some(hits), "{}", rows[1]);
    // The GPU = CPU contract lets a body be on one side's list only where the ray grazes it: a
    // GPU backend's count is the CPU's within the number of such (ray, body) pairs.
    let grazing: usize = rays
        .iter()
        .map(|ray| {
            (0..scene.bodies.len() as u32)
                .filter(|&body| ray_grazes(&scene.shapes, &scene.bodies, body, ray))
                .count()
        })
        .sum();
    match rows.iter().find(|r| r["backend"] == "gpu") {
        Some(gpu) => {
            for split in [
                "prepare_s",
                "bvh_build_s",
                "upload_s",
                "dispatch_readback_s",
                "finish_s",
            ] {
                assert!(gpu[split].as_f64().is_some(), "{split}: {gpu}");
            }
            assert!(gpu["cpu_rays"].as_u64().is_some());
            let gpu_hits = gpu["hits"].as_u64().unwrap();
            assert!(
                gpu_hits.abs_diff(hits) <= grazing as u64,
                "gpu {gpu_hits} hits, cpu {hits}, {grazing} grazing (ray, body) pairs"
            );
            // The resident API, BVH built on the GPU: the same count by the same rule, and the
            // same rays past the slots as the whole call recomputed.
            let resident = rows
                .iter()
                .find(|r| r["backend"] == "gpu-resident")
                .expect("gpu-resident ran");
            assert!(resident["timing"].is_string(), "{resident}");
            let (recompute, cpu_rays) = (
                resident["rays_to_recompute"].as_u64().unwrap(),
                gpu["cpu_rays"].as_u64().unwrap(),
            );
            assert!(
                recompute.abs_diff(cpu_rays) <= grazing as u64,
                "{resident}, {gpu}"
            );
            let resident_hits = resident["hits"].as_u64().unwrap();
            assert!(
                resident_hits.abs_diff(hits) <= grazing as u64,
                "gpu-resident {resident_hits} hits, cpu {hits}, {grazing} grazing (ray, body) pairs"
            );
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

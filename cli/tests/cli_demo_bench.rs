//! `hullsat demo` and `hullsat bench`: small generated scenes run, report every field, agree
//! between backends on the pairs, and bad options exit 2 with a clear line.

use serde_json::Value;

mod support;
use support::cli::{assert_collide_outputs_agree, hullsat, stderr, stdout};
use support::gpu_required;

/// The number after `label` on its line of `report`.
fn count_after(report: &str, label: &str) -> u64 {
    let line = report
        .lines()
        .find_map(|line| line.strip_prefix(label))
        .unwrap_or_else(|| panic!("no line starting {label:?} in:\n{report}"));
    line.trim().parse().unwrap_or_else(|_| panic!("{label}{line}"))
}

/// Checks the counts and stage times every demo report has; returns the candidate pair count.
fn check_report_counts(report: &str) -> u64 {
    let pairs = count_after(report, "candidate pairs:");
    let manifolds = count_after(report, "touching pairs (manifolds):");
    let points = count_after(report, "contact points:");
    assert!(manifolds > 0 && manifolds <= pairs, "{report}");
    assert!(points >= manifolds && points <= 4 * manifolds, "{report}");
    for needle in ["time: generate ", ", broadphase ", ", narrowphase "] {
        assert!(report.contains(needle), "report lacks {needle:?}:\n{report}");
    }
    pairs
}

/// Fails under `HULLSAT_REQUIRE_GPU=1`, else prints why the GPU part is skipped.
fn no_gpu(why: &str) {
    assert!(!gpu_required(), "HULLSAT_REQUIRE_GPU=1 but no GPU ran: {why}");
    eprintln!("skipping the GPU part: {why}");
}

#[test]
fn demo_reports_counts_times_and_the_backend_check() {
    // 500 bodies: too few pairs for the GPU, so auto takes the CPU without making a device.
    let auto = hullsat(&["demo", "--bodies", "500", "--seed", "3"]);
    assert!(auto.status.success(), "{}", stderr(&auto));
    let report = stdout(&auto);
    assert!(
        report.starts_with("hullsat demo: 500 bodies (Mixed shapes, seed 3"),
        "{report}"
    );
    let pairs = check_report_counts(&report);
    assert!(
        report.contains(&format!(
            "threads; auto: {pairs} pairs are fewer than the GPU's crossover, "
        )),
        "{report}"
    );
    assert!(auto.stderr.is_empty(), "{}", stderr(&auto));

    // The GPU when asked for, judged by the contract against the CPU on the same pairs.
    let gpu = hullsat(&["demo", "--bodies", "500", "--seed", "3", "--backend", "gpu"]);
    if gpu.status.success() {
        let report = stdout(&gpu);
        assert!(report.contains("backend: gpu, adapter "), "{report}");
        assert!(report.contains("; --backend gpu\n"), "{report}");
        // The GPU broadphase's pairs: every CPU pair, and those its padded boxes add.
        let gpu_pairs = check_report_counts(&report);
        assert!(gpu_pairs >= pairs, "{report}");
        assert!(
            report.contains(&format!(
                ": all {pairs} CPU pairs found, {} more within the GPU's box padding",
                gpu_pairs - pairs
            )),
            "{report}"
        );
        for needle in [
            "gpu stages: setup ",
            ", upload ",
            ", dispatch+readback ",
            ", CPU clipping ",
            "clipping: on the GPU; ",
        ] {
            assert!(report.contains(needle), "report lacks {needle:?}:\n{report}");
        }
        assert!(
            report.contains(&format!("all {gpu_pairs} pairs within the GPU = CPU contract (")),
            "{report}"
        );
    } else {
        assert_eq!(gpu.status.code(), Some(1), "{}", stderr(&gpu));
        no_gpu(&stderr(&gpu));
    }

    // The CPU alone sees the same scene and pairs, and says that nothing was compared.
    let cpu = hullsat(&["demo", "--bodies", "500", "--seed", "3", "--backend", "cpu"]);
    assert!(cpu.status.success(), "{}", stderr(&cpu));
    let report = stdout(&cpu);
    assert!(report.contains("backend: cpu ("), "{report}");
    assert_eq!(check_report_counts(&report), pairs);
    assert!(report.contains("check: only the CPU ran"), "{report}");
    assert!(cpu.stderr.is_empty(), "{}", stderr(&cpu));
}

/// Above the crossover, auto looks at the adapter: the CPU on a software one (lavapipe), the GPU
/// on hardware, and the report says which and why.
#[test]
fn demo_auto_takes_the_cpu_on_a_software_adapter_and_says_why() {
    let output = hullsat(&["demo", "--bodies", "20000"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let report = stdout(&output);
    let pairs = check_report_counts(&report);
    let crossover = 3_000 * std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    let adapter = hullsat::gpu::shared_context().map(|c| c.adapter_info().clone());
    match adapter {
        _ if pairs < crossover => assert!(
            report.contains(&format!(
                "auto: {pairs} pairs are fewer than the GPU's crossover, {crossover}"
            )),
            "{report}"
        ),
        Ok(info) if info.device_type == wgpu::DeviceType::Cpu => {
            let why = format!(
                "auto: {pairs} pairs reach the GPU's crossover, {crossover}, but the adapter {} is a software \
                 renderer running on the CPU)",
                info.name
            );
            assert!(report.contains("backend: cpu ("), "{report}");
            assert!(report.contains(&why), "{report}");
            assert!(output.stderr.is_empty(), "{}", stderr(&output));
        }
        Ok(info) => {
            let why = format!(
                "auto: {pairs} pairs reach the GPU's crossover, {crossover}, on the adapter {}",
                info.name
            );
            assert!(report.contains("backend: gpu, adapter "), "{report}");
            assert!(report.contains(&why), "{report}");
        }
        Err(err) => {
            assert!(report.contains(&format!("auto: {err}")), "{report}");
            no_gpu(&stderr(&output));
        }
    }
}

#[test]
fn demo_takes_every_shape_preset() {
    for shapes in ["box", "hull8", "hull32", "hull64", "cylinder", "lesson"] {
        let output = hullsat(&["demo", "--bodies", "200", "--shapes", shapes, "--backend", "cpu"]);
        assert!(output.status.success(), "{shapes}: {}", stderr(&output));
        check_report_counts(&stdout(&output));
    }
}

#[test]
fn demo_terrain_puts_a_mesh_under_the_particles_on_both_backends() {
    let cpu = hullsat(&["demo", "--bodies", "2000", "--terrain", "--backend", "cpu"]);
    assert!(cpu.status.success(), "{}", stderr(&cpu));
    let report = stdout(&cpu);
    let pairs = check_report_counts(&report);
    let line = report
        .lines()
        .find(|l| l.starts_with("terrain: body 2000, 3200 triangles, "))
        .unwrap();
    let on_mesh: u64 = line
        .split(", ")
        .nth(2)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(on_mesh > 20 && on_mesh < pairs, "{report}");
    // The GPU broadphase and narrowphase (mesh pairs on the GPU), judged by the contract.
    let gpu = hullsat(&["demo", "--bodies", "2000", "--terrain", "--backend", "gpu"]);
    if gpu.status.code() == Some(1) && stderr(&gpu).contains("no GPU adapter found") {
        return no_gpu(&stderr(&gpu));
    }
    assert!(gpu.status.success(), "{}", stderr(&gpu));
    let report = stdout(&gpu);
    assert!(report.contains("within the GPU = CPU contract"), "{report}");
    // The GPU broadphase may list a few more terrain pairs (its padded boxes).
    assert!(
        report.contains("terrain: body 2000, 3200 triangles, "),
        "{report}"
    );
    // The mesh pairs ran on the GPU: few pairs took the CPU path.
    let host: u64 = report
        .split("clipping: on the GPU; ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no host pair count in {report}"));
    assert!(
        host < on_mesh / 4,
        "{host} host pairs, {on_mesh} terrain pairs: {report}"
    );
}

/// Checks one `bench --json` object: the keys and their relations; returns it.
fn check_bench_entry<'a>(entries: &'a [Value], backend: &str, pairs: u64) -> &'a Value {
    let entry = entries
        .iter()
        .find(|e| e["backend"] == backend)
        .unwrap_or_else(|| panic!("no {backend} entry in {entries:?}"));
    assert_eq!(entry["pairs"].as_u64(), Some(pairs), "{entry}");
    let median = entry["median_s"].as_f64().unwrap();
    assert!(median > 0.0, "{entry}");
    // The 95th percentile of the same runs is at least their median.
    assert!(entry["p95_s"].as_f64().unwrap() >= median, "{entry}");
    let rate = entry["pairs_per_s"].as_f64().unwrap();
    assert!(
        (rate * median - pairs as f64).abs() <= 1e-6 * pairs as f64,
        "{entry}"
    );
    assert!(entry["ratio_to_cpu1"].as_f64().unwrap() > 0.0, "{entry}");
    assert!(!entry["adapter"].as_str().unwrap().is_empty(), "{entry}");
    assert!(entry["manifolds"].as_u64().unwrap() <= pairs, "{entry}");
    entry
}

#[test]
fn bench_json_has_one_entry_per_backend() {
    let output = hullsat(&[
        "bench",
        "--bodies",
        "300",
        "--repeat",
        "2",
        "--json",
        "--backend",
        "cpu1,cpu,cpu-set,gpu,gpu-cpuclip,gpu-set",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let entries: Vec<Value> = serde_json::from_slice(&output.stdout).expect("bench --json prints JSON");
    let pairs = entries[0]["pairs"].as_u64().unwrap();
    assert!(pairs > 0);
    let cpu1 = check_bench_entry(&entries, "cpu1", pairs);
    assert_eq!(cpu1["ratio_to_cpu1"].as_f64(), Some(1.0));
    assert_eq!(cpu1["threads"].as_u64(), Some(1));
    let cpu = check_bench_entry(&entries, "cpu", pairs);
    assert!(cpu["threads"].as_u64().unwrap() >= 1);
    assert_eq!(cpu["manifolds"], cpu1["manifolds"], "same pairs, same verdicts");
    // collide_into's set holds the touching pairs collide finds.
    let cpu_set = check_bench_entry(&entries, "cpu-set", pairs);
    assert_eq!(cpu_set["manifolds"], cpu["manifolds"], "{cpu_set}");
    if entries.len() == 6 {
        let (gpu, gpu_set) = (
            check_bench_entry(&entries, "gpu", pairs),
            check_bench_entry(&entries, "gpu-set", pairs),
        );
        assert_eq!(
            gpu_set["manifolds"], gpu["manifolds"],
            "the same kernel output: {gpu_set}"
        );
        for backend in ["gpu", "gpu-cpuclip", "gpu-set"] {
            let gpu = check_bench_entry(&entries, backend, pairs);
            for key in ["upload_s", "dispatch_readback_s", "cpu_clipping_s"] {
                assert!(gpu[key].as_f64().unwrap() >= 0.0, "{key} in {gpu}");
            }
            // The GPU's own times (where the device has timestamps) are part of each run's
            // dispatch + readback, so each median is at most its median, their sum at most twice.
            let has_timestamps = hullsat::gpu::shared_context().is_ok_and(|c| c.has_timestamps());
            assert_eq!(gpu["gpu_s"].is_f64(), has_timestamps, "{gpu}");
            assert_eq!(gpu["gpu_copy_back_s"].is_f64(), has_timestamps, "{gpu}");
            if has_timestamps {
                let device = gpu["gpu_s"].as_f64().unwrap() + gpu["gpu_copy_back_s"].as_f64().unwrap();
                assert!(device > 0.0, "{gpu}");
                assert!(
                    device <= 2.0 * gpu["dispatch_readback_s"].as_f64().unwrap(),
                    "{gpu}"
                );
            }
            assert!(gpu["host_pairs"].as_u64().unwrap() <= pairs, "{gpu}");
            // Judged pair by pair by the GPU = CPU contract: counts differ only by verdict ties.
            let contract = &gpu["contract"];
            assert_eq!(contract["pairs"].as_u64(), Some(pairs), "{gpu}");
            let (g, c) = (
                gpu["manifolds"].as_u64().unwrap(),
                cpu1["manifolds"].as_u64().unwrap(),
            );
            assert!(
                g.abs_diff(c) <= contract["verdict_ties"].as_u64().unwrap(),
                "{backend}: {gpu}"
            );
        }
    } else {
        assert_eq!(entries.len(), 3, "{entries:?}");
        assert!(
            stderr(&output).contains("note: skipping backend gpu"),
            "{}",
            stderr(&output)
        );
        no_gpu(&stderr(&output));
    }
}

/// `hullsat bench` over 400 generated bodies, one timed run, with `extra` arguments: the
/// output.
fn bench_400_bodies(extra: &[&str]) -> std::process::Output {
    let args = [
        &["bench", "--bodies", "400", "--repeat", "1", "--json"][..],
        extra,
    ]
    .concat();
    hullsat(&args)
}

/// gpu-frame: the GPU broadphase's pairs hold the CPU's, and its narrowphase finds the manifolds
/// gpu-resident finds on the CPU's pairs, up to gpu-resident's verdict ties.
#[test]
fn bench_gpu_frame_runs_the_broadphase_and_narrowphase_on_the_gpu() {
    let output = bench_400_bodies(&["--backend", "gpu-resident,gpu-frame"]);
    if !output.status.success() {
        assert!(stderr(&output).contains("no adapter") || stderr(&output).contains("no backend could run"));
        no_gpu(&stderr(&output));
        return;
    }
    let entries: Vec<Value> = serde_json::from_slice(&output.stdout).expect("bench --json prints JSON");
    let pairs = entries[0]["pairs"].as_u64().unwrap();
    let (resident, frame) = (&entries[0], &entries[1]);
    assert_eq!(resident["backend"], "gpu-resident", "{resident}");
    assert_eq!(frame["backend"], "gpu-frame", "{frame}");
    assert!(frame["timing"].is_string(), "{frame}");
    assert!(frame["gpu_pairs"].as_u64().unwrap() >= pairs, "{frame}");
    let ties = resident["contract"]["verdict_ties"].as_u64().unwrap();
    let (frame_manifolds, resident_manifolds) = (
        frame["manifolds"].as_u64().unwrap(),
        resident["manifolds"].as_u64().unwrap(),
    );
    assert!(
        frame_manifolds.abs_diff(resident_manifolds) <= ties,
        "{frame}, {resident}"
    );
    assert_eq!(frame["pairs_sorted"], true, "{frame}");

    // --unsorted-pairs: the same pairs and manifolds, the pairs in the order found.
    let output = bench_400_bodies(&["--backend", "gpu-frame", "--unsorted-pairs"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let entries: Vec<Value> = serde_json::from_slice(&output.stdout).expect("bench --json prints JSON");
    let unsorted = &entries[0];
    assert_eq!(unsorted["pairs_sorted"], false, "{unsorted}");
    assert_eq!(unsorted["gpu_pairs"], frame["gpu_pairs"], "{unsorted}, {frame}");
    assert_eq!(unsorted["manifolds"], frame["manifolds"], "{unsorted}, {frame}");
}

#[test]
fn collide_clips_on_the_gpu_or_the_cpu_with_the_same_results_as_the_cpu() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/box_stack.json");
    let cpu = hullsat(&["collide", path, "--backend", "cpu"]);
    assert!(cpu.status.success(), "{}", stderr(&cpu));
    for clip in ["gpu", "cpu"] {
        let gpu = hullsat(&["collide", path, "--backend", "gpu", "--clip", clip, "--verbose"]);
        if gpu.status.code() == Some(1) && stderr(&gpu).contains("no GPU adapter found") {
            no_gpu(&stderr(&gpu));
            return;
        }
        assert!(gpu.status.success(), "{}", stderr(&gpu));
        let expected = if clip == "gpu" {
            "clipping: on the GPU; "
        } else {
            "clipping: on the CPU, from the GPU's SAT results"
        };
        assert!(stderr(&gpu).contains(expected), "{}", stderr(&gpu));
        assert_collide_outputs_agree(path, &stdout(&gpu), &stdout(&cpu));
    }
}

#[test]
fn bench_on_a_scene_file_uses_its_pairs() {
    let scene = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/box_stack.json");
    let output = hullsat(&[
        "bench",
        "--scene",
        scene,
        "--backend",
        "cpu1,cpu",
        "--repeat",
        "1",
        "--json",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let entries: Vec<Value> = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(entries.len(), 2);
    for backend in ["cpu1", "cpu"] {
        // The scene lists 7 pairs, 5 of which touch.
        let entry = check_bench_entry(&entries, backend, 7);
        assert_eq!(entry["manifolds"].as_u64(), Some(5), "{entry}");
    }

    let table = hullsat(&["bench", "--scene", scene, "--backend", "cpu", "--repeat", "3"]);
    assert!(table.status.success(), "{}", stderr(&table));
    let text = stdout(&table);
    assert!(
        text.contains("box_stack.json: 7 pairs, median and 95th percentile of 3 runs"),
        "{text}"
    );
    let row = text.lines().find(|l| l.starts_with("cpu ")).expect("a cpu row");
    assert!(row.contains("threads)"), "{row}");
    assert!(row.contains(" ms "), "{row}");
}

/// Runs `args` and checks the refusal: exit 2, nothing on stdout, `expected` on stderr.
fn assert_usage_error(args: &[&str], expected: &str) {
    let output = hullsat(args);
    assert_eq!(output.status.code(), Some(2), "{args:?}: {}", stderr(&output));
    assert!(output.stdout.is_empty(), "{args:?}");
    assert!(
        stderr(&output).contains(expected),
        "{args:?}: {}",
        stderr(&output)
    );
}

#[test]
fn bad_options_exit_2_with_a_clear_message() {
    assert_usage_error(
        &["demo", "--shapes", "foo"],
        "invalid value 'foo' for '--shapes <SHAPES>'",
    );
    assert_usage_error(
        &["demo", "--bodies", "0"],
        "invalid value '0' for '--bodies <BODIES>'",
    );
    assert_usage_error(
        &["demo", "--backend", "nope"],
        "invalid value 'nope' for '--backend <BACKEND>'",
    );
    assert_usage_error(
        &["bench", "--backend", "nope"],
        "invalid value 'nope' for '--backend <BACKEND>'",
    );
    assert_usage_error(
        &["bench", "--repeat", "0"],
        "invalid value '0' for '--repeat <REPEAT>'",
    );
    assert_usage_error(
        &["bench", "--scene", "examples/box_stack.json", "--bodies", "10"],
        "cannot be used with",
    );
    let density = hullsat(&["demo", "--bodies", "10", "--density", "2"]);
    assert_eq!(density.status.code(), Some(2));
    assert_eq!(
        stderr(&density),
        "error: --density: expected a number in (0, 1], got 2\n"
    );
    let margin = hullsat(&["demo", "--bodies", "10", "--margin", "-0.1"]);
    assert_eq!(margin.status.code(), Some(2));
    assert_eq!(
        stderr(&margin),
        "error: --margin: expected a finite number >= 0, got -0.1\n"
    );
    let zero_density = hullsat(&["bench", "--bodies", "10", "--density", "0"]);
    assert_eq!(zero_density.status.code(), Some(2));
    assert!(
        stderr(&zero_density).starts_with("error: --density: "),
        "{}",
        stderr(&zero_density)
    );
    let missing = hullsat(&["bench", "--scene", "does_not_exist.json"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(
        stderr(&missing).starts_with("error: cannot read scene file does_not_exist.json"),
        "{}",
        stderr(&missing)
    );
}

#[test]
fn help_lists_the_subcommands() {
    let help = stdout(&hullsat(&["--help"]));
    for needle in ["collide", "demo", "bench"] {
        assert!(help.contains(needle), "--help lacks {needle}:\n{help}");
    }
    let bench = stdout(&hullsat(&["bench", "--help"]));
    for needle in ["cpu1", "ratio_to_cpu1", "--repeat", "--json", "--scene"] {
        assert!(bench.contains(needle), "bench --help lacks {needle}");
    }
}

#[test]
fn bench_gpu_resident_lists_the_manifolds_cpu1_finds_but_for_verdict_ties() {
    let output = hullsat(&[
        "bench",
        "--bodies",
        "400",
        "--shapes",
        "box",
        "--repeat",
        "2",
        "--json",
        "--backend",
        "cpu1,gpu-resident",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let entries: Vec<serde_json::Value> =
        serde_json::from_slice(&output.stdout).expect("bench --json prints JSON");
    if entries.len() == 1 {
        assert!(!gpu_required(), "{}", stderr(&output));
        return;
    }
    let (cpu1, resident) = (&entries[0], &entries[1]);
    assert_eq!(resident["backend"], "gpu-resident");
    assert!(cpu1["manifolds"].as_u64().unwrap() > 0, "{cpu1}");
    // Its verdicts are judged pair by pair by the GPU = CPU contract: counts differ only by
    // verdict ties.
    let contract = &resident["contract"];
    assert_eq!(contract["pairs"], cpu1["pairs"], "{resident}");
    let (r, c) = (
        resident["manifolds"].as_u64().unwrap(),
        cpu1["manifolds"].as_u64().unwrap(),
    );
    assert!(
        r.abs_diff(c) <= contract["verdict_ties"].as_u64().unwrap(),
        "{resident}"
    );
    assert_eq!(resident["host_pairs"].as_u64(), Some(0), "{resident}");
    assert_eq!(resident["readback_bytes"].as_u64(), Some(0), "{resident}");
    let timing = resident["timing"].as_str().unwrap();
    assert!(
        ["gpu-timestamps", "submit-and-wait"].contains(&timing),
        "{resident}"
    );
    assert!(resident["median_s"].as_f64().unwrap() > 0.0, "{resident}");
}

/// `--gpu-stages --json`: gpu-frame and gpu-resident (narrowphase, then rays) add their stages
/// in recording order, each a finite non-negative median; none where the device has no
/// timestamp queries.
#[test]
fn bench_gpu_stages_lists_each_stage_of_the_resident_backends() {
    let scene = [
        "bench",
        "--bodies",
        "300",
        "--repeat",
        "2",
        "--json",
        "--gpu-stages",
    ];
    let frame = [&scene[..], &["--backend", "gpu-frame,gpu-resident"]].concat();
    let rays = [&scene[..], &["--rays", "500", "--backend", "gpu-resident"]].concat();
    let bvh = ["bvh boxes", "bvh morton", "bvh sort", "bvh tree"];
    // No "resident order" at 300 bodies: below 16,384 pair slots the pairs are not ordered.
    let resident = ["resident prepare", "resident sat", "resident clip"];
    let frame_stages = [&bvh[..], &["broadphase traversal", "pair sort"], &resident].concat();
    let ray_stages = [&bvh[..], &["ray traversal"]].concat();
    let timed = hullsat::gpu::shared_context()
        .is_ok_and(|c| c.device().features().contains(wgpu::Features::TIMESTAMP_QUERY));
    for (args, expected) in [
        (frame, vec![frame_stages, resident.to_vec()]),
        (rays, vec![ray_stages]),
    ] {
        let output = hullsat(&args);
        if !output.status.success() && stderr(&output).contains("no backend could run") {
            assert!(!gpu_required(), "{}", stderr(&output));
            return;
        }
        assert!(output.status.success(), "{}", stderr(&output));
        let entries: Vec<Value> = serde_json::from_slice(&output.stdout).expect("a JSON array");
        assert_eq!(entries.len(), expected.len(), "{entries:?}");
        for (entry, expected) in entries.iter().zip(expected) {
            let Some(stages) = entry["stages"].as_array() else {
                assert!(!timed, "no stages with timestamp queries: {entry}");
                assert!(stderr(&output).contains("has no timestamp queries"));
                continue;
            };
            let labels: Vec<&str> = stages.iter().map(|s| s["label"].as_str().unwrap()).collect();
            assert_eq!(labels, expected, "{entry}");
            for stage in stages {
                let t = stage["median_s"].as_f64().expect("a number");
                assert!(t.is_finite() && t >= 0.0, "{stage}");
            }
        }
    }
}

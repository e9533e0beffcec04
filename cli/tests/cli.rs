//! The `hullsat collide` command line: results on stdout or in `--out`, and every class of bad
//! input refused with exit code 2, one line on stderr naming the JSON path, and no output.

use std::process::{Command, Output};

use serde_json::Value;

mod support;
use support::cli::{assert_collide_outputs_agree, floats, hullsat, scene_file, scratch, stderr, stdout};
use support::gpu_required;

/// Box A (half extents 0.5) at the origin, a smaller box B (0.4) resting on it 0.01 deep, and
/// a sphere far away.
const BOX_ON_BOX: &str = r#"{
  "shapes": [{"box": {"half_extents": [0.5, 0.5, 0.5]}}, {"box": {"half_extents": [0.4, 0.4, 0.4]}},
             {"sphere": {"radius": 0.5}}],
  "bodies": [{"shape": 0, "position": [0, 0, 0], "rotation": [0, 0, 0, 1]},
             {"shape": 1, "position": [0, 0.89, 0], "rotation": [0, 0, 0, 1]},
             {"shape": 2, "position": [5, 0, 0], "rotation": [0, 0, 0, 1]}],
  "pairs": [[0, 1], [0, 2]],
  "margin": 0.0
}"#;

/// Runs the scene with `--out` and checks the refusal: exit 2, exactly `error: {expected}` on
/// stderr, nothing on stdout, no results file.
fn assert_bad_input(name: &str, scene: &str, expected: &str) {
    let path = scene_file(name, scene);
    let out = scratch(&format!("{name}.results.json"));
    let output = hullsat(&["collide", path.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2), "{name}: {}", stderr(&output));
    assert_eq!(stderr(&output), format!("error: {expected}\n"), "{name}");
    assert!(output.stdout.is_empty(), "{name}: stdout not empty");
    assert!(!out.exists(), "{name}: a results file was written");
}

/// `BOX_ON_BOX` with the first `from` replaced by `to`.
fn box_on_box_with(from: &str, to: &str) -> String {
    assert!(BOX_ON_BOX.contains(from), "{from}");
    BOX_ON_BOX.replacen(from, to, 1)
}

fn check_box_on_box_results(results: &Value) {
    let manifolds = results["manifolds"].as_array().unwrap();
    assert_eq!(manifolds.len(), 1, "only the touching pair is listed: {results}");
    let m = &manifolds[0];
    assert_eq!(m["pair"], serde_json::json!([0, 1]));
    let normal = floats(&m["normal"]);
    assert!(
        (normal[0].abs() + (normal[1] - 1.0).abs() + normal[2].abs()) < 1e-5,
        "{normal:?}"
    );
    assert!((m["separation"].as_f64().unwrap() + 0.01).abs() < 1e-5, "{m}");
    let points = m["points"].as_array().unwrap();
    assert_eq!(points.len(), 4, "{m}");
    let mut corners = Vec::new();
    let mut ids = Vec::new();
    for p in points {
        let position = floats(&p["position"]);
        // Midway between A's top (y = 0.5) and B's bottom (y = 0.49), under B's corners.
        assert!((position[1] - 0.495).abs() < 1e-5, "{p}");
        assert!(
            (position[0].abs() - 0.4).abs() < 1e-5 && (position[2].abs() - 0.4).abs() < 1e-5,
            "{p}"
        );
        corners.push((position[0] > 0.0, position[2] > 0.0));
        assert!((p["depth"].as_f64().unwrap() - 0.01).abs() < 1e-5, "{p}");
        ids.push(p["id"].as_u64().unwrap());
    }
    corners.sort();
    corners.dedup();
    assert_eq!(corners.len(), 4, "one point per corner: {m}");
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 4, "distinct feature ids: {m}");
}

#[test]
fn box_on_box_prints_one_manifold_with_four_points() {
    let path = scene_file("box_on_box", BOX_ON_BOX);
    // On the CPU, so that no GPU note or driver message reaches stderr.
    let output = hullsat(&["collide", path.to_str().unwrap(), "--backend", "cpu"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(output.stderr.is_empty(), "{}", stderr(&output));
    let results: Value = serde_json::from_slice(&output.stdout).unwrap();
    check_box_on_box_results(&results);
}

#[test]
fn out_writes_the_results_file() {
    let path = scene_file("box_on_box_out", BOX_ON_BOX);
    let out = scratch("box_on_box_out.results.json");
    let output = hullsat(&[
        "collide",
        path.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--backend",
        "cpu",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(output.stdout.is_empty());
    let results: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    check_box_on_box_results(&results);
}

#[test]
fn verbose_reports_on_stderr_only() {
    let path = scene_file("verbose", BOX_ON_BOX);
    let output = hullsat(&["collide", path.to_str().unwrap(), "--verbose"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("3 shapes, 3 bodies, 2 pairs"),
        "{}",
        stderr(&output)
    );
    // Two pairs: auto takes the CPU, below the GPU's crossover, and says so.
    assert!(
        stderr(&output).contains("backend: cpu (auto: 2 pairs are fewer than the GPU's crossover, "),
        "{}",
        stderr(&output)
    );
    let results: Value = serde_json::from_slice(&output.stdout).unwrap();
    check_box_on_box_results(&results);
}

#[test]
fn an_empty_pair_list_gives_no_manifolds() {
    let path = scene_file("no_pairs", &box_on_box_with("[[0, 1], [0, 2]]", "[]"));
    let output = hullsat(&["collide", path.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    let results: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(results, serde_json::json!({"manifolds": []}));
}

#[test]
fn the_example_scene_runs() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/box_stack.json");
    let output = hullsat(&["collide", path]);
    assert!(output.status.success(), "{}", stderr(&output));
    let results: Value = serde_json::from_slice(&output.stdout).unwrap();
    let pairs: Vec<&Value> = results["manifolds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| &m["pair"])
        .collect();
    // Ground-box, box-box twice, ground-hull and ground-sphere touch; the sphere and the
    // pyramid are far from the bottom box.
    let expected = [[0, 1], [1, 2], [2, 3], [0, 4], [0, 5]].map(|p| serde_json::json!(p));
    assert_eq!(pairs, expected.iter().collect::<Vec<_>>());
}

#[test]
fn the_same_scene_gives_the_same_bytes() {
    // Feature ids index the hull's own arrays, so they are only reproducible if hull building
    // and the batch are deterministic from run to run.
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/box_stack.json");
    let first = hullsat(&["collide", path]);
    assert!(first.status.success(), "{}", stderr(&first));
    for _ in 0..4 {
        assert_eq!(hullsat(&["collide", path]).stdout, first.stdout);
    }
}

#[test]
fn bad_json_syntax() {
    assert_bad_input(
        "syntax",
        &box_on_box_with("\"margin\": 0.0", "\"margin\": 0.0,"),
        "$: invalid JSON: trailing comma at line 9 column 1",
    );
}

#[test]
fn missing_field() {
    assert_bad_input(
        "missing_field",
        &box_on_box_with("\"position\": [0, 0.89, 0], ", ""),
        "bodies[1].position: missing field",
    );
}

#[test]
fn wrong_type() {
    assert_bad_input(
        "wrong_type",
        &box_on_box_with("\"radius\": 0.5", "\"radius\": [0.5]"),
        "shapes[2].sphere.radius: expected a finite number, got an array of 1 items",
    );
    assert_bad_input(
        "wrong_index_type",
        &box_on_box_with("\"shape\": 2", "\"shape\": 1.5"),
        "bodies[2].shape: expected a non-negative integer index, got 1.5",
    );
}

#[test]
fn unknown_shape_kind() {
    assert_bad_input(
        "unknown_kind",
        &box_on_box_with("{\"sphere\"", "{\"cone\""),
        "shapes[2]: unknown shape kind \"cone\" (expected one of hull, box, sphere, capsule, cylinder, half_space, trimesh, compound)",
    );
}

#[test]
fn bad_cylinder_names_its_parameter() {
    assert_bad_input(
        "bad_cylinder",
        &box_on_box_with(
            "{\"sphere\": {\"radius\": 0.5}}",
            "{\"cylinder\": {\"half_height\": 0.5, \"radius\": 0}}",
        ),
        "shapes[2].cylinder.radius: expected a positive finite number, got 0",
    );
}

#[test]
fn bad_shape_parameter() {
    assert_bad_input(
        "bad_box",
        &box_on_box_with("[0.4, 0.4, 0.4]", "[0.4, -0.4, 0.4]"),
        "shapes[1].box.half_extents.y: expected a positive finite number, got -0.4",
    );
}

#[test]
fn non_unit_rotation() {
    assert_bad_input(
        "non_unit_rotation",
        &box_on_box_with("\"rotation\": [0, 0, 0, 1]", "\"rotation\": [0, 0, 0, 2]"),
        "bodies[0].rotation: quaternion length 2 is not within 0.001 of 1",
    );
}

#[test]
fn non_finite_numbers() {
    // JSON has no NaN or inf literals; the nearest are numbers beyond the float range.
    assert_bad_input(
        "f32_overflow",
        &box_on_box_with("[0, 0.89, 0]", "[0, 1e39, 0]"),
        "bodies[1].position: coordinate 1e39 is outside the supported range ±1e12",
    );
    let path = scene_file("f64_overflow", &box_on_box_with("[0, 0.89, 0]", "[0, 1e999, 0]"));
    let output = hullsat(&["collide", path.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    let message = stderr(&output);
    assert!(
        message.starts_with("error: bodies[1].position[1]: invalid JSON: number out of range at line 5"),
        "{message}"
    );
    assert!(message.ends_with("(expected finite numbers)\n"), "{message}");
    let nan = box_on_box_with("[0, 0.89, 0]", "[0, NaN, 0]");
    let output = hullsat(&["collide", scene_file("nan", &nan).to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).starts_with("error: $: invalid JSON: expected value at line 5"));
}

#[test]
fn coplanar_hull() {
    assert_bad_input(
        "coplanar_hull",
        &box_on_box_with(
            "{\"sphere\": {\"radius\": 0.5}}",
            "{\"hull\": {\"points\": [[0, 0, 0], [1, 0, 0], [0, 0, 1], [1, 0, 1], [0.5, 0, 0.5]]}}",
        ),
        "shapes[2].hull: points are coplanar",
    );
}

#[test]
fn missing_body_shape_and_self_pair() {
    assert_bad_input(
        "missing_body",
        &box_on_box_with("[[0, 1], [0, 2]]", "[[0, 1], [0, 12]]"),
        "pairs[1]: body 12 does not exist",
    );
    assert_bad_input(
        "self_pair",
        &box_on_box_with("[[0, 1], [0, 2]]", "[[0, 1], [2, 2]]"),
        "pairs[1]: body 2 is paired with itself",
    );
    assert_bad_input(
        "missing_shape",
        &box_on_box_with("\"shape\": 2", "\"shape\": 3"),
        "bodies[2].shape: shape 3 does not exist (3 shapes)",
    );
}

#[test]
fn half_space_pair() {
    let scene = box_on_box_with(
        "{\"sphere\": {\"radius\": 0.5}}",
        "{\"half_space\": {\"normal\": [0, 1, 0], \"offset\": 0}}",
    );
    let scene = scene.replacen("{\"shape\": 0", "{\"shape\": 2", 1);
    assert_bad_input(
        "half_space_pair",
        &scene,
        "pairs[1]: two half-spaces cannot be tested against each other",
    );
}

#[test]
fn negative_margin() {
    assert_bad_input(
        "negative_margin",
        &box_on_box_with("\"margin\": 0.0", "\"margin\": -0.1"),
        "margin: expected a finite number >= 0, got -0.1",
    );
}

#[test]
fn without_pairs_the_batch_is_checked_before_the_broadphase_in_the_same_order() {
    let no_pairs = box_on_box_with("\"pairs\": [[0, 1], [0, 2]],", "");
    let bad_rotation = no_pairs.replacen("\"rotation\": [0, 0, 0, 1]", "\"rotation\": [0, 0, 0, 2]", 1);
    assert_bad_input(
        "no_pairs_non_unit_rotation",
        &bad_rotation,
        "bodies[0].rotation: quaternion length 2 is not within 0.001 of 1",
    );
    assert_bad_input(
        "no_pairs_missing_shape",
        &no_pairs.replacen("\"shape\": 2", "\"shape\": 3", 1),
        "bodies[2].shape: shape 3 does not exist (3 shapes)",
    );
    // The margin first, as when the scene lists its pairs.
    assert_bad_input(
        "no_pairs_negative_margin",
        &bad_rotation.replacen("\"margin\": 0.0", "\"margin\": -0.1", 1),
        "margin: expected a finite number >= 0, got -0.1",
    );
}

#[test]
fn without_pairs_the_broadphase_picks_them() {
    // The sphere is 4 units from the others: only the resting boxes are a candidate pair.
    let path = scene_file(
        "no_pairs_key",
        &box_on_box_with("\"pairs\": [[0, 1], [0, 2]],", ""),
    );
    let output = hullsat(&["collide", path.to_str().unwrap(), "--backend", "cpu", "--verbose"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("1 pairs (broadphase)"),
        "{}",
        stderr(&output)
    );
    let results: Value = serde_json::from_slice(&output.stdout).unwrap();
    check_box_on_box_results(&results);
}

#[test]
fn without_pairs_the_example_lists_the_touching_pairs() {
    let scene: Value = serde_json::from_str(include_str!("../../examples/box_stack.json")).unwrap();
    let mut scene = scene.as_object().unwrap().clone();
    scene.remove("pairs");
    let path = scene_file("box_stack_no_pairs", &Value::Object(scene).to_string());
    let output = hullsat(&["collide", path.to_str().unwrap(), "--backend", "cpu"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let results: Value = serde_json::from_slice(&output.stdout).unwrap();
    let pairs: Vec<&Value> = results["manifolds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| &m["pair"])
        .collect();
    // The broadphase writes pairs as [min, max], sorted; the same five touch as with the
    // scene's own list.
    let expected = [[0, 1], [0, 4], [0, 5], [1, 2], [2, 3]].map(|p| serde_json::json!(p));
    assert_eq!(pairs, expected.iter().collect::<Vec<_>>());
}

#[test]
fn gpu_and_cpu_backends_agree_by_the_contract() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/box_stack.json");
    let cpu = hullsat(&["collide", path, "--backend", "cpu"]);
    assert!(cpu.status.success(), "{}", stderr(&cpu));
    let gpu = hullsat(&["collide", path, "--backend", "gpu", "--verbose"]);
    if gpu.status.code() == Some(1) && stderr(&gpu).contains("no GPU adapter found") {
        assert!(!gpu_required(), "HULLSAT_REQUIRE_GPU=1 but: {}", stderr(&gpu));
        eprintln!("skipping GPU test: {}", stderr(&gpu).trim());
        return;
    }
    assert!(gpu.status.success(), "{}", stderr(&gpu));
    assert!(stderr(&gpu).contains("adapter: "), "{}", stderr(&gpu));
    assert!(stderr(&gpu).contains("gpu: 5 manifolds"), "{}", stderr(&gpu));
    let tally = assert_collide_outputs_agree(path, &stdout(&gpu), &stdout(&cpu));
    assert_eq!(tally.pairs, 7, "{tally:?}");
}

#[test]
fn unreadable_scene_file() {
    let path = scratch("does_not_exist.json");
    let output = hullsat(&["collide", path.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    let message = stderr(&output);
    assert!(message.starts_with("error: cannot read scene file ") && message.contains("does_not_exist.json"));
    assert_eq!(message.lines().count(), 1, "{message}");
    assert!(output.stdout.is_empty());
}

#[test]
fn bad_backend_is_a_usage_error() {
    let path = scene_file("bad_backend", BOX_ON_BOX);
    let output = hullsat(&["collide", path.to_str().unwrap(), "--backend", "tpu"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("invalid value 'tpu' for '--backend"),
        "{}",
        stderr(&output)
    );
    assert!(output.stdout.is_empty());
}

#[test]
fn help_documents_the_format_and_conventions() {
    let output = hullsat(&["collide", "--help"]);
    assert!(output.status.success());
    let help = String::from_utf8(output.stdout).unwrap();
    for needle in [
        "\"shapes\"",
        "\"half_extents\"",
        "\"half_space\"",
        "\"rotation\": [x,y,z,w]",
        "\"pairs\"",
        "\"margin\"",
        "\"manifolds\"",
        "\"separation\"",
        "\"depth\"",
        "from the pair's first body (a) toward its second (b)",
        "negative = penetrating",
        "Feature ids",
        "--backend",
        "EXIT STATUS",
    ] {
        assert!(help.contains(needle), "--help lacks {needle}");
    }
}

/// Runs `collide` on `scene` on the CPU, with stdout connected to `stdout`.
fn hullsat_to(scene: &std::path::Path, stdout: impl Into<std::process::Stdio>) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hullsat"))
        .args(["collide", scene.to_str().unwrap(), "--backend", "cpu"])
        .stdout(stdout)
        .output()
        .expect("the hullsat binary runs")
}

/// Checks a failure: `code`, one line on stderr starting `error: {start}`, nothing on stdout.
#[track_caller]
fn assert_failed(output: &Output, code: i32, start: &str) {
    let message = stderr(output);
    assert_eq!(output.status.code(), Some(code), "{message}");
    assert!(message.starts_with(&format!("error: {start}")), "{message}");
    assert_eq!(message.lines().count(), 1, "{message}");
    assert!(message.ends_with('\n'), "{message}");
    assert!(output.stdout.is_empty(), "stdout not empty");
}

/// Two bodies (shape indices, positions) of `shapes`, paired.
fn two_bodies(shapes: &str, a: (u32, &str), b: (u32, &str)) -> String {
    format!(
        r#"{{"shapes": [{shapes}],
  "bodies": [{{"shape": {}, "position": {}, "rotation": [0, 0, 0, 1]}},
             {{"shape": {}, "position": {}, "rotation": [0, 0, 0, 1]}}],
  "pairs": [[0, 1]]}}"#,
        a.0, a.1, b.0, b.1
    )
}

const UNIT_BOX: &str = r#"{"box": {"half_extents": [1, 1, 1]}}"#;

/// Scenes near the limits of f32 that printed NaN, inf or a bogus verdict, and the JSON path
/// the range check names for each.
fn near_f32_limits() -> Vec<(&'static str, String, &'static str)> {
    let huge_sphere = r#"{"sphere": {"radius": 3e38}}"#;
    vec![
        (
            "huge_spheres",
            two_bodies(huge_sphere, (0, "[0, 0, 0]"), (0, "[1, 0, 0]")),
            "shapes[0].sphere.radius",
        ),
        (
            "huge_sphere_on_box",
            two_bodies(
                &format!("{huge_sphere}, {UNIT_BOX}"),
                (0, "[0, 0, 0]"),
                (1, "[1, 0, 0]"),
            ),
            "shapes[0].sphere.radius",
        ),
        (
            "boxes_at_2e38",
            two_bodies(UNIT_BOX, (0, "[2e38, 0, 0]"), (0, "[-2e38, 0, 0]")),
            "bodies[0].position",
        ),
        (
            "boxes_6e38_apart",
            two_bodies(UNIT_BOX, (0, "[3e38, 0, 0]"), (0, "[-3e38, 0, 0]")),
            "bodies[0].position",
        ),
        (
            "touching_boxes_at_2e38",
            two_bodies(UNIT_BOX, (0, "[2e38, 0, 0]"), (0, "[2e38, 1, 0]")),
            "bodies[0].position",
        ),
        (
            "long_capsule",
            two_bodies(
                &format!(r#"{{"capsule": {{"half_height": 3e38, "radius": 1}}}}, {UNIT_BOX}"#),
                (0, "[0, 0, 0]"),
                (1, "[0, 0, 0]"),
            ),
            "shapes[0].capsule.half_height",
        ),
    ]
}

#[test]
fn scenes_near_the_f32_limits_never_print_invalid_numbers() {
    // Whatever the verdict (refused as out of range, or a pair that cannot be computed), no
    // NaN or inf reaches stdout or the results file. With the supported range checked at the
    // door these are all exit 2 (see `scenes_near_the_f32_limits_are_refused_by_the_range_check`).
    for (name, scene, _) in near_f32_limits() {
        let path = scene_file(name, &scene);
        let output = hullsat(&["collide", path.to_str().unwrap(), "--backend", "cpu"]);
        let text = String::from_utf8(output.stdout.clone()).unwrap();
        if output.status.success() {
            // Finite output must at least be JSON that reads back.
            let results: Value =
                serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}: {text}"));
            assert!(
                !text.contains("NaN") && !text.contains("inf"),
                "{name}: {results}"
            );
            continue;
        }
        let message = stderr(&output);
        assert!(matches!(output.status.code(), Some(1 | 2)), "{name}: {message}");
        assert!(text.is_empty(), "{name}: {text}");
        assert_eq!(message.lines().count(), 1, "{name}: {message}");
        assert!(message.starts_with("error: "), "{name}: {message}");
    }
}

#[test]
fn scenes_near_the_f32_limits_are_refused_by_the_range_check() {
    for (name, scene, path) in near_f32_limits() {
        let file = scene_file(name, &scene);
        let out = scratch(&format!("{name}.results.json"));
        let output = hullsat(&[
            "collide",
            file.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--backend",
            "cpu",
        ]);
        assert_failed(&output, 2, &format!("{path}: "));
        assert!(!out.exists(), "{name}: a results file was written");
    }
}

#[test]
fn a_pair_without_a_finite_result_is_named_and_nothing_is_written() {
    // Both spheres have radius 3e38: the separation overflows. Without the range check this is
    // the writer's refusal (exit 1, naming the pair); with it, the radius is refused (exit 2).
    let scene = scene_file(
        "non_finite",
        &two_bodies(
            r#"{"sphere": {"radius": 3e38}}"#,
            (0, "[0, 0, 0]"),
            (0, "[1, 0, 0]"),
        ),
    );
    let output = hullsat(&["collide", scene.to_str().unwrap(), "--backend", "cpu"]);
    match output.status.code() {
        Some(1) => assert_failed(
            &output,
            1,
            "cannot compute pairs[0] ([0, 1]): separation is not finite",
        ),
        _ => assert_failed(&output, 2, "shapes[0].sphere.radius: "),
    }
}

#[test]
fn a_failed_run_leaves_an_existing_results_file_as_it_was() {
    let out = scratch("kept.results.json");
    std::fs::write(&out, "earlier results").unwrap();
    let bad = scene_file("kept_bad", &box_on_box_with("\"margin\": 0.0", "\"margin\": -1"));
    let non_finite = scene_file(
        "kept_non_finite",
        &two_bodies(
            r#"{"sphere": {"radius": 3e38}}"#,
            (0, "[0, 0, 0]"),
            (0, "[1, 0, 0]"),
        ),
    );
    for scene in [bad, non_finite] {
        let output = hullsat(&["collide", scene.to_str().unwrap(), "--out", out.to_str().unwrap()]);
        assert!(matches!(output.status.code(), Some(1 | 2)), "{}", stderr(&output));
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "earlier results");
    }
    // A successful run replaces it, and leaves no temporary file beside it.
    let good = scene_file("kept_good", BOX_ON_BOX);
    let output = hullsat(&[
        "collide",
        good.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--backend",
        "cpu",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    check_box_on_box_results(&serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap());
    let leftovers: Vec<_> = std::fs::read_dir(out.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|name| name.ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn a_full_device_is_exit_1_and_is_not_removed() {
    use std::os::unix::fs::FileTypeExt;
    let scene = scene_file("full", BOX_ON_BOX);
    let output = hullsat(&[
        "collide",
        scene.to_str().unwrap(),
        "--out",
        "/dev/full",
        "--backend",
        "cpu",
    ]);
    assert_failed(
        &output,
        1,
        "cannot write results to /dev/full: No space left on device",
    );
    // hullsat used to delete the path after a failed write; as root that removed the device.
    let kind = std::fs::metadata("/dev/full").unwrap().file_type();
    assert!(kind.is_char_device(), "/dev/full is still a device");

    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    let output = hullsat_to(&scene, full);
    assert_failed(
        &output,
        1,
        "cannot write results to stdout: No space left on device",
    );
}

#[test]
fn a_closed_pipe_is_exit_1_not_a_panic() {
    let scene = scene_file("closed_pipe", BOX_ON_BOX);
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let output = hullsat_to(&scene, writer);
    assert_failed(&output, 1, "cannot write results to stdout: Broken pipe");
}

#[test]
fn repeated_keys_are_bad_input() {
    assert_bad_input(
        "repeated_margin",
        &box_on_box_with("\"margin\": 0.0", "\"margin\": 0.0, \"margin\": 1.0"),
        "margin: duplicate key at line 8 column 25",
    );
    assert_bad_input(
        "repeated_position",
        &box_on_box_with(
            "\"position\": [0, 0.89, 0], ",
            "\"position\": [0, 0.89, 0], \"position\": [0, 9, 0], ",
        ),
        "bodies[1].position: duplicate key at line 5 column 62",
    );
}

#[test]
fn text_from_the_input_is_escaped_in_the_one_line_error() {
    // A newline and a terminal escape sequence in a key, in a shape kind, and in a value.
    let cases = [
        (
            "escaped_key",
            box_on_box_with("\"margin\"", "\"mar\\ngin\\u001b[2J\""),
            r#"$["mar\ngin\u001b[2J"]: unknown field (expected one of: shapes, bodies, pairs, margin)"#,
        ),
        (
            "escaped_kind",
            box_on_box_with("{\"sphere\"", "{\"sph\\r\\nere\""),
            r#"shapes[2]: unknown shape kind "sph\r\nere" (expected one of hull, box, sphere, capsule, cylinder, half_space, trimesh, compound)"#,
        ),
        (
            "escaped_value",
            box_on_box_with("\"radius\": 0.5", "\"radius\": \"\\u001b]0;title\\u0007\""),
            r#"shapes[2].sphere.radius: expected a finite number, got the string "\u001b]0;title\u0007""#,
        ),
    ];
    for (name, scene, expected) in cases {
        assert_bad_input(name, &scene, expected);
    }
    // A file name with a newline is echoed escaped too.
    let output = hullsat(&["collide", "no\nsuch\u{1b}[1m.json"]);
    assert_failed(&output, 2, r"cannot read scene file no\nsuch\u001b[1m.json: ");
}

/// `count` unit boxes at one place, without a pair list.
fn pile_of_boxes(count: usize) -> String {
    let body = r#"{"shape": 0, "position": [0, 0, 0], "rotation": [0, 0, 0, 1]}"#;
    format!(
        r#"{{"shapes": [{UNIT_BOX}], "bodies": [{}]}}"#,
        vec![body; count].join(", ")
    )
}

#[test]
fn broadphase_pairs_are_capped() {
    // 20,000 boxes at one place: 199,990,000 candidate pairs used to abort (SIGABRT); over the
    // default limit of ten million they are refused before any is stored.
    let path = scene_file("pile_20000", &pile_of_boxes(20_000));
    let output = hullsat(&["collide", path.to_str().unwrap(), "--backend", "cpu"]);
    assert_failed(
        &output,
        2,
        "pairs: not given, and the broadphase finds more than 10000000 candidate pairs \
         (at most 199990000); raise --max-pairs or list the pairs to test",
    );
    // --max-pairs lowers or raises the limit.
    let path = scene_file("pile_100", &pile_of_boxes(100));
    let run = |limit: &str| {
        hullsat(&[
            "collide",
            path.to_str().unwrap(),
            "--backend",
            "cpu",
            "--max-pairs",
            limit,
        ])
    };
    assert_failed(
        &run("4949"),
        2,
        "pairs: not given, and the broadphase finds more than 4949 candidate pairs (at most 4950)",
    );
    let output = run("4950");
    assert!(output.status.success(), "{}", stderr(&output));
    let results: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(results["manifolds"].as_array().unwrap().len(), 4950);
}

#[test]
fn oversized_hulls_are_refused_before_building() {
    // One point over the limit: reading stops there, before any hull is built.
    let points = vec!["[0, 0, 0]"; 65_537].join(", ");
    let scene = box_on_box_with(
        "{\"sphere\": {\"radius\": 0.5}}",
        &format!("{{\"hull\": {{\"points\": [{points}]}}}}"),
    );
    assert_bad_input(
        "oversized_hull",
        &scene,
        "shapes[2].hull.points: more than 65536 points (the limit)",
    );
}

#[test]
fn demo_and_bench_reports_on_a_full_disk_are_exit_1() {
    for args in [
        ["demo", "--backend", "cpu", "--bodies", "200"].as_slice(),
        ["bench", "--backend", "cpu", "--bodies", "200", "--repeat", "1"].as_slice(),
    ] {
        let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
        let output = Command::new(env!("CARGO_BIN_EXE_hullsat"))
            .args(args)
            .stdout(full)
            .output()
            .unwrap();
        assert_failed(
            &output,
            1,
            "cannot write results to stdout: No space left on device",
        );
    }
}

/// A GPU run in a shell without `XDG_RUNTIME_DIR` (a root shell, CI) prints nothing on stderr:
/// Mesa's device-select layer would print an error line twice there, and hullsat turns it off.
#[test]
fn a_gpu_run_without_xdg_runtime_dir_prints_no_error_line() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/box_stack.json");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_hullsat"))
        .args(["collide", path, "--backend", "gpu"])
        .env_remove("XDG_RUNTIME_DIR")
        .env_remove("NODEVICE_SELECT")
        .output()
        .expect("the hullsat binary runs");
    if output.status.code() == Some(1) && stderr(&output).contains("no GPU adapter found") {
        assert!(!gpu_required(), "HULLSAT_REQUIRE_GPU=1 but: {}", stderr(&output));
        return;
    }
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(stderr(&output), "", "a successful run says nothing on stderr");
}

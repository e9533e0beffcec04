//! The `hullsat collide` command line: results on stdout or in `--out`, and every class of bad
//! input refused with exit code 2, one line on stderr naming the JSON path, and no output.

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;

mod support;
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

fn hullsat(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hullsat"))
        .args(args)
        .output()
        .expect("the hullsat binary runs")
}

/// A fresh path named `name` in this test target's scratch folder (any old file removed).
fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    let _ = std::fs::remove_file(&path);
    path
}

fn scene_file(name: &str, text: &str) -> PathBuf {
    let path = scratch(&format!("{name}.json"));
    std::fs::write(&path, text).unwrap();
    path
}

fn floats(value: &Value) -> Vec<f64> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).unwrap()
}

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
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/box_stack.json");
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
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/box_stack.json");
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
        &box_on_box_with("{\"sphere\"", "{\"cylinder\""),
        "shapes[2]: unknown shape kind \"cylinder\" (expected one of hull, box, sphere, capsule, half_space)",
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
        message.starts_with("error: $: invalid JSON: number out of range at line 5"),
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
    let scene: Value = serde_json::from_str(include_str!("../examples/box_stack.json")).unwrap();
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
fn gpu_and_cpu_backends_give_the_same_json() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/box_stack.json");
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
    assert_eq!(
        String::from_utf8(gpu.stdout).unwrap(),
        String::from_utf8(cpu.stdout).unwrap()
    );
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

//! `hullsat collide` and `hullsat raycast` on a scene with compounds: a dumbbell on a floor gets
//! one point under each ball (listed pairs and the broadphase's), GPU = CPU by the contract,
//! rays hitting a compound's nearest child, and malformed compounds refused with exit code 2
//! naming the JSON path.

use serde_json::Value;

mod support;
use support::cli::{assert_collide_outputs_agree, floats, hullsat, scene_file, stderr, stdout};
use support::gpu_required;

/// A floor (the half-space y <= 0, body 0), a dumbbell (two balls of radius 0.5 at x = ±1 on a
/// thin bar) lying on it 0.01 deep (body 1), an L of two boxes standing on it 0.01 deep at
/// x = 5 (body 2), and a box well above both (body 3).
fn compound_scene(pairs: Option<&str>) -> String {
    let pairs = pairs.map_or(String::new(), |p| format!(r#""pairs": {p},"#));
    format!(
        r#"{{"shapes": [
            {{"half_space": {{"normal": [0, 1, 0], "offset": 0}}}},
            {{"compound": {{"children": [
                {{"shape": {{"sphere": {{"radius": 0.5}}}}, "position": [-1, 0, 0]}},
                {{"shape": {{"sphere": {{"radius": 0.5}}}}, "position": [1, 0, 0]}},
                {{"shape": {{"capsule": {{"half_height": 0.8, "radius": 0.1}}}},
                  "rotation": [0, 0, 0.70710678, 0.70710678]}}]}}}},
            {{"compound": {{"children": [
                {{"shape": {{"box": {{"half_extents": [0.25, 1, 0.5]}}}}, "position": [0, 0.75, 0]}},
                {{"shape": {{"box": {{"half_extents": [0.5, 0.25, 0.5]}}}}, "position": [0.75, 0, 0]}}]}}}},
            {{"box": {{"half_extents": [0.3, 0.3, 0.3]}}}}
          ],
          "bodies": [
            {{"shape": 0, "position": [0, 0, 0], "rotation": [0, 0, 0, 1]}},
            {{"shape": 1, "position": [0, 0.49, 0], "rotation": [0, 0, 0, 1]}},
            {{"shape": 2, "position": [5, 0.24, 0], "rotation": [0, 0, 0, 1]}},
            {{"shape": 3, "position": [0, 5, 0], "rotation": [0, 0, 0, 1]}}
          ],
          {pairs}
          "margin": 0.0}}"#
    )
}

/// The manifolds of a collide output.
fn manifolds(output: &std::process::Output) -> Vec<Value> {
    assert!(output.status.success(), "{}", stderr(output));
    let results: Value = serde_json::from_slice(&output.stdout).unwrap();
    results["manifolds"].as_array().unwrap().clone()
}

#[test]
fn a_dumbbell_on_a_floor_gets_one_point_under_each_ball() {
    let listed = scene_file(
        "compound_pairs",
        &compound_scene(Some("[[0, 1], [2, 0], [1, 3], [1, 2]]")),
    );
    let found = manifolds(&hullsat(&[
        "collide",
        listed.to_str().unwrap(),
        "--backend",
        "cpu",
    ]));
    assert_eq!(found.len(), 2, "{found:?}");
    let dumbbell = &found[0];
    assert_eq!(dumbbell["pair"], serde_json::json!([0, 1]));
    // From the floor up into the dumbbell; one point under each ball.
    assert!(floats(&dumbbell["normal"])[1] > 0.999, "{dumbbell}");
    assert!(
        (dumbbell["separation"].as_f64().unwrap() + 0.01).abs() < 1e-5,
        "{dumbbell}"
    );
    let mut xs: Vec<f64> = dumbbell["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| floats(&p["position"])[0])
        .collect();
    xs.sort_by(f64::total_cmp);
    assert_eq!(xs.len(), 2, "{dumbbell}");
    assert!((xs[0] + 1.0).abs() < 1e-5 && (xs[1] - 1.0).abs() < 1e-5, "{xs:?}");
    // The L given second: from it down into the floor, its four outer corners.
    let l = &found[1];
    assert_eq!(l["pair"], serde_json::json!([2, 0]));
    assert!(floats(&l["normal"])[1] < -0.999, "{l}");
    assert_eq!(l["points"].as_array().unwrap().len(), 4, "{l}");
    // The broadphase finds the same two contacts.
    let broad = scene_file("compound_broadphase", &compound_scene(None));
    let output = hullsat(&["collide", broad.to_str().unwrap(), "--backend", "cpu"]);
    let pairs: Vec<Value> = manifolds(&output).iter().map(|m| m["pair"].clone()).collect();
    assert_eq!(pairs, [serde_json::json!([0, 1]), serde_json::json!([0, 2])]);
}

#[test]
fn gpu_and_cpu_agree_on_compound_pairs() {
    let path = scene_file(
        "compound_gpu",
        &compound_scene(Some("[[0, 1], [2, 0], [1, 3], [1, 2], [0, 3]]")),
    );
    let path = path.to_str().unwrap();
    let cpu = hullsat(&["collide", path, "--backend", "cpu"]);
    assert!(cpu.status.success(), "{}", stderr(&cpu));
    let gpu = hullsat(&["collide", path, "--backend", "gpu"]);
    if gpu.status.code() == Some(1) && stderr(&gpu).contains("no GPU adapter found") {
        assert!(!gpu_required(), "HULLSAT_REQUIRE_GPU=1 but: {}", stderr(&gpu));
        eprintln!("skipping GPU test: {}", stderr(&gpu).trim());
        return;
    }
    assert!(gpu.status.success(), "{}", stderr(&gpu));
    let tally = assert_collide_outputs_agree(path, &stdout(&gpu), &stdout(&cpu));
    assert_eq!((tally.pairs, tally.cpu_manifolds), (5, 2), "{tally:?}");
}

#[test]
fn rays_hit_a_compounds_nearest_child() {
    let scene: Value = serde_json::from_str(&compound_scene(None)).unwrap();
    let mut scene = scene.as_object().unwrap().clone();
    scene.remove("margin");
    scene.insert(
        "rays".into(),
        serde_json::json!([
            {"origin": [1, 3, 0], "direction": [0, -1, 0]},
            {"origin": [-5, 0.49, 0], "direction": [1, 0, 0]},
            {"origin": [0, 3, 0], "direction": [0, -1, 0]},
            {"origin": [9, 1, 0], "direction": [-1, 0, 0]}
        ]),
    );
    let path = scene_file("compound_rays", &Value::Object(scene).to_string());
    for backend in ["cpu", "auto", "gpu"] {
        let output = hullsat(&[
            "raycast",
            path.to_str().unwrap(),
            "--backend",
            backend,
            "--closest",
        ]);
        if backend == "gpu"
            && output.status.code() == Some(1)
            && stderr(&output).contains("no GPU adapter found")
        {
            assert!(!gpu_required(), "{}", stderr(&output));
            continue;
        }
        assert!(output.status.success(), "{backend}: {}", stderr(&output));
        let hits: Value = serde_json::from_slice(&output.stdout).unwrap();
        let hits = hits["hits"].as_array().unwrap();
        let first = |ray: usize| hits[ray].as_array().unwrap().first().cloned().unwrap();
        let near = |hit: &Value, body: u32, distance: f64, normal: [f64; 3]| {
            assert_eq!(hit["body"], body, "{hit}");
            assert!(
                (hit["distance"].as_f64().unwrap() - distance).abs() < 1e-5,
                "{hit}"
            );
            let n = floats(&hit["normal"]);
            assert!((0..3).all(|i| (n[i] - normal[i]).abs() < 1e-5), "{hit}");
        };
        // The top of the ball at x = 1, the near ball along x, the bar between the balls, and
        // the L's leg past its foot.
        near(&first(0), 1, 3.0 - 0.99, [0.0, 1.0, 0.0]);
        near(&first(1), 1, 3.5, [-1.0, 0.0, 0.0]);
        near(&first(2), 1, 3.0 - 0.59, [0.0, 1.0, 0.0]);
        near(&first(3), 2, 3.75, [1.0, 0.0, 0.0]);
    }
}

#[test]
fn malformed_compounds_are_refused_naming_the_path() {
    let base = compound_scene(Some("[[0, 1]]"));
    let at = base.find("{\"compound\"").unwrap();
    let end = at + base[at..].find("]}}").unwrap() + 3;
    let sphere = r#"{"shape": {"sphere": {"radius": 0.5}}}"#;
    let many = vec![sphere; 65].join(", ");
    for (name, compound, expected) in [
        (
            "compound_rotation",
            format!(
                r#"{{"compound": {{"children": [{sphere}, {{"shape": {{"sphere": {{"radius": 0.5}}}}, "rotation": [0, 0, 0.5, 1]}}]}}}}"#
            ),
            "shapes[1].compound.children[1].rotation: child 1 rotation has length 1.118034; it must be a unit quaternion (within 1e-3)",
        ),
        (
            "compound_mesh_child",
            r#"{"compound": {"children": [{"shape": {"trimesh": {"vertices": [], "triangles": []}}}]}}"#
                .to_string(),
            "shapes[1].compound.children[0].shape.trimesh: a compound's child must be a convex shape (hull, box, sphere, capsule, cylinder)",
        ),
        (
            "compound_position",
            format!(
                r#"{{"compound": {{"children": [{sphere}, {sphere}, {{"shape": {{"sphere": {{"radius": 0.5}}}}, "position": [0, 1]}}]}}}}"#
            ),
            "shapes[1].compound.children[2].position: expected 3 finite numbers, got an array of 2 items",
        ),
        (
            "compound_radius",
            r#"{"compound": {"children": [{"shape": {"sphere": {"radius": -1}}}]}}"#.to_string(),
            "shapes[1].compound.children[0].shape.sphere.radius: expected a positive finite number, got -1",
        ),
        (
            "compound_empty",
            r#"{"compound": {"children": []}}"#.to_string(),
            "shapes[1].compound.children: the compound has no children",
        ),
        (
            "compound_many",
            format!(r#"{{"compound": {{"children": [{many}]}}}}"#),
            "shapes[1].compound.children: 65 children, more than the limit of 64",
        ),
    ] {
        let scene = format!("{}{compound}{}", &base[..at], &base[end..]);
        let path = scene_file(name, &scene);
        let output = hullsat(&["collide", path.to_str().unwrap(), "--backend", "cpu"]);
        assert_eq!(output.status.code(), Some(2), "{name}: {}", stderr(&output));
        assert_eq!(stderr(&output), format!("error: {expected}\n"), "{name}");
        assert!(output.stdout.is_empty(), "{name}");
    }
}

/// A square of two triangles at y = 0 under the floor's dumbbell (body 4): it gets what the
/// floor gets, in either order, on both backends (GPU = CPU by the contract).
#[test]
fn a_compound_on_a_triangle_mesh_gets_what_it_gets_on_the_floor() {
    let mut scene: Value = serde_json::from_str(&compound_scene(None)).unwrap();
    let mesh = serde_json::json!({"trimesh": {
        "vertices": [[-4, 0, -4], [-4, 0, 4], [4, 0, 4], [4, 0, -4]],
        "triangles": [[0, 1, 3], [3, 1, 2]]}});
    scene["shapes"].as_array_mut().unwrap().push(mesh);
    let body = serde_json::json!({"shape": 4, "position": [0, 0, 0], "rotation": [0, 0, 0, 1]});
    scene["bodies"].as_array_mut().unwrap().push(body);
    scene["pairs"] = serde_json::json!([[0, 1], [4, 1], [1, 4]]);
    let path = scene_file("compound_mesh_pair", &scene.to_string());
    let path = path.to_str().unwrap();
    let cpu = hullsat(&["collide", path, "--backend", "cpu"]);
    let found = manifolds(&cpu);
    assert_eq!(found.len(), 3, "{found:?}");
    let xs = |m: &Value| {
        let mut xs: Vec<f64> = m["points"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| floats(&p["position"])[0])
            .collect();
        xs.sort_by(f64::total_cmp);
        xs
    };
    for (m, sign) in [(&found[1], 1.0), (&found[2], -1.0)] {
        let normal = floats(&m["normal"]);
        assert!(normal[1] * sign > 0.999, "{m}");
        assert!((m["separation"].as_f64().unwrap() + 0.01).abs() < 1e-5, "{m}");
        let (on_mesh, on_floor) = (xs(m), xs(&found[0]));
        assert_eq!(on_mesh.len(), 2, "{m}");
        assert!(
            on_mesh.iter().zip(&on_floor).all(|(a, b)| (a - b).abs() < 1e-5),
            "{m}"
        );
    }
    let gpu = hullsat(&["collide", path, "--backend", "gpu"]);
    if gpu.status.code() == Some(1) && stderr(&gpu).contains("no GPU adapter found") {
        assert!(!gpu_required(), "HULLSAT_REQUIRE_GPU=1 but: {}", stderr(&gpu));
        return;
    }
    assert!(gpu.status.success(), "{}", stderr(&gpu));
    let tally = assert_collide_outputs_agree(path, &stdout(&gpu), &stdout(&cpu));
    assert_eq!((tally.pairs, tally.cpu_manifolds), (3, 3), "{tally:?}");
}

#[test]
fn the_demo_runs_dumbbells_and_l_shapes_on_both_backends() {
    let touching = |report: &str| -> usize {
        let line = report.lines().find(|l| l.starts_with("touching pairs")).unwrap();
        line.rsplit(' ').next().unwrap().parse().unwrap()
    };
    let args = ["demo", "--shapes", "compound", "--bodies", "600", "--seed", "3"];
    let cpu = hullsat(&[&args[..], &["--backend", "cpu"]].concat());
    assert!(cpu.status.success(), "{}", stderr(&cpu));
    let report = stdout(&cpu);
    assert!(touching(&report) > 50, "{report}");
    let gpu = hullsat(&[&args[..], &["--backend", "gpu"]].concat());
    if gpu.status.code() == Some(1) && stderr(&gpu).contains("no GPU adapter found") {
        assert!(!gpu_required(), "HULLSAT_REQUIRE_GPU=1 but: {}", stderr(&gpu));
        return;
    }
    // Exit 0 means every pair was within the GPU = CPU contract (3 otherwise).
    assert!(gpu.status.success(), "{}", stderr(&gpu));
    let gpu_report = stdout(&gpu);
    assert_eq!(touching(&gpu_report), touching(&report), "{gpu_report}");
    assert!(
        gpu_report.contains("within the GPU = CPU contract"),
        "{gpu_report}"
    );
}

#[test]
fn the_demo_drops_compounds_on_the_terrain_on_both_backends() {
    let terrain_pairs = |report: &str| -> usize {
        let line = report
            .lines()
            .find(|l| l.starts_with("terrain: body 600, "))
            .unwrap();
        line.split(", ")
            .nth(2)
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    let args = [
        "demo",
        "--shapes",
        "compound",
        "--bodies",
        "600",
        "--seed",
        "3",
        "--terrain",
    ];
    let cpu = hullsat(&[&args[..], &["--backend", "cpu"]].concat());
    assert!(cpu.status.success(), "{}", stderr(&cpu));
    // No note: the compounds' pairs with the terrain are listed and collided.
    assert!(stderr(&cpu).is_empty(), "{}", stderr(&cpu));
    let report = stdout(&cpu);
    assert!(terrain_pairs(&report) > 20, "{report}");
    let gpu = hullsat(&[&args[..], &["--backend", "gpu"]].concat());
    if gpu.status.code() == Some(1) && stderr(&gpu).contains("no GPU adapter found") {
        assert!(!gpu_required(), "HULLSAT_REQUIRE_GPU=1 but: {}", stderr(&gpu));
        return;
    }
    // Exit 0: every pair, the terrain's included, within the GPU = CPU contract.
    assert!(gpu.status.success(), "{}", stderr(&gpu));
    let gpu_report = stdout(&gpu);
    assert!(
        gpu_report.contains("within the GPU = CPU contract"),
        "{gpu_report}"
    );
    assert!(
        terrain_pairs(&gpu_report) >= terrain_pairs(&report),
        "{gpu_report}"
    );
    // The compounds' pairs with the terrain ran on the GPU: few took the CPU path.
    let host: usize = gpu_report
        .split("clipping: on the GPU; ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no host pair count in {gpu_report}"));
    assert!(
        host < terrain_pairs(&gpu_report) / 4,
        "{host} host pairs: {gpu_report}"
    );
}

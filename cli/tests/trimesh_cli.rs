//! `hullsat collide` and `hullsat raycast` on a scene with a terrain mesh: contacts with the
//! mesh (listed pairs and the broadphase's), GPU = CPU by the contract, rays stopping at the
//! terrain, and malformed meshes refused with exit code 2 naming the JSON path.

use glam::{DVec3, Quat, Vec3};
use hullsat::generate::terrain;
use hullsat::scene::json::write_scene_json;
use hullsat::{Body, Cuboid, Pose, Scene, Shape, Sphere};
use serde_json::Value;

mod support;
use support::cli::{assert_collide_outputs_agree, floats, hullsat, scene_file, stderr, stdout};
use support::gpu_required;

/// A 16 × 16-cell terrain over ±4 with hills 0.3 high (body 0), a box and a sphere resting on
/// it near the origin (bodies 1, 2) and a sphere well above it (body 3).
fn terrain_scene(pairs: Option<Vec<[u32; 2]>>) -> String {
    let at = |shape: u32, x: f64, y: f64, z: f64| Body {
        shape,
        pose: Pose::new(DVec3::new(x, y, z), Quat::from_rotation_y(0.3)),
    };
    write_scene_json(&Scene {
        shapes: vec![
            Shape::from(terrain(16, 4.0, 0.3).unwrap()),
            Shape::Cuboid(Cuboid::new(Vec3::new(0.3, 0.2, 0.3)).unwrap()),
            Shape::Sphere(Sphere::new(0.25).unwrap()),
        ],
        bodies: vec![
            at(0, 0.0, 0.0, 0.0),
            at(1, 0.0, 0.18, 0.0),
            at(2, 1.0, 0.0, 2.0),
            at(2, -1.0, 3.0, 1.0),
        ],
        pairs,
        margin: 0.01,
    })
}

/// The manifolds of a collide output.
fn manifolds(output: &std::process::Output) -> Vec<Value> {
    assert!(output.status.success(), "{}", stderr(output));
    let results: Value = serde_json::from_slice(&output.stdout).unwrap();
    results["manifolds"].as_array().unwrap().clone()
}

#[test]
fn collide_finds_the_bodies_resting_on_the_terrain() {
    // Listed both ways round, and through the broadphase.
    let listed = scene_file(
        "terrain_pairs",
        &terrain_scene(Some(vec![[0, 1], [2, 0], [0, 3]])),
    );
    let found = manifolds(&hullsat(&[
        "collide",
        listed.to_str().unwrap(),
        "--backend",
        "cpu",
    ]));
    assert_eq!(found.len(), 2, "{found:?}");
    for (m, (pair, up)) in found.iter().zip([([0, 1], 1.0), ([2, 0], -1.0)]) {
        assert_eq!(m["pair"], serde_json::json!(pair));
        // From the pair's first body to its second: up out of the terrain, down into it.
        let normal = floats(&m["normal"]);
        assert!(normal[1] * up > 0.9, "{m}");
        assert!(m["separation"].as_f64().unwrap() < 0.0, "{m}");
    }
    let broad = scene_file("terrain_broadphase", &terrain_scene(None));
    let output = hullsat(&["collide", broad.to_str().unwrap(), "--backend", "cpu"]);
    let pairs: Vec<Value> = manifolds(&output).iter().map(|m| m["pair"].clone()).collect();
    assert_eq!(pairs, [serde_json::json!([0, 1]), serde_json::json!([0, 2])]);
}

#[test]
fn gpu_and_cpu_agree_on_terrain_pairs() {
    let path = scene_file(
        "terrain_gpu",
        &terrain_scene(Some(vec![[0, 1], [2, 0], [0, 3], [1, 2]])),
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
    assert_eq!((tally.pairs, tally.cpu_manifolds), (4, 2), "{tally:?}");
}

#[test]
fn rays_stop_at_the_terrain() {
    let scene: Value = serde_json::from_str(&terrain_scene(None)).unwrap();
    let mut scene = scene.as_object().unwrap().clone();
    scene.remove("margin");
    scene.insert(
        "rays".into(),
        serde_json::json!([
            {"origin": [0, 5, 0], "direction": [0, -1, 0]},
            {"origin": [3, 5, -3], "direction": [0, -1, 0]},
            {"origin": [3, -5, -3], "direction": [0, 1, 0], "max_distance": 20},
            {"origin": [9, 5, 0], "direction": [0, -1, 0]}
        ]),
    );
    let path = scene_file("terrain_rays", &Value::Object(scene).to_string());
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
        let first = |ray: usize| hits[ray].as_array().unwrap().first().cloned();
        // The box over the origin, then the terrain, seen from above and below, then nothing.
        assert_eq!(first(0).unwrap()["body"], 1);
        let (above, below) = (first(1).unwrap(), first(2).unwrap());
        assert_eq!(
            (&above["body"], &below["body"]),
            (&serde_json::json!(0), &serde_json::json!(0))
        );
        let height = floats(&above["point"])[1];
        assert!((height - floats(&below["point"])[1]).abs() < 1e-4 && height.abs() <= 0.3);
        assert!(floats(&above["normal"])[1] > 0.5 && floats(&below["normal"])[1] < -0.5);
        assert!(first(3).is_none());
    }
}

#[test]
fn malformed_meshes_are_refused_naming_the_path() {
    let base = terrain_scene(Some(vec![[0, 1]]));
    let mesh_at = base.find("{\"trimesh\"").unwrap();
    let mesh_end = mesh_at + base[mesh_at..].find("]]}}").unwrap() + 4;
    for (name, mesh, expected) in [
        (
            "mesh_index",
            r#"{"trimesh": {"vertices": [[0,0,0],[0,0,1],[1,0,0]], "triangles": [[0,1,2],[2,1,7]]}}"#,
            "shapes[0].trimesh.triangles[1]: triangle 1 names vertex 7, but there are 3 vertices",
        ),
        (
            "mesh_degenerate",
            r#"{"trimesh": {"vertices": [[0,0,0],[0,0,1],[0,0,2]], "triangles": [[0,1,2]]}}"#,
            "shapes[0].trimesh.triangles[0]: triangle 0 is degenerate (repeated vertex, or collinear vertices)",
        ),
        (
            "mesh_arity",
            r#"{"trimesh": {"vertices": [[0,0,0],[0,0,1],[1,0,0,4]], "triangles": [[0,1,2]]}}"#,
            "shapes[0].trimesh.vertices[2]: expected 3 finite numbers, got an array of 4 items",
        ),
        (
            "mesh_empty",
            r#"{"trimesh": {"vertices": [], "triangles": []}}"#,
            "shapes[0].trimesh.triangles: the mesh has no triangles",
        ),
    ] {
        let scene = format!("{}{mesh}{}", &base[..mesh_at], &base[mesh_end..]);
        let path = scene_file(name, &scene);
        let output = hullsat(&["collide", path.to_str().unwrap(), "--backend", "cpu"]);
        assert_eq!(output.status.code(), Some(2), "{name}: {}", stderr(&output));
        assert_eq!(stderr(&output), format!("error: {expected}\n"), "{name}");
        assert!(output.stdout.is_empty(), "{name}");
    }
    // Two meshes cannot pair.
    let mut scene: Value = serde_json::from_str(&base).unwrap();
    let second = serde_json::json!({"shape": 0, "position": [0, -0.1, 0], "rotation": [0, 0, 0, 1]});
    scene["bodies"].as_array_mut().unwrap().push(second);
    scene["pairs"] = serde_json::json!([[0, 1], [4, 0]]);
    let path = scene_file("two_meshes", &scene.to_string());
    let output = hullsat(&["collide", path.to_str().unwrap(), "--backend", "cpu"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert_eq!(
        stderr(&output),
        "error: pairs[1]: two triangle meshes cannot be tested against each other (meshes are static)\n"
    );
}

#[test]
fn bench_times_rays_over_the_terrain_on_the_gpu_too() {
    let text = terrain_scene(None);
    let path = scene_file("terrain_ray_bench", &text);
    let run = hullsat(&[
        "bench",
        "--scene",
        path.to_str().unwrap(),
        "--rays",
        "400",
        "--ray-length",
        "6",
        "--repeat",
        "1",
        "--backend",
        "cpu,gpu,gpu-resident",
        "--json",
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    let rows: Value = serde_json::from_slice(&run.stdout).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows[0]["backend"], "cpu");
    let hits = rows[0]["hits"].as_u64().unwrap();
    // The bench's workload here: its rays over the scene's bodies (seed 0).
    let scene = hullsat::scene::json::parse_scene_json(&text).unwrap();
    let rays = hullsat::raycast::workload::random_rays(&scene.bodies, 400, Some(6.0), 0);
    let lists = hullsat::raycast::raycast(&scene.shapes, &scene.bodies, &rays, false).unwrap();
    assert_eq!(
        lists.iter().map(Vec::len).sum::<usize>() as u64,
        hits,
        "not the bench's workload"
    );
    let terrain_hits = lists.iter().flatten().filter(|h| h.body == 0).count();
    assert!(terrain_hits > 20, "{terrain_hits} terrain hits");
    // A GPU backend's count is the CPU's within the (ray, body) pairs the rays graze.
    let grazing = rays
        .iter()
        .map(|ray| {
            (0..scene.bodies.len() as u32)
                .filter(|&body| hullsat::contract::rays::ray_grazes(&scene.shapes, &scene.bodies, body, ray))
                .count()
        })
        .sum::<usize>() as u64;
    for backend in ["gpu", "gpu-resident"] {
        match rows.iter().find(|r| r["backend"] == backend) {
            Some(row) => {
                let gpu_hits = row["hits"].as_u64().unwrap();
                assert!(
                    gpu_hits.abs_diff(hits) <= grazing,
                    "{row}: cpu {hits}, {grazing} grazing"
                );
            }
            None => assert!(!gpu_required(), "{}", stderr(&run)),
        }
    }
}

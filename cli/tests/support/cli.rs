//! Running the `hullsat` binary and reading what it printed, for the command-line tests.

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;

/// Runs `hullsat args` and waits for it. `NODEVICE_SELECT=1` silences Mesa's device-select
/// layer, so stderr holds only hullsat's own lines.
pub fn hullsat(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hullsat"))
        .args(args)
        .env("NODEVICE_SELECT", "1")
        .output()
        .expect("the hullsat binary runs")
}

/// A fresh path named `name` in a scratch folder of this test's own (the test binary's, then
/// the test thread's name; any old file removed), so neither test binaries nor the tests of one
/// binary running at once share a file.
pub fn scratch(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let stem = exe
        .file_stem()
        .and_then(|s| s.to_str())
        .expect("a UTF-8 file name");
    let binary = stem.split('-').next().unwrap_or(stem);
    let mut dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(binary);
    if let Some(test) = std::thread::current().name().filter(|n| *n != "main") {
        dir.push(test.replace("::", "."));
    }
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    let _ = std::fs::remove_file(&path);
    path
}

/// `text` written to a fresh `{name}.json` scratch file.
pub fn scene_file(name: &str, text: &str) -> PathBuf {
    let path = scratch(&format!("{name}.json"));
    std::fs::write(&path, text).unwrap();
    path
}

/// What the process printed on stdout (UTF-8).
pub fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

/// What the process printed on stderr (UTF-8).
pub fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).unwrap()
}

/// A JSON array of numbers as f64s.
pub fn floats(value: &Value) -> Vec<f64> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

/// The manifolds of `hullsat collide`'s JSON output `text`, one entry per pair of `pairs` (the
/// scene's list, as given; `None` where the output lists no manifold).
pub fn manifolds_by_pair(text: &str, pairs: &[[u32; 2]]) -> Vec<Option<hullsat::Manifold>> {
    use hullsat::{ContactPoint, FeatureId, Manifold};
    let value: Value = serde_json::from_str(text).expect("collide prints JSON");
    let mut results = vec![None; pairs.len()];
    for m in value["manifolds"].as_array().expect("a manifold list") {
        let pair = floats(&m["pair"]).iter().map(|&i| i as u32).collect::<Vec<_>>();
        let index = pairs
            .iter()
            .position(|p| p[..] == pair[..])
            .unwrap_or_else(|| panic!("pair {pair:?} is not in the scene's list"));
        let normal = floats(&m["normal"]);
        let mut manifold = Manifold::new(
            glam::Vec3::new(normal[0] as f32, normal[1] as f32, normal[2] as f32),
            m["separation"].as_f64().unwrap() as f32,
        );
        for p in m["points"].as_array().unwrap() {
            let position = floats(&p["position"]);
            let point = ContactPoint {
                position: glam::DVec3::new(position[0], position[1], position[2]),
                depth: p["depth"].as_f64().unwrap() as f32,
                id: FeatureId(p["id"].as_u64().unwrap() as u32),
            };
            assert!(manifold.push(point), "pair {pair:?} lists more than 4 points");
        }
        assert!(results[index].is_none(), "pair {pair:?} listed twice");
        results[index] = Some(manifold);
    }
    results
}

/// `hullsat collide`'s outputs `gpu` and `cpu` for the scene file `path` judged by the GPU =
/// CPU contract (`hullsat::contract`); panics naming the pair outside it.
pub fn assert_collide_outputs_agree(path: &str, gpu: &str, cpu: &str) -> hullsat::contract::AgreementTally {
    let scene =
        hullsat::scene::json::parse_scene_json(&std::fs::read_to_string(path).unwrap()).expect("a scene");
    let pairs = scene.pairs.clone().expect("the scene lists its pairs");
    let (gpu, cpu) = (manifolds_by_pair(gpu, &pairs), manifolds_by_pair(cpu, &pairs));
    hullsat::contract::compare_batch(&scene.shapes, &scene.bodies, &pairs, scene.margin, &gpu, &cpu)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
}

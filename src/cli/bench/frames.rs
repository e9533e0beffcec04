//! `hullsat bench --frames N`: N frames of one scene, every body moved by a small random rigid
//! motion per frame (translation up to [`FRAME_SHIFT`] × its size, rotation up to
//! [`FRAME_ANGLE_DEGREES`]), the same pairs every frame; each frame timed on `cpu1` (a cold call)
//! and `cpu1-cached` (through one [`ContactCache`] kept across frames), printed per frame.

use std::time::{Duration, Instant};

use hullsat::generate::move_bodies;
use hullsat::{ContactCache, CpuNarrowphase, Manifold, Scene};
use serde_json::json;

use super::{CliError, output};

/// Largest translation of a body per frame, relative to its shape's size.
const FRAME_SHIFT: f32 = 1.0e-3;
/// Largest rotation of a body per frame, degrees.
const FRAME_ANGLE_DEGREES: f32 = 0.1;

/// Runs and prints the frames (a table, or a JSON array under `json`).
pub(super) fn run(
    scene: &Scene,
    pairs: &[[u32; 2]],
    frames: u32,
    seed: u64,
    json: bool,
) -> Result<(), CliError> {
    let mut bodies = scene.bodies.clone();
    let cpu = CpuNarrowphase::new(scene.shapes.clone());
    let mut cache = ContactCache::new();
    let count = |results: &[Option<Manifold>]| results.iter().flatten().count();
    let mut rows = Vec::new();
    for frame in 0..frames {
        let start = Instant::now();
        let cold = cpu.collide_single_thread(&bodies, pairs, scene.margin)?;
        let cold_time = start.elapsed();
        let start = Instant::now();
        let cached = cache.collide_batch(&cpu, &bodies, pairs, scene.margin)?;
        let cached_time = start.elapsed();
        rows.push((frame, cold_time, count(&cold), cached_time, count(&cached)));
        move_bodies(
            &scene.shapes,
            &mut bodies,
            FRAME_SHIFT,
            FRAME_ANGLE_DEGREES.to_radians(),
            seed,
            u64::from(frame),
        );
    }
    let rate = |time: Duration| pairs.len() as f64 / time.as_secs_f64();
    let mut lines = Vec::new();
    if json {
        let objects: Vec<_> = rows
            .iter()
            .flat_map(|&(frame, cold_time, cold_count, cached_time, cached_count)| {
                [
                    ("cpu1", cold_time, cold_count),
                    ("cpu1-cached", cached_time, cached_count),
                ]
                .map(|(backend, time, manifolds)| {
                    json!({"frame": frame, "backend": backend, "pairs": pairs.len(),
                               "manifolds": manifolds, "seconds": time.as_secs_f64(),
                               "pairs_per_s": rate(time)})
                })
            })
            .collect();
        lines.push(serde_json::to_string_pretty(&objects).expect("plain JSON values"));
    } else {
        lines.push(format!(
            "{} pairs, {frames} frames (each body moved up to {FRAME_SHIFT} x its size and \
             {FRAME_ANGLE_DEGREES} degrees per frame)",
            pairs.len()
        ));
        lines.push("frame  cpu1 ms  cpu1-cached ms  speedup  manifolds".to_string());
        for &(frame, cold_time, cold_count, cached_time, cached_count) in &rows {
            lines.push(format!(
                "{frame:>5}  {:>7.3}  {:>14.3}  {:>7.2}  {cold_count}/{cached_count}",
                cold_time.as_secs_f64() * 1e3,
                cached_time.as_secs_f64() * 1e3,
                cold_time.as_secs_f64() / cached_time.as_secs_f64()
            ));
        }
        let stats = cache.stats();
        lines.push(format!(
            "cache: {} cold, {} skipped by the motion bound, {} by a re-measured axis, {} rebuilt on their cached axis",
            stats.cold, stats.skipped, stats.remeasured, stats.reused
        ));
    }
    output::print_lines(&lines)
}

//! `hullsat bench --frames N`: N frames of one scene, every body moved by a small random rigid
//! motion per frame (translation up to [`FRAME_SHIFT`] × its size, rotation up to
//! [`FRAME_ANGLE_DEGREES`]), the same pairs every frame; each frame timed on `cpu1` (a cold call
//! on one thread), `cpu1-cached` (through one [`ContactCache`] kept across frames), `cpu` (a cold
//! call on all threads) and `cpu-cached` (another cache, on all threads), printed per frame.

use std::time::{Duration, Instant};

use hullsat::generate::move_bodies;
use hullsat::{ContactCache, CpuNarrowphase, Manifold, Scene};
use serde_json::json;

use super::{CliError, output};

/// Largest translation of a body per frame, relative to its shape's size.
pub(super) const FRAME_SHIFT: f32 = 1.0e-3;
/// Largest rotation of a body per frame, degrees.
pub(super) const FRAME_ANGLE_DEGREES: f32 = 0.1;

/// The backends timed every frame, in order: one-thread and all-thread cold calls and the same
/// through a cache each.
const BACKENDS: [&str; 4] = ["cpu1", "cpu1-cached", "cpu", "cpu-cached"];

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
    let (mut cache1, mut cache) = (ContactCache::new(), ContactCache::new());
    let margin = scene.margin;
    // Per frame: (time, manifolds) of each backend of `BACKENDS`.
    let mut rows: Vec<[(Duration, usize); 4]> = Vec::new();
    for frame in 0..frames {
        let timed = |run: &mut dyn FnMut() -> Result<Vec<Option<Manifold>>, hullsat::InputError>| {
            let start = Instant::now();
            let results = run()?;
            Ok::<_, CliError>((start.elapsed(), results.iter().flatten().count()))
        };
        rows.push([
            timed(&mut || cpu.collide_single_thread(&bodies, pairs, margin))?,
            timed(&mut || cache1.collide_batch(&cpu, &bodies, pairs, margin))?,
            timed(&mut || cpu.collide(&bodies, pairs, margin))?,
            timed(&mut || cache.collide_batch_parallel(&cpu, &bodies, pairs, margin))?,
        ]);
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
    let ms = |time: Duration| time.as_secs_f64() * 1e3;
    let mut lines = Vec::new();
    if json {
        let objects: Vec<_> = rows
            .iter()
            .enumerate()
            .flat_map(|(frame, row)| {
                BACKENDS
                    .iter()
                    .zip(row)
                    .map(move |(backend, &(time, manifolds))| {
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
        lines.push(
            "frame  cpu1 ms  cpu1-cached ms  speedup  cpu ms  cpu-cached ms  speedup  manifolds".to_string(),
        );
        for (frame, [cold1, cached1, cold, cached]) in rows.iter().enumerate() {
            lines.push(format!(
                "{frame:>5}  {:>7.3}  {:>14.3}  {:>7.2}  {:>6.3}  {:>13.3}  {:>7.2}  {}/{}",
                ms(cold1.0),
                ms(cached1.0),
                cold1.0.as_secs_f64() / cached1.0.as_secs_f64(),
                ms(cold.0),
                ms(cached.0),
                cold.0.as_secs_f64() / cached.0.as_secs_f64(),
                cold1.1,
                cached1.1,
            ));
        }
        for (name, cache) in [("cpu1-cached", &cache1), ("cpu-cached", &cache)] {
            let stats = cache.stats();
            lines.push(format!(
                "{name}: {} cold, {} skipped by the motion bound, {} by a re-measured axis, {} rebuilt on their cached axis",
                stats.cold, stats.skipped, stats.remeasured, stats.reused
            ));
        }
    }
    output::print_lines(&lines)
}

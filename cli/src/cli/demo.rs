//! `hullsat demo`: a generated particle scene through the broadphase and the narrowphase, with
//! a short report on stdout.
//!
//! 1. Generate the seeded particle scene (with `--terrain`, a heightfield mesh under it:
//!    [`add_terrain`]).
//! 2. Check the bodies, find candidate pairs with the broadphase over them, check the pairs:
//!    the batch's one validation, shared by both backends. Under `--backend gpu` the GPU
//!    broadphase's list, which must hold every pair of the CPU's.
//! 3. Run the narrowphase on the chosen backend (`auto`: the faster, see [`super::backend`]).
//! 4. When the GPU ran, run the CPU reference on the same pairs and judge the GPU's results by
//!    the GPU = CPU contract ([`hullsat::contract`]); a pair outside it is an error.
//! 5. Print counts and stage times (collected, then written at once: [`output::print_lines`]).

use std::time::{Duration, Instant};

use clap::Args;
use hullsat::broadphase::{DEFAULT_MAX_CANDIDATE_PAIRS, GpuBroadphase, candidate_pairs};
use hullsat::generate::{ParticleSceneConfig, terrain};
use hullsat::glam::DVec3;
use hullsat::{Body, CpuNarrowphase, InputError, Manifold, Pose, Scene, Shape, ValidatedBatch};

use super::backend::{Backend, adapter_description, gpu_failed, start_gpu};
use super::collide::Clip;
use super::{CliError, Shapes, check_contract, describe_tally, generate_scene, output};

pub(super) const ABOUT: &str =
    "Generates a particle scene, runs broadphase and narrowphase, and reports counts and times";

pub(super) const LONG_ABOUT: &str = "\
Generates a seeded scene of convex particles scattered in a cube, finds candidate pairs with the
broadphase, computes their contact manifolds on the chosen backend (auto: the CPU for batches under
3000 pairs per CPU thread and for software adapters such as lavapipe, else the GPU when a wgpu
adapter exists; the report says why) and prints a short report on stdout: backend and adapter,
bodies, candidate pairs, touching pairs (manifolds), contact points, and the time of each stage.
Under --backend gpu the broadphase runs on the GPU too (GpuBroadphase), its list checked to hold
every pair of the CPU broadphase's (its padded boxes may add some, which the narrowphase finds
apart), and the narrowphase runs on its list. When the GPU ran, the CPU reference runs too and
every pair is judged by the GPU = CPU contract
(docs/gpu-cpu-contract.md): the report counts the pairs equal to rounding, within their
conditioning and at counted ties; a pair outside the contract is an error that names it.

EXIT STATUS:
  0 success (also when no GPU exists and the CPU ran instead); 1 the GPU failed under
  --backend gpu; 2 a bad option; 3 a GPU result outside the GPU = CPU contract (after the
  report).";

#[derive(Debug, Args)]
pub(super) struct DemoArgs {
    /// Number of bodies.
    #[arg(long, default_value_t = 20_000, value_parser = clap::value_parser!(u32).range(1..))]
    bodies: u32,
    /// Seed of the scene generator (the same seed gives the same scene).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Share of the container's volume filled by the bodies' bounding spheres, in (0, 1].
    #[arg(long, default_value_t = 0.3, allow_negative_numbers = true)]
    density: f32,
    /// Shape kinds of the particles.
    #[arg(long, value_enum, default_value_t = Shapes::Mixed)]
    shapes: Shapes,
    /// Speculative margin, length units (particles are about one unit across), >= 0.
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    margin: f32,
    /// Where the narrowphase runs: auto (the CPU for small batches and software adapters, else
    /// the GPU when available), gpu, or cpu.
    #[arg(long, value_enum, default_value_t = Backend::Auto)]
    backend: Backend,
    /// Where the GPU clips: gpu (the clip kernel) or cpu (CPU clipping of the GPU's SAT).
    #[arg(long, value_enum, default_value_t = Clip::Gpu)]
    clip: Clip,
    /// Add a terrain under the particles: a static triangle mesh of rolling hills (3,200
    /// triangles) whose crests reach into the lowest layer of the particles. With the GPU
    /// backend its pairs run on the GPU too (the mesh pass).
    #[arg(long)]
    terrain: bool,
}

/// Cells per side of the demo terrain (two triangles each).
const TERRAIN_CELLS: usize = 40;

/// Adds the `--terrain` mesh to `scene` as its last shape and body: over the particles' extent
/// plus a fifth on each side, hills a tenth of the extent high, their mean level a twentieth
/// of the extent below the lowest particle centre, so the crests reach into the lowest layer.
fn add_terrain(scene: &mut Scene) -> Result<(), CliError> {
    let (lo, hi) = scene
        .bodies
        .iter()
        .fold((DVec3::INFINITY, DVec3::NEG_INFINITY), |(lo, hi), body| {
            (lo.min(body.pose.translation), hi.max(body.pose.translation))
        });
    let centre = (lo + hi) * 0.5;
    let extent = ((hi - lo).max_element() * 0.5).max(1.0) as f32;
    let mesh = terrain(TERRAIN_CELLS, 1.2 * extent, 0.1 * extent)
        .map_err(|e| CliError::Input(InputError::new("--terrain", e.to_string())))?;
    scene.bodies.push(Body {
        shape: scene.shapes.len() as u32,
        pose: Pose::from_translation(DVec3::new(centre.x, lo.y - 0.05 * f64::from(extent), centre.z)),
    });
    scene.shapes.push(Shape::from(mesh));
    Ok(())
}

/// Milliseconds, for the report.
fn ms(duration: Duration) -> String {
    format!("{:.1} ms", duration.as_secs_f64() * 1e3)
}

pub(super) fn run(args: &DemoArgs) -> Result<(), CliError> {
    // Rayon's threads start on first use: start them before timing anything, so that no stage
    // (the first parallel one, validation) is billed for it.
    rayon::broadcast(|_| ());
    // Step 1.
    let config = ParticleSceneConfig {
        bodies: args.bodies as usize,
        seed: args.seed,
        density: args.density,
        mix: args.shapes.mix(),
        margin: args.margin,
    };
    let t = Instant::now();
    let mut scene = generate_scene(&config)?;
    if args.terrain {
        add_terrain(&mut scene)?;
    }
    let generate_time = t.elapsed();

    // Step 2: the bodies are checked once, the broadphase runs on them, then its pairs are
    // checked (the batch's one validation; its time is part of the narrowphase time of each
    // backend).
    let t = Instant::now();
    let checked = ValidatedBatch::new(&scene.shapes, &scene.bodies, &[], scene.margin)?;
    let mut validation_time = t.elapsed();
    let t = Instant::now();
    let cpu_pairs = candidate_pairs(&scene.shapes, &checked.normalized_bodies(), scene.margin);
    let mut broadphase_time = t.elapsed();
    // Under --backend gpu the GPU broadphase finds the pairs the narrowphase runs on; the CPU's
    // are the reference its list must contain.
    let mut broadphase_report = None;
    let gpu_pairs = if args.backend == Backend::Gpu {
        let (found, times) = gpu_broadphase(&scene)?;
        broadphase_report = Some(check_broadphase(&cpu_pairs, &found, times, broadphase_time)?);
        broadphase_time = times[1];
        Some(found)
    } else {
        None
    };
    let pairs = gpu_pairs.as_ref().unwrap_or(&cpu_pairs);
    let t = Instant::now();
    let batch = checked.with_pairs(pairs)?;
    validation_time += t.elapsed();

    // Step 3: the GPU when asked for (or chosen by auto) and available; the CPU otherwise, both
    // on the batch.
    let mut gpu_run = None;
    let t = Instant::now();
    let (gpu, mut why) = start_gpu(args.backend, &scene.shapes, pairs.len())?;
    if let Some(mut gpu) = gpu {
        let setup_time = t.elapsed();
        let t = Instant::now();
        let run = gpu
            .set_clipping(args.clip.clipping())
            .and_then(|()| gpu.collide_validated(&batch));
        match run {
            Ok(results) => {
                let adapter = adapter_description(&gpu);
                let time = validation_time + t.elapsed();
                gpu_run = Some((adapter, results, setup_time, time, gpu.timings()));
            }
            Err(err) => {
                gpu_failed(args.backend, &err)?;
                why = format!("auto: the GPU failed: {err}");
            }
        }
    }
    let cpu = CpuNarrowphase::new(scene.shapes.clone());
    let cpu_collide = || -> Result<(Vec<Option<Manifold>>, Duration), CliError> {
        let t = Instant::now();
        let results = cpu.collide_validated(&batch)?;
        Ok((results, validation_time + t.elapsed()))
    };

    // Steps 4 and 5.
    let mut report = Vec::new();
    report.push(format!(
        "hullsat demo: {} bodies ({:?} shapes, seed {}, density {}, margin {})",
        args.bodies, args.shapes, args.seed, args.density, args.margin
    ));
    if args.terrain {
        let mesh_body = scene.bodies.len() as u32 - 1;
        let on_mesh = pairs.iter().filter(|pair| pair.contains(&mesh_body)).count();
        report.push(format!(
            "terrain: body {mesh_body}, {} triangles, {on_mesh} candidate pairs with it",
            2 * TERRAIN_CELLS * TERRAIN_CELLS
        ));
    }
    let threads = rayon::current_num_threads();
    let stage_times = |narrowphase: Duration| {
        format!(
            "time: generate {}, broadphase {}, narrowphase {}",
            ms(generate_time),
            ms(broadphase_time),
            ms(narrowphase)
        )
    };
    match gpu_run {
        Some((adapter, gpu_results, setup_time, gpu_time, timings)) => {
            report.push(format!("backend: gpu, adapter {adapter}; {why}"));
            report.extend(broadphase_report);
            report.extend(counts(pairs, &gpu_results));
            report.push(stage_times(gpu_time));
            report.push(format!(
                "gpu stages: setup {} (device, shader, hulls; not in narrowphase), validation {}, \
                 upload {}, dispatch+readback {}, CPU clipping {}",
                ms(setup_time),
                ms(validation_time),
                ms(timings.upload),
                ms(timings.dispatch_readback),
                ms(timings.cpu_clipping)
            ));
            if let (Some(commands), Some(copy_back)) = (timings.gpu, timings.gpu_copy_back) {
                report.push(format!(
                    "gpu timestamps (part of dispatch+readback): staged copies and kernels {}, copy back {}",
                    ms(commands),
                    ms(copy_back)
                ));
            }
            report.push(args.clip.describe(timings.host_pairs));
            if timings.incomplete_pairs > 0 {
                report.push(format!(
                    "gpu note: the driver cut the kernel short on {} pairs (a CPU driver's loop cap); \
                     they were recomputed by the CPU SAT",
                    timings.incomplete_pairs
                ));
            }
            let (cpu_results, cpu_time) = cpu_collide()?;
            let check = check_contract("gpu", &scene, pairs, &gpu_results, &cpu_results);
            let verdict = match &check {
                Ok(tally) => describe_tally(tally),
                Err(_) => {
                    "GPU and CPU disagree beyond the GPU = CPU contract (the error below names the pair)"
                        .into()
                }
            };
            report.push(format!(
                "check: CPU reference ({threads} threads) took {}; {verdict}",
                ms(cpu_time)
            ));
            if let Err(err) = check {
                output::print_lines(&report)?;
                return Err(err);
            }
        }
        None => {
            let (cpu_results, cpu_time) = cpu_collide()?;
            report.push(format!("backend: cpu ({threads} threads; {why})"));
            report.extend(counts(pairs, &cpu_results));
            report.push(stage_times(cpu_time));
            report.push("check: only the CPU ran, so there is no GPU result to compare with".into());
        }
    }
    output::print_lines(&report)
}

/// The GPU broadphase's pairs for `scene` (`--backend gpu`) and its times: setup (device,
/// kernels, shapes) and the call (upload, build, traversal, sort, read back).
fn gpu_broadphase(scene: &hullsat::Scene) -> Result<(Vec<[u32; 2]>, [Duration; 2]), CliError> {
    let t = Instant::now();
    let mut broadphase = GpuBroadphase::new(&scene.shapes)?;
    let setup = t.elapsed();
    let t = Instant::now();
    let found =
        broadphase.candidate_pairs_at_most(&scene.bodies, scene.margin, DEFAULT_MAX_CANDIDATE_PAIRS)?;
    Ok((found, [setup, t.elapsed()]))
}

/// Checks that the GPU broadphase's pairs hold every pair of the CPU's (both sorted; the GPU's
/// padded boxes may add pairs: docs/design/gpu-broadphase.md) and says so in one report line;
/// a CPU pair the GPU missed is [`CliError::Disagreement`] naming it.
fn check_broadphase(
    cpu: &[[u32; 2]],
    gpu: &[[u32; 2]],
    [setup, time]: [Duration; 2],
    cpu_time: Duration,
) -> Result<String, CliError> {
    let mut rest = gpu.iter().peekable();
    for pair in cpu {
        while rest.next_if(|found| *found < pair).is_some() {}
        if rest.next_if(|found| *found == pair).is_none() {
            return Err(CliError::Disagreement {
                backend: "gpu broadphase".into(),
                disagreement: format!("the CPU's candidate pair {pair:?} is missing from the GPU's list"),
            });
        }
    }
    Ok(format!(
        "broadphase: gpu {} (setup {}, not in the time), CPU reference {}: all {} CPU pairs found, \
         {} more within the GPU's box padding",
        ms(time),
        ms(setup),
        ms(cpu_time),
        cpu.len(),
        gpu.len() - cpu.len()
    ))
}

/// Report lines: candidate pairs, touching pairs and contact points.
fn counts(pairs: &[[u32; 2]], results: &[Option<Manifold>]) -> [String; 3] {
    [
        format!("candidate pairs: {}", pairs.len()),
        format!("touching pairs (manifolds): {}", results.iter().flatten().count()),
        format!(
            "contact points: {}",
            results.iter().flatten().map(|m| m.points().len()).sum::<usize>()
        ),
    ]
}

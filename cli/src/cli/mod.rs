//! The `hullsat` command line: `collide` (a JSON scene), `demo` (a generated particle scene,
//! both backends, a short report) and `bench` (timed backends on the same pairs).
//!
//! 1. Parse the command line (clap; usage errors exit 2).
//! 2. Run the subcommand ([`collide`], [`demo`], [`bench`]); each reads or builds its whole input
//!    first, so bad input stops before any work.
//! 3. Map the outcome to an exit code ([`CliError::exit_code`]).
//!
//! Exit codes: 0 success; 1 a backend or output failure, or a pair whose result is not finite
//! (named; nothing is written); 2 bad input (an unreadable scene file, a problem in it or in a
//! generator option, more broadphase pairs than `--max-pairs`; clap's usage errors also exit 2).
//! Every error is one line on stderr: input text in it is quoted and escaped, and the line as a
//! whole has its control characters escaped ([`output::note`]).

mod backend;
mod bench;
mod collide;
mod demo;
mod output;
mod raycast;

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};
use hullsat::broadphase::{TooManyPairs, candidate_pairs_at_most};
use hullsat::contract::{AgreementTally, compare_batch};
use hullsat::generate::{ParticleSceneConfig, ShapeMix, generate_particle_scene};
use hullsat::scene::json::one_line;
use hullsat::{GpuError, InputError, Manifold, Scene, ValidatedBatch};

/// Batch narrowphase collision detection between convex shapes.
#[derive(Debug, Parser)]
#[command(name = "hullsat", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    #[command(
        about = collide::ABOUT,
        long_about = collide::LONG_ABOUT,
        after_help = collide::AFTER_HELP
    )]
    Collide(collide::CollideArgs),
    #[command(about = demo::ABOUT, long_about = demo::LONG_ABOUT)]
    Demo(demo::DemoArgs),
    #[command(about = bench::ABOUT, long_about = bench::LONG_ABOUT)]
    Bench(bench::BenchArgs),
    #[command(about = raycast::ABOUT, long_about = raycast::LONG_ABOUT, after_help = raycast::AFTER_HELP)]
    Raycast(raycast::RaycastArgs),
}

/// The shape mix of a generated particle scene (presets of [`ShapeMix::preset`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Shapes {
    /// Boxes only.
    Box,
    /// Hulls of 8 vertices.
    Hull8,
    /// Hulls of 32 vertices.
    Hull32,
    /// Hulls of 64 vertices.
    Hull64,
    /// Boxes, hulls of 8 to 64 vertices, spheres and capsules.
    Mixed,
    /// Cylinders only.
    Cylinder,
    /// Boxes, spheres and cylinders (the three.js lesson's mix).
    Lesson,
    /// Boxes, spheres and compounds (dumbbells and L-shapes), a third each.
    Compound,
}

impl Shapes {
    fn mix(self) -> ShapeMix {
        match self {
            Shapes::Box => ShapeMix::BOX,
            Shapes::Hull8 => ShapeMix::HULL8,
            Shapes::Hull32 => ShapeMix::HULL32,
            Shapes::Hull64 => ShapeMix::HULL64,
            Shapes::Mixed => ShapeMix::MIXED,
            Shapes::Cylinder => ShapeMix::CYLINDER,
            Shapes::Lesson => ShapeMix::LESSON,
            Shapes::Compound => ShapeMix::COMPOUND,
        }
    }
}

/// A GPU failure as the command's error: input problems keep exit status 2, the rest is a
/// backend failure (exit status 1).
impl From<GpuError> for CliError {
    fn from(err: GpuError) -> CliError {
        match err {
            GpuError::Input(input) => CliError::Input(input),
            err => CliError::Backend(format!("GPU backend failed: {err}")),
        }
    }
}

/// Why a command failed; `Display` is the one line printed on stderr.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The scene file could not be read.
    #[error("cannot read scene file {}: {source}", one_line(&path.display().to_string()))]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A problem in the scene or in a generator option, with its path.
    #[error("{0}")]
    Input(#[from] InputError),
    /// The requested backend cannot run.
    #[error("{0}")]
    Backend(String),
    /// A pair's result is not finite (its numbers leave the range of `f32`); names the pair
    /// and the quantity. Nothing is written.
    #[error("cannot compute {0} is not finite")]
    NotComputed(String),
    /// A GPU backend's results fall outside the GPU = CPU contract ([`hullsat::contract`]):
    /// the backend and the first pair, with what broke.
    #[error("{backend}: {disagreement}")]
    Disagreement {
        /// The GPU backend.
        backend: String,
        /// The pair and the rule.
        disagreement: String,
    },
    /// The results could not be written.
    #[error("cannot write results to {target}: {source}")]
    Write {
        /// `stdout` or the file's name (control characters escaped).
        target: String,
        /// Why.
        source: std::io::Error,
    },
}

impl CliError {
    /// The process exit code: 2 for bad input, 3 for GPU results outside the GPU = CPU
    /// contract, 1 for everything else.
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Read { .. } | CliError::Input(_) => 2,
            CliError::Disagreement { .. } => 3,
            CliError::Backend(_) | CliError::NotComputed(_) | CliError::Write { .. } => 1,
        }
    }

    /// Prints `error: ` and the error on stderr, as one line.
    pub fn report(&self) {
        output::note(&format!("error: {self}"));
    }
}

/// Runs a parsed command line.
pub fn run(cli: Cli) -> Result<(), CliError> {
    match cli.command {
        Command::Collide(args) => collide::run(&args),
        Command::Demo(args) => demo::run(&args),
        Command::Bench(args) => bench::run(&args),
        Command::Raycast(args) => raycast::run(&args),
    }
}

/// Reads a JSON scene file, its format and fields checked (errors by JSON path); the batch
/// (shape indices, poses, pairs, margin) is checked once, by [`scene_batch`].
fn read_scene(path: &PathBuf) -> Result<Scene, CliError> {
    let text = std::fs::read_to_string(path).map_err(|source| CliError::Read {
        path: path.clone(),
        source,
    })?;
    Ok(hullsat::scene::json::parse_scene_json_unvalidated(&text)?)
}

/// The one validation of a scene's batch, errors named by JSON path in the scene reader's order
/// (`margin`, then `bodies[i]`, then `pairs[i]`; [`ValidatedBatch::new`]). The pairs are the
/// scene's own list, or, when it has none, the broadphase's over the checked bodies, stored in
/// `found` and checked as pairs only ([`ValidatedBatch::with_pairs`]); more than `max_pairs` of
/// them is refused (bad input, naming `pairs`).
fn scene_batch<'a>(
    scene: &'a Scene,
    found: &'a mut Vec<[u32; 2]>,
    max_pairs: usize,
) -> Result<ValidatedBatch<'a>, CliError> {
    let listed = scene.pairs.as_deref().unwrap_or(&[]);
    let batch = ValidatedBatch::new(&scene.shapes, &scene.bodies, listed, scene.margin)?;
    if scene.pairs.is_some() {
        return Ok(batch);
    }
    *found = candidate_pairs_at_most(&scene.shapes, &batch.normalized_bodies(), scene.margin, max_pairs)
        .map_err(|TooManyPairs { limit, bound }| {
            CliError::Input(InputError::new(
                "pairs",
                format!(
                    "not given, and the broadphase finds more than {limit} candidate pairs \
                     (at most {bound}); raise --max-pairs or list the pairs to test"
                ),
            ))
        })?;
    let found: &'a [[u32; 2]] = found;
    Ok(batch.with_pairs(found)?)
}

/// The pairs to test, [`scene_batch`]'s (checked once), as a list of their own.
fn scene_pairs(scene: &Scene, max_pairs: usize) -> Result<Vec<[u32; 2]>, CliError> {
    let mut found = Vec::new();
    scene_batch(scene, &mut found, max_pairs)?;
    Ok(match &scene.pairs {
        Some(pairs) => pairs.clone(),
        None => found,
    })
}

/// A generated particle scene (`pairs: None`); a bad option is an [`InputError`] naming the flag.
fn generate_scene(config: &ParticleSceneConfig) -> Result<Scene, CliError> {
    generate_particle_scene(config).map_err(|e| {
        // The generator names its config fields, which are the flags' names.
        let flag = e.path.split('.').next().unwrap_or(&e.path);
        CliError::Input(InputError::new(format!("--{flag}"), e.message))
    })
}

/// The CPU's model name from `/proc/cpuinfo`, or "unknown CPU" when it is not readable.
fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|line| line.starts_with("model name"))
                .and_then(|line| line.split_once(':'))
                .map(|(_, name)| name.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into())
}

/// Checks GPU `backend`'s results against the CPU's for `pairs` of `scene` by the GPU = CPU
/// contract: the tally, or [`CliError::Disagreement`] naming the first pair outside it.
fn check_contract(
    backend: &str,
    scene: &Scene,
    pairs: &[[u32; 2]],
    gpu: &[Option<Manifold>],
    cpu: &[Option<Manifold>],
) -> Result<AgreementTally, CliError> {
    compare_batch(&scene.shapes, &scene.bodies, pairs, scene.margin, gpu, cpu).map_err(|e| {
        CliError::Disagreement {
            backend: backend.into(),
            disagreement: e.to_string(),
        }
    })
}

/// One line on a contract tally: what agreed exactly, within conditioning, or at a tie.
fn describe_tally(t: &AgreementTally) -> String {
    format!(
        "all {} pairs within the GPU = CPU contract ({} manifolds on the GPU, {} on the CPU; {} equal to \
         rounding, {} within their conditioning; ties: {} verdicts, {} axes, {} features)",
        t.pairs,
        t.gpu_manifolds,
        t.cpu_manifolds,
        t.same,
        t.conditioned,
        t.verdict_ties,
        t.axis_ties,
        t.feature_ties
    )
}

#[cfg(test)]
mod tests {
    use glam::{Quat, Vec3};
    use hullsat::{Body, CpuNarrowphase, Cuboid, Pose, Shape};

    use super::*;

    /// Two unit boxes 0.1 deep in each other (pair 0) and two 5 apart (pair 1).
    fn two_pairs() -> (Scene, Vec<[u32; 2]>) {
        let shapes = vec![Shape::Cuboid(Cuboid::new(Vec3::splat(0.5)).unwrap())];
        let at = |x: f32, y: f32| Body {
            shape: 0,
            pose: Pose::new(Vec3::new(x, y, 0.0), Quat::IDENTITY),
        };
        let bodies = vec![at(0.0, 0.0), at(0.0, 0.9), at(10.0, 0.0), at(15.0, 0.0)];
        let pairs = vec![[0, 1], [2, 3]];
        let scene = Scene {
            shapes,
            bodies,
            pairs: Some(pairs.clone()),
            margin: 0.0,
        };
        (scene, pairs)
    }

    #[test]
    fn a_gpu_result_outside_the_contract_is_exit_3_naming_the_pair() {
        let (scene, pairs) = two_pairs();
        let cpu = CpuNarrowphase::new(scene.shapes.clone())
            .collide(&scene.bodies, &pairs, 0.0)
            .unwrap();
        let tally = check_contract("gpu", &scene, &pairs, &cpu, &cpu).expect("the CPU agrees with itself");
        assert!(describe_tally(&tally).starts_with("all 2 pairs within the GPU = CPU contract"));
        // A point 1e-3 off along the normal: outside the contract, named.
        let mut moved = cpu.clone();
        moved[0].as_mut().unwrap().points[0].position.y += 1.0e-3;
        let err = check_contract("gpu", &scene, &pairs, &moved, &cpu).unwrap_err();
        assert_eq!(err.exit_code(), 3);
        assert!(
            err.to_string().starts_with("gpu: GPU and CPU disagree beyond"),
            "{err}"
        );
        assert!(err.to_string().contains("pairs[0] = [0, 1]"), "{err}");
        // A flipped verdict far from the margin.
        let err = check_contract("gpu-cpuclip", &scene, &pairs, &[None, None], &cpu).unwrap_err();
        assert!(
            err.to_string().contains("gpu-cpuclip: ") && err.to_string().contains("Verdict"),
            "{err}"
        );
    }
}

//! The `hullsat` command line: `hullsat collide SCENE.json [--out RESULTS.json]
//! [--backend auto|gpu|cpu] [--verbose]`.
//!
//! 1. Read and validate the whole scene ([`parse_scene_json`]); bad input stops here.
//! 2. Take the pairs the scene lists ([`scene_pairs`], where the broadphase will plug in).
//! 3. Run the batch on the chosen backend ([`collide_on`]; [`collide_gpu`] is the GPU's place).
//! 4. Write the results to `--out` or stdout, only once everything succeeded.
//!
//! Exit codes: 0 success, 1 a backend or output failure, 2 bad input (an unreadable scene file
//! or a problem in it; clap's usage errors also exit 2). Every error is one line on stderr.

use std::path::PathBuf;
use std::time::Instant;

use clap::{Args, Parser, Subcommand, ValueEnum};
use hullsat::scene::json::{parse_scene_json, write_results_json};
use hullsat::{CpuNarrowphase, InputError, Manifold, Scene};

const COLLIDE_ABOUT: &str = "Computes contact manifolds for the body pairs of a JSON scene";

const COLLIDE_LONG_ABOUT: &str = "\
Computes contact manifolds for the body pairs of a JSON scene and writes them as JSON.

SCENE FORMAT (numbers are JSON numbers; every one must be finite as a 32-bit float):
  {
    \"shapes\": [                  shapes, each in its body's local frame:
      {\"hull\": {\"points\": [[x,y,z], ...]}}           convex hull of >= 4 non-coplanar points
      {\"box\": {\"half_extents\": [hx,hy,hz]}}          centred on the origin, axis-aligned
      {\"sphere\": {\"radius\": r}}                      centred on the origin
      {\"capsule\": {\"half_height\": h, \"radius\": r}}   segment (0,-h,0)..(0,h,0), radius r
      {\"half_space\": {\"normal\": [x,y,z], \"offset\": d}}  the solid dot(normal, x) <= d
    ],
    \"bodies\": [{\"shape\": 0, \"position\": [x,y,z], \"rotation\": [x,y,z,w]}, ...],
    \"pairs\": [[0, 1], ...],    body index pairs to test (optional in the format: absent means
                                \"use the broadphase\", which is not available yet, so for now
                                a scene without pairs is rejected)
    \"margin\": 0.0              speculative margin, >= 0 (optional, default 0)
  }
  rotation is a unit quaternion (x, y, z, w); lengths within 0.001 of 1 are normalized, others
  rejected. Two half-spaces cannot form a pair; a body cannot pair with itself. Unknown keys
  are rejected.

RESULTS FORMAT:
  {\"manifolds\": [{\"pair\": [a, b], \"normal\": [x,y,z], \"separation\": s,
                  \"points\": [{\"position\": [x,y,z], \"depth\": d, \"id\": n}, ...]}, ...]}
  One entry per listed pair whose separation <= margin, in input order; none for the others.

CONVENTIONS:
  Frames      shapes are in their body's local frame; a body's pose maps local to world:
              x_world = rotation * x_local + position. All results are in world space.
  normal      unit vector pointing from the pair's first body (a) toward its second (b).
  separation  signed distance between the surfaces along the normal: negative = penetrating
              by -separation, positive = apart (reported only up to the margin).
  points      1 to 4 per manifold; position is midway between the two surfaces; depth is
              positive when penetrating, negative for speculative points still apart.
  id          a u32 feature id, stable while the contact configuration is unchanged; bit layout
              (kind:2 | flag:1 | feature on A:14 | feature on B:15) in README.md, section
              \"Feature ids\", and in the docs of hullsat::FeatureId.

EXIT STATUS:
  0 success; 1 backend or output failure; 2 bad input: an unreadable scene file or a problem in
  it, reported as one line on stderr naming the JSON path (e.g. bodies[3].rotation). Nothing is
  written on failure.";

const COLLIDE_AFTER_HELP: &str =
    "EXAMPLE:\n  hullsat collide examples/box_stack.json --out results.json --verbose";

/// Batch narrowphase collision detection between convex shapes.
#[derive(Debug, Parser)]
#[command(name = "hullsat", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    #[command(about = COLLIDE_ABOUT, long_about = COLLIDE_LONG_ABOUT, after_help = COLLIDE_AFTER_HELP)]
    Collide(CollideArgs),
}

#[derive(Debug, Args)]
struct CollideArgs {
    /// The scene (JSON; format above).
    #[arg(value_name = "SCENE.json")]
    scene: PathBuf,
    /// Write the results here instead of to stdout.
    #[arg(long, value_name = "RESULTS.json")]
    out: Option<PathBuf>,
    /// Where to run: auto (the GPU when available, else the CPU), gpu, or cpu.
    #[arg(long, value_enum, default_value_t = Backend::Auto)]
    backend: Backend,
    /// Report scene size, backend and timing on stderr.
    #[arg(long)]
    verbose: bool,
}

/// The backend a batch runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Backend {
    /// The GPU when one is available, else the CPU.
    Auto,
    /// The GPU only (fails when it is unavailable).
    Gpu,
    /// The CPU reference path (rayon).
    Cpu,
}

/// Why a command failed; `Display` is the one line printed on stderr.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The scene file could not be read.
    #[error("cannot read scene file {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A problem in the scene, with its JSON path.
    #[error("{0}")]
    Input(#[from] InputError),
    /// The requested backend cannot run.
    #[error("{0}")]
    Backend(String),
    /// The results could not be written.
    #[error("cannot write results to {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

impl CliError {
    /// The process exit code: 2 for bad input, 1 for everything else.
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Read { .. } | CliError::Input(_) => 2,
            CliError::Backend(_) | CliError::Write { .. } => 1,
        }
    }
}

/// Runs a parsed command line.
pub fn run(cli: Cli) -> Result<(), CliError> {
    match cli.command {
        Command::Collide(args) => collide(&args),
    }
}

fn collide(args: &CollideArgs) -> Result<(), CliError> {
    let text = std::fs::read_to_string(&args.scene).map_err(|source| CliError::Read {
        path: args.scene.clone(),
        source,
    })?;
    let scene = parse_scene_json(&text)?;
    let pairs = scene_pairs(&scene)?;
    if args.verbose {
        eprintln!(
            "scene: {} shapes, {} bodies, {} pairs, margin {}",
            scene.shapes.len(),
            scene.bodies.len(),
            pairs.len(),
            scene.margin
        );
    }
    let start = Instant::now();
    let (results, backend_name) = collide_on(args.backend, &scene, &pairs, args.verbose)?;
    let output = write_results_json(&pairs, &results);
    if args.verbose {
        let count = results.iter().flatten().count();
        eprintln!(
            "{backend_name}: {count} manifolds in {:.3} ms",
            start.elapsed().as_secs_f64() * 1e3
        );
    }
    match &args.out {
        Some(path) => std::fs::write(path, output).map_err(|source| {
            // A failed write may leave a truncated file; never leave partial results behind.
            let _ = std::fs::remove_file(path);
            CliError::Write {
                path: path.clone(),
                source,
            }
        }),
        None => {
            print!("{output}");
            Ok(())
        }
    }
}

/// The pairs to test: the scene's own list.
///
/// Broadphase plug-in point: when the scene has no `pairs`, return
/// `crate::broadphase::candidate_pairs(...)` over the scene's shapes, bodies and margin here.
fn scene_pairs(scene: &Scene) -> Result<Vec<[u32; 2]>, InputError> {
    scene
        .pairs
        .clone()
        .ok_or_else(|| InputError::new("pairs", "missing (no broadphase yet)"))
}

/// Runs the batch on `backend`; returns one entry per pair and the name of the backend used.
/// `auto` falls back to the CPU when the GPU is unavailable (saying why when `verbose`).
fn collide_on(
    backend: Backend,
    scene: &Scene,
    pairs: &[[u32; 2]],
    verbose: bool,
) -> Result<(Vec<Option<Manifold>>, &'static str), CliError> {
    if backend != Backend::Cpu {
        match collide_gpu(scene, pairs) {
            Ok(results) => return Ok((results, "gpu")),
            Err(reason) if backend == Backend::Gpu => {
                return Err(CliError::Backend(format!("GPU backend unavailable: {reason}")));
            }
            Err(reason) if verbose => eprintln!("GPU backend unavailable ({reason}); using the CPU"),
            Err(_) => {}
        }
    }
    let narrowphase = CpuNarrowphase::new(scene.shapes.clone());
    let results = narrowphase.collide(&scene.bodies, pairs, scene.margin)?;
    Ok((results, "cpu"))
}

/// GPU plug-in point: the batch on the GPU backend, one entry per pair in pair order, or why
/// the GPU cannot run it (no adapter, ...). The GPU backend is not wired in yet.
fn collide_gpu(_scene: &Scene, _pairs: &[[u32; 2]]) -> Result<Vec<Option<Manifold>>, String> {
    Err("not wired into the command line yet".into())
}

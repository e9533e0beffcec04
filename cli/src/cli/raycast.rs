//! `hullsat raycast SCENE.json [--out HITS.json] [--backend auto|gpu|cpu] [--closest]`.
//!
//! 1. Read and validate the whole ray scene; bad input stops here.
//! 2. Cast every ray on the chosen backend ([`cast_on`]).
//! 3. Write the hits to `--out` or stdout, only once everything succeeded.

use std::path::PathBuf;

use clap::Args;
use hullsat::raycast::json::{RayScene, parse_ray_scene_json, write_hits_json};
use hullsat::{CpuRaycaster, GpuRaycaster, RayHit};

use super::backend::{Backend, auto_casts_on_gpu, gpu_failed};
use super::{CliError, output};

pub(super) const ABOUT: &str = "Casts the rays of a JSON scene at its bodies";

pub(super) const LONG_ABOUT: &str = "\
Casts the rays of a JSON scene at its bodies and writes, for each ray, every body it enters.

SCENE FORMAT: the collide scene format (see `hullsat collide --help`: shapes, bodies, positions,
rotations) with \"rays\" instead of \"pairs\" and \"margin\":
  {
    \"shapes\": [...], \"bodies\": [...],
    \"rays\": [{\"origin\": [x,y,z], \"direction\": [x,y,z], \"max_distance\": t}, ...]
  }
  origin       world space; every coordinate finite as a 32-bit float (read as 64-bit)
  direction    world space, any finite non-zero length (it is normalized); a zero direction is
               bad input
  max_distance optional, >= 0, along the unit direction (absent: unbounded)

HITS FORMAT:
  {\"hits\": [[{\"body\": b, \"distance\": t, \"point\": [x,y,z], \"normal\": [x,y,z]}, ...], ...]}
  One list per ray, in ray order: every body the ray enters within max_distance, each once (at
  its entry point), sorted by distance (ties: lower body index); with --closest at most the
  first. distance is along the unit direction; point and normal are world space; the normal is
  the unit outward normal of the body's surface at the entry point. A ray that starts inside a
  body hits it at distance 0 with the normal opposite to its direction. A ray that only touches
  a body (grazing an edge, running along a face) counts as entering it, up to float rounding.

EXIT STATUS:
  0 success; 1 backend or output failure; 2 bad input: an unreadable scene file or a problem in
  it, reported as one line on stderr naming the JSON path (e.g. rays[3].direction). Nothing is
  written on failure. Under --backend auto, the CPU runs when the only adapter is a software one
  (such as lavapipe), and a GPU that cannot run is one note on stderr and the CPU runs instead;
  under --backend gpu it is exit status 1. Triangle meshes and compounds (\"trimesh\",
  \"compound\" shapes) are cast on either backend. A compound is hit at its nearest
  child. Rays hit either face of a mesh triangle; the normal is the
  triangle's, turned toward the ray.";

pub(super) const AFTER_HELP: &str = "EXAMPLE:\n  hullsat raycast examples/rays.json --closest";

#[derive(Debug, Args)]
pub(super) struct RaycastArgs {
    /// The ray scene (JSON; format above).
    #[arg(value_name = "SCENE.json")]
    scene: PathBuf,
    /// Write the hits here instead of to stdout.
    #[arg(long, value_name = "HITS.json")]
    out: Option<PathBuf>,
    /// Where to run: auto (the GPU when a hardware adapter is available, else the CPU), gpu, or
    /// cpu.
    #[arg(long, value_enum, default_value_t = Backend::Auto)]
    backend: Backend,
    /// Keep at most the nearest hit of each ray.
    #[arg(long)]
    closest: bool,
}

pub(super) fn run(args: &RaycastArgs) -> Result<(), CliError> {
    let text = std::fs::read_to_string(&args.scene).map_err(|source| CliError::Read {
        path: args.scene.clone(),
        source,
    })?;
    let scene = parse_ray_scene_json(&text)?;
    let hits = cast_on(args.backend, &scene, args.closest)?;
    output::write_text(args.out.as_deref(), &write_hits_json(&hits))
}

/// Casts the scene's rays on `backend`; `auto` takes the CPU on a software adapter, and falls
/// back to it, with one line on stderr, when the GPU cannot run.
fn cast_on(backend: Backend, scene: &RayScene, closest: bool) -> Result<Vec<Vec<RayHit>>, CliError> {
    let gpu = match backend {
        Backend::Cpu => false,
        Backend::Gpu => true,
        Backend::Auto => auto_casts_on_gpu()?,
    };
    if gpu {
        match GpuRaycaster::new(&scene.shapes)
            .and_then(|mut gpu| gpu.cast(&scene.bodies, &scene.rays, closest))
        {
            Ok(hits) => return Ok(hits),
            Err(err) => gpu_failed(backend, &err)?,
        }
    }
    Ok(CpuRaycaster::new(scene.shapes.clone()).cast(&scene.bodies, &scene.rays, closest)?)
}

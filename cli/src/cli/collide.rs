//! `hullsat collide SCENE.json [--out RESULTS.json] [--backend auto|gpu|cpu] [--clip gpu|cpu]
//! [--verbose]`.
//!
//! 1. Read the scene: its format and fields.
//! 2. Validate its batch once ([`scene_batch`]: margin, bodies, then the pairs the scene lists
//!    or the broadphase's when it lists none); bad input stops here.
//! 3. Run the validated batch on the chosen backend ([`collide_on`]), which does not check it
//!    again.
//! 4. Write the results to `--out` or stdout, only once everything succeeded ([`output`]).

use std::path::PathBuf;
use std::time::Instant;

use clap::{Args, ValueEnum};
use hullsat::broadphase::DEFAULT_MAX_CANDIDATE_PAIRS;
use hullsat::narrowphase::gpu::Clipping;
use hullsat::{CpuNarrowphase, Manifold, ValidatedBatch};

use super::backend::{Backend, adapter_description, gpu_failed, start_gpu};
use super::{CliError, output, read_scene, scene_batch};

pub(super) const ABOUT: &str = "Computes contact manifolds for the body pairs of a JSON scene";

pub(super) const LONG_ABOUT: &str = "\
Computes contact manifolds for the body pairs of a JSON scene and writes them as JSON.

SCENE FORMAT (numbers are JSON numbers; every one must be finite as a 32-bit float):
  {
    \"shapes\": [                  shapes, each in its body's local frame:
      {\"hull\": {\"points\": [[x,y,z], ...]}}           convex hull of >= 4 non-coplanar points
      {\"box\": {\"half_extents\": [hx,hy,hz]}}          centred on the origin, axis-aligned
      {\"sphere\": {\"radius\": r}}                      centred on the origin
      {\"capsule\": {\"half_height\": h, \"radius\": r}}   segment (0,-h,0)..(0,h,0), radius r
      {\"cylinder\": {\"half_height\": h, \"radius\": r}}  x²+z² <= r², |y| <= h (collides as a
                                                     16-sided prism, within 1.9 % of r)
      {\"half_space\": {\"normal\": [x,y,z], \"offset\": d}}  the solid dot(normal, x) <= d
      {\"trimesh\": {\"vertices\": [[x,y,z], ...], \"triangles\": [[a,b,c], ...]}}
                                   static one-sided triangle mesh (terrain, level geometry):
                                   front face counter-clockwise, normal (b-a)x(c-a); at most
                                   524288 triangles, none degenerate
      {\"compound\": {\"children\": [{\"shape\": {...}, \"position\": [x,y,z],
                                   \"rotation\": [x,y,z,w]}, ...]}}
                                   one body of 1 to 64 convex children (hull, box, sphere,
                                   capsule, cylinder) at local poses (position and rotation
                                   optional, default the identity); one manifold per pair
    ],
    \"bodies\": [{\"shape\": 0, \"position\": [x,y,z], \"rotation\": [x,y,z,w]}, ...],
    \"pairs\": [[0, 1], ...],    body index pairs to test (optional: when absent, the broadphase
                                lists every pair whose world bounding boxes come within the
                                margin, each as [a, b] with a < b; at most --max-pairs)
    \"margin\": 0.0              speculative margin, >= 0 (optional, default 0)
  }
  rotation is a unit quaternion (x, y, z, w); lengths within 0.001 of 1 are normalized, others
  rejected. Two static shapes (half-spaces, trimeshes) cannot form a pair, nor a compound and a
  trimesh; a body cannot pair with itself. Unknown and
  repeated keys are rejected. A hull takes at most 65536 points.

RESULTS FORMAT:
  {\"manifolds\": [{\"pair\": [a, b], \"normal\": [x,y,z], \"separation\": s,
                  \"points\": [{\"position\": [x,y,z], \"depth\": d, \"id\": n}, ...]}, ...]}
  One entry per tested pair whose separation <= margin, in pair order; none for the others.

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
              \"Feature ids\", and in the docs of hullsat::FeatureId; a pair with a trimesh
              uses hullsat::trimesh::mesh_feature_id (triangle:19 | kind:2 | flag:1 |
              triangle feature:2 | body feature:8) whichever body comes first; a pair with a
              compound puts the child in each field (child:6 | feature:8,
              hullsat::shape::compound::compound_feature_id).

EXIT STATUS:
  0 success. 1 backend or output failure (a full disk, a closed pipe), or a pair whose result is
  not finite (named, e.g. pairs[4] ([2, 7]): separation). 2 bad input: an unreadable scene file
  or a problem in it, reported as one line on stderr naming the JSON path (e.g.
  bodies[3].rotation), or more broadphase pairs than --max-pairs. Errors are one line on stderr,
  input text in them quoted and escaped. Nothing is written on failure: --out is written to a
  temporary file beside it and renamed into place when complete, so an existing file stays as
  it was. Under --backend auto, the CPU runs batches of fewer than 3000 pairs per CPU thread
  (the GPU's measured crossover) and on software adapters such as lavapipe, and a GPU that
  cannot run is one note on stderr and the CPU runs instead (--verbose says which and why);
  under --backend gpu it is exit status 1.";

pub(super) const AFTER_HELP: &str =
    "EXAMPLE:\n  hullsat collide examples/box_stack.json --out results.json --verbose";

#[derive(Debug, Args)]
pub(super) struct CollideArgs {
    /// The scene (JSON; format above).
    #[arg(value_name = "SCENE.json")]
    scene: PathBuf,
    /// Write the results here instead of to stdout.
    #[arg(long, value_name = "RESULTS.json")]
    out: Option<PathBuf>,
    /// Where to run: auto (the CPU for small batches and software adapters, else the GPU when
    /// available; --verbose says why), gpu, or cpu.
    #[arg(long, value_enum, default_value_t = Backend::Auto)]
    backend: Backend,
    /// Where the GPU backend turns SAT results into manifolds: gpu (the clip kernel; pairs it
    /// cannot finish take the CPU path) or cpu (CPU clipping of the GPU's SAT results). Ignored
    /// on the CPU backend.
    #[arg(long, value_enum, default_value_t = Clip::Gpu)]
    clip: Clip,
    /// Report scene size, adapter, backend and timing on stderr.
    #[arg(long)]
    verbose: bool,
    /// Most candidate pairs the broadphase may list for a scene without "pairs" (more is exit
    /// status 2, counted before any is stored). About 112 bytes of memory per pair.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_CANDIDATE_PAIRS)]
    max_pairs: usize,
}

/// Where a GPU backend clips (`--clip`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(super) enum Clip {
    /// In the GPU's clip kernel.
    Gpu,
    /// On the CPU, from the GPU's SAT results.
    Cpu,
}

impl Clip {
    /// The library's form.
    pub(super) fn clipping(self) -> Clipping {
        match self {
            Clip::Gpu => Clipping::Gpu,
            Clip::Cpu => Clipping::Cpu,
        }
    }

    /// One line saying where a GPU run clipped, given the pairs it left to the host.
    pub(super) fn describe(self, host_pairs: usize) -> String {
        match self {
            Clip::Gpu => format!(
                "clipping: on the GPU; {host_pairs} pairs took the CPU path (large faces, \
                 rounding-close contact features)"
            ),
            Clip::Cpu => "clipping: on the CPU, from the GPU's SAT results".into(),
        }
    }
}

pub(super) fn run(args: &CollideArgs) -> Result<(), CliError> {
    let scene = read_scene(&args.scene)?;
    let mut found = Vec::new();
    let batch = scene_batch(&scene, &mut found, args.max_pairs)?;
    let pairs = batch.given_pairs();
    if args.verbose {
        output::note(&format!(
            "scene: {} shapes, {} bodies, {} pairs{}, margin {}",
            scene.shapes.len(),
            scene.bodies.len(),
            pairs.len(),
            if scene.pairs.is_none() {
                " (broadphase)"
            } else {
                ""
            },
            scene.margin
        ));
    }
    let start = Instant::now();
    let (results, backend_name) = collide_on(args.backend, args.clip, &batch, args.verbose)?;
    if args.verbose {
        let count = results.iter().flatten().count();
        output::note(&format!(
            "{backend_name}: {count} manifolds in {:.3} ms",
            start.elapsed().as_secs_f64() * 1e3
        ));
    }
    output::write_results(args.out.as_deref(), pairs, &results, scene.pairs.is_some())
}

/// Runs the batch (validated once, see [`scene_batch`]) on `backend`; returns one entry per
/// pair and the name of the backend used. `auto` falls back to the CPU, with one line on
/// stderr, when the GPU cannot run.
fn collide_on(
    backend: Backend,
    clip: Clip,
    batch: &ValidatedBatch,
    verbose: bool,
) -> Result<(Vec<Option<Manifold>>, &'static str), CliError> {
    let (gpu, why) = start_gpu(backend, batch.shapes(), batch.given_pairs().len())?;
    if verbose {
        let name = if gpu.is_some() { "gpu" } else { "cpu" };
        output::note(&format!("backend: {name} ({why})"));
    }
    if let Some(mut gpu) = gpu {
        if verbose {
            output::note(&format!("adapter: {}", adapter_description(&gpu)));
        }
        let run = gpu
            .set_clipping(clip.clipping())
            .and_then(|()| gpu.collide_validated(batch));
        match run {
            Ok(results) => {
                if verbose {
                    output::note(&clip.describe(gpu.timings().host_pairs));
                }
                return Ok((results, "gpu"));
            }
            Err(err) => gpu_failed(backend, &err)?,
        }
    }
    let narrowphase = CpuNarrowphase::new(batch.shapes());
    let results = narrowphase.collide_validated(batch)?;
    Ok((results, "cpu"))
}

//! The CPU batch: every ray through the BVH, in parallel (rayon).
//!
//! 1. Validate the bodies ([`validate_batch`]: shape indices, unit rotations) and build the
//!    [`Bvh`] over them.
//! 2. For each ray, in parallel: traverse the BVH ([`Bvh::traverse`]) and cast the ray exactly
//!    against each candidate body, in that body's frame ([`cast_body`]).
//! 3. All hits: sort them by distance, then body index. Closest: keep the first one found under
//!    that order, shrinking the traversal's limit to its distance as hits come in.
//!
//! WGSL twin: `shaders/raycast/raycast.wgsl` (one ray per invocation, the same steps).

use std::cell::Cell;

use rayon::prelude::*;

use super::cast_shape::cast_body;
use super::hit_set::RayHitSet;
use super::ray::{Ray, RayHit};
use crate::bvh::Bvh;
use crate::scene::{Body, InputError, validate_batch};
use crate::shape::Shape;

/// Fewest rays a rayon task takes (a ray costs a microsecond or so).
const RAYS_PER_TASK: usize = 64;

/// Ray casts on the CPU over a fixed set of shapes shared by any number of bodies.
#[derive(Clone, Debug)]
pub struct CpuRaycaster {
    shapes: Vec<Shape>,
}

impl CpuRaycaster {
    /// A ray caster over `shapes` (bodies refer to them by index; a `Vec`, a slice or an array),
    /// called as [`crate::GpuRaycaster::new`] is.
    pub fn new(shapes: impl AsRef<[Shape]>) -> Self {
        CpuRaycaster {
            shapes: shapes.as_ref().to_vec(),
        }
    }

    /// The shapes, in index order.
    pub fn shapes(&self) -> &[Shape] {
        &self.shapes
    }

    /// One list per ray, in ray order: every body the ray enters within its max distance, once,
    /// nearest first (ties: lower body index); with `closest`, at most the first of them. Rays
    /// run in parallel. Bad bodies give an [`InputError`] (`bodies[i]...`).
    pub fn cast(&self, bodies: &[Body], rays: &[Ray], closest: bool) -> Result<Vec<Vec<RayHit>>, InputError> {
        let (bodies, bvh) = self.prepare(bodies)?;
        Ok(rays
            .par_iter()
            .with_min_len(RAYS_PER_TASK)
            .map(|ray| cast_one(&self.shapes, &bodies, &bvh, ray, closest))
            .collect())
    }

    /// [`Self::cast`] into `out`, cleared first (also on error), in ray order: each run of rays
    /// appends to a buffer the set keeps, so a set reused on batches of similar size allocates
    /// nothing per ray once warm (see [`RayHitSet`]).
    pub fn cast_into(
        &self,
        bodies: &[Body],
        rays: &[Ray],
        closest: bool,
        out: &mut RayHitSet,
    ) -> Result<(), InputError> {
        out.clear();
        let (bodies, bvh) = self.prepare(bodies)?;
        out.fill_runs(rays.len(), RAYS_PER_TASK, |first, len, run| {
            for ray in &rays[first..first + len] {
                let before = run.hits.len();
                cast_one_into(&self.shapes, &bodies, &bvh, ray, closest, &mut run.hits);
                run.end_ray(before);
            }
        });
        Ok(())
    }

    /// Same as [`Self::cast`] on the calling thread only (a baseline for benchmarks).
    pub fn cast_single_thread(
        &self,
        bodies: &[Body],
        rays: &[Ray],
        closest: bool,
    ) -> Result<Vec<Vec<RayHit>>, InputError> {
        let (bodies, bvh) = self.prepare(bodies)?;
        Ok(rays
            .iter()
            .map(|ray| cast_one(&self.shapes, &bodies, &bvh, ray, closest))
            .collect())
    }

    /// Step 1.
    fn prepare(&self, bodies: &[Body]) -> Result<(Vec<Body>, Bvh), InputError> {
        let bodies = validate_batch(&self.shapes, bodies, &[], 0.0)?;
        let bvh = Bvh::build(&self.shapes, &bodies);
        Ok((bodies, bvh))
    }
}

/// Steps 2 and 3 for one ray over checked `bodies` and their `bvh`.
pub(crate) fn cast_one(
    shapes: &[Shape],
    bodies: &[Body],
    bvh: &Bvh,
    ray: &Ray,
    closest: bool,
) -> Vec<RayHit> {
    let mut hits = Vec::new();
    cast_one_into(shapes, bodies, bvh, ray, closest, &mut hits);
    hits
}

/// [`cast_one`] appending the ray's hits to `out` (what `out` held before is left alone).
pub(crate) fn cast_one_into(
    shapes: &[Shape],
    bodies: &[Body],
    bvh: &Bvh,
    ray: &Ray,
    closest: bool,
    out: &mut Vec<RayHit>,
) {
    let start = out.len();
    let limit = Cell::new(ray.max_distance().min(f32::MAX));
    bvh.traverse(
        ray.origin(),
        ray.direction(),
        || limit.get(),
        |index| {
            let body = &bodies[index as usize];
            let Some(hit) = cast_body(&shapes[body.shape as usize], index, body, ray) else {
                return;
            };
            if !closest {
                out.push(hit);
            } else if out.get(start).is_none_or(|best| hit.precedes(best)) {
                limit.set(hit.distance);
                out.truncate(start);
                out.push(hit);
            }
        },
    );
    out[start..].sort_unstable_by(|a, b| a.distance.total_cmp(&b.distance).then(a.body.cmp(&b.body)));
}

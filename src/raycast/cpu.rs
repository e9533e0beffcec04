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
    let mut hits: Vec<RayHit> = Vec::new();
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
                hits.push(hit);
            } else if hits.first().is_none_or(|best| hit.precedes(best)) {
                limit.set(hit.distance);
                hits.clear();
                hits.push(hit);
            }
        },
    );
    hits.sort_unstable_by(|a, b| a.distance.total_cmp(&b.distance).then(a.body.cmp(&b.body)));
    hits
}

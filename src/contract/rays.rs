//! The GPU = CPU contract for ray casts: what "the GPU's hit lists equal the CPU's" means under
//! WGSL's precision rules, and the one comparator that judges it ([`compare_ray_hits`]). With
//! `τ` = [`GPU_AGREEMENT_TOLERANCE`] × the body's scale ([`hit_tolerance`], length units), the
//! GPU's lists (one per ray, as [`crate::GpuRaycaster::cast`] returns them) agree when:
//! 1. **Well formed**: existing bodies once per list, finite numbers, distances within the
//!    ray's range, points on the ray, unit normals ([`RAY_NORMAL_TOLERANCE`]), sorted lists.
//! 2. **A body on both lists**: entry points within `τ` across the surface, the same start
//!    inside or not, normals within [`RAY_NORMAL_TOLERANCE`] (wider on curved surfaces, a
//!    compound's curved children too; any face through an edge or vertex: a polyhedron's, a
//!    mesh triangle either side, a compound child's); near-equal distances may swap order.
//! 3. **A body on one list only** where the ray grazes it ([`ray_grazes`], [`RAY_GRAZING_NUDGE`]).
//! 4. **Closest**: another first body only where the CPU's hits before it tie or graze.
//!
//! Anything else is a [`RayDisagreement`]; ties are counted ([`RayTally`]). The rules in full:
//! docs/design/contract.md.

use glam::{DVec3, Vec3};

use super::judge_all;
use crate::constants::GPU_AGREEMENT_TOLERANCE;
use crate::raycast::{Ray, RayHit, cast_body, cast_compound};
use crate::scene::Body;
use crate::scene::validate::normalized;
use crate::shape::Shape;

/// Largest distance between the GPU's and the CPU's unit normals at one entry point, and
/// between a normal and a face's to call it that face's, dimensionless (about radians). A
/// sphere's or capsule's normal turns by its entry point's error over its radius: across the
/// surface up to `τ` ([`hit_tolerance`]), which grows with the ray origin's distance, so from
/// 100 radii away 100 × [`GPU_AGREEMENT_TOLERANCE`] (along the ray, rule 2 adds the distances'
/// difference over the radius).
pub const RAY_NORMAL_TOLERANCE: f32 = 1.0e-3;

/// How far [`ray_grazes`] moves a ray sideways, as a fraction of the body's scale (the scale of
/// [`hit_tolerance`]), and by what fraction it changes the ray's max distance, dimensionless:
/// ten times [`GPU_AGREEMENT_TOLERANCE`], so that the nudge exceeds the GPU's own error in the
/// decision (an entry and an exit distance, each off by up to `τ`, compared with each other and
/// with the max distance). Larger accepts more one-sided hits as grazing; smaller flags a
/// rounding-close decision as a disagreement.
pub const RAY_GRAZING_NUDGE: f32 = 10.0 * GPU_AGREEMENT_TOLERANCE;

/// What broke the contract for one ray.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RayDisagreementKind {
    /// Rule 1: a list count other than one per ray, a body out of range or twice in a list, a
    /// non-finite number, a distance out of range, a point off the ray, a normal not unit, an
    /// unsorted list, or more than one hit with `closest`.
    Malformed,
    /// Entry points more than `τ` apart across the surface, or one side starting inside the
    /// body and the other entering it beyond `τ`.
    Distance,
    /// Normals farther apart than rule 2 allows, not both faces through the point.
    Normal,
    /// A body on one side's list only (or a nearer CPU hit the GPU skipped) where the ray does
    /// not graze it.
    Verdict,
}

/// Why one ray's GPU hits are outside the contract.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RayDisagreement {
    /// Index of the ray.
    pub ray: usize,
    /// Which rule broke.
    pub kind: RayDisagreementKind,
    /// The numbers, for a person.
    pub detail: String,
}

impl std::fmt::Display for RayDisagreement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "GPU and CPU ray hits disagree beyond the GPU = CPU contract on rays[{}]: {:?}: {}",
            self.ray, self.kind, self.detail
        )
    }
}

impl std::error::Error for RayDisagreement {}

/// Counts over a batch of rays: hits on each side, hits compared, and each accepted tie.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RayTally {
    /// Rays compared.
    pub rays: usize,
    /// Hits in the GPU's lists.
    pub gpu_hits: usize,
    /// Hits in the CPU's lists.
    pub cpu_hits: usize,
    /// Hits of one body on both sides, compared (rule 2; with `closest` and another first body,
    /// the GPU's against the CPU's hit of that body).
    pub hits: usize,
    /// Hits on one side only, accepted at a grazing ray (rule 3).
    pub grazing: usize,
    /// Compared hits on a sphere or capsule whose normals differ by more than
    /// [`RAY_NORMAL_TOLERANCE`], within the distances' difference over its radius (rule 2; not a
    /// tie: the same entry, ill-conditioned).
    pub conditioned: usize,
    /// Compared hits whose normals are different faces through the entry point (rule 2).
    pub other_face: usize,
    /// Compared hits where one side starts inside the body and the other enters within `τ`.
    pub start_ties: usize,
    /// Rays with `closest` whose first body differs, the CPU entering it within `τ` (rule 4).
    pub closest_ties: usize,
    /// Rays whose bodies on both lists come in another order (distances within `τ`; not a
    /// tie of its own).
    pub order_swaps: usize,
}

impl RayTally {
    /// The sum of two tallies.
    pub fn merged(mut self, other: &RayTally) -> RayTally {
        self.rays += other.rays;
        self.gpu_hits += other.gpu_hits;
        self.cpu_hits += other.cpu_hits;
        self.hits += other.hits;
        self.grazing += other.grazing;
        self.conditioned += other.conditioned;
        self.other_face += other.other_face;
        self.start_ties += other.start_ties;
        self.closest_ties += other.closest_ties;
        self.order_swaps += other.order_swaps;
        self
    }

    /// Hits or rays accepted at a tie: grazing, other face, start and closest ties.
    pub fn ties(&self) -> usize {
        self.grazing + self.other_face + self.start_ties + self.closest_ties
    }
}

/// Judges the GPU's hit lists against the CPU's for `rays` cast at `bodies` (whose shapes index
/// `shapes`; valid, as the ray casters accepted them), every hit or with `closest` the first
/// (rules in the module docs), on all threads: the tally, or the first ray (lowest index)
/// outside the contract. `cpu` must hold one list per ray.
pub fn compare_ray_hits(
    shapes: &[Shape],
    bodies: &[Body],
    rays: &[Ray],
    closest: bool,
    gpu: &[Vec<RayHit>],
    cpu: &[Vec<RayHit>],
) -> Result<RayTally, RayDisagreement> {
    assert_eq!(cpu.len(), rays.len(), "one CPU list per ray");
    if gpu.len() != rays.len() {
        return Err(RayDisagreement {
            ray: gpu.len().min(rays.len()),
            kind: RayDisagreementKind::Malformed,
            detail: format!("{} GPU lists for {} rays", gpu.len(), rays.len()),
        });
    }
    let scene = RayScene {
        shapes,
        bodies: bodies.iter().map(normalized).collect(),
    };
    judge_all(
        rays.len(),
        |index| {
            let mut tally = RayTally::default();
            scene
                .compare(&rays[index], closest, &gpu[index], &cpu[index], &mut tally)
                .map(|()| tally)
                .map_err(|(kind, detail)| RayDisagreement {
                    ray: index,
                    kind,
                    detail: format!("{detail}\n gpu {:?}\n cpu {:?}", gpu[index], cpu[index]),
                })
        },
        |x, y| x.merged(&y),
    )
}

/// The contract's `τ` for a hit of `ray` on `body` at `distance` along it, length units:
/// [`GPU_AGREEMENT_TOLERANCE`] × the body's scale, its bounding radius plus the ray origin's
/// distance from the body's origin. A half-space has no size: its scale is 1 plus the origin's
/// distance plus `distance`, since a ray at a shallow angle meets it far from both, its entry
/// point moving across the plane by the direction's rounding × `distance`.
pub fn hit_tolerance(shapes: &[Shape], body: &Body, ray: &Ray, distance: f32) -> f32 {
    GPU_AGREEMENT_TOLERANCE * body_scale(shapes, body, ray, distance)
}

/// True when the CPU's decision whether `ray` enters body `index` of `bodies` is within
/// rounding (rule 3): moving the ray sideways by [`RAY_GRAZING_NUDGE`] × the body's scale (four
/// ways; the scale of [`hit_tolerance`] at the CPU's hit, if any), or scaling its max distance
/// by 1 ± [`RAY_GRAZING_NUDGE`], changes it. The ray grazes the body or ends at its surface.
pub fn ray_grazes(shapes: &[Shape], bodies: &[Body], index: u32, ray: &Ray) -> bool {
    grazes(shapes, index, &normalized(&bodies[index as usize]), ray, 0.0)
}

/// The body's length for tolerances (see [`hit_tolerance`]).
fn body_scale(shapes: &[Shape], body: &Body, ray: &Ray, distance: f32) -> f32 {
    let radius = shapes[body.shape as usize].bounding_radius();
    let origin_distance = (ray.origin() - body.pose.translation).length() as f32;
    if radius.is_finite() {
        radius + origin_distance
    } else {
        1.0 + origin_distance + distance
    }
}

/// [`ray_grazes`] for a body with a unit rotation, with its scale at the larger of `distance`
/// (a hit the GPU reports) and the CPU's hit.
fn grazes(shapes: &[Shape], index: u32, body: &Body, ray: &Ray, distance: f32) -> bool {
    let shape = &shapes[body.shape as usize];
    let cpu = cast_body(shape, index, body, ray);
    let hit = cpu.is_some();
    let distance = cpu.map_or(distance, |h| h.distance.max(distance));
    let nudge = f64::from(RAY_GRAZING_NUDGE);
    let step = nudge * f64::from(body_scale(shapes, body, ray, distance));
    let d = ray.direction();
    let side = d.any_orthonormal_vector().as_dvec3();
    let up = d.as_dvec3().cross(side);
    let max = f64::from(ray.max_distance());
    let longer = [1.0 + nudge, 1.0 - nudge].map(|f| Ray::new(ray.origin(), d, Some((max * f) as f32)));
    let sideways = [side, -side, up, -up]
        .map(|offset| Ray::new(ray.origin() + offset * step, d, Some(ray.max_distance())));
    longer
        .into_iter()
        .chain(sideways)
        .flatten()
        .any(|r| cast_body(shape, index, body, &r).is_some() != hit)
}

/// The problem with one ray: which rule broke and the numbers.
type Broken = (RayDisagreementKind, String);

/// The shapes and bodies (rotations normalized) the rays were cast at.
struct RayScene<'a> {
    shapes: &'a [Shape],
    bodies: Vec<Body>,
}

impl RayScene<'_> {
    fn body(&self, hit: &RayHit) -> &Body {
        &self.bodies[hit.body as usize]
    }

    fn tolerance(&self, hit: &RayHit, ray: &Ray) -> f32 {
        hit_tolerance(self.shapes, self.body(hit), ray, hit.distance)
    }

    /// Rules 1 to 4 for one ray.
    fn compare(
        &self,
        ray: &Ray,
        closest: bool,
        g: &[RayHit],
        c: &[RayHit],
        tally: &mut RayTally,
    ) -> Result<(), Broken> {
        tally.rays += 1;
        tally.gpu_hits += g.len();
        tally.cpu_hits += c.len();
        self.well_formed(ray, closest, g)?;
        if closest {
            if c.len() > 1 {
                return Err(malformed(format!("{} CPU hits with closest", c.len())));
            }
            return self.compare_closest(ray, g.first(), c.first(), tally);
        }
        for b in c {
            match g.iter().find(|a| a.body == b.body) {
                Some(a) => self.compare_hit(ray, a, b, tally)?,
                None => self.one_side(ray, b, "CPU", tally)?,
            }
        }
        for a in g.iter().filter(|a| !c.iter().any(|b| b.body == a.body)) {
            self.one_side(ray, a, "GPU", tally)?;
        }
        let on_both = |x: &[RayHit], y: &[RayHit]| -> Vec<u32> {
            x.iter()
                .filter(|h| y.iter().any(|o| o.body == h.body))
                .map(|h| h.body)
                .collect()
        };
        tally.order_swaps += usize::from(on_both(g, c) != on_both(c, g));
        Ok(())
    }

    /// Rule 1 for the GPU's list of one ray.
    fn well_formed(&self, ray: &Ray, closest: bool, g: &[RayHit]) -> Result<(), Broken> {
        if closest && g.len() > 1 {
            return Err(malformed(format!("{} GPU hits with closest", g.len())));
        }
        for h in g {
            if h.body as usize >= self.bodies.len() {
                return Err(malformed(format!("body {} of {}", h.body, self.bodies.len())));
            }
            let tolerance = self.tolerance(h, ray);
            let finite = h.distance.is_finite() && h.point.is_finite() && h.normal.is_finite();
            let in_range = h.distance >= 0.0 && h.distance <= ray.max_distance() + tolerance;
            let on_ray = h.point.distance(ray.point_at(h.distance)) <= f64::from(tolerance);
            let unit = (h.normal.length() - 1.0).abs() <= RAY_NORMAL_TOLERANCE;
            if !(finite && in_range && on_ray && unit) {
                return Err(malformed(format!(
                    "body {}: not finite, distance out of 0..=max {}, point off the ray or normal not unit (tolerance {tolerance:e})",
                    h.body,
                    ray.max_distance()
                )));
            }
        }
        if !g
            .windows(2)
            .all(|w| (w[0].distance, w[0].body) < (w[1].distance, w[1].body))
        {
            return Err(malformed("GPU list not sorted by (distance, body)".into()));
        }
        let mut seen: Vec<u32> = g.iter().map(|h| h.body).collect();
        seen.sort_unstable();
        if let Some(w) = seen.windows(2).find(|w| w[0] == w[1]) {
            return Err(malformed(format!("body {} twice in the GPU's list", w[0])));
        }
        Ok(())
    }

    /// Rule 2: the GPU's hit `a` and the CPU's `b` of one body.
    fn compare_hit(&self, ray: &Ray, a: &RayHit, b: &RayHit, tally: &mut RayTally) -> Result<(), Broken> {
        tally.hits += 1;
        let tolerance = hit_tolerance(self.shapes, self.body(b), ray, a.distance.max(b.distance));
        let across = (a.distance - b.distance).abs() * b.normal.dot(ray.direction()).abs();
        let inside = [a.distance, b.distance].map(|d| d == 0.0);
        let start_tie = inside[0] != inside[1];
        if across > tolerance || (start_tie && a.distance.max(b.distance) > tolerance) {
            return Err((
                RayDisagreementKind::Distance,
                format!(
                    "body {}: distances {} (gpu) and {} (cpu), {across:e} across the surface (tolerance {tolerance:e})",
                    b.body, a.distance, b.distance
                ),
            ));
        }
        if start_tie {
            tally.start_ties += 1;
            return Ok(());
        }
        let apart = a.normal.distance(b.normal);
        if apart <= RAY_NORMAL_TOLERANCE {
            return Ok(());
        }
        let shape = &self.shapes[self.body(b).shape as usize];
        let curved = match shape {
            // The child the CPU's ray enters.
            Shape::Compound(compound) => cast_compound(compound, &ray.to_local(&self.body(b).pose))
                .and_then(|(_, child)| curved_radius(&compound.children()[child as usize].shape)),
            _ => curved_radius(shape),
        };
        if let Some(radius) = curved {
            let allowed = RAY_NORMAL_TOLERANCE + (a.distance - b.distance).abs() / radius;
            if apart <= allowed {
                tally.conditioned += 1;
                return Ok(());
            }
            return Err((
                RayDisagreementKind::Normal,
                format!("body {}: normals {apart} apart (tolerance {allowed:e})", b.body),
            ));
        }
        let through = |n: Vec3| is_face_through(shape, self.body(b), n, b.point, tolerance);
        if !(through(a.normal) && through(b.normal)) {
            return Err((
                RayDisagreementKind::Normal,
                format!(
                    "body {}: normals {apart} apart (tolerance {RAY_NORMAL_TOLERANCE:e}), not two faces through the entry point",
                    b.body
                ),
            ));
        }
        tally.other_face += 1;
        Ok(())
    }

    /// Rule 3: hit `h` on `side`'s list only.
    fn one_side(&self, ray: &Ray, h: &RayHit, side: &str, tally: &mut RayTally) -> Result<(), Broken> {
        if !grazes(self.shapes, h.body, self.body(h), ray, h.distance) {
            return Err((
                RayDisagreementKind::Verdict,
                format!(
                    "only the {side} enters body {} (distance {}) and the ray does not graze it",
                    h.body, h.distance
                ),
            ));
        }
        tally.grazing += 1;
        Ok(())
    }

    /// Rule 4: the GPU's first hit `g` against the CPU's `c`, with `closest`.
    fn compare_closest(
        &self,
        ray: &Ray,
        g: Option<&RayHit>,
        c: Option<&RayHit>,
        tally: &mut RayTally,
    ) -> Result<(), Broken> {
        match (g, c) {
            (None, None) => return Ok(()),
            (Some(a), Some(b)) if a.body == b.body => return self.compare_hit(ray, a, b, tally),
            _ => {}
        }
        let every = self.every_hit(ray);
        // How far along the ray the CPU puts the GPU's choice (none: beyond every hit).
        let reach = match g {
            None => f32::INFINITY,
            Some(a) => match every.iter().find(|h| h.body == a.body) {
                Some(h) => {
                    self.compare_hit(ray, a, h, tally)?;
                    h.distance
                }
                None => {
                    self.one_side(ray, a, "GPU", tally)?;
                    a.distance
                }
            },
        };
        let mut tie = false;
        for h in every
            .iter()
            .filter(|h| g.is_none_or(|a| a.body != h.body) && h.distance <= reach)
        {
            if reach - h.distance <= self.tolerance(h, ray) {
                tie = true;
            } else if grazes(self.shapes, h.body, self.body(h), ray, h.distance) {
                tally.grazing += 1;
            } else {
                return Err((
                    RayDisagreementKind::Verdict,
                    format!(
                        "the CPU enters body {} at {}, before the GPU's first hit (at {reach} on the CPU), and the ray does not graze it",
                        h.body, h.distance
                    ),
                ));
            }
        }
        tally.closest_ties += usize::from(tie);
        Ok(())
    }

    /// Every body `ray` enters on the CPU, nearest first (ties: lower body index): each body
    /// cast in turn, with no BVH.
    fn every_hit(&self, ray: &Ray) -> Vec<RayHit> {
        let mut hits: Vec<RayHit> = self
            .bodies
            .iter()
            .enumerate()
            .filter_map(|(i, body)| cast_body(&self.shapes[body.shape as usize], i as u32, body, ray))
            .collect();
        hits.sort_unstable_by(|a, b| a.distance.total_cmp(&b.distance).then(a.body.cmp(&b.body)));
        hits
    }
}

fn malformed(detail: String) -> Broken {
    (RayDisagreementKind::Malformed, detail)
}

/// The radius of a curved shape's surface (sphere, capsule, cylinder), whose normal turns with
/// the entry point; `None` for flat-faced shapes.
fn curved_radius(shape: &Shape) -> Option<f32> {
    match shape {
        Shape::Sphere(s) => Some(s.radius),
        Shape::Capsule(c) => Some(c.radius),
        Shape::Cylinder(c) => Some(c.radius()),
        _ => None,
    }
}

/// True when world `normal` is within [`RAY_NORMAL_TOLERANCE`] of a face normal of `body`
/// whose face passes within `tolerance` (length units) of world `point`: a polyhedron's outward
/// face plane, a mesh triangle (either side; the point within `tolerance` of the triangle), or
/// such a face of a compound's child.
fn is_face_through(shape: &Shape, body: &Body, normal: Vec3, point: DVec3, tolerance: f32) -> bool {
    let local = body
        .pose
        .inverse_transform_vector((point - body.pose.translation).as_vec3());
    let local_normal = body.pose.inverse_transform_vector(normal);
    is_local_face_through(shape, local_normal, local, tolerance)
}

/// [`is_face_through`] in the shape's frame.
fn is_local_face_through(shape: &Shape, normal: Vec3, point: Vec3, tolerance: f32) -> bool {
    let near = |n: Vec3| n.distance(normal) <= RAY_NORMAL_TOLERANCE;
    match shape {
        Shape::TriMesh(mesh) => {
            let mut candidates = Vec::new();
            mesh.triangles_in_aabb(point - tolerance, point + tolerance, &mut candidates);
            candidates.iter().any(|&t| {
                let triangle = mesh.triangle(t);
                let [a, ..] = triangle.vertices;
                let inside = triangle
                    .sides()
                    .iter()
                    .zip(triangle.vertices)
                    .all(|(&(_, side), v)| (point - v).dot(side) <= tolerance);
                (near(triangle.normal) || near(-triangle.normal))
                    && (point - a).dot(triangle.normal).abs() <= tolerance
                    && inside
            })
        }
        Shape::Compound(compound) => compound.children().iter().any(|child| {
            is_local_face_through(
                &child.shape,
                child.pose.inverse_transform_vector(normal),
                child.pose.inverse_transform_point(point),
                tolerance,
            )
        }),
        _ => shape.as_hull().is_some_and(|hull| {
            hull.planes()
                .iter()
                .any(|plane| near(plane.normal) && plane.signed_distance(point).abs() <= tolerance)
        }),
    }
}

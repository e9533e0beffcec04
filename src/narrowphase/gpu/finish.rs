//! Step 5 of a batch call, per pair on all threads: a record read back from the GPU becomes the
//! pair's result, every index and number checked first ([`GpuError::BadResult`], never a panic).
//!
//! - A clipped manifold (`MANIFOLD_CLIPPED`, A's frame) moves to world space with A's pose.
//! - A hull pair the clip kernel left to the host (`MANIFOLD_HOST`), and every hull pair under
//!   [`Clipping::Cpu`](super::Clipping), is clipped on the CPU from the GPU's SAT
//!   ([`manifold_from_sat`]); other pairs left to it take the CPU path ([`collide_shapes`]):
//!   compound and mesh pairs the compound stage or the mesh pass left to the host (a compound
//!   against a mesh always), the CPU's manifolds bit for bit.
//! - A compound or mesh pair past the capacity of its stage (`MANIFOLD_OVERFLOW`) fails the
//!   call ([`GpuError::CompoundCapacity`], [`GpuError::MeshCapacity`]).
//! - A SAT result the driver cut short (`INCOMPLETE_BIT`, CPU drivers only) is recomputed by
//!   the CPU SAT ([`query_hulls`]).
//!
//! [`HostFinish`] holds what a call's finish needs (each shape's [`ShapeFeatures`]) and counts
//! the pairs the host finished, for [`GpuTimings`].

use std::sync::atomic::{AtomicUsize, Ordering};

use super::GpuTimings;
use super::layout::{
    GpuManifold, GpuSatResult, MANIFOLD_CLIPPED, MANIFOLD_HOST, MANIFOLD_OVERFLOW, MANIFOLD_SEPARATED,
};
use super::rounds::{RoundRecords, read_listed_into};
use super::staged::StagedBatch;
use crate::contact::{collide_shapes, manifold_from_sat};
use crate::contact_set::ContactSet;
use crate::gpu::GpuError;
use crate::hull::ConvexHull;
use crate::manifold::{ContactPoint, FeatureId, Manifold};
use crate::pose::Pose;
use crate::query::sat::{SatAxis, SatResult, query_hulls};
use crate::scene::validate::{ValidatedBatch, is_host_pair, is_mesh_pair, swap_pair};
use crate::shape::Shape;

/// What one call's finish needs (each shape's feature counts), and the pairs the host finished
/// itself (shared by the reading threads).
pub(super) struct HostFinish<'f> {
    /// Per shape of the narrowphase, what feature ids may name.
    features: &'f [ShapeFeatures],
    /// Pairs the clip kernel left to the host ([`GpuTimings::host_pairs`]).
    host: AtomicUsize,
    /// Pairs the driver cut short ([`GpuTimings::incomplete_pairs`]).
    incomplete: AtomicUsize,
}

impl<'f> HostFinish<'f> {
    /// A call's finish over shapes of `features` ([`ShapeFeatures::of`] each, in order), no
    /// pair counted yet.
    pub fn new(features: &'f [ShapeFeatures]) -> Self {
        HostFinish {
            features,
            host: AtomicUsize::new(0),
            incomplete: AtomicUsize::new(0),
        }
    }

    /// [`super::GpuNarrowphase::sat`]: the checked SAT result of a hull pair, `None` for others.
    pub fn sat_result(
        &self,
        batch: &StagedBatch,
        pair: usize,
        raw: &GpuSatResult,
    ) -> Result<Option<SatResult>, GpuError> {
        let Some([(hull_a, pose_a), (hull_b, pose_b)]) = hull_pair(batch, pair) else {
            return Ok(None);
        };
        if raw.is_incomplete() {
            self.incomplete.fetch_add(1, Ordering::Relaxed);
            let b_in_a = pose_a.relative_to_self(&pose_b);
            return Ok(Some(query_hulls(hull_a, hull_b, &b_in_a, batch.margin())));
        }
        checked_sat(raw, hull_a, hull_b, pair).map(Some)
    }

    /// [`super::Clipping::Gpu`]: the manifold of a pair from the clip kernel's record, written
    /// into `out`; `false` (`out` as it was) when the pair has none.
    #[inline]
    pub fn clipped_on_gpu(
        &self,
        batch: &StagedBatch,
        pair: usize,
        raw: &GpuManifold,
        out: &mut Manifold,
    ) -> Result<bool, GpuError> {
        let host = |manifold: Option<Manifold>, out: &mut Manifold| match manifold {
            Some(manifold) => {
                *out = manifold;
                true
            }
            None => false,
        };
        match raw.status {
            MANIFOLD_SEPARATED => Ok(false),
            MANIFOLD_CLIPPED => {
                let [a, b] = batch.pair(pair);
                let pose_a = batch.pose(a);
                let features = [a, b].map(|body| &self.features[batch.shape_index(body)]);
                manifold_from_gpu(raw, features, &pose_a, pair, out)?;
                Ok(true)
            }
            MANIFOLD_HOST => {
                self.host.fetch_add(1, Ordering::Relaxed);
                let sat = raw.host_sat();
                let [a, b] = batch.pair(pair);
                match hull_pair(batch, pair) {
                    // The GPU's SAT is complete: clip on the CPU from it (GJK where apart).
                    Some([(hull_a, pose_a), (hull_b, pose_b)]) if !sat.is_incomplete() => {
                        let sat = checked_sat(&sat, hull_a, hull_b, pair)?;
                        let margin = batch.margin();
                        let manifold = manifold_from_sat(hull_a, &pose_a, hull_b, &pose_b, &sat, margin);
                        Ok(host(manifold, out))
                    }
                    // Mesh and compound pairs their stage left to the host, counted as host
                    // pairs only.
                    _ if is_host_pair(batch.shape(a), batch.shape(b)) => {
                        Ok(host(cpu_collide(batch, pair), out))
                    }
                    // Hull pairs whose SAT was cut short, and primitive pairs (the kernel
                    // leaves them only when the driver cut its loops short).
                    _ => {
                        self.incomplete.fetch_add(1, Ordering::Relaxed);
                        Ok(host(cpu_collide(batch, pair), out))
                    }
                }
            }
            MANIFOLD_OVERFLOW => {
                let (count, capacity) = raw.overflow();
                let [a, b] = batch.pair(pair);
                // The mesh pass's (a compound against a mesh too), else the compound stage's.
                if is_mesh_pair(batch.shape(a), batch.shape(b)) {
                    Err(GpuError::MeshCapacity { capacity, count })
                } else {
                    Err(GpuError::CompoundCapacity { capacity, count })
                }
            }
            status => Err(GpuError::BadResult {
                pair,
                what: format!("manifold status {status}"),
            }),
        }
    }

    /// [`super::Clipping::Cpu`]: a hull pair clipped on the CPU from the GPU's SAT result, any
    /// other pair by the CPU path.
    pub fn clipped_on_cpu(
        &self,
        batch: &StagedBatch,
        pair: usize,
        raw: &GpuSatResult,
    ) -> Result<Option<Manifold>, GpuError> {
        let Some([(hull_a, pose_a), (hull_b, pose_b)]) = hull_pair(batch, pair) else {
            return Ok(cpu_collide(batch, pair));
        };
        let margin = batch.margin();
        let sat = if raw.is_incomplete() {
            self.incomplete.fetch_add(1, Ordering::Relaxed);
            query_hulls(hull_a, hull_b, &pose_a.relative_to_self(&pose_b), margin)
        } else {
            checked_sat(raw, hull_a, hull_b, pair)?
        };
        Ok(manifold_from_sat(hull_a, &pose_a, hull_b, &pose_b, &sat, margin))
    }

    /// `timings` with the counts of this call.
    pub fn add_to(self, timings: GpuTimings) -> GpuTimings {
        GpuTimings {
            host_pairs: self.host.into_inner(),
            incomplete_pairs: self.incomplete.into_inner(),
            ..timings
        }
    }
}

/// The hull and world pose of each body of staged pair `pair`, or `None` unless both shapes
/// are hulls (boxes count, see [`Shape::as_hull`]).
fn hull_pair<'a>(batch: &StagedBatch<'a>, pair: usize) -> Option<[(&'a ConvexHull, Pose); 2]> {
    let [a, b] = batch.pair(pair);
    let hull = |body: u32| Some((batch.shape(body).as_hull()?, batch.pose(body)));
    Some([hull(a)?, hull(b)?])
}

/// The CPU path for staged pair `pair` (the reference, for pairs the GPU does not finish).
fn cpu_collide(batch: &StagedBatch, pair: usize) -> Option<Manifold> {
    let [a, b] = batch.pair(pair);
    let (pose_a, pose_b) = (batch.pose(a), batch.pose(b));
    collide_shapes(batch.shape(a), &pose_a, batch.shape(b), &pose_b, batch.margin())
}

/// The CPU form of a GPU result for the hull pair `pair`, after checking that its axis code is
/// known, its feature indices exist on the hulls and its numbers are finite.
fn checked_sat(
    raw: &GpuSatResult,
    a: &ConvexHull,
    b: &ConvexHull,
    pair: usize,
) -> Result<SatResult, GpuError> {
    let bad = |what: String| GpuError::BadResult { pair, what };
    let sat = raw
        .to_sat()
        .ok_or_else(|| bad(format!("axis code {} on a hull pair", raw.kind)))?;
    let in_range = |index: u32, count: usize, what: &str| {
        if (index as usize) < count {
            Ok(())
        } else {
            Err(bad(format!("{what} {index} of {count}")))
        }
    };
    match sat.axis {
        SatAxis::FaceA(face) => in_range(face, a.planes().len(), "face of A")?,
        SatAxis::FaceB(face) => in_range(face, b.planes().len(), "face of B")?,
        SatAxis::EdgePair { edge_a, edge_b } => {
            in_range(edge_a, a.edges().len(), "edge of A")?;
            in_range(edge_b, b.edges().len(), "edge of B")?;
        }
    }
    if !(sat.normal.is_finite() && sat.separation.is_finite() && sat.axis_separation.is_finite()) {
        return Err(bad("a non-finite normal or separation".into()));
    }
    Ok(sat)
}

/// The world-space manifold of a pair the kernel finished ([`MANIFOLD_CLIPPED`]):
/// normal and points moved from A's frame by `pose_a`, after checking the point count, every
/// feature id against the shapes' sizes ([`FeatureLimits`], worked out once per pair), and that
/// every number is finite.
/// Written into `out`, the result's place (in the set or `collide`'s vector): no copy on the way.
#[inline]
fn manifold_from_gpu(
    raw: &GpuManifold,
    [a, b]: [&ShapeFeatures; 2],
    pose_a: &Pose,
    pair: usize,
    out: &mut Manifold,
) -> Result<(), GpuError> {
    let bad = |what: String| GpuError::BadResult { pair, what };
    let count = raw.count as usize;
    if !(1..=raw.ids.len()).contains(&count) {
        return Err(bad(format!("{count} contact points")));
    }
    let finite = raw.normal.iter().chain(&[raw.separation]).all(|x| x.is_finite())
        && raw.points[..count].iter().flatten().all(|x| x.is_finite());
    if !finite {
        return Err(bad("a non-finite normal, separation or point".into()));
    }
    let limits = FeatureLimits::new(a, b);
    // Built in A's frame and moved to the world as the CPU path does (`Manifold::move_to_world`),
    // so both give the same world positions.
    *out = Manifold::new(raw.normal.into(), raw.separation);
    for (point, &id) in raw.points[..count].iter().zip(&raw.ids) {
        let id = FeatureId(id);
        limits
            .check(id)
            .map_err(|what| bad(format!("feature id {:#010x}: {what}", id.0)))?;
        out.push(ContactPoint {
            position: glam::Vec3::new(point[0], point[1], point[2]).as_dvec3(),
            depth: point[3],
            id,
        });
    }
    out.move_to_world(pose_a);
    Ok(())
}

/// Most features a kind-`OTHER` id field may name on `shape` (see [`FeatureId`] and the
/// routines in [`crate::contact`]): a hull's faces or vertices, a capsule's two segment ends
/// (or clipped ends), the single feature of a sphere or half-space.
fn other_feature_limit(shape: &Shape) -> usize {
    match shape {
        Shape::Capsule(_) => 2,
        Shape::Sphere(_) | Shape::HalfSpace(_) => 1,
        _ => shape
            .as_hull()
            .map_or(1, |h| h.planes().len().max(h.vertices().len())),
    }
}

/// The counts of one shape's features that the ids of a GPU manifold may name (see
/// [`FeatureId`]), worked out once per narrowphase ([`ShapeFeatures::of`]).
#[derive(Clone, Copy, Debug)]
pub(super) struct ShapeFeatures {
    /// A triangle mesh's triangles.
    triangles: Option<usize>,
    /// A compound's parts.
    parts: Option<usize>,
    /// A hull's (boxes count) faces or vertices, vertices and edges.
    hull: Option<HullLimits>,
    /// The `OTHER` limit ([`other_feature_limit`]).
    other: usize,
}

impl ShapeFeatures {
    /// The feature counts of `shape`.
    pub fn of(shape: &Shape) -> Self {
        ShapeFeatures {
            triangles: match shape {
                Shape::TriMesh(mesh) => Some(mesh.triangles().len()),
                _ => None,
            },
            parts: shape.as_compound().map(|c| c.children().len()),
            hull: shape.as_hull().map(|h| HullLimits {
                face_or_vertex: h.planes().len().max(h.vertices().len()),
                vertices: h.vertices().len(),
                edges: h.edges().len(),
            }),
            other: other_feature_limit(shape),
        }
    }
}

/// What the feature ids of one pair's points may name (see [`FeatureId`]), from its shapes'
/// [`ShapeFeatures`] once per pair: the points of a manifold then cost a few integer compares
/// each.
enum FeatureLimits {
    /// A compound against a triangle mesh: [`crate::contact`]'s `compound_mesh_feature_id`.
    CompoundMesh { triangles: usize, children: usize },
    /// A triangle mesh against a convex body: `mesh_feature_id`.
    Mesh { triangles: usize },
    /// A compound against a body other than a mesh: `compound_feature_id`, parts per body.
    Compound { parts_a: usize, parts_b: usize },
    /// Any other pair: the (high, low) limits of each id kind (`FACE_A`, `FACE_B`,
    /// `EDGE_PAIR`, `OTHER`), those of the first three 0 unless both shapes are hulls.
    Plain { by_kind: [[usize; 2]; 4], hulls: bool },
}

/// A hull's feature counts, as the ids of [`FeatureLimits::Plain`] name them.
#[derive(Clone, Copy, Debug)]
struct HullLimits {
    face_or_vertex: usize,
    vertices: usize,
    edges: usize,
}

impl FeatureLimits {
    fn new(a: &ShapeFeatures, b: &ShapeFeatures) -> Self {
        if let Some(triangles) = a.triangles.or(b.triangles) {
            return match a.parts.or(b.parts) {
                Some(children) => FeatureLimits::CompoundMesh { triangles, children },
                None => FeatureLimits::Mesh { triangles },
            };
        }
        if a.parts.is_some() || b.parts.is_some() {
            return FeatureLimits::Compound {
                parts_a: a.parts.unwrap_or(1),
                parts_b: b.parts.unwrap_or(1),
            };
        }
        let other = [a.other, b.other];
        match (a.hull, b.hull) {
            (Some(ha), Some(hb)) => FeatureLimits::Plain {
                by_kind: [
                    [ha.face_or_vertex, hb.vertices],
                    [hb.face_or_vertex, ha.vertices],
                    [ha.edges, hb.edges],
                    other,
                ],
                hulls: true,
            },
            _ => FeatureLimits::Plain {
                by_kind: [[0, 0], [0, 0], [0, 0], other],
                hulls: false,
            },
        }
    }

    /// `Ok` when the fields of `id` exist on the pair's shapes: a face contact's high field is
    /// a face or vertex of the body it names, its low field a vertex of the other; an edge pair
    /// names an edge of each (both kinds only between hulls); an `OTHER` id names features
    /// within [`other_feature_limit`] of A (high) and B (low).
    #[inline]
    fn check(&self, id: FeatureId) -> Result<(), String> {
        let (high, low) = (id.high() as usize, id.low() as usize);
        let (high_limit, low_limit) = match self {
            &FeatureLimits::CompoundMesh { triangles, children } => {
                // The triangle mod 2^16 in bits 16 and up, the child in bits 10 to 15.
                let (triangle, child) = (id.0 >> 16, (id.0 >> 10) & 0x3f);
                if triangle as usize >= triangles || child as usize >= children {
                    return Err(format!(
                        "triangle {triangle} of {triangles}, child {child} of {children}"
                    ));
                }
                return Ok(());
            }
            &FeatureLimits::Mesh { triangles } => {
                // The triangle in bits 13 and up.
                let triangle = id.0 >> 13;
                if triangle as usize >= triangles {
                    return Err(format!("triangle {triangle} of {triangles}"));
                }
                return Ok(());
            }
            &FeatureLimits::Compound { parts_a, parts_b } => {
                // Each field's child (bits 8 and up) names a part of the body whose feature it
                // names.
                let (high_parts, low_parts) = if id.kind() == FeatureId::FACE_B {
                    (parts_b, parts_a)
                } else {
                    (parts_a, parts_b)
                };
                if high >> 8 >= high_parts || low >> 8 >= low_parts {
                    return Err(format!("children {} and {} out of range", high >> 8, low >> 8));
                }
                return Ok(());
            }
            FeatureLimits::Plain { by_kind, hulls } => {
                let kind = id.kind();
                let [high_limit, low_limit] = by_kind[kind as usize & 3];
                if high < high_limit && low < low_limit {
                    return Ok(());
                }
                if !*hulls && kind != FeatureId::OTHER {
                    return Err(format!("kind {kind} on a pair that is not hull against hull"));
                }
                (high_limit, low_limit)
            }
        };
        if high >= high_limit || low >= low_limit {
            return Err(format!(
                "fields {high} and {low} exceed the shapes' {high_limit} and {low_limit}"
            ));
        }
        Ok(())
    }
}

/// Not API (reached through [`crate::internals`] by the benchmarks): the host's finish of a
/// `collide_into` under [`super::Clipping::Gpu`], with `list` in place of the ordered manifold
/// list a GPU round copies back (one round of every pair of `batch`; entries in increasing pair
/// order, as [`gpu_list_from`] makes them). `out` is cleared first, and left empty on an error.
pub fn finish_listed_into(
    batch: &ValidatedBatch,
    list: &[GpuManifold],
    out: &mut ContactSet,
) -> Result<(), GpuError> {
    out.clear();
    let features: Vec<ShapeFeatures> = batch.shapes().iter().map(ShapeFeatures::of).collect();
    let finish = HostFinish::new(&features);
    let per_pair =
        |batch: &_, pair, raw: &_, manifold: &mut _| finish.clipped_on_gpu(batch, pair, raw, manifold);
    let round = RoundRecords {
        first: 0,
        pairs: batch.given_pairs().len(),
        records: bytemuck::cast_slice(list),
    };
    let read = read_listed_into(&StagedBatch::unstaged(batch), round, &per_pair, out);
    if read.is_err() {
        out.clear();
    }
    read
}

/// Not API (reached through [`crate::internals`]): the ordered list the clip kernel and the
/// ordering would give for `manifolds`, the CPU's results of `batch` (one per pair): an entry
/// per manifold, in pair order, in the lower body's frame for the pair in canonical order
/// (swapped back where given with its higher body first, as `StagedBatch::restore_pair_order`
/// swaps it).
pub fn gpu_list_from(batch: &ValidatedBatch, manifolds: &[Option<Manifold>]) -> Vec<GpuManifold> {
    let shape = |body: u32| &batch.shapes()[batch.given_bodies()[body as usize].shape as usize];
    let mut list = Vec::new();
    for (pair, manifold) in manifolds.iter().enumerate() {
        let Some(mut manifold) = *manifold else { continue };
        let [a, b] = batch.pair(pair);
        if batch.given_pairs()[pair] != [a, b] {
            swap_pair(&mut manifold, is_mesh_pair(shape(a), shape(b)));
        }
        let pose = batch.body(a as usize).pose;
        let mut entry = GpuManifold {
            normal: pose.inverse_transform_vector(manifold.normal).into(),
            separation: manifold.separation,
            count: manifold.point_count() as u32,
            status: MANIFOLD_CLIPPED,
            pair: pair as u32,
            ..GpuManifold::default()
        };
        for (k, point) in manifold.points().iter().enumerate() {
            let local = pose.inverse_transform_point(point.position);
            entry.points[k] = [local.x, local.y, local.z, point.depth];
            entry.ids[k] = point.id.0;
        }
        list.push(entry);
    }
    list
}

#[cfg(test)]
mod tests {
    use glam::Vec3;

    use super::*;
    use crate::manifold::FeatureId;
    use crate::narrowphase::gpu::layout::{AXIS_EDGE_PAIR, AXIS_FACE_A, AXIS_FACE_B};
    use crate::pose::Pose;

    fn unit_box() -> ConvexHull {
        ConvexHull::cuboid(Vec3::splat(0.5))
    }

    fn raw_sat(kind: u32, feature_a: u32, feature_b: u32) -> GpuSatResult {
        GpuSatResult {
            normal: [0.0, 1.0, 0.0],
            axis_separation: -0.1,
            separation: -0.1,
            kind,
            feature_a,
            feature_b,
            ..Default::default()
        }
    }

    #[test]
    fn sat_results_read_back_are_bounds_checked() {
        let b = unit_box();
        assert!(checked_sat(&raw_sat(AXIS_FACE_A, 5, 0), &b, &b, 0).is_ok());
        for (raw, what) in [
            (raw_sat(AXIS_FACE_A, 6, 0), "face of A 6 of 6"),
            (raw_sat(AXIS_FACE_B, 0, 99), "face of B 99 of 6"),
            (raw_sat(AXIS_EDGE_PAIR, 12, 0), "edge of A 12 of 12"),
            (raw_sat(AXIS_EDGE_PAIR, 0, u32::MAX), "edge of B 4294967295 of 12"),
            (raw_sat(0, 0, 0), "axis code 0 on a hull pair"),
        ] {
            let error = checked_sat(&raw, &b, &b, 7).unwrap_err();
            assert_eq!(
                error,
                GpuError::BadResult {
                    pair: 7,
                    what: what.into()
                }
            );
        }
        let mut nan = raw_sat(AXIS_FACE_A, 0, 0);
        nan.separation = f32::NAN;
        assert!(matches!(
            checked_sat(&nan, &b, &b, 0),
            Err(GpuError::BadResult { .. })
        ));
    }

    #[test]
    fn clipped_manifolds_read_back_are_bounds_checked() {
        let b = Shape::Hull(unit_box());
        let good = GpuManifold {
            normal: [0.0, 1.0, 0.0],
            separation: -0.1,
            points: [[0.0, 0.5, 0.0, 0.1]; 4],
            // FACE_A, reference face 3, incident vertex 7.
            ids: [FeatureId::new(FeatureId::FACE_A, false, 3, 7).0; 4],
            count: 1,
            status: MANIFOLD_CLIPPED,
            ..Default::default()
        };
        let mut manifold = Manifold::default();
        let features = ShapeFeatures::of(&b);
        manifold_from_gpu(&good, [&features; 2], &Pose::IDENTITY, 0, &mut manifold).expect("valid");
        assert_eq!(manifold.point_count(), 1);
        let bad_cases = [
            GpuManifold { count: 0, ..good },
            GpuManifold { count: 5, ..good },
            GpuManifold {
                ids: [FeatureId::new(FeatureId::FACE_B, false, 3, 8).0; 4],
                ..good
            },
            GpuManifold {
                ids: [FeatureId::new(FeatureId::EDGE_PAIR, false, 12, 0).0; 4],
                ..good
            },
            GpuManifold {
                ids: [FeatureId::new(FeatureId::OTHER, false, 0, 8).0; 4],
                ..good
            },
            GpuManifold {
                points: [[f32::INFINITY, 0.0, 0.0, 0.1]; 4],
                ..good
            },
        ];
        for bad in bad_cases {
            assert!(
                matches!(
                    manifold_from_gpu(&bad, [&features; 2], &Pose::IDENTITY, 3, &mut manifold),
                    Err(GpuError::BadResult { pair: 3, .. })
                ),
                "{bad:?}"
            );
        }
    }
    /// The host finish from the list the GPU would give for the CPU's manifolds (the
    /// `host_finish` bench's input) gives back the CPU's touching pairs and, within the f32
    /// round trip through A's frame, their manifolds, pairs given either way round.
    #[test]
    fn the_finish_of_the_cpus_list_gives_the_cpus_set() {
        use crate::generate::{ParticleSceneConfig, ShapeMix, generate_particle_scene_with_pairs};
        let config = ParticleSceneConfig {
            bodies: 400,
            seed: 3,
            density: 0.3,
            mix: ShapeMix::preset("mixed").expect("a preset"),
            margin: 0.01,
        };
        let scene = generate_particle_scene_with_pairs(&config).expect("a valid scene");
        // Every other pair given with its higher body first.
        let pairs: Vec<[u32; 2]> = (scene.pairs.as_ref().expect("pairs").iter().enumerate())
            .map(|(i, &[a, b])| if i % 2 == 0 { [a, b] } else { [b, a] })
            .collect();
        let batch = ValidatedBatch::new(&scene.shapes, &scene.bodies, &pairs, scene.margin).expect("valid");
        let cpu = crate::CpuNarrowphase::new(scene.shapes.clone());
        let manifolds = cpu.collide(&scene.bodies, &pairs, scene.margin).expect("valid");
        let mut set = ContactSet::new();
        finish_listed_into(&batch, &gpu_list_from(&batch, &manifolds), &mut set).expect("a good list");
        let touching: Vec<u32> = (0..pairs.len() as u32)
            .filter(|&i| manifolds[i as usize].is_some())
            .collect();
        assert!(touching.len() > 50, "{} touching pairs", touching.len());
        assert_eq!(set.pair_indices(), touching);
        for (pair, manifold) in set.iter() {
            let expected = manifolds[pair as usize].expect("touching");
            assert_eq!(manifold.point_count(), expected.point_count(), "pair {pair}");
            assert!(manifold.normal.abs_diff_eq(expected.normal, 1e-5), "pair {pair}");
            for (got, want) in manifold.points().iter().zip(expected.points()) {
                assert_eq!(got.id, want.id, "pair {pair}");
                assert!(got.position.abs_diff_eq(want.position, 1e-4), "pair {pair}");
            }
        }
    }
}

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
//! [`FinishCounts`] counts the pairs the host finished, for [`GpuTimings`].

use std::sync::atomic::{AtomicUsize, Ordering};

use super::GpuTimings;
use super::layout::{
    GpuManifold, GpuSatResult, MANIFOLD_CLIPPED, MANIFOLD_HOST, MANIFOLD_OVERFLOW, MANIFOLD_SEPARATED,
};
use super::staged::StagedBatch;
use crate::contact::{collide_shapes, manifold_from_sat};
use crate::gpu::GpuError;
use crate::hull::ConvexHull;
use crate::manifold::{ContactPoint, FeatureId, Manifold};
use crate::narrowphase::validate::{is_host_pair, is_mesh_pair};
use crate::pose::Pose;
use crate::query::sat::{SatAxis, SatResult, query_hulls};
use crate::shape::Shape;

/// Pairs the host finished itself during one call (shared by the reading threads).
#[derive(Default)]
pub(super) struct FinishCounts {
    /// Pairs the clip kernel left to the host ([`GpuTimings::host_pairs`]).
    host: AtomicUsize,
    /// Pairs the driver cut short ([`GpuTimings::incomplete_pairs`]).
    incomplete: AtomicUsize,
}

impl FinishCounts {
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

    /// [`super::Clipping::Gpu`]: the manifold of a pair from the clip kernel's record.
    pub fn clipped_on_gpu(
        &self,
        batch: &StagedBatch,
        pair: usize,
        raw: &GpuManifold,
    ) -> Result<Option<Manifold>, GpuError> {
        match raw.status {
            MANIFOLD_SEPARATED => Ok(None),
            MANIFOLD_CLIPPED => {
                let [a, b] = batch.pair(pair);
                let pose_a = batch.pose(a);
                manifold_from_gpu(raw, batch.shape(a), batch.shape(b), &pose_a, pair).map(Some)
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
                        Ok(manifold_from_sat(hull_a, &pose_a, hull_b, &pose_b, &sat, margin))
                    }
                    // Mesh and compound pairs their stage left to the host, counted as host
                    // pairs only.
                    _ if is_host_pair(batch.shape(a), batch.shape(b)) => Ok(cpu_collide(batch, pair)),
                    // Hull pairs whose SAT was cut short, and primitive pairs (the kernel
                    // leaves them only when the driver cut its loops short).
                    _ => {
                        self.incomplete.fetch_add(1, Ordering::Relaxed);
                        Ok(cpu_collide(batch, pair))
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
pub(crate) fn manifold_from_gpu(
    raw: &GpuManifold,
    a: &Shape,
    b: &Shape,
    pose_a: &Pose,
    pair: usize,
) -> Result<Manifold, GpuError> {
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
    let mut manifold = Manifold::new(raw.normal.into(), raw.separation);
    for (point, &id) in raw.points[..count].iter().zip(&raw.ids) {
        let id = FeatureId(id);
        limits
            .check(id)
            .map_err(|what| bad(format!("feature id {:#010x}: {what}", id.0)))?;
        manifold.push(ContactPoint {
            position: glam::Vec3::new(point[0], point[1], point[2]).as_dvec3(),
            depth: point[3],
            id,
        });
    }
    manifold.move_to_world(pose_a);
    Ok(manifold)
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

/// What the feature ids of one pair's points may name (see [`FeatureId`]), from its shapes
/// once per pair: the points of a manifold then cost a few integer compares each.
enum FeatureLimits {
    /// A compound against a triangle mesh: [`crate::contact`]'s `compound_mesh_feature_id`.
    CompoundMesh { triangles: usize, children: usize },
    /// A triangle mesh against a convex body: `mesh_feature_id`.
    Mesh { triangles: usize },
    /// A compound against a body other than a mesh: `compound_feature_id`, parts per body.
    Compound { parts_a: usize, parts_b: usize },
    /// Any other pair: per body, faces or vertices, vertices and edges (`None` for a shape
    /// that is not a hull), and the `OTHER` limit.
    Plain([Option<HullLimits>; 2], [usize; 2]),
}

/// A hull's feature counts, as the ids of [`FeatureLimits::Plain`] name them.
#[derive(Clone, Copy)]
struct HullLimits {
    face_or_vertex: usize,
    vertices: usize,
    edges: usize,
}

impl FeatureLimits {
    fn new(a: &Shape, b: &Shape) -> Self {
        if let (Shape::TriMesh(mesh), _) | (_, Shape::TriMesh(mesh)) = (a, b) {
            let triangles = mesh.triangles().len();
            return match (a, b) {
                (Shape::Compound(c), _) | (_, Shape::Compound(c)) => FeatureLimits::CompoundMesh {
                    triangles,
                    children: c.children().len(),
                },
                _ => FeatureLimits::Mesh { triangles },
            };
        }
        let parts = |s: &Shape| match s {
            Shape::Compound(c) => c.children().len(),
            _ => 1,
        };
        if matches!(a, Shape::Compound(_)) || matches!(b, Shape::Compound(_)) {
            return FeatureLimits::Compound {
                parts_a: parts(a),
                parts_b: parts(b),
            };
        }
        let hull = |s: &Shape| {
            s.as_hull().map(|h| HullLimits {
                face_or_vertex: h.planes().len().max(h.vertices().len()),
                vertices: h.vertices().len(),
                edges: h.edges().len(),
            })
        };
        FeatureLimits::Plain(
            [hull(a), hull(b)],
            [other_feature_limit(a), other_feature_limit(b)],
        )
    }

    /// `Ok` when the fields of `id` exist on the pair's shapes: a face contact's high field is
    /// a face or vertex of the body it names, its low field a vertex of the other; an edge pair
    /// names an edge of each (both kinds only between hulls); an `OTHER` id names features
    /// within [`other_feature_limit`] of A (high) and B (low).
    #[inline]
    fn check(&self, id: FeatureId) -> Result<(), String> {
        let (high, low) = (id.high() as usize, id.low() as usize);
        let (high_limit, low_limit) = match *self {
            FeatureLimits::CompoundMesh { triangles, children } => {
                // The triangle mod 2^16 in bits 16 and up, the child in bits 10 to 15.
                let (triangle, child) = (id.0 >> 16, (id.0 >> 10) & 0x3f);
                if triangle as usize >= triangles || child as usize >= children {
                    return Err(format!(
                        "triangle {triangle} of {triangles}, child {child} of {children}"
                    ));
                }
                return Ok(());
            }
            FeatureLimits::Mesh { triangles } => {
                // The triangle in bits 13 and up.
                let triangle = id.0 >> 13;
                if triangle as usize >= triangles {
                    return Err(format!("triangle {triangle} of {triangles}"));
                }
                return Ok(());
            }
            FeatureLimits::Compound { parts_a, parts_b } => {
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
            FeatureLimits::Plain(hulls, other) => match (id.kind(), hulls) {
                (FeatureId::FACE_A, [Some(a), Some(b)]) => (a.face_or_vertex, b.vertices),
                (FeatureId::FACE_B, [Some(a), Some(b)]) => (b.face_or_vertex, a.vertices),
                (FeatureId::EDGE_PAIR, [Some(a), Some(b)]) => (a.edges, b.edges),
                (FeatureId::OTHER, _) => (other[0], other[1]),
                (kind, _) => return Err(format!("kind {kind} on a pair that is not hull against hull")),
            },
        };
        if high >= high_limit || low >= low_limit {
            return Err(format!(
                "fields {high} and {low} exceed the shapes' {high_limit} and {low_limit}"
            ));
        }
        Ok(())
    }
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
        let manifold = manifold_from_gpu(&good, &b, &b, &Pose::IDENTITY, 0).expect("valid");
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
                    manifold_from_gpu(&bad, &b, &b, &Pose::IDENTITY, 3),
                    Err(GpuError::BadResult { pair: 3, .. })
                ),
                "{bad:?}"
            );
        }
    }
}

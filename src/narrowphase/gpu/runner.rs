//! The host side of a batch call, behind [`super::GpuNarrowphase`]: the device state one
//! narrowphase keeps ([`SatRunner`]), and how its rounds' read-back records become results (SAT
//! results checked against the hulls, clipped manifolds, the CPU path for what the GPU left).
//! The rounds themselves (staging, submission, read-back) are in the `rounds` module.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use super::buffers::GrowBuffer;
use super::clip::manifold_from_gpu;
use super::context::GpuContext;
use super::layout::{GpuManifold, GpuSatResult, MANIFOLD_CLIPPED, MANIFOLD_HOST, MANIFOLD_SEPARATED};
use super::sat::{SatBuffers, SatGeometry};
use super::staged::{BatchInput, StagedBatch};
use super::{Clipping, GpuError, GpuTimings};
use crate::contact::{collide_shapes, manifold_from_sat};
use crate::hull::ConvexHull;
use crate::manifold::Manifold;
use crate::pose::Pose;
use crate::query::sat::{SatAxis, SatResult, query_hulls};
use crate::shape::Shape;

/// The device side of one narrowphase: its hulls on the GPU, its buffers, the context.
pub(super) struct SatRunner {
    pub(super) context: Arc<GpuContext>,
    pub(super) geometry: SatGeometry,
    pub(super) buffers: SatBuffers,
    /// Two readback buffers: a pipelined batch reads one round while the next is mapped.
    pub(super) readback: [GrowBuffer; 2],
    /// Listed (not separated) pairs per pair of the last round read back: sizes the prefix of
    /// the next manifold list copied with its count (see the `rounds` module; 1 at first).
    pub(super) listed_share: f64,
}

impl SatRunner {
    /// The GPU SAT of every pair of a batch over `shapes` (`None` for non-hull pairs).
    pub(super) fn sat(
        &mut self,
        shapes: &[Shape],
        input: BatchInput,
    ) -> Result<(Vec<Option<SatResult>>, GpuTimings), GpuError> {
        let incomplete = AtomicUsize::new(0);
        let (results, timings, _) = self.run(shapes, input, |batch, pair, raw: &GpuSatResult| {
            let [(hull_a, pose_a), (hull_b, pose_b)] = match hull_pair(batch, pair) {
                Some(hulls) => hulls,
                None => return Ok(None),
            };
            if raw.is_incomplete() {
                incomplete.fetch_add(1, Ordering::Relaxed);
                let b_in_a = pose_a.relative_to_self(&pose_b);
                return Ok(Some(query_hulls(hull_a, hull_b, &b_in_a, batch.margin())));
            }
            checked_sat(raw, hull_a, hull_b, pair).map(Some)
        })?;
        // No clipping here: reading the results counts as readback.
        let timings = GpuTimings {
            dispatch_readback: timings.dispatch_readback + timings.cpu_clipping,
            cpu_clipping: Duration::ZERO,
            incomplete_pairs: incomplete.into_inner(),
            ..timings
        };
        Ok((results, timings))
    }

    /// Manifolds for a batch over `shapes`, clipped where `clipping` says, in the given pair
    /// order.
    pub(super) fn collide(
        &mut self,
        shapes: &[Shape],
        input: BatchInput,
        clipping: Clipping,
    ) -> Result<(Vec<Option<Manifold>>, GpuTimings), GpuError> {
        let (mut results, timings, batch) = match clipping {
            Clipping::Gpu => self.collide_gpu_clip(shapes, input),
            Clipping::Cpu => self.collide_cpu_clip(shapes, input),
        }?;
        batch.restore_order(&mut results);
        Ok((results, timings))
    }

    /// GPU SAT and GPU clipping; the host moves clipped manifolds to world space, clips the hull
    /// pairs the kernel left to it from the GPU's SAT ([`manifold_from_sat`]) and runs the CPU
    /// path ([`collide_shapes`]) for the others.
    #[allow(clippy::type_complexity)]
    fn collide_gpu_clip<'a>(
        &mut self,
        shapes: &'a [Shape],
        input: BatchInput<'a>,
    ) -> Result<(Vec<Option<Manifold>>, GpuTimings, StagedBatch<'a>), GpuError> {
        let host = AtomicUsize::new(0);
        let incomplete = AtomicUsize::new(0);
        let (results, timings, batch) =
            self.run(shapes, input, |batch, pair, raw: &GpuManifold| match raw.status {
                MANIFOLD_SEPARATED => Ok(None),
                MANIFOLD_CLIPPED => {
                    let [a, b] = batch.pair(pair);
                    let pose_a = batch.pose(a);
                    manifold_from_gpu(raw, batch.shape(a), batch.shape(b), &pose_a, pair).map(Some)
                }
                MANIFOLD_HOST => {
                    host.fetch_add(1, Ordering::Relaxed);
                    let sat = raw.host_sat();
                    match hull_pair(batch, pair) {
                        // The GPU's SAT is complete: clip on the CPU from it (GJK where apart).
                        Some([(hull_a, pose_a), (hull_b, pose_b)]) if !sat.is_incomplete() => {
                            let sat = checked_sat(&sat, hull_a, hull_b, pair)?;
                            let margin = batch.margin();
                            Ok(manifold_from_sat(hull_a, &pose_a, hull_b, &pose_b, &sat, margin))
                        }
                        // Hull pairs whose SAT was cut short, and primitive pairs (the kernel
                        // leaves them only when the driver cut its loops short).
                        _ => {
                            incomplete.fetch_add(1, Ordering::Relaxed);
                            Ok(cpu_collide(batch, pair))
                        }
                    }
                }
                status => Err(GpuError::BadResult {
                    pair,
                    what: format!("manifold status {status}"),
                }),
            })?;
        let timings = GpuTimings {
            host_pairs: host.into_inner(),
            incomplete_pairs: incomplete.into_inner(),
            ..timings
        };
        Ok((results, timings, batch))
    }

    /// GPU SAT, then CPU clipping (hull pairs) or the CPU path (other pairs).
    #[allow(clippy::type_complexity)]
    fn collide_cpu_clip<'a>(
        &mut self,
        shapes: &'a [Shape],
        input: BatchInput<'a>,
    ) -> Result<(Vec<Option<Manifold>>, GpuTimings, StagedBatch<'a>), GpuError> {
        let incomplete = AtomicUsize::new(0);
        let (results, timings, batch) = self.run(shapes, input, |batch, pair, raw: &GpuSatResult| {
            match hull_pair(batch, pair) {
                Some([(hull_a, pose_a), (hull_b, pose_b)]) => {
                    let margin = batch.margin();
                    let sat = if raw.is_incomplete() {
                        incomplete.fetch_add(1, Ordering::Relaxed);
                        query_hulls(hull_a, hull_b, &pose_a.relative_to_self(&pose_b), margin)
                    } else {
                        checked_sat(raw, hull_a, hull_b, pair)?
                    };
                    Ok(manifold_from_sat(hull_a, &pose_a, hull_b, &pose_b, &sat, margin))
                }
                None => Ok(cpu_collide(batch, pair)),
            }
        })?;
        let timings = GpuTimings {
            incomplete_pairs: incomplete.into_inner(),
            ..timings
        };
        Ok((results, timings, batch))
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

#[cfg(test)]
mod tests {
    use glam::Vec3;

    use super::*;
    use crate::gpu::layout::{AXIS_EDGE_PAIR, AXIS_FACE_A, AXIS_FACE_B};
    use crate::manifold::FeatureId;
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

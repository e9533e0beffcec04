//! `ConvexHull::from_points`: quickhull over a point cloud.
//!
//! TEMPORARY compile stub on branch wip-particles only: the real quickhull is written on
//! wip-hull; on merge, take that branch's version of this file and drop this stub.

use glam::Vec3;

use super::{ConvexHull, HullError};

impl ConvexHull {
    /// The convex hull of `points` (stub: not implemented on this branch).
    pub fn from_points(_points: &[Vec3]) -> Result<ConvexHull, HullError> {
        unimplemented!("ConvexHull::from_points lands with the wip-hull branch")
    }
}

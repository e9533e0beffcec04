//! `ConvexHull::from_points`: quickhull over a point cloud.

// TEMPORARY compile stub (wip-cli only): lets the scene parser compile until wip-hull's
// quickhull is merged. On merge, take wip-hull's version of this file.
impl super::ConvexHull {
    /// Placeholder.
    pub fn from_points(points: &[glam::Vec3]) -> Result<Self, super::HullError> {
        let _ = points;
        todo!("from_points is written on wip-hull")
    }
}

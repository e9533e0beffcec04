//! `ConvexHull::from_points`: quickhull over a point cloud.

// TEMPORARY (wip-cli only, removed before hand-off): lets the scene parser compile until the
// quickhull from wip-hull is merged.
impl super::ConvexHull {
    /// Placeholder.
    pub fn from_points(points: &[glam::Vec3]) -> Result<Self, super::HullError> {
        let _ = points;
        todo!("from_points is written on wip-hull")
    }
}

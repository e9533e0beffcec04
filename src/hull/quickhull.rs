//! `ConvexHull::from_points`: quickhull over a point cloud.

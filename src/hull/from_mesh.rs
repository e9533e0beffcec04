//! `ConvexHull::from_mesh`: accept a given polygon mesh after checking it.

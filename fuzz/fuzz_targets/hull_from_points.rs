//! Arbitrary bytes as a point cloud for quickhull: see `hull_from_points` in
//! `../entry_points.rs`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| hullsat_fuzz::hull_from_points(data));

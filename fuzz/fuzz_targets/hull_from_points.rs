//! Arbitrary bytes as a point cloud for quickhull: see `hull_from_points` in
//! `../entry_points.rs`.
#![no_main]

#[path = "../entry_points.rs"]
mod entry_points;

libfuzzer_sys::fuzz_target!(|data: &[u8]| entry_points::hull_from_points(data));

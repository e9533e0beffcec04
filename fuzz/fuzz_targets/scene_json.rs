//! Arbitrary bytes as a JSON scene: see `scene_json` in `../entry_points.rs`.
#![no_main]

#[path = "../entry_points.rs"]
mod entry_points;

libfuzzer_sys::fuzz_target!(|data: &[u8]| entry_points::scene_json(data));

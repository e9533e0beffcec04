//! Arbitrary bytes as a JSON scene: see `scene_json` in `../entry_points.rs`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| hullsat_fuzz::scene_json(data));

//! The fuzz targets' entry points (`fuzz/entry_points.rs`) on stable Rust, in CI: seeded random
//! mutations of valid scenes and point clouds, a fixed number of each, so a run takes a few
//! seconds and a failure reproduces. `cargo +nightly fuzz run scene_json` (see README.md,
//! "Fuzzing") searches the same entry points for far longer, guided by coverage.
//!
//! Set `HULLSAT_FUZZ_ITERATIONS` to run more inputs per target (the default is 4,000).

#[path = "../fuzz/entry_points.rs"]
mod entry_points;

use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64;

/// The files of `fuzz/seeds/NAME`, sorted by name: the starting inputs of the fuzz target
/// `NAME`. The scene seeds together use every shape kind, listed and broadphase pairs, margins,
/// rotations, and numbers near the limits of f32.
fn seeds(name: &str) -> Vec<Vec<u8>> {
    let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/seeds")
        .join(name);
    let mut files: Vec<_> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no seeds in {}", folder.display());
    files.iter().map(|file| std::fs::read(file).unwrap()).collect()
}

/// Text that mutations insert or substitute: JSON syntax, the format's keys, and numbers at
/// the edges (f32 overflow, subnormals, negative zero, non-unit quaternion parts).
const TOKENS: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "\"",
    "\\",
    "\\u0000",
    "\\n",
    "\u{1b}[2J",
    "null",
    "true",
    "-0",
    "0",
    "1",
    "-1",
    "0.5",
    "1e39",
    "-1e39",
    "3e38",
    "1e-45",
    "1e-300",
    "1e999",
    "65536",
    "4294967296",
    "0.999",
    "\"shapes\"",
    "\"bodies\"",
    "\"pairs\"",
    "\"margin\"",
    "\"hull\"",
    "\"points\"",
    "\"box\"",
    "\"half_extents\"",
    "\"sphere\"",
    "\"radius\"",
    "\"capsule\"",
    "\"half_height\"",
    "\"half_space\"",
    "\"normal\"",
    "\"offset\"",
    "\"shape\"",
    "\"position\"",
    "\"rotation\"",
    "[0, 0, 0]",
    "[0, 0, 0, 1]",
    "[[0, 1]]",
];

/// One to four random edits of `input`: a byte replaced, a token inserted or substituted for a
/// number, a range deleted or duplicated, or a splice with another seed.
fn mutate(rng: &mut Pcg64, input: &[u8], seeds: &[Vec<u8>]) -> Vec<u8> {
    let mut data = input.to_vec();
    for _ in 0..rng.random_range(1..=4) {
        let at = rng.random_range(0..=data.len());
        match rng.random_range(0..6) {
            0 if at < data.len() => {
                // Mostly printable ASCII, sometimes any byte (invalid UTF-8 included).
                data[at] = if rng.random_range(0..4) == 0 {
                    rng.random_range(0..=255u8)
                } else {
                    rng.random_range(b' '..=b'~')
                };
            }
            1 => {
                let token = TOKENS[rng.random_range(0..TOKENS.len())].as_bytes();
                data.splice(at..at, token.iter().copied());
            }
            2 => {
                // Replace the number (run of number characters) at or after `at` by a token.
                let is_number = |b: &u8| b.is_ascii_digit() || b"+-.eE".contains(b);
                if let Some(start) = data[at..].iter().position(is_number).map(|p| at + p) {
                    let end = data[start..]
                        .iter()
                        .position(|b| !is_number(b))
                        .map_or(data.len(), |p| start + p);
                    let token = TOKENS[rng.random_range(0..TOKENS.len())].as_bytes();
                    data.splice(start..end, token.iter().copied());
                }
            }
            3 => {
                let end = (at + rng.random_range(1..=16)).min(data.len());
                data.drain(at..end);
            }
            4 => {
                let end = (at + rng.random_range(1..=64)).min(data.len());
                let copy = data[at..end].to_vec();
                let to = rng.random_range(0..=data.len());
                data.splice(to..to, copy);
            }
            _ => {
                let other = &seeds[rng.random_range(0..seeds.len())];
                let cut = rng.random_range(0..=other.len());
                data.truncate(at);
                data.extend_from_slice(&other[cut..]);
            }
        }
    }
    data
}

/// `input` with one to three of its numbers replaced by random ones: small integers (indices),
/// plain values, or any magnitude from 1e-40 to 1e39, either sign. The syntax stays valid, so
/// most of these scenes get through the reader to the narrowphase or to a value check.
fn mutate_numbers(rng: &mut Pcg64, input: &[u8]) -> Vec<u8> {
    let is_number = |b: u8| b.is_ascii_digit() || b"+-.eE".contains(&b);
    let mut spans = Vec::new();
    let mut i = 0;
    while i < input.len() {
        if input[i].is_ascii_digit() || input[i] == b'-' {
            let start = i;
            while i < input.len() && is_number(input[i]) {
                i += 1;
            }
            spans.push(start..i);
        } else {
            i += 1;
        }
    }
    let mut chosen: Vec<_> = (0..rng.random_range(1..=3))
        .map(|_| spans[rng.random_range(0..spans.len())].clone())
        .collect();
    chosen.sort_by_key(|span| std::cmp::Reverse(span.start));
    chosen.dedup();
    let mut data = input.to_vec();
    for span in chosen {
        let number = match rng.random_range(0..3) {
            0 => rng.random_range(0..6u32).to_string(),
            1 => rng.random_range(-2.0..=2.0f32).to_string(),
            _ => {
                let magnitude = 10f64.powf(rng.random_range(-40.0..=39.0));
                format!(
                    "{:e}",
                    if rng.random_range(0..2) == 0 {
                        magnitude
                    } else {
                        -magnitude
                    }
                )
            }
        };
        data.splice(span, number.bytes());
    }
    data
}

fn iterations() -> usize {
    std::env::var("HULLSAT_FUZZ_ITERATIONS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(4000)
}

#[test]
fn scene_reader_on_mutated_scenes() {
    let seeds = seeds("scene_json");
    for seed in &seeds {
        entry_points::scene_json(seed);
    }
    let mut rng = Pcg64::seed_from_u64(0xf022_5ce7);
    let mut accepted = 0;
    for i in 0..iterations() {
        let base = &seeds[i % seeds.len()];
        let input = if i % 2 == 0 {
            mutate(&mut rng, base, &seeds)
        } else {
            mutate_numbers(&mut rng, base)
        };
        // Report the input that broke a promise, so it can be added to the seeds.
        let outcome = std::panic::catch_unwind(|| entry_points::scene_json(&input));
        if let Err(panic) = outcome {
            panic!(
                "input {i}: {:?}\n{}",
                panic
                    .downcast_ref::<String>()
                    .map(String::as_str)
                    .or(panic.downcast_ref::<&str>().copied()),
                String::from_utf8_lossy(&input)
            );
        }
        accepted += usize::from(
            std::str::from_utf8(&input).is_ok_and(|t| hullsat::scene::json::parse_scene_json(t).is_ok()),
        );
    }
    // Mutations that keep a scene valid reach the narrowphase; most others test the errors.
    assert!(
        accepted * 20 > iterations(),
        "only {accepted} accepted scenes: the test would be weak"
    );
}

/// Point clouds in `entry_points::hull_from_points`'s byte format: the seeds, mutated, and
/// random ones at every scale.
#[test]
fn hull_builder_on_random_and_mutated_clouds() {
    let seeds = seeds("hull_from_points");
    for seed in &seeds {
        entry_points::hull_from_points(seed);
    }
    let mut rng = Pcg64::seed_from_u64(0x4a11_f022);
    for i in 0..iterations() / 4 {
        let input = if i % 2 == 0 {
            let mut data = seeds[i / 2 % seeds.len()].clone();
            for _ in 0..rng.random_range(1..=8) {
                let at = rng.random_range(0..data.len());
                data[at] = rng.random_range(0..=255u8);
            }
            data
        } else {
            // Small lattices make duplicate, collinear and coplanar subsets likely.
            let extent = rng.random_range(1..=127i8);
            let count = rng.random_range(0..=80);
            let mut data = vec![rng.random_range(0..=255u8), 0];
            for _ in 0..3 * count {
                data.push(rng.random_range(-extent..=extent) as u8);
            }
            data
        };
        let outcome = std::panic::catch_unwind(|| entry_points::hull_from_points(&input));
        if let Err(panic) = outcome {
            panic!(
                "input {i}: {:?}\n{input:?}",
                panic
                    .downcast_ref::<String>()
                    .map(String::as_str)
                    .or(panic.downcast_ref::<&str>().copied())
            );
        }
    }
}

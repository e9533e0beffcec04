//! The fuzzed entry points, shared by the cargo-fuzz targets (`fuzz/fuzz_targets/*.rs`, nightly)
//! and the stable loop test (`tests/fuzz_inputs.rs`, run in CI). Each takes arbitrary bytes and
//! panics only when hullsat breaks a promise:
//!
//! - [`scene_json`]: reading never panics; a refusal is one line without control characters;
//!   an accepted scene writes back to text that reads back to the same scene, and running it
//!   on the CPU (broadphase pairs capped) either writes valid JSON or names a non-finite pair.
//! - [`hull_from_points`]: building never panics; an accepted hull is a closed convex
//!   polyhedron within the documented limits holding every input point.

use glam::Vec3;
use hullsat::broadphase::candidate_pairs_at_most;
use hullsat::constants::HULL_PLANE_TOLERANCE;
use hullsat::hull::{MAX_FACE_VERTICES, MAX_HULL_VERTICES};
use hullsat::scene::json::{WriteResultsError, parse_scene_json, write_results_json, write_scene_json};
use hullsat::{ConvexHull, CpuNarrowphase, Shape};

/// Most pairs a fuzzed scene is run on (broadphase limit, and the longest listed pair list run).
const MAX_FUZZ_PAIRS: usize = 1000;

/// Reads `data` as a JSON scene and checks the reader's, writer's and CPU path's promises.
pub fn scene_json(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let scene = match parse_scene_json(text) {
        Ok(scene) => scene,
        Err(err) => {
            let message = err.to_string();
            assert!(!message.chars().any(char::is_control), "{message:?}");
            return;
        }
    };

    // Written back and read again: the same scene (hulls rebuilt from their vertices keep them;
    // reading renormalizes half-space normals and rotations, which may move their last bit).
    let again = parse_scene_json(&write_scene_json(&scene))
        .unwrap_or_else(|err| panic!("a written scene reads back: {err}"));
    assert_eq!(again.bodies.len(), scene.bodies.len());
    assert_eq!(again.pairs, scene.pairs);
    assert_eq!(again.margin, scene.margin);
    for (a, b) in again.shapes.iter().zip(&scene.shapes) {
        match (a, b) {
            (Shape::Hull(a), Shape::Hull(b)) => assert_eq!(a.vertices().len(), b.vertices().len()),
            (Shape::HalfSpace(a), Shape::HalfSpace(b)) => {
                assert!(a.normal.abs_diff_eq(b.normal, 1e-6), "{a:?} {b:?}");
                assert_eq!(a.offset, b.offset);
            }
            _ => assert_eq!(a, b),
        }
    }
    for (a, b) in again.bodies.iter().zip(&scene.bodies) {
        assert_eq!(a.shape, b.shape);
        assert_eq!(a.pose.translation, b.pose.translation);
    }

    // Run on the CPU: results are finite JSON, or a refusal naming a pair.
    let pairs = match &scene.pairs {
        Some(pairs) if pairs.len() <= MAX_FUZZ_PAIRS => pairs.clone(),
        Some(_) => return,
        None => match candidate_pairs_at_most(&scene.shapes, &scene.bodies, scene.margin, MAX_FUZZ_PAIRS) {
            Ok(pairs) => pairs,
            Err(err) => {
                assert_eq!(err.limit, MAX_FUZZ_PAIRS);
                assert!(err.bound > MAX_FUZZ_PAIRS, "{err}");
                return;
            }
        },
    };
    let results = CpuNarrowphase::new(scene.shapes.clone())
        .collide(&scene.bodies, &pairs, scene.margin)
        .unwrap_or_else(|err| panic!("a read scene is valid input: {err}"));
    let mut out = Vec::new();
    match write_results_json(&mut out, &pairs, &results) {
        Ok(()) => {
            let text = std::str::from_utf8(&out).expect("results are UTF-8");
            serde_json_check(text);
        }
        Err(WriteResultsError::NonFinite { index, .. }) => {
            assert!(out.is_empty(), "nothing written before the refusal");
            assert!(index < pairs.len());
        }
        Err(WriteResultsError::Io(err)) => panic!("writing to memory failed: {err}"),
    }
}

/// The results text is one JSON object whose every number is finite.
fn serde_json_check(text: &str) {
    let value: serde_json::Value =
        serde_json::from_str(text).unwrap_or_else(|err| panic!("results are JSON: {err}: {text}"));
    assert!(value["manifolds"].is_array(), "{text}");
}

/// Builds a hull from points decoded from `data` (format below) and checks it.
///
/// Byte 0 picks a power-of-two scale `2^(b0 mod 121 - 60)`; byte 1's low bit picks the coordinate
/// format: 0 for `i8` lattice coordinates (3 bytes per point: duplicates, collinear and coplanar
/// sets are common), 1 for `i16` coordinates over 256 (6 bytes per point). The rest are points.
pub fn hull_from_points(data: &[u8]) {
    let [scale_byte, format, rest @ ..] = data else {
        return;
    };
    let scale = 2f32.powi(i32::from(*scale_byte) % 121 - 60);
    let points: Vec<Vec3> = if format & 1 == 0 {
        rest.chunks_exact(3)
            .map(|c| Vec3::new(c[0] as i8 as f32, c[1] as i8 as f32, c[2] as i8 as f32) * scale)
            .collect()
    } else {
        rest.chunks_exact(6)
            .map(|c| {
                let coordinate = |i: usize| f32::from(i16::from_le_bytes([c[i], c[i + 1]])) / 256.0;
                Vec3::new(coordinate(0), coordinate(2), coordinate(4)) * scale
            })
            .collect()
    };
    let Ok(hull) = ConvexHull::from_points(&points) else {
        return;
    };
    check_hull(&hull, &points);
}

/// A hull built from `points` is a closed convex polyhedron (Euler's formula, unit outward
/// planes, faces of 3 to `MAX_FACE_VERTICES` vertices on their planes), within the vertex limit,
/// with every input point on or behind every face plane (the documented tolerance: twice the
/// plane tolerance times the bounding-box diagonal, plus f32 rounding).
fn check_hull(hull: &ConvexHull, points: &[Vec3]) {
    let (v, e, f) = (hull.vertices().len(), hull.edges().len(), hull.faces().len());
    assert!((4..=MAX_HULL_VERTICES).contains(&v), "{v} vertices");
    assert_eq!(v as i64 - e as i64 + f as i64, 2, "Euler: V={v} E={e} F={f}");
    let (lo, hi) = points
        .iter()
        .fold((Vec3::MAX, Vec3::MIN), |(lo, hi), &p| (lo.min(p), hi.max(p)));
    let magnitude = lo.abs().max(hi.abs()).max_element();
    let tolerance = 2.0 * HULL_PLANE_TOLERANCE as f32 * (hi - lo).length() + 1e-6 * magnitude;
    for (face, plane) in hull.planes().iter().enumerate() {
        assert!(
            (plane.normal.length() - 1.0).abs() < 1e-5,
            "face {face}: {plane:?}"
        );
        let face_loop = hull.face_loop(face);
        assert!((3..=MAX_FACE_VERTICES).contains(&face_loop.len()), "face {face}");
        for &i in face_loop {
            let d = plane.signed_distance(hull.vertices()[i as usize]);
            assert!(
                d.abs() <= tolerance,
                "face {face}: its vertex {i} is {d} off its plane"
            );
        }
        for p in points {
            let d = plane.signed_distance(*p);
            assert!(
                d <= tolerance,
                "face {face}: input point {p} is {d} in front (tolerance {tolerance})"
            );
        }
    }
}

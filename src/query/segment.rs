//! Closest points between line segments (edge-edge contacts, capsules).
//!
//! WGSL twin: `closest_points_segments` in `shaders/narrowphase/clip.wgsl`.

use glam::Vec3;

/// Closest points between segments `p0→p1` and `q0→q1`, any common frame.
///
/// Returns `(s, t)`, the parameters in `[0, 1]` of the closest points `p0 + s (p1 - p0)` and
/// `q0 + t (q1 - q0)`. Degenerate (zero-length) segments act as points; for parallel segments
/// the pair nearest the middle of their overlap is returned, so the result is stable.
///
/// Scale-free: the three difference vectors are divided by the largest of their lengths first,
/// so the squared lengths and their products neither overflow nor underflow f32 at any size,
/// and "zero length" means shorter than `f32::EPSILON` × the configuration's size.
pub fn closest_points_segments(p0: Vec3, p1: Vec3, q0: Vec3, q1: Vec3) -> (f32, f32) {
    let (d1, d2, r) = (p1 - p0, q1 - q0, p0 - q0);
    let size = d1
        .abs()
        .max_element()
        .max(d2.abs().max_element())
        .max(r.abs().max_element());
    if size == 0.0 {
        return (0.0, 0.0);
    }
    let (d1, d2, r) = (d1 / size, d2 / size, r / size);
    let a = d1.length_squared();
    let e = d2.length_squared();
    let f = d2.dot(r);
    let tiny = f32::EPSILON * f32::EPSILON;
    if a <= tiny && e <= tiny {
        return (0.0, 0.0);
    }
    if a <= tiny {
        return (0.0, (f / e).clamp(0.0, 1.0));
    }
    let c = d1.dot(r);
    if e <= tiny {
        return ((-c / a).clamp(0.0, 1.0), 0.0);
    }
    let b = d1.dot(d2);
    let denom = a * e - b * b;
    // Relative test: sin² of the angle between the segments below ~1e-6 counts as parallel.
    if denom <= 1.0e-6 * a * e {
        // Parallel: project q's end points onto p, take the middle of the overlap on p.
        let s0 = (-c / a).clamp(0.0, 1.0);
        let s1 = ((b - c) / a).clamp(0.0, 1.0);
        let s = 0.5 * (s0 + s1);
        let t = ((b * s + f) / e).clamp(0.0, 1.0);
        let s = ((b * t - c) / a).clamp(0.0, 1.0);
        return (s, t);
    }
    let mut s = ((b * f - c * e) / denom).clamp(0.0, 1.0);
    let t = (b * s + f) / e;
    let t = if t < 0.0 {
        s = (-c / a).clamp(0.0, 1.0);
        0.0
    } else if t > 1.0 {
        s = ((b - c) / a).clamp(0.0, 1.0);
        1.0
    } else {
        t
    };
    (s, t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crossing_segments_meet_at_their_crossing() {
        let (s, t) = closest_points_segments(
            Vec3::new(-1.0, 0.0, 0.0),
            Vec3::new(1.0, 0.0, 0.0),
            Vec3::new(0.5, -1.0, 1.0),
            Vec3::new(0.5, 1.0, 1.0),
        );
        assert!((s - 0.75).abs() < 1e-6 && (t - 0.5).abs() < 1e-6, "{s} {t}");
    }

    #[test]
    fn parallel_overlapping_segments_pick_the_middle_of_the_overlap() {
        // p spans x in [0, 2], q spans x in [1, 3] one unit above: overlap x in [1, 2].
        let (s, t) = closest_points_segments(
            Vec3::ZERO,
            Vec3::new(2.0, 0.0, 0.0),
            Vec3::new(1.0, 1.0, 0.0),
            Vec3::new(3.0, 1.0, 0.0),
        );
        let p = 2.0 * s;
        let q = 1.0 + 2.0 * t;
        assert!((p - q).abs() < 1e-6 && (1.0..=2.0).contains(&p), "{p} {q}");
    }

    #[test]
    fn results_do_not_depend_on_the_scale() {
        let (p0, p1) = (Vec3::new(-1.0, 0.2, 0.0), Vec3::new(1.0, -0.1, 0.3));
        let (q0, q1) = (Vec3::new(0.5, -1.0, 1.0), Vec3::new(0.4, 1.0, 1.1));
        let unit = closest_points_segments(p0, p1, q0, q1);
        for scale in [1.0e-12, 1.0e-6, 1.0e6, 1.0e12, 1.0e18] {
            let (s, t) = closest_points_segments(p0 * scale, p1 * scale, q0 * scale, q1 * scale);
            assert!(
                (s - unit.0).abs() < 1e-5 && (t - unit.1).abs() < 1e-5,
                "scale {scale}: {s} {t} vs {unit:?}"
            );
        }
        // Tiny but not degenerate segments are segments, not points.
        let (s, _) = closest_points_segments(
            Vec3::ZERO,
            Vec3::X * 1e-12,
            Vec3::new(0.5e-12, 1e-12, 0.0),
            Vec3::new(0.5e-12, 2e-12, 0.0),
        );
        assert!((s - 0.5).abs() < 1e-5, "{s}");
    }

    #[test]
    fn end_points_clamp() {
        let (s, t) = closest_points_segments(
            Vec3::ZERO,
            Vec3::X,
            Vec3::new(2.0, 1.0, 0.0),
            Vec3::new(3.0, 1.0, 0.0),
        );
        assert_eq!((s, t), (1.0, 0.0));
    }
}

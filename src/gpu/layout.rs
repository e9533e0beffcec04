//! The encodings every kernel shares: quaternions (`shaders/common/quat.wgsl`) and world
//! translations split into two f32 parts.

use glam::DVec3;

/// The quaternion helpers of every kernel (`quat.wgsl`: `quat_rotate`, `quat_mul`,
/// `quat_conjugate`, unit quaternions as `vec4<f32>` xyzw, glam's formulas), for a caller's
/// shader that places points with a body's rotation.
pub const QUAT_WGSL: &str = include_str!("../../shaders/common/quat.wgsl");

/// Splits a world translation into `(hi, lo)`: `hi` = f32(x), `lo` = f32(x - f64(hi)), per
/// axis. `hi + lo` carries about 48 bits of `x`; the difference of two bodies' `hi` parts is
/// exact in f32 whenever they are within a factor of 2 of each other (Sterbenz), so a kernel's
/// relative translation `(b_hi - a_hi) + (b_lo - a_lo)` keeps the precision of the f64
/// difference.
#[inline]
pub fn split_translation(translation: DVec3) -> ([f32; 3], [f32; 3]) {
    let (hi, lo) = crate::pose::split_f64(translation);
    (hi.to_array(), lo.to_array())
}

#[cfg(test)]
mod tests {
    use glam::DVec3;

    use super::split_translation;

    #[test]
    fn split_translation_keeps_the_f64_difference_of_far_bodies() {
        // Two bodies 1e6 from the origin, 0.1234567 apart: f32 alone resolves 0.0625 there.
        let a = DVec3::new(1.0e6 + 0.3, -2.5e6 + 0.7, 3.0e6);
        let b = a + DVec3::new(0.123_456_7, -0.000_123_4, 1.0e-5);
        let ((a_hi, a_lo), (b_hi, b_lo)) = (split_translation(a), split_translation(b));
        for axis in 0..3 {
            let joined = f64::from(a_hi[axis]) + f64::from(a_lo[axis]);
            assert!((joined - a[axis]).abs() <= 1e-9 * a[axis].abs(), "axis {axis}");
            // The kernel's formula, in f32.
            let relative = (b_hi[axis] - a_hi[axis]) + (b_lo[axis] - a_lo[axis]);
            let exact = b[axis] - a[axis];
            assert!(
                (f64::from(relative) - exact).abs() <= 1e-7 * exact.abs().max(1.0),
                "axis {axis}: {relative} vs {exact}"
            );
        }
    }
}

//! The encodings every kernel shares: quaternions (`shaders/common/quat.wgsl`), world
//! translations split into two f32 parts, and the uniform layout of the small parameter structs
//! written once per call (encase; bulk arrays are `bytemuck::Pod`, see each feature's layout).

use bytemuck::{Pod, Zeroable};
use encase::internal::WriteInto;
use encase::{ShaderType, UniformBuffer};
use glam::{DVec3, Vec3};

use super::GpuError;
use crate::pose::Pose;
use crate::scene::Body;

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

/// A body's world pose and shape, the one body layout of every kernel (narrowphase, BVH build,
/// broadphase, rays, motion), so one buffer serves them all; must match `GpuBody` in
/// shaders/common/body.wgsl. A caller that keeps its bodies on the GPU writes this layout itself
/// (see the resident APIs). The world translation is split into two f32 parts (`hi + lo`, see
/// [`split_translation`]) so the kernel can form B's position relative to A's from bodies far
/// from the origin without losing the f64 precision:
/// `(b.translation_hi - a.translation_hi) + (b.translation_lo - a.translation_lo)`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuBody {
    /// Unit rotation quaternion, `[x, y, z, w]`.
    pub rotation: [f32; 4],
    /// World translation rounded to f32, length units.
    pub translation_hi: [f32; 3],
    /// Index of the body's shape in the shape list ([`Body::shape`]).
    pub shape: u32,
    /// What `translation_hi` lost: world translation minus `translation_hi`, rounded to f32.
    pub translation_lo: [f32; 3],
    /// Padding to a 16-byte multiple.
    pub _pad: u32,
}

impl GpuBody {
    /// The kernel's form of `body` (rotation normalized by validation). The one place a body's
    /// pose becomes GPU data.
    #[inline]
    pub fn from_body(body: &Body) -> GpuBody {
        let (translation_hi, translation_lo) = split_translation(body.pose.translation);
        GpuBody {
            rotation: body.pose.rotation.to_array(),
            translation_hi,
            shape: body.shape,
            translation_lo,
            _pad: 0,
        }
    }

    /// The GPU form of a body of shape `shape` at `pose` (its rotation as given: unit).
    #[inline]
    pub fn from_pose(shape: u32, pose: &Pose) -> GpuBody {
        GpuBody::from_body(&Body { shape, pose: *pose })
    }

    /// `other`'s world translation minus this body's, in f32 length units, the split parts
    /// subtracted part by part as the kernels do (`body_offset` in shaders/common/geometry.wgsl).
    #[inline]
    pub fn offset_to(&self, other: &GpuBody) -> Vec3 {
        let [hi, lo] = [
            (self.translation_hi, other.translation_hi),
            (self.translation_lo, other.translation_lo),
        ]
        .map(|(a, b)| Vec3::from_array(b) - Vec3::from_array(a));
        hi + lo
    }
}

const _: () = assert!(size_of::<GpuBody>() == 48);

/// A WGSL `vec3<f32>` field of a parameter struct written with encase (12 bytes, aligned to 16).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct WgslVec3(pub [f32; 3]);

impl AsRef<[f32; 3]> for WgslVec3 {
    fn as_ref(&self) -> &[f32; 3] {
        &self.0
    }
}

impl AsMut<[f32; 3]> for WgslVec3 {
    fn as_mut(&mut self) -> &mut [f32; 3] {
        &mut self.0
    }
}

impl From<[f32; 3]> for WgslVec3 {
    fn from(parts: [f32; 3]) -> Self {
        WgslVec3(parts)
    }
}

encase::impl_vector!(3, WgslVec3, f32; using AsRef AsMut From);

/// Writes `value` at the start of `out` as a WGSL uniform holds it (encase: offsets, alignment
/// and padding from the struct's fields, as naga lays out its WGSL twin).
pub(crate) fn write_uniform<T: ShaderType + WriteInto>(value: &T, out: &mut [u8]) -> Result<(), GpuError> {
    UniformBuffer::new(out)
        .write(value)
        .map_err(|e| GpuError::Wgpu(format!("encoding a uniform: {e}")))
}

/// The bytes of `value` as a WGSL uniform holds it ([`write_uniform`]).
pub(crate) fn uniform_bytes<T: ShaderType + WriteInto>(value: &T) -> Result<Vec<u8>, GpuError> {
    let mut bytes = vec![0; T::min_size().get() as usize];
    write_uniform(value, &mut bytes)?;
    Ok(bytes)
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

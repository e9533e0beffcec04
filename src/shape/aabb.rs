//! World axis-aligned bounding boxes of posed shapes, tight and rounded outward to f32.

use glam::{DMat3, DVec3, Mat3, Quat, Vec3, Vec4};

use super::Shape;
use crate::constants::{COMPOUND_AABB_PADDING, TRIMESH_AABB_PADDING};
use crate::hull::ConvexHull;
use crate::pose::Pose;

/// An axis-aligned box in world space, length units. `min <= max` on every axis for bounded
/// shapes; a half-space's box is the whole space (`-inf..inf`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Aabb {
    /// Lower corner.
    pub min: Vec3,
    /// Upper corner.
    pub max: Vec3,
}

impl Aabb {
    /// True when the gap between the two boxes along every axis is at most `margin` (length
    /// units, >= 0): the boxes overlap once each is grown by `margin / 2` on every side. A gap
    /// larger than `margin` on one axis proves the shapes are farther apart than `margin`.
    #[inline]
    pub fn overlaps(&self, other: &Aabb, margin: f32) -> bool {
        // Same form as the sweep's reach test (`min <= max + margin`), so rounding agrees.
        self.min.cmple(other.max + margin).all() && other.min.cmple(self.max + margin).all()
    }
}

impl Aabb {
    /// The smallest f32 box that contains the f64 box `min..max` (each bound rounded outward).
    pub fn enclosing(min: DVec3, max: DVec3) -> Aabb {
        // Rounded to nearest, then one step out where that went in; both candidates are formed
        // and one kept, so the (unpredictable) comparison costs no branch.
        let down = |x: f64| {
            let r = x as f32;
            let stepped = f32::from_bits(step_bits(r, -1));
            if f64::from(r) > x { stepped } else { r }
        };
        let up = |x: f64| {
            let r = x as f32;
            let stepped = f32::from_bits(step_bits(r, 1));
            if f64::from(r) < x { stepped } else { r }
        };
        Aabb {
            min: Vec3::new(down(min.x), down(min.y), down(min.z)),
            max: Vec3::new(up(max.x), up(max.y), up(max.z)),
        }
    }
}

/// The lowest and highest coordinates of `hull`'s vertices rotated by `rotation`, each vertex
/// rotated as glam's `Quat * Vec3` rotates it (the same bits): four vertices a step on x86-64,
/// where glam's formula is `v (w² - |b|²) + b (2 v·b) + (b × v)(2 w)` (`b` the vector part,
/// dot products summed x, y then z, no fused multiply-add); one at a time elsewhere.
fn rotated_extremes(hull: &ConvexHull, rotation: Quat) -> (Vec3, Vec3) {
    #[cfg(all(target_arch = "x86_64", not(target_feature = "fma")))]
    {
        let [bx, by, bz, w] = rotation.to_array();
        let b2 = (bx * bx + by * by) + bz * bz;
        let (scale, w2, two) = (Vec4::splat(w * w - b2), Vec4::splat(w * 2.0), Vec4::splat(2.0));
        let (bx, by, bz) = (Vec4::splat(bx), Vec4::splat(by), Vec4::splat(bz));
        let mut min = [Vec4::INFINITY; 3];
        let mut max = [Vec4::NEG_INFINITY; 3];
        // Lane i of each entry is one vertex (the last entry repeats its last vertex).
        for &[x, y, z] in hull.vertex_lanes() {
            let d = ((x * bx + y * by) + z * bz) * two;
            let cross = [by * z - bz * y, bz * x - bx * z, bx * y - by * x];
            let rotated = [
                (x * scale + bx * d) + cross[0] * w2,
                (y * scale + by * d) + cross[1] * w2,
                (z * scale + bz * d) + cross[2] * w2,
            ];
            for axis in 0..3 {
                min[axis] = min[axis].min(rotated[axis]);
                max[axis] = max[axis].max(rotated[axis]);
            }
        }
        (
            min.map(Vec4::min_element).into(),
            max.map(Vec4::max_element).into(),
        )
    }
    #[cfg(not(all(target_arch = "x86_64", not(target_feature = "fma"))))]
    {
        let mut min = Vec3::INFINITY;
        let mut max = Vec3::NEG_INFINITY;
        for &v in hull.vertices() {
            let p = rotation * v;
            min = min.min(p);
            max = max.max(p);
        }
        (min, max)
    }
}

/// The bits of the f32 next to `r` toward +inf (`toward` 1) or -inf (-1), as
/// [`f32::next_up`] and [`f32::next_down`] give them for every `r` but NaN and the infinity in
/// that direction (where the result is not meaningful), without their branches.
#[inline]
fn step_bits(r: f32, toward: i32) -> u32 {
    let bits = r.to_bits();
    if r == 0.0 {
        // The smallest subnormal of that sign.
        if toward > 0 { 1 } else { 0x8000_0001 }
    } else if (bits >> 31 == 0) == (toward > 0) {
        // Away from zero: the magnitude grows.
        bits.wrapping_add(1)
    } else {
        bits.wrapping_sub(1)
    }
}

/// World AABB of `shape` placed at `pose`. Tight for hulls (every vertex transformed), boxes
/// (rotated half extents), spheres and capsules (the world core segment grown by the radius),
/// cylinders (the true cylinder: its axis and cap circles), computed in f64 and rounded outward
/// to f32. A triangle mesh's is its local box ([`crate::TriMesh::bounds`]) rotated, grown by
/// [`TRIMESH_AABB_PADDING`] × its reach for the f32 rotation the narrowphase applies: it
/// contains the mesh, exact for an unrotated one up to that padding (boxing every vertex would
/// cost a pass over the mesh per call). A compound's is the union of its children's, each at
/// its world pose (the body's pose times the child's) and grown by [`COMPOUND_AABB_PADDING`] ×
/// the child's reach from the body's origin, for the f32 pose products the narrowphase forms
/// (in another order). A half-space is unbounded: its box is `-inf..inf` on
/// every axis.
pub fn world_aabb(shape: &Shape, pose: &Pose) -> Aabb {
    let around =
        |centre: DVec3, half: Vec3| Aabb::enclosing(centre - half.as_dvec3(), centre + half.as_dvec3());
    match shape {
        Shape::Hull(hull) => {
            // The extremes of the rotated vertices (f32, as `Pose::transform_point` rotates),
            // then the f64 translation once: rounded addition is monotonic, so this is the box
            // of the transformed points exactly.
            let (min, max) = rotated_extremes(hull, pose.rotation);
            Aabb::enclosing(
                min.as_dvec3() + pose.translation,
                max.as_dvec3() + pose.translation,
            )
        }
        Shape::Cuboid(cuboid) => {
            // Half extent along world axis i is sum_j |R_ij| h_j.
            let abs_rotation = Mat3::from_quat(pose.rotation).abs();
            around(pose.translation, abs_rotation * cuboid.half_extents())
        }
        Shape::Sphere(sphere) => around(pose.translation, Vec3::splat(sphere.radius)),
        Shape::Capsule(capsule) => {
            let axis = pose.transform_vector(Vec3::new(0.0, capsule.half_height, 0.0));
            around(pose.translation, axis.abs() + capsule.radius)
        }
        Shape::Cylinder(cylinder) => {
            let half = cylinder.rotated_half_extents(pose.rotation);
            Aabb::enclosing(pose.translation - half, pose.translation + half)
        }
        Shape::TriMesh(mesh) => {
            // Half extent along world axis i is sum_j |R_ij| h_j, in f64.
            let (min, max) = mesh.bounds();
            let (centre, half) = ((min + max).as_dvec3() * 0.5, (max - min).as_dvec3() * 0.5);
            let rotation = DMat3::from_quat(pose.rotation.as_dquat());
            let reach = centre.length() + half.length();
            let half = rotation.abs() * half + reach * f64::from(TRIMESH_AABB_PADDING);
            let centre = pose.translation + rotation * centre;
            Aabb::enclosing(centre - half, centre + half)
        }
        Shape::Compound(compound) => {
            let (mut min, mut max) = (DVec3::INFINITY, DVec3::NEG_INFINITY);
            for child in compound.children() {
                let b = world_aabb(&child.shape, &pose.mul_isometry(&child.pose));
                let reach = child.pose.translation.length() + child.shape.bounding_radius();
                let grow = f64::from(reach) * f64::from(COMPOUND_AABB_PADDING);
                min = min.min(b.min.as_dvec3() - grow);
                max = max.max(b.max.as_dvec3() + grow);
            }
            Aabb::enclosing(min, max)
        }
        Shape::HalfSpace(_) => Aabb {
            min: Vec3::NEG_INFINITY,
            max: Vec3::INFINITY,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rng::unit_floats;

    /// Four vertices a step give the extremes of each vertex rotated by `Quat * Vec3`, bit for
    /// bit, on random hulls and rotations (a zero's sign aside: either is the same bound).
    #[test]
    fn rotated_extremes_are_those_of_each_rotated_vertex() {
        let mut random = unit_floats(33);
        let mut signed = move || 2.0 * random() - 1.0;
        for k in 0..2000 {
            let count = 4 + k % 40;
            let scale = 10f32.powf(signed() * 3.0);
            let points: Vec<Vec3> = (0..count)
                .map(|_| Vec3::new(signed(), signed(), signed()) * scale)
                .collect();
            let Ok(hull) = ConvexHull::from_points(&points) else {
                continue;
            };
            let rotation = if k % 7 == 0 {
                Quat::IDENTITY
            } else {
                Quat::from_xyzw(signed(), signed(), signed(), signed()).normalize()
            };
            let (mut min, mut max) = (Vec3::INFINITY, Vec3::NEG_INFINITY);
            for &v in hull.vertices() {
                let p = rotation * v;
                (min, max) = (min.min(p), max.max(p));
            }
            let (fast_min, fast_max) = rotated_extremes(&hull, rotation);
            for (fast, slow) in [(fast_min, min), (fast_max, max)] {
                for axis in 0..3 {
                    assert!(
                        fast[axis].to_bits() == slow[axis].to_bits()
                            || (fast[axis] == 0.0 && slow[axis] == 0.0),
                        "hull {k}, axis {axis}: {} against {}",
                        fast[axis],
                        slow[axis]
                    );
                }
            }
        }
    }

    /// One step out from each rounding is `next_up`/`next_down`'s, bit for bit, on values of
    /// every magnitude and sign, on zeros, subnormals, the largest finite values and halfway
    /// cases.
    #[test]
    fn enclosing_rounds_outward_as_next_up_and_next_down() {
        let reference = |x: f64| {
            let r = x as f32;
            let down = if f64::from(r) > x { r.next_down() } else { r };
            let up = if f64::from(r) < x { r.next_up() } else { r };
            (down, up)
        };
        let mut random = unit_floats(21);
        let mut values: Vec<f64> = vec![
            0.0,
            -0.0,
            1.0,
            -1.0,
            f64::from(f32::MIN_POSITIVE),
            f64::from(f32::from_bits(1)),
            -f64::from(f32::from_bits(1)),
            1.0e-46,
            -1.0e-46,
            f64::from(f32::MAX),
            -f64::from(f32::MAX),
            f64::from(f32::MAX) * 1.5,
            -f64::from(f32::MAX) * 1.5,
            1.0 + f64::from(f32::EPSILON) / 2.0,
            -1.0 - f64::from(f32::EPSILON) / 2.0,
        ];
        for _ in 0..100_000 {
            let magnitude = 10f64.powf(f64::from(random()) * 90.0 - 45.0);
            let sign = if random() < 0.5 { -1.0 } else { 1.0 };
            values.push(sign * magnitude * (1.0 + f64::from(random())));
        }
        for x in values {
            let b = Aabb::enclosing(DVec3::splat(x), DVec3::splat(x));
            let (down, up) = reference(x);
            assert_eq!(b.min.x.to_bits(), down.to_bits(), "down({x:e})");
            assert_eq!(b.max.x.to_bits(), up.to_bits(), "up({x:e})");
        }
    }
}

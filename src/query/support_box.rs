//! The support map of a posed box for GJK ([`closest_points`](crate::query::gjk::closest_points)):
//! [`PosedHull`](crate::query::gjk::PosedHull)'s support on the box's hull bit for bit, without
//! the loop over the hull's vertex array.
//!
//! 1. The direction into the box's frame, as `PosedHull` does.
//! 2. The vertex of largest `v · d` (vertices `±h`, [`ConvexHull::cuboid`]'s numbering: bit `k`
//!    set = positive coordinate `k`), each dot product summed as `Vec3::dot` sums it, from the
//!    three products `h_k d_k`; of equal ones the lowest index, as the hull's scan keeps the
//!    first maximum. Rounding can make vertices tie although `d_k != 0`, so the sign of `d_k`
//!    alone would not give the same vertex.
//! 3. That vertex into the query frame, as `PosedHull` does.
//!
//! [`ConvexHull::cuboid`]: crate::hull::ConvexHull::cuboid

use glam::{Vec3, Vec4};

use crate::pose::Isometry;
use crate::query::gjk::SupportMap;

/// A box of half extents `half_extents` (length units) placed by `pose` (its local frame to the
/// query frame).
#[derive(Clone, Copy, Debug)]
pub struct PosedBox {
    /// Half extents, local frame, length units.
    pub half_extents: Vec3,
    /// Maps the box's local frame to the query frame.
    pub pose: Isometry,
}

/// Support in the pose's parent frame.
impl SupportMap for PosedBox {
    #[inline]
    fn support(&self, direction: Vec3) -> Vec3 {
        // 1. Local direction.
        let d = self.pose.inverse_transform_vector(direction);
        // 2. Vertex `i` has dot `(±p.x + ±p.y) + ±p.z`, `+` where bit k of `i` is set: vertices
        // 0-3 and 4-7 in two groups of four lanes (negation is exact), the first of the largest.
        let p = self.half_extents * d;
        let xy = Vec4::new(-p.x, p.x, -p.x, p.x) + Vec4::new(-p.y, -p.y, p.y, p.y);
        let (low, high) = (xy + Vec4::splat(-p.z), xy + Vec4::splat(p.z));
        let largest = Vec4::splat(low.max(high).max_element());
        let at_largest = low.cmpeq(largest).bitmask() | high.cmpeq(largest).bitmask() << 4;
        let best = at_largest.trailing_zeros();
        let h = self.half_extents;
        let corner = |k: usize| if best >> k & 1 == 1 { h[k] } else { -h[k] };
        // 3. Into the query frame.
        self.pose
            .transform_point(Vec3::new(corner(0), corner(1), corner(2)))
    }
}

#[cfg(test)]
mod tests {
    use glam::Quat;

    use super::*;
    use crate::hull::ConvexHull;
    use crate::query::gjk::PosedHull;
    use crate::test_rng::unit_floats;

    #[test]
    fn box_support_matches_the_hull_support_bit_for_bit() {
        let mut next = unit_floats(0x9e37_79b9_u32);
        for i in 0..20_000 {
            let h = Vec3::new(0.01 + next(), 0.01 + next(), 0.01 + next()) * [1.0, 1e-3, 1e3][i % 3];
            let hull = ConvexHull::cuboid(h);
            let axis = Vec3::new(next() - 0.5, next() - 0.5, next() - 0.5).normalize_or(Vec3::Z);
            let pose = Isometry::new(
                Vec3::new(next(), next(), next()) * 4.0 - 2.0,
                if i % 5 == 0 {
                    Quat::IDENTITY
                } else {
                    Quat::from_axis_angle(axis, 7.0 * next())
                },
            );
            // Directions with zero, tiny and ordinary components: ties within rounding.
            let component = |x: f32, kind: u32| match kind {
                0 => 0.0,
                1 => (x - 0.5) * 1e-9,
                _ => x - 0.5,
            };
            let d = Vec3::new(
                component(next(), i as u32 % 3),
                component(next(), (i as u32 / 3) % 3),
                component(next(), (i as u32 / 9) % 3),
            );
            let posed_box = PosedBox {
                half_extents: h,
                pose,
            };
            let posed_hull = PosedHull { hull: &hull, pose };
            let (fast, slow) = (posed_box.support(d), posed_hull.support(d));
            assert_eq!(
                fast.to_array().map(f32::to_bits),
                slow.to_array().map(f32::to_bits),
                "{i}: {d}"
            );
        }
    }
}

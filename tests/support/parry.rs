//! hullsat shapes and poses as parry3d 0.31 ones (parry uses glam 0.33: converted by value), for
//! the differential test and the benchmarks. Hulls become `ConvexPolyhedron`s from their own
//! faces (fan-triangulated), so both libraries see the same polyhedron.

use hullsat::{Pose, Shape};
use parry3d::math::{Pose as PPose, Rot3, Vector as PVector};
use parry3d::shape::{Ball, Capsule, ConvexPolyhedron, Cuboid, Cylinder, SharedShape};

/// The parry shape of `shape` (a cylinder as parry's exact one, not its prism); `None` for a
/// half-space, a triangle mesh or a compound (those tests build parry's `TriMesh` and
/// `Compound` themselves), or a hull parry refuses.
pub fn to_parry_shape(shape: &Shape) -> Option<SharedShape> {
    match shape {
        Shape::Cuboid(c) => {
            let h = c.half_extents();
            Some(SharedShape::new(Cuboid::new(PVector::new(h.x, h.y, h.z))))
        }
        Shape::Hull(hull) => {
            let points = hull
                .vertices()
                .iter()
                .map(|v| PVector::new(v.x, v.y, v.z))
                .collect();
            let mut triangles = Vec::new();
            for f in 0..hull.faces().len() {
                let face = hull.face_loop(f);
                for i in 1..face.len() - 1 {
                    triangles.push([face[0], face[i], face[i + 1]]);
                }
            }
            ConvexPolyhedron::from_convex_mesh(points, &triangles).map(SharedShape::new)
        }
        Shape::Sphere(s) => Some(SharedShape::new(Ball::new(s.radius))),
        Shape::Capsule(c) => Some(SharedShape::new(Capsule::new_y(c.half_height, c.radius))),
        Shape::Cylinder(c) => Some(SharedShape::new(Cylinder::new(c.half_height(), c.radius()))),
        Shape::HalfSpace(_) | Shape::TriMesh(_) | Shape::Compound(_) => None,
    }
}

/// The parry pose of `pose`.
pub fn to_parry_pose(pose: &Pose) -> PPose {
    let (t, q) = (pose.translation.as_vec3(), pose.rotation);
    PPose::from_parts(PVector::new(t.x, t.y, t.z), Rot3::from_xyzw(q.x, q.y, q.z, q.w))
}

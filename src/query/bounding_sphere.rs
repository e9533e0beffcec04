//! World bounding spheres of bodies: a ball that contains the body, for cheap tests before an
//! exact query (is it past a wall, inside a trigger, on screen). The ball is the shape's
//! [`Shape::bounding_sphere`] (local frame) moved by the body's pose; the radius does not change.

use glam::DVec3;

use crate::scene::Body;
use crate::shape::Shape;

/// A ball in world space.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BoundingSphere {
    /// Centre, world space, length units (f64, like body positions).
    pub centre: DVec3,
    /// Radius, length units; `f32::INFINITY` for a half-space.
    pub radius: f32,
}

impl BoundingSphere {
    /// How far the ball lies in front of the plane `dot(normal, x) = offset` (world; `normal`
    /// unit, pointing to the front), length units: the centre's signed distance minus the
    /// radius. Negative when some of the ball reaches the plane or behind it (the body may
    /// touch a wall there); positive proves the body lies wholly in front.
    pub fn gap_to_plane(&self, normal: DVec3, offset: f64) -> f64 {
        normal.dot(self.centre) - offset - f64::from(self.radius)
    }
}

/// The world ball containing `body` (its shape `shapes[body.shape]` at its pose), or `None`
/// when the shape index is out of range. Tight for boxes, spheres, capsules and cylinders; about
/// the centroid for hulls; for a compound, a ball holding its children's balls
/// ([`crate::shape::compound::Compound::bounding_sphere`]); up to f32 rounding of the radius (a few
/// parts in 1e7).
pub fn world_bounding_sphere(shapes: &[Shape], body: &Body) -> Option<BoundingSphere> {
    let (centre, radius) = shapes.get(body.shape as usize)?.bounding_sphere();
    Some(BoundingSphere {
        centre: body.pose.transform_point(centre),
        radius,
    })
}

#[cfg(test)]
mod tests {
    use glam::{Quat, Vec3};

    use super::*;
    use crate::pose::Pose;
    use crate::shape::{Capsule, Cuboid, Cylinder, HalfSpace, Sphere};
    use crate::test_rng::unit_floats;
    use crate::{ConvexHull, Shape};

    /// Points on the true surface of `shape` (local frame) where it reaches farthest: vertices,
    /// cap rims, sphere and capsule extremes along `directions`.
    fn surface_points(shape: &Shape, directions: &[Vec3]) -> Vec<Vec3> {
        match shape {
            Shape::Hull(h) => h.vertices().to_vec(),
            Shape::Cuboid(c) => c.hull().vertices().to_vec(),
            Shape::Cylinder(c) => (0..360)
                .flat_map(|k| {
                    let (sin, cos) = (k as f32).to_radians().sin_cos();
                    [-1.0, 1.0].map(|y| Vec3::new(c.radius() * cos, y * c.half_height(), c.radius() * sin))
                })
                .collect(),
            Shape::Sphere(s) => directions.iter().map(|&d| d * s.radius).collect(),
            Shape::Capsule(c) => directions
                .iter()
                .map(|&d| Vec3::Y * c.half_height * d.y.signum() + d * c.radius)
                .collect(),
            Shape::HalfSpace(_) => Vec::new(),
            Shape::TriMesh(m) => m
                .triangles()
                .iter()
                .flatten()
                .map(|&i| m.vertices()[i as usize])
                .collect(),
            Shape::Compound(c) => c
                .children()
                .iter()
                .flat_map(|child| {
                    let points = surface_points(&child.shape, directions);
                    points.into_iter().map(|p| child.pose.transform_point(p))
                })
                .collect(),
        }
    }

    #[test]
    fn world_spheres_contain_every_surface_point_and_are_tight() {
        let mut next = unit_floats(0x005e_edb5);
        let mut random = |scale: f32| (next() * 2.0 - 1.0) * scale;
        let directions: Vec<Vec3> = (0..500)
            .filter_map(|_| Vec3::new(random(1.0), random(1.0), random(1.0)).try_normalize())
            .collect();
        let off_centre: Vec<Vec3> = (0..30)
            .map(|_| Vec3::new(random(1.0) + 3.0, random(0.5), random(2.0)))
            .collect();
        let shapes = [
            Shape::Cylinder(Cylinder::new(0.7, 0.2).unwrap()),
            Shape::Cylinder(Cylinder::new(0.05, 1.5).unwrap()),
            Shape::Cuboid(Cuboid::new(Vec3::new(0.5, 1.0, 0.1)).unwrap()),
            Shape::Sphere(Sphere::new(0.3).unwrap()),
            Shape::Capsule(Capsule::new(0.6, 0.25).unwrap()),
            Shape::Hull(ConvexHull::from_points(&off_centre).unwrap()),
            Shape::from(
                crate::trimesh::TriMesh::new(off_centre.clone(), vec![[0, 1, 2], [3, 4, 5], [6, 7, 8]])
                    .unwrap(),
            ),
            Shape::from(
                crate::shape::compound::Compound::new(vec![
                    crate::shape::compound::CompoundChild {
                        shape: Shape::Capsule(Capsule::new(0.6, 0.25).unwrap()),
                        pose: crate::pose::Isometry::new(
                            Vec3::new(2.0, -1.0, 0.5),
                            Quat::from_rotation_x(0.8),
                        ),
                    },
                    crate::shape::compound::CompoundChild {
                        shape: Shape::Hull(ConvexHull::from_points(&off_centre).unwrap()),
                        pose: crate::pose::Isometry::new(
                            Vec3::new(-1.0, 0.0, 0.0),
                            Quat::from_rotation_y(2.0),
                        ),
                    },
                ])
                .unwrap(),
            ),
        ];
        for (index, shape) in shapes.iter().enumerate() {
            for _ in 0..20 {
                let rotation =
                    Quat::from_xyzw(random(1.0), random(1.0), random(1.0), random(1.0)).normalize();
                let translation =
                    DVec3::new(1e6, -2.0, 3e5) + Vec3::new(random(9.0), random(9.0), random(9.0)).as_dvec3();
                let body = Body {
                    shape: index as u32,
                    pose: Pose::new(translation, rotation),
                };
                let sphere = world_bounding_sphere(&shapes, &body).unwrap();
                let farthest = surface_points(shape, &directions)
                    .into_iter()
                    .map(|p| body.pose.transform_point(p).distance(sphere.centre))
                    .fold(0.0, f64::max);
                let radius = f64::from(sphere.radius);
                assert!(
                    farthest <= radius * (1.0 + 1e-6),
                    "{shape:?}: {farthest} > {radius}"
                );
                if !matches!(shape, Shape::Hull(_) | Shape::TriMesh(_) | Shape::Compound(_)) {
                    assert!(
                        farthest >= radius * (1.0 - 1e-3),
                        "{shape:?}: {farthest} << {radius}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_wall_test_and_out_of_range_bodies() {
        let shapes = [
            Shape::Cylinder(Cylinder::new(0.4, 0.3).unwrap()),
            Shape::HalfSpace(HalfSpace::new(Vec3::Y, 0.0).unwrap()),
        ];
        let at = |shape: u32, x: f64| Body {
            shape,
            pose: Pose::new(DVec3::new(x, 1.0, 0.0), Quat::IDENTITY),
        };
        // A wall x <= 2 seen from its front (normal -X through x = 2): 0.5 = |(0.4, 0.3)| reach.
        let wall = |x: f64| {
            world_bounding_sphere(&shapes, &at(0, x))
                .unwrap()
                .gap_to_plane(-DVec3::X, -2.0)
        };
        assert!((wall(1.0) - 0.5).abs() < 1e-6);
        assert!(wall(1.6) < 0.0);
        let ground = world_bounding_sphere(&shapes, &at(1, 0.0)).unwrap();
        assert_eq!(ground.radius, f32::INFINITY);
        assert!(world_bounding_sphere(&shapes, &at(2, 0.0)).is_none());
    }
}

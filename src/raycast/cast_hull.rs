//! Ray against a convex hull:
//!
//! 1. A ray that passes farther from the hull's centroid than its padded bounding sphere
//!    ([`bounding_sphere`]) misses: most rays that reach a hull's BVH leaf pass it by, and this
//!    costs a few products where the clip costs one per face.
//! 2. Clip the ray against every face plane ([`Clip`]).
//!
//! Mirrored in `raycast.wgsl` (`cast_hull`, `sphere_missed`).

use glam::Vec4;

use super::clip::Clip;
use super::ray::{LocalHit, LocalRay};
use crate::hull::ConvexHull;

/// Growth of the bounding sphere and of the step 1 test (dimensionless): the sphere's radius
/// grows by this times its radius plus its centre's distance from the origin (the face planes'
/// f32 rounding may put the clipped polytope a few ulps outside the vertices), and a ray is
/// judged to pass it by only beyond this times its distance to the centre and the closest
/// point's distance along it (the f32 rounding of that distance). Larger only tests more rays
/// exactly; smaller risks dropping a grazing hit. Must match `SPHERE_TEST_SLACK` in
/// raycast.wgsl.
pub const SPHERE_TEST_SLACK: f32 = 1.0e-5;

/// The sphere of step 1, hull frame: centre xyz (the centroid), padded radius w.
pub fn bounding_sphere(hull: &ConvexHull) -> Vec4 {
    let centre = hull.centroid();
    let radius = hull.radius() + SPHERE_TEST_SLACK * (hull.radius() + centre.length());
    centre.extend(radius)
}

/// Step 1: whether `ray` (hull frame) passes `sphere` ([`bounding_sphere`]) by.
fn sphere_missed(sphere: Vec4, ray: &LocalRay) -> bool {
    let to_centre = sphere.truncate() - ray.origin;
    let along = to_centre.dot(ray.direction).clamp(0.0, ray.max_distance);
    let gap = (ray.direction * along - to_centre).length();
    gap > sphere.w + SPHERE_TEST_SLACK * (to_centre.length() + along)
}

/// Where `ray` (hull frame) enters `hull`, or `None` when it misses within its max distance.
pub fn cast_hull(hull: &ConvexHull, ray: &LocalRay) -> Option<LocalHit> {
    // 1.
    if sphere_missed(bounding_sphere(hull), ray) {
        return None;
    }
    // 2.
    let mut clip = Clip::new(ray);
    for plane in hull.planes() {
        if !clip.plane(ray, plane.normal, plane.offset) {
            return None;
        }
    }
    Some(clip.hit(ray))
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;

    /// Step 1 never drops a hit: rays grazing a long thin hull's far corner, from near and far.
    #[test]
    fn the_sphere_test_keeps_every_hit_the_clip_finds() {
        let hull = ConvexHull::cuboid(Vec3::new(4.0, 0.01, 0.01));
        let corner = Vec3::new(4.0, 0.01, 0.01);
        for distance in [0.5_f32, 10.0, 1.0e4] {
            for tilt in [0.0_f32, 1.0e-3, 0.3] {
                let direction = Vec3::new(-tilt, -1.0, -0.4).normalize();
                let ray = LocalRay {
                    origin: corner - direction * distance,
                    direction,
                    max_distance: f32::MAX,
                };
                let mut clip = Clip::new(&ray);
                let clipped = hull.planes().iter().all(|p| clip.plane(&ray, p.normal, p.offset));
                assert_eq!(cast_hull(&hull, &ray).is_some(), clipped, "{distance} {tilt}");
            }
        }
        let away = LocalRay {
            origin: Vec3::new(0.0, 5.0, 0.0),
            direction: Vec3::X,
            max_distance: f32::MAX,
        };
        assert!(sphere_missed(bounding_sphere(&hull), &away));
    }
}

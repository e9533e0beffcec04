//! Sphere against hull, in the hull's local frame (B's).
//!
//! 1. Move the sphere's centre into B's frame. The largest signed face-plane distance of the
//!    centre is a lower bound on its distance to the hull: beyond `radius + margin`, no contact.
//! 2. Centre outside the hull: GJK (point against hull) gives the exact closest point; the
//!    normal runs from the centre to it and the separation is `distance − radius`.
//! 3. Centre inside (or so close to the surface that GJK reports an overlap): the face with the
//!    largest plane distance gives the normal (minus its outward normal) and the separation
//!    (`plane distance − radius`).
//! 4. One point midway between the sphere's surface and the hull's along the normal.
//!
//! Feature id: kind `OTHER`, high 0; flag 0 and low 0 when the closest point came from GJK
//! (step 2), flag 1 and low = the face index when from a face (step 3).
//! WGSL twin: `shaders/narrowphase/primitives.wgsl`.

use glam::Vec3;

use crate::hull::ConvexHull;
use crate::manifold::{ContactPoint, FeatureId, Manifold};
use crate::pose::{Isometry, Pose};
use crate::query::gjk::{PosedHull, closest_points};
use crate::shape::Sphere;

/// The manifold between sphere (body A) and hull (body B) at world poses, or `None` beyond `margin`.
pub fn collide_sphere_hull(
    sphere: &Sphere,
    pose_a: &Pose,
    hull: &ConvexHull,
    pose_b: &Pose,
    margin: f32,
) -> Option<Manifold> {
    let centre = pose_b.relative_to_self(pose_a).translation;
    let (face, plane_distance) = hull
        .planes()
        .iter()
        .map(|plane| plane.signed_distance(centre))
        .enumerate()
        .fold(
            (0, f32::NEG_INFINITY),
            |best, (i, d)| if d > best.1 { (i, d) } else { best },
        );
    if plane_distance - sphere.radius > margin {
        return None;
    }
    let outside = if plane_distance > 0.0 {
        closest_points(
            &centre,
            &PosedHull {
                hull,
                pose: Isometry::IDENTITY,
            },
        )
    } else {
        None
    };
    // Normal (B's frame, from A toward B), separation, hull surface point and feature id.
    let (normal, separation, on_hull, id) = match outside {
        Some(closest) => (
            closest.direction,
            closest.distance - sphere.radius,
            closest.point_b,
            FeatureId::new(FeatureId::OTHER, false, 0, 0),
        ),
        None => {
            let face_normal = hull.planes()[face].normal;
            (
                -face_normal,
                plane_distance - sphere.radius,
                centre - face_normal * plane_distance,
                FeatureId::new(FeatureId::OTHER, true, 0, face as u32),
            )
        }
    };
    if separation > margin {
        return None;
    }
    let on_sphere: Vec3 = centre + normal * sphere.radius;
    let mut manifold = Manifold::new(pose_b.transform_vector(normal), separation);
    manifold.push(ContactPoint {
        position: pose_b.transform_point(0.5 * (on_sphere + on_hull)),
        depth: -separation,
        id,
    });
    Some(manifold)
}

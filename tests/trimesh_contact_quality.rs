//! Contact quality against triangle meshes (issue 23: no ghost contacts, stable manifolds): a
//! capsule lying along a seam of a flat floor, a tilted capsule's clipped points, and the
//! placement of edge-pair points.

mod support;

use glam::{Quat, Vec3};
use hullsat::contact::{TriMeshScratch, collide_trimesh_shape};
use hullsat::trimesh::TriMesh;
use hullsat::{Capsule, Manifold, Pose, Shape};
use support::worlds::grid_floor;

fn collide(mesh: &TriMesh, shape: &Shape, pose: &Pose, margin: f32) -> Option<Manifold> {
    collide_trimesh_shape(
        mesh,
        &Pose::IDENTITY,
        shape,
        pose,
        margin,
        &mut TriMeshScratch::default(),
    )
}

/// A capsule of `half_height` and `radius` lying along the unit `direction` (in the floor)
/// with its core at height `y` over `at`.
fn lying_capsule(direction: Vec3, at: Vec3, y: f32) -> Pose {
    Pose::new(at + Vec3::Y * y, Quat::from_rotation_arc(Vec3::Y, direction))
}

/// Panics unless `m` is a floor contact (normal +y, separation `gap`) with a point under each end
/// of the core segment `ends`, midway between the capsule and the floor, depth `-gap`.
fn assert_two_ends(m: &Manifold, ends: [Vec3; 2], gap: f32, what: &str) {
    assert!(
        m.normal.angle_between(Vec3::Y).to_degrees() < 0.5,
        "{what}: {m:?}"
    );
    assert!((m.separation - gap).abs() < 1e-5, "{what}: {m:?}");
    for end in ends {
        let under = Vec3::new(end.x, 0.5 * gap, end.z);
        assert!(
            m.points()
                .iter()
                .any(|p| p.position.as_vec3().distance(under) < 1e-4 && (p.depth + gap).abs() < 1e-5),
            "{what}: no point under the end {end}: {m:?}"
        );
    }
}

/// A capsule lying on a flat tessellated floor gets its two end points wherever it lies: along a
/// seam (a grid line or a cell's diagonal), nudged off it by less or more than rounding, at a
/// small angle to it, touching and apart within the margin.
#[test]
fn capsule_lying_along_a_seam_gets_its_two_ends() {
    let floor = grid_floor(8, 4.0, 0.0, 1);
    let (half_height, radius, margin) = (0.6, 0.3, 0.01);
    let shape = Shape::Capsule(Capsule::new(half_height, radius).unwrap());
    let diagonal = Vec3::new(1.0, 0.0, -1.0).normalize();
    // (a point of the seam, its direction): a grid line and a cell's diagonal.
    for (on_seam, seam) in [
        (Vec3::new(0.5, 0.0, 0.0), Vec3::X),
        (Vec3::new(0.5, 0.0, 0.5), diagonal),
    ] {
        let across = seam.cross(Vec3::Y);
        for angle in [0.0f32, 1e-4, 0.02, 0.1] {
            let direction = Quat::from_rotation_y(angle) * seam;
            for offset in [0.0f32, 1e-7, -1e-7, 1e-5, -1e-5, 3e-3] {
                for gap in [-0.01f32, 0.0, 0.005] {
                    let at = on_seam + across * offset;
                    let pose = lying_capsule(direction, at, radius + gap);
                    let what = format!("seam {seam}, angle {angle}, offset {offset}, gap {gap}");
                    let m = collide(&floor, &shape, &pose, margin).unwrap_or_else(|| panic!("{what}: none"));
                    let ends = [-1.0, 1.0].map(|s| at + direction * (s * half_height));
                    assert_two_ends(&m, ends, gap, &what);
                }
            }
        }
    }
}

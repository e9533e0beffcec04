//! Contact quality against triangle meshes (issue 23: no ghost contacts, stable manifolds): a
//! capsule lying along a seam of a flat floor, a tilted capsule's clipped points, and the
//! placement of edge-pair points.

mod support;

use glam::{Quat, Vec3};
use hullsat::contact::{TriMeshScratch, collide_capsule_hull, collide_trimesh_shape};
use hullsat::internals::collide_mesh_triangle;
use hullsat::shape::world_aabb;
use hullsat::trimesh::TriMesh;
use hullsat::{Capsule, FeatureId, Isometry, Manifold, Pose, Shape};
use parry3d::query::PointQuery;
use rand::RngExt;
use support::parry::{to_parry_pose, to_parry_shape};
use support::shapes::{Family, random_rotation, random_shape};
use support::worlds::{bumpy_terrain, grid_floor, shrink};

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

/// The closest point of the segment `[a, b]` to `q`.
fn closest_on_segment(a: Vec3, b: Vec3, q: Vec3) -> Vec3 {
    let t = ((q - a).dot(b - a) / (b - a).length_squared()).clamp(0.0, 1.0);
    a.lerp(b, t)
}

/// A capsule lying nearly flat but tilted across the seams of a floor: every point lies midway
/// between the floor and the capsule's surface straight below the core (on the capsule, not
/// inside it), its depth the gap there; the separation is the convex capsule-hull routine's on a box
/// whose top face is the floor (its lower end's cap).
#[test]
fn tilted_capsule_points_lie_midway_between_the_capsule_and_the_floor() {
    let floor = grid_floor(8, 4.0, 0.2, 2);
    let (half_height, radius, margin) = (0.6, 0.3, 0.1);
    let capsule = Capsule::new(half_height, radius).unwrap();
    let shape = Shape::Capsule(capsule);
    let slab = hullsat::ConvexHull::from_points(
        &[-1.0f32, 1.0]
            .into_iter()
            .flat_map(|x| [-1.0f32, 1.0].into_iter().map(move |z| (x, z)))
            .flat_map(|(x, z)| {
                [
                    Vec3::new(8.0 * x, -1.0, 8.0 * z),
                    Vec3::new(8.0 * x, 0.0, 8.0 * z),
                ]
            })
            .collect::<Vec<_>>(),
    )
    .unwrap();
    let mut rng = support::seeded_rng(3);
    let mut clipped = 0;
    for tilt in [0.01f32, 0.04, 0.2] {
        for _ in 0..50 {
            let yaw = rng.random_range(0.0..std::f32::consts::TAU);
            let direction = Quat::from_rotation_y(yaw) * Vec3::new(tilt.cos(), tilt.sin(), 0.0);
            let at = Vec3::new(rng.random_range(-2.0..2.0), 0.0, rng.random_range(-2.0..2.0));
            // The lower end's cap 0.01 into the floor.
            let centre = at + Vec3::Y * (radius - 0.01 + half_height * tilt.sin());
            let pose = Pose::new(centre, Quat::from_rotation_arc(Vec3::Y, direction));
            let ends = [-1.0, 1.0].map(|s| centre + direction * (s * half_height));
            let what = format!("tilt {tilt}, yaw {yaw}, at {at}");
            let m = collide(&floor, &shape, &pose, margin).unwrap_or_else(|| panic!("{what}: none"));
            assert!(
                m.normal.angle_between(Vec3::Y).to_degrees() < 0.5,
                "{what}: {m:?}"
            );
            for p in m.points() {
                let gap = -p.depth;
                let position = p.position.as_vec3();
                assert!((position.y - 0.5 * gap).abs() < 1e-5, "{what}: not midway: {m:?}");
                let on_capsule = position + Vec3::Y * (0.5 * gap);
                let core = closest_on_segment(ends[0], ends[1], on_capsule);
                let off = on_capsule.distance(core) - radius;
                assert!(off.abs() < 1e-5, "{what}: {off} off the capsule's surface: {p:?}");
                // Straight below the core, and the way down leaves the capsule there.
                let flat = |v: Vec3| Vec3::new(v.x, 0.0, v.z);
                let under_core = closest_on_segment(flat(ends[0]), flat(ends[1]), flat(on_capsule));
                assert!(
                    under_core.distance(flat(on_capsule)) < 1e-5,
                    "{what}: not below the core: {p:?}"
                );
                let lower = on_capsule - Vec3::Y * 1e-3;
                let below = lower.distance(closest_on_segment(ends[0], ends[1], lower));
                assert!(below > radius, "{what}: the capsule goes on below {p:?}");
                clipped += usize::from(core.distance(ends[0]).min(core.distance(ends[1])) > 1e-3);
            }
            let hull = collide_capsule_hull(&capsule, &pose, &slab, &Pose::IDENTITY, margin).unwrap();
            assert!(
                (m.separation - hull.separation).abs() < 1e-5,
                "{what}: {m:?} {hull:?}"
            );
        }
    }
    assert!(clipped > 50, "few points clipped at seams: {clipped}");
}

/// The distance from `q` to triangle `t` of `mesh` (either side).
fn distance_to_triangle(mesh: &TriMesh, t: u32, q: Vec3) -> f32 {
    let vector = |v: Vec3| parry3d::math::Vector::new(v.x, v.y, v.z);
    let [a, b, c] = mesh.triangle(t).vertices.map(vector);
    parry3d::shape::Triangle::new(a, b, c).distance_to_point(
        &to_parry_pose(&Pose::IDENTITY),
        vector(q),
        false,
    )
}

/// An edge-pair point lies midway between the closest points of its two edges, so within half
/// its depth of its triangle and of the body's surface (plus rounding), touching or speculative:
/// boxes and hulls dropped on gentle and rough terrains, every triangle's contact before the
/// merge.
#[test]
fn edge_pair_points_lie_between_their_edges() {
    let mut rng = support::seeded_rng(5);
    let margin = 0.05;
    let mut edge_points = 0;
    for (amplitude, seed) in [(0.05f32, 41), (0.3, 42)] {
        let mesh = bumpy_terrain(16, 8.0, amplitude, seed);
        for _ in 0..1500 {
            let family = [Family::Box, Family::Hull][rng.random_range(0..2)];
            let shape = random_shape(&mut rng, family);
            let shape = shrink(shape.clone(), 0.5 / shape.bounding_radius().max(0.5));
            let size = shape.size();
            let place = Vec3::new(rng.random_range(-5.0..5.0), 0.0, rng.random_range(-5.0..5.0));
            let rotation = random_rotation(&mut rng);
            let low = world_aabb(&shape, &Pose::new(place, rotation)).min.y as f32;
            let at = place + Vec3::Y * (rng.random_range(-0.2..0.05) - low);
            let b_in_a = Isometry::new(at, rotation);
            let parry_shape = to_parry_shape(&shape).unwrap();
            let body_pose = to_parry_pose(&Pose::new(at, rotation));
            for t in 0..mesh.triangles().len() as u32 {
                let Some((_, _, points)) = collide_mesh_triangle(&mesh, t, &shape, &b_in_a, margin) else {
                    continue;
                };
                for p in points.iter().filter(|p| p.id.kind() == FeatureId::EDGE_PAIR) {
                    edge_points += 1;
                    let q = p.position.as_vec3();
                    let slack = 0.5 * p.depth.abs() + 1e-3 * size + 1e-4;
                    let to_triangle = distance_to_triangle(&mesh, t, q);
                    let vector = parry3d::math::Vector::new(q.x, q.y, q.z);
                    let to_body = parry_shape.distance_to_point(&body_pose, vector, false);
                    assert!(
                        to_triangle <= slack && to_body <= slack,
                        "{at} {rotation}, triangle {t}: {p:?} is {to_triangle} from it, {to_body} from the body"
                    );
                }
            }
        }
    }
    assert!(edge_points > 200, "few edge pairs: {edge_points}");
}

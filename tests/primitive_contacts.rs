//! Contacts between primitive shapes (spheres, capsules, half-spaces) and against hulls, and the
//! GJK distance query, checked against hand-computed values.

mod support;

use std::f32::consts::FRAC_PI_2;

use glam::{DVec3, Quat, Vec3};
use hullsat::contact::{
    collide_capsule_capsule, collide_capsule_hull, collide_halfspace_capsule, collide_halfspace_hull,
    collide_halfspace_sphere, collide_shapes, collide_sphere_capsule, collide_sphere_hull,
    collide_sphere_sphere,
};
use hullsat::manifold::FeatureId;
use hullsat::query::gjk::{PosedHull, closest_points};
use hullsat::{Capsule, ConvexHull, Cuboid, HalfSpace, Isometry, Pose, Shape, Sphere};
use support::*;

const TOL: f32 = 1e-5;

fn sphere(radius: f32) -> Sphere {
    Sphere::new(radius).unwrap()
}

fn capsule(half_height: f32, radius: f32) -> Capsule {
    Capsule::new(half_height, radius).unwrap()
}

fn at(x: f32, y: f32, z: f32) -> Pose {
    Pose::from_translation(Vec3::new(x, y, z))
}

/// A pose whose local Y axis points along world X (a capsule lying along X).
fn lying_along_x(x: f32, y: f32, z: f32) -> Pose {
    Pose::new(Vec3::new(x, y, z), Quat::from_rotation_z(-FRAC_PI_2))
}

/// The box `[-1, 1]³` scaled by `half_extents`, as a hull.
fn cuboid_hull(half_extents: Vec3) -> ConvexHull {
    ConvexHull::cuboid(half_extents)
}

// ---- sphere / sphere ------------------------------------------------------------------------

#[test]
fn sphere_sphere_penetrating() {
    let m = collide_sphere_sphere(
        &sphere(1.0),
        &at(0.0, 0.0, 0.0),
        &sphere(0.5),
        &at(1.2, 0.0, 0.0),
        0.0,
    )
    .unwrap();
    assert_vec_near(m.normal, Vec3::X, TOL, "normal");
    assert_near(m.separation, -0.3, TOL, "separation");
    // Surfaces at x = 1.0 (A) and x = 0.7 (B): midway 0.85.
    assert_points_match(&m, &[(Vec3::new(0.85, 0.0, 0.0), 0.3)], TOL);
    assert_eq!(m.points[0].id.kind(), FeatureId::OTHER);
}

#[test]
fn sphere_sphere_touching_and_margin() {
    let a = sphere(1.0);
    let b = sphere(0.5);
    let touching = collide_sphere_sphere(&a, &at(0.0, 0.0, 0.0), &b, &at(0.0, 1.5, 0.0), 0.0).unwrap();
    assert_near(touching.separation, 0.0, TOL, "touching separation");
    assert_vec_near(touching.normal, Vec3::Y, TOL, "touching normal");
    assert_points_match(&touching, &[(Vec3::new(0.0, 1.0, 0.0), 0.0)], TOL);

    let within = collide_sphere_sphere(&a, &at(0.0, 0.0, 0.0), &b, &at(0.0, 0.0, -1.55), 0.1).unwrap();
    assert_near(within.separation, 0.05, TOL, "speculative separation");
    assert_vec_near(within.normal, -Vec3::Z, TOL, "speculative normal");
    assert_points_match(&within, &[(Vec3::new(0.0, 0.0, -1.025), -0.05)], TOL);

    assert!(collide_sphere_sphere(&a, &at(0.0, 0.0, 0.0), &b, &at(2.0, 0.0, 0.0), 0.1).is_none());
    assert!(collide_sphere_sphere(&a, &at(0.0, 0.0, 0.0), &b, &at(1.55, 0.0, 0.0), 0.0).is_none());
}

#[test]
fn sphere_sphere_coincident_centres_use_world_y() {
    let m = collide_sphere_sphere(
        &sphere(1.0),
        &at(3.0, 2.0, 1.0),
        &sphere(2.0),
        &at(3.0, 2.0, 1.0),
        0.0,
    )
    .unwrap();
    assert_eq!(m.normal, Vec3::Y);
    assert_near(m.separation, -3.0, TOL, "separation");
}

// ---- half-spaces ------------------------------------------------------------------------------

#[test]
fn sphere_on_halfspace() {
    // Ground plane y = 1 (local plane y = 0 moved up by the pose).
    let ground = HalfSpace::new(Vec3::Y, 0.0).unwrap();
    let m =
        collide_halfspace_sphere(&ground, &at(0.0, 1.0, 0.0), &sphere(0.5), &at(3.0, 1.4, 2.0), 0.0).unwrap();
    assert_vec_near(m.normal, Vec3::Y, TOL, "normal");
    assert_near(m.separation, -0.1, TOL, "separation");
    assert_points_match(&m, &[(Vec3::new(3.0, 0.95, 2.0), 0.1)], TOL);

    // A wall: local normal +Y turned to world -X, plane offset 2 (so the wall face is x = -2).
    let wall = HalfSpace::new(Vec3::Y, 2.0).unwrap();
    let wall_pose = Pose::new(Vec3::ZERO, Quat::from_rotation_z(FRAC_PI_2));
    let m = collide_halfspace_sphere(&wall, &wall_pose, &sphere(1.0), &at(-2.5, 0.0, 0.0), 0.0).unwrap();
    assert_vec_near(m.normal, -Vec3::X, TOL, "wall normal");
    assert_near(m.separation, -0.5, TOL, "wall separation");
    // Wall face x = -2, sphere surface toward it at x = -1.5: midway -1.75.
    assert_points_match(&m, &[(Vec3::new(-1.75, 0.0, 0.0), 0.5)], TOL);

    assert!(
        collide_halfspace_sphere(
            &ground,
            &at(0.0, 1.0, 0.0),
            &sphere(0.5),
            &at(0.0, 1.6, 0.0),
            0.05
        )
        .is_none()
    );
}

#[test]
fn capsule_on_halfspace_lying_and_standing() {
    let ground = HalfSpace::new(Vec3::Y, 0.0).unwrap();
    let c = capsule(1.0, 0.25);

    let lying =
        collide_halfspace_capsule(&ground, &Pose::IDENTITY, &c, &lying_along_x(0.0, 0.2, 0.0), 0.0).unwrap();
    assert_vec_near(lying.normal, Vec3::Y, TOL, "normal");
    assert_near(lying.separation, -0.05, TOL, "separation");
    // Each end: core at y = 0.2, surface at y = -0.05, plane at 0: midway -0.025.
    assert_points_match(
        &lying,
        &[
            (Vec3::new(-1.0, -0.025, 0.0), 0.05),
            (Vec3::new(1.0, -0.025, 0.0), 0.05),
        ],
        TOL,
    );

    let standing = collide_halfspace_capsule(&ground, &Pose::IDENTITY, &c, &at(0.0, 1.2, 0.0), 0.0).unwrap();
    assert_near(standing.separation, -0.05, TOL, "standing separation");
    assert_points_match(&standing, &[(Vec3::new(0.0, -0.025, 0.0), 0.05)], TOL);
    assert_eq!(standing.points[0].id.low(), 0, "bottom end");
}

#[test]
fn box_on_halfspace_gives_four_corners() {
    let ground = HalfSpace::new(Vec3::Y, 0.0).unwrap();
    let hull = cuboid_hull(Vec3::new(1.0, 0.5, 1.0));
    let m = collide_halfspace_hull(&ground, &Pose::IDENTITY, &hull, &at(0.0, 0.4, 0.0), 0.0).unwrap();
    assert_vec_near(m.normal, Vec3::Y, TOL, "normal");
    assert_near(m.separation, -0.1, TOL, "separation");
    let corners: Vec<(Vec3, f32)> = [(-1.0, -1.0), (1.0, -1.0), (-1.0, 1.0), (1.0, 1.0)]
        .iter()
        .map(|&(x, z)| (Vec3::new(x, -0.05, z), 0.1))
        .collect();
    assert_points_match(&m, &corners, TOL);
    // The bottom corners are the vertices with the y bit clear: 0, 1, 4, 5.
    let mut ids: Vec<u32> = m.points().iter().map(|p| p.id.low()).collect();
    ids.sort();
    assert_eq!(ids, [0, 1, 4, 5]);
}

#[test]
fn tilted_box_on_halfspace_reports_deepest_corner_first() {
    let ground = HalfSpace::new(Vec3::Y, 0.0).unwrap();
    let hull = cuboid_hull(Vec3::splat(1.0));
    // Tipped onto one edge, then rolled a little: one corner lowest.
    let rotation = Quat::from_rotation_x(0.3) * Quat::from_rotation_z(0.2);
    let lowest = hull
        .vertices()
        .iter()
        .map(|v| (rotation * *v).y)
        .fold(f32::INFINITY, f32::min);
    let pose = Pose::new(Vec3::new(0.0, -lowest - 0.2, 0.0), rotation);
    let m = collide_halfspace_hull(&ground, &Pose::IDENTITY, &hull, &pose, 0.0).unwrap();
    assert_near(m.separation, -0.2, TOL, "separation");
    assert_near(m.points[0].depth, 0.2, TOL, "deepest first");
    for p in m.points() {
        let vertex = pose
            .transform_point(hull.vertices()[p.id.low() as usize])
            .as_vec3();
        assert!(vertex.y <= 0.0, "only penetrating corners with margin 0");
        assert_near(p.depth, -vertex.y, TOL, "point depth is its corner's");
    }
}

// ---- capsules ---------------------------------------------------------------------------------

#[test]
fn capsules_crossed_give_one_point() {
    let a = capsule(1.0, 0.3);
    let b = capsule(1.0, 0.3);
    let m = collide_capsule_capsule(&a, &Pose::IDENTITY, &b, &lying_along_x(0.0, 0.0, 0.5), 0.0).unwrap();
    assert_vec_near(m.normal, Vec3::Z, TOL, "normal");
    assert_near(m.separation, -0.1, TOL, "separation");
    assert_points_match(&m, &[(Vec3::new(0.0, 0.0, 0.25), 0.1)], TOL);
}

#[test]
fn parallel_capsules_give_the_clipped_overlap() {
    let a = capsule(1.0, 0.3);
    let b = capsule(1.0, 0.3);
    // B is one unit beside A and shifted up half a unit: overlap y in [-0.5, 1].
    let m = collide_capsule_capsule(&a, &Pose::IDENTITY, &b, &at(0.5, 0.5, 0.0), 0.0).unwrap();
    assert_vec_near(m.normal, Vec3::X, TOL, "normal");
    assert_near(m.separation, -0.1, TOL, "separation");
    assert_points_match(
        &m,
        &[
            (Vec3::new(0.25, -0.5, 0.0), 0.1),
            (Vec3::new(0.25, 1.0, 0.0), 0.1),
        ],
        TOL,
    );
}

#[test]
fn sphere_against_capsule_side_and_cap() {
    let c = capsule(1.0, 0.5);
    let side = collide_sphere_capsule(&sphere(0.5), &at(0.8, 0.3, 0.0), &c, &Pose::IDENTITY, 0.0).unwrap();
    assert_vec_near(side.normal, -Vec3::X, TOL, "side normal");
    assert_near(side.separation, -0.2, TOL, "side separation");
    assert_points_match(&side, &[(Vec3::new(0.4, 0.3, 0.0), 0.2)], TOL);

    let cap = collide_sphere_capsule(&sphere(0.5), &at(0.0, 2.0, 0.0), &c, &Pose::IDENTITY, 0.0).unwrap();
    assert_vec_near(cap.normal, -Vec3::Y, TOL, "cap normal");
    assert_near(cap.separation, 0.0, TOL, "cap separation");
}

// ---- capsule / hull ---------------------------------------------------------------------------

#[test]
fn capsule_lying_on_box_face_gives_two_points() {
    let hull = cuboid_hull(Vec3::new(2.0, 1.0, 2.0));
    let c = capsule(1.0, 0.5);
    // Core 0.4 above the top face (y = 1): separated core, 0.1 overlap.
    let m = collide_capsule_hull(&c, &lying_along_x(0.0, 1.4, 0.0), &hull, &Pose::IDENTITY, 0.0).unwrap();
    assert_vec_near(m.normal, -Vec3::Y, TOL, "normal from capsule to box");
    assert_near(m.separation, -0.1, TOL, "separation");
    // Capsule surface at y = 0.9, face at y = 1: midway 0.95.
    assert_points_match(
        &m,
        &[
            (Vec3::new(-1.0, 0.95, 0.0), 0.1),
            (Vec3::new(1.0, 0.95, 0.0), 0.1),
        ],
        TOL,
    );

    // Core 0.1 inside the box: the SAT path, depth 0.6.
    let m = collide_capsule_hull(&c, &lying_along_x(0.0, 0.9, 0.0), &hull, &Pose::IDENTITY, 0.0).unwrap();
    assert_vec_near(m.normal, -Vec3::Y, TOL, "penetrating normal");
    assert_near(m.separation, -0.6, TOL, "penetrating separation");
    assert_points_match(
        &m,
        &[(Vec3::new(-1.0, 0.7, 0.0), 0.6), (Vec3::new(1.0, 0.7, 0.0), 0.6)],
        TOL,
    );

    // Hanging over the +X edge: the segment x in [1.5, 3.5] is clipped to [1.5, 2].
    let m = collide_capsule_hull(&c, &lying_along_x(2.5, 1.4, 0.0), &hull, &Pose::IDENTITY, 0.0).unwrap();
    assert_points_match(
        &m,
        &[(Vec3::new(1.5, 0.95, 0.0), 0.1), (Vec3::new(2.0, 0.95, 0.0), 0.1)],
        TOL,
    );
}

#[test]
fn capsule_standing_on_box_gives_one_point() {
    let hull = cuboid_hull(Vec3::new(2.0, 1.0, 2.0));
    let c = capsule(1.0, 0.5);
    let m = collide_capsule_hull(&c, &at(0.3, 2.4, 0.2), &hull, &Pose::IDENTITY, 0.0).unwrap();
    assert_vec_near(m.normal, -Vec3::Y, TOL, "normal");
    assert_near(m.separation, -0.1, TOL, "separation");
    assert_points_match(&m, &[(Vec3::new(0.3, 0.95, 0.2), 0.1)], TOL);
}

#[test]
fn capsule_across_box_edge_takes_the_edge_axis() {
    // Box [-1, 1]³; capsule core across the box's +X+Y edge (along Z), perpendicular to the edge
    // and to the diagonal, sunk 0.1 along the diagonal. Both ends stick far out of the box, so
    // every face is deeper than the edge axis.
    let hull = cuboid_hull(Vec3::splat(1.0));
    let c = capsule(2.0, 0.2);
    let diagonal = Vec3::new(1.0, 1.0, 0.0).normalize();
    let core = Vec3::new(1.0, 1.0, 0.0) - 0.1 * diagonal;
    let pose = Pose::new(core, Quat::from_rotation_z(std::f32::consts::FRAC_PI_4));
    let m = collide_capsule_hull(&c, &pose, &hull, &Pose::IDENTITY, 0.0).unwrap();
    assert_vec_near(m.normal, -diagonal, TOL, "edge normal");
    assert_near(m.separation, -0.3, TOL, "separation");
    // Capsule surface 0.2 past the core toward the box centre, hull point on the edge.
    let expected = 0.5 * (core - 0.2 * diagonal + Vec3::new(1.0, 1.0, 0.0));
    assert_points_match(&m, &[(expected, 0.3)], TOL);
}

#[test]
fn capsule_hull_moves_with_both_bodies() {
    let hull = cuboid_hull(Vec3::new(2.0, 1.0, 2.0));
    let c = capsule(1.0, 0.5);
    let mut rng = seeded_rng(7);
    for pose_a in [
        lying_along_x(0.0, 1.4, 0.0),
        lying_along_x(0.0, 0.9, 0.3),
        at(0.3, 2.4, 0.2),
    ] {
        let original = collide_capsule_hull(&c, &pose_a, &hull, &Pose::IDENTITY, 0.0).unwrap();
        for _ in 0..10 {
            let motion = random_pose(&mut rng, 10.0);
            let moved = collide_capsule_hull(&c, &motion.mul_pose(&pose_a), &hull, &motion, 0.0).unwrap();
            assert_manifold_moved(&original, &moved, &motion, 1e-4);
        }
    }
}

// ---- sphere / hull ----------------------------------------------------------------------------

#[test]
fn sphere_box_outside_face_edge_corner_and_inside() {
    let hull = cuboid_hull(Vec3::splat(1.0));
    let s = sphere(0.5);
    let cases = [
        // (centre, closest box point)
        (Vec3::new(1.3, 0.2, 0.1), Vec3::new(1.0, 0.2, 0.1)),
        (Vec3::new(1.2, 1.3, 0.5), Vec3::new(1.0, 1.0, 0.5)),
        (Vec3::new(1.2, -1.2, 1.2), Vec3::new(1.0, -1.0, 1.0)),
    ];
    for (centre, closest) in cases {
        let m =
            collide_sphere_hull(&s, &Pose::from_translation(centre), &hull, &Pose::IDENTITY, 0.0).unwrap();
        let distance = centre.distance(closest);
        let normal = (closest - centre) / distance;
        assert_near(m.separation, distance - 0.5, TOL, "separation");
        assert_vec_near(m.normal, normal, TOL, "normal");
        let on_sphere = centre + 0.5 * normal;
        assert_points_match(&m, &[(0.5 * (on_sphere + closest), 0.5 - distance)], TOL);
    }

    let inside = collide_sphere_hull(&s, &at(0.8, 0.1, 0.0), &hull, &Pose::IDENTITY, 0.0).unwrap();
    assert_vec_near(inside.normal, -Vec3::X, TOL, "inside normal");
    assert_near(inside.separation, -0.7, TOL, "inside separation");
    // Face at x = 1, sphere surface toward B at x = 0.3: midway 0.65.
    assert_points_match(&inside, &[(Vec3::new(0.65, 0.1, 0.0), 0.7)], TOL);
    assert!(
        inside.points[0].id.flag() && inside.points[0].id.low() == 1,
        "face +X"
    );

    assert!(collide_sphere_hull(&s, &at(1.2, 1.2, 1.2), &hull, &Pose::IDENTITY, 0.0).is_some());
    assert!(collide_sphere_hull(&s, &at(1.6, 1.6, 0.0), &hull, &Pose::IDENTITY, 0.1).is_none());
    let speculative = collide_sphere_hull(&s, &at(1.55, 0.0, 0.0), &hull, &Pose::IDENTITY, 0.1).unwrap();
    assert_near(speculative.separation, 0.05, TOL, "speculative separation");
}

#[test]
fn sphere_posed_box_matches_clamped_distance() {
    let half = Vec3::new(1.0, 0.5, 2.0);
    let hull = cuboid_hull(half);
    let s = sphere(0.3);
    let mut rng = seeded_rng(11);
    for _ in 0..200 {
        let pose_b = random_pose(&mut rng, 50.0);
        let local_centre = random_vec3(&mut rng, 3.0);
        let local_closest = local_centre.clamp(-half, half);
        let distance = local_centre.distance(local_closest);
        if !(1e-3..=0.3).contains(&distance) {
            continue;
        }
        let centre = pose_b.transform_point(local_centre);
        let m = collide_sphere_hull(&s, &Pose::from_translation(centre), &hull, &pose_b, 0.0).unwrap();
        assert_near(m.separation, distance - 0.3, 1e-4, "separation");
        let normal = pose_b.transform_vector((local_closest - local_centre) / distance);
        assert_vec_near(m.normal, normal, 1e-3, "normal");
    }
}

// ---- dispatcher -------------------------------------------------------------------------------

#[test]
fn swapped_order_negates_the_normal() {
    let cuboid = Shape::Cuboid(Cuboid::new(Vec3::new(1.0, 0.5, 2.0)).unwrap());
    let shapes = [
        Shape::Sphere(sphere(0.7)),
        Shape::Capsule(capsule(0.8, 0.4)),
        Shape::HalfSpace(HalfSpace::new(Vec3::new(0.1, 1.0, 0.0), 0.0).unwrap()),
        cuboid,
    ];
    let mut rng = seeded_rng(3);
    let mut compared = 0;
    for a in &shapes {
        for b in &shapes {
            if matches!(
                (a, b),
                (Shape::HalfSpace(_), Shape::HalfSpace(_)) | (Shape::Cuboid(_), Shape::Cuboid(_))
            ) {
                continue;
            }
            for _ in 0..20 {
                let pose_a = random_pose(&mut rng, 1.0);
                let pose_b = random_pose(&mut rng, 1.0);
                let Some(ab) = collide_shapes(a, &pose_a, b, &pose_b, 0.1) else {
                    assert!(collide_shapes(b, &pose_b, a, &pose_a, 0.1).is_none());
                    continue;
                };
                let ba = collide_shapes(b, &pose_b, a, &pose_a, 0.1).unwrap();
                // Capsule pairs run in the other body's frame when swapped, so rounding differs;
                // nearly crossing cores (0.01 apart) amplify it in the normal to ~1e-5.
                assert_vec_near(ba.normal, -ab.normal, 1e-4, "normal");
                assert_near(ba.separation, ab.separation, 1e-5, "separation");
                assert_eq!(ab.point_count(), ba.point_count());
                compared += 1;
            }
        }
    }
    assert!(compared > 50, "only {compared} touching pairs compared");
}

// ---- GJK --------------------------------------------------------------------------------------

#[test]
fn gjk_point_and_segment_against_box() {
    let hull = cuboid_hull(Vec3::splat(1.0));
    let posed = PosedHull {
        hull: &hull,
        pose: Isometry::IDENTITY,
    };

    let c = closest_points(&Vec3::new(2.0, 0.5, 0.0), &posed).unwrap();
    assert_near(c.distance, 1.0, 1e-5, "point-face distance");
    assert_vec_near(c.point_b, Vec3::new(1.0, 0.5, 0.0), 1e-5, "point-face witness");

    let c = closest_points(&Vec3::splat(2.0), &posed).unwrap();
    assert_near(c.distance, 3f32.sqrt(), 1e-5, "point-corner distance");
    assert_vec_near(c.point_b, Vec3::ONE, 1e-5, "point-corner witness");

    let segment = [Vec3::new(2.0, -3.0, 0.0), Vec3::new(2.0, 3.0, 0.0)];
    let c = closest_points(&segment, &posed).unwrap();
    assert_near(c.distance, 1.0, 1e-5, "segment-face distance");
    assert_near(c.point_a.x, 2.0, 1e-5, "segment witness on the segment");

    // Parallel to the box's +X+Y edge, 0.5 out in x and 1 out in y.
    let segment = [Vec3::new(1.5, 2.0, -3.0), Vec3::new(1.5, 2.0, 3.0)];
    let c = closest_points(&segment, &posed).unwrap();
    assert_near(c.distance, 1.25f32.sqrt(), 1e-5, "segment-edge distance");
    assert_near(c.point_b.x, 1.0, 1e-5, "edge witness x");
    assert_near(c.point_b.y, 1.0, 1e-5, "edge witness y");

    assert!(
        closest_points(&Vec3::new(0.3, -0.2, 0.9), &posed).is_none(),
        "point inside"
    );
    assert!(closest_points(&[Vec3::new(-3.0, 0.0, 0.0), Vec3::new(3.0, 0.2, 0.0)], &posed).is_none());
}

#[test]
fn gjk_box_box_separated_and_overlapping() {
    let hull = cuboid_hull(Vec3::splat(1.0));
    let a = PosedHull {
        hull: &hull,
        pose: Isometry::IDENTITY,
    };
    // B turned 45° about Z: its edge points at A's +X face from x = 3 - √2.
    let b = PosedHull {
        hull: &hull,
        pose: Isometry::new(
            Vec3::new(3.0, 0.0, 0.0),
            Quat::from_rotation_z(std::f32::consts::FRAC_PI_4),
        ),
    };
    let c = closest_points(&a, &b).unwrap();
    assert_near(c.distance, 2.0 - 2f32.sqrt(), 1e-5, "face-edge distance");
    assert_near(c.point_a.x, 1.0, 1e-5, "witness on A's face");
    assert_near(c.point_b.x, 3.0 - 2f32.sqrt(), 1e-5, "witness on B's edge");

    // Corner to corner along the diagonal.
    let b = PosedHull {
        hull: &hull,
        pose: Isometry::from_translation(Vec3::splat(2.5)),
    };
    let c = closest_points(&a, &b).unwrap();
    assert_near(c.distance, 0.5 * 3f32.sqrt(), 1e-5, "corner-corner distance");

    let b = PosedHull {
        hull: &hull,
        pose: Isometry::new(Vec3::new(1.5, 0.3, -0.2), Quat::from_rotation_y(0.4)),
    };
    assert!(closest_points(&a, &b).is_none(), "overlapping boxes");
}

#[test]
fn gjk_matches_parry_on_random_box_pairs() {
    let mut rng = seeded_rng(5);
    let mut checked = 0;
    for _ in 0..300 {
        let half_a = Vec3::new(0.5, 1.0, 1.5);
        let half_b = Vec3::new(1.0, 0.3, 0.7);
        let hull_a = cuboid_hull(half_a);
        let hull_b = cuboid_hull(half_b);
        let pose_a = random_pose(&mut rng, 3.0);
        let pose_b = random_pose(&mut rng, 3.0);
        let expected = parry3d::query::distance(
            &to_parry(&pose_a),
            &parry_cuboid(half_a),
            &to_parry(&pose_b),
            &parry_cuboid(half_b),
        )
        .unwrap()
        .distance;
        let got = closest_points(
            &PosedHull {
                hull: &hull_a,
                pose: Pose::IDENTITY.relative_to_self(&pose_a),
            },
            &PosedHull {
                hull: &hull_b,
                pose: Pose::IDENTITY.relative_to_self(&pose_b),
            },
        );
        match got {
            Some(c) => {
                assert_near(c.distance, expected, 1e-4 * (1.0 + expected), "distance vs parry");
                assert_near(
                    c.point_a.distance(c.point_b),
                    c.distance,
                    1e-4,
                    "witnesses are that far apart",
                );
                checked += 1;
            }
            None => assert!(expected < 1e-4, "GJK says overlap, parry says {expected}"),
        }
    }
    assert!(checked > 50, "only {checked} separated pairs");
}

/// The same pose for parry (which uses its own glam version).
fn to_parry(p: &Pose) -> parry3d::math::Pose {
    let [x, y, z] = p.translation.as_vec3().to_array();
    let [qx, qy, qz, qw] = p.rotation.to_array();
    parry3d::math::Pose::from_parts(
        parry3d::math::Vector::new(x, y, z),
        parry3d::math::Rot3::from_xyzw(qx, qy, qz, qw),
    )
}

fn parry_cuboid(half: Vec3) -> parry3d::shape::Cuboid {
    parry3d::shape::Cuboid::new(parry3d::math::Vector::new(half.x, half.y, half.z))
}

/// Distance from the segment `ends` to the box `[-half, half]` and the unit direction from the
/// segment's closest point to the box's, in f64 (ternary search: the distance is convex along
/// the segment). Equal ends make a point.
fn segment_box_distance(ends: [DVec3; 2], half: DVec3) -> (f64, DVec3) {
    let point = |t: f64| ends[0] + (ends[1] - ends[0]) * t;
    let distance = |t: f64| (point(t) - point(t).clamp(-half, half)).length();
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    for _ in 0..200 {
        let (m1, m2) = (lo + (hi - lo) / 3.0, hi - (hi - lo) / 3.0);
        if distance(m1) < distance(m2) {
            hi = m2;
        } else {
            lo = m1;
        }
    }
    let p = point(0.5 * (lo + hi));
    let to_box = p.clamp(-half, half) - p;
    (to_box.length(), to_box.normalize_or_zero())
}

/// Sphere/capsule against a posed box, random poses from deep overlap to beyond the margin.
/// Separated pairs: against an f64 reference distance. Penetrating spheres: against the
/// shallowest face; penetrating capsules: against parry's contact depth (EPA).
#[test]
fn sphere_and_capsule_against_box_match_references() {
    let half = Vec3::new(1.0, 0.6, 1.4);
    let hull = cuboid_hull(half);
    let s = sphere(0.4);
    let c = capsule(0.9, 0.3);
    let margin = 0.2;
    // Faces win ties within AXIS_PREFERENCE_TOLERANCE × scale (scale ≈ 3.3 here): a penetrating
    // capsule may report a face whose depth is up to ~3.3e-3 more than the true minimum.
    let capsule_depth_tolerance = 1e-3 * 3.3 + 1e-4;
    let mut rng = seeded_rng(17);
    let (mut separated, mut penetrating) = (0, 0);
    for _ in 0..400 {
        let pose_b = random_pose(&mut rng, 2.0);
        let pose_a = Pose::new(
            pose_b.translation + random_vec3(&mut rng, 2.2).as_dvec3(),
            random_rotation(&mut rng),
        );
        let local = |p: Vec3| {
            pose_b
                .inverse_transform_point(pose_a.transform_point(p))
                .as_dvec3()
        };

        // Sphere.
        let centre = local(Vec3::ZERO);
        let (distance, direction) = segment_box_distance([centre, centre], half.as_dvec3());
        let ours = collide_sphere_hull(&s, &pose_a, &hull, &pose_b, margin);
        if distance > 1e-3 {
            let expected = distance as f32 - s.radius;
            match ours {
                Some(m) => {
                    assert_near(m.separation, expected, 1e-4, "sphere separation");
                    let normal = pose_b.transform_vector(direction.as_vec3());
                    assert_vec_near(m.normal, normal, 1e-4, "sphere normal");
                    separated += 1;
                }
                None => assert!(expected > margin - 1e-4, "sphere missed at {expected}"),
            }
        } else {
            let inside = (half.as_dvec3() - centre.abs()).min_element() as f32;
            assert_near(ours.unwrap().separation, -inside - s.radius, 1e-4, "sphere depth");
            penetrating += 1;
        }

        // Capsule.
        let (distance, direction) = segment_box_distance(c.segment().map(local), half.as_dvec3());
        let ours = collide_capsule_hull(&c, &pose_a, &hull, &pose_b, margin);
        if distance > 1e-3 {
            let expected = distance as f32 - c.radius;
            match ours {
                Some(m) => {
                    assert_near(m.separation, expected, 1e-4, "capsule separation");
                    // Two clipped points take the face normal, which the true one is near.
                    let tolerance = if m.point_count() == 2 { 0.06 } else { 1e-4 };
                    let normal = pose_b.transform_vector(direction.as_vec3());
                    assert_vec_near(m.normal, normal, tolerance, "capsule normal");
                    separated += 1;
                }
                None => assert!(expected > margin - 1e-4, "capsule missed at {expected}"),
            }
        } else {
            let parry = parry3d::query::contact(
                &to_parry(&pose_a),
                &parry3d::shape::Capsule::new_y(c.half_height, c.radius),
                &to_parry(&pose_b),
                &parry_cuboid(half),
                margin,
            )
            .unwrap()
            .unwrap();
            assert_near(
                ours.unwrap().separation,
                parry.dist,
                capsule_depth_tolerance,
                "capsule depth",
            );
            penetrating += 1;
        }
    }
    assert!(
        separated > 100 && penetrating > 100,
        "{separated} separated, {penetrating} penetrating"
    );
}

/// Parallel faces, touching shapes and flat boxes: many ties in the support function and
/// degenerate simplices; GJK must still end with the right answer.
#[test]
fn gjk_degenerate_configurations() {
    let cube = cuboid_hull(Vec3::splat(1.0));
    let a = PosedHull {
        hull: &cube,
        pose: Isometry::IDENTITY,
    };
    // Face to face, offset sideways: distance 0.5 exactly, every face vertex a tie.
    for offset in [
        Vec3::new(2.5, 0.0, 0.0),
        Vec3::new(2.5, 0.7, -1.3),
        Vec3::new(0.0, 2.5, 1.99),
    ] {
        let b = PosedHull {
            hull: &cube,
            pose: Isometry::from_translation(offset),
        };
        let c = closest_points(&a, &b).unwrap();
        assert_near(c.distance, 0.5, 1e-5, "face-face distance");
        assert_near(c.point_a.distance(c.point_b), 0.5, 1e-5, "witness distance");
    }
    // Exactly touching faces: an overlap as far as GJK is concerned.
    let b = PosedHull {
        hull: &cube,
        pose: Isometry::from_translation(Vec3::new(2.0, 0.3, 0.0)),
    };
    assert!(closest_points(&a, &b).is_none(), "touching");
    // A nearly flat box above a face, and a point on its plane beside it.
    let flat = cuboid_hull(Vec3::new(3.0, 1e-4, 3.0));
    let b = PosedHull {
        hull: &flat,
        pose: Isometry::new(Vec3::new(0.0, 1.25, 0.0), Quat::from_rotation_y(0.3)),
    };
    let c = closest_points(&a, &b).unwrap();
    assert_near(c.distance, 0.25 - 1e-4, 1e-5, "flat box distance");
    let c = closest_points(&Vec3::new(4.0, 1.0, 0.5), &a).unwrap();
    assert_near(c.distance, 3.0, 1e-5, "point in a face's plane");
    // Segment lying in the plane of a face, parallel to it, outside beside it.
    let segment = [Vec3::new(1.5, 1.0, -5.0), Vec3::new(1.5, 1.0, 5.0)];
    let c = closest_points(&segment, &a).unwrap();
    assert_near(c.distance, 0.5, 1e-5, "segment beside an edge");
}

//! Box-box contacts with known answers, shared by the CPU tests (`hull_contacts.rs`) and the GPU
//! tests (`gpu_equivalence.rs`): each case's bodies, and a check of a manifold against the
//! answer worked out by hand, the case placed anywhere by a global pose.

use std::f32::consts::{FRAC_1_SQRT_2, FRAC_PI_4, SQRT_2};

use glam::{Quat, Vec3};
use hullsat::contact::collide_hull_hull;
use hullsat::{ConvexHull, FeatureId, Manifold, Pose};

use super::{assert_near, assert_points_match, assert_vec_near};

/// Absolute tolerance for analytic values of unit-sized boxes near the origin: a few f32 ulps
/// of the coordinates (~1) after a quaternion rotation and a pose composition.
pub const TOL: f32 = 1e-5;

/// Two bodies: hull `a` at `pose_a`, hull `b` at `pose_b` (world).
pub struct Case {
    pub a: ConvexHull,
    pub pose_a: Pose,
    pub b: ConvexHull,
    pub pose_b: Pose,
}

impl Case {
    /// The CPU manifold ([`collide_hull_hull`]) with `margin` (length units).
    pub fn collide(&self, margin: f32) -> Option<Manifold> {
        collide_hull_hull(&self.a, &self.pose_a, &self.b, &self.pose_b, margin)
    }

    /// The same bodies with A and B exchanged.
    pub fn swapped(&self) -> Case {
        Case {
            a: self.b.clone(),
            pose_a: self.pose_b,
            b: self.a.clone(),
            pose_b: self.pose_a,
        }
    }

    /// The same configuration moved rigidly by `global`.
    pub fn placed(&self, global: &Pose) -> Case {
        Case {
            a: self.a.clone(),
            pose_a: global.mul_pose(&self.pose_a),
            b: self.b.clone(),
            pose_b: global.mul_pose(&self.pose_b),
        }
    }
}

pub fn unit_box() -> ConvexHull {
    ConvexHull::cuboid(Vec3::splat(0.5))
}

/// A 4 × 1 × 4 slab whose top face (+Y, face 3) is at y = 0.5.
pub fn slab() -> ConvexHull {
    ConvexHull::cuboid(Vec3::new(2.0, 0.5, 2.0))
}

/// An arbitrary rigid placement, to check that results come back in world space.
pub fn global_pose() -> Pose {
    Pose::new(
        Vec3::new(1.5, -2.0, 0.75),
        Quat::from_axis_angle(Vec3::new(1.0, 2.0, 3.0).normalize(), 0.7),
    )
}

/// Unit box on the slab, sunk 0.01, off centre so nothing is symmetric about the origin.
pub fn resting() -> Case {
    Case {
        a: slab(),
        pose_a: Pose::IDENTITY,
        b: unit_box(),
        pose_b: Pose::from_translation(Vec3::new(0.3, 0.99, 0.2)),
    }
}

/// [`resting`] placed by `global`: four points midway between the box's bottom (y = 0.49) and
/// the slab's top (y = 0.5) at depth 0.01, each a kept vertex of B's bottom face against the
/// slab's top face.
pub fn check_resting(m: &Manifold, global: &Pose) {
    assert_vec_near(m.normal, global.transform_vector(Vec3::Y), TOL, "normal");
    assert_near(m.separation, -0.01, TOL, "separation");
    let expected: Vec<(Vec3, f32)> = [(-0.5, -0.5), (0.5, -0.5), (0.5, 0.5), (-0.5, 0.5)]
        .iter()
        .map(|&(x, z)| {
            let position = global.transform_point(Vec3::new(0.3 + x, 0.495, 0.2 + z));
            (position.as_vec3(), 0.01)
        })
        .collect();
    assert_points_match(m, &expected, TOL);
    let bottom = unit_box().face_loop(2).to_vec();
    for p in m.points() {
        assert_eq!(
            (p.id.kind(), p.id.flag(), p.id.high()),
            (FeatureId::FACE_A, false, 3)
        );
        assert!(bottom.contains(&p.id.low()), "{:?}", p.id);
    }
}

/// Unit box turned 45° about Y on a 1 × 2 × 1 box (top at y = 1), sunk 0.02: the faces overlap
/// in a regular octagon.
pub fn octagon() -> Case {
    Case {
        a: ConvexHull::cuboid(Vec3::new(0.5, 1.0, 0.5)),
        pose_a: Pose::IDENTITY,
        b: unit_box(),
        pose_b: Pose::new(Vec3::new(0.0, 1.48, 0.0), Quat::from_rotation_y(FRAC_PI_4)),
    }
}

/// [`octagon`] placed by `global`: four alternate corners of the octagon at depth 0.02, each
/// where a side plane of A's top face cuts an edge of B.
pub fn check_octagon(m: &Manifold, global: &Pose) {
    assert_vec_near(m.normal, global.transform_vector(Vec3::Y), TOL, "normal");
    assert_near(m.separation, -0.02, TOL, "separation");
    // The octagon: the square |x|, |z| <= 0.5 cut by the diamond |x| + |z| <= √2/2.
    let c = FRAC_1_SQRT_2 - 0.5;
    let octagon: Vec<Vec3> = [(0.5, c), (c, 0.5), (-c, 0.5), (-0.5, c)]
        .iter()
        .flat_map(|&(x, z)| [Vec3::new(x, 0.99, z), Vec3::new(-x, 0.99, -z)])
        .collect();
    let local: Vec<Vec3> = m
        .points()
        .iter()
        .map(|p| global.inverse_transform_point(p.position))
        .collect();
    assert_eq!(local.len(), 4);
    for (p, point) in local.iter().zip(m.points()) {
        assert_near(point.depth, 0.02, TOL, "depth");
        assert!(
            octagon.iter().any(|o| o.distance(*p) <= TOL),
            "{p:?} is not an octagon corner"
        );
        assert!(
            point.id.flag() && point.id.kind() == FeatureId::FACE_A,
            "{:?}",
            point.id
        );
    }
    // The largest quadrilateral on a regular octagon's corners is the square on alternate
    // corners: area 2 R², R² = 0.25 + c² the circumradius squared.
    let area = 0.5 * (local[2] - local[0]).cross(local[3] - local[1]).y.abs();
    assert_near(area, 2.0 * (0.25 + c * c), TOL, "quadrilateral area");
}

/// Unit box standing on its vertex 0 (main diagonal vertical), pushed 0.05 into the slab.
pub fn corner() -> Case {
    let rotation = Quat::from_rotation_arc(-Vec3::ONE.normalize(), -Vec3::Y);
    let half_diagonal = 0.5 * 3.0f32.sqrt();
    Case {
        a: slab(),
        pose_a: Pose::IDENTITY,
        b: unit_box(),
        pose_b: Pose::new(Vec3::new(0.2, 0.5 + half_diagonal - 0.05, -0.1), rotation),
    }
}

/// [`corner`] placed by `global`, slab first: the reference face is A's top, the corner an
/// incident vertex of B; one point at depth 0.05.
pub fn check_corner(m: &Manifold, global: &Pose) {
    check_corner_either_way(m, global, false);
}

/// [`corner`] swapped (box first) placed by `global`: the reference face is B's, the normal
/// from the box down into the slab; the same point.
pub fn check_corner_box_first(m: &Manifold, global: &Pose) {
    check_corner_either_way(m, global, true);
}

fn check_corner_either_way(m: &Manifold, global: &Pose, box_first: bool) {
    let (normal, kind) = if box_first {
        (-Vec3::Y, FeatureId::FACE_B)
    } else {
        (Vec3::Y, FeatureId::FACE_A)
    };
    assert_vec_near(m.normal, global.transform_vector(normal), TOL, "normal");
    assert_near(m.separation, -0.05, TOL, "separation");
    let position = global.transform_point(Vec3::new(0.2, 0.475, -0.1)).as_vec3();
    assert_points_match(m, &[(position, 0.05)], TOL);
    assert_eq!(m.points[0].id, FeatureId::new(kind, false, 3, 0));
}

/// A: unit box turned 45° about Z, its top edge (vertices 3, 7) along Z at x = 0, y = √2/2.
/// B: unit box turned 45° about X, its bottom edge (vertices 4, 5) along X at z = 0.15,
/// 0.02 below A's top edge.
pub fn crossed_edges() -> Case {
    Case {
        a: unit_box(),
        pose_a: Pose::new(Vec3::ZERO, Quat::from_rotation_z(FRAC_PI_4)),
        b: unit_box(),
        pose_b: Pose::new(
            Vec3::new(0.1, SQRT_2 - 0.02, 0.15),
            Quat::from_rotation_x(FRAC_PI_4),
        ),
    }
}

/// [`crossed_edges`] placed by `global`: one point midway between the edges, closest at x = 0,
/// z = 0.15, depth 0.02, the id naming both edges.
pub fn check_crossed_edges(m: &Manifold, global: &Pose) {
    assert_vec_near(m.normal, global.transform_vector(Vec3::Y), TOL, "normal");
    assert_near(m.separation, -0.02, TOL, "separation");
    let position = global
        .transform_point(Vec3::new(0.0, FRAC_1_SQRT_2 - 0.01, 0.15))
        .as_vec3();
    assert_points_match(m, &[(position, 0.02)], TOL);
    let p = m.points[0];
    assert_eq!((p.id.kind(), p.id.flag()), (FeatureId::EDGE_PAIR, false));
    assert_eq!(unit_box().edges()[p.id.high() as usize].vertices, [3, 7]);
    assert_eq!(unit_box().edges()[p.id.low() as usize].vertices, [4, 5]);
}

/// A manifold check of the answer worked out by hand, given the global placement.
pub type Check = fn(&Manifold, &Pose);

/// Every case, by name, with its check; each is to be run placed by [`Pose::IDENTITY`] and by
/// [`global_pose`].
pub fn cases() -> [(&'static str, Case, Check); 5] {
    [
        ("resting", resting(), check_resting),
        ("octagon", octagon(), check_octagon),
        ("corner", corner(), check_corner),
        ("corner, box first", corner().swapped(), check_corner_box_first),
        ("crossed edges", crossed_edges(), check_crossed_edges),
    ]
}

/// A 10 × 1 × 10 slab and a tiny box (half extent 0.003) sunk 0.0005 into it at the slab's top
/// corner, turned by `angle` about Y: the clip polygon (the box's face cut by the slab's side
/// planes, up to 8 points) is smaller than the reduction's tie tolerance (1e-3 × the pair's
/// scale, about 0.007), so the reduction's picks can repeat one another.
pub fn tiny_box_at_a_corner(angle: f32) -> Case {
    Case {
        a: ConvexHull::cuboid(Vec3::new(5.0, 0.5, 5.0)),
        pose_a: Pose::IDENTITY,
        b: ConvexHull::cuboid(Vec3::splat(0.003)),
        pose_b: Pose::new(Vec3::new(4.999, 0.5025, 4.9985), Quat::from_rotation_y(angle)),
    }
}

/// Panics when two points of `m` are the same point (same id, or same position).
#[track_caller]
pub fn assert_distinct_points(m: &Manifold) {
    let points = m.points();
    for (i, p) in points.iter().enumerate() {
        for q in &points[i + 1..] {
            assert!(
                p.id != q.id && p.position != q.position,
                "a repeated point in {m:?}"
            );
        }
    }
}

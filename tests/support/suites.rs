//! The random pair suites the GPU tests and the contract's proof share: hull and box pairs of
//! every family (tests/gpu_equivalence.rs) and pairs of every kind combination with a primitive
//! (tests/gpu_primitives.rs), each posed to penetrate, touch, stay apart within the margin or far.

use std::f32::consts::FRAC_PI_2;

use glam::{Quat, Vec3};
use hullsat::contact::collide_shapes;
use hullsat::query::sat::query_hulls;
use hullsat::{Body, Capsule, HalfSpace, Pose, Shape, Sphere};
use rand::RngExt;
use rand_pcg::Pcg64;

use super::shapes::{FAMILIES, Family, random_direction, random_rotation, random_shape};

/// Shapes in the library the random bodies draw from.
pub const LIBRARY: usize = 64;

/// A library of `LIBRARY` random shapes, the families in turn.
pub fn shape_library(rng: &mut Pcg64) -> Vec<Shape> {
    (0..LIBRARY)
        .map(|i| random_shape(rng, FAMILIES[i % FAMILIES.len()]))
        .collect()
}

/// How a random pair was placed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HullPlacement {
    /// B at a random direction and distance from A (penetrating or apart).
    Random,
    /// As `Random`, then B moved along the CPU's SAT normal by the separation: touching.
    Touching,
    /// Identity rotations and an axis-aligned offset: exact face-face ties.
    Aligned,
    /// A random face of B resting on a random face of A (B turned about their common normal,
    /// tilted by 1e-5 rad), moved to touch and then nudged by up to 1e-3 × scale: the edges of
    /// the two faces have Gauss-map arcs that (nearly) share end points, so the crossing test is
    /// decided by rounding.
    Resting,
}

/// Bodies and pairs for `count` random pairs of `shapes` (all hulls or boxes): A anywhere in a
/// 20-unit cube, B at a distance of 0 to 1.1 × the sum of the bounding radii. One pair in five
/// is then moved to touch, one in ten is axis-aligned, one in ten resting.
/// Returns each pair's placement too.
pub fn random_hull_pairs(
    rng: &mut Pcg64,
    shapes: &[Shape],
    count: usize,
) -> (Vec<Body>, Vec<[u32; 2]>, Vec<HullPlacement>) {
    let mut bodies = Vec::with_capacity(2 * count);
    let mut pairs = Vec::with_capacity(count);
    let mut placements = Vec::with_capacity(count);
    for i in 0..count {
        let (sa, sb) = (
            rng.random_range(0..shapes.len()),
            rng.random_range(0..shapes.len()),
        );
        let radii = shapes[sa].bounding_radius() + shapes[sb].bounding_radius();
        let position = Vec3::new(
            rng.random_range(-10.0..10.0),
            rng.random_range(-10.0..10.0),
            rng.random_range(-10.0..10.0),
        );
        let distance = radii * rng.random_range(0.0f32..1.1);
        let placement = match i % 10 {
            0 => HullPlacement::Aligned,
            5 => HullPlacement::Resting,
            1 | 6 => HullPlacement::Touching,
            _ => HullPlacement::Random,
        };
        let axis = [Vec3::X, Vec3::Y, Vec3::Z][rng.random_range(0..3)];
        let (rotation_a, rotation_b, direction) = match placement {
            HullPlacement::Aligned => (Quat::IDENTITY, Quat::IDENTITY, axis),
            HullPlacement::Resting => {
                let (a, b) = (shapes[sa].as_hull().unwrap(), shapes[sb].as_hull().unwrap());
                let face_a = a.planes()[rng.random_range(0..a.planes().len())].normal;
                let face_b = b.planes()[rng.random_range(0..b.planes().len())].normal;
                let turn = Quat::from_axis_angle(axis, rng.random_range(0.0..std::f32::consts::TAU));
                let tilt = Quat::from_axis_angle(random_direction(rng), 1e-5);
                (
                    Quat::from_rotation_arc(face_a, axis),
                    (tilt * turn * Quat::from_rotation_arc(face_b, -axis)).normalize(),
                    axis,
                )
            }
            _ => (random_rotation(rng), random_rotation(rng), random_direction(rng)),
        };
        let pose_a = Pose::new(position, rotation_a);
        let mut pose_b = Pose::new(position + direction * distance, rotation_b);
        if matches!(placement, HullPlacement::Touching | HullPlacement::Resting) {
            let (a, b) = (shapes[sa].as_hull().unwrap(), shapes[sb].as_hull().unwrap());
            let sat = query_hulls(a, b, &pose_a.relative_to_self(&pose_b), f32::INFINITY);
            let nudge = if placement == HullPlacement::Resting {
                rng.random_range(-1e-3..1e-3) * radii
            } else {
                0.0
            };
            pose_b.translation -= (pose_a.transform_vector(sat.normal) * (sat.separation - nudge)).as_dvec3();
        }
        pairs.push([bodies.len() as u32, bodies.len() as u32 + 1]);
        bodies.push(Body {
            shape: sa as u32,
            pose: pose_a,
        });
        bodies.push(Body {
            shape: sb as u32,
            pose: pose_b,
        });
        placements.push(placement);
    }
    (bodies, pairs, placements)
}

/// Separation used to measure a placement on the CPU: every primitive routine returns a
/// manifold within it.
pub const MEASURE_MARGIN: f32 = 100.0;

/// The shape kinds of this test, in `collide_shapes`' routine order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    HalfSpace,
    Sphere,
    Capsule,
    Box,
    Hull,
}

/// Every kind combination with a primitive (two half-spaces never collide; hull pairs are
/// tests/gpu_equivalence.rs's).
pub const COMBINATIONS: [(Kind, Kind); 11] = [
    (Kind::HalfSpace, Kind::Sphere),
    (Kind::HalfSpace, Kind::Capsule),
    (Kind::HalfSpace, Kind::Box),
    (Kind::HalfSpace, Kind::Hull),
    (Kind::Sphere, Kind::Sphere),
    (Kind::Sphere, Kind::Capsule),
    (Kind::Sphere, Kind::Box),
    (Kind::Sphere, Kind::Hull),
    (Kind::Capsule, Kind::Capsule),
    (Kind::Capsule, Kind::Box),
    (Kind::Capsule, Kind::Hull),
];

/// A random shape of `kind`, size factor in [0.5, 2].
pub fn random_kind(rng: &mut Pcg64, kind: Kind) -> Shape {
    let size: f32 = rng.random_range(0.5..2.0);
    match kind {
        Kind::HalfSpace => {
            // Half the ground planes axis-aligned (boxes and capsules lie flat on them).
            let normal = if rng.random_bool(0.5) {
                Vec3::Y
            } else {
                random_direction(rng)
            };
            Shape::HalfSpace(HalfSpace::new(normal, rng.random_range(-1.0..1.0)).unwrap())
        }
        Kind::Sphere => Shape::Sphere(Sphere::new(0.5 * size).unwrap()),
        Kind::Capsule => Shape::Capsule(Capsule::new(rng.random_range(0.2..1.0) * size, 0.3 * size).unwrap()),
        Kind::Box => random_shape(rng, Family::Box),
        Kind::Hull => {
            let family = if rng.random_bool(0.8) {
                Family::Hull
            } else {
                Family::Needle
            };
            random_shape(rng, family)
        }
    }
}

/// How B is placed against A.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrimitivePlacement {
    /// Overlapping by up to 0.3 × the smaller size.
    Penetrating,
    /// Separation exactly zero on the CPU (up to rounding).
    Touching,
    /// Apart but within the margin.
    WithinMargin,
    /// Beyond the margin.
    Far,
}

pub const PLACEMENTS: [PrimitivePlacement; 4] = [
    PrimitivePlacement::Penetrating,
    PrimitivePlacement::Touching,
    PrimitivePlacement::WithinMargin,
    PrimitivePlacement::Far,
];

/// One of the 24 rotations taking axes to axes.
fn axis_rotation(rng: &mut Pcg64) -> Quat {
    let turns = [0.0, FRAC_PI_2, 2.0 * FRAC_PI_2, 3.0 * FRAC_PI_2];
    let up = [
        Quat::IDENTITY,
        Quat::from_rotation_x(FRAC_PI_2),
        Quat::from_rotation_x(-FRAC_PI_2),
        Quat::from_rotation_x(2.0 * FRAC_PI_2),
        Quat::from_rotation_z(FRAC_PI_2),
        Quat::from_rotation_z(-FRAC_PI_2),
    ];
    up[rng.random_range(0..6)] * Quat::from_rotation_y(turns[rng.random_range(0..4)])
}

/// Poses of A and B for `placement` at `margin`: B first put at a random direction (or, for
/// aligned pairs, along an axis of A with B's axes along A's, tilted by up to 1e-3 rad), then
/// moved along the CPU's normal to the wanted separation.
pub fn place(
    rng: &mut Pcg64,
    a: &Shape,
    b: &Shape,
    placement: PrimitivePlacement,
    margin: f32,
) -> (Pose, Pose) {
    let pose_a = Pose::new(
        Vec3::new(
            rng.random_range(-3.0..3.0),
            rng.random_range(-3.0..3.0),
            rng.random_range(-3.0..3.0),
        ),
        random_rotation(rng),
    );
    let aligned = rng.random_bool(0.4);
    let reach = a.bounding_radius().min(10.0) + b.bounding_radius().min(10.0);
    let (direction, rotation) = if aligned {
        let tilt = Quat::from_axis_angle(random_direction(rng), rng.random_range(0.0..1.0e-3));
        let axis = axis_rotation(rng) * Vec3::Y;
        (
            pose_a.rotation * axis,
            pose_a.rotation * axis_rotation(rng) * tilt,
        )
    } else {
        (random_direction(rng), random_rotation(rng))
    };
    let lateral = if aligned {
        random_direction(rng) * rng.random_range(0.0..0.3) * reach
    } else {
        Vec3::ZERO
    };
    let start = pose_a.translation.as_vec3() + direction * reach * 0.5 + lateral;
    let mut pose_b = Pose::new(start, rotation);
    let smaller = a.size().max(1e-3).min(b.size().max(1e-3));
    let target = match placement {
        PrimitivePlacement::Penetrating => -rng.random_range(0.0..0.3) * smaller,
        PrimitivePlacement::Touching => 0.0,
        PrimitivePlacement::WithinMargin => rng.random_range(0.0..1.0) * margin,
        PrimitivePlacement::Far => margin + rng.random_range(0.01..1.0),
    };
    // Two steps along the CPU's normal: the second corrects for curved surfaces.
    for _ in 0..2 {
        if let Some(m) = collide_shapes(a, &pose_a, b, &pose_b, MEASURE_MARGIN) {
            let shift = (target - m.separation) * m.normal;
            pose_b = Pose::new(pose_b.translation.as_vec3() + shift, pose_b.rotation);
        }
    }
    (pose_a, pose_b)
}

/// One batch of a suite: a shape list, bodies over it, pairs and the margin (length units).
pub struct Batch {
    pub shapes: Vec<Shape>,
    pub bodies: Vec<Body>,
    pub pairs: Vec<[u32; 2]>,
    pub margin: f32,
}

/// A batch of the primitive suite: the shapes, bodies, pairs (either body first, either order
/// given) and each pair's kinds and placement.
pub struct PrimitiveBatch {
    pub shapes: Vec<Shape>,
    pub bodies: Vec<Body>,
    pub pairs: Vec<[u32; 2]>,
    pub cases: Vec<(Kind, Kind, PrimitivePlacement)>,
}

impl PrimitiveBatch {
    /// The batch at `margin` (the margin it was placed for), without the cases.
    pub fn at(self, margin: f32) -> Batch {
        Batch {
            shapes: self.shapes,
            bodies: self.bodies,
            pairs: self.pairs,
            margin,
        }
    }
}

/// A library of six shapes of each kind.
pub fn primitive_library(rng: &mut Pcg64) -> Vec<(Kind, Shape)> {
    let kinds = [
        Kind::HalfSpace,
        Kind::Sphere,
        Kind::Capsule,
        Kind::Box,
        Kind::Hull,
    ];
    kinds
        .iter()
        .flat_map(|&kind| (0..6).map(move |i| (kind, i)))
        .map(|(kind, _)| (kind, random_kind(rng, kind)))
        .collect()
}

/// `per_combination` pairs of every kind combination of [`COMBINATIONS`] from `library`, the
/// placements in turn, at `margin`.
pub fn primitive_batch(
    rng: &mut Pcg64,
    library: &[(Kind, Shape)],
    per_combination: usize,
    margin: f32,
) -> PrimitiveBatch {
    let shapes: Vec<Shape> = library.iter().map(|(_, s)| s.clone()).collect();
    let of_kind = |rng: &mut Pcg64, kind: Kind| {
        let indices: Vec<u32> = (0..library.len() as u32)
            .filter(|&i| library[i as usize].0 == kind)
            .collect();
        indices[rng.random_range(0..indices.len())]
    };
    let mut bodies = Vec::new();
    let mut pairs = Vec::new();
    let mut cases = Vec::new();
    for (kind_a, kind_b) in COMBINATIONS {
        for i in 0..per_combination {
            let placement = PLACEMENTS[i % PLACEMENTS.len()];
            let (sa, sb) = (of_kind(rng, kind_a), of_kind(rng, kind_b));
            let (pose_a, pose_b) = place(rng, &shapes[sa as usize], &shapes[sb as usize], placement, margin);
            // Either body may come first (the canonical order is by body index), and the
            // pair may name them in either order.
            let first = bodies.len() as u32;
            let (ia, ib) = if rng.random_bool(0.5) {
                (first, first + 1)
            } else {
                (first + 1, first)
            };
            let mut two = [Body {
                shape: 0,
                pose: Pose::IDENTITY,
            }; 2];
            two[(ia - first) as usize] = Body {
                shape: sa,
                pose: pose_a,
            };
            two[(ib - first) as usize] = Body {
                shape: sb,
                pose: pose_b,
            };
            bodies.extend(two);
            pairs.push(if rng.random_bool(0.5) { [ia, ib] } else { [ib, ia] });
            cases.push((kind_a, kind_b, placement));
        }
    }
    PrimitiveBatch {
        shapes,
        bodies,
        pairs,
        cases,
    }
}

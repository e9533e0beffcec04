//! Meshes and compounds shared by the mesh and compound tests: tessellated floors, a bumpy
//! terrain, random compounds, and their parry3d twins.

use glam::{Quat, Vec3};
use hullsat::{Capsule, Compound, CompoundChild, Cuboid, Isometry, Pose, Shape, Sphere, TriMesh};
use parry3d::math::Vector as PVector;
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64;

use super::parry::{to_parry_pose, to_parry_shape};
use super::shapes::{Family, random_direction, random_rotation, random_shape};

/// A compound child: `shape` placed at `at`, turned by `rotation`.
pub fn child(shape: Shape, at: Vec3, rotation: Quat) -> CompoundChild {
    CompoundChild {
        shape,
        pose: Isometry::new(at, rotation),
    }
}

/// A flat floor `y = 0` over `[-half, half]²` cut into an `n × n` grid of squares, each split
/// into two triangles facing +y, corners jittered along the floor by `jitter` of a cell.
pub fn grid_floor(n: usize, half: f32, jitter: f32, seed: u64) -> TriMesh {
    let mut rng = Pcg64::seed_from_u64(seed);
    let cell = 2.0 * half / n as f32;
    let mut vertices = Vec::new();
    for i in 0..=n {
        for j in 0..=n {
            let inner = i > 0 && i < n && j > 0 && j < n;
            let (dx, dz) = if inner {
                (
                    rng.random_range(-jitter..=jitter),
                    rng.random_range(-jitter..=jitter),
                )
            } else {
                (0.0, 0.0)
            };
            vertices.push(Vec3::new(
                -half + (i as f32 + dx) * cell,
                0.0,
                -half + (j as f32 + dz) * cell,
            ));
        }
    }
    let at = |i: usize, j: usize| (i * (n + 1) + j) as u32;
    let mut triangles = Vec::new();
    for i in 0..n {
        for j in 0..n {
            // Counter-clockwise seen from +y: (x, z) then (x, z + 1) then (x + 1, z).
            triangles.push([at(i, j), at(i, j + 1), at(i + 1, j)]);
            triangles.push([at(i + 1, j), at(i, j + 1), at(i + 1, j + 1)]);
        }
    }
    let mesh = TriMesh::new(vertices, triangles).unwrap();
    assert!(
        (0..mesh.triangles().len() as u32).all(|t| mesh.plane(t).normal.y > 0.99),
        "folded"
    );
    mesh
}

/// A gentle random terrain: heights on a grid, bends well under 10°.
pub fn bumpy_terrain(n: usize, half: f32, amplitude: f32, seed: u64) -> TriMesh {
    let mut rng = Pcg64::seed_from_u64(seed);
    let cell = 2.0 * half / n as f32;
    let mut vertices = Vec::new();
    for i in 0..=n {
        for j in 0..=n {
            let y = amplitude * rng.random_range(-1.0f32..1.0);
            vertices.push(Vec3::new(-half + i as f32 * cell, y, -half + j as f32 * cell));
        }
    }
    let at = |i: usize, j: usize| (i * (n + 1) + j) as u32;
    let mut triangles = Vec::new();
    for i in 0..n {
        for j in 0..n {
            triangles.push([at(i, j), at(i, j + 1), at(i + 1, j)]);
            triangles.push([at(i + 1, j), at(i, j + 1), at(i + 1, j + 1)]);
        }
    }
    TriMesh::new(vertices, triangles).unwrap()
}

/// parry3d's `TriMesh` of `mesh` (the same vertices and triangles).
pub fn parry_trimesh(mesh: &TriMesh) -> parry3d::shape::TriMesh {
    parry3d::shape::TriMesh::new(
        mesh.vertices()
            .iter()
            .map(|v| PVector::new(v.x, v.y, v.z))
            .collect(),
        mesh.triangles().to_vec(),
    )
    .unwrap()
}

/// A random compound of 1 to 5 children (boxes, hulls, balls, capsules) within about 2 units.
pub fn random_compound(rng: &mut Pcg64) -> Compound {
    let count = rng.random_range(1..=5);
    let children = (0..count)
        .map(|_| {
            let shape = match rng.random_range(0..4) {
                0 => random_shape(rng, Family::Box),
                1 => random_shape(rng, Family::Hull),
                2 => Shape::Sphere(Sphere::new(rng.random_range(0.2..0.8)).unwrap()),
                _ => Shape::Capsule(
                    Capsule::new(rng.random_range(0.2..0.8), rng.random_range(0.1..0.4)).unwrap(),
                ),
            };
            let scale = 0.5 / shape.bounding_radius().max(0.5);
            let shape = shrink(shape, scale);
            let at = random_direction(rng) * rng.random_range(0.0..1.5);
            child(shape, at, random_rotation(rng))
        })
        .collect();
    Compound::new(children).unwrap()
}

/// `shape` scaled by `s` (boxes and hulls rebuilt; others as drawn).
pub fn shrink(shape: Shape, s: f32) -> Shape {
    match shape {
        Shape::Cuboid(c) => Shape::Cuboid(Cuboid::new(c.half_extents() * s).unwrap()),
        Shape::Hull(h) => {
            let points: Vec<Vec3> = h.vertices().iter().map(|&v| v * s).collect();
            Shape::Hull(hullsat::ConvexHull::from_points(&points).unwrap())
        }
        other => other,
    }
}

pub fn parry_compound(c: &Compound) -> parry3d::shape::Compound {
    parry3d::shape::Compound::new(
        c.children()
            .iter()
            .map(|ch| {
                let pose = Pose::new(ch.pose.translation, ch.pose.rotation);
                (to_parry_pose(&pose), to_parry_shape(&ch.shape).unwrap())
            })
            .collect(),
    )
}

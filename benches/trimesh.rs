//! Convex bodies against a static 100k-triangle terrain, one thread: hullsat's
//! `collide_trimesh_shape` against parry3d 0.31's `TriMesh` (`FIX_INTERNAL_EDGES`, the same
//! ghost-contact handling) on the same pairs.
//!
//! 1. Terrain: a 224 × 224 grid of squares (100,352 triangles) over 448 × 448 length units,
//!    seeded gentle heights (±0.3 over a cell of 2).
//! 2. Bodies: [`BODIES`] boxes (half extents 0.5, 0.3, 0.4) or hull32s (32 seeded points on a
//!    sphere of radius 0.5), seeded places over the terrain, resting 0.02 below the height there,
//!    random yaw and a tilt up to 0.3 rad; margin [`MARGIN`].
//! 3. Backends, criterion ids `trimesh/<shape>/<backend>`: `hullsat` (one scratch reused across
//!    pairs), `parry` (`DefaultQueryDispatcher::contact_manifolds` with a fresh workspace and a
//!    cleared manifold list per pair: a cold query per pair, as hullsat's). Throughput is pairs.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use glam::{Quat, Vec3};
use hullsat::contact::{TriMeshScratch, collide_trimesh_shape};
use hullsat::{ConvexHull, Cuboid, Pose, Shape, TriMesh};
use parry3d::math::Vector as PVector;
use parry3d::query::{ContactManifold, DefaultQueryDispatcher, PersistentQueryDispatcher};
use parry3d::shape::{SharedShape, TriMeshFlags};
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64;

#[path = "../tests/support/parry.rs"]
mod parry_shapes;
use parry_shapes::{to_parry_pose, to_parry_shape};

/// Bodies per workload.
const BODIES: usize = 1000;
/// Speculative margin, length units.
const MARGIN: f32 = 0.01;
/// Grid squares per side.
const CELLS: usize = 224;
/// Cell size, length units.
const CELL: f32 = 2.0;

fn terrain(rng: &mut Pcg64) -> (Vec<Vec3>, Vec<[u32; 3]>, Vec<f32>) {
    let heights: Vec<f32> = (0..(CELLS + 1) * (CELLS + 1))
        .map(|_| rng.random_range(-0.3..0.3))
        .collect();
    let at = |i: usize, j: usize| (i * (CELLS + 1) + j) as u32;
    let vertices = (0..=CELLS)
        .flat_map(|i| (0..=CELLS).map(move |j| (i, j)))
        .map(|(i, j)| Vec3::new(i as f32 * CELL, heights[at(i, j) as usize], j as f32 * CELL))
        .collect();
    let mut triangles = Vec::new();
    for i in 0..CELLS {
        for j in 0..CELLS {
            triangles.push([at(i, j), at(i, j + 1), at(i + 1, j)]);
            triangles.push([at(i + 1, j), at(i, j + 1), at(i + 1, j + 1)]);
        }
    }
    (vertices, triangles, heights)
}

/// The highest terrain vertex of the cell under `(x, z)`: bodies rest just below it.
fn height_under(heights: &[f32], x: f32, z: f32) -> f32 {
    let (i, j) = ((x / CELL) as usize, (z / CELL) as usize);
    let h = |i: usize, j: usize| heights[i * (CELLS + 1) + j];
    h(i, j).max(h(i + 1, j)).max(h(i, j + 1)).max(h(i + 1, j + 1))
}

fn bench_trimesh(c: &mut Criterion) {
    let mut rng = Pcg64::seed_from_u64(23);
    let (vertices, triangles, heights) = terrain(&mut rng);
    let mesh = TriMesh::new(vertices.clone(), triangles.clone()).expect("valid terrain");
    let parry_mesh = SharedShape::new(
        parry3d::shape::TriMesh::with_flags(
            vertices.iter().map(|v| PVector::new(v.x, v.y, v.z)).collect(),
            triangles,
            TriMeshFlags::FIX_INTERNAL_EDGES,
        )
        .expect("parry accepts the terrain"),
    );
    let sphere_points: Vec<Vec3> = (0..32)
        .map(|_| {
            let v = Vec3::new(
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
            );
            0.5 * v.normalize()
        })
        .collect();
    let shapes = [
        (
            "box",
            Shape::Cuboid(Cuboid::new(Vec3::new(0.5, 0.3, 0.4)).unwrap()),
        ),
        (
            "hull32",
            Shape::Hull(ConvexHull::from_points(&sphere_points).unwrap()),
        ),
    ];
    let mut group = c.benchmark_group("trimesh");
    group.throughput(Throughput::Elements(BODIES as u64));
    for (name, shape) in &shapes {
        let extent = (CELLS as f32 - 2.0) * CELL;
        let poses: Vec<Pose> = (0..BODIES)
            .map(|_| {
                let (x, z) = (rng.random_range(CELL..extent), rng.random_range(CELL..extent));
                let rotation = Quat::from_rotation_y(rng.random_range(0.0..6.3))
                    * Quat::from_rotation_x(rng.random_range(-0.3..0.3));
                let y = height_under(&heights, x, z) + 0.3 - 0.02;
                Pose::new(Vec3::new(x, y, z), rotation)
            })
            .collect();
        let mut scratch = TriMeshScratch::default();
        let touching = poses
            .iter()
            .filter(|p| {
                collide_trimesh_shape(&mesh, &Pose::IDENTITY, shape, p, MARGIN, &mut scratch).is_some()
            })
            .count();
        println!("trimesh/{name}: {touching} of {BODIES} bodies touch the terrain");
        group.bench_function(format!("{name}/hullsat"), |b| {
            b.iter(|| {
                let mut points = 0;
                for pose in &poses {
                    let m = collide_trimesh_shape(&mesh, &Pose::IDENTITY, shape, pose, MARGIN, &mut scratch);
                    points += m.map_or(0, |m| m.point_count());
                }
                black_box(points)
            })
        });
        let parry_shape = to_parry_shape(shape).expect("parry builds the shape");
        let parry_poses: Vec<_> = poses.iter().map(to_parry_pose).collect();
        let mesh_pose = to_parry_pose(&Pose::IDENTITY);
        let mut manifolds: Vec<ContactManifold<(), ()>> = Vec::new();
        group.bench_function(format!("{name}/parry"), |b| {
            b.iter(|| {
                let mut points = 0;
                for pose in &parry_poses {
                    manifolds.clear();
                    let mut workspace = None;
                    DefaultQueryDispatcher
                        .contact_manifolds(
                            &mesh_pose.inv_mul(pose),
                            parry_mesh.as_ref(),
                            parry_shape.as_ref(),
                            MARGIN,
                            &mut manifolds,
                            &mut workspace,
                        )
                        .expect("parry supports mesh pairs");
                    points += manifolds.iter().map(|m| m.points.len()).sum::<usize>();
                }
                black_box(points)
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_trimesh);
criterion_main!(benches);

//! Convex bodies against a static 100k-triangle terrain, one thread: hullsat's
//! `collide_trimesh_shape` against parry3d 0.31's `TriMesh` (`FIX_INTERNAL_EDGES`, the same
//! ghost-contact handling) on the same pairs.
//!
//! 1. Terrain: a 224 × 224 grid of squares (100,352 triangles) over 448 × 448 length units,
//!    seeded gentle heights (±0.3 over a cell of 2).
//! 2. Bodies: [`BODIES`] boxes (half extents 0.5, 0.3, 0.4) or hull32s (32 seeded points on a
//!    sphere of radius 0.5), seeded places over the terrain, random yaw and a tilt up to 0.3 rad,
//!    each lowered onto the terrain under it ([`settle`]): [`RESTING`] of them to a depth of
//!    [`DEPTH`] (resting contact), the others hovering up to [`HOVER`] above it (a broadphase pair
//!    without contact); margin [`MARGIN`].
//! 3. Backends, criterion ids `trimesh/<shape>/<set>/<backend>`, `<set>` = `touching` (the pairs
//!    hullsat reports a manifold for) or `all` (every body): `hullsat` (one scratch reused across
//!    pairs), `parry` (`DefaultQueryDispatcher::contact_manifolds` with a fresh workspace and a
//!    cleared manifold list per pair: a cold query per pair, as hullsat's). Throughput is pairs.
//!
//! `HULLSAT_BENCH_ONCE=1` runs each backend once over each shape's `all` set without criterion,
//! for instruction counts under callgrind (`--toggle-collect=*collide_trimesh_shape*` counts
//! hullsat's calls alone); `HULLSAT_BENCH_BACKENDS` (`hullsat`, `parry`, or `none`) picks them,
//! `HULLSAT_BENCH_WORKLOADS` (`box`, `hull32`) the shapes.
//! It prints the touching count, and with `HULLSAT_BENCH_DIGEST=1` a digest of every bit of
//! hullsat's manifolds, which a pure speedup leaves unchanged.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use glam::{Quat, Vec3};
use hullsat::contact::{TriMeshScratch, collide_trimesh_shape};
use hullsat::{ConvexHull, Cuboid, Manifold, Pose, Shape, TriMesh};
use parry3d::math::Vector as PVector;
use parry3d::query::{ContactManifold, DefaultQueryDispatcher, PersistentQueryDispatcher};
use parry3d::shape::{SharedShape, TriMeshFlags};
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64;

#[path = "../tests/support/parry.rs"]
mod parry_shapes;
use parry_shapes::{to_parry_pose, to_parry_shape};

mod common;
use common::digest;

/// Bodies per workload.
const BODIES: usize = 1000;
/// Speculative margin, length units.
const MARGIN: f32 = 0.01;
/// Share of the bodies resting on the terrain; the others hover.
const RESTING: f64 = 0.8;
/// Depth of a resting body below the terrain, length units.
const DEPTH: f32 = 0.02;
/// Most height of a hovering body above the terrain, length units.
const HOVER: f32 = 0.2;
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

/// The highest terrain vertex of the cell under `(x, z)`: bodies start just above it.
fn height_under(heights: &[f32], x: f32, z: f32) -> f32 {
    let (i, j) = ((x / CELL) as usize, (z / CELL) as usize);
    let h = |i: usize, j: usize| heights[i * (CELLS + 1) + j];
    h(i, j).max(h(i + 1, j)).max(h(i, j + 1)).max(h(i + 1, j + 1))
}

/// `pose` moved along y until its distance to the terrain is `gap` (negative: a depth), by
/// parry's `contact` query (an oracle apart from both backends): a few steps along the contact
/// normal's vertical share.
fn settle(
    mesh: &dyn parry3d::shape::Shape,
    shape: &dyn parry3d::shape::Shape,
    mut pose: Pose,
    gap: f32,
) -> Pose {
    let origin = to_parry_pose(&Pose::IDENTITY);
    for _ in 0..8 {
        let Some(c) = parry3d::query::contact(&origin, mesh, &to_parry_pose(&pose), shape, 2.0)
            .expect("parry supports mesh pairs")
        else {
            break;
        };
        pose.translation.y -= f64::from((c.dist - gap) / c.normal1.y.max(0.5));
    }
    pose
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
    for (name, shape) in &shapes {
        let extent = (CELLS as f32 - 2.0) * CELL;
        let parry_shape = to_parry_shape(shape).expect("parry builds the shape");
        let mut scratch = TriMeshScratch::default();
        let poses: Vec<Pose> = (0..BODIES)
            .map(|_| {
                let (x, z) = (rng.random_range(CELL..extent), rng.random_range(CELL..extent));
                let rotation = Quat::from_rotation_y(rng.random_range(0.0..6.3))
                    * Quat::from_rotation_x(rng.random_range(-0.3..0.3));
                let gap = if rng.random_bool(RESTING) {
                    -DEPTH
                } else {
                    rng.random_range(MARGIN..HOVER)
                };
                let start = Pose::new(Vec3::new(x, height_under(&heights, x, z) + 0.6, z), rotation);
                settle(parry_mesh.as_ref(), parry_shape.as_ref(), start, gap)
            })
            .collect();
        let mesh_pose = to_parry_pose(&Pose::IDENTITY);
        let parry_manifolds = |poses: &[_], manifolds: &mut Vec<ContactManifold<(), ()>>| {
            let mut points = 0;
            let mut touching = 0;
            for pose in poses {
                manifolds.clear();
                let mut workspace = None;
                DefaultQueryDispatcher
                    .contact_manifolds(
                        &mesh_pose.inv_mul(pose),
                        parry_mesh.as_ref(),
                        parry_shape.as_ref(),
                        MARGIN,
                        manifolds,
                        &mut workspace,
                    )
                    .expect("parry supports mesh pairs");
                let here = manifolds.iter().map(|m| m.points.len()).sum::<usize>();
                touching += usize::from(here > 0);
                points += here;
            }
            (points, touching)
        };
        let mut manifolds: Vec<ContactManifold<(), ()>> = Vec::new();
        if std::env::var_os("HULLSAT_BENCH_ONCE").is_some() {
            let backends = std::env::var("HULLSAT_BENCH_BACKENDS").unwrap_or("hullsat,parry".into());
            let workloads = std::env::var("HULLSAT_BENCH_WORKLOADS").unwrap_or("box,hull32".into());
            if !workloads.split(',').any(|w| w == *name) {
                continue;
            }
            for backend in backends.split(',') {
                let found = match backend {
                    "hullsat" => {
                        let results: Vec<Option<Manifold>> = poses
                            .iter()
                            .map(|p| {
                                collide_trimesh_shape(&mesh, &Pose::IDENTITY, shape, p, MARGIN, &mut scratch)
                            })
                            .collect();
                        // The digest only when asked for: it would count in the instructions.
                        let digest = std::env::var_os("HULLSAT_BENCH_DIGEST")
                            .map(|_| format!(" (digest {:016x})", digest(&results)))
                            .unwrap_or_default();
                        format!("{}{digest}", results.iter().flatten().count())
                    }
                    "parry" => {
                        let parry_poses: Vec<_> = poses.iter().map(to_parry_pose).collect();
                        parry_manifolds(&parry_poses, &mut manifolds).1.to_string()
                    }
                    _ => continue,
                };
                eprintln!("once trimesh/{name}/all/{backend}: {found} of {BODIES} touch");
            }
            continue;
        }
        let touching: Vec<Pose> = poses
            .iter()
            .filter(|p| {
                collide_trimesh_shape(&mesh, &Pose::IDENTITY, shape, p, MARGIN, &mut scratch).is_some()
            })
            .copied()
            .collect();
        println!(
            "trimesh/{name}: {} of {BODIES} bodies touch the terrain (parry: {})",
            touching.len(),
            parry_manifolds(
                &poses.iter().map(to_parry_pose).collect::<Vec<_>>(),
                &mut manifolds
            )
            .1
        );
        for (set, poses) in [("touching", &touching), ("all", &poses)] {
            let parry_poses: Vec<_> = poses.iter().map(to_parry_pose).collect();
            group.throughput(Throughput::Elements(poses.len() as u64));
            group.bench_function(format!("{name}/{set}/hullsat"), |b| {
                b.iter(|| {
                    let mut points = 0;
                    for pose in poses {
                        let m =
                            collide_trimesh_shape(&mesh, &Pose::IDENTITY, shape, pose, MARGIN, &mut scratch);
                        points += m.map_or(0, |m| m.point_count());
                    }
                    black_box(points)
                })
            });
            group.bench_function(format!("{name}/{set}/parry"), |b| {
                b.iter(|| black_box(parry_manifolds(&parry_poses, &mut manifolds)))
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench_trimesh);
criterion_main!(benches);

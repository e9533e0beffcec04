//! Compounds, one thread: a compound of N unit-spaced small boxes in a flat square grid resting
//! on a slab box, and two such compounds crossed, against parry3d 0.31's `Compound` (`contact`,
//! its deepest child) on the same pairs. Ids `compound/<case>/<backend>`; throughput is pairs.
//! The flat-loop/BVH threshold (`COMPOUND_FLAT_CHILDREN`) was chosen from these cases.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use glam::{DVec3, Quat, Vec3};
use hullsat::contact::{CompoundScratch, collide_compound_compound, collide_compound_shape};
use hullsat::{Compound, CompoundChild, Cuboid, Isometry, Pose, Shape};
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64;

#[path = "../tests/support/parry.rs"]
mod parry_shapes;
use parry_shapes::{to_parry_pose, to_parry_shape};

/// Poses per workload.
const POSES: usize = 200;

/// `n` boxes (half extents 0.4, 0.2, 0.4) on a square grid one unit apart in x and z.
fn grid(n: usize) -> Compound {
    let side = (n as f32).sqrt().ceil() as usize;
    let children = (0..n)
        .map(|i| CompoundChild {
            shape: Shape::Cuboid(Cuboid::new(Vec3::new(0.4, 0.2, 0.4)).unwrap()),
            pose: Isometry::from_translation(Vec3::new((i % side) as f32, 0.0, (i / side) as f32)),
        })
        .collect();
    Compound::new(children).unwrap()
}

fn parry_compound(c: &Compound) -> parry3d::shape::Compound {
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

fn bench_compound(c: &mut Criterion) {
    let mut group = c.benchmark_group("compound");
    group.throughput(Throughput::Elements(POSES as u64));
    let mut rng = Pcg64::seed_from_u64(5);
    let slab = Shape::Cuboid(Cuboid::new(Vec3::new(0.6, 0.3, 0.6)).unwrap());
    let parry_slab = to_parry_shape(&slab).unwrap();
    for n in [4usize, 8, 16, 64] {
        let compound = grid(n);
        let parry = parry_compound(&compound);
        let side = (n as f32).sqrt().ceil();
        // A small box under a random spot of the grid, 0.02 deep, a slight random tilt.
        let poses: Vec<(Pose, Pose)> = (0..POSES)
            .map(|_| {
                let at = Vec3::new(
                    rng.random_range(0.0..side - 1.0),
                    -0.48,
                    rng.random_range(0.0..side - 1.0),
                );
                let tilt = Quat::from_rotation_x(rng.random_range(-0.05..0.05));
                (Pose::IDENTITY, Pose::new(at, tilt))
            })
            .collect();
        let mut scratch = CompoundScratch::default();
        group.bench_function(format!("{n}_box/hullsat"), |b| {
            b.iter(|| {
                for (pa, pb) in &poses {
                    black_box(collide_compound_shape(
                        &compound,
                        pa,
                        &slab,
                        pb,
                        0.01,
                        &mut scratch,
                    ));
                }
            })
        });
        group.bench_function(format!("{n}_box/parry"), |b| {
            b.iter(|| {
                for (pa, pb) in &poses {
                    black_box(
                        parry3d::query::contact(
                            &to_parry_pose(pa),
                            &parry,
                            &to_parry_pose(pb),
                            &*parry_slab,
                            0.01,
                        )
                        .ok(),
                    );
                }
            })
        });
        // Two grids, the second turned 45° about y and resting 0.02 deep on the first.
        let over: Vec<(Pose, Pose)> = (0..POSES)
            .map(|_| {
                let at = DVec3::new(rng.random_range(-1.0..1.0), 0.38, rng.random_range(-1.0..1.0));
                (
                    Pose::IDENTITY,
                    Pose::new(at, Quat::from_rotation_y(std::f32::consts::FRAC_PI_4)),
                )
            })
            .collect();
        group.bench_function(format!("{n}_{n}/hullsat"), |b| {
            b.iter(|| {
                for (pa, pb) in &over {
                    black_box(collide_compound_compound(
                        &compound,
                        pa,
                        &compound,
                        pb,
                        0.01,
                        &mut scratch,
                    ));
                }
            })
        });
        group.bench_function(format!("{n}_{n}/parry"), |b| {
            b.iter(|| {
                for (pa, pb) in &over {
                    black_box(
                        parry3d::query::contact(&to_parry_pose(pa), &parry, &to_parry_pose(pb), &parry, 0.01)
                            .ok(),
                    );
                }
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_compound);
criterion_main!(benches);

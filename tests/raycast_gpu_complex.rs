//! The GPU ray caster against triangle meshes and compounds, judged against the CPU caster by
//! the GPU = CPU contract for rays ([`hullsat::contract::rays`]): random rays at a flat and a
//! bumpy terrain, rays exactly through a tessellated floor's shared edges and vertices (none
//! lost), grazing rays, a mesh and compounds far from the world origin, compounds of every
//! child kind, and a mixed scene with ordinary bodies; every hit and closest. The resident API:
//! tests/raycast_gpu_resident.rs.
//!
//! Runs on whatever adapter wgpu finds (Mesa lavapipe in CI); without one the tests print a line
//! and return, unless `HULLSAT_REQUIRE_GPU=1`.

mod raycast_common;
mod support;

use glam::{DVec3, Quat, Vec3};
use hullsat::contract::rays::{RayTally, compare_ray_hits};
use hullsat::generate::terrain;
use hullsat::pose::Isometry;
use hullsat::shape::compound::{Compound, CompoundChild};
use hullsat::{Body, Capsule, CpuRaycaster, Cuboid, Cylinder, Pose, Ray, RayHit, Shape, Sphere};
use rand::RngExt;
use rand_pcg::Pcg64;
use raycast_common::{gpu_or_skip, random_rays, random_scene};
use support::seeded_rng;
use support::shapes::{Family, random_direction, random_rotation, random_shape};

/// The CPU's every-hit lists, the GPU's, and the tallies of every hit and closest.
type Cast = (Vec<Vec<RayHit>>, Vec<Vec<RayHit>>, [RayTally; 2]);

/// Casts `rays` at `bodies` on the GPU and the CPU, every hit and closest, and judges the GPU's
/// lists by the contract (panics naming the ray outside it); `None` without a GPU.
fn cast_both(shapes: &[Shape], bodies: &[Body], rays: &[Ray]) -> Option<Cast> {
    let mut gpu = gpu_or_skip(shapes)?;
    let cpu = CpuRaycaster::new(shapes);
    let mut tallies = [RayTally::default(); 2];
    let mut lists = (Vec::new(), Vec::new());
    for closest in [false, true] {
        let expected = cpu.cast(bodies, rays, closest).unwrap();
        let got = gpu.cast(bodies, rays, closest).unwrap();
        let tally = compare_ray_hits(shapes, bodies, rays, closest, &got, &expected)
            .unwrap_or_else(|e| panic!("closest {closest}: {e}"));
        eprintln!("closest {closest}: {tally:?}, {:?}", gpu.timings());
        tallies[usize::from(closest)] = tally;
        if !closest {
            lists = (expected, got);
        }
    }
    Some((lists.0, lists.1, tallies))
}

/// Rays from above a `half`-wide square around `centre`, aimed down at random into it (every
/// other one with a max distance), and as many in random directions from around it.
fn rays_at_terrain(rng: &mut Pcg64, count: usize, centre: DVec3, half: f32) -> Vec<Ray> {
    (0..count)
        .map(|i| {
            let at = Vec3::new(rng.random_range(-half..half), 0.0, rng.random_range(-half..half));
            let origin = centre + Vec3::new(at.x, rng.random_range(-2.0..4.0), at.z).as_dvec3();
            let direction = if i % 2 == 0 {
                Vec3::new(rng.random_range(-1.0..1.0), -1.0, rng.random_range(-1.0..1.0))
            } else {
                random_direction(rng)
            };
            let max = (i % 4 < 2).then(|| rng.random_range(0.0..2.0 * half));
            Ray::new(origin, direction, max).unwrap()
        })
        .collect()
}

/// Every hit list's length.
fn hit_count(lists: &[Vec<RayHit>]) -> usize {
    lists.iter().map(Vec::len).sum()
}

#[test]
fn random_rays_at_a_flat_and_a_bumpy_terrain_give_the_cpu_hits() {
    let mut rng = seeded_rng(61);
    let shapes = vec![
        Shape::from(terrain(24, 8.0, 0.0).unwrap()),
        Shape::from(terrain(24, 8.0, 1.5).unwrap()),
    ];
    let bodies = vec![
        Body {
            shape: 0,
            pose: Pose::new(Vec3::new(0.0, 0.0, 0.0), Quat::from_rotation_z(0.3)),
        },
        Body {
            shape: 1,
            pose: Pose::new(Vec3::new(20.0, 1.0, 0.0), Quat::from_rotation_y(0.7)),
        },
    ];
    let mut rays = rays_at_terrain(&mut rng, 1500, DVec3::ZERO, 8.0);
    rays.extend(rays_at_terrain(&mut rng, 1500, DVec3::new(20.0, 1.0, 0.0), 8.0));
    let Some((cpu, _, [every, closest])) = cast_both(&shapes, &bodies, &rays) else {
        return;
    };
    // Rays from below hit the back faces too: most rays aimed down hit.
    assert!(hit_count(&cpu) > rays.len() / 3, "{} hits", hit_count(&cpu));
    for tally in [every, closest] {
        assert!(tally.hits > rays.len() / 3, "{tally:?}");
        assert!(tally.ties() <= tally.hits / 100, "{tally:?}");
    }
}

#[test]
fn rays_through_shared_edges_and_vertices_of_a_floor_are_never_lost() {
    // A floor of 8 × 8 cells (1 unit each) at y = 0, tilted, and rays straight at every grid
    // vertex, every edge's midpoint and points along the edges, including the diagonals.
    let cells = 8;
    let shapes = vec![Shape::from(terrain(cells, 4.0, 0.0).unwrap())];
    let rotation = Quat::from_rotation_x(0.2) * Quat::from_rotation_z(-0.1);
    let bodies = vec![Body {
        shape: 0,
        pose: Pose::new(Vec3::new(3.0, -2.0, 1.0), rotation),
    }];
    let mut targets = Vec::new();
    for i in 1..2 * cells {
        for j in 1..2 * cells {
            // Half-cell steps inside the boundary: vertices, axis edge midpoints and cell
            // centres (on the diagonal).
            targets.push(Vec3::new(-4.0 + 0.5 * i as f32, 0.0, -4.0 + 0.5 * j as f32));
        }
    }
    for k in 1..10 {
        // Along one diagonal and one axis edge, off the half-cell steps.
        let s = k as f32 * 0.1;
        targets.push(Vec3::new(-1.0 + s, 0.0, -s));
        targets.push(Vec3::new(2.0, 0.0, -3.0 + s));
    }
    let pose = bodies[0].pose;
    let up = rotation * Vec3::Y;
    let mut rays = Vec::new();
    for target in targets {
        let world = pose.transform_point(target);
        // Straight down, and slanted both ways, from 3 units off the floor (both faces).
        for direction in [-up, -up + rotation * Vec3::new(0.3, 0.0, 0.2), up] {
            let start = world - direction.normalize().as_dvec3() * 3.0;
            rays.push(Ray::new(start, direction, None).unwrap());
        }
    }
    let Some((cpu, gpu, [every, _])) = cast_both(&shapes, &bodies, &rays) else {
        return;
    };
    for (i, (c, g)) in cpu.iter().zip(&gpu).enumerate() {
        assert_eq!(c.len(), 1, "the CPU loses ray {i} ({:?})", rays[i]);
        assert_eq!(g.len(), 1, "the GPU loses ray {i} ({:?})", rays[i]);
        assert!((g[0].distance - 3.0).abs() < 1e-4, "ray {i}: {:?}", g[0]);
    }
    assert_eq!(every.hits, rays.len(), "{every:?}");
}

#[test]
fn grazing_rays_along_a_floor_are_judged_by_the_contract() {
    let shapes = vec![Shape::from(terrain(8, 4.0, 0.0).unwrap())];
    let bodies = vec![Body {
        shape: 0,
        pose: Pose::IDENTITY,
    }];
    let mut rng = seeded_rng(62);
    let rays: Vec<Ray> = (0..400)
        .map(|i| {
            let origin = Vec3::new(rng.random_range(-6.0..6.0), 0.0, rng.random_range(-6.0..6.0));
            // In the floor's plane, or just off it at a shallow angle.
            let lift = [0.0, 1e-4, -1e-4, 1e-2][i % 4];
            let heading = rng.random_range(0.0..std::f32::consts::TAU);
            let direction = Vec3::new(heading.cos(), lift, heading.sin());
            let origin = origin + Vec3::new(0.0, -lift * 2.0 * (i % 3) as f32, 0.0);
            Ray::new(origin.as_dvec3(), direction, None).unwrap()
        })
        .collect();
    let Some((cpu, _, [every, _])) = cast_both(&shapes, &bodies, &rays) else {
        return;
    };
    assert!(hit_count(&cpu) > 50, "{} CPU hits", hit_count(&cpu));
    assert_eq!(every.rays, rays.len());
}

/// A child of `shape` at `at`, rotated.
fn child(shape: Shape, at: Vec3, rotation: Quat) -> CompoundChild {
    CompoundChild {
        shape,
        pose: Isometry {
            translation: at,
            rotation,
        },
    }
}

/// Compounds of every child kind: a hull, a box, a sphere, a capsule and a cylinder, placed
/// apart and overlapping, and one of many small boxes.
fn compounds(rng: &mut Pcg64) -> Vec<Shape> {
    let mut every_kind = Vec::new();
    for (i, shape) in [
        random_shape(rng, Family::Hull),
        Shape::Cuboid(Cuboid::new(Vec3::new(0.5, 0.3, 0.4)).unwrap()),
        Shape::Sphere(Sphere::new(0.6).unwrap()),
        Shape::Capsule(Capsule::new(0.5, 0.3).unwrap()),
        Shape::Cylinder(Cylinder::new(0.4, 0.5).unwrap()),
    ]
    .into_iter()
    .enumerate()
    {
        let at = Vec3::new(i as f32 * 0.8 - 1.6, 0.2 * (i % 2) as f32, 0.0);
        every_kind.push(child(shape, at, random_rotation(rng)));
    }
    let many = (0..40)
        .map(|i| {
            let at = Vec3::new((i % 5) as f32, (i / 5 % 4) as f32, (i / 20) as f32) * 0.5;
            child(
                Shape::Cuboid(Cuboid::new(Vec3::splat(0.2)).unwrap()),
                at,
                random_rotation(rng),
            )
        })
        .collect();
    vec![
        Shape::from(Compound::new(every_kind).unwrap()),
        Shape::from(Compound::new(many).unwrap()),
    ]
}

#[test]
fn compounds_of_every_child_kind_give_the_cpu_hits() {
    let mut rng = seeded_rng(63);
    let shapes = compounds(&mut rng);
    let bodies: Vec<Body> = (0..60)
        .map(|i| Body {
            shape: i % 2,
            pose: Pose::new(
                Vec3::new(
                    rng.random_range(0.0..12.0),
                    rng.random_range(0.0..12.0),
                    rng.random_range(0.0..12.0),
                ),
                random_rotation(&mut rng),
            ),
        })
        .collect();
    let rays = random_rays(&mut rng, 3000, 12.0, Vec3::ZERO);
    let Some((cpu, _, [every, closest])) = cast_both(&shapes, &bodies, &rays) else {
        return;
    };
    assert!(hit_count(&cpu) > rays.len() / 4, "{} hits", hit_count(&cpu));
    for tally in [every, closest] {
        assert!(tally.ties() <= tally.hits / 100, "{tally:?}");
    }
}

#[test]
fn a_mixed_scene_with_a_terrain_and_compounds_far_from_the_origin_gives_the_cpu_hits() {
    let mut rng = seeded_rng(64);
    for offset in [Vec3::ZERO, Vec3::new(1.0e6, -2.0e5, 3.0e5)] {
        let (mut shapes, mut bodies) = random_scene(&mut rng, 300, 16.0, offset);
        let first = shapes.len() as u32;
        shapes.push(Shape::from(terrain(32, 10.0, 1.0).unwrap()));
        shapes.extend(compounds(&mut rng));
        bodies.push(Body {
            shape: first,
            pose: Pose::new(offset + Vec3::new(8.0, 2.0, 8.0), random_rotation(&mut rng)),
        });
        for i in 0..30 {
            bodies.push(Body {
                shape: first + 1 + i % 2,
                pose: Pose::new(
                    offset + (Vec3::new(rng.random(), rng.random(), rng.random()) * 16.0),
                    random_rotation(&mut rng),
                ),
            });
        }
        let rays = random_rays(&mut rng, 3000, 16.0, offset);
        let Some((cpu, _, [every, closest])) = cast_both(&shapes, &bodies, &rays) else {
            return;
        };
        let complex = |b: u32| b >= bodies.len() as u32 - 31;
        let complex_hits = cpu.iter().flatten().filter(|h| complex(h.body)).count();
        assert!(
            complex_hits > rays.len() / 10,
            "{complex_hits} mesh and compound hits"
        );
        for tally in [every, closest] {
            assert!(tally.ties() <= tally.hits / 100, "offset {offset}: {tally:?}");
        }
    }
}

#[test]
fn the_contract_takes_either_triangle_or_child_through_the_entry_point_without_a_gpu() {
    // A ridge: two triangles meeting along x = 0 at 45° each side (body 0), and a compound of
    // two unit boxes side by side, meeting at x = 0 (body 1, 10 units up).
    let ridge = hullsat::TriMesh::new(
        vec![
            Vec3::new(-1.0, 0.0, -1.0),
            Vec3::new(0.0, 1.0, -1.0),
            Vec3::new(1.0, 0.0, -1.0),
            Vec3::new(-1.0, 0.0, 1.0),
            Vec3::new(0.0, 1.0, 1.0),
            Vec3::new(1.0, 0.0, 1.0),
        ],
        vec![[0, 3, 1], [1, 3, 4], [1, 4, 2], [2, 4, 5]],
    )
    .unwrap();
    let boxes = Compound::new(
        [-0.5, 0.5]
            .map(|x| {
                child(
                    Shape::Cuboid(Cuboid::new(Vec3::splat(0.5)).unwrap()),
                    Vec3::new(x, 0.0, 0.0),
                    Quat::IDENTITY,
                )
            })
            .to_vec(),
    )
    .unwrap();
    let shapes = vec![Shape::from(ridge), Shape::from(boxes)];
    let bodies = [
        Body {
            shape: 0,
            pose: Pose::IDENTITY,
        },
        Body {
            shape: 1,
            pose: Pose::new(Vec3::new(0.0, 10.0, 0.0), Quat::IDENTITY),
        },
    ];
    let cpu = CpuRaycaster::new(shapes.clone());
    // Straight down onto the ridge line, and onto the boxes' shared top edge.
    let rays = [
        Ray::new(DVec3::new(0.0, 5.0, 0.3), -Vec3::Y, Some(8.0)).unwrap(),
        Ray::new(DVec3::new(0.0, 15.0, 0.3), -Vec3::Y, None).unwrap(),
    ];
    let expected = cpu.cast(&bodies, &rays, true).unwrap();
    assert_eq!(expected.iter().map(Vec::len).sum::<usize>(), 2, "{expected:?}");
    let with_normal = |i: usize, normal: Vec3| {
        let mut lists = expected.clone();
        lists[i][0].normal = normal;
        lists
    };
    let s = std::f32::consts::FRAC_1_SQRT_2;
    let faces = [
        (0, Vec3::new(-s, s, 0.0)),
        (0, Vec3::new(s, s, 0.0)),
        (1, Vec3::Y),
        (1, Vec3::X),
        (1, -Vec3::X),
    ];
    for (i, normal) in faces {
        let judged = compare_ray_hits(&shapes, &bodies, &rays, true, &with_normal(i, normal), &expected);
        assert!(judged.is_ok(), "ray {i}, normal {normal}: {judged:?}");
    }
    // A normal of no face through the entry point.
    for (i, normal) in [(0, Vec3::Y), (1, Vec3::new(s, s, 0.0))] {
        let e = compare_ray_hits(&shapes, &bodies, &rays, true, &with_normal(i, normal), &expected)
            .expect_err("a wrong normal");
        assert_eq!(
            (e.ray, e.kind),
            (i, hullsat::contract::rays::RayDisagreementKind::Normal),
            "{e}"
        );
    }
}

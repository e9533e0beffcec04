//! The BVH built on the GPU (`GpuBvhBuilder`, through `hullsat::internals::GpuBvhProbe`), in
//! both tree layouts (the broadphase's heap tree, the rays' prefix tree), read back and judged
//! on the CPU: every body in exactly one leaf, every leaf box around its bodies' exact boxes and
//! every inner box around its children's, and rays cast through it on the CPU giving exactly
//! the hits of `CpuRaycaster::cast` (the same exact per-body casts, only the pruning differs). Scenes: random mixed shapes of awkward sizes, one body, bodies at one
//! point, bodies 1e6 from the world origin with the BVH origin near them or at zero, only
//! half-spaces, none; two builds give the same bytes, and a reused builder gives fresh builds.
//!
//! Runs on whatever adapter wgpu finds (Mesa lavapipe in CI); without one the tests print a line
//! and return, unless `HULLSAT_REQUIRE_GPU=1`.

mod raycast_common;
mod support;

use glam::{DVec3, Quat, Vec3};
use hullsat::internals::{GpuBvhProbe, HEAP_LEAF_SIZE, TreeLayout, UNBOUNDED_EXTENT, cast_through_bvh};
use hullsat::raycast::{Bvh, BvhNode, inverse_direction};
use hullsat::scene::validate_batch;
use hullsat::shape::world_aabb;
use hullsat::{Body, ConvexHull, CpuRaycaster, HalfSpace, Pose, Ray, Shape, Sphere};
use rand_pcg::Pcg64;
use raycast_common::{random_rays, random_scene};
use support::{on_shared_context_or_skip, random_rotation, seeded_rng};

/// Both tree layouts.
const LAYOUTS: [TreeLayout; 2] = [TreeLayout::Heap, TreeLayout::Prefix];

/// A probe building trees of `layout` on the shared device for `shapes`, or `None` (after
/// printing why) without an adapter unless `HULLSAT_REQUIRE_GPU=1`.
fn probe_or_skip(shapes: &[Shape], layout: TreeLayout) -> Option<GpuBvhProbe> {
    on_shared_context_or_skip("the BVH builder", |context| {
        GpuBvhProbe::new(context, shapes, layout)
    })
}

/// The GPU-built hierarchy at `origin` over `bodies` (checked), the last `apart` of the sorted
/// order left out of the tree, as a CPU [`Bvh`] (those in its unbounded list).
fn gpu_bvh(probe: &mut GpuBvhProbe, bodies: &[Body], origin: DVec3, apart: usize) -> Bvh {
    let built = probe
        .build(bodies, origin, apart as u32)
        .expect("the GPU build succeeds");
    // The sort: (code, index) keys in order, the indices each body once, the leaves in key order.
    let keys = &built.keys;
    assert!(
        keys.windows(2).all(|w| w[0] < w[1]),
        "{} keys in order",
        keys.len()
    );
    let mut seen = vec![false; bodies.len()];
    keys.iter().for_each(|&[_, body]| seen[body as usize] = true);
    assert!(seen.iter().all(|&s| s), "every body sorted once");
    assert!(built.body_list.iter().eq(keys.iter().map(|k| &k[1])));
    let mut tree_bodies = built.body_list;
    let unbounded = tree_bodies.split_off(bodies.len() - apart);
    Bvh {
        origin,
        nodes: built.nodes,
        bodies: tree_bodies,
        unbounded,
    }
}

/// True when box `inner` lies inside `outer` (closed).
fn inside(inner_min: Vec3, inner_max: Vec3, outer: &BvhNode) -> bool {
    inner_min.cmpge(outer.min.into()).all() && inner_max.cmple(outer.max.into()).all()
}

/// Panics unless `bvh` over `bodies` is well formed for `layout`: a tree from node 0 reaching
/// every node once, every body in one leaf (of at most [`HEAP_LEAF_SIZE`] in the heap tree, of
/// one in the prefix tree), each leaf box around its bodies' exact boxes (the CPU's `world_aabb`
/// in the BVH frame; half-spaces: the unbounded box), each inner box around its children's.
#[track_caller]
fn check_structure(shapes: &[Shape], bodies: &[Body], bvh: &Bvh, layout: TreeLayout, what: &str) {
    // Bodies left apart (the prefix tree's half-spaces) are each a half-space, outside the tree.
    let mut seen_bodies = vec![0u32; bodies.len()];
    for &b in &bvh.unbounded {
        let shape = &shapes[bodies[b as usize].shape as usize];
        assert!(matches!(shape, Shape::HalfSpace(_)), "{what}: body {b} apart");
        seen_bodies[b as usize] += 1;
    }
    let n = bodies.len() - bvh.unbounded.len();
    if n == 0 {
        assert!(bvh.nodes.is_empty() && bvh.bodies.is_empty(), "{what}: empty");
        assert!(seen_bodies.iter().all(|&s| s == 1), "{what}: a body apart twice");
        return;
    }
    let leaf_size = match layout {
        TreeLayout::Heap => HEAP_LEAF_SIZE as usize,
        TreeLayout::Prefix => 1,
    };
    assert_eq!(
        bvh.nodes.len(),
        2 * n.div_ceil(leaf_size) - 1,
        "{what}: node count"
    );
    let mut seen_nodes = vec![false; bvh.nodes.len()];
    let mut stack = vec![0usize];
    while let Some(k) = stack.pop() {
        assert!(!seen_nodes[k], "{what}: node {k} reached twice");
        seen_nodes[k] = true;
        let node = bvh.nodes[k];
        if node.is_leaf() {
            assert!(node.count as usize <= leaf_size, "{what}: leaf {k} too full");
            for &b in &bvh.bodies[node.first as usize..(node.first + node.count) as usize] {
                seen_bodies[b as usize] += 1;
                let body = &bodies[b as usize];
                let shape = &shapes[body.shape as usize];
                if matches!(shape, Shape::HalfSpace(_)) {
                    let huge = Vec3::splat(UNBOUNDED_EXTENT);
                    assert!(inside(-huge, huge, &node), "{what}: half-space {b} in leaf {k}");
                    continue;
                }
                let local = Pose::new(body.pose.translation - bvh.origin, body.pose.rotation);
                let exact = world_aabb(shape, &local);
                assert!(
                    inside(exact.min, exact.max, &node),
                    "{what}: body {b} {exact:?} outside leaf {k} {node:?}"
                );
            }
            continue;
        }
        for child in [node.first as usize, node.first as usize + 1] {
            let c = bvh.nodes[child];
            assert!(
                inside(c.min.into(), c.max.into(), &node),
                "{what}: child {child} outside node {k}"
            );
            stack.push(child);
        }
    }
    assert!(seen_nodes.iter().all(|&s| s), "{what}: unreachable nodes");
    assert!(
        seen_bodies.iter().all(|&s| s == 1),
        "{what}: a body missing or repeated"
    );
}

/// Panics unless rays through `bvh` (over `checked`, the bodies as `validate_batch` leaves
/// `bodies`) on the CPU give exactly `CpuRaycaster::cast`'s hits over `bodies`, with every hit
/// and with the closest; and, near the BVH origin, unless the tree of `layout` prunes about
/// as well as the CPU's.
#[track_caller]
fn check_rays(
    shapes: &[Shape],
    bodies: &[Body],
    checked: &[Body],
    (bvh, layout): (&Bvh, TreeLayout),
    rays: &[Ray],
    what: &str,
) {
    let cpu = CpuRaycaster::new(shapes);
    let mut hits = 0;
    for closest in [false, true] {
        let expected = cpu.cast(bodies, rays, closest).unwrap();
        for (i, ray) in rays.iter().enumerate() {
            let got = cast_through_bvh(shapes, checked, bvh, ray, closest);
            assert_eq!(got, expected[i], "{what}: ray {i}, closest {closest}");
            hits += got.len();
        }
    }
    assert!(hits > 0, "{what}: no ray hit anything, a weak test");
    // Pruning, counted as the nodes an every-hit walk enters: the GPU trees (Morton order)
    // may enter more than the CPU's median split; the heap tree's splits fall at body counts,
    // so a node may span far apart cells, but not many more (huge or unsorted boxes would).
    // The prefix tree's nodes each hold one Morton cell's bodies: within a quarter (seen:
    // 0.94 to 1.08 times).
    let entered = |bvh: &Bvh| rays.iter().map(|ray| entered_nodes(bvh, ray)).sum::<usize>();
    let (gpu, cpu) = (entered(bvh), entered(&Bvh::build(shapes, checked)));
    eprintln!("{what}, {layout:?}: {gpu} nodes entered in the GPU tree, {cpu} in the CPU's");
    // Far from its origin a box is padded in proportion to its coordinates (1e-5 of 1e6: 10
    // units): still correct, not selective.
    let near_origin = checked
        .iter()
        .all(|b| (b.pose.translation - bvh.origin).abs().max_element() < 1e3);
    // The CPU tests half-spaces apart; in a GPU tree that holds them every ray enters their
    // leaves and the nodes above them.
    let in_tree = half_spaces(shapes, checked) - bvh.unbounded.len();
    let allowed = match layout {
        TreeLayout::Heap => 3 * cpu + (2 * in_tree + 4) * rays.len(),
        TreeLayout::Prefix => cpu + cpu / 4 + 2 * in_tree * rays.len(),
    };
    assert!(
        !near_origin || gpu <= allowed,
        "{what}, {layout:?}: {gpu} nodes entered in the GPU tree, {cpu} in the CPU's"
    );
}

/// How many of `bodies` are half-spaces.
fn half_spaces(shapes: &[Shape], bodies: &[Body]) -> usize {
    bodies
        .iter()
        .filter(|b| matches!(shapes[b.shape as usize], Shape::HalfSpace(_)))
        .count()
}

/// The nodes of `bvh` whose boxes `ray` enters within its length, every one reached from the
/// root through entered nodes: what an every-hit walk tests and opens.
fn entered_nodes(bvh: &Bvh, ray: &Ray) -> usize {
    let origin = (ray.origin() - bvh.origin).as_vec3();
    let inverse = inverse_direction(ray.direction());
    let limit = ray.max_distance().min(f32::MAX);
    let mut stack = if bvh.nodes.is_empty() { vec![] } else { vec![0] };
    let mut count = 0;
    while let Some(k) = stack.pop() {
        let node: BvhNode = bvh.nodes[k];
        if node.entry(origin, inverse, limit).is_none() {
            continue;
        }
        count += 1;
        if !node.is_leaf() {
            stack.extend([node.first as usize, node.first as usize + 1]);
        }
    }
    count
}

/// Builds at `origin` with `probe` (building trees of `layout`), checks structure and rays, and
/// returns the hierarchy.
#[track_caller]
fn build_and_check(
    (probe, layout): (&mut GpuBvhProbe, TreeLayout),
    shapes: &[Shape],
    bodies: &[Body],
    origin: DVec3,
    rays: &[Ray],
    what: &str,
) -> Bvh {
    // The CPU caster normalizes rotations once; normalizing twice may move a last bit.
    let checked = validate_batch(shapes, bodies, &[], 0.0).unwrap();
    let bvh = gpu_bvh(probe, &checked, origin, 0);
    check_structure(shapes, &checked, &bvh, layout, what);
    if !rays.is_empty() {
        check_rays(shapes, bodies, &checked, (&bvh, layout), rays, what);
    }
    // A prefix tree with the half-spaces apart (as the GPU whole call builds it).
    let apart = half_spaces(shapes, &checked);
    if layout == TreeLayout::Prefix && apart > 0 {
        let what = format!("{what}, half-spaces apart");
        let apart = gpu_bvh(probe, &checked, origin, apart);
        check_structure(shapes, &checked, &apart, layout, &what);
        if !rays.is_empty() {
            check_rays(shapes, bodies, &checked, (&apart, layout), rays, &what);
        }
    }
    bvh
}

/// The mixed scene of the ray tests, `count` (at least 2) bodies in all: random boxes, hulls,
/// spheres and capsules, a ground half-space, and a hull whose vertices lie far from its own
/// origin; and rays through it.
fn mixed_scene(rng: &mut Pcg64, count: usize, offset: Vec3) -> (Vec<Shape>, Vec<Body>, Vec<Ray>) {
    let (mut shapes, mut bodies) = random_scene(rng, count - 2, 30.0, offset);
    // A small hull 20 units from its own origin: its local box centre is far from 0.
    let points: Vec<Vec3> = [-0.2f32, 0.2]
        .into_iter()
        .flat_map(|x| [-0.1f32, 0.1].map(move |y| (x, y)))
        .flat_map(|(x, y)| [-0.3f32, 0.3].map(move |z| Vec3::new(20.0 + x, y, z)))
        .collect();
    shapes.push(Shape::Hull(ConvexHull::from_points(&points).unwrap()));
    bodies.insert(
        count / 2,
        Body {
            shape: shapes.len() as u32 - 1,
            pose: Pose::new(offset + Vec3::new(-5.0, 15.0, 15.0), random_rotation(rng)),
        },
    );
    let rays = random_rays(rng, 400, 30.0, offset);
    (shapes, bodies, rays)
}

/// The BVH origin the CPU picks: the centre of the bounded bodies' translations.
fn centre_of(shapes: &[Shape], bodies: &[Body]) -> DVec3 {
    let (lo, hi) = bodies
        .iter()
        .filter(|b| !matches!(shapes[b.shape as usize], Shape::HalfSpace(_)))
        .fold((DVec3::INFINITY, DVec3::NEG_INFINITY), |(lo, hi), b| {
            (lo.min(b.pose.translation), hi.max(b.pose.translation))
        });
    (lo + hi) * 0.5
}

#[test]
fn random_mixed_scenes_of_awkward_sizes_cast_like_the_cpu() {
    for layout in LAYOUTS {
        let mut rng = seeded_rng(31);
        for count in [2, 4, 5, 1000, 4097] {
            // Not multiples of the leaf size nor powers of two, and small ones.
            let (shapes, bodies, rays) = mixed_scene(&mut rng, count, Vec3::ZERO);
            let Some(mut probe) = probe_or_skip(&shapes, layout) else {
                return;
            };
            let origin = centre_of(&shapes, &bodies);
            let what = format!("{} mixed bodies", bodies.len());
            build_and_check((&mut probe, layout), &shapes, &bodies, origin, &rays, &what);
            // Any origin will do: boxes are relative to it.
            let what = format!("{what}, origin zero");
            build_and_check((&mut probe, layout), &shapes, &bodies, DVec3::ZERO, &rays, &what);
        }
    }
}

#[test]
fn one_body_and_a_handful() {
    for layout in LAYOUTS {
        let mut rng = seeded_rng(32);
        let shapes = vec![Shape::Sphere(Sphere::new(0.5).unwrap())];
        let Some(mut probe) = probe_or_skip(&shapes, layout) else {
            return;
        };
        for count in [1usize, 3, 4, 5, 8, 9] {
            let bodies: Vec<Body> = (0..count)
                .map(|i| Body {
                    shape: 0,
                    pose: Pose::new(Vec3::new(i as f32 * 1.5, 0.0, 0.0), Quat::IDENTITY),
                })
                .collect();
            // Rays along the row and across each sphere.
            let mut rays = vec![Ray::new(DVec3::new(-5.0, 0.0, 0.0), Vec3::X, None).unwrap()];
            rays.extend((0..count).map(|i| {
                Ray::new(DVec3::new(i as f64 * 1.5 + 0.2, -3.0, 0.1), Vec3::Y, Some(10.0)).unwrap()
            }));
            rays.extend(random_rays(&mut rng, 50, 6.0, Vec3::splat(-1.0)));
            let bvh = build_and_check(
                (&mut probe, layout),
                &shapes,
                &bodies,
                DVec3::ZERO,
                &rays,
                &format!("{count} spheres"),
            );
            if count == 1 {
                assert_eq!(bvh.nodes.len(), 1);
                assert_eq!(bvh.bodies, vec![0]);
            }
        }
    }
}

#[test]
fn bodies_at_one_point() {
    for layout in LAYOUTS {
        let mut rng = seeded_rng(33);
        let (shapes, _) = random_scene(&mut rng, 0, 1.0, Vec3::ZERO);
        let Some(mut probe) = probe_or_skip(&shapes, layout) else {
            return;
        };
        let point = Vec3::new(3.0, 2.0, -1.0);
        let bodies: Vec<Body> = (0..300)
            .map(|i| Body {
                shape: (i % (shapes.len() - 1)) as u32,
                pose: Pose::new(point, random_rotation(&mut rng)),
            })
            .collect();
        let rays = random_rays(&mut rng, 100, 4.0, point - 2.0);
        for (origin, what) in [
            (point.as_dvec3(), "300 bodies at one point"),
            (DVec3::ZERO, "300 at one point, origin 0"),
        ] {
            build_and_check((&mut probe, layout), &shapes, &bodies, origin, &rays, what);
        }
    }
}

#[test]
fn far_from_the_world_origin() {
    for layout in LAYOUTS {
        let mut rng = seeded_rng(34);
        let offset = Vec3::new(1.0e6, -2.0e5, 1.0e6);
        let (shapes, bodies, rays) = mixed_scene(&mut rng, 1000, offset);
        let Some(mut probe) = probe_or_skip(&shapes, layout) else {
            return;
        };
        let near = offset.as_dvec3() + DVec3::new(15.3, 14.9, 15.1);
        // At the world origin the boxes are 1e6 long coordinates: padded by ~10 units each, still
        // correct (the exact casts decide), only less selective.
        for (origin, what) in [
            (near, "1e6 away, origin near"),
            (DVec3::ZERO, "1e6 away, origin zero"),
        ] {
            build_and_check((&mut probe, layout), &shapes, &bodies, origin, &rays, what);
        }
    }
}

#[test]
fn only_half_spaces_and_no_bodies() {
    for layout in LAYOUTS {
        let shapes = vec![
            Shape::HalfSpace(HalfSpace::new(Vec3::Y, 0.0).unwrap()),
            Shape::HalfSpace(HalfSpace::new(Vec3::new(1.0, 1.0, 0.0).normalize(), 2.0).unwrap()),
        ];
        let Some(mut probe) = probe_or_skip(&shapes, layout) else {
            return;
        };
        let bodies: Vec<Body> = (0..6)
            .map(|i| Body {
                shape: i % 2,
                pose: Pose::from_translation(Vec3::new(i as f32, -(i as f32), 0.5)),
            })
            .collect();
        // The last one grazes the ground, hitting it 5e8 away: inside the half-space's finite box.
        let grazing = Vec3::new(1.0, -1.0e-8, 0.0).normalize();
        let rays: Vec<Ray> = [
            Vec3::NEG_Y,
            Vec3::X,
            Vec3::new(0.3, -0.9, 0.1).normalize(),
            grazing,
        ]
        .iter()
        .map(|&d| Ray::new(DVec3::new(0.0, 5.0, 0.0), d, None).unwrap())
        .collect();
        build_and_check(
            (&mut probe, layout),
            &shapes,
            &bodies,
            DVec3::ZERO,
            &rays,
            "6 half-spaces",
        );
        let bvh = build_and_check((&mut probe, layout), &shapes, &[], DVec3::ZERO, &[], "no bodies");
        assert!(bvh.nodes.is_empty());
    }
}

#[test]
fn builds_are_deterministic_and_a_reused_builder_matches_fresh_ones() {
    for layout in LAYOUTS {
        let mut rng = seeded_rng(35);
        let (shapes, bodies, _) = mixed_scene(&mut rng, 4097, Vec3::new(-10.0, 0.0, 5.0));
        let bodies = validate_batch(&shapes, &bodies, &[], 0.0).unwrap();
        let Some(mut probe) = probe_or_skip(&shapes, layout) else {
            return;
        };
        let origin = centre_of(&shapes, &bodies);
        let first = probe.build(&bodies, origin, 0).unwrap();
        let second = probe.build(&bodies, origin, 0).unwrap();
        assert_eq!(
            bytemuck::cast_slice::<BvhNode, u8>(&first.nodes),
            bytemuck::cast_slice::<BvhNode, u8>(&second.nodes)
        );
        assert_eq!(first.body_list, second.body_list);
        assert_eq!(first.keys, second.keys);
        // Shrinking then growing again through the same builder gives what a fresh one gives.
        for count in [5, 1000, 17, 4097] {
            let fresh = probe_or_skip(&shapes, layout)
                .unwrap()
                .build(&bodies[..count], origin, 0)
                .unwrap();
            let reused = probe.build(&bodies[..count], origin, 0).unwrap();
            assert_eq!(
                (reused.nodes, reused.body_list, reused.keys),
                (fresh.nodes, fresh.body_list, fresh.keys),
                "{count} bodies"
            );
        }
    }
}

/// `count` bodies of the mixed shapes (the last a half-space), every other one at one point
/// (many identical Morton codes, ties broken by index), the rest scattered over 30 units.
fn clumped_scene(rng: &mut Pcg64, count: usize) -> (Vec<Shape>, Vec<Body>) {
    let (shapes, scattered) = random_scene(rng, count - 1, 30.0, Vec3::ZERO);
    let point = Vec3::new(3.0, 2.0, -1.0);
    let bodies = scattered
        .into_iter()
        .enumerate()
        .map(|(i, body)| match i % 2 {
            0 => Body {
                pose: Pose::new(point, body.pose.rotation),
                ..body
            },
            _ => body,
        })
        .collect();
    (shapes, bodies)
}

#[test]
fn sorted_keys_on_awkward_sizes_and_many_equal_codes() {
    for layout in LAYOUTS {
        let mut rng = seeded_rng(37);
        for count in [1, 2, 511, 512, 513, 4097, 70_000] {
            let (shapes, bodies) = clumped_scene(&mut rng, count);
            let Some(mut probe) = probe_or_skip(&shapes, layout) else {
                return;
            };
            let what = format!("{count} bodies, half at one point");
            let bvh = build_and_check((&mut probe, layout), &shapes, &bodies, DVec3::ZERO, &[], &what);
            assert_eq!(bvh.bodies.len(), count, "{what}");
        }
    }
}

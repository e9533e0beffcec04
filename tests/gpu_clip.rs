//! GPU clipping (`Clipping::Gpu`, clip.wgsl) on faces around the kernel's polygon buffer size:
//! prisms resting face on face, clipped on the GPU when both faces fit the buffer together and
//! on the host when they do not, equal to the CPU either way; and the pairs whose face clip
//! keeps no point, which the kernel finishes as the CPU does (its steps 7a and 7b: the retry on
//! the deepest axis, the deepest-vertex fallback). The random families are compared in
//! tests/gpu_equivalence.rs under both clippings.

mod support;

use std::f32::consts::TAU;

use glam::{Quat, Vec3};
use hullsat::contact::collide_hull_hull;
use hullsat::contract::compare_pair;
use hullsat::narrowphase::gpu::Clipping;
use hullsat::narrowphase::gpu::layout::MAX_GPU_CLIP_VERTICES;
use hullsat::query::sat::{SatAxis, query_hulls};
use hullsat::{Body, ConvexHull, CpuNarrowphase, Manifold, Pose, Shape};
use rand::RngExt;
use support::analytic::{Case, assert_distinct_points, global_pose, tiny_box_at_a_corner};
use support::clip_paths::{ClipPath, cpu_clip_path, knife_in_slab};
use support::shapes::{Family, random_direction, random_rotation, random_shape};
use support::{gpu_or_skip, random_pose, seeded_rng};

/// A prism of a regular `sides`-gon of circumradius 1 in the xz plane, y from -0.25 to 0.25.
fn prism(sides: usize) -> ConvexHull {
    let points: Vec<Vec3> = (0..sides)
        .flat_map(|k| {
            let angle = TAU * k as f32 / sides as f32;
            let (x, z) = (angle.cos(), angle.sin());
            [Vec3::new(x, -0.25, z), Vec3::new(x, 0.25, z)]
        })
        .collect();
    ConvexHull::from_points(&points).expect("a prism")
}

/// Prism B resting on prism A (sunk 0.01), turned about y by `turn` and shifted sideways, both
/// placed by one global rigid motion; checks the GPU manifold against the CPU's by the GPU = CPU
/// contract and returns both, with the GPU's host-pair count.
fn stacked_prisms(sides: usize, turn: f32, clipping: Clipping) -> Option<(Manifold, usize, Manifold)> {
    let shapes = vec![Shape::Hull(prism(sides))];
    let mut gpu = gpu_or_skip(&shapes)?;
    gpu.set_clipping(clipping)
        .expect("the shared device runs the clip kernel");
    let global = Pose::new(
        Vec3::new(3.0, -1.0, 2.0),
        Quat::from_axis_angle(Vec3::new(1.0, 2.0, 3.0).normalize(), 0.4),
    );
    let on_top = Pose::new(Vec3::new(0.2, 0.49, -0.1), Quat::from_rotation_y(turn));
    let bodies = [
        Body {
            shape: 0,
            pose: global,
        },
        Body {
            shape: 0,
            pose: global.mul_pose(&on_top),
        },
    ];
    let gpu_manifold = gpu.collide(&bodies, &[[0, 1]], 0.0).expect("GPU collide runs")[0];
    let host_pairs = gpu.timings().host_pairs;
    let cpu_manifold = CpuNarrowphase::new(shapes.clone())
        .collide(&bodies, &[[0, 1]], 0.0)
        .expect("CPU collide runs")[0];
    compare_pair(
        &shapes,
        &bodies,
        [0, 1],
        0.0,
        gpu_manifold.as_ref(),
        cpu_manifold.as_ref(),
    )
    .unwrap_or_else(|e| panic!("{sides}-gon prisms turned by {turn}: {e}"));
    Some((
        gpu_manifold.expect("the prisms overlap"),
        host_pairs,
        cpu_manifold.expect("the prisms overlap"),
    ))
}

/// Case `case`'s GPU manifold `g` against the CPU's `c` at `margin` by the GPU = CPU contract.
#[track_caller]
fn assert_same_manifold(case: &Case, margin: f32, g: &Manifold, c: &Manifold) {
    let shapes = [Shape::Hull(case.a.clone()), Shape::Hull(case.b.clone())];
    let bodies = [
        Body {
            shape: 0,
            pose: case.pose_a,
        },
        Body {
            shape: 1,
            pose: case.pose_b,
        },
    ];
    compare_pair(&shapes, &bodies, [0, 1], margin, Some(g), Some(c)).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn prism_faces_that_fit_the_buffer_are_clipped_on_the_gpu_and_equal_the_cpu() {
    let sides = MAX_GPU_CLIP_VERTICES as usize / 2;
    for turn in [0.1, 0.37, 1.0] {
        let Some((gpu, host_pairs, _)) = stacked_prisms(sides, turn, Clipping::Gpu) else {
            return;
        };
        assert_eq!(host_pairs, 0, "{sides}-gon faces fit the kernel's buffer");
        // Two overlapping 16-gons clip to many points; four are kept, all at depth 0.01.
        assert_eq!(gpu.point_count(), 4, "{gpu:?}");
        for p in gpu.points() {
            assert!((p.depth - 0.01).abs() <= 1e-4, "{p:?}");
        }
    }
}

#[test]
fn a_64_gon_prism_face_on_face_is_clipped_on_the_host_and_equals_the_cpu() {
    for clipping in [Clipping::Gpu, Clipping::Cpu] {
        let Some((gpu, host_pairs, cpu)) = stacked_prisms(64, 0.37, clipping) else {
            return;
        };
        if clipping == Clipping::Gpu {
            assert_eq!(host_pairs, 1, "64 + 64 vertices exceed the kernel's buffer");
        }
        assert_eq!(gpu.point_count(), 4, "{gpu:?}");
        assert_eq!(cpu.point_count(), 4, "{cpu:?}");
    }
}

#[test]
fn clipping_split_into_many_dispatch_chunks_equals_one_chunk_bit_for_bit() {
    use hullsat::GpuNarrowphase;
    use rand::RngExt;
    use support::{device_or_skip, random_pose, seeded_rng};
    // 64 KiB bindings: 512 pairs per chunk (112-byte manifolds), so 3,000 pairs take 6 chunks,
    // each bound at its own offsets with its own parameters.
    let limits = wgpu::Limits {
        max_storage_buffer_binding_size: 1 << 16,
        max_storage_buffers_per_shader_stage: 9,
        ..wgpu::Limits::default()
    };
    let Some((device, queue)) = device_or_skip(limits) else {
        return;
    };
    let mut rng = seeded_rng(0xc1_1b5);
    let shapes: Vec<Shape> = (0..8)
        .map(|_| {
            let e = Vec3::new(
                rng.random_range(0.2..0.6),
                rng.random_range(0.2..0.6),
                rng.random_range(0.2..0.6),
            );
            Shape::Hull(ConvexHull::cuboid(e))
        })
        .collect();
    // 600 bodies (they must fit one 64 KiB binding) along a wobbly line, 0.5 apart, each paired
    // with its next five: near neighbours touch, far ones do not.
    let bodies: Vec<Body> = (0..600)
        .map(|i| Body {
            shape: rng.random_range(0..8),
            pose: Pose::new(
                Vec3::new(0.5 * i as f32, 0.0, 0.0).as_dvec3() + random_pose(&mut rng, 0.2).translation,
                random_pose(&mut rng, 0.0).rotation,
            ),
        })
        .collect();
    let pairs: Vec<[u32; 2]> = (0..600u32)
        .flat_map(|i| (1..=5).map(move |d| [i, (i + d) % 600]))
        .collect();
    let mut chunked = GpuNarrowphase::with_device(device, queue, &shapes).expect("narrowphase");
    chunked
        .set_clipping(Clipping::Gpu)
        .expect("9 storage buffers requested");
    let mut whole = gpu_or_skip(&shapes).expect("the adapter exists");
    for margin in [0.0, 0.05] {
        let a = chunked.collide(&bodies, &pairs, margin).expect("chunked collide");
        let b = whole.collide(&bodies, &pairs, margin).expect("one-chunk collide");
        assert_eq!(a, b, "margin {margin}");
        let touching = a.iter().flatten().count();
        assert!(touching > 300 && touching < 2_700, "{touching} of 3000 touch");
        let cpu = CpuNarrowphase::new(shapes.clone())
            .collide(&bodies, &pairs, margin)
            .expect("CPU collide");
        let agree = a
            .iter()
            .zip(&cpu)
            .filter(|(g, c)| g.is_some() == c.is_some())
            .count();
        assert!(agree >= 2_990, "{agree} of 3000 verdicts agree with the CPU");
    }
}

#[test]
fn a_batch_of_several_pipelined_rounds_equals_its_repeated_configurations() {
    use rand::RngExt;
    use support::{random_pose, seeded_rng};
    // 600,000 pairs run as three rounds of 262,144 (each staged while the previous one is on
    // the GPU, and read back while the next one is). Pair i repeats configuration i % 997 (a
    // prime, so round boundaries fall mid-cycle): it must equal that configuration's first
    // occurrence bit for bit, and the configurations must have the CPU's verdicts.
    const CONFIGS: usize = 997;
    const PAIRS: usize = 600_000;
    let mut rng = seeded_rng(0x919e);
    let shapes = vec![
        Shape::Hull(ConvexHull::cuboid(Vec3::splat(0.3))),
        Shape::Hull(ConvexHull::cuboid(Vec3::new(0.5, 0.2, 0.3))),
    ];
    let mut bodies = Vec::new();
    let mut config_pairs = Vec::new();
    for k in 0..CONFIGS as u32 {
        let a = random_pose(&mut rng, 0.0);
        // One in five close enough to touch; the others apart (cheap on lavapipe).
        let reach = if k % 5 == 0 { 0.6 } else { 3.0 };
        let offset = random_pose(&mut rng, reach).translation;
        let b = Pose::new(a.translation + offset, random_pose(&mut rng, 0.0).rotation);
        bodies.push(Body {
            shape: rng.random_range(0..2),
            pose: a,
        });
        bodies.push(Body {
            shape: rng.random_range(0..2),
            pose: b,
        });
        config_pairs.push([2 * k, 2 * k + 1]);
    }
    let pairs: Vec<[u32; 2]> = (0..PAIRS).map(|i| config_pairs[i % CONFIGS]).collect();
    let Some(mut gpu) = gpu_or_skip(&shapes) else {
        return;
    };
    gpu.set_clipping(Clipping::Gpu)
        .expect("the shared device runs the clip kernel");
    let results = gpu.collide(&bodies, &pairs, 0.01).expect("GPU collide runs");
    assert_eq!(results.len(), PAIRS);
    for (i, result) in results.iter().enumerate() {
        assert_eq!(
            result,
            &results[i % CONFIGS],
            "pairs[{i}] differs from pairs[{}]",
            i % CONFIGS
        );
    }
    let cpu = CpuNarrowphase::new(shapes)
        .collide(&bodies, &config_pairs, 0.01)
        .expect("CPU collide");
    let touching = cpu.iter().flatten().count();
    assert!(touching > 50, "{touching} configurations touch");
    let agree = cpu
        .iter()
        .zip(&results)
        .filter(|(c, g)| c.is_some() == g.is_some())
        .count();
    assert!(
        agree >= CONFIGS - 5,
        "{agree} of {CONFIGS} verdicts agree with the CPU"
    );
}

/// The tiny box at the slab's corner (support::analytic): a contact region smaller than the
/// reduction's tie tolerance, where the picks repeat; the GPU keeps each point once, as the CPU.
#[test]
fn a_contact_smaller_than_the_tie_tolerance_holds_each_point_once_on_the_gpu() {
    let cases: Vec<_> = (0..200)
        .map(|k| tiny_box_at_a_corner(0.1 + k as f32 * 0.01))
        .collect();
    let shapes = vec![Shape::Hull(cases[0].a.clone()), Shape::Hull(cases[0].b.clone())];
    let Some(mut gpu) = gpu_or_skip(&shapes) else {
        return;
    };
    let bodies: Vec<Body> = cases
        .iter()
        .flat_map(|c| {
            [
                Body {
                    shape: 0,
                    pose: c.pose_a,
                },
                Body {
                    shape: 1,
                    pose: c.pose_b,
                },
            ]
        })
        .collect();
    let pairs: Vec<[u32; 2]> = (0..cases.len() as u32).map(|k| [2 * k, 2 * k + 1]).collect();
    let on_gpu = gpu.collide(&bodies, &pairs, 0.0).expect("GPU collide runs");
    assert_eq!(gpu.timings().host_pairs, 0, "every pair clipped on the GPU");
    let on_cpu = CpuNarrowphase::new(shapes)
        .collide(&bodies, &pairs, 0.0)
        .expect("CPU collide runs");
    for (case, (g, c)) in cases.iter().zip(on_gpu.iter().zip(&on_cpu)) {
        let (g, c) = (g.expect("overlap"), c.expect("overlap"));
        assert_distinct_points(&g);
        assert_same_manifold(case, 0.0, &g, &c);
    }
}

/// What one margin gave in [`gpu_and_cpu`]: the GPU's manifolds (GPU clipping), its host-pair
/// count, the CPU's manifolds.
type Compared = (Vec<Option<Manifold>>, usize, Vec<Option<Manifold>>);

/// Each case (hull `a` at `pose_a`, hull `b` at `pose_b`) through the GPU with GPU clipping and
/// through the CPU, at each of `margins`; `None` as for [`gpu_or_skip`].
fn gpu_and_cpu(cases: &[Case], margins: &[f32]) -> Option<Vec<Compared>> {
    let shapes: Vec<Shape> = cases
        .iter()
        .flat_map(|c| [Shape::Hull(c.a.clone()), Shape::Hull(c.b.clone())])
        .collect();
    let mut gpu = gpu_or_skip(&shapes)?;
    gpu.set_clipping(Clipping::Gpu)
        .expect("the shared device runs the clip kernel");
    let cpu = CpuNarrowphase::new(shapes);
    let bodies: Vec<Body> = cases
        .iter()
        .enumerate()
        .flat_map(|(k, c)| {
            [
                Body {
                    shape: 2 * k as u32,
                    pose: c.pose_a,
                },
                Body {
                    shape: 2 * k as u32 + 1,
                    pose: c.pose_b,
                },
            ]
        })
        .collect();
    let pairs: Vec<[u32; 2]> = (0..cases.len() as u32).map(|k| [2 * k, 2 * k + 1]).collect();
    let compared = margins
        .iter()
        .map(|&margin| {
            let on_gpu = gpu.collide(&bodies, &pairs, margin).expect("GPU collide runs");
            let host_pairs = gpu.timings().host_pairs;
            // A small call of hulls: the per-group clip, whose lanes made every search it
            // needed, the retries' included (speed only; the bits are the same either way).
            assert_eq!(gpu.timings().incident_searches_alone, 0, "margin {margin}");
            let on_cpu = cpu.collide(&bodies, &pairs, margin).expect("CPU collide runs");
            (on_gpu, host_pairs, on_cpu)
        })
        .collect();
    Some(compared)
}

/// clip.wgsl step 7b: a knife-edge hull's low end in a slab (support::clip_paths), where no
/// clip keeps a point and there is no deeper axis to retry on, at three depths, from either
/// side, anywhere in space, within and without a margin: the CPU takes the deepest-vertex
/// fallback, and the GPU finishes every pair itself (it used to leave them to the host) with
/// the CPU's manifold.
#[test]
fn the_deepest_vertex_fallback_runs_on_the_gpu_and_equals_the_cpu() {
    let mut cases = Vec::new();
    for depth in [0.005, 0.02, 0.05] {
        for global in [Pose::IDENTITY, global_pose()] {
            let case = knife_in_slab(depth).placed(&global);
            cases.push(case.swapped());
            cases.push(case);
        }
    }
    let margins = [0.0, 0.02];
    let Some(compared) = gpu_and_cpu(&cases, &margins) else {
        return;
    };
    for (margin, (on_gpu, host_pairs, on_cpu)) in margins.into_iter().zip(compared) {
        assert_eq!(host_pairs, 0, "margin {margin}: every pair finished on the GPU");
        for ((case, g), c) in cases.iter().zip(&on_gpu).zip(&on_cpu) {
            let (g, c) = (g.expect("GPU: in contact"), c.expect("CPU: in contact"));
            assert_eq!(
                cpu_clip_path(&case.a, &case.pose_a, &case.b, &case.pose_b, margin, &c),
                ClipPath::Fallback,
                "{c:?}"
            );
            assert_same_manifold(case, margin, &g, &c);
        }
    }
}

/// Pairs sampled by [`retries_on_the_deepest_axis_run_on_the_gpu_and_equal_the_cpu`]'s
/// search at most.
const SEARCHED_PAIRS: usize = 600_000;

/// clip.wgsl step 7a, and 7b after a retry that keeps nothing: random hulls and needles
/// (support::shapes) posed to touch along the SAT's axis and pushed up to 2% of their scale
/// into each other, searched (seeded) for pairs the CPU finishes by the retry on the deepest
/// axis, an edge pair or a face of B (a face of A is never deeper than the face-preferred one),
/// or by the deepest-vertex fallback after a retry. The GPU finishes every one of them itself
/// (it used to leave them to the host) with the CPU's manifold: the deepest axis's normal,
/// points, ids and depths.
#[test]
fn retries_on_the_deepest_axis_run_on_the_gpu_and_equal_the_cpu() {
    let mut rng = seeded_rng(0x7e7a1);
    let library: Vec<ConvexHull> = (0..32)
        .map(|i| {
            let family = [Family::Hull, Family::Needle][i % 2];
            random_shape(&mut rng, family).as_hull().expect("a hull").clone()
        })
        .collect();
    let (mut edges, mut faces, mut after_retries, mut fallbacks) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut searched = 0;
    let start = std::time::Instant::now();
    while searched < SEARCHED_PAIRS && (edges.len() < 40 || faces.len() < 4 || fallbacks.len() < 8) {
        searched += 1;
        let (a, b) = (
            &library[rng.random_range(0..library.len())],
            &library[rng.random_range(0..library.len())],
        );
        let pose_a = Pose::new(random_pose(&mut rng, 10.0).translation, random_rotation(&mut rng));
        let mut pose_b = Pose::new(
            pose_a.translation + random_direction(&mut rng).as_dvec3(),
            random_rotation(&mut rng),
        );
        let sat = query_hulls(a, b, &pose_a.relative_to_self(&pose_b), f32::INFINITY);
        let depth = rng.random_range(0.0..0.02) * (a.radius() + b.radius());
        pose_b.translation -= (pose_a.transform_vector(sat.normal) * (sat.separation + depth)).as_dvec3();
        let Some(m) = collide_hull_hull(a, &pose_a, b, &pose_b, 0.0) else {
            continue;
        };
        let sat = query_hulls(a, b, &pose_a.relative_to_self(&pose_b), 0.0);
        let found = match cpu_clip_path(a, &pose_a, b, &pose_b, 0.0, &m) {
            ClipPath::Retry(SatAxis::EdgePair { .. }) if edges.len() < 40 => &mut edges,
            ClipPath::Retry(SatAxis::FaceB(_)) => &mut faces,
            ClipPath::Fallback if sat.axis_separation < sat.separation => &mut after_retries,
            ClipPath::Fallback if fallbacks.len() < 8 => &mut fallbacks,
            _ => continue,
        };
        found.push(Case {
            a: a.clone(),
            pose_a,
            b: b.clone(),
            pose_b,
        });
    }
    eprintln!(
        "{searched} pairs searched in {:?}: {} retries on an edge pair, {} on a face of B, {} fallbacks after a retry, {} without",
        start.elapsed(),
        edges.len(),
        faces.len(),
        after_retries.len(),
        fallbacks.len()
    );
    assert!(
        edges.len() == 40 && faces.len() >= 4 && fallbacks.len() == 8,
        "the search finds every way"
    );
    let cases: Vec<Case> = [edges, faces, after_retries, fallbacks]
        .into_iter()
        .flatten()
        .collect();
    let Some(compared) = gpu_and_cpu(&cases, &[0.0]) else {
        return;
    };
    let (on_gpu, host_pairs, on_cpu) = &compared[0];
    assert_eq!(*host_pairs, 0, "every pair finished on the GPU");
    for ((case, g), c) in cases.iter().zip(on_gpu).zip(on_cpu) {
        let (g, c) = (g.expect("GPU: in contact"), c.expect("CPU: in contact"));
        assert_same_manifold(case, 0.0, &g, &c);
    }
}

/// After the SAT's one workgroup per pair the clip kernel runs a few invocations per pair
/// (clip.wgsl `main_pair_per_group`: the pair's lanes search the incident faces, its lane 0
/// clips), and returns what one pair per invocation returns, bit for bit: the same pairs alone
/// (a small call of big hulls: one workgroup per pair) and repeated past
/// `PAIR_PER_WORKGROUP_PAIRS` (one pair per invocation), margins 0 and 0.05. Hulls of the test
/// families and of 32 to 64 points, prisms whose faces clip polygons of 8 to 16 sides, boxes,
/// slabs, needles and a sphere and a capsule (their pairs take primitives.wgsl beside the
/// hull pairs of their workgroup), placed to overlap deeply or barely, or to lie apart within
/// the margin (GJK's step), so that the fallback (7b) runs too. The retry on the deepest axis
/// (7a, the group's second search) runs on a face axis in
/// `retries_on_the_deepest_axis_run_on_the_gpu_and_equal_the_cpu` (one pair: one workgroup per
/// pair, so the per-group clip), not here. Bits, not the contract, on any device that compiles
/// the plan's search direction and `clip_pair`'s alike: a found face is used for the axis (its
/// kind and reference face) the serial search would run along, and both searches compare the
/// same `face_dot` and tolerance (docs/design/gpu-narrowphase.md, "The clip after it"). No
/// search runs on one lane (`GpuTimings::incident_searches_alone`): with the bits the same
/// either way, that count alone says the lanes' searches are used.
#[test]
fn a_few_invocations_per_pair_clip_the_bits_of_one_per_invocation() {
    use hullsat::internals::{PAIR_PER_WORKGROUP_PAIRS, SatMapping, sat_mapping};
    use hullsat::{Capsule, Sphere};
    use support::shapes::FAMILIES;
    let mut rng = seeded_rng(0x0c11_b9e0);
    let mut shapes: Vec<Shape> = (0..12).map(|i| random_shape(&mut rng, FAMILIES[i % 4])).collect();
    for count in [32, 48, 64] {
        let points = support::shapes::random_hull_points(&mut rng, count, Vec3::new(0.9, 0.6, 0.8));
        shapes.push(Shape::Hull(ConvexHull::from_points(&points).expect("a hull")));
    }
    shapes.extend([8, 16].map(|sides| Shape::Hull(prism(sides))));
    shapes.push(Shape::Sphere(Sphere::new(0.5).unwrap()));
    shapes.push(Shape::Capsule(Capsule::new(0.6, 0.25).unwrap()));
    let Some(mut gpu) = gpu_or_skip(&shapes) else {
        return;
    };
    // 1,500 bodies in a box of side 6 and 3,000 pairs of near ones.
    let bodies: Vec<Body> = (0..1_500)
        .map(|_| Body {
            shape: rng.random_range(0..shapes.len() as u32),
            pose: random_pose(&mut rng, 3.0),
        })
        .collect();
    let mut pairs = Vec::new();
    while pairs.len() < 3_000 {
        let [a, b] = [0, 1].map(|_| rng.random_range(0..1_500u32));
        let gap = bodies[a as usize].pose.translation - bodies[b as usize].pose.translation;
        if a != b && gap.length() < 2.0 {
            pairs.push([a, b]);
        }
    }
    let repeats = (PAIR_PER_WORKGROUP_PAIRS as usize).div_ceil(pairs.len());
    let repeated = pairs.repeat(repeats);
    assert_eq!(sat_mapping(&gpu, &bodies, &pairs), SatMapping::PerWorkgroup);
    assert!(matches!(
        sat_mapping(&gpu, &bodies, &repeated),
        SatMapping::PerInvocation { .. }
    ));
    for margin in [0.0, 0.05] {
        let grouped = gpu.collide(&bodies, &pairs, margin).expect("small collide");
        let host_pairs = gpu.timings().host_pairs;
        // Every incident face clip_pair needed, the lanes had found: none searched alone (the
        // same bits either way, so only this count says the sharing works).
        assert_eq!(gpu.timings().incident_searches_alone, 0, "margin {margin}");
        let per_invocation = gpu.collide(&bodies, &repeated, margin).expect("repeated collide");
        assert_eq!(
            gpu.timings().incident_searches_alone,
            0,
            "one per invocation counts none"
        );
        // The same pairs go to the host (GJK's direction too uncertain in f32, needles and
        // slabs apart within the margin), and few.
        assert_eq!(gpu.timings().host_pairs, repeats * host_pairs, "margin {margin}");
        assert!(host_pairs < 100, "{host_pairs} pairs left to the host");
        for (i, (g, p)) in grouped.iter().zip(&per_invocation).enumerate() {
            assert_eq!(g, p, "margin {margin}, pair {i} {:?}", pairs[i]);
        }
        let touching = grouped.iter().flatten().count();
        assert!(touching > 1_000 && touching < 2_900, "{touching} of 3000 touch");
    }
}

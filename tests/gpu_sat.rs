//! The GPU SAT (`GpuNarrowphase::sat`) against the CPU reference (`query::sat::query_hulls`, or
//! `query::sat_box_box::query_boxes` for two boxes, as the CPU narrowphase runs them).
//!
//! Runs on whatever adapter wgpu finds (Mesa lavapipe in CI); without one the tests print a line
//! and return, unless `HULLSAT_REQUIRE_GPU=1`.

mod support;

use glam::{Quat, Vec3};
use hullsat::contract::sat::{SatTally, axis_separation, compare_sat};
use hullsat::internals::{
    COOP_EDGE_PAIRS, GpuParams, HullTables, PAIR_PER_WORKGROUP_PAIRS, PAIR_PER_WORKGROUP_SPLIT_SHARE,
    SPLIT_EDGE_PAIRS, SatMapping, WORKGROUP_SIZE, sat_mapping,
};
use hullsat::narrowphase::gpu::layout::{GpuBody, GpuSatResult};
use hullsat::narrowphase::gpu::{SAT_SUBGROUP_WGSL, SAT_WGSL};
use hullsat::query::sat::{SatAxis, SatResult, query_hulls, query_hulls_preferring_faces_by};
use hullsat::query::sat_box_box::query_boxes;
use hullsat::scene::validate_batch;
use hullsat::{
    Body, Capsule, ConvexHull, Cuboid, GpuError, GpuNarrowphase, HalfSpace, Pose, Shape, Sphere,
    ValidatedBatch,
};
use rand::RngExt;
use rand_pcg::Pcg64;
use support::{
    device_or_skip, gpu_or_skip, random_direction, random_half_extents, random_rotation, seeded_rng,
};

/// Distances, as fractions of the bounding radii's sum, that give a mix of penetrating, touching
/// and separated pairs.
const CONTACT_REACH: std::ops::Range<f32> = 0.2..1.0;

/// Bodies and pairs that place two shapes near each other, for random `shapes` (all hulls or
/// boxes): A anywhere in a 20-unit cube, B at a random direction and a distance of `reach`
/// (a range of fractions of the sum of the bounding radii; below 1 they may touch). One pair in
/// five uses identity rotations and an axis-aligned offset (exact face-face ties).
fn random_pairs(
    rng: &mut Pcg64,
    shapes: &[Shape],
    count: usize,
    reach: std::ops::Range<f32>,
) -> (Vec<Body>, Vec<[u32; 2]>) {
    let mut bodies = Vec::with_capacity(2 * count);
    let mut pairs = Vec::with_capacity(count);
    for _ in 0..count {
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
        let distance = radii * rng.random_range(reach.clone());
        let (rotation_a, rotation_b, direction) = if rng.random_range(0..5) == 0 {
            let axis = [Vec3::X, Vec3::Y, Vec3::Z][rng.random_range(0..3)];
            (Quat::IDENTITY, Quat::IDENTITY, axis)
        } else {
            (random_rotation(rng), random_rotation(rng), random_direction(rng))
        };
        pairs.push([bodies.len() as u32, bodies.len() as u32 + 1]);
        bodies.push(Body {
            shape: sa as u32,
            pose: Pose::new(position, rotation_a),
        });
        bodies.push(Body {
            shape: sb as u32,
            pose: Pose::new(position + direction * distance, rotation_b),
        });
    }
    (bodies, pairs)
}

/// Runs the GPU SAT on a batch of hull pairs and compares every pair with the CPU; `None`
/// without an adapter. Every shape must be a hull or a box.
fn check_batch(shapes: &[Shape], bodies: &[Body], pairs: &[[u32; 2]], margin: f32) -> Option<SatTally> {
    let mut gpu = gpu_or_skip(shapes)?;
    eprintln!("adapter: {:?}", gpu.adapter_info());
    let results = gpu.sat(bodies, pairs, margin).expect("GPU SAT runs");
    assert_eq!(results.len(), pairs.len());
    let mut stats = SatTally::default();
    for (i, (&[ia, ib], result)) in pairs.iter().zip(&results).enumerate() {
        let (body_a, body_b) = (bodies[ia as usize], bodies[ib as usize]);
        let (a, b) = (&shapes[body_a.shape as usize], &shapes[body_b.shape as usize]);
        let b_in_a = body_a.pose.relative_to_self(&body_b.pose);
        let result = result.as_ref().expect("hull pairs run on the GPU");
        compare_sat(a, b, &b_in_a, margin, result, &mut stats).unwrap_or_else(|e| panic!("pairs[{i}]: {e}"));
    }
    Some(stats)
}

/// `count` random boxes of sizes between 0.1 and 2 (cube-like, slabs and needles).
fn random_boxes(rng: &mut Pcg64, count: usize) -> Vec<Shape> {
    (0..count)
        .map(|_| {
            let size = rng.random_range(0.1f32..2.0);
            Shape::Cuboid(Cuboid::new(random_half_extents(rng, size)).expect("valid box"))
        })
        .collect()
}

#[test]
fn gpu_sat_equals_cpu_on_random_box_pairs() {
    let mut rng = seeded_rng(0x5a7_b0c5);
    let shapes = random_boxes(&mut rng, 64);
    for margin in [0.0, 0.05] {
        let (bodies, pairs) = random_pairs(&mut rng, &shapes, 20_000, CONTACT_REACH);
        let Some(stats) = check_batch(&shapes, &bodies, &pairs, margin) else {
            return;
        };
        eprintln!("margin {margin}: {stats:?}");
        // The comparison must be about something: both verdicts present, few exceptions.
        assert!(stats.separated > stats.pairs / 10 && stats.separated < stats.pairs * 9 / 10);
        assert!(
            stats.contact_axes.iter().all(|&n| n > stats.pairs / 100),
            "{stats:?}"
        );
        assert!(
            stats.near_margin + stats.other_axis < stats.pairs / 100,
            "{stats:?}"
        );
        let gpu = gpu_or_skip(&shapes).expect("the adapter exists");
        let raw = run_sat_kernel(&gpu, &shapes, &bodies, &pairs, margin, Coop::Default);
        let (compared, ties) = check_deepest_axes(&shapes, &bodies, &pairs, margin, &raw);
        eprintln!("deepest axes: {compared} compared, {ties} ties");
        assert!(compared > pairs.len() / 10 && ties < compared / 100);
    }
}

/// The GPU's deepest axes (`GpuSatResult::deepest_axis`: the face preference at tolerance 0
/// over the SAT's candidates, which the clip kernel retries on) against the axis the CPU's
/// retry queries (`query_hulls_preferring_faces_by(…, 0.0)`, also for two boxes: the hull
/// routine's retry), on pairs in contact away from the margin: the same axis, or at a tie another
/// whose own separation (evaluated independently) is the CPU's within the tolerance. Pairs the
/// driver cut short are left out. Returns the pairs compared and the ties among them.
fn check_deepest_axes(
    shapes: &[Shape],
    bodies: &[Body],
    pairs: &[[u32; 2]],
    margin: f32,
    raw: &[GpuSatResult],
) -> (usize, usize) {
    let (mut compared, mut ties) = (0, 0);
    for (i, (&[ia, ib], gpu)) in pairs.iter().zip(raw).enumerate() {
        let (body_a, body_b) = (bodies[ia as usize], bodies[ib as usize]);
        let a = shapes[body_a.shape as usize].as_hull().expect("hull or box");
        let b = shapes[body_b.shape as usize].as_hull().expect("hull or box");
        let b_in_a = body_a.pose.relative_to_self(&body_b.pose);
        let cpu = query_hulls_preferring_faces_by(a, b, &b_in_a, margin, 0.0);
        let eps = hullsat::constants::GPU_AGREEMENT_TOLERANCE * (a.radius() + b.radius());
        if gpu.is_incomplete() || cpu.separation > margin - eps {
            continue;
        }
        compared += 1;
        let deepest = gpu.deepest_axis().expect("a hull pair's deepest axis");
        if deepest != cpu.axis {
            let (own, _) = axis_separation(a, b, &b_in_a, deepest);
            assert!(
                (own - cpu.separation).abs() <= eps,
                "pairs[{i}]: GPU deepest axis {deepest:?} separates by {own}\n gpu {gpu:?}\n cpu {cpu:?}"
            );
            ties += 1;
        }
    }
    (compared, ties)
}

/// Two boxes take the box SAT on the GPU (the 9 box axes, as `query_boxes`), not the hull loop:
/// on separated box pairs where the two CPU SATs report different separating axes (the hull loop
/// stops at the first axis that separates, the box SAT picks the best of the 9 edge axes), the
/// GPU reports the box SAT's axis, and its separation.
#[test]
fn gpu_sat_runs_the_box_sat_on_box_pairs() {
    let mut rng = seeded_rng(0x0b0c_55a7);
    let shapes = random_boxes(&mut rng, 16);
    let (bodies, candidates) = random_pairs(&mut rng, &shapes, 200_000, 0.6..1.0);
    let box_sat = |[ia, ib]: [u32; 2]| {
        let (body_a, body_b) = (bodies[ia as usize], bodies[ib as usize]);
        let b_in_a = body_a.pose.relative_to_self(&body_b.pose);
        let (a, b) = (&shapes[body_a.shape as usize], &shapes[body_b.shape as usize]);
        let (Shape::Cuboid(ca), Shape::Cuboid(cb)) = (a, b) else {
            unreachable!("boxes only")
        };
        (
            query_boxes(ca, cb, &b_in_a, 0.0),
            query_hulls(ca.hull(), cb.hull(), &b_in_a, 0.0),
        )
    };
    let pairs: Vec<[u32; 2]> = candidates
        .into_iter()
        .filter(|&pair| {
            let (boxes, hulls) = box_sat(pair);
            boxes.is_separated(0.0) && boxes.axis != hulls.axis
        })
        .collect();
    assert!(
        pairs.len() > 100,
        "{} pairs where the two SATs differ",
        pairs.len()
    );
    let Some(stats) = check_batch(&shapes, &bodies, &pairs, 0.0) else {
        return;
    };
    eprintln!(
        "{} separated pairs where the box and hull SATs differ: {stats:?}",
        pairs.len()
    );
    assert!(stats.other_axis <= pairs.len() / 100, "{stats:?}");
}

#[test]
fn gpu_sat_equals_cpu_on_hand_made_hulls() {
    // Hulls given directly (not as `Shape::Cuboid`): a unit cube, a 100:1 slab, a needle and a
    // flat plank, all touching, crossing and resting on each other.
    let shapes: Vec<Shape> = [
        Vec3::ONE,
        Vec3::new(1.0, 0.01, 1.0),
        Vec3::new(0.01, 0.01, 1.0),
        Vec3::new(2.0, 0.1, 0.5),
    ]
    .into_iter()
    .map(|e| Shape::Hull(ConvexHull::cuboid(e)))
    .collect();
    let mut rng = seeded_rng(0xc0ffee);
    let (bodies, pairs) = random_pairs(&mut rng, &shapes, 5_000, CONTACT_REACH);
    let Some(stats) = check_batch(&shapes, &bodies, &pairs, 0.0) else {
        return;
    };
    eprintln!("{stats:?}");
    assert!(
        stats.near_margin + stats.other_axis < stats.pairs / 100,
        "{stats:?}"
    );

    // A needle crossing the slab's rim, tilted: a configuration where edges meet.
    let bodies = [
        Body {
            shape: 1,
            pose: Pose::IDENTITY,
        },
        Body {
            shape: 2,
            pose: Pose::new(
                Vec3::new(1.0, 0.0, 0.0),
                Quat::from_rotation_x(std::f32::consts::FRAC_PI_2) * Quat::from_rotation_y(0.7),
            ),
        },
    ];
    let Some(stats) = check_batch(&shapes, &bodies, &[[0, 1]], 0.0) else {
        return;
    };
    assert_eq!(stats.pairs, 1);
}

#[test]
fn gpu_sat_leaves_non_hull_pairs_to_the_cpu() {
    let shapes = vec![
        Shape::Cuboid(Cuboid::new(Vec3::ONE).expect("valid box")),
        Shape::Sphere(Sphere::new(0.5).expect("valid sphere")),
    ];
    let Some(mut gpu) = gpu_or_skip(&shapes) else {
        return;
    };
    let bodies = [
        Body {
            shape: 0,
            pose: Pose::IDENTITY,
        },
        Body {
            shape: 1,
            pose: Pose::from_translation(Vec3::X * 1.2),
        },
        Body {
            shape: 0,
            pose: Pose::from_translation(Vec3::Y * 1.5),
        },
    ];
    let results = gpu
        .sat(&bodies, &[[0, 1], [0, 2], [1, 2]], 0.0)
        .expect("GPU SAT runs");
    assert!(results[0].is_none() && results[2].is_none());
    let face = results[1].expect("box pair runs on the GPU");
    assert_eq!(face.axis, SatAxis::FaceA(3), "+Y face of A");
    assert!((face.separation + 0.5).abs() < 1e-6);
}

#[test]
fn gpu_sat_rejects_bad_input_before_upload() {
    let shapes = vec![Shape::Cuboid(Cuboid::new(Vec3::ONE).expect("valid box"))];
    let Some(mut gpu) = gpu_or_skip(&shapes) else {
        return;
    };
    let good = Body {
        shape: 0,
        pose: Pose::IDENTITY,
    };
    let nan = Body {
        shape: 0,
        pose: Pose::new(Vec3::new(0.0, f32::NAN, 0.0), Quat::IDENTITY),
    };
    for (bodies, pairs) in [(vec![good, nan], vec![[0, 1]]), (vec![good, good], vec![[0, 2]])] {
        let expected = validate_batch(&shapes, &bodies, &pairs, 0.0).expect_err("bad input");
        match gpu.sat(&bodies, &pairs, 0.0) {
            Err(GpuError::Input(e)) => assert_eq!(e, expected),
            other => panic!("expected {expected}, got {other:?}"),
        }
    }
    // Still usable afterwards.
    let far = Body {
        shape: 0,
        pose: Pose::from_translation(Vec3::X * 5.0),
    };
    let results = gpu.sat(&[good, far], &[[0, 1]], 0.0).expect("GPU SAT runs");
    assert!(results[0].expect("box pair").is_separated(0.0));
}

#[test]
fn gpu_sat_splits_batches_beyond_one_dispatch() {
    // More pairs than one dispatch dimension holds (65,535 workgroups × 64 = 4,194,240). Pair i
    // repeats configuration i % 997 (a prime, so chunk boundaries fall mid-cycle): every pair
    // must equal its configuration's first occurrence bit for bit, and those the CPU. Most
    // configurations are apart (the kernel stops after a face or two, which keeps this test
    // fast on lavapipe); one in 25 may touch and runs every query.
    const CONFIGS: usize = 997;
    const TOUCHING: usize = 40;
    const PAIRS: usize = 4_300_000;
    let mut rng = seeded_rng(0xb16_ba7c4);
    let shapes: Vec<Shape> = [Vec3::splat(0.1), Vec3::new(0.2, 0.05, 0.1)]
        .into_iter()
        .map(|e| Shape::Cuboid(Cuboid::new(e).expect("valid box")))
        .collect();
    let (mut bodies, mut config_pairs) = random_pairs(&mut rng, &shapes, TOUCHING, CONTACT_REACH);
    let (far_bodies, far_pairs) = random_pairs(&mut rng, &shapes, CONFIGS - TOUCHING, 1.05..2.0);
    let offset = bodies.len() as u32;
    bodies.extend(far_bodies);
    config_pairs.extend(far_pairs.iter().map(|&[a, b]| [a + offset, b + offset]));
    let pairs: Vec<[u32; 2]> = (0..PAIRS).map(|i| config_pairs[i % CONFIGS]).collect();
    let Some(mut gpu) = gpu_or_skip(&shapes) else {
        return;
    };
    let start = std::time::Instant::now();
    let results = gpu.sat(&bodies, &pairs, 0.0).expect("GPU SAT runs");
    eprintln!("{PAIRS} pairs in {:?} ({:?})", start.elapsed(), gpu.timings());
    assert_eq!(results.len(), PAIRS);
    let mut stats = SatTally::default();
    for (i, &[ia, ib]) in config_pairs.iter().enumerate() {
        let (body_a, body_b) = (bodies[ia as usize], bodies[ib as usize]);
        let (a, b) = (&shapes[body_a.shape as usize], &shapes[body_b.shape as usize]);
        let gpu_result = results[i].as_ref().expect("box pair");
        let b_in_a = body_a.pose.relative_to_self(&body_b.pose);
        compare_sat(a, b, &b_in_a, 0.0, gpu_result, &mut stats).unwrap_or_else(|e| panic!("config {i}: {e}"));
    }
    eprintln!("{stats:?}");
    assert!(stats.pairs - stats.separated > TOUCHING / 4, "{stats:?}");
    assert!(stats.near_margin + stats.other_axis < CONFIGS / 50, "{stats:?}");
    for (i, result) in results.iter().enumerate() {
        assert_eq!(
            result,
            &results[i % CONFIGS],
            "pairs[{i}] differs from pairs[{}]",
            i % CONFIGS
        );
    }
}

#[test]
fn gpu_encode_leaves_the_results_in_a_bindable_buffer() {
    let mut rng = seeded_rng(0xe4c0de);
    let shapes = random_boxes(&mut rng, 8);
    let (bodies, pairs) = random_pairs(&mut rng, &shapes, 1_000, CONTACT_REACH);
    let Some(mut gpu) = gpu_or_skip(&shapes) else {
        return;
    };
    let expected = gpu.sat(&bodies, &pairs, 0.0).expect("GPU SAT runs");
    let encoded: Vec<Option<SatResult>> = encoded_results(&mut gpu, &bodies, &pairs, 0.0)
        .iter()
        .map(GpuSatResult::to_sat)
        .collect();
    assert_eq!(encoded, expected);
}

/// Two bodies of shape 0 (a unit box in the tests that call it): body 0 at the origin, body 1
/// 1.5 above it along +Z (0.5 into it).
fn box_above_box() -> [Body; 2] {
    [
        Body {
            shape: 0,
            pose: Pose::IDENTITY,
        },
        Body {
            shape: 0,
            pose: Pose::from_translation(Vec3::Z * 1.5),
        },
    ]
}

/// `encode` runs each pair as given (its records are the caller's to read: A is `pairs[i].x`),
/// whereas the resident API runs pairs in canonical order and swaps the manifold back: a box
/// pair given both ways round comes back on the face of each order's A.
#[test]
fn gpu_encode_runs_pairs_as_given() {
    let shapes = vec![Shape::Cuboid(Cuboid::new(Vec3::ONE).expect("valid box"))];
    let Some(mut gpu) = gpu_or_skip(&shapes) else {
        return;
    };
    let bodies = box_above_box();
    let encoded = encoded_results(&mut gpu, &bodies, &[[0, 1], [1, 0]], 0.0);
    let [up, down] = [0, 1].map(|i| encoded[i].to_sat().expect("box pair"));
    assert_eq!(up.axis, SatAxis::FaceA(5), "+Z face of body 0");
    assert_eq!(down.axis, SatAxis::FaceA(4), "-Z face of body 1");
    assert!((up.normal - Vec3::Z).length() < 1e-6 && (down.normal + Vec3::Z).length() < 1e-6);
}

#[test]
fn gpu_sat_on_a_callers_device_reports_wgpu_errors_as_values() {
    let shapes = vec![Shape::Cuboid(Cuboid::new(Vec3::ONE).expect("valid box"))];
    // Downlevel limits allow 4 storage buffers per stage; the kernel binds 7: pipeline creation
    // fails validation, which must come back as an error, not a panic.
    let Some((device, queue)) = device_or_skip(wgpu::Limits::downlevel_defaults()) else {
        return;
    };
    match GpuNarrowphase::with_device(device, queue, &shapes) {
        Err(GpuError::Wgpu(message)) => {
            eprintln!("{message}");
            assert!(!message.is_empty())
        }
        Err(e) => panic!("expected a wgpu validation error, got {e}"),
        Ok(_) => panic!("expected a wgpu validation error, got a narrowphase"),
    }
    let Some((device, queue)) = device_or_skip(wgpu::Limits::default()) else {
        return;
    };
    let mut gpu =
        GpuNarrowphase::with_device(device, queue, &shapes).expect("narrowphase on a default device");
    let bodies = box_above_box();
    let result = gpu.sat(&bodies, &[[0, 1]], 0.0).expect("GPU SAT runs")[0].expect("box pair");
    assert_eq!(result.axis, SatAxis::FaceA(5), "+Z face of A");
    assert!((result.separation + 0.5).abs() < 1e-6);
}

/// Which pairs the test's SAT kernel runs on a whole workgroup (sat.wgsl's overrides).
#[derive(Clone, Copy, Debug)]
enum Coop {
    /// Every pair that is not two boxes (`COOP_EDGE_PAIRS` = 0).
    All,
    /// None, the cooperative path compiled in (`COOP_EDGE_PAIRS` = `u32::MAX`).
    None,
    /// Pairs of `COOP_EDGE_PAIRS` edge pairs or more (the defaults: the narrowphase's
    /// pipeline for shapes that can form such pairs).
    Default,
    /// None, the cooperative path compiled out (`COOP_PATH` = false, workgroup memory not
    /// zeroed: the narrowphase's pipeline for the other shapes).
    CompiledOut,
    /// One workgroup per pair (`main_pair_per_workgroup`), every pair that is not two boxes
    /// split over it (`SPLIT_EDGE_PAIRS` = 0).
    WorkgroupSplitAll,
    /// One workgroup per pair, every pair on its lane 0 (`SPLIT_EDGE_PAIRS` = `u32::MAX`).
    WorkgroupSplitNone,
    /// One workgroup per pair with the defaults (the narrowphase's pipeline for small calls).
    Workgroup,
    /// One pair per invocation, every query the exhaustive loop (`EXHAUSTIVE_FACE_WORK` and
    /// `EXHAUSTIVE_EDGE_PAIRS` = `u32::MAX`, the cooperative path compiled out): no bound, no
    /// floor, the reference.
    Exhaustive,
}

impl Coop {
    /// True for the one-workgroup-per-pair entry point.
    fn per_workgroup(self) -> bool {
        matches!(
            self,
            Coop::WorkgroupSplitAll | Coop::WorkgroupSplitNone | Coop::Workgroup
        )
    }
}

/// The SAT kernel (`SAT_WGSL`) compiled with its entry point and pipeline-overridable constants
/// set for `coop` and run once on `pairs`: the raw results. Built here rather than through
/// `GpuNarrowphase` (which picks its pipeline from the shapes and the call) so the test chooses
/// the path pairs take.
fn run_sat_kernel(
    gpu: &GpuNarrowphase,
    shapes: &[Shape],
    bodies: &[Body],
    pairs: &[[u32; 2]],
    margin: f32,
    coop: Coop,
) -> Vec<GpuSatResult> {
    run_sat_source(gpu, SAT_WGSL, shapes, bodies, pairs, margin, coop)
}

/// The reductions' subgroup variant (`SAT_SUBGROUP_WGSL`) run as `run_sat_kernel` runs
/// `SAT_WGSL`, on a device with subgroups; `None` without them (the caller says so).
fn run_sat_subgroups(
    gpu: &GpuNarrowphase,
    shapes: &[Shape],
    bodies: &[Body],
    pairs: &[[u32; 2]],
    margin: f32,
    coop: Coop,
) -> Option<Vec<GpuSatResult>> {
    let has = gpu.context().has_subgroups();
    has.then(|| run_sat_source(gpu, SAT_SUBGROUP_WGSL, shapes, bodies, pairs, margin, coop))
}

/// `run_sat_kernel` for the SAT kernel's `source`.
fn run_sat_source(
    gpu: &GpuNarrowphase,
    source: &'static str,
    shapes: &[Shape],
    bodies: &[Body],
    pairs: &[[u32; 2]],
    margin: f32,
    coop: Coop,
) -> Vec<GpuSatResult> {
    use wgpu::util::DeviceExt;
    let (device, queue) = (gpu.device(), gpu.queue());
    let buffer = |label: &str, contents: &[u8], usage: wgpu::BufferUsages| {
        device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(label),
            contents,
            usage,
        })
    };
    let storage = wgpu::BufferUsages::STORAGE;
    let tables = HullTables::new(shapes);
    let geometry = [
        buffer("vertices", bytemuck::cast_slice(&tables.vertices), storage),
        buffer("planes", bytemuck::cast_slice(&tables.planes), storage),
        buffer("edges", bytemuck::cast_slice(&tables.edges), storage),
        buffer("shapes", bytemuck::cast_slice(&tables.shapes), storage),
        buffer("face loops", bytemuck::cast_slice(&tables.face_loops()), storage),
    ];
    let gpu_bodies: Vec<GpuBody> = bodies.iter().map(GpuBody::from_body).collect();
    let results_bytes = (pairs.len() * size_of::<GpuSatResult>()) as u64;
    let params = GpuParams {
        margin,
        pair_count: pairs.len() as u32,
        first_pair: 0,
        ordered: 0,
        canonical: 0,
    };
    let mut params_bytes = encase::UniformBuffer::new(Vec::new());
    params_bytes.write(&params).expect("encase writes the parameters");
    let call = [
        buffer("bodies", bytemuck::cast_slice(&gpu_bodies), storage),
        buffer("pairs", bytemuck::cast_slice(pairs), storage),
        device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("results"),
            size: results_bytes,
            usage: storage | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        }),
        buffer("params", params_bytes.as_ref(), wgpu::BufferUsages::UNIFORM),
    ];
    let layout = |types: &[wgpu::BufferBindingType]| {
        let entries: Vec<_> = types
            .iter()
            .enumerate()
            .map(|(i, &ty)| wgpu::BindGroupLayoutEntry {
                binding: i as u32,
                visibility: wgpu::ShaderStages::COMPUTE,
                ty: wgpu::BindingType::Buffer {
                    ty,
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
                count: None,
            })
            .collect();
        device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: None,
            entries: &entries,
        })
    };
    let read = wgpu::BufferBindingType::Storage { read_only: true };
    let write = wgpu::BufferBindingType::Storage { read_only: false };
    let layouts = [
        layout(&[read; 5]),
        layout(&[read, read, write, wgpu::BufferBindingType::Uniform]),
    ];
    let groups: Vec<wgpu::BindGroup> = [&geometry[..], &call[..]]
        .iter()
        .zip(&layouts)
        .map(|(buffers, layout)| {
            let entries: Vec<_> = buffers
                .iter()
                .enumerate()
                .map(|(i, b)| wgpu::BindGroupEntry {
                    binding: i as u32,
                    resource: b.as_entire_binding(),
                })
                .collect();
            device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: None,
                layout,
                entries: &entries,
            })
        })
        .collect();
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("sat.wgsl"),
        source: wgpu::ShaderSource::Wgsl(source.into()),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("sat (test)"),
        layout: Some(&device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: None,
            bind_group_layouts: &[Some(&layouts[0]), Some(&layouts[1])],
            immediate_size: 0,
        })),
        module: &module,
        entry_point: Some(if coop.per_workgroup() {
            "main_pair_per_workgroup"
        } else {
            "main"
        }),
        compilation_options: match coop {
            Coop::All => wgpu::PipelineCompilationOptions {
                constants: &[("COOP_EDGE_PAIRS", 0.0)],
                ..Default::default()
            },
            Coop::None => wgpu::PipelineCompilationOptions {
                constants: &[("COOP_EDGE_PAIRS", u32::MAX as f64)],
                ..Default::default()
            },
            Coop::Default => Default::default(),
            Coop::CompiledOut => wgpu::PipelineCompilationOptions {
                constants: &[("COOP_PATH", 0.0)],
                zero_initialize_workgroup_memory: false,
            },
            // As the narrowphase builds it: workgroup memory not zeroed.
            Coop::WorkgroupSplitAll => wgpu::PipelineCompilationOptions {
                constants: &[("SPLIT_EDGE_PAIRS", 0.0)],
                zero_initialize_workgroup_memory: false,
            },
            Coop::WorkgroupSplitNone => wgpu::PipelineCompilationOptions {
                constants: &[("SPLIT_EDGE_PAIRS", u32::MAX as f64)],
                zero_initialize_workgroup_memory: false,
            },
            Coop::Workgroup => wgpu::PipelineCompilationOptions {
                zero_initialize_workgroup_memory: false,
                ..Default::default()
            },
            Coop::Exhaustive => wgpu::PipelineCompilationOptions {
                constants: &[
                    ("COOP_PATH", 0.0),
                    ("EXHAUSTIVE_FACE_WORK", u32::MAX as f64),
                    ("EXHAUSTIVE_EDGE_PAIRS", u32::MAX as f64),
                ],
                zero_initialize_workgroup_memory: false,
            },
        },
        cache: None,
    });
    let readback = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("readback"),
        size: results_bytes,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &groups[0], &[]);
        pass.set_bind_group(1, &groups[1], &[]);
        let per_workgroup = if coop.per_workgroup() {
            1
        } else {
            WORKGROUP_SIZE as usize
        };
        pass.dispatch_workgroups(pairs.len().div_ceil(per_workgroup) as u32, 1, 1);
    }
    encoder.copy_buffer_to_buffer(&call[2], 0, &readback, 0, results_bytes);
    let submission = queue.submit([encoder.finish()]);
    readback.map_async(wgpu::MapMode::Read, .., |r| r.expect("maps"));
    device
        .poll(wgpu::PollType::Wait {
            submission_index: Some(submission),
            timeout: Some(std::time::Duration::from_secs(120)),
        })
        .expect("finishes");
    let view = readback.get_mapped_range(..).expect("mapped");
    bytemuck::pod_collect_to_vec(&view)
}

/// A prism over a regular `sides`-gon (radius 1, height 1): 2 × sides vertices, 3 × sides
/// edges, many faces of equal separation in aligned placements.
fn prism(sides: usize) -> Shape {
    let points: Vec<Vec3> = (0..sides)
        .flat_map(|i| {
            let angle = std::f32::consts::TAU * i as f32 / sides as f32;
            [-0.5, 0.5].map(|y| Vec3::new(angle.cos(), y, angle.sin()))
        })
        .collect();
    Shape::Hull(ConvexHull::from_points(&points).expect("prism"))
}

/// `count` points on the surface of an ellipsoid with semi-axes `axes`: a hull of about `count`
/// vertices.
fn surface_hull(rng: &mut Pcg64, count: usize, axes: Vec3) -> Shape {
    let points: Vec<Vec3> = (0..count).map(|_| random_direction(rng) * axes).collect();
    Shape::Hull(ConvexHull::from_points(&points).expect("points on an ellipsoid"))
}

/// Twelve shapes of the test families (`support::shapes::FAMILIES`, three of each), then a
/// hull of each of `counts` points on an ellipsoid of random axes.
fn families_and_ellipsoids(rng: &mut Pcg64, counts: &[usize]) -> Vec<Shape> {
    let mut shapes: Vec<Shape> = (0..12)
        .map(|i| support::shapes::random_shape(rng, support::shapes::FAMILIES[i % 4]))
        .collect();
    for &count in counts {
        let axes = Vec3::new(
            rng.random_range(0.4..1.0),
            rng.random_range(0.4..1.0),
            rng.random_range(0.4..1.0),
        );
        shapes.push(surface_hull(rng, count, axes));
    }
    shapes
}

/// The cooperative path (a workgroup on one pair) returns what the one-pair-per-invocation
/// path returns, bit for bit: the same kernel compiled with every pair that is not two boxes
/// cooperative (`COOP_EDGE_PAIRS` = 0), none (`u32::MAX`), the default, and none with the
/// cooperative path compiled out (`COOP_PATH` = false), on small and big hulls (prisms with many equal faces, 64 to 128 points on ellipsoids) in random and aligned
/// placements, margins 0 and 0.05. Pairs the driver cut short in a run (lavapipe's loop cap, on
/// the one-per-invocation path's big pairs) are left out, and must be few; the default's
/// results equal the CPU's.
#[test]
fn cooperative_and_one_per_invocation_paths_return_the_same_bits() {
    let mut rng = seeded_rng(0xc0_0b5a7);
    let mut shapes = families_and_ellipsoids(&mut rng, &[64, 80, 96, 96, 128, 128]);
    shapes.splice(12..12, [prism(48), prism(64)]);
    let Some(gpu) = gpu_or_skip(&shapes) else {
        return;
    };
    let big = |pair: &[u32; 2], bodies: &[Body]| {
        let [a, b] = pair.map(|i| &shapes[bodies[i as usize].shape as usize]);
        let edges = |s: &Shape| s.as_hull().expect("hull or box").edges().len();
        edges(a) * edges(b) >= COOP_EDGE_PAIRS as usize
    };
    for margin in [0.0, 0.05] {
        let (bodies, pairs) = random_pairs(&mut rng, &shapes, 4_000, 0.2..1.1);
        let runs = [Coop::All, Coop::None, Coop::Default, Coop::CompiledOut]
            .map(|coop| run_sat_kernel(&gpu, &shapes, &bodies, &pairs, margin, coop));
        let [all, none, default, compiled_out] = &runs;
        let mut compared = 0;
        for i in 0..pairs.len() {
            let results = [all[i], none[i], default[i], compiled_out[i]];
            if results.iter().any(GpuSatResult::is_incomplete) {
                continue;
            }
            compared += 1;
            assert_eq!(
                bytemuck::bytes_of(&all[i]),
                bytemuck::bytes_of(&none[i]),
                "pairs[{i}]: cooperative {:?}, one per invocation {:?}",
                all[i],
                none[i]
            );
            assert_eq!(
                bytemuck::bytes_of(&default[i]),
                bytemuck::bytes_of(&none[i]),
                "pairs[{i}]"
            );
            assert_eq!(
                bytemuck::bytes_of(&compiled_out[i]),
                bytemuck::bytes_of(&none[i]),
                "pairs[{i}]: compiled out {:?}",
                compiled_out[i]
            );
        }
        let big_pairs = pairs.iter().filter(|p| big(p, &bodies)).count();
        let cut: [usize; 4] = runs
            .each_ref()
            .map(|r| r.iter().filter(|s| s.is_incomplete()).count());
        eprintln!(
            "margin {margin}: {} pairs, {big_pairs} big, {compared} compared bit for bit; cut short (all, none, default cooperative, compiled out): {cut:?}",
            pairs.len()
        );
        assert!(big_pairs > pairs.len() / 20 && compared > pairs.len() * 9 / 10);
        let (deepest_compared, ties) = check_deepest_axes(&shapes, &bodies, &pairs, margin, default);
        eprintln!("deepest axes: {deepest_compared} compared, {ties} ties");
        assert!(deepest_compared > pairs.len() / 10 && ties < deepest_compared / 100);
        assert_eq!(
            cut[0], 0,
            "the cooperative path keeps every loop below the driver's cap"
        );
        // The default, through the narrowphase, against the CPU.
        let Some(stats) = check_batch(&shapes, &bodies, &pairs, margin) else {
            return;
        };
        eprintln!("{stats:?}");
        assert!(stats.other_axis < stats.pairs / 100, "{stats:?}");
    }
}

/// The bounded queries with their floors (B's faces from A's best, the edges from the better
/// face), serial and cooperative, return the exhaustive loops' bits: the same kernel compiled
/// with every query exhaustive is the reference, on boxes, small hulls and hulls of 24 to 64
/// points on ellipsoids, random placements, margins 0 and 0.05. A floor that skips one axis too
/// many, or one too few below the floor where it could matter, changes a result's bits here
/// where the CPU comparisons' tolerance would hide it.
#[test]
fn bounded_queries_and_their_floors_return_the_exhaustive_bits() {
    let mut rng = seeded_rng(0xf1_0025);
    let shapes = families_and_ellipsoids(&mut rng, &[24, 32, 32, 48, 64]);
    let Some(gpu) = gpu_or_skip(&shapes) else {
        return;
    };
    for margin in [0.0, 0.05] {
        let (bodies, pairs) = random_pairs(&mut rng, &shapes, 3_000, 0.2..1.1);
        let runs = [Coop::Exhaustive, Coop::CompiledOut, Coop::All]
            .map(|coop| run_sat_kernel(&gpu, &shapes, &bodies, &pairs, margin, coop));
        let [exhaustive, serial, cooperative] = &runs;
        let mut compared = 0;
        for i in 0..pairs.len() {
            if [exhaustive[i], serial[i], cooperative[i]]
                .iter()
                .any(GpuSatResult::is_incomplete)
            {
                continue;
            }
            compared += 1;
            for (path, result) in [("serial", &serial[i]), ("cooperative", &cooperative[i])] {
                assert_eq!(
                    bytemuck::bytes_of(result),
                    bytemuck::bytes_of(&exhaustive[i]),
                    "pairs[{i}]: {path} {result:?}, exhaustive {:?}",
                    exhaustive[i]
                );
            }
        }
        let cut: [usize; 3] = runs
            .each_ref()
            .map(|r| r.iter().filter(|s| s.is_incomplete()).count());
        eprintln!(
            "margin {margin}: {} pairs, {compared} compared bit for bit; cut short (exhaustive, serial, cooperative): {cut:?}",
            pairs.len()
        );
        assert!(compared > pairs.len() * 9 / 10);
    }
}

/// Hulls of 192, 256 and 320 vertices (beyond what a pair per invocation runs within lavapipe's
/// loop cap): the cooperative path leaves far fewer pairs cut short than one pair per
/// invocation (lavapipe: 0 against 144 of 766, 0 against 440 of 603, 8 against 451 of 499;
/// the 320-vertex hulls keep a few workgroups cut short since the floors shortened the split
/// loops), every pair a workgroup could not finish comes back flagged (also those the cap kept
/// it from reaching), and the narrowphase's results, with the flagged pairs recomputed on the
/// CPU, equal the CPU's. On a real GPU nothing is cut short.
#[test]
fn hulls_beyond_the_loop_cap_come_back_flagged_and_fewer_cooperatively() {
    use hullsat::generate::{ParticleSceneConfig, ShapeMix, generate_particle_scene_with_pairs};
    for (vertices, bodies) in [(192, 400), (256, 300), (320, 250)] {
        let config = ParticleSceneConfig {
            bodies,
            mix: ShapeMix::hulls_only(vertices),
            ..Default::default()
        };
        let scene = generate_particle_scene_with_pairs(&config).expect("scene");
        let pairs = scene.pairs.clone().expect("broadphase pairs");
        let Some(gpu) = gpu_or_skip(&scene.shapes) else {
            return;
        };
        let [all, none] = [Coop::All, Coop::None].map(|coop| {
            run_sat_kernel(&gpu, &scene.shapes, &scene.bodies, &pairs, scene.margin, coop)
                .iter()
                .filter(|r| r.is_incomplete())
                .count()
        });
        eprintln!(
            "{} pairs of {vertices}-vertex hulls cut short: {all} cooperatively, {none} one per invocation",
            pairs.len()
        );
        assert!(all <= none / 2, "{all} cut short cooperatively, {none} not");
        let Some(stats) = check_batch(&scene.shapes, &scene.bodies, &pairs, scene.margin) else {
            return;
        };
        assert!(stats.other_axis < stats.pairs / 100, "{stats:?}");
    }
}

/// Shapes that cannot form a big pair (boxes, slabs, needles, hulls of up to 64 points: at most
/// 186 edges, 34,596 edge pairs) take the pipeline without the cooperative path: it returns the
/// kernel's default bits on every pair, none cut short, and the narrowphase (which picks it for
/// these shapes) the CPU's results.
#[test]
fn pipeline_without_the_cooperative_path_returns_the_same_bits_on_small_shapes() {
    let mut rng = seeded_rng(0x5e_41a1);
    let mut shapes: Vec<Shape> = (0..16)
        .map(|i| support::shapes::random_shape(&mut rng, support::shapes::FAMILIES[i % 4]))
        .collect();
    shapes.extend(random_boxes(&mut rng, 4));
    let most_edges = shapes
        .iter()
        .map(|s| s.as_hull().expect("hull or box").edges().len())
        .max()
        .expect("shapes");
    assert!(most_edges * most_edges < COOP_EDGE_PAIRS as usize);
    let Some(gpu) = gpu_or_skip(&shapes) else {
        return;
    };
    for margin in [0.0, 0.05] {
        let (bodies, pairs) = random_pairs(&mut rng, &shapes, 3_000, CONTACT_REACH);
        let [default, compiled_out] = [Coop::Default, Coop::CompiledOut]
            .map(|coop| run_sat_kernel(&gpu, &shapes, &bodies, &pairs, margin, coop));
        for i in 0..pairs.len() {
            assert!(!default[i].is_incomplete(), "pairs[{i}]");
            assert_eq!(
                bytemuck::bytes_of(&default[i]),
                bytemuck::bytes_of(&compiled_out[i]),
                "pairs[{i}]: default {:?}, compiled out {:?}",
                default[i],
                compiled_out[i]
            );
        }
        let Some(stats) = check_batch(&shapes, &bodies, &pairs, margin) else {
            return;
        };
        assert!(stats.other_axis < stats.pairs / 100, "{stats:?}");
    }
}

/// Shapes of every kind for the one-workgroup-per-pair tests: hulls of 4 (a tetrahedron: 36 edge
/// pairs with itself, below `SPLIT_EDGE_PAIRS`), 8, 32 and 64 points on ellipsoids, boxes,
/// a sphere and a capsule (CPU-routed); the half-space is added by `mixed_batch`.
fn mixed_shapes(rng: &mut Pcg64) -> Vec<Shape> {
    let mut shapes: Vec<Shape> = [4, 8, 8, 32, 32, 64, 64]
        .into_iter()
        .map(|count| {
            let axes = Vec3::new(
                rng.random_range(0.4..1.0),
                rng.random_range(0.4..1.0),
                rng.random_range(0.4..1.0),
            );
            surface_hull(rng, count, axes)
        })
        .collect();
    shapes.extend(random_boxes(rng, 3));
    shapes.push(Shape::Sphere(Sphere::new(0.5).expect("valid sphere")));
    shapes.push(Shape::Capsule(Capsule::new(0.4, 0.3).expect("valid capsule")));
    shapes
}

/// A batch over `shapes` plus a half-space (appended to the shapes): `count` pairs placed to
/// touch or nearly (reach 0.2 to 1.1 of the radii), a quarter as many apart (reach 1.05 to 2,
/// most separated by a face early), and every 50th body against the half-space.
fn mixed_batch(rng: &mut Pcg64, shapes: &mut Vec<Shape>, count: usize) -> (Vec<Body>, Vec<[u32; 2]>) {
    let (mut bodies, mut pairs) = random_pairs(rng, shapes, count, 0.2..1.1);
    let (far_bodies, far_pairs) = random_pairs(rng, shapes, count / 4, 1.05..2.0);
    let offset = bodies.len() as u32;
    bodies.extend(far_bodies);
    pairs.extend(far_pairs.iter().map(|&[a, b]| [a + offset, b + offset]));
    shapes.push(Shape::HalfSpace(
        HalfSpace::new(Vec3::Y, 0.0).expect("valid half-space"),
    ));
    let ground = bodies.len() as u32;
    bodies.push(Body {
        shape: shapes.len() as u32 - 1,
        pose: Pose::IDENTITY,
    });
    pairs.extend((0..ground).step_by(50).map(|i| [i, ground]));
    (bodies, pairs)
}

/// One workgroup per pair (`main_pair_per_workgroup`) returns what one pair per invocation
/// returns, bit for bit: with every pair that is not two boxes split over the workgroup
/// (`SPLIT_EDGE_PAIRS` = 0, also with the reductions by subgroup operations where the device has
/// them), every pair on lane 0 (`u32::MAX`) and the default, on hulls of 4 to
/// 64 points, boxes, spheres, capsules and a half-space (CPU-routed: `AXIS_NONE` on every path),
/// touching and apart, margins 0 and 0.05. Pairs the driver cut short in a run are left out and
/// must be few; none on a one-workgroup-per-pair run.
#[test]
fn one_workgroup_per_pair_returns_the_one_per_invocation_bits() {
    let mut rng = seeded_rng(0x0e_9a1e);
    let mut shapes = mixed_shapes(&mut rng);
    let base = shapes.len();
    let (bodies, pairs) = mixed_batch(&mut rng, &mut shapes, 1_600);
    assert_eq!(shapes.len(), base + 1);
    let Some(gpu) = gpu_or_skip(&shapes) else {
        return;
    };
    let kinds = |pair: &[u32; 2]| pair.map(|i| &shapes[bodies[i as usize].shape as usize]);
    let cpu_routed = pairs
        .iter()
        .filter(|p| kinds(p).iter().any(|s| s.as_hull().is_none()))
        .count();
    let split = pairs
        .iter()
        .filter(|p| match kinds(p) {
            [Shape::Cuboid(_), Shape::Cuboid(_)] => false,
            [a, b] => match (a.as_hull(), b.as_hull()) {
                (Some(a), Some(b)) => a.edges().len() * b.edges().len() >= SPLIT_EDGE_PAIRS as usize,
                _ => false,
            },
        })
        .count();
    for margin in [0.0, 0.05] {
        let runs = [
            Coop::None,
            Coop::WorkgroupSplitAll,
            Coop::WorkgroupSplitNone,
            Coop::Workgroup,
        ]
        .map(|coop| run_sat_kernel(&gpu, &shapes, &bodies, &pairs, margin, coop));
        let [reference, per_workgroup @ ..] = &runs;
        let (mut compared, mut separated, mut none) = (0, 0, 0);
        for i in 0..pairs.len() {
            if runs.iter().any(|r| r[i].is_incomplete()) {
                continue;
            }
            compared += 1;
            for (k, run) in per_workgroup.iter().enumerate() {
                assert_eq!(
                    bytemuck::bytes_of(&run[i]),
                    bytemuck::bytes_of(&reference[i]),
                    "pairs[{i}], run {k}: one workgroup per pair {:?}, one per invocation {:?}",
                    run[i],
                    reference[i]
                );
            }
            match reference[i].to_sat() {
                None => none += 1,
                Some(sat) if sat.is_separated(margin) => separated += 1,
                Some(_) => {}
            }
        }
        let cut: [usize; 4] = runs
            .each_ref()
            .map(|r| r.iter().filter(|s| s.is_incomplete()).count());
        eprintln!(
            "margin {margin}: {} pairs ({split} split by default, {cpu_routed} CPU-routed), {compared} compared bit for bit, {separated} separated, {none} left to the CPU; cut short (per invocation, split all, split none, default): {cut:?}",
            pairs.len()
        );
        assert!(compared > pairs.len() * 9 / 10, "{compared} of {}", pairs.len());
        assert_eq!(none, cpu_routed, "CPU-routed pairs come back AXIS_NONE");
        assert!(cpu_routed > pairs.len() / 20 && split > pairs.len() / 4);
        assert!(
            pairs.len() - split - cpu_routed > pairs.len() / 40,
            "pairs on lane 0"
        );
        assert!(separated > pairs.len() / 10 && separated < pairs.len() * 9 / 10);
        assert_eq!(
            cut[1..],
            [0, 0, 0],
            "one pair per workgroup stays below the loop cap"
        );
        // Every pair split again, reduced with subgroup operations.
        match run_sat_subgroups(&gpu, &shapes, &bodies, &pairs, margin, Coop::WorkgroupSplitAll) {
            Some(subgroups) => {
                assert!(subgroups.iter().all(|r| !r.is_incomplete()));
                let compared = assert_same_bits("split, subgroups", &subgroups, reference);
                eprintln!("subgroups: {compared} compared bit for bit");
                assert!(compared > pairs.len() * 9 / 10);
            }
            None => eprintln!("no subgroups on this device: their reductions did not run"),
        }
    }
}

/// Asserts that `run` and `reference` hold the same bytes for every pair that neither has
/// flagged as cut short; returns how many were compared.
fn assert_same_bits(label: &str, run: &[GpuSatResult], reference: &[GpuSatResult]) -> usize {
    let mut compared = 0;
    for (i, (r, reference)) in run.iter().zip(reference).enumerate() {
        if r.is_incomplete() || reference.is_incomplete() {
            continue;
        }
        compared += 1;
        assert_eq!(
            bytemuck::bytes_of(r),
            bytemuck::bytes_of(reference),
            "pairs[{i}]: {label} {r:?}, one per invocation {reference:?}"
        );
    }
    compared
}

/// The host's choice of mapping: a small call of hull32 pairs takes one workgroup per pair,
/// a call of `PAIR_PER_WORKGROUP_PAIRS` pairs and any call over boxes only one pair per
/// invocation. The small call through the host (`GpuNarrowphase::encode`, with CPU-routed pairs
/// and a half-space) returns the one-per-invocation kernel's bits, and `sat` the CPU's results.
#[test]
fn small_hull_calls_take_one_workgroup_per_pair_through_the_host() {
    use hullsat::generate::{ParticleSceneConfig, ShapeMix, generate_particle_scene_with_pairs};
    let config = ParticleSceneConfig {
        bodies: 2_000,
        mix: ShapeMix::hulls_only(32),
        ..Default::default()
    };
    let scene = generate_particle_scene_with_pairs(&config).expect("scene");
    let scene_pairs = scene.pairs.clone().expect("broadphase pairs");
    let Some(gpu) = gpu_or_skip(&scene.shapes) else {
        return;
    };
    let small = scene_pairs.len();
    assert!(
        small > 500 && small < PAIR_PER_WORKGROUP_PAIRS as usize,
        "{small} pairs"
    );
    let bodies = &scene.bodies;
    assert_eq!(sat_mapping(&gpu, bodies, &scene_pairs), SatMapping::PerWorkgroup);
    assert_eq!(
        sat_mapping(&gpu, bodies, &scene_pairs[..1]),
        SatMapping::PerWorkgroup
    );
    // 32-vertex hulls form no big pair: the big call takes the pipeline without the cooperative path.
    let big: Vec<[u32; 2]> = scene_pairs
        .iter()
        .cycle()
        .take(PAIR_PER_WORKGROUP_PAIRS as usize)
        .copied()
        .collect();
    assert_eq!(
        sat_mapping(&gpu, bodies, &big),
        SatMapping::PerInvocation { cooperative: false }
    );
    let mut rng = seeded_rng(0xb0c5_0e17);
    let box_shapes = random_boxes(&mut rng, 8);
    let boxes = gpu_or_skip(&box_shapes).expect("the adapter exists");
    let (box_bodies, box_pairs) = random_pairs(&mut rng, &box_shapes, 100, CONTACT_REACH);
    assert_eq!(
        sat_mapping(&boxes, &box_bodies, &box_pairs),
        SatMapping::PerInvocation { cooperative: false }
    );

    // The host's small call: the scene's pairs, then the CPU's results.
    let Some(stats) = check_batch(&scene.shapes, &scene.bodies, &scene_pairs, scene.margin) else {
        return;
    };
    eprintln!("{small} hull32 pairs through the host: {stats:?}");
    assert!(stats.other_axis < stats.pairs / 100, "{stats:?}");
    assert!(stats.separated < stats.pairs, "{stats:?}");

    // Mixed shapes through the host's encode: its raw results are the one-per-invocation bits.
    let mut shapes = mixed_shapes(&mut rng);
    let (bodies, pairs) = mixed_batch(&mut rng, &mut shapes, 600);
    let mut gpu = gpu_or_skip(&shapes).expect("the adapter exists");
    assert_eq!(sat_mapping(&gpu, &bodies, &pairs), SatMapping::PerWorkgroup);
    // The host normalizes rotations as it stages the bodies; the reference runs on the same.
    let batch = ValidatedBatch::new(&shapes, &bodies, &pairs, 0.02).expect("a valid batch");
    let unit_bodies = batch.normalized_bodies();
    let reference = run_sat_kernel(&gpu, &shapes, &unit_bodies, &pairs, 0.02, Coop::None);
    let encoded = encoded_results(&mut gpu, &bodies, &pairs, 0.02);
    let mut compared = 0;
    for i in 0..pairs.len() {
        if reference[i].is_incomplete() || encoded[i].is_incomplete() {
            continue;
        }
        compared += 1;
        assert_eq!(
            bytemuck::bytes_of(&encoded[i]),
            bytemuck::bytes_of(&reference[i]),
            "pairs[{i}]: host {:?}, one per invocation {:?}",
            encoded[i],
            reference[i]
        );
    }
    assert!(compared > pairs.len() * 9 / 10, "{compared} of {}", pairs.len());
}

/// The mapping follows the call's pairs, not the shapes: over boxes and one hull32, a call of box
/// pairs with one pair in `PAIR_PER_WORKGROUP_SPLIT_SHARE` against the hull takes one workgroup
/// per pair, with one such pair fewer one pair per invocation; both through the host return the
/// CPU's results.
#[test]
fn mostly_box_calls_take_one_pair_per_invocation_over_shapes_with_a_hull() {
    let mut rng = seeded_rng(0xb0c5_4a11);
    let mut shapes = random_boxes(&mut rng, 4);
    let hull = shapes.len() as u32;
    shapes.push(surface_hull(&mut rng, 32, Vec3::new(0.5, 0.7, 0.9)));
    let Some(gpu) = gpu_or_skip(&shapes) else {
        return;
    };
    let (box_bodies, pairs) = random_pairs(&mut rng, &shapes[..4], 400, CONTACT_REACH);
    let share = PAIR_PER_WORKGROUP_SPLIT_SHARE as usize;
    // The second body of the first `split` of every `share`-th pair becomes the hull (its pose
    // kept): split pairs, a box's 12 edges times the hull's.
    let against_hull = |split: usize| {
        let mut bodies = box_bodies.clone();
        for pair in pairs.iter().step_by(share).take(split) {
            bodies[pair[1] as usize].shape = hull;
        }
        bodies
    };
    let most = pairs.len() / share;
    let per_invocation = SatMapping::PerInvocation { cooperative: false };
    for (split, mapping) in [(most, SatMapping::PerWorkgroup), (most - 1, per_invocation)] {
        let bodies = against_hull(split);
        assert_eq!(sat_mapping(&gpu, &bodies, &pairs), mapping, "{split} split pairs");
        let stats = check_batch(&shapes, &bodies, &pairs, 0.02).expect("the adapter exists");
        eprintln!("{} pairs, {split} against the hull: {stats:?}", pairs.len());
        assert!(stats.other_axis < stats.pairs / 100, "{stats:?}");
    }
}

/// The raw results `GpuNarrowphase::encode` leaves for `pairs` (the host's mapping).
fn encoded_results(
    gpu: &mut GpuNarrowphase,
    bodies: &[Body],
    pairs: &[[u32; 2]],
    margin: f32,
) -> Vec<GpuSatResult> {
    let device = gpu.device().clone();
    let queue = gpu.queue().clone();
    let mut encoder = device.create_command_encoder(&Default::default());
    let results = gpu
        .encode(&mut encoder, bodies, pairs, margin)
        .expect("encodes")
        .clone();
    let bytes = (pairs.len() * size_of::<GpuSatResult>()) as u64;
    let staging = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("test readback"),
        size: bytes,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    encoder.copy_buffer_to_buffer(&results, 0, &staging, 0, bytes);
    let submission = queue.submit([encoder.finish()]);
    staging.map_async(wgpu::MapMode::Read, .., |r| r.expect("maps"));
    device
        .poll(wgpu::PollType::Wait {
            submission_index: Some(submission),
            timeout: Some(std::time::Duration::from_secs(120)),
        })
        .expect("finishes");
    let view = staging.get_mapped_range(..).expect("mapped");
    bytemuck::pod_collect_to_vec(&view)
}

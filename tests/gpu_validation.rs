//! The GPU backend validates a batch while it writes it into staging memory: the same errors as
//! `ValidatedBatch::new` (the first bad entry in input order, margin before bodies before pairs,
//! also when the bad pair lies in a later round), a narrowphase still usable after a refused
//! batch, and the same result bits whether the caller validated the batch or the GPU checked it
//! while staging (rotations normalized on use on the host, stored normalized by the caller).

mod support;

use glam::{Quat, Vec3};
use hullsat::narrowphase::gpu::Clipping;
use hullsat::{
    Body, Cuboid, GpuError, GpuNarrowphase, HalfSpace, InputError, Pose, Shape, Sphere, ValidatedBatch,
};
use rand::RngExt;
use support::{gpu_or_skip, random_rotation, seeded_rng};

/// Pairs per round of a pipelined GPU batch (`PIPELINE_PAIRS` in the rounds module).
const ROUND_PAIRS: usize = 1 << 18;

/// A unit sphere, a box and a half-space (y <= 0).
fn shapes() -> Vec<Shape> {
    vec![
        Shape::Sphere(Sphere::new(0.5).expect("valid sphere")),
        Shape::Cuboid(Cuboid::new(Vec3::new(0.5, 0.3, 0.4)).expect("valid box")),
        Shape::HalfSpace(HalfSpace::new(Vec3::Y, 0.0).expect("valid half-space")),
    ]
}

/// `count` bodies on a line along x, 0.9 apart (neighbours touch), alternating spheres and
/// boxes.
fn bodies(count: usize) -> Vec<Body> {
    (0..count)
        .map(|i| Body {
            shape: (i % 2) as u32,
            pose: Pose::new(Vec3::new(i as f32 * 0.9, 0.2, 0.0), Quat::IDENTITY),
        })
        .collect()
}

/// Every neighbouring pair, some given with the higher index first.
fn pairs(bodies: usize, count: usize) -> Vec<[u32; 2]> {
    (0..count)
        .map(|i| {
            let a = (i % (bodies - 1)) as u32;
            if i % 3 == 0 { [a + 1, a] } else { [a, a + 1] }
        })
        .collect()
}

/// `gpu`'s error for the batch on both clipping paths and through `sat`, checked equal to
/// `ValidatedBatch::new`'s.
fn assert_same_error(
    gpu: &mut GpuNarrowphase,
    bodies: &[Body],
    pairs: &[[u32; 2]],
    margin: f32,
) -> InputError {
    let shapes = gpu.shapes().to_vec();
    let expected = ValidatedBatch::new(&shapes, bodies, pairs, margin).expect_err("bad input");
    for clipping in [Clipping::Gpu, Clipping::Cpu] {
        gpu.set_clipping(clipping).expect("clipping is supported");
        match gpu.collide(bodies, pairs, margin) {
            Err(GpuError::Input(e)) => assert_eq!(e, expected, "{clipping:?}"),
            other => panic!(
                "expected {expected} under {clipping:?}, got {:?}",
                other.map(|r| r.len())
            ),
        }
    }
    match gpu.sat(bodies, pairs, margin) {
        Err(GpuError::Input(e)) => assert_eq!(e, expected, "sat"),
        other => panic!("expected {expected} from sat, got {:?}", other.map(|r| r.len())),
    }
    // `encode` records into the caller's encoder: refused, it records nothing there.
    let device = gpu.device().clone();
    let mut encoder = device.create_command_encoder(&Default::default());
    match gpu.encode(&mut encoder, bodies, pairs, margin) {
        Err(GpuError::Input(e)) => assert_eq!(e, expected, "encode"),
        other => panic!("expected {expected} from encode, got {:?}", other.map(drop)),
    }
    gpu.queue().submit([encoder.finish()]);
    expected
}

#[test]
fn gpu_staging_names_the_first_bad_entry_as_validation_does() {
    let shapes = shapes();
    let Some(mut gpu) = gpu_or_skip(&shapes) else {
        return;
    };
    // Enough bodies and pairs for many parallel staging tasks.
    let good_bodies = bodies(50_000);
    let good_pairs = pairs(good_bodies.len(), 60_000);

    let mut bad = good_bodies.clone();
    bad[40_000].pose.rotation = Quat::from_xyzw(0.0, 0.0, 0.0, 2.0);
    bad[30_000].shape = 7;
    bad[12_345].pose.translation.x = f64::NAN;
    let error = assert_same_error(&mut gpu, &bad, &good_pairs, 0.0);
    assert_eq!(error.path, "bodies[12345].position");
    bad[12_345].pose.translation.x = 2.0e12;
    let error = assert_same_error(&mut gpu, &bad, &good_pairs, 0.0);
    assert_eq!(error.path, "bodies[12345].position");
    bad[12_345].pose.translation.x = 0.0;
    let error = assert_same_error(&mut gpu, &bad, &good_pairs, 0.0);
    assert_eq!(
        error.to_string(),
        "bodies[30000].shape: shape 7 does not exist (3 shapes)"
    );
    bad[30_000].shape = 0;
    let error = assert_same_error(&mut gpu, &bad, &good_pairs, 0.0);
    assert_eq!(error.path, "bodies[40000].rotation");
    // The margin is checked before the bodies.
    let error = assert_same_error(&mut gpu, &bad, &good_pairs, -1.0);
    assert_eq!(error.path, "margin");
    assert_same_error(&mut gpu, &good_bodies, &good_pairs, f32::NAN);
    assert_same_error(&mut gpu, &good_bodies, &good_pairs, 1.0e13);

    let mut bodies = good_bodies.clone();
    bodies[10].shape = 2;
    bodies[20].shape = 2;
    let mut bad = good_pairs.clone();
    bad[55_000] = [5, 5];
    bad[20_000] = [10, 20];
    bad[59_000] = [0, 50_000];
    let error = assert_same_error(&mut gpu, &bodies, &bad, 0.0);
    assert_eq!(
        error.to_string(),
        "pairs[20000]: two half-spaces cannot be tested against each other"
    );
    bad[20_000] = [10, 3];
    let error = assert_same_error(&mut gpu, &bodies, &bad, 0.0);
    assert_eq!(error.to_string(), "pairs[55000]: body 5 is paired with itself");
    bad[55_000] = [5, 6];
    let error = assert_same_error(&mut gpu, &bodies, &bad, 0.0);
    assert_eq!(error.to_string(), "pairs[59000]: body 50000 does not exist");

    // Still usable afterwards, and the same as the CPU's verdicts.
    gpu.set_clipping(Clipping::Gpu).expect("clipping is supported");
    let results = gpu
        .collide(&good_bodies, &good_pairs[..1000], 0.0)
        .expect("valid batch");
    let cpu = hullsat::CpuNarrowphase::new(shapes.clone())
        .collide(&good_bodies, &good_pairs[..1000], 0.0)
        .expect("valid batch");
    let verdicts = |r: &[Option<hullsat::Manifold>]| r.iter().map(Option::is_some).collect::<Vec<_>>();
    assert_eq!(verdicts(&results), verdicts(&cpu));
    assert!(results.iter().flatten().count() > 900, "neighbours touch");
}

#[test]
fn a_bad_pair_in_a_later_round_is_named_after_earlier_rounds_ran() {
    let shapes = shapes();
    let Some(mut gpu) = gpu_or_skip(&shapes) else {
        return;
    };
    // Spheres only: the cheapest pairs for a software driver.
    let bodies: Vec<Body> = bodies(2_000)
        .into_iter()
        .map(|b| Body { shape: 0, ..b })
        .collect();
    let mut pairs = pairs(bodies.len(), ROUND_PAIRS + 20_000);
    pairs[ROUND_PAIRS + 15_000] = [3, 3];
    pairs[ROUND_PAIRS + 10_000] = [7, 2_000];
    gpu.set_clipping(Clipping::Gpu).expect("clipping is supported");
    let error = match gpu.collide(&bodies, &pairs, 0.0) {
        Err(GpuError::Input(e)) => e,
        other => panic!("expected an input error, got {:?}", other.map(|r| r.len())),
    };
    assert_eq!(
        error.to_string(),
        format!("pairs[{}]: body 2000 does not exist", ROUND_PAIRS + 10_000)
    );
    // The pending round was cancelled cleanly: the next call runs.
    let results = gpu.collide(&bodies, &pairs[..1000], 0.0).expect("valid batch");
    assert_eq!(results.len(), 1000);
}

#[test]
fn checked_while_staged_and_validated_by_the_caller_give_the_same_bits() {
    let shapes = shapes();
    let Some(mut gpu) = gpu_or_skip(&shapes) else {
        return;
    };
    // Rotations off unit length by up to the tolerance, bodies close enough to touch, pairs in
    // both orders, boxes on a half-space.
    let mut rng = seeded_rng(0x57a9ed);
    let mut bodies: Vec<Body> = (0..3_000)
        .map(|i| {
            let scale = 1.0 + rng.random_range(-9.0e-4..9.0e-4);
            let rotation = random_rotation(&mut rng);
            let position = Vec3::new(
                rng.random_range(-6.0..6.0),
                rng.random_range(0.1..2.0),
                rng.random_range(-6.0..6.0),
            );
            Body {
                shape: (i % 2) as u32,
                pose: Pose::new(position, Quat::from_vec4(glam::Vec4::from(rotation) * scale)),
            }
        })
        .collect();
    bodies[0] = Body {
        shape: 2,
        pose: Pose::IDENTITY,
    };
    let pairs: Vec<[u32; 2]> = (0..20_000)
        .map(|_| {
            let a = rng.random_range(0..bodies.len() as u32);
            let b = rng.random_range(0..bodies.len() as u32 - 1);
            let b = if b >= a { b + 1 } else { b };
            [a, b]
        })
        .chain((1..200).map(|b| [b, 0]))
        .collect();
    let batch = ValidatedBatch::new(&shapes, &bodies, &pairs, 0.05).expect("valid batch");
    for clipping in [Clipping::Gpu, Clipping::Cpu] {
        gpu.set_clipping(clipping).expect("clipping is supported");
        let staged = gpu.collide(&bodies, &pairs, 0.05).expect("valid batch");
        let validated = gpu.collide_validated(&batch).expect("valid batch");
        assert!(
            staged.iter().flatten().count() > 200,
            "{clipping:?}: some pairs touch"
        );
        for (i, (s, v)) in staged.iter().zip(&validated).enumerate() {
            assert_eq!(format!("{s:?}"), format!("{v:?}"), "{clipping:?} pairs[{i}]");
        }
    }
}

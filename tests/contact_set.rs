//! `collide_into` and [`ContactSet`] on both backends: the set holds exactly the touching pairs
//! of `collide`, bit for bit (the GPU's against the GPU's own `collide`, which reads the same
//! kernel output into one entry per pair, under both clipping modes; the GPU = CPU contract is
//! tests/contract.rs'), in pair order, on the shared test scenes
//! (tests/support/suites.rs) with pairs given in either order; empty batches; one set reused
//! across calls of different sizes; and a refused call leaves the set empty.
//!
//! The GPU cases run on whatever adapter wgpu finds (Mesa lavapipe in CI); without one they
//! print a line and return, unless `HULLSAT_REQUIRE_GPU=1`.

mod support;

use hullsat::narrowphase::gpu::Clipping;
use hullsat::{ContactSet, CpuNarrowphase, GpuNarrowphase, Manifold, Shape, ValidatedBatch};
use support::suites::{Batch, primitive_batch, primitive_library, random_hull_pairs, shape_library};
use support::{gpu_or_skip, seeded_rng};

/// Hull pairs per margin.
const HULL_PAIRS: usize = 3000;

/// Speculative margins, length units (shapes are 0.5 to 2 units across).
const MARGINS: [f32; 2] = [0.0, 0.05];

/// Random hull and box pairs, and every primitive kind combination, at each margin; each also
/// with every pair given the other way round and with every other pair reversed.
fn batches() -> Vec<Batch> {
    let mut batches = Vec::new();
    let mut rng = seeded_rng(0xc0_47ac_75e7);
    let shapes = shape_library(&mut rng);
    let library = primitive_library(&mut rng);
    for margin in MARGINS {
        let (bodies, pairs, _) = random_hull_pairs(&mut rng, &shapes, HULL_PAIRS);
        batches.push(Batch {
            shapes: shapes.clone(),
            bodies,
            pairs,
            margin,
        });
        batches.push(primitive_batch(&mut rng, &library, 60, margin).at(margin));
    }
    let reversed: Vec<Batch> = batches
        .iter()
        .flat_map(|b| {
            let all = b.pairs.iter().map(|&[x, y]| [y, x]).collect();
            let every_other = b
                .pairs
                .iter()
                .enumerate()
                .map(|(i, &[x, y])| if i % 2 == 1 { [y, x] } else { [x, y] })
                .collect();
            [all, every_other].map(|pairs| Batch {
                shapes: b.shapes.clone(),
                bodies: b.bodies.clone(),
                pairs,
                margin: b.margin,
            })
        })
        .collect();
    batches.extend(reversed);
    batches
}

/// Every bit of a manifold (normal, separation, points, ids), so `-0.0` and `0.0` differ.
fn bits(m: &Manifold) -> Vec<u64> {
    let mut bits: Vec<u64> = m.normal.to_array().iter().map(|x| x.to_bits() as u64).collect();
    bits.push(m.separation.to_bits() as u64);
    for p in m.points() {
        bits.extend(p.position.to_array().map(f64::to_bits));
        bits.extend([p.depth.to_bits() as u64, p.id.0 as u64]);
    }
    bits
}

/// Asserts that `set` holds exactly the `Some` entries of `expected`, bit for bit, in order.
fn assert_same(set: &ContactSet, expected: &[Option<Manifold>], what: &str) {
    let touching: Vec<(u32, &Manifold)> = expected
        .iter()
        .enumerate()
        .filter_map(|(i, m)| Some((i as u32, m.as_ref()?)))
        .collect();
    assert_eq!(set.len(), touching.len(), "{what}: touching pairs");
    assert_eq!(set.is_empty(), touching.is_empty(), "{what}");
    for ((pair, m), (want_pair, want)) in set.iter().zip(&touching) {
        assert_eq!(pair, *want_pair, "{what}: pair order");
        assert_eq!(bits(m), bits(want), "{what}: pair {pair}");
        assert_eq!(set.get(pair).map(bits), Some(bits(want)), "{what}: get({pair})");
    }
    assert_eq!(set.to_options(expected.len()), expected, "{what}: to_options");
    for (i, e) in expected.iter().enumerate() {
        if e.is_none() {
            assert!(set.get(i as u32).is_none(), "{what}: pair {i} is apart");
        }
    }
}

#[test]
fn cpu_collide_into_equals_collide_bit_for_bit() {
    // One set reused across every batch (of different sizes), so stale entries would show.
    let mut set = ContactSet::new();
    for (b, batch) in batches().iter().enumerate() {
        let cpu = CpuNarrowphase::new(&batch.shapes);
        let expected = cpu.collide(&batch.bodies, &batch.pairs, batch.margin).unwrap();
        assert!(expected.iter().any(Option::is_some) && expected.iter().any(Option::is_none));
        cpu.collide_into(&batch.bodies, &batch.pairs, batch.margin, &mut set)
            .unwrap();
        assert_same(&set, &expected, &format!("batch {b}"));
        let validated =
            ValidatedBatch::new(&batch.shapes, &batch.bodies, &batch.pairs, batch.margin).unwrap();
        cpu.collide_validated_into(&validated, &mut set).unwrap();
        assert_same(&set, &expected, &format!("batch {b}, validated"));
        // A prefix: fewer pairs than the call before.
        let short = &batch.pairs[..batch.pairs.len() / 3];
        cpu.collide_into(&batch.bodies, short, batch.margin, &mut set)
            .unwrap();
        assert_same(&set, &expected[..short.len()], &format!("batch {b}, prefix"));
    }
}

#[test]
fn cpu_empty_batches_and_errors_leave_the_set_empty() {
    let batch = &batches()[0];
    let cpu = CpuNarrowphase::new(&batch.shapes);
    let mut set = ContactSet::new();
    cpu.collide_into(&batch.bodies, &batch.pairs, batch.margin, &mut set)
        .unwrap();
    assert!(!set.is_empty());
    cpu.collide_into(&batch.bodies, &[], batch.margin, &mut set)
        .unwrap();
    assert!(set.is_empty() && set.to_options(0).is_empty());

    let refill = |set: &mut ContactSet| {
        cpu.collide_into(&batch.bodies, &batch.pairs, batch.margin, set)
            .unwrap();
        assert!(!set.is_empty());
    };
    let body_count = batch.bodies.len() as u32;
    let mut bad_pairs = batch.pairs.clone();
    bad_pairs[7] = [0, body_count];
    refill(&mut set);
    assert!(
        cpu.collide_into(&batch.bodies, &bad_pairs, batch.margin, &mut set)
            .is_err()
    );
    assert!(set.is_empty(), "a refused pair list leaves the set empty");
    refill(&mut set);
    assert!(
        cpu.collide_into(&batch.bodies, &batch.pairs, -1.0, &mut set)
            .is_err()
    );
    assert!(set.is_empty(), "a refused margin leaves the set empty");
    // A batch validated against other shapes.
    refill(&mut set);
    let other_shapes: Vec<Shape> = batch.shapes[..1].to_vec();
    let validated = ValidatedBatch::new(&batch.shapes, &batch.bodies, &batch.pairs, batch.margin).unwrap();
    assert!(
        CpuNarrowphase::new(&other_shapes)
            .collide_validated_into(&validated, &mut set)
            .is_err()
    );
    assert!(set.is_empty(), "a refused batch leaves the set empty");
}

#[test]
fn gpu_collide_into_equals_gpu_collide_bit_for_bit() {
    let batches = batches();
    let mut set = ContactSet::new();
    for (b, batch) in batches.iter().enumerate() {
        let Some(mut gpu) = gpu_or_skip(&batch.shapes) else {
            return;
        };
        for clipping in [Clipping::Gpu, Clipping::Cpu] {
            gpu.set_clipping(clipping).unwrap();
            let what = format!("batch {b}, {clipping:?}");
            let expected = gpu.collide(&batch.bodies, &batch.pairs, batch.margin).unwrap();
            assert!(expected.iter().any(Option::is_some), "{what}");
            gpu.collide_into(&batch.bodies, &batch.pairs, batch.margin, &mut set)
                .unwrap();
            assert_same(&set, &expected, &what);
            let validated =
                ValidatedBatch::new(&batch.shapes, &batch.bodies, &batch.pairs, batch.margin).unwrap();
            gpu.collide_validated_into(&validated, &mut set).unwrap();
            assert_same(&set, &expected, &format!("{what}, validated"));
            let short = &batch.pairs[..batch.pairs.len() / 3];
            gpu.collide_into(&batch.bodies, short, batch.margin, &mut set)
                .unwrap();
            let expected_short = gpu.collide(&batch.bodies, short, batch.margin).unwrap();
            assert_same(&set, &expected_short, &format!("{what}, prefix"));
        }
    }
}

/// A batch large enough that the host finish runs its parallel steps: a list of more entries
/// than are scattered on the calling thread (16k) and more pairs than are counted there (64k).
#[test]
fn gpu_collide_into_equals_gpu_collide_on_a_large_batch() {
    let mut rng = seeded_rng(0x1a46_eba7);
    let shapes = shape_library(&mut rng);
    let (bodies, pairs, _) = random_hull_pairs(&mut rng, &shapes, 70_000);
    let Some(mut gpu) = gpu_or_skip(&shapes) else {
        return;
    };
    let expected = gpu.collide(&bodies, &pairs, MARGINS[1]).unwrap();
    let touching = expected.iter().flatten().count();
    assert!(touching > 16 * 1024, "{touching} touching pairs");
    let mut set = ContactSet::new();
    gpu.collide_into(&bodies, &pairs, MARGINS[1], &mut set).unwrap();
    assert_same(&set, &expected, "70,000 pairs");
}

#[test]
fn gpu_empty_batches_and_errors_leave_the_set_empty() {
    let batch = &batches()[0];
    let Some(mut gpu) = gpu_or_skip(&batch.shapes) else {
        return;
    };
    let mut set = ContactSet::new();
    for clipping in [Clipping::Gpu, Clipping::Cpu] {
        gpu.set_clipping(clipping).unwrap();
        let refill = |gpu: &mut GpuNarrowphase, set: &mut ContactSet| {
            gpu.collide_into(&batch.bodies, &batch.pairs, batch.margin, set)
                .unwrap();
            assert!(!set.is_empty());
        };
        refill(&mut gpu, &mut set);
        gpu.collide_into(&batch.bodies, &[], batch.margin, &mut set)
            .unwrap();
        assert!(set.is_empty(), "{clipping:?}: empty batch");
        let mut bad_pairs = batch.pairs.clone();
        // Past the first round's worth of good pairs would still be refused: the pair checks
        // run before any round is read.
        let last = bad_pairs.len() - 1;
        bad_pairs[last] = [0, batch.bodies.len() as u32];
        refill(&mut gpu, &mut set);
        assert!(
            gpu.collide_into(&batch.bodies, &bad_pairs, batch.margin, &mut set)
                .is_err()
        );
        assert!(
            set.is_empty(),
            "{clipping:?}: a refused pair list leaves the set empty"
        );
        refill(&mut gpu, &mut set);
        assert!(
            gpu.collide_into(&batch.bodies, &batch.pairs, f32::NAN, &mut set)
                .is_err()
        );
        assert!(
            set.is_empty(),
            "{clipping:?}: a refused margin leaves the set empty"
        );
        // The narrowphase still works after a refused call.
        let expected = gpu.collide(&batch.bodies, &batch.pairs, batch.margin).unwrap();
        gpu.collide_into(&batch.bodies, &batch.pairs, batch.margin, &mut set)
            .unwrap();
        assert_same(&set, &expected, &format!("{clipping:?}: after an error"));
    }
}

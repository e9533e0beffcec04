//! The GPU ordering of a host round's manifold list (`hullsat::internals::ListOrderProbe`): a
//! list of distinct pairs in any order comes back in increasing pair order, whole, at sizes
//! around its block (256 pairs) and past one scan chunk of blocks (65,536 pairs), round after
//! round on the same buffers (its table and counts are left zero), and an entry naming a pair
//! twice or outside the round is reported in the head (`listed` > `count`), the next round
//! still right; so is a count past the room of the list. The head carries the clip's count of
//! incident-face searches run alone over.
//!
//! Runs on whatever adapter wgpu finds (Mesa lavapipe in CI); without one the tests print a line
//! and return, unless `HULLSAT_REQUIRE_GPU=1`.

mod support;

use hullsat::internals::ListOrderProbe;
use hullsat::narrowphase::gpu::layout::GpuManifold;
use rand::RngExt;
use rand::seq::SliceRandom;
use support::{on_shared_context_or_skip, seeded_rng};

/// A probe on the shared device, or `None` (after printing why) without an adapter unless
/// `HULLSAT_REQUIRE_GPU=1`.
fn probe_or_skip() -> Option<ListOrderProbe> {
    on_shared_context_or_skip("the ordering", ListOrderProbe::new)
}

/// An entry for `pair` whose other fields say which entry it is (`tag`).
fn entry(pair: u32, tag: u32) -> GpuManifold {
    GpuManifold {
        separation: tag as f32,
        ids: [tag, pair, !tag, 7],
        count: 1 + tag % 4,
        pair,
        ..GpuManifold::default()
    }
}

/// Each of the round's `pairs` pairs listed with probability `share`, in random order.
fn shuffled_list(rng: &mut impl rand::Rng, pairs: u32, share: f64) -> Vec<GpuManifold> {
    let mut list = Vec::new();
    for pair in 0..pairs {
        if rng.random_bool(share) {
            list.push(entry(pair, rng.random()));
        }
    }
    list.shuffle(rng);
    list
}

/// `list` in increasing pair order (the expected result).
fn sorted(list: &[GpuManifold]) -> Vec<GpuManifold> {
    let mut sorted = list.to_vec();
    sorted.sort_by_key(|m| m.pair);
    sorted
}

#[test]
fn distinct_pairs_in_any_order_come_back_in_pair_order_round_after_round() {
    let Some(mut probe) = probe_or_skip() else {
        return;
    };
    let mut rng = seeded_rng(53);
    let mut round = 0;
    // Larger and smaller rounds alternate over the same buffers, in both slots.
    for pairs in [1u32, 255, 256, 257, 10_000, 70_000, 1 << 18, 3, 1000] {
        for share in [0.0, 0.6, 1.0] {
            let list = shuffled_list(&mut rng, pairs, share);
            let (head, ordered) = probe
                .order(&list, (None, round as u32), pairs, round % 2)
                .expect("the ordering runs");
            let what = format!("{pairs} pairs, {} listed", list.len());
            // The clip's count of searches run alone comes over as it was.
            assert_eq!(
                (head.count, head.listed, head.searched_alone),
                (list.len() as u32, list.len() as u32, round as u32),
                "{what}"
            );
            round += 1;
            assert!(ordered == sorted(&list), "{what}: not the list in pair order");
        }
    }
}

#[test]
fn a_pair_listed_twice_or_outside_the_round_is_reported_and_leaves_no_trace() {
    let Some(mut probe) = probe_or_skip() else {
        return;
    };
    let mut rng = seeded_rng(59);
    let pairs = 5000;
    let mut list = shuffled_list(&mut rng, pairs, 0.5);
    let twice = list[list.len() / 2].pair;
    for bad in [entry(twice, 1), entry(pairs, 2), entry(u32::MAX, 3)] {
        let mut with_bad = list.clone();
        with_bad.insert(rng.random_range(0..=list.len()), bad);
        let (head, _) = probe
            .order(&with_bad, (None, 0), pairs, 0)
            .expect("the ordering runs");
        assert_eq!(
            (head.listed, head.count),
            (with_bad.len() as u32, list.len() as u32),
            "pair {} added to a list of {}",
            bad.pair,
            list.len()
        );
        // The next round, on the same table and counts, is whole and in order.
        list = shuffled_list(&mut rng, pairs, 0.5);
        let (head, ordered) = probe
            .order(&list, (None, 0), pairs, 1)
            .expect("the ordering runs");
        assert_eq!((head.count, head.listed), (list.len() as u32, list.len() as u32));
        assert!(
            ordered == sorted(&list),
            "after pair {}: not in pair order",
            bad.pair
        );
    }
}

#[test]
fn a_count_past_the_lists_room_is_reported() {
    let Some(mut probe) = probe_or_skip() else {
        return;
    };
    // Every pair listed once, and a count of 5 entries more than the list holds: 585 pairs
    // fill a 64 KiB buffer exactly (16 + 585 * 112 bytes), so no zeroed room follows them.
    let pairs = 585;
    let list: Vec<GpuManifold> = (0..pairs).map(|pair| entry(pair, pair)).collect();
    let (head, ordered) = probe
        .order(&list, (Some(pairs + 5), 0), pairs, 0)
        .expect("the ordering runs");
    assert_eq!((head.listed, head.count), (pairs + 5, pairs));
    assert!(ordered == list, "the entries the list holds are placed");
}

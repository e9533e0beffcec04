//! The GPU radix sort (`hullsat::internals::GpuRadixProbe`) against a stable sort on the CPU:
//! keys by their high word alone (the BVH's Morton keys: ties keep their input order) and
//! composite pair keys of w + w bits (the broadphase's, digits straddling the two words), at
//! sizes around its tile (1,024 keys) and past one scan block (300,000 keys: two scan levels),
//! and with the key count read from a GPU buffer (below, at and above the capacity).
//!
//! Runs on whatever adapter wgpu finds (Mesa lavapipe in CI); without one the tests print a line
//! and return, unless `HULLSAT_REQUIRE_GPU=1`.

mod support;

use hullsat::internals::GpuRadixProbe;
use rand::RngExt;
use support::{on_shared_context_or_skip, seeded_rng};

/// A probe on the shared device, or `None` (after printing why) without an adapter unless
/// `HULLSAT_REQUIRE_GPU=1`.
fn probe_or_skip() -> Option<GpuRadixProbe> {
    on_shared_context_or_skip("the sorter", GpuRadixProbe::new)
}

/// The first `key_bits` bits of `hi * 2^low_bits + lo` (`lo` below `2^low_bits`, or ignored
/// for 0 bits).
fn composite(key: [u32; 2], low_bits: u32, key_bits: u32) -> u64 {
    let lo = if low_bits == 0 { 0 } else { u64::from(key[1]) };
    let full = (u64::from(key[0]) << low_bits) | lo;
    full & ((1u64 << key_bits) - 1)
}

/// `keys` stably sorted by their composite key (the CPU reference).
fn cpu_sorted(keys: &[[u32; 2]], low_bits: u32, key_bits: u32) -> Vec<[u32; 2]> {
    let mut sorted = keys.to_vec();
    sorted.sort_by_key(|&k| composite(k, low_bits, key_bits));
    sorted
}

#[test]
fn keys_by_their_high_word_keep_the_input_order_of_ties() {
    let Some(mut probe) = probe_or_skip() else {
        return;
    };
    let mut rng = seeded_rng(41);
    for count in [0usize, 1, 2, 1023, 1024, 1025, 4097, 300_000] {
        // Codes from a few values (many ties) and from the whole range; lo = the input index.
        for spread in [7u32, u32::MAX] {
            let keys: Vec<[u32; 2]> = (0..count)
                .map(|i| [rng.random_range(0..=spread), i as u32])
                .collect();
            let sorted = probe.sort(&keys, None, 0, 32).expect("the sort runs");
            assert!(sorted == cpu_sorted(&keys, 0, 32), "{count} keys up to {spread}");
        }
    }
}

#[test]
fn pair_keys_sort_by_both_words_over_the_bits_they_need() {
    let Some(mut probe) = probe_or_skip() else {
        return;
    };
    let mut rng = seeded_rng(42);
    // Bits per word: 1 (one pass of 2 bits), 4, 9 and 13 (digits straddle the words), 16.
    for (bits, count) in [(1u32, 3usize), (4, 100), (9, 5000), (13, 70_000), (16, 3000)] {
        let keys: Vec<[u32; 2]> = (0..count)
            .map(|_| {
                let a = rng.random_range(0..1u32 << bits);
                [a, rng.random_range(0..1u32 << bits)]
            })
            .collect();
        let sorted = probe.sort(&keys, None, bits, 2 * bits).expect("the sort runs");
        assert!(
            sorted == cpu_sorted(&keys, bits, 2 * bits),
            "{bits} + {bits} bits, {count} keys"
        );
    }
}

#[test]
fn a_gpu_count_sorts_only_the_keys_it_counts() {
    let Some(mut probe) = probe_or_skip() else {
        return;
    };
    let mut rng = seeded_rng(43);
    let keys: Vec<[u32; 2]> = (0..5000)
        .map(|_| [rng.random_range(0..1000), rng.random_range(0..1000)])
        .collect();
    for count in [0u32, 1, 700, 1024, 5000, 1_000_000] {
        let live = (count as usize).min(keys.len());
        let sorted = probe.sort(&keys, Some(count), 10, 20).expect("the sort runs");
        assert!(sorted == cpu_sorted(&keys[..live], 10, 20), "count {count}");
    }
}

/// On a device of 16 workgroups per dimension every dispatch of more than 16 tiles or scan
/// blocks runs as a grid of several rows, which the kernels count in rows of the limit they
/// were given (not `num_workgroups`, which DX12 leaves 0 in indirect dispatches).
#[test]
fn grids_of_several_rows_sort_the_same() {
    let limits = wgpu::Limits {
        max_compute_workgroups_per_dimension: 16,
        ..wgpu::Limits::default()
    };
    let Some((device, queue)) = support::device_or_skip(limits) else {
        return;
    };
    let context = hullsat::gpu::GpuContext::with_device(device, queue).expect("a context");
    let mut probe = GpuRadixProbe::new(context).expect("the sorter starts");
    let mut rng = seeded_rng(43);
    for count in [16 * 1024 + 1, 100_000] {
        let keys: Vec<[u32; 2]> = (0..count)
            .map(|i| [rng.random_range(0..=u32::MAX), i as u32])
            .collect();
        let sorted = probe.sort(&keys, None, 0, 32).expect("the sort runs");
        assert!(sorted == cpu_sorted(&keys, 0, 32), "{count} keys");
    }
}

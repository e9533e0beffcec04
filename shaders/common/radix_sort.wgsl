// A stable LSD radix sort of (hi, lo) u32 key pairs. Host (Rust twin): src/gpu/radix_sort.rs;
// every struct and constant below must match it (checked by tests/radix_sort_layout.rs).
// The sorted key is the composite hi * 2^low_bits + lo (lo < 2^low_bits), over its first
// key_bits bits, RADIX_BITS per pass; keys ping-pong between two buffers (keys_in -> keys_out).
// 1. `prepare` (once per sort): the key count (the host's, or a GPU counter clamped to
//    max_keys), its tiles of RADIX_TILE keys, and the indirect arguments of every dispatch.
// Then per pass of RADIX_BITS bits:
// 2. `histogram`: workgroup t counts its tile's digits into scan[digit * tiles + t].
// 3. `scan_reduce` (each level up) and `scan_down` (each level down): an exclusive scan of that
//    digit-major table, SCAN_BLOCK entries per workgroup, so entry (digit, t) becomes the slot of
//    tile t's first key of that digit.
// 4. `scatter`: workgroup t ranks its tile's keys within their digit in tile order (a bitonic
//    sort of (digit, slot) in workgroup memory: stable) and writes each key to its digit's slot
//    plus its rank.

// Must match crate::gpu::radix_sort::RADIX_WORKGROUP_SIZE (one invocation per digit).
const RADIX_WORKGROUP_SIZE: u32 = 256u;
// Must match crate::gpu::radix_sort::RADIX_BITS.
const RADIX_BITS: u32 = 8u;
// Must match crate::gpu::radix_sort::RADIX_BINS.
const RADIX_BINS: u32 = 256u;
// Must match crate::gpu::radix_sort::RADIX_TILE: keys per workgroup in steps 2 and 4.
const RADIX_TILE: u32 = 1024u;
// Must match crate::gpu::radix_sort::SCAN_BLOCK: table entries per workgroup in step 3.
const SCAN_BLOCK: u32 = 1024u;
// Must match crate::gpu::radix_sort::MAX_SCAN_LEVELS.
const MAX_SCAN_LEVELS: u32 = 4u;

// Must match crate::gpu::radix_sort::GpuRadixParams (one per dispatch, dynamic offset).
struct GpuRadixParams {
    max_keys: u32,
    counted: u32,
    low_bits: u32,
    shift: u32,
    level: u32,
    level_offset: u32,
    parent_offset: u32,
    top: u32,
    max_groups: u32,
}

// Must match crate::gpu::radix_sort::GpuRadixState (written by step 1).
struct GpuRadixState {
    key_count: u32,
    tile_count: u32,
    _pad0: u32,
    _pad1: u32,
}

@group(0) @binding(0) var<storage, read> keys_in: array<vec2<u32>>;
@group(0) @binding(1) var<storage, read_write> keys_out: array<vec2<u32>>;
// The digit table (level 0, from 0) and the scan's block sums (level l from its offset).
@group(0) @binding(2) var<storage, read_write> scan: array<u32>;
// Read-only, so its counts are uniform and the kernels' early returns precede barriers.
@group(0) @binding(3) var<storage, read> state: GpuRadixState;
@group(0) @binding(4) var<uniform> params: GpuRadixParams;

// Step 1's own group (group 0 unused), so no dispatch binds the state both ways.
@group(1) @binding(0) var<uniform> prepare_params: GpuRadixParams;
// The key count in its first word (when `counted`).
@group(1) @binding(1) var<storage, read> counter: array<u32>;
@group(1) @binding(2) var<storage, read_write> prepare_state: GpuRadixState;
// Indirect arguments: slot 0 the tiles, slot 1 + l scan level l's blocks.
@group(1) @binding(3) var<storage, read_write> dispatch_args: array<u32>;

// Step 2's digit counts; step 4's first sorted slot of each digit.
var<workgroup> digit_count: array<atomic<u32>, RADIX_BINS>;
// Step 4: each digit's slot in keys_out for this tile.
var<workgroup> digit_offset: array<u32, RADIX_BINS>;
// Step 4: the tile's keys by slot.
var<workgroup> tile_keys: array<vec2<u32>, RADIX_TILE>;
// Step 4: (digit << 16) | slot, sorted; step 3: the scan's double buffer.
var<workgroup> ranks: array<u32, RADIX_TILE>;

fn ceil_div(a: u32, b: u32) -> u32 {
    return a / b + select(0u, 1u, a % b != 0u);
}

// The workgroup's index in its 2-D grid (x first): rows of params.max_groups workgroups, as
// write_dispatch lays them out (a grid of one row is shorter, its y always 0). Not from
// @builtin(num_workgroups): wgpu leaves that 0 in indirect dispatches on DX12 when its
// indirect-call validation is off, as in the shared context.
fn group_index(group: vec3<u32>) -> u32 {
    return group.y * params.max_groups + group.x;
}

// Bits shift .. shift + RADIX_BITS of the composite key hi * 2^low_bits + lo.
fn radix_digit(key: vec2<u32>) -> u32 {
    let shift = params.shift;
    let low = params.low_bits;
    var bits = 0u;
    if shift < low {
        bits = key.y >> shift;
    }
    if shift + RADIX_BITS > low {
        if shift >= low {
            bits |= key.x >> (shift - low);
        } else {
            bits |= key.x << (low - shift);
        }
    }
    return bits & (RADIX_BINS - 1u);
}

// Entries of scan level `level`: the digit table, then each level's block sums.
fn level_entries(level: u32) -> u32 {
    var entries = state.tile_count * RADIX_BINS;
    for (var l = 0u; l < level; l++) {
        entries = ceil_div(entries, SCAN_BLOCK);
    }
    return entries;
}

// Writes indirect dispatch `slot`: `groups` workgroups as a 2-D grid within max_groups per
// dimension (none for 0).
fn write_dispatch(slot: u32, groups: u32) {
    let x = max(min(groups, prepare_params.max_groups), 1u);
    let live = groups > 0u;
    dispatch_args[3u * slot] = select(0u, x, live);
    dispatch_args[3u * slot + 1u] = select(0u, ceil_div(groups, x), live);
    dispatch_args[3u * slot + 2u] = select(0u, 1u, live);
}

@compute @workgroup_size(1)
fn prepare_main() {
    var n = prepare_params.max_keys;
    if prepare_params.counted != 0u {
        n = min(counter[0], n);
    }
    let tiles = ceil_div(n, RADIX_TILE);
    prepare_state = GpuRadixState(n, tiles, 0u, 0u);
    write_dispatch(0u, tiles);
    var entries = tiles * RADIX_BINS;
    for (var level = 0u; level < MAX_SCAN_LEVELS; level++) {
        entries = ceil_div(entries, SCAN_BLOCK);
        write_dispatch(1u + level, entries);
    }
}

@compute @workgroup_size(RADIX_WORKGROUP_SIZE)
fn histogram_main(
    @builtin(local_invocation_index) local: u32,
    @builtin(workgroup_id) group: vec3<u32>,
) {
    let t = group_index(group);
    let tiles = state.tile_count;
    if t >= tiles {
        return;
    }
    atomicStore(&digit_count[local], 0u);
    workgroupBarrier();
    let base = t * RADIX_TILE;
    let live = min(RADIX_TILE, state.key_count - base);
    for (var k = local; k < live; k += RADIX_WORKGROUP_SIZE) {
        atomicAdd(&digit_count[radix_digit(keys_in[base + k])], 1u);
    }
    workgroupBarrier();
    // Digit-major: one scan of the table orders by digit, then by tile.
    scan[local * tiles + t] = atomicLoad(&digit_count[local]);
}

// Exclusive prefix sum of one value per invocation over the workgroup, and the total
// (Hillis-Steele, `ranks` as the double buffer). Holds barriers: call from uniform control flow.
fn workgroup_scan(local: u32, value: u32) -> vec2<u32> {
    ranks[local] = value;
    var half = 0u;
    for (var d = 1u; d < RADIX_WORKGROUP_SIZE; d *= 2u) {
        workgroupBarrier();
        var v = ranks[half + local];
        if local >= d {
            v += ranks[half + local - d];
        }
        half = RADIX_WORKGROUP_SIZE - half;
        ranks[half + local] = v;
    }
    workgroupBarrier();
    let inclusive = ranks[half + local];
    let total = ranks[half + RADIX_WORKGROUP_SIZE - 1u];
    workgroupBarrier();
    return vec2<u32>(inclusive - value, total);
}

// Entries of one scan block per invocation.
const SCAN_PER_INVOCATION: u32 = SCAN_BLOCK / RADIX_WORKGROUP_SIZE;

@compute @workgroup_size(RADIX_WORKGROUP_SIZE)
fn scan_reduce_main(
    @builtin(local_invocation_index) local: u32,
    @builtin(workgroup_id) group: vec3<u32>,
) {
    // Block b's sum becomes entry b of the level above.
    let b = group_index(group);
    let entries = level_entries(params.level);
    if b >= ceil_div(entries, SCAN_BLOCK) {
        return;
    }
    let first = b * SCAN_BLOCK + local * SCAN_PER_INVOCATION;
    var sum = 0u;
    for (var k = 0u; k < SCAN_PER_INVOCATION; k++) {
        if first + k < entries {
            sum += scan[params.level_offset + first + k];
        }
    }
    let scanned = workgroup_scan(local, sum);
    if local == 0u {
        scan[params.parent_offset + b] = scanned.y;
    }
}

@compute @workgroup_size(RADIX_WORKGROUP_SIZE)
fn scan_down_main(
    @builtin(local_invocation_index) local: u32,
    @builtin(workgroup_id) group: vec3<u32>,
) {
    // Block b scanned in place, plus its offset: entry b of the (scanned) level above.
    let b = group_index(group);
    let entries = level_entries(params.level);
    if b >= ceil_div(entries, SCAN_BLOCK) {
        return;
    }
    let first = b * SCAN_BLOCK + local * SCAN_PER_INVOCATION;
    var values: array<u32, SCAN_PER_INVOCATION>;
    var sum = 0u;
    for (var k = 0u; k < SCAN_PER_INVOCATION; k++) {
        values[k] = select(0u, scan[params.level_offset + first + k], first + k < entries);
        sum += values[k];
    }
    var running = workgroup_scan(local, sum).x;
    if params.top == 0u {
        running += scan[params.parent_offset + b];
    }
    for (var k = 0u; k < SCAN_PER_INVOCATION; k++) {
        if first + k < entries {
            scan[params.level_offset + first + k] = running;
        }
        running += values[k];
    }
}

@compute @workgroup_size(RADIX_WORKGROUP_SIZE)
fn scatter_main(
    @builtin(local_invocation_index) local: u32,
    @builtin(workgroup_id) group: vec3<u32>,
) {
    let t = group_index(group);
    let tiles = state.tile_count;
    if t >= tiles {
        return;
    }
    let base = t * RADIX_TILE;
    let live = min(RADIX_TILE, state.key_count - base);
    // Slots past the keys sort last (digit 0xffff).
    for (var k = local; k < RADIX_TILE; k += RADIX_WORKGROUP_SIZE) {
        var rank = 0xffffffffu;
        if k < live {
            let key = keys_in[base + k];
            tile_keys[k] = key;
            rank = (radix_digit(key) << 16u) | k;
        }
        ranks[k] = rank;
    }
    digit_offset[local] = scan[local * tiles + t];
    // Bitonic sort of the (digit, slot) ranks, ascending; unique, so ties keep tile order.
    for (var block = 2u; block <= RADIX_TILE; block *= 2u) {
        for (var d = block / 2u; d > 0u; d /= 2u) {
            workgroupBarrier();
            for (var q = local; q < RADIX_TILE / 2u; q += RADIX_WORKGROUP_SIZE) {
                // Compare-exchange q's pair (i, i + d): q with a zero bit inserted at d's bit
                // (d a power of two; no integer division, which GPUs run as a long sequence).
                let low = q & (d - 1u);
                let i = ((q - low) << 1u) | low;
                let a = ranks[i];
                let c = ranks[i + d];
                if (a > c) == ((i & block) == 0u) {
                    ranks[i] = c;
                    ranks[i + d] = a;
                }
            }
        }
    }
    workgroupBarrier();
    // Each digit's first sorted slot: a key's rank within its digit is its slot minus that.
    for (var p = local; p < live; p += RADIX_WORKGROUP_SIZE) {
        let digit = ranks[p] >> 16u;
        if p == 0u || (ranks[p - 1u] >> 16u) != digit {
            atomicStore(&digit_count[digit], p);
        }
    }
    workgroupBarrier();
    for (var p = local; p < live; p += RADIX_WORKGROUP_SIZE) {
        let rank = ranks[p];
        let digit = rank >> 16u;
        keys_out[digit_offset[digit] + p - atomicLoad(&digit_count[digit])] = tile_keys[rank & 0xffffu];
    }
}

// The compound stage's expansion (the GPU midphase): one caller pair per invocation turns a
// compound pair into child pairs, in A's frame. Rust twin: src/contact/compound.rs
// (collide_bodies, steps 1 and 2's posing); host: src/narrowphase/gpu/compound.rs.
//
// 1. Bounds guard. A pair of two single shapes is no compound pair: its range stays unlisted
//    (flags 0) and the clip kernel lists it; nor is a compound against a triangle mesh (the
//    mesh pass lists it: mesh_expand.wgsl).
// 2. B's pose in A's frame (relative_pose: the split translations); each of B's parts' boxes
//    there (its box in B's frame rotated, |R| h about the moved centre; for a single shape this
//    is looser than the CPU's tight box, which only adds child pairs apart beyond the margin),
//    grown by the margin and COMPOUND_AABB_PADDING; A's parts whose boxes overlap it. A
//    half-space part pairs with every part.
// 3. The child pairs counted; one atomicAdd reserves their contiguous slots (the total keeps
//    the true count; a range past the capacity is flagged overflow and nothing is written);
//    then written in (i, j) order, the CPU's sorted order: two virtual bodies each (A's part at
//    its pose in A; B's part at B-in-A ∘ its pose in B) and the tag i << 8 | j. The pair runs in
//    pair_to_run's order (resident calls: A the lower body); one that runs the other way round
//    is flagged COMPOUND_RANGE_SWAPPED with the lower body's pose in the given A's frame.
//
// Compiled after quat, body, layout and geometry.wgsl (COMPOUND_EXPAND_WGSL); its own bindings
// are group 2; group 1 is the chunk's bodies, pairs and params.

// Mirrors crate::constants::COMPOUND_AABB_PADDING (dimensionless, times a box's reach).
const COMPOUND_AABB_PADDING: f32 = 1.0e-5;

// The range table: the total of child pairs reserved (the sub-pair count), then one range
// per caller pair. Must match kernel_layout.rs COMPOUND_RANGES_HEAD and GpuCompoundRange.
struct CompoundRangeTable {
    total: atomic<u32>,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
    entries: array<GpuCompoundRange>,
}

@group(2) @binding(0) var<storage, read> compounds: array<GpuCompound>;
@group(2) @binding(1) var<storage, read> parts: array<GpuCompoundPart>;
@group(2) @binding(2) var<storage, read_write> sub_bodies: array<GpuBody>;
// Bound at the capacity: arrayLength is the most sub-pairs a call holds.
@group(2) @binding(3) var<storage, read_write> sub_tags: array<u32>;
@group(2) @binding(4) var<storage, read_write> ranges: CompoundRangeTable;

struct Aabb {
    lo: vec3<f32>,
    hi: vec3<f32>,
}

// Part `part` of B in A's frame (b_in_a): its box's box, grown by the margin and the padding.
fn grown_box_in_a(part: GpuCompoundPart, b_in_a: RelativePose, margin: f32) -> Aabb {
    // The rotated box's box: half extents |R| h about the moved centre.
    let centre = quat_rotate(b_in_a.q, 0.5 * (part.box_min + part.box_max)) + b_in_a.t;
    let h = 0.5 * (part.box_max - part.box_min);
    let x = abs(quat_rotate(b_in_a.q, vec3<f32>(1.0, 0.0, 0.0)));
    let y = abs(quat_rotate(b_in_a.q, vec3<f32>(0.0, 1.0, 0.0)));
    let z = abs(quat_rotate(b_in_a.q, vec3<f32>(0.0, 0.0, 1.0)));
    let half = x * h.x + y * h.y + z * h.z;
    let lo = centre - half;
    let hi = centre + half;
    let reach = max(abs(lo), abs(hi));
    let size = hi - lo;
    let extent = max(reach.x, max(reach.y, reach.z)) + max(size.x, max(size.y, size.z));
    let grow = margin + COMPOUND_AABB_PADDING * extent;
    return Aabb(lo - grow, hi + grow);
}

// Whether A's part `i` and B's part whose grown box in A's frame is `b_box` make a child pair.
fn is_child_pair(a: GpuCompound, i: u32, b: GpuCompound, b_box: Aabb) -> bool {
    if ((a.flags | b.flags) & COMPOUND_HALF_SPACE) != 0u {
        return true;
    }
    let part = parts[a.first_part + i];
    return !(any(part.box_min > b_box.hi) || any(part.box_max < b_box.lo));
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    // 1. Bounds guard.
    let index = id.x;
    let p = params.first_pair + index;
    if index >= params.pair_count || p >= arrayLength(&ranges.entries) {
        return;
    }
    let identity = vec4<f32>(0.0, 0.0, 0.0, 1.0);
    ranges.entries[p] = GpuCompoundRange(0u, 0u, 0u, 0.0, identity, vec3<f32>(0.0), 0u);
    // In the order it runs in (canonical under params.canonical, as every backend).
    let pair = pair_to_run(pairs[index]);
    let swapped = runs_reversed(pairs[index]);
    let body_count = arrayLength(&bodies);
    if pair.x >= body_count || pair.y >= body_count || pair.x == pair.y {
        return;
    }
    let body_a = bodies[pair.x];
    let body_b = bodies[pair.y];
    if body_a.shape >= arrayLength(&compounds) || body_b.shape >= arrayLength(&compounds) {
        return;
    }
    let a = compounds[body_a.shape];
    let b = compounds[body_b.shape];
    if ((a.flags | b.flags) & (COMPOUND_IS_COMPOUND | COMPOUND_MESH)) != COMPOUND_IS_COMPOUND {
        return;
    }
    // 2. The child pairs, counted.
    let b_in_a = relative_pose(body_a, body_b);
    var count = 0u;
    for (var j = 0u; j < b.part_count; j++) {
        let b_box = grown_box_in_a(parts[b.first_part + j], b_in_a, params.margin);
        for (var i = 0u; i < a.part_count; i++) {
            if is_child_pair(a, i, b, b_box) {
                count += 1u;
            }
        }
    }
    // 3. Their slots, then the child pairs in (i, j) order.
    var flags = COMPOUND_RANGE_LISTED;
    if ((a.flags | b.flags) & COMPOUND_SPHERE) != 0u {
        flags |= COMPOUND_RANGE_SINGLE;
    }
    // A pair given the other way round: the lower body's pose in the given A's frame, for the
    // merge to move the merged manifold into the given order.
    var lower_in_a = RelativePose(identity, vec3<f32>(0.0));
    if swapped {
        flags |= COMPOUND_RANGE_SWAPPED;
        lower_in_a = relative_pose(body_b, body_a);
    }
    let first = atomicAdd(&ranges.total, count);
    let capacity = arrayLength(&sub_tags);
    if count > capacity || first > capacity - count {
        ranges.entries[p] = GpuCompoundRange(first, count, flags | COMPOUND_RANGE_OVERFLOW, a.size + b.size, lower_in_a.q, lower_in_a.t, 0u);
        return;
    }
    var k = first;
    for (var i = 0u; i < a.part_count; i++) {
        let part_a = parts[a.first_part + i];
        for (var j = 0u; j < b.part_count; j++) {
            let part_b = parts[b.first_part + j];
            if k >= first + count || !is_child_pair(a, i, b, grown_box_in_a(part_b, b_in_a, params.margin)) {
                continue;
            }
            sub_bodies[2u * k] = GpuBody(part_a.rotation, part_a.translation, part_a.shape, vec3<f32>(0.0), 0u);
            let posed = pose_part(b_in_a, part_b.rotation, part_b.translation);
            sub_bodies[2u * k + 1u] = GpuBody(posed.q, posed.t, part_b.shape, vec3<f32>(0.0), 0u);
            sub_tags[k] = (i << 8u) | j;
            k += 1u;
        }
    }
    // The driver cut a loop short (llvmpipe): the pair is the host's.
    if k != first + count || loops_cut_short() {
        flags |= COMPOUND_RANGE_HOST;
    }
    ranges.entries[p] = GpuCompoundRange(first, count, flags, a.size + b.size, lower_in_a.q, lower_in_a.t, 0u);
}

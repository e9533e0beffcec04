// 30-bit Morton codes of points in a box, and the order-preserving f32 <-> u32 encoding in
// which the BVH build keeps its bounds. Compiled before shaders/bvh/bvh_build.wgsl (body codes,
// host src/bvh/gpu.rs) and shaders/raycast/ray_order.wgsl (ray origin codes, host
// src/raycast/order.rs).

// f32 -> u32 preserving order: flip every bit of a negative, the sign bit of a positive.
fn order_encode(x: f32) -> u32 {
    let bits = bitcast<u32>(x);
    return select(bits | 0x80000000u, ~bits, (bits & 0x80000000u) != 0u);
}

fn order_decode(e: u32) -> f32 {
    return bitcast<f32>(select(~e, e & 0x7fffffffu, (e & 0x80000000u) != 0u));
}

// A box kept encoded: 0..3 hold ~order_encode(min) per axis, 3..6 order_encode(max), so that
// atomic max of each grows it.
struct Bounds {
    lo: vec3<f32>,
    hi: vec3<f32>,
}

fn decode_bounds(e: array<u32, 6>) -> Bounds {
    let lo = vec3<f32>(order_decode(~e[0]), order_decode(~e[1]), order_decode(~e[2]));
    let hi = vec3<f32>(order_decode(e[3]), order_decode(e[4]), order_decode(e[5]));
    return Bounds(lo, hi);
}

// Spreads the low 10 bits of v two bits apart (bit b to bit 3b).
fn spread_bits(v: u32) -> u32 {
    var x = v & 0x3ffu;
    x = (x | (x << 16u)) & 0x030000ffu;
    x = (x | (x << 8u)) & 0x0300f00fu;
    x = (x | (x << 4u)) & 0x030c30c3u;
    x = (x | (x << 2u)) & 0x09249249u;
    return x;
}

// The Morton code of p, 10 bits per axis of the box lo..hi (x highest); p outside is clamped.
fn morton_code(p: vec3<f32>, lo: vec3<f32>, hi: vec3<f32>) -> u32 {
    let extent = hi - lo;
    let unit = select(vec3<f32>(0.0), (p - lo) / extent, extent > vec3<f32>(0.0));
    let cell = vec3<u32>(clamp(unit * 1024.0, vec3<f32>(0.0), vec3<f32>(1023.0)));
    return (spread_bits(cell.x) << 2u) | (spread_bits(cell.y) << 1u) | spread_bits(cell.z);
}

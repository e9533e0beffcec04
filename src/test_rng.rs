//! A tiny seeded generator for unit tests (xorshift32): no dependency, the same sequence on
//! every platform.

/// Values in `[0, 1]` from a non-zero `seed`, each call the next.
pub(crate) fn unit_floats(seed: u32) -> impl FnMut() -> f32 {
    let mut state = seed;
    move || {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        state as f32 / u32::MAX as f32
    }
}

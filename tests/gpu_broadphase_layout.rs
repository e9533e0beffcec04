//! `shaders/broadphase/pairs.wgsl` parses and validates, and every struct and constant it shares
//! with `hullsat::broadphase::gpu` has the same layout and value on both sides (the BVH's
//! structs, `shaders/bvh/layout.wgsl`, are checked by tests/raycast_layout.rs). No device needed.

use hullsat::broadphase::gpu::{
    BROADPHASE_WGSL, BROADPHASE_WORKGROUP_SIZE, COUNT_SATURATED, GpuBroadphaseParams, GpuPairCount,
    HALF_SPACE_SLACK, INCOMPLETE_BIT, SATURATED_BIT,
};

mod support;
use support::wgsl::{assert_consts, assert_same_layout, parse, validate};

fn module() -> naga::Module {
    let read = |path: &str| {
        std::fs::read_to_string(format!("{}/shaders/{path}", env!("CARGO_MANIFEST_DIR")))
            .unwrap_or_else(|e| panic!("{path}: {e}"))
    };
    assert_eq!(
        BROADPHASE_WGSL,
        hullsat::gpu::QUAT_WGSL.to_string()
            + &read("common/body.wgsl")
            + &read("bvh/layout.wgsl")
            + &read("broadphase/pairs.wgsl"),
        "the embedded shader is the files"
    );
    parse("pairs.wgsl", BROADPHASE_WGSL)
}

#[test]
fn the_broadphase_kernels_parse_and_validate() {
    validate("pairs.wgsl", &module());
}

#[test]
fn broadphase_structs_and_constants_match_the_rust_ones() {
    use naga::Literal::{F32, U32};
    let module = module();
    let cases = [
        (
            "GpuPairCount",
            rust_layout!(GpuPairCount {
                count,
                flags,
                _pad0,
                _pad1
            }),
        ),
        (
            "GpuBroadphaseParams",
            encase_layout!(GpuBroadphaseParams {
                origin_hi,
                body_count,
                origin_lo,
                node_count,
                margin,
                capacity
            }),
        ),
    ];
    for (name, rust) in cases {
        assert_same_layout(&module, name, rust);
    }
    let expected = [
        ("WORKGROUP_SIZE", U32(BROADPHASE_WORKGROUP_SIZE)),
        ("HALF_SPACE_SLACK", F32(HALF_SPACE_SLACK)),
        ("COUNT_SATURATED", U32(COUNT_SATURATED)),
        ("INCOMPLETE_BIT", U32(INCOMPLETE_BIT)),
        ("SATURATED_BIT", U32(SATURATED_BIT)),
    ];
    assert_consts(&module, &expected);
    assert_eq!(module.entry_points.len(), 1);
}

//! `shaders/broadphase/pairs.wgsl` parses and validates, and every struct and constant it shares
//! with Rust (`hullsat::broadphase::gpu`, `hullsat::internals`) has the same layout and value on
//! both sides. No device needed.

use hullsat::broadphase::gpu::{
    BROADPHASE_WGSL, BROADPHASE_WORKGROUP_SIZE, COUNT_SATURATED, GpuBroadphaseParams, GpuPairCount,
    HALF_SPACE_SLACK, INCOMPLETE_BIT, SATURATED_BIT, STACK_OVERFLOW_BIT,
};
use hullsat::internals::{GpuBvhBody, GpuBvhShape};
use hullsat::raycast::{BVH_STACK_SIZE, BvhNode};

mod support;
use support::wgsl::{assert_consts, assert_same_layout, parse, validate};

fn module() -> naga::Module {
    let source = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/shaders/broadphase/pairs.wgsl"
    ))
    .expect("pairs.wgsl is readable");
    assert_eq!(
        BROADPHASE_WGSL,
        hullsat::gpu::QUAT_WGSL.to_string() + &source,
        "the embedded shader is the file"
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
            "GpuBvhShape",
            rust_layout!(GpuBvhShape {
                centre,
                radius,
                half,
                unbounded,
                first_vertex,
                vertex_count,
                reach,
                _pad
            }),
        ),
        (
            "GpuBvhBody",
            rust_layout!(GpuBvhBody {
                rotation,
                translation_hi,
                shape,
                translation_lo,
                _pad
            }),
        ),
        (
            "BvhNode",
            rust_layout!(BvhNode {
                min,
                first,
                max,
                count
            }),
        ),
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
                capacity,
                sort_count,
                sort_block,
                sort_distance,
                max_groups
            }),
        ),
    ];
    for (name, rust) in cases {
        assert_same_layout(&module, name, rust);
    }
    let expected = [
        ("WORKGROUP_SIZE", U32(BROADPHASE_WORKGROUP_SIZE)),
        ("BVH_STACK_SIZE", U32(BVH_STACK_SIZE as u32)),
        ("HALF_SPACE_SLACK", F32(HALF_SPACE_SLACK)),
        ("COUNT_SATURATED", U32(COUNT_SATURATED)),
        ("INCOMPLETE_BIT", U32(INCOMPLETE_BIT)),
        ("STACK_OVERFLOW_BIT", U32(STACK_OVERFLOW_BIT)),
        ("SATURATED_BIT", U32(SATURATED_BIT)),
    ];
    assert_consts(&module, &expected);
    assert_eq!(module.entry_points.len(), 4);
}

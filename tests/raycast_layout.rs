//! `src/raycast/raycast.wgsl` parses and validates, and every struct and constant it shares with
//! Rust has the same layout and value on both sides. No device needed.

use std::mem::{offset_of, size_of};

use hullsat::raycast::gpu::RAYCAST_WGSL;
use hullsat::raycast::layout::{
    GpuRay, GpuRayBody, GpuRayCount, GpuRayHit, GpuRayParams, GpuRayShape, INCOMPLETE_BIT, SHAPE_BOX,
    SHAPE_CAPSULE, SHAPE_HALF_SPACE, SHAPE_HULL, SHAPE_SPHERE, STACK_OVERFLOW_BIT, WORKGROUP_SIZE,
};
use hullsat::raycast::{BVH_STACK_SIZE, BvhNode, MIN_DIRECTION_COMPONENT};
use naga::valid::{Capabilities, ValidationFlags, Validator};

fn module() -> naga::Module {
    let source = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/src/raycast/raycast.wgsl"))
        .expect("raycast.wgsl is readable");
    assert_eq!(source, RAYCAST_WGSL, "the embedded shader is the file");
    naga::front::wgsl::parse_str(&source)
        .unwrap_or_else(|e| panic!("raycast.wgsl: {}", e.emit_to_string(&source)))
}

#[test]
fn the_kernel_parses_and_validates() {
    Validator::new(ValidationFlags::all(), Capabilities::empty())
        .validate(&module())
        .unwrap_or_else(|e| panic!("raycast.wgsl: {e:?}"));
}

/// Field names and byte offsets of a Rust struct, plus its size.
macro_rules! rust_layout {
    ($ty:ty { $($field:ident),* $(,)? }) => {
        (
            vec![$((stringify!($field).to_string(), offset_of!($ty, $field) as u32)),*],
            size_of::<$ty>() as u32,
        )
    };
}

/// Field names and byte offsets of the WGSL struct `name`, plus its size (naga's layouter).
fn wgsl_layout(module: &naga::Module, name: &str) -> (Vec<(String, u32)>, u32) {
    let mut layouter = naga::proc::Layouter::default();
    layouter.update(module.to_ctx()).expect("layouts compute");
    let (handle, ty) = module
        .types
        .iter()
        .find(|(_, ty)| ty.name.as_deref() == Some(name))
        .unwrap_or_else(|| panic!("struct {name} not found in raycast.wgsl"));
    let naga::TypeInner::Struct { members, span } = &ty.inner else {
        panic!("{name} is not a struct");
    };
    assert_eq!(layouter[handle].size, *span);
    let fields = members
        .iter()
        .map(|m| (m.name.clone().unwrap_or_default(), m.offset))
        .collect();
    (fields, *span)
}

#[test]
fn rust_and_wgsl_structs_have_the_same_layout() {
    let module = module();
    let cases = [
        (
            "GpuRay",
            rust_layout!(GpuRay {
                origin_hi,
                max_distance,
                origin_lo,
                _pad0,
                direction,
                _pad1
            }),
        ),
        (
            "GpuRayBody",
            rust_layout!(GpuRayBody {
                rotation,
                translation_hi,
                shape,
                translation_lo,
                _pad
            }),
        ),
        (
            "GpuRayShape",
            rust_layout!(GpuRayShape {
                params,
                kind,
                first_plane,
                plane_count,
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
            "GpuRayHit",
            rust_layout!(GpuRayHit {
                normal,
                distance,
                body,
                _pad0,
                _pad1,
                _pad2
            }),
        ),
        ("GpuRayCount", rust_layout!(GpuRayCount { hits, flags })),
        (
            "GpuRayParams",
            rust_layout!(GpuRayParams {
                bvh_origin_hi,
                unbounded_count,
                bvh_origin_lo,
                hit_slots,
                closest,
                node_count,
                unbounded_first,
                _pad
            }),
        ),
    ];
    for (name, rust) in cases {
        assert_eq!(
            rust,
            wgsl_layout(&module, name),
            "{name}: (fields, size), Rust left, WGSL right"
        );
    }
}

/// The scalar value of the WGSL `const` named `name`.
fn wgsl_const(module: &naga::Module, name: &str) -> naga::Literal {
    let (_, constant) = module
        .constants
        .iter()
        .find(|(_, c)| c.name.as_deref() == Some(name))
        .unwrap_or_else(|| panic!("const {name} not found in raycast.wgsl"));
    match module.global_expressions[constant.init] {
        naga::Expression::Literal(literal) => literal,
        ref other => panic!("const {name} is not a literal: {other:?}"),
    }
}

#[test]
fn wgsl_constants_equal_the_rust_ones() {
    use naga::Literal::{F32, U32};
    let module = module();
    let expected = [
        ("WORKGROUP_SIZE", U32(WORKGROUP_SIZE)),
        ("BVH_STACK_SIZE", U32(BVH_STACK_SIZE as u32)),
        ("MIN_DIRECTION_COMPONENT", F32(MIN_DIRECTION_COMPONENT)),
        ("SHAPE_HULL", U32(SHAPE_HULL)),
        ("SHAPE_BOX", U32(SHAPE_BOX)),
        ("SHAPE_SPHERE", U32(SHAPE_SPHERE)),
        ("SHAPE_CAPSULE", U32(SHAPE_CAPSULE)),
        ("SHAPE_HALF_SPACE", U32(SHAPE_HALF_SPACE)),
        ("INCOMPLETE_BIT", U32(INCOMPLETE_BIT)),
        ("STACK_OVERFLOW_BIT", U32(STACK_OVERFLOW_BIT)),
        ("F32_MAX", F32(f32::MAX)),
    ];
    for (name, value) in expected {
        assert_eq!(wgsl_const(&module, name), value, "const {name}");
    }
    let entry = module
        .entry_points
        .iter()
        .find(|e| e.name == "main")
        .expect("entry point main");
    assert_eq!(entry.workgroup_size, [WORKGROUP_SIZE, 1, 1]);
}

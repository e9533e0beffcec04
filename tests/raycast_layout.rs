//! `shaders/raycast/raycast.wgsl` (both variants: without and with triangle meshes and
//! compounds, `raycast_complex.wgsl` and the meshes' `shaders/common/mesh.wgsl`) and
//! `shaders/bvh/bvh_build.wgsl` parse and validate, and every struct and constant they share
//! with Rust has the same layout and value on both sides. No device needed.

use hullsat::constants::TRIMESH_RAY_EDGE_TOLERANCE;
use hullsat::gpu::mesh_layout::{
    GpuMeshNode, GpuMeshTriangle, GpuMeshTriangleContact, MESH_LEAF_BIT, MESH_NO_ITEM, MESH_STACK_SIZE,
};
use hullsat::internals::{
    BVH_BUILD_WGSL, BVH_BUILD_WORKGROUP_SIZE, CYLINDER_RIM_SLACK, GpuBvhParams, GpuBvhShape, HEAP_LEAF_SIZE,
    SHAPE_FLAG_CYLINDER, SHAPE_FLAG_STATIC, SPLIT_PADDING, UNBOUNDED_CODE, UNBOUNDED_EXTENT,
};
use hullsat::raycast::gpu::{RAYCAST_COMPLEX_WGSL, RAYCAST_WGSL};
use hullsat::raycast::layout::{
    GpuBody, GpuCompoundChild, GpuRay, GpuRayCount, GpuRayHit, GpuRayParams, GpuRayShape, INCOMPLETE_BIT,
    SHAPE_BOX, SHAPE_CAPSULE, SHAPE_COMPOUND, SHAPE_CYLINDER, SHAPE_HALF_SPACE, SHAPE_HULL, SHAPE_SPHERE,
    SHAPE_TRIMESH, STACK_OVERFLOW_BIT, WORKGROUP_SIZE,
};
use hullsat::raycast::{BVH_PADDING, BVH_STACK_SIZE, BvhNode, MIN_DIRECTION_COMPONENT, SPHERE_TEST_SLACK};

mod support;
use support::wgsl::{assert_consts, assert_same_layout, main_workgroup_size, parse, validate};

/// The text of `shaders/{path}`.
fn shader(path: &str) -> String {
    std::fs::read_to_string(format!("{}/shaders/{path}", env!("CARGO_MANIFEST_DIR")))
        .unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn module() -> naga::Module {
    // The kernel is compiled after the shared quaternion helpers, the body and the BVH's structs.
    assert_eq!(
        RAYCAST_WGSL,
        hullsat::gpu::QUAT_WGSL.to_string()
            + &shader("common/body.wgsl")
            + &shader("bvh/layout.wgsl")
            + &shader("raycast/raycast.wgsl")
            + &shader("raycast/raycast_convex_only.wgsl"),
        "the embedded shader is the files"
    );
    parse("raycast.wgsl", RAYCAST_WGSL)
}

/// The kernel with triangle meshes and compounds.
fn complex_module() -> naga::Module {
    assert_eq!(
        RAYCAST_COMPLEX_WGSL,
        hullsat::gpu::QUAT_WGSL.to_string()
            + &shader("common/body.wgsl")
            + &shader("bvh/layout.wgsl")
            + &shader("common/mesh.wgsl")
            + &shader("raycast/raycast.wgsl")
            + &shader("raycast/raycast_complex.wgsl"),
        "the embedded shader is the files"
    );
    parse("raycast_complex.wgsl", RAYCAST_COMPLEX_WGSL)
}

#[test]
fn the_kernel_parses_and_validates() {
    validate("raycast.wgsl", &module());
    validate("raycast_complex.wgsl", &complex_module());
}

#[test]
fn mesh_and_compound_structs_and_constants_match_the_rust_ones() {
    use naga::Literal::{F32, U32};
    let module = complex_module();
    let cases = [
        (
            "GpuMeshNode",
            rust_layout!(GpuMeshNode {
                min_x,
                min_y,
                min_z,
                max_x,
                max_y,
                max_z,
                items
            }),
        ),
        (
            "GpuMeshTriangle",
            rust_layout!(GpuMeshTriangle { vertices, _pad }),
        ),
        (
            "GpuMeshTriangleContact",
            rust_layout!(GpuMeshTriangleContact {
                normal,
                active_edges,
                neighbours,
                _pad
            }),
        ),
        (
            "GpuCompoundChild",
            rust_layout!(GpuCompoundChild {
                rotation,
                translation,
                shape
            }),
        ),
    ];
    for (name, rust) in cases {
        assert_same_layout(&module, name, rust);
    }
    assert_consts(
        &module,
        &[
            ("MESH_LEAF_BIT", U32(MESH_LEAF_BIT)),
            ("MESH_NO_ITEM", U32(MESH_NO_ITEM)),
            ("MESH_STACK_SIZE", U32(MESH_STACK_SIZE)),
            ("TRIMESH_RAY_EDGE_TOLERANCE", F32(TRIMESH_RAY_EDGE_TOLERANCE)),
            ("SHAPE_TRIMESH", U32(SHAPE_TRIMESH)),
            ("SHAPE_COMPOUND", U32(SHAPE_COMPOUND)),
        ],
    );
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
            "GpuBody",
            rust_layout!(GpuBody {
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
                first,
                count,
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
                feature,
                _pad1,
                _pad2
            }),
        ),
        ("GpuRayCount", rust_layout!(GpuRayCount { hits, flags })),
        (
            "GpuRayParams",
            encase_layout!(GpuRayParams {
                bvh_origin_hi,
                unbounded_count,
                bvh_origin_lo,
                hit_slots,
                closest,
                node_count,
                unbounded_first
            }),
        ),
    ];
    for (name, rust) in cases {
        assert_same_layout(&module, name, rust);
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
        ("SPHERE_TEST_SLACK", F32(SPHERE_TEST_SLACK)),
        ("SHAPE_HULL", U32(SHAPE_HULL)),
        ("SHAPE_BOX", U32(SHAPE_BOX)),
        ("SHAPE_SPHERE", U32(SHAPE_SPHERE)),
        ("SHAPE_CAPSULE", U32(SHAPE_CAPSULE)),
        ("SHAPE_HALF_SPACE", U32(SHAPE_HALF_SPACE)),
        ("SHAPE_CYLINDER", U32(SHAPE_CYLINDER)),
        ("INCOMPLETE_BIT", U32(INCOMPLETE_BIT)),
        ("STACK_OVERFLOW_BIT", U32(STACK_OVERFLOW_BIT)),
        ("F32_MAX", F32(f32::MAX)),
    ];
    assert_consts(&module, &expected);
    assert_eq!(main_workgroup_size(&module), [WORKGROUP_SIZE, 1, 1]);
}

/// `shaders/bvh/bvh_build.wgsl` as compiled: the quaternion helpers, the body, the BVH's structs, then
/// the file.
fn bvh_build_module() -> naga::Module {
    assert_eq!(
        BVH_BUILD_WGSL,
        hullsat::gpu::QUAT_WGSL.to_string()
            + &shader("common/body.wgsl")
            + &shader("bvh/layout.wgsl")
            + &shader("bvh/bvh_build.wgsl"),
        "the embedded shader is the files"
    );
    parse("bvh_build.wgsl", BVH_BUILD_WGSL)
}

#[test]
fn the_bvh_build_kernels_parse_and_validate() {
    validate("bvh_build.wgsl", &bvh_build_module());
}

#[test]
fn bvh_build_structs_and_constants_match_the_rust_ones() {
    use naga::Literal::{F32, U32};
    let module = bvh_build_module();
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
                flags
            }),
        ),
        (
            "GpuBody",
            rust_layout!(GpuBody {
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
            "GpuBvhParams",
            encase_layout!(GpuBvhParams {
                origin_hi,
                body_count,
                origin_lo,
                leaf_count,
                level_first,
                level_count,
                world_padding,
                source_first,
                source_count
            }),
        ),
    ];
    for (name, rust) in cases {
        assert_same_layout(&module, name, rust);
    }
    let expected = [
        ("WORKGROUP_SIZE", U32(BVH_BUILD_WORKGROUP_SIZE)),
        ("HEAP_LEAF_SIZE", U32(HEAP_LEAF_SIZE)),
        ("BVH_PADDING", F32(BVH_PADDING)),
        ("SPLIT_PADDING", F32(SPLIT_PADDING)),
        ("UNBOUNDED_EXTENT", F32(UNBOUNDED_EXTENT)),
        ("UNBOUNDED_CODE", U32(UNBOUNDED_CODE)),
        ("CYLINDER_RIM_SLACK", F32(CYLINDER_RIM_SLACK)),
        ("SHAPE_FLAG_CYLINDER", U32(SHAPE_FLAG_CYLINDER)),
        ("SHAPE_FLAG_STATIC", U32(SHAPE_FLAG_STATIC)),
    ];
    assert_consts(&module, &expected);
    for entry in &module.entry_points {
        assert_eq!(
            entry.workgroup_size,
            [BVH_BUILD_WORKGROUP_SIZE, 1, 1],
            "{}",
            entry.name
        );
    }
    assert_eq!(module.entry_points.len(), 7);
}

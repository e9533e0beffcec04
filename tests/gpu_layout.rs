//! The WGSL shaders parse and validate, and every struct and constant they share with Rust has
//! the same layout and value on both sides. No device needed.

use hullsat::FeatureId;
use hullsat::broadphase::gpu::BROADPHASE_WGSL;
use hullsat::constants::{
    AXIS_PREFERENCE_TOLERANCE, CAPSULE_FACE_SINE, CAPSULE_PARALLEL_SINE, CLOSEST_FEATURE_COSINE,
    COMPOUND_AABB_PADDING, COMPOUND_MERGE_DEGREES, CONTACT_REDUCTION_TOLERANCE, GJK_MAX_ITERATIONS,
    GJK_OVERLAP_TOLERANCE, GJK_RELATIVE_TOLERANCE, GPU_GJK_CONDITIONING, GPU_GJK_MAX_DIRECTION_ERROR,
    INCIDENT_FACE_TOLERANCE, PARALLEL_EDGE_SINE, TRIMESH_AABB_PADDING, TRIMESH_MERGE_DEGREES,
};
use hullsat::generate::motion::MOTION_WGSL;
use hullsat::gpu::QUAT_WGSL;
use hullsat::internals::{
    BVH_BUILD_WGSL, GpuListOrderParams, LIST_ORDER_WGSL, LIST_ORDER_WORKGROUP, ORDER_WGSL, RADIX_SORT_WGSL,
};
use hullsat::internals::{
    CLIP_GROUP_LANES, CLIP_GROUP_PAIRS, COMPOUND_HALF_SPACE, COMPOUND_IS_COMPOUND, COMPOUND_MESH,
    COMPOUND_RANGE_HOST, COMPOUND_RANGE_LISTED, COMPOUND_RANGE_OVERFLOW, COMPOUND_RANGE_SINGLE,
    COMPOUND_RANGE_SWAPPED, COMPOUND_SPHERE, COOP_EDGE_PAIRS, GpuCompound, GpuCompoundPart, GpuCompoundRange,
    GpuEdge, GpuMeshItem, GpuMeshPairRange, GpuMeshPoint, GpuParams, GpuResidentSetup, GpuShape,
    MESH_RANGE_COMPOUND, MESH_RANGE_SWAPPED, PARAMS_STRIDE, SAT_BOUND_SLACK, SPLIT_EDGE_PAIRS,
    WORKGROUP_SIZE,
};
use hullsat::narrowphase::gpu::layout::{
    AXIS_EDGE_PAIR, AXIS_FACE_A, AXIS_FACE_B, AXIS_MASK, AXIS_NONE, GpuBody, GpuManifold, GpuManifoldCount,
    GpuSatResult, INCOMPLETE_BIT, MANIFOLD_CLIPPED, MANIFOLD_HOST, MANIFOLD_INVALID, MANIFOLD_LIST_HEAD,
    MANIFOLD_OVERFLOW, MANIFOLD_SEPARATED, MAX_GPU_CLIP_VERTICES, SEPARATED_BIT, SHAPE_BOX, SHAPE_CAPSULE,
    SHAPE_COMPOUND, SHAPE_HALF_SPACE, SHAPE_HULL, SHAPE_SPHERE, SHAPE_TRIMESH,
};
use hullsat::narrowphase::gpu::{
    CLIP_WGSL, COMPOUND_EXPAND_WGSL, COMPOUND_MERGE_WGSL, LAYOUT_WGSL, MESH_EXPAND_WGSL, MESH_MERGE_WGSL,
    MESH_TRIANGLE_WGSL, RESIDENT_WGSL, SAT_SUBGROUP_WGSL, SAT_WGSL,
};
use hullsat::raycast::gpu::{RAYCAST_COMPLEX_WGSL, RAYCAST_WGSL};

mod support;
use support::triangle_kernel::triangle_kernel_source;
use support::wgsl::{
    assert_consts, assert_same_layout, main_workgroup_size, parse as parse_source, validate,
    validate_with_subgroups, wgsl_layout,
};

/// Kernels live under shaders/, by what they serve (common, narrowphase, raycast).
fn shader_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders")
}

/// Every `.wgsl` file under `dir`, recursively.
fn wgsl_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("readable entry").path();
        if path.is_dir() {
            wgsl_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "wgsl") {
            out.push(path);
        }
    }
}

/// The text of a file.
fn read(path: &std::path::Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every WGSL source the crate compiles or exports, exactly as it does, by name.
const SOURCES: [(&str, &str); 17] = [
    ("SAT_WGSL", SAT_WGSL),
    ("CLIP_WGSL", CLIP_WGSL),
    ("COMPOUND_EXPAND_WGSL", COMPOUND_EXPAND_WGSL),
    ("COMPOUND_MERGE_WGSL", COMPOUND_MERGE_WGSL),
    ("MESH_EXPAND_WGSL", MESH_EXPAND_WGSL),
    ("MESH_TRIANGLE_WGSL", MESH_TRIANGLE_WGSL),
    ("MESH_MERGE_WGSL", MESH_MERGE_WGSL),
    ("RESIDENT_WGSL", RESIDENT_WGSL),
    ("ORDER_WGSL", ORDER_WGSL),
    ("LIST_ORDER_WGSL", LIST_ORDER_WGSL),
    ("RAYCAST_WGSL", RAYCAST_WGSL),
    ("RAYCAST_COMPLEX_WGSL", RAYCAST_COMPLEX_WGSL),
    ("LAYOUT_WGSL", LAYOUT_WGSL),
    ("BVH_BUILD_WGSL", BVH_BUILD_WGSL),
    ("BROADPHASE_WGSL", BROADPHASE_WGSL),
    ("MOTION_WGSL", MOTION_WGSL),
    ("RADIX_SORT_WGSL", RADIX_SORT_WGSL),
];

/// The sources the crate compiles only on devices with subgroup operations.
const SUBGROUP_SOURCES: [(&str, &str); 1] = [("SAT_SUBGROUP_WGSL", SAT_SUBGROUP_WGSL)];

/// The SAT kernel exactly as the host compiles it.
fn sat_module() -> naga::Module {
    parse_source("SAT_WGSL", SAT_WGSL)
}

/// The clip kernel exactly as the host compiles it.
fn clip_module() -> naga::Module {
    parse_source("CLIP_WGSL", CLIP_WGSL)
}

/// The shared structs as a caller's shader sees them.
fn layout_module() -> naga::Module {
    parse_source("LAYOUT_WGSL", LAYOUT_WGSL)
}

#[test]
fn every_wgsl_file_is_part_of_a_source_that_parses_and_validates() {
    for (name, source) in SOURCES {
        validate(name, &parse_source(name, source));
    }
    for (name, source) in SUBGROUP_SOURCES {
        validate_with_subgroups(name, &parse_source(name, source));
    }
    // triangle_contact.wgsl: the mesh pass's per-triangle functions, run by their test kernel.
    let triangle = triangle_kernel_source();
    validate("triangle kernel", &parse_source("triangle kernel", &triangle));
    let mut files = Vec::new();
    wgsl_files(&shader_dir(), &mut files);
    for path in &files {
        let text = read(path);
        assert!(
            SOURCES
                .iter()
                .chain(&SUBGROUP_SOURCES)
                .any(|(_, source)| source.contains(&text))
                || triangle.contains(&text),
            "{} is in no source the crate compiles",
            path.display()
        );
    }
    assert!(
        files.iter().any(|f| f.ends_with("narrowphase/sat.wgsl")),
        "sat.wgsl not found under shaders/: {files:?}"
    );
}

/// The SAT kernel's entry points, each a pipeline the host builds (`SatKernel`: one pair per
/// invocation, one pair per workgroup), validate with the module (above) and run workgroups of
/// `WORKGROUP_SIZE`, the size the host's dispatch counts assume.
#[test]
fn sat_entry_points_are_the_hosts_with_its_workgroup_size() {
    for module in [sat_module(), parse_source("SAT_SUBGROUP_WGSL", SAT_SUBGROUP_WGSL)] {
        let mut names: Vec<&str> = module.entry_points.iter().map(|e| e.name.as_str()).collect();
        names.sort();
        assert_eq!(names, ["main", "main_pair_per_workgroup"]);
        for entry in &module.entry_points {
            assert_eq!(entry.stage, naga::ShaderStage::Compute, "{}", entry.name);
            assert_eq!(entry.workgroup_size, [WORKGROUP_SIZE, 1, 1], "{}", entry.name);
        }
    }
}

/// The subgroup variant of the SAT kernel differs from `SAT_WGSL` only in its reductions:
/// `sat_reduce_subgroup.wgsl` in the place of `sat_reduce.wgsl` (both parse and validate:
/// above).
#[test]
fn sat_subgroup_source_swaps_only_the_reductions() {
    let reduce = read(&shader_dir().join("narrowphase/sat_reduce.wgsl"));
    let subgroup = read(&shader_dir().join("narrowphase/sat_reduce_subgroup.wgsl"));
    let shared = SAT_WGSL
        .strip_suffix(reduce.as_str())
        .expect("SAT_WGSL ends with sat_reduce.wgsl");
    assert_eq!(SAT_SUBGROUP_WGSL, shared.to_string() + &subgroup);
}

/// One text per shared struct and helper: every narrowphase kernel is compiled after
/// `quat.wgsl`, `body.wgsl` and `layout.wgsl` (exported as `QUAT_WGSL` and `LAYOUT_WGSL`), the
/// others after `quat.wgsl` and `body.wgsl`, and no other `.wgsl` file under shaders/ or
/// examples/ declares their structs or functions.
#[test]
fn shared_structs_and_quaternion_helpers_are_written_once() {
    let common = shader_dir().join("common");
    let body = read(&common.join("body.wgsl"));
    let layout = body.clone() + &read(&common.join("layout.wgsl"));
    let quat = read(&common.join("quat.wgsl"));
    assert_eq!(quat, QUAT_WGSL);
    assert!(LAYOUT_WGSL.starts_with(&layout));
    for (name, source) in [
        ("SAT_WGSL", SAT_WGSL),
        ("CLIP_WGSL", CLIP_WGSL),
        ("RESIDENT_WGSL", RESIDENT_WGSL),
    ] {
        assert!(source.starts_with(&(quat.clone() + &layout)), "{name}");
    }
    for (name, source) in [
        ("RAYCAST_WGSL", RAYCAST_WGSL),
        ("RAYCAST_COMPLEX_WGSL", RAYCAST_COMPLEX_WGSL),
        ("BVH_BUILD_WGSL", BVH_BUILD_WGSL),
        ("BROADPHASE_WGSL", BROADPHASE_WGSL),
        ("MOTION_WGSL", MOTION_WGSL),
    ] {
        assert!(source.starts_with(&(quat.clone() + &body)), "{name}");
    }
    let declared = |text: &str| {
        let module = parse_source("layout or quat", text);
        let structs = module.types.iter().filter_map(|(_, t)| match t.inner {
            naga::TypeInner::Struct { .. } => t.name.clone().map(|n| format!("struct {n} ")),
            _ => None,
        });
        let functions = module
            .functions
            .iter()
            .filter_map(|(_, f)| f.name.clone().map(|n| format!("fn {n}(")));
        structs.chain(functions).collect::<Vec<_>>()
    };
    let shared = declared(LAYOUT_WGSL)
        .into_iter()
        .chain(declared(QUAT_WGSL))
        .collect::<Vec<_>>();
    assert!(
        shared.len() >= 7,
        "GpuBody, GpuSatResult, GpuManifold, GpuManifoldList and three helpers: {shared:?}"
    );
    let mut files = Vec::new();
    wgsl_files(&shader_dir(), &mut files);
    wgsl_files(&shader_dir().join("../examples"), &mut files);
    for path in files {
        if ["common/layout.wgsl", "common/quat.wgsl", "common/body.wgsl"]
            .iter()
            .any(|own| path.ends_with(own))
        {
            continue;
        }
        let text = read(&path);
        for declaration in &shared {
            assert!(
                !text.contains(declaration.as_str()),
                "{} declares `{declaration}` again",
                path.display()
            );
        }
    }
}

/// The structs a caller shares (layout.wgsl, in every kernel and in `LAYOUT_WGSL`), as the
/// caller sees them and as the clip kernel (which appends to the list) does.
#[test]
fn shared_structs_have_the_rust_layout_for_callers_and_kernels() {
    // The list's head is GpuManifoldCount; the entries follow at MANIFOLD_LIST_HEAD.
    let (mut list, head_size) = rust_layout!(GpuManifoldCount {
        count,
        listed,
        searched_alone,
        _pad2
    });
    assert_eq!(u64::from(head_size), MANIFOLD_LIST_HEAD);
    list.push(("entries".into(), head_size));
    for (name, module) in [("LAYOUT_WGSL", layout_module()), ("CLIP_WGSL", clip_module())] {
        assert_eq!(wgsl_layout(&module, "GpuManifoldList").0, list, "{name}");
        assert_same_layout(
            &module,
            "GpuManifold",
            rust_layout!(GpuManifold {
                normal,
                separation,
                points,
                ids,
                count,
                status,
                pair,
                _pad
            }),
        );
        assert_same_layout(
            &module,
            "GpuBody",
            rust_layout!(GpuBody {
                rotation,
                translation_hi,
                shape,
                translation_lo,
                _pad
            }),
        );
        assert_same_layout(
            &module,
            "GpuSatResult",
            rust_layout!(GpuSatResult {
                normal,
                axis_separation,
                separation,
                kind,
                feature_a,
                feature_b,
                deepest_kind,
                deepest_feature_a,
                deepest_feature_b,
                pair
            }),
        );
    }
}

/// The kernels' own structs (geometry.wgsl).
#[test]
fn kernel_structs_have_the_rust_layout() {
    let module = sat_module();
    assert_same_layout(
        &module,
        "GpuShape",
        rust_layout!(GpuShape {
            centroid,
            radius,
            first_vertex,
            vertex_count,
            first_face,
            face_count,
            first_edge,
            edge_count,
            kind,
            inner_radius,
            params
        }),
    );
    assert_same_layout(
        &module,
        "GpuEdge",
        rust_layout!(GpuEdge {
            v0,
            v1,
            faces,
            stretch
        }),
    );
    assert_same_layout(
        &module,
        "GpuCompound",
        rust_layout!(GpuCompound {
            first_part,
            part_count,
            flags,
            size
        }),
    );
    assert_same_layout(
        &module,
        "GpuCompoundPart",
        rust_layout!(GpuCompoundPart {
            rotation,
            translation,
            shape,
            box_min,
            _pad0,
            box_max,
            _pad1
        }),
    );
    assert_same_layout(
        &module,
        "GpuCompoundRange",
        rust_layout!(GpuCompoundRange {
            first,
            count,
            flags,
            size,
            lower_rotation,
            lower_translation,
            _pad
        }),
    );
    assert_same_layout(
        &module,
        "GpuMeshPairRange",
        rust_layout!(GpuMeshPairRange {
            first,
            count,
            flags,
            size,
            rotation,
            translation,
            shape
        }),
    );
    assert_same_layout(
        &module,
        "GpuMeshItem",
        rust_layout!(GpuMeshItem {
            corners,
            normal,
            separation,
            pair,
            triangle,
            local_triangle,
            status,
            first_point,
            count,
            shape,
            child,
            rotation,
            translation,
            _pad0
        }),
    );
    assert_same_layout(
        &module,
        "GpuMeshPoint",
        rust_layout!(GpuMeshPoint {
            point,
            id,
            _pad0,
            _pad1,
            _pad2
        }),
    );
    assert_same_layout(
        &module,
        "GpuParams",
        encase_layout!(GpuParams {
            margin,
            pair_count,
            first_pair,
            ordered,
            canonical
        }),
    );
}

#[test]
fn resident_prepare_kernel_structs_match_the_rust_ones() {
    let module = parse_source("RESIDENT_WGSL", RESIDENT_WGSL);
    assert_same_layout(
        &module,
        "GpuResidentSetup",
        encase_layout!(GpuResidentSetup {
            margin,
            max_pairs,
            count_index,
            chunk_pairs,
            chunks,
            per_workgroup_below,
            ordered
        }),
    );
    assert_same_layout(
        &module,
        "DispatchArgs",
        rust_layout!(wgpu::util::DispatchIndirectArgs { x, y, z }),
    );
    // One chunk's parameters per PARAMS_STRIDE bytes, as the kernels' dynamic offsets read them.
    let (fields, size) = wgsl_layout(&module, "ParamsSlot");
    assert_eq!(u64::from(size), PARAMS_STRIDE);
    assert_eq!(fields[0], ("params".to_string(), 0));
    assert_consts(
        &module,
        &[
            ("PARAMS_STRIDE", naga::Literal::U32(PARAMS_STRIDE as u32)),
            ("CLIP_GROUP_PAIRS", naga::Literal::U32(CLIP_GROUP_PAIRS)),
        ],
    );
    assert_eq!(main_workgroup_size(&module), [WORKGROUP_SIZE, 1, 1]);
}

#[test]
fn order_kernel_structs_and_constants_match_the_rust_ones() {
    use hullsat::internals::{
        CENTRE_LINE_VERTICES, COST_CLASSES, EDGE_COUNT_CLAMP, GAP_BUCKETS, GpuOrderArgs, GpuOrderCounters,
        HALF_SPACE_EDGE_SHIFT, HULL_KEY_TOP_LOG2, KEY_BOX_BOX, KEY_CHEAP, KEY_HULL_PRIMITIVE,
        KEY_SMALL_HULLS, ORDER_KEYS, PAIRS_PER_INVOCATION, PRIMITIVE_KEY_TOP_LOG2,
    };
    use naga::Literal::U32;
    let module = parse_source("ORDER_WGSL", ORDER_WGSL);
    assert_same_layout(
        &module,
        "GpuOrderCounters",
        rust_layout!(GpuOrderCounters { counts, cursors }),
    );
    assert_same_layout(
        &module,
        "GpuOrderArgs",
        rust_layout!(GpuOrderArgs { count, scatter }),
    );
    assert_consts(
        &module,
        &[
            ("COST_CLASSES", U32(COST_CLASSES)),
            ("GAP_BUCKETS", U32(GAP_BUCKETS)),
            ("CENTRE_LINE_VERTICES", U32(CENTRE_LINE_VERTICES)),
            ("ORDER_KEYS", U32(ORDER_KEYS)),
            ("HULL_KEY_TOP_LOG2", U32(HULL_KEY_TOP_LOG2)),
            ("KEY_SMALL_HULLS", U32(KEY_SMALL_HULLS)),
            ("KEY_BOX_BOX", U32(KEY_BOX_BOX)),
            ("KEY_HULL_PRIMITIVE", U32(KEY_HULL_PRIMITIVE)),
            ("KEY_CHEAP", U32(KEY_CHEAP)),
            ("EDGE_COUNT_CLAMP", U32(EDGE_COUNT_CLAMP)),
            ("PRIMITIVE_KEY_TOP_LOG2", U32(PRIMITIVE_KEY_TOP_LOG2)),
            ("HALF_SPACE_EDGE_SHIFT", U32(HALF_SPACE_EDGE_SHIFT)),
            ("PAIRS_PER_INVOCATION", U32(PAIRS_PER_INVOCATION)),
        ],
    );
    // Count and scatter run workgroups of WORKGROUP_SIZE (the arguments setup and decide write
    // count them so); setup and decide one invocation per chunk.
    let sizes: Vec<(&str, [u32; 3])> = module
        .entry_points
        .iter()
        .map(|entry| (entry.name.as_str(), entry.workgroup_size))
        .collect();
    assert_eq!(
        sizes,
        [
            ("setup", [1, 1, 1]),
            ("count_classes", [WORKGROUP_SIZE, 1, 1]),
            ("decide", [1, 1, 1]),
            ("scatter", [WORKGROUP_SIZE, 1, 1]),
        ]
    );
}

#[test]
fn the_list_ordering_kernels_run_workgroups_of_the_host_size_and_share_its_params() {
    let module = parse_source("LIST_ORDER_WGSL", LIST_ORDER_WGSL);
    assert_consts(
        &module,
        &[("LIST_ORDER_WORKGROUP", naga::Literal::U32(LIST_ORDER_WORKGROUP))],
    );
    let sizes: Vec<(&str, [u32; 3])> = module
        .entry_points
        .iter()
        .map(|entry| (entry.name.as_str(), entry.workgroup_size))
        .collect();
    let size = [LIST_ORDER_WORKGROUP, 1, 1];
    assert_eq!(
        sizes,
        [("mark_main", size), ("offsets_main", size), ("place_main", size)]
    );
    assert_same_layout(
        &module,
        "GpuListOrderParams",
        encase_layout!(GpuListOrderParams { pairs, blocks }),
    );
}

#[test]
fn wgsl_constants_equal_the_rust_ones() {
    use naga::Literal::{F32, U32};
    let module = sat_module();
    let expected = [
        ("AXIS_PREFERENCE_TOLERANCE", F32(AXIS_PREFERENCE_TOLERANCE)),
        ("PARALLEL_EDGE_SINE", F32(PARALLEL_EDGE_SINE)),
        ("SAT_BOUND_SLACK", F32(SAT_BOUND_SLACK)),
        ("WORKGROUP_SIZE", U32(WORKGROUP_SIZE)),
        ("SHAPE_HULL", U32(SHAPE_HULL)),
        ("SHAPE_BOX", U32(SHAPE_BOX)),
        ("SHAPE_SPHERE", U32(SHAPE_SPHERE)),
        ("SHAPE_CAPSULE", U32(SHAPE_CAPSULE)),
        ("SHAPE_HALF_SPACE", U32(SHAPE_HALF_SPACE)),
        ("SHAPE_TRIMESH", U32(SHAPE_TRIMESH)),
        ("SHAPE_COMPOUND", U32(SHAPE_COMPOUND)),
        ("F32_MAX", F32(f32::MAX)),
        ("COMPOUND_IS_COMPOUND", U32(COMPOUND_IS_COMPOUND)),
        ("COMPOUND_SPHERE", U32(COMPOUND_SPHERE)),
        ("COMPOUND_HALF_SPACE", U32(COMPOUND_HALF_SPACE)),
        ("COMPOUND_MESH", U32(COMPOUND_MESH)),
        ("COMPOUND_RANGE_LISTED", U32(COMPOUND_RANGE_LISTED)),
        ("COMPOUND_RANGE_SINGLE", U32(COMPOUND_RANGE_SINGLE)),
        ("COMPOUND_RANGE_OVERFLOW", U32(COMPOUND_RANGE_OVERFLOW)),
        ("COMPOUND_RANGE_HOST", U32(COMPOUND_RANGE_HOST)),
        ("COMPOUND_RANGE_SWAPPED", U32(COMPOUND_RANGE_SWAPPED)),
        ("MESH_RANGE_SWAPPED", U32(MESH_RANGE_SWAPPED)),
        ("MESH_RANGE_COMPOUND", U32(MESH_RANGE_COMPOUND)),
    ];
    assert_consts(&module, &expected);
    assert_consts(
        &parse_source("COMPOUND_EXPAND_WGSL", COMPOUND_EXPAND_WGSL),
        &[("COMPOUND_AABB_PADDING", F32(COMPOUND_AABB_PADDING))],
    );
    assert_consts(
        &parse_source("COMPOUND_MERGE_WGSL", COMPOUND_MERGE_WGSL),
        &[("COMPOUND_MERGE_DEGREES", F32(COMPOUND_MERGE_DEGREES))],
    );
    assert_consts(
        &parse_source("MESH_EXPAND_WGSL", MESH_EXPAND_WGSL),
        &[("TRIMESH_AABB_PADDING", F32(TRIMESH_AABB_PADDING))],
    );
    assert_consts(
        &parse_source("MESH_MERGE_WGSL", MESH_MERGE_WGSL),
        &[("TRIMESH_MERGE_DEGREES", F32(TRIMESH_MERGE_DEGREES))],
    );
    // The field constants of the shared structs, as callers see them.
    let layout = [
        ("AXIS_NONE", U32(AXIS_NONE)),
        ("AXIS_FACE_A", U32(AXIS_FACE_A)),
        ("AXIS_FACE_B", U32(AXIS_FACE_B)),
        ("AXIS_EDGE_PAIR", U32(AXIS_EDGE_PAIR)),
        ("SEPARATED_BIT", U32(SEPARATED_BIT)),
        ("INCOMPLETE_BIT", U32(INCOMPLETE_BIT)),
        ("AXIS_MASK", U32(AXIS_MASK)),
        ("MANIFOLD_SEPARATED", U32(MANIFOLD_SEPARATED)),
        ("MANIFOLD_CLIPPED", U32(MANIFOLD_CLIPPED)),
        ("MANIFOLD_HOST", U32(MANIFOLD_HOST)),
        ("MANIFOLD_INVALID", U32(MANIFOLD_INVALID)),
        ("MANIFOLD_OVERFLOW", U32(MANIFOLD_OVERFLOW)),
    ];
    assert_consts(&layout_module(), &layout);
    // The cooperative path's threshold (an override: its default) and its switch.
    assert_eq!(override_default(&module, "COOP_EDGE_PAIRS"), U32(COOP_EDGE_PAIRS));
    assert_eq!(override_default(&module, "COOP_PATH"), naga::Literal::Bool(true));
    // One workgroup per pair's split threshold (an override: its default).
    assert_eq!(
        override_default(&module, "SPLIT_EDGE_PAIRS"),
        U32(SPLIT_EDGE_PAIRS)
    );
    // The kept-edge bit set of the bounded edge query: 256 edges, B hulls of up to 87 vertices
    // (edges <= 3V - 6); larger ones keep every edge.
    assert_consts(&module, &[("KEPT_WORDS", U32(8))]);
    let clip = clip_module();
    let expected = [
        ("CONTACT_REDUCTION_TOLERANCE", F32(CONTACT_REDUCTION_TOLERANCE)),
        ("INCIDENT_FACE_TOLERANCE", F32(INCIDENT_FACE_TOLERANCE)),
        ("MAX_CLIP_VERTICES", U32(MAX_GPU_CLIP_VERTICES)),
        ("FEATURE_FACE_A", U32(FeatureId::FACE_A)),
        ("FEATURE_FACE_B", U32(FeatureId::FACE_B)),
        ("FEATURE_EDGE_PAIR", U32(FeatureId::EDGE_PAIR)),
        ("FEATURE_HIGH_MAX", U32(FeatureId::HIGH_MAX)),
        ("FEATURE_LOW_MAX", U32(FeatureId::LOW_MAX)),
        ("SEGMENT_TINY", F32(f32::EPSILON * f32::EPSILON)),
        ("WORKGROUP_SIZE", U32(WORKGROUP_SIZE)),
        ("CLIP_GROUP_LANES", U32(CLIP_GROUP_LANES)),
        ("CLIP_GROUP_PAIRS", U32(CLIP_GROUP_PAIRS)),
        // geometry.wgsl: the deepest axis's edge normal (clip.wgsl) and primitives.wgsl.
        ("PARALLEL_EDGE_SINE", F32(PARALLEL_EDGE_SINE)),
        ("FEATURE_OTHER", U32(FeatureId::OTHER)),
        ("CLOSEST_FEATURE_COSINE", F32(CLOSEST_FEATURE_COSINE)),
        ("GPU_GJK_CONDITIONING", F32(GPU_GJK_CONDITIONING)),
        ("GPU_GJK_MAX_DIRECTION_ERROR", F32(GPU_GJK_MAX_DIRECTION_ERROR)),
        // gjk.wgsl: the CPU keeps these in f64; the kernel runs in f32.
        ("GJK_RELATIVE_TOLERANCE", F32(GJK_RELATIVE_TOLERANCE as f32)),
        ("GJK_OVERLAP_TOLERANCE", F32(GJK_OVERLAP_TOLERANCE as f32)),
        ("GJK_MAX_ITERATIONS", U32(GJK_MAX_ITERATIONS as u32)),
        ("GJK_TINY", F32(f32::MIN_POSITIVE)),
        ("GJK_EPSILON", F32(f32::EPSILON)),
        // primitives.wgsl.
        (
            "PRIMITIVE_AXIS_PREFERENCE_TOLERANCE",
            F32(AXIS_PREFERENCE_TOLERANCE),
        ),
        ("CAPSULE_FACE_SINE", F32(CAPSULE_FACE_SINE)),
        ("CAPSULE_PARALLEL_SINE", F32(CAPSULE_PARALLEL_SINE)),
        ("NORMALIZE_MIN_LENGTH", F32(1.0 / f32::MAX)),
    ];
    assert_consts(&clip, &expected);
    assert_eq!(main_workgroup_size(&module), [WORKGROUP_SIZE, 1, 1]);
}

/// The default value of the WGSL `override` named `name`.
fn override_default(module: &naga::Module, name: &str) -> naga::Literal {
    let (_, o) = module
        .overrides
        .iter()
        .find(|(_, o)| o.name.as_deref() == Some(name))
        .unwrap_or_else(|| panic!("override {name} not found"));
    match module.global_expressions[o.init.expect("a default")] {
        naga::Expression::Literal(literal) => literal,
        ref other => panic!("override {name} is not a literal: {other:?}"),
    }
}

/// The blocks nested directly in `statement` (branches, cases, loop bodies).
fn nested_blocks(statement: &naga::Statement) -> Vec<&naga::Block> {
    use naga::Statement as S;
    match statement {
        S::Block(block) => vec![block],
        S::If { accept, reject, .. } => vec![accept, reject],
        S::Switch { cases, .. } => cases.iter().map(|case| &case.body).collect(),
        S::Loop { body, continuing, .. } => vec![body, continuing],
        _ => Vec::new(),
    }
}

/// Whether `statement` or a statement nested in it satisfies `found`.
fn any_statement(statement: &naga::Statement, found: &dyn Fn(&naga::Statement) -> bool) -> bool {
    found(statement)
        || nested_blocks(statement)
            .into_iter()
            .flatten()
            .any(|s| any_statement(s, found))
}

/// Whether `statement` is a barrier (or a workgroupUniformLoad) or a call of a function of
/// `holding` (those holding one).
fn needs_workgroup(
    statement: &naga::Statement,
    holding: &std::collections::HashSet<naga::Handle<naga::Function>>,
) -> bool {
    use naga::Statement as S;
    match statement {
        S::ControlBarrier(_) | S::MemoryBarrier(_) | S::WorkGroupUniformLoad { .. } => true,
        S::Call { function, .. } => holding.contains(function),
        _ => false,
    }
}

#[test]
fn clip_kernel_barriers_are_reached_by_the_whole_workgroup() {
    // naga 30 records that a barrier needs uniform control flow but reports only derivatives
    // (its analyzer leaves barriers and workgroupUniformLoad unchecked), so this checks a
    // sufficient condition itself: every barrier, and every call of a function holding one, is
    // a top-level statement of its function with no `return` before it. The clip kernel's
    // list append (emit_manifold) holds two barriers, called once by every invocation, and
    // main_pair_per_group's searches two more.
    use naga::Statement as S;
    let module = clip_module();
    // naga orders functions callee first, so one pass finds every function holding a barrier.
    let mut holding = std::collections::HashSet::new();
    for (handle, function) in module.functions.iter() {
        let needs = |s: &S| needs_workgroup(s, &holding);
        if function.body.iter().any(|s| any_statement(s, &needs)) {
            holding.insert(handle);
        }
    }
    assert!(!holding.is_empty(), "the clip kernel holds no barrier");
    let needs = |s: &S| needs_workgroup(s, &holding);
    let returns = |s: &S| matches!(s, S::Return { .. } | S::Kill);
    let bodies = module
        .functions
        .iter()
        .map(|(_, f)| f)
        .chain(module.entry_points.iter().map(|e| &e.function));
    let mut checked = 0;
    for function in bodies {
        let name = function.name.as_deref().unwrap_or("?");
        let mut may_have_returned = false;
        for statement in function.body.iter() {
            if needs(statement) {
                assert!(!may_have_returned, "{name}: a barrier after a return");
                checked += 1;
            } else {
                assert!(
                    !any_statement(statement, &needs),
                    "{name}: a barrier in a branch or loop"
                );
            }
            may_have_returned |= any_statement(statement, &returns);
        }
    }
    // emit_manifold's two barriers and main's call of it; main_pair_per_group's two barriers
    // around its searches and its call of emit_manifold.
    assert_eq!(checked, 6);
}

#[test]
fn sat_kernel_without_the_cooperative_path_reaches_no_barrier_or_workgroup_memory() {
    // The SAT pipeline built with COOP_PATH = false (sat.rs) must leave nothing of the
    // cooperative path to run, nor workgroup memory to zero: every barrier, workgroup-memory
    // access and `is_big` test that an entry point (`main`, `main_pair_per_workgroup`) can
    // reach sits in a branch taken only when the override COOP_PATH is true
    // (`if COOP_PATH { .. }`), in the entry point or in a function it calls.
    use naga::{Expression as E, Statement as S};
    let module = sat_module();
    let coop_path = module
        .overrides
        .iter()
        .find(|(_, o)| o.name.as_deref() == Some("COOP_PATH"))
        .map(|(handle, _)| handle)
        .expect("override COOP_PATH");
    let is_big = module
        .functions
        .iter()
        .find(|(_, f)| f.name.as_deref() == Some("is_big"))
        .map(|(handle, _)| handle)
        .expect("fn is_big");
    // Functions that reach a barrier, workgroup memory or is_big with COOP_PATH false (naga
    // orders functions callee first, so one pass finds them all), and functions that do with
    // it true.
    let mut reaching = std::collections::HashSet::from([is_big]);
    let mut reaching_coop = reaching.clone();
    let mut skipped = std::collections::BTreeMap::new();
    let functions = module
        .functions
        .iter()
        .map(|(h, f)| (Some(h), f))
        .chain(module.entry_points.iter().map(|e| (None, &e.function)));
    for (handle, function) in functions {
        let workgroup_pointer = |pointer| {
            reaches_global(function, pointer)
                .is_some_and(|g| module.global_variables[g].space == naga::AddressSpace::WorkGroup)
        };
        let reaches = |s: &S, set: &std::collections::HashSet<_>| match s {
            S::ControlBarrier(_) | S::MemoryBarrier(_) | S::WorkGroupUniformLoad { .. } => true,
            S::Call { function, .. } => set.contains(function),
            S::Store { pointer, .. } | S::Atomic { pointer, .. } => workgroup_pointer(*pointer),
            S::Emit(range) => range.clone().any(|e| match function.expressions[e] {
                E::Load { pointer } => workgroup_pointer(pointer),
                _ => false,
            }),
            _ => false,
        };
        let guarded = |s: &S| matches!(s, S::If { condition, .. } if matches!(function.expressions[*condition], E::Override(o) if o == coop_path));
        let (without, guarded_branches) =
            walk_unguarded(&function.body, &guarded, &|s| reaches(s, &reaching));
        let with = function
            .body
            .iter()
            .any(|s| any_statement(s, &|s| reaches(s, &reaching_coop)));
        match handle {
            Some(handle) => {
                if without {
                    reaching.insert(handle);
                }
                if with {
                    reaching_coop.insert(handle);
                }
            }
            None => {
                let name = function.name.clone().unwrap_or_default();
                assert!(
                    !without,
                    "{name} reaches a barrier, workgroup memory or is_big without COOP_PATH"
                );
                assert!(with, "{name} reaches them with COOP_PATH");
                skipped.insert(name, guarded_branches);
            }
        }
    }
    // The check is not empty: the cooperative path's functions reach them, only through
    // COOP_PATH branches (main's opening barrier, list_if_big, run_listed;
    // main_pair_per_workgroup's run_split; kept_word's read).
    let names = |set: &std::collections::HashSet<naga::Handle<naga::Function>>| {
        let mut names: Vec<_> = set
            .iter()
            .map(|&h| module.functions[h].name.clone().unwrap_or_default())
            .collect();
        names.sort();
        names
    };
    for name in [
        "list_if_big",
        "run_listed",
        "sat_coop",
        "reduce_faces",
        "kept_word",
        "scan_kept",
        "run_split",
    ] {
        assert!(names(&reaching_coop).contains(&name.to_string()), "{name}");
    }
    assert!(!names(&reaching).contains(&"sat_serial".to_string()));
    let expected = [
        ("main".to_string(), 3),
        ("main_pair_per_workgroup".to_string(), 1),
    ];
    assert_eq!(skipped, std::collections::BTreeMap::from(expected));
}

/// The global variable a pointer expression points into (through `Access` / `AccessIndex`).
fn reaches_global(
    function: &naga::Function,
    mut pointer: naga::Handle<naga::Expression>,
) -> Option<naga::Handle<naga::GlobalVariable>> {
    use naga::Expression as E;
    loop {
        match function.expressions[pointer] {
            E::Access { base, .. } | E::AccessIndex { base, .. } => pointer = base,
            E::GlobalVariable(global) => return Some(global),
            _ => return None,
        }
    }
}

/// Whether a statement of `block` satisfies `found`, skipping the branches taken only when
/// `guarded` (an `if` on an override) holds; and how many such branches it skipped.
fn walk_unguarded(
    block: &naga::Block,
    guarded: &dyn Fn(&naga::Statement) -> bool,
    found: &dyn Fn(&naga::Statement) -> bool,
) -> (bool, usize) {
    let (mut any, mut skipped) = (false, 0);
    for statement in block.iter() {
        any |= found(statement);
        let nested = match statement {
            naga::Statement::If { reject, .. } if guarded(statement) => {
                skipped += 1;
                vec![reject]
            }
            _ => nested_blocks(statement),
        };
        for block in nested {
            let (a, s) = walk_unguarded(block, guarded, found);
            any |= a;
            skipped += s;
        }
    }
    (any, skipped)
}

/// The constants of the mesh pass's per-triangle functions (triangle_contact.wgsl) and the
/// corner-loop marker its clip shares with clip.wgsl.
#[test]
fn triangle_contact_constants_equal_the_rust_ones() {
    use hullsat::constants::{TRIMESH_APART_TOLERANCE, TRIMESH_FACE_NORMAL_DEGREES};
    use hullsat::internals::FEATURE_WEIGHT_TOLERANCE;
    use naga::Literal::{F32, U32};
    let module = parse_source("triangle kernel", &triangle_kernel_source());
    assert_consts(
        &module,
        &[
            (
                "TRIMESH_FACE_NORMAL_COSINE",
                F32(TRIMESH_FACE_NORMAL_DEGREES.to_radians().cos()),
            ),
            ("TRIMESH_APART_TOLERANCE", F32(TRIMESH_APART_TOLERANCE)),
            ("FEATURE_WEIGHT_TOLERANCE", F32(FEATURE_WEIGHT_TOLERANCE)),
            ("MAX_CLIP_VERTICES", U32(MAX_GPU_CLIP_VERTICES)),
            ("CORNER_LOOP", U32(u32::MAX)),
        ],
    );
}

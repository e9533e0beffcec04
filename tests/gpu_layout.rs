//! The WGSL shaders parse and validate, and every struct and constant they share with Rust has
//! the same layout and value on both sides. No device needed.

use hullsat::FeatureId;
use hullsat::constants::{
    AXIS_PREFERENCE_TOLERANCE, CAPSULE_FACE_SINE, CAPSULE_PARALLEL_SINE, CLOSEST_FEATURE_COSINE,
    CONTACT_REDUCTION_TOLERANCE, GJK_MAX_ITERATIONS, GJK_OVERLAP_TOLERANCE, GJK_RELATIVE_TOLERANCE,
    GPU_GJK_CONDITIONING, GPU_GJK_MAX_DIRECTION_ERROR, INCIDENT_FACE_TOLERANCE, PARALLEL_EDGE_SINE,
};
use hullsat::gpu::layout::{
    AXIS_EDGE_PAIR, AXIS_FACE_A, AXIS_FACE_B, AXIS_MASK, AXIS_NONE, GpuBody, GpuEdge, GpuManifold,
    GpuManifoldCount, GpuParams, GpuResidentSetup, GpuSatResult, GpuShape, INCOMPLETE_BIT, MANIFOLD_CLIPPED,
    MANIFOLD_HOST, MANIFOLD_INVALID, MANIFOLD_LIST_HEAD, MANIFOLD_SEPARATED, MAX_GPU_CLIP_VERTICES,
    PARAMS_STRIDE, SEPARATED_BIT, SHAPE_BOX, SHAPE_CAPSULE, SHAPE_HALF_SPACE, SHAPE_HULL, SHAPE_SPHERE,
    WORKGROUP_SIZE,
};
use hullsat::query::bounds::SAT_BOUND_SLACK;

mod support;
use support::wgsl::{
    assert_consts, assert_same_layout, main_workgroup_size, parse as parse_source, validate, wgsl_layout,
};

/// Kernels live beside their host modules under src/.
fn source_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
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

/// A kernel file's module: a file that is part of a kernel the host concatenates (clip.wgsl,
/// gjk.wgsl, primitives.wgsl) is compiled as that whole kernel; other kernels beside
/// `geometry.wgsl` are compiled after it (as the host modules do); any other file stands alone.
fn parse(path: &std::path::Path) -> naga::Module {
    let read =
        |p: &std::path::Path| std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let shared = path.with_file_name("geometry.wgsl");
    let own = read(path);
    let is_clip_part =
        path.file_name().is_some_and(|n| n != "geometry.wgsl") && hullsat::gpu::CLIP_WGSL.contains(&own);
    let source = if is_clip_part {
        hullsat::gpu::CLIP_WGSL.to_string()
    } else if path.file_name().is_some_and(|n| n != "geometry.wgsl") && shared.exists() {
        read(&shared) + &own
    } else {
        own
    };
    parse_source(&path.display().to_string(), &source)
}

/// The SAT kernel exactly as the host compiles it.
fn sat_module() -> naga::Module {
    parse_source("SAT_WGSL", hullsat::gpu::SAT_WGSL)
}

/// The clip kernel exactly as the host compiles it.
fn clip_module() -> naga::Module {
    parse_source("CLIP_WGSL", hullsat::gpu::CLIP_WGSL)
}

#[test]
fn every_wgsl_file_parses_and_validates() {
    let mut files = Vec::new();
    wgsl_files(&source_dir(), &mut files);
    for path in &files {
        validate(&path.display().to_string(), &parse(path));
    }
    assert!(
        files.iter().any(|f| f.ends_with("narrowphase/gpu/sat.wgsl")),
        "sat.wgsl not found under src/: {files:?}"
    );
}

#[test]
fn rust_and_wgsl_structs_have_the_same_layout() {
    let clip = clip_module();
    assert_same_layout(
        &clip,
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
    // The list's head is GpuManifoldCount; the entries follow at MANIFOLD_LIST_HEAD.
    let (mut head, head_size) = rust_layout!(GpuManifoldCount {
        count,
        _pad0,
        _pad1,
        _pad2
    });
    assert_eq!(u64::from(head_size), MANIFOLD_LIST_HEAD);
    head.push(("entries".into(), head_size));
    assert_eq!(wgsl_layout(&clip, "GpuManifoldList").0, head);
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
    assert_same_layout(&module, "GpuEdge", rust_layout!(GpuEdge { v0, v1, f0, f1 }));
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
            feature_b
        }),
    );
    assert_same_layout(
        &module,
        "GpuParams",
        rust_layout!(GpuParams {
            margin,
            pair_count,
            first_pair,
            _pad
        }),
    );
}

#[test]
fn resident_prepare_kernel_structs_match_the_rust_ones() {
    let module = parse_source("RESIDENT_WGSL", hullsat::gpu::RESIDENT_WGSL);
    assert_same_layout(
        &module,
        "GpuResidentSetup",
        rust_layout!(GpuResidentSetup {
            margin,
            max_pairs,
            count_index,
            chunk_pairs,
            chunks,
            _pad0,
            _pad1,
            _pad2
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
        &[("PARAMS_STRIDE", naga::Literal::U32(PARAMS_STRIDE as u32))],
    );
    assert_eq!(main_workgroup_size(&module), [WORKGROUP_SIZE, 1, 1]);
}

#[test]
fn wgsl_constants_equal_the_rust_ones() {
    use naga::Literal::{F32, U32};
    let module = sat_module();
    let expected = [
        ("AXIS_PREFERENCE_TOLERANCE", F32(AXIS_PREFERENCE_TOLERANCE)),
        ("PARALLEL_EDGE_SINE", F32(PARALLEL_EDGE_SINE)),
        ("SAT_BOUND_SLACK", F32(SAT_BOUND_SLACK)),
        ("F32_MIN_POSITIVE", F32(f32::MIN_POSITIVE)),
        ("WORKGROUP_SIZE", U32(WORKGROUP_SIZE)),
        ("SHAPE_HULL", U32(SHAPE_HULL)),
        ("SHAPE_BOX", U32(SHAPE_BOX)),
        ("SHAPE_SPHERE", U32(SHAPE_SPHERE)),
        ("SHAPE_CAPSULE", U32(SHAPE_CAPSULE)),
        ("SHAPE_HALF_SPACE", U32(SHAPE_HALF_SPACE)),
        ("AXIS_NONE", U32(AXIS_NONE)),
        ("AXIS_FACE_A", U32(AXIS_FACE_A)),
        ("AXIS_FACE_B", U32(AXIS_FACE_B)),
        ("AXIS_EDGE_PAIR", U32(AXIS_EDGE_PAIR)),
        ("SEPARATED_BIT", U32(SEPARATED_BIT)),
        ("INCOMPLETE_BIT", U32(INCOMPLETE_BIT)),
        ("F32_MAX", F32(f32::MAX)),
        ("AXIS_MASK", U32(AXIS_MASK)),
    ];
    assert_consts(&module, &expected);
    // The kept-edge bit set of the bounded edge query: 256 edges, B hulls of up to 87 vertices
    // (edges <= 3V - 6); larger ones keep every edge.
    assert_consts(&module, &[("KEPT_WORDS", U32(8))]);
    let clip = clip_module();
    let expected = [
        ("CONTACT_REDUCTION_TOLERANCE", F32(CONTACT_REDUCTION_TOLERANCE)),
        ("INCIDENT_FACE_TOLERANCE", F32(INCIDENT_FACE_TOLERANCE)),
        ("MAX_CLIP_VERTICES", U32(MAX_GPU_CLIP_VERTICES)),
        ("MANIFOLD_SEPARATED", U32(MANIFOLD_SEPARATED)),
        ("MANIFOLD_CLIPPED", U32(MANIFOLD_CLIPPED)),
        ("MANIFOLD_HOST", U32(MANIFOLD_HOST)),
        ("MANIFOLD_INVALID", U32(MANIFOLD_INVALID)),
        ("FEATURE_FACE_A", U32(FeatureId::FACE_A)),
        ("FEATURE_FACE_B", U32(FeatureId::FACE_B)),
        ("FEATURE_EDGE_PAIR", U32(FeatureId::EDGE_PAIR)),
        ("FEATURE_HIGH_MAX", U32(FeatureId::HIGH_MAX)),
        ("FEATURE_LOW_MAX", U32(FeatureId::LOW_MAX)),
        ("SEGMENT_TINY", F32(f32::EPSILON * f32::EPSILON)),
        ("WORKGROUP_SIZE", U32(WORKGROUP_SIZE)),
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
        ("PRIMITIVE_PARALLEL_EDGE_SINE", F32(PARALLEL_EDGE_SINE)),
        ("CAPSULE_FACE_SINE", F32(CAPSULE_FACE_SINE)),
        ("CAPSULE_PARALLEL_SINE", F32(CAPSULE_PARALLEL_SINE)),
        ("NORMALIZE_MIN_LENGTH", F32(1.0 / f32::MAX)),
    ];
    assert_consts(&clip, &expected);
    assert_eq!(main_workgroup_size(&module), [WORKGROUP_SIZE, 1, 1]);
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
    // list append (emit_manifold) holds two barriers, called once by every invocation.
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
    // emit_manifold's two barriers and main's call of it.
    assert_eq!(checked, 3);
}

//! `shaders/common/radix_sort.wgsl` parses and validates, and every struct and constant it
//! shares with `hullsat::internals`' radix sort has the same layout and value on both sides.
//! No device needed.

use hullsat::internals::{
    GpuRadixParams, GpuRadixState, MAX_SCAN_LEVELS, RADIX_BINS, RADIX_BITS, RADIX_SORT_WGSL, RADIX_TILE,
    RADIX_WORKGROUP_SIZE, SCAN_BLOCK,
};

mod support;
use support::wgsl::{assert_consts, assert_same_layout, parse, validate};

fn module() -> naga::Module {
    let path = format!("{}/shaders/common/radix_sort.wgsl", env!("CARGO_MANIFEST_DIR"));
    let file = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    assert_eq!(RADIX_SORT_WGSL, file, "the embedded shader is the file");
    parse("radix_sort.wgsl", RADIX_SORT_WGSL)
}

#[test]
fn the_radix_sort_kernels_parse_and_validate() {
    validate("radix_sort.wgsl", &module());
}

#[test]
fn radix_sort_structs_and_constants_match_the_rust_ones() {
    use naga::Literal::U32;
    let module = module();
    let cases = [
        (
            "GpuRadixParams",
            encase_layout!(GpuRadixParams {
                max_keys,
                counted,
                low_bits,
                shift,
                level,
                level_offset,
                parent_offset,
                top,
                max_groups
            }),
        ),
        (
            "GpuRadixState",
            rust_layout!(GpuRadixState {
                key_count,
                tile_count,
                _pad0,
                _pad1
            }),
        ),
    ];
    for (name, rust) in cases {
        assert_same_layout(&module, name, rust);
    }
    let expected = [
        ("RADIX_WORKGROUP_SIZE", U32(RADIX_WORKGROUP_SIZE)),
        ("RADIX_BITS", U32(RADIX_BITS)),
        ("RADIX_BINS", U32(RADIX_BINS)),
        ("RADIX_TILE", U32(RADIX_TILE)),
        ("SCAN_BLOCK", U32(SCAN_BLOCK)),
        ("MAX_SCAN_LEVELS", U32(MAX_SCAN_LEVELS)),
    ];
    assert_consts(&module, &expected);
    for entry in &module.entry_points {
        let size = if entry.name == "prepare_main" {
            1
        } else {
            RADIX_WORKGROUP_SIZE
        };
        assert_eq!(entry.workgroup_size, [size, 1, 1], "{}", entry.name);
    }
    assert_eq!(module.entry_points.len(), 5);
}

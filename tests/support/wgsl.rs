//! Reading WGSL with naga for the layout tests: parse and validate a kernel, read a struct's
//! field offsets and size, read a `const`, and compare them with the Rust side.

use naga::valid::{Capabilities, ValidationFlags, Validator};

/// The module of `source`; panics with naga's message, naming `name`, when it does not parse.
pub fn parse(name: &str, source: &str) -> naga::Module {
    naga::front::wgsl::parse_str(source).unwrap_or_else(|e| panic!("{name}: {}", e.emit_to_string(source)))
}

/// Validates `module` with every check on; panics naming `name` when it fails.
pub fn validate(name: &str, module: &naga::Module) {
    Validator::new(ValidationFlags::all(), Capabilities::empty())
        .validate(module)
        .unwrap_or_else(|e| panic!("{name}: {e:?}"));
}

/// [`validate`] on a device with subgroup operations in compute shaders (what
/// `wgpu::Features::SUBGROUP` lets a module use).
pub fn validate_with_subgroups(name: &str, module: &naga::Module) {
    use naga::valid::{ShaderStages, SubgroupOperationSet};
    Validator::new(ValidationFlags::all(), Capabilities::SUBGROUP)
        .subgroup_stages(ShaderStages::COMPUTE)
        .subgroup_operations(SubgroupOperationSet::all())
        .validate(module)
        .unwrap_or_else(|e| panic!("{name}: {e:?}"));
}

/// Field names and byte offsets of a Rust struct, plus its size, in the form of
/// [`wgsl_layout`].
#[macro_export]
macro_rules! rust_layout {
    ($ty:ty { $($field:ident),* $(,)? }) => {
        (
            vec![$((stringify!($field).to_string(), std::mem::offset_of!($ty, $field) as u32)),*],
            std::mem::size_of::<$ty>() as u32,
        )
    };
}

/// Field names and byte offsets of a parameter struct written with encase, plus its size, in the
/// form of [`wgsl_layout`]: every field is set to a distinct bit pattern ([`Distinct`]), the
/// value is written as a uniform with encase, and each field's offset is where its bits land.
#[macro_export]
macro_rules! encase_layout {
    ($ty:ident { $($field:ident),* $(,)? }) => {{
        let mut value = $ty::default();
        let mut names = Vec::new();
        $(
            names.push(stringify!($field));
            value.$field = $crate::support::wgsl::Distinct::distinct(names.len() as u32);
        )*
        let mut buffer = encase::UniformBuffer::new(Vec::new());
        buffer.write(&value).expect("encase writes the struct");
        let bytes = buffer.into_inner();
        $crate::support::wgsl::offsets_of_distinct(&names, &bytes)
    }};
}

/// A field value whose bits name field `k` (1-based); vectors mark their first component.
pub trait Distinct {
    fn distinct(k: u32) -> Self;
}

/// The bits of field `k`'s [`Distinct`] value (its first component for a vector).
pub fn distinct_bits(k: u32) -> u32 {
    0x5eed_0000 | (k << 4)
}

impl Distinct for u32 {
    fn distinct(k: u32) -> Self {
        distinct_bits(k)
    }
}

impl Distinct for f32 {
    fn distinct(k: u32) -> Self {
        f32::from_bits(distinct_bits(k))
    }
}

impl Distinct for hullsat::gpu::layout::WgslVec3 {
    fn distinct(k: u32) -> Self {
        let bits = distinct_bits(k);
        hullsat::gpu::layout::WgslVec3([bits, bits + 1, bits + 2].map(f32::from_bits))
    }
}

/// The offset of each named field's [`distinct_bits`] in `bytes` (4-byte aligned, found once),
/// and the size written.
pub fn offsets_of_distinct(names: &[&str], bytes: &[u8]) -> (Vec<(String, u32)>, u32) {
    let words: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
        .collect();
    let fields = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let bits = distinct_bits(i as u32 + 1);
            let at: Vec<usize> = (0..words.len()).filter(|&w| words[w] == bits).collect();
            assert_eq!(at.len(), 1, "field {name}: its bits appear at words {at:?}");
            (name.to_string(), at[0] as u32 * 4)
        })
        .collect();
    (fields, bytes.len() as u32)
}

/// Field names and byte offsets of the WGSL struct `name`, plus its size (naga's layouter).
pub fn wgsl_layout(module: &naga::Module, name: &str) -> (Vec<(String, u32)>, u32) {
    let mut layouter = naga::proc::Layouter::default();
    layouter.update(module.to_ctx()).expect("layouts compute");
    let (handle, ty) = module
        .types
        .iter()
        .find(|(_, ty)| ty.name.as_deref() == Some(name))
        .unwrap_or_else(|| panic!("struct {name} not found"));
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

/// Checks that the WGSL struct `name` has the fields, offsets and size of `rust` (from
/// [`rust_layout!`]).
#[track_caller]
pub fn assert_same_layout(module: &naga::Module, name: &str, rust: (Vec<(String, u32)>, u32)) {
    let (wgsl_fields, wgsl_size) = wgsl_layout(module, name);
    let (rust_fields, rust_size) = rust;
    assert_eq!(
        rust_fields, wgsl_fields,
        "{name}: fields (name, offset) differ (Rust left, WGSL right)"
    );
    assert_eq!(
        rust_size, wgsl_size,
        "{name}: size differs (Rust left, WGSL right)"
    );
}

/// The scalar value of the WGSL `const` named `name`.
pub fn wgsl_const(module: &naga::Module, name: &str) -> naga::Literal {
    let (_, constant) = module
        .constants
        .iter()
        .find(|(_, c)| c.name.as_deref() == Some(name))
        .unwrap_or_else(|| panic!("const {name} not found"));
    match module.global_expressions[constant.init] {
        naga::Expression::Literal(literal) => literal,
        ref other => panic!("const {name} is not a literal: {other:?}"),
    }
}

/// Checks that each `(name, value)` is a WGSL `const` of `module` with that value.
#[track_caller]
pub fn assert_consts(module: &naga::Module, expected: &[(&str, naga::Literal)]) {
    for (name, value) in expected {
        assert_eq!(wgsl_const(module, name), *value, "const {name}");
    }
}

/// The workgroup size of the entry point `main`.
pub fn main_workgroup_size(module: &naga::Module) -> [u32; 3] {
    module
        .entry_points
        .iter()
        .find(|e| e.name == "main")
        .expect("entry point main")
        .workgroup_size
}

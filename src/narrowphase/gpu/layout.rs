//! The structs a caller's shader shares with the kernels ([`GpuBody`], [`GpuSatResult`],
//! [`GpuManifold`], the list head [`GpuManifoldCount`]), each with its WGSL twin in
//! `shaders/common/layout.wgsl` (exported as [`LAYOUT_WGSL`]), checked against naga by
//! `tests/gpu_layout.rs`. The kernels' own structs are in `kernel_layout`, not API.
//!
//! They are `#[repr(C)]` + [`bytemuck::Pod`], sizes asserted at compile time: the host writes
//! them in place into mapped staging memory from many threads, or reads them in place, with no
//! copy per element. No `Vec3A`: WGSL `vec3<f32>` is 12 bytes aligned to 16, so each `[f32; 3]`
//! is followed by a 4-byte scalar that fills the slot.

use bytemuck::{Pod, Zeroable};

pub use crate::gpu::layout::{GpuBody, split_translation};
use crate::query::sat::{SatAxis, SatResult};

/// [`GpuSatResult::kind`] low bits: pair not computed by the SAT kernel (a body is not a hull).
/// This and the other `AXIS_*`, [`AXIS_MASK`] and the `*_BIT` flags must match layout.wgsl.
pub const AXIS_NONE: u32 = 0;
/// [`GpuSatResult::kind`] low bits: a face of A won (`feature_a` = face of A).
pub const AXIS_FACE_A: u32 = 1;
/// [`GpuSatResult::kind`] low bits: a face of B won (`feature_b` = face of B).
pub const AXIS_FACE_B: u32 = 2;
/// [`GpuSatResult::kind`] low bits: an edge pair won (`feature_a`, `feature_b` = edges).
pub const AXIS_EDGE_PAIR: u32 = 3;
/// Mask of the axis code in [`GpuSatResult::kind`].
pub const AXIS_MASK: u32 = 3;
/// [`GpuSatResult::kind`] bit set when `separation > margin` (the pair has no contact).
pub const SEPARATED_BIT: u32 = 4;
/// Flag in [`GpuSatResult::kind`]: the driver cut the kernel's loops short, so the result is
/// incomplete and the host recomputes the pair on the CPU. llvmpipe (lavapipe, Mesa's CPU
/// driver) stops every loop of an invocation group once about 65,535 loop iterations are spent,
/// silently; pairs of hulls of ~128 vertices and more can reach that (the SAT kernel keeps
/// 64-vertex pairs below it). Real GPUs never set it.
pub const INCOMPLETE_BIT: u32 = 8;

/// The WGSL twins of the structs a caller's shader shares with the kernels (`layout.wgsl`:
/// `GpuBody`, `GpuSatResult`, `GpuManifold`, `GpuManifoldList` and their field constants
/// `AXIS_*`, `*_BIT`, `MANIFOLD_*`): the text the kernels are compiled with, for a caller to
/// prepend to a shader that writes bodies for `GpuNarrowphase::encode_resident` or reads its
/// manifold list (with [`crate::gpu::QUAT_WGSL`] to move points to the world). The list's count is a plain
/// `u32` here (the clip kernel's is atomic; a read-only binding cannot hold an atomic).
pub const LAYOUT_WGSL: &str = with_layout_sources!();

/// [`LAYOUT_WGSL`]'s sources, then the given files under `shaders/`, as one `&'static str`: the
/// source of a kernel that reads the manifold list as a caller's shader does (the ordering).
macro_rules! with_layout_sources {
    ($($file:literal),*) => {
        concat!(
            include_str!("../../../shaders/common/body.wgsl"),
            include_str!("../../../shaders/common/layout.wgsl"),
            "\n// A reader's view of the list's count (see above).\nalias ManifoldListCount = u32;\n"
            $(, include_str!(concat!("../../../shaders/", $file)))*
        )
    };
}
pub(crate) use with_layout_sources;

/// `GpuShape::kind`: a convex hull; must match geometry.wgsl.
pub const SHAPE_HULL: u32 = 0;
/// `GpuShape::kind`: a box, also posed as a hull (its ranges are set); must match geometry.wgsl.
pub const SHAPE_BOX: u32 = 1;
/// `GpuShape::kind`: a sphere; must match geometry.wgsl.
pub const SHAPE_SPHERE: u32 = 2;
/// `GpuShape::kind`: a capsule along local Y; must match geometry.wgsl.
pub const SHAPE_CAPSULE: u32 = 3;
/// `GpuShape::kind`: a half-space; must match geometry.wgsl.
pub const SHAPE_HALF_SPACE: u32 = 4;
/// `GpuShape::kind`: a triangle mesh: its tables are the mesh pass's; the clip kernel skips its
/// pairs, which the mesh pass merges and lists; must match geometry.wgsl.
pub const SHAPE_TRIMESH: u32 = 5;
/// `GpuShape::kind`: a compound: no geometry of its own (its children are shapes of the table,
/// after the narrowphase's); the clip kernel skips its pairs, which the compound stage merges
/// and lists; must match geometry.wgsl.
pub const SHAPE_COMPOUND: u32 = 6;

/// The SAT verdict for one pair, in A's frame; must match layout.wgsl `GpuSatResult`
/// ([`LAYOUT_WGSL`]).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuSatResult {
    /// Unit normal of the chosen axis, A's frame, from A toward B.
    pub normal: [f32; 3],
    /// Separation along the chosen axis, length units.
    pub axis_separation: f32,
    /// Largest separation over the tested axes, length units (as [`SatResult::separation`]).
    pub separation: f32,
    /// Axis code (`AXIS_*`, low two bits) plus [`SEPARATED_BIT`] and [`INCOMPLETE_BIT`].
    pub kind: u32,
    /// Face or edge index on A (0 when a face of B won).
    pub feature_a: u32,
    /// Face or edge index on B (0 when a face of A won).
    pub feature_b: u32,
    /// The deepest axis: the axis the face preference picks at tolerance 0 from the same best
    /// face of A, best face of B and best edge pair (as the CPU's
    /// `query_hulls_preferring_faces_by(…, 0.0)`), which the clip kernel retries on when the
    /// chosen axis's clip keeps no point. Its `AXIS_*` code (no flags; [`AXIS_NONE`] where
    /// `kind`'s is). It separates by `separation`; its normal is not stored (the clip kernel
    /// forms it again from the features, as the SAT did).
    pub deepest_kind: u32,
    /// The deepest axis's face or edge on A (0 when a face of B is deepest).
    pub deepest_feature_a: u32,
    /// The deepest axis's face or edge on B (0 when a face of A is deepest).
    pub deepest_feature_b: u32,
    /// The index of the pair this result is for in its dispatch (the call, or a host round), as
    /// [`GpuManifold::pair`]: the result's own index, unless a resident call ordered its pairs
    /// by cost (the SAT and clip kernels then read it to find each slot's pair).
    pub pair: u32,
}

/// [`GpuManifold::status`]: the pair has no contact (the SAT separates it beyond the margin).
/// This and the other `MANIFOLD_*` statuses must match layout.wgsl.
pub const MANIFOLD_SEPARATED: u32 = 0;
/// [`GpuManifold::status`]: the kernel finished the pair (clipped, closest points or a
/// primitive closed form); `count` points (1 to 4) are valid.
pub const MANIFOLD_CLIPPED: u32 = 1;
/// [`GpuManifold::status`]: the host computes this pair (the driver cut the loops short, faces
/// beyond [`MAX_GPU_CLIP_VERTICES`] on the SAT's axis or the deepest one, a deepest edge-pair
/// axis that came out parallel when formed again, a hull pair apart within the margin whose
/// f32 GJK direction is too uncertain; a compound pair with such a child pair, or a compound
/// or mesh pair whose merge gathers more than [`MAX_GPU_CLIP_VERTICES`] points).
pub const MANIFOLD_HOST: u32 = 2;
/// [`GpuManifold::status`]: the pair was not computed because an index is out of range: a body
/// index beyond the bodies buffer, a body paired with itself, or a body whose shape index is
/// beyond the shape list (only a resident caller's unvalidated pairs can be; see
/// `GpuNarrowphase::encode_resident`).
pub const MANIFOLD_INVALID: u32 = 3;
/// [`GpuManifold::status`]: a compound pair whose child pairs did not fit the call's sub-pair
/// capacity (`GpuNarrowphase::set_compound_capacity`), or a mesh pair whose triangles did not
/// fit its work item capacity (`GpuNarrowphase::set_mesh_capacity`), not computed: count 0,
/// `points[0]` x and y hold the call's total of child pairs or work items and the capacity as
/// u32 bits ([`GpuManifold::overflow`]). The host API returns
/// [`crate::GpuError::CompoundCapacity`] or [`crate::GpuError::MeshCapacity`].
pub const MANIFOLD_OVERFLOW: u32 = 4;
/// Most vertices of the clip kernel's polygon buffer: pairs whose reference and incident faces
/// have more vertices together go to the host; must match clip.wgsl.
pub const MAX_GPU_CLIP_VERTICES: u32 = 32;

/// One pair's manifold from the clip kernel, in A's frame (a consumer adds A's pose); must match
/// layout.wgsl `GpuManifold` ([`LAYOUT_WGSL`]).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuManifold {
    /// Unit normal, A's frame, from A toward B (the SAT axis).
    pub normal: [f32; 3],
    /// Signed distance between the surfaces, length units (negative = penetrating).
    pub separation: f32,
    /// Contact points: xyz = position midway between the surfaces (A's frame), w = depth
    /// (positive = penetrating). The first `count` are valid. For [`MANIFOLD_HOST`],
    /// `points[0]` carries the pair's SAT result instead ([`GpuManifold::host_sat`]).
    pub points: [[f32; 4]; 4],
    /// Feature id of each point, packed as [`crate::FeatureId`].
    pub ids: [u32; 4],
    /// Valid points (0 to 4; at least 1 when `status` is [`MANIFOLD_CLIPPED`]).
    pub count: u32,
    /// [`MANIFOLD_CLIPPED`], [`MANIFOLD_HOST`], [`MANIFOLD_INVALID`] or [`MANIFOLD_OVERFLOW`]
    /// ([`MANIFOLD_SEPARATED`] pairs are not stored in the compact list).
    pub status: u32,
    /// Index of the pair in the whole dispatch (a host round, or the pair buffer of a resident
    /// call): the manifold list is compacted, in no particular order, so this says which pair
    /// each entry is.
    pub pair: u32,
    /// Padding.
    pub _pad: u32,
}

/// The head of a compact manifold list: the number of entries, the entries listed, padding; the
/// [`GpuManifold`] entries follow from byte [`MANIFOLD_LIST_HEAD`]; must match the head of
/// layout.wgsl `GpuManifoldList` ([`LAYOUT_WGSL`]).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct GpuManifoldCount {
    /// Entries in the list: pairs that were not separated (an atomic counter in WGSL).
    pub count: u32,
    /// 0 in the clip kernel's list. In a host round's list put in pair order on the GPU, the
    /// entries of the list it was made from: equal to `count` unless an entry named a pair
    /// outside the round or one already placed (the host then fails the call).
    pub listed: u32,
    /// Incident-face searches the clip kernel's lane 0 ran alone in a round whose clip runs a
    /// few invocations a pair (after the SAT's one workgroup per pair): searches its lanes had
    /// not made (the plan missed them, or a software driver cut their loops short). In a list
    /// put in pair order, the clip's list's. Speed only: the results are the same either way.
    pub searched_alone: u32,
    /// Padding to the entries' 16-byte alignment.
    pub _pad2: u32,
}

/// Byte offset of the first [`GpuManifold`] in a manifold list (the size of its head).
pub const MANIFOLD_LIST_HEAD: u64 = size_of::<GpuManifoldCount>() as u64;

const _: () = assert!(size_of::<GpuSatResult>() == 48);
const _: () = assert!(size_of::<GpuManifold>() == 112);
const _: () = assert!(size_of::<GpuManifoldCount>() == 16);

impl GpuManifold {
    /// For a pair left to the host ([`MANIFOLD_HOST`]): the SAT result the clip kernel read (of
    /// the pair in the order it ran: canonical, the lower body index first, in a resident call),
    /// from `normal`, `separation` and `points[0]` (x, y, z: `kind`, `feature_a`, `feature_b` as
    /// u32 bits; w: `axis_separation`), as clip.wgsl `host_manifold` writes it. The deepest
    /// axis is not carried ([`AXIS_NONE`]): the host's `manifold_from_sat` forms it again.
    pub fn host_sat(&self) -> GpuSatResult {
        let [kind, feature_a, feature_b, axis_separation] = self.points[0];
        GpuSatResult {
            normal: self.normal,
            axis_separation,
            separation: self.separation,
            kind: kind.to_bits(),
            feature_a: feature_a.to_bits(),
            feature_b: feature_b.to_bits(),
            deepest_kind: AXIS_NONE,
            deepest_feature_a: 0,
            deepest_feature_b: 0,
            pair: self.pair,
        }
    }
}

impl GpuManifold {
    /// For [`MANIFOLD_OVERFLOW`]: the call's total of child pairs (or work items) and the
    /// capacity.
    pub fn overflow(&self) -> (u32, u32) {
        (self.points[0][0].to_bits(), self.points[0][1].to_bits())
    }
}

impl GpuSatResult {
    /// True when the driver cut the kernel short for this pair ([`INCOMPLETE_BIT`]).
    pub fn is_incomplete(&self) -> bool {
        self.kind & INCOMPLETE_BIT != 0
    }

    /// The CPU form of this result, or `None` when the pair was not computed on the GPU.
    pub fn to_sat(&self) -> Option<SatResult> {
        Some(SatResult {
            axis: sat_axis(self.kind, self.feature_a, self.feature_b)?,
            normal: self.normal.into(),
            axis_separation: self.axis_separation,
            separation: self.separation,
        })
    }

    /// The deepest axis ([`GpuSatResult::deepest_kind`] and its features), or `None` when the
    /// pair was not computed on the GPU.
    pub fn deepest_axis(&self) -> Option<SatAxis> {
        sat_axis(self.deepest_kind, self.deepest_feature_a, self.deepest_feature_b)
    }
}

/// The axis of an `AXIS_*` code (the low bits of `kind`) and its features, `None` for
/// [`AXIS_NONE`].
fn sat_axis(kind: u32, feature_a: u32, feature_b: u32) -> Option<SatAxis> {
    match kind & AXIS_MASK {
        AXIS_FACE_A => Some(SatAxis::FaceA(feature_a)),
        AXIS_FACE_B => Some(SatAxis::FaceB(feature_b)),
        AXIS_EDGE_PAIR => Some(SatAxis::EdgePair {
            edge_a: feature_a,
            edge_b: feature_b,
        }),
        _ => None,
    }
}

/// Bytes of one pair `[a, b]` in the pair buffer.
pub(crate) const PAIR_BYTES: u64 = size_of::<[u32; 2]>() as u64;
/// Bytes of one result.
pub(crate) const RESULT_BYTES: u64 = size_of::<GpuSatResult>() as u64;
/// Bytes of one manifold.
pub(crate) const MANIFOLD_BYTES: u64 = size_of::<GpuManifold>() as u64;

//! The structs only hullsat's own kernels read, each with its WGSL twin checked against naga by
//! `tests/gpu_layout.rs`: the shape table and hull geometry ([`GpuShape`], [`GpuEdge`],
//! [`HullTables`]), the compound tables ([`GpuCompound`], [`GpuCompoundPart`],
//! [`GpuCompoundRange`]), the mesh pass's records ([`GpuMeshPairRange`], [`GpuMeshItem`],
//! [`GpuMeshPoint`]) and the per-chunk [`GpuParams`] in `shaders/common/geometry.wgsl`,
//! [`GpuResidentSetup`] in `shaders/narrowphase/resident.wgsl`. Not API (the tests reach them
//! through [`crate::internals`]).
//!
//! The arrays are `#[repr(C)]` + [`bytemuck::Pod`] (uploaded once, cast without a copy); the
//! parameters written once per call derive [`encase::ShaderType`] and are written with encase.

use bytemuck::{Pod, Zeroable};
use encase::ShaderType;

use super::layout::{
    SHAPE_BOX, SHAPE_CAPSULE, SHAPE_COMPOUND, SHAPE_HALF_SPACE, SHAPE_HULL, SHAPE_SPHERE, SHAPE_TRIMESH,
};
use crate::gpu::buffers::binding;
use crate::gpu::mesh_layout::{GpuMeshTriangleContact, MeshTables};
use crate::gpu::pipeline::uniform;
use crate::hull::ConvexHull;
use crate::pose::{Isometry, Pose};
use crate::scene::InputError;
use crate::shape::{Shape, world_aabb};

/// Invocations per workgroup; must match `WORKGROUP_SIZE` in geometry.wgsl.
pub const WORKGROUP_SIZE: u32 = 64;

/// Edge pairs (A's edges × B's edges) from which the SAT kernel runs a pair on a whole workgroup
/// (the cooperative path); must match the default of sat.wgsl's `override COOP_EDGE_PAIRS`. Two
/// boxes never do (they take the box SAT).
pub const COOP_EDGE_PAIRS: u32 = 65_536;

/// Pairs below which a host round's (or a resident call's, by its GPU-side count) SAT dispatch
/// takes one workgroup per pair (sat.wgsl `main_pair_per_workgroup`) when its shapes can form a
/// pair of [`SPLIT_EDGE_PAIRS`]: on a GPU of L resident lanes the split pairs' total work
/// (hull32: 18,013 lane-dot-products each) then ends before one warp's slowest serial pair
/// (13,297) while pairs < 0.71 L, 192k on an H100 and 23k on 32,768 lanes (counted, not
/// measured: docs/design/gpu-narrowphase.md). At most 65,535, WebGPU's default
/// `max_compute_workgroups_per_dimension` (the choice also checks the device's), so one
/// dimension holds the workgroups.
pub const PAIR_PER_WORKGROUP_PAIRS: u32 = 16_384;

/// One workgroup per pair needs at least one pair in this many of the round to be split over
/// its workgroup ([`SPLIT_EDGE_PAIRS`]): every other pair holds 64 lanes for its lane 0. At one
/// in 8, a warp of 32 pairs run one per invocation holds a split-worthy pair 98.6% of the time
/// and waits for it anyway, and one workgroup per pair spends 1.45 times its lane-slots against
/// 1.35 for a call of hull32 pairs only (counted, not measured: docs/design/gpu-narrowphase.md).
pub const PAIR_PER_WORKGROUP_SPLIT_SHARE: u32 = 8;

/// Edge pairs (A's edges × B's edges) from which one workgroup per pair splits its pair over
/// the workgroup (sat.wgsl's cooperative path); smaller pairs and two boxes run on lane 0:
/// below it the serial edge query (6 dot products per edge pair) is no longer than the split
/// path's barriers (66 when it was counted, 38 since the floors; not measured:
/// docs/design/gpu-narrowphase.md). Must match the default of sat.wgsl's
/// `override SPLIT_EDGE_PAIRS`.
pub const SPLIT_EDGE_PAIRS: u32 = 64;

const _: () = assert!(PAIR_PER_WORKGROUP_PAIRS <= 65_535);

/// Invocations that clip one pair after the SAT's one workgroup per pair (clip.wgsl
/// `main_pair_per_group`: they share out the incident-face searches, then one clips); must
/// match clip.wgsl's `CLIP_GROUP_LANES`. A hull32 has about 60 faces to search, 8 trips a lane
/// here; 10,000 pairs take 80,000 invocations, under a third of an H100's
/// resident lanes (counted, not measured: docs/design/gpu-narrowphase.md).
pub const CLIP_GROUP_LANES: u32 = 8;

/// Pairs one workgroup clips under `main_pair_per_group`; must match clip.wgsl's
/// `CLIP_GROUP_PAIRS`.
pub const CLIP_GROUP_PAIRS: u32 = WORKGROUP_SIZE / CLIP_GROUP_LANES;

const _: () = assert!(WORKGROUP_SIZE.is_multiple_of(CLIP_GROUP_LANES));

/// One shape of the narrowphase (index = the shape's index in the list it was built with, as
/// [`crate::scene::Body::shape`]): its kind, size and, for hulls and boxes, ranges into the shared geometry
/// buffers (zero counts for the other kinds); must match geometry.wgsl `GpuShape`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuShape {
    /// Hull or box: volume centroid, shape frame; zero for the other kinds.
    pub centroid: [f32; 3],
    /// The shape's size for relative tolerances ([`Shape::size`]), length units.
    pub radius: f32,
    /// Index of the hull's first vertex in the vertex buffer.
    pub first_vertex: u32,
    /// Number of vertices.
    pub vertex_count: u32,
    /// Index of the hull's first plane in the plane buffer.
    pub first_face: u32,
    /// Number of faces (planes).
    pub face_count: u32,
    /// Index of the hull's first edge in the edge buffer.
    pub first_edge: u32,
    /// Number of edges.
    pub edge_count: u32,
    /// `SHAPE_*`.
    pub kind: u32,
    /// Hull or box: radius of the largest sphere about `centroid` inside it (its smallest
    /// centroid-to-face distance, `ConvexHull::inner_radius`), length units, for the
    /// SAT kernel's face and edge bounds; zero for the other kinds.
    pub inner_radius: f32,
    /// Kind-specific sizes, shape frame, length units: box: half extents xyz; sphere: radius in
    /// x; capsule: radius in x, half height (segment along Y) in y; half-space: unit outward
    /// normal xyz and offset w (the solid is `dot(normal, x) <= offset`); zero otherwise (a
    /// compound's children are shapes of their own, its first part at `first_face` and its part
    /// count in `face_count` (the mesh midphase reads them); a triangle mesh lies in the mesh
    /// tables, its triangle 0 at `first_face` and its BVH root entry in `first_edge`, counts
    /// zero).
    pub params: [f32; 4],
}

impl GpuShape {
    /// True for the kinds with hull geometry (hull, box).
    pub fn is_hull(&self) -> bool {
        self.kind <= SHAPE_BOX
    }
}

/// An edge with hull-local vertex and face indices (as [`crate::hull::Edge`]) and its arc
/// stretch; must match geometry.wgsl `GpuEdge`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuEdge {
    /// Start vertex.
    pub v0: u32,
    /// End vertex.
    pub v1: u32,
    /// The face walking the edge from `v0` to `v1` (low 16 bits) and the face walking it the
    /// other way (high 16 bits): a hull has fewer than 2^16 faces ([`GpuEdge::FACE_BITS`]).
    pub faces: u32,
    /// [`crate::hull::arc_stretch`] of the two faces' normals (dimensionless, at least 1), as
    /// [`crate::hull::EdgeLanes::stretch`]: the SAT's edge bounds (sat.wgsl `max_on_arcs`).
    pub stretch: f32,
}

impl GpuEdge {
    /// Bits of each face index in [`GpuEdge::faces`].
    pub const FACE_BITS: u32 = 16;

    /// The two face indices of [`GpuEdge::faces`] (geometry.wgsl `edge_faces`).
    pub fn face_pair(&self) -> [u32; 2] {
        [self.faces & 0xffff, self.faces >> Self::FACE_BITS]
    }
}

// A hull of MAX_HULL_VERTICES vertices has at most 2 V - 4 faces.
const _: () = assert!(2 * crate::hull::MAX_HULL_VERTICES < 1 << GpuEdge::FACE_BITS);

/// The first hull among `shapes` (a shape's polyhedron, or a compound child's) with more faces
/// than [`GpuEdge::faces`] can name, as an error at `shapes[i]` (`shapes[i].children[k]`). Only
/// a hull built around [`crate::hull::MAX_HULL_VERTICES`], such as a prism of 65,534 sides or
/// more ([`ConvexHull::prism`]), can have that many.
pub(crate) fn check_face_counts(shapes: &[Shape]) -> Result<(), InputError> {
    let limit = (1usize << GpuEdge::FACE_BITS) - 1;
    let too_many = |shape: &Shape| shape.as_hull().is_some_and(|hull| hull.planes().len() > limit);
    for (i, shape) in shapes.iter().enumerate() {
        let children = shape
            .as_compound()
            .map_or(&[][..], |compound| compound.children());
        let path = if too_many(shape) {
            format!("shapes[{i}]")
        } else if let Some(k) = children.iter().position(|child| too_many(&child.shape)) {
            format!("shapes[{i}].children[{k}]")
        } else {
            continue;
        };
        return Err(InputError::new(
            path,
            format!("a hull of more than {limit} faces, more than the GPU narrowphase takes"),
        ));
    }
    Ok(())
}

/// Per-dispatch parameters (uniform, one per chunk at [`PARAMS_STRIDE`]-byte offsets, written
/// with encase); must match geometry.wgsl `GpuParams`.
#[derive(Clone, Copy, Debug, Default, PartialEq, ShaderType)]
pub struct GpuParams {
    /// Speculative margin, length units.
    pub margin: f32,
    /// Pairs in this dispatch chunk (the pair and result bindings may be longer).
    pub pair_count: u32,
    /// Index of the chunk's first pair in the whole dispatch (a host round, or a resident
    /// call): the clip kernel adds it to the chunk-local index for [`GpuManifold::pair`](super::layout::GpuManifold::pair).
    pub first_pair: u32,
    /// 1 when the chunk's pairs are ordered by cost (a resident call of two cost keys or more,
    /// one pair per invocation, `super::order`): the SAT takes slot `s`'s pair from its
    /// result's [`GpuSatResult::pair`](super::layout::GpuSatResult::pair); else 0.
    pub ordered: u32,
    /// 1 when each pair runs in canonical order, the lower body index first, and its manifold
    /// is listed in the given order (a resident call: its caller may give a pair either way
    /// round; geometry.wgsl `pair_to_run`); 0: as given (host rounds, whose pairs are staged in
    /// canonical order already, and `encode`, whose SAT records are the given pairs').
    pub canonical: u32,
}

/// Bytes between two chunks' [`GpuParams`] in the parameter buffer: the largest
/// `min_uniform_buffer_offset_alignment` wgpu allows, so the dynamic offsets suit every device;
/// must match resident.wgsl `PARAMS_STRIDE` (its `ParamsSlot`).
pub const PARAMS_STRIDE: u64 = 256;

/// The chunks' parameter buffer `params` at binding `index`, one chunk's [`GpuParams`] seen at a
/// time (the dynamic offset `k * PARAMS_STRIDE` picks chunk k).
pub(crate) fn params_binding(index: u32, params: &wgpu::Buffer) -> wgpu::BindGroupEntry<'_> {
    binding(index, params, 0, GpuParams::min_size().get())
}

/// The layout entry [`params_binding`] fills: a uniform with a dynamic offset.
pub(crate) fn params_layout() -> wgpu::BindingType {
    uniform(true, Some(GpuParams::min_size()))
}

/// What the resident prepare kernel (resident.wgsl) needs to turn the caller's pair count into
/// each chunk's [`GpuParams`] and dispatch arguments (uniform, one per resident call, written
/// with encase); must match resident.wgsl `GpuResidentSetup`.
#[derive(Clone, Copy, Debug, Default, PartialEq, ShaderType)]
pub struct GpuResidentSetup {
    /// Speculative margin, length units.
    pub margin: f32,
    /// Most pairs the call runs: the caller's count is clamped to this (the list's capacity).
    pub max_pairs: u32,
    /// Index of the count in the caller's count buffer bound as `array<u32>` (byte offset / 4).
    pub count_index: u32,
    /// Pairs per dispatch chunk.
    pub chunk_pairs: u32,
    /// Dispatch chunks recorded (enough for `max_pairs`).
    pub chunks: u32,
    /// 0: one set of dispatch arguments per chunk (one pair per invocation). Else the SAT's two
    /// sets follow it, one pair per invocation from index `chunks` (the clip's too), one
    /// workgroup per pair from `2 * chunks`, and the second runs (the first is empty) when the
    /// clamped count is below this; with it the clip's per-group set from `3 * chunks`
    /// ([`CLIP_GROUP_PAIRS`] pairs a workgroup).
    pub per_workgroup_below: u32,
    /// 1 when the call orders its pairs by cost before the SAT (`super::order`), passed on as
    /// each chunk's [`GpuParams::ordered`] unless the SAT takes one workgroup per pair (the
    /// ordering clears it in chunks of one key); else 0.
    pub ordered: u32,
}

impl GpuResidentSetup {
    /// A stage's own indirect dispatch (the compound stage's sub-pairs, the mesh pass's work
    /// items): up to `capacity` items in one chunk, unordered, one item per invocation, the
    /// item count at word 0 of the stage's own range table.
    pub fn one_chunk(margin: f32, capacity: u32) -> Self {
        GpuResidentSetup {
            margin,
            max_pairs: capacity,
            count_index: 0,
            chunk_pairs: capacity,
            chunks: 1,
            per_workgroup_below: 0,
            ordered: 0,
        }
    }
}

/// [`GpuCompound::flags`]: the shape is a compound (its parts are its children); must match
/// geometry.wgsl, as the other `COMPOUND_*` flags.
pub const COMPOUND_IS_COMPOUND: u32 = 1;
/// [`GpuCompound::flags`]: the shape is a sphere (a merge keeps the deepest child pair's point).
pub const COMPOUND_SPHERE: u32 = 2;
/// [`GpuCompound::flags`]: the shape is a half-space (its part pairs with every part).
pub const COMPOUND_HALF_SPACE: u32 = 4;
/// [`GpuCompound::flags`]: the shape is a triangle mesh (no parts): its pairs are the mesh
/// pass's, compound pairs included.
pub const COMPOUND_MESH: u32 = 8;
/// [`GpuCompoundRange::flags`]: the caller pair is a compound pair (the merge lists it); must
/// match geometry.wgsl, as the other `COMPOUND_RANGE_*` flags.
pub const COMPOUND_RANGE_LISTED: u32 = 1;
/// [`GpuCompoundRange::flags`]: a body is a sphere (the merge keeps one sub-manifold).
pub const COMPOUND_RANGE_SINGLE: u32 = 2;
/// [`GpuCompoundRange::flags`]: the child pairs did not fit the sub-pair capacity.
pub const COMPOUND_RANGE_OVERFLOW: u32 = 4;
/// [`GpuCompoundRange::flags`]: the driver cut the expansion's loops short: the host's pair.
pub const COMPOUND_RANGE_HOST: u32 = 8;
/// [`GpuCompoundRange::flags`]: the pair was given with its higher body index first, so it ran
/// in canonical order (as the CPU's) and the merge moves its manifold into the given order and
/// frame ([`GpuCompoundRange::lower_rotation`]). 16 and 32 are the mesh pass's
/// `GpuMeshPairRange` flags, kept apart from these.
pub const COMPOUND_RANGE_SWAPPED: u32 = 64;

/// One per shape of the narrowphase (index = the shape's index): its parts for the compound
/// midphase, a compound's children or, for any other shape, the shape itself as a single part
/// at the body's origin (as `src/contact/compound.rs` does); must match geometry.wgsl
/// `GpuCompound`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuCompound {
    /// Index of its first part in the part table.
    pub first_part: u32,
    /// Number of parts (0 for a triangle mesh: [`COMPOUND_MESH`]).
    pub part_count: u32,
    /// `COMPOUND_IS_COMPOUND`, `COMPOUND_SPHERE`, `COMPOUND_HALF_SPACE`, `COMPOUND_MESH`.
    pub flags: u32,
    /// [`Shape::size`] (a compound's: its largest child's), length units.
    pub size: f32,
}

/// One part of a body for the compound midphase; must match geometry.wgsl `GpuCompoundPart`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuCompoundPart {
    /// The part's rotation in its body's frame, unit quaternion xyzw.
    pub rotation: [f32; 4],
    /// The part's translation in its body's frame, length units.
    pub translation: [f32; 3],
    /// The part's shape: its index in the shape table (a compound's children follow the
    /// narrowphase's shapes).
    pub shape: u32,
    /// Lower corner of its box in the body's frame (tight, as [`world_aabb`]; zero for a
    /// half-space, which pairs with every part).
    pub box_min: [f32; 3],
    /// Padding.
    pub _pad0: u32,
    /// Upper corner of its box in the body's frame.
    pub box_max: [f32; 3],
    /// Padding.
    pub _pad1: u32,
}

/// One caller pair's child pairs after the compound expansion; must match geometry.wgsl
/// `GpuCompoundRange`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuCompoundRange {
    /// Its first sub-pair slot.
    pub first: u32,
    /// Its child pairs.
    pub count: u32,
    /// `COMPOUND_RANGE_*`.
    pub flags: u32,
    /// The two bodies' sizes summed, length units (times
    /// [`crate::constants::CONTACT_REDUCTION_TOLERANCE`]: the merge's tie tolerance).
    pub size: f32,
    /// With [`COMPOUND_RANGE_SWAPPED`]: the pose of the lower body (the run order's A, whose
    /// frame the merged manifold is in) in the given A's frame, rotation `[x, y, z, w]`.
    pub lower_rotation: [f32; 4],
    /// With [`COMPOUND_RANGE_SWAPPED`]: that pose's translation, length units.
    pub lower_translation: [f32; 3],
    /// Padding to a 16-byte multiple.
    pub _pad: u32,
}

/// Bytes before the first [`GpuCompoundRange`] in the range table: the total of child pairs
/// (a `u32`) and padding (compound_expand.wgsl `CompoundRangeTable`).
pub const COMPOUND_RANGES_HEAD: u64 = 16;

/// [`GpuMeshPairRange::flags`] (beside the `COMPOUND_RANGE_*` flags, which it shares): the mesh
/// is the pair's B, so the merged manifold moves to the body's frame with its normal negated
/// (as [`crate::Manifold::swap_keeping_ids`]); must match geometry.wgsl.
pub const MESH_RANGE_SWAPPED: u32 = 16;
/// [`GpuMeshPairRange::flags`]: the body is a compound (its items carry their child; the merge
/// names ids [`crate::trimesh::compound_mesh_feature_id`]); must match geometry.wgsl.
pub const MESH_RANGE_COMPOUND: u32 = 32;

/// One caller pair of the mesh pass (written by the midphase, `mesh_expand.wgsl`): its work
/// items `[first, first + count)` in BVH order, and the body posed in the mesh's frame; also,
/// ahead of the pairs' ranges, one compound part (its pose in its compound's frame and shape,
/// counts and flags zero); must match geometry.wgsl `GpuMeshPairRange`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuMeshPairRange {
    /// Its first work item.
    pub first: u32,
    /// Its work items (the triangles its box overlaps; the true count on overflow).
    pub count: u32,
    /// `COMPOUND_RANGE_*` and [`MESH_RANGE_SWAPPED`].
    pub flags: u32,
    /// The body's [`Shape::size`], length units (the merge's tie tolerance times
    /// [`crate::constants::CONTACT_REDUCTION_TOLERANCE`]).
    pub size: f32,
    /// The body's rotation in the mesh's frame, unit quaternion xyzw.
    pub rotation: [f32; 4],
    /// The body's translation in the mesh's frame, length units.
    pub translation: [f32; 3],
    /// The body's shape index.
    pub shape: u32,
}

/// One work item of the mesh pass: a (caller pair, triangle) whose boxes overlap, written by
/// the midphase; the per-triangle kernel adds the triangle's sub-contact (mesh frame); must
/// match geometry.wgsl `GpuMeshItem`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuMeshItem {
    /// The triangle's corners, mesh frame (w 0), length units.
    pub corners: [[f32; 4]; 3],
    /// Sub-contact: unit normal from the mesh toward the body.
    pub normal: [f32; 3],
    /// Sub-contact: separation, length units (negative = overlapping).
    pub separation: f32,
    /// The caller pair (its index in the call).
    pub pair: u32,
    /// The triangle's index in the triangle table.
    pub triangle: u32,
    /// The triangle's index in its mesh (the one feature ids name).
    pub local_triangle: u32,
    /// Sub-contact: `MANIFOLD_CLIPPED` (a contact), `MANIFOLD_SEPARATED` (none) or
    /// `MANIFOLD_HOST` (the pair is the host's).
    pub status: u32,
    /// Sub-contact: its first point in the point table.
    pub first_point: u32,
    /// Sub-contact: its points.
    pub count: u32,
    /// The body's shape index (a compound's: the child's).
    pub shape: u32,
    /// The compound's child (its index in the compound; 0 for a convex body).
    pub child: u32,
    /// The body's (or child's) rotation in the mesh's frame, unit quaternion xyzw.
    pub rotation: [f32; 4],
    /// The body's (or child's) translation in the mesh's frame, length units.
    pub translation: [f32; 3],
    /// Padding.
    pub _pad0: u32,
}

/// One point of a triangle's sub-contact; must match geometry.wgsl `GpuMeshPoint`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuMeshPoint {
    /// Position xyz (mesh frame, length units) and depth w (positive = penetrating).
    pub point: [f32; 4],
    /// The per-triangle feature id (mesh = A), before `mesh_feature_id` names the triangle.
    pub id: u32,
    /// Padding.
    pub _pad0: u32,
    /// Padding.
    pub _pad1: u32,
    /// Padding.
    pub _pad2: u32,
}

/// Bytes before the first entry of the mesh pass's range and point tables: the entries
/// reserved (a `u32`, atomic), the range table's compound part records (a `u32`: its caller
/// pairs' ranges follow them) and padding (mesh_expand.wgsl `MeshRangeTable`,
/// mesh_triangle.wgsl `MeshPointTable`).
pub const MESH_TABLE_HEAD: u64 = 16;

const _: () = assert!(size_of::<GpuShape>() == 64);
const _: () = assert!(size_of::<GpuMeshPairRange>() == 48);
const _: () = assert!(size_of::<GpuMeshItem>() == 128);
const _: () = assert!(size_of::<GpuMeshPoint>() == 32);
const _: () = assert!(size_of::<GpuCompound>() == 16);
const _: () = assert!(size_of::<GpuCompoundPart>() == 64);
const _: () = assert!(size_of::<GpuCompoundRange>() == 48);
const _: () = assert!(size_of::<GpuEdge>() == 16);

/// Every shape and its hull geometry in the flat arrays the shader reads (built once per
/// narrowphase).
#[derive(Clone, Debug, Default)]
pub struct HullTables {
    /// Vertex positions, xyz (w = 1).
    pub vertices: Vec<[f32; 4]>,
    /// Face planes: normal xyz, offset w.
    pub planes: Vec<[f32; 4]>,
    /// Edges with hull-local indices.
    pub edges: Vec<GpuEdge>,
    /// One per shape, in the narrowphase's shape order.
    pub shapes: Vec<GpuShape>,
    /// Per face (global index, as `planes`): `[first, count]` into `loops`.
    pub face_ranges: Vec<[u32; 2]>,
    /// Every face's vertex loop (hull-local vertex indices, counter-clockwise from outside).
    pub loops: Vec<u32>,
    /// One per shape given (not per child): its parts.
    pub compounds: Vec<GpuCompound>,
    /// The parts [`Self::compounds`] index.
    pub parts: Vec<GpuCompoundPart>,
    /// Every triangle mesh's vertices, triangles and BVH (the ray caster's form).
    pub meshes: MeshTables,
    /// Every mesh triangle's contact data, indexed as `meshes.triangles`.
    pub mesh_contacts: Vec<GpuMeshTriangleContact>,
}

impl HullTables {
    /// The tables of `shapes`, in order (boxes with their hull geometry), then every compound's
    /// children as shapes of their own, and each shape's parts.
    pub fn new(shapes: &[Shape]) -> Self {
        let mut tables = HullTables::default();
        for shape in shapes {
            tables.push(shape);
        }
        for (index, shape) in shapes.iter().enumerate() {
            let mut record = GpuCompound {
                first_part: tables.parts.len() as u32,
                part_count: 1,
                flags: 0,
                size: shape.size(),
            };
            match shape {
                Shape::Compound(compound) => {
                    record.flags = COMPOUND_IS_COMPOUND;
                    record.part_count = compound.children().len() as u32;
                    let shape = &mut tables.shapes[index];
                    (shape.first_face, shape.face_count) = (record.first_part, record.part_count);
                    for (i, child) in compound.children().iter().enumerate() {
                        let part = part(tables.shapes.len() as u32, child.pose, compound.child_aabb(i));
                        tables.parts.push(part);
                        tables.push(&child.shape);
                    }
                }
                Shape::TriMesh(_) => {
                    record.flags = COMPOUND_MESH;
                    record.part_count = 0;
                }
                Shape::HalfSpace(_) => {
                    record.flags = COMPOUND_HALF_SPACE;
                    tables
                        .parts
                        .push(part(index as u32, Isometry::IDENTITY, Default::default()));
                }
                _ => {
                    if matches!(shape, Shape::Sphere(_)) {
                        record.flags = COMPOUND_SPHERE;
                    }
                    let bounds = world_aabb(shape, &Pose::IDENTITY);
                    let part = part(index as u32, Isometry::IDENTITY, (bounds.min, bounds.max));
                    tables.parts.push(part);
                }
            }
            tables.compounds.push(record);
        }
        tables
    }

    /// Appends `shape` (and its hull geometry, for a hull or a box).
    fn push(&mut self, shape: &Shape) {
        let (kind, params) = match shape {
            Shape::Hull(_) | Shape::Cylinder(_) => (SHAPE_HULL, [0.0; 4]),
            Shape::Cuboid(c) => (SHAPE_BOX, c.half_extents().extend(0.0).to_array()),
            Shape::Sphere(s) => (SHAPE_SPHERE, [s.radius, 0.0, 0.0, 0.0]),
            Shape::Capsule(c) => (SHAPE_CAPSULE, [c.radius, c.half_height, 0.0, 0.0]),
            Shape::HalfSpace(h) => (SHAPE_HALF_SPACE, h.normal.extend(h.offset).to_array()),
            Shape::TriMesh(_) => (SHAPE_TRIMESH, [0.0; 4]),
            Shape::Compound(_) => (SHAPE_COMPOUND, [0.0; 4]),
        };
        let mut record = GpuShape {
            radius: shape.size(),
            kind,
            params,
            ..GpuShape::default()
        };
        if let Shape::TriMesh(mesh) = shape {
            let range = self.meshes.push(mesh);
            MeshTables::push_contacts(mesh, range, &mut self.mesh_contacts);
            record.first_face = range.first_triangle;
            record.first_edge = range.root;
        }
        if let Some(hull) = shape.as_hull() {
            record.centroid = hull.centroid().to_array();
            record.inner_radius = hull.inner_radius();
            record.first_vertex = self.vertices.len() as u32;
            record.vertex_count = hull.vertices().len() as u32;
            record.first_face = self.planes.len() as u32;
            record.face_count = hull.planes().len() as u32;
            record.first_edge = self.edges.len() as u32;
            record.edge_count = hull.edges().len() as u32;
            self.push_geometry(hull);
        }
        self.shapes.push(record);
    }

    /// Appends a hull's vertices, planes, edges and face loops.
    fn push_geometry(&mut self, hull: &ConvexHull) {
        self.vertices
            .extend(hull.vertices().iter().map(|v| v.extend(1.0).to_array()));
        self.planes
            .extend(hull.planes().iter().map(|p| p.normal.extend(p.offset).to_array()));
        let lanes = hull.edge_lanes();
        self.edges
            .extend(hull.edges().iter().enumerate().map(|(i, e)| GpuEdge {
                v0: e.vertices[0],
                v1: e.vertices[1],
                faces: e.faces[0] | e.faces[1] << GpuEdge::FACE_BITS,
                stretch: lanes[i / 4].stretch[i % 4],
            }));
        for face in 0..hull.faces().len() {
            let face_loop = hull.face_loop(face);
            self.face_ranges
                .push([self.loops.len() as u32, face_loop.len() as u32]);
            self.loops.extend_from_slice(face_loop);
        }
    }

    /// True when a shape is a triangle mesh (the mesh pass has work).
    pub fn has_meshes(&self) -> bool {
        !self.meshes.triangles.is_empty()
    }

    /// True when a shape is a compound (the compound stage has work).
    pub fn has_compounds(&self) -> bool {
        self.compounds.iter().any(|c| c.flags & COMPOUND_IS_COMPOUND != 0)
    }

    /// The kernels' `face_loops` buffer (see geometry.wgsl): for face `g`, the first entry and
    /// length of its loop at `[2g]` and `[2g + 1]`, then every loop; `first` counts from the
    /// start of the buffer.
    pub fn face_loops(&self) -> Vec<u32> {
        let header = 2 * self.face_ranges.len() as u32;
        let mut out = Vec::with_capacity(header as usize + self.loops.len());
        for &[first, count] in &self.face_ranges {
            out.extend([header + first, count]);
        }
        out.extend_from_slice(&self.loops);
        out
    }
}

/// A part of shape `shape` at `pose` in its body's frame, with its box there.
fn part(shape: u32, pose: Isometry, (min, max): (glam::Vec3, glam::Vec3)) -> GpuCompoundPart {
    GpuCompoundPart {
        rotation: pose.rotation.to_array(),
        translation: pose.translation.to_array(),
        shape,
        box_min: min.to_array(),
        box_max: max.to_array(),
        ..GpuCompoundPart::default()
    }
}

#[cfg(test)]
mod tests {
    use glam::{Quat, Vec3};

    use super::*;
    use crate::shape::compound::{Compound, CompoundChild};
    use crate::shape::{Cuboid, HalfSpace, Sphere};

    #[test]
    fn edges_carry_their_hulls_faces_and_arc_stretch() {
        let shapes = [
            Shape::Hull(ConvexHull::prism(0.5, 1.0, 7)),
            Shape::Cuboid(Cuboid::new(Vec3::new(1.0, 0.5, 0.25)).unwrap()),
        ];
        let tables = HullTables::new(&shapes);
        for (record, shape) in tables.shapes.iter().zip(&shapes) {
            let hull = shape.as_hull().unwrap();
            let first = record.first_edge as usize;
            for (i, edge) in hull.edges().iter().enumerate() {
                let gpu = tables.edges[first + i];
                assert_eq!([gpu.v0, gpu.v1], edge.vertices);
                assert_eq!(gpu.face_pair(), edge.faces);
                let [n0, n1] = edge.faces.map(|f| hull.planes()[f as usize].normal);
                assert_eq!(gpu.stretch, crate::hull::arc_stretch(n0, n1));
            }
        }
    }

    #[test]
    fn hulls_of_more_faces_than_an_edge_can_name_are_refused_by_their_path() {
        let sphere = Shape::Sphere(Sphere::new(0.5).unwrap());
        // 65,533 sides: 65,535 faces, the most a face index of 16 bits names; one more is too many.
        let most = Shape::Hull(ConvexHull::prism(0.5, 1.0, 65_533));
        let over = Shape::Hull(ConvexHull::prism(0.5, 1.0, 65_534));
        assert!(check_face_counts(&[sphere.clone(), most]).is_ok());
        let err = check_face_counts(&[sphere.clone(), over.clone()]).unwrap_err();
        assert_eq!(err.path, "shapes[1]");
        let compound = Compound::new(vec![
            CompoundChild {
                shape: sphere.clone(),
                pose: Isometry::IDENTITY,
            },
            CompoundChild {
                shape: over,
                pose: Isometry::new(Vec3::X, Quat::IDENTITY),
            },
        ])
        .unwrap();
        let err = check_face_counts(&[sphere, Shape::from(compound)]).unwrap_err();
        assert_eq!(err.path, "shapes[1].children[1]");
        assert!(err.message.contains("65535"), "{}", err.message);
    }

    #[test]
    fn compound_children_follow_the_shapes_and_every_shape_has_its_parts() {
        let sphere = Shape::Sphere(Sphere::new(0.5).unwrap());
        let cuboid = Shape::Cuboid(Cuboid::new(Vec3::new(1.0, 0.5, 0.25)).unwrap());
        let pose = Isometry::new(Vec3::new(2.0, 0.0, 0.0), Quat::from_rotation_z(0.5));
        let compound = Compound::new(vec![
            CompoundChild {
                shape: cuboid.clone(),
                pose,
            },
            CompoundChild {
                shape: sphere.clone(),
                pose: Isometry::IDENTITY,
            },
        ])
        .unwrap();
        let ground = Shape::HalfSpace(HalfSpace::new(Vec3::Y, 0.0).unwrap());
        let shapes = [sphere, Shape::from(compound.clone()), ground];
        let tables = HullTables::new(&shapes);
        // The three shapes, then the compound's two children.
        assert_eq!(tables.shapes.len(), 5);
        assert_eq!(
            [tables.shapes[3].kind, tables.shapes[4].kind],
            [SHAPE_BOX, SHAPE_SPHERE]
        );
        assert_eq!(tables.shapes[1].kind, SHAPE_COMPOUND);
        assert!(tables.has_compounds());
        // One record per shape given: a single part for the sphere and the half-space.
        let flags: Vec<u32> = tables.compounds.iter().map(|c| c.flags).collect();
        assert_eq!(
            flags,
            [COMPOUND_SPHERE, COMPOUND_IS_COMPOUND, COMPOUND_HALF_SPACE]
        );
        let counts: Vec<u32> = tables.compounds.iter().map(|c| c.part_count).collect();
        assert_eq!(counts, [1, 2, 1]);
        let part = |shape: usize, i: u32| tables.parts[(tables.compounds[shape].first_part + i) as usize];
        assert_eq!(part(0, 0).shape, 0);
        assert_eq!(part(0, 0).box_max, [0.5; 3]);
        let child = part(1, 0);
        assert_eq!(child.shape, 3);
        assert_eq!(child.translation, pose.translation.to_array());
        assert_eq!(child.rotation, pose.rotation.to_array());
        let (min, max) = compound.child_aabb(0);
        assert_eq!((child.box_min, child.box_max), (min.to_array(), max.to_array()));
        assert_eq!(part(1, 1).shape, 4);
        assert_eq!(part(2, 0).shape, 2);
        assert_eq!(tables.compounds[1].size, compound.size());
    }
}

//! Not API: what hullsat's own tests and benchmarks reach inside the crate for, and may change
//! in any release. The reference (exhaustive) SAT queries the bounded ones are checked against,
//! the SAT bounds' slack, and the structs only the kernels read, checked against their WGSL
//! twins.

pub use crate::narrowphase::gpu::kernel_layout::{
    CLIP_GROUP_LANES, CLIP_GROUP_PAIRS, COMPOUND_HALF_SPACE, COMPOUND_IS_COMPOUND, COMPOUND_MESH,
    COMPOUND_RANGE_HOST, COMPOUND_RANGE_LISTED, COMPOUND_RANGE_OVERFLOW, COMPOUND_RANGE_SINGLE,
    COMPOUND_RANGE_SWAPPED, COMPOUND_RANGES_HEAD, COMPOUND_SPHERE, COOP_EDGE_PAIRS, GpuCompound,
    GpuCompoundPart, GpuCompoundRange, GpuEdge, GpuMeshItem, GpuMeshPairRange, GpuMeshPoint, GpuParams,
    GpuResidentSetup, GpuShape, HullTables, MESH_RANGE_COMPOUND, MESH_RANGE_SWAPPED, MESH_TABLE_HEAD,
    PAIR_PER_WORKGROUP_PAIRS, PAIR_PER_WORKGROUP_SPLIT_SHARE, PARAMS_STRIDE, SPLIT_EDGE_PAIRS,
    WORKGROUP_SIZE,
};
pub use crate::narrowphase::gpu::kernels::SatMapping;
pub use crate::query::bounds::SAT_BOUND_SLACK;
pub use crate::query::sat::exhaustive::{
    query_edges_exhaustive, query_faces_exhaustive, query_hulls_exhaustive,
};

/// The SAT kernel's mapping that `gpu` takes for a host call of `pairs` of `bodies` (one round).
pub fn sat_mapping(gpu: &crate::GpuNarrowphase, bodies: &[crate::Body], pairs: &[[u32; 2]]) -> SatMapping {
    gpu.sat_mapping(bodies, pairs)
}

/// The indirect dispatch arguments (`wgpu::util::DispatchIndirectArgs`, 12 bytes each) of
/// `gpu`'s last `encode_resident`, a buffer with COPY_SRC; `None` before the first. Per
/// dispatch chunk (`chunks` of them), the caller pairs' one pair per invocation (the clip
/// kernel's when the shapes can form no split pair); then, when they can, the SAT's
/// one-pair-per-invocation set from index `chunks` (the clip's too) and its
/// one-workgroup-per-pair set from `2 * chunks`, one of the two empty, and the clip's per-group
/// set (clip.wgsl `main_pair_per_group`) from `3 * chunks`, written only when the SAT takes one
/// workgroup per pair.
pub fn resident_dispatch_args(gpu: &crate::GpuNarrowphase) -> Option<wgpu::Buffer> {
    gpu.resident_dispatch_args().cloned()
}

/// The SAT results (`GpuSatResult`, 48 bytes each) of `gpu`'s last `encode_resident` by slot, a
/// buffer with COPY_SRC; `None` before the first. Chunk k's slots start at result `k * chunk`;
/// slot s's `pair` names the pair it ran (with cost ordering, a permutation of each chunk's).
pub fn resident_sat_results(gpu: &crate::GpuNarrowphase) -> Option<wgpu::Buffer> {
    gpu.resident_sat_results().cloned()
}

/// The SAT results (`GpuSatResult`, 48 bytes each) of `gpu`'s last host round (`collide`,
/// `collide_into`, `sat`, `encode`) by slot, a buffer with COPY_SRC; as
/// [`resident_sat_results`] (with cost ordering under the clip kernel, each chunk's slots name
/// a permutation of its pairs).
pub fn call_sat_results(gpu: &crate::GpuNarrowphase) -> wgpu::Buffer {
    gpu.call_sat_results().clone()
}

pub use crate::narrowphase::gpu::order::{
    CENTRE_LINE_VERTICES, COST_CLASSES, EDGE_COUNT_CLAMP, GAP_BUCKETS, GpuOrderArgs, GpuOrderCounters,
    HALF_SPACE_EDGE_SHIFT, HULL_KEY_TOP_LOG2, KEY_BOX_BOX, KEY_CHEAP, KEY_HULL_PRIMITIVE, KEY_SMALL_HULLS,
    ORDER_KEYS, ORDER_WGSL, PAIRS_PER_INVOCATION, PRIMITIVE_KEY_TOP_LOG2, cost_class, gap_bucket,
    has_gap_buckets, order_key,
};

pub use crate::narrowphase::gpu::finish::{finish_listed_into, gpu_list_from};

pub use crate::narrowphase::gpu::list_order::{
    GpuListOrderParams, LIST_ORDER_WGSL, LIST_ORDER_WORKGROUP, ListOrderProbe,
};

pub use crate::bvh::gpu::{
    BVH_BUILD_WGSL, BVH_BUILD_WORKGROUP_SIZE, CYLINDER_RIM_SLACK, GpuBvhParams, GpuBvhProbe, GpuBvhShape,
    HEAP_LEAF_SIZE, ProbedBvh, SHAPE_FLAG_CYLINDER, SHAPE_FLAG_STATIC, SPLIT_PADDING, TreeLayout,
    UNBOUNDED_CODE, UNBOUNDED_EXTENT,
};

pub use crate::gpu::radix_sort::{
    GpuRadixParams, GpuRadixProbe, GpuRadixState, MAX_SCAN_LEVELS, RADIX_BINS, RADIX_BITS, RADIX_SORT_WGSL,
    RADIX_TILE, RADIX_WORKGROUP_SIZE, SCAN_BLOCK,
};

/// The CPU batch's routine for one ray (traverse `bvh`, cast exactly at each candidate): every
/// body `ray` enters, nearest first, or with `closest` the nearest. `bodies` checked, `bvh` over
/// them (any hierarchy in [`crate::raycast::Bvh`]'s layout, such as one built on the GPU).
pub fn cast_through_bvh(
    shapes: &[crate::Shape],
    bodies: &[crate::Body],
    bvh: &crate::raycast::Bvh,
    ray: &crate::Ray,
    closest: bool,
) -> Vec<crate::RayHit> {
    crate::raycast::cast_one(shapes, bodies, bvh, ray, closest)
}

/// Barycentric weights below this (dimensionless) put a closest point on a triangle's edge or
/// corner (the mesh routines' sphere and capsule contacts; mirrored in triangle_contact.wgsl).
pub const FEATURE_WEIGHT_TOLERANCE: f32 = crate::contact::FEATURE_WEIGHT_TOLERANCE;

/// One triangle's contact before the mesh merge, as `collide_trimesh_shape`'s step 2 computes
/// it: triangle `triangle` of `mesh` (body A, the mesh's frame) against the convex `shape` posed
/// at `b_in_a` (B's pose in A's frame). Its unit normal from the mesh toward B, separation
/// (length units) and points with their per-triangle ids, A's frame; `None` beyond `margin`.
/// The oracle of the WGSL twins (shaders/narrowphase/triangle_contact.wgsl) in their tests.
pub fn collide_mesh_triangle(
    mesh: &crate::trimesh::TriMesh,
    triangle: u32,
    shape: &crate::Shape,
    b_in_a: &crate::Isometry,
    margin: f32,
) -> Option<(glam::Vec3, f32, Vec<crate::ContactPoint>)> {
    use crate::Shape;
    use crate::contact::{collide_triangle_capsule, collide_triangle_hull, collide_triangle_sphere};
    let tolerance = crate::constants::AXIS_PREFERENCE_TOLERANCE * shape.size();
    let parts = |m: crate::Manifold| (m.normal, m.separation, m.points().to_vec());
    match shape {
        Shape::Sphere(s) => {
            collide_triangle_sphere(mesh, triangle, b_in_a.translation, s.radius, margin).map(parts)
        }
        Shape::Capsule(c) => {
            let segment = c.segment().map(|p| b_in_a.transform_point(p));
            collide_triangle_capsule(mesh, triangle, segment, c.radius, margin, tolerance).map(parts)
        }
        _ => {
            let hull = shape.as_hull()?;
            let mut posed = crate::query::sat_triangle::PosedHull::default();
            posed.pose(hull, b_in_a);
            let mut points = Vec::new();
            collide_triangle_hull(
                mesh,
                triangle,
                hull,
                &mut posed,
                b_in_a,
                margin,
                tolerance,
                &mut points,
            )
            .map(|(normal, separation)| (normal, separation, points))
        }
    }
}

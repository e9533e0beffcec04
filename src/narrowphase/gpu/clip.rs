//! The clip kernel's host side (`shaders/narrowphase/clip.wgsl`): its pipeline, compiled once per
//! device ([`ClipKernel`], held by the context), and the conversion of its [`GpuManifold`]s
//! (A's frame) into world-space [`Manifold`]s with every index and number checked.
//!
//! The kernel runs after the SAT kernel on the same chunk, reading its results; its bind groups
//! and output buffer live with the SAT call buffers (`sat::SatBuffers`).

use super::GpuError;
use super::layout::GpuManifold;
use super::pipeline::{bind_group_layout, compute_pipeline, storage};
use crate::hull::ConvexHull;
use crate::manifold::{ContactPoint, FeatureId, Manifold};
use crate::pose::Pose;
use crate::shape::Shape;

/// The WGSL source of the clip kernel: the shared declarations, the kernel (hull pairs), GJK
/// (hull pairs apart within the margin, spheres and capsules against hulls) and the closed
/// forms of the pairs with a sphere, capsule or half-space.
pub const CLIP_WGSL: &str = concat!(
    include_str!("../../../shaders/common/quat.wgsl"),
    include_str!("../../../shaders/common/layout.wgsl"),
    include_str!("../../../shaders/common/geometry.wgsl"),
    include_str!("../../../shaders/narrowphase/clip.wgsl"),
    include_str!("../../../shaders/narrowphase/gjk.wgsl"),
    include_str!("../../../shaders/narrowphase/primitives.wgsl")
);

/// Storage buffers the clip kernel binds in one shader stage (5 geometry, bodies, pairs, SAT
/// results, manifolds): more than wgpu's default limit of 8, so devices must allow it.
pub(crate) const CLIP_STORAGE_BUFFERS: u32 = 9;

/// The compiled clip pipeline and its per-call bind group layout (one per device).
pub(crate) struct ClipKernel {
    pub pipeline: wgpu::ComputePipeline,
    pub call_layout: wgpu::BindGroupLayout,
}

impl ClipKernel {
    /// Compiles the kernel on `device` (inside the caller's error scopes); group 0 is the SAT
    /// kernel's geometry layout, so both kernels share one geometry bind group.
    pub fn new(device: &wgpu::Device, geometry_layout: &wgpu::BindGroupLayout) -> Self {
        let call_layout = bind_group_layout(
            device,
            "clip call",
            &[
                storage(true),
                storage(true),
                storage(true),
                wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Uniform,
                    has_dynamic_offset: true,
                    min_binding_size: wgpu::BufferSize::new(size_of::<super::layout::GpuParams>() as u64),
                },
                storage(false),
            ],
        );
        let pipeline = compute_pipeline(
            device,
            "clip",
            "clip.wgsl",
            CLIP_WGSL,
            &[geometry_layout, &call_layout],
        );
        ClipKernel {
            pipeline,
            call_layout,
        }
    }
}

/// The world-space manifold of a pair the kernel finished ([`super::layout::MANIFOLD_CLIPPED`]):
/// normal and points moved from A's frame by `pose_a`, after checking the point count, every
/// feature id against the shapes' sizes, and that every number is finite.
pub(crate) fn manifold_from_gpu(
    raw: &GpuManifold,
    a: &Shape,
    b: &Shape,
    pose_a: &Pose,
    pair: usize,
) -> Result<Manifold, GpuError> {
    let bad = |what: String| GpuError::BadResult { pair, what };
    let count = raw.count as usize;
    if !(1..=raw.ids.len()).contains(&count) {
        return Err(bad(format!("{count} contact points")));
    }
    let finite = raw.normal.iter().chain(&[raw.separation]).all(|x| x.is_finite())
        && raw.points[..count].iter().flatten().all(|x| x.is_finite());
    if !finite {
        return Err(bad("a non-finite normal, separation or point".into()));
    }
    // Built in A's frame and moved to the world as the CPU path does (`Manifold::to_world`), so
    // both give the same world positions.
    let mut manifold = Manifold::new(raw.normal.into(), raw.separation);
    for (point, &id) in raw.points[..count].iter().zip(&raw.ids) {
        let id = FeatureId(id);
        check_feature(id, a, b).map_err(|what| bad(format!("feature id {:#010x}: {what}", id.0)))?;
        manifold.push(ContactPoint {
            position: glam::Vec3::new(point[0], point[1], point[2]).as_dvec3(),
            depth: point[3],
            id,
        });
    }
    Ok(manifold.to_world(pose_a))
}

/// Most features a kind-`OTHER` id field may name on `shape` (see [`FeatureId`] and the
/// routines in [`crate::contact`]): a hull's faces or vertices, a capsule's two segment ends
/// (or clipped ends), the single feature of a sphere or half-space.
fn other_feature_limit(shape: &Shape) -> usize {
    match shape {
        Shape::Capsule(_) => 2,
        Shape::Sphere(_) | Shape::HalfSpace(_) => 1,
        _ => shape
            .as_hull()
            .map_or(1, |h| h.planes().len().max(h.vertices().len())),
    }
}

/// `Ok` when the fields of a feature id exist on the shapes (see [`FeatureId`]): a face
/// contact's high field is a face or vertex of the body it names, its low field a vertex of the
/// other; an edge pair names an edge of each (both kinds only between hulls); an `OTHER` id
/// names features within [`other_feature_limit`] of A (high) and B (low).
fn check_feature(id: FeatureId, a: &Shape, b: &Shape) -> Result<(), String> {
    let (high, low) = (id.high() as usize, id.low() as usize);
    let face_or_vertex = |h: &ConvexHull| h.planes().len().max(h.vertices().len());
    let (high_limit, low_limit) = match (id.kind(), a.as_hull(), b.as_hull()) {
        (FeatureId::FACE_A, Some(a), Some(b)) => (face_or_vertex(a), b.vertices().len()),
        (FeatureId::FACE_B, Some(a), Some(b)) => (face_or_vertex(b), a.vertices().len()),
        (FeatureId::EDGE_PAIR, Some(a), Some(b)) => (a.edges().len(), b.edges().len()),
        (FeatureId::OTHER, _, _) => (other_feature_limit(a), other_feature_limit(b)),
        (kind, _, _) => return Err(format!("kind {kind} on a pair that is not hull against hull")),
    };
    if high >= high_limit || low >= low_limit {
        return Err(format!(
            "fields {high} and {low} exceed the shapes' {high_limit} and {low_limit}"
        ));
    }
    Ok(())
}

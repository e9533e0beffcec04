//! The structs and constants shared with `shaders/raycast/raycast.wgsl`: `#[repr(C)]` +
//! [`bytemuck::Pod`], sizes asserted here, offsets checked against the WGSL twins by
//! `tests/raycast_layout.rs`. Each `[f32; 3]` is followed by a 4-byte field that fills the
//! WGSL `vec3<f32>` slot. The per-call [`GpuRayParams`] derives [`encase::ShaderType`] and is
//! written with encase. ([`super::BvhNode`] lives with the BVH.)

use bytemuck::{Pod, Zeroable};
use encase::ShaderType;

pub use crate::gpu::layout::GpuBody;
use crate::gpu::layout::{WgslVec3, split_translation};

use super::ray::Ray;
use crate::scene::InputError;
use crate::shape::Shape;

/// Invocations per workgroup (one ray each); must match `WORKGROUP_SIZE` in raycast.wgsl.
pub const WORKGROUP_SIZE: u32 = 64;
/// Hit slots per ray in the result buffer; must match nothing in WGSL (the kernel reads
/// [`GpuRayParams::hit_slots`]). A ray entering more bodies is recomputed on the CPU.
pub const GPU_HIT_SLOTS: u32 = 8;
/// [`GpuRayShape::kind`] of a hull; must match `SHAPE_HULL` in raycast.wgsl.
pub const SHAPE_HULL: u32 = 0;
/// [`GpuRayShape::kind`] of a box; must match `SHAPE_BOX` in raycast.wgsl.
pub const SHAPE_BOX: u32 = 1;
/// [`GpuRayShape::kind`] of a sphere; must match `SHAPE_SPHERE` in raycast.wgsl.
pub const SHAPE_SPHERE: u32 = 2;
/// [`GpuRayShape::kind`] of a capsule; must match `SHAPE_CAPSULE` in raycast.wgsl.
pub const SHAPE_CAPSULE: u32 = 3;
/// [`GpuRayShape::kind`] of a half-space; must match `SHAPE_HALF_SPACE` in raycast.wgsl.
pub const SHAPE_HALF_SPACE: u32 = 4;
/// [`GpuRayShape::kind`] of a cylinder (cast exactly, not as its prism); must match
/// `SHAPE_CYLINDER` in raycast.wgsl.
pub const SHAPE_CYLINDER: u32 = 5;
/// [`GpuRayCount::flags`] bit: the driver cut the kernel's loops short (llvmpipe's loop budget,
/// see `crate::gpu`), so the host recomputes the ray on the CPU; must match `INCOMPLETE_BIT` in
/// raycast.wgsl.
pub const INCOMPLETE_BIT: u32 = 1;
/// [`GpuRayCount::flags`] bit: the traversal stack was full (never for BVHs built by
/// [`super::Bvh::build`]); must match `STACK_OVERFLOW_BIT` in raycast.wgsl.
pub const STACK_OVERFLOW_BIT: u32 = 2;

/// A ray, world space; must match `GpuRay` in raycast.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuRay {
    /// Origin, high part ([`split_translation`]), world, length units.
    pub origin_hi: [f32; 3],
    /// Largest distance that counts ([`f32::MAX`] when unbounded), length units.
    pub max_distance: f32,
    /// Origin, low part.
    pub origin_lo: [f32; 3],
    /// Padding.
    pub _pad0: u32,
    /// Unit direction, world.
    pub direction: [f32; 3],
    /// Padding.
    pub _pad1: u32,
}

impl GpuRay {
    /// The GPU form of `ray`.
    pub fn from_ray(ray: &Ray) -> GpuRay {
        let (origin_hi, origin_lo) = split_translation(ray.origin());
        GpuRay {
            origin_hi,
            max_distance: ray.max_distance().min(f32::MAX),
            origin_lo,
            _pad0: 0,
            direction: ray.direction().to_array(),
            _pad1: 0,
        }
    }
}

/// A shape; must match `GpuRayShape` in raycast.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuRayShape {
    /// Box: half extents xyz. Sphere: radius in x. Capsule and cylinder: half height x, radius y.
    /// Half-space: unit outward normal xyz, offset w. Hull: unused.
    pub params: [f32; 4],
    /// `SHAPE_*`.
    pub kind: u32,
    /// Hull: index of its first face plane in the plane buffer.
    pub first_plane: u32,
    /// Hull: number of face planes.
    pub plane_count: u32,
    /// Padding.
    pub _pad: u32,
}

/// Shapes and hull planes in the flat arrays the kernel reads.
#[derive(Clone, Debug, Default)]
pub struct ShapeTables {
    /// One entry per shape, in shape order.
    pub shapes: Vec<GpuRayShape>,
    /// Hull face planes: unit outward normal xyz, offset w (hull frame).
    pub planes: Vec<[f32; 4]>,
}

impl ShapeTables {
    /// The tables of `shapes`; an [`InputError`] at `shapes[i]` for a triangle mesh or a
    /// compound, which the kernel does not cast against (the CPU ray caster does).
    pub fn new(shapes: &[Shape]) -> Result<ShapeTables, InputError> {
        let mut tables = ShapeTables::default();
        for (i, shape) in shapes.iter().enumerate() {
            let (kind, params) = match shape {
                Shape::Hull(_) => (SHAPE_HULL, [0.0; 4]),
                Shape::Cuboid(c) => (SHAPE_BOX, c.half_extents().extend(0.0).to_array()),
                Shape::Sphere(s) => (SHAPE_SPHERE, [s.radius, 0.0, 0.0, 0.0]),
                Shape::Capsule(c) => (SHAPE_CAPSULE, [c.half_height, c.radius, 0.0, 0.0]),
                Shape::Cylinder(c) => (SHAPE_CYLINDER, [c.half_height(), c.radius(), 0.0, 0.0]),
                Shape::HalfSpace(h) => (SHAPE_HALF_SPACE, h.normal.extend(h.offset).to_array()),
                Shape::TriMesh(_) => {
                    return Err(InputError::new(
                        format!("shapes[{i}]"),
                        "the GPU ray caster does not cast against triangle meshes (CpuRaycaster does)",
                    ));
                }
                Shape::Compound(_) => {
                    return Err(InputError::new(
                        format!("shapes[{i}]"),
                        "the GPU ray caster does not cast against compounds (CpuRaycaster does)",
                    ));
                }
            };
            let first_plane = tables.planes.len() as u32;
            if let Shape::Hull(hull) = shape {
                tables
                    .planes
                    .extend(hull.planes().iter().map(|p| p.normal.extend(p.offset).to_array()));
            }
            tables.shapes.push(GpuRayShape {
                params,
                kind,
                first_plane,
                plane_count: tables.planes.len() as u32 - first_plane,
                _pad: 0,
            });
        }
        Ok(tables)
    }
}

/// One hit slot, written by the kernel; must match `GpuRayHit` in raycast.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuRayHit {
    /// Outward unit normal at the entry point, world space.
    pub normal: [f32; 3],
    /// Distance along the unit direction, length units.
    pub distance: f32,
    /// Index of the body.
    pub body: u32,
    /// Padding.
    pub _pad0: u32,
    /// Padding.
    pub _pad1: u32,
    /// Padding.
    pub _pad2: u32,
}

/// How many bodies a ray entered, written by the kernel; must match `GpuRayCount` in
/// raycast.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct GpuRayCount {
    /// Bodies entered (may exceed the slots; the nearest [`GpuRayParams::hit_slots`] are kept).
    pub hits: u32,
    /// [`INCOMPLETE_BIT`] and [`STACK_OVERFLOW_BIT`].
    pub flags: u32,
}

/// Per-call parameters (uniform, written with encase); must match `GpuRayParams` in raycast.wgsl.
#[derive(Clone, Copy, Debug, Default, PartialEq, ShaderType)]
pub struct GpuRayParams {
    /// World position of the BVH frame's origin, high part.
    pub bvh_origin_hi: WgslVec3,
    /// Number of unbounded bodies (half-spaces) every ray tests.
    pub unbounded_count: u32,
    /// World position of the BVH frame's origin, low part.
    pub bvh_origin_lo: WgslVec3,
    /// Hit slots per ray (1 for closest-hit casts).
    pub hit_slots: u32,
    /// 1: keep only the nearest hit and prune the traversal with it; 0: every hit.
    pub closest: u32,
    /// Number of BVH nodes (0 when no body is bounded).
    pub node_count: u32,
    /// Index of the first unbounded body in the body list buffer (after the BVH's leaf bodies).
    pub unbounded_first: u32,
}

const _: () = assert!(size_of::<GpuRay>() == 48);
const _: () = assert!(size_of::<GpuRayShape>() == 32);
const _: () = assert!(size_of::<GpuRayHit>() == 32);
const _: () = assert!(size_of::<GpuRayCount>() == 8);

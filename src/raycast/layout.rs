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
pub use crate::gpu::mesh_layout::{GpuMeshRange, MeshTables};
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
/// [`GpuRayShape::kind`] of a triangle mesh (its tables in [`MeshTables`]); must match
/// `SHAPE_TRIMESH` in raycast.wgsl.
pub const SHAPE_TRIMESH: u32 = 6;
/// [`GpuRayShape::kind`] of a compound (its children in [`ShapeTables::children`]); must match
/// `SHAPE_COMPOUND` in raycast.wgsl.
pub const SHAPE_COMPOUND: u32 = 7;
/// Storage buffers the kernel binds in one shader stage when the shapes include a triangle mesh
/// or a compound (2 shape tables, 4 mesh and compound tables, 6 per call): more than wgpu's
/// default limit of 8, so such a ray caster needs a device that allows it.
pub const COMPLEX_STORAGE_BUFFERS: u32 = 12;
/// [`GpuRayCount::flags`] bit: the driver cut the kernel's loops short (llvmpipe's loop budget,
/// see `crate::gpu`), so the host recomputes the ray on the CPU; must match `INCOMPLETE_BIT` in
/// raycast.wgsl.
pub const INCOMPLETE_BIT: u32 = 1;
/// [`GpuRayCount::flags`] bit: the traversal stack was full (never for the BVHs hullsat
/// builds, on the CPU or the GPU: see [`super::BVH_STACK_SIZE`]); must match
/// `STACK_OVERFLOW_BIT` in raycast.wgsl.
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
    /// Half-space: unit outward normal xyz, offset w. Hull: its padded bounding sphere, centre
    /// xyz and radius w ([`super::bounding_sphere`]). Mesh, compound: unused.
    pub params: [f32; 4],
    /// `SHAPE_*`.
    pub kind: u32,
    /// Hull: index of its first face plane in the plane table. Mesh: its root entry
    /// ([`GpuMeshRange::root`]). Compound: index of its first child in the child table.
    pub first: u32,
    /// Hull: number of face planes. Mesh: index of its first triangle in the triangle table.
    /// Compound: number of children.
    pub count: u32,
    /// Padding.
    pub _pad: u32,
}

/// A compound's child: where it lies in the compound's frame and its shape; must match
/// `GpuCompoundChild` in raycast_complex.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuCompoundChild {
    /// Unit rotation quaternion `[x, y, z, w]`, child to compound frame.
    pub rotation: [f32; 4],
    /// Position of the child's origin in the compound's frame, length units.
    pub translation: [f32; 3],
    /// Index of the child's shape in the shape table (after the caller's shapes).
    pub shape: u32,
}

/// Shapes, hull planes, meshes and compound children in the flat arrays the kernel reads.
#[derive(Clone, Debug, Default)]
pub struct ShapeTables {
    /// One entry per shape, in shape order, then one per compound child (compounds in shape
    /// order, children in order).
    pub shapes: Vec<GpuRayShape>,
    /// Hull face planes: unit outward normal xyz, offset w (hull frame).
    pub planes: Vec<[f32; 4]>,
    /// Every mesh's vertices, triangles and BVH nodes.
    pub meshes: MeshTables,
    /// Every compound's children, compounds in shape order.
    pub children: Vec<GpuCompoundChild>,
}

impl ShapeTables {
    /// The tables of `shapes`.
    pub fn new(shapes: &[Shape]) -> ShapeTables {
        let mut tables = ShapeTables::default();
        for shape in shapes {
            tables.push(shape);
        }
        // Children after the caller's shapes, so a body's shape index is its table index.
        for (i, shape) in shapes.iter().enumerate() {
            if let Shape::Compound(compound) = shape {
                tables.shapes[i].first = tables.children.len() as u32;
                tables.shapes[i].count = compound.children().len() as u32;
                for child in compound.children() {
                    tables.children.push(GpuCompoundChild {
                        rotation: child.pose.rotation.to_array(),
                        translation: child.pose.translation.to_array(),
                        shape: tables.shapes.len() as u32,
                    });
                    tables.push(&child.shape);
                }
            }
        }
        tables
    }

    /// True when a shape is a mesh or a compound: the kernel then binds their tables.
    pub fn has_complex(&self) -> bool {
        self.shapes
            .iter()
            .any(|s| s.kind == SHAPE_TRIMESH || s.kind == SHAPE_COMPOUND)
    }

    /// Appends the entry of `shape` (a compound's children come later, see [`Self::new`]).
    fn push(&mut self, shape: &Shape) {
        let (kind, params) = match shape {
            Shape::Hull(hull) => (SHAPE_HULL, super::bounding_sphere(hull).to_array()),
            Shape::Cuboid(c) => (SHAPE_BOX, c.half_extents().extend(0.0).to_array()),
            Shape::Sphere(s) => (SHAPE_SPHERE, [s.radius, 0.0, 0.0, 0.0]),
            Shape::Capsule(c) => (SHAPE_CAPSULE, [c.half_height, c.radius, 0.0, 0.0]),
            Shape::Cylinder(c) => (SHAPE_CYLINDER, [c.half_height(), c.radius(), 0.0, 0.0]),
            Shape::HalfSpace(h) => (SHAPE_HALF_SPACE, h.normal.extend(h.offset).to_array()),
            Shape::TriMesh(_) => (SHAPE_TRIMESH, [0.0; 4]),
            Shape::Compound(_) => (SHAPE_COMPOUND, [0.0; 4]),
        };
        let (first, count) = match shape {
            Shape::Hull(hull) => {
                let first = self.planes.len() as u32;
                self.planes
                    .extend(hull.planes().iter().map(|p| p.normal.extend(p.offset).to_array()));
                (first, hull.planes().len() as u32)
            }
            Shape::TriMesh(mesh) => {
                let range = self.meshes.push(mesh);
                (range.root, range.first_triangle)
            }
            _ => (0, 0),
        };
        self.shapes.push(GpuRayShape {
            params,
            kind,
            first,
            count,
            _pad: 0,
        });
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
    /// Which part was hit: a mesh's triangle index, a compound's child index; 0 for other
    /// shapes.
    pub feature: u32,
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
const _: () = assert!(size_of::<GpuCompoundChild>() == 32);

//! The shapes a body can have, each in the body's local frame, and their world boxes once posed.
//!
//! - [`Shape`]: one enum over the kinds; the primitives are here, hulls in [`crate::hull`],
//!   triangle meshes in [`crate::trimesh`].
//! - `compound`: [`Compound`], convex children placed by local poses: a shape made of shapes,
//!   so it lives with them.
//! - `aabb`: a posed shape's world box ([`world_aabb`]), tight for every kind, a compound's
//!   from its children's.

mod aabb;
pub mod compound;

use std::sync::Arc;

use glam::{DVec3, Quat, Vec2, Vec3};
use thiserror::Error;

use crate::constants::{MAX_POSITION, MAX_SHAPE_SIZE, MIN_SHAPE_SIZE};
use crate::hull::ConvexHull;
use crate::trimesh::TriMesh;

pub use aabb::{Aabb, world_aabb};
use compound::Compound;

/// Why a primitive shape's parameters were rejected.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ShapeError {
    /// A size parameter is not a positive finite number.
    #[error("{name} must be a positive finite number, got {value}")]
    NotPositive {
        /// Which parameter.
        name: &'static str,
        /// Its value.
        value: f32,
    },
    /// A half-space normal is zero or not finite.
    #[error("normal must be a finite non-zero vector")]
    BadNormal,
    /// A half-space offset is not finite or beyond [`MAX_POSITION`].
    #[error("offset must be a finite number within ±{MAX_POSITION:e}, got {0}")]
    BadOffset(f32),
    /// A size parameter is positive but outside the supported range.
    #[error(
        "{name} must be within {MIN_SHAPE_SIZE:e}..={MAX_SHAPE_SIZE:e} (the supported range), got {value:e}"
    )]
    OutOfRange {
        /// Which parameter.
        name: &'static str,
        /// Its value.
        value: f32,
    },
}

/// Checks a size parameter: positive, finite and within the supported range
/// ([`MIN_SHAPE_SIZE`]..=[`MAX_SHAPE_SIZE`]).
fn check_positive(name: &'static str, value: f32) -> Result<f32, ShapeError> {
    if !(value.is_finite() && value > 0.0) {
        Err(ShapeError::NotPositive { name, value })
    } else if !(MIN_SHAPE_SIZE..=MAX_SHAPE_SIZE).contains(&value) {
        Err(ShapeError::OutOfRange { name, value })
    } else {
        Ok(value)
    }
}

/// A box centred on the local origin, axis-aligned in the local frame.
#[derive(Clone, Debug, PartialEq)]
pub struct Cuboid {
    half_extents: Vec3,
    hull: ConvexHull,
}

impl Cuboid {
    /// A box with the given half extents (each positive and finite), in length units.
    pub fn new(half_extents: Vec3) -> Result<Self, ShapeError> {
        check_positive("half_extents.x", half_extents.x)?;
        check_positive("half_extents.y", half_extents.y)?;
        check_positive("half_extents.z", half_extents.z)?;
        Ok(Cuboid {
            half_extents,
            hull: ConvexHull::cuboid(half_extents),
        })
    }

    /// Half extents along local X, Y, Z.
    pub fn half_extents(&self) -> Vec3 {
        self.half_extents
    }

    /// The box as a hull (boxes take the hull routines, on the CPU and on the GPU).
    pub fn hull(&self) -> &ConvexHull {
        &self.hull
    }
}

/// A ball centred on the local origin.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sphere {
    /// Radius, positive, in length units.
    pub radius: f32,
}

impl Sphere {
    /// A sphere of the given positive finite radius.
    pub fn new(radius: f32) -> Result<Self, ShapeError> {
        Ok(Sphere {
            radius: check_positive("radius", radius)?,
        })
    }
}

/// All points within `radius` of the segment from `(0, -half_height, 0)` to
/// `(0, half_height, 0)` on the local Y axis.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Capsule {
    /// Half the length of the core segment, positive, in length units.
    pub half_height: f32,
    /// Radius around the segment, positive, in length units.
    pub radius: f32,
}

impl Capsule {
    /// A capsule with positive finite half height and radius.
    pub fn new(half_height: f32, radius: f32) -> Result<Self, ShapeError> {
        Ok(Capsule {
            half_height: check_positive("half_height", half_height)?,
            radius: check_positive("radius", radius)?,
        })
    }

    /// The core segment's end points, local frame: `[bottom, top]`.
    pub fn segment(&self) -> [Vec3; 2] {
        [
            Vec3::new(0.0, -self.half_height, 0.0),
            Vec3::new(0.0, self.half_height, 0.0),
        ]
    }
}

/// Sides of the prism a [`Cylinder`] collides as: its caps fill the GPU clip kernel's 32-vertex
/// polygon buffer together (`MAX_GPU_CLIP_VERTICES`), so a cylinder standing on a cylinder or a
/// box stays on the GPU, and a multiple of 4 gives a level cap four contacts a quarter turn apart.
pub const CYLINDER_SIDES: usize = 16;

/// Largest distance between a [`Cylinder`]'s true surface and its collision prism, as a fraction
/// of the radius (dimensionless): `1 − cos(π / CYLINDER_SIDES)`, about 1.9 %, midway along each
/// side face (the prism's vertices lie on the true circle, its caps are exact). Contact depths
/// and the point where a curved side meets a flat face are off by at most this × the radius.
pub const CYLINDER_MAX_DEVIATION: f32 = 0.019_214_72;

/// A solid right circular cylinder along local Y, centred on the origin: the points with
/// `x² + z² <= radius²` and `|y| <= half_height`.
///
/// Contacts use its prism ([`Self::hull`], [`CYLINDER_SIDES`] sides, inside the true surface by
/// at most [`CYLINDER_MAX_DEVIATION`] × radius), so every hull routine serves it on the CPU and the
/// GPU; ray casts and bounds are exact.
#[derive(Clone, Debug, PartialEq)]
pub struct Cylinder {
    half_height: f32,
    radius: f32,
    hull: ConvexHull,
}

impl Cylinder {
    /// A cylinder with positive finite half height and radius (length units), each within the
    /// supported range.
    pub fn new(half_height: f32, radius: f32) -> Result<Self, ShapeError> {
        let half_height = check_positive("half_height", half_height)?;
        let radius = check_positive("radius", radius)?;
        Ok(Cylinder {
            half_height,
            radius,
            hull: ConvexHull::prism(half_height, radius, CYLINDER_SIDES),
        })
    }

    /// Half the height along local Y, length units.
    pub fn half_height(&self) -> f32 {
        self.half_height
    }

    /// Radius about local Y, length units.
    pub fn radius(&self) -> f32 {
        self.radius
    }

    /// The collision prism ([`ConvexHull::prism`] with [`CYLINDER_SIDES`] sides).
    pub fn hull(&self) -> &ConvexHull {
        &self.hull
    }

    /// Half extents of the true cylinder's world AABB when rotated by `rotation`, f64 length
    /// units: along world axis `i`, `h |a_i| + r sqrt(1 − a_i²)` with `a` the rotated local Y.
    pub fn rotated_half_extents(&self, rotation: Quat) -> DVec3 {
        let axis = (rotation.as_dquat() * DVec3::Y).normalize();
        let rim = (DVec3::ONE - axis * axis).max(DVec3::ZERO);
        axis.abs() * f64::from(self.half_height) + rim.map(f64::sqrt) * f64::from(self.radius)
    }
}

/// The solid `dot(normal, x) <= offset` (local frame): static ground and walls.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HalfSpace {
    /// Unit outward normal (pointing out of the solid).
    pub normal: Vec3,
    /// Distance of the boundary plane from the local origin along `normal`.
    pub offset: f32,
}

impl HalfSpace {
    /// The solid `dot(normal, x) <= offset` (local frame) for any finite non-zero `normal`:
    /// normal and offset are both divided by the normal's length, so the solid is the one
    /// written (stored with a unit normal). The scaled offset must lie within ±[`MAX_POSITION`].
    pub fn new(normal: Vec3, offset: f32) -> Result<Self, ShapeError> {
        if !offset.is_finite() {
            return Err(ShapeError::BadOffset(offset));
        }
        // Scaled to a largest component of 1 first, so tiny and huge normals normalize too.
        let largest = normal.abs().max_element();
        if !(normal.is_finite() && largest > 0.0) {
            return Err(ShapeError::BadNormal);
        }
        let scaled = normal / largest;
        let length = scaled.length();
        let offset = ((f64::from(offset) / f64::from(largest)) / f64::from(length)) as f32;
        if !(offset.is_finite() && f64::from(offset.abs()) <= MAX_POSITION) {
            return Err(ShapeError::BadOffset(offset));
        }
        Ok(HalfSpace {
            normal: scaled / length,
            offset,
        })
    }
}

/// A body's shape. Boxes carry their hull so every polyhedral pair takes the hull routine.
///
/// Static shapes (half-spaces and triangle meshes) pair only with the convex kinds: a batch
/// rejects two half-spaces, two meshes, and a mesh with a half-space.
#[derive(Clone, Debug, PartialEq)]
pub enum Shape {
    /// A convex polyhedron.
    Hull(ConvexHull),
    /// A box.
    Cuboid(Cuboid),
    /// A ball.
    Sphere(Sphere),
    /// A capsule along local Y.
    Capsule(Capsule),
    /// A cylinder along local Y (collides as its prism, ray casts exact).
    Cylinder(Cylinder),
    /// A half-space (infinite; pairs of two half-spaces are not supported).
    HalfSpace(HalfSpace),
    /// A static one-sided triangle mesh (level geometry), shared behind an [`Arc`]: a mesh is
    /// built once and may be large, so cloning a shape list (every narrowphase and ray caster
    /// keeps its own) copies a pointer, not the triangles. Pairs with every convex kind, the
    /// mesh's contacts as [`crate::contact::collide_trimesh_shape`] makes them.
    TriMesh(Arc<TriMesh>),
    /// A body made of convex children with local poses, shared behind an [`Arc`] as a mesh is.
    /// Pairs with every kind but a triangle mesh (refused at the batch's door), one manifold per
    /// body pair as [`crate::contact::collide_compound_shape`] and its siblings make it.
    Compound(Arc<Compound>),
}

impl Shape {
    /// The polyhedron of a hull or box shape, or a cylinder's prism.
    pub fn as_hull(&self) -> Option<&ConvexHull> {
        match self {
            Shape::Hull(h) => Some(h),
            Shape::Cuboid(c) => Some(c.hull()),
            Shape::Cylinder(c) => Some(c.hull()),
            _ => None,
        }
    }

    /// The compound of a compound shape.
    pub fn as_compound(&self) -> Option<&Compound> {
        match self {
            Shape::Compound(compound) => Some(compound),
            _ => None,
        }
    }

    /// The triangle mesh of a mesh shape.
    pub fn as_trimesh(&self) -> Option<&TriMesh> {
        match self {
            Shape::TriMesh(mesh) => Some(mesh),
            _ => None,
        }
    }

    /// True for the static kinds, half-spaces and triangle meshes: two of them never pair.
    pub fn is_static(&self) -> bool {
        matches!(self, Shape::HalfSpace(_) | Shape::TriMesh(_))
    }

    /// The shape's size for relative tolerances ([`crate::constants::pair_scale`]), length
    /// units: a hull's or box's largest centroid-to-vertex distance (a cylinder's prism's), a
    /// sphere's radius, a capsule's half height plus radius, a mesh's bounding-sphere radius,
    /// a compound's largest child's ([`Compound::size`]), 0 for a half-space (it has no size).
    pub fn size(&self) -> f32 {
        match self {
            Shape::Hull(h) => h.radius(),
            Shape::Cuboid(c) => c.hull().radius(),
            Shape::Cylinder(c) => c.hull().radius(),
            Shape::Sphere(s) => s.radius,
            Shape::Capsule(c) => c.half_height + c.radius,
            Shape::HalfSpace(_) => 0.0,
            Shape::TriMesh(m) => m.bounding_sphere().1,
            Shape::Compound(c) => c.size(),
        }
    }

    /// Radius of a ball about the local origin that contains the shape, length units
    /// (`f32::INFINITY` for a half-space).
    pub fn bounding_radius(&self) -> f32 {
        let (centre, radius) = self.bounding_sphere();
        centre.length() + radius
    }

    /// A ball that contains the shape, local frame: its centre (a hull's centroid, a mesh's box
    /// centre, the local origin for every other kind) and radius (length units;
    /// `f32::INFINITY` for a half-space). Tight for boxes, spheres, capsules and cylinders (the
    /// true cylinder, which contains its prism), up to f32 rounding of the radius (a few parts
    /// in 1e7); a mesh's is the ball around its box ([`TriMesh::bounding_sphere`]), a
    /// compound's the ball holding its children's ([`Compound::bounding_sphere`]).
    pub fn bounding_sphere(&self) -> (Vec3, f32) {
        match self {
            Shape::Hull(h) => (h.centroid(), h.radius()),
            Shape::Cuboid(c) => (Vec3::ZERO, c.half_extents().length()),
            Shape::Cylinder(c) => (Vec3::ZERO, Vec2::new(c.half_height, c.radius).length()),
            Shape::Sphere(s) => (Vec3::ZERO, s.radius),
            Shape::Capsule(c) => (Vec3::ZERO, c.half_height + c.radius),
            Shape::HalfSpace(_) => (Vec3::ZERO, f32::INFINITY),
            Shape::TriMesh(m) => m.bounding_sphere(),
            Shape::Compound(c) => c.bounding_sphere(),
        }
    }
}

impl From<TriMesh> for Shape {
    fn from(mesh: TriMesh) -> Shape {
        Shape::TriMesh(Arc::new(mesh))
    }
}

impl From<Compound> for Shape {
    fn from(compound: Compound) -> Shape {
        Shape::Compound(Arc::new(compound))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cylinder_prism_is_inscribed_within_the_documented_deviation() {
        let deviation = 1.0 - (std::f64::consts::PI / CYLINDER_SIDES as f64).cos();
        assert!((f64::from(CYLINDER_MAX_DEVIATION) - deviation).abs() < 1e-8);
        for (h, r) in [(0.5, 0.25), (1e-3, 2.0), (3.0, 1e-2)] {
            let c = Cylinder::new(h, r).unwrap();
            let hull = c.hull();
            let n = CYLINDER_SIDES;
            assert_eq!(
                (hull.vertices().len(), hull.faces().len(), hull.edges().len()),
                (2 * n, n + 2, 3 * n)
            );
            for v in hull.vertices() {
                assert!((glam::Vec2::new(v.x, v.z).length() - r).abs() <= 1e-6 * r, "{v}");
                assert_eq!(v.y.abs(), h);
            }
            // Caps exact and outward; each side plane at r cos(π/N), facing out from the axis.
            let planes = hull.planes();
            assert!(planes[0].normal.abs_diff_eq(-Vec3::Y, 1e-6) && (planes[0].offset - h).abs() <= 1e-6 * h);
            assert!(planes[1].normal.abs_diff_eq(Vec3::Y, 1e-6) && (planes[1].offset - h).abs() <= 1e-6 * h);
            for plane in &planes[2..] {
                assert!(plane.normal.y.abs() < 1e-6, "{plane:?}");
                let inset = 1.0 - plane.offset / r;
                assert!((inset - CYLINDER_MAX_DEVIATION).abs() < 1e-5, "{plane:?}");
            }
        }
        assert!(matches!(
            Cylinder::new(0.0, 1.0),
            Err(ShapeError::NotPositive {
                name: "half_height",
                ..
            })
        ));
        assert!(matches!(
            Cylinder::new(1.0, f32::NAN),
            Err(ShapeError::NotPositive { name: "radius", .. })
        ));
        assert!(matches!(
            Cylinder::new(1.0, 1e13),
            Err(ShapeError::OutOfRange { name: "radius", .. })
        ));
    }

    #[test]
    fn cylinder_aabb_half_extents_are_the_true_cylinders() {
        let c = Cylinder::new(0.5, 0.25).unwrap();
        let upright = c.rotated_half_extents(Quat::IDENTITY);
        assert!(
            upright.abs_diff_eq(DVec3::new(0.25, 0.5, 0.25), 1e-12),
            "{upright}"
        );
        // Lying along X: height along X, the circle in YZ.
        let lying = c.rotated_half_extents(Quat::from_rotation_z(std::f32::consts::FRAC_PI_2));
        assert!(lying.abs_diff_eq(DVec3::new(0.5, 0.25, 0.25), 1e-7), "{lying}");
        // Any rotation: the largest of n · x over the true surface (axis end ± the rim) along
        // each world axis equals the half extent.
        let rotation = Quat::from_euler(glam::EulerRot::XYZ, 0.3, -1.1, 0.7);
        let half = c.rotated_half_extents(rotation);
        for (i, n) in [DVec3::X, DVec3::Y, DVec3::Z].into_iter().enumerate() {
            let reach = (0..3600)
                .map(|k| {
                    let (s, co) = (k as f64 * std::f64::consts::TAU / 3600.0).sin_cos();
                    [-1.0, 1.0]
                        .map(|y| {
                            let local = DVec3::new(0.25 * co, 0.5 * y, 0.25 * s);
                            (rotation.as_dquat() * local).dot(n)
                        })
                        .into_iter()
                        .fold(f64::MIN, f64::max)
                })
                .fold(f64::MIN, f64::max);
            assert!(
                reach <= half[i] + 1e-9 && reach >= half[i] - 1e-5,
                "axis {i}: {reach} vs {}",
                half[i]
            );
        }
    }

    #[test]
    fn half_space_is_the_solid_written_whatever_the_normal_length() {
        for (normal, offset) in [
            (Vec3::new(-1.0, 0.0, 1.0), -1.0),
            (Vec3::new(0.0, 3.0, 0.0), 6.0),
            (Vec3::new(1e-20, 2e-20, -2e-20), 3e-20),
            (Vec3::new(1e30, 0.0, 1e30), 1e30),
        ] {
            let h = HalfSpace::new(normal, offset).unwrap();
            assert!((h.normal.length() - 1.0).abs() < 1e-6);
            // A boundary point of the solid as written lies on the stored plane.
            let on_plane = normal * (offset / normal.length_squared().max(f32::MIN_POSITIVE));
            if on_plane.is_finite() && normal.length_squared().is_normal() {
                assert!((h.normal.dot(on_plane) - h.offset).abs() <= 1e-5 * h.offset.abs().max(1.0));
            }
        }
        // The example from the review: dot([-1, 0, 1], x) <= -1 holds at x = (1, 0, 0) exactly.
        let h = HalfSpace::new(Vec3::new(-1.0, 0.0, 1.0), -1.0).unwrap();
        assert!((h.normal.dot(Vec3::X) - h.offset).abs() < 1e-6, "{h:?}");
        assert!(matches!(
            HalfSpace::new(Vec3::ZERO, 0.0),
            Err(ShapeError::BadNormal)
        ));
        assert!(matches!(
            HalfSpace::new(Vec3::Y, 2e12),
            Err(ShapeError::BadOffset(_))
        ));
    }
}

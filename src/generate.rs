//! Seeded particle scenes: many small convex bodies scattered in a cubic container, the main
//! workload of the benchmarks and the demo.
//! Behind the `generate` feature (rand, rand_pcg), which the default library leaves out.
//!
//! 1. Check the configuration.
//! 2. Build a small shape library from the seed: a few box sizes, [`HULL_LIBRARY_SIZE`] hulls
//!    (points on random ellipsoids, so every point is a hull vertex), sphere radii, capsules,
//!    cylinders and compounds (dumbbells and L-shapes);
//!    only the kinds with a positive weight in the [`ShapeMix`]. Bodies share these shapes.
//! 3. Give each body a shape: a kind drawn by weight, then a library entry of that kind.
//! 4. Size the cube so the bodies' bounding spheres fill `density` of its volume.
//! 5. Place each body uniformly so its bounding sphere lies inside the cube, with a uniformly
//!    random rotation. Bodies may overlap: that is what makes contacts.
//!
//! Length unit: particles are about one unit across (bounding radii 0.3 to 0.8).
//!
//! [`terrain`]: a heightfield [`TriMesh`] of rolling hills, the ground of the demo's terrain
//! scene.
//!
//! [`motion`]: the benchmarks' random motion per frame, on the CPU ([`move_bodies`]) and the GPU
//! ([`GpuMotion`]).

use std::f32::consts::{PI, TAU};

use glam::{Quat, Vec3};
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64;

pub mod motion;

pub use motion::{GpuMotion, RandomMotion, move_bodies};

use crate::broadphase::candidate_pairs;
use crate::hull::{ConvexHull, MAX_HULL_VERTICES};
use crate::pose::{Isometry, Pose};
use crate::scene::{Body, InputError, Scene};
use crate::shape::compound::{Compound, CompoundChild};
use crate::shape::{Capsule, Cuboid, Cylinder, Shape, Sphere};
use crate::trimesh::{TriMesh, TriMeshError};

/// Number of distinct hulls in a scene's shape library.
pub const HULL_LIBRARY_SIZE: usize = 16;
/// Number of distinct boxes in a scene's shape library.
pub const BOX_LIBRARY_SIZE: usize = 4;
/// Number of distinct spheres in a scene's shape library.
pub const SPHERE_LIBRARY_SIZE: usize = 3;
/// Number of distinct capsules in a scene's shape library.
pub const CAPSULE_LIBRARY_SIZE: usize = 3;
/// Number of distinct cylinders in a scene's shape library.
pub const CYLINDER_LIBRARY_SIZE: usize = 3;
/// Number of distinct compounds (dumbbells and L-shapes, alternately) in a scene's shape library.
pub const COMPOUND_LIBRARY_SIZE: usize = 4;

/// Relative weights of the shape kinds (non-negative, not all zero; they need not sum to 1) and
/// the vertex counts of the hulls.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShapeMix {
    /// Weight of boxes.
    pub boxes: f32,
    /// Weight of convex hulls.
    pub hulls: f32,
    /// Weight of spheres.
    pub spheres: f32,
    /// Weight of capsules.
    pub capsules: f32,
    /// Weight of cylinders.
    pub cylinders: f32,
    /// Weight of compounds (dumbbells: two balls on a bar; L-shapes: two boxes).
    pub compounds: f32,
    /// Each library hull gets a vertex count drawn uniformly from this inclusive range
    /// (`4 <= min <= max <= MAX_HULL_VERTICES`; ignored when `hulls` is 0).
    pub hull_vertices: [usize; 2],
}

impl ShapeMix {
    /// Boxes only.
    pub const BOX: ShapeMix = ShapeMix {
        boxes: 1.0,
        hulls: 0.0,
        spheres: 0.0,
        capsules: 0.0,
        cylinders: 0.0,
        compounds: 0.0,
        hull_vertices: [8, 8],
    };
    /// Hulls of 8 vertices only.
    pub const HULL8: ShapeMix = ShapeMix::hulls_only(8);
    /// Hulls of 32 vertices only.
    pub const HULL32: ShapeMix = ShapeMix::hulls_only(32);
    /// Hulls of 64 vertices only.
    pub const HULL64: ShapeMix = ShapeMix::hulls_only(64);
    /// Boxes, hulls of 8 to 64 vertices, spheres and capsules.
    pub const MIXED: ShapeMix = ShapeMix {
        boxes: 0.25,
        hulls: 0.35,
        spheres: 0.2,
        capsules: 0.2,
        cylinders: 0.0,
        compounds: 0.0,
        hull_vertices: [8, 64],
    };
    /// Cylinders only.
    pub const CYLINDER: ShapeMix = ShapeMix {
        cylinders: 1.0,
        ..ShapeMix::NONE
    };
    /// Boxes, spheres and cylinders in equal shares: the three.js lesson's cubes, balls and
    /// cylinders.
    pub const LESSON: ShapeMix = ShapeMix {
        boxes: 1.0,
        spheres: 1.0,
        cylinders: 1.0,
        ..ShapeMix::NONE
    };
    /// Dumbbells and L-shapes (compounds) among boxes and spheres, one third each.
    pub const COMPOUND: ShapeMix = ShapeMix {
        boxes: 1.0,
        spheres: 1.0,
        compounds: 1.0,
        ..ShapeMix::NONE
    };
    /// Every weight 0 (not a valid mix by itself: the base the presets fill in).
    const NONE: ShapeMix = ShapeMix {
        boxes: 0.0,
        hulls: 0.0,
        spheres: 0.0,
        capsules: 0.0,
        cylinders: 0.0,
        compounds: 0.0,
        hull_vertices: [8, 8],
    };

    /// Hulls of exactly `vertices` vertices only.
    pub const fn hulls_only(vertices: usize) -> ShapeMix {
        ShapeMix {
            boxes: 0.0,
            hulls: 1.0,
            spheres: 0.0,
            capsules: 0.0,
            cylinders: 0.0,
            compounds: 0.0,
            hull_vertices: [vertices, vertices],
        }
    }

    /// The preset named `box`, `hull8`, `hull32`, `hull64`, `mixed`, `cylinder`, `lesson` or
    /// `compound` (case-insensitive).
    pub fn preset(name: &str) -> Option<ShapeMix> {
        match name.to_ascii_lowercase().as_str() {
            "box" => Some(ShapeMix::BOX),
            "hull8" => Some(ShapeMix::HULL8),
            "hull32" => Some(ShapeMix::HULL32),
            "hull64" => Some(ShapeMix::HULL64),
            "mixed" => Some(ShapeMix::MIXED),
            "cylinder" => Some(ShapeMix::CYLINDER),
            "lesson" => Some(ShapeMix::LESSON),
            "compound" => Some(ShapeMix::COMPOUND),
            _ => None,
        }
    }
}

/// A heightfield over `[-half, half]²` in the local xz plane (length units), cut into
/// `cells × cells` squares of two triangles each, facing +y: rolling hills
/// `y = height · sin(πx / half) · cos(πz / half)` (`height` may be 0: a flat floor). Its
/// [`TriMeshError`] when the grid is empty or too large ([`crate::trimesh::MAX_TRIMESH_TRIANGLES`]).
pub fn terrain(cells: usize, half: f32, height: f32) -> Result<TriMesh, TriMeshError> {
    let count = cells.saturating_mul(cells).saturating_mul(2);
    if count > crate::trimesh::MAX_TRIMESH_TRIANGLES {
        return Err(TriMeshError::TooManyTriangles(count));
    }
    let step = 2.0 * half / cells.max(1) as f32;
    let k = PI / half;
    let mut vertices = Vec::with_capacity((cells + 1) * (cells + 1));
    for i in 0..=cells {
        for j in 0..=cells {
            let (x, z) = (-half + i as f32 * step, -half + j as f32 * step);
            vertices.push(Vec3::new(x, height * (k * x).sin() * (k * z).cos(), z));
        }
    }
    let at = |i: usize, j: usize| (i * (cells + 1) + j) as u32;
    let mut triangles = Vec::with_capacity(2 * cells * cells);
    for i in 0..cells {
        for j in 0..cells {
            // Counter-clockwise seen from +y: (x, z), (x, z + 1), (x + 1, z).
            triangles.push([at(i, j), at(i, j + 1), at(i + 1, j)]);
            triangles.push([at(i + 1, j), at(i, j + 1), at(i + 1, j + 1)]);
        }
    }
    TriMesh::new(vertices, triangles)
}

/// What [`generate_particle_scene`] builds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ParticleSceneConfig {
    /// Number of bodies.
    pub bodies: usize,
    /// RNG seed: the same configuration always gives the same scene.
    pub seed: u64,
    /// Packing density in `(0, 1]`: the share of the container's volume filled by the bodies'
    /// bounding spheres (counted as if they did not overlap). About 0.3 makes a realistic share
    /// of neighbours touch.
    pub density: f32,
    /// Shape kinds and their weights.
    pub mix: ShapeMix,
    /// Speculative margin of the scene, length units (>= 0).
    pub margin: f32,
}

impl Default for ParticleSceneConfig {
    fn default() -> Self {
        ParticleSceneConfig {
            bodies: 1000,
            seed: 0,
            density: 0.3,
            mix: ShapeMix::MIXED,
            margin: 0.0,
        }
    }
}

/// A seeded particle scene (see the module docs) with `pairs: None`; run the broadphase or use
/// [`generate_particle_scene_with_pairs`]. Errors name the bad configuration field.
pub fn generate_particle_scene(config: &ParticleSceneConfig) -> Result<Scene, InputError> {
    // Step 1.
    check_config(config)?;
    let mut rng = Pcg64::seed_from_u64(config.seed);

    // Step 2: the library, kind by kind; `kinds[k]` is the range of library indices of kind k.
    let mix = &config.mix;
    let mut shapes = Vec::new();
    let mut kinds = Vec::new();
    let mut add_kind = |shapes: &mut Vec<Shape>, weight: f32, kind_shapes: Vec<Shape>| {
        if weight > 0.0 {
            kinds.push((weight, shapes.len()..shapes.len() + kind_shapes.len()));
            shapes.extend(kind_shapes);
        }
    };
    let boxes = library(mix.boxes, BOX_LIBRARY_SIZE, &mut rng, random_box);
    add_kind(&mut shapes, mix.boxes, boxes);
    let hulls = library(mix.hulls, HULL_LIBRARY_SIZE, &mut rng, |rng| {
        let vertices = rng.random_range(mix.hull_vertices[0]..=mix.hull_vertices[1]);
        random_hull(rng, vertices)
    });
    add_kind(&mut shapes, mix.hulls, hulls);
    let spheres = library(mix.spheres, SPHERE_LIBRARY_SIZE, &mut rng, random_sphere);
    add_kind(&mut shapes, mix.spheres, spheres);
    let capsules = library(mix.capsules, CAPSULE_LIBRARY_SIZE, &mut rng, random_capsule);
    add_kind(&mut shapes, mix.capsules, capsules);
    let cylinders = library(mix.cylinders, CYLINDER_LIBRARY_SIZE, &mut rng, random_cylinder);
    add_kind(&mut shapes, mix.cylinders, cylinders);
    let mut which = 0;
    let compounds = library(mix.compounds, COMPOUND_LIBRARY_SIZE, &mut rng, |rng| {
        which += 1;
        random_compound(rng, which % 2 == 0)
    });
    add_kind(&mut shapes, mix.compounds, compounds);

    // Step 3.
    let total_weight: f32 = kinds.iter().map(|(w, _)| w).sum();
    let body_shapes: Vec<u32> = (0..config.bodies)
        .map(|_| {
            let mut pick = rng.random::<f32>() * total_weight;
            let (_, range) = kinds
                .iter()
                .find(|(w, _)| {
                    pick -= w;
                    pick < 0.0
                })
                // Rounding can leave `pick` at 0 past the last kind.
                .unwrap_or(&kinds[kinds.len() - 1]);
            rng.random_range(range.clone()) as u32
        })
        .collect();

    // Step 4.
    let radii: Vec<f32> = body_shapes
        .iter()
        .map(|&s| shapes[s as usize].bounding_radius())
        .collect();
    let half_size = container_half_size(&radii, config.density);

    // Step 5.
    let bodies = body_shapes
        .iter()
        .zip(&radii)
        .map(|(&shape, &radius)| {
            let span = (half_size - radius).max(0.0);
            let position = Vec3::from_array(std::array::from_fn(|_| rng.random_range(-1.0..=1.0f32) * span));
            Body {
                shape,
                pose: Pose::new(position, random_rotation(&mut rng)),
            }
        })
        .collect();

    Ok(Scene {
        shapes,
        bodies,
        pairs: None,
        margin: config.margin,
    })
}

/// [`generate_particle_scene`] with `pairs` filled by [`candidate_pairs`] at the scene's margin.
pub fn generate_particle_scene_with_pairs(config: &ParticleSceneConfig) -> Result<Scene, InputError> {
    let mut scene = generate_particle_scene(config)?;
    scene.pairs = Some(candidate_pairs(&scene.shapes, &scene.bodies, scene.margin));
    Ok(scene)
}

/// Half the side (length units) of a cube centred on the origin whose volume the balls of the
/// given `radii` fill to `density` (their volumes summed as if they did not overlap).
pub fn container_half_size(radii: &[f32], density: f32) -> f32 {
    let ball_volume: f64 = radii
        .iter()
        .map(|&r| 4.0 / 3.0 * std::f64::consts::PI * f64::from(r).powi(3))
        .sum();
    (0.5 * (ball_volume / f64::from(density)).cbrt()) as f32
}

fn check_config(config: &ParticleSceneConfig) -> Result<(), InputError> {
    if u32::try_from(config.bodies).is_err() {
        return Err(InputError::new(
            "bodies",
            format!("{} is more than u32::MAX", config.bodies),
        ));
    }
    if !(config.density.is_finite() && config.density > 0.0 && config.density <= 1.0) {
        return Err(InputError::new(
            "density",
            format!("expected a number in (0, 1], got {}", config.density),
        ));
    }
    if !config.margin.is_finite() || config.margin < 0.0 {
        return Err(InputError::new(
            "margin",
            format!("expected a finite number >= 0, got {}", config.margin),
        ));
    }
    let mix = &config.mix;
    let weights = [
        ("mix.boxes", mix.boxes),
        ("mix.hulls", mix.hulls),
        ("mix.spheres", mix.spheres),
        ("mix.capsules", mix.capsules),
        ("mix.cylinders", mix.cylinders),
        ("mix.compounds", mix.compounds),
    ];
    for (name, weight) in weights {
        if !weight.is_finite() || weight < 0.0 {
            return Err(InputError::new(
                name,
                format!("expected a finite weight >= 0, got {weight}"),
            ));
        }
    }
    if weights.iter().all(|&(_, w)| w == 0.0) {
        return Err(InputError::new("mix", "every shape weight is 0"));
    }
    let [min, max] = mix.hull_vertices;
    if mix.hulls > 0.0 && !(4 <= min && min <= max && max <= MAX_HULL_VERTICES) {
        return Err(InputError::new(
            "mix.hull_vertices",
            format!("expected 4 <= min <= max <= {MAX_HULL_VERTICES}, got [{min}, {max}]"),
        ));
    }
    Ok(())
}

/// `count` shapes made by `make`, or none when the kind's weight is 0 (so its RNG draws and its
/// building cost are skipped).
fn library(
    weight: f32,
    count: usize,
    rng: &mut Pcg64,
    mut make: impl FnMut(&mut Pcg64) -> Shape,
) -> Vec<Shape> {
    if weight > 0.0 {
        (0..count).map(|_| make(rng)).collect()
    } else {
        Vec::new()
    }
}

fn random_box(rng: &mut Pcg64) -> Shape {
    let half_extents = Vec3::from_array(std::array::from_fn(|_| rng.random_range(0.2..=0.45f32)));
    Shape::Cuboid(Cuboid::new(half_extents).expect("half extents drawn positive"))
}

fn random_sphere(rng: &mut Pcg64) -> Shape {
    Shape::Sphere(Sphere::new(rng.random_range(0.3..=0.5f32)).expect("radius drawn positive"))
}

fn random_capsule(rng: &mut Pcg64) -> Shape {
    let half_height = rng.random_range(0.15..=0.35f32);
    let radius = rng.random_range(0.15..=0.3f32);
    Shape::Capsule(Capsule::new(half_height, radius).expect("sizes drawn positive"))
}

/// A dumbbell (two balls on a capsule bar along x) or an L (a leg and a foot box), about one
/// unit across like the other particles.
fn random_compound(rng: &mut Pcg64, dumbbell: bool) -> Shape {
    let child = |shape: Shape, at: Vec3, rotation: Quat| CompoundChild {
        shape,
        pose: Isometry::new(at, rotation),
    };
    let children = if dumbbell {
        let (radius, reach) = (rng.random_range(0.2..=0.3f32), rng.random_range(0.35..=0.5f32));
        let ball = || Shape::Sphere(Sphere::new(radius).expect("radius drawn positive"));
        let bar = Capsule::new(reach, 0.3 * radius).expect("sizes drawn positive");
        vec![
            child(ball(), Vec3::new(-reach, 0.0, 0.0), Quat::IDENTITY),
            child(ball(), Vec3::new(reach, 0.0, 0.0), Quat::IDENTITY),
            child(Shape::Capsule(bar), Vec3::ZERO, Quat::from_rotation_z(PI / 2.0)),
        ]
    } else {
        let (long, thick) = (rng.random_range(0.3..=0.45f32), rng.random_range(0.1..=0.15f32));
        let block = |half: Vec3| Shape::Cuboid(Cuboid::new(half).expect("half extents drawn positive"));
        // The leg up the y axis from the foot's end; the foot along x.
        vec![
            child(
                block(Vec3::new(thick, long, thick)),
                Vec3::new(-long + thick, long - thick, 0.0),
                Quat::IDENTITY,
            ),
            child(block(Vec3::new(long, thick, thick)), Vec3::ZERO, Quat::IDENTITY),
        ]
    };
    Shape::from(Compound::new(children).expect("children drawn valid"))
}

fn random_cylinder(rng: &mut Pcg64) -> Shape {
    let half_height = rng.random_range(0.2..=0.4f32);
    let radius = rng.random_range(0.25..=0.4f32);
    Shape::Cylinder(Cylinder::new(half_height, radius).expect("sizes drawn positive"))
}

/// A hull of `vertices` points spread evenly (Fibonacci spiral, jittered) over an ellipsoid with
/// random semi-axes: a strictly convex surface, so every point is a hull vertex.
fn random_hull(rng: &mut Pcg64, vertices: usize) -> Shape {
    let semi_axes = Vec3::from_array(std::array::from_fn(|_| rng.random_range(0.3..=0.5f32)));
    let golden_angle = PI * (3.0 - 5.0f32.sqrt());
    let phase = rng.random_range(0.0..TAU);
    // Jitter well below the point spacing (about sqrt(4 pi / n) radians) keeps points apart.
    let jitter = 0.2 * (4.0 * PI / vertices as f32).sqrt();
    let points: Vec<Vec3> = (0..vertices)
        .map(|k| {
            let z = 1.0 - (2 * k + 1) as f32 / vertices as f32;
            let ring = (1.0 - z * z).sqrt();
            let angle = phase + golden_angle * k as f32;
            let on_sphere = Vec3::new(ring * angle.cos(), ring * angle.sin(), z);
            let nudge = Vec3::from_array(std::array::from_fn(|_| rng.random_range(-jitter..=jitter)));
            (on_sphere + nudge).normalize() * semi_axes
        })
        .collect();
    Shape::Hull(ConvexHull::from_points(&points).expect("points on an ellipsoid span a volume"))
}

/// A rotation drawn uniformly over SO(3) (Shoemake's subgroup algorithm).
fn random_rotation(rng: &mut Pcg64) -> Quat {
    let u: f32 = rng.random();
    let a = rng.random_range(0.0..TAU);
    let b = rng.random_range(0.0..TAU);
    let (s, c) = ((1.0 - u).sqrt(), u.sqrt());
    Quat::from_xyzw(s * a.sin(), s * a.cos(), c * b.sin(), c * b.cos()).normalize()
}

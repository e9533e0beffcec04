//! A renderer that owns a wgpu device calls hullsat on it and draws what hullsat computes: the
//! bodies of a particle scene, flat-shaded, and their contact points and normals straight from
//! the GPU manifold list, headless, into a PNG. Nothing about the contacts is read back.
//!
//! ```text
//! cargo run --release --example render_contacts -- --out contacts.png
//! ```
//!
//! 1. Scene: [`hullsat::generate`]'s seeded particles (boxes, hulls, spheres, capsules) above a
//!    half-space floor, or with `--terrain` on `hullsat demo --terrain`'s triangle-mesh hills.
//! 2. Device: the example's own instance, adapter, device and queue (no window); hullsat's GPU
//!    broadphase and narrowphase run on them through one [`GpuContext::with_device`].
//! 3. Buffers: the example's bodies (hullsat's [`GpuBody`] layout) live in its own GPU buffer;
//!    the renderer binds it too.
//! 4. Contacts, recorded into the frame's encoder: [`GpuBroadphase::encode_resident`] finds the
//!    candidate pairs (`[a, b]`, A = a, sorted) and their count in its GPU buffers, at most
//!    [`PAIR_SLOTS_PER_BODY`] per body; [`GpuNarrowphase::encode_resident`] reads them and
//!    leaves the manifold list on the GPU: a count, then one `GpuManifold` per pair that is not
//!    separated (points and normal in body A's frame; `pair` names the pair, hence A). Pairs the
//!    GPU does not finish are listed with status `MANIFOLD_HOST` and not drawn (see
//!    [`hullsat::narrowphase::gpu::ResidentManifolds`]: a few hull pairs, e.g. an empty clip).
//! 5. Drawing, same encoder: every shape's mesh instanced over the bodies that use it, poses
//!    read from the body buffer; then the contact points and normals, one instance per list
//!    entry (the count copied into the indirect draw on the GPU), pulled from the list in the
//!    vertex shader and moved to the world with A's pose from the body buffer (see
//!    render_contacts.wgsl). One submission.
//! 6. The image and the broadphase's pair count (16 bytes, to catch pairs beyond their slots)
//!    are copied back; the image is written as a PNG and checked: enough pixels differ from
//!    the clear colour, some have the contact point colour, and every point- or normal-coloured
//!    pixel lies on a contact point or normal of hullsat's CPU reference (the CPU broadphase and
//!    narrowphase, on the host for this check only); otherwise the exit status is non-zero, so
//!    CI can run it on a software driver (lavapipe).
//!
//! With `--terrain`, the same frame: the GPU broadphase pairs the terrain like any body (a
//! static one: never with another static body) and the resident narrowphase's mesh pass
//! computes the terrain pairs (a midphase into body-triangle work items, the per-triangle
//! contacts, the merge). The terrain is drawn as its triangles, flat-shaded.

use std::error::Error;
use std::fs::File;
use std::io::BufWriter;
use std::mem::offset_of;
use std::ops::Range;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, mpsc};
use std::time::Duration;

use bytemuck::{Pod, Zeroable};
use clap::Parser;
use glam::camera::rh;
use glam::{Mat4, Vec2, Vec3, Vec4Swizzles};
use hullsat::broadphase::gpu::scene_centre;
use hullsat::broadphase::{GpuBroadphase, GpuPairCount, ResidentBodies, ResidentPairs, candidate_pairs};
use hullsat::generate::{ParticleSceneConfig, ShapeMix, generate_particle_scene, terrain};
use hullsat::gpu::GpuContext;
use hullsat::narrowphase::gpu::ResidentManifolds;
use hullsat::narrowphase::gpu::layout::{
    GpuBody, SHAPE_BOX, SHAPE_CAPSULE, SHAPE_HALF_SPACE, SHAPE_HULL, SHAPE_SPHERE,
};
use hullsat::{Body, CpuNarrowphase, GpuError, GpuNarrowphase, HalfSpace, Pose, Scene, Shape};
use wgpu::util::DeviceExt;

/// The example's shaders (bodies, contacts), compiled after hullsat's WGSL (see
/// [`shader_source`]).
const SHADER: &str = include_str!("render_contacts.wgsl");

/// The whole shader source: hullsat's quaternion helpers and the structs it shares with a
/// caller's shaders ([`hullsat::gpu::QUAT_WGSL`], [`hullsat::narrowphase::gpu::LAYOUT_WGSL`]: the bodies this
/// example writes, the manifold list it draws), then [`SHADER`].
fn shader_source() -> String {
    [
        hullsat::gpu::QUAT_WGSL,
        hullsat::narrowphase::gpu::LAYOUT_WGSL,
        SHADER,
    ]
    .concat()
}

/// Colour of a contact point marker, linear RGB; must match render_contacts.wgsl `POINT_COLOR`.
const POINT_COLOR: [f32; 3] = [1.0, 0.0, 0.0];
/// Colour of a contact normal, linear RGB; must match render_contacts.wgsl `NORMAL_COLOR`.
const NORMAL_COLOR: [f32; 3] = [1.0, 1.0, 0.0];
/// Half width of a normal's stroke, pixels; must match render_contacts.wgsl
/// `NORMAL_HALF_WIDTH`.
const NORMAL_HALF_WIDTH: f32 = 1.25;
/// Background, linear RGB.
const CLEAR_COLOR: [f64; 3] = [0.93, 0.94, 0.96];
/// Colour target format: sRGB, so the bytes copied out are what a PNG holds.
const COLOR_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8UnormSrgb;
const DEPTH_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Depth32Float;
/// Vertices the contact pipeline draws per manifold entry: 4 points × (marker quad + normal
/// strip) × 6; must match render_contacts.wgsl `VERTICES_PER_POINT` × 4.
const CONTACT_VERTICES: u32 = 4 * 12;
/// Half side of a contact point's square marker, pixels.
const MARKER_HALF_SIZE: f32 = 3.5;
/// Length of a drawn contact normal, world length units (particles are about one unit across).
const NORMAL_LENGTH: f32 = 0.5;
/// Longest wait for the GPU to finish the frame.
const FRAME_TIMEOUT: Duration = Duration::from_secs(120);
/// Segments around a sphere's or capsule's axis, and rings from pole to pole.
const LATHE_SEGMENTS: usize = 16;
const LATHE_RINGS: usize = 10;
/// Smallest share of the image that must differ from the clear colour.
const MIN_DRAWN_SHARE: f64 = 0.10;
/// Fewest pixels of the contact colour (a marker is about 7 × 7 pixels).
const MIN_CONTACT_PIXELS: usize = 100;
/// Pair slots of the GPU broadphase per body: the scene (density 0.3) has under two candidate
/// pairs per body; more than this many is reported, not cut silently.
const PAIR_SLOTS_PER_BODY: u32 = 8;
/// Cells per side of the `--terrain` mesh (two triangles each), as `hullsat demo --terrain`.
const TERRAIN_CELLS: usize = 40;

/// Draws a hullsat particle scene and its contacts into a PNG.
#[derive(Parser, Debug)]
struct Args {
    /// Where to write the PNG.
    #[arg(long, default_value = "contacts.png")]
    out: PathBuf,
    /// Number of particles.
    #[arg(long, default_value_t = 1200)]
    bodies: usize,
    /// Seed of the particle scene.
    #[arg(long, default_value_t = 3)]
    seed: u64,
    /// Image width in pixels.
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u32).range(1024..=8192))]
    width: u32,
    /// Image height in pixels.
    #[arg(long, default_value_t = 768, value_parser = clap::value_parser!(u32).range(768..=8192))]
    height: u32,
    /// Rolling hills of triangles under the particles instead of the half-space floor.
    #[arg(long)]
    terrain: bool,
}

fn main() -> ExitCode {
    match run(&Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("render_contacts: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &Args) -> Result<(), Box<dyn Error>> {
    // Step 1.
    let (scene, extent) = build_scene(args)?;
    // Step 2.
    let (device, queue) = create_device()?;
    let context = GpuContext::with_device(device.clone(), queue.clone())?;
    let mut broadphase = GpuBroadphase::with_context(Arc::clone(&context), &scene.shapes)?;
    let mut narrowphase = GpuNarrowphase::with_context(context, &scene.shapes)?;
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    // Step 3.
    let bodies = body_buffer(&device, &scene.bodies);
    // Step 4.
    let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("frame") });
    let (pairs, contacts) =
        record_contacts(&mut broadphase, &mut narrowphase, &mut encoder, &bodies, &scene)?;
    // Step 5.
    let renderer = Renderer::new(&device, args.width, args.height);
    let meshes = Meshes::new(&scene.shapes, extent);
    let camera = Camera::looking_at_pile(extent, args.width, args.height);
    renderer.draw(
        &device,
        &mut encoder,
        &Frame {
            camera,
            meshes: &meshes,
            bodies: &scene.bodies,
            body_buffer: &bodies,
            pairs: &pairs.pairs,
            contacts: &contacts,
        },
    );
    // Step 6.
    let count_readback = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("pair count readback"),
        size: size_of::<GpuPairCount>() as u64,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    encoder.copy_buffer_to_buffer(
        &pairs.pair_count,
        pairs.pair_count_offset,
        &count_readback,
        0,
        count_readback.size(),
    );
    let pixels = renderer.read_image(&device, &queue, encoder, scope)?;
    let gpu_pairs = read_pair_count(&device, &count_readback, &pairs)?;
    write_png(&args.out, args.width, args.height, &pixels)?;
    // For the check only: the CPU reference's contact points and normal strokes, where the
    // camera puts them.
    let cpu_pairs = candidate_pairs(&scene.shapes, &scene.bodies, scene.margin);
    let reference =
        CpuNarrowphase::new(scene.shapes.clone()).collide(&scene.bodies, &cpu_pairs, scene.margin)?;
    let strokes: Vec<[Vec2; 2]> = reference
        .iter()
        .flatten()
        .flat_map(|manifold| {
            manifold
                .points()
                .iter()
                .map(move |point| (point, manifold.normal))
        })
        .filter_map(|(point, normal)| {
            let start = point.position.as_vec3();
            Some([
                camera.pixel(start)?,
                camera.pixel(start + NORMAL_LENGTH * normal)?,
            ])
        })
        .collect();
    let check = ImageCheck::of(&pixels, args.width, &strokes);
    println!(
        "{}: {} bodies, {} shapes, {} candidate pairs from the GPU broadphase on {} (the CPU's: \
         {}); the CPU reference finds {} manifolds, {} points; {:.1}% of pixels drawn; {} \
         point-coloured, {} off the reference's points; {} normal-coloured, {} off its normals",
        args.out.display(),
        scene.bodies.len(),
        scene.shapes.len(),
        gpu_pairs,
        narrowphase.adapter_info().name,
        cpu_pairs.len(),
        reference.iter().flatten().count(),
        strokes.len(),
        100.0 * check.drawn_share,
        check.point_pixels,
        check.stray_point_pixels,
        check.normal_pixels,
        check.stray_normal_pixels,
    );
    check.verdict()
}

/// Step 1: the particle scene (mixed shapes; hulls of at most 24 vertices keep every hull pair
/// within a software driver's loop budget) with a half-space floor just above the lowest
/// particles, so some of them rest in it, or (`--terrain`) the demo's hills, their mean level a
/// twentieth of the cube below the lowest particle centre, so the crests reach into the lowest
/// layer. Returns the scene and the half size of its particle cube, length units.
fn build_scene(args: &Args) -> Result<(Scene, f32), Box<dyn Error>> {
    let config = ParticleSceneConfig {
        bodies: args.bodies,
        seed: args.seed,
        density: 0.3,
        mix: ShapeMix {
            hull_vertices: [8, 24],
            ..ShapeMix::MIXED
        },
        margin: 0.0,
    };
    let mut scene = generate_particle_scene(&config)?;
    let extent = scene
        .bodies
        .iter()
        .map(|body| {
            let reach = scene.shapes[body.shape as usize].bounding_radius();
            body.pose.translation.abs().max_element() as f32 + reach
        })
        .fold(1.0, f32::max);
    let (pose, ground) = if args.terrain {
        let lowest = scene
            .bodies
            .iter()
            .map(|body| body.pose.translation.y)
            .fold(f64::INFINITY, f64::min);
        let at = Vec3::new(0.0, lowest as f32 - 0.05 * extent, 0.0);
        let hills = terrain(TERRAIN_CELLS, 1.2 * extent, 0.1 * extent)?;
        (Pose::from_translation(at), Shape::from(hills))
    } else {
        // The floor's solid is y <= offset: particles within a few tenths of the bottom cross it.
        let floor = HalfSpace::new(Vec3::Y, -0.9 * extent)?;
        (Pose::IDENTITY, Shape::HalfSpace(floor))
    };
    scene.bodies.push(Body {
        shape: scene.shapes.len() as u32,
        pose,
    });
    scene.shapes.push(ground);
    Ok((scene, extent))
}

/// Step 2: a headless device of the example's own, as a renderer would make it. hullsat's clip
/// kernel binds 9 storage buffers per stage (wgpu's default allows 8), so the example asks for
/// what the adapter allows, up to 16.
fn create_device() -> Result<(wgpu::Device, wgpu::Queue), Box<dyn Error>> {
    let mut descriptor = wgpu::InstanceDescriptor::new_without_display_handle();
    descriptor.backends = wgpu::Backends::VULKAN | wgpu::Backends::METAL | wgpu::Backends::DX12;
    let instance = wgpu::Instance::new(descriptor.with_env());
    let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
        power_preference: wgpu::PowerPreference::HighPerformance,
        ..Default::default()
    }))?;
    let supported = adapter.limits();
    let required_limits = wgpu::Limits {
        max_storage_buffers_per_shader_stage: supported.max_storage_buffers_per_shader_stage.min(16),
        ..wgpu::Limits::default()
    };
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("render_contacts"),
        required_limits,
        ..Default::default()
    }))?;
    Ok((device, queue))
}

/// Step 3: the bodies as a renderer would hold them, in hullsat's [`GpuBody`] layout, in a
/// buffer of its own.
fn body_buffer(device: &wgpu::Device, bodies: &[Body]) -> wgpu::Buffer {
    let gpu_bodies: Vec<GpuBody> = bodies.iter().map(GpuBody::from_body).collect();
    device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("bodies"),
        contents: bytemuck::cast_slice(&gpu_bodies),
        usage: wgpu::BufferUsages::STORAGE,
    })
}

/// Step 4: hullsat records its broadphase, then its SAT and clipping kernels on the pairs, into
/// the frame's `encoder`, over the example's bodies; the pairs and the manifold list (count,
/// then `GpuManifold` entries) are on the GPU once the encoder is submitted.
fn record_contacts(
    broadphase: &mut GpuBroadphase,
    narrowphase: &mut GpuNarrowphase,
    encoder: &mut wgpu::CommandEncoder,
    bodies: &wgpu::Buffer,
    scene: &Scene,
) -> Result<(ResidentPairs, ResidentManifolds), GpuError> {
    let body_count = scene.bodies.len() as u32;
    let pairs = broadphase.encode_resident(
        encoder,
        &ResidentBodies {
            bodies,
            body_count,
            origin: scene_centre(&scene.shapes, &scene.bodies),
            margin: scene.margin,
            max_pairs: body_count.saturating_mul(PAIR_SLOTS_PER_BODY),
            sort: true,
        },
    )?;
    let manifolds = narrowphase.encode_resident(encoder, &pairs.batch(bodies, scene.margin))?;
    Ok((pairs, manifolds))
}

/// Step 6: the broadphase's pair count, copied into `readback` by the frame's (finished)
/// submission; an error when the pairs outgrew their slots or a traversal was cut short.
fn read_pair_count(
    device: &wgpu::Device,
    readback: &wgpu::Buffer,
    pairs: &ResidentPairs,
) -> Result<u32, Box<dyn Error>> {
    let (sender, receiver) = mpsc::channel();
    readback
        .slice(..)
        .map_async(wgpu::MapMode::Read, move |result| drop(sender.send(result)));
    device.poll(wgpu::PollType::Wait {
        submission_index: None,
        timeout: Some(FRAME_TIMEOUT),
    })?;
    receiver.recv_timeout(FRAME_TIMEOUT)??;
    let count: GpuPairCount = bytemuck::pod_read_unaligned(&readback.slice(..).get_mapped_range()?);
    readback.unmap();
    if count.count > pairs.max_pairs || count.flags != 0 {
        return Err(format!(
            "the GPU broadphase found {} pairs (flags {:#x}) for {} slots",
            count.count, count.flags, pairs.max_pairs
        )
        .into());
    }
    Ok(count.count)
}

/// The shaders' uniform; must match render_contacts.wgsl `Camera`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
struct Camera {
    /// World to clip space (column major).
    view_proj: [[f32; 4]; 4],
    /// xyz: camera position, world.
    eye: [f32; 4],
    /// xyz: unit direction toward the light, world.
    light: [f32; 4],
    /// xy: target size in pixels; z: contact marker half size, pixels; w: normal length, world.
    viewport: [f32; 4],
}

impl Camera {
    /// A fixed camera above and in front of a particle cube of half size `extent` (centred on
    /// the origin), the light from above its right shoulder.
    fn looking_at_pile(extent: f32, width: u32, height: u32) -> Camera {
        let target = Vec3::new(0.0, -0.1 * extent, 0.0);
        let eye = target + Vec3::new(0.95, 0.8, 1.3).normalize() * 4.7 * extent;
        let view = rh::view::look_at_mat4(eye, target, Vec3::Y);
        let aspect = width as f32 / height as f32;
        // wgpu's clip space: depth in [0, 1], Y up (as Direct3D's).
        let projection =
            rh::proj::directx::perspective(35f32.to_radians(), aspect, 0.05 * extent, 20.0 * extent);
        let light = Vec3::new(0.45, 1.0, 0.35).normalize();
        Camera {
            view_proj: (projection * view).to_cols_array_2d(),
            eye: eye.extend(1.0).to_array(),
            light: light.extend(0.0).to_array(),
            viewport: [width as f32, height as f32, MARKER_HALF_SIZE, NORMAL_LENGTH],
        }
    }

    /// Where `point` (world) lands on the image, in pixels from the top-left corner; `None`
    /// behind the camera. The contact shader's nudge toward the eye moves a point along its
    /// view ray, so it lands at the same pixel.
    fn pixel(&self, point: Vec3) -> Option<Vec2> {
        let clip = Mat4::from_cols_array_2d(&self.view_proj) * point.extend(1.0);
        (clip.w > 0.0).then(|| {
            let [width, height, ..] = self.viewport;
            let ndc = clip.xy() / clip.w;
            Vec2::new((ndc.x + 1.0) * 0.5 * width, (1.0 - ndc.y) * 0.5 * height)
        })
    }
}

/// A vertex of a shape's mesh, shape frame; must match render_contacts.wgsl `MeshVertex` (the
/// attributes of [`MeshVertex::LAYOUT`]).
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
struct MeshVertex {
    /// Position, shape frame, length units.
    position: [f32; 3],
    /// hullsat's `SHAPE_*` kind, which picks the colour.
    kind: u32,
    /// Unit normal of the triangle (flat shading), shape frame.
    normal: [f32; 3],
    /// Padding to 32 bytes.
    _pad: u32,
}

impl MeshVertex {
    const ATTRIBUTES: [wgpu::VertexAttribute; 3] = [
        wgpu::VertexAttribute {
            format: wgpu::VertexFormat::Float32x3,
            offset: offset_of!(MeshVertex, position) as u64,
            shader_location: 0,
        },
        wgpu::VertexAttribute {
            format: wgpu::VertexFormat::Uint32,
            offset: offset_of!(MeshVertex, kind) as u64,
            shader_location: 1,
        },
        wgpu::VertexAttribute {
            format: wgpu::VertexFormat::Float32x3,
            offset: offset_of!(MeshVertex, normal) as u64,
            shader_location: 2,
        },
    ];
    const LAYOUT: wgpu::VertexBufferLayout<'static> = wgpu::VertexBufferLayout {
        array_stride: size_of::<MeshVertex>() as u64,
        step_mode: wgpu::VertexStepMode::Vertex,
        attributes: &MeshVertex::ATTRIBUTES,
    };
}

/// Every shape's triangles in one vertex list, shape frames.
struct Meshes {
    vertices: Vec<MeshVertex>,
    /// Per shape (hullsat's shape index): its range in `vertices`.
    ranges: Vec<Range<u32>>,
}

impl Meshes {
    /// Hulls, boxes and cylinders (their prisms) from their faces (fans of each face loop); spheres and capsules as
    /// low-poly lathes about local Y; a half-space as a square of half side `4 * extent` on its
    /// plane; a triangle mesh as its triangles; a compound as its children's, moved by their poses.
    fn new(shapes: &[Shape], extent: f32) -> Meshes {
        let mut meshes = Meshes {
            vertices: Vec::new(),
            ranges: Vec::with_capacity(shapes.len()),
        };
        for shape in shapes {
            let start = meshes.vertices.len() as u32;
            meshes.push_shape(shape, extent);
            meshes.ranges.push(start..meshes.vertices.len() as u32);
        }
        meshes
    }

    /// Appends `shape`'s triangles, shape frame (see [`Self::new`]).
    fn push_shape(&mut self, shape: &Shape, extent: f32) {
        match shape {
            Shape::Hull(_) | Shape::Cuboid(_) | Shape::Cylinder(_) => {
                let kind = if matches!(shape, Shape::Cuboid(_)) {
                    SHAPE_BOX
                } else {
                    SHAPE_HULL
                };
                let hull = shape
                    .as_hull()
                    .expect("hulls, boxes and cylinders have hull geometry");
                for (face, plane) in hull.planes().iter().enumerate() {
                    let corner = |i: u32| hull.vertices()[i as usize];
                    let face_loop = hull.face_loop(face);
                    for window in 1..face_loop.len().saturating_sub(1) {
                        let triangle = [face_loop[0], face_loop[window], face_loop[window + 1]].map(corner);
                        self.push_triangle(kind, triangle, plane.normal);
                    }
                }
            }
            Shape::Sphere(sphere) => self.push_lathe(SHAPE_SPHERE, sphere.radius, 0.0),
            Shape::Capsule(capsule) => self.push_lathe(SHAPE_CAPSULE, capsule.radius, capsule.half_height),
            Shape::HalfSpace(half_space) => {
                let normal = half_space.normal;
                let centre = normal * half_space.offset;
                let u = normal.any_orthonormal_vector() * 4.0 * extent;
                let v = normal.cross(u);
                let [a, b, c, d] = [centre - u - v, centre + u - v, centre + u + v, centre - u + v];
                self.push_triangle(SHAPE_HALF_SPACE, [a, b, c], normal);
                self.push_triangle(SHAPE_HALF_SPACE, [a, c, d], normal);
            }
            // Its triangles as they are, shaded as hull faces (the front side).
            Shape::TriMesh(mesh) => {
                for t in 0..mesh.triangles().len() as u32 {
                    let triangle = mesh.triangle(t);
                    self.push_triangle(SHAPE_HULL, triangle.vertices, triangle.normal);
                }
            }
            // Each child's triangles moved by the child's pose into the compound's frame.
            Shape::Compound(compound) => {
                for child in compound.children() {
                    let first = self.vertices.len();
                    self.push_shape(&child.shape, extent);
                    for v in &mut self.vertices[first..] {
                        v.position = child.pose.transform_point(Vec3::from(v.position)).to_array();
                        v.normal = child.pose.transform_vector(Vec3::from(v.normal)).to_array();
                    }
                }
            }
        }
    }

    /// A sphere (`half_height` 0) or a capsule along Y: rings of `radius` from the bottom pole
    /// to the top one, the lower half shifted down by `half_height`, the upper half up.
    fn push_lathe(&mut self, kind: u32, radius: f32, half_height: f32) {
        let profile: Vec<(f32, f32)> = (0..=LATHE_RINGS)
            .flat_map(|ring| {
                let angle = std::f32::consts::PI * (ring as f32 / LATHE_RINGS as f32 - 0.5);
                let (sin, cos) = angle.sin_cos();
                let point = |shift: f32| (radius * cos, radius * sin + shift);
                // The equator ring twice: once per hemisphere (the cylinder joins them).
                match (2 * ring).cmp(&LATHE_RINGS) {
                    std::cmp::Ordering::Less => vec![point(-half_height)],
                    std::cmp::Ordering::Equal => vec![point(-half_height), point(half_height)],
                    std::cmp::Ordering::Greater => vec![point(half_height)],
                }
            })
            .collect();
        let at = |(r, y): (f32, f32), segment: usize| {
            let angle = std::f32::consts::TAU * segment as f32 / LATHE_SEGMENTS as f32;
            Vec3::new(r * angle.cos(), y, r * angle.sin())
        };
        for band in profile.windows(2) {
            for segment in 0..LATHE_SEGMENTS {
                let [a, b, c, d] = [
                    at(band[0], segment),
                    at(band[0], segment + 1),
                    at(band[1], segment + 1),
                    at(band[1], segment),
                ];
                for triangle in [[a, b, c], [a, c, d]] {
                    // Outward: away from the nearest point of the axis segment.
                    let centre = (triangle[0] + triangle[1] + triangle[2]) / 3.0;
                    let core = Vec3::new(0.0, centre.y.clamp(-half_height, half_height), 0.0);
                    self.push_triangle(kind, triangle, centre - core);
                }
            }
        }
    }

    /// One flat triangle, wound counter-clockwise and with its normal on the side of `outward`;
    /// degenerate triangles (at the poles) are skipped.
    fn push_triangle(&mut self, kind: u32, [a, b, mut c]: [Vec3; 3], outward: Vec3) {
        let Some(mut normal) = (b - a).cross(c - a).try_normalize() else {
            return;
        };
        let mut b = b;
        if normal.dot(outward) < 0.0 {
            std::mem::swap(&mut b, &mut c);
            normal = -normal;
        }
        self.vertices.extend([a, b, c].map(|p| MeshVertex {
            position: p.to_array(),
            kind,
            normal: normal.to_array(),
            _pad: 0,
        }));
    }
}

/// What one frame draws.
struct Frame<'a> {
    camera: Camera,
    meshes: &'a Meshes,
    bodies: &'a [Body],
    /// The bodies on the GPU ([`GpuBody`] layout).
    body_buffer: &'a wgpu::Buffer,
    /// The broadphase's pairs, `array<vec2<u32>>`.
    pairs: &'a wgpu::Buffer,
    contacts: &'a ResidentManifolds,
}

/// Step 5: the two pipelines and the offscreen targets.
struct Renderer {
    layout: wgpu::BindGroupLayout,
    bodies: wgpu::RenderPipeline,
    contacts: wgpu::RenderPipeline,
    /// The image, and its depth buffer.
    color: wgpu::Texture,
    depth: wgpu::TextureView,
    width: u32,
    height: u32,
}

impl Renderer {
    fn new(device: &wgpu::Device, width: u32, height: u32) -> Renderer {
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("render_contacts.wgsl"),
            source: wgpu::ShaderSource::Wgsl(shader_source().into()),
        });
        let storage = |binding| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::VERTEX,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Storage { read_only: true },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        };
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("render_contacts"),
            entries: &[
                wgpu::BindGroupLayoutEntry {
                    binding: 0,
                    visibility: wgpu::ShaderStages::VERTEX,
                    ty: wgpu::BindingType::Buffer {
                        ty: wgpu::BufferBindingType::Uniform,
                        has_dynamic_offset: false,
                        min_binding_size: None,
                    },
                    count: None,
                },
                storage(1),
                storage(2),
                storage(3),
                storage(4),
            ],
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("render_contacts"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let pipeline = |label, vertex: &str, fragment: &str, buffers: &[Option<wgpu::VertexBufferLayout>]| {
            device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
                label: Some(label),
                layout: Some(&pipeline_layout),
                vertex: wgpu::VertexState {
                    module: &module,
                    entry_point: Some(vertex),
                    compilation_options: Default::default(),
                    buffers,
                },
                primitive: wgpu::PrimitiveState {
                    topology: wgpu::PrimitiveTopology::TriangleList,
                    cull_mode: None,
                    ..Default::default()
                },
                depth_stencil: Some(wgpu::DepthStencilState {
                    format: DEPTH_FORMAT,
                    depth_write_enabled: Some(true),
                    depth_compare: Some(wgpu::CompareFunction::Less),
                    stencil: Default::default(),
                    bias: Default::default(),
                }),
                // No multisampling: hard edges keep the PNG small and the contact colour exact.
                multisample: Default::default(),
                fragment: Some(wgpu::FragmentState {
                    module: &module,
                    entry_point: Some(fragment),
                    compilation_options: Default::default(),
                    targets: &[Some(COLOR_FORMAT.into())],
                }),
                multiview_mask: None,
                cache: None,
            })
        };
        let bodies = pipeline("bodies", "vs_body", "fs_body", &[Some(MeshVertex::LAYOUT)]);
        let contacts = pipeline("contacts", "vs_contact", "fs_contact", &[]);
        let target = |label, format, usage| {
            device.create_texture(&wgpu::TextureDescriptor {
                label: Some(label),
                size: wgpu::Extent3d {
                    width,
                    height,
                    depth_or_array_layers: 1,
                },
                mip_level_count: 1,
                sample_count: 1,
                dimension: wgpu::TextureDimension::D2,
                format,
                usage,
                view_formats: &[],
            })
        };
        let attachment = wgpu::TextureUsages::RENDER_ATTACHMENT;
        Renderer {
            layout,
            bodies,
            contacts,
            color: target("color", COLOR_FORMAT, attachment | wgpu::TextureUsages::COPY_SRC),
            depth: target("depth", DEPTH_FORMAT, attachment).create_view(&Default::default()),
            width,
            height,
        }
    }

    /// Records the frame: bodies instanced per shape, then the contacts (indirect: one instance
    /// per manifold entry).
    fn draw(&self, device: &wgpu::Device, encoder: &mut wgpu::CommandEncoder, frame: &Frame) {
        // Instances grouped by shape: instance i draws body instance_bodies[i].
        let mut instance_bodies: Vec<u32> = (0..frame.bodies.len() as u32).collect();
        instance_bodies.sort_by_key(|&body| frame.bodies[body as usize].shape);
        let camera = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("camera"),
            contents: bytemuck::bytes_of(&frame.camera),
            usage: wgpu::BufferUsages::UNIFORM,
        });
        let instance_buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("instance bodies"),
            contents: bytemuck::cast_slice(&instance_bodies),
            usage: wgpu::BufferUsages::STORAGE,
        });
        let vertices = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("meshes"),
            contents: bytemuck::cast_slice(&frame.meshes.vertices),
            usage: wgpu::BufferUsages::VERTEX,
        });
        // One contact instance per list entry: the count is copied on the GPU from the list's
        // head into the indirect draw's instance count.
        let draw_args = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("contact draw args"),
            contents: wgpu::util::DrawIndirectArgs {
                vertex_count: CONTACT_VERTICES,
                instance_count: 0,
                first_vertex: 0,
                first_instance: 0,
            }
            .as_bytes(),
            usage: wgpu::BufferUsages::INDIRECT | wgpu::BufferUsages::COPY_DST,
        });
        encoder.copy_buffer_to_buffer(
            &frame.contacts.list,
            0,
            &draw_args,
            offset_of!(wgpu::util::DrawIndirectArgs, instance_count) as u64,
            4,
        );
        let buffers = [
            &camera,
            frame.body_buffer,
            &instance_buffer,
            frame.pairs,
            &frame.contacts.list,
        ];
        let entries: Vec<wgpu::BindGroupEntry> = buffers
            .iter()
            .enumerate()
            .map(|(binding, buffer)| wgpu::BindGroupEntry {
                binding: binding as u32,
                resource: buffer.as_entire_binding(),
            })
            .collect();
        let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("render_contacts"),
            layout: &self.layout,
            entries: &entries,
        });
        let [r, g, b] = CLEAR_COLOR;
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("frame"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: &self.color.create_view(&Default::default()),
                depth_slice: None,
                resolve_target: None,
                ops: wgpu::Operations {
                    load: wgpu::LoadOp::Clear(wgpu::Color { r, g, b, a: 1.0 }),
                    store: wgpu::StoreOp::Store,
                },
            })],
            depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                view: &self.depth,
                depth_ops: Some(wgpu::Operations {
                    load: wgpu::LoadOp::Clear(1.0),
                    store: wgpu::StoreOp::Discard,
                }),
                stencil_ops: None,
            }),
            timestamp_writes: None,
            occlusion_query_set: None,
            multiview_mask: None,
        });
        pass.set_bind_group(0, &bind_group, &[]);
        pass.set_pipeline(&self.bodies);
        pass.set_vertex_buffer(0, vertices.slice(..));
        let mut first = 0;
        for run in instance_bodies
            .chunk_by(|&a, &b| frame.bodies[a as usize].shape == frame.bodies[b as usize].shape)
        {
            let shape = frame.bodies[run[0] as usize].shape as usize;
            let instances = first..first + run.len() as u32;
            pass.draw(frame.meshes.ranges[shape].clone(), instances);
            first += run.len() as u32;
        }
        pass.set_pipeline(&self.contacts);
        pass.draw_indirect(&draw_args, 0);
    }

    /// Step 6: copies the image out, submits `encoder`, pops the frame's validation `scope`
    /// (so an invalid frame is reported as such, not as a failed wait) and waits (bounded) for
    /// the pixels: RGBA, sRGB, rows top to bottom.
    fn read_image(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        mut encoder: wgpu::CommandEncoder,
        scope: wgpu::ErrorScopeGuard,
    ) -> Result<Image, Box<dyn Error>> {
        let row_bytes = 4 * self.width;
        let padded_row = row_bytes.next_multiple_of(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT);
        let size = u64::from(padded_row) * u64::from(self.height);
        let readback = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("image readback"),
            size,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        encoder.copy_texture_to_buffer(
            self.color.as_image_copy(),
            wgpu::TexelCopyBufferInfo {
                buffer: &readback,
                layout: wgpu::TexelCopyBufferLayout {
                    offset: 0,
                    bytes_per_row: Some(padded_row),
                    rows_per_image: None,
                },
            },
            self.color.size(),
        );
        let submission = queue.submit([encoder.finish()]);
        let (sender, receiver) = mpsc::channel();
        readback
            .slice(..)
            .map_async(wgpu::MapMode::Read, move |result| drop(sender.send(result)));
        if let Some(error) = pollster::block_on(scope.pop()) {
            return Err(format!("wgpu: {error}").into());
        }
        device.poll(wgpu::PollType::Wait {
            submission_index: Some(submission),
            timeout: Some(FRAME_TIMEOUT),
        })?;
        receiver.recv_timeout(FRAME_TIMEOUT)??;
        let mapped = readback.slice(..).get_mapped_range()?;
        let mut rgba = Vec::with_capacity((row_bytes * self.height) as usize);
        for row in mapped.chunks_exact(padded_row as usize) {
            rgba.extend_from_slice(&row[..row_bytes as usize]);
        }
        drop(mapped);
        readback.unmap();
        Ok(Image { rgba })
    }
}

/// A rendered image: RGBA bytes, sRGB, rows top to bottom.
struct Image {
    rgba: Vec<u8>,
}

impl Image {
    /// Every pixel's RGB bytes, row by row.
    fn pixels(&self) -> impl Iterator<Item = [u8; 3]> + '_ {
        self.rgba.chunks_exact(4).map(|p| [p[0], p[1], p[2]])
    }
}

/// Writes `image` as an 8-bit RGB PNG (the alpha channel is always opaque).
fn write_png(path: &PathBuf, width: u32, height: u32, image: &Image) -> Result<(), Box<dyn Error>> {
    let file = File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut encoder = png::Encoder::new(BufWriter::new(file), width, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_compression(png::Compression::High);
    let rgb: Vec<u8> = image.pixels().flatten().collect();
    let mut writer = encoder.write_header()?;
    writer.write_image_data(&rgb)?;
    writer.finish()?;
    Ok(())
}

/// What the self-check found in the image.
struct ImageCheck {
    /// Share of pixels that differ from the clear colour.
    drawn_share: f64,
    /// Pixels of the contact point colour.
    point_pixels: usize,
    /// Point-coloured pixels on no marker of a CPU reference contact point.
    stray_point_pixels: usize,
    /// Pixels of the contact normal colour.
    normal_pixels: usize,
    /// Normal-coloured pixels on no stroke of a CPU reference contact normal.
    stray_normal_pixels: usize,
}

impl ImageCheck {
    /// Checks `image` (`width` pixels wide) against `strokes`: each CPU reference contact
    /// point and the tip of its normal, in pixels. A pixel centre a marker covers is within
    /// [`MARKER_HALF_SIZE`] of its point on both axes, one a normal covers within
    /// [`NORMAL_HALF_WIDTH`] of its segment; one more pixel absorbs rounding.
    fn of(image: &Image, width: u32, strokes: &[[Vec2; 2]]) -> ImageCheck {
        let clear = CLEAR_COLOR.map(|c| srgb_byte(c as f32));
        let [point, normal] = [POINT_COLOR, NORMAL_COLOR].map(|c| c.map(srgb_byte));
        let near = |p: [u8; 3], q: [u8; 3]| p.iter().zip(&q).all(|(&a, &b)| a.abs_diff(b) <= 2);
        let on_marker = |pixel: Vec2| {
            strokes
                .iter()
                .any(|[start, _]| (*start - pixel).abs().max_element() <= MARKER_HALF_SIZE + 1.0)
        };
        let on_normal = |pixel: Vec2| {
            strokes.iter().any(|&[start, tip]| {
                let along = tip - start;
                let t = ((pixel - start).dot(along) / along.length_squared().max(1e-12)).clamp(0.0, 1.0);
                (start + t * along).distance(pixel) <= NORMAL_HALF_WIDTH + 1.0
            })
        };
        let mut check = ImageCheck {
            drawn_share: 0.0,
            point_pixels: 0,
            stray_point_pixels: 0,
            normal_pixels: 0,
            stray_normal_pixels: 0,
        };
        let (mut total, mut drawn) = (0, 0);
        for (index, rgb) in image.pixels().enumerate() {
            total += 1;
            drawn += usize::from(!near(rgb, clear));
            let centre = Vec2::new((index % width as usize) as f32, (index / width as usize) as f32) + 0.5;
            if near(rgb, point) {
                check.point_pixels += 1;
                check.stray_point_pixels += usize::from(!on_marker(centre));
            } else if near(rgb, normal) {
                check.normal_pixels += 1;
                check.stray_normal_pixels += usize::from(!on_normal(centre));
            }
        }
        check.drawn_share = drawn as f64 / f64::from(total.max(1));
        check
    }

    /// `Err` when the image is blank, shows no contact, or shows a contact point or normal
    /// where the CPU reference has none.
    fn verdict(&self) -> Result<(), Box<dyn Error>> {
        if self.drawn_share < MIN_DRAWN_SHARE {
            return Err(format!(
                "only {:.1}% of the image differs from the clear colour (expected at least {:.0}%)",
                100.0 * self.drawn_share,
                100.0 * MIN_DRAWN_SHARE
            )
            .into());
        }
        if self.point_pixels < MIN_CONTACT_PIXELS {
            return Err(format!(
                "{} pixels have the contact point colour (expected at least {MIN_CONTACT_PIXELS})",
                self.point_pixels
            )
            .into());
        }
        if self.stray_point_pixels + self.stray_normal_pixels > 0 {
            return Err(format!(
                "{} of {} point-coloured pixels lie on no contact point of the CPU reference, \
                 {} of {} normal-coloured pixels on none of its normals",
                self.stray_point_pixels, self.point_pixels, self.stray_normal_pixels, self.normal_pixels
            )
            .into());
        }
        Ok(())
    }
}

/// A linear colour channel in `[0, 1]` as the byte an sRGB target stores.
fn srgb_byte(linear: f32) -> u8 {
    let encoded = if linear <= 0.003_130_8 {
        12.92 * linear
    } else {
        1.055 * linear.powf(1.0 / 2.4) - 0.055
    };
    (encoded.clamp(0.0, 1.0) * 255.0).round() as u8
}

#[cfg(test)]
#[path = "../tests/support/wgsl.rs"]
#[allow(dead_code)]
mod wgsl;

#[cfg(test)]
mod tests {
    use std::f32::consts::PI;

    use super::*;
    use crate::rust_layout;
    use crate::wgsl::{assert_consts, assert_same_layout, parse, validate};

    /// The shader (after hullsat's WGSL) validates and its uniform has the Rust layout;
    /// hullsat's shared structs are checked by hullsat's tests/gpu_layout.rs.
    #[test]
    fn shader_validates_and_its_uniform_matches_the_rust_layout() {
        let module = parse("render_contacts.wgsl", &shader_source());
        validate("render_contacts.wgsl", &module);
        assert_same_layout(
            &module,
            "Camera",
            rust_layout!(Camera {
                view_proj,
                eye,
                light,
                viewport
            }),
        );
        assert_consts(
            &module,
            &[
                ("VERTICES_PER_POINT", naga::Literal::U32(CONTACT_VERTICES / 4)),
                ("NORMAL_HALF_WIDTH", naga::Literal::F32(NORMAL_HALF_WIDTH)),
            ],
        );
    }

    /// Every mesh is a closed surface wound counter-clockwise about outward facet normals: its
    /// signed volume (divergence theorem) is the shape's, or a little less for the low-poly
    /// spheres and capsules, which are inscribed.
    #[test]
    fn meshes_are_closed_and_face_outward() {
        let args = Args::parse_from(["render_contacts", "--bodies", "200"]);
        let (scene, extent) = build_scene(&args).expect("scene");
        let meshes = Meshes::new(&scene.shapes, extent);
        let mut kinds_seen = [false; 5];
        for (index, (shape, range)) in scene.shapes.iter().zip(&meshes.ranges).enumerate() {
            let shape_name = format!("shapes[{index}]");
            let triangles = &meshes.vertices[range.start as usize..range.end as usize];
            assert!(
                !triangles.is_empty() && triangles.len().is_multiple_of(3),
                "{shape_name}"
            );
            let mut volume = 0.0;
            for t in triangles.chunks_exact(3) {
                let [a, b, c] = [t[0], t[1], t[2]].map(|v| Vec3::from(v.position));
                let normal = Vec3::from(t[0].normal);
                assert!((normal.length() - 1.0).abs() < 1e-5, "{shape_name}");
                assert!((b - a).cross(c - a).dot(normal) > 0.0, "{shape_name}: winding");
                volume += a.dot(b.cross(c)) / 6.0;
            }
            kinds_seen[triangles[0].kind as usize] = true;
            let (expected, low) = match shape {
                Shape::Hull(hull) => {
                    for v in triangles {
                        let (p, n) = (Vec3::from(v.position), Vec3::from(v.normal));
                        assert!(n.dot(p - hull.centroid()) > 0.0, "{shape_name}: inward normal");
                    }
                    assert!(volume > 0.0, "{shape_name}");
                    continue;
                }
                Shape::Cuboid(c) => (8.0 * c.half_extents().element_product(), 1.0 - 1e-4),
                Shape::Sphere(s) => (4.0 / 3.0 * PI * s.radius.powi(3), 0.9),
                Shape::Capsule(c) => (
                    PI * c.radius.powi(2) * (4.0 / 3.0 * c.radius + 2.0 * c.half_height),
                    0.9,
                ),
                Shape::Cylinder(c) => (2.0 * PI * c.radius().powi(2) * c.half_height(), 0.9),
                Shape::HalfSpace(_) | Shape::TriMesh(_) | Shape::Compound(_) => continue,
            };
            assert!(
                volume <= expected * (1.0 + 1e-4) && volume >= low * expected,
                "{shape_name}: volume {volume}, expected {expected}"
            );
        }
        assert_eq!(kinds_seen, [true; 5], "every kind is drawn");
    }

    #[test]
    fn srgb_bytes_of_the_marker_and_background() {
        assert_eq!(POINT_COLOR.map(srgb_byte), [255, 0, 0]);
        assert_eq!(NORMAL_COLOR.map(srgb_byte), [255, 255, 0]);
        assert_eq!(srgb_byte(0.5), 188);
    }
}

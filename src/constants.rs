//! Every tolerance in one place, with its unit and what it trades; and the supported range.
//!
//! Relative tolerances are fractions of a pair's *scale* ([`pair_scale`]: the sum of the two
//! shapes' sizes). The ones the GPU shader uses are mirrored as WGSL `const`s in
//! `shaders/narrowphase/sat.wgsl` and `clip.wgsl`, and a test checks the two agree.
//!
//! # Supported range
//! Every size parameter (box half extent, radius, capsule half height, hull extent) lies in
//! [`MIN_SHAPE_SIZE`]..=[`MAX_SHAPE_SIZE`] length units, every body position coordinate and
//! half-space offset within ±[`MAX_POSITION`], the margin within 0..=[`MAX_SHAPE_SIZE`]. Input
//! outside is rejected when shapes are built and batches validated. Inside it, every tolerance
//! is relative and every axis is formed from unit directions, so results scale with the input.
//! Positions are f64: a pair's relative placement is exact to f32 rounding of its own size plus
//! about |position| × 1e-16 (CPU) or |position| × 4e-15 (GPU, two f32 parts).

/// Smallest supported size parameter, length units (see the module docs).
pub const MIN_SHAPE_SIZE: f32 = 1.0e-6;

/// Largest supported size parameter, length units (see the module docs).
pub const MAX_SHAPE_SIZE: f32 = 1.0e12;

/// Largest supported magnitude of a body position coordinate or half-space offset, length units.
pub const MAX_POSITION: f64 = 1.0e12;

/// Largest allowed deviation of a rotation quaternion's length from 1 before it is rejected
/// (smaller deviations are normalized away). Dimensionless.
pub const ROTATION_UNIT_TOLERANCE: f32 = 1.0e-3;

/// The one definition of a pair's scale, length units: the sum of the two shapes' sizes
/// ([`crate::shape::Shape::size`]: a hull's or box's largest centroid-to-vertex distance, a
/// sphere's radius, a capsule's half height plus radius, 0 for a half-space). Every relative
/// tolerance multiplies this.
#[inline]
pub fn pair_scale(size_a: f32, size_b: f32) -> f32 {
    size_a + size_b
}

/// Axis preference, relative to the pair's scale. A face of B wins over a face of A, and an edge
/// pair wins over the best face, only when its separation is larger by this much. Keeps the
/// manifold from flickering between nearly equal axes frame to frame; larger prefers faces more.
/// The reported separation is still the exact largest one over all axes.
pub const AXIS_PREFERENCE_TOLERANCE: f32 = 1.0e-3;

/// Edge pairs whose unit directions have `|cross| <` this (sine of the angle) are parallel and
/// skipped: their axis is ill-defined, and a face axis covers the contact.
pub const PARALLEL_EDGE_SINE: f32 = 1.0e-3;

// Primitive contacts and GJK

/// GJK stops when the gap between its upper and lower distance bounds is below this fraction of
/// the distance (f64, like GJK's internals). Smaller is more accurate and costs iterations; on
/// polytopes GJK usually ends earlier, when a support point repeats.
pub const GJK_RELATIVE_TOLERANCE: f64 = 1.0e-6;

/// GJK reports an overlap (no closest points) when the distance is below this fraction of the
/// size of the Minkowski difference (its largest support point seen). Callers then use a
/// penetration query, which also handles touching and barely separated shapes well; larger
/// sends more near-touching pairs there, smaller gives noisier normals from tiny distances.
pub const GJK_OVERLAP_TOLERANCE: f64 = 1.0e-5;

/// Most GJK iterations; polytope pairs converge in far fewer, this only bounds degenerate input.
pub const GJK_MAX_ITERATIONS: usize = 64;

/// A capsule touching a hull face gets two clipped points when the contact normal is within this
/// angle (sine) of the face normal and its segment is within this angle of the face plane; else
/// one point. Larger turns more tilted contacts into two-point ones.
pub const CAPSULE_FACE_SINE: f32 = 0.05;

/// Two capsules get two points (their clipped overlap) when the sine of the angle between their
/// segments is below this. Larger treats more tilted pairs as parallel.
pub const CAPSULE_PARALLEL_SINE: f32 = 0.05;

// Contact manifolds

/// Tie tolerance of contact point reduction, relative to the pair's scale. Depths, distances and
/// triangle heights closer than this count as equal and the lowest polygon index wins, so a
/// symmetric contact (a face resting on a face) keeps the same points, and ids, frame to frame.
/// Larger trades a slightly smaller contact area for more stability.
pub const CONTACT_REDUCTION_TOLERANCE: f32 = 1.0e-3;

// Hull building

/// `ConvexHull::from_points`: a cloud whose bounding-box diagonal is at most this fraction of its
/// largest coordinate magnitude is `Coincident` (its spread is at the level of f32 rounding).
/// Larger rejects tiny clouds far from the origin; smaller builds hulls out of rounding noise.
pub const HULL_COINCIDENT_TOLERANCE: f64 = 1.0e-6;

/// Hull building: a cloud (or mesh) whose points all lie within this fraction of its
/// bounding-box diagonal of one line is `Collinear`, of one plane `Coplanar`. Larger rejects thin
/// but valid shapes (a 100:1 slab is 1e-2 thick); smaller accepts slivers whose face planes are
/// ill-conditioned.
pub const HULL_FLATNESS_TOLERANCE: f64 = 1.0e-4;

/// Hull building, as a fraction of the bounding-box diagonal: vertices within this distance of a
/// face's plane count as on it. Adjacent triangles within it of one plane merge into one polygon,
/// a vertex between just two faces within twice it of its neighbours' line is dropped, and
/// `from_mesh` accepts faces this far from planar or convex. Input points may end up this far
/// (about twice at worst) outside the hull. Larger merges more (fewer, bigger faces, a looser
/// hull); smaller keeps sliver faces and near-parallel edges from f32 noise, which make the SAT
/// ill-conditioned.
pub const HULL_PLANE_TOLERANCE: f64 = 1.0e-5;

/// Quickhull visibility, as a fraction of the bounding-box diagonal: a point counts as in front
/// of a triangle only when further than this. Just above f64 rounding of orientation tests on
/// f32 input (so the triangulation stays consistent), far below [`HULL_PLANE_TOLERANCE`] (so it
/// stays convex to well within that).
pub const HULL_ROUNDING_TOLERANCE: f64 = 1.0e-11;

/// Incident face choice: faces whose normal's dot with the reference normal is within this of
/// the most anti-parallel one count as tied, and the lowest index wins. Nearly coplanar faces
/// (a hull's gently curved side) then do not swap under tiny motions, which keeps feature ids
/// stable; larger may pick a face tilted up to acos(1 - this) (2.6° at 1e-3) from the best.
pub const INCIDENT_FACE_TOLERANCE: f32 = 1.0e-3;

/// Separated hull pairs within the margin: when the closest-point (GJK) direction and the SAT
/// axis differ by more than this angle's cosine (0.25°), the closest features are not a face or
/// an edge pair (vertex-vertex, vertex-edge) and the manifold becomes the one closest-point
/// pair. The witness direction is exact to f32 rounding for vertex-face and edge-edge features,
/// so those keep their clipped manifold; larger angles keep more near-rim contacts clipped.
pub const CLOSEST_FEATURE_COSINE: f32 = 0.999_990_5;

/// GPU clipping (clip.wgsl) of hull pairs apart within the margin: f32 GJK's closest-point
/// direction (gjk.wgsl step 6) is known only to about this many times `f32::EPSILON` × the
/// Minkowski difference's size ÷ the distance (or, where the closest features are a face and
/// a vertex or two edges, × its edge lengths ÷ twice its area); the CPU's GJK runs in f64.
/// Where that uncertainty (with the CPU's own rounding of its witness points) could change the
/// CPU's choice at [`CLOSEST_FEATURE_COSINE`], or exceeds [`GPU_GJK_MAX_DIRECTION_ERROR`] for a
/// closest-point contact, the pair goes to the host. 64 leaves room for GPUs whose division and
/// square root round less tightly than lavapipe's (docs/design/contacts.md). Larger sends more
/// pairs to the host; smaller lets choices and normals differ from the CPU's.
pub const GPU_GJK_CONDITIONING: f32 = 64.0;

/// Largest direction uncertainty (radians, see [`GPU_GJK_CONDITIONING`]) of a closest-point
/// contact the GPU keeps; the GPU = CPU contract's normal tolerance for such contacts.
pub const GPU_GJK_MAX_DIRECTION_ERROR: f32 = 5.0e-4;

/// The GPU = CPU contract's rounding tolerance ([`crate::contract`]), relative to the pair's
/// scale (dimensionless; as an angle, radians): about 84 f32 ulps. A GPU's results differ from
/// the CPU's by rounding: the relative pose in f32, the SAT's dot products with or without fused
/// multiply-adds, clip divisions (WGSL allows 2.5 ulp) and square roots (`inverseSqrt` 2 ulp),
/// a few ulps each, compounded over a few dozen steps. Larger accepts coarser GPU results;
/// smaller flags rounding as disagreement.
pub const GPU_AGREEMENT_TOLERANCE: f32 = 1.0e-5;

// Contact cache

/// Rounding allowance of [`crate::ContactCache`]'s motion bounds, relative to the pair's reach
/// (dimensionless; times the reach, a length, it is a length): added to every motion bound and
/// required beyond the margin before a re-measured axis counts as separating (box pairs' cold
/// queries round differently from the hull formulas the cache uses; GJK's distance is within
/// 1e-6 of exact). Larger runs more cold calls; smaller risks a verdict off by rounding.
pub const CACHE_ROUNDING: f32 = 1.0e-5;

/// How far, as a fraction of the pair's scale, the separation of a penetrating pair that
/// [`crate::ContactCache`] rebuilds on its cached face may lie below the separation of a cold
/// call (the face preference's own allowance included): the cached face is reused while its
/// gap to the SAT value at the last cold call, plus twice the motion since that call, stays
/// within this. Larger reuses faces for more frames of motion; smaller calls cold more often.
/// 0.02 of two unit boxes' scale (sizes are their half diagonals) is 0.035 length units,
/// reached only when another axis came that close; Box3D's linear slop is 0.005 m.
pub const CACHE_CONTACT_DRIFT: f32 = 0.02;

// Triangle meshes

/// `TriMesh::new`: a triangle is degenerate when twice its area is below this fraction of its
/// longest edge squared (its smallest height below this fraction of its longest edge).
/// Dimensionless. Larger rejects more slivers; smaller admits triangles whose normal is rounding
/// noise.
pub const TRIMESH_DEGENERATE_TOLERANCE: f32 = 1.0e-6;

/// Internal edges of a triangle mesh whose dihedral bend (the angle between the two triangles'
/// normals, degrees) is within this of flat count as flat: inactive, like concave ones, so no
/// contact on them takes a normal other than a triangle's own. Convex edges bent more are
/// active. Larger smooths gentler ridges into their faces' normals; smaller lets f32 noise in a
/// flat floor's vertices make seams active (ghost contacts).
pub const TRIMESH_FLAT_EDGE_DEGREES: f32 = 1.0;

/// A contact normal within this angle (degrees) of its triangle's own normal counts as the
/// face's, whatever feature it touches (the active-edge rule lets it through). Smaller sends
/// more near-face contacts through the edge checks; larger lets edge contacts tilt this much.
pub const TRIMESH_FACE_NORMAL_DEGREES: f32 = 0.05;

/// A triangle contact's points are raised to the largest separation over the axes tested (its
/// step 5) only when that separation exceeds this fraction of body B's size (dimensionless;
/// times the size, a length): a smaller gap is rounding, as when a box's corner lies exactly on
/// a triangle's edge line, and raising the points there would swap the whole depth for zero on
/// the sign of a rounding error. Larger lets points keep their depth beside wider gaps; smaller
/// lets rounding decide.
pub const TRIMESH_APART_TOLERANCE: f32 = 1.0e-5;

/// A body's contacts against a mesh merge into one manifold: the deepest triangle contact's
/// normal, and the points of the triangle contacts whose normals are within this angle (degrees)
/// of it. Larger keeps points across gentler bends (their depths measured along their own
/// triangle's normal); smaller drops them.
pub const TRIMESH_MERGE_DEGREES: f32 = 10.0;

/// Growth of a body's box before the mesh midphase, relative to the box's largest coordinate
/// magnitude plus its extent (dimensionless; times that, a length), on top of the margin: covers
/// f32 rounding of the box test. Larger only adds candidate triangles.
pub const TRIMESH_AABB_PADDING: f32 = 1.0e-5;

/// A ray hits a mesh triangle whose barycentric weights are each at least minus this
/// (dimensionless, a fraction of the triangle): the triangles on both sides of a shared edge
/// then both take a ray through the edge, so f32 rounding opens no gap along a seam. It widens
/// a triangle by this fraction of its heights; larger widens boundary triangles more.
pub const TRIMESH_RAY_EDGE_TOLERANCE: f32 = 1.0e-6;

// Compounds

/// A compound's contacts merge into one manifold per body pair: the deepest child pair's
/// normal, and the points of the child pairs whose normals are within this angle (degrees) of
/// it, as [`TRIMESH_MERGE_DEGREES`] for meshes. Larger keeps points across sharper concave
/// bends (their depths measured along their own child pair's normal); smaller drops them.
pub const COMPOUND_MERGE_DEGREES: f32 = 10.0;

/// Growth of a part's box before the compound midphase, relative to the box's largest coordinate
/// magnitude plus its extent (dimensionless; times that, a length), on top of the margin: covers
/// f32 rounding of the box test, as [`TRIMESH_AABB_PADDING`]. Larger only adds child pairs.
pub const COMPOUND_AABB_PADDING: f32 = 1.0e-5;

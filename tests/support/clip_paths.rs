//! Which way the CPU built a hull pair's manifold after the SAT (src/contact/hull_hull.rs,
//! `manifold_from_sat_and_distance`): on the SAT's axis, by the retry on the deepest axis (the
//! face-preferred axis's clip kept no point), or by the deepest-vertex fallback (no clip kept
//! one), read back from the manifold it returned; and pairs built to take each way, shared by
//! the CPU test (`hull_contacts.rs`) and the GPU test (`gpu_clip.rs`) of the clip kernel's
//! steps 7a and 7b.

use glam::Vec3;
use hullsat::constants::INCIDENT_FACE_TOLERANCE;
use hullsat::query::sat::{SatAxis, query_hulls, query_hulls_preferring_faces_by};
use hullsat::{ConvexHull, FeatureId, Manifold, Pose};

use super::analytic::{Case, slab};

/// How the CPU's manifold was built, as far as the manifold shows it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ClipPath {
    /// On the deepest axis (`query_hulls_preferring_faces_by(…, 0.0)`, this axis), which the
    /// face-preferred SAT axis was shallower than: the manifold has its normal, not the SAT's.
    Retry(SatAxis),
    /// The SAT's face axis, one point: the incident hull's deepest vertex below the reference
    /// plane, a vertex of no face the clip could take as incident (so no clip made the point).
    Fallback,
    /// Anything else (on the SAT's axis, or not told apart).
    Other,
}

/// Normals (unit, A's frame) this close are the same axis's: the manifold's, moved to world and
/// back, against the SAT's.
const SAME_NORMAL: f32 = 1.0e-5;

/// How the CPU built `m`, the manifold of hull `a` at `pose_a` against hull `b` at `pose_b`
/// (world poses) at `margin`.
pub fn cpu_clip_path(
    a: &ConvexHull,
    pose_a: &Pose,
    b: &ConvexHull,
    pose_b: &Pose,
    margin: f32,
    m: &Manifold,
) -> ClipPath {
    let b_in_a = pose_a.relative_to_self(pose_b);
    let sat = query_hulls(a, b, &b_in_a, margin);
    let normal = pose_a.rotation.inverse() * m.normal;
    let on_sat_axis = normal.distance(sat.normal) <= SAME_NORMAL;
    if sat.axis_separation < sat.separation && !on_sat_axis {
        let deepest = query_hulls_preferring_faces_by(a, b, &b_in_a, margin, 0.0);
        if normal.distance(deepest.normal) <= SAME_NORMAL {
            return ClipPath::Retry(deepest.axis);
        }
    }
    // The reference hull's frame: its face as stored, the incident hull posed in it.
    let (reference, incident, incident_pose, face, kind) = match sat.axis {
        SatAxis::FaceA(face) => (a, b, b_in_a, face, FeatureId::FACE_A),
        SatAxis::FaceB(face) => (b, a, b_in_a.inverse(), face, FeatureId::FACE_B),
        SatAxis::EdgePair { .. } => return ClipPath::Other,
    };
    if !on_sat_axis || m.point_count() != 1 {
        return ClipPath::Other;
    }
    let plane = reference.planes()[face as usize];
    let vertices: Vec<Vec3> = incident
        .vertices()
        .iter()
        .map(|&v| incident_pose.transform_point(v))
        .collect();
    let deepest = (0..vertices.len())
        .min_by(|&i, &j| {
            plane
                .signed_distance(vertices[i])
                .total_cmp(&plane.signed_distance(vertices[j]))
        })
        .expect("a hull has vertices") as u32;
    if m.points()[0].id != FeatureId::new(kind, false, face, deepest) {
        return ClipPath::Other;
    }
    // The faces the clip may take as incident: those within the tolerance of the most
    // anti-parallel to the reference normal.
    let facing: Vec<f32> = incident
        .planes()
        .iter()
        .map(|p| (incident_pose.rotation * p.normal).dot(plane.normal))
        .collect();
    let most = facing.iter().copied().fold(f32::INFINITY, f32::min);
    let on_incident_face = (0..facing.len())
        .filter(|&f| facing[f] <= most + INCIDENT_FACE_TOLERANCE)
        .any(|f| incident.face_loop(f).contains(&deepest));
    if on_incident_face {
        ClipPath::Other
    } else {
        ClipPath::Fallback
    }
}

/// A knife-edge hull: vertex 0 at the origin, its lowest point, begins a ridge rising by 0.05
/// per unit along +z to (0, 0.1, 2); the two faces along the ridge are steep (normals 73° from
/// -y), and the face most anti-parallel to +y is a narrow one at the far end, 0.1 to 0.2 above
/// the origin, tilted 11.3° from -y (normal (0, -0.98, 0.196)), which does not hold vertex 0.
/// Its top is a 0.6 to 0.4 wide face at y = 1.
pub fn knife() -> ConvexHull {
    let far = 0.1;
    let points = [
        Vec3::ZERO,
        Vec3::new(0.0, far, 2.0),
        Vec3::new(-0.02, far + 0.1, 2.5),
        Vec3::new(0.02, far + 0.1, 2.5),
        Vec3::new(-0.3, 1.0, 0.0),
        Vec3::new(0.3, 1.0, 0.0),
        Vec3::new(-0.2, 1.0, 2.5),
        Vec3::new(0.2, 1.0, 2.5),
    ];
    let hull = ConvexHull::from_points(&points).expect("a knife-edge hull");
    assert_eq!(hull.vertices()[0], Vec3::ZERO, "the edge's low end is vertex 0");
    hull
}

/// [`knife`] with its low end `depth` (0 < depth < 0.1) into the top of the slab
/// ([`slab`], top face 3 at y = 0.5), away from the slab's edges: the slab's top is the only
/// axis that deep (every other one cuts deep into the slab), its incident face (the knife's far
/// face) floats above the slab, so the clip keeps nothing and there is no deeper axis to retry
/// on: the manifold is the deepest-vertex fallback, one point at (0.1, 0.5 - depth / 2, -0.7),
/// depth `depth`, id (FACE_A, 3, 0).
pub fn knife_in_slab(depth: f32) -> Case {
    Case {
        a: slab(),
        pose_a: Pose::IDENTITY,
        b: knife(),
        pose_b: Pose::from_translation(Vec3::new(0.1, 0.5 - depth, -0.7)),
    }
}

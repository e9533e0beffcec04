//! `ConvexHull::from_mesh`: accept a given polygon mesh after checking it (in f64).
//!
//! 1. Check the vertices (at least 4, finite, within the limit) and the faces (3 to
//!    `MAX_FACE_VERTICES` distinct, existing vertices); reject unused vertices.
//! 2. Check the mesh is closed and consistently wound: every directed edge is walked once, its
//!    reverse once.
//! 3. Check each face is planar (every vertex within `HULL_PLANE_TOLERANCE` of its Newell plane).
//! 4. Check the solid has volume (else `Coplanar`) and that it is positive (else `InwardWinding`).
//! 5. Check convexity: no reflex corner in any face, no vertex in front of any face plane.
//! 6. Reject adjacent coplanar faces (the SAT's edge pruning needs distinct normals at each edge).
//! 7. Build the flat layout.

use std::collections::HashMap;

use glam::{DVec3, Vec3};

use super::{ConvexHull, HullError, MAX_FACE_VERTICES, MAX_HULL_VERTICES, topology};
use crate::constants::{HULL_COINCIDENT_TOLERANCE, HULL_FLATNESS_TOLERANCE, HULL_PLANE_TOLERANCE};

impl ConvexHull {
    /// A hull from a given convex polygon mesh (local frame, any length unit): `positions` and
    /// `faces`, each face a loop of vertex indices, counter-clockwise seen from outside.
    ///
    /// The mesh must be closed, consistently and outward wound, with planar convex faces and a
    /// convex solid, to within [`HULL_PLANE_TOLERANCE`] of the bounding-box diagonal, and use every
    /// vertex. Collinear face vertices are kept; coplanar adjacent faces are rejected, not merged
    /// (give them as one polygon, or use [`ConvexHull::from_points`], which merges them). Limits:
    /// at most [`MAX_HULL_VERTICES`] (4096) vertices, [`MAX_FACE_VERTICES`] (256) per face.
    ///
    /// # Errors
    /// [`HullError`]: `TooFewPoints`, `NonFinite`, `TooManyVertices`, `FaceTooLarge`, `BadFace`,
    /// `UnusedVertex`, `NotClosed`, `Coincident`, `Coplanar`, `InwardWinding`, `NotConvex` (also
    /// for a non-planar face), `CoplanarFaces`.
    pub fn from_mesh(positions: &[Vec3], faces: &[Vec<u32>]) -> Result<ConvexHull, HullError> {
        // Step 1.
        if positions.len() < 4 {
            return Err(HullError::TooFewPoints(positions.len()));
        }
        if let Some(index) = positions.iter().position(|p| !p.is_finite()) {
            return Err(HullError::NonFinite { index });
        }
        super::check_extent(positions)?;
        if positions.len() > MAX_HULL_VERTICES {
            return Err(HullError::TooManyVertices(positions.len()));
        }
        let mut used = vec![false; positions.len()];
        for (face, face_loop) in faces.iter().enumerate() {
            check_face_indices(face, face_loop, positions.len())?;
            for &v in face_loop {
                used[v as usize] = true;
            }
        }
        if let Some(index) = used.iter().position(|&u| !u) {
            return Err(HullError::UnusedVertex { index });
        }

        // Step 2.
        let edge_face = directed_edges(faces)?;

        // Step 3.
        let (min, max) = positions.iter().fold((DVec3::MAX, DVec3::MIN), |(lo, hi), p| {
            (lo.min(p.as_dvec3()), hi.max(p.as_dvec3()))
        });
        let diagonal = (max - min).length();
        if diagonal <= HULL_COINCIDENT_TOLERANCE * min.abs().max(max.abs()).max_element() || diagonal == 0.0 {
            return Err(HullError::Coincident);
        }
        let tolerance = HULL_PLANE_TOLERANCE * diagonal;
        let mut planes = Vec::with_capacity(faces.len());
        let mut area = 0.0;
        for (face, face_loop) in faces.iter().enumerate() {
            let (area_normal, center) = topology::newell_normal(positions, face_loop);
            if area_normal.length() <= f64::MIN_POSITIVE {
                return Err(HullError::BadFace {
                    face,
                    problem: "has zero area".to_string(),
                });
            }
            area += 0.5 * area_normal.length();
            let normal = area_normal.normalize();
            let offset = normal.dot(center);
            for &v in face_loop {
                let distance = normal.dot(positions[v as usize].as_dvec3()) - offset;
                if distance.abs() > tolerance {
                    return Err(HullError::NotConvex(format!(
                        "face {face} is not planar: vertex {v} is {distance:e} from its plane"
                    )));
                }
            }
            planes.push((normal, offset));
        }

        // Step 4: a slab of thickness t and area S has volume S t and surface about 2 S.
        let volume = signed_volume(positions, faces);
        if 2.0 * volume.abs() <= HULL_FLATNESS_TOLERANCE * diagonal * area {
            return Err(HullError::Coplanar);
        }
        if volume < 0.0 {
            return Err(HullError::InwardWinding);
        }

        // Step 5.
        for (face, face_loop) in faces.iter().enumerate() {
            let (normal, offset) = planes[face];
            let n = face_loop.len();
            for i in 0..n {
                let [a, b, c] =
                    [i + n - 1, i, i + 1].map(|k| positions[face_loop[k % n] as usize].as_dvec3());
                let turn = (b - a).cross(c - b).dot(normal) / (c - a).length().max(f64::MIN_POSITIVE);
                if turn < -tolerance {
                    return Err(HullError::NotConvex(format!(
                        "face {face} has a reflex corner at vertex {}",
                        face_loop[i]
                    )));
                }
            }
            for (v, p) in positions.iter().enumerate() {
                let distance = normal.dot(p.as_dvec3()) - offset;
                if distance > tolerance {
                    return Err(HullError::NotConvex(format!(
                        "vertex {v} is {distance:e} in front of face {face}"
                    )));
                }
            }
        }

        // Step 6.
        for (face, face_loop) in faces.iter().enumerate() {
            let (normal, offset) = planes[face];
            for (i, &from) in face_loop.iter().enumerate() {
                let to = face_loop[(i + 1) % face_loop.len()];
                let other = edge_face[&(to, from)];
                let coplanar = planes[other].0.dot(normal) > 0.0
                    && faces[other]
                        .iter()
                        .all(|&v| (normal.dot(positions[v as usize].as_dvec3()) - offset).abs() <= tolerance);
                if coplanar {
                    return Err(HullError::CoplanarFaces {
                        faces: [face.min(other), face.max(other)],
                    });
                }
            }
        }

        // Step 7.
        Ok(topology::build(positions.to_vec(), faces))
    }
}

/// Step 1 for one face: size within limits, indices existing and distinct.
fn check_face_indices(face: usize, face_loop: &[u32], vertex_count: usize) -> Result<(), HullError> {
    let bad = |problem: String| Err(HullError::BadFace { face, problem });
    if face_loop.len() < 3 {
        return bad(format!("has {} vertices, need at least 3", face_loop.len()));
    }
    if face_loop.len() > MAX_FACE_VERTICES {
        return Err(HullError::FaceTooLarge {
            face,
            count: face_loop.len(),
        });
    }
    for (i, &v) in face_loop.iter().enumerate() {
        if v as usize >= vertex_count {
            return bad(format!(
                "vertex index {v} is out of range (only {vertex_count} vertices)"
            ));
        }
        if face_loop[..i].contains(&v) {
            return bad(format!("vertex {v} appears twice"));
        }
    }
    Ok(())
}

/// Step 2: the face walking each directed edge; every edge must be walked once each way.
fn directed_edges(faces: &[Vec<u32>]) -> Result<HashMap<(u32, u32), usize>, HullError> {
    let mut edge_face = HashMap::new();
    for (face, face_loop) in faces.iter().enumerate() {
        for (v0, v1) in loop_edges(face_loop) {
            if edge_face.insert((v0, v1), face).is_some() {
                return Err(HullError::NotClosed {
                    v0,
                    v1,
                    problem: "is walked twice in the same direction (inconsistent winding, or more than \
                              two faces)"
                        .to_string(),
                });
            }
        }
    }
    for face_loop in faces {
        for (v0, v1) in loop_edges(face_loop) {
            if !edge_face.contains_key(&(v1, v0)) {
                return Err(HullError::NotClosed {
                    v0,
                    v1,
                    problem: "has a face on one side only (open mesh)".to_string(),
                });
            }
        }
    }
    Ok(edge_face)
}

/// Signed volume enclosed by the loops (positive when they are wound outward), in f64.
fn signed_volume(positions: &[Vec3], faces: &[Vec<u32>]) -> f64 {
    let origin = positions[0].as_dvec3();
    let mut six_volume = 0.0;
    for face_loop in faces {
        let a = positions[face_loop[0] as usize].as_dvec3() - origin;
        for w in face_loop[1..].windows(2) {
            let b = positions[w[0] as usize].as_dvec3() - origin;
            let c = positions[w[1] as usize].as_dvec3() - origin;
            six_volume += a.dot(b.cross(c));
        }
    }
    six_volume / 6.0
}

/// The directed edges of a loop, in order.
fn loop_edges(face_loop: &[u32]) -> impl Iterator<Item = (u32, u32)> + '_ {
    let n = face_loop.len();
    (0..n).map(move |i| (face_loop[i], face_loop[(i + 1) % n]))
}

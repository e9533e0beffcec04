//! Hull building: `ConvexHull::from_points` (quickhull) and `ConvexHull::from_mesh` (checked).

use glam::Vec3;
use hullsat::constants::HULL_PLANE_TOLERANCE;
use hullsat::hull::{MAX_HULL_INPUT_POINTS, MAX_HULL_VERTICES};
use hullsat::{ConvexHull, HullError};
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64;

fn rng() -> Pcg64 {
    Pcg64::seed_from_u64(0x5eed_4a11)
}

fn random_in_box(rng: &mut Pcg64, half: Vec3) -> Vec3 {
    Vec3::new(
        rng.random_range(-half.x..=half.x),
        rng.random_range(-half.y..=half.y),
        rng.random_range(-half.z..=half.z),
    )
}

/// `count` points spread evenly over the unit sphere (Fibonacci spiral).
fn sphere_points(count: usize) -> Vec<Vec3> {
    let golden = std::f32::consts::PI * (3.0 - 5.0f32.sqrt());
    (0..count)
        .map(|i| {
            let z = 1.0 - 2.0 * (i as f32 + 0.5) / count as f32;
            let r = (1.0 - z * z).sqrt();
            let phi = golden * i as f32;
            Vec3::new(r * phi.cos(), r * phi.sin(), z)
        })
        .collect()
}

fn diagonal(points: &[Vec3]) -> f32 {
    let (lo, hi) = points
        .iter()
        .fold((Vec3::MAX, Vec3::MIN), |(lo, hi), &p| (lo.min(p), hi.max(p)));
    (hi - lo).length()
}

/// Checks every validity property of a hull built from `points`, returns (V, E, F).
fn assert_valid(hull: &ConvexHull, points: &[Vec3]) -> (usize, usize, usize) {
    let (v, e, f) = (hull.vertices().len(), hull.edges().len(), hull.faces().len());
    assert_eq!(v as i64 - e as i64 + f as i64, 2, "Euler: V={v} E={e} F={f}");
    // Plane tolerance (twice, since a merged face's plane is refitted) plus f32 rounding.
    let tol = 2.0 * HULL_PLANE_TOLERANCE as f32 * diagonal(points)
        + 1e-6 * points.iter().map(|p| p.abs().max_element()).fold(0.0, f32::max);

    let flat = 0.01 * HULL_PLANE_TOLERANCE as f32 * diagonal(points);

    let mut faces_of_vertex = vec![0usize; v];
    for face in 0..f {
        let face_loop = hull.face_loop(face);
        let plane = hull.planes()[face];
        assert!(
            face_loop.len() >= 3,
            "face {face} has {} vertices",
            face_loop.len()
        );
        assert!(
            (plane.normal.length() - 1.0).abs() < 1e-5,
            "face {face} normal not unit"
        );
        let n = face_loop.len();
        for i in 0..n {
            let [a, b, c] = [i + n - 1, i, i + 1].map(|k| hull.vertices()[face_loop[k % n] as usize]);
            assert!(
                face_loop[..i].iter().all(|&w| w != face_loop[i]),
                "face {face} repeats a vertex"
            );
            assert!(
                plane.signed_distance(b).abs() <= tol,
                "face {face}: vertex off its plane"
            );
            // Counter-clockwise from outside and convex: each corner turns left about the normal.
            let turn = (b - a).cross(c - b).dot(plane.normal) / (c - a).length();
            assert!(
                turn >= -tol,
                "face {face}: reflex or clockwise corner, turn {turn}"
            );
            faces_of_vertex[face_loop[i] as usize] += 1;
        }
        for (i, &p) in points.iter().enumerate() {
            let d = plane.signed_distance(p);
            assert!(
                d <= tol,
                "input point {i} is {d} outside face {face} (tolerance {tol})"
            );
        }
    }
    // Every vertex used, and by at least three faces (a vertex between two faces is redundant).
    for (vertex, &count) in faces_of_vertex.iter().enumerate() {
        assert!(count >= 3, "vertex {vertex} is used by {count} faces");
    }
    for (i, edge) in hull.edges().iter().enumerate() {
        let [f0, f1] = edge.faces;
        assert!(f0 != u32::MAX && f1 != u32::MAX, "edge {i} is open");
        assert_ne!(f0, f1, "edge {i} has the same face on both sides");
        // Adjacent faces must not be coplanar: both within rounding-level noise of the larger
        // one's plane. (Faces only within the plane tolerance of each other may stay split when
        // merging them would leave a non-convex face.)
        let area = |f: u32| {
            let fl = hull.face_loop(f as usize);
            let p = |k: usize| hull.vertices()[fl[k] as usize];
            (1..fl.len() - 1)
                .map(|k| (p(k) - p(0)).cross(p(k + 1) - p(0)).length())
                .sum::<f32>()
        };
        let (big, small) = if area(f0) >= area(f1) { (f0, f1) } else { (f1, f0) };
        let plane = hull.planes()[big as usize];
        let coplanar = plane.normal.dot(hull.planes()[small as usize].normal) > 0.0
            && hull
                .face_loop(small as usize)
                .iter()
                .all(|&w| plane.signed_distance(hull.vertices()[w as usize]).abs() <= flat);
        assert!(!coplanar, "edge {i}: faces {f0} and {f1} are coplanar");
    }
    (v, e, f)
}

fn cube_corners() -> Vec<Vec3> {
    ConvexHull::cuboid(Vec3::ONE).vertices().to_vec()
}

#[test]
fn cube_from_corners_interior_and_duplicates() {
    let mut rng = rng();
    let mut points = cube_corners();
    points.extend(cube_corners());
    points.extend((0..50).map(|_| random_in_box(&mut rng, Vec3::splat(0.99))));
    points.extend(cube_corners().iter().map(|&c| c * Vec3::new(1.0, 1.0, 0.0))); // on the side faces
    let hull = ConvexHull::from_points(&points).unwrap();
    assert_eq!(assert_valid(&hull, &points), (8, 12, 6));
    assert!(hull.faces().iter().all(|f| f.count == 4));
    for corner in cube_corners() {
        assert!(hull.vertices().contains(&corner), "corner {corner} missing");
    }
}

#[test]
fn tetrahedron() {
    let points = [Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::Z, Vec3::splat(0.1)];
    let hull = ConvexHull::from_points(&points).unwrap();
    assert_eq!(assert_valid(&hull, &points), (4, 6, 4));
    assert!(hull.faces().iter().all(|f| f.count == 3));
    assert!(!hull.vertices().contains(&Vec3::splat(0.1)));
}

#[test]
fn degenerate_inputs_give_named_errors() {
    let three = [Vec3::ZERO, Vec3::X, Vec3::Y];
    assert_eq!(ConvexHull::from_points(&three), Err(HullError::TooFewPoints(3)));

    let nan = [Vec3::ZERO, Vec3::X, Vec3::new(0.0, f32::NAN, 0.0), Vec3::Z];
    assert_eq!(
        ConvexHull::from_points(&nan),
        Err(HullError::NonFinite { index: 2 })
    );
    let inf = [Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::new(f32::INFINITY, 0.0, 0.0)];
    assert_eq!(
        ConvexHull::from_points(&inf),
        Err(HullError::NonFinite { index: 3 })
    );

    let mut rng = rng();
    let same = vec![Vec3::new(3.0, -2.0, 1.0); 6];
    assert_eq!(ConvexHull::from_points(&same), Err(HullError::Coincident));
    // Spread at f32 rounding level around a point far from the origin.
    let jittered: Vec<Vec3> = (0..6)
        .map(|_| Vec3::splat(1000.0) + random_in_box(&mut rng, Vec3::splat(1e-4)))
        .collect();
    assert_eq!(ConvexHull::from_points(&jittered), Err(HullError::Coincident));

    let line: Vec<Vec3> = (0..20)
        .map(|i| Vec3::new(1.0, 2.0, 3.0) * i as f32 + random_in_box(&mut rng, Vec3::splat(1e-5)))
        .collect();
    assert_eq!(ConvexHull::from_points(&line), Err(HullError::Collinear));

    let plane: Vec<Vec3> = (0..50)
        .map(|_| {
            let p = random_in_box(&mut rng, Vec3::new(1.0, 1.0, 1e-5));
            Vec3::new(p.x, p.z + 0.3 * p.x, p.y)
        })
        .collect();
    assert_eq!(ConvexHull::from_points(&plane), Err(HullError::Coplanar));

    assert_eq!(
        ConvexHull::from_points(&sphere_points(5000)),
        Err(HullError::TooManyVertices(5000))
    );
}

#[test]
fn oversized_clouds_are_refused_before_building() {
    // A million points on a sphere took 17 s and 1.2 GB to build before the vertex limit said
    // no; the input limit answers before any work. Every point here would be a hull vertex.
    let too_many = sphere_points(MAX_HULL_INPUT_POINTS + 1);
    assert_eq!(
        ConvexHull::from_points(&too_many),
        Err(HullError::TooManyPoints(MAX_HULL_INPUT_POINTS + 1))
    );
    // At the limit the cloud is accepted for building (here it then has too many vertices).
    let mut at_limit = sphere_points(MAX_HULL_VERTICES);
    at_limit.resize(MAX_HULL_INPUT_POINTS, Vec3::ZERO);
    let hull = ConvexHull::from_points(&at_limit).unwrap();
    assert_eq!(hull.vertices().len(), MAX_HULL_VERTICES);
}

#[test]
fn random_clouds_give_valid_hulls() {
    let mut rng = rng();
    for count in [256, 10_000] {
        let points: Vec<Vec3> = (0..count)
            .map(|_| random_in_box(&mut rng, Vec3::new(2.0, 1.0, 0.5)))
            .collect();
        let hull = ConvexHull::from_points(&points).unwrap();
        assert_valid(&hull, &points);
        // In a ball, too.
        let ball: Vec<Vec3> = (0..count)
            .map(|_| random_in_box(&mut rng, Vec3::ONE))
            .filter(|p| p.length() <= 1.0)
            .map(|p| p + Vec3::new(10.0, -5.0, 3.0))
            .collect();
        let hull = ConvexHull::from_points(&ball).unwrap();
        assert_valid(&hull, &ball);
    }
}

#[test]
fn points_on_a_sphere_all_become_vertices() {
    let points = sphere_points(1000);
    let hull = ConvexHull::from_points(&points).unwrap();
    let (v, _, f) = assert_valid(&hull, &points);
    assert_eq!(v, 1000);
    // Triangles, except a few nearly coplanar pairs near the poles merged into quads.
    assert!((2 * 1000 - 14..=2 * 1000 - 4).contains(&f), "{f} faces");
}

#[test]
fn cylinder_caps_become_one_face_each() {
    let mut rng = rng();
    let sides = 64;
    let mut points = Vec::new();
    for i in 0..sides {
        let angle = std::f32::consts::TAU * i as f32 / sides as f32;
        let (s, c) = angle.sin_cos();
        points.push(Vec3::new(c, s, -1.5));
        points.push(Vec3::new(c, s, 1.5));
    }
    // Many points on the caps, and inside.
    for _ in 0..300 {
        let p = random_in_box(&mut rng, Vec3::new(0.7, 0.7, 1.5));
        points.push(Vec3::new(p.x, p.y, if p.z > 0.0 { 1.5 } else { -1.5 }));
        points.push(p);
    }
    let hull = ConvexHull::from_points(&points).unwrap();
    assert_eq!(assert_valid(&hull, &points), (2 * sides, 3 * sides, sides + 2));
    let caps: Vec<usize> = (0..hull.faces().len())
        .filter(|&f| hull.faces()[f].count as usize == sides)
        .collect();
    assert_eq!(caps.len(), 2);
    for f in caps {
        assert!(hull.planes()[f].normal.z.abs() > 0.9999);
    }
}

#[test]
fn needle_and_slab() {
    let mut rng = rng();
    for half in [
        Vec3::new(100.0, 1.0, 1.0),
        Vec3::new(100.0, 100.0, 1.0),
        Vec3::new(0.01, 1.0, 1.0),
    ] {
        let points: Vec<Vec3> = (0..2000).map(|_| random_in_box(&mut rng, half)).collect();
        let hull = ConvexHull::from_points(&points).unwrap();
        assert_valid(&hull, &points);
    }
}

#[test]
fn nearly_coplanar_noise_merges_into_cube_faces() {
    let mut rng = rng();
    let mut points = cube_corners();
    for _ in 0..1200 {
        // A random point on a random face, nudged off it by noise far below the plane tolerance.
        let axis = rng.random_range(0..3usize);
        let mut p = random_in_box(&mut rng, Vec3::ONE);
        p[axis] = if rng.random::<bool>() { 1.0 } else { -1.0 } + rng.random_range(-1e-6..=1e-6);
        points.push(p);
    }
    let hull = ConvexHull::from_points(&points).unwrap();
    assert_eq!(assert_valid(&hull, &points), (8, 12, 6));
}

#[test]
fn hull_of_hull_vertices_is_the_same_hull() {
    let mut rng = rng();
    let points: Vec<Vec3> = (0..500).map(|_| random_in_box(&mut rng, Vec3::ONE)).collect();
    let hull = ConvexHull::from_points(&points).unwrap();
    let again = ConvexHull::from_points(hull.vertices()).unwrap();
    assert_eq!(again.vertices().len(), hull.vertices().len());
    assert_eq!(again.faces().len(), hull.faces().len());
    assert!((again.centroid() - hull.centroid()).length() < 1e-5);
}

#[test]
fn rotated_and_shifted_shapes_over_many_seeds() {
    let mut rng = rng();
    for seed in 0..30 {
        let rotation = glam::Quat::from_euler(
            glam::EulerRot::XYZ,
            rng.random_range(-3.0..3.0),
            rng.random_range(-3.0..3.0),
            rng.random_range(-3.0..3.0),
        );
        let shift = random_in_box(&mut rng, Vec3::splat(20.0));
        let half = Vec3::new(
            rng.random_range(0.05..5.0),
            rng.random_range(0.05..5.0),
            rng.random_range(0.05..5.0),
        );
        let place = |p: Vec3| rotation * p + shift;
        // A box's corners, points on its faces and inside it, rotated (so not exactly coplanar).
        let mut points: Vec<Vec3> = cube_corners().iter().map(|&c| place(c * half)).collect();
        for _ in 0..200 {
            let mut p = random_in_box(&mut rng, half);
            let axis = rng.random_range(0..3usize);
            if rng.random::<bool>() {
                p[axis] = half[axis].copysign(p[axis]);
            }
            points.push(place(p));
        }
        let hull = ConvexHull::from_points(&points).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        assert_valid(&hull, &points);
        assert_eq!(hull.faces().len(), 6, "seed {seed}: rotated box faces");

        // A prism with many cap points.
        let sides = rng.random_range(3..40usize);
        let mut prism = Vec::new();
        for i in 0..sides {
            let (s, c) = (std::f32::consts::TAU * i as f32 / sides as f32).sin_cos();
            prism.push(place(Vec3::new(c, s, -half.z)));
            prism.push(place(Vec3::new(c, s, half.z)));
        }
        for _ in 0..100 {
            // Within the inscribed circle (radius at least 0.5) of any prism section.
            let p = random_in_box(&mut rng, Vec3::new(0.35, 0.35, half.z));
            prism.push(place(Vec3::new(p.x, p.y, half.z.copysign(p.z))));
        }
        let hull = ConvexHull::from_points(&prism).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        assert_valid(&hull, &prism);
        assert_eq!(hull.faces().len(), sides + 2, "seed {seed}: prism faces");

        // A ball, squashed into a needle or a slab.
        let squash = [Vec3::new(1.0, 0.01, 0.01), Vec3::new(1.0, 1.0, 0.01), Vec3::ONE][seed % 3];
        let ball: Vec<Vec3> = (0..500)
            .map(|_| random_in_box(&mut rng, Vec3::ONE))
            .filter(|p| p.length() <= 1.0)
            .map(|p| place(p * squash * 3.0))
            .collect();
        let hull = ConvexHull::from_points(&ball).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        assert_valid(&hull, &ball);
    }
}

/// The cube's loops as `from_mesh` input.
fn cube_mesh() -> (Vec<Vec3>, Vec<Vec<u32>>) {
    let cube = ConvexHull::cuboid(Vec3::new(1.0, 2.0, 3.0));
    let loops = (0..6).map(|f| cube.face_loop(f).to_vec()).collect();
    (cube.vertices().to_vec(), loops)
}

#[test]
fn from_mesh_accepts_a_cube_of_quads() {
    let (positions, faces) = cube_mesh();
    let hull = ConvexHull::from_mesh(&positions, &faces).unwrap();
    assert_eq!(assert_valid(&hull, &positions), (8, 12, 6));
    assert_eq!(hull, ConvexHull::cuboid(Vec3::new(1.0, 2.0, 3.0)));
}

#[test]
fn from_mesh_accepts_a_hull_built_from_points() {
    let points = sphere_points(300);
    let hull = ConvexHull::from_points(&points).unwrap();
    let loops: Vec<Vec<u32>> = (0..hull.faces().len())
        .map(|f| hull.face_loop(f).to_vec())
        .collect();
    assert_eq!(ConvexHull::from_mesh(hull.vertices(), &loops), Ok(hull));
}

#[test]
fn from_mesh_rejects_bad_meshes() {
    let (positions, faces) = cube_mesh();

    let open = faces[1..].to_vec();
    assert!(matches!(
        ConvexHull::from_mesh(&positions, &open),
        Err(HullError::NotClosed { .. })
    ));

    let mut flipped_one = faces.clone();
    flipped_one[2].reverse();
    assert!(matches!(
        ConvexHull::from_mesh(&positions, &flipped_one),
        Err(HullError::NotClosed { .. })
    ));

    let inward: Vec<Vec<u32>> = faces.iter().map(|f| f.iter().rev().copied().collect()).collect();
    assert_eq!(
        ConvexHull::from_mesh(&positions, &inward),
        Err(HullError::InwardWinding)
    );

    // +Z face (index 5) replaced by four triangles meeting at a dented centre.
    let mut dented_positions = positions.clone();
    dented_positions.push(Vec3::new(0.0, 0.0, 2.0));
    let mut dented = faces[..5].to_vec();
    let top = &faces[5];
    for i in 0..4 {
        dented.push(vec![top[i], top[(i + 1) % 4], 8]);
    }
    let err = ConvexHull::from_mesh(&dented_positions, &dented).unwrap_err();
    assert!(
        matches!(err, HullError::NotConvex(ref m) if m.contains("in front of face")),
        "{err}"
    );

    let mut bent = positions.clone();
    bent[7].z += 0.5;
    let err = ConvexHull::from_mesh(&bent, &faces).unwrap_err();
    assert!(
        matches!(err, HullError::NotConvex(ref m) if m.contains("not planar")),
        "{err}"
    );

    let mut bad_index = faces.clone();
    bad_index[3][1] = 99;
    assert!(matches!(
        ConvexHull::from_mesh(&positions, &bad_index),
        Err(HullError::BadFace { face: 3, .. })
    ));

    let mut repeated = faces.clone();
    repeated[0][1] = repeated[0][0];
    assert!(matches!(
        ConvexHull::from_mesh(&positions, &repeated),
        Err(HullError::BadFace { face: 0, .. })
    ));

    let mut nan = positions.clone();
    nan[4].y = f32::NAN;
    assert_eq!(
        ConvexHull::from_mesh(&nan, &faces),
        Err(HullError::NonFinite { index: 4 })
    );

    let mut unused = positions.clone();
    unused.push(Vec3::ZERO);
    assert_eq!(
        ConvexHull::from_mesh(&unused, &faces),
        Err(HullError::UnusedVertex { index: 8 })
    );

    // A flat square given as two back-to-back faces: closed, but without volume.
    let square = [Vec3::ZERO, Vec3::X, Vec3::new(1.0, 1.0, 0.0), Vec3::Y];
    let pillow = vec![vec![0, 1, 2, 3], vec![3, 2, 1, 0]];
    assert_eq!(ConvexHull::from_mesh(&square, &pillow), Err(HullError::Coplanar));

    assert_eq!(
        ConvexHull::from_mesh(&square[..3], &[vec![0, 1, 2]]),
        Err(HullError::TooFewPoints(3))
    );

    // The cube with its quads split into triangles: adjacent coplanar faces.
    let triangles: Vec<Vec<u32>> = faces
        .iter()
        .flat_map(|f| [vec![f[0], f[1], f[2]], vec![f[0], f[2], f[3]]])
        .collect();
    assert!(matches!(
        ConvexHull::from_mesh(&positions, &triangles),
        Err(HullError::CoplanarFaces { .. })
    ));
}

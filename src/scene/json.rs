//! The JSON scene format (input) and the JSON results format (output).
//!
//! Scene:
//! ```text
//! { "shapes": [ {"hull": {"points": [[x,y,z], ...]}}, {"box": {"half_extents": [hx,hy,hz]}},
//!               {"sphere": {"radius": r}}, {"capsule": {"half_height": h, "radius": r}},
//!               {"half_space": {"normal": [x,y,z], "offset": d}} ],
//!   "bodies": [ {"shape": 0, "position": [x,y,z], "rotation": [x,y,z,w]} ],
//!   "pairs": [[0,1], ...],   (optional: absent = find them with the broadphase)
//!   "margin": 0.0 }          (optional, default 0)
//! ```
//! Results: `{"manifolds": [{"pair": [a,b], "normal": [x,y,z], "separation": s,
//! "points": [{"position": [x,y,z], "depth": d, "id": n}]}]}`.
//!
//! Parsing:
//! 1. Read the text into a [`serde_json::Value`] (syntax errors carry line and column).
//! 2. Walk it by hand so every error names its JSON path (`bodies[3].rotation`); unknown keys
//!    are rejected so a misspelt optional key (`"margn"`) does not pass silently.
//! 3. Numbers are read as `f64` and must stay finite as `f32` (NaN and inf rejected here);
//!    body positions stay `f64` (precise far from the origin).
//! 4. Build shapes (hull errors map to `shapes[i].hull`), then run [`validate_batch`] so bad
//!    indices, self pairs and non-unit rotations are reported before any work.

use std::fmt::Write;

use glam::{DVec3, Quat, Vec3};
use serde_json::{Map, Value};

use crate::constants::{MAX_SHAPE_SIZE, MIN_SHAPE_SIZE};
use crate::hull::ConvexHull;
use crate::manifold::Manifold;
use crate::pose::Pose;
use crate::scene::{Body, InputError, Scene, validate_batch};
use crate::shape::{Capsule, Cuboid, HalfSpace, Shape, ShapeError, Sphere};

/// The shape kinds a scene may use, as spelt in JSON.
const SHAPE_KINDS: &str = "hull, box, sphere, capsule, half_space";

/// Parses and validates a scene from JSON text (format in the module docs). Rotations come
/// back normalized. Errors name the JSON path of the problem; syntax errors use the path `$`
/// and give the line and column.
pub fn parse_scene_json(text: &str) -> Result<Scene, InputError> {
    let root: Value = serde_json::from_str(text).map_err(syntax_error)?;
    let root = Fields::new(&root, "$", &["shapes", "bodies", "pairs", "margin"])?;
    let (shapes, path) = root.get("shapes")?;
    let shapes = array(shapes, &path)?
        .iter()
        .enumerate()
        .map(|(i, v)| parse_shape(v, &format!("shapes[{i}]")))
        .collect::<Result<Vec<_>, _>>()?;
    let (bodies, path) = root.get("bodies")?;
    let bodies = array(bodies, &path)?
        .iter()
        .enumerate()
        .map(|(i, v)| parse_body(v, &format!("bodies[{i}]")))
        .collect::<Result<Vec<_>, _>>()?;
    let pairs = match root.get_optional("pairs") {
        None => None,
        Some((pairs, path)) => Some(
            array(pairs, &path)?
                .iter()
                .enumerate()
                .map(|(i, v)| parse_pair(v, &format!("pairs[{i}]")))
                .collect::<Result<Vec<_>, _>>()?,
        ),
    };
    let margin = match root.get_optional("margin") {
        None => 0.0,
        Some((margin, path)) => number(margin, &path)?,
    };
    let bodies = validate_batch(&shapes, &bodies, pairs.as_deref().unwrap_or(&[]), margin)?;
    Ok(Scene {
        shapes,
        bodies,
        pairs,
        margin,
    })
}

/// Writes `scene` in the JSON scene format (one shape, body or pair per line), such that
/// [`parse_scene_json`] reads back the same scene. Hulls are written as their vertices.
pub fn write_scene_json(scene: &Scene) -> String {
    let mut out = String::from("{\n  \"shapes\": [");
    for (i, shape) in scene.shapes.iter().enumerate() {
        out.push_str(if i == 0 { "\n    " } else { ",\n    " });
        write_shape(&mut out, shape);
    }
    out.push_str("\n  ],\n  \"bodies\": [");
    for (i, body) in scene.bodies.iter().enumerate() {
        out.push_str(if i == 0 { "\n    " } else { ",\n    " });
        let q = body.pose.rotation;
        let _ = write!(
            out,
            "{{\"shape\": {}, \"position\": {}, \"rotation\": [{}, {}, {}, {}]}}",
            body.shape,
            dvec3(body.pose.translation),
            q.x,
            q.y,
            q.z,
            q.w
        );
    }
    out.push_str("\n  ]");
    if let Some(pairs) = &scene.pairs {
        out.push_str(",\n  \"pairs\": [");
        for (i, [a, b]) in pairs.iter().enumerate() {
            out.push_str(if i == 0 { "\n    " } else { ",\n    " });
            let _ = write!(out, "[{a}, {b}]");
        }
        out.push_str("\n  ]");
    }
    let _ = write!(out, ",\n  \"margin\": {}\n}}\n", scene.margin);
    out
}

/// Writes the results: one entry per pair that has a manifold (`results[i]` belongs to
/// `pairs[i]`), in pair order, one manifold per line. Positions and normals are world space.
pub fn write_results_json(pairs: &[[u32; 2]], results: &[Option<Manifold>]) -> String {
    let mut out = String::from("{\"manifolds\": [");
    let mut first = true;
    for ([a, b], manifold) in pairs.iter().zip(results) {
        let Some(m) = manifold else { continue };
        out.push_str(if first { "\n  " } else { ",\n  " });
        first = false;
        let _ = write!(
            out,
            "{{\"pair\": [{a}, {b}], \"normal\": {}, \"separation\": {}, \"points\": [",
            vec3(m.normal),
            m.separation
        );
        for (j, p) in m.points().iter().enumerate() {
            let _ = write!(
                out,
                "{}{{\"position\": {}, \"depth\": {}, \"id\": {}}}",
                if j == 0 { "" } else { ", " },
                dvec3(p.position),
                p.depth,
                p.id.0
            );
        }
        out.push_str("]}");
    }
    out.push_str(if first { "]}\n" } else { "\n]}\n" });
    out
}

fn write_shape(out: &mut String, shape: &Shape) {
    let _ = match shape {
        Shape::Hull(hull) => {
            let points: Vec<String> = hull.vertices().iter().map(|&v| vec3(v)).collect();
            write!(out, "{{\"hull\": {{\"points\": [{}]}}}}", points.join(", "))
        }
        Shape::Cuboid(c) => write!(
            out,
            "{{\"box\": {{\"half_extents\": {}}}}}",
            vec3(c.half_extents())
        ),
        Shape::Sphere(s) => write!(out, "{{\"sphere\": {{\"radius\": {}}}}}", s.radius),
        Shape::Capsule(c) => write!(
            out,
            "{{\"capsule\": {{\"half_height\": {}, \"radius\": {}}}}}",
            c.half_height, c.radius
        ),
        Shape::HalfSpace(h) => write!(
            out,
            "{{\"half_space\": {{\"normal\": {}, \"offset\": {}}}}}",
            vec3(h.normal),
            h.offset
        ),
    };
}

/// `[x, y, z]`; `f32`'s `Display` is the shortest text that reads back to the same value.
fn vec3(v: Vec3) -> String {
    format!("[{}, {}, {}]", v.x, v.y, v.z)
}

/// `[x, y, z]` of an f64 vector (world positions), shortest text that reads back exactly.
fn dvec3(v: DVec3) -> String {
    format!("[{}, {}, {}]", v.x, v.y, v.z)
}

fn syntax_error(err: serde_json::Error) -> InputError {
    // serde_json's message already ends with "at line L column C".
    let hint = if err.to_string().starts_with("number out of range") {
        " (expected finite numbers)"
    } else {
        ""
    };
    InputError::new("$", format!("invalid JSON: {err}{hint}"))
}

fn parse_shape(value: &Value, path: &str) -> Result<Shape, InputError> {
    let obj = object(value, path)?;
    let mut keys = obj.keys();
    let (Some(kind), None) = (keys.next(), keys.next()) else {
        return Err(InputError::new(
            path,
            format!("expected an object with exactly one key, the shape kind ({SHAPE_KINDS})"),
        ));
    };
    let kind_path = format!("{path}.{kind}");
    let value = &obj[kind];
    let shape = match kind.as_str() {
        "hull" => {
            let fields = Fields::new(value, &kind_path, &["points"])?;
            let (points, points_path) = fields.get("points")?;
            let points = array(points, &points_path)?
                .iter()
                .enumerate()
                .map(|(i, v)| Ok(Vec3::from_array(numbers(v, &format!("{points_path}[{i}]"))?)))
                .collect::<Result<Vec<_>, InputError>>()?;
            let hull =
                ConvexHull::from_points(&points).map_err(|e| InputError::new(&kind_path, e.to_string()))?;
            return Ok(Shape::Hull(hull));
        }
        "box" => {
            let fields = Fields::new(value, &kind_path, &["half_extents"])?;
            Cuboid::new(Vec3::from_array(fields.numbers("half_extents")?)).map(Shape::Cuboid)
        }
        "sphere" => {
            let fields = Fields::new(value, &kind_path, &["radius"])?;
            Sphere::new(fields.number("radius")?).map(Shape::Sphere)
        }
        "capsule" => {
            let fields = Fields::new(value, &kind_path, &["half_height", "radius"])?;
            Capsule::new(fields.number("half_height")?, fields.number("radius")?).map(Shape::Capsule)
        }
        "half_space" => {
            let fields = Fields::new(value, &kind_path, &["normal", "offset"])?;
            HalfSpace::new(
                Vec3::from_array(fields.numbers("normal")?),
                fields.number("offset")?,
            )
            .map(Shape::HalfSpace)
        }
        other => {
            return Err(InputError::new(
                path,
                format!("unknown shape kind \"{other}\" (expected one of {SHAPE_KINDS})"),
            ));
        }
    };
    shape.map_err(|e| shape_error(&kind_path, e))
}

/// Places a shape parameter error at the parameter's path (`shapes[2].box.half_extents.x`).
fn shape_error(path: &str, err: ShapeError) -> InputError {
    match err {
        ShapeError::NotPositive { name, value } => InputError::new(
            format!("{path}.{name}"),
            format!("expected a positive finite number, got {value}"),
        ),
        ShapeError::BadNormal => InputError::new(format!("{path}.normal"), "expected a non-zero vector"),
        ShapeError::BadOffset(_) => InputError::new(format!("{path}.offset"), err.to_string()),
        ShapeError::OutOfRange { name, value } => InputError::new(
            format!("{path}.{name}"),
            format!("{value:e} is outside the supported range {MIN_SHAPE_SIZE:e}..={MAX_SHAPE_SIZE:e}"),
        ),
    }
}

fn parse_body(value: &Value, path: &str) -> Result<Body, InputError> {
    let fields = Fields::new(value, path, &["shape", "position", "rotation"])?;
    let (shape, shape_path) = fields.get("shape")?;
    Ok(Body {
        shape: index(shape, &shape_path)?,
        pose: Pose::new(
            DVec3::from_array(fields.numbers_f64("position")?),
            Quat::from_array(fields.numbers("rotation")?),
        ),
    })
}

fn parse_pair(value: &Value, path: &str) -> Result<[u32; 2], InputError> {
    match value.as_array().map(Vec::as_slice) {
        Some([a, b]) => Ok([index(a, path)?, index(b, path)?]),
        _ => Err(InputError::new(
            path,
            format!("expected 2 body indices [a, b], got {}", describe(value)),
        )),
    }
}

/// A JSON object with its path and the keys it may have; reads required fields by name.
struct Fields<'a> {
    map: &'a Map<String, Value>,
    path: &'a str,
}

impl<'a> Fields<'a> {
    /// `value` as an object at `path` whose keys are all in `known`.
    fn new(value: &'a Value, path: &'a str, known: &[&str]) -> Result<Self, InputError> {
        let map = object(value, path)?;
        if let Some(key) = map.keys().find(|k| !known.contains(&k.as_str())) {
            return Err(InputError::new(
                join(path, key),
                format!("unknown field (expected one of: {})", known.join(", ")),
            ));
        }
        Ok(Fields { map, path })
    }

    /// A required field and its path.
    fn get(&self, key: &str) -> Result<(&'a Value, String), InputError> {
        let path = join(self.path, key);
        match self.map.get(key) {
            Some(value) => Ok((value, path)),
            None => Err(InputError::new(path, "missing field")),
        }
    }

    /// An optional field and its path.
    fn get_optional(&self, key: &str) -> Option<(&'a Value, String)> {
        self.map.get(key).map(|value| (value, join(self.path, key)))
    }

    fn number(&self, key: &str) -> Result<f32, InputError> {
        let (value, path) = self.get(key)?;
        number(value, &path)
    }

    fn numbers<const N: usize>(&self, key: &str) -> Result<[f32; N], InputError> {
        let (value, path) = self.get(key)?;
        numbers(value, &path)
    }

    fn numbers_f64<const N: usize>(&self, key: &str) -> Result<[f64; N], InputError> {
        let (value, path) = self.get(key)?;
        let error = || {
            InputError::new(
                &path,
                format!("expected {N} finite numbers, got {}", describe(value)),
            )
        };
        let items = value.as_array().filter(|a| a.len() == N).ok_or_else(error)?;
        let mut out = [0.0; N];
        for (o, item) in out.iter_mut().zip(items) {
            *o = item.as_f64().filter(|x| x.is_finite()).ok_or_else(error)?;
        }
        Ok(out)
    }
}

/// The path of `key` inside the object at `path` (top-level keys are written bare: `margin`).
fn join(path: &str, key: &str) -> String {
    if path == "$" {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn object<'a>(value: &'a Value, path: &str) -> Result<&'a Map<String, Value>, InputError> {
    value
        .as_object()
        .ok_or_else(|| InputError::new(path, format!("expected an object, got {}", describe(value))))
}

fn array<'a>(value: &'a Value, path: &str) -> Result<&'a [Value], InputError> {
    value
        .as_array()
        .map(Vec::as_slice)
        .ok_or_else(|| InputError::new(path, format!("expected an array, got {}", describe(value))))
}

/// A number that is finite as `f32`.
fn number(value: &Value, path: &str) -> Result<f32, InputError> {
    finite_f32(value)
        .ok_or_else(|| InputError::new(path, format!("expected a finite number, got {}", describe(value))))
}

/// An array of exactly `N` numbers, each finite as `f32`.
fn numbers<const N: usize>(value: &Value, path: &str) -> Result<[f32; N], InputError> {
    let error = || {
        InputError::new(
            path,
            format!("expected {N} finite numbers, got {}", describe(value)),
        )
    };
    let items = value.as_array().filter(|a| a.len() == N).ok_or_else(error)?;
    let mut out = [0.0; N];
    for (o, item) in out.iter_mut().zip(items) {
        *o = finite_f32(item).ok_or_else(error)?;
    }
    Ok(out)
}

fn finite_f32(value: &Value) -> Option<f32> {
    value.as_f64().map(|x| x as f32).filter(|x| x.is_finite())
}

/// A non-negative integer index that fits `u32`.
fn index(value: &Value, path: &str) -> Result<u32, InputError> {
    value.as_u64().and_then(|i| u32::try_from(i).ok()).ok_or_else(|| {
        InputError::new(
            path,
            format!("expected a non-negative integer index, got {}", describe(value)),
        )
    })
}

/// A short description of a JSON value for error messages: the value itself when it is a
/// scalar (numbers out of `f32` range stay visible), else its type.
fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) if s.len() <= 40 => format!("the string \"{s}\""),
        Value::String(_) => "a string".into(),
        Value::Array(a) => format!("an array of {} items", a.len()),
        Value::Object(_) => "an object".into(),
    }
}

/// For formats that extend the scene with keys of their own (`hullsat raycast`'s `rays`): parses
/// `text` and reads its `shapes` and `bodies` as [`parse_scene_json`] does (bodies checked, their
/// rotations normalized). The document's keys must be `shapes`, `bodies` or one of
/// `extra_keys`; it is returned for the caller to read those.
pub fn parse_scene_extension(
    text: &str,
    extra_keys: &[&str],
) -> Result<(Value, Vec<Shape>, Vec<Body>), InputError> {
    let root: Value = serde_json::from_str(text).map_err(syntax_error)?;
    let known: Vec<&str> = ["shapes", "bodies"].iter().chain(extra_keys).copied().collect();
    let fields = Fields::new(&root, "$", &known)?;
    let (shapes, path) = fields.get("shapes")?;
    let shapes = array(shapes, &path)?
        .iter()
        .enumerate()
        .map(|(i, v)| parse_shape(v, &format!("shapes[{i}]")))
        .collect::<Result<Vec<_>, _>>()?;
    let (bodies, path) = fields.get("bodies")?;
    let bodies = array(bodies, &path)?
        .iter()
        .enumerate()
        .map(|(i, v)| parse_body(v, &format!("bodies[{i}]")))
        .collect::<Result<Vec<_>, _>>()?;
    let bodies = validate_batch(&shapes, &bodies, &[], 0.0)?;
    Ok((root, shapes, bodies))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(text: &str) -> String {
        parse_scene_json(text).unwrap_err().to_string()
    }

    const TWO_SPHERES: &str = r#"{"shapes": [{"sphere": {"radius": 1}}],
        "bodies": [{"shape": 0, "position": [0,0,0], "rotation": [0,0,0,1]},
                   {"shape": 0, "position": [1.5,0,0], "rotation": [0,0,0,1]}],
        "pairs": [[0, 1]], "margin": 0.25}"#;

    #[test]
    fn parses_a_valid_scene() {
        let scene = parse_scene_json(TWO_SPHERES).unwrap();
        assert_eq!(scene.shapes, vec![Shape::Sphere(Sphere { radius: 1.0 })]);
        assert_eq!(scene.bodies.len(), 2);
        assert_eq!(scene.bodies[1].pose.translation, DVec3::new(1.5, 0.0, 0.0));
        assert_eq!(scene.pairs, Some(vec![[0, 1]]));
        assert_eq!(scene.margin, 0.25);
    }

    #[test]
    fn pairs_and_margin_are_optional() {
        let scene = parse_scene_json(
            r#"{"shapes": [{"box": {"half_extents": [1,2,3]}}],
                "bodies": [{"shape": 0, "position": [0,0,0], "rotation": [0,0,0,1]}]}"#,
        )
        .unwrap();
        assert_eq!(scene.pairs, None);
        assert_eq!(scene.margin, 0.0);
    }

    #[test]
    fn written_scene_reads_back_identically() {
        let scene = Scene {
            shapes: vec![
                Shape::Cuboid(Cuboid::new(Vec3::new(0.5, 0.25, 1.0e-3)).unwrap()),
                Shape::Sphere(Sphere::new(0.1).unwrap()),
                Shape::Capsule(Capsule::new(0.7, 0.3).unwrap()),
                Shape::HalfSpace(HalfSpace::new(Vec3::Y, -2.5).unwrap()),
            ],
            bodies: vec![
                Body {
                    shape: 0,
                    pose: Pose::new(Vec3::new(1.0e6, -3.3, 0.1), Quat::from_rotation_y(0.3)),
                },
                Body {
                    shape: 2,
                    pose: Pose::new(Vec3::new(0.0, 1.0 / 3.0, 7.0), Quat::from_rotation_x(-1.1)),
                },
                Body {
                    shape: 3,
                    pose: Pose::IDENTITY,
                },
            ],
            pairs: Some(vec![[0, 1], [2, 1]]),
            margin: 0.01,
        };
        let text = write_scene_json(&scene);
        let back = parse_scene_json(&text).unwrap();
        assert_eq!(back.shapes, scene.shapes);
        assert_eq!(back.pairs, scene.pairs);
        assert_eq!(back.margin, scene.margin);
        for (b, s) in back.bodies.iter().zip(&scene.bodies) {
            assert_eq!(b.shape, s.shape);
            assert_eq!(b.pose.translation, s.pose.translation);
            // Parsing renormalizes the rotation, which may move the last bit.
            assert!(b.pose.rotation.abs_diff_eq(s.pose.rotation, 1.0e-7));
        }
    }

    #[test]
    fn results_list_only_pairs_with_manifolds_in_order() {
        let mut m = Manifold::new(Vec3::Y, -0.5);
        m.push(crate::manifold::ContactPoint {
            position: DVec3::new(1.0, 2.0, 3.0),
            depth: 0.5,
            id: crate::manifold::FeatureId(7),
        });
        let text = write_results_json(&[[0, 1], [2, 3], [4, 5]], &[None, Some(m), Some(m.swapped())]);
        let v: Value = serde_json::from_str(&text).unwrap();
        let list = v["manifolds"].as_array().unwrap();
        assert_eq!(list.len(), 2);
        assert_eq!(list[0]["pair"], serde_json::json!([2, 3]));
        let floats = |v: &Value| -> Vec<f64> {
            v.as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap())
                .collect()
        };
        assert_eq!(floats(&list[0]["normal"]), [0.0, 1.0, 0.0]);
        assert_eq!(list[0]["separation"].as_f64(), Some(-0.5));
        let points = list[0]["points"].as_array().unwrap();
        assert_eq!(points.len(), 1);
        assert_eq!(floats(&points[0]["position"]), [1.0, 2.0, 3.0]);
        assert_eq!(points[0]["depth"].as_f64(), Some(0.5));
        assert_eq!(points[0]["id"], serde_json::json!(7));
        assert_eq!(list[1]["pair"], serde_json::json!([4, 5]));
        assert_eq!(floats(&list[1]["normal"]), [0.0, -1.0, 0.0]);
        let empty: Value = serde_json::from_str(&write_results_json(&[[0, 1]], &[None])).unwrap();
        assert_eq!(empty, serde_json::json!({"manifolds": []}));
    }

    #[test]
    fn syntax_errors_give_line_and_column() {
        let e = error("{\"shapes\": [\n  {\"sphere\": {\"radius\": 1}}\n  \"bodies\": []}");
        assert!(e.starts_with("$: invalid JSON: "), "{e}");
        assert!(e.contains("line 3 column 3"), "{e}");
    }

    #[test]
    fn numbers_beyond_range_are_rejected() {
        // 1e999 overflows f64: serde_json refuses it while parsing.
        let e = error(&TWO_SPHERES.replace("1.5,0,0", "1e999,0,0"));
        assert!(
            e.contains("number out of range") && e.contains("expected finite numbers"),
            "{e}"
        );
        // Positions are f64: 1e39 is finite but beyond the supported range.
        assert_eq!(
            error(&TWO_SPHERES.replace("1.5,0,0", "1e39,0,0")),
            "bodies[1].position: coordinate 1e39 is outside the supported range ±1e12"
        );
        assert_eq!(
            error(&TWO_SPHERES.replace("0.25", "1e39")),
            "margin: expected a finite number, got 1e+39"
        );
    }

    #[test]
    fn each_problem_names_its_path() {
        let cases = [
            (
                "\"radius\": 1",
                "\"radius\": -1",
                "shapes[0].sphere.radius: expected a positive finite number, got -1",
            ),
            (
                "\"radius\": 1",
                "\"radius\": \"1\"",
                "shapes[0].sphere.radius: expected a finite number, got the string \"1\"",
            ),
            (
                "\"radius\": 1",
                "\"r\": 1",
                "shapes[0].sphere.r: unknown field (expected one of: radius)",
            ),
            (
                "{\"sphere\"",
                "{\"cone\"",
                "shapes[0]: unknown shape kind \"cone\" (expected one of hull, box, sphere, capsule, half_space)",
            ),
            (
                "\"rotation\": [0,0,0,1]}]",
                "\"rotation\": [0,0,0.5,1]}]",
                "bodies[1].rotation: quaternion length 1.118034 is not within 0.001 of 1",
            ),
            (
                "\"rotation\": [0,0,0,1]}]",
                "\"rotation\": [0,0,1]}]",
                "bodies[1].rotation: expected 4 finite numbers, got an array of 3 items",
            ),
            (
                "\"shape\": 0, \"position\": [1.5",
                "\"shape\": 2, \"position\": [1.5",
                "bodies[1].shape: shape 2 does not exist (1 shapes)",
            ),
            (
                "\"shape\": 0, \"position\": [1.5",
                "\"shape\": -1, \"position\": [1.5",
                "bodies[1].shape: expected a non-negative integer index, got -1",
            ),
            (
                "\"shape\": 0, \"position\": [1.5,0,0], ",
                "\"shape\": 0, ",
                "bodies[1].position: missing field",
            ),
            (
                "[[0, 1]]",
                "[[0, 1], [1, 12]]",
                "pairs[1]: body 12 does not exist",
            ),
            ("[[0, 1]]", "[[1, 1]]", "pairs[0]: body 1 is paired with itself"),
            (
                "[[0, 1]]",
                "[[0, 1, 2]]",
                "pairs[0]: expected 2 body indices [a, b], got an array of 3 items",
            ),
            ("[[0, 1]]", "{}", "pairs: expected an array, got an object"),
            ("0.25", "-1", "margin: expected a finite number >= 0, got -1"),
            (
                "\"margin\"",
                "\"margn\"",
                "margn: unknown field (expected one of: shapes, bodies, pairs, margin)",
            ),
        ];
        for (from, to, expected) in cases {
            let text = TWO_SPHERES.replacen(from, to, 1);
            assert_ne!(text, TWO_SPHERES, "{from}");
            assert_eq!(error(&text), expected);
        }
        assert_eq!(error("[]"), "$: expected an object, got an array of 0 items");
        assert_eq!(error("{\"bodies\": []}"), "shapes: missing field");
    }

    #[test]
    fn primitive_parameters_are_checked() {
        let scene = |shape: &str| format!(r#"{{"shapes": [{shape}], "bodies": []}}"#);
        assert_eq!(
            error(&scene(r#"{"box": {"half_extents": [1, 0, 1]}}"#)),
            "shapes[0].box.half_extents.y: expected a positive finite number, got 0"
        );
        assert_eq!(
            error(&scene(r#"{"half_space": {"normal": [0, 0, 0], "offset": 1}}"#)),
            "shapes[0].half_space.normal: expected a non-zero vector"
        );
        assert_eq!(
            error(&scene(r#"{"capsule": {"radius": 1}}"#)),
            "shapes[0].capsule.half_height: missing field"
        );
        assert_eq!(
            error(&scene(
                r#"{"box": {"half_extents": [1, 1, 1]}, "sphere": {"radius": 1}}"#
            )),
            "shapes[0]: expected an object with exactly one key, the shape kind \
             (hull, box, sphere, capsule, half_space)"
        );
        assert_eq!(
            error(&scene(r#"{"hull": {"points": [[0, 0, 0], [1, 0]]}}"#)),
            "shapes[0].hull.points[1]: expected 3 finite numbers, got an array of 2 items"
        );
    }

    #[test]
    fn hull_errors_name_the_shape() {
        let text = r#"{"shapes": [{"hull": {"points": [[0,0,0],[1,0,0],[0,1,0],[1,1,0]]}}], "bodies": []}"#;
        assert_eq!(error(text), "shapes[0].hull: points are coplanar");
    }

    #[test]
    fn two_half_spaces_cannot_pair() {
        let text = r#"{"shapes": [{"half_space": {"normal": [0,1,0], "offset": 0}}],
            "bodies": [{"shape": 0, "position": [0,0,0], "rotation": [0,0,0,1]},
                       {"shape": 0, "position": [0,1,0], "rotation": [0,0,0,1]}],
            "pairs": [[0, 1]]}"#;
        assert_eq!(
            error(text),
            "pairs[0]: two half-spaces cannot be tested against each other"
        );
    }
}

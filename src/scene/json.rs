//! The JSON scene (input) and results (output) formats of `hullsat collide`.
//!
//! Scene: `{"shapes": [...], "bodies": [{"shape": i, "position": [x,y,z], "rotation": [x,y,z,w]}],
//! "pairs": [[a,b], ...], "margin": m}` (`pairs` optional: absent = the broadphase; `margin`
//! default 0); a shape is `hull` (`points`), `box` (`half_extents`), `sphere` (`radius`),
//! `capsule` (`half_height`, `radius`), `cylinder` (`half_height`, `radius`), `half_space`
//! (`normal`, `offset`), `trimesh` (`vertices` `[[x, y, z], ...]`, `triangles`
//! `[[a, b, c], ...]`, counter-clockwise seen from the front) or `compound` (`children`
//! `[{"shape", "position", "rotation"}, ...]`: a convex shape and its optional pose in the
//! compound's frame, identity by default). Results:
//! `{"manifolds": [{"pair", "normal", "separation", "points": [{"position", "depth", "id"}]}]}`.
//!
//! 1. Read into a [`serde_json::Value`], refusing repeated keys; bodies, pairs, hull points and
//!    mesh vertices and triangles are converted as read (memory stays proportional to the
//!    scene; a mesh's sizes are checked against their limits while reading).
//! 2. Walk it by hand: errors at their JSON path (`bodies[3].rotation`), unknown keys refused.
//! 3. Numbers finite as f32 (positions f64); build shapes, then [`validate_batch`].
//!
//! Every error is one line, input text quoted ([`quoted`]). Details: docs/design/scene-json.md.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt::{self, Write as _};
use std::io;

use glam::{DVec3, Quat, Vec3};
use serde::de::{DeserializeSeed, Error as _, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

use crate::constants::{MAX_SHAPE_SIZE, MIN_SHAPE_SIZE};
use crate::hull::{ConvexHull, MAX_HULL_INPUT_POINTS};
use crate::manifold::Manifold;
use crate::pose::{Isometry, Pose};
use crate::scene::{Body, InputError, Scene, validate_batch};
use crate::shape::compound::{Compound, CompoundChild, CompoundError, MAX_COMPOUND_CHILDREN};
use crate::shape::{Capsule, Cuboid, Cylinder, HalfSpace, Shape, ShapeError, Sphere};
use crate::trimesh::{MAX_TRIMESH_TRIANGLES, MAX_TRIMESH_VERTICES, TriMesh, TriMeshError};

/// The shape kinds a scene may use, as spelt in JSON.
const SHAPE_KINDS: &str = "hull, box, sphere, capsule, cylinder, half_space, trimesh, compound";

/// The shape kinds a compound's child may use, as spelt in JSON.
const CHILD_KINDS: &str = "hull, box, sphere, capsule, cylinder";

/// Most characters of input text echoed in an error message; longer text is cut, marked `...`.
const MAX_ECHOED_CHARS: usize = 40;

/// Parses and validates a scene from JSON text (format in the module docs). Rotations come
/// back normalized. Errors name the JSON path of the problem (a number beyond the f64 range
/// too); other syntax errors use the path `$` and give the line and column.
pub fn parse_scene_json(text: &str) -> Result<Scene, InputError> {
    let scene = parse_scene_json_unvalidated(text)?;
    let pairs = scene.pairs.as_deref().unwrap_or(&[]);
    let bodies = validate_batch(&scene.shapes, &scene.bodies, pairs, scene.margin)?;
    Ok(Scene { bodies, ..scene })
}

/// [`parse_scene_json`] without the batch checks: the format, every field and the shapes are
/// checked (errors by JSON path, as there), but not shape indices, poses (rotations stay as
/// written), pairs against the bodies or the margin's range. For callers that validate the batch
/// themselves, once ([`crate::ValidatedBatch::new`], whose errors name the same paths: `bodies[3].rotation`,
/// `pairs[7]`, `margin`), such as `hullsat collide`.
pub fn parse_scene_json_unvalidated(text: &str) -> Result<Scene, InputError> {
    let (root, mut streamed) = read_value(text)?;
    let root = Fields::new(&root, "$", &["shapes", "bodies", "pairs", "margin"])?;
    let (shapes, bodies) = shapes_and_bodies(&root, &mut streamed)?;
    // `pairs` were converted while reading (see `Streamed`); the array in the tree is empty,
    // but still checked to be an array.
    let pairs = match root.get_optional("pairs") {
        None => None,
        Some((pairs, path)) => {
            array(pairs, &path)?;
            Some(streamed.pairs)
        }
    };
    let margin = match root.get_optional("margin") {
        None => 0.0,
        Some((margin, path)) => number(margin, &path)?,
    };
    Ok(Scene {
        shapes,
        bodies,
        pairs,
        margin,
    })
}

/// Writes `scene` in the JSON scene format (one shape, body or pair per line), such that
/// [`parse_scene_json`] reads back the same scene, except that reading renormalizes half-space
/// normals and rotations, which may move their last bit. Hulls are written as their vertices.
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

/// Why [`write_results_json`] wrote nothing, or stopped.
#[derive(Debug, thiserror::Error)]
pub enum WriteResultsError {
    /// A result has a NaN or infinite number; found before anything was written.
    #[error("the result of pair {index} ([{a}, {b}]) is not finite: {field}", a = pair[0], b = pair[1])]
    NonFinite {
        /// Index of the pair in the list given.
        index: usize,
        /// The pair's bodies.
        pair: [u32; 2],
        /// The first non-finite quantity: `normal`, `separation`, `points[j].position` or
        /// `points[j].depth`.
        field: String,
    },
    /// The writer failed.
    #[error("{0}")]
    Io(#[from] io::Error),
}

/// Writes the results to `out`: one entry per pair that has a manifold (`results[i]` belongs to
/// `pairs[i]`), in pair order, one manifold per line. Positions and normals are world space.
/// Streams: nothing but `out`'s own buffer is held.
///
/// # Errors
/// [`WriteResultsError::NonFinite`] when any result has a NaN or infinite number, checked
/// before the first byte is written; [`WriteResultsError::Io`] when `out` fails.
pub fn write_results_json(
    mut out: impl io::Write,
    pairs: &[[u32; 2]],
    results: &[Option<Manifold>],
) -> Result<(), WriteResultsError> {
    for (index, (&pair, manifold)) in pairs.iter().zip(results).enumerate() {
        if let Some(field) = manifold.as_ref().and_then(non_finite_field) {
            return Err(WriteResultsError::NonFinite { index, pair, field });
        }
    }
    out.write_all(b"{\"manifolds\": [")?;
    let mut first = true;
    for ([a, b], manifold) in pairs.iter().zip(results) {
        let Some(m) = manifold else { continue };
        out.write_all(if first { b"\n  " } else { b",\n  " })?;
        first = false;
        write!(
            out,
            "{{\"pair\": [{a}, {b}], \"normal\": {}, \"separation\": {}, \"points\": [",
            vec3(m.normal),
            m.separation
        )?;
        for (j, p) in m.points().iter().enumerate() {
            write!(
                out,
                "{}{{\"position\": {}, \"depth\": {}, \"id\": {}}}",
                if j == 0 { "" } else { ", " },
                dvec3(p.position),
                p.depth,
                p.id.0
            )?;
        }
        out.write_all(b"]}")?;
    }
    out.write_all(if first { b"]}\n" } else { b"\n]}\n" })?;
    Ok(())
}

/// The first quantity of `m` that is NaN or infinite, named as in the results format.
fn non_finite_field(m: &Manifold) -> Option<String> {
    if !m.normal.is_finite() {
        return Some("normal".into());
    }
    if !m.separation.is_finite() {
        return Some("separation".into());
    }
    m.points().iter().enumerate().find_map(|(j, p)| {
        if !p.position.is_finite() {
            Some(format!("points[{j}].position"))
        } else if !p.depth.is_finite() {
            Some(format!("points[{j}].depth"))
        } else {
            None
        }
    })
}

/// `text` as a double-quoted JSON string literal for an error message: quotes, backslashes and
/// every character outside printable ASCII escaped (`\n`, `\u001b`, `\u00e9`), so text from the
/// input can neither break the message's line nor reach a terminal as a control sequence. Text
/// longer than 40 characters is cut, marked by `...` after the closing quote.
pub fn quoted(text: &str) -> String {
    let mut out = String::from("\"");
    let mut chars = text.chars();
    for c in chars.by_ref().take(MAX_ECHOED_CHARS) {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            ' '..='~' => out.push(c),
            _ => escape_char(&mut out, c),
        }
    }
    out.push('"');
    if chars.next().is_some() {
        out.push_str("...");
    }
    out
}

/// `text` with control characters (line breaks, escape codes) and bidirectional-text controls
/// escaped as in JSON (`\n`, `\u001b`), everything else kept: one line, inert on a terminal.
/// For messages that are not input text themselves (file names, driver errors).
pub fn one_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control()
            || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
        {
            escape_char(&mut out, c);
        } else {
            out.push(c);
        }
    }
    out
}

/// Appends `c` as a JSON escape: the short forms where JSON has them, else `\uXXXX` per UTF-16
/// unit.
fn escape_char(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        _ => {
            for unit in c.encode_utf16(&mut [0; 2]) {
                let _ = write!(out, "\\u{unit:04x}");
            }
        }
    }
}

fn write_shape(out: &mut String, shape: &Shape) {
    let _ = match shape {
        Shape::Hull(hull) => {
            let points: Vec<String> = hull.vertices().iter().map(|&v| vec3(v).to_string()).collect();
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
        Shape::Cylinder(c) => write!(
            out,
            "{{\"cylinder\": {{\"half_height\": {}, \"radius\": {}}}}}",
            c.half_height(),
            c.radius()
        ),
        Shape::HalfSpace(h) => write!(
            out,
            "{{\"half_space\": {{\"normal\": {}, \"offset\": {}}}}}",
            vec3(h.normal),
            h.offset
        ),
        Shape::TriMesh(mesh) => {
            let vertices: Vec<String> = mesh.vertices().iter().map(|&v| vec3(v).to_string()).collect();
            let triangles: Vec<String> = mesh
                .triangles()
                .iter()
                .map(|[a, b, c]| format!("[{a}, {b}, {c}]"))
                .collect();
            write!(
                out,
                "{{\"trimesh\": {{\"vertices\": [{}], \"triangles\": [{}]}}}}",
                vertices.join(", "),
                triangles.join(", ")
            )
        }
        Shape::Compound(compound) => {
            out.push_str("{\"compound\": {\"children\": [");
            for (i, child) in compound.children().iter().enumerate() {
                out.push_str(if i == 0 { "{\"shape\": " } else { ", {\"shape\": " });
                write_shape(out, &child.shape);
                let q = child.pose.rotation;
                let _ = write!(
                    out,
                    ", \"position\": {}, \"rotation\": [{}, {}, {}, {}]}}",
                    vec3(child.pose.translation),
                    q.x,
                    q.y,
                    q.z,
                    q.w
                );
            }
            write!(out, "]}}}}")
        }
    };
}

/// Displays as `[x, y, z]`; `f32`'s `Display` is the shortest text that reads back to the same
/// value, without exponent.
struct JsonVec3(Vec3);

impl fmt::Display for JsonVec3 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}, {}, {}]", self.0.x, self.0.y, self.0.z)
    }
}

fn vec3(v: Vec3) -> JsonVec3 {
    JsonVec3(v)
}

/// Reads JSON text into a [`Value`] tree, converting the elements of the scene's large arrays
/// as they are read ([`Streamed`]); refuses repeated keys (the error names the repeated key's
/// path). Other errors are syntax errors with line and column (at `$`, or at the number's path
/// for one beyond the f64 range), or a streamed element's conversion error.
fn read_value(text: &str) -> Result<(Value, Streamed), InputError> {
    let state = RefCell::new(ReadState::default());
    let mut reader = serde_json::Deserializer::from_str(text);
    let seed = ValueSeed {
        step: &Step::Root,
        state: &state,
    };
    let value = seed.deserialize(&mut reader).and_then(|value| {
        reader.end()?;
        Ok(value)
    });
    let state = state.into_inner();
    match (value, state.failure) {
        (Ok(value), _) => Ok((value, state.streamed)),
        (Err(err), Some(Failure::Duplicate(path))) => Err(InputError::new(
            path,
            format!("duplicate key at line {} column {}", err.line(), err.column()),
        )),
        (Err(_), Some(Failure::Element(err))) => Err(err),
        (Err(err), None) => Err(syntax_error(text, err)),
    }
}

/// The elements of the arrays that grow with a scene's size, converted as they are read so the
/// value tree never holds them (a body as a [`Value`] takes about 40 times its own size): the
/// arrays stay empty in the tree and the walker takes their elements from here.
#[derive(Default)]
struct Streamed {
    /// `bodies[i]`, unchecked (see [`validate_batch`]).
    bodies: Vec<Body>,
    /// `pairs[i]`.
    pairs: Vec<[u32; 2]>,
    /// `shapes[s].hull.points[j]`, by shape index `s`.
    hull_points: HashMap<usize, Vec<Vec3>>,
    /// `shapes[s].trimesh.vertices[j]`, by shape index `s`.
    mesh_vertices: HashMap<usize, Vec<Vec3>>,
    /// `shapes[s].trimesh.triangles[j]`, by shape index `s`.
    mesh_triangles: HashMap<usize, Vec<[u32; 3]>>,
}

impl Streamed {
    /// The arrays streamed for shape `s`, taken.
    fn take_shape(&mut self, s: usize) -> ShapeArrays {
        ShapeArrays {
            points: self.hull_points.remove(&s).unwrap_or_default(),
            vertices: self.mesh_vertices.remove(&s).unwrap_or_default(),
            triangles: self.mesh_triangles.remove(&s).unwrap_or_default(),
        }
    }
}

/// One shape's streamed arrays (empty where the shape has none).
#[derive(Default)]
struct ShapeArrays {
    points: Vec<Vec3>,
    vertices: Vec<Vec3>,
    triangles: Vec<[u32; 3]>,
}

/// Which streamed array an array is, from its path.
#[derive(Clone, Copy)]
enum StreamedArray {
    Bodies,
    Pairs,
    HullPoints(usize),
    MeshVertices(usize),
    MeshTriangles(usize),
}

impl StreamedArray {
    fn of(step: &Step) -> Option<StreamedArray> {
        match *step {
            Step::Key(&Step::Root, "bodies") => Some(StreamedArray::Bodies),
            Step::Key(&Step::Root, "pairs") => Some(StreamedArray::Pairs),
            Step::Key(
                &Step::Key(&Step::Index(&Step::Key(&Step::Root, "shapes"), shape), "hull"),
                "points",
            ) => Some(StreamedArray::HullPoints(shape)),
            Step::Key(&Step::Key(&Step::Index(&Step::Key(&Step::Root, "shapes"), shape), "trimesh"), key) => {
                match key {
                    "vertices" => Some(StreamedArray::MeshVertices(shape)),
                    "triangles" => Some(StreamedArray::MeshTriangles(shape)),
                    _ => None,
                }
            }
            _ => None,
        }
    }
}

/// What the reader found so far, and why it stopped.
#[derive(Default)]
struct ReadState {
    streamed: Streamed,
    failure: Option<Failure>,
}

enum Failure {
    /// A repeated key, at this path.
    Duplicate(String),
    /// A streamed element that cannot be converted.
    Element(InputError),
}

impl ReadState {
    /// Converts element `index` of `array` (at `step`) and keeps it.
    fn take(
        &mut self,
        array: StreamedArray,
        step: &Step,
        index: usize,
        item: &Value,
    ) -> Result<(), InputError> {
        let path = || format!("{}[{index}]", step.path());
        match array {
            StreamedArray::Bodies => self.streamed.bodies.push(parse_body(item, &path())?),
            StreamedArray::Pairs => self.streamed.pairs.push(parse_pair(item, &path())?),
            StreamedArray::HullPoints(shape) => {
                if index == MAX_HULL_INPUT_POINTS {
                    return Err(InputError::new(
                        step.path(),
                        format!("more than {MAX_HULL_INPUT_POINTS} points (the limit)"),
                    ));
                }
                let point = Vec3::from_array(numbers(item, &path())?);
                self.streamed.hull_points.entry(shape).or_default().push(point);
            }
            StreamedArray::MeshVertices(shape) => {
                if index == MAX_TRIMESH_VERTICES {
                    return Err(too_many(step, "vertices", MAX_TRIMESH_VERTICES));
                }
                let vertex = Vec3::from_array(numbers(item, &path())?);
                self.streamed.mesh_vertices.entry(shape).or_default().push(vertex);
            }
            StreamedArray::MeshTriangles(shape) => {
                if index == MAX_TRIMESH_TRIANGLES {
                    return Err(too_many(step, "triangles", MAX_TRIMESH_TRIANGLES));
                }
                let triangle = parse_triangle(item, &path())?;
                self.streamed
                    .mesh_triangles
                    .entry(shape)
                    .or_default()
                    .push(triangle);
            }
        }
        Ok(())
    }
}

/// Where a value sits in the document being read: a chain of steps on the reader's stack,
/// formatted into a path only for an error.
enum Step<'a> {
    Root,
    Key(&'a Step<'a>, &'a str),
    Index(&'a Step<'a>, usize),
}

impl Step<'_> {
    fn path(&self) -> String {
        match self {
            Step::Root => "$".into(),
            Step::Key(parent, key) => join(&parent.path(), key),
            Step::Index(parent, i) => format!("{}[{i}]", parent.path()),
        }
    }
}

/// Reads one JSON value as [`Value`]'s own `Deserialize` does, except that an object repeating
/// a key is an error, and the elements of [`StreamedArray`]s go to `state` instead of the tree.
struct ValueSeed<'a> {
    step: &'a Step<'a>,
    state: &'a RefCell<ReadState>,
}

impl<'de> DeserializeSeed<'de> for ValueSeed<'_> {
    type Value = Value;

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ValueSeed<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }

    fn visit_i64<E>(self, i: i64) -> Result<Value, E> {
        Ok(Value::Number(i.into()))
    }

    fn visit_u64<E>(self, u: u64) -> Result<Value, E> {
        Ok(Value::Number(u.into()))
    }

    fn visit_f64<E>(self, x: f64) -> Result<Value, E> {
        // serde_json reports numbers beyond f64 as errors, so `x` is finite.
        Ok(Number::from_f64(x).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, s: &str) -> Result<Value, E> {
        Ok(Value::String(s.to_owned()))
    }

    fn visit_string<E>(self, s: String) -> Result<Value, E> {
        Ok(Value::String(s))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let streamed = StreamedArray::of(self.step);
        let mut items = Vec::new();
        for index in 0.. {
            let step = Step::Index(self.step, index);
            let seed = ValueSeed {
                step: &step,
                state: self.state,
            };
            let Some(item) = seq.next_element_seed(seed)? else {
                break;
            };
            match streamed {
                None => items.push(item),
                Some(array) => {
                    let mut state = self.state.borrow_mut();
                    if let Err(err) = state.take(array, self.step, index, &item) {
                        state.failure = Some(Failure::Element(err));
                        return Err(A::Error::custom("invalid element"));
                    }
                }
            }
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut entries = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let step = Step::Key(self.step, &key);
            if entries.contains_key(&key) {
                self.state.borrow_mut().failure = Some(Failure::Duplicate(step.path()));
                return Err(A::Error::custom("duplicate key"));
            }
            let value = map.next_value_seed(ValueSeed {
                step: &step,
                state: self.state,
            })?;
            entries.insert(key, value);
        }
        Ok(Value::Object(entries))
    }
}

/// `[x, y, z]` of an f64 vector (world positions), shortest text that reads back exactly.
fn dvec3(v: DVec3) -> String {
    format!("[{}, {}, {}]", v.x, v.y, v.z)
}

fn syntax_error(text: &str, err: serde_json::Error) -> InputError {
    // serde_json's message already ends with "at line L column C".
    if err.to_string().starts_with("number out of range") {
        // A number the reader refused: named by its field, as a finite one beyond the supported
        // range would be.
        let path = path_at(text, err.line(), err.column());
        return InputError::new(path, format!("invalid JSON: {err} (expected finite numbers)"));
    }
    InputError::new("$", format!("invalid JSON: {err}"))
}

/// The JSON path of the value being read at `line` and `column` (1-based, in characters, as
/// serde_json reports them) of `text`, found by following the containers, keys and indices of
/// the text before it. Only for errors: the reading itself tracks no path.
fn path_at(text: &str, line: usize, column: usize) -> String {
    enum Frame {
        Object {
            key: Option<String>,
            expecting_key: bool,
        },
        Array {
            index: usize,
        },
    }
    let before = text
        .split_inclusive('\n')
        .take(line)
        .enumerate()
        .map(|(i, l)| {
            if i + 1 == line {
                l.chars().take(column).collect()
            } else {
                l.to_string()
            }
        })
        .collect::<String>();
    let mut stack: Vec<Frame> = Vec::new();
    let mut chars = before.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                let mut string = String::new();
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => string.extend(chars.next()),
                        c => string.push(c),
                    }
                }
                if let Some(Frame::Object { key, expecting_key }) = stack.last_mut()
                    && *expecting_key
                {
                    *key = Some(string);
                    *expecting_key = false;
                }
            }
            '{' => stack.push(Frame::Object {
                key: None,
                expecting_key: true,
            }),
            '[' => stack.push(Frame::Array { index: 0 }),
            '}' | ']' => {
                stack.pop();
            }
            ',' => match stack.last_mut() {
                Some(Frame::Object { key, expecting_key }) => {
                    *key = None;
                    *expecting_key = true;
                }
                Some(Frame::Array { index }) => *index += 1,
                None => {}
            },
            _ => {}
        }
    }
    stack.iter().fold("$".to_string(), |path, frame| match frame {
        Frame::Object { key: Some(key), .. } => join(&path, key),
        Frame::Object { key: None, .. } => path,
        Frame::Array { index } => format!("{path}[{index}]"),
    })
}

/// The error for a streamed array at `step` past its limit of `limit` `what`.
fn too_many(step: &Step, what: &str, limit: usize) -> InputError {
    InputError::new(step.path(), format!("more than {limit} {what} (the limit)"))
}

/// A mesh triangle `[a, b, c]`: three vertex indices.
fn parse_triangle(value: &Value, path: &str) -> Result<[u32; 3], InputError> {
    let indices = value.as_array().filter(|a| a.len() == 3).and_then(|items| {
        let mut out = [0; 3];
        for (o, item) in out.iter_mut().zip(items) {
            *o = u32::try_from(item.as_u64()?).ok()?;
        }
        Some(out)
    });
    indices.ok_or_else(|| {
        InputError::new(
            path,
            format!("expected 3 vertex indices [a, b, c], got {}", describe(value)),
        )
    })
}

/// The mesh of `shapes[i].trimesh` at `path` from its streamed arrays; errors at the vertex or
/// triangle they name.
fn parse_trimesh(value: &Value, path: &str, arrays: ShapeArrays) -> Result<Shape, InputError> {
    let fields = Fields::new(value, path, &["vertices", "triangles"])?;
    for key in ["vertices", "triangles"] {
        let (items, items_path) = fields.get(key)?;
        array(items, &items_path)?;
    }
    TriMesh::new(arrays.vertices, arrays.triangles)
        .map(Shape::from)
        .map_err(|err| {
            let at = match err {
                TriMeshError::Empty | TriMeshError::TooManyTriangles(_) => format!("{path}.triangles"),
                TriMeshError::TooManyVertices(_) => format!("{path}.vertices"),
                TriMeshError::NonFinite { vertex } | TriMeshError::OutOfRange { vertex, .. } => {
                    format!("{path}.vertices[{vertex}]")
                }
                TriMeshError::IndexOutOfRange { triangle, .. } | TriMeshError::Degenerate { triangle } => {
                    format!("{path}.triangles[{triangle}]")
                }
            };
            InputError::new(at, err.to_string())
        })
}

/// The compound of `shapes[i].compound` at `path`: the child count checked first, then each
/// child's kind (convex), shape and pose; errors at the child's field
/// (`shapes[2].compound.children[3].rotation`). A child's hull points are read from the tree
/// (only top-level shapes' arrays are streamed; a compound's children are few).
fn parse_compound(value: &Value, path: &str) -> Result<Shape, InputError> {
    let fields = Fields::new(value, path, &["children"])?;
    let (children, children_path) = fields.get("children")?;
    let children = array(children, &children_path)?;
    if children.len() > MAX_COMPOUND_CHILDREN {
        let err = CompoundError::TooManyChildren(children.len());
        return Err(InputError::new(children_path, err.to_string()));
    }
    let child_path = |j: usize| format!("{children_path}[{j}]");
    let mut parsed = Vec::with_capacity(children.len());
    for (j, child) in children.iter().enumerate() {
        let path = child_path(j);
        let fields = Fields::new(child, &path, &["shape", "position", "rotation"])?;
        let (shape, shape_path) = fields.get("shape")?;
        let kind = object(shape, &shape_path)?.keys().next().map(String::as_str);
        let mut arrays = ShapeArrays::default();
        match kind {
            Some("hull") => {
                let hull_path = format!("{shape_path}.hull");
                let fields = Fields::new(&shape["hull"], &hull_path, &["points"])?;
                let (points, points_path) = fields.get("points")?;
                let points = array(points, &points_path)?;
                if points.len() > MAX_HULL_INPUT_POINTS {
                    let message = format!("more than {MAX_HULL_INPUT_POINTS} points (the limit)");
                    return Err(InputError::new(points_path, message));
                }
                for (k, point) in points.iter().enumerate() {
                    let point = numbers(point, &format!("{points_path}[{k}]"))?;
                    arrays.points.push(Vec3::from_array(point));
                }
            }
            Some("half_space" | "trimesh" | "compound") => {
                let message = format!("a compound's child must be a convex shape ({CHILD_KINDS})");
                return Err(InputError::new(
                    join(&shape_path, kind.unwrap_or_default()),
                    message,
                ));
            }
            _ => {}
        }
        let shape = parse_shape(shape, &shape_path, arrays)?;
        let position = match fields.get_optional("position") {
            Some((v, p)) => Vec3::from_array(numbers(v, &p)?),
            None => Vec3::ZERO,
        };
        let rotation = match fields.get_optional("rotation") {
            Some((v, p)) => Quat::from_array(numbers(v, &p)?),
            None => Quat::IDENTITY,
        };
        parsed.push(CompoundChild {
            shape,
            pose: Isometry::new(position, rotation),
        });
    }
    Compound::new(parsed).map(Shape::from).map_err(|err| {
        let at = match err {
            CompoundError::Empty | CompoundError::TooManyChildren(_) => children_path.clone(),
            CompoundError::NotConvex { child, .. } => format!("{}.shape", child_path(child)),
            CompoundError::BadTranslation { child, .. } => format!("{}.position", child_path(child)),
            CompoundError::BadRotation { child, .. } => format!("{}.rotation", child_path(child)),
        };
        InputError::new(at, err.to_string())
    })
}

/// The shape at `path`; a hull's `points` and a mesh's arrays were read into `arrays` (see
/// [`Streamed`]).
fn parse_shape(value: &Value, path: &str, arrays: ShapeArrays) -> Result<Shape, InputError> {
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
            let (points_value, points_path) = fields.get("points")?;
            array(points_value, &points_path)?;
            let hull = ConvexHull::from_points(&arrays.points)
                .map_err(|e| InputError::new(&kind_path, e.to_string()))?;
            return Ok(Shape::Hull(hull));
        }
        "trimesh" => return parse_trimesh(value, &kind_path, arrays),
        "compound" => return parse_compound(value, &kind_path),
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
        "cylinder" => {
            let fields = Fields::new(value, &kind_path, &["half_height", "radius"])?;
            Cylinder::new(fields.number("half_height")?, fields.number("radius")?).map(Shape::Cylinder)
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
                format!(
                    "unknown shape kind {} (expected one of {SHAPE_KINDS})",
                    quoted(other)
                ),
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

/// The path of `key` inside the object at `path`: `path.key`, with top-level keys bare
/// (`margin`); a key that is not a plain name (ASCII letters, digits, `_`, not starting with a
/// digit) is quoted in brackets, `path["a key"]`.
fn join(path: &str, key: &str) -> String {
    let plain = key.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    match (plain, path) {
        (true, "$") => key.to_string(),
        (true, _) => format!("{path}.{key}"),
        (false, _) => format!("{path}[{}]", quoted(key)),
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
        Value::String(s) => format!("the string {}", quoted(s)),
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
    // The top-level keys first: the streaming reader converts a `pairs` array as it reads, which
    // would report a problem inside a key this format does not have.
    let known: Vec<&str> = ["shapes", "bodies"].iter().chain(extra_keys).copied().collect();
    let keys: Map<String, Value> = serde_json::from_str::<HashMap<String, serde::de::IgnoredAny>>(text)
        .map_err(|err| syntax_error(text, err))?
        .into_keys()
        .map(|key| (key, Value::Null))
        .collect();
    Fields::new(&Value::Object(keys), "$", &known)?;
    let (root, mut streamed) = read_value(text)?;
    let fields = Fields::new(&root, "$", &known)?;
    let (shapes, bodies) = shapes_and_bodies(&fields, &mut streamed)?;
    let bodies = validate_batch(&shapes, &bodies, &[], 0.0)?;
    Ok((root, shapes, bodies))
}

/// The document's `shapes` (hull points taken from `streamed`) and its `bodies` (converted
/// while reading, see [`Streamed`]: the array in the tree is empty, but still checked to be an
/// array), bodies not yet checked against the shapes ([`validate_batch`]).
fn shapes_and_bodies(root: &Fields, streamed: &mut Streamed) -> Result<(Vec<Shape>, Vec<Body>), InputError> {
    let (shapes, path) = root.get("shapes")?;
    let shapes = array(shapes, &path)?
        .iter()
        .enumerate()
        .map(|(i, v)| parse_shape(v, &format!("shapes[{i}]"), streamed.take_shape(i)))
        .collect::<Result<Vec<_>, _>>()?;
    let (bodies, path) = root.get("bodies")?;
    array(bodies, &path)?;
    Ok((shapes, std::mem::take(&mut streamed.bodies)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shape::compound::{Compound, CompoundChild};

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
                Shape::Cylinder(Cylinder::new(0.4, 1.1).unwrap()),
                Shape::from(
                    TriMesh::new(
                        vec![Vec3::ZERO, Vec3::Z, Vec3::new(1.0, 0.1, 1.0 / 3.0), Vec3::X],
                        vec![[0, 1, 3], [1, 2, 3]],
                    )
                    .unwrap(),
                ),
                // Child rotations exact in f32 after normalizing, so the shapes compare equal.
                Shape::from(
                    Compound::new(vec![
                        CompoundChild {
                            shape: Shape::Sphere(Sphere::new(0.5).unwrap()),
                            pose: Isometry::new(Vec3::new(-1.0, 0.0, 1.0 / 3.0), Quat::IDENTITY),
                        },
                        CompoundChild {
                            shape: Shape::Cuboid(Cuboid::new(Vec3::new(0.2, 0.3, 0.4)).unwrap()),
                            pose: Isometry::new(
                                Vec3::new(1.0, 0.1, 0.0),
                                Quat::from_xyzw(0.0, 0.0, 1.0, 0.0),
                            ),
                        },
                    ])
                    .unwrap(),
                ),
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
        let mut text = Vec::new();
        write_results_json(
            &mut text,
            &[[0, 1], [2, 3], [4, 5]],
            &[None, Some(m), Some(m.swapped())],
        )
        .unwrap();
        let v: Value = serde_json::from_slice(&text).unwrap();
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
        let mut empty = Vec::new();
        write_results_json(&mut empty, &[[0, 1]], &[None]).unwrap();
        let empty: Value = serde_json::from_slice(&empty).unwrap();
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
        // 1e999 overflows f64: serde_json refuses it while parsing; the error still names the
        // field.
        let e = error(&TWO_SPHERES.replace("1.5,0,0", "1e999,0,0"));
        assert!(
            e.starts_with("bodies[1].position[0]: invalid JSON: number out of range")
                && e.contains("expected finite numbers"),
            "{e}"
        );
        let e = error(&TWO_SPHERES.replace("0.25", "-1e400"));
        assert!(e.starts_with("margin: invalid JSON: number out of range"), "{e}");
        let e = error(&TWO_SPHERES.replace("1.5,0,0", "1.5,0,1e400"));
        assert!(e.starts_with("bodies[1].position[2]: "), "{e}");
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
                "shapes[0]: unknown shape kind \"cone\" (expected one of hull, box, sphere, capsule, cylinder, half_space, trimesh, compound)",
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
            error(&scene(r#"{"cylinder": {"half_height": 1}}"#)),
            "shapes[0].cylinder.radius: missing field"
        );
        assert_eq!(
            error(&scene(r#"{"cylinder": {"half_height": -1, "radius": 1}}"#)),
            "shapes[0].cylinder.half_height: expected a positive finite number, got -1"
        );
        assert_eq!(
            error(&scene(r#"{"cylinder": {"half_height": 1, "radius": 1e-9}}"#)),
            "shapes[0].cylinder.radius: 1e-9 is outside the supported range 1e-6..=1e12"
        );
        assert_eq!(
            error(&scene(
                r#"{"cylinder": {"half_height": 1, "radius": 1, "axis": 1}}"#
            )),
            "shapes[0].cylinder.axis: unknown field (expected one of: half_height, radius)"
        );
        assert_eq!(
            error(&scene(
                r#"{"box": {"half_extents": [1, 1, 1]}, "sphere": {"radius": 1}}"#
            )),
            "shapes[0]: expected an object with exactly one key, the shape kind \
             (hull, box, sphere, capsule, cylinder, half_space, trimesh, compound)"
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
    fn repeated_keys_are_rejected_with_their_path() {
        // The column is that of the repeated key's closing quote.
        assert_eq!(
            error(&TWO_SPHERES.replace("\"margin\": 0.25", "\"margin\": 0.25, \"margin\": 1")),
            "margin: duplicate key at line 4 column 51"
        );
        assert_eq!(
            error(&TWO_SPHERES.replace("\"radius\": 1", "\"radius\": 1, \"radius\": 2")),
            "shapes[0].sphere.radius: duplicate key at line 1 column 45"
        );
        let e = error(&TWO_SPHERES.replace(
            "\"shape\": 0, \"position\": [1.5",
            "\"shape\": 0, \"shape\": 0, \"position\": [1.5",
        ));
        assert!(
            e.starts_with("bodies[1].shape: duplicate key at line 3 column "),
            "{e}"
        );
        // Inside an array of arrays and under an odd key.
        let e = error(r#"{"x": [[{"a b": 1, "a b": 2}]]}"#);
        assert!(e.starts_with(r#"x[0][0]["a b"]: duplicate key at line 1"#), "{e}");
        // Keys are compared after unescaping: "m\u0061rgin" is "margin".
        assert_eq!(
            error(r#"{"shapes": [], "bodies": [], "margin": 0, "m\u0061rgin": 1}"#),
            "margin: duplicate key at line 1 column 55"
        );
    }

    #[test]
    fn the_reader_builds_the_same_values_as_serde_json() {
        let text = r#"{"a": [1, -2, 3.5, 1e300, -0.0, 18446744073709551615, true, null, "s\n"],
                       "b": {"c": {}, "d": []}}"#;
        assert_eq!(
            read_value(text).map(|(value, _)| value).unwrap(),
            serde_json::from_str::<Value>(text).unwrap()
        );
        for bad in ["", "[1,]", "{\"a\" 1}", "[1] 2", "\"\\x\""] {
            let e = read_value(bad).map(|(value, _)| value).unwrap_err().to_string();
            assert!(e.starts_with("$: invalid JSON: "), "{bad}: {e}");
        }
        // Nesting deeper than serde_json's recursion limit is an error, not a stack overflow.
        let deep = "[".repeat(100_000);
        let e = read_value(&deep).map(|(value, _)| value).unwrap_err().to_string();
        assert!(e.contains("recursion limit exceeded"), "{e}");
    }

    #[test]
    fn only_the_scene_arrays_are_converted_while_reading() {
        // `bodies`, `pairs` and `points` elsewhere are ordinary values, reported as unknown.
        let text = r#"{"shapes": [{"sphere": {"radius": 1, "points": [[0, 0, 0]]}}], "bodies": []}"#;
        assert_eq!(
            error(text),
            "shapes[0].sphere.points: unknown field (expected one of: radius)"
        );
        let text = r#"{"shapes": [], "bodies": [], "x": {"bodies": [{}], "pairs": [1]}}"#;
        assert_eq!(
            error(text),
            "x: unknown field (expected one of: shapes, bodies, pairs, margin)"
        );
        // Converted elements keep their paths, and their arrays are still checked as arrays.
        assert_eq!(
            error(
                r#"{"shapes": [], "bodies": [{"shape": 0, "position": [0, 0], "rotation": [0, 0, 0, 1]}]}"#
            ),
            "bodies[0].position: expected 3 finite numbers, got an array of 2 items"
        );
        assert_eq!(
            error(r#"{"shapes": [], "bodies": {}}"#),
            "bodies: expected an array, got an object"
        );
        assert_eq!(
            error(r#"{"shapes": [{"hull": {"points": [[0, 0, 0], 7]}}], "bodies": []}"#),
            "shapes[0].hull.points[1]: expected 3 finite numbers, got 7"
        );
    }

    #[test]
    fn echoed_input_is_quoted_escaped_and_cut() {
        assert_eq!(quoted("cone"), "\"cone\"");
        assert_eq!(quoted("a\"b\\c"), r#""a\"b\\c""#);
        assert_eq!(quoted("line\nnext\r\t"), r#""line\nnext\r\t""#);
        assert_eq!(quoted("\u{1b}[31mred"), r#""\u001b[31mred""#);
        assert_eq!(quoted("é\u{202e}😀"), r#""\u00e9\u202e\ud83d\ude00""#);
        assert_eq!(quoted(&"x".repeat(41)), format!("\"{}\"...", "x".repeat(40)));
        assert_eq!(quoted(&"x".repeat(40)), format!("\"{}\"", "x".repeat(40)));
        assert_eq!(one_line("a\nb\u{1b}[0m\u{9b}c é"), r#"a\nb\u001b[0m\u009bc é"#);
        assert_eq!(one_line("x\u{2066}y"), r#"x\u2066y"#);
    }

    #[test]
    fn errors_echoing_input_stay_on_one_line() {
        let cases = [
            // A key with a newline and an escape sequence, in the path.
            (
                TWO_SPHERES.replacen("\"margin\"", "\"mar\\ngin\\u001b[2J\"", 1),
                r#"$["mar\ngin\u001b[2J"]: unknown field (expected one of: shapes, bodies, pairs, margin)"#,
            ),
            (
                TWO_SPHERES.replacen("\"radius\": 1", "\"radius\": 1, \"a.b\": 2", 1),
                r#"shapes[0].sphere["a.b"]: unknown field (expected one of: radius)"#,
            ),
            // A shape kind.
            (
                TWO_SPHERES.replacen("{\"sphere\"", "{\"sph\\nere\"", 1),
                r#"shapes[0]: unknown shape kind "sph\nere" (expected one of hull, box, sphere, capsule, cylinder, half_space, trimesh, compound)"#,
            ),
            // A string value, cut after 40 characters.
            (
                TWO_SPHERES.replacen(
                    "\"radius\": 1",
                    &format!("\"radius\": \"\\r{}\"", "9".repeat(50)),
                    1,
                ),
                &format!(
                    "shapes[0].sphere.radius: expected a finite number, got the string \"\\r{}\"...",
                    "9".repeat(39)
                ),
            ),
        ];
        for (text, expected) in cases {
            let e = error(&text);
            assert_eq!(e, expected);
            assert!(!e.chars().any(char::is_control), "{e:?}");
        }
    }

    /// A scene of one mesh shape `{"trimesh": <mesh>}` and a sphere body.
    fn mesh_scene(mesh: &str) -> String {
        format!(
            r#"{{"shapes": [{{"sphere": {{"radius": 1}}}}, {{"trimesh": {mesh}}}],
                "bodies": [{{"shape": 1, "position": [0,0,0], "rotation": [0,0,0,1]}}]}}"#
        )
    }

    #[test]
    fn a_triangle_mesh_is_read_and_each_problem_names_its_path() {
        let square = r#"{"vertices": [[0,0,0], [0,0,1], [1,0,1], [1,0,0]], "triangles": [[0,1,3], [1,2,3]]}"#;
        let scene = parse_scene_json(&mesh_scene(square)).unwrap();
        let mesh = scene.shapes[1].as_trimesh().unwrap();
        assert_eq!(mesh.triangles(), [[0, 1, 3], [1, 2, 3]]);
        assert_eq!(mesh.vertices()[2], Vec3::new(1.0, 0.0, 1.0));
        let at = "shapes[1].trimesh";
        for (mesh, expected) in [
            (
                r#"{"vertices": [[0,0,0], [0,0,1], [1,0,0]], "triangles": [[0,1,2], [0,1,3]]}"#,
                format!("{at}.triangles[1]: triangle 1 names vertex 3, but there are 3 vertices"),
            ),
            (
                r#"{"vertices": [[0,0,0], [0,0,1], [0,0,2]], "triangles": [[0,1,2]]}"#,
                format!(
                    "{at}.triangles[0]: triangle 0 is degenerate (repeated vertex, or collinear vertices)"
                ),
            ),
            (
                r#"{"vertices": [[0,0,0], [0,0,1], [1,0,0]], "triangles": [[0,1,1]]}"#,
                format!(
                    "{at}.triangles[0]: triangle 0 is degenerate (repeated vertex, or collinear vertices)"
                ),
            ),
            (
                r#"{"vertices": [[0,0,0], [0,0,1], [1e39,0,0]], "triangles": [[0,1,2]]}"#,
                format!("{at}.vertices[2]: expected 3 finite numbers, got an array of 3 items"),
            ),
            (
                r#"{"vertices": [[0,0,0], [0,0,1], [2e12,0,0]], "triangles": [[0,1,2]]}"#,
                format!("{at}.vertices[2]: vertex 2 lies 2e12 from the origin, beyond the supported 1e12"),
            ),
            (
                r#"{"vertices": [[0,0,0], [0,0], [1,0,0]], "triangles": [[0,1,2]]}"#,
                format!("{at}.vertices[1]: expected 3 finite numbers, got an array of 2 items"),
            ),
            (
                r#"{"vertices": [[0,0,0], [0,0,1], [1,0,0]], "triangles": [[0,1,2], [0,1]]}"#,
                format!("{at}.triangles[1]: expected 3 vertex indices [a, b, c], got an array of 2 items"),
            ),
            (
                r#"{"vertices": [[0,0,0], [0,0,1], [1,0,0]], "triangles": [[0,-1,2]]}"#,
                format!("{at}.triangles[0]: expected 3 vertex indices [a, b, c], got an array of 3 items"),
            ),
            (
                r#"{"vertices": [[0,0,0], [0,0,1], [1,0,0]], "triangles": []}"#,
                format!("{at}.triangles: the mesh has no triangles"),
            ),
            (
                r#"{"vertices": [], "triangles": [[0,1,2]]}"#,
                format!("{at}.triangles[0]: triangle 0 names vertex 0, but there are 0 vertices"),
            ),
            (r#"{"vertices": []}"#, format!("{at}.triangles: missing field")),
            (
                r#"{"vertices": {}, "triangles": []}"#,
                format!("{at}.vertices: expected an array, got an object"),
            ),
            (
                r#"{"vertices": [], "triangles": [], "normals": []}"#,
                format!("{at}.normals: unknown field (expected one of: vertices, triangles)"),
            ),
        ] {
            assert_eq!(error(&mesh_scene(mesh)), expected, "{mesh}");
        }
    }

    /// A scene of one compound shape `{"compound": {"children": <children>}}` and a body.
    fn compound_scene(children: &str) -> String {
        format!(
            r#"{{"shapes": [{{"sphere": {{"radius": 1}}}}, {{"compound": {{"children": {children}}}}}],
                "bodies": [{{"shape": 1, "position": [0,0,0], "rotation": [0,0,0,1]}}]}}"#
        )
    }

    #[test]
    fn a_compound_is_read_and_each_problem_names_its_path() {
        let dumbbell = r#"[{"shape": {"sphere": {"radius": 0.5}}, "position": [-1, 0, 0]},
                           {"shape": {"hull": {"points": [[0,0,0], [1,0,0], [0,1,0], [0,0,1]]}},
                            "position": [1, 0, 0], "rotation": [0, 0, 0.6, 0.8]}]"#;
        let scene = parse_scene_json(&compound_scene(dumbbell)).unwrap();
        let compound = scene.shapes[1].as_compound().unwrap();
        assert_eq!(compound.children().len(), 2);
        // Position and rotation default to the identity.
        assert_eq!(compound.children()[0].pose.rotation, Quat::IDENTITY);
        assert_eq!(
            compound.children()[1].shape.as_hull().unwrap().vertices().len(),
            4
        );
        assert!(
            compound.children()[1]
                .pose
                .rotation
                .abs_diff_eq(Quat::from_xyzw(0.0, 0.0, 0.6, 0.8), 1e-7)
        );
        let at = "shapes[1].compound";
        let ball = r#"{"shape": {"sphere": {"radius": 1}}}"#;
        let too_many = format!("[{}]", vec![ball; MAX_COMPOUND_CHILDREN + 1].join(","));
        for (children, expected) in [
            (
                "[]".to_string(),
                format!("{at}.children: the compound has no children"),
            ),
            (
                too_many,
                format!("{at}.children: 65 children, more than the limit of {MAX_COMPOUND_CHILDREN}"),
            ),
            (
                "{}".into(),
                format!("{at}.children: expected an array, got an object"),
            ),
            (
                format!(
                    r#"[{ball}, {{"shape": {{"sphere": {{"radius": 1}}}}, "rotation": [0, 0, 0.5, 1]}}]"#
                ),
                format!(
                    "{at}.children[1].rotation: child 1 rotation has length 1.118034; it must be a unit quaternion (within 1e-3)"
                ),
            ),
            (
                format!(
                    r#"[{ball}, {ball}, {{"shape": {{"sphere": {{"radius": 1}}}}, "rotation": [0, 0, 1]}}]"#
                ),
                format!("{at}.children[2].rotation: expected 4 finite numbers, got an array of 3 items"),
            ),
            (
                r#"[{"shape": {"sphere": {"radius": 1}}, "position": [0, 2e12, 0]}]"#.into(),
                format!(
                    "{at}.children[0].position: child 0 position [0, 2000000000000, 0] must be finite and within ±1e12"
                ),
            ),
            (
                r#"[{"shape": {"half_space": {"normal": [0, 1, 0], "offset": 0}}}]"#.into(),
                format!(
                    "{at}.children[0].shape.half_space: a compound's child must be a convex shape (hull, box, sphere, capsule, cylinder)"
                ),
            ),
            (
                format!(r#"[{ball}, {{"shape": {{"compound": {{"children": [{ball}]}}}}}}]"#),
                format!(
                    "{at}.children[1].shape.compound: a compound's child must be a convex shape (hull, box, sphere, capsule, cylinder)"
                ),
            ),
            (
                r#"[{"shape": {"box": {"half_extents": [1, -1, 1]}}}]"#.into(),
                format!(
                    "{at}.children[0].shape.box.half_extents.y: expected a positive finite number, got -1"
                ),
            ),
            (
                r#"[{"shape": {"hull": {"points": [[0,0,0], [1,0]]}}}]"#.into(),
                format!(
                    "{at}.children[0].shape.hull.points[1]: expected 3 finite numbers, got an array of 2 items"
                ),
            ),
            (
                r#"[{"position": [0, 0, 0]}]"#.into(),
                format!("{at}.children[0].shape: missing field"),
            ),
            (
                r#"[{"shape": {"sphere": {"radius": 1}}, "scale": 2}]"#.into(),
                format!("{at}.children[0].scale: unknown field (expected one of: shape, position, rotation)"),
            ),
        ] {
            assert_eq!(error(&compound_scene(&children)), expected, "{children}");
        }
    }

    #[test]
    fn mesh_sizes_are_checked_while_reading() {
        // One triangle too many; the last is not even a triangle, so the count is checked first.
        let mut triangles = vec!["[0,1,2]"; MAX_TRIMESH_TRIANGLES];
        triangles.push("\"not a triangle\"");
        let mesh = format!(
            r#"{{"vertices": [[0,0,0], [0,0,1], [1,0,0]], "triangles": [{}]}}"#,
            triangles.join(",")
        );
        assert_eq!(
            error(&mesh_scene(&mesh)),
            format!("shapes[1].trimesh.triangles: more than {MAX_TRIMESH_TRIANGLES} triangles (the limit)")
        );
    }

    #[test]
    fn hull_point_count_is_checked_while_reading_points() {
        // One point too many; the last is not even a point, so the count is checked first.
        let mut points = vec!["[0,0,0]"; MAX_HULL_INPUT_POINTS];
        points.push("\"not a point\"");
        let text = format!(
            r#"{{"shapes": [{{"hull": {{"points": [{}]}}}}], "bodies": []}}"#,
            points.join(",")
        );
        assert_eq!(
            error(&text),
            format!("shapes[0].hull.points: more than {MAX_HULL_INPUT_POINTS} points (the limit)")
        );
    }

    #[test]
    fn non_finite_results_are_refused_before_writing() {
        let good = Manifold::new(Vec3::Y, -0.5);
        let mut bad_point = good;
        bad_point.push(crate::manifold::ContactPoint {
            position: DVec3::new(0.0, f64::INFINITY, 0.0),
            depth: 0.5,
            id: crate::manifold::FeatureId(1),
        });
        let cases = [
            (Manifold::new(Vec3::new(f32::NAN, 0.0, 0.0), 0.0), "normal"),
            (Manifold::new(Vec3::Y, f32::NEG_INFINITY), "separation"),
            (bad_point, "points[0].position"),
        ];
        for (manifold, field) in cases {
            let mut out = Vec::new();
            let err =
                write_results_json(&mut out, &[[0, 1], [4, 2]], &[Some(good), Some(manifold)]).unwrap_err();
            assert_eq!(
                err.to_string(),
                format!("the result of pair 1 ([4, 2]) is not finite: {field}")
            );
            assert!(out.is_empty(), "nothing is written");
        }
    }

    #[test]
    fn write_errors_are_returned() {
        struct Full;
        impl io::Write for Full {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::Error::from(io::ErrorKind::StorageFull))
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let err = write_results_json(Full, &[[0, 1]], &[Some(Manifold::new(Vec3::Y, 0.0))]).unwrap_err();
        assert!(
            matches!(err, WriteResultsError::Io(ref e) if e.kind() == io::ErrorKind::StorageFull),
            "{err}"
        );
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

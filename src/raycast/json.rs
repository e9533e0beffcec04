//! The JSON ray scene (input) and hits (output) of `hullsat raycast`.
//!
//! Scene: the `collide` scene format ([`crate::scene::json`]) with `rays` instead of `pairs` and
//! `margin`: `"rays": [{"origin": [x,y,z], "direction": [x,y,z], "max_distance": t}, ...]`
//! (`max_distance` optional: unbounded). Hits: `{"hits": [[{"body": b, "distance": t,
//! "point": [x,y,z], "normal": [x,y,z]}, ...], ...]}`, one list per ray in ray order.
//!
//! Parsing: shapes and bodies through [`parse_scene_extension`] (the `collide` reader, same
//! messages); each ray's fields by hand so every error names its JSON path (`rays[3].direction`);
//! origins are read as f64; a ray is then built by [`Ray::new`], whose errors are placed at
//! the field they concern.

use std::fmt::Write;

use glam::{DVec3, Vec3};
use serde_json::Value;

use super::ray::{Ray, RayError, RayHit};
use crate::scene::json::parse_scene_extension;
use crate::scene::{Body, InputError};
use crate::shape::Shape;

/// A parsed and checked ray scene.
#[derive(Clone, Debug, PartialEq)]
pub struct RayScene {
    /// Shapes, shared by any number of bodies.
    pub shapes: Vec<Shape>,
    /// Bodies (rotations normalized).
    pub bodies: Vec<Body>,
    /// Rays, in input order.
    pub rays: Vec<Ray>,
}

/// The fields a ray object may have.
const RAY_FIELDS: [&str; 3] = ["origin", "direction", "max_distance"];

/// Parses and checks a ray scene from JSON text (format in the module docs). Errors name the
/// JSON path of the problem; syntax errors use the path `$`.
pub fn parse_ray_scene_json(text: &str) -> Result<RayScene, InputError> {
    let (root, shapes, bodies) = parse_scene_extension(text, &["rays"])?;
    let rays = root
        .get("rays")
        .ok_or_else(|| InputError::new("rays", "missing field"))?;
    let rays = rays
        .as_array()
        .ok_or_else(|| InputError::new("rays", format!("expected an array, got {}", kind(rays))))?
        .iter()
        .enumerate()
        .map(|(i, v)| parse_ray(v, &format!("rays[{i}]")))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(RayScene { shapes, bodies, rays })
}

fn parse_ray(value: &Value, path: &str) -> Result<Ray, InputError> {
    let object = value
        .as_object()
        .ok_or_else(|| InputError::new(path, format!("expected an object, got {}", kind(value))))?;
    if let Some(key) = object.keys().find(|k| !RAY_FIELDS.contains(&k.as_str())) {
        return Err(InputError::new(
            format!("{path}.{key}"),
            format!("unknown field (expected one of: {})", RAY_FIELDS.join(", ")),
        ));
    }
    let field = |key: &str| {
        object
            .get(key)
            .ok_or_else(|| InputError::new(format!("{path}.{key}"), "missing field"))
    };
    let origin = DVec3::from_array(three_numbers(field("origin")?, &format!("{path}.origin"))?);
    let direction = three_numbers(field("direction")?, &format!("{path}.direction"))?;
    let max_distance = match object.get("max_distance") {
        None => None,
        Some(v) => Some(
            v.as_f64()
                .map(|x| x as f32)
                .filter(|x| x.is_finite())
                .ok_or_else(|| {
                    InputError::new(
                        format!("{path}.max_distance"),
                        format!("expected a finite number, got {}", kind(v)),
                    )
                })?,
        ),
    };
    Ray::new(origin, DVec3::from_array(direction).as_vec3(), max_distance).map_err(|e| {
        let field = match e {
            RayError::BadOrigin => "origin",
            RayError::BadDirection => "direction",
            RayError::BadMaxDistance(_) => "max_distance",
        };
        InputError::new(format!("{path}.{field}"), e.to_string())
    })
}

/// Exactly three JSON numbers (finite as f64; [`Ray::new`] checks the f32 range).
fn three_numbers(value: &Value, path: &str) -> Result<[f64; 3], InputError> {
    let error = || InputError::new(path, format!("expected 3 finite numbers, got {}", kind(value)));
    let items = value.as_array().filter(|a| a.len() == 3).ok_or_else(error)?;
    let mut out = [0.0; 3];
    for (o, item) in out.iter_mut().zip(items) {
        *o = item.as_f64().filter(|x| x.is_finite()).ok_or_else(error)?;
    }
    Ok(out)
}

/// A short description of a JSON value for error messages: scalars as themselves, else the type.
fn kind(value: &Value) -> String {
    match value {
        Value::Array(a) => format!("an array of {} items", a.len()),
        Value::Object(_) => "an object".into(),
        Value::String(_) => "a string".into(),
        other => other.to_string(),
    }
}

/// Writes the hits: one list per ray, in ray order, one ray per line. Points are world space
/// (f64, shortest text that reads back the same), normals world space.
pub fn write_hits_json(hits: &[Vec<RayHit>]) -> String {
    let mut out = String::from("{\"hits\": [");
    for (i, list) in hits.iter().enumerate() {
        out.push_str(if i == 0 { "\n  [" } else { ",\n  [" });
        for (j, h) in list.iter().enumerate() {
            let (p, n): (DVec3, Vec3) = (h.point, h.normal);
            let _ = write!(
                out,
                "{}{{\"body\": {}, \"distance\": {}, \"point\": [{}, {}, {}], \"normal\": [{}, {}, {}]}}",
                if j == 0 { "" } else { ", " },
                h.body,
                h.distance,
                p.x,
                p.y,
                p.z,
                n.x,
                n.y,
                n.z
            );
        }
        out.push(']');
    }
    out.push_str(if hits.is_empty() { "]}\n" } else { "\n]}\n" });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCENE: &str = r#"{"shapes": [{"sphere": {"radius": 1}}],
        "bodies": [{"shape": 0, "position": [0,0,0], "rotation": [0,0,0,1]}],
        "rays": [{"origin": [-5,0,0], "direction": [2,0,0], "max_distance": 10},
                 {"origin": [100000000.25,0,0], "direction": [0,1,0]}]}"#;

    fn error(text: &str) -> String {
        parse_ray_scene_json(text).unwrap_err().to_string()
    }

    #[test]
    fn parses_rays_with_f64_origins_and_unit_directions() {
        let scene = parse_ray_scene_json(SCENE).unwrap();
        assert_eq!(scene.rays.len(), 2);
        assert_eq!(scene.rays[0].direction(), Vec3::X);
        assert_eq!(scene.rays[0].max_distance(), 10.0);
        assert_eq!(scene.rays[1].origin().x, 100_000_000.25);
        assert_eq!(scene.rays[1].max_distance(), f32::INFINITY);
    }

    #[test]
    fn each_problem_names_its_path() {
        let cases = [
            (
                "[2,0,0]",
                "[0,0,0]",
                "rays[0].direction: expected a finite non-zero vector",
            ),
            (
                "[2,0,0]",
                "[2,0]",
                "rays[0].direction: expected 3 finite numbers, got an array of 2 items",
            ),
            (
                "[2,0,0]",
                "[1e39,0,0]",
                "rays[0].direction: expected a finite non-zero vector",
            ),
            (
                "[-5,0,0]",
                "[-5,\"0\",0]",
                "rays[0].origin: expected 3 finite numbers, got an array of 3 items",
            ),
            (
                "[-5,0,0]",
                "[1e39,0,0]",
                "rays[0].origin: expected 3 finite numbers within the supported range ±1e12",
            ),
            (
                "10}",
                "-1}",
                "rays[0].max_distance: expected a number >= 0, got -1",
            ),
            (
                "10}",
                "null}",
                "rays[0].max_distance: expected a finite number, got null",
            ),
            (
                "\"max_distance\"",
                "\"max_dist\"",
                "rays[0].max_dist: unknown field (expected one of: origin, direction, max_distance)",
            ),
            (
                "\"rays\"",
                "\"pairs\"",
                "pairs: unknown field (expected one of: shapes, bodies, rays)",
            ),
            (
                "\"shape\": 0",
                "\"shape\": 3",
                "bodies[0].shape: shape 3 does not exist (1 shapes)",
            ),
        ];
        for (from, to, expected) in cases {
            let text = SCENE.replacen(from, to, 1);
            assert_ne!(text, SCENE, "{from}");
            assert_eq!(error(&text), expected);
        }
        assert_eq!(
            error(&SCENE.replace("\"origin\": [-5,0,0], ", "")),
            "rays[0].origin: missing field"
        );
        let no_rays = r#"{"shapes": [], "bodies": []}"#;
        assert_eq!(error(no_rays), "rays: missing field");
        assert_eq!(
            error(r#"{"shapes": [], "bodies": [], "rays": {}}"#),
            "rays: expected an array, got an object"
        );
    }

    #[test]
    fn hits_are_written_one_list_per_ray() {
        let ray = Ray::new(DVec3::new(-5.0, 0.0, 0.0), Vec3::X, None).unwrap();
        let hit = RayHit {
            body: 3,
            distance: 4.0,
            point: ray.point_at(4.0),
            normal: -Vec3::X,
        };
        let text = write_hits_json(&[vec![hit, hit], vec![]]);
        let one = r#"{"body": 3, "distance": 4, "point": [-1, 0, 0], "normal": [-1, -0, -0]}"#;
        assert_eq!(text, format!("{{\"hits\": [\n  [{one}, {one}],\n  []\n]}}\n"));
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["hits"][0][1]["point"][0].as_f64(), Some(-1.0));
        assert_eq!(write_hits_json(&[]), "{\"hits\": []}\n");
    }
}

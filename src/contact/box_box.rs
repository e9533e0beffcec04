//! Box against box: the 15-axis box SAT ([`query_boxes`]), then the hull routine's manifold
//! construction on the boxes' hulls ([`manifold_from_sat`](crate::contact::manifold_from_sat):
//! clip of the two faces, edge contact, GJK for separated pairs). The manifold is the hull-hull
//! one up to rounding (exact ties of the SAT may pick another axis). No bounding-sphere test
//! first, unlike hulls: a box's sphere rarely rejects a broadphase pair, and the box SAT's first
//! face query is about as cheap.

use crate::contact::hull_hull::manifold_from_sat_in_a;
use crate::manifold::Manifold;
use crate::pose::{Isometry, Pose};
use crate::query::sat::SatResult;
use crate::query::sat_box_box::query_boxes;
use crate::shape::Cuboid;

/// The manifold between box `a` at `pose_a` and box `b` at `pose_b` (world poses), or `None`
/// when they are farther apart than `margin` (length units). Normal from A toward B, world space.
pub fn collide_box_box(
    a: &Cuboid,
    pose_a: &Pose,
    b: &Cuboid,
    pose_b: &Pose,
    margin: f32,
) -> Option<Manifold> {
    collide_box_box_reporting_sat(a, pose_a, b, &pose_a.relative_to_self(pose_b), margin).0
}

/// [`collide_box_box`] given B's pose in A's frame (`pose_a.relative_to_self(pose_b)`), and the
/// SAT result it rests on (A's frame): what [`crate::ContactCache`] keeps.
pub(crate) fn collide_box_box_reporting_sat(
    a: &Cuboid,
    pose_a: &Pose,
    b: &Cuboid,
    b_in_a: &Isometry,
    margin: f32,
) -> (Option<Manifold>, SatResult) {
    let sat = query_boxes(a, b, b_in_a, margin);
    (
        manifold_from_sat_in_a(a.hull(), pose_a, b.hull(), b_in_a, &sat, margin),
        sat,
    )
}

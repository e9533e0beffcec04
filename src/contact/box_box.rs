//! Box against box: the closed-form box SAT, then a box face clip for the common case; given
//! the SAT's result, the hull routine's manifolds bit for bit.
//!
//! 1. B's pose in A's frame, the box SAT ([`query_boxes`]); beyond the margin, no manifold.
//!    Apart within the margin, GJK on the closed-form support maps ([`PosedBox`]).
//! 2. Contact on the SAT's axis ([`closest_along_axis`]): a face axis takes the box face clip
//!    ([`add_box_face_contact`]), an edge axis the hull routine's point ([`edge_pair_point`]).
//! 3. Everything else, and a face clip that keeps no point: the hull routine on the boxes' hulls
//!    ([`manifold_from_sat`](crate::contact::manifold_from_sat)), with step 1's GJK result.
//! 4. Points and normal from A's frame to world.
//!
//! WGSL twin: `shaders/narrowphase/sat_box.wgsl`, then `clip.wgsl`. See docs/design/contacts.md.

use crate::constants::{CONTACT_REDUCTION_TOLERANCE, pair_scale};
use crate::contact::box_clip::add_box_face_contact;
use crate::contact::hull_hull::{closest_along_axis, edge_pair_point, manifold_from_sat_and_distance};
use crate::manifold::Manifold;
use crate::pose::{Isometry, Pose};
use crate::query::gjk::closest_points;
use crate::query::sat::{SatAxis, SatResult};
use crate::query::sat_box_box::query_boxes;
use crate::query::support_box::PosedBox;
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
    let mut manifold = None;
    collide_box_box_into(a, pose_a, b, pose_b, margin, &mut manifold);
    manifold
}

/// [`collide_box_box`] written into `out` (the batch loops' output slot: no copy of the
/// manifold on the way).
pub(crate) fn collide_box_box_into(
    a: &Cuboid,
    pose_a: &Pose,
    b: &Cuboid,
    pose_b: &Pose,
    margin: f32,
    out: &mut Option<Manifold>,
) {
    let b_in_a = pose_a.relative_to_self(pose_b);
    let sat = query_boxes(a, b, &b_in_a, margin);
    manifold_from_box_sat(a, pose_a, b, &b_in_a, &sat, margin, out);
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
    let mut manifold = None;
    manifold_from_box_sat(a, pose_a, b, b_in_a, &sat, margin, &mut manifold);
    (manifold, sat)
}

/// Steps 2 to 4 given step 1's SAT result `sat` (B posed at `b_in_a` in A's frame), written
/// into `out`.
#[inline(always)]
fn manifold_from_box_sat(
    a: &Cuboid,
    pose_a: &Pose,
    b: &Cuboid,
    b_in_a: &Isometry,
    sat: &SatResult,
    margin: f32,
    out: &mut Option<Manifold>,
) {
    if sat.is_separated(margin) {
        *out = None;
        return;
    }
    // Apart within the margin: GJK on the boxes' closed-form support maps.
    let exact = (sat.separation > 0.0)
        .then(|| {
            let posed = |half_extents, pose| PosedBox { half_extents, pose };
            closest_points(
                &posed(a.half_extents(), Isometry::IDENTITY),
                &posed(b.half_extents(), *b_in_a),
            )
        })
        .flatten();
    // 2. Where the hull routine builds the contact on the SAT's axis (touching or overlapping,
    // or apart within the margin with GJK's direction along the axis: its step 5), the box
    // face clip or its edge contact.
    let on_axis = exact.is_none_or(|e| e.distance <= margin && closest_along_axis(&e, sat.normal));
    if on_axis && box_manifold_on_axis_into(a, pose_a, b, b_in_a, sat, margin, out) {
        return;
    }
    // 3. Everything else: the hull routine (its own step 6 moves the manifold to world).
    *out = manifold_from_sat_and_distance(a.hull(), pose_a, b.hull(), b_in_a, sat, margin, exact);
}

/// Step 2 on the axis of `sat` alone, then step 4 (separation `sat.separation`): the box face
/// clip or the edge contact, `None` when a face clip keeps no point. Also for a caller that
/// chose the axis itself ([`crate::ContactCache`]). B posed at `b_in_a` in A's frame.
pub(crate) fn box_manifold_on_axis(
    a: &Cuboid,
    pose_a: &Pose,
    b: &Cuboid,
    b_in_a: &Isometry,
    sat: &SatResult,
    margin: f32,
) -> Option<Manifold> {
    let mut manifold = None;
    box_manifold_on_axis_into(a, pose_a, b, b_in_a, sat, margin, &mut manifold);
    manifold
}

/// [`box_manifold_on_axis`] written into `out`; true when it holds a manifold.
#[inline]
fn box_manifold_on_axis_into(
    a: &Cuboid,
    pose_a: &Pose,
    b: &Cuboid,
    b_in_a: &Isometry,
    sat: &SatResult,
    margin: f32,
    out: &mut Option<Manifold>,
) -> bool {
    // Filled in place (a manifold made first and then stored would be copied).
    let manifold = out.insert(Manifold::default());
    manifold.normal = sat.normal;
    manifold.separation = sat.separation;
    if let SatAxis::EdgePair { edge_a, edge_b } = sat.axis {
        // The hull routine's edge contact (`manifold_on_axis`).
        manifold.push(edge_pair_point(
            a.hull(),
            b.hull(),
            b_in_a,
            [edge_a, edge_b],
            sat.axis_separation,
        ));
    } else {
        let tie_tolerance = CONTACT_REDUCTION_TOLERANCE * pair_scale(a.hull().radius(), b.hull().radius());
        add_box_face_contact(a, b, b_in_a, sat.axis, margin, tie_tolerance, manifold);
    }
    if manifold.point_count() == 0 {
        *out = None;
        return false;
    }
    // 4. To world.
    manifold.move_to_world(pose_a);
    true
}

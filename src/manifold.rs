//! Contact manifolds: the output of every pair query.

use glam::{DVec3, Vec3};

use crate::pose::Pose;

/// Most contact points a manifold holds.
pub const MAX_MANIFOLD_POINTS: usize = 4;

/// A packed, frame-to-frame stable id of the features that produced a contact point, so a
/// solver can match points between frames and warm-start. What the fields name depends on the
/// kind (see [`Self::FACE_A`], [`Self::FACE_B`], [`Self::EDGE_PAIR`], [`Self::OTHER`]):
///
/// ```text
///  31  30 | 29 | 28 ............... 15 | 14 ................. 0
///   kind  |flag|  feature on A / ref   |  feature on B / incident
///   2 bit |1bit|        14 bits        |        15 bits
/// ```
///
/// Indices refer to the hull's own vertex, face and edge arrays, which is why hulls are capped
/// at [`crate::hull::MAX_HULL_VERTICES`] vertices: every index fits its field.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FeatureId(pub u32);

impl FeatureId {
    /// Clipped point whose reference face belongs to body A. Flag 0, an incident vertex kept:
    /// high = reference face index, low = incident vertex index. Flag 1, an incident edge cut by a
    /// side plane: high = the reference side edge, low = the incident edge (each by its start
    /// vertex index).
    pub const FACE_A: u32 = 0;
    /// Clipped point whose reference face belongs to body B: as [`Self::FACE_A`], with A and B
    /// swapped (high names the reference body's feature, low the incident body's).
    pub const FACE_B: u32 = 1;
    /// Closest points of an edge of A and an edge of B: flag 0, high = A's edge index, low = B's.
    pub const EDGE_PAIR: u32 = 2;
    /// Closest-point or primitive (sphere, capsule, half-space) contact: high = a feature on A,
    /// low = a feature on B, flag routine-specific.
    pub const OTHER: u32 = 3;
    /// Largest value of the high (A / reference) field.
    pub const HIGH_MAX: u32 = (1 << 14) - 1;
    /// Largest value of the low (B / incident) field.
    pub const LOW_MAX: u32 = (1 << 15) - 1;

    /// Packs an id; fields wider than their bits are masked (hull limits keep them in range).
    #[inline]
    pub const fn new(kind: u32, flag: bool, high: u32, low: u32) -> Self {
        debug_assert!(kind < 4 && high <= Self::HIGH_MAX && low <= Self::LOW_MAX);
        FeatureId(
            (kind & 3) << 30 | (flag as u32) << 29 | (high & Self::HIGH_MAX) << 15 | (low & Self::LOW_MAX),
        )
    }

    /// The id of the same feature pair with bodies A and B exchanged: kinds `FACE_A` and
    /// `FACE_B` exchanged (the reference face's owner changes name, the fields keep naming the
    /// reference and incident features); for `EDGE_PAIR` and `OTHER` the A and B fields
    /// exchanged. Both fields fit either width: hull indices stay below 2^14.
    pub const fn swapped(self) -> Self {
        match self.kind() {
            Self::FACE_A | Self::FACE_B => FeatureId(self.0 ^ (1 << 30)),
            kind => Self::new(kind, self.flag(), self.low(), self.high()),
        }
    }

    /// The 2-bit kind (`FACE_A`, `FACE_B`, `EDGE_PAIR` or `OTHER`).
    pub const fn kind(self) -> u32 {
        self.0 >> 30
    }

    /// The flag bit (its meaning per kind: see the kind constants).
    pub const fn flag(self) -> bool {
        (self.0 >> 29) & 1 == 1
    }

    /// The 14-bit field for body A or the reference body.
    pub const fn high(self) -> u32 {
        (self.0 >> 15) & Self::HIGH_MAX
    }

    /// The 15-bit field for body B or the incident body.
    pub const fn low(self) -> u32 {
        self.0 & Self::LOW_MAX
    }
}

/// One contact point of a manifold.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ContactPoint {
    /// World position, midway between the two surfaces.
    pub position: DVec3,
    /// Penetration depth along the manifold normal, in length units: positive = overlapping,
    /// negative = a speculative point that is still apart by `-depth`.
    pub depth: f32,
    /// Which features made this point; stable while the contact configuration is unchanged.
    pub id: FeatureId,
}

/// The contact between two bodies A and B: one per touching pair.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Manifold {
    /// Unit normal in world space, pointing from body A toward body B.
    pub normal: Vec3,
    /// Signed distance between the surfaces along `normal`, in length units:
    /// negative = penetrating by `-separation`, positive = apart (within the margin).
    pub separation: f32,
    /// Contact points; only the first [`Manifold::point_count`] are meaningful (use
    /// [`Manifold::points`]).
    pub points: [ContactPoint; MAX_MANIFOLD_POINTS],
    /// How many of `points` are in use (1 to 4 for a manifold that is returned); private so it
    /// can never exceed the array ([`Manifold::push`] is the only way to add a point).
    point_count: u32,
}

impl Manifold {
    /// A manifold with no points yet.
    pub fn new(normal: Vec3, separation: f32) -> Self {
        Manifold {
            normal,
            separation,
            ..Default::default()
        }
    }

    /// How many points are in use (1 to 4 for a manifold that is returned).
    pub fn point_count(&self) -> usize {
        self.point_count as usize
    }

    /// The points in use.
    pub fn points(&self) -> &[ContactPoint] {
        &self.points[..self.point_count as usize]
    }

    /// Appends a point; returns `false` (and drops it) when the manifold is full.
    pub fn push(&mut self, point: ContactPoint) -> bool {
        if (self.point_count as usize) < MAX_MANIFOLD_POINTS {
            self.points[self.point_count as usize] = point;
            self.point_count += 1;
            true
        } else {
            false
        }
    }

    /// This manifold, computed in a body's local frame (normal and positions in that frame),
    /// moved to the world by that body's `pose`; positions in f64 ([`Pose::transform_dpoint`]).
    pub fn to_world(mut self, pose: &Pose) -> Manifold {
        self.move_to_world(pose);
        self
    }

    /// [`Self::to_world`] in place.
    #[inline]
    pub fn move_to_world(&mut self, pose: &Pose) {
        self.normal = pose.transform_vector(self.normal);
        for point in &mut self.points[..self.point_count as usize] {
            point.position = pose.transform_dpoint(point.position);
        }
    }

    /// The same contact with A and B exchanged: normal negated, positions and depths kept, ids
    /// relabelled ([`FeatureId::swapped`]).
    pub fn swapped(&self) -> Manifold {
        let mut swapped = *self;
        swapped.swap();
        swapped
    }

    /// [`Self::swapped`] in place.
    #[inline]
    pub fn swap(&mut self) {
        self.normal = -self.normal;
        for point in &mut self.points[..self.point_count as usize] {
            point.id = point.id.swapped();
        }
    }

    /// A and B exchanged for a manifold whose ids name the same features in either order (a
    /// triangle mesh's contacts, [`crate::trimesh::mesh_feature_id`], which
    /// [`FeatureId::swapped`] would scramble): normal negated, points and ids kept.
    #[inline]
    pub fn swap_keeping_ids(&mut self) {
        self.normal = -self.normal;
    }
}

//! Every tolerance in one place, with its unit and what it trades.
//!
//! Relative tolerances are fractions of a pair's *scale*: the sum of the two shapes' bounding
//! radii. The ones the GPU shader uses are mirrored as WGSL `const`s in `shaders/sat.wgsl`, and a
//! test checks the two agree.

/// Axis preference, relative to the pair's scale. A face of B wins over a face of A, and an edge
/// pair wins over the best face, only when its separation is larger by this much. Keeps the
/// manifold from flickering between nearly equal axes frame to frame; larger prefers faces more.
/// The reported separation is still the exact largest one over all axes.
pub const AXIS_PREFERENCE_TOLERANCE: f32 = 1.0e-3;

/// Edge pairs whose unit directions have `|cross| <` this (sine of the angle) are parallel and
/// skipped: their axis is ill-defined, and a face axis covers the contact.
pub const PARALLEL_EDGE_SINE: f32 = 1.0e-3;

// Contact manifolds

/// Tie tolerance of contact point reduction, relative to the pair's scale. Depths, distances and
/// triangle heights closer than this count as equal and the lowest polygon index wins, so a
/// symmetric contact (a face resting on a face) keeps the same points, and ids, frame to frame.
/// Larger trades a slightly smaller contact area for more stability.
pub const CONTACT_REDUCTION_TOLERANCE: f32 = 1.0e-3;

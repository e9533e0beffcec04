//! Tolerances of tests/box_box.rs, which compares the box SAT with the hull SAT on the CPU (two
//! routines that round differently). GPU results are judged by `hullsat::contract` instead.

/// Relative tolerance on separations, a fraction of the pair's scale (radius A + radius B):
/// f32 rounding differs between the CPU and the GPU (fused multiply-adds, sqrt and division
/// precision), a few ulps of the scale.
pub const SEPARATION_TOLERANCE: f32 = 1.0e-5;

/// Largest distance between two unit normals of the same axis computed on both sides.
pub const NORMAL_TOLERANCE: f32 = 1.0e-3;

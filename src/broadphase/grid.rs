//! The grids of the CPU broadphase: equal-width slabs across one axis ([`Slabs`]), the scene's
//! tiles (slabs across all three world axes, each tile swept on its own: [`Tiles`]) and a tile's
//! cells (slabs across the two cross axes of the sweep: [`Cells`]). Every index is monotonic in
//! its coordinate and clamped to the grid, so a point between two coordinates lands between
//! their slabs: what the sweep's count-once rules rest on.

use glam::Vec3;

/// Most slabs a grid cuts one axis into; bounds the copies of a box spanning them all.
const MAX_SLABS: usize = 256;

/// Most copies of the boxes a tile's cells may hold, per box: past it the second cross axis is
/// cut into fewer slabs (down to one), so boxes spanning many cells cannot multiply memory.
const COPIES_PER_BOX: usize = 4;

/// Bodies a tile is sized for: a tile's sweep (its boxes, cells and copies, about 40 bytes a
/// body) stays within a core's cache, and the scene's tiles number about one per this many
/// bodies. Smaller tiles hold less per thread but repeat more boxes across tile borders.
pub(super) const BODIES_PER_TILE: usize = 4096;

/// Most tile memberships per body: past it the tiles grow (twice as wide) until a body reaches
/// fewer tiles on average, so big bodies among small ones cannot multiply the member lists.
pub(super) const TILE_MEMBERSHIPS_PER_BODY: usize = 2;

/// Equal-width slabs over `lo..hi` on one world axis (coordinates outside land in the end
/// slabs).
#[derive(Clone, Copy, Debug)]
pub(super) struct Slabs {
    /// Lower end of the first slab.
    lo: f32,
    /// Upper end of the last slab.
    hi: f32,
    /// Slabs per length unit; 0 for one slab.
    per_length: f32,
    /// Number of slabs, at least 1.
    count: usize,
    /// The last slab's index, `count - 1`, as a float (exact: at most MAX_SLABS).
    last: f32,
}

impl Slabs {
    /// `count` slabs over `lo..hi` (clamped to `1..=MAX_SLABS`); one when the span is empty or
    /// not finite.
    pub fn over(lo: f32, hi: f32, count: usize) -> Slabs {
        let span = hi - lo;
        let count = if span > 0.0 && span.is_finite() {
            count.clamp(1, MAX_SLABS)
        } else {
            1
        };
        let per_length = if count > 1 { count as f32 / span } else { 0.0 };
        Slabs {
            lo,
            hi,
            per_length,
            count,
            last: (count - 1) as f32,
        }
    }

    /// Slabs over `lo..hi` about `width` wide (one when `width` is not positive).
    pub fn about(lo: f32, hi: f32, width: f32) -> Slabs {
        let count = if width > 0.0 {
            ((hi - lo) / width).ceil()
        } else {
            1.0
        };
        // `as` saturates: a NaN or huge quotient gives 0 or usize::MAX, clamped by `over`.
        Slabs::over(lo, hi, count as usize)
    }

    /// Half as many slabs over the same span (at least one).
    pub fn coarser(&self) -> Slabs {
        Slabs::over(self.lo, self.hi, self.count.div_ceil(2))
    }

    /// Number of slabs.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Slab `i`'s ends, `[lo, hi]` (its neighbours' share them, up to rounding).
    pub fn ends(&self, i: usize) -> [f32; 2] {
        let width = (self.hi - self.lo) / self.count as f32;
        [self.lo + width * i as f32, self.lo + width * (i + 1) as f32]
    }

    /// The slab holding coordinate `x`; non-decreasing in `x`, clamped to the existing slabs.
    #[inline]
    pub fn index(&self, x: f32) -> usize {
        // Clamped as a float (a NaN to slab 0: `max` drops it), then truncated: the same slab
        // as saturating to usize and clamping, in fewer instructions.
        ((x - self.lo) * self.per_length).max(0.0).min(self.last) as u32 as usize
    }

    /// The slabs `[first, last]` that `lo..=hi` reaches.
    #[inline]
    pub fn span(&self, lo: f32, hi: f32) -> [usize; 2] {
        [self.index(lo), self.index(hi)]
    }
}

/// The scene's tiles: slabs across each world axis; tile `(i, j, k)` is `(i * ny + j) * nz + k`.
/// A box is a member of every tile it reaches ([`Tiles::span`]); a pair of boxes belongs to the
/// tile holding the larger of their lower corners, which both reach.
pub(super) struct Tiles {
    /// The slabs across X, Y and Z.
    pub axes: [Slabs; 3],
}

impl Tiles {
    /// Tiles over `lo..hi` (every conservative box of the scene), about `per_tile` bodies each
    /// ([`BODIES_PER_TILE`] but in tests) and each side at least four `mean_width`s (length
    /// units), widened twice over while `memberships(&tiles)` (the tiles all bodies reach,
    /// counted) passes [`TILE_MEMBERSHIPS_PER_BODY`] per body; its last call is with the tiles
    /// returned.
    pub fn new(
        (lo, hi): (Vec3, Vec3),
        mean_width: f32,
        (bodies, per_tile): (usize, usize),
        mut memberships: impl FnMut(&Tiles) -> usize,
    ) -> Tiles {
        let extent = (hi - lo).max(Vec3::ZERO);
        let wanted = (bodies / per_tile.max(1)).max(1);
        let over = |side: f32| {
            let axes = [0, 1, 2].map(|i| Slabs::about(lo[i], hi[i], side));
            Tiles { axes }
        };
        // The side: at least four mean widths and at least the span over MAX_SLABS, grown until
        // the tiles number at most `wanted` (`over` gives one slab per empty axis, and one tile
        // for an infinite side).
        let mut side = (4.0 * mean_width).max(extent.max_element() / MAX_SLABS as f32);
        if side > 0.0 && side.is_finite() {
            while over(side).count() > wanted {
                side *= 1.25;
            }
        } else {
            side = f32::INFINITY;
        }
        loop {
            let tiles = over(side);
            if memberships(&tiles) <= TILE_MEMBERSHIPS_PER_BODY.saturating_mul(bodies) || tiles.count() == 1 {
                return tiles;
            }
            side *= 2.0;
        }
    }

    /// Number of tiles.
    pub fn count(&self) -> usize {
        self.axes.iter().map(Slabs::count).product()
    }

    /// The tile `[i, j, k]`.
    #[inline]
    pub fn tile(&self, [i, j, k]: [usize; 3]) -> usize {
        (i * self.axes[1].count + j) * self.axes[2].count + k
    }

    /// The tile's `[i, j, k]`.
    pub fn coordinates(&self, tile: usize) -> [usize; 3] {
        let (ny, nz) = (self.axes[1].count, self.axes[2].count);
        [tile / (ny * nz), tile / nz % ny, tile % nz]
    }

    /// The tiles `[first, last]` on each axis that the box `lo..=hi` reaches.
    #[inline]
    pub fn span(&self, lo: Vec3, hi: Vec3) -> [[usize; 2]; 3] {
        // Spelled out: an array `map` is not inlined here.
        let [x, y, z] = &self.axes;
        [x.span(lo.x, hi.x), y.span(lo.y, hi.y), z.span(lo.z, hi.z)]
    }

    /// Calls `f` with every tile the box `lo..=hi` reaches.
    #[inline]
    pub fn for_each_tile(&self, lo: Vec3, hi: Vec3, mut f: impl FnMut(usize)) {
        let [[i0, i1], [j0, j1], [k0, k1]] = self.span(lo, hi);
        for i in i0..=i1 {
            for j in j0..=j1 {
                (self.tile([i, j, k0])..=self.tile([i, j, k1])).for_each(&mut f);
            }
        }
    }
}

/// A tile's cells: slabs across the two cross axes `u`, `v` of its sweep, over the tile; cell
/// `(su, sv)` is `su * v.count + sv`.
pub(super) struct Cells {
    u: Slabs,
    v: Slabs,
}

impl Cells {
    /// Cells over `region` (`[[lo_u, hi_u], [lo_v, hi_v]]`) about three times the mean box width
    /// on each cross axis (wider slabs copy fewer boxes and walk longer windows: at 1M mixed
    /// bodies 3 was faster than 2 and 4), with fewer on `v` while the boxes would be copied into
    /// more than [`COPIES_PER_BOX`] cells each on average. `crosses` yields each box's
    /// `[min_u, reach_u, min_v, reach_v]` (reach: upper bound plus the margin).
    pub fn new<I: Iterator<Item = [f32; 4]> + Clone>(region: [[f32; 2]; 2], crosses: I) -> Cells {
        let (sum, boxes) = crosses
            .clone()
            .fold((Vec3::ZERO, 0usize), |(sum, n), [u0, u1, v0, v1]| {
                (sum + Vec3::new(u1 - u0, v1 - v0, 0.0), n + 1)
            });
        let mean = sum / boxes.max(1) as f32;
        let u = Slabs::about(region[0][0], region[0][1], 3.0 * mean.x);
        let mut v = Slabs::about(region[1][0], region[1][1], 3.0 * mean.y);
        let budget = COPIES_PER_BOX.saturating_mul(boxes);
        loop {
            let cells = Cells { u, v };
            let copies: usize = crosses
                .clone()
                .map(|cross| {
                    let ([u0, u1], [v0, v1]) = cells.span(cross);
                    (u1 - u0 + 1) * (v1 - v0 + 1)
                })
                .sum();
            if copies <= budget || v.count == 1 {
                return cells;
            }
            v = v.coarser();
        }
    }

    /// Number of cells.
    pub fn count(&self) -> usize {
        self.u.count * self.v.count
    }

    /// The cell `(su, sv)`.
    #[inline]
    fn cell(&self, su: usize, sv: usize) -> usize {
        su * self.v.count + sv
    }

    /// The cell holding cross coordinates `(x_u, x_v)`.
    #[inline]
    pub fn holding(&self, x_u: f32, x_v: f32) -> usize {
        self.cell(self.u.index(x_u), self.v.index(x_v))
    }

    /// Calls `f` with every cell a box reaches (`[min_u, reach_u, min_v, reach_v]`).
    #[inline]
    pub fn for_each_cell(&self, cross: [f32; 4], mut f: impl FnMut(usize)) {
        let ([u0, u1], [v0, v1]) = self.span(cross);
        for su in u0..=u1 {
            (self.cell(su, v0)..=self.cell(su, v1)).for_each(&mut f);
        }
    }

    /// The slabs `[first, last]` on `u` and on `v` a box reaches.
    #[inline]
    fn span(&self, [u0, u1, v0, v1]: [f32; 4]) -> ([usize; 2], [usize; 2]) {
        (self.u.span(u0, u1), self.v.span(v0, v1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rng::unit_floats;

    /// A slab index is the product saturated to usize and clamped to the last slab, for
    /// coordinates inside, outside, at the ends, infinite and NaN, and never decreases.
    #[test]
    fn slab_indices_saturate_and_clamp() {
        let mut next = unit_floats(13);
        for slabs in [
            Slabs::over(-2.0, 5.0, 1),
            Slabs::over(-2.0, 5.0, 3),
            Slabs::over(1e6, 1e6 + 0.5, 256),
        ] {
            let mut xs: Vec<f32> = (0..5000)
                .map(|_| slabs.lo + (next() * 1.4 - 0.2) * (slabs.hi - slabs.lo))
                .collect();
            xs.extend([
                slabs.lo,
                slabs.hi,
                -0.0,
                0.0,
                f32::MAX,
                f32::MIN,
                f32::INFINITY,
                f32::NEG_INFINITY,
            ]);
            xs.sort_by(f32::total_cmp);
            xs.push(f32::NAN);
            let mut previous = 0;
            for &x in &xs {
                let saturated = (((x - slabs.lo) * slabs.per_length) as usize).min(slabs.count - 1);
                assert_eq!(slabs.index(x), saturated, "x = {x} in {slabs:?}");
                if !x.is_nan() {
                    assert!(slabs.index(x) >= previous, "x = {x} in {slabs:?}");
                    previous = slabs.index(x);
                }
            }
        }
    }
}

//! One narrowphase's hull geometry on the device: the shape table and the hulls' vertices,
//! planes, edges and face loops ([`HullTables`]), uploaded once and bound as group 0 of the SAT
//! and clip kernels, and which SAT pipeline its calls take: one workgroup per pair for a small
//! round enough of whose pairs are split over the workgroup ([`forms_split_pair`], counted while
//! the round's pairs are staged), else one pair per invocation; a resident call by its GPU-side
//! count alone.

use super::kernel_layout::{COOP_EDGE_PAIRS, GpuShape, HullTables, SPLIT_EDGE_PAIRS};
use super::kernels::SatMapping;
use super::layout::{SHAPE_BOX, SHAPE_HULL};
use crate::gpu::buffers::{binding, check_limit, create_buffer};
use crate::gpu::context::DeviceLimits;
use crate::gpu::pipeline::bind_group;
use crate::gpu::{GpuContext, GpuError};
use crate::scene::Body;

/// One narrowphase's hull geometry on the device and the SAT pipeline its calls take.
pub(crate) struct HullGeometry {
    /// Bind group 0 of the SAT and clip kernels.
    pub group: wgpu::BindGroup,
    /// True when two of the shapes (or one shape twice) can form a pair of [`COOP_EDGE_PAIRS`]
    /// edge pairs or more ([`may_form_big_pairs`]): calls take the SAT pipeline with the cooperative
    /// path, else the one without ([`super::kernels::SatKernel`]).
    pub cooperative: bool,
    /// True when two of the shapes can form a pair worth splitting over a workgroup
    /// ([`may_form_split_pairs`]): only then are a small round's split pairs counted.
    pub splittable: bool,
    /// True when ordering the shapes' pairs by cost may pay
    /// ([`super::order::ordering_may_pay`], which the caller of [`Self::upload`]
    /// answers): only then may a call's pairs be ordered.
    pub orderable: bool,
    /// The shape table (kinds and edge counts: [`Self::is_split_pair`]).
    shapes: Vec<GpuShape>,
    /// The group's buffers (vertices, planes, edges, shapes, face loops) and the bytes each is
    /// bound at, for kernels that bind a few of them (the mesh midphase).
    pub buffers: Vec<(wgpu::Buffer, u64)>,
}

/// True when some pair of `shapes`, a shape with itself included (two bodies may share one),
/// has [`COOP_EDGE_PAIRS`] edge pairs or more: the largest edge count of a hull or box, squared,
/// reaches it. The kernel sends two boxes to the box SAT whatever their count, which this
/// ignores: it may only say true where no pair is big, never the other way.
pub(crate) fn may_form_big_pairs(shapes: &[GpuShape]) -> bool {
    let most = shapes
        .iter()
        .filter(|s| s.is_hull())
        .map(|s| u64::from(s.edge_count))
        .max()
        .unwrap_or(0);
    most * most >= u64::from(COOP_EDGE_PAIRS)
}

/// True when some pair of `shapes` that is not two boxes, a shape with itself included, has
/// [`SPLIT_EDGE_PAIRS`] edge pairs or more: the largest hull's edge count times the largest of
/// any hull or box reaches it. Boxes only (and spheres, capsules, half-spaces): never, as two
/// boxes take the box SAT, which has nothing to split.
pub(crate) fn may_form_split_pairs(shapes: &[GpuShape]) -> bool {
    let most = |keep: fn(&GpuShape) -> bool| {
        let counts = shapes.iter().filter(|s| keep(s)).map(|s| u64::from(s.edge_count));
        counts.max().unwrap_or(0)
    };
    most(|s| s.kind == SHAPE_HULL) * most(GpuShape::is_hull) >= u64::from(SPLIT_EDGE_PAIRS)
}

/// True when a pair of shapes `a` and `b` runs split over its workgroup under one workgroup per
/// pair: both hulls or boxes (the GPU's SAT runs it), not two boxes, and [`SPLIT_EDGE_PAIRS`]
/// edge pairs or more (sat.wgsl's `runs_here` and `has_edge_pairs`).
pub(crate) fn forms_split_pair(a: &GpuShape, b: &GpuShape) -> bool {
    let boxes = a.kind == SHAPE_BOX && b.kind == SHAPE_BOX;
    let edge_pairs = u64::from(a.edge_count) * u64::from(b.edge_count);
    a.is_hull() && b.is_hull() && !boxes && edge_pairs >= u64::from(SPLIT_EDGE_PAIRS)
}

impl HullGeometry {
    /// Uploads `tables`, binds them as group 0 (`layout`: the kernels' geometry layout) and picks
    /// the SAT pipeline; `orderable` says whether the tables' pairs may be ordered by cost
    /// ([`super::order::ordering_may_pay`]).
    pub fn upload(
        context: &GpuContext,
        layout: &wgpu::BindGroupLayout,
        tables: &HullTables,
        orderable: bool,
    ) -> Result<Self, GpuError> {
        let device = context.device();
        let face_loops = tables.face_loops();
        let geometry = [
            ("hull vertices", bytemuck::cast_slice::<_, u8>(&tables.vertices)),
            ("hull planes", bytemuck::cast_slice(&tables.planes)),
            ("hull edges", bytemuck::cast_slice(&tables.edges)),
            ("shapes", bytemuck::cast_slice(&tables.shapes)),
            ("hull face loops", bytemuck::cast_slice(&face_loops)),
        ];
        let mut buffers = Vec::with_capacity(geometry.len());
        for (label, bytes) in geometry {
            check_limit(
                label,
                bytes.len() as u64,
                context.limits.max_binding,
                "max_storage_buffer_binding_size",
            )?;
            let buffer = create_buffer(
                device,
                label,
                bytes.len() as u64,
                wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            );
            context.queue().write_buffer(&buffer, 0, bytes);
            buffers.push(buffer);
        }
        // Bound at their exact sizes (buffers are at least 256 bytes), so the kernels'
        // `arrayLength(&shapes)` is the number of shapes (their bounds guard).
        let buffers: Vec<(wgpu::Buffer, u64)> = buffers
            .into_iter()
            .zip(geometry.map(|(_, bytes)| bytes.len() as u64))
            .map(|(b, bytes)| {
                let bound = if bytes == 0 { b.size() } else { bytes };
                (b, bound)
            })
            .collect();
        let entries: Vec<_> = buffers
            .iter()
            .enumerate()
            .map(|(i, (b, bytes))| binding(i as u32, b, 0, *bytes))
            .collect();
        let group = bind_group(device, "hull geometry", layout, &entries);
        Ok(HullGeometry {
            group,
            cooperative: may_form_big_pairs(&tables.shapes),
            splittable: may_form_split_pairs(&tables.shapes),
            orderable,
            shapes: tables.shapes.clone(),
            buffers,
        })
    }

    /// Whether a host dispatch of `pairs` pairs on a device of `limits` counts its split pairs
    /// for [`Self::sat_mapping`]: when the shapes can form one and the dispatch may take one
    /// workgroup per pair ([`SatMapping::fits_per_workgroup`]); else the count is 0.
    pub fn counts_split_pairs(&self, pairs: u64, limits: DeviceLimits) -> bool {
        self.splittable && SatMapping::fits_per_workgroup(pairs, limits.max_workgroups)
    }

    /// True when `pair` of `bodies` is split under one workgroup per pair ([`forms_split_pair`]);
    /// false for indices out of range (a pair that fails the batch's checks).
    pub fn is_split_pair(&self, bodies: &[Body], pair: [u32; 2]) -> bool {
        let shape = |body: u32| {
            let body = bodies.get(body as usize)?;
            self.shapes.get(body.shape as usize)
        };
        match (shape(pair[0]), shape(pair[1])) {
            (Some(a), Some(b)) => forms_split_pair(a, b),
            _ => false,
        }
    }

    /// The SAT mapping of a host dispatch of `pairs` pairs, `split_pairs` of them split (counted
    /// when [`Self::counts_split_pairs`], else 0), on a device of `limits`.
    pub fn sat_mapping(&self, pairs: u64, split_pairs: u64, limits: DeviceLimits) -> SatMapping {
        SatMapping::choose(pairs, split_pairs, self.cooperative, limits.max_workgroups)
    }

    /// The one-pair-per-invocation SAT mapping of a dispatch sized on the GPU: the compound
    /// stage's sub-pairs always, a resident call's pairs from [`Self::resident_per_workgroup_below`]
    /// pairs on.
    pub fn resident_sat_mapping(&self) -> SatMapping {
        SatMapping::PerInvocation {
            cooperative: self.cooperative,
        }
    }

    /// Pairs below which a resident call's SAT takes one workgroup per pair, by the GPU-side
    /// count alone (docs/design/gpu-narrowphase.md argues why no split share), on a device of
    /// `limits` ([`SatMapping::per_workgroup_below`]); 0 when the shapes can form no split pair:
    /// the call then dispatches one pair per invocation only.
    pub fn resident_per_workgroup_below(&self, limits: DeviceLimits) -> u32 {
        if self.splittable {
            SatMapping::per_workgroup_below(limits.max_workgroups) as u32
        } else {
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shape::{Cuboid, Shape, Sphere};
    use glam::Vec3;

    /// A hull of `edges` edges as the shape table records it (only the edge count matters).
    fn hull(edges: u32) -> GpuShape {
        GpuShape {
            kind: super::super::layout::SHAPE_HULL,
            edge_count: edges,
            ..Default::default()
        }
    }

    #[test]
    fn big_pairs_are_possible_from_the_largest_hull_with_itself() {
        let threshold = COOP_EDGE_PAIRS;
        // 256 edges: 256 x 256 = 65,536 reaches it; 255 x 255 does not.
        assert!(may_form_big_pairs(&[hull(256)]), "one hull, two bodies");
        assert!(!may_form_big_pairs(&[hull(255), hull(255)]));
        assert!(may_form_big_pairs(&[hull(12), hull(300)]));
        assert_eq!(256 * 256, threshold);
        // Boxes, spheres and nothing at all: never.
        let tables = HullTables::new(&[
            Shape::Cuboid(Cuboid::new(Vec3::ONE).unwrap()),
            Shape::Sphere(Sphere::new(1.0).unwrap()),
        ]);
        assert!(!may_form_big_pairs(&tables.shapes));
        assert!(!may_form_big_pairs(&[]));
    }

    #[test]
    fn split_pairs_need_a_hull_and_enough_edge_pairs() {
        let boxed = |edges: u32| GpuShape {
            kind: super::super::layout::SHAPE_BOX,
            ..hull(edges)
        };
        // A tetrahedron (6 edges) with itself: 36 edge pairs; a box (12) with it: 72.
        assert!(!may_form_split_pairs(&[hull(6)]));
        assert!(may_form_split_pairs(&[hull(6), boxed(12)]));
        assert!(
            may_form_split_pairs(&[hull(8)]),
            "8 x 8 = 64, one hull, two bodies"
        );
        assert_eq!(8 * 8, SPLIT_EDGE_PAIRS);
        // Boxes only: every pair takes the box SAT, whatever the edge counts.
        assert!(!may_form_split_pairs(&[boxed(12), boxed(12)]));
        assert!(!may_form_split_pairs(&[]));
    }

    #[test]
    fn split_pairs_are_hull_pairs_of_enough_edge_pairs_but_not_two_boxes() {
        let boxed = GpuShape {
            kind: super::super::layout::SHAPE_BOX,
            ..hull(12)
        };
        let sphere = GpuShape {
            kind: super::super::layout::SHAPE_SPHERE,
            ..hull(0)
        };
        assert!(forms_split_pair(&hull(8), &hull(8)), "8 x 8 = 64");
        assert!(!forms_split_pair(&hull(8), &hull(7)), "56");
        assert!(forms_split_pair(&hull(6), &boxed) && forms_split_pair(&boxed, &hull(6)));
        assert!(!forms_split_pair(&boxed, &boxed), "two boxes take the box SAT");
        assert!(!forms_split_pair(&hull(90), &sphere), "CPU-routed");
    }

    #[test]
    fn small_calls_mostly_of_split_pairs_take_one_workgroup_per_pair() {
        use super::super::kernel_layout::{PAIR_PER_WORKGROUP_PAIRS, PAIR_PER_WORKGROUP_SPLIT_SHARE};
        let limit = u64::from(PAIR_PER_WORKGROUP_PAIRS);
        let share = u64::from(PAIR_PER_WORKGROUP_SPLIT_SHARE);
        let per_invocation = |cooperative| SatMapping::PerInvocation { cooperative };
        for cooperative in [false, true] {
            let choose = |pairs, split, max| SatMapping::choose(pairs, split, cooperative, max);
            assert_eq!(choose(1, 1, 65_535), SatMapping::PerWorkgroup);
            assert_eq!(choose(limit - 1, limit - 1, 65_535), SatMapping::PerWorkgroup);
            assert_eq!(choose(limit, limit, 65_535), per_invocation(cooperative));
            // No split pair, or too few of them: a mostly-box call over shapes with a hull.
            assert_eq!(choose(10, 0, 65_535), per_invocation(cooperative));
            assert_eq!(
                choose(1_000, 1_000 / share - 1, 65_535),
                per_invocation(cooperative)
            );
            assert_eq!(choose(1_000, 1_000 / share, 65_535), SatMapping::PerWorkgroup);
            assert_eq!(choose(1_001, 1_000 / share, 65_535), per_invocation(cooperative));
            assert_eq!(choose(8 * share, 8, 65_535), SatMapping::PerWorkgroup);
            // A device whose dispatch dimension cannot hold one workgroup per pair.
            assert_eq!(choose(1_000, 1_000, 999), per_invocation(cooperative));
            assert_eq!(choose(999, 999, 999), SatMapping::PerWorkgroup);
        }
        assert!(SatMapping::fits_per_workgroup(limit - 1, 65_535));
        assert!(!SatMapping::fits_per_workgroup(limit, 65_535));
        assert!(!SatMapping::fits_per_workgroup(1_000, 999));
        // The resident threshold: the constant, or the workgroups one dimension holds, plus one.
        assert_eq!(SatMapping::per_workgroup_below(65_535), limit);
        assert_eq!(SatMapping::per_workgroup_below(999), 1_000);
        assert_eq!(SatMapping::per_workgroup_below(u64::MAX), limit);
        assert_eq!(SatMapping::PerWorkgroup.pairs_per_workgroup(), 1);
        assert_eq!(per_invocation(true).pairs_per_workgroup(), 64);
    }
}

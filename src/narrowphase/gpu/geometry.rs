//! One narrowphase's hull geometry on the device: the shape table and the hulls' vertices,
//! planes, edges and face loops ([`HullTables`]), uploaded once and bound as group 0 of the SAT
//! and clip kernels, and which SAT pipeline its calls take.

use super::kernel_layout::{COOP_EDGE_PAIRS, GpuShape, HullTables};
use crate::gpu::buffers::{binding, check_limit, create_buffer};
use crate::gpu::{GpuContext, GpuError};

/// One narrowphase's hull geometry on the device and the SAT pipeline its calls take.
pub(crate) struct HullGeometry {
    /// Bind group 0 of the SAT and clip kernels.
    pub group: wgpu::BindGroup,
    /// True when two of the shapes (or one shape twice) can form a pair of [`COOP_EDGE_PAIRS`]
    /// edge pairs or more ([`may_form_big_pairs`]): calls take the SAT pipeline with the cooperative
    /// path, else the one without ([`super::kernels::SatKernel`]).
    pub cooperative: bool,
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

impl HullGeometry {
    /// Uploads `tables`, binds them as group 0 (`layout`: the kernels' geometry layout) and picks
    /// the SAT pipeline.
    pub fn upload(
        context: &GpuContext,
        layout: &wgpu::BindGroupLayout,
        tables: &HullTables,
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
        let entries: Vec<_> = buffers
            .iter()
            .zip(geometry.map(|(_, bytes)| bytes.len() as u64))
            .enumerate()
            .map(|(i, (b, bytes))| binding(i as u32, b, 0, if bytes == 0 { b.size() } else { bytes }))
            .collect();
        let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("hull geometry"),
            layout,
            entries: &entries,
        });
        Ok(HullGeometry {
            group,
            cooperative: may_form_big_pairs(&tables.shapes),
        })
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
}

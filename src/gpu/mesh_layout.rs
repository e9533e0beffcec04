//! The GPU form of triangle meshes, one table for every mesh of a shape list: vertices,
//! triangles and each mesh's four-wide triangle BVH ([`crate::trimesh::TriangleBvh`]), indices
//! absolute within the tables so a kernel needs only a mesh's root entry. Shared with
//! `shaders/common/mesh.wgsl` ("must match"; checked by tests/raycast_layout.rs). The tables
//! carry what ray casts need; the narrowphase's mesh pass adds each triangle's contact data
//! beside them ([`GpuMeshTriangleContact`], [`MeshTables::push_contacts`]). Both upload the
//! tables with `MeshTables::upload`.

use bytemuck::{Pod, Zeroable};

use crate::gpu::GpuError;
use crate::gpu::buffers::upload_storage;
use crate::trimesh::{NO_NEIGHBOUR, TRIANGLE_BVH_STACK_SIZE, TriMesh};

/// A [`GpuMeshNode`] child entry naming a leaf node (its index with this bit) rather than an
/// inner node; must match `MESH_LEAF_BIT` in mesh.wgsl.
pub const MESH_LEAF_BIT: u32 = 1 << 31;

/// A [`GpuMeshNode`] child or triangle lane that is unused; must match `MESH_NO_ITEM` in
/// mesh.wgsl.
pub const MESH_NO_ITEM: u32 = u32::MAX;

/// Entries of a kernel's mesh traversal stack, the CPU walk's; must match `MESH_STACK_SIZE` in
/// mesh.wgsl.
pub const MESH_STACK_SIZE: u32 = TRIANGLE_BVH_STACK_SIZE as u32;

/// A four-wide node of a mesh's BVH, mesh frame; must match `GpuMeshNode` in mesh.wgsl (112
/// bytes). Each lane's box is grown as the CPU's ray query grows it ([`crate::raycast::BvhNode::padded`]).
/// An inner node's lanes are its children; a leaf node's lanes its triangles.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuMeshNode {
    /// Lower x of each lane's box, length units.
    pub min_x: [f32; 4],
    /// Lower y of each lane's box.
    pub min_y: [f32; 4],
    /// Lower z of each lane's box.
    pub min_z: [f32; 4],
    /// Upper x of each lane's box.
    pub max_x: [f32; 4],
    /// Upper y of each lane's box.
    pub max_y: [f32; 4],
    /// Upper z of each lane's box.
    pub max_z: [f32; 4],
    /// Inner node: each child's node index, with [`MESH_LEAF_BIT`] for a leaf. Leaf: each
    /// triangle's index in the triangle table. [`MESH_NO_ITEM`]: an unused lane.
    pub items: [u32; 4],
}

impl GpuMeshNode {
    /// A node with every lane unused.
    pub const EMPTY: GpuMeshNode = GpuMeshNode {
        min_x: [0.0; 4],
        min_y: [0.0; 4],
        min_z: [0.0; 4],
        max_x: [0.0; 4],
        max_y: [0.0; 4],
        max_z: [0.0; 4],
        items: [MESH_NO_ITEM; 4],
    };

    /// Writes lane `i`: the box `[min, max]` (already padded) and its item.
    pub(crate) fn set(&mut self, i: usize, min: [f32; 3], max: [f32; 3], item: u32) {
        (self.min_x[i], self.min_y[i], self.min_z[i]) = (min[0], min[1], min[2]);
        (self.max_x[i], self.max_y[i], self.max_z[i]) = (max[0], max[1], max[2]);
        self.items[i] = item;
    }
}

/// A triangle: its corners' indices in the vertex table, front face counter-clockwise
/// ([`crate::trimesh::Triangle`]); must match `GpuMeshTriangle` in mesh.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct GpuMeshTriangle {
    /// Corners `a`, `b`, `c`.
    pub vertices: [u32; 3],
    /// Padding.
    pub _pad: u32,
}

/// What the contact pass needs of a triangle beyond its corners (mesh frame), one per entry of
/// the triangle table; must match `GpuMeshTriangleContact` in mesh.wgsl (32 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuMeshTriangleContact {
    /// Unit front normal ([`TriMesh::plane`]).
    pub normal: [f32; 3],
    /// Bit `k` set when edge `k` is active ([`TriMesh::active_edges`]).
    pub active_edges: u32,
    /// The triangle across edge `k` (its index in the triangle table), [`MESH_NO_ITEM`] where
    /// there is none ([`TriMesh::neighbours`]).
    pub neighbours: [u32; 3],
    /// Padding.
    pub _pad: u32,
}

/// Where one mesh lies in [`MeshTables`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GpuMeshRange {
    /// The root's entry: a node index, with [`MESH_LEAF_BIT`] for a leaf root.
    pub root: u32,
    /// Index of the mesh's triangle 0 in the triangle table (a hit's triangle index in the mesh
    /// is its table index minus this).
    pub first_triangle: u32,
}

/// The tables of any number of meshes, in the order pushed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MeshTables {
    /// BVH nodes of every mesh.
    pub nodes: Vec<GpuMeshNode>,
    /// Vertices, mesh frame, `[x, y, z, 0]`, length units.
    pub vertices: Vec<[f32; 4]>,
    /// Triangles, vertex indices absolute.
    pub triangles: Vec<GpuMeshTriangle>,
}

impl MeshTables {
    /// Appends `mesh` and returns where it lies.
    pub fn push(&mut self, mesh: &TriMesh) -> GpuMeshRange {
        let first_vertex = self.vertices.len() as u32;
        let first_triangle = self.triangles.len() as u32;
        self.vertices
            .extend(mesh.vertices().iter().map(|v| v.extend(0.0).to_array()));
        self.triangles
            .extend(mesh.triangles().iter().map(|t| GpuMeshTriangle {
                vertices: t.map(|i| first_vertex + i),
                _pad: 0,
            }));
        let root = mesh
            .bvh()
            .flatten_into(&mut self.nodes, first_triangle, MESH_LEAF_BIT, |lanes| {
                let mut node = GpuMeshNode::EMPTY;
                for (i, (min, max, item)) in lanes.into_iter().enumerate().filter_map(|(i, l)| Some((i, l?)))
                {
                    node.set(i, min, max, item);
                }
                node
            });
        GpuMeshRange { root, first_triangle }
    }

    /// Appends the contact data of `mesh`, which lies at `range` in these tables, to
    /// `contacts` (indexed as the triangle table).
    pub fn push_contacts(mesh: &TriMesh, range: GpuMeshRange, contacts: &mut Vec<GpuMeshTriangleContact>) {
        contacts.extend(
            (0..mesh.triangles().len() as u32).map(|t| GpuMeshTriangleContact {
                normal: mesh.plane(t).normal.to_array(),
                active_edges: u32::from(mesh.active_edges(t)),
                neighbours: mesh.neighbours(t).map(|n| match n {
                    NO_NEIGHBOUR => MESH_NO_ITEM,
                    n => range.first_triangle + n,
                }),
                _pad: 0,
            }),
        );
    }

    /// The node, vertex and triangle tables as storage buffers on `device` (each at least
    /// 256 bytes); [`GpuError::TooLarge`] for a table beyond `max_binding` bytes.
    pub(crate) fn upload(
        &self,
        device: &wgpu::Device,
        max_binding: u64,
    ) -> Result<[wgpu::Buffer; 3], GpuError> {
        Ok([
            upload_storage(
                device,
                "mesh nodes",
                bytemuck::cast_slice(&self.nodes),
                max_binding,
            )?,
            upload_storage(
                device,
                "mesh vertices",
                bytemuck::cast_slice(&self.vertices),
                max_binding,
            )?,
            upload_storage(
                device,
                "mesh triangles",
                bytemuck::cast_slice(&self.triangles),
                max_binding,
            )?,
        ])
    }
}

const _: () = assert!(size_of::<GpuMeshNode>() == 112);
const _: () = assert!(size_of::<GpuMeshTriangle>() == 16);
const _: () = assert!(size_of::<GpuMeshTriangleContact>() == 32);

#[cfg(test)]
mod tests {
    use glam::Vec3;

    use super::*;

    /// A `cells × cells` grid over `[0, cells]²` with heights `height · sin(i) cos(j)`.
    fn grid(cells: u32, height: f32) -> TriMesh {
        let vertices = (0..=cells)
            .flat_map(|i| (0..=cells).map(move |j| (i as f32, j as f32)))
            .map(|(x, z)| Vec3::new(x, height * x.sin() * z.cos(), z))
            .collect();
        let at = |i: u32, j: u32| i * (cells + 1) + j;
        let triangles = (0..cells)
            .flat_map(|i| (0..cells).map(move |j| (i, j)))
            .flat_map(|(i, j)| {
                [
                    [at(i, j), at(i, j + 1), at(i + 1, j)],
                    [at(i + 1, j), at(i, j + 1), at(i + 1, j + 1)],
                ]
            })
            .collect();
        TriMesh::new(vertices, triangles).unwrap()
    }

    /// The lane's box (lower, upper corner).
    fn lane(node: &GpuMeshNode, i: usize) -> (Vec3, Vec3) {
        (
            Vec3::new(node.min_x[i], node.min_y[i], node.min_z[i]),
            Vec3::new(node.max_x[i], node.max_y[i], node.max_z[i]),
        )
    }

    /// Every triangle under `entry`, each checked inside `bounds` and inside its lane's box.
    fn triangles_under(tables: &MeshTables, entry: u32, bounds: (Vec3, Vec3), out: &mut Vec<u32>) {
        let node = &tables.nodes[(entry & !MESH_LEAF_BIT) as usize];
        for i in 0..4 {
            let item = node.items[i];
            if item == MESH_NO_ITEM {
                continue;
            }
            let (min, max) = lane(node, i);
            assert!(
                min.cmpge(bounds.0).all() && max.cmple(bounds.1).all(),
                "a lane outside its parent's box"
            );
            if entry & MESH_LEAF_BIT != 0 {
                for corner in tables.triangles[item as usize].vertices {
                    let v = Vec3::from_slice(&tables.vertices[corner as usize]);
                    assert!(
                        v.cmpge(min).all() && v.cmple(max).all(),
                        "a corner outside its box"
                    );
                }
                out.push(item);
            } else {
                triangles_under(tables, item, (min, max), out);
            }
        }
    }

    #[test]
    fn contact_data_names_neighbours_by_their_table_index() {
        let meshes = [grid(3, 0.0), grid(4, 1.0)];
        let mut tables = MeshTables::default();
        let mut contacts = Vec::new();
        for mesh in &meshes {
            let range = tables.push(mesh);
            MeshTables::push_contacts(mesh, range, &mut contacts);
        }
        assert_eq!(contacts.len(), tables.triangles.len());
        let first = meshes[0].triangles().len() as u32;
        for t in 0..meshes[1].triangles().len() as u32 {
            let record = contacts[(first + t) as usize];
            assert_eq!(record.normal, meshes[1].plane(t).normal.to_array());
            assert_eq!(record.active_edges, u32::from(meshes[1].active_edges(t)));
            // Each neighbour lies in the same mesh's part of the table and names this one back.
            for n in record.neighbours.into_iter().filter(|&n| n != MESH_NO_ITEM) {
                assert!((first..contacts.len() as u32).contains(&n), "{n}");
                assert!(contacts[n as usize].neighbours.contains(&(first + t)));
            }
        }
        // A grid's inner edges have neighbours; its border edges none.
        assert!(contacts.iter().any(|c| c.neighbours.contains(&MESH_NO_ITEM)));
        assert!(
            contacts
                .iter()
                .any(|c| c.neighbours.iter().all(|&n| n != MESH_NO_ITEM))
        );
    }

    #[test]
    fn two_meshes_keep_absolute_indices_and_nested_boxes() {
        // A flat and a hilly terrain: the second's nodes, triangles and vertices follow the first's.
        let meshes = [grid(3, 0.0), grid(20, 1.0)];
        let mut tables = MeshTables::default();
        let ranges = meshes.each_ref().map(|m| tables.push(m));
        assert_eq!(ranges[1].first_triangle, meshes[0].triangles().len() as u32);
        for (mesh, range) in meshes.iter().zip(ranges) {
            let mut found = Vec::new();
            let everything = (Vec3::splat(f32::MIN), Vec3::splat(f32::MAX));
            triangles_under(&tables, range.root, everything, &mut found);
            found.sort_unstable();
            let expected: Vec<u32> = (0..mesh.triangles().len() as u32)
                .map(|t| range.first_triangle + t)
                .collect();
            assert_eq!(found, expected);
            for (t, triangle) in mesh.triangles().iter().enumerate() {
                let gpu = tables.triangles[(range.first_triangle as usize) + t].vertices;
                for k in 0..3 {
                    let v = Vec3::from_slice(&tables.vertices[gpu[k] as usize]);
                    assert_eq!(v, mesh.vertices()[triangle[k] as usize]);
                }
            }
        }
    }
}

// The ray kernel's cast_complex for shape lists without triangle meshes or compounds: it binds
// no tables for them (so the kernel fits wgpu's default 8 storage buffers) and is never
// reached. Host: src/raycast/gpu.rs; the full one: raycast_complex.wgsl.

fn cast_complex(shape: GpuRayShape, ray: LocalRay) -> LocalHit {
    return no_hit();
}

// Quaternion helpers (unit quaternions as vec4<f32>, xyzw), the one copy every kernel uses:
// prepended to the narrowphase kernels (SAT_WGSL, CLIP_WGSL, RESIDENT_WGSL), the ray-cast
// kernel (RAYCAST_WGSL) and exported for callers' shaders as hullsat::gpu::QUAT_WGSL (a
// GpuBody's rotation moves a manifold's A-frame points to the world).

// Rotates v by the unit quaternion q (xyzw), the same formula as glam's Quat * Vec3.
fn quat_rotate(q: vec4<f32>, v: vec3<f32>) -> vec3<f32> {
    let u = q.xyz;
    return v * (q.w * q.w - dot(u, u)) + u * (2.0 * dot(u, v)) + cross(u, v) * (2.0 * q.w);
}

// Hamilton product a * b (apply b first).
fn quat_mul(a: vec4<f32>, b: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(
        a.w * b.xyz + b.w * a.xyz + cross(a.xyz, b.xyz),
        a.w * b.w - dot(a.xyz, b.xyz),
    );
}

// Inverse of a unit quaternion.
fn quat_conjugate(q: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(-q.xyz, q.w);
}

//! Compute pipelines and bind group layouts, built the same way for every hullsat kernel (SAT,
//! clip, ray casts).
//!
//! 1. [`storage`], [`uniform`]: a storage or uniform buffer binding type.
//! 2. [`bind_group_layout`]: a compute-stage layout with one entry per binding type, numbered
//!    from 0 ([`bind_group_layout_at`] with the binding numbers given).
//! 3. [`compute_pipeline`]: compiles a WGSL source and builds its pipeline (entry point `main`)
//!    over the given bind group layouts, group 0 first ([`compute_pipeline_with_gaps`] when
//!    some group indices are unused, [`compute_pipeline_variants`] for several pipelines of one
//!    module that differ in their entry point or override constants).
//! 4. [`grid`]: the workgroups of a dispatch of one invocation per item, as a 2-D grid.
//! 5. [`BindGroupCache`]: bind groups reused while a call binds the same buffers.

use std::collections::VecDeque;

use super::GpuError;

/// A storage buffer binding type (no dynamic offset, no minimum size).
pub(crate) fn storage(read_only: bool) -> wgpu::BindingType {
    wgpu::BindingType::Buffer {
        ty: wgpu::BufferBindingType::Storage { read_only },
        has_dynamic_offset: false,
        min_binding_size: None,
    }
}

/// A uniform buffer binding type: with a dynamic offset when one buffer holds several
/// dispatches' parameters, `min_size` the parameters' size (`None`: checked at dispatch only).
pub(crate) fn uniform(dynamic_offset: bool, min_size: Option<wgpu::BufferSize>) -> wgpu::BindingType {
    wgpu::BindingType::Buffer {
        ty: wgpu::BufferBindingType::Uniform,
        has_dynamic_offset: dynamic_offset,
        min_binding_size: min_size,
    }
}

/// A bind group of `entries` on `layout`, labelled `label`.
pub(crate) fn bind_group(
    device: &wgpu::Device,
    label: &str,
    layout: &wgpu::BindGroupLayout,
    entries: &[wgpu::BindGroupEntry],
) -> wgpu::BindGroup {
    device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some(label),
        layout,
        entries,
    })
}

/// A compute bind group layout with one entry per binding type, numbered from 0.
pub(crate) fn bind_group_layout(
    device: &wgpu::Device,
    label: &str,
    types: &[wgpu::BindingType],
) -> wgpu::BindGroupLayout {
    let numbered: Vec<(u32, wgpu::BindingType)> = (0..).zip(types.iter().copied()).collect();
    bind_group_layout_at(device, label, &numbered)
}

/// A compute bind group layout with the given binding numbers and types.
pub(crate) fn bind_group_layout_at(
    device: &wgpu::Device,
    label: &str,
    entries: &[(u32, wgpu::BindingType)],
) -> wgpu::BindGroupLayout {
    let entries: Vec<wgpu::BindGroupLayoutEntry> = entries
        .iter()
        .map(|&(binding, ty)| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty,
            count: None,
        })
        .collect();
    device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some(label),
        entries: &entries,
    })
}

/// The compute pipeline `label` of the WGSL `source` (module labelled `file`, entry point
/// `main`), bound to `groups` in order (inside the caller's error scopes).
pub(crate) fn compute_pipeline(
    device: &wgpu::Device,
    label: &str,
    file: &str,
    source: &'static str,
    groups: &[&wgpu::BindGroupLayout],
) -> wgpu::ComputePipeline {
    let groups: Vec<Option<&wgpu::BindGroupLayout>> = groups.iter().copied().map(Some).collect();
    compute_pipeline_with_gaps(device, label, file, source, &groups)
}

/// [`compute_pipeline`] for a kernel that uses only some bind group indices (`None` for the
/// others, e.g. a kernel compiled after the shared declarations whose own bindings are group 2).
pub(crate) fn compute_pipeline_with_gaps(
    device: &wgpu::Device,
    label: &str,
    file: &str,
    source: &'static str,
    groups: &[Option<&wgpu::BindGroupLayout>],
) -> wgpu::ComputePipeline {
    let variant = (label, "main", Default::default());
    let [pipeline] = compute_pipeline_variants(device, file, source, groups, [variant]);
    pipeline
}

/// One compute pipeline per `(label, entry point, options)` of `variants` (override constants,
/// workgroup memory zeroing) from one WGSL `source` (module labelled `file`, parsed once), all
/// over the same bind group layouts (`None` for unused group indices).
pub(crate) fn compute_pipeline_variants<const N: usize>(
    device: &wgpu::Device,
    file: &str,
    source: &'static str,
    groups: &[Option<&wgpu::BindGroupLayout>],
    variants: [(&str, &str, wgpu::PipelineCompilationOptions); N],
) -> [wgpu::ComputePipeline; N] {
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(file),
        source: wgpu::ShaderSource::Wgsl(source.into()),
    });
    let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some(file),
        bind_group_layouts: groups,
        immediate_size: 0,
    });
    variants.map(|(label, entry_point, compilation_options)| {
        device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(label),
            layout: Some(&pipeline_layout),
            module: &module,
            entry_point: Some(entry_point),
            compilation_options,
            cache: None,
        })
    })
}

/// Workgroups of `workgroup_size` for `threads` invocations as a 2-D grid within `max_groups`
/// per dimension (a kernel finds its index with `linear_id`, shaders/bvh/layout.wgsl);
/// [`GpuError::TooLarge`] naming `what` past `max_groups` squared.
pub(crate) fn grid(
    what: &'static str,
    threads: u64,
    workgroup_size: u32,
    max_groups: u64,
) -> Result<(u32, u32), GpuError> {
    let groups = threads.div_ceil(u64::from(workgroup_size)).max(1);
    let x = groups.min(max_groups);
    let y = groups.div_ceil(x);
    if y > max_groups {
        return Err(GpuError::TooLarge {
            what,
            bytes: groups,
            limit: max_groups * max_groups,
            limit_name: "max_compute_workgroups_per_dimension squared",
        });
    }
    Ok((x as u32, y as u32))
}

/// Calls after which a [`BindGroupCache`] entry not used since is dropped, with the buffers
/// it holds (an owner's buffers replaced by larger ones).
const STALE_CALLS: u64 = 16;

/// Bind groups (or a few made together, `G`) kept with the buffers they bind, the last `N`
/// sets: a call that binds the same buffers (wgpu buffers compare by identity) reuses them
/// instead of creating new ones, a few microseconds each. The binding ranges must follow from
/// the buffers alone (e.g. whole buffers), as the key holds nothing else. An entry is dropped,
/// releasing its buffers, when a new one needs its place or after [`STALE_CALLS`] calls unused.
pub(crate) struct BindGroupCache<G, const N: usize> {
    /// The buffers, the groups, and the call that last used them.
    entries: VecDeque<(Vec<wgpu::Buffer>, G, u64)>,
    /// Calls so far.
    calls: u64,
}

impl<G: Clone, const N: usize> Default for BindGroupCache<G, N> {
    fn default() -> Self {
        BindGroupCache {
            entries: VecDeque::with_capacity(N),
            calls: 0,
        }
    }
}

impl<G: Clone, const N: usize> BindGroupCache<G, N> {
    /// The groups made for `buffers`: kept ones, or `make()`'s, kept in place of the oldest.
    pub fn get(&mut self, buffers: &[&wgpu::Buffer], make: impl FnOnce() -> G) -> G {
        self.calls += 1;
        let calls = self.calls;
        self.entries.retain(|(_, _, used)| calls - used <= STALE_CALLS);
        let same = |kept: &Vec<wgpu::Buffer>| kept.iter().eq(buffers.iter().copied());
        if let Some((_, groups, used)) = self.entries.iter_mut().find(|(kept, _, _)| same(kept)) {
            *used = calls;
            return groups.clone();
        }
        if self.entries.len() == N {
            self.entries.pop_front();
        }
        let groups = make();
        let kept = buffers.iter().map(|&buffer| buffer.clone()).collect();
        self.entries.push_back((kept, groups.clone(), calls));
        groups
    }
}

//! What `cast_into` allocates once its [`RayHitSet`] is warm, counted by a global allocator over
//! every thread (rayon's included): on both backends nothing that grows with the rays (the
//! bodies' checked copy and the BVH's scratch grow with the bodies, wgpu's per-submission
//! bookkeeping is a few KB). One test in its own binary, so no other test allocates while it
//! counts.

mod raycast_common;
mod support;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use glam::Vec3;
use hullsat::{CpuRaycaster, RayHit, RayHitSet};
use raycast_common::{gpu_or_skip, random_rays, random_scene};
use support::seeded_rng;

/// Counts allocated bytes (a reallocation as its new size).
struct Counting;

static BYTES: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards every call to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        BYTES.fetch_add(layout.size(), Ordering::Relaxed);
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        BYTES.fetch_add(new_size, Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Bytes allocated while `f` runs.
fn counted(f: impl FnOnce()) -> usize {
    let bytes = BYTES.load(Ordering::SeqCst);
    f();
    BYTES.load(Ordering::SeqCst) - bytes
}

/// Bytes a warm call over ten times the rays may allocate beyond the smaller call's: wgpu's
/// bookkeeping varies by a few KB between submissions; ten times the rays' hits would be
/// hundreds of KB.
const SLACK_BYTES: usize = 16 * 1024;

#[test]
fn a_warm_set_allocates_nothing_that_grows_with_the_rays() {
    let mut rng = seeded_rng(0xa11c);
    let (shapes, bodies) = random_scene(&mut rng, 1000, 30.0, Vec3::ZERO);
    let many = random_rays(&mut rng, 20_000, 30.0, Vec3::ZERO);
    let few = &many[..2_000];
    let cpu = CpuRaycaster::new(shapes.clone());
    let mut gpu = gpu_or_skip(&shapes);
    for closest in [false, true] {
        let mut set = RayHitSet::new();
        let mut cast = |rays: &[_]| {
            cpu.cast_into(&bodies, rays, closest, &mut set).unwrap();
            set.hit_count()
        };
        cast(&many);
        let (small, large) = (
            counted(|| {
                cast(few);
            }),
            counted(|| {
                cast(&many);
            }),
        );
        let hits = cast(&many);
        eprintln!("cpu, closest {closest}: {large} bytes for many rays, {small} for few, {hits} hits");
        assert!(hits > many.len() / 4, "{hits} hits");
        assert!(
            large <= small + SLACK_BYTES,
            "cpu, closest {closest}: {large} bytes for {} rays, {small} for {} ({hits} hits: {} bytes)",
            many.len(),
            few.len(),
            hits * size_of::<RayHit>()
        );
        let Some(gpu) = gpu.as_mut() else {
            continue;
        };
        let mut cast = |rays: &[_]| {
            gpu.cast_into(&bodies, rays, closest, &mut set).unwrap();
            set.hit_count()
        };
        cast(&many);
        cast(few);
        let (small, large) = (
            counted(|| {
                cast(few);
            }),
            counted(|| {
                cast(&many);
            }),
        );
        eprintln!("gpu, closest {closest}: {large} bytes for many rays, {small} for few");
        assert!(
            large <= small + SLACK_BYTES,
            "gpu, closest {closest}: {large} bytes for {} rays, {small} for {}",
            many.len(),
            few.len()
        );
    }
}

//! What `collide_into` allocates once its [`ContactSet`] is warm, counted by a global allocator
//! over every thread (rayon's included): nothing that grows with the batch (rayon's job queues
//! on the CPU and wgpu's per-submission bookkeeping on the GPU, a few KB, are counted and
//! bounded).
//! One test in its own binary, so no other test allocates while it counts.

mod support;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use hullsat::{Body, ContactSet, CpuNarrowphase, Shape};
use support::suites::{random_hull_pairs, shape_library};
use support::{gpu_or_skip, seeded_rng};

/// Counts allocations and allocated bytes (reallocations as one of their new size).
struct Counting;

static CALLS: AtomicUsize = AtomicUsize::new(0);
static BYTES: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards every call to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        CALLS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(layout.size(), Ordering::Relaxed);
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        CALLS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(new_size, Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// (allocations, bytes) made while `f` runs.
fn counted(f: impl FnOnce()) -> (usize, usize) {
    let (calls, bytes) = (CALLS.load(Ordering::SeqCst), BYTES.load(Ordering::SeqCst));
    f();
    (
        CALLS.load(Ordering::SeqCst) - calls,
        BYTES.load(Ordering::SeqCst) - bytes,
    )
}

/// Bytes a warm CPU call may allocate whatever its size: rayon's job queues, whose buffers its
/// threads grow and shrink as jobs come and go (a worker's deque) and whose shared injector
/// takes a new 1,520-byte block every 63 jobs sent from outside the pool. Two threads allocated
/// nothing here; 16 (an H200 host, or `RAYON_NUM_THREADS=16` on the VM) up to 9 KB in 3
/// allocations. A batch of `PAIRS` would need over 1 MB of manifolds alone.
const CPU_CALL_BYTES: usize = 32 * 1024;

/// Asserts that a warm CPU call allocated at most rayon's bookkeeping ([`CPU_CALL_BYTES`]).
fn assert_warm_cpu((calls, bytes): (usize, usize), what: &str) {
    assert!(
        bytes <= CPU_CALL_BYTES,
        "{what}: {bytes} bytes in {calls} allocations"
    );
}

/// Bytes a warm GPU call may allocate whatever its size: wgpu's command encoder, bind groups
/// and submission tracking, and the call's few `Vec`s of round state (measured about 20 KB on
/// lavapipe); a batch of `PAIRS` would need over 1 MB for its results alone.
const GPU_CALL_BYTES: usize = 64 * 1024;

/// Pairs per batch, about half of them touching.
const PAIRS: usize = 20_000;

fn batch() -> (Vec<Shape>, Vec<Body>, Vec<[u32; 2]>) {
    let mut rng = seeded_rng(0xa110c);
    let shapes = shape_library(&mut rng);
    let (bodies, pairs, _) = random_hull_pairs(&mut rng, &shapes, PAIRS);
    (shapes, bodies, pairs)
}

/// A terrain mesh (body 0) and the library's shapes scattered just over it, each paired with it
/// (half of the pairs given mesh first).
fn terrain_batch() -> (Vec<Shape>, Vec<Body>, Vec<[u32; 2]>) {
    let mut rng = seeded_rng(0x7e11);
    let mut shapes = shape_library(&mut rng);
    shapes.push(Shape::from(hullsat::generate::terrain(64, 16.0, 0.5).unwrap()));
    let mesh = shapes.len() as u32 - 1;
    let mut bodies = vec![Body {
        shape: mesh,
        pose: hullsat::Pose::IDENTITY,
    }];
    let mut pairs = Vec::new();
    for i in 1..2_000u32 {
        let p = support::random_vec3(&mut rng, 15.0);
        bodies.push(Body {
            shape: i % mesh,
            pose: hullsat::Pose::new(
                glam::DVec3::new(p.x.into(), 0.4, p.z.into()),
                support::shapes::random_rotation(&mut rng),
            ),
        });
        pairs.push(if i % 2 == 0 { [0, i] } else { [i, 0] });
    }
    (shapes, bodies, pairs)
}

/// Dumbbells and L-shapes (compounds of 2 and 3 children, one of 12 boxes, above the flat-loop
/// size) among the library's shapes, each compound paired with a convex body, a compound, the
/// ground and a terrain mesh (half of the pairs given compound last).
fn compound_batch() -> (Vec<Shape>, Vec<Body>, Vec<[u32; 2]>) {
    use glam::{Quat, Vec3};
    use hullsat::shape::compound::{Compound, CompoundChild};
    let mut rng = seeded_rng(0xc0b0);
    let mut shapes = shape_library(&mut rng);
    let child = |shape: Shape, x: f32, y: f32| CompoundChild {
        shape,
        pose: hullsat::Isometry::new(Vec3::new(x, y, 0.0), Quat::from_rotation_z(0.3 * x)),
    };
    let ball = || Shape::Sphere(hullsat::Sphere::new(0.3).unwrap());
    let block = || Shape::Cuboid(hullsat::Cuboid::new(Vec3::new(0.3, 0.2, 0.25)).unwrap());
    let compounds = [
        vec![child(ball(), -0.6, 0.0), child(ball(), 0.6, 0.0)],
        vec![
            child(block(), 0.0, 0.0),
            child(block(), 0.5, 0.0),
            child(block(), 0.0, 0.4),
        ],
        (0..12)
            .map(|k| child(block(), 0.4 * (k % 4) as f32, 0.35 * (k / 4) as f32))
            .collect(),
    ];
    let first = shapes.len() as u32;
    shapes.extend(compounds.map(|c| Shape::from(Compound::new(c).unwrap())));
    shapes.push(Shape::HalfSpace(hullsat::HalfSpace::new(Vec3::Y, 0.0).unwrap()));
    let ground = shapes.len() as u32 - 1;
    shapes.push(Shape::from(hullsat::generate::terrain(16, 4.0, 0.2).unwrap()));
    let mut bodies = vec![
        Body {
            shape: ground,
            pose: hullsat::Pose::IDENTITY,
        },
        Body {
            shape: ground + 1,
            pose: hullsat::Pose::IDENTITY,
        },
    ];
    let mut pairs = Vec::new();
    for i in 0..1_500u32 {
        let p = support::random_vec3(&mut rng, 3.0);
        let shape = if i % 2 == 0 { first + i / 2 % 3 } else { i % first };
        bodies.push(Body {
            shape,
            pose: hullsat::Pose::new(
                glam::DVec3::new(p.x.into(), 0.3 + 0.1 * f64::from(p.y), p.z.into()),
                support::shapes::random_rotation(&mut rng),
            ),
        });
        if i % 2 == 0 {
            let c = i + 2;
            pairs.extend([[c, 0], [0, c], [c, 1], [1, c]]);
            if c > 3 {
                pairs.extend([[c, c - 1], [c - 2, c]]);
            }
        }
    }
    (shapes, bodies, pairs)
}

#[test]
fn warm_collide_into_allocates_nothing_that_grows_with_the_batch() {
    let (shapes, bodies, pairs) = batch();
    let margin = 0.02;

    // CPU: a warm set and warm rayon threads allocate nothing of their own, on the full batch or
    // a prefix.
    let cpu = CpuNarrowphase::new(&shapes);
    let mut set = ContactSet::new();
    rayon::broadcast(|_| cpu.collide_single_thread(&bodies, &pairs, margin).unwrap());
    for _ in 0..3 {
        cpu.collide_into(&bodies, &pairs, margin, &mut set).unwrap();
    }
    let touching = set.len();
    assert!(
        touching > PAIRS / 10 && touching < PAIRS,
        "{touching} touching pairs"
    );
    for n in [PAIRS, PAIRS / 2, PAIRS] {
        let made = counted(|| cpu.collide_into(&bodies, &pairs[..n], margin, &mut set).unwrap());
        assert_warm_cpu(made, &format!("CPU collide_into of {n} pairs"));
    }

    // Mesh pairs: each thread's mesh scratch, once grown, serves every later pair. Which rayon
    // thread takes which pair varies from call to call, so every thread (and this one) first
    // runs every pair once.
    let (mesh_shapes, mesh_bodies, mesh_pairs) = terrain_batch();
    let mesh_cpu = CpuNarrowphase::new(&mesh_shapes);
    let warm = || {
        mesh_cpu
            .collide_single_thread(&mesh_bodies, &mesh_pairs, margin)
            .unwrap();
    };
    rayon::broadcast(|_| warm());
    warm();
    mesh_cpu
        .collide_into(&mesh_bodies, &mesh_pairs, margin, &mut set)
        .unwrap();
    assert!(
        set.len() > mesh_pairs.len() / 4,
        "{} touching mesh pairs",
        set.len()
    );
    for n in [mesh_pairs.len(), mesh_pairs.len() / 2] {
        let made = counted(|| {
            mesh_cpu
                .collide_into(&mesh_bodies, &mesh_pairs[..n], margin, &mut set)
                .unwrap()
        });
        assert_warm_cpu(made, &format!("CPU collide_into of {n} mesh pairs"));
        let made = counted(|| {
            mesh_cpu
                .collide_single_thread(&mesh_bodies, &mesh_pairs[..n], margin)
                .unwrap();
        });
        // The result vector only: one allocation.
        assert_eq!(
            made.0, 1,
            "CPU collide_single_thread of {n} mesh pairs: (allocations, bytes)"
        );
    }

    // Compound pairs: likewise each thread's compound scratch (and the mesh-free child pairs),
    // every thread warmed on every pair.
    let (compound_shapes, compound_bodies, compound_pairs) = compound_batch();
    let compound_cpu = CpuNarrowphase::new(&compound_shapes);
    let warm = || {
        compound_cpu
            .collide_single_thread(&compound_bodies, &compound_pairs, margin)
            .unwrap();
    };
    rayon::broadcast(|_| warm());
    warm();
    compound_cpu
        .collide_into(&compound_bodies, &compound_pairs, margin, &mut set)
        .unwrap();
    assert!(
        set.len() > compound_pairs.len() / 8,
        "{} of {} compound pairs touch",
        set.len(),
        compound_pairs.len()
    );
    for n in [compound_pairs.len(), compound_pairs.len() / 2] {
        let made = counted(|| {
            compound_cpu
                .collide_into(&compound_bodies, &compound_pairs[..n], margin, &mut set)
                .unwrap()
        });
        assert_warm_cpu(made, &format!("CPU collide_into of {n} compound pairs"));
        let made = counted(|| {
            compound_cpu
                .collide_single_thread(&compound_bodies, &compound_pairs[..n], margin)
                .unwrap();
        });
        // The result vector only: one allocation.
        assert_eq!(
            made.0, 1,
            "CPU collide_single_thread of {n} compound pairs: (allocations, bytes)"
        );
    }

    // GPU: a few KB per call for wgpu's bookkeeping, the same for 2,000 pairs as for 20,000.
    let Some(mut gpu) = gpu_or_skip(&shapes) else {
        return;
    };
    let mut set = ContactSet::new();
    for n in [PAIRS, PAIRS / 10] {
        for _ in 0..3 {
            gpu.collide_into(&bodies, &pairs[..n], margin, &mut set).unwrap();
        }
        let (calls, bytes) = counted(|| gpu.collide_into(&bodies, &pairs[..n], margin, &mut set).unwrap());
        eprintln!("GPU collide_into of {n} pairs: {calls} allocations, {bytes} bytes");
        assert!(
            bytes < GPU_CALL_BYTES,
            "GPU collide_into of {n} pairs allocated {bytes} bytes in {calls} allocations"
        );
    }
}

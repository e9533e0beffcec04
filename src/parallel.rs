//! Writing one buffer from many threads, each thread at places no other writes, filling kept
//! per-run buffers on all threads first (the run step of `ContactSet::append_chunked` and
//! `RayHitSet::fill_runs`), and asking the cache early for what a loop reads at random.

use rayon::prelude::*;

/// A pointer several threads write through, each only at indices no other thread writes and no
/// one reads until they are done (the user's `unsafe` blocks state why).
#[derive(Clone, Copy)]
pub(crate) struct SharedPtr<T>(pub *mut T);

// SAFETY: a shared pointer only hands out the raw pointer; every write through it is in an
// `unsafe` block whose caller guarantees disjoint indices.
unsafe impl<T: Send> Send for SharedPtr<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for SharedPtr<T> {}

impl<T> SharedPtr<T> {
    /// The pointer.
    pub fn get(self) -> *mut T {
        self.0
    }
}

/// Cuts items `0..count` into runs of at least `min_run` items, about `runs_per_thread` runs a
/// thread (for balance), grows `buffers` to one per run (they are kept for the next call), and
/// runs `fill(first, len, buffer)` for each run on all threads. Returns the run length (every
/// run's but the last's) and the number of runs.
pub(crate) fn fill_runs<B: Default + Send>(
    buffers: &mut Vec<B>,
    count: usize,
    (min_run, runs_per_thread): (usize, usize),
    fill: impl Fn(usize, usize, &mut B) + Sync,
) -> (usize, usize) {
    let run = (count / (rayon::current_num_threads() * runs_per_thread)).max(min_run.max(1));
    let runs = count.div_ceil(run);
    if buffers.len() < runs {
        buffers.resize_with(runs, B::default);
    }
    buffers[..runs]
        .par_iter_mut()
        .enumerate()
        .for_each(|(r, buffer)| {
            let first = r * run;
            fill(first, run.min(count - first), buffer);
        });
    (run, runs)
}

/// Asks the CPU to bring `value`'s cache lines (its first and last byte) into the cache; a hint
/// with no effect on results, a no-op on targets other than x86-64.
#[inline(always)]
pub(crate) fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        let first = std::ptr::from_ref(value).cast::<i8>();
        let last = first.wrapping_add(size_of::<T>() - 1);
        // SAFETY: a prefetch only hints the cache: it never faults and reads nothing into the
        // program, whatever the address; SSE, which provides it, is part of x86-64's baseline.
        unsafe {
            _mm_prefetch::<_MM_HINT_T0>(first);
            _mm_prefetch::<_MM_HINT_T0>(last);
        }
    }
}

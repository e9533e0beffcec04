//! Writing one buffer from many threads, each thread at places no other writes, filling kept
//! per-run buffers on all threads first (the run step of `RayHitSet::fill_runs`), or filling
//! them and placing each in one output as soon as its place is known
//! (`ContactSet::append_chunked`), and asking the cache early for what a loop reads at random.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use rayon::prelude::*;

/// A pointer several threads write through, each only at indices no other thread writes and no
/// one reads until they are done (the user's `unsafe` blocks state why).
pub(crate) struct SharedPtr<T>(pub *mut T);

// A pointer is copied whatever it points to (a derive would ask `T: Copy`).
impl<T> Clone for SharedPtr<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for SharedPtr<T> {}

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

/// The length of the runs `count` items are cut into: at least `min_run` items, about
/// `runs_per_thread` runs a thread of the current pool (for balance); every run but the last has
/// it.
pub(crate) fn run_length(count: usize, (min_run, runs_per_thread): (usize, usize)) -> usize {
    (count / (rayon::current_num_threads() * runs_per_thread)).max(min_run.max(1))
}

/// Cuts items `0..count` into runs ([`run_length`]), grows `buffers` to one per run (they are
/// kept for the next call), and runs `fill(first, len, buffer)` for each run on all threads.
/// Returns the run length (every run's but the last's) and the number of runs.
pub(crate) fn fill_runs<B: Default + Send>(
    buffers: &mut Vec<B>,
    count: usize,
    runs_of: (usize, usize),
    fill: impl Fn(usize, usize, &mut B) + Sync,
) -> (usize, usize) {
    let run = run_length(count, runs_of);
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

/// The tag of a run's state in [`PlacedRuns`] (two high bits); the low bits hold a number of
/// entries. Pending: not yet filled.
const RUN_PENDING: u64 = 0;
/// Filled, holding its own count; not placed yet.
const RUN_COUNTED: u64 = 1 << 62;
/// Filled and placed: the end of its place (its offset plus its count).
const RUN_PLACED: u64 = 2 << 62;
/// Left for the pass after the runs, at this offset.
const RUN_DEFERRED: u64 = 3 << 62;
/// The tag bits, and the number bits.
const RUN_TAG: u64 = 3 << 62;
const RUN_NUMBER: u64 = !RUN_TAG;

/// Buffers per thread in [`PlacedRuns`]: the one it fills and those of its runs left for later;
/// a thread whose buffers all wait waits itself for the runs before its current one.
const BUFFERS_PER_THREAD: usize = 4;

/// Spins of a thread waiting for the runs before its own to be counted, before it yields.
const SPINS_BEFORE_YIELD: u32 = 64;

/// Entries up to which [`PlacedRuns`] places the runs left after filling on the calling thread
/// (a few hundred KB of copies, tens of microseconds: about a fork-join's cost).
const SEQUENTIAL_PLACES: u64 = 4096;

/// Clears a thread's claim on its buffers when its work ends, and on a panic (in `fill` or
/// `place`) marks the call poisoned, so threads waiting for a run that will never be counted
/// stop waiting (the panic then reaches the caller).
struct WorkGuard<'a> {
    busy: &'a AtomicBool,
    poisoned: &'a AtomicBool,
}

impl Drop for WorkGuard<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.poisoned.store(true, Ordering::Release);
        }
        self.busy.store(false, Ordering::Release);
    }
}

/// Runs of items filled on all threads and placed in one output in run order, each as soon as
/// the runs before it are counted ([`Self::fill_and_place`]); [`BUFFERS_PER_THREAD`] buffers a
/// thread, kept for the next call (a clone starts empty).
#[derive(Default)]
pub(crate) struct PlacedRuns<B> {
    /// Per thread of the pool (and one for a caller outside it), its buffers, one after the
    /// other. Each thread takes only its own.
    buffers: Vec<B>,
    /// Per thread: its buffers are taken now.
    busy: Vec<AtomicBool>,
    /// Per run: its tag and number.
    states: Vec<AtomicU64>,
    /// Per run left for later: the index of the buffer that holds it.
    homes: Vec<AtomicUsize>,
}

impl<B> Clone for PlacedRuns<B> {
    fn clone(&self) -> Self {
        PlacedRuns {
            buffers: Vec::new(),
            busy: Vec::new(),
            states: Vec::new(),
            homes: Vec::new(),
        }
    }
}

impl<B: Default + Send + Sync> PlacedRuns<B> {
    /// Cuts items `0..count` into runs ([`run_length`]) and fills and places each, in run
    /// order, on all threads: `prepare(buffer, run)` readies every buffer for runs of `run`
    /// items first (room reserved, so a warm call allocates nothing whichever threads take
    /// part), `fill(first, len, buffer)` fills a run into one and returns how many entries it
    /// holds, and `place(offset, buffer)` copies them to `offset..offset + count` of the output
    /// (past where the caller's output ends; the caller has room for every item). The threads
    /// claim runs in order. A thread that finished run r looks back over the runs before it
    /// (to one placed, summing the counts of those filled): when none is pending it places r at
    /// once, while its entries are in its cache, and fills its next run into the same buffer;
    /// else r keeps its buffer and is placed after all runs are filled (on all threads past
    /// [`SEQUENTIAL_PLACES`] entries), unless the thread's buffers are all kept so: then it
    /// waits for the runs before r. `fill` must not call into rayon (a thread would meet its
    /// own buffers again). A panic in `fill` or `place` stops the waiting threads and reaches
    /// the caller. Returns the total entries.
    pub fn fill_and_place(
        &mut self,
        count: usize,
        runs_of: (usize, usize),
        prepare: impl Fn(&mut B, usize),
        fill: impl Fn(usize, usize, &mut B) -> usize + Sync,
        place: impl Fn(usize, &B) + Sync,
    ) -> usize {
        if count == 0 {
            return 0;
        }
        let threads = rayon::current_num_threads();
        let run = run_length(count, runs_of);
        let runs = count.div_ceil(run);
        let homes = threads + 1;
        // As many buffers as this pool's threads take (fewer than a larger pool's last call).
        self.buffers.truncate(homes * BUFFERS_PER_THREAD);
        self.buffers.resize_with(homes * BUFFERS_PER_THREAD, B::default);
        self.busy
            .resize_with(homes.max(self.busy.len()), AtomicBool::default);
        self.buffers.iter_mut().for_each(|buffer| prepare(buffer, run));
        if self.states.len() < runs {
            self.states.resize_with(runs, AtomicU64::default);
            self.homes.resize_with(runs, AtomicUsize::default);
        }
        let states = &mut self.states[..runs];
        states.iter_mut().for_each(|state| *state.get_mut() = RUN_PENDING);
        let (states, homes_of, busy) = (&*states, &self.homes[..runs], &self.busy[..homes]);
        // Where run r goes, when every run before it is filled: the counts back to a placed one.
        let offset_of = |r: usize| {
            let mut sum = 0;
            for state in states[..r].iter().rev() {
                let value = state.load(Ordering::Acquire);
                match value & RUN_TAG {
                    RUN_PLACED => return Some((value & RUN_NUMBER) + sum),
                    RUN_COUNTED => sum += value & RUN_NUMBER,
                    _ => return None,
                }
            }
            Some(sum)
        };
        let poisoned = AtomicBool::new(false);
        // Run r's offset once the runs before it are counted (which their threads are doing);
        // `None` when a thread panicked.
        let wait_for = |r: usize| {
            let mut spins = 0;
            loop {
                if let Some(offset) = offset_of(r) {
                    return Some(offset);
                }
                if poisoned.load(Ordering::Acquire) {
                    return None;
                }
                spins += 1;
                if spins < SPINS_BEFORE_YIELD {
                    std::hint::spin_loop();
                } else {
                    std::thread::yield_now();
                }
            }
        };
        let next = AtomicUsize::new(0);
        let shared = SharedPtr(self.buffers.as_mut_ptr());
        let work = || {
            let home = rayon::current_thread_index().map_or(threads, |t| t.min(threads));
            let taken = busy[home].swap(true, Ordering::Acquire);
            assert!(
                !taken,
                "a thread met its own run buffers again (fill called into rayon)"
            );
            let _guard = WorkGuard {
                busy: &busy[home],
                poisoned: &poisoned,
            };
            let mut kept = 0;
            loop {
                let r = next.fetch_add(1, Ordering::Relaxed);
                if r >= runs {
                    break;
                }
                let at = home * BUFFERS_PER_THREAD + kept;
                // SAFETY: buffers `home * BUFFERS_PER_THREAD..` are this thread's alone while
                // `busy[home]` is set (checked above), and `kept < BUFFERS_PER_THREAD`. The
                // buffers of runs kept for later are read only after every task has ended, and
                // no later task on this thread fills them: this loop ends only once every run
                // is claimed.
                let buffer = unsafe { &mut *shared.get().add(at) };
                let (first, len) = (r * run, run.min(count - r * run));
                let found = fill(first, len, buffer);
                // The caller's room is one entry an item: a run holds at most its items.
                assert!(found <= len, "a run of {len} items filled {found} entries");
                states[r].store(RUN_COUNTED | found as u64, Ordering::Release);
                let offset = match offset_of(r) {
                    Some(offset) => offset,
                    None if kept + 1 < BUFFERS_PER_THREAD => {
                        homes_of[r].store(at, Ordering::Relaxed);
                        kept += 1;
                        continue;
                    }
                    None => match wait_for(r) {
                        Some(offset) => offset,
                        None => break,
                    },
                };
                states[r].store(RUN_PLACED | (offset + found as u64), Ordering::Release);
                place(offset as usize, buffer);
            }
        };
        if runs == 1 || threads == 1 {
            work();
        } else {
            (0..threads.min(runs)).into_par_iter().for_each(|_| work());
        }
        // The runs left: their offsets, then their copies.
        let (mut end, mut deferred) = (0, 0);
        for state in states {
            let value = state.load(Ordering::Relaxed);
            let number = value & RUN_NUMBER;
            if value & RUN_TAG == RUN_PLACED {
                end = number;
            } else {
                state.store(RUN_DEFERRED | end, Ordering::Relaxed);
                end += number;
                deferred += number;
            }
        }
        let buffers = &self.buffers;
        let place_deferred = |(state, home): (&AtomicU64, &AtomicUsize)| {
            let value = state.load(Ordering::Relaxed);
            if value & RUN_TAG == RUN_DEFERRED {
                place(
                    (value & RUN_NUMBER) as usize,
                    &buffers[home.load(Ordering::Relaxed)],
                );
            }
        };
        if deferred > SEQUENTIAL_PLACES {
            states.par_iter().zip(homes_of).for_each(place_deferred);
        } else if deferred > 0 {
            states.iter().zip(homes_of).for_each(place_deferred);
        }
        end as usize
    }
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

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicU32;
    use std::time::Duration;

    use super::*;

    #[test]
    fn runs_land_in_run_order_placed_at_once_or_after() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(4).build().unwrap();
        // Every third item is an entry; with the first run slow, the others are kept for later
        // and then wait for it.
        let expected: Vec<u32> = (0..1000).filter(|i| i % 3 == 0).collect();
        let mut runs = PlacedRuns::<Vec<u32>>::default();
        for slow_first in [false, true, false] {
            let out: Vec<AtomicU32> = (0..1000).map(|_| AtomicU32::new(u32::MAX)).collect();
            let fill = |first: usize, len: usize, buffer: &mut Vec<u32>| {
                if slow_first && first == 0 {
                    std::thread::sleep(Duration::from_millis(50));
                }
                buffer.clear();
                buffer.extend((first as u32..(first + len) as u32).filter(|i| i % 3 == 0));
                buffer.len()
            };
            let place = |offset: usize, buffer: &Vec<u32>| {
                for (slot, &entry) in out[offset..].iter().zip(buffer) {
                    slot.store(entry, Ordering::Relaxed);
                }
            };
            let total = pool.install(|| runs.fill_and_place(1000, (10, 4), |_, _| {}, fill, place));
            let placed: Vec<u32> = out.iter().map(|slot| slot.load(Ordering::Relaxed)).collect();
            assert_eq!(total, expected.len());
            assert_eq!(placed[..total], expected[..], "slow first run: {slow_first}");
            assert!(placed[total..].iter().all(|&slot| slot == u32::MAX));
        }
    }

    #[test]
    fn a_panicking_run_fails_the_call_without_hanging_it() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(4).build().unwrap();
        let mut runs = PlacedRuns::<Vec<u32>>::default();
        let every = |first: usize, len: usize, buffer: &mut Vec<u32>| {
            buffer.clear();
            buffer.extend(first as u32..(first + len) as u32);
            buffer.len()
        };
        // Run 0 panics late: the other threads have kept their buffers and wait for it.
        let failing = |first: usize, len: usize, buffer: &mut Vec<u32>| {
            if first == 0 {
                std::thread::sleep(Duration::from_millis(50));
                panic!("run 0 fails");
            }
            every(first, len, buffer)
        };
        let failed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            pool.install(|| runs.fill_and_place(1000, (10, 4), |_, _| {}, failing, |_, _| {}))
        }));
        assert!(failed.is_err());
        // The same runs serve the next call.
        let total = pool.install(|| runs.fill_and_place(1000, (10, 4), |_, _| {}, every, |_, _| {}));
        assert_eq!(total, 1000);
    }

    #[test]
    fn a_smaller_pool_keeps_only_its_own_buffers() {
        let mut runs = PlacedRuns::<Vec<u32>>::default();
        let fill = |first: usize, len: usize, buffer: &mut Vec<u32>| {
            buffer.clear();
            buffer.extend(first as u32..(first + len) as u32);
            buffer.len()
        };
        for threads in [4, 1] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let total = pool.install(|| runs.fill_and_place(1000, (10, 4), |_, _| {}, fill, |_, _| {}));
            assert_eq!(total, 1000);
            assert_eq!(runs.buffers.len(), (threads + 1) * BUFFERS_PER_THREAD);
        }
    }
}

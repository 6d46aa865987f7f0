//! The host backend's fork-join pool: how a host kernel spreads one launch over the cores.
//!
//! A launch is split into contiguous parts, one per party (the calling thread and one worker
//! per further CPU), as OpenMP's static schedule splits a loop: each party streams one block,
//! and the same block at every launch, so data a launch leaves in a core's cache is found
//! there by the next. Between launches the workers spin on the pool's state (a pause
//! instruction per check) for [`SPIN`], then sleep until the next launch wakes them, as an
//! OpenMP runtime's workers do.
//!
//! Why not rayon's pool, which the host kernels used until 2026-11-26: a launch from outside
//! rayon's threads injects its work and sleeps until a woken worker has finished it. On the
//! 2-vCPU VM this project is developed on that hand-off cost 8–20 µs per launch (triad over
//! 2 × 64 KiB chunks: 15.6 µs median, where one chunk run in place took 1.7 µs), so every
//! kernel between a few hundred KiB and a few MiB measured the hand-off more than the memory,
//! and the calibration's L2 and L3 streaming rates came out below the memory's. This pool
//! hands a launch over in 1–2 µs (the same triad: 2.0 µs).
//!
//! The parties are the calling thread and `parties − 1` workers, each worker pinned to its
//! own CPU where [`configure`] was given them (`backend::pinning`); a launch's part 0 runs on
//! the caller, which also takes any part no worker has claimed, so a launch completes even
//! where the workers are asleep or busy. Launches from several threads at once take turns;
//! a launch from inside a part runs its parts one after the other on that thread.
//!
//! Two things for the calibration and the series (docs/models.md §2.4, "A kernel on one
//! thread moves at one thread's rates"): [`counting_parties`] runs a launch and says how many
//! parties ran a part of it, and [`solo`] runs launches on the calling thread alone, unsplit,
//! so the calibration can measure the rates a one-thread loop sees.

use std::cell::Cell;
use std::ops::Range;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Condvar, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

/// How long an idle worker spins before it sleeps: longer than the gaps between the launches
/// of a series or a sample loop, short enough that an idle harness does not keep a core busy.
pub const SPIN: Duration = Duration::from_millis(2);

/// Elements of `f32` in a cache line: the parts of a streaming launch start on line
/// boundaries, so no line is written by two cores.
pub const LINE_F32: usize = 16;

/// The fewest elements a party is given: a launch of fewer than twice this many runs on
/// the caller alone, since handing 8 KiB of floats to another core costs about as long as
/// streaming them from L1.
pub const MIN_PART: usize = 2048;

/// The CPUs the workers are pinned to, set once by [`configure`] before the pool is built.
static PLACEMENT: OnceLock<Placement> = OnceLock::new();
static POOL: OnceLock<Pool> = OnceLock::new();

thread_local! {
    /// Whether this thread is running a part of a launch (a nested launch runs in place).
    static IN_PART: Cell<bool> = const { Cell::new(false) };
    /// Whether this thread's launches run unsplit on it alone ([`solo`]).
    static SOLO: Cell<bool> = const { Cell::new(false) };
    /// The most parties any launch ran on since [`counting_parties`] last started counting.
    static PARTIES_SEEN: Cell<usize> = const { Cell::new(1) };
    /// What the last [`counting_parties`] on this thread counted.
    static LAST_COUNTED: Cell<Option<usize>> = const { Cell::new(None) };
}

/// Run `f` (one launch of a host kernel) and return its result with the number of parties
/// that ran a part of any pool launch inside it: 1 for a loop on the calling thread alone,
/// up to [`parties`] where a launch was split and the workers joined it. Measured, not
/// planned: a worker that had not woken before the caller claimed every part does not
/// count. [`last_counted_parties`] keeps the count for the calling thread.
pub fn counting_parties<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let outer = PARTIES_SEEN.with(|c| c.replace(1));
    let out = f();
    let seen = PARTIES_SEEN.with(|c| c.replace(outer.max(c.get())));
    LAST_COUNTED.with(|c| c.set(Some(seen)));
    (out, seen)
}

/// What the last [`counting_parties`] on this thread counted; `None` before any.
pub fn last_counted_parties() -> Option<usize> {
    LAST_COUNTED.with(Cell::get)
}

/// Run `f` with every launch it makes on the calling thread alone, unsplit (a launch over n
/// elements is one loop over n, as a kernel written as one loop is). The calibration measures
/// one thread's streaming and line rates this way.
pub fn solo<T>(f: impl FnOnce() -> T) -> T {
    /// Restores the outer setting however `f` ends, a panic included.
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            SOLO.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(SOLO.with(|c| c.replace(true)));
    f()
}

/// How many parties the pool has and where its workers run.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Placement {
    parties: usize,
    /// The CPU of worker w (party w + 1), where pinned.
    worker_cpus: Option<Vec<usize>>,
}

/// Set the pool's parties and pin worker w (party w + 1) to `cpus[w + 1]` (`cpus[0]` is the
/// caller's, which is not pinned); `cpus` `None`: the workers are not pinned. Without a call
/// the pool has one unpinned party per available CPU. Only the first call before the pool is
/// first used counts; returns whether it did.
pub fn configure(parties: usize, cpus: Option<Vec<usize>>) -> bool {
    let worker_cpus = cpus.map(|c| c.into_iter().skip(1).collect());
    PLACEMENT
        .set(Placement {
            parties: parties.max(1),
            worker_cpus,
        })
        .is_ok()
}

/// The number of parties a launch is split over (the caller and the workers).
pub fn parties() -> usize {
    pool().parties
}

/// The parties a launch over `n` elements is split over: every party, or fewer where a
/// part would hold fewer than [`MIN_PART`] elements.
fn parties_for(n: usize) -> usize {
    if SOLO.with(Cell::get) {
        return 1;
    }
    parties().min((n / MIN_PART).max(1))
}

/// Run `body(offset, part)` on contiguous parts of `data` (boundaries on multiples of
/// `align`, parts of at least [`MIN_PART`]), in parallel; `offset` is the part's first index in `data`.
pub fn for_each_mut<T: Send>(data: &mut [T], align: usize, body: impl Fn(usize, &mut [T]) + Sync) {
    let n = data.len();
    for_each_mut_of(data, align, n, body);
}

/// [`for_each_mut`] for a launch that does `work` elements' worth of work over `data` (a part
/// walked several times counts each time): the parties are chosen by the work, not by the
/// data's length, so a small array walked many times is still split over every party.
pub fn for_each_mut_of<T: Send>(
    data: &mut [T],
    align: usize,
    work: usize,
    body: impl Fn(usize, &mut [T]) + Sync,
) {
    let ranges = split(data.len(), align, parties_for(work));
    let mut rest = data;
    let mut parts = Vec::with_capacity(ranges.len());
    for r in &ranges {
        let (head, tail) = rest.split_at_mut(r.len());
        parts.push(Mutex::new(Some(head)));
        rest = tail;
    }
    pool().run(parts.len(), &|p| {
        let part = parts[p]
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(part) = part {
            body(ranges[p].start, part);
        }
    });
}

/// `body` over the contiguous parts of `0..n` ([`split`] with `align`, parts of at least
/// [`MIN_PART`]), in parallel, its results in the parts' order.
pub fn map_ranges<R: Send>(
    n: usize,
    align: usize,
    body: impl Fn(Range<usize>) -> R + Sync,
) -> Vec<R> {
    map_ranges_of(n, align, n, body)
}

/// [`map_ranges`] with the parties chosen by `work` ([`for_each_mut_of`]).
pub fn map_ranges_of<R: Send>(
    n: usize,
    align: usize,
    work: usize,
    body: impl Fn(Range<usize>) -> R + Sync,
) -> Vec<R> {
    let parts = split(n, align, parties_for(work));
    let results: Vec<Mutex<Option<R>>> = parts.iter().map(|_| Mutex::new(None)).collect();
    pool().run(parts.len(), &|p| {
        let r = body(parts[p].clone());
        *results[p].lock().unwrap_or_else(PoisonError::into_inner) = Some(r);
    });
    results
        .into_iter()
        .filter_map(|r| r.into_inner().unwrap_or_else(PoisonError::into_inner))
        .collect()
}

/// `0..n` cut into at most `parties` contiguous, non-empty ranges of near-equal length whose
/// boundaries are multiples of `align` (the last ends at n); none where n = 0.
pub fn split(n: usize, align: usize, parties: usize) -> Vec<Range<usize>> {
    let align = align.max(1);
    let units = n.div_ceil(align);
    let parts = parties.max(1).min(units);
    (0..parts)
        .map(|p| ((p * units / parts) * align).min(n)..(((p + 1) * units / parts) * align).min(n))
        .filter(|r| !r.is_empty())
        .collect()
}

fn pool() -> &'static Pool {
    POOL.get_or_init(|| {
        let placement = PLACEMENT.get().cloned().unwrap_or_else(|| Placement {
            parties: std::thread::available_parallelism().map_or(1, |n| n.get()),
            worker_cpus: None,
        });
        Pool::start(placement)
    })
}

/// A launch's body as the workers see it: part p of the current launch.
type Body = dyn Fn(usize) + Sync;

/// The lifetime-erased address of the current launch's body.
#[derive(Clone, Copy)]
struct BodyRef(*const Body);
// SAFETY: the body is `Sync`, and `Pool::run` keeps it alive until no worker holds this
// reference (the `active` count below).
unsafe impl Send for BodyRef {}

/// What the caller and the workers share.
struct Shared {
    /// `epoch << 1 | open`: a launch is open from when its parts may be claimed until its
    /// caller has seen every part done.
    state: AtomicU64,
    /// The current launch's body, set while it is open.
    body: Mutex<Option<BodyRef>>,
    /// Parts of the current launch.
    parts: AtomicUsize,
    /// The next part to claim.
    next: AtomicUsize,
    /// Parts finished.
    done: AtomicUsize,
    /// Workers between joining a launch and leaving it.
    active: AtomicUsize,
    /// Whether a part panicked.
    panicked: AtomicBool,
    /// Workers that ran at least one part of the current launch.
    helpers: AtomicUsize,
    /// Workers asleep, and what wakes them.
    sleepers: AtomicUsize,
    sleep: Mutex<()>,
    wake: Condvar,
}

struct Pool {
    parties: usize,
    shared: Arc<Shared>,
    /// One launch at a time.
    turn: Mutex<()>,
}

impl Pool {
    fn start(placement: Placement) -> Pool {
        let shared = Arc::new(Shared {
            state: AtomicU64::new(0),
            body: Mutex::new(None),
            parts: AtomicUsize::new(0),
            next: AtomicUsize::new(0),
            done: AtomicUsize::new(0),
            active: AtomicUsize::new(0),
            panicked: AtomicBool::new(false),
            helpers: AtomicUsize::new(0),
            sleepers: AtomicUsize::new(0),
            sleep: Mutex::new(()),
            wake: Condvar::new(),
        });
        let mut started = 1;
        for w in 0..placement.parties.saturating_sub(1) {
            let shared = Arc::clone(&shared);
            let cpu = placement
                .worker_cpus
                .as_ref()
                .and_then(|c| (!c.is_empty()).then(|| c[w % c.len()]));
            let spawned = std::thread::Builder::new()
                .name(format!("harness-host-{}", w + 1))
                .spawn(move || {
                    if let Some(cpu) = cpu {
                        super::affinity::pin_current_thread(cpu);
                    }
                    worker(&shared);
                });
            if spawned.is_ok() {
                started += 1;
            }
        }
        Pool {
            parties: started,
            shared,
            turn: Mutex::new(()),
        }
    }

    /// Run `body(p)` for every p in `0..parts`, spread over the parties; returns when all
    /// have finished. A panic in a part is raised again here.
    fn run<'a>(&self, parts: usize, body: &'a (dyn Fn(usize) + Sync + 'a)) {
        if parts <= 1 || IN_PART.with(Cell::get) || SOLO.with(Cell::get) || self.parties == 1 {
            (0..parts).for_each(|p| in_part(|| body(p)));
            return;
        }
        let _turn = self.turn.lock().unwrap_or_else(PoisonError::into_inner);
        let s = &*self.shared;
        // SAFETY (of the erased lifetime): `body` outlives this call, and the reference is
        // cleared below only after every worker that took it has left (`active` is 0).
        let erased: *const Body =
            unsafe { std::mem::transmute::<&'a (dyn Fn(usize) + Sync + 'a), *const Body>(body) };
        *s.body.lock().unwrap_or_else(PoisonError::into_inner) = Some(BodyRef(erased));
        s.parts.store(parts, SeqCst);
        s.next.store(1, SeqCst);
        s.done.store(0, SeqCst);
        s.panicked.store(false, SeqCst);
        s.helpers.store(0, SeqCst);
        let epoch = (s.state.load(SeqCst) >> 1) + 1;
        s.state.store(epoch << 1 | 1, SeqCst);
        if s.sleepers.load(SeqCst) > 0 {
            let _sleep = s.sleep.lock().unwrap_or_else(PoisonError::into_inner);
            s.wake.notify_all();
        }
        // Part 0 here, then whatever no worker has claimed.
        let mut p = 0;
        while p < parts {
            run_part(s, body, p);
            p = s.next.fetch_add(1, SeqCst);
        }
        spin_until(|| s.done.load(SeqCst) >= parts);
        s.state.store(epoch << 1, SeqCst);
        spin_until(|| s.active.load(SeqCst) == 0);
        *s.body.lock().unwrap_or_else(PoisonError::into_inner) = None;
        let ran = 1 + s.helpers.load(SeqCst);
        PARTIES_SEEN.with(|c| c.set(c.get().max(ran)));
        if s.panicked.load(SeqCst) {
            panic!("a host kernel panicked in one of its parts");
        }
    }
}

/// Run part `p` of the current launch (caller or worker alike): note a panic for the caller
/// to raise, and count the part done either way.
fn run_part(s: &Shared, body: &(dyn Fn(usize) + Sync + '_), p: usize) {
    if catch_unwind(AssertUnwindSafe(|| in_part(|| body(p)))).is_err() {
        s.panicked.store(true, SeqCst);
    }
    s.done.fetch_add(1, SeqCst);
}

/// Run `f` marked as a part, so a launch inside it runs in place.
fn in_part(f: impl FnOnce()) {
    /// Clears the mark however `f` ends, a panic included.
    struct Unmark;
    impl Drop for Unmark {
        fn drop(&mut self) {
            IN_PART.with(|c| c.set(false));
        }
    }
    IN_PART.with(|c| c.set(true));
    let _unmark = Unmark;
    f();
}

/// Spin until `ready`, yielding the CPU after the first few thousand checks (a party that
/// shares this CPU then gets to finish).
fn spin_until(ready: impl Fn() -> bool) {
    let mut spins = 0u32;
    while !ready() {
        spins = spins.saturating_add(1);
        if spins < 4096 {
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
}

/// A worker: join each launch once, claim parts until none is left, spin then sleep.
fn worker(s: &Shared) {
    let mut seen = 0u64;
    loop {
        let state = s.state.load(SeqCst);
        if state & 1 == 1 && state >> 1 != seen {
            s.active.fetch_add(1, SeqCst);
            // Still the launch it saw open: it stays open until this worker leaves.
            if s.state.load(SeqCst) == state {
                seen = state >> 1;
                let body = *s.body.lock().unwrap_or_else(PoisonError::into_inner);
                if let Some(BodyRef(body)) = body {
                    // SAFETY: the caller keeps the body alive while `active` counts us.
                    let body = unsafe { &*body };
                    let parts = s.parts.load(SeqCst);
                    let mut joined = false;
                    loop {
                        let p = s.next.fetch_add(1, SeqCst);
                        if p >= parts {
                            break;
                        }
                        if !joined {
                            joined = true;
                            s.helpers.fetch_add(1, SeqCst);
                        }
                        run_part(s, body, p);
                    }
                }
            }
            s.active.fetch_sub(1, SeqCst);
            continue;
        }
        idle(s, seen);
    }
}

/// Wait for a launch this worker has not joined: spin for [`SPIN`], then sleep.
fn idle(s: &Shared, seen: u64) {
    let fresh = |state: u64| state & 1 == 1 && state >> 1 != seen;
    let start = Instant::now();
    let mut spins = 0u32;
    while !fresh(s.state.load(SeqCst)) {
        std::hint::spin_loop();
        spins = spins.wrapping_add(1);
        if spins.is_multiple_of(256) && start.elapsed() > SPIN {
            let mut guard = s.sleep.lock().unwrap_or_else(PoisonError::into_inner);
            s.sleepers.fetch_add(1, SeqCst);
            while !fresh(s.state.load(SeqCst)) {
                guard = s.wake.wait(guard).unwrap_or_else(PoisonError::into_inner);
            }
            s.sleepers.fetch_sub(1, SeqCst);
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Run `body` on every contiguous part of `0..n`, in parallel.
    fn for_each_range(n: usize, align: usize, body: impl Fn(Range<usize>) + Sync) {
        let parts = split(n, align, parties_for(n));
        pool().run(parts.len(), &|p| body(parts[p].clone()));
    }

    #[test]
    fn a_split_covers_every_index_once_on_aligned_boundaries() {
        for (n, align, parties) in [
            (0, 16, 2),
            (5, 16, 2),
            (33, 16, 2),
            (1000, 16, 3),
            (1 << 20, 16, 7),
        ] {
            let parts = split(n, align, parties);
            assert!(parts.len() <= parties);
            let mut next = 0;
            for r in &parts {
                assert_eq!(r.start, next);
                assert!(!r.is_empty());
                assert_eq!(r.start % align, 0);
                next = r.end;
            }
            assert_eq!(next, n);
        }
        // Near-equal parts: 1000 floats are 63 lines of 16 (the last short), 21 per party.
        let lens: Vec<usize> = split(1000, 16, 3).iter().map(|r| r.len()).collect();
        assert_eq!(lens, vec![336, 336, 328]);
    }

    #[test]
    fn every_part_runs_once_and_results_keep_their_order() {
        let mut data = vec![0u32; 100_003];
        for round in 1..=50u32 {
            for_each_mut(&mut data, LINE_F32, |offset, part| {
                for (k, v) in part.iter_mut().enumerate() {
                    *v += (offset + k) as u32 % 7 + round;
                }
            });
        }
        let want = |i: usize| 50 * (i as u32 % 7) + (1..=50).sum::<u32>();
        assert!(data.iter().enumerate().all(|(i, &v)| v == want(i)));
        let sums = map_ranges(data.len(), LINE_F32, |r| r.start);
        let starts: Vec<usize> = split(data.len(), LINE_F32, parties_for(data.len()))
            .iter()
            .map(|r| r.start)
            .collect();
        assert_eq!(sums, starts);
    }

    #[test]
    fn launches_from_several_threads_and_from_inside_a_part_complete() {
        let total = AtomicUsize::new(0);
        std::thread::scope(|scope| {
            for _ in 0..4 {
                scope.spawn(|| {
                    for _ in 0..200 {
                        for_each_range(64 * MIN_PART, 1, |r| {
                            // A nested launch runs in place.
                            for_each_range(r.len(), 1, |inner| {
                                total.fetch_add(inner.len(), SeqCst);
                            });
                        });
                    }
                });
            }
        });
        assert_eq!(total.load(SeqCst), 4 * 200 * 64 * MIN_PART);
    }

    #[test]
    fn a_panicking_part_is_raised_in_the_caller_and_the_pool_goes_on() {
        let caught = catch_unwind(|| {
            for_each_range(4 * MIN_PART, 1, |r| {
                if r.start > 0 {
                    panic!("part {}", r.start);
                }
            })
        });
        assert!(caught.is_err() || parties() == 1);
        let n = AtomicUsize::new(0);
        for_each_range(4 * MIN_PART, 1, |r| {
            n.fetch_add(r.len(), SeqCst);
        });
        assert_eq!(n.load(SeqCst), 4 * MIN_PART);
        // A launch too small to split runs on the caller alone.
        assert_eq!(map_ranges(MIN_PART + 7, 1, |r| r.len()), vec![MIN_PART + 7]);
    }

    #[test]
    fn a_launch_says_how_many_parties_ran_it_and_one_party_keeps_it_on_the_caller() {
        let caller = std::thread::current().id();
        let n = 64 * MIN_PART;
        // A small launch runs on the caller alone, and says so.
        let (_, small) = counting_parties(|| map_ranges(MIN_PART, 1, |r| r.len()));
        assert_eq!(small, 1);
        assert_eq!(last_counted_parties(), Some(1));
        // A large one is split, and a worker that joins it is counted: each part waits (up to
        // a second, so a loaded machine has time to schedule the worker) until a second part
        // has started, so the caller cannot finish both parts alone.
        let busy = |r: Range<usize>, started: &AtomicUsize| {
            started.fetch_add(1, SeqCst);
            let start = Instant::now();
            while started.load(SeqCst) < 2.min(parties())
                && start.elapsed() < Duration::from_secs(1)
            {
                std::hint::spin_loop();
            }
            r.len()
        };
        let most = (0..5)
            .map(|_| {
                let started = AtomicUsize::new(0);
                counting_parties(|| map_ranges(n, 1, |r| busy(r, &started))).1
            })
            .max()
            .unwrap_or(0);
        assert!(most <= parties());
        if parties() > 1 {
            assert!(most > 1, "no launch of {n} elements was split: {most}");
        }
        // Under `solo` the same launch is one part, run on the caller.
        let (threads, counted) =
            counting_parties(|| solo(|| map_ranges(n, 1, |_| std::thread::current().id())));
        assert_eq!(threads, vec![caller]);
        assert_eq!(counted, 1);
        // And `solo` ends with its closure.
        assert_eq!(map_ranges(n, 1, |r| r.len()).len(), parties().min(64));
    }
}

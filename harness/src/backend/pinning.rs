//! Worker threads pinned one to each CPU, so that a short run uses every core it is given.
//!
//! Neither PoCL's pthread workers nor rayon's threads are pinned by default, and Linux then
//! places them with its load balancer, which acts on load averaged over hundreds of
//! milliseconds. Measured on a 2-vCPU VM (PoCL 3.1, ADI's sweep at N = 51, each run a fresh
//! set of buffers): unpinned, runs of 8 iterations cost 0.43 ns per byte run after run, and
//! runs of 64 iterations 0.37 for three runs and 0.24 from the fourth on: the two workers
//! shared one CPU until the load had lasted long enough to spread them. A validation's small
//! sizes run for milliseconds and its target for seconds, so the window measured one core and
//! the target two (PoCL's ADI and line-solve were over-predicted by 25–40 %). With
//! `POCL_AFFINITY=1` the same runs cost 0.23–0.28 ns per byte from the first.
//!
//! [`pin_worker_threads`] runs once, first thing in the binary, before any device is opened:
//! it sets `POCL_AFFINITY=1` unless the environment already sets it, and builds rayon's
//! global pool with one thread per allowed CPU (or `RAYON_NUM_THREADS` threads), thread i
//! pinned to the i-th CPU (counting round where there are more threads than CPUs), and gives
//! the host kernels' pool (`backend::host_pool`) as many parties, its workers pinned to the
//! CPUs after the first. `HARNESS_PIN=0` in the environment leaves all three as they were
//! (the host pool then has one unpinned party per available CPU). What it did is kept for
//! the files' provenance ([`pinning`]).

use std::sync::OnceLock;

use super::affinity::{allowed_cpus, pin_current_thread};

use serde::{Deserialize, Serialize};

/// How the worker threads were placed for a run: recorded in calibrations and series.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pinning {
    /// `POCL_AFFINITY` as PoCL sees it: `1` pins its pthread workers one per CPU; `unset`
    /// leaves them to the scheduler.
    pub pocl_affinity: String,
    /// The CPU each rayon thread (the harness's own parallel work: figures, reports,
    /// spec initialisation; until 2026-11-26 also the host kernels) is pinned to, in thread
    /// order; empty where they are not pinned.
    pub rayon_cpus: Vec<usize>,
    /// The host kernels' pool (`backend::host_pool`): the CPU of each party in party order,
    /// the first the launching thread's (not pinned), the others its workers' (pinned);
    /// empty where they are not pinned. Absent in files written before 2026-11-26.
    #[serde(default)]
    pub host_pool_cpus: Vec<usize>,
}

static PINNING: OnceLock<Pinning> = OnceLock::new();

/// Pin PoCL's, rayon's and the host pool's worker threads (see the module's documentation); call it before
/// any device is opened and before any other thread starts. Later calls return the first
/// call's result.
pub fn pin_worker_threads() -> &'static Pinning {
    PINNING.get_or_init(|| {
        if std::env::var("HARNESS_PIN").is_ok_and(|v| v == "0") {
            return Pinning {
                pocl_affinity: std::env::var("POCL_AFFINITY")
                    .unwrap_or_else(|_| "unset".to_string()),
                rayon_cpus: Vec::new(),
                host_pool_cpus: Vec::new(),
            };
        }
        if std::env::var_os("POCL_AFFINITY").is_none() {
            // Before any thread exists and before PoCL reads its environment.
            std::env::set_var("POCL_AFFINITY", "1");
        }
        let pocl_affinity = std::env::var("POCL_AFFINITY").unwrap_or_else(|_| "unset".to_string());
        let cpus = allowed_cpus();
        // One thread per CPU, or as many as RAYON_NUM_THREADS asks for, thread i on CPU i
        // (modulo the CPUs where it asks for more).
        let threads = std::env::var("RAYON_NUM_THREADS")
            .ok()
            .and_then(|v| v.parse::<usize>().ok())
            .filter(|&n| n > 0)
            .unwrap_or(cpus.len());
        let placed: Vec<usize> = (0..threads)
            .filter_map(|i| cpus.get(i % cpus.len().max(1)).copied())
            .collect();
        let rayon_cpus = if placed.is_empty() {
            Vec::new()
        } else {
            let each = placed.clone();
            let built = rayon::ThreadPoolBuilder::new()
                .num_threads(placed.len())
                .start_handler(move |i| pin_current_thread(each[i % each.len()]))
                .build_global();
            if built.is_ok() {
                placed.clone()
            } else {
                Vec::new()
            }
        };
        // The host kernels' pool: as many parties as rayon threads, its workers on the CPUs
        // after the caller's.
        let host_pool_cpus = if placed.is_empty() {
            Vec::new()
        } else if super::host_pool::configure(placed.len(), Some(placed.clone())) {
            placed
        } else {
            Vec::new()
        };
        Pinning {
            pocl_affinity,
            rayon_cpus,
            host_pool_cpus,
        }
    })
}

/// What [`pin_worker_threads`] did, if it ran in this process (the library's own tests do
/// not call it).
pub fn pinning() -> Option<&'static Pinning> {
    PINNING.get()
}

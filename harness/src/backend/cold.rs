//! Runs whose data start in device memory: a device that empties its caches before a launch
//! whenever the launches since it last did have moved as many bytes as the run's working set.
//!
//! A kernel at a small size finds its data in a cache, while at a size past the last cache it
//! meets device memory on every sweep over its data; what a kernel's time does when that
//! happens (all of it slows by the memory's rate, or none, its compute hiding the traffic)
//! is its own and no rate of the calibration says it. A run through [`ColdCaches`] measures
//! it at the small size: every time the launches have swept the working set once, the next
//! launch finds its data evicted, as at the target each byte is touched again only after the
//! whole working set has passed through the cache. A launch that reads what the launch just
//! before it wrote (a wavefront's next diagonal) still finds it cached, as at the target.
//!
//! The caches are emptied from the host by writing over a buffer of twice the largest cache
//! the device reports, one word per 64-byte line: on a CPU device (the host backend, an
//! OpenCL CPU runtime) device memory is the host's, and so are its caches. A GPU's L2 is not
//! reached from the host, so [`ColdCaches::new`] offers none there.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use super::{Arg, BackendError, Buffer, Device, DeviceClass, DeviceInfo, Launch, Program};
use super::{ProgramSource, Seconds};

/// The eviction buffer where the device reports no cache: 64 MiB.
const DEFAULT_EVICTION_BYTES: u64 = 64 << 20;

/// Bounds of the eviction buffer (twice the largest cache reported).
const EVICTION_BYTES: [u64; 2] = [8 << 20, 1 << 30];

/// A CPU device whose caches are emptied before a launch once the launches since the last
/// time have moved a working set's bytes (the module's doc). Launch times are the device's
/// own: the eviction runs before the launch and is not part of its time.
pub struct ColdCaches<'d> {
    device: &'d dyn Device,
    working_set: AtomicU64,
    since: AtomicU64,
    scratch: Mutex<Vec<u64>>,
    evictions: AtomicU64,
}

impl<'d> ColdCaches<'d> {
    /// `device` with its caches emptied every `working_set` bytes of launches (the first
    /// launch always finds them empty); `None` on a GPU, whose caches the host cannot empty.
    pub fn new(device: &'d dyn Device, working_set: u64) -> Option<Self> {
        let info = device.info();
        if info.class == DeviceClass::Gpu {
            return None;
        }
        let bytes = eviction_bytes(info);
        Some(ColdCaches {
            device,
            working_set: AtomicU64::new(working_set.max(1)),
            since: AtomicU64::new(u64::MAX),
            scratch: Mutex::new(vec![0; (bytes / 8) as usize]),
            evictions: AtomicU64::new(0),
        })
    }

    /// Start a run whose working set is `working_set` bytes: its first launch finds the
    /// caches empty. One eviction buffer then serves every size of a series.
    pub fn start(&self, working_set: u64) {
        self.working_set
            .store(working_set.max(1), Ordering::Relaxed);
        self.since.store(u64::MAX, Ordering::Relaxed);
    }

    /// How many times the caches were emptied so far.
    pub fn evictions(&self) -> u64 {
        self.evictions.load(Ordering::Relaxed)
    }

    fn evict(&self) {
        let mut scratch = self.scratch.lock().unwrap_or_else(|e| e.into_inner());
        let round = self.evictions.load(Ordering::Relaxed).wrapping_add(1);
        // One word per 64-byte line, each a new value, so that every line is fetched and
        // written and the compiler cannot skip a store.
        for (i, word) in scratch.iter_mut().enumerate().step_by(8) {
            *word = word.wrapping_add(round ^ i as u64);
        }
        std::hint::black_box(scratch.as_slice());
        self.evictions.store(round, Ordering::Relaxed);
    }
}

/// Twice the largest cache `info` reports, within [`EVICTION_BYTES`]; 64 MiB without one.
fn eviction_bytes(info: &DeviceInfo) -> u64 {
    info.l2_bytes
        .map_or(DEFAULT_EVICTION_BYTES, |c| c.saturating_mul(2))
        .clamp(EVICTION_BYTES[0], EVICTION_BYTES[1])
}

impl Device for ColdCaches<'_> {
    fn info(&self) -> &DeviceInfo {
        self.device.info()
    }

    fn alloc(&self, bytes: usize) -> Result<Buffer, BackendError> {
        self.device.alloc(bytes)
    }

    fn upload(&self, buf: &Buffer, data: &[u8]) -> Result<Seconds, BackendError> {
        self.device.upload(buf, data)
    }

    fn download(&self, buf: &Buffer, out: &mut [u8]) -> Result<Seconds, BackendError> {
        self.device.download(buf, out)
    }

    fn compile(&self, source: &ProgramSource) -> Result<Program, BackendError> {
        self.device.compile(source)
    }

    fn launch(
        &self,
        program: &Program,
        kernel: &str,
        launch: &Launch,
        args: &[Arg<'_>],
    ) -> Result<Seconds, BackendError> {
        self.device.launch(program, kernel, launch, args)
    }

    fn last_launch_threads(&self) -> Option<usize> {
        self.device.last_launch_threads()
    }

    fn preferred_group_size(&self) -> usize {
        self.device.preferred_group_size()
    }

    fn before_launch(&self, bytes: u64) {
        let mut since = self.since.load(Ordering::Relaxed);
        if since >= self.working_set.load(Ordering::Relaxed) {
            self.evict();
            since = 0;
        }
        self.since
            .store(since.saturating_add(bytes), Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::host::HostDevice;

    #[test]
    fn caches_are_emptied_once_per_sweep_over_the_working_set() {
        let host = HostDevice::new();
        let cold = ColdCaches::new(&host, 1000).unwrap();
        // The first launch finds them empty.
        cold.before_launch(400);
        assert_eq!(cold.evictions(), 1);
        // 400 + 500 < 1000: the second launch reads what the first left.
        cold.before_launch(500);
        assert_eq!(cold.evictions(), 1);
        // 400 + 500 + 200 ≥ 1000 before the fourth: a sweep has passed.
        cold.before_launch(200);
        assert_eq!(cold.evictions(), 1);
        cold.before_launch(10);
        assert_eq!(cold.evictions(), 2);
        // A launch that moves the whole working set: every launch after it starts empty.
        let whole = ColdCaches::new(&host, 1000).unwrap();
        for _ in 0..5 {
            whole.before_launch(1000);
        }
        assert_eq!(whole.evictions(), 5);
        // A new run starts empty whatever the last one left.
        whole.start(10_000);
        whole.before_launch(1000);
        assert_eq!(whole.evictions(), 6);
        whole.before_launch(1000);
        assert_eq!(whole.evictions(), 6);
    }

    #[test]
    fn the_buffer_is_twice_the_largest_cache_within_bounds() {
        let mut info = HostDevice::new().info().clone();
        info.l2_bytes = Some(32 << 20);
        assert_eq!(eviction_bytes(&info), 64 << 20);
        info.l2_bytes = Some(1 << 20);
        assert_eq!(eviction_bytes(&info), 8 << 20);
        info.l2_bytes = None;
        assert_eq!(eviction_bytes(&info), 64 << 20);
    }
}

//! Runs whose data start in device memory: a device that empties its caches before a launch
//! whenever that launch would carry the bytes moved since it last did past the run's working
//! set.
//!
//! A kernel at a small size finds its data in a cache, while at a size past the last cache it
//! meets device memory on every sweep over its data; what a kernel's time does when that
//! happens (all of it slows by the memory's rate, or none, its compute hiding the traffic)
//! is its own and no rate of the calibration says it. A run through [`ColdCaches`] measures
//! it at the small size: the launch that would begin a second sweep over the working set
//! finds its data evicted, as at the target each byte is touched again only after the whole
//! working set has passed through the cache. A launch that reads what the launch just before
//! it wrote (a wavefront's next diagonal) still finds it cached, as at the target. A launch
//! whose declared bytes fall a little short of the working set (a stencil that does not count
//! its halo, a buffer the kernel reads only in part) begins a second sweep all the same: until
//! 2026-11-30 the caches were emptied only once the bytes since had reached the working set,
//! so that such a kernel (the ports' mg-resid, 96 % of its working set per launch, and
//! spmv-ell, 95 %) ran every other launch of its cold runs warm.
//!
//! The caches are emptied by writing over a buffer of twice the largest cache the device
//! reports ([`Eviction`]): on a CPU device (the host backend, an OpenCL CPU runtime) the host
//! does it, one word per 64-byte line, as device memory and its caches are the host's; on a
//! GPU, whose L2 the host does not reach, a kernel on the device does it
//! (`kernels/evict.kern`), one word per 32-byte sector, the L2's unit of transfer. A CPU
//! device whose buffer would pass [`FLUSH_ABOVE_BYTES`] (and any CPU device, where asked)
//! instead flushes the lines of each such launch's own buffers ([`Eviction::Flush`]), at the
//! launch, the first call that names them.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use super::host::{HostArgs, HostKernel};
use super::{Arg, BackendError, Buffer, Device, DeviceClass, DeviceInfo, Launch, Program};
use super::{ProgramSource, Seconds};

/// The eviction buffer where the device reports no cache: 64 MiB.
const DEFAULT_EVICTION_BYTES: u64 = 64 << 20;

/// Bounds of the eviction buffer (twice the largest cache reported).
const EVICTION_BYTES: [u64; 2] = [8 << 20, 1 << 30];

/// Who empties the caches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Eviction {
    /// The host writes over a buffer in its own memory: a CPU device's caches are the host's.
    Host,
    /// A kernel writes over a device buffer (`kernels/evict.kern`): a GPU's L2, which the
    /// host does not reach.
    Device,
    /// The host flushes the lines of the launch's own buffers from every cache level
    /// (`clflush`): a CPU device's memory is the host's.
    Flush,
}

impl Eviction {
    /// The eviction a device of `class` needs: the host's on a CPU, the device's on a GPU.
    pub fn for_class(class: DeviceClass) -> Self {
        match class {
            DeviceClass::Cpu => Eviction::Host,
            DeviceClass::Gpu => Eviction::Device,
        }
    }

    /// The eviction for `device`: [`Eviction::for_class`], except on a CPU whose eviction
    /// buffer would exceed [`FLUSH_ABOVE_BYTES`], where the launch's own buffers are flushed
    /// instead: writing over twice a cache that large costs every cold launch tens of
    /// milliseconds however small its data (71 ms on the 2-core Intel Xeon VM whose OS
    /// reports a 480 MiB L3, where a series of a kernel of a few MB spent 98 % of its time
    /// evicting), a flush a time in proportion to the launch's own data.
    pub fn for_device(device: &DeviceInfo) -> Self {
        match Self::for_class(device.class) {
            Eviction::Host if eviction_bytes(device) > FLUSH_ABOVE_BYTES => Eviction::Flush,
            e => e,
        }
    }
}

/// The largest eviction buffer a CPU device writes over; past it the launch's own buffers are
/// flushed ([`Eviction::for_device`]). 256 MiB (a 128 MiB last-level cache) keeps every CPU
/// device the cold runs were judged on writing over its buffer (their caches 32–48 MiB), and
/// takes about 20 ms a launch to write.
pub const FLUSH_ABOVE_BYTES: u64 = 256 << 20;

/// What empties the caches, with what it writes over.
enum Scratch {
    Flush,
    Host(Mutex<Vec<u64>>),
    Device(Box<DeviceScratch>),
}

/// The device's eviction: its kernel, the buffer it writes over and the launch that does.
struct DeviceScratch {
    program: Program,
    buffer: Buffer,
    sectors: u32,
    launch: Launch,
}

/// Words per 32-byte sector, the unit the device eviction touches once.
const SECTOR_WORDS: u32 = 8;

/// A device whose caches are emptied before a launch that would carry the bytes moved since
/// the last time past a working set (the module's doc). Launch times are the device's own:
/// the eviction runs before the launch and is not part of its time.
pub struct ColdCaches<'d> {
    device: &'d dyn Device,
    working_set: AtomicU64,
    since: AtomicU64,
    scratch: Scratch,
    evictions: AtomicU64,
    /// A flush is due before the next launch (its buffers are known only then).
    flush_due: std::sync::atomic::AtomicBool,
}

impl<'d> ColdCaches<'d> {
    /// `device` with its caches emptied every `working_set` bytes of launches (the first
    /// launch always finds them empty), by the eviction it needs ([`Eviction::for_device`]).
    pub fn new(device: &'d dyn Device, working_set: u64) -> Result<Self, BackendError> {
        Self::with_eviction(device, working_set, Eviction::for_device(device.info()))
    }

    /// As [`ColdCaches::new`], emptied by `eviction`: the device's kernel runs on a CPU
    /// device too (to compare the two there), the host's only reaches a CPU's caches.
    /// Errors where the eviction kernel does not compile or its buffer cannot be allocated.
    pub fn with_eviction(
        device: &'d dyn Device,
        working_set: u64,
        eviction: Eviction,
    ) -> Result<Self, BackendError> {
        let bytes = eviction_bytes(device.info());
        let scratch = match eviction {
            Eviction::Flush => Scratch::Flush,
            Eviction::Host => Scratch::Host(Mutex::new(vec![0; (bytes / 8) as usize])),
            Eviction::Device => {
                let sectors = u32::try_from(bytes / (4 * SECTOR_WORDS as u64)).unwrap_or(u32::MAX);
                let buffer = device.alloc((sectors as usize) * 4 * SECTOR_WORDS as usize)?;
                let program = device.compile(&program())?;
                let group = device.preferred_group_size();
                let global = (sectors as usize).div_ceil(group) * group;
                Scratch::Device(Box::new(DeviceScratch {
                    program,
                    buffer,
                    sectors,
                    launch: Launch::linear(global, group),
                }))
            }
        };
        Ok(ColdCaches {
            device,
            working_set: AtomicU64::new(working_set.max(1)),
            since: AtomicU64::new(u64::MAX),
            scratch,
            evictions: AtomicU64::new(0),
            flush_due: std::sync::atomic::AtomicBool::new(false),
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

    /// Who empties the caches.
    pub fn eviction(&self) -> Eviction {
        match self.scratch {
            Scratch::Flush => Eviction::Flush,
            Scratch::Host(_) => Eviction::Host,
            Scratch::Device(_) => Eviction::Device,
        }
    }

    fn evict(&self) -> Result<(), BackendError> {
        let round = self.evictions.load(Ordering::Relaxed).wrapping_add(1);
        match &self.scratch {
            Scratch::Flush => {
                self.flush_due.store(true, Ordering::Relaxed);
                return Ok(());
            }
            Scratch::Host(scratch) => {
                let mut scratch = scratch.lock().unwrap_or_else(|e| e.into_inner());
                // One word per 64-byte line, each a new value, so that every line is fetched
                // and written and the compiler cannot skip a store.
                for (i, word) in scratch.iter_mut().enumerate().step_by(8) {
                    *word = word.wrapping_add(round ^ i as u64);
                }
                std::hint::black_box(scratch.as_slice());
            }
            Scratch::Device(d) => {
                let DeviceScratch {
                    program,
                    buffer,
                    sectors,
                    launch,
                } = d.as_ref();
                // Waited for (a launch returns once it completed) and not timed: the next
                // launch's time is its own.
                self.device.launch(
                    program,
                    "evict",
                    launch,
                    &[
                        Arg::Buf(buffer),
                        Arg::U32(*sectors),
                        Arg::U32(SECTOR_WORDS),
                        Arg::U32(round as u32),
                    ],
                )?;
            }
        }
        self.evictions.store(round, Ordering::Relaxed);
        Ok(())
    }
}

/// The eviction kernel (`kernels/evict.kern`) with its host twin.
pub fn program() -> ProgramSource {
    ProgramSource::embedded(
        "evict.kern",
        include_str!("../../../kernels/evict.kern"),
        HOST_TWINS,
    )
}

const HOST_TWINS: &[(&str, HostKernel)] = &[("evict", host_evict)];

fn host_evict(a: &HostArgs<'_>, _: &Launch) -> Result<(), String> {
    let buf = a.slice_mut::<u32>(0)?;
    let sectors = a.u32(1)? as usize;
    let words = (a.u32(2)? as usize).max(1);
    let round = a.u32(3)?;
    if sectors.saturating_mul(words) > buf.len() {
        return Err(format!(
            "{sectors} sectors of {words} words overrun a buffer of {} words",
            buf.len()
        ));
    }
    for (i, word) in buf.iter_mut().step_by(words).take(sectors).enumerate() {
        *word = word.wrapping_add(round ^ i as u32);
    }
    Ok(())
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

    fn download_from(
        &self,
        buf: &Buffer,
        offset: usize,
        out: &mut [u8],
    ) -> Result<Seconds, BackendError> {
        self.device.download_from(buf, offset, out)
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
        if self.flush_due.swap(false, Ordering::Relaxed) {
            for a in args {
                if let Arg::Buf(b) = a {
                    if !self.device.flush_from_caches(b)? {
                        return Err(BackendError::BadArguments {
                            kernel: kernel.to_string(),
                            detail: "this device cannot flush its buffers from the caches".into(),
                        });
                    }
                }
            }
            let round = self.evictions.load(Ordering::Relaxed).wrapping_add(1);
            self.evictions.store(round, Ordering::Relaxed);
        }
        self.device.launch(program, kernel, launch, args)
    }

    fn last_launch_threads(&self) -> Option<usize> {
        self.device.last_launch_threads()
    }

    fn preferred_group_size(&self) -> usize {
        self.device.preferred_group_size()
    }

    fn before_launch(&self, bytes: u64) -> Result<(), BackendError> {
        let mut since = self.since.load(Ordering::Relaxed);
        if since.saturating_add(bytes) > self.working_set.load(Ordering::Relaxed) {
            self.evict()?;
            since = 0;
        }
        self.since
            .store(since.saturating_add(bytes), Ordering::Relaxed);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::host::HostDevice;

    #[test]
    fn caches_are_emptied_once_per_sweep_over_the_working_set() {
        let host = HostDevice::new();
        let cold = ColdCaches::with_eviction(&host, 1000, Eviction::Host).unwrap();
        // The first launch finds them empty.
        cold.before_launch(400).unwrap();
        assert_eq!(cold.evictions(), 1);
        // 400 + 500 ≤ 1000: the second launch reads what the first left.
        cold.before_launch(500).unwrap();
        assert_eq!(cold.evictions(), 1);
        // 400 + 500 + 100 ≤ 1000: the third too, finishing the sweep.
        cold.before_launch(100).unwrap();
        assert_eq!(cold.evictions(), 1);
        // The fourth would begin a second sweep.
        cold.before_launch(10).unwrap();
        assert_eq!(cold.evictions(), 2);
        // A launch that moves a little less than the working set (a stencil that does not
        // count its halo) starts each sweep: every launch finds the caches empty.
        let most = ColdCaches::with_eviction(&host, 1000, Eviction::Host).unwrap();
        for _ in 0..4 {
            most.before_launch(960).unwrap();
        }
        assert_eq!(most.evictions(), 4);
        // A launch that moves the whole working set: every launch after it starts empty.
        let whole = ColdCaches::with_eviction(&host, 1000, Eviction::Host).unwrap();
        for _ in 0..5 {
            whole.before_launch(1000).unwrap();
        }
        assert_eq!(whole.evictions(), 5);
        // A new run starts empty whatever the last one left.
        whole.start(10_000);
        whole.before_launch(1000).unwrap();
        assert_eq!(whole.evictions(), 6);
        whole.before_launch(1000).unwrap();
        assert_eq!(whole.evictions(), 6);
    }

    /// The device's eviction on `device`: the first launch runs the kernel once, which adds
    /// `round ^ i` to the first word of sector i and leaves every other word as it was.
    fn check_device_eviction(device: &dyn Device) {
        let cold = ColdCaches::with_eviction(device, 1000, Eviction::Device).unwrap();
        assert_eq!(cold.eviction(), Eviction::Device);
        let Scratch::Device(d) = &cold.scratch else {
            panic!("a device eviction");
        };
        let DeviceScratch {
            buffer, sectors, ..
        } = d.as_ref();
        let words = *sectors as usize * SECTOR_WORDS as usize;
        assert_eq!(words * 4, buffer.len_bytes());
        let before = crate::backend::download_u32(device, buffer, words).unwrap();
        cold.before_launch(10).unwrap();
        assert_eq!(cold.evictions(), 1);
        let after = crate::backend::download_u32(device, buffer, words).unwrap();
        for (i, (b, a)) in before.iter().zip(&after).enumerate() {
            let sector = i / SECTOR_WORDS as usize;
            let expected = if i % SECTOR_WORDS as usize == 0 {
                b.wrapping_add(1 ^ sector as u32)
            } else {
                *b
            };
            assert_eq!(*a, expected, "word {i}");
        }
    }

    #[test]
    fn the_device_eviction_rewrites_one_word_per_sector_on_the_host() {
        check_device_eviction(&HostDevice::new());
        // A CPU device's own eviction is the host's (a flush where it reports a very large
        // cache).
        let host = HostDevice::new();
        assert_eq!(
            ColdCaches::new(&host, 1).unwrap().eviction(),
            Eviction::for_device(host.info())
        );
        assert_eq!(Eviction::for_class(DeviceClass::Cpu), Eviction::Host);
        assert_eq!(Eviction::for_class(DeviceClass::Gpu), Eviction::Device);
    }

    #[test]
    #[cfg_attr(
        no_opencl_runtime,
        ignore = "no OpenCL runtime when the tests were built (apt-get install pocl-opencl-icd)"
    )]
    fn the_device_eviction_rewrites_one_word_per_sector_on_opencl() {
        on_opencl(check_device_eviction);
    }

    /// A flush eviction on `device`: due at the launch that begins a sweep, done at that
    /// launch on its own buffers (the only ones it names), which keep their contents.
    fn check_flush_eviction(device: &dyn Device) {
        let cold = ColdCaches::with_eviction(device, 1000, Eviction::Flush).unwrap();
        assert_eq!(cold.eviction(), Eviction::Flush);
        let words: Vec<u32> = (0..64).collect();
        let buf = crate::backend::upload_u32(device, &words).unwrap();
        assert!(
            device.flush_from_caches(&buf).unwrap(),
            "a CPU device flushes"
        );
        assert_eq!(
            crate::backend::download_u32(device, &buf, 64).unwrap(),
            words
        );
        cold.before_launch(10).unwrap();
        assert_eq!(cold.evictions(), 0, "due: the launch names its buffers");
        let program = cold.compile(&program()).unwrap();
        // The eviction kernel as the launch: one sector of 8 words, round 5.
        let args = [Arg::Buf(&buf), Arg::U32(1), Arg::U32(8), Arg::U32(5)];
        cold.launch(&program, "evict", &Launch::linear(1, 1), &args)
            .unwrap();
        assert_eq!(cold.evictions(), 1);
        let after = crate::backend::download_u32(device, &buf, 64).unwrap();
        assert_eq!(after[0], 5, "the launch ran on the flushed buffer");
        assert_eq!(after[1..], words[1..]);
        // Within the sweep: no flush before the next launch.
        cold.before_launch(10).unwrap();
        cold.launch(&program, "evict", &Launch::linear(1, 1), &args)
            .unwrap();
        assert_eq!(cold.evictions(), 1);
    }

    #[test]
    fn a_flush_eviction_flushes_the_launchs_own_buffers_on_the_host() {
        check_flush_eviction(&HostDevice::new());
    }

    #[test]
    #[cfg_attr(
        no_opencl_runtime,
        ignore = "no OpenCL runtime when the tests were built (apt-get install pocl-opencl-icd)"
    )]
    fn a_flush_eviction_flushes_the_launchs_own_buffers_on_opencl() {
        on_opencl(check_flush_eviction);
    }

    #[test]
    fn a_cpu_that_reports_a_very_large_cache_flushes_instead() {
        let mut info = HostDevice::new().info().clone();
        info.l2_bytes = Some(48 << 20);
        assert_eq!(Eviction::for_device(&info), Eviction::Host);
        info.l2_bytes = Some(128 << 20);
        assert_eq!(Eviction::for_device(&info), Eviction::Host);
        info.l2_bytes = Some(480 << 20);
        assert_eq!(Eviction::for_device(&info), Eviction::Flush);
        info.class = DeviceClass::Gpu;
        assert_eq!(Eviction::for_device(&info), Eviction::Device);
    }

    /// `check` on the OpenCL device, or skipped (said) where there is none and none is
    /// required (`HARNESS_REQUIRE_OPENCL=1`, as CI sets).
    fn on_opencl(check: fn(&dyn Device)) {
        use crate::backend::{discover, select, BackendKind, DeviceSelector};
        let list = discover();
        match select(&list, &DeviceSelector::Backend(BackendKind::Opencl)) {
            Ok(index) => check(list.devices[index].as_ref()),
            Err(e) => {
                assert!(
                    std::env::var("HARNESS_REQUIRE_OPENCL").as_deref() != Ok("1"),
                    "HARNESS_REQUIRE_OPENCL=1 but there is no OpenCL device: {e}"
                );
                eprintln!("skipped: no OpenCL device (CI installs PoCL so this runs there)");
            }
        }
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

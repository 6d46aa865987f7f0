//! The host backend: native Rust twins of the kernels, run on the CPU's threads.
//!
//! It always works, it is the reference every device result is checked against, and it is
//! the CPU side of the hybrid model. A host "kernel" receives the whole launch and
//! parallelises it itself (on [`host_pool`], one contiguous part per core;
//! the twins of ADI's sweeps and swap, the line solves, SOR's diagonals and skew copies,
//! sor-rb's colours and LU's planes run on the launching thread alone); buffers are handed to it as typed slices under a run-time borrow check,
//! so a twin never needs `unsafe`.

use std::cell::{RefCell, UnsafeCell};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

#[cfg(target_os = "linux")]
use super::host_mapping::Mapping;

pub use super::memory::available_memory_bytes;
use super::{
    host_pool, Arg, BackendError, BackendKind, Buffer, BufferInner, Device, DeviceClass,
    DeviceInfo, Launch, Program, ProgramInner, ProgramSource, Seconds,
};

/// Unmap the freed large buffers the host backend keeps for later ones (backend/host_mapping.rs),
/// returning their memory to the system: for a caller about to need more than it has left.
pub fn release_kept_memory() {
    #[cfg(target_os = "linux")]
    super::host_mapping::release_kept();
}

/// A native twin of a kernel: it runs the whole launch and reports a problem as text.
pub type HostKernel = fn(&HostArgs<'_>, &Launch) -> Result<(), String>;

/// Host memory: 8-byte aligned storage (from 2 MiB up it starts on a 2 MiB boundary and is
/// advised into transparent huge pages) plus a flag that a launch holds it.
pub struct HostMemory {
    words: Storage,
    /// Where the buffer starts within `words`, in words.
    start: usize,
    in_use: AtomicBool,
}

/// Where a host buffer's words live: the global allocator's heap, or from 2 MiB up a mapping
/// of its own ([`Mapping`]: from 64 MiB up one kept from a freed buffer where one fits).
enum Storage {
    Heap(UnsafeCell<Box<[u64]>>),
    #[cfg(target_os = "linux")]
    Mapped(Mapping),
}

impl Storage {
    /// The first word.
    fn base(&self) -> *mut u64 {
        match self {
            // SAFETY: taking a raw pointer does not create a reference to the contents.
            Storage::Heap(words) => unsafe { (*words.get()).as_mut_ptr() },
            #[cfg(target_os = "linux")]
            Storage::Mapped(m) => m.base(),
        }
    }
}

// SAFETY: the storage is only reached through `HostArgs`, which takes the `in_use` flag for
// the duration of a launch and hands out non-overlapping borrows; uploads and downloads take
// the same flag.
unsafe impl Sync for HostMemory {}

/// The size and alignment of a huge page (x86-64 and AArch64 with 4 KiB base pages).
const HUGE_PAGE: usize = 2 << 20;

/// Ask the kernel to back `words` with transparent huge pages (Linux `madvise`, where the
/// system allows it: `/sys/kernel/mm/transparent_hugepage/enabled` set to `madvise` or
/// `always`), before its pages are first touched. A GPU maps its memory in large pages; with
/// 4 KiB pages a pointer chase past a few MiB measures TLB misses, not the memory level, and
/// the latency sweep puts "memory" inside the last-level cache. Only the whole huge pages
/// inside `words` can be backed so; a refusal is harmless (the pages stay 4 KiB).
fn advise_huge_pages(words: &mut [u64]) {
    let bytes = std::mem::size_of_val(words);
    if !cfg!(target_os = "linux") || bytes < HUGE_PAGE {
        return;
    }
    let start = words.as_mut_ptr() as usize;
    let aligned = start.next_multiple_of(HUGE_PAGE);
    let end = (start + bytes) / HUGE_PAGE * HUGE_PAGE;
    if end > aligned {
        #[cfg(target_os = "linux")]
        // SAFETY: the range lies within `words`' own allocation and is page-aligned; advice
        // changes how the kernel backs the pages, never their contents.
        unsafe {
            libc::madvise(
                aligned as *mut libc::c_void,
                end - aligned,
                libc::MADV_HUGEPAGE,
            );
        }
    }
}

/// `count` zeroed words, mapped lazily as `vec![0; count]` is (so the huge-page advice
/// still applies to untouched pages), or `None` where the allocator refuses.
fn zeroed_words(count: usize) -> Option<Box<[u64]>> {
    let layout = std::alloc::Layout::array::<u64>(count).ok()?;
    if layout.size() == 0 {
        return Some(Box::new([]));
    }
    // SAFETY: the layout has a non-zero size.
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<u64>();
    if ptr.is_null() {
        return None;
    }
    // SAFETY: `ptr` is a zeroed allocation of `count` words from the global allocator with
    // `Layout::array::<u64>(count)`, the layout a `Box<[u64]>` of that length frees with.
    Some(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, count)) })
}

impl HostMemory {
    /// A zeroed buffer of `bytes`, or `None` where the memory cannot be had (a failed
    /// allocation is an error, not an abort).
    fn new(bytes: usize) -> Option<Self> {
        let len = bytes.div_ceil(8);
        // From 2 MiB up the buffer starts on a huge-page boundary (2 MiB more are allocated
        // to find one), so all of it but the tail can be a huge page. Started anywhere, only
        // the huge pages that happen to lie inside it are, the rest 4 KiB pages whose
        // physical placement differs from one allocation to the next: a triad over 16 MB ran
        // at 129–218 GB/s over eight allocations so, 161–185 GB/s when aligned (AMD EPYC).
        let slack = if bytes >= HUGE_PAGE { HUGE_PAGE / 8 } else { 0 };
        let total = len.checked_add(slack)?;
        #[cfg(target_os = "linux")]
        let mut words = if slack > 0 {
            Storage::Mapped(Mapping::new(total)?)
        } else {
            Storage::Heap(UnsafeCell::new(zeroed_words(total)?))
        };
        #[cfg(not(target_os = "linux"))]
        let mut words = Storage::Heap(UnsafeCell::new(zeroed_words(total)?));
        let all: &mut [u64] = match &mut words {
            Storage::Heap(w) => w.get_mut(),
            #[cfg(target_os = "linux")]
            Storage::Mapped(m) => m.words(),
        };
        let address = all.as_ptr() as usize;
        let start = if slack > 0 {
            (address.next_multiple_of(HUGE_PAGE) - address) / 8
        } else {
            0
        };
        let used = &mut all[start..start + len];
        advise_huge_pages(used);
        // A large zeroed allocation is mapped lazily: its pages would be faulted in by the
        // first upload or kernel that writes them, timed as that phase (a 64 MB upload at
        // 2 GB/s instead of the copy's 10+). A device allocation is backed when it returns,
        // so fault every page in here, untimed.
        super::touch_pages(used);
        Some(HostMemory {
            words,
            start,
            in_use: AtomicBool::new(false),
        })
    }

    fn acquire(&self) -> bool {
        self.in_use
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    fn release(&self) {
        self.in_use.store(false, Ordering::Release);
    }

    fn as_ptr(&self) -> *mut u8 {
        // SAFETY: `start` lies within the allocation (`new`).
        unsafe { self.words.base().add(self.start).cast::<u8>() }
    }
}

/// Element types a host twin may view a buffer as.
pub trait Element: Copy + Send + Sync + 'static + sealed::Sealed {}
impl Element for u32 {}
impl Element for i32 {}
impl Element for f32 {}
impl Element for u64 {}
impl Element for f64 {}

mod sealed {
    pub trait Sealed {}
    impl Sealed for u32 {}
    impl Sealed for i32 {}
    impl Sealed for f32 {}
    impl Sealed for u64 {}
    impl Sealed for f64 {}
}

#[derive(Clone, Copy, PartialEq)]
enum Borrow {
    Shared,
    Unique,
}

/// The arguments of one host launch, with typed, borrow-checked access to the buffers.
pub struct HostArgs<'a> {
    kernel: &'a str,
    args: &'a [Arg<'a>],
    borrows: RefCell<Vec<(*const HostMemory, Borrow)>>,
}

impl<'a> HostArgs<'a> {
    fn new(kernel: &'a str, args: &'a [Arg<'a>]) -> Result<Self, BackendError> {
        let mut taken: Vec<&HostMemory> = Vec::new();
        for arg in args {
            if let Arg::Buf(buf) = arg {
                let BufferInner::Host(mem) = &buf.inner else {
                    return Err(bad(kernel, "a buffer of another backend was passed"));
                };
                if taken.iter().any(|m| std::ptr::eq(*m, mem)) {
                    continue;
                }
                if !mem.acquire() {
                    taken.iter().for_each(|m| m.release());
                    return Err(bad(kernel, "a buffer is in use by another launch"));
                }
                taken.push(mem);
            }
        }
        Ok(HostArgs {
            kernel,
            args,
            borrows: RefCell::new(Vec::new()),
        })
    }

    fn memory(&self, index: usize) -> Result<(&'a HostMemory, usize), String> {
        match self.args.get(index) {
            Some(Arg::Buf(buf)) => match &buf.inner {
                BufferInner::Host(mem) => Ok((mem, buf.len_bytes())),
                _ => Err(format!("argument {index} is not a host buffer")),
            },
            _ => Err(format!("argument {index} is not a buffer")),
        }
    }

    fn borrow(&self, index: usize, kind: Borrow) -> Result<(*mut u8, usize), String> {
        let (mem, bytes) = self.memory(index)?;
        let mut borrows = self.borrows.borrow_mut();
        let key = mem as *const HostMemory;
        for (other, other_kind) in borrows.iter() {
            if *other == key && (kind == Borrow::Unique || *other_kind == Borrow::Unique) {
                return Err(format!(
                    "argument {index} of {} is borrowed twice, once mutably",
                    self.kernel
                ));
            }
        }
        borrows.push((key, kind));
        Ok((mem.as_ptr(), bytes))
    }

    /// Buffer argument `index`, read-only, as elements of `T`.
    pub fn slice<T: Element>(&self, index: usize) -> Result<&'a [T], String> {
        let (ptr, bytes) = self.borrow(index, Borrow::Shared)?;
        // SAFETY: the storage is 8-byte aligned and at least `bytes` long; every `Element`
        // is plain old data of alignment ≤ 8; the borrow table forbids a unique borrow of the
        // same buffer while this one lives (for the whole launch), and `in_use` keeps other
        // launches out.
        Ok(unsafe { std::slice::from_raw_parts(ptr.cast::<T>(), bytes / size_of::<T>()) })
    }

    /// Buffer argument `index`, writable, as elements of `T`.
    pub fn slice_mut<T: Element>(&self, index: usize) -> Result<&'a mut [T], String> {
        let (ptr, bytes) = self.borrow(index, Borrow::Unique)?;
        // SAFETY: as in `slice`; the borrow table guarantees this is the only borrow.
        Ok(unsafe { std::slice::from_raw_parts_mut(ptr.cast::<T>(), bytes / size_of::<T>()) })
    }

    /// The first `n` elements of buffer argument `index`, read-only, or an error naming the
    /// shortfall.
    pub fn first<T: Element>(&self, index: usize, n: usize) -> Result<&'a [T], String> {
        let slice = self.slice::<T>(index)?;
        slice.get(..n).ok_or_else(|| short(slice.len(), n))
    }

    /// The first `n` elements of buffer argument `index`, writable (see [`Self::first`]).
    pub fn first_mut<T: Element>(&self, index: usize, n: usize) -> Result<&'a mut [T], String> {
        let slice = self.slice_mut::<T>(index)?;
        let len = slice.len();
        slice.get_mut(..n).ok_or_else(|| short(len, n))
    }

    /// Scalar argument `index` as a `u32`.
    pub fn u32(&self, index: usize) -> Result<u32, String> {
        match self.args.get(index) {
            Some(Arg::U32(v)) => Ok(*v),
            _ => Err(format!("argument {index} is not a u32")),
        }
    }

    /// Scalar argument `index` as an `f32`.
    pub fn f32(&self, index: usize) -> Result<f32, String> {
        match self.args.get(index) {
            Some(Arg::F32(v)) => Ok(*v),
            _ => Err(format!("argument {index} is not an f32")),
        }
    }

    /// Scalar argument `index` as an `f64`.
    pub fn f64(&self, index: usize) -> Result<f64, String> {
        match self.args.get(index) {
            Some(Arg::F64(v)) => Ok(*v),
            _ => Err(format!("argument {index} is not an f64")),
        }
    }

    /// Scalar argument `index` as a `u64`.
    pub fn u64(&self, index: usize) -> Result<u64, String> {
        match self.args.get(index) {
            Some(Arg::U64(v)) => Ok(*v),
            _ => Err(format!("argument {index} is not a u64")),
        }
    }
}

impl Drop for HostArgs<'_> {
    fn drop(&mut self) {
        let mut released: Vec<*const HostMemory> = Vec::new();
        for arg in self.args {
            if let Arg::Buf(Buffer {
                inner: BufferInner::Host(mem),
                ..
            }) = arg
            {
                let key = mem as *const HostMemory;
                if !released.contains(&key) {
                    mem.release();
                    released.push(key);
                }
            }
        }
    }
}

fn bad(kernel: &str, detail: &str) -> BackendError {
    BackendError::BadArguments {
        kernel: kernel.to_string(),
        detail: detail.to_string(),
    }
}

/// The host CPU as a device.
pub struct HostDevice {
    info: DeviceInfo,
}

impl HostDevice {
    /// Describe the host: its CPU model, logical cores and memory.
    pub fn new() -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
        let memory_bytes = read_meminfo_total().unwrap_or(0);
        HostDevice {
            info: DeviceInfo {
                backend: BackendKind::Host,
                class: DeviceClass::Cpu,
                name: cpu_model().unwrap_or_else(|| "host CPU".to_string()),
                vendor: cpu_vendor().unwrap_or_else(|| "unknown".to_string()),
                driver: format!("harness {} (native Rust)", env!("CARGO_PKG_VERSION")),
                platform: std::env::consts::ARCH.to_string(),
                compute_capability: None,
                compute_units: cores,
                resident_threads_per_unit: Some(1),
                max_group_size: 1024,
                clock_mhz: cpu_mhz(),
                memory_clock_mhz: None,
                memory_bytes,
                max_alloc_bytes: memory_bytes / 2,
                l2_bytes: cache_bytes("index3").or_else(|| cache_bytes("index2")),
                ecc: None,
            },
        }
    }
}

impl Default for HostDevice {
    fn default() -> Self {
        Self::new()
    }
}

impl Device for HostDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn alloc(&self, bytes: usize) -> Result<Buffer, BackendError> {
        if bytes as u64 > self.info.max_alloc_bytes && self.info.max_alloc_bytes > 0 {
            return Err(BackendError::OutOfMemory {
                what: "a host buffer".into(),
                needed: bytes as u64,
                available: self.info.max_alloc_bytes,
            });
        }
        let memory = HostMemory::new(bytes).ok_or_else(|| BackendError::OutOfMemory {
            what: "a host buffer".into(),
            needed: bytes as u64,
            available: available_memory_bytes().unwrap_or(0),
        })?;
        Ok(Buffer {
            bytes,
            inner: BufferInner::Host(memory),
        })
    }

    fn upload(&self, buf: &Buffer, data: &[u8]) -> Result<Seconds, BackendError> {
        let mem = host_memory(buf, data.len(), "upload")?;
        let start = Instant::now();
        // SAFETY: `acquire` succeeded, so no launch holds the buffer; `data.len()` was checked
        // against the buffer's size.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), mem.as_ptr(), data.len()) };
        let elapsed = start.elapsed().as_secs_f64();
        mem.release();
        Ok(Seconds(elapsed))
    }

    fn flush_from_caches(&self, buf: &Buffer) -> Result<bool, BackendError> {
        let len = buf.len_bytes();
        let mem = host_memory(buf, len, "flush")?;
        // SAFETY: `acquire` succeeded, so the buffer's `len` bytes stay mapped and no launch
        // holds them; flushing a line leaves its contents as they are.
        let flushed = unsafe { super::flush_lines(mem.as_ptr(), len) };
        mem.release();
        Ok(flushed)
    }

    fn download_from(
        &self,
        buf: &Buffer,
        offset: usize,
        out: &mut [u8],
    ) -> Result<Seconds, BackendError> {
        let end = offset.saturating_add(out.len());
        let mem = host_memory(buf, end, "download")?;
        let start = Instant::now();
        // SAFETY: as in `upload`; `host_memory` checked that offset + len lies in the buffer.
        unsafe {
            std::ptr::copy_nonoverlapping(mem.as_ptr().add(offset), out.as_mut_ptr(), out.len())
        };
        let elapsed = start.elapsed().as_secs_f64();
        mem.release();
        Ok(Seconds(elapsed))
    }

    fn compile(&self, source: &ProgramSource) -> Result<Program, BackendError> {
        Ok(Program {
            name: source.name.to_string(),
            inner: ProgramInner::Host(source.host),
        })
    }

    fn launch(
        &self,
        program: &Program,
        kernel: &str,
        launch: &Launch,
        args: &[Arg<'_>],
    ) -> Result<Seconds, BackendError> {
        let ProgramInner::Host(table) = &program.inner else {
            return Err(bad(kernel, "program was compiled for another backend"));
        };
        let twin = table
            .iter()
            .find(|(name, _)| *name == kernel)
            .map(|(_, f)| *f)
            .ok_or_else(|| BackendError::NoSuchKernel {
                program: program.name.clone(),
                kernel: kernel.to_string(),
            })?;
        let host_args = HostArgs::new(kernel, args)?;
        let start = Instant::now();
        let (ran, _) = host_pool::counting_parties(|| twin(&host_args, launch));
        let elapsed = start.elapsed().as_secs_f64();
        ran.map_err(|detail| bad(kernel, &detail))?;
        Ok(Seconds(elapsed))
    }

    fn last_launch_threads(&self) -> Option<usize> {
        host_pool::last_counted_parties()
    }

    fn preferred_group_size(&self) -> usize {
        1
    }
}

fn host_memory<'b>(
    buf: &'b Buffer,
    len: usize,
    what: &str,
) -> Result<&'b HostMemory, BackendError> {
    let BufferInner::Host(mem) = &buf.inner else {
        return Err(bad(what, "a buffer of another backend was passed"));
    };
    if len > buf.len_bytes() {
        return Err(bad(
            what,
            &format!("{len} bytes do not fit a buffer of {}", buf.len_bytes()),
        ));
    }
    if !mem.acquire() {
        return Err(bad(what, "the buffer is in use by a launch"));
    }
    Ok(mem)
}

fn read_meminfo_total() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

fn cpuinfo_field(field: &str) -> Option<String> {
    let text = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    let line = text.lines().find(|l| l.starts_with(field))?;
    Some(line.split_once(':')?.1.trim().to_string())
}

fn cpu_model() -> Option<String> {
    cpuinfo_field("model name")
}

fn cpu_vendor() -> Option<String> {
    cpuinfo_field("vendor_id")
}

fn cpu_mhz() -> Option<u32> {
    let khz = std::fs::read_to_string("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok());
    match khz {
        Some(k) => Some((k / 1000) as u32),
        None => cpuinfo_field("cpu MHz")?
            .parse::<f64>()
            .ok()
            .map(|m| m as u32),
    }
}

fn cache_bytes(index: &str) -> Option<u64> {
    let path = format!("/sys/devices/system/cpu/cpu0/cache/{index}/size");
    let text = std::fs::read_to_string(path).ok()?;
    let text = text.trim();
    let (digits, unit) = text.split_at(text.find(|c: char| !c.is_ascii_digit())?);
    let n: u64 = digits.parse().ok()?;
    Some(match unit {
        "K" => n * 1024,
        "M" => n * 1024 * 1024,
        _ => n,
    })
}

/// The error of a buffer shorter than the kernel's `n`.
fn short(len: usize, n: usize) -> String {
    format!("buffer of {len} elements is shorter than n = {n}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Buffers on both sides of the huge-page size: zeroed, their start 8-byte aligned (from
    /// 2 MiB up on a 2 MiB boundary, in a mapping of their own on Linux), every byte
    /// writable and read back, and freed without error, over and over as a sweep does.
    #[test]
    fn buffers_small_and_large_are_zeroed_aligned_and_hold_what_is_written() {
        for round in 0..3u8 {
            for bytes in [24, 4096, HUGE_PAGE - 8, HUGE_PAGE, 3 * HUGE_PAGE + 40] {
                let memory = HostMemory::new(bytes).expect("allocated");
                let ptr = memory.as_ptr();
                assert_eq!(ptr as usize % 8, 0, "{bytes}");
                if bytes >= HUGE_PAGE {
                    assert_eq!(ptr as usize % HUGE_PAGE, 0, "{bytes}");
                    #[cfg(target_os = "linux")]
                    assert!(matches!(memory.words, Storage::Mapped(_)), "{bytes}");
                } else {
                    assert!(matches!(memory.words, Storage::Heap(_)), "{bytes}");
                }
                // SAFETY: the buffer holds at least `bytes` bytes, and nothing else uses it.
                let data = unsafe { std::slice::from_raw_parts_mut(ptr, bytes) };
                assert!(data.iter().all(|&b| b == 0), "{bytes} zeroed");
                for (i, b) in data.iter_mut().enumerate() {
                    *b = (i as u8).wrapping_add(round);
                }
                assert!(data
                    .iter()
                    .enumerate()
                    .all(|(i, &b)| b == (i as u8).wrapping_add(round)));
            }
        }
    }
}

//! The process's heap: freed device buffers kept for the next ones ([`keep_freed_memory`]).

/// The most glibc lets an allocation take from the heap rather than its own mapping (its
/// `DEFAULT_MMAP_THRESHOLD_MAX` on 64-bit targets).
const HEAP_ALLOCATION_MAX: i32 = 32 << 20;

/// How much more the heap grows each time it must, and how much free space at its top it
/// keeps rather than returning to the kernel.
const HEAP_SLACK: i32 = 1 << 30;

/// Keep freed memory in the process instead of returning it to the kernel. PoCL's buffers,
/// the host backend's small ones and the harness's own arrays (what it uploads, downloads
/// and checks) come from the C library's `malloc`, and a calibration or a series allocates,
/// fills and frees working sets from kilobytes to hundreds of megabytes over and over. By
/// default glibc maps each large one afresh and unmaps it when freed, so every sweep paid the
/// kernel for zeroing and faulting its pages in again: a third of a quick calibration's wall
/// time on a 2-core VM (docs/decisions.md, "Returning freed memory to the kernel"). Nothing
/// timed changes: the sweeps warm their buffers before measuring, and the host backend's
/// buffers from 2 MiB up keep mappings of their own for huge pages (backend/host_mapping.rs).
/// Allocations up to 32 MiB (`HEAP_ALLOCATION_MAX`) come from the heap, which grows by
/// 1 GiB (`HEAP_SLACK`) at a time (address space; pages are touched only when used) and
/// keeps as much free at its top. Call it first, before any thread starts. A no-op outside
/// Linux with glibc.
pub fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets the allocator's tuning parameters; called before any other
    // thread exists. A value it refuses leaves that parameter as it was.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, HEAP_ALLOCATION_MAX);
        libc::mallopt(libc::M_TRIM_THRESHOLD, HEAP_SLACK);
        libc::mallopt(libc::M_TOP_PAD, HEAP_SLACK);
    }
}

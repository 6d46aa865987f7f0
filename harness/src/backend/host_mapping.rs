//! The host backend's large buffers: anonymous mappings of their own, and the large ones kept
//! for later buffers once freed ([`Mapping`]).
//!
//! A calibration allocates, fills and frees working sets of up to a GiB a dozen times over,
//! and every fresh mapping is faulted in page by page before it is used (the host backend
//! backs a buffer when it is allocated, untimed). On a VM whose guest hands freed pages back
//! to its hypervisor that costs seconds a GiB (docs/decisions.md, "Keeping the host
//! backend's large mappings"). A freed mapping of [`KEPT_FROM`] or more is therefore kept,
//! up to [`kept_limit`] in all, and a later buffer that fits in one takes it, zeroed again,
//! its pages and their huge-page backing intact; where none fits, the kept ones that are too
//! small are unmapped first, so that the process holds no more than it needs.

use std::sync::Mutex;

/// Mappings from this size up are kept when freed.
pub const KEPT_FROM: usize = 64 << 20;

/// The most bytes of freed mappings kept at once: 4 GiB, or a quarter of the memory the
/// system has available when the first one is kept, whichever is less.
fn kept_limit() -> usize {
    static LIMIT: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *LIMIT.get_or_init(|| {
        let available = super::memory::available_memory_bytes().unwrap_or(0);
        (4usize << 30).min(usize::try_from(available / 4).unwrap_or(usize::MAX))
    })
}

/// The freed mappings kept for later buffers.
static KEPT: Mutex<Vec<Mapping>> = Mutex::new(Vec::new());

/// Unmap every kept mapping.
pub fn release_kept() {
    let kept = std::mem::take(&mut *KEPT.lock().unwrap_or_else(|e| e.into_inner()));
    kept.into_iter().for_each(Mapping::unmap);
}

/// Anonymous memory mapped for one buffer and unmapped when it is dropped (or kept for a
/// later buffer, from [`KEPT_FROM`] up). A buffer of 2 MiB or more takes its own mapping
/// rather than the heap's, whose freed memory the process keeps (backend/heap.rs) and hands
/// out again already faulted in as 4 KiB pages, where the huge-page advice no longer
/// applies: its pages are fresh, so the advice holds.
pub struct Mapping {
    ptr: *mut u64,
    bytes: usize,
}

// SAFETY: the mapping is owned by one `HostMemory`, whose own `in_use` flag guards access,
// or by the kept list behind its mutex.
unsafe impl Send for Mapping {}

impl Mapping {
    /// At least `words` zeroed words: a kept mapping that holds them (the smallest that
    /// does, zeroed again over its first `words`), else a fresh one mapped lazily; `None`
    /// where the kernel refuses.
    pub fn new(words: usize) -> Option<Self> {
        let bytes = words.checked_mul(8)?;
        if bytes >= KEPT_FROM {
            if let Some(mut kept) = take_kept(bytes) {
                kept.words()[..words].fill(0);
                return Some(kept);
            }
        }
        // SAFETY: an anonymous private mapping at an address the kernel chooses; the result
        // is checked before use.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        (ptr != libc::MAP_FAILED).then(|| Mapping {
            ptr: ptr.cast(),
            bytes,
        })
    }

    /// The mapping's words.
    pub fn words(&mut self) -> &mut [u64] {
        // SAFETY: the mapping holds `bytes / 8` initialised words, borrowed mutably through
        // `self`.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.bytes / 8) }
    }

    /// The first word.
    pub fn base(&self) -> *mut u64 {
        self.ptr
    }

    /// Unmap it now, not keeping it.
    fn unmap(self) {
        std::mem::ManuallyDrop::new(self).unmap_in_place();
    }

    /// Return the range to the kernel; called once, by [`Self::unmap`] (which never drops the
    /// mapping afterwards) or by `drop`.
    fn unmap_in_place(&mut self) {
        // SAFETY: the range is exactly the mapping `new` made, and each path above unmaps it
        // once.
        unsafe {
            libc::munmap(self.ptr.cast(), self.bytes);
        }
    }
}

/// The smallest kept mapping of at least `bytes`, taken from the list; where none is that
/// large, the kept ones are unmapped (each smaller than a buffer now needed) and `None`.
fn take_kept(bytes: usize) -> Option<Mapping> {
    let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
    match best_fit(kept.iter().map(|m| m.bytes), bytes) {
        Some(i) => Some(kept.swap_remove(i)),
        None => {
            drop(kept);
            release_kept();
            None
        }
    }
}

/// Which of mappings of `sizes` bytes a buffer of `bytes` takes: the smallest that holds it
/// (the first of equals), or none.
fn best_fit(sizes: impl Iterator<Item = usize>, bytes: usize) -> Option<usize> {
    sizes
        .enumerate()
        .filter(|&(_, size)| size >= bytes)
        .min_by_key(|&(i, size)| (size, i))
        .map(|(i, _)| i)
}

impl Drop for Mapping {
    fn drop(&mut self) {
        if self.bytes >= KEPT_FROM {
            let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
            let held: usize = kept.iter().map(|m| m.bytes).sum();
            if held + self.bytes <= kept_limit() {
                kept.push(Mapping {
                    ptr: self.ptr,
                    bytes: self.bytes,
                });
                return;
            }
        }
        self.unmap_in_place();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_buffer_takes_the_smallest_kept_mapping_that_holds_it() {
        let sizes = [4usize, 1, 2, 2, 8];
        assert_eq!(best_fit(sizes.into_iter(), 2), Some(2));
        assert_eq!(best_fit(sizes.into_iter(), 3), Some(0));
        assert_eq!(best_fit(sizes.into_iter(), 8), Some(4));
        assert_eq!(best_fit(sizes.into_iter(), 9), None);
        assert_eq!(best_fit(std::iter::empty(), 1), None);
    }

    #[test]
    fn a_freed_large_mapping_serves_a_smaller_buffer_zeroed_and_a_larger_one_maps_afresh() {
        let words = KEPT_FROM / 8;
        let mut first = Mapping::new(words + 512).expect("mapped");
        let base = first.base();
        first.words().fill(7);
        drop(first);
        // Other tests share the list: take the one kept here by its address, if it is still
        // there (a parallel test may have taken it, zeroed, for its own buffer, and freed it
        // again, so that a larger mapping of theirs can be kept at the same address).
        let mut again = Mapping::new(words).expect("mapped");
        if again.base() == base {
            assert!(
                again.words()[..words].iter().all(|&w| w == 0),
                "zeroed again"
            );
            assert!(
                again.words().len() >= words + 512,
                "the whole kept mapping: {} words",
                again.words().len()
            );
        }
        assert!(again.words()[..words].iter().all(|&w| w == 0));
        drop(again);
        // Larger than anything kept: a fresh mapping, zeroed.
        let mut larger = Mapping::new(2 * words + 1024).expect("mapped");
        assert!(larger.words().iter().all(|&w| w == 0));
    }
}

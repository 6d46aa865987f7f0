//! The operating system's CPU affinity: which CPUs this process may run on, and pinning the
//! calling thread to one of them (Linux's `sched_getaffinity` / `sched_setaffinity`; other
//! systems: nothing is known and nothing is pinned). Used by `pinning` and `host_pool`.

/// The CPUs this process may run on, ascending; empty where the system does not say.
#[cfg(target_os = "linux")]
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: `set` is a plain bit mask that sched_getaffinity fills; its size is passed.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Vec::new();
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect()
    }
}

#[cfg(not(target_os = "linux"))]
pub fn allowed_cpus() -> Vec<usize> {
    Vec::new()
}

/// Pin the calling thread to `cpu`; a failure leaves it where the scheduler puts it.
#[cfg(target_os = "linux")]
pub fn pin_current_thread(cpu: usize) {
    // SAFETY: `set` is a plain bit mask built with the libc macros; its size is passed.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

#[cfg(not(target_os = "linux"))]
pub fn pin_current_thread(_cpu: usize) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_may_run_on_at_least_one_cpu() {
        let cpus = allowed_cpus();
        if cfg!(target_os = "linux") {
            assert!(!cpus.is_empty());
            assert!(cpus.windows(2).all(|w| w[0] < w[1]));
        }
    }
}

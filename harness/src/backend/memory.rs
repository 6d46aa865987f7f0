//! How much memory the process may still allocate: the system's available memory, less what the
//! process's own limits leave.

/// The memory this process may still allocate: the host's available memory (`MemAvailable`
/// of /proc/meminfo), less where a limit on the process's address space or data
/// (`ulimit -v`, `ulimit -d`) leaves less; `None` where the system says neither.
pub fn available_memory_bytes() -> Option<u64> {
    let meminfo = || -> Option<u64> {
        let text = std::fs::read_to_string("/proc/meminfo").ok()?;
        let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
        let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kib.saturating_mul(1024))
    };
    match (meminfo(), process_limit_left()) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// What the process's address-space and data limits leave of its memory, where one is set.
fn process_limit_left() -> Option<u64> {
    #[cfg(unix)]
    {
        let limit = |resource| {
            let mut r = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            // SAFETY: getrlimit writes the struct it is given.
            let ok = unsafe { libc::getrlimit(resource, &mut r) } == 0;
            // rlim_t is u64 on Linux but not on every Unix.
            #[allow(clippy::unnecessary_cast)]
            let current = r.rlim_cur as u64;
            (ok && r.rlim_cur != libc::RLIM_INFINITY).then_some(current)
        };
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        let used = |key: &str| -> u64 {
            status
                .lines()
                .find(|l| l.starts_with(key))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
                .map_or(0, |kib| kib.saturating_mul(1024))
        };
        let address = limit(libc::RLIMIT_AS).map(|l| l.saturating_sub(used("VmSize:")));
        let data = limit(libc::RLIMIT_DATA).map(|l| l.saturating_sub(used("VmData:")));
        match (address, data) {
            (Some(a), Some(d)) => Some(a.min(d)),
            (a, d) => a.or(d),
        }
    }
    #[cfg(not(unix))]
    {
        None
    }
}

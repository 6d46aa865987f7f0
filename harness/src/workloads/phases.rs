//! Per-phase timing, like a profiler's summary: each kernel, transfer or host step is a
//! phase; per phase the time, the count and the fraction of the total.

use serde::{Deserialize, Serialize};

use crate::units::Seconds;

/// The accumulated time of one phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseTiming {
    /// Phase name (a kernel name, `upload`, `download`, `host:…`).
    pub name: String,
    /// Total time, seconds.
    pub seconds: f64,
    /// How many times it ran.
    pub count: u64,
    /// Fraction of the run's total time.
    pub fraction: f64,
    /// Bytes the phase must move at least (each array element read and written once per
    /// launch), where the workload knows them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    /// Work items over all of the phase's launches (each launch's global size), where the
    /// phase is kernel launches: a device that pays per work item (PoCL's work-group loop)
    /// charges the phase that many times its cost per item.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub items: Option<u64>,
    /// Floating-point operations over all of the phase's launches, where the workload
    /// declares them (a spec's `flops`): what says whether a phase that moves its bytes well
    /// under its level's rate is compute-bound or waits on something else.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flops: Option<u64>,
    /// The most threads any of its launches ran on, where the device tells
    /// ([`crate::backend::Device::last_launch_threads`]): 1 for a host twin that is one loop
    /// on the launching thread, which meets the memory at one thread's rates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<usize>,
}

impl PhaseTiming {
    /// Achieved bandwidth of the phase, GB/s, where its bytes are known.
    pub fn gbps(&self) -> Option<f64> {
        self.bytes
            .filter(|_| self.seconds > 0.0)
            .map(|b| b as f64 / self.seconds * 1e-9)
    }
}

/// Accumulates phase times in first-seen order.
#[derive(Debug, Default, Clone)]
pub struct PhaseRecorder {
    /// Each phase so far, in first-seen order (fractions are set by [`PhaseRecorder::finish`]).
    phases: Vec<PhaseTiming>,
}

impl PhaseRecorder {
    /// An empty recorder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Add one occurrence of `phase` taking `time`.
    pub fn add(&mut self, phase: &str, time: Seconds) {
        self.add_moving(phase, time, None);
    }

    /// Add one occurrence of `phase` taking `time` and moving `bytes` (if known).
    pub fn add_moving(&mut self, phase: &str, time: Seconds, bytes: Option<u64>) {
        self.add_launch(phase, time, bytes, None, None, None);
    }

    /// Add one occurrence of `phase` taking `time`, moving `bytes`, running `items` work
    /// items and `flops` floating-point operations, on `threads` threads (each where known; a
    /// phase knows its total bytes, items and flops only if every occurrence did, and its
    /// threads are the most any occurrence said).
    pub fn add_launch(
        &mut self,
        phase: &str,
        time: Seconds,
        bytes: Option<u64>,
        items: Option<u64>,
        flops: Option<u64>,
        threads: Option<usize>,
    ) {
        match self.phases.iter_mut().find(|p| p.name == phase) {
            Some(entry) => {
                entry.seconds += time.0;
                entry.count += 1;
                entry.bytes = entry.bytes.zip(bytes).map(|(a, b)| a + b);
                entry.items = entry.items.zip(items).map(|(a, b)| a + b);
                entry.flops = entry.flops.zip(flops).map(|(a, b)| a.saturating_add(b));
                entry.threads = entry.threads.max(threads);
            }
            None => self.phases.push(PhaseTiming {
                name: phase.to_string(),
                seconds: time.0,
                count: 1,
                fraction: 0.0,
                bytes,
                items,
                flops,
                threads,
            }),
        }
    }

    /// Time a host step and add it as `phase`.
    pub fn time_host<T>(&mut self, phase: &str, step: impl FnOnce() -> T) -> T {
        let start = std::time::Instant::now();
        let out = step();
        self.add(phase, Seconds(start.elapsed().as_secs_f64()));
        out
    }

    /// The phases with their fractions, and the total in seconds.
    pub fn finish(&self) -> (Vec<PhaseTiming>, f64) {
        let total: f64 = self.phases.iter().map(|p| p.seconds).sum();
        let phases = self
            .phases
            .iter()
            .map(|p| PhaseTiming {
                fraction: if total > 0.0 { p.seconds / total } else { 0.0 },
                ..p.clone()
            })
            .collect();
        (phases, total)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accumulates_and_normalises() {
        let mut r = PhaseRecorder::new();
        r.add("a", Seconds(1.0));
        r.add("b", Seconds(3.0));
        r.add("a", Seconds(1.0));
        let (phases, total) = r.finish();
        assert_eq!(total, 5.0);
        assert_eq!(phases[0].count, 2);
        assert!((phases[0].fraction - 0.4).abs() < 1e-12);
        assert!((phases[1].fraction - 0.6).abs() < 1e-12);
    }

    #[test]
    fn work_items_add_up_only_where_every_launch_knew_them() {
        let mut r = PhaseRecorder::new();
        r.add_launch("k", Seconds(1.0), Some(8), Some(100), Some(6), Some(1));
        r.add_launch("k", Seconds(1.0), Some(8), Some(300), Some(4), Some(2));
        r.add_launch("m", Seconds(1.0), None, Some(5), Some(1), None);
        r.add_launch("m", Seconds(1.0), None, None, None, None);
        let (phases, _) = r.finish();
        assert_eq!((phases[0].items, phases[0].bytes), (Some(400), Some(16)));
        assert_eq!(phases[0].flops, Some(10));
        assert_eq!((phases[1].items, phases[1].flops), (None, None));
        // The most threads any launch ran on; unknown where no launch said.
        assert_eq!((phases[0].threads, phases[1].threads), (Some(2), None));
    }
}

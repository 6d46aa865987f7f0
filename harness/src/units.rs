//! Units and the parameter vocabulary: the lowest layer, imported by every stage.
//!
//! Inside the library a time is a [`Seconds`]; nanoseconds appear only in files (keys ending
//! in `_ns`, the calibration's `parameters` section) and on screen. The max-plus model's
//! parameters have one name list, [`Parameter`], that the calibration file, the comparison of
//! two calibrations, the model's parameter values and every table take their keys, symbols
//! and units from (see `docs/models.md` §1 for the model they belong to).

use std::fmt;

use serde::{Deserialize, Serialize};

/// A duration in seconds.
///
/// ```
/// use harness::units::Seconds;
/// assert_eq!(Seconds::from_ns(250.0), Seconds(250.0 * 1e-9));
/// assert!((Seconds(2e-9).as_ns() - 2.0).abs() < 1e-12);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Serialize, Deserialize, Default)]
#[serde(transparent)]
pub struct Seconds(pub f64);

impl Seconds {
    /// A duration given in nanoseconds.
    pub fn from_ns(ns: f64) -> Self {
        Seconds(ns * 1e-9)
    }

    /// The duration in nanoseconds.
    pub fn as_ns(self) -> f64 {
        self.0 * 1e9
    }
}

/// The unit a parameter is measured in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Unit {
    /// A time: seconds inside the library, nanoseconds in files and on screen.
    Time,
    /// A count of executors.
    Executors,
}

impl Unit {
    /// The unit as files and tables write it (`ns`, `executors`).
    pub fn file_unit(self) -> &'static str {
        match self {
            Unit::Time => "ns",
            Unit::Executors => "executors",
        }
    }

    /// A value in the file's unit (ns, or a count) in the library's (seconds, or a count).
    pub fn from_file(self, value: f64) -> f64 {
        match self {
            Unit::Time => Seconds::from_ns(value).0,
            Unit::Executors => value,
        }
    }
}

/// A parameter of the max-plus kernel model (Antonyuk & Mikheev, "Max-plus algebra in GPU
/// kernel execution time estimation"; `docs/models.md` §1), with every name it goes by.
///
/// ```
/// use harness::units::Parameter;
/// let p = Parameter::ReadGap;
/// assert_eq!((p.key(), p.symbol(), p.name()), ("dt", "Δt", "read_gap"));
/// assert_eq!(Parameter::from_key("tau"), Some(Parameter::OpTime));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Parameter {
    /// t: the time of one global-memory read (pointer-chase latency at the memory level).
    ReadLatency,
    /// T: the time of one global-memory write.
    WriteLatency,
    /// τ: the time of one arithmetic operation (dependent fp32 FMA).
    OpTime,
    /// Δt: the interval between successive reads of different executors.
    ReadGap,
    /// ΔT: the interval between successive writes of different executors.
    WriteGap,
    /// t_cache: the repeat (cached) read time of the caching model.
    CachedReadLatency,
    /// n: the number of simultaneous executors.
    Executors,
}

impl Parameter {
    /// Every parameter a kernel graph may use without declaring it, in the model's order.
    pub const ALL: [Parameter; 7] = [
        Parameter::ReadLatency,
        Parameter::WriteLatency,
        Parameter::OpTime,
        Parameter::ReadGap,
        Parameter::WriteGap,
        Parameter::CachedReadLatency,
        Parameter::Executors,
    ];

    /// The six a calibration measures directly, in the file's order.
    pub const MEASURED: [Parameter; 6] = [
        Parameter::ReadLatency,
        Parameter::WriteLatency,
        Parameter::ReadGap,
        Parameter::WriteGap,
        Parameter::OpTime,
        Parameter::Executors,
    ];

    /// The paper's short key, used in files and on the command line (`t`, `T`, `dt`, …).
    pub fn key(self) -> &'static str {
        match self {
            Parameter::ReadLatency => "t",
            Parameter::WriteLatency => "T",
            Parameter::OpTime => "tau",
            Parameter::ReadGap => "dt",
            Parameter::WriteGap => "dT",
            Parameter::CachedReadLatency => "t_cache",
            Parameter::Executors => "n",
        }
    }

    /// The symbol as the paper prints it (`Δt`, `τ`, …).
    pub fn symbol(self) -> &'static str {
        match self {
            Parameter::OpTime => "τ",
            Parameter::ReadGap => "Δt",
            Parameter::WriteGap => "ΔT",
            other => other.key(),
        }
    }

    /// A name a newcomer understands without the paper (`read_gap`).
    pub fn name(self) -> &'static str {
        match self {
            Parameter::ReadLatency => "read_latency",
            Parameter::WriteLatency => "write_latency",
            Parameter::OpTime => "op_time",
            Parameter::ReadGap => "read_gap",
            Parameter::WriteGap => "write_gap",
            Parameter::CachedReadLatency => "cached_read_latency",
            Parameter::Executors => "executors",
        }
    }

    /// One line saying what it is.
    pub fn description(self) -> &'static str {
        match self {
            Parameter::ReadLatency => "global read time t",
            Parameter::WriteLatency => "global write time T",
            Parameter::OpTime => "operation time τ",
            Parameter::ReadGap => "interval Δt between successive reads of different executors",
            Parameter::WriteGap => "interval ΔT between successive writes of different executors",
            Parameter::CachedReadLatency => "repeat (cached) read time, caching model",
            Parameter::Executors => "number of simultaneous executors (a count, not seconds)",
        }
    }

    /// Its unit.
    pub fn unit(self) -> Unit {
        match self {
            Parameter::Executors => Unit::Executors,
            _ => Unit::Time,
        }
    }

    /// The parameter with this key, if any.
    pub fn from_key(key: &str) -> Option<Parameter> {
        Parameter::ALL.into_iter().find(|p| p.key() == key)
    }

    /// The symbol of `key` if it names a parameter, else `key` itself (user names).
    ///
    /// ```
    /// use harness::units::Parameter;
    /// assert_eq!(Parameter::symbol_of("dT"), "ΔT");
    /// assert_eq!(Parameter::symbol_of("t1"), "t1");
    /// ```
    pub fn symbol_of(key: &str) -> &str {
        match Parameter::from_key(key) {
            Some(p) => p.symbol(),
            None => key,
        }
    }
}

impl fmt::Display for Parameter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.symbol())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_names_and_symbols_are_distinct_and_round_trip() {
        for p in Parameter::ALL {
            assert_eq!(Parameter::from_key(p.key()), Some(p));
            let same_key = Parameter::ALL.iter().filter(|q| q.key() == p.key());
            assert_eq!(same_key.count(), 1, "{p:?}");
            let same_name = Parameter::ALL.iter().filter(|q| q.name() == p.name());
            assert_eq!(same_name.count(), 1, "{p:?}");
        }
        assert_eq!(Parameter::from_key("zzz"), None);
        assert!(Parameter::MEASURED
            .iter()
            .all(|p| Parameter::ALL.contains(p)));
    }

    #[test]
    fn units_scale_to_the_file() {
        assert_eq!(Parameter::ReadGap.unit().file_unit(), "ns");
        assert_eq!(Parameter::Executors.unit().file_unit(), "executors");
        assert_eq!(Unit::Time.from_file(3.0), 3.0 * 1e-9);
        assert_eq!(Unit::Executors.from_file(3.0), 3.0);
    }
}

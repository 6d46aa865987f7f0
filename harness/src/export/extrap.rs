//! Export of a run series' measurements to Extra-P's text input format, so that the fractal
//! fit (`crate::fit::fractal`) can be put beside Extra-P's performance-model normal form (PMNF,
//! Calotoiu et al.) fitted to the very same measurements.
//!
//! The format follows Extra-P's reader (`extrap/fileio/file_reader/text_file_reader.py`,
//! `TextFileReader.read_experiment`) and `docs/file-formats.md`, "Text file format":
//!
//! ```text
//! PARAMETER N
//!
//! POINTS 64 128 256
//!
//! REGION sweep
//! METRIC time
//! DATA 0.1 0.11 0.1
//! DATA 0.4 0.41 0.39
//! DATA 1.6 1.7 1.6
//!
//! REGION total
//! METRIC time
//! DATA 0.2 0.21 0.2
//! …
//! ```
//!
//! * One parameter, `N`; the `POINTS` line lists the sizes ascending.
//! * One region per phase, in first-seen order, then the region `total` for the whole run.
//!   A region name is the phase name with every whitespace character (the reader collapses
//!   whitespace and splits on it) and every `->` (Extra-P's call-path separator) replaced by
//!   `_`.
//! * Each region is followed by `METRIC time` (the reader resets its point counter on both
//!   keywords, so either order works; this is the order of Extra-P's own examples) and one
//!   `DATA` line per point, in `POINTS` order, holding every repetition's time in seconds,
//!   separated by single spaces.
//! * Numbers are rounded to 12 significant digits (the timers' resolution, without the noise
//!   of the ns → s conversion) and written with Rust's `{}` for `f64`: the shortest text
//!   that round-trips, in fixed notation (no exponent), as the format's `NUMBER` grammar asks.
//!
//! The reader's `validate_experiment` requires exactly one measurement per point for every
//! region, so a phase missing at some size, or two regions with the same name, is refused
//! here rather than written as a file Extra-P rejects.

use thiserror::Error;

/// One phase's (or the whole run's) repeats at one size, seconds.
#[derive(Debug, Clone, PartialEq)]
pub struct PhaseSamples {
    /// The phase's name.
    pub name: String,
    /// Every repeat's time, seconds.
    pub samples: Vec<f64>,
}

/// Every phase's repeats at one size.
#[derive(Debug, Clone, PartialEq)]
pub struct PointSamples {
    /// The size N.
    pub size: usize,
    /// The phases, in the run's order.
    pub phases: Vec<PhaseSamples>,
    /// The whole run's repeats.
    pub total: PhaseSamples,
}

/// A series' measurements: what Extra-P is given.
#[derive(Debug, Clone, PartialEq)]
pub struct Measurements {
    /// One entry per size.
    pub points: Vec<PointSamples>,
}

/// Name of the region that holds the whole run's time in the Extra-P file.
const TOTAL: &str = "total";

/// Why a series cannot be written in Extra-P's text input format (for a PMNF fit after
/// Calotoiu et al.).
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ExtrapError {
    /// The series has no points; Extra-P's PMNF modeller needs at least one size.
    #[error("the series has no points; Extra-P needs at least one size")]
    EmptySeries,
    /// Two points share a size; Extra-P's `POINTS` must be distinct coordinates.
    #[error("size {size} appears more than once; Extra-P needs distinct POINTS")]
    DuplicateSize {
        /// The repeated size.
        size: usize,
    },
    /// A phase seen at some size is absent at another; Extra-P needs every region at every
    /// point to fit its PMNF model.
    #[error("phase `{phase}` is missing at size {size}; Extra-P needs every region at every size")]
    MissingPhase {
        /// The phase's name, as recorded.
        phase: String,
        /// The size at which it is missing.
        size: usize,
    },
    /// A phase (or the total, named `total`) has no samples at some size, so its Extra-P
    /// `DATA` line would be empty.
    #[error("phase `{phase}` has no samples at size {size}")]
    NoSamples {
        /// The phase's name, as recorded, or `total`.
        phase: String,
        /// The size.
        size: usize,
    },
    /// A sample is NaN, infinite, zero or negative; Extra-P's PMNF fit needs positive times.
    #[error("phase `{phase}` at size {size} has a non-finite or non-positive sample ({value})")]
    BadSample {
        /// The phase's name, as recorded, or `total`.
        phase: String,
        /// The size.
        size: usize,
        /// The offending sample, seconds.
        value: f64,
    },
    /// A phase has an empty name, which Extra-P cannot read back as a region.
    #[error("a phase at size {size} has an empty name; Extra-P needs a region name")]
    EmptyPhaseName {
        /// The size at which the nameless phase occurs.
        size: usize,
    },
    /// Two phases (or a phase and the total) map to the same Extra-P region name after
    /// sanitising; Extra-P would count their measurements twice and reject the file.
    #[error("phases `{first}` and `{second}` both become Extra-P region `{region}`")]
    DuplicateRegion {
        /// The sanitised region name.
        region: String,
        /// The first phase with that region name.
        first: String,
        /// The second phase with that region name (`total` for the whole run).
        second: String,
    },
}

/// The Extra-P region name of a phase: whitespace and `->` replaced by `_`.
fn region_name(phase: &str) -> String {
    phase
        .replace("->", "_")
        .chars()
        .map(|c| if c.is_whitespace() { '_' } else { c })
        .collect()
}

/// Significant digits kept in the file: the samples are device-timer readings converted
/// from nanoseconds, so 12 digits keep every picosecond and drop the conversion's noise
/// (0.0008691990000000001 is written 0.000869199).
const SIGNIFICANT_DIGITS: usize = 12;

/// `value` rounded to [`SIGNIFICANT_DIGITS`].
fn significant(value: f64) -> f64 {
    format!("{value:.prec$e}", prec = SIGNIFICANT_DIGITS - 1)
        .parse()
        .unwrap_or(value)
}

/// One `DATA` line (with its newline) after checking the samples.
fn data_line(phase: &str, size: usize, samples: &[f64]) -> Result<String, ExtrapError> {
    if samples.is_empty() {
        return Err(ExtrapError::NoSamples {
            phase: phase.to_string(),
            size,
        });
    }
    let mut line = String::from("DATA");
    for &value in samples {
        if !value.is_finite() || value <= 0.0 {
            return Err(ExtrapError::BadSample {
                phase: phase.to_string(),
                size,
                value,
            });
        }
        line.push_str(&format!(" {}", significant(value)));
    }
    line.push('\n');
    Ok(line)
}

/// Write a series' measurements in Extra-P's text input format, so that Extra-P can fit its PMNF models
/// (Calotoiu et al.) to the same measurements as our fractal fit.
///
/// One parameter `N`; the sizes ascending on the `POINTS` line; then, for every phase in
/// first-seen order and finally for the region `total`, `REGION <name>`, `METRIC time` and
/// one `DATA` line per size holding every repeat's time in seconds. See the module
/// documentation for the exact layout.
///
/// # Errors
///
/// [`ExtrapError`] when the series is empty, repeats a size, lacks a phase at some size,
/// has a point without samples, a non-finite or non-positive sample, a nameless phase, or
/// two phases that map to the same region name.
pub fn to_extrap(series: &Measurements) -> Result<String, ExtrapError> {
    if series.points.is_empty() {
        return Err(ExtrapError::EmptySeries);
    }
    let mut points: Vec<&PointSamples> = series.points.iter().collect();
    points.sort_by_key(|p| p.size);
    if let Some(w) = points.windows(2).find(|w| w[0].size == w[1].size) {
        return Err(ExtrapError::DuplicateSize { size: w[0].size });
    }

    // Phases in first-seen order over the ascending sizes, with their region names.
    let mut phases: Vec<(&str, String)> = Vec::new();
    for point in &points {
        for phase in &point.phases {
            if phase.name.is_empty() {
                return Err(ExtrapError::EmptyPhaseName { size: point.size });
            }
            if phases.iter().any(|(name, _)| *name == phase.name) {
                continue;
            }
            let region = region_name(&phase.name);
            if let Some((first, _)) = phases.iter().find(|(_, r)| *r == region) {
                return Err(ExtrapError::DuplicateRegion {
                    region,
                    first: (*first).to_string(),
                    second: phase.name.clone(),
                });
            }
            phases.push((&phase.name, region));
        }
    }
    if let Some((first, _)) = phases.iter().find(|(_, r)| r == TOTAL) {
        return Err(ExtrapError::DuplicateRegion {
            region: TOTAL.to_string(),
            first: (*first).to_string(),
            second: TOTAL.to_string(),
        });
    }

    let sizes: Vec<String> = points.iter().map(|p| p.size.to_string()).collect();
    let mut out = format!("PARAMETER N\n\nPOINTS {}\n", sizes.join(" "));
    for (name, region) in &phases {
        out.push_str(&format!("\nREGION {region}\nMETRIC time\n"));
        for point in &points {
            let phase = point
                .phases
                .iter()
                .find(|p| p.name == *name)
                .ok_or_else(|| ExtrapError::MissingPhase {
                    phase: (*name).to_string(),
                    size: point.size,
                })?;
            out.push_str(&data_line(name, point.size, &phase.samples)?);
        }
    }
    out.push_str(&format!("\nREGION {TOTAL}\nMETRIC time\n"));
    for point in &points {
        out.push_str(&data_line(TOTAL, point.size, &point.total.samples)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversion_noise_is_not_written() {
        let s = series(vec![point(
            8,
            vec![phase("k", &[869.199 * 1e-9, 7.311 * 1e-6])],
            &[0.0008691990000000001],
        )]);
        let text = to_extrap(&s).expect("exports");
        assert!(text.contains("DATA 0.000000869199 0.000007311\n"), "{text}");
        assert!(text.contains("DATA 0.000869199\n"), "{text}");
    }

    fn phase(name: &str, samples: &[f64]) -> PhaseSamples {
        PhaseSamples {
            name: name.into(),
            samples: samples.to_vec(),
        }
    }

    fn point(size: usize, phases: Vec<PhaseSamples>, total: &[f64]) -> PointSamples {
        PointSamples {
            size,
            phases,
            total: phase("total", total),
        }
    }

    fn series(points: Vec<PointSamples>) -> Measurements {
        Measurements { points }
    }

    /// 3 sizes, 2 phases, 3 repeats.
    fn sample() -> Measurements {
        series(vec![
            point(
                64,
                vec![
                    phase("sweep", &[0.1, 0.11, 0.1]),
                    phase("upload", &[1.5e-7, 2e-7, 1.75e-7]),
                ],
                &[0.2, 0.21, 0.2],
            ),
            point(
                128,
                vec![
                    phase("sweep", &[0.4, 0.41, 0.39]),
                    phase("upload", &[3e-7, 3.1e-7, 2.9e-7]),
                ],
                &[0.5, 0.51, 0.49],
            ),
            point(
                256,
                vec![
                    phase("sweep", &[1.6, 1.7, 1.6]),
                    phase("upload", &[6e-7, 6.2e-7, 5.8e-7]),
                ],
                &[2.0, 2.125, 1.9],
            ),
        ])
    }

    const EXPECTED: &str = "\
PARAMETER N

POINTS 64 128 256

REGION sweep
METRIC time
DATA 0.1 0.11 0.1
DATA 0.4 0.41 0.39
DATA 1.6 1.7 1.6

REGION upload
METRIC time
DATA 0.00000015 0.0000002 0.000000175
DATA 0.0000003 0.00000031 0.00000029
DATA 0.0000006 0.00000062 0.00000058

REGION total
METRIC time
DATA 0.2 0.21 0.2
DATA 0.5 0.51 0.49
DATA 2 2.125 1.9
";

    #[test]
    fn exact_text_for_three_sizes_two_phases() {
        assert_eq!(to_extrap(&sample()).unwrap(), EXPECTED);
    }

    #[test]
    fn points_are_sorted_ascending() {
        let mut s = sample();
        s.points.reverse();
        assert_eq!(to_extrap(&s).unwrap(), EXPECTED);
    }

    #[test]
    fn numbers_round_trip() {
        let text = to_extrap(&sample()).unwrap();
        let parsed: Vec<f64> = text
            .lines()
            .filter_map(|l| l.strip_prefix("DATA "))
            .flat_map(|l| l.split(' ').map(|v| v.parse::<f64>().unwrap()))
            .collect();
        let s = sample();
        let mut want: Vec<f64> = Vec::new();
        for name in ["sweep", "upload"] {
            for p in &s.points {
                let ph = p.phases.iter().find(|ph| ph.name == name).unwrap();
                want.extend(&ph.samples);
            }
        }
        for p in &s.points {
            want.extend(&p.total.samples);
        }
        assert_eq!(parsed, want);
        // Fixed notation only: the format's NUMBER grammar has no exponent.
        assert!(text
            .lines()
            .filter(|l| l.starts_with("DATA"))
            .all(|l| !l.contains(['e', 'E'])));
    }

    #[test]
    fn whitespace_in_phase_name_is_sanitised() {
        let s = series(vec![point(
            8,
            vec![phase("copy  in\tkernel", &[1.0]), phase("h->d", &[0.5])],
            &[1.5],
        )]);
        assert_eq!(
            to_extrap(&s).unwrap(),
            "PARAMETER N\n\nPOINTS 8\n\n\
             REGION copy__in_kernel\nMETRIC time\nDATA 1\n\n\
             REGION h_d\nMETRIC time\nDATA 0.5\n\n\
             REGION total\nMETRIC time\nDATA 1.5\n"
        );
    }

    #[test]
    fn empty_series_is_refused() {
        let err = to_extrap(&series(Vec::new())).unwrap_err();
        assert_eq!(err, ExtrapError::EmptySeries);
        assert_eq!(
            err.to_string(),
            "the series has no points; Extra-P needs at least one size"
        );
    }

    #[test]
    fn duplicate_size_is_refused() {
        let mut s = sample();
        s.points[2].size = 128;
        assert_eq!(
            to_extrap(&s).unwrap_err(),
            ExtrapError::DuplicateSize { size: 128 }
        );
    }

    #[test]
    fn missing_phase_is_named_with_its_size() {
        let mut s = sample();
        s.points[1].phases.remove(1);
        let err = to_extrap(&s).unwrap_err();
        assert_eq!(
            err,
            ExtrapError::MissingPhase {
                phase: "upload".into(),
                size: 128
            }
        );
        assert_eq!(
            err.to_string(),
            "phase `upload` is missing at size 128; Extra-P needs every region at every size"
        );
    }

    #[test]
    fn phase_first_seen_at_a_later_size_is_missing_at_the_first() {
        let mut s = sample();
        s.points[0].phases.remove(0);
        // `upload` is now seen first, and `sweep` is missing at 64.
        assert_eq!(
            to_extrap(&s).unwrap_err(),
            ExtrapError::MissingPhase {
                phase: "sweep".into(),
                size: 64
            }
        );
    }

    #[test]
    fn point_without_samples_is_refused() {
        let mut s = sample();
        s.points[2].phases[0].samples.clear();
        let err = to_extrap(&s).unwrap_err();
        assert_eq!(
            err,
            ExtrapError::NoSamples {
                phase: "sweep".into(),
                size: 256
            }
        );
        assert_eq!(err.to_string(), "phase `sweep` has no samples at size 256");

        let mut s = sample();
        s.points[0].total.samples.clear();
        assert_eq!(
            to_extrap(&s).unwrap_err(),
            ExtrapError::NoSamples {
                phase: "total".into(),
                size: 64
            }
        );
    }

    #[test]
    fn bad_samples_are_named() {
        for value in [f64::NAN, f64::INFINITY, 0.0, -1.0] {
            let mut s = sample();
            s.points[1].phases[1].samples[2] = value;
            match to_extrap(&s).unwrap_err() {
                ExtrapError::BadSample {
                    phase,
                    size,
                    value: got,
                } => {
                    assert_eq!((phase.as_str(), size), ("upload", 128));
                    assert!(got.is_nan() && value.is_nan() || got == value);
                }
                other => panic!("unexpected error for {value}: {other}"),
            }
        }
        let mut s = sample();
        s.points[0].total.samples[0] = -0.5;
        let err = to_extrap(&s).unwrap_err();
        assert_eq!(
            err.to_string(),
            "phase `total` at size 64 has a non-finite or non-positive sample (-0.5)"
        );
    }

    #[test]
    fn colliding_region_names_are_refused() {
        let s = series(vec![point(
            8,
            vec![phase("a b", &[1.0]), phase("a_b", &[1.0])],
            &[2.0],
        )]);
        assert_eq!(
            to_extrap(&s).unwrap_err(),
            ExtrapError::DuplicateRegion {
                region: "a_b".into(),
                first: "a b".into(),
                second: "a_b".into()
            }
        );
        let s = series(vec![point(8, vec![phase("total", &[1.0])], &[2.0])]);
        assert_eq!(
            to_extrap(&s).unwrap_err().to_string(),
            "phases `total` and `total` both become Extra-P region `total`"
        );
    }

    #[test]
    fn empty_phase_name_is_refused() {
        let s = series(vec![point(8, vec![phase("", &[1.0])], &[2.0])]);
        assert_eq!(
            to_extrap(&s).unwrap_err(),
            ExtrapError::EmptyPhaseName { size: 8 }
        );
    }
}

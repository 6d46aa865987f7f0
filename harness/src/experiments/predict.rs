//! A prediction from a stored series (docs/models.md §2): the paper's fractal forecast of every
//! phase and, where the device has a calibration, our `windowed` and `calibrated` variants
//! beside it (the sizes the calibration accepts, launch overhead subtracted,
//! [`crate::fit::window`]; each size moved to the target's memory level, §2.4).

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::series::Series;
use super::validate::{calibrated_forecast, windowed_forecast, LargeWindow};
use crate::backend::DeviceInfo;
use crate::calibration::model_parameters::window_facts;
use crate::calibration::{default_path, Calibration};
use crate::fit::forecast::{forecast, Forecast};
use crate::workloads::registry::lookup;
use crate::workloads::WorkloadError;

/// The windowed variant's window and forecast (none when too few sizes pass the rules).
#[derive(Debug, Clone, Serialize)]
pub struct WindowedPrediction {
    /// The window the calibration chose for the target, with every rejection's reasons.
    pub window: LargeWindow,
    /// The forecast from that window, if it could be made.
    pub forecast: Option<Forecast>,
}

/// Both variants' forecasts of one target size.
#[derive(Debug, Clone, Serialize)]
pub struct Prediction {
    /// The paper's recipe over every size of the series.
    pub paper: Forecast,
    /// Ours, where a calibration was given.
    pub windowed: Option<WindowedPrediction>,
    /// Ours with each size moved to the target's memory level, where a calibration was
    /// given: its window (any level's saturated sizes) and forecast, each phase's estimate
    /// with what bounds it.
    pub calibrated: Option<WindowedPrediction>,
}

/// What a prediction forecasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Quantity {
    /// The run's total: every phase, uploads and downloads included.
    #[default]
    Total,
    /// The kernel phases only: the device time without transfers and host steps (for a
    /// program launched once, the total is mostly its uploads' first-touch paging).
    Kernels,
}

impl std::str::FromStr for Quantity {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "total" => Ok(Quantity::Total),
            "kernels" => Ok(Quantity::Kernels),
            other => Err(format!("`{other}`: predict the `total` or the `kernels`")),
        }
    }
}

impl Quantity {
    /// The name of the forecast row that holds the quantity.
    pub fn row(self) -> &'static str {
        match self {
            Quantity::Total => "total",
            Quantity::Kernels => "kernels",
        }
    }
}

/// The row called `total` renamed to the quantity's name.
fn label(mut f: Forecast, quantity: Quantity) -> Forecast {
    for p in &mut f.phases {
        if p.name == "total" {
            p.name = quantity.row().to_string();
        }
    }
    f
}

/// Predict `quantity` at `target` from `series`; with `calibration`, the windowed variant
/// too (it needs each size's work, memory and launches: from the built-in workload of that
/// name, or from the spec the series stores).
pub fn predict(
    series: &Series,
    target: f64,
    calibration: Option<&Calibration>,
    quantity: Quantity,
) -> Result<Prediction, WorkloadError> {
    let kernels;
    let series = match quantity {
        Quantity::Total => series,
        Quantity::Kernels => {
            kernels = series.kernels_only();
            &kernels
        }
    };
    let paper =
        forecast(&series.medians(), target).map_err(|e| WorkloadError::Invalid(e.to_string()))?;
    let paper = label(paper, quantity);
    let Some(calibration) = calibration else {
        return Ok(Prediction {
            paper,
            windowed: None,
            calibrated: None,
        });
    };
    let facts = window_facts(calibration);
    let workload: Box<dyn crate::workloads::Workload> = match &series.spec {
        Some(stored) => {
            Box::new(stored.workload().map_err(|e| {
                WorkloadError::Invalid(format!("the spec stored in the series: {e}"))
            })?)
        }
        None => {
            let layout = series.layout.as_deref().map(str::parse).transpose()?;
            lookup(&series.workload, layout).map_err(|e| {
                WorkloadError::Invalid(format!(
                    "the windowed variant needs the workload `{}` to know its sizes' work and memory: {e}",
                    series.workload
                ))
            })?
        }
    };
    if target.fract() != 0.0 || target < 1.0 {
        return Err(WorkloadError::Invalid(format!(
            "--target must be a whole size for the windowed variant, got {target}"
        )));
    }
    let (window, forecast) = windowed_forecast(workload.as_ref(), series, &facts, target as usize);
    let (calibrated_window, calibrated) =
        calibrated_forecast(workload.as_ref(), series, &facts, target as usize, None);
    Ok(Prediction {
        paper,
        windowed: Some(WindowedPrediction {
            window,
            forecast: forecast.map(|f| label(f, quantity)),
        }),
        calibrated: Some(WindowedPrediction {
            window: calibrated_window,
            forecast: calibrated.map(|f| label(f, quantity)),
        }),
    })
}

/// Where a device's calibration is: `explicit` if given, else `<dir>/<device>.json` when that
/// file exists (`None` when it does not: the experiments then run the paper's variant only).
pub fn calibration_path(
    explicit: Option<&Path>,
    dir: &Path,
    device: &DeviceInfo,
) -> Option<PathBuf> {
    match explicit {
        Some(p) => Some(p.to_path_buf()),
        None => Some(default_path(dir, device)).filter(|p| p.exists()),
    }
}

//! The `windowed` variant: for one large size, the paper's fit over only the small sizes the
//! calibration's window rules accept, launch overhead subtracted, or a note saying why there
//! is none.

use super::sizes::{size_facts, smallest_good_size};
use super::LargeWindow;
use crate::experiments::series::Series;
use crate::fit::forecast::{forecast_windowed, Forecast};
use crate::fit::window::{choose_window, DeviceFacts};
use crate::workloads::Workload;

/// The windowed forecast for one large size, or a note saying why there is none.
pub fn windowed_forecast(
    workload: &dyn Workload,
    series: &Series,
    device: &DeviceFacts,
    large: usize,
) -> (LargeWindow, Option<Forecast>) {
    let facts = size_facts(workload, series);
    let choice = choose_window(&facts, workload.bytes_needed(large), device);
    let smallest = series.points.first().map_or(1, |p| p.size);
    let hint = || match smallest_good_size(workload, device, smallest, large) {
        // Three sizes between the level's edge and the target need room below the target.
        Some(s) if workload.bytes_needed(s).saturating_mul(2) > workload.bytes_needed(large) => {
            format!(
                "the target's level starts at N = {s}, within half of the target's bytes: no window of small sizes fits there (a target further past the edge would have one; the calibrated variant moves smaller sizes across it)"
            )
        }
        Some(s) => format!("run at least 3 small sizes from N = {s} (below {large})"),
        None => {
            format!("no size below {large} both saturates the device and lives in its memory level")
        }
    };
    let (forecast, note) = if choice.accepted.len() < 3 {
        (
            None,
            Some(format!(
                "only {} small size(s) pass the window rules, 3 are needed: {}",
                choice.accepted.len(),
                hint()
            )),
        )
    } else {
        match forecast_windowed(
            &series.medians(),
            large as f64,
            &choice.accepted,
            device.launch_seconds,
        ) {
            Ok(f) => (Some(f), (!choice.rejected.is_empty()).then(hint)),
            Err(e) => (None, Some(format!("the windowed fit failed: {e}"))),
        }
    };
    (
        LargeWindow {
            size: large,
            choice,
            note,
            level_moves: Vec::new(),
        },
        forecast,
    )
}

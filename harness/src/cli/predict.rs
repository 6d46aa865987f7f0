//! `harness predict`: a stored series' prediction at a larger size: paper, windowed and
//! calibrated.

use std::path::PathBuf;

use anyhow::Result;

use harness::calibration::Calibration;
use harness::experiments::predict::predict;
use harness::experiments::series::Series;
use harness::report::views;

pub(super) fn predict_command(
    path: &std::path::Path,
    target: f64,
    calibration: Option<PathBuf>,
    quantity: harness::experiments::predict::Quantity,
    json: bool,
) -> Result<()> {
    let series = Series::load(path)?;
    let calibration = calibration.map(|c| Calibration::load(&c)).transpose()?;
    if let Some(c) = &calibration {
        // Its launch cost, levels and n are another device's: say so, as validate-maxplus does.
        if c.device.name != series.device.name || c.device.backend != series.device.backend {
            eprintln!(
                "note: the calibration is of {} ({}), the series was measured on {} ({}): its launch cost, memory levels and n are that device's",
                c.device.name, c.device.backend, series.device.name, series.device.backend
            );
        }
    }
    let prediction = predict(&series, target, calibration.as_ref(), quantity)?;
    if !json {
        println!(
            "predicting the {} of {} at N = {target}",
            match quantity {
                harness::experiments::predict::Quantity::Total => "total (every phase)",
                harness::experiments::predict::Quantity::Kernels =>
                    "kernels (the kernel phases, without transfers)",
            },
            series.workload
        );
    }
    let Some(windowed) = prediction.windowed else {
        if json {
            println!("{}", serde_json::to_string_pretty(&prediction.paper)?);
        } else {
            print!("{}", views::forecast_table(&prediction.paper));
        }
        return Ok(());
    };
    if json {
        let out = serde_json::json!({
            "paper": prediction.paper,
            "windowed": windowed.forecast,
            "window": windowed.window,
            "calibrated": prediction.calibrated.as_ref().and_then(|c| c.forecast.as_ref()),
            "calibrated_window": prediction.calibrated.as_ref().map(|c| &c.window),
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    println!("paper variant (every size):");
    print!("{}", views::forecast_table(&prediction.paper));
    match &windowed.forecast {
        Some(w) => {
            println!(
                "\nwindowed variant (sizes {:?}):",
                windowed.window.choice.accepted
            );
            print!("{}", views::forecast_table(w));
        }
        None => println!("\nwindowed variant: none"),
    }
    print!("{}", views::window_report(&windowed.window));
    if let Some(c) = &prediction.calibrated {
        match &c.forecast {
            Some(f) => {
                println!(
                    "\ncalibrated variant (sizes {:?}, moved to the target's memory level):",
                    c.window.choice.accepted
                );
                print!("{}", views::forecast_table(f));
                print!("{}", views::calibrated_regimes(f));
            }
            None => println!("\ncalibrated variant: none"),
        }
        if let Some(note) = &c.window.note {
            println!("note: {note}");
        }
    }
    Ok(())
}

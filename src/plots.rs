//! `lockstep plot LOG` and the plots `fly` writes: the figure of
//! `lockstep_plot`, with the waypoints of the mission the log's sidecar
//! names, placed from the origin it records.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use lockstep_harness::inputs::mission::Mission;
use lockstep_harness::io::log_meta::sidecar_path;
use lockstep_plant::env::geodesy::{Geodetic, WorldOrigin};

/// The mission's waypoints (north, east) from the log's sidecar, if it
/// names a mission that still loads.
fn waypoints(log: &Path) -> Vec<(f64, f64)> {
    let Ok(text) = std::fs::read_to_string(sidecar_path(log)) else {
        return Vec::new();
    };
    let Ok(meta) = serde_json::from_str::<serde_json::Value>(&text) else {
        return Vec::new();
    };
    let o = &meta["origin"];
    let (Some(lat), Some(lon), Some(alt), Some(mission)) = (
        o["lat_deg"].as_f64(),
        o["lon_deg"].as_f64(),
        o["alt_m"].as_f64(),
        meta["mission"].as_str(),
    ) else {
        return Vec::new();
    };
    match Mission::load(mission) {
        Ok(m) => m.waypoints_ne(&WorldOrigin::new(Geodetic {
            lat_deg: lat,
            lon_deg: lon,
            alt_m: alt,
        })),
        Err(_) => Vec::new(),
    }
}

/// Draws `<stem>.png` and `<stem>.svg` of the log at `log`.
pub fn draw(log: &Path, stem: &Path) -> Result<Vec<PathBuf>, String> {
    lockstep_plot::plot_log(log, stem, &waypoints(log)).map_err(|e| e.to_string())
}

/// `lockstep plot LOG [--out STEM]`: the stem defaults to the log's path
/// without its extension.
pub fn command(log: &Path, out: Option<&Path>) -> ExitCode {
    let stem = out.map_or_else(|| log.with_extension(""), Path::to_path_buf);
    match draw(log, &stem) {
        Ok(files) => {
            for f in files {
                say!("plot          {}", f.display());
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            warn!("lockstep plot: {e}");
            crate::run::Exit::ConfigError.into()
        }
    }
}

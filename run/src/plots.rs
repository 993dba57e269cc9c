//! The plots of a flight log (`lockstep plot LOG`, and those `fly` writes):
//! the figure of `lockstep_plot`, with the waypoints of the mission the
//! log's sidecar names, placed from the origin it records.

use std::path::{Path, PathBuf};

use lockstep_harness::inputs::mission::Mission;
use lockstep_harness::io::log_meta::{Origin, sidecar_path};
use lockstep_plant::env::geodesy::{Geodetic, WorldOrigin};

/// What the plots need of a log's sidecar.
#[derive(serde::Deserialize)]
struct Placed {
    origin: Origin,
    mission: Option<String>,
}

/// The mission's waypoints (north, east) from the log's sidecar, if it
/// names a mission that still loads.
fn waypoints(log: &Path) -> Vec<(f64, f64)> {
    let Ok(text) = std::fs::read_to_string(sidecar_path(log)) else {
        return Vec::new();
    };
    let Ok(Placed {
        origin,
        mission: Some(mission),
    }) = serde_json::from_str::<Placed>(&text)
    else {
        return Vec::new();
    };
    match Mission::load(mission) {
        Ok(m) => m.waypoints_ne(&WorldOrigin::new(Geodetic {
            lat_deg: origin.lat_deg,
            lon_deg: origin.lon_deg,
            alt_m: origin.alt_m,
        })),
        Err(_) => Vec::new(),
    }
}

/// Draws `<stem>.png` and `<stem>.svg` of the log at `log`.
pub fn draw(log: &Path, stem: &Path) -> Result<Vec<PathBuf>, String> {
    lockstep_plot::plot_log(log, stem, &waypoints(log)).map_err(|e| e.to_string())
}

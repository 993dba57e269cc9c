//! The plots of a flight log (`lockstep plot LOG`, and those `fly` writes):
//! the figure of `lockstep_plot`, with the waypoints of the mission the
//! log's sidecar names, placed from the origin it records.

use std::path::{Path, PathBuf};

use lockstep_harness::inputs::mission::Mission;
use lockstep_harness::io::log_meta::LogMeta;
use lockstep_plant::env::geodesy::{Geodetic, WorldOrigin};

/// The plot's title: the scenario's file name, the airframe and the seed
/// (the log's own name when its sidecar is missing).
fn title(log: &Path, meta: &LogMeta) -> String {
    if meta.scenario.is_empty() {
        return log.display().to_string();
    }
    let scenario = Path::new(&meta.scenario)
        .file_name()
        .map_or(meta.scenario.clone(), |f| f.to_string_lossy().into_owned());
    match meta.seed {
        Some(seed) => format!("{scenario} — {}, seed {seed}", meta.spec),
        None => format!("{scenario} — {} (a replay)", meta.spec),
    }
}

/// The waypoints (north, east) of the mission `meta` names, placed from
/// its origin, if it names a mission that still loads.
pub(crate) fn waypoints_of(meta: &LogMeta) -> Vec<(f64, f64)> {
    let Some(mission) = &meta.mission else {
        return Vec::new();
    };
    let o = &meta.origin;
    match Mission::load(mission) {
        Ok(m) => m.waypoints_ne(&WorldOrigin::new(Geodetic {
            lat_deg: o.lat_deg,
            lon_deg: o.lon_deg,
            alt_m: o.alt_m,
        })),
        Err(_) => Vec::new(),
    }
}

/// Draws `<stem>.png` and `<stem>.svg` of the log at `log` (undecorated
/// when its sidecar cannot be read).
pub fn draw(log: &Path, stem: &Path) -> Result<Vec<PathBuf>, String> {
    let meta = LogMeta::read(log).unwrap_or_default();
    let waypoints = waypoints_of(&meta);
    let decor = lockstep_plot::Decor {
        title: &title(log, &meta),
        waypoints: &waypoints,
        modes: &meta.modes,
    };
    lockstep_plot::plot_log(log, stem, &decor).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_title_names_the_scenario_airframe_and_seed() {
        let meta = LogMeta {
            scenario: "/x/examples/scenarios/square.toml".into(),
            spec: "iris".into(),
            seed: Some(7),
            ..LogMeta::default()
        };
        assert_eq!(
            title(Path::new("log.csv"), &meta),
            "square.toml — iris, seed 7"
        );
        let replay = LogMeta { seed: None, ..meta };
        assert_eq!(
            title(Path::new("log.csv"), &replay),
            "square.toml — iris (a replay)"
        );
        assert_eq!(
            title(Path::new("a/log.csv"), &LogMeta::default()),
            "a/log.csv"
        );
    }
}

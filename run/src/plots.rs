//! The plots of a flight log (`lockstep plot LOG`, and those `fly` writes):
//! the figure of `lockstep_plot`, with the waypoints of the mission the
//! log's sidecar names, placed from the origin it records.

use std::collections::BTreeMap;
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

/// The figure's title and mode names, from the log's sidecar.
#[derive(serde::Deserialize, Default)]
struct Named {
    #[serde(default)]
    scenario: String,
    #[serde(default)]
    spec: String,
    seed: Option<u64>,
    #[serde(default)]
    modes: BTreeMap<u32, String>,
}

/// The plot's title: the scenario's file name, the airframe and the seed
/// (the log's own name when its sidecar is missing).
fn title(log: &Path, named: &Named) -> String {
    if named.scenario.is_empty() {
        return log.display().to_string();
    }
    let scenario = Path::new(&named.scenario)
        .file_name()
        .map_or(named.scenario.clone(), |f| f.to_string_lossy().into_owned());
    match named.seed {
        Some(seed) => format!("{scenario} — {}, seed {seed}", named.spec),
        None => format!("{scenario} — {} (a replay)", named.spec),
    }
}

/// The mission's waypoints (north, east) from the log's sidecar, if it
/// names a mission that still loads.
pub(crate) fn waypoints(log: &Path) -> Vec<(f64, f64)> {
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
    let named: Named = std::fs::read_to_string(sidecar_path(log))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    let waypoints = waypoints(log);
    let decor = lockstep_plot::Decor {
        title: &title(log, &named),
        waypoints: &waypoints,
        modes: &named.modes,
    };
    lockstep_plot::plot_log(log, stem, &decor).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_title_names_the_scenario_airframe_and_seed() {
        let named = Named {
            scenario: "/x/examples/scenarios/square.toml".into(),
            spec: "iris".into(),
            seed: Some(7),
            modes: BTreeMap::new(),
        };
        assert_eq!(
            title(Path::new("log.csv"), &named),
            "square.toml — iris, seed 7"
        );
        let replay = Named {
            seed: None,
            ..named
        };
        assert_eq!(
            title(Path::new("log.csv"), &replay),
            "square.toml — iris (a replay)"
        );
        assert_eq!(
            title(Path::new("a/log.csv"), &Named::default()),
            "a/log.csv"
        );
    }
}

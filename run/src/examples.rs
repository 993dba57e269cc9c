//! Every example the repository ships (`examples/`: scenarios, missions,
//! specs, co-simulation and orchestration files), carried by the binary
//! so an installed `lockstep` has them all: `lockstep examples` lists them
//! and copies them to a directory; the bundle's cache holds them (see
//! [`crate::assets`]).

use std::path::{Path, PathBuf};

/// `(path under examples/, bytes)` of each file listed.
macro_rules! examples {
    ($($p:literal),* $(,)?) => {
        &[$(($p, include_bytes!(concat!("../../examples/", $p)) as &[u8])),*]
    };
}

/// Every example file, by its path under `examples/`.
pub const EXAMPLES: &[(&str, &[u8])] = examples![
    "batch/montecarlo-k8s.yaml",
    "batch/montecarlo-slurm.sh",
    "cosim/c_wind.toml",
    "cosim/missions/alpha.waypoints",
    "cosim/missions/bravo.waypoints",
    "cosim/missions/charlie.waypoints",
    "cosim/missions/delta.waypoints",
    "cosim/missions/generate.py",
    "cosim/radio_swarm.toml",
    "cosim/slung_load.toml",
    "cosim/vehicle.toml",
    "cosim/wind_fmu/wind_shear.py",
    "cosim/wind_shear.toml",
    "missions/boulder.plan",
    "missions/canberra_wpl120.waypoints",
    "missions/hover.waypoints",
    "missions/loiter.waypoints",
    "missions/square.waypoints",
    "missions/region64/generate.py",
    "missions/region64/v00.waypoints",
    "missions/region64/v01.waypoints",
    "missions/region64/v02.waypoints",
    "missions/region64/v03.waypoints",
    "missions/region64/v04.waypoints",
    "missions/region64/v05.waypoints",
    "missions/region64/v06.waypoints",
    "missions/region64/v07.waypoints",
    "missions/region64/v08.waypoints",
    "missions/region64/v09.waypoints",
    "missions/region64/v10.waypoints",
    "missions/region64/v11.waypoints",
    "missions/region64/v12.waypoints",
    "missions/region64/v13.waypoints",
    "missions/region64/v14.waypoints",
    "missions/region64/v15.waypoints",
    "missions/region64/v16.waypoints",
    "missions/region64/v17.waypoints",
    "missions/region64/v18.waypoints",
    "missions/region64/v19.waypoints",
    "missions/region64/v20.waypoints",
    "missions/region64/v21.waypoints",
    "missions/region64/v22.waypoints",
    "missions/region64/v23.waypoints",
    "missions/region64/v24.waypoints",
    "missions/region64/v25.waypoints",
    "missions/region64/v26.waypoints",
    "missions/region64/v27.waypoints",
    "missions/region64/v28.waypoints",
    "missions/region64/v29.waypoints",
    "missions/region64/v30.waypoints",
    "missions/region64/v31.waypoints",
    "missions/region64/v32.waypoints",
    "missions/region64/v33.waypoints",
    "missions/region64/v34.waypoints",
    "missions/region64/v35.waypoints",
    "missions/region64/v36.waypoints",
    "missions/region64/v37.waypoints",
    "missions/region64/v38.waypoints",
    "missions/region64/v39.waypoints",
    "missions/region64/v40.waypoints",
    "missions/region64/v41.waypoints",
    "missions/region64/v42.waypoints",
    "missions/region64/v43.waypoints",
    "missions/region64/v44.waypoints",
    "missions/region64/v45.waypoints",
    "missions/region64/v46.waypoints",
    "missions/region64/v47.waypoints",
    "missions/region64/v48.waypoints",
    "missions/region64/v49.waypoints",
    "missions/region64/v50.waypoints",
    "missions/region64/v51.waypoints",
    "missions/region64/v52.waypoints",
    "missions/region64/v53.waypoints",
    "missions/region64/v54.waypoints",
    "missions/region64/v55.waypoints",
    "missions/region64/v56.waypoints",
    "missions/region64/v57.waypoints",
    "missions/region64/v58.waypoints",
    "missions/region64/v59.waypoints",
    "missions/region64/v60.waypoints",
    "missions/region64/v61.waypoints",
    "missions/region64/v62.waypoints",
    "missions/region64/v63.waypoints",
    "missions/swarm/generate.py",
    "missions/swarm/lane_00.waypoints",
    "missions/swarm/lane_01.waypoints",
    "missions/swarm/lane_02.waypoints",
    "missions/swarm/lane_03.waypoints",
    "missions/swarm/lane_04.waypoints",
    "missions/swarm/lane_05.waypoints",
    "missions/swarm/lane_06.waypoints",
    "missions/swarm/lane_07.waypoints",
    "missions/swarm/lane_08.waypoints",
    "missions/swarm/lane_09.waypoints",
    "missions/swarm/lane_10.waypoints",
    "missions/swarm/lane_11.waypoints",
    "missions/swarm/lane_12.waypoints",
    "missions/swarm/lane_13.waypoints",
    "missions/swarm/lane_14.waypoints",
    "missions/swarm/lane_15.waypoints",
    "orchestrate/delivery.toml",
    "orchestrate/vehicle.toml",
    "scenarios/ardupilot_json.toml",
    "scenarios/battery_failsafe.toml",
    "scenarios/event_driven.toml",
    "scenarios/gcs.toml",
    "scenarios/gcs_fleet.toml",
    "scenarios/gust.toml",
    "scenarios/hover.toml",
    "scenarios/identify.toml",
    "scenarios/montecarlo.toml",
    "scenarios/motor_failure.toml",
    "scenarios/px4_sitl.toml",
    "scenarios/region64.toml",
    "scenarios/skeleton.toml",
    "scenarios/square.toml",
    "scenarios/swarm.toml",
    "specs/iris_small_pack.toml",
];

/// One line per example scenario and fleet, system or orchestration file:
/// its path and its description, then the count of the other files.
pub fn listing() -> String {
    let mut out = String::new();
    let mut others = 0;
    for (path, bytes) in EXAMPLES {
        let described = path.ends_with(".toml")
            && !path.starts_with("specs/")
            && !path.ends_with("/vehicle.toml");
        if !described {
            others += 1;
            continue;
        }
        let text = String::from_utf8_lossy(bytes);
        let description = text
            .parse::<toml::Table>()
            .ok()
            .and_then(|t| {
                t.get("description")
                    .and_then(|d| d.as_str())
                    .map(str::to_string)
            })
            .unwrap_or_default();
        out.push_str(&format!("{path:<34} {description}\n"));
    }
    out.push_str(&format!(
        "and {others} missions, specs and the files they use; `lockstep examples --copy DIR` writes them all\n"
    ));
    out
}

/// Writes every example under `dir` (created), keeping its layout: a file
/// already there with the same bytes is left, one with other bytes is an
/// error naming it (nothing is overwritten). Returns the files written.
pub fn copy_to(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut written = Vec::new();
    for (path, bytes) in EXAMPLES {
        let to = dir.join(path);
        match std::fs::read(&to) {
            Ok(b) if b == *bytes => continue,
            Ok(_) => {
                return Err(format!(
                    "{} exists with other contents: not overwritten (copy to an empty directory)",
                    to.display()
                ));
            }
            Err(_) => {}
        }
        let parent = to.parent().unwrap_or(dir);
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        std::fs::write(&to, bytes).map_err(|e| format!("cannot write {}: {e}", to.display()))?;
        written.push(to);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The extensions of the files an example is made of (built FMUs and
    /// other artefacts in the tree are not examples).
    const KINDS: [&str; 6] = ["toml", "waypoints", "plan", "py", "sh", "yaml"];

    /// The list is the tree's: every example file is carried.
    #[test]
    fn every_example_in_the_tree_is_carried() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
        let mut found = Vec::new();
        let mut stack = vec![root.clone()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p);
                } else if p
                    .extension()
                    .and_then(|x| x.to_str())
                    .is_some_and(|x| KINDS.contains(&x))
                {
                    found.push(
                        p.strip_prefix(&root)
                            .unwrap()
                            .to_string_lossy()
                            .into_owned(),
                    );
                }
            }
        }
        found.sort();
        let mut listed: Vec<String> = EXAMPLES.iter().map(|(p, _)| p.to_string()).collect();
        listed.sort();
        assert_eq!(listed, found);
    }

    #[test]
    fn copying_writes_every_file_once_and_overwrites_nothing() {
        let d = tempfile::tempdir().unwrap();
        let first = copy_to(d.path()).unwrap();
        assert_eq!(first.len(), EXAMPLES.len());
        assert!(copy_to(d.path()).unwrap().is_empty());
        let square = d.path().join("scenarios/square.toml");
        std::fs::write(&square, "changed").unwrap();
        assert_eq!(
            copy_to(d.path()).unwrap_err(),
            format!(
                "{} exists with other contents: not overwritten (copy to an empty directory)",
                square.display()
            )
        );
    }

    #[test]
    fn the_listing_names_each_scenario_with_its_description() {
        let l = listing();
        assert!(l.contains("scenarios/hover.toml"));
        assert!(l.contains("Iris, square mission, OU wind, noisy delayed estimates"));
        assert!(!l.contains("missions/square.waypoints"));
    }
}

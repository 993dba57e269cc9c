//! The viewer's pages from what a run wrote (`lockstep view`, and those
//! `fly`, fleets and Monte Carlo write into `--out`): which kind of page a
//! path is, where its inputs are, what the page is called.

use std::path::{Path, PathBuf};

use serde_json::Value;

use lockstep_harness::io::log_meta::{LogMeta, SidecarError};
use lockstep_view::{Batch, Fleet, Flight, Sidecar, Vehicle};

/// The page of a flight or a fleet in its `--out` directory.
pub const FLIGHT_PAGE: &str = "flight.html";
/// The page of a Monte Carlo batch in its `--out` directory.
pub const BATCH_PAGE: &str = "montecarlo.html";

/// A flight's title: its description, else its scenario's file name.
fn flight_title(report: Option<&Value>, log: &Path) -> String {
    let r = report.unwrap_or(&Value::Null);
    let scenario = r["scenario"].as_str().map(|s| {
        Path::new(s)
            .file_name()
            .map_or(s.to_string(), |f| f.to_string_lossy().into_owned())
    });
    match (r["description"].as_str(), scenario) {
        (Some(d), Some(s)) => format!("{d} ({s})"),
        (None, Some(s)) => s,
        (Some(d), None) => d.to_string(),
        (None, None) => log.display().to_string(),
    }
}

/// The sidecar of `log` as a page carries it, and the waypoints of the
/// mission it names; or why it cannot be read.
fn sidecar(log: &Path) -> (Result<Sidecar, String>, Vec<(f64, f64)>) {
    let meta = match LogMeta::read(log) {
        Ok(m) => m,
        Err(e @ SidecarError::Read { .. }) => {
            let why =
                format!("{e} (the log's sidecar: the viewer needs its mode names and airframe)");
            return (Err(why), Vec::new());
        }
        Err(e) => return (Err(e.to_string()), Vec::new()),
    };
    let waypoints = crate::plots::waypoints_of(&meta);
    let text = |m: &std::collections::BTreeMap<u32, String>| {
        m.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
    };
    let carried = Sidecar {
        modes: text(&meta.modes),
        fault_bits: text(&meta.fault_bits),
        rotors: meta.rotors,
        airframe: meta
            .airframe
            .as_ref()
            .and_then(|a| serde_json::to_value(a).ok()),
        complete: meta.complete,
        digest: meta.digest,
        seed: meta.seed,
        scenario: meta.scenario,
        spec: meta.spec,
    };
    (Ok(carried), waypoints)
}

/// Writes the page of the flight whose log is `log`, with its report
/// (`summary.json`'s contents) when known.
pub fn flight(log: &Path, report: Option<&Value>, page: &Path) -> Result<(), String> {
    let (sidecar, waypoints) = sidecar(log);
    let title = flight_title(report, log);
    let html = lockstep_view::flight_page(&Flight {
        title: &title,
        vehicle: Vehicle {
            name: "",
            log,
            waypoints: &waypoints,
            report,
            sidecar,
        },
    })
    .map_err(|e| e.to_string())?;
    lockstep_view::write_page(page, &html).map_err(|e| e.to_string())
}

/// A fleet vehicle's log: where its report says, else `<name>.csv` in the
/// directory the report is in (a moved directory).
fn vehicle_log(dir: &Path, v: &Value) -> Option<PathBuf> {
    let said = v["log"].as_str().map(PathBuf::from);
    match said {
        Some(p) if p.exists() => Some(p),
        _ => v["name"]
            .as_str()
            .map(|n| dir.join(format!("{n}.csv")))
            .filter(|p| p.exists()),
    }
}

/// Writes the page of the fleet whose report (`summary.json`) is `report`,
/// its logs in `dir`.
pub fn fleet(dir: &Path, report: &Value, page: &Path) -> Result<(), String> {
    let empty = Vec::new();
    let entries = report["vehicles"].as_array().unwrap_or(&empty);
    let mut logs = Vec::new();
    for v in entries {
        let Some(log) = vehicle_log(dir, v) else {
            continue;
        };
        let (sidecar, waypoints) = sidecar(&log);
        logs.push((
            v["name"].as_str().unwrap_or("").to_string(),
            log,
            waypoints,
            v,
            sidecar,
        ));
    }
    if logs.is_empty() {
        return Err(format!(
            "{}: the fleet wrote no vehicle logs (its scenario logs nothing, or they were moved): nothing to show",
            dir.display()
        ));
    }
    let scenario = report["scenario"].as_str().unwrap_or("fleet");
    let title = format!(
        "{} ({} vehicles)",
        Path::new(scenario)
            .file_name()
            .map_or(scenario.into(), |f| f.to_string_lossy()),
        logs.len()
    );
    let html = lockstep_view::fleet_page(&Fleet {
        title: &title,
        seed: report["seed"].as_u64(),
        vehicles: logs
            .iter()
            .map(|(name, log, w, v, sidecar)| Vehicle {
                name,
                log,
                waypoints: w,
                report: Some(v),
                sidecar: sidecar.clone(),
            })
            .collect(),
        encounters: report.get("encounters"),
        closest: report.get("closest").filter(|c| !c.is_null()),
    })
    .map_err(|e| e.to_string())?;
    lockstep_view::write_page(page, &html).map_err(|e| e.to_string())
}

/// Writes the page of the Monte Carlo batch in `dir` (its `runs.csv`,
/// `summary.json` and figures).
pub fn batch(dir: &Path, summary: &Value, page: &Path) -> Result<(), String> {
    let csv_path = dir.join(crate::batch::RUNS_CSV);
    let mut r = csv::Reader::from_path(&csv_path)
        .map_err(|e| format!("cannot read {}: {e}", csv_path.display()))?;
    let header: Vec<String> = r
        .headers()
        .map_err(|e| format!("{}: {e}", csv_path.display()))?
        .iter()
        .map(str::to_string)
        .collect();
    let mut rows = Vec::new();
    for (i, rec) in r.records().enumerate() {
        let rec = rec.map_err(|e| format!("{} line {}: {e}", csv_path.display(), i + 2))?;
        rows.push(rec.iter().map(str::to_string).collect());
    }
    let mut figures = Vec::new();
    for stem in crate::batch::FIGURES {
        let svg = dir.join(format!("{stem}.svg"));
        if let Ok(text) = std::fs::read_to_string(&svg) {
            figures.push((format!("{stem}.svg"), text));
        }
    }
    let scenario = summary["scenario"].as_str().unwrap_or("");
    let title = format!(
        "Monte Carlo: {}",
        Path::new(scenario)
            .file_name()
            .map_or(scenario.into(), |f| f.to_string_lossy())
    );
    let rerun = if scenario.is_empty() {
        String::new()
    } else {
        format!(
            "lockstep montecarlo {scenario} --rerun {{run}} --out {}/run-{{run}}",
            dir.display()
        )
    };
    // The wall clock's figures stay out: the same batch, the same page.
    let mut summary = summary.clone();
    if let Some(m) = summary.as_object_mut() {
        for k in ["wall_s", "runs_per_s"] {
            m.remove(k);
        }
    }
    let html = lockstep_view::montecarlo_page(&Batch {
        title: &title,
        summary: &summary,
        header,
        rows,
        figures,
        rerun,
    })
    .map_err(|e| e.to_string())?;
    lockstep_view::write_page(page, &html).map_err(|e| e.to_string())
}

fn read_json(path: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: not JSON: {e}", path.display()))
}

/// `lockstep view TARGET [--out PAGE]`: the page of a `fly`, fleet, `orchestrate` or
/// Monte Carlo `--out` directory, or of a flight log; returns the page
/// written (by default beside what it shows).
pub fn view(target: &Path, out: Option<&Path>) -> Result<PathBuf, String> {
    if target.is_dir() {
        let summary_path = target.join("summary.json");
        if !summary_path.exists() {
            let log = target.join("log.csv");
            if log.exists() {
                let page = out.map_or_else(|| target.join(FLIGHT_PAGE), Path::to_path_buf);
                flight(&log, None, &page)?;
                return Ok(page);
            }
            return Err(format!(
                "{}: no summary.json nor log.csv in it (give a `fly`, fleet, `orchestrate` or `montecarlo` --out directory, or a flight log)",
                target.display()
            ));
        }
        let summary = read_json(&summary_path)?;
        if summary.get("master_seed").is_some() {
            let page = out.map_or_else(|| target.join(BATCH_PAGE), Path::to_path_buf);
            batch(target, &summary, &page)?;
            return Ok(page);
        }
        let page = out.map_or_else(|| target.join(FLIGHT_PAGE), Path::to_path_buf);
        if summary.get("timeline").is_some() && summary.get("models").is_some() {
            let report: crate::orchestrate::OrchestrateReport = serde_json::from_value(summary)
                .map_err(|e| {
                    format!(
                        "{}: not an orchestration's summary: {e}",
                        summary_path.display()
                    )
                })?;
            fleet(target, &crate::orchestrate::as_fleet(&report), &page)?;
            return Ok(page);
        }
        if summary.get("vehicles").is_some() {
            fleet(target, &summary, &page)?;
            return Ok(page);
        }
        let log = summary["log"]["path"]
            .as_str()
            .map(PathBuf::from)
            .filter(|p| p.exists())
            .unwrap_or_else(|| target.join("log.csv"));
        if !log.exists() {
            return Err(format!(
                "{}: the flight wrote no log (it needs a log cadence, or the log was moved): nothing to show",
                summary_path.display()
            ));
        }
        flight(&log, Some(&summary), &page)?;
        return Ok(page);
    }
    if !target.exists() {
        return Err(format!("{}: no such file or directory", target.display()));
    }
    // A log: its report is the summary.json beside it that names it.
    let beside = target
        .parent()
        .map(|d| d.join("summary.json"))
        .filter(|p| p.exists())
        .and_then(|p| read_json(&p).ok())
        .filter(|s| {
            s["log"]["path"]
                .as_str()
                .and_then(|p| Path::new(p).file_name())
                == target.file_name()
        });
    let page = out.map_or_else(|| target.with_extension("html"), Path::to_path_buf);
    flight(target, beside.as_ref(), &page)?;
    Ok(page)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_name_the_scenario() {
        let r = serde_json::json!({"scenario": "/a/b/square.toml", "description": "Iris, square"});
        assert_eq!(
            flight_title(Some(&r), Path::new("x.csv")),
            "Iris, square (square.toml)"
        );
        let r = serde_json::json!({"scenario": "hover.toml"});
        assert_eq!(flight_title(Some(&r), Path::new("x.csv")), "hover.toml");
        assert_eq!(
            flight_title(None, Path::new("runs/log.csv")),
            "runs/log.csv"
        );
    }

    #[test]
    fn a_missing_target_and_an_empty_directory_are_named() {
        let d = tempfile::tempdir().unwrap();
        let e = view(&d.path().join("nope"), None).unwrap_err();
        assert_eq!(
            e,
            format!(
                "{}: no such file or directory",
                d.path().join("nope").display()
            )
        );
        let e = view(d.path(), None).unwrap_err();
        assert!(
            e.starts_with(&format!(
                "{}: no summary.json nor log.csv",
                d.path().display()
            )),
            "{e}"
        );
    }
}

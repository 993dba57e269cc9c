//! The viewer's pages from what a run wrote (`lockstep view`, and those
//! `fly`, fleets, orchestrations and Monte Carlo write into `--out`): the
//! page of each kind of run's summary ([`RunSummary`]), where its inputs
//! are, what the page is called.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Value, json};

use lockstep_harness::io::log_meta::{LogMeta, SidecarError};
use lockstep_harness::outcome::report::VehicleOutcome;
use lockstep_view::{Batch, Fleet, Flight, Sidecar, Vehicle};

use crate::summary::batch::BatchReport;
use crate::summary::cosim::CosimReport;
use crate::summary::fleet::FleetReport;
use crate::summary::flight::FlightReport;
use crate::summary::orchestrate::OrchestrateReport;
use crate::summary::{FIGURES, OutDir, RUNS_CSV, RunSummary};

/// A file's name, else the path as given.
fn file_name(path: &str) -> String {
    Path::new(path)
        .file_name()
        .map_or(path.to_string(), |f| f.to_string_lossy().into_owned())
}

/// A flight's title: its description, else its scenario's file name
/// (with neither, the log's path).
fn flight_title(description: Option<&str>, scenario: Option<&str>, log: &Path) -> String {
    match (description, scenario.map(file_name)) {
        (Some(d), Some(s)) => format!("{d} ({s})"),
        (None, Some(s)) => s,
        (Some(d), None) => d.to_string(),
        (None, None) => log.display().to_string(),
    }
}

/// What a page shows of a vehicle's part of its run's report: its
/// timeline and its verdict.
fn shown(timeline: &impl Serialize, verdict: &impl Serialize) -> Value {
    json!({"timeline": timeline, "verdict": verdict})
}

/// What a page shows of a vehicle's outcome (nothing when its run did not
/// end).
fn outcome_shown(o: Option<&VehicleOutcome>) -> Option<Value> {
    o.map(|o| shown(&o.timeline, &o.verdict))
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
/// when known.
pub fn flight(log: &Path, report: Option<&FlightReport>, page: &Path) -> Result<(), String> {
    let (sidecar, waypoints) = sidecar(log);
    let title = flight_title(
        report.and_then(|r| r.description.as_deref()),
        report.map(|r| r.scenario.as_str()),
        log,
    );
    let report = report.map(|r| shown(&r.timeline, &r.verdict));
    let html = lockstep_view::flight_page(&Flight {
        title: &title,
        vehicle: Vehicle {
            name: "",
            log,
            waypoints: &waypoints,
            report: report.as_ref(),
            sidecar,
        },
    })
    .map_err(|e| e.to_string())?;
    lockstep_view::write_page(page, &html).map_err(|e| e.to_string())
}

/// What a page of several vehicles shows: a fleet's, an orchestration's
/// or a co-simulation's vehicles, from its summary.
#[derive(Debug, Clone, PartialEq)]
pub struct Crowd {
    /// The file the run was made from (the page's title names it).
    pub source: String,
    pub seed: Option<u64>,
    pub vehicles: Vec<Member>,
    /// The fleet's encounters and closest approach, when it checked them.
    pub encounters: Option<Value>,
    pub closest: Option<Value>,
}

/// A vehicle of a [`Crowd`].
#[derive(Debug, Clone, PartialEq)]
pub struct Member {
    pub name: String,
    /// Its log as its report names it (`None`: it wrote none).
    pub log: Option<String>,
    /// Its timeline and verdict, when its run ended.
    pub shown: Option<Value>,
}

impl Crowd {
    /// A fleet's vehicles.
    pub fn of_fleet(r: &FleetReport) -> Crowd {
        Crowd {
            source: r.scenario.clone(),
            seed: Some(r.seed),
            vehicles: r
                .vehicles
                .iter()
                .map(|v| Member {
                    name: v.name.clone(),
                    log: v.log.clone(),
                    shown: outcome_shown(v.outcome.as_ref()),
                })
                .collect(),
            encounters: Some(serde_json::to_value(&r.encounters).expect("encounters are JSON")),
            closest: r
                .closest
                .as_ref()
                .map(|c| serde_json::to_value(c).expect("an encounter is JSON")),
        }
    }

    /// An orchestration's vehicles: the models that say where their log
    /// is (each says what a delivery vehicle says, its timeline and
    /// verdict among it).
    pub fn of_orchestration(r: &OrchestrateReport) -> Crowd {
        Crowd {
            source: r.fleet.clone(),
            seed: Some(r.seed),
            vehicles: r
                .models
                .iter()
                .filter_map(|(name, said)| {
                    let log = said["log"].as_str()?;
                    Some(Member {
                        name: name.clone(),
                        log: Some(log.to_string()),
                        shown: Some(shown(&said["timeline"], &said["verdict"])),
                    })
                })
                .collect(),
            encounters: None,
            closest: None,
        }
    }

    /// A co-simulation's vehicles.
    pub fn of_cosim(r: &CosimReport) -> Crowd {
        Crowd {
            source: r.system.clone(),
            seed: None,
            vehicles: r
                .participants
                .iter()
                .filter_map(|(name, p)| {
                    let v = p.vehicle()?;
                    Some(Member {
                        name: name.clone(),
                        log: v.log.clone(),
                        shown: outcome_shown(v.outcome.as_ref()),
                    })
                })
                .collect(),
            encounters: None,
            closest: None,
        }
    }
}

/// A vehicle's log: where its report says, else `<name>.csv` in `dir`
/// (a moved directory).
fn member_log(dir: &OutDir, m: &Member) -> Option<PathBuf> {
    match m.log.as_ref().map(PathBuf::from) {
        Some(p) if p.exists() => Some(p),
        _ => Some(dir.vehicle_log(&m.name)).filter(|p| p.exists()),
    }
}

/// Writes the page of `crowd`, its logs in `dir`.
pub fn fleet(dir: &Path, crowd: &Crowd, page: &Path) -> Result<(), String> {
    let out = OutDir::new(dir);
    let mut logs = Vec::new();
    for m in &crowd.vehicles {
        let Some(log) = member_log(&out, m) else {
            continue;
        };
        let (sidecar, waypoints) = sidecar(&log);
        logs.push((m, log, waypoints, sidecar));
    }
    if logs.is_empty() {
        return Err(format!(
            "{}: the run wrote no vehicle logs (its scenarios log nothing, or they were moved): nothing to show",
            dir.display()
        ));
    }
    let title = format!("{} ({} vehicles)", file_name(&crowd.source), logs.len());
    let html = lockstep_view::fleet_page(&Fleet {
        title: &title,
        seed: crowd.seed,
        vehicles: logs
            .iter()
            .map(|(m, log, w, sidecar)| Vehicle {
                name: &m.name,
                log,
                waypoints: w,
                report: m.shown.as_ref(),
                sidecar: sidecar.clone(),
            })
            .collect(),
        encounters: crowd.encounters.as_ref(),
        closest: crowd.closest.as_ref(),
    })
    .map_err(|e| e.to_string())?;
    lockstep_view::write_page(page, &html).map_err(|e| e.to_string())
}

/// Writes the page of the Monte Carlo batch in `dir` (its `runs.csv`, its
/// summary `report` and figures).
pub fn batch(dir: &Path, report: &BatchReport, page: &Path) -> Result<(), String> {
    let csv_path = dir.join(RUNS_CSV);
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
    for stem in FIGURES {
        let svg = dir.join(format!("{stem}.svg"));
        if let Ok(text) = std::fs::read_to_string(&svg) {
            figures.push((format!("{stem}.svg"), text));
        }
    }
    let scenario = report.scenario.as_str();
    let title = format!("Monte Carlo: {}", file_name(scenario));
    let rerun = if scenario.is_empty() {
        String::new()
    } else {
        format!(
            "lockstep montecarlo {scenario} --rerun {{run}} --out {}/run-{{run}}",
            dir.display()
        )
    };
    // The wall clock's figures stay out: the same batch, the same page.
    let mut summary = serde_json::to_value(report).expect("a summary is JSON");
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

/// `lockstep view TARGET [--out PAGE]`: the page of a run's `--out`
/// directory (`fly`, fleet, `orchestrate`, `cosim` or Monte Carlo), or of
/// a flight log; returns the page written (by default beside what it
/// shows).
pub fn view(target: &Path, out: Option<&Path>) -> Result<PathBuf, String> {
    if target.is_dir() {
        let dir = OutDir::new(target);
        let page_or = |default: PathBuf| out.map_or(default, Path::to_path_buf);
        let Some(summary) = dir.read_summary()? else {
            let log = dir.log();
            if log.exists() {
                let page = page_or(dir.flight_page());
                flight(&log, None, &page)?;
                return Ok(page);
            }
            return Err(format!(
                "{}: no {} nor {} in it (give the --out directory of a `fly`, fleet, `orchestrate`, `cosim` or `montecarlo` run, or a flight log)",
                target.display(),
                crate::summary::SUMMARY,
                crate::summary::LOG,
            ));
        };
        let page = match &summary {
            RunSummary::Batch(_) => page_or(dir.batch_page()),
            _ => page_or(dir.flight_page()),
        };
        match &summary {
            RunSummary::Batch(b) => batch(target, b, &page)?,
            RunSummary::Fleet(f) => fleet(target, &Crowd::of_fleet(f), &page)?,
            RunSummary::Orchestrate(o) => fleet(target, &Crowd::of_orchestration(o), &page)?,
            RunSummary::Cosim(c) => fleet(target, &Crowd::of_cosim(c), &page)?,
            RunSummary::Flight(f) => {
                let log = f
                    .log
                    .as_ref()
                    .map(|l| PathBuf::from(&l.path))
                    .filter(|p| p.exists())
                    .unwrap_or_else(|| dir.log());
                if !log.exists() {
                    return Err(format!(
                        "{}: the flight wrote no log (it needs a log cadence, or the log was moved): nothing to show",
                        dir.summary().display()
                    ));
                }
                flight(&log, Some(f), &page)?;
            }
        }
        return Ok(page);
    }
    if !target.exists() {
        return Err(format!("{}: no such file or directory", target.display()));
    }
    // A log: its report is the flight's summary beside it that names it.
    let beside = target
        .parent()
        .and_then(|d| OutDir::new(d).read_summary().ok().flatten())
        .and_then(|s| match s {
            RunSummary::Flight(f) => Some(f),
            _ => None,
        })
        .filter(|f| {
            f.log
                .as_ref()
                .and_then(|l| Path::new(&l.path).file_name().map(|n| n.to_os_string()))
                .as_deref()
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
        let log = Path::new("runs/log.csv");
        assert_eq!(
            flight_title(Some("Iris, square"), Some("/a/b/square.toml"), log),
            "Iris, square (square.toml)"
        );
        assert_eq!(flight_title(None, Some("hover.toml"), log), "hover.toml");
        assert_eq!(flight_title(Some("Iris"), None, log), "Iris");
        assert_eq!(flight_title(None, None, log), "runs/log.csv");
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

//! A batch's rows: one per run, as CSV (and JSON between a worker process
//! and the batch), and their aggregate statistics.

use serde::{Deserialize, Serialize};

use crate::summary::batch::Stat;

use lockstep_harness::inputs::scenario::SpecAdjust;

use super::Draw;

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum RunStatus {
    /// It flew to its end (its verdict may still have failed).
    Completed,
    /// It could not: the reason (a crash or hang of the autopilot, an
    /// error of the run, a worker that died), with its time when known.
    Failed(String),
}

/// What a completed run measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    /// The verdict (no crash, every `[expect]` check met).
    pub passed: bool,
    /// Why the verdict failed (each failed `[expect]` check with its
    /// detail, each crash not allowed); empty when it passed.
    #[serde(default)]
    pub why: String,
    pub crashes: usize,
    /// Simulated time at the end, s.
    pub end_s: f64,
    /// Horizontal distance of the final position from the start, m.
    pub landing_error_m: f64,
    pub altitude_m: f64,
    pub on_ground: bool,
    pub max_tilt_deg: f64,
    pub min_soc: f64,
    pub mission_finished: bool,
    /// SHA-256 of the end time and the final state's bits.
    pub digest: String,
}

/// One run of a batch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRow {
    pub run: u64,
    pub seed: u64,
    pub adjust: SpecAdjust,
    pub wind_offset_ned_mps: [f64; 3],
    pub noise_scale: f64,
    /// The motor that failed and when (µs).
    pub failed_motor: Option<(usize, u64)>,
    pub status: RunStatus,
    pub metrics: Option<Metrics>,
}

impl RunRow {
    /// The row of `draw` for an aircraft of `rotors` rotors, before its
    /// flight.
    pub fn new(draw: &Draw, rotors: usize) -> RunRow {
        RunRow {
            run: draw.run,
            seed: draw.seed,
            adjust: draw.adjust,
            wind_offset_ned_mps: draw.wind_offset_ned_mps,
            noise_scale: draw.noise_scale,
            failed_motor: draw.failed_motor(rotors).map(|(m, t)| (m, t.0)),
            status: RunStatus::Completed,
            metrics: None,
        }
    }

    /// The row of a run that failed (or was never flown) for `reason`,
    /// with its draws all the same.
    pub fn failed(draw: &Draw, rotors: usize, reason: String) -> RunRow {
        RunRow {
            status: RunStatus::Failed(reason),
            ..RunRow::new(draw, rotors)
        }
    }
}

/// The CSV's columns, in order.
pub const COLUMNS: [&str; 23] = [
    "run",
    "seed",
    "status",
    "reason",
    "passed",
    "crashes",
    "end_s",
    "landing_error_m",
    "altitude_m",
    "on_ground",
    "max_tilt_deg",
    "min_soc",
    "mission_finished",
    "mass_scale",
    "inertia_scale",
    "battery_capacity_scale",
    "wind_offset_n_mps",
    "wind_offset_e_mps",
    "wind_offset_d_mps",
    "sensor_noise_scale",
    "failed_motor",
    "motor_failure_s",
    "digest",
];

/// The rows as CSV, in run order; a failed run's measurements are empty.
pub fn csv_text(rows: &[RunRow]) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    let _ = w.write_record(COLUMNS);
    for r in rows {
        let (status, reason) = match &r.status {
            RunStatus::Completed => (
                "completed",
                r.metrics.as_ref().map_or(String::new(), |m| m.why.clone()),
            ),
            RunStatus::Failed(why) => ("failed", why.clone()),
        };
        let mut rec = vec![r.run.to_string(), r.seed.to_string(), status.into(), reason];
        match &r.metrics {
            Some(m) => rec.extend([
                m.passed.to_string(),
                m.crashes.to_string(),
                m.end_s.to_string(),
                m.landing_error_m.to_string(),
                m.altitude_m.to_string(),
                m.on_ground.to_string(),
                m.max_tilt_deg.to_string(),
                m.min_soc.to_string(),
                m.mission_finished.to_string(),
            ]),
            None => rec.extend(std::iter::repeat_n(String::new(), 9)),
        }
        rec.extend([
            r.adjust.mass.to_string(),
            r.adjust.inertia.to_string(),
            r.adjust.battery_capacity.to_string(),
            r.wind_offset_ned_mps[0].to_string(),
            r.wind_offset_ned_mps[1].to_string(),
            r.wind_offset_ned_mps[2].to_string(),
            r.noise_scale.to_string(),
        ]);
        match r.failed_motor {
            Some((m, t)) => rec.extend([m.to_string(), (t as f64 * 1e-6).to_string()]),
            None => rec.extend([String::new(), String::new()]),
        }
        rec.push(
            r.metrics
                .as_ref()
                .map_or(String::new(), |m| m.digest.clone()),
        );
        let _ = w.write_record(&rec);
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}

/// A batch's aggregate statistics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Aggregate {
    pub runs: usize,
    /// Runs that flew to their end, whatever their verdict.
    pub completed: usize,
    /// Runs that did not complete (a crash or hang of the library, a
    /// refused start): `runs - completed`. A completed run whose verdict
    /// failed is counted as `completed - passed`, not here.
    pub failed: usize,
    /// Completed runs whose verdict passed.
    pub passed: usize,
    pub motor_failures: usize,
    pub stats: Vec<Stat>,
}

/// The measurements aggregated and drawn as histograms.
pub const MEASURED: [&str; 4] = ["landing_error_m", "max_tilt_deg", "min_soc", "end_s"];

/// The verdict of each completed run, in run order (as [`values`]).
pub fn verdicts(rows: &[RunRow]) -> Vec<bool> {
    rows.iter()
        .filter_map(|r| r.metrics.as_ref())
        .map(|m| m.passed)
        .collect()
}

/// The drawn inputs of the completed runs, in run order, those that vary
/// in the batch only: each spec scale, the wind offset per axis, the noise
/// scale, and the motor failure's time (NaN for a run that kept them all).
pub fn drawn_inputs(rows: &[RunRow]) -> Vec<(&'static str, Vec<f64>)> {
    let done: Vec<&RunRow> = rows.iter().filter(|r| r.metrics.is_some()).collect();
    let column = |f: &dyn Fn(&RunRow) -> f64| done.iter().map(|r| f(r)).collect::<Vec<f64>>();
    let all: Vec<(&'static str, Vec<f64>)> = vec![
        ("mass_scale", column(&|r| r.adjust.mass)),
        ("inertia_scale", column(&|r| r.adjust.inertia)),
        (
            "battery_capacity_scale",
            column(&|r| r.adjust.battery_capacity),
        ),
        ("wind_offset_n_mps", column(&|r| r.wind_offset_ned_mps[0])),
        ("wind_offset_e_mps", column(&|r| r.wind_offset_ned_mps[1])),
        ("wind_offset_d_mps", column(&|r| r.wind_offset_ned_mps[2])),
        ("sensor_noise_scale", column(&|r| r.noise_scale)),
        (
            "motor_failure_s",
            column(&|r| r.failed_motor.map_or(f64::NAN, |(_, t)| t as f64 * 1e-6)),
        ),
    ];
    all.into_iter()
        .filter(|(_, v)| {
            let finite: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
            finite.iter().any(|x| *x != finite[0])
        })
        .collect()
}

/// The values of measurement `name` over the completed runs, in run order.
pub fn values(rows: &[RunRow], name: &str) -> Vec<f64> {
    rows.iter()
        .filter_map(|r| r.metrics.as_ref())
        .map(|m| match name {
            "landing_error_m" => m.landing_error_m,
            "max_tilt_deg" => m.max_tilt_deg,
            "min_soc" => m.min_soc,
            "end_s" => m.end_s,
            _ => f64::NAN,
        })
        .collect()
}

impl Aggregate {
    pub fn of(rows: &[RunRow]) -> Aggregate {
        let completed = rows.iter().filter(|r| r.metrics.is_some()).count();
        Aggregate {
            runs: rows.len(),
            completed,
            failed: rows.len() - completed,
            passed: rows
                .iter()
                .filter(|r| r.metrics.as_ref().is_some_and(|m| m.passed))
                .count(),
            motor_failures: rows.iter().filter(|r| r.failed_motor.is_some()).count(),
            stats: MEASURED
                .iter()
                .filter_map(|n| stat(n, &values(rows, n)))
                .collect(),
        }
    }

    /// The statistics as a text table.
    pub fn table_text(&self) -> String {
        let mut out = format!(
            "{:<16} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}\n",
            "", "mean", "std", "min", "p5", "p50", "p95", "max"
        );
        for s in &self.stats {
            out.push_str(&format!(
                "{:<16} {:>10.4} {:>10.4} {:>10.4} {:>10.4} {:>10.4} {:>10.4} {:>10.4}\n",
                s.name, s.mean, s.std, s.min, s.p5, s.p50, s.p95, s.max
            ));
        }
        out
    }
}

/// Mean, sample standard deviation, extremes and nearest-rank
/// percentiles of `v` (None when empty).
fn stat(name: &'static str, v: &[f64]) -> Option<Stat> {
    if v.is_empty() {
        return None;
    }
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = if v.len() > 1 {
        v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let pct = |p: f64| s[((p / 100.0 * n).ceil() as usize).clamp(1, s.len()) - 1];
    Some(Stat {
        name: name.to_string(),
        mean,
        std: var.sqrt(),
        min: s[0],
        p5: pct(5.0),
        p50: pct(50.0),
        p95: pct(95.0),
        max: s[s.len() - 1],
    })
}

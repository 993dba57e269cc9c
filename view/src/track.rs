//! One vehicle's flight as the page carries it: the log's columns the
//! viewer draws (every row, or every k-th row of a long log, always with
//! the last), the sidecar's mode names and airframe, and the vehicle's part
//! of the run's report (timeline, verdict).

use std::collections::BTreeMap;
use std::path::Path;

use lockstep_plot::Series;
use serde_json::{Value, json};

use crate::ViewError;

/// One vehicle of a page.
#[derive(Debug, Clone)]
pub struct Vehicle<'a> {
    /// The vehicle's name (a fleet's), or empty for a single flight.
    pub name: &'a str,
    /// Its flight log (the `fly` CSV, with its sidecar `<log>.json`).
    pub log: &'a Path,
    /// The mission's waypoints, (north, east) metres from the origin.
    pub waypoints: &'a [(f64, f64)],
    /// Its part of the run's report: `timeline`, `verdict`, `digest` are
    /// read when present (a `summary.json` or a fleet vehicle's entry).
    pub report: Option<&'a Value>,
    /// Its log's sidecar, or why it could not be read (said once the log
    /// itself has been read: a log that is no flight log says so first).
    pub sidecar: Result<Sidecar, String>,
}

/// What the page carries of a log's sidecar (read by the caller, through
/// the harness's `LogMeta`, its one reader).
#[derive(Debug, Clone, Default)]
pub struct Sidecar {
    pub scenario: String,
    pub spec: String,
    pub seed: Option<u64>,
    /// `mode` code (as text) -> name.
    pub modes: BTreeMap<String, String>,
    /// `faults` bit (as text) -> meaning.
    pub fault_bits: BTreeMap<String, String>,
    pub rotors: usize,
    /// The rotors' places and the propellers' radius, as the sidecar has
    /// them (none from an older lockstep: drawn evenly spaced).
    pub airframe: Option<Value>,
    pub complete: bool,
    pub digest: Option<String>,
}

/// The columns carried to every digit (the scene's position, attitude, the
/// clock and the codes); the others, only plotted, to 6 significant
/// digits (a page a third the size).
const EXACT: [&str; 11] = [
    "time_us", "x_m", "y_m", "z_m", "qw", "qx", "qy", "qz", "mode", "armed", "faults",
];

/// `v` to 6 significant digits (shortest decimal of that).
fn six_digits(v: f64) -> f64 {
    if v == 0.0 || !v.is_finite() {
        return v;
    }
    format!("{v:.5e}").parse().unwrap_or(v)
}

/// The columns drawn, by exact name or by `prefix{i}suffix`.
const COLUMNS: [&str; 27] = [
    "time_us",
    "x_m",
    "y_m",
    "z_m",
    "vx_mps",
    "vy_mps",
    "vz_mps",
    "qw",
    "qx",
    "qy",
    "qz",
    "est_x_m",
    "est_y_m",
    "est_z_m",
    "sp_x_m",
    "sp_y_m",
    "sp_z_m",
    "sp_vx_mps",
    "sp_vy_mps",
    "sp_vz_mps",
    "wind_n_mps",
    "wind_e_mps",
    "wind_d_mps",
    "mode",
    "armed",
    "faults",
    "bus_v",
];
const INDEXED: [(&str, &str); 4] = [
    ("motor", ""),
    ("rotor", "_radps"),
    ("battery", "_v"),
    ("battery", "_soc"),
];

/// An X (or evenly spaced ring) of `n` rotors 0.25 m out, for a sidecar
/// written before airframes were recorded.
fn even_airframe(n: usize) -> Value {
    let rotors: Vec<Value> = (0..n)
        .map(|i| {
            let a = std::f64::consts::TAU * (i as f64 + 0.5) / n as f64;
            json!({"position_m": [0.25 * a.cos(), 0.25 * a.sin(), 0.0],
                   "spin_dir": if i % 2 == 0 { 1 } else { -1 }})
        })
        .collect();
    json!({"rotors": rotors, "propeller_radius_m": 0.1})
}

/// The rows kept of `rows`: every `stride`-th and the last.
pub(crate) fn kept_rows(rows: usize, cap: usize) -> (usize, Vec<usize>) {
    let stride = rows.div_ceil(cap.max(1)).max(1);
    let mut kept: Vec<usize> = (0..rows).step_by(stride).collect();
    if rows > 0 && kept.last() != Some(&(rows - 1)) {
        kept.push(rows - 1);
    }
    (stride, kept)
}

impl Vehicle<'_> {
    /// The vehicle as the page's JSON, at most `cap` rows.
    pub(crate) fn to_json(&self, cap: usize) -> Result<Value, ViewError> {
        let series = Series::read(self.log)?;
        let meta = self
            .sidecar
            .as_ref()
            .map_err(|e| ViewError::Sidecar(e.clone()))?;
        let rows = series.get("time_us").map_or(0, <[f64]>::len);
        let (stride, kept) = kept_rows(rows, cap);
        let mut cols = serde_json::Map::new();
        let mut add = |name: &str, c: &[f64]| {
            let exact = EXACT.contains(&name);
            let v: Vec<Value> = kept
                .iter()
                .map(|&i| if exact { c[i] } else { six_digits(c[i]) })
                .map(|x| serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number))
                .collect();
            cols.insert(name.to_string(), Value::Array(v));
        };
        for name in COLUMNS {
            if let Some(c) = series.get(name) {
                add(name, c);
            }
        }
        for (prefix, suffix) in INDEXED {
            for (name, c) in series.indexed(prefix, suffix) {
                add(&name, c);
            }
        }
        let (airframe, airframe_note) = match &meta.airframe {
            Some(a) => (a.clone(), Value::Null),
            None => (
                even_airframe(meta.rotors.max(1)),
                Value::String(format!(
                    "the log's sidecar has no airframe (written by an older lockstep): {} rotors drawn evenly spaced",
                    meta.rotors
                )),
            ),
        };
        let report = self.report.cloned().unwrap_or(Value::Null);
        let pick = |k: &str| report.get(k).cloned().unwrap_or(Value::Null);
        Ok(json!({
            "name": self.name,
            "log": self.log.display().to_string(),
            "scenario": meta.scenario,
            "spec": meta.spec,
            // A string: a u64 seed is past a JavaScript number's exact range.
            "seed": meta.seed.map(|s| s.to_string()),
            "complete": meta.complete,
            "digest": meta.digest,
            "modes": meta.modes,
            "fault_bits": meta.fault_bits,
            "airframe": airframe,
            "airframe_note": airframe_note,
            "rows": rows,
            "stride": stride,
            "cols": cols,
            "waypoints": self.waypoints.iter().map(|(n, e)| [*n, *e]).collect::<Vec<_>>(),
            "timeline": pick("timeline"),
            "verdict": pick("verdict"),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_logs_keep_every_kth_row_and_the_last() {
        assert_eq!(kept_rows(5, 10), (1, vec![0, 1, 2, 3, 4]));
        assert_eq!(kept_rows(10, 4), (3, vec![0, 3, 6, 9]));
        assert_eq!(kept_rows(11, 4), (3, vec![0, 3, 6, 9, 10]));
        assert_eq!(kept_rows(0, 4), (1, vec![]));
    }

    #[test]
    fn plotted_columns_keep_six_significant_digits() {
        assert_eq!(six_digits(12.302903878243521), 12.3029);
        assert_eq!(six_digits(-0.00040109028), -0.00040109);
        assert_eq!(six_digits(1.0e-300), 1.0e-300);
        assert_eq!(six_digits(0.0), 0.0);
        assert!(six_digits(f64::NAN).is_nan());
    }

    #[test]
    fn an_even_airframe_has_the_rotor_count_and_alternating_spins() {
        let a = even_airframe(6);
        let r = a["rotors"].as_array().unwrap();
        assert_eq!(r.len(), 6);
        assert_eq!(r[0]["spin_dir"], 1);
        assert_eq!(r[1]["spin_dir"], -1);
        let p = r[3]["position_m"].as_array().unwrap();
        let d = (p[0].as_f64().unwrap().powi(2) + p[1].as_f64().unwrap().powi(2)).sqrt();
        assert!((d - 0.25).abs() < 1e-12);
    }
}

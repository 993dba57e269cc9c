//! What a flight did, as one value: the CLI prints it as text or as one
//! JSON object (`lockstep fly --json`), and writes it next to the log.

use std::io::Read;
use std::path::Path;

use sha2::{Digest, Sha256};

use crate::outcome::Summary;
use crate::outcome::journal::Entry;

/// The report's format version (the JSON's `report_version`).
pub const REPORT_VERSION: u32 = 1;

/// How the run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The run reached its planned end (the verdict says whether it met
    /// its expectations).
    Completed,
    /// An error stopped it (`error` says which).
    Stopped,
    /// SIGINT or SIGTERM stopped it.
    Interrupted,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct FinalState {
    pub mode: &'static str,
    pub armed: bool,
    pub position_ned_m: [f64; 3],
    pub altitude_m: f64,
    pub mission_finished: bool,
    /// State of charge of the first pack, 0..1.
    pub soc: f64,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LogReport {
    pub path: String,
    pub rows: u64,
    pub last_time_us: Option<u64>,
    /// False when writing it failed (the rows on disk are whole).
    pub complete: bool,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CrashReport {
    pub time_us: u64,
    pub what: String,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CheckReport {
    pub key: &'static str,
    pub passed: bool,
    pub detail: String,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct VerdictReport {
    pub passed: bool,
    pub crashes: Vec<CrashReport>,
    pub crashes_allowed: bool,
    pub checks: Vec<CheckReport>,
}

/// One flight, as `fly` reports it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct FlightReport {
    pub report_version: u32,
    pub scenario: String,
    pub description: Option<String>,
    pub autopilot: String,
    pub isolated: bool,
    pub vehicle: String,
    pub rotors: usize,
    pub seed: u64,
    pub outcome: Outcome,
    /// The error that stopped the run, if any.
    pub error: Option<String>,
    /// The process's exit status.
    pub exit_status: u8,
    /// Simulated time reached, µs.
    pub simulated_us: u64,
    pub boundaries: u64,
    pub wall_time_s: f64,
    /// Simulated time over wall time.
    pub real_time_factor: f64,
    /// Present when the run completed.
    pub final_state: Option<FinalState>,
    pub log: Option<LogReport>,
    pub recording: Option<String>,
    /// The plots drawn (PNG and SVG).
    pub plots: Vec<String>,
    /// The ULog export, when one was written.
    pub ulog: Option<String>,
    /// `sha256:<hex>` of the log file, when there is one.
    pub digest: Option<String>,
    /// Present when the run completed.
    pub verdict: Option<VerdictReport>,
    pub timeline: Vec<Entry>,
    pub timeline_dropped: u64,
}

impl FinalState {
    pub fn of(s: &Summary) -> FinalState {
        FinalState {
            mode: lockstep_abi::mode_name(s.mode),
            armed: s.armed,
            position_ned_m: s.position_ned_m,
            altitude_m: -s.position_ned_m[2],
            mission_finished: s.mission_finished,
            soc: s.soc,
        }
    }
}

impl VerdictReport {
    pub fn of(s: &Summary) -> VerdictReport {
        let v = &s.verdict;
        VerdictReport {
            passed: v.passed(),
            crashes: v
                .crashes
                .iter()
                .map(|c| CrashReport {
                    time_us: c.time.0,
                    what: c.to_string(),
                })
                .collect(),
            crashes_allowed: v.crashes_allowed,
            checks: v
                .checks
                .iter()
                .map(|c| CheckReport {
                    key: c.key,
                    passed: c.passed,
                    detail: c.detail.clone(),
                })
                .collect(),
        }
    }
}

/// Simulated over wall time; 0 when no wall time passed (a run of
/// nothing), never infinite or NaN (JSON has neither).
pub fn real_time_factor(simulated_us: u64, wall_s: f64) -> f64 {
    let r = simulated_us as f64 * 1e-6 / wall_s;
    if r.is_finite() { r } else { 0.0 }
}

/// `sha256:<64 hex digits>` of the file at `path`.
pub fn file_digest(path: &Path) -> std::io::Result<String> {
    let mut f = std::fs::File::open(path)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    let mut s = String::with_capacity(71);
    s.push_str("sha256:");
    for b in h.finalize() {
        s.push_str(&format!("{b:02x}"));
    }
    Ok(s)
}

#[derive(Debug, serde::Serialize)]
struct VehicleOutcome<'a> {
    passed: bool,
    final_state: FinalState,
    verdict: VerdictReport,
    timeline: &'a [Entry],
    timeline_dropped: u64,
}

/// A vehicle's outcome as one JSON object (`passed`, `final_state`,
/// `verdict`, `timeline`, `timeline_dropped`): what a fleet or a
/// co-simulation reports for each of its vehicles, the same whether it ran
/// in one process or across many.
pub fn summary_json(s: &Summary) -> String {
    serde_json::to_string(&VehicleOutcome {
        passed: s.verdict.passed(),
        final_state: FinalState::of(s),
        verdict: VerdictReport::of(s),
        timeline: &s.timeline,
        timeline_dropped: s.timeline_dropped,
    })
    .expect("a vehicle's outcome serializes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_digest_is_sha256_of_the_file() {
        let dir = std::env::temp_dir().join(format!("lockstep-digest-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("abc");
        std::fs::write(&p, b"abc").unwrap();
        // FIPS 180-2, appendix B.1.
        assert_eq!(
            file_digest(&p).unwrap(),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_real_time_factor_is_always_a_number() {
        assert_eq!(real_time_factor(2_000_000, 0.5), 4.0);
        assert_eq!(real_time_factor(2_000_000, 0.0), 0.0);
        assert_eq!(real_time_factor(0, 0.0), 0.0);
    }
}

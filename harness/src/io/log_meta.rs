//! The flight log's JSON sidecar, `<log>.json` next to `<log>`: what a CSV
//! cannot say in its header line. It holds the schema version, the scenario,
//! spec, seed, autopilot, world origin and versions, each column's unit,
//! the mode and fault-bit tables, and, once the run has ended, the row
//! count, the last time and the log's SHA-256 digest.
//!
//! It is written when the log is created (`complete: false`, no digest) and
//! rewritten when the log is finished.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use lockstep_plant::multirotor::Multirotor;

use crate::io::log::{LOG_SCHEMA_VERSION, header};

/// `<log>.json`: the log's name with `.json` appended (never the log
/// itself, whatever the log is called).
pub fn sidecar_path(log: &Path) -> PathBuf {
    let mut s = log.as_os_str().to_owned();
    s.push(".json");
    PathBuf::from(s)
}

#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct Column {
    pub name: String,
    /// SI symbol; `1` for a dimensionless value, `code` for an enumeration
    /// (see `modes`), `bits` for a mask (see `fault_bits`), `text` for a
    /// name (`mode_name`).
    pub unit: String,
}

#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct Origin {
    pub lat_deg: f64,
    pub lon_deg: f64,
    pub alt_m: f64,
}

/// Where a rotor is and which way it turns: what a viewer needs to draw
/// the vehicle as flown.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RotorPlace {
    /// Hub position from the centre of mass, body FRD.
    pub position_m: [f64; 3],
    /// +1 counter-clockwise seen from the thrust side, -1 clockwise.
    pub spin_dir: i32,
}

/// The vehicle's drawable shape.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Airframe {
    pub rotors: Vec<RotorPlace>,
    pub propeller_radius_m: f64,
}

impl Airframe {
    pub fn of(plant: &Multirotor) -> Airframe {
        Airframe {
            rotors: plant
                .rotors
                .iter()
                .map(|r| RotorPlace {
                    position_m: r.position_m.into(),
                    spin_dir: if r.spin_dir < 0.0 { -1 } else { 1 },
                })
                .collect(),
            propeller_radius_m: plant.propeller.radius_m,
        }
    }
}

/// The sidecar's contents: written by the engine beside its log, and read
/// back ([`LogMeta::read`]) by whatever draws or shows a log (the plots,
/// the viewer). Read leniently: a key an older lockstep did not write is
/// its default (no airframe, no mission, no digest).
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct LogMeta {
    pub log_schema_version: u32,
    pub lockstep_version: String,
    pub scenario: String,
    pub spec: String,
    /// The run's seed (none for a replay, which has no randomness).
    pub seed: Option<u64>,
    pub autopilot: String,
    /// The mission file flown, if any (for the plots' waypoints).
    pub mission: Option<String>,
    pub origin: Origin,
    pub rotors: usize,
    pub batteries: usize,
    /// The rotors' places and the propellers' radius (none in a sidecar of
    /// an older lockstep).
    pub airframe: Option<Airframe>,
    pub columns: Vec<Column>,
    /// `mode` column: code -> name.
    pub modes: BTreeMap<u32, String>,
    /// `faults` column: bit -> meaning.
    pub fault_bits: BTreeMap<u32, String>,
    /// False until the log is finished (and after a write failed).
    pub complete: bool,
    pub rows: Option<u64>,
    pub last_time_us: Option<u64>,
    /// `sha256:<hex>` of the finished log.
    pub digest: Option<String>,
}

/// Why a log's sidecar could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SidecarError {
    #[error("cannot read {}: {reason}", path.display())]
    Read { path: PathBuf, reason: String },
    #[error("{}: not a flight log's sidecar: {reason}", path.display())]
    Invalid { path: PathBuf, reason: String },
}

/// The unit of a column, from its name's suffix.
pub fn unit_of(column: &str) -> &'static str {
    const SUFFIXES: [(&str, &str); 12] = [
        ("_us", "us"),
        ("_mps2", "m/s^2"),
        ("_mps", "m/s"),
        ("_radps", "rad/s"),
        ("_rad", "rad"),
        ("_deg", "deg"),
        ("_kgpm3", "kg/m^3"),
        ("_m", "m"),
        ("_n", "N"),
        ("_v", "V"),
        ("_a", "A"),
        ("_soc", "1"),
    ];
    match column {
        "mode" => return "code",
        "mode_name" => return "text",
        "faults" => return "bits",
        _ => {}
    }
    SUFFIXES
        .iter()
        .find(|(s, _)| column.ends_with(s))
        .map_or("1", |(_, u)| u)
}

impl LogMeta {
    /// The metadata of a log of `plant`, before the run.
    pub fn new(scenario: &Path, plant: &Multirotor, seed: u64, autopilot: &Path) -> LogMeta {
        let g = plant.origin.geodetic;
        let origin = Origin {
            lat_deg: g.lat_deg,
            lon_deg: g.lon_deg,
            alt_m: g.alt_m,
        };
        let (rotors, batteries) = (plant.rotors.len(), plant.batteries.len());
        use crate::io::log::fault_bits as fb;
        let modes = (0..=lockstep_abi::ffi::LOCKSTEP_MODE_STACK)
            .map(|m| (m, lockstep_abi::mode_name(m).to_string()))
            .collect();
        let mut fault_bits = BTreeMap::new();
        for i in 0..rotors as u32 {
            fault_bits.insert(fb::MOTOR_FAILED + i, format!("motor {i} failed"));
        }
        fault_bits.insert(fb::THRUST_LOSS, "thrust loss on a motor".to_string());
        for j in 0..batteries as u32 {
            fault_bits.insert(fb::BATTERY + j, format!("battery {j} disconnected"));
        }
        for (k, s) in ["imu", "mag", "baro", "gps", "estimator"]
            .iter()
            .enumerate()
        {
            fault_bits.insert(fb::SENSOR + k as u32, format!("{s} faulted"));
        }
        LogMeta {
            log_schema_version: LOG_SCHEMA_VERSION,
            lockstep_version: env!("CARGO_PKG_VERSION").to_string(),
            scenario: scenario.display().to_string(),
            spec: plant.name.clone(),
            seed: Some(seed),
            autopilot: autopilot.display().to_string(),
            mission: None,
            origin,
            rotors,
            batteries,
            airframe: Some(Airframe::of(plant)),
            columns: header(rotors, batteries)
                .into_iter()
                .map(|name| Column {
                    unit: unit_of(&name).to_string(),
                    name,
                })
                .collect(),
            modes,
            fault_bits,
            complete: false,
            rows: None,
            last_time_us: None,
            digest: None,
        }
    }

    /// The sidecar of the log at `log`; why not, naming the file.
    pub fn read(log: &Path) -> Result<LogMeta, SidecarError> {
        let path = sidecar_path(log);
        let text = std::fs::read_to_string(&path).map_err(|e| SidecarError::Read {
            path: path.clone(),
            reason: e.to_string(),
        })?;
        serde_json::from_str(&text).map_err(|e| SidecarError::Invalid {
            path,
            reason: e.to_string(),
        })
    }

    /// Writes the sidecar of the log at `log`.
    pub fn write(&self, log: &Path) -> std::io::Result<()> {
        let path = sidecar_path(log);
        let text = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        std::fs::write(&path, text + "\n").map_err(|e| {
            std::io::Error::new(e.kind(), format!("cannot write {}: {e}", path.display()))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_column_has_a_unit_from_its_name() {
        let units: Vec<(String, &str)> = header(4, 1)
            .into_iter()
            .map(|c| {
                let u = unit_of(&c);
                (c, u)
            })
            .collect();
        let get = |n: &str| units.iter().find(|(c, _)| c == n).unwrap().1;
        assert_eq!(get("time_us"), "us");
        assert_eq!(get("x_m"), "m");
        assert_eq!(get("vx_mps"), "m/s");
        assert_eq!(get("sp_ax_mps2"), "m/s^2");
        assert_eq!(get("p_radps"), "rad/s");
        assert_eq!(get("sp_yaw_rad"), "rad");
        assert_eq!(get("lat_deg"), "deg");
        assert_eq!(get("alt_m"), "m");
        assert_eq!(get("rotor0_thrust_n"), "N");
        assert_eq!(get("air_density_kgpm3"), "kg/m^3");
        assert_eq!(get("battery0_v"), "V");
        assert_eq!(get("battery0_a"), "A");
        assert_eq!(get("battery0_soc"), "1");
        assert_eq!(get("qw"), "1");
        assert_eq!(get("motor0"), "1");
        assert_eq!(get("mode"), "code");
        assert_eq!(get("faults"), "bits");
    }

    #[test]
    fn the_sidecar_is_the_log_name_with_json_appended() {
        assert_eq!(
            sidecar_path(Path::new("/tmp/flight.csv")),
            Path::new("/tmp/flight.csv.json")
        );
        assert_eq!(sidecar_path(Path::new("x.json")), Path::new("x.json.json"));
    }

    #[test]
    fn a_sidecar_reads_back_as_written_and_an_older_one_leniently() {
        let dir = std::env::temp_dir().join(format!("lockstep-sidecar-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let log = dir.join("flight.csv");
        let plant = lockstep_plant::spec::AircraftSpec::builtin("iris")
            .unwrap()
            .build()
            .unwrap();
        let meta = LogMeta {
            mission: Some("box.waypoints".into()),
            digest: Some("sha256:00".into()),
            ..LogMeta::new(Path::new("s.toml"), &plant, 7, Path::new("ap.so"))
        };
        meta.write(&log).unwrap();
        assert_eq!(LogMeta::read(&log).unwrap(), meta);
        // An older lockstep's: no airframe, no mission, no fault bits.
        std::fs::write(
            sidecar_path(&log),
            r#"{"scenario": "s.toml", "spec": "iris", "seed": 3, "rotors": 4, "modes": {"0": "manual", "10": "stack"}}"#,
        )
        .unwrap();
        let old = LogMeta::read(&log).unwrap();
        assert_eq!(
            (old.seed, old.rotors, old.airframe, old.mission),
            (Some(3), 4, None, None)
        );
        assert_eq!(old.modes[&10], "stack");
        std::fs::write(sidecar_path(&log), "{").unwrap();
        let e = LogMeta::read(&log).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!(
                "{}: not a flight log's sidecar: ",
                sidecar_path(&log).display()
            )),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
        let e = LogMeta::read(&log).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!("cannot read {}: ", sidecar_path(&log).display())),
            "{e}"
        );
    }
}

//! ULog export of a flight log (PX4's binary log format, as pyulog, Flight
//! Review and PlotJuggler read it), with PX4's topic names:
//!
//! | topic | from the log |
//! |---|---|
//! | `vehicle_local_position` | the estimate the autopilot received (`est_*`) |
//! | `vehicle_local_position_groundtruth` | the truth (`x_m`...) |
//! | `vehicle_local_position_setpoint` | the autopilot's setpoints (`sp_*`) |
//! | `vehicle_attitude` / `vehicle_attitude_groundtruth` | estimated / true quaternion |
//! | `vehicle_angular_velocity` | true body rates |
//! | `vehicle_global_position` | the truth's latitude, longitude, altitude (the harness's estimate is local only) |
//! | `actuator_motors` | motor commands (`control[12]`, NaN beyond the vehicle's rotors) |
//! | `battery_status` | the first pack's voltage, current and state of charge |
//! | `wind` | the wind's north and east components |
//!
//! The format (docs.px4.io, "ULog File Format"): a 16-byte header (magic,
//! version 1, start time), then messages of `u16 size, u8 type, payload`:
//! formats (`F`) and information (`I`), then subscriptions (`A`) and data
//! (`D`), every field little-endian and packed in the format's order.

use std::io::Write;
use std::path::Path;

/// A topic: its name, its format's fields (after `uint64_t timestamp`),
/// and how each field is taken from a log row.
struct Topic {
    name: &'static str,
    fields: Vec<(&'static str, Source)>,
}

/// Where a field's value comes from.
enum Source {
    /// A float column.
    F32(&'static str),
    /// A double column.
    F64(&'static str),
    /// `float[n]` from columns (missing ones NaN).
    F32s(Vec<String>),
}

fn topics() -> Vec<Topic> {
    use Source::*;
    let col = |p: &str, n: usize| (0..n).map(|i| format!("{p}{i}")).collect::<Vec<_>>();
    vec![
        Topic {
            name: "vehicle_local_position",
            fields: vec![
                ("float x", F32("est_x_m")),
                ("float y", F32("est_y_m")),
                ("float z", F32("est_z_m")),
                ("float vx", F32("est_vx_mps")),
                ("float vy", F32("est_vy_mps")),
                ("float vz", F32("est_vz_mps")),
            ],
        },
        Topic {
            name: "vehicle_local_position_groundtruth",
            fields: vec![
                ("float x", F32("x_m")),
                ("float y", F32("y_m")),
                ("float z", F32("z_m")),
                ("float vx", F32("vx_mps")),
                ("float vy", F32("vy_mps")),
                ("float vz", F32("vz_mps")),
            ],
        },
        Topic {
            name: "vehicle_local_position_setpoint",
            fields: vec![
                ("float x", F32("sp_x_m")),
                ("float y", F32("sp_y_m")),
                ("float z", F32("sp_z_m")),
                ("float vx", F32("sp_vx_mps")),
                ("float vy", F32("sp_vy_mps")),
                ("float vz", F32("sp_vz_mps")),
                ("float yaw", F32("sp_yaw_rad")),
            ],
        },
        Topic {
            name: "vehicle_attitude",
            fields: vec![(
                "float[4] q",
                F32s(
                    ["est_qw", "est_qx", "est_qy", "est_qz"]
                        .map(String::from)
                        .to_vec(),
                ),
            )],
        },
        Topic {
            name: "vehicle_attitude_groundtruth",
            fields: vec![(
                "float[4] q",
                F32s(["qw", "qx", "qy", "qz"].map(String::from).to_vec()),
            )],
        },
        Topic {
            name: "vehicle_angular_velocity",
            fields: vec![(
                "float[3] xyz",
                F32s(["p_radps", "q_radps", "r_radps"].map(String::from).to_vec()),
            )],
        },
        Topic {
            name: "vehicle_global_position",
            fields: vec![
                ("double lat", F64("lat_deg")),
                ("double lon", F64("lon_deg")),
                ("float alt", F32("alt_m")),
            ],
        },
        Topic {
            name: "actuator_motors",
            fields: vec![("float[12] control", F32s(col("motor", 12)))],
        },
        Topic {
            name: "battery_status",
            fields: vec![
                ("float voltage_v", F32("battery0_v")),
                ("float current_a", F32("battery0_a")),
                ("float remaining", F32("battery0_soc")),
            ],
        },
        Topic {
            name: "wind",
            fields: vec![
                ("float windspeed_north", F32("wind_n_mps")),
                ("float windspeed_east", F32("wind_e_mps")),
            ],
        },
    ]
}

/// Appends one message: size, type, payload.
fn message(out: &mut Vec<u8>, kind: u8, payload: &[u8]) -> Result<(), String> {
    let size = u16::try_from(payload.len())
        .map_err(|_| format!("a ULog message of {} bytes is too long", payload.len()))?;
    out.extend_from_slice(&size.to_le_bytes());
    out.push(kind);
    out.extend_from_slice(payload);
    Ok(())
}

fn info(out: &mut Vec<u8>, key: &str, value: &str) -> Result<(), String> {
    let key = format!("char[{}] {key}", value.len());
    let mut p = vec![key.len() as u8];
    p.extend_from_slice(key.as_bytes());
    p.extend_from_slice(value.as_bytes());
    message(out, b'I', &p)
}

/// How many rows and topics an export wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exported {
    pub rows: u64,
    pub topics: usize,
}

/// Writes the ULog form of the flight log at `log` (CSV, header on line 1)
/// to `out`. Errors name the file and the line or column.
pub fn export(log: &Path, out: &Path) -> Result<Exported, String> {
    let name = log.display();
    let mut r = csv::ReaderBuilder::new()
        .from_path(log)
        .map_err(|e| format!("cannot read log {name}: {e}"))?;
    let header = r.headers().map_err(|e| format!("log {name}: {e}"))?.clone();
    let index = |c: &str| header.iter().position(|h| h == c);
    let time = index("time_us").ok_or_else(|| format!("log {name}: no `time_us` column"))?;
    let topics = topics();
    // Column indices per field; a required scalar column must exist.
    let mut plan: Vec<Vec<(Vec<Option<usize>>, bool)>> = Vec::new();
    for t in &topics {
        let mut fields = Vec::new();
        for (_, src) in &t.fields {
            fields.push(match src {
                Source::F32(c) | Source::F64(c) => {
                    let i = index(c).ok_or_else(|| {
                        format!("log {name}: no `{c}` column (is it a lockstep flight log?)")
                    })?;
                    (vec![Some(i)], matches!(src, Source::F64(_)))
                }
                Source::F32s(cs) => (cs.iter().map(|c| index(c)).collect(), false),
            });
        }
        plan.push(fields);
    }
    let mut buf = Vec::with_capacity(1 << 20);
    buf.extend_from_slice(b"ULog\x01\x12\x35");
    buf.push(1);
    buf.extend_from_slice(&0u64.to_le_bytes());
    info(&mut buf, "sys_name", "lockstep")?;
    info(&mut buf, "ver_sw", env!("CARGO_PKG_VERSION"))?;
    for t in &topics {
        let fields: Vec<&str> = t.fields.iter().map(|(f, _)| *f).collect();
        let format = format!("{}:uint64_t timestamp;{};", t.name, fields.join(";"));
        message(&mut buf, b'F', format.as_bytes())?;
    }
    for (id, t) in topics.iter().enumerate() {
        let mut p = vec![0u8];
        p.extend_from_slice(&(id as u16).to_le_bytes());
        p.extend_from_slice(t.name.as_bytes());
        message(&mut buf, b'A', &p)?;
    }
    let mut rows = 0u64;
    let mut payload = Vec::with_capacity(128);
    for (line, rec) in r.records().enumerate() {
        let line = line + 2;
        let rec = rec.map_err(|e| format!("log {name}: line {line}: {e}"))?;
        let number = |k: usize| -> Result<f64, String> {
            let text = rec.get(k).unwrap_or("");
            text.parse().map_err(|_| {
                format!(
                    "log {name}: line {line}: `{}` is `{text}`, not a number",
                    &header[k]
                )
            })
        };
        let t: u64 = rec
            .get(time)
            .unwrap_or("")
            .parse()
            .map_err(|_| format!("log {name}: line {line}: time_us is not a time"))?;
        for (id, fields) in plan.iter().enumerate() {
            payload.clear();
            payload.extend_from_slice(&(id as u16).to_le_bytes());
            payload.extend_from_slice(&t.to_le_bytes());
            for (cols, double) in fields {
                for c in cols {
                    let v = match c {
                        Some(k) => number(*k)?,
                        None => f64::NAN,
                    };
                    if *double {
                        payload.extend_from_slice(&v.to_le_bytes());
                    } else {
                        payload.extend_from_slice(&(v as f32).to_le_bytes());
                    }
                }
            }
            message(&mut buf, b'D', &payload)?;
        }
        rows += 1;
    }
    let mut f =
        std::fs::File::create(out).map_err(|e| format!("cannot write {}: {e}", out.display()))?;
    f.write_all(&buf)
        .map_err(|e| format!("cannot write {}: {e}", out.display()))?;
    Ok(Exported {
        rows,
        topics: topics.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The header and the first messages, byte for byte against the format.
    #[test]
    fn header_and_messages_follow_the_format() {
        let dir = std::env::temp_dir().join(format!("lockstep-ulog-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let log = dir.join("l.csv");
        let cols = crate::io::log::header(4, 1);
        let row: Vec<String> = cols
            .iter()
            .enumerate()
            .map(|(i, c)| {
                if c == "time_us" {
                    "1000".into()
                } else {
                    format!("{i}")
                }
            })
            .collect();
        std::fs::write(&log, format!("{}\n{}\n", cols.join(","), row.join(","))).unwrap();
        let out = dir.join("l.ulg");
        let e = export(&log, &out).unwrap();
        assert_eq!(
            e,
            Exported {
                rows: 1,
                topics: 10
            }
        );
        let b = std::fs::read(&out).unwrap();
        assert_eq!(&b[..8], b"ULog\x01\x12\x35\x01");
        // The first message: info `char[8] sys_name` = "lockstep".
        let size = u16::from_le_bytes([b[16], b[17]]) as usize;
        assert_eq!(b[18], b'I');
        assert_eq!(&b[19..19 + size], b"\x10char[8] sys_namelockstep");
        // Ten data messages of the one row, the last one the wind's: id 9,
        // time 1000, then the two components.
        let wind = 2 + 8 + 4 + 4;
        let tail = &b[b.len() - (3 + wind)..];
        assert_eq!(u16::from_le_bytes([tail[0], tail[1]]) as usize, wind);
        assert_eq!(tail[2], b'D');
        assert_eq!(u16::from_le_bytes([tail[3], tail[4]]), 9);
        assert_eq!(u64::from_le_bytes(tail[5..13].try_into().unwrap()), 1000);
        let n = cols.iter().position(|c| c == "wind_n_mps").unwrap();
        assert_eq!(
            f32::from_le_bytes(tail[13..17].try_into().unwrap()),
            n as f32
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

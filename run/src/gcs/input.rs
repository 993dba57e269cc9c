//! What a ground station changes in a flight, as decoded from its MAVLink
//! messages, and the file that records it: one JSON object per line, each
//! with the simulated time (µs) of the boundary after which it applied (and
//! in a fleet, the vehicle it applied to, by name).
//! Replaying the file applies the same inputs after the same boundaries
//! through the same code, so the flight is the live one bit for bit, with
//! no network and at any speed.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use lockstep_abi::ffi::lockstep_mission_item;
use lockstep_harness::engine::Engine;
use lockstep_harness::inputs::scenario::Action;
use lockstep_harness::io::ulog::Param;
use serde::{Deserialize, Serialize};

/// One input of a ground station.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "input", rename_all = "snake_case")]
pub enum Input {
    /// A command through the scenario's command path (`arm`, `disarm`,
    /// `takeoff`, `mission_start`, `rtl`, `land`, `hold`).
    Command { command: String },
    /// A takeoff to a height above home, m (a station's NAV_TAKEOFF with
    /// an altitude; without one it is the command `takeoff`).
    Takeoff { height_m: f64 },
    /// A setpoint flown, in the contract's terms: a station's
    /// SET_POSITION_TARGET_* or SET_ATTITUDE_TARGET while offboard is
    /// engaged, sticks in position control, or a DO_REPOSITION.
    Setpoint(super::offboard::Setpoint),
    /// A mission uploaded (replacing the autopilot's), in the contract's
    /// items.
    Mission { items: Vec<Item> },
    /// A float parameter set.
    ParamF32 {
        name: String,
        #[serde(with = "exact")]
        value: f32,
    },
    /// An integer parameter set.
    ParamI32 { name: String, value: i32 },
}

/// A mission item as the contract has it (`lockstep_mission_item`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Item {
    pub command: u32,
    pub frame: u32,
    #[serde(with = "exact_array")]
    pub params: [f32; 4],
    pub lat_deg: f64,
    pub lon_deg: f64,
    #[serde(with = "exact")]
    pub alt_m: f32,
    pub autocontinue: u32,
}

impl Item {
    pub fn of(it: &lockstep_mission_item) -> Item {
        Item {
            command: it.command,
            frame: it.frame,
            params: [it.param1, it.param2, it.param3, it.param4],
            lat_deg: it.lat_deg,
            lon_deg: it.lon_deg,
            alt_m: it.alt_m,
            autocontinue: it.autocontinue,
        }
    }

    pub fn contract(&self) -> lockstep_mission_item {
        lockstep_mission_item {
            command: self.command,
            frame: self.frame,
            param1: self.params[0],
            param2: self.params[1],
            param3: self.params[2],
            param4: self.params[3],
            lat_deg: self.lat_deg,
            lon_deg: self.lon_deg,
            alt_m: self.alt_m,
            autocontinue: self.autocontinue,
        }
    }
}

impl Input {
    /// Applies the input to the flight now (the one place live and replayed
    /// inputs take effect). A refusal (the autopilot rejects the mission or
    /// the parameter) is returned for the ground station's answer; the
    /// flight goes on.
    pub fn apply(&self, engine: &mut Engine) -> Result<(), String> {
        match self {
            Input::Command { command } => {
                let action = Action::command(command)
                    .ok_or_else(|| format!("unknown command {command:?}"))?;
                engine.apply_now(action);
                Ok(())
            }
            Input::Takeoff { height_m } => {
                if engine.autopilot().abi_version() < 4 {
                    return Err(format!(
                        "takeoff to {height_m} m refused: the autopilot (ABI {}) has no takeoff height",
                        engine.autopilot().abi_version()
                    ));
                }
                engine.apply_now(Action::Takeoff {
                    height_m: Some(*height_m),
                });
                Ok(())
            }
            Input::Setpoint(sp) => {
                engine.apply_now(Action::Setpoint {
                    kind: sp.kind.contract(),
                    vector: sp.vector,
                    yaw_rad: sp.yaw_rad,
                    thrust: sp.thrust,
                });
                Ok(())
            }
            Input::Mission { items } => {
                let items: Vec<lockstep_mission_item> = items.iter().map(Item::contract).collect();
                engine.upload_mission(&items).map_err(|e| e.to_string())
            }
            Input::ParamF32 { name, value } => engine
                .set_param(name, Param::Float(*value))
                .map_err(|e| e.to_string()),
            Input::ParamI32 { name, value } => engine
                .set_param(name, Param::Int(*value))
                .map_err(|e| e.to_string()),
        }
    }
}

#[derive(Debug, Serialize, Deserialize)]
struct Line {
    time_us: u64,
    /// A fleet's vehicle, by name (none in one flight's record).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    vehicle: Option<String>,
    #[serde(flatten)]
    input: Input,
}

/// Writes each input as it applies (flushed at once: a run that stops
/// keeps what was applied). On a distributed run's secondary the lines are
/// kept for the primary, which writes them.
#[derive(Debug)]
pub struct Recorder {
    sink: Sink,
}

#[derive(Debug)]
enum Sink {
    File {
        path: PathBuf,
        file: std::io::BufWriter<std::fs::File>,
    },
    Lines(Vec<String>),
}

impl Recorder {
    pub fn create(path: &Path) -> Result<Recorder, String> {
        let file = std::fs::File::create(path)
            .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        Ok(Recorder {
            sink: Sink::File {
                path: path.to_path_buf(),
                file: std::io::BufWriter::new(file),
            },
        })
    }

    /// A record kept in memory (see [`Recorder::take_lines`]).
    pub(crate) fn in_memory() -> Recorder {
        Recorder {
            sink: Sink::Lines(Vec::new()),
        }
    }

    /// The lines kept since the last call (a record in memory).
    pub(crate) fn take_lines(&mut self) -> Vec<String> {
        match &mut self.sink {
            Sink::Lines(l) => std::mem::take(l),
            Sink::File { .. } => Vec::new(),
        }
    }

    fn write(&mut self, time_us: u64, vehicle: Option<&str>, input: &Input) -> Result<(), String> {
        let line = Line {
            time_us,
            vehicle: vehicle.map(str::to_string),
            input: input.clone(),
        };
        let text = serde_json::to_string(&line).map_err(|e| e.to_string())?;
        self.write_line(text)
    }

    /// One line as it is (a line a secondary recorded).
    pub(crate) fn write_line(&mut self, text: String) -> Result<(), String> {
        match &mut self.sink {
            Sink::File { path, file } => writeln!(file, "{text}")
                .and_then(|()| file.flush())
                .map_err(|e| format!("writing {}: {e}", path.display())),
            Sink::Lines(l) => {
                l.push(text);
                Ok(())
            }
        }
    }
}

/// One vehicle's way into a record the vehicles of a run share.
#[derive(Debug)]
pub(crate) struct Recording {
    recorder: Arc<Mutex<Recorder>>,
    vehicle: Option<String>,
}

impl Recording {
    pub(crate) fn new(recorder: &Arc<Mutex<Recorder>>, vehicle: Option<String>) -> Recording {
        Recording {
            recorder: Arc::clone(recorder),
            vehicle,
        }
    }

    pub(crate) fn write(&self, time_us: u64, input: &Input) -> Result<(), String> {
        self.recorder
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .write(time_us, self.vehicle.as_deref(), input)
    }
}

/// The inputs of a recording, in order, each with its vehicle's index.
#[derive(Debug)]
pub struct Replay {
    inputs: std::collections::VecDeque<(u64, usize, Input)>,
}

impl Replay {
    /// The record at `path`, for a fleet's `names` (empty: one flight,
    /// whose lines name no vehicle).
    pub fn load(path: &Path, names: &[String]) -> Result<Replay, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
        Replay::parse(&text, path, names)
    }

    /// A record's `text`, read from `path` (for messages).
    pub fn parse(text: &str, path: &Path, names: &[String]) -> Result<Replay, String> {
        let mut inputs = std::collections::VecDeque::new();
        let mut last = 0;
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let l: Line = serde_json::from_str(line)
                .map_err(|e| format!("{}:{}: {e}", path.display(), i + 1))?;
            if l.time_us < last {
                return Err(format!(
                    "{}:{}: time_us {} is before the line above's {last}",
                    path.display(),
                    i + 1,
                    l.time_us
                ));
            }
            last = l.time_us;
            let at = |what: String| format!("{}:{}: {what}", path.display(), i + 1);
            let k = match (&l.vehicle, names.is_empty()) {
                (None, true) => 0,
                (Some(v), true) => {
                    return Err(at(format!(
                        "vehicle {v:?}: a fleet's record, and this is one vehicle's flight"
                    )));
                }
                (None, false) => {
                    return Err(at(
                        "no vehicle: one flight's record, and this is a fleet's".into()
                    ));
                }
                (Some(v), false) => names.iter().position(|n| n == v).ok_or_else(|| {
                    at(format!(
                        "vehicle {v:?} is not in the fleet ({})",
                        names.join(", ")
                    ))
                })?,
            };
            inputs.push_back((l.time_us, k, l.input));
        }
        Ok(Replay { inputs })
    }

    /// The inputs recorded after the boundary at `time_us`, each with its
    /// vehicle's index.
    pub fn due(&mut self, time_us: u64) -> Vec<(usize, Input)> {
        let mut out = Vec::new();
        while self.inputs.front().is_some_and(|(t, _, _)| *t <= time_us) {
            if let Some((_, k, i)) = self.inputs.pop_front() {
                out.push((k, i));
            }
        }
        out
    }
}

/// An `f32` written exactly: a finite number as JSON's shortest text (which
/// reads back to the same bits), anything else (MAVLink's NaN for "unset")
/// as its bits, e.g. `"0x7fc00000"`.
mod exact {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    #[serde(untagged)]
    pub(super) enum Repr {
        Number(f32),
        Bits(String),
    }

    pub(super) fn repr(v: f32) -> Repr {
        if v.is_finite() {
            Repr::Number(v)
        } else {
            Repr::Bits(format!("{:#010x}", v.to_bits()))
        }
    }

    pub(super) fn value<E: serde::de::Error>(r: Repr) -> Result<f32, E> {
        match r {
            Repr::Number(v) => Ok(v),
            Repr::Bits(s) => s
                .strip_prefix("0x")
                .and_then(|h| u32::from_str_radix(h, 16).ok())
                .map(f32::from_bits)
                .ok_or_else(|| {
                    E::custom(format!(
                        "{s:?} is not a number nor 0x followed by 8 hex digits"
                    ))
                }),
        }
    }

    pub(super) fn serialize<S: Serializer>(v: &f32, s: S) -> Result<S::Ok, S::Error> {
        repr(*v).serialize(s)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f32, D::Error> {
        value(Repr::deserialize(d)?)
    }
}

/// [`exact`] for the four parameters of an item.
mod exact_array {
    use super::exact::{Repr, repr, value};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub(super) fn serialize<S: Serializer>(v: &[f32; 4], s: S) -> Result<S::Ok, S::Error> {
        v.map(repr).serialize(s)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<[f32; 4], D::Error> {
        let [a, b, c, e] = <[Repr; 4]>::deserialize(d)?;
        Ok([value(a)?, value(b)?, value(c)?, value(e)?])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_round_trip_through_their_lines_bit_for_bit() {
        let odd_nan = f32::from_bits(0x7fc0_0123);
        let inputs = [
            Input::Mission {
                items: vec![Item {
                    command: 16,
                    frame: 3,
                    params: [0.5, f32::NAN, odd_nan, -0.0],
                    lat_deg: 47.397_742_1,
                    lon_deg: 8.545_594,
                    alt_m: 10.1,
                    autocontinue: 1,
                }],
            },
            Input::ParamF32 {
                name: "MPC_XY_VEL_MAX".into(),
                value: f32::INFINITY,
            },
            Input::ParamI32 {
                name: "COM_LOW_BAT_ACT".into(),
                value: -3,
            },
            Input::Command {
                command: "rtl".into(),
            },
        ];
        for input in inputs {
            let text = serde_json::to_string(&Line {
                time_us: 4000,
                vehicle: None,
                input: input.clone(),
            })
            .unwrap();
            let back: Line = serde_json::from_str(&text).unwrap();
            assert_eq!(format!("{:?}", back.input), format!("{input:?}"), "{text}");
            if let (Input::Mission { items: a }, Input::Mission { items: b }) =
                (&back.input, &input)
            {
                let bits = |i: &Item| i.params.map(f32::to_bits);
                assert_eq!(bits(&a[0]), bits(&b[0]), "{text}");
            }
        }
        // A fleet's line names its vehicle; one flight's names none.
        let named = Line {
            time_us: 9,
            vehicle: Some("bravo".into()),
            input: Input::Command {
                command: "arm".into(),
            },
        };
        let text = serde_json::to_string(&named).unwrap();
        assert_eq!(
            text,
            r#"{"time_us":9,"vehicle":"bravo","input":"command","command":"arm"}"#
        );
        let back: Line = serde_json::from_str(&text).unwrap();
        assert_eq!(back.vehicle.as_deref(), Some("bravo"));
        assert_eq!(format!("{:?}", back.input), format!("{:?}", named.input));
        let e = serde_json::from_str::<Line>(
            r#"{"time_us":1,"input":"param_f32","name":"X","value":"nan"}"#,
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .contains("\"nan\" is not a number nor 0x followed by 8 hex digits"),
            "{e}"
        );
    }
}

//! Missions as QGroundControl writes them: the `.waypoints` text format
//! (`QGC WPL 110` and `120`, [`wpl`]) and the `.plan` JSON format
//! ([`plan`]). Either gives a home position (which can set the world
//! origin) and the items to upload, in the autopilot contract's terms:
//!
//! - a parameter that is NaN (`nan` in a `.waypoints` file, `null` in a
//!   `.plan`) is unset, as in MAVLink; the autopilot uses its default;
//! - `DO_JUMP`'s param1 becomes the 0-based index of the target among the
//!   uploaded items (the file gives a sequence number, home being 0, or a
//!   `.plan` `doJumpId`);
//! - every error names the file, the line (or the `.plan` item), and the
//!   command by name and number.

mod plan;
mod wpl;

use std::path::Path;

use lockstep_abi::MAX_MISSION_ITEMS;
use lockstep_abi::ffi::lockstep_mission_item;

/// Largest mission file read: 64 MiB (65,535 items take about 5 MB).
pub const MAX_MISSION_BYTES: u64 = 64 << 20;

/// MAVLink commands the messages name.
pub mod cmd {
    pub const NAV_WAYPOINT: u32 = 16;
    pub const NAV_LOITER_UNLIM: u32 = 17;
    pub const NAV_LOITER_TIME: u32 = 19;
    pub const NAV_RETURN_TO_LAUNCH: u32 = 20;
    pub const NAV_LAND: u32 = 21;
    pub const NAV_TAKEOFF: u32 = 22;
    pub const DO_JUMP: u32 = 177;
    pub const DO_CHANGE_SPEED: u32 = 178;
}

/// `NAV_WAYPOINT (16)`, or `command 31000` for one without a name here.
pub fn command_name(command: u32) -> String {
    let name = match command {
        cmd::NAV_WAYPOINT => "NAV_WAYPOINT",
        cmd::NAV_LOITER_UNLIM => "NAV_LOITER_UNLIM",
        cmd::NAV_LOITER_TIME => "NAV_LOITER_TIME",
        cmd::NAV_RETURN_TO_LAUNCH => "NAV_RETURN_TO_LAUNCH",
        cmd::NAV_LAND => "NAV_LAND",
        cmd::NAV_TAKEOFF => "NAV_TAKEOFF",
        18 => "NAV_LOITER_TURNS",
        31 => "NAV_LOITER_TO_ALT",
        84 => "NAV_VTOL_TAKEOFF",
        85 => "NAV_VTOL_LAND",
        93 => "NAV_DELAY",
        112 => "CONDITION_DELAY",
        cmd::DO_JUMP => "DO_JUMP",
        cmd::DO_CHANGE_SPEED => "DO_CHANGE_SPEED",
        183 => "DO_SET_SERVO",
        201 => "DO_SET_ROI",
        203 => "DO_DIGICAM_CONTROL",
        205 => "DO_MOUNT_CONTROL",
        206 => "DO_SET_CAM_TRIGG_DIST",
        2000 => "IMAGE_START_CAPTURE",
        2500 => "VIDEO_START_CAPTURE",
        _ => return format!("command {command}"),
    };
    format!("{name} ({command})")
}

/// A malformed mission file.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MissionError {
    #[error("cannot read mission {path}: {reason}")]
    Io { path: String, reason: String },
    /// An error of the file's content, with the file's path.
    #[error("mission {path}: {error}")]
    InFile {
        path: String,
        error: Box<MissionError>,
    },
    #[error("{items} items; at most {MAX_MISSION_ITEMS} can be uploaded")]
    TooMany { items: usize },
    #[error("line 1: expected the header `QGC WPL 110` or `QGC WPL 120`, found `{found}`")]
    Header { found: String },
    #[error("line {line}: expected 12 fields, found {found}")]
    FieldCount { line: usize, found: usize },
    #[error("line {line}: field `{field}` is `{text}`, not {expected}")]
    BadField {
        line: usize,
        field: &'static str,
        text: String,
        expected: &'static str,
    },
    #[error("line {line}: index {found} out of sequence (expected {expected})")]
    Sequence {
        line: usize,
        expected: u32,
        found: u32,
    },
    #[error("the mission holds no home line")]
    Empty,
    #[error("the mission holds a home and no items: nothing to fly (the vehicle would sit armed)")]
    NoItems,
    /// An item whose values do not fit its command. `at` is `line 7` or
    /// `mission.items[3]`.
    #[error("{at}: {}: {reason}", command_name(*.command))]
    Item {
        at: String,
        command: u32,
        reason: String,
    },
    /// A `.plan` file that is not valid JSON or not shaped as QGroundControl
    /// writes it.
    #[error("not a QGroundControl plan: {reason}")]
    Plan { reason: String },
}

/// A parsed mission.
#[derive(Debug, Clone, PartialEq)]
pub struct Mission {
    /// QGroundControl's home position (line 0 of a `.waypoints` file, the
    /// `plannedHomePosition` of a `.plan`): frame, latitude, longitude and
    /// altitude above mean sea level.
    pub home: lockstep_mission_item,
    /// The items to upload, in order.
    pub items: Vec<lockstep_mission_item>,
}

impl Mission {
    /// Reads a `.waypoints` or `.plan` file (told apart by content: a plan
    /// is a JSON object).
    pub fn load(path: impl AsRef<Path>) -> Result<Mission, MissionError> {
        let path = path.as_ref();
        let io = |reason: String| MissionError::Io {
            path: path.display().to_string(),
            reason,
        };
        let text = lockstep_config::read_text(path, "mission", MAX_MISSION_BYTES).map_err(io)?;
        Mission::parse(&text).map_err(|error| MissionError::InFile {
            path: path.display().to_string(),
            error: Box::new(error),
        })
    }

    /// Parses the text of a `.waypoints` file, or of a `.plan` when it
    /// starts with `{`.
    pub fn parse(text: &str) -> Result<Mission, MissionError> {
        if text.trim_start().starts_with('{') {
            plan::parse(text)
        } else {
            wpl::parse(text)
        }
    }

    /// The first of the home and the positional items (in that order)
    /// farther than `max_m` metres from (lat, lon), on a sphere of the
    /// WGS-84 mean radius, with its distance.
    pub fn first_beyond(&self, lat_deg: f64, lon_deg: f64, max_m: f64) -> Option<(f64, Place)> {
        let home = (self.home.lat_deg, self.home.lon_deg);
        std::iter::once((Place::Home, home))
            .chain(
                self.items
                    .iter()
                    .enumerate()
                    .filter(|(_, it)| positional(it))
                    .map(|(i, it)| (Place::Item(i), (it.lat_deg, it.lon_deg))),
            )
            .map(|(p, (la, lo))| (great_circle_m(lat_deg, lon_deg, la, lo), p))
            .find(|(d, _)| *d > max_m)
    }
}

impl Mission {
    /// North and east (metres) of the mission's positional items from a
    /// world origin, in order (for plots).
    pub fn waypoints_ne(
        &self,
        origin: &lockstep_plant::env::geodesy::WorldOrigin,
    ) -> Vec<(f64, f64)> {
        self.items
            .iter()
            .filter(|it| positional(it))
            .map(|it| {
                let ned = origin.to_ned(lockstep_plant::env::geodesy::Geodetic {
                    lat_deg: it.lat_deg,
                    lon_deg: it.lon_deg,
                    alt_m: origin.geodetic.alt_m,
                });
                (ned[0], ned[1])
            })
            .collect()
    }
}

/// Where in a mission.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    Home,
    /// 0-based index among the uploaded items.
    Item(usize),
}

impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Place::Home => f.write_str("its home"),
            Place::Item(i) => write!(f, "item {i}"),
        }
    }
}

/// An item with a position of its own: not a DO_ command, and not at
/// latitude = longitude = 0, which means "here".
fn positional(it: &lockstep_mission_item) -> bool {
    it.command < 80 && !(it.lat_deg == 0.0 && it.lon_deg == 0.0)
}

/// Haversine distance on a sphere of the WGS-84 mean radius (R1 =
/// 6,371,008.8 m): within 0.5 % of the ellipsoid's, enough to refuse a
/// mission drawn in another place.
pub fn great_circle_m(lat1: f64, lon1: f64, lat2: f64, lon2: f64) -> f64 {
    const R: f64 = 6_371_008.8;
    let (p1, p2) = (lat1.to_radians(), lat2.to_radians());
    let dp = p2 - p1;
    let dl = (lon2 - lon1).to_radians();
    let h = (dp / 2.0).sin().powi(2) + p1.cos() * p2.cos() * (dl / 2.0).sin().powi(2);
    2.0 * R * h.sqrt().min(1.0).asin()
}

/// The item index a DO_JUMP's target becomes, checked: `target` must be
/// one of `valid` (given as `describe` in the message).
pub(crate) fn jump_index(
    at: &str,
    target: f32,
    to_index: impl Fn(f32) -> Option<usize>,
    describe: &str,
) -> Result<f32, MissionError> {
    match to_index(target) {
        Some(i) => Ok(i as f32),
        None => Err(MissionError::Item {
            at: at.to_string(),
            command: cmd::DO_JUMP,
            reason: format!("param1 (the item to jump to) is {target}, not {describe}"),
        }),
    }
}

/// The longest hold a waypoint or a timed loiter may ask for, s (the
/// longest run, `simulation.duration_s`).
pub const MAX_HOLD_S: f32 = 1e7;

/// How far below the home an item that flies to its altitude (a waypoint,
/// a takeoff, a loiter) asks to go, in the contract's two frames; `None`
/// when it is not below (or its frame is not one of them).
fn below_home(home: &lockstep_mission_item, it: &lockstep_mission_item) -> Option<f32> {
    if !matches!(
        it.command,
        cmd::NAV_WAYPOINT | cmd::NAV_TAKEOFF | cmd::NAV_LOITER_UNLIM | cmd::NAV_LOITER_TIME
    ) {
        return None;
    }
    let above_home = match it.frame {
        lockstep_abi::ffi::LOCKSTEP_MAV_FRAME_GLOBAL_RELATIVE_ALT => it.alt_m,
        lockstep_abi::ffi::LOCKSTEP_MAV_FRAME_GLOBAL => it.alt_m - home.alt_m,
        _ => return None,
    };
    (above_home < 0.0).then_some(-above_home)
}

/// Checks the count, holds and altitudes, and resolves DO_JUMP targets with `to_index` (applied
/// to param1 of every DO_JUMP, its place named by `at(i)`).
pub(crate) fn finish(
    home: lockstep_mission_item,
    mut items: Vec<lockstep_mission_item>,
    at: impl Fn(usize) -> String,
    to_index: impl Fn(f32) -> Option<usize>,
    describe: &str,
) -> Result<Mission, MissionError> {
    if items.len() > MAX_MISSION_ITEMS {
        return Err(MissionError::TooMany { items: items.len() });
    }
    if items.is_empty() {
        return Err(MissionError::NoItems);
    }
    for (i, it) in items.iter().enumerate() {
        let refuse = |reason: String| MissionError::Item {
            at: at(i),
            command: it.command,
            reason,
        };
        if matches!(it.command, cmd::NAV_WAYPOINT | cmd::NAV_LOITER_TIME)
            && !it.param1.is_nan()
            && !(0.0..=MAX_HOLD_S).contains(&it.param1)
        {
            return Err(refuse(format!(
                "param1 (the time to hold) is {} s, not in [0, {MAX_HOLD_S}]",
                it.param1
            )));
        }
        if let Some(below) = below_home(&home, it) {
            return Err(refuse(format!(
                "altitude {} m is {below} m below the home: the vehicle cannot reach it",
                it.alt_m
            )));
        }
    }
    for (i, it) in items.iter_mut().enumerate() {
        if it.command == cmd::DO_JUMP {
            it.param1 = jump_index(&at(i), it.param1, &to_index, describe)?;
        }
    }
    Ok(Mission { home, items })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_named_with_their_number() {
        assert_eq!(command_name(16), "NAV_WAYPOINT (16)");
        assert_eq!(command_name(177), "DO_JUMP (177)");
        assert_eq!(command_name(31000), "command 31000");
    }

    #[test]
    fn great_circle_distances_match_known_values() {
        // One degree of latitude on the mean sphere: R pi / 180.
        let d = great_circle_m(0.0, 0.0, 1.0, 0.0);
        assert!((d - 111_195.08).abs() < 0.01, "{d}");
        // Zurich to Canberra, about 16,600 km (sphere).
        let d = great_circle_m(47.3977, 8.5456, -35.2809, 149.13);
        assert!((d - 16_600e3).abs() < 100e3, "{d}");
        assert_eq!(great_circle_m(10.0, 20.0, 10.0, 20.0), 0.0);
    }
}

//! The vehicle's mode as a ground station reads it: PX4's custom modes
//! (main mode << 16 | sub mode << 24, `px4_custom_mode.h`) or ArduCopter's
//! mode numbers; and the other way, a ground station's mode request as a
//! command of the scenario's command path.

use lockstep_abi::ffi::*;

/// Which flight stack the vehicle looks like to a ground station.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Px4,
    ArduPilot,
}

impl Style {
    pub fn from_name(s: &str) -> Option<Style> {
        match s {
            "px4" => Some(Style::Px4),
            "ardupilot" => Some(Style::ArduPilot),
            _ => None,
        }
    }

    /// Its name, as [`Style::from_name`] reads it.
    pub fn name(self) -> &'static str {
        match self {
            Style::Px4 => "px4",
            Style::ArduPilot => "ardupilot",
        }
    }
}

const PX4_POSCTL: u32 = 3;
const PX4_AUTO: u32 = 4;
const PX4_OFFBOARD: u32 = 6;
const PX4_AUTO_TAKEOFF: u32 = 2;
const PX4_AUTO_LOITER: u32 = 3;
const PX4_AUTO_MISSION: u32 = 4;
const PX4_AUTO_RTL: u32 = 5;
const PX4_AUTO_LAND: u32 = 6;

const COPTER_AUTO: u32 = 3;
const COPTER_GUIDED: u32 = 4;
const COPTER_LOITER: u32 = 5;
const COPTER_RTL: u32 = 6;
const COPTER_LAND: u32 = 9;
const COPTER_POSHOLD: u32 = 16;
const COPTER_BRAKE: u32 = 17;

fn px4(main: u32, sub: u32) -> u32 {
    (main << 16) | (sub << 24)
}

/// HEARTBEAT's `custom_mode` for a `LOCKSTEP_MODE_*`: on the ground and
/// holding read as PX4's AUTO.LOITER (ArduCopter's LOITER).
pub fn custom_mode(style: Style, mode: u32) -> u32 {
    match style {
        Style::Px4 => match mode {
            LOCKSTEP_MODE_TAKEOFF => px4(PX4_AUTO, PX4_AUTO_TAKEOFF),
            LOCKSTEP_MODE_MISSION => px4(PX4_AUTO, PX4_AUTO_MISSION),
            LOCKSTEP_MODE_RTL => px4(PX4_AUTO, PX4_AUTO_RTL),
            LOCKSTEP_MODE_LAND => px4(PX4_AUTO, PX4_AUTO_LAND),
            LOCKSTEP_MODE_OFFBOARD => px4(PX4_OFFBOARD, 0),
            _ => px4(PX4_AUTO, PX4_AUTO_LOITER),
        },
        Style::ArduPilot => match mode {
            LOCKSTEP_MODE_TAKEOFF | LOCKSTEP_MODE_OFFBOARD => COPTER_GUIDED,
            LOCKSTEP_MODE_MISSION => COPTER_AUTO,
            LOCKSTEP_MODE_RTL => COPTER_RTL,
            LOCKSTEP_MODE_LAND => COPTER_LAND,
            _ => COPTER_LOITER,
        },
    }
}

/// A custom mode from its (main, sub) parts in `style`'s encoding (the
/// inverse of [`split`]).
pub fn compose(style: Style, main: u32, sub: u32) -> u32 {
    match style {
        Style::Px4 => px4(main & 0xFF, sub & 0xFF),
        Style::ArduPilot => main,
    }
}

/// Whether a mode request asks for a position-control mode flown with
/// sticks ([`super::manual`]): PX4's POSCTL, ArduCopter's LOITER and
/// POSHOLD.
pub fn is_manual(style: Style, main: u32, sub: u32) -> bool {
    match style {
        Style::Px4 => main == PX4_POSCTL && sub == 0,
        Style::ArduPilot => main == COPTER_LOITER || main == COPTER_POSHOLD,
    }
}

/// The mode a vehicle flying to a station's DO_REPOSITION reports: PX4's
/// AUTO.LOITER (its navigator flies a reposition in hold), ArduCopter's
/// GUIDED.
pub fn repositioning(style: Style) -> u32 {
    match style {
        Style::Px4 => px4(PX4_AUTO, PX4_AUTO_LOITER),
        Style::ArduPilot => COPTER_GUIDED,
    }
}

/// ArduCopter's AUTO: its mission's own takeoff reads AUTO, not GUIDED.
pub fn mission(style: Style) -> u32 {
    custom_mode(style, LOCKSTEP_MODE_MISSION)
}

/// The command a mode request stands for (`MAV_CMD_DO_SET_MODE`'s
/// parameters 2 and 3, or `SET_MODE`'s custom mode split the same way), or
/// `None` for a mode the reference contract has no command for.
pub fn command_for(style: Style, custom: u32, sub: u32) -> Option<&'static str> {
    match style {
        Style::Px4 => match (custom, sub) {
            (PX4_AUTO, PX4_AUTO_MISSION) => Some("mission_start"),
            (PX4_AUTO, PX4_AUTO_LOITER) => Some("hold"),
            (PX4_AUTO, PX4_AUTO_RTL) => Some("rtl"),
            (PX4_AUTO, PX4_AUTO_LAND) => Some("land"),
            (PX4_AUTO, PX4_AUTO_TAKEOFF) => Some("takeoff"),
            _ => None,
        },
        Style::ArduPilot => match custom {
            COPTER_AUTO => Some("mission_start"),
            COPTER_LOITER | COPTER_BRAKE => Some("hold"),
            COPTER_RTL => Some("rtl"),
            COPTER_LAND => Some("land"),
            _ => None,
        },
    }
}

/// Whether a mode request asks for offboard control: PX4's OFFBOARD,
/// ArduCopter's GUIDED (the stations' own path to setpoints).
pub fn is_offboard(style: Style, custom: u32, _sub: u32) -> bool {
    match style {
        Style::Px4 => custom == PX4_OFFBOARD,
        Style::ArduPilot => custom == COPTER_GUIDED,
    }
}

/// A 32-bit custom mode as (main, sub) in `style`'s encoding.
pub fn split(style: Style, custom_mode: u32) -> (u32, u32) {
    match style {
        Style::Px4 => ((custom_mode >> 16) & 0xFF, (custom_mode >> 24) & 0xFF),
        Style::ArduPilot => (custom_mode, 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_round_trip_through_each_style() {
        for style in [Style::Px4, Style::ArduPilot] {
            for (mode, command) in [
                (LOCKSTEP_MODE_MISSION, "mission_start"),
                (LOCKSTEP_MODE_HOLD, "hold"),
                (LOCKSTEP_MODE_RTL, "rtl"),
                (LOCKSTEP_MODE_LAND, "land"),
            ] {
                let (main, sub) = split(style, custom_mode(style, mode));
                assert_eq!(
                    command_for(style, main, sub),
                    Some(command),
                    "{style:?} {mode}"
                );
            }
        }
        // PX4's AUTO.MISSION is 0x04040000, as QGroundControl shows it.
        assert_eq!(custom_mode(Style::Px4, LOCKSTEP_MODE_MISSION), 0x0404_0000);
        assert_eq!(custom_mode(Style::ArduPilot, LOCKSTEP_MODE_MISSION), 3);
        // POSCTL (main 3) has no command in the contract: it is flown
        // with sticks.
        assert_eq!(command_for(Style::Px4, 3, 0), None);
        assert!(is_manual(Style::Px4, 3, 0));
        assert!(is_manual(Style::ArduPilot, 16, 0));
        for style in [Style::Px4, Style::ArduPilot] {
            let c = custom_mode(style, LOCKSTEP_MODE_RTL);
            let (main, sub) = split(style, c);
            assert_eq!(compose(style, main, sub), c);
        }
    }
}

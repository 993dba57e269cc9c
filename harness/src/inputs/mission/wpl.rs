//! QGroundControl's `.waypoints` text format, `QGC WPL 110` or `120`.
//!
//! ```text
//! QGC WPL 110
//! 0  1  0  16  0  0  0  0  47.397742  8.545594  488  1
//! 1  0  3  22  0  0  0  nan  0  0  10  1
//! ```
//!
//! Each line after the header holds 12 fields separated by tabs, as
//! QGroundControl writes them (any whitespace is accepted): index, current,
//! frame, command, param1..4, latitude, longitude, altitude, autocontinue.
//! Indices run 0, 1, 2, ... Line 0 is QGroundControl's home position; it is
//! returned as `home` and the items to upload are the lines after it.
//! Anything malformed is an error with its line number: nothing is skipped
//! with a warning. Values are checked: `current` and `autocontinue` 0 or 1,
//! `frame` and `command` within MAVLink's ranges, latitude in [-90, 90],
//! longitude in [-180, 180], altitude finite in `f32`, params finite in
//! `f32` or `nan` (unset); at most [`MAX_MISSION_ITEMS`] items. A DO_JUMP's
//! param1 is a sequence number here (home is 0) and becomes the target's
//! index among the uploaded items.

use lockstep_abi::MAX_MISSION_ITEMS;
use lockstep_abi::ffi::lockstep_mission_item;

use super::{Mission, MissionError};

const FIELDS: [&str; 12] = [
    "index",
    "current",
    "frame",
    "command",
    "param1",
    "param2",
    "param3",
    "param4",
    "latitude",
    "longitude",
    "altitude",
    "autocontinue",
];

fn uint(line: usize, i: usize, text: &str) -> Result<u32, MissionError> {
    text.parse().map_err(|_| MissionError::BadField {
        line,
        field: FIELDS[i],
        text: text.to_string(),
        expected: "a non-negative integer",
    })
}

/// An unsigned integer of at most `max`.
fn uint_max(
    line: usize,
    i: usize,
    text: &str,
    max: u32,
    expected: &'static str,
) -> Result<u32, MissionError> {
    match text.parse::<u32>() {
        Ok(v) if v <= max => Ok(v),
        _ => Err(MissionError::BadField {
            line,
            field: FIELDS[i],
            text: text.to_string(),
            expected,
        }),
    }
}

fn float(line: usize, i: usize, text: &str) -> Result<f64, MissionError> {
    float_in(
        line,
        i,
        text,
        f64::from(f32::MIN),
        f64::from(f32::MAX),
        "a finite number",
    )
}

/// A number in `[lo, hi]`.
fn float_in(
    line: usize,
    i: usize,
    text: &str,
    lo: f64,
    hi: f64,
    expected: &'static str,
) -> Result<f64, MissionError> {
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= lo && v <= hi => Ok(v),
        _ => Err(MissionError::BadField {
            line,
            field: FIELDS[i],
            text: text.to_string(),
            expected,
        }),
    }
}

/// A command parameter: finite in `f32`, or NaN (`nan`, unset).
fn param(line: usize, i: usize, text: &str) -> Result<f32, MissionError> {
    if text.eq_ignore_ascii_case("nan") {
        return Ok(f32::NAN);
    }
    Ok(float_in(
        line,
        i,
        text,
        f64::from(f32::MIN),
        f64::from(f32::MAX),
        "a finite number or nan",
    )? as f32)
}

pub(super) fn parse(text: &str) -> Result<Mission, MissionError> {
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim_end_matches('\r')));
    match lines.next() {
        Some((_, h)) if matches!(h.trim(), "QGC WPL 110" | "QGC WPL 120") => {}
        Some((_, h)) => {
            return Err(MissionError::Header {
                found: h.to_string(),
            });
        }
        None => {
            return Err(MissionError::Header {
                found: String::new(),
            });
        }
    }
    let mut all = Vec::new();
    let mut lines_of = Vec::new();
    for (line, l) in lines {
        if l.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() != 12 {
            return Err(MissionError::FieldCount {
                line,
                found: f.len(),
            });
        }
        let index = uint(line, 0, f[0])?;
        let expected = all.len() as u32;
        if index != expected {
            return Err(MissionError::Sequence {
                line,
                expected,
                found: index,
            });
        }
        uint_max(line, 1, f[1], 1, "0 or 1")?;
        let mut p = [0.0f32; 4];
        for (k, v) in p.iter_mut().enumerate() {
            *v = param(line, 4 + k, f[4 + k])?;
        }
        lines_of.push(line);
        all.push(lockstep_mission_item {
            frame: uint_max(line, 2, f[2], 255, "a MAV_FRAME number (0..255)")?,
            command: uint_max(line, 3, f[3], 65_535, "a MAV_CMD number (0..65535)")?,
            param1: p[0],
            param2: p[1],
            param3: p[2],
            param4: p[3],
            lat_deg: float_in(line, 8, f[8], -90.0, 90.0, "a latitude in [-90, 90]")?,
            lon_deg: float_in(line, 9, f[9], -180.0, 180.0, "a longitude in [-180, 180]")?,
            alt_m: float(line, 10, f[10])? as f32,
            autocontinue: uint_max(line, 11, f[11], 1, "0 or 1")?,
        });
        if all.len() > MAX_MISSION_ITEMS + 1 {
            return Err(MissionError::TooMany {
                items: all.len() - 1,
            });
        }
    }
    let mut all = all.into_iter();
    let home = all.next().ok_or(MissionError::Empty)?;
    let items: Vec<lockstep_mission_item> = all.collect();
    let n = items.len();
    super::finish(
        home,
        items,
        |i| format!("line {}", lines_of[i + 1]),
        |p| {
            let s = p as f64;
            (s.fract() == 0.0 && s >= 1.0 && s <= n as f64).then(|| s as usize - 1)
        },
        &format!("the sequence number of an item (1 to {n})"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const SQUARE: &str = "QGC WPL 110\r\n\
0\t1\t0\t16\t0\t0\t0\t0\t47.397742\t8.545594\t488.0\t1\r\n\
1\t0\t3\t22\t0\t0\t0\t0\t0\t0\t10\t1\r\n\
2\t0\t3\t16\t2.5\t1.5\t0\t0\t47.3979\t8.5456\t10\t1\r\n\
3\t0\t3\t20\t0\t0\t0\t0\t0\t0\t0\t1\r\n";

    #[test]
    fn a_qgc_file_parses_into_home_and_items() {
        let m = Mission::parse(SQUARE).unwrap();
        assert_eq!(
            (m.home.lat_deg, m.home.lon_deg, m.home.alt_m),
            (47.397742, 8.545594, 488.0)
        );
        assert_eq!(m.items.len(), 3);
        assert_eq!(
            (m.items[0].command, m.items[0].frame, m.items[0].alt_m),
            (22, 3, 10.0)
        );
        let wp = m.items[1];
        assert_eq!(
            (
                wp.command,
                wp.param1,
                wp.param2,
                wp.lat_deg,
                wp.lon_deg,
                wp.autocontinue
            ),
            (16, 2.5, 1.5, 47.3979, 8.5456, 1)
        );
        assert_eq!(m.items[2].command, 20);
    }

    /// QGroundControl writes `QGC WPL 120` and `nan` for unset params; a
    /// DO_JUMP's sequence number becomes the target's item index.
    #[test]
    fn wpl_120_with_nan_params_and_a_jump() {
        let m = Mission::parse(
            "QGC WPL 120\n\
             0\t1\t0\t16\t0\t0\t0\t0\t-35.3632621\t149.1652374\t584.09\t1\n\
             1\t0\t3\t22\t0\t0\t0\tnan\t0\t0\t10\t1\n\
             2\t0\t3\t16\t0\t0\t0\tNaN\t-35.3631\t149.1652\t10\t1\n\
             3\t0\t3\t177\t2\t3\t0\t0\t0\t0\t0\t1\n",
        )
        .unwrap();
        assert_eq!(m.home.lat_deg, -35.3632621);
        assert!(m.items[0].param4.is_nan() && m.items[1].param4.is_nan());
        assert_eq!(m.items[1].param1, 0.0);
        assert_eq!(
            (m.items[2].command, m.items[2].param1, m.items[2].param2),
            (177, 1.0, 3.0)
        );
    }

    #[test]
    fn malformed_lines_are_errors_with_line_numbers() {
        let cases = [
            (
                "QGC WPL 130\n",
                "line 1: expected the header `QGC WPL 110` or `QGC WPL 120`, found `QGC WPL 130`",
            ),
            (
                "",
                "line 1: expected the header `QGC WPL 110` or `QGC WPL 120`, found ``",
            ),
            ("QGC WPL 120\n", "the mission holds no home line"),
            ("QGC WPL 110\n", "the mission holds no home line"),
            (
                "QGC WPL 110\n0 1 0 16 0 0 0 0 47 8 488\n",
                "line 2: expected 12 fields, found 11",
            ),
            (
                "QGC WPL 110\n0 1 0 16 0 0 0 0 47 8 488 1\n2 0 3 16 0 0 0 0 47 8 10 1\n",
                "line 3: index 2 out of sequence (expected 1)",
            ),
            (
                "QGC WPL 110\n0 1 0 16 0 0 0 0 47 8 488 1\n1 0 3 16 0 x 0 0 47 8 10 1\n",
                "line 3: field `param2` is `x`, not a finite number or nan",
            ),
            (
                "QGC WPL 110\n0 1 0 16 0 0 0 0 47 8 488 1\n\n1 0 3 -16 0 0 0 0 47 8 10 1\n",
                "line 4: field `command` is `-16`, not a MAV_CMD number (0..65535)",
            ),
            (
                "QGC WPL 110\n0 1 0 16 0 0 0 0 47 8 488 1\n1 2 3 16 0 0 0 0 47 8 10 1\n",
                "line 3: field `current` is `2`, not 0 or 1",
            ),
            (
                "QGC WPL 110\n0 1 0 16 0 0 0 0 47 8 488 1\n1 0 3 16 0 0 0 0 91 8 10 1\n",
                "line 3: field `latitude` is `91`, not a latitude in [-90, 90]",
            ),
            (
                "QGC WPL 110\n0 1 0 16 0 0 0 0 47 8 488 1\n1 0 3 16 0 0 0 0 47 -180.5 10 1\n",
                "line 3: field `longitude` is `-180.5`, not a longitude in [-180, 180]",
            ),
            (
                "QGC WPL 110\n0 1 0 16 0 0 0 0 47 8 488 1\n1 0 3 16 0 0 0 0 47 8 1e39 1\n",
                "line 3: field `altitude` is `1e39`, not a finite number",
            ),
            (
                "QGC WPL 110\n0 1 0 16 0 0 0 0 47 8 488 1\n1 0 300 16 0 0 0 0 47 8 10 1\n",
                "line 3: field `frame` is `300`, not a MAV_FRAME number (0..255)",
            ),
            (
                "QGC WPL 110\n0 1 0 16 0 0 0 0 47 8 488 1\n1 0 3 16 0 0 0 0 47 8 10 7\n",
                "line 3: field `autocontinue` is `7`, not 0 or 1",
            ),
            (
                "QGC WPL 110\n0 1 0 16 0 0 0 0 nan 8 488 1\n",
                "line 2: field `latitude` is `nan`, not a latitude in [-90, 90]",
            ),
            (
                "QGC WPL 110\n0 1 0 16 0 0 0 0 47 8 488 1\n1 0 3 16 inf 0 0 0 47 8 10 1\n",
                "line 3: field `param1` is `inf`, not a finite number or nan",
            ),
            (
                "QGC WPL 110\n0 1 0 16 0 0 0 0 47 8 488 1\n1 0 3 16 0 0 0 0 47 8 nan 1\n",
                "line 3: field `altitude` is `nan`, not a finite number",
            ),
            (
                "QGC WPL 110\n0 1 0 16 0 0 0 0 47 8 488 1\n1 0 3 16 0 0 0 0 47 8 10 1\n\
                 2 0 3 177 3 1 0 0 0 0 0 1\n",
                "line 4: DO_JUMP (177): param1 (the item to jump to) is 3, not the sequence number \
                 of an item (1 to 2)",
            ),
            (
                "QGC WPL 110\n0 1 0 16 0 0 0 0 47 8 488 1\n1 0 3 177 0 1 0 0 0 0 0 1\n",
                "line 3: DO_JUMP (177): param1 (the item to jump to) is 0, not the sequence number \
                 of an item (1 to 1)",
            ),
            (
                "QGC WPL 110\n0 1 0 16 0 0 0 0 47 8 488 1\n",
                "the mission holds a home and no items: nothing to fly (the vehicle would sit armed)",
            ),
            (
                "QGC WPL 110\n0 1 0 16 0 0 0 0 47 8 488 1\n1 0 3 16 1e30 0 0 0 47 8 10 1\n",
                "line 3: NAV_WAYPOINT (16): param1 (the time to hold) is 1000000000000000000000000000000 s, \
                 not in [0, 10000000]",
            ),
            (
                "QGC WPL 110\n0 1 0 16 0 0 0 0 47 8 488 1\n1 0 3 19 -1 0 0 0 47 8 10 1\n",
                "line 3: NAV_LOITER_TIME (19): param1 (the time to hold) is -1 s, not in [0, 10000000]",
            ),
            (
                "QGC WPL 110\n0 1 0 16 0 0 0 0 47 8 488 1\n1 0 3 22 0 0 0 0 47 8 -5 1\n",
                "line 3: NAV_TAKEOFF (22): altitude -5 m is 5 m below the home: the vehicle cannot \
                 reach it",
            ),
            (
                "QGC WPL 110\n0 1 0 16 0 0 0 0 47 8 488 1\n1 0 0 16 0 0 0 0 47 8 480 1\n",
                "line 3: NAV_WAYPOINT (16): altitude 480 m is 8 m below the home: the vehicle cannot \
                 reach it",
            ),
            (
                "QGC WPL 110\n0 1 0 16 0 0 0 0 47 8 488 1\n1 0 3 177 1.5 1 0 0 0 0 0 1\n",
                "line 3: DO_JUMP (177): param1 (the item to jump to) is 1.5, not the sequence \
                 number of an item (1 to 1)",
            ),
        ];
        for (text, expect) in cases {
            assert_eq!(
                Mission::parse(text).unwrap_err().to_string(),
                expect,
                "{text:?}"
            );
        }
        let err = Mission::load("/nonexistent/m.waypoints").unwrap_err();
        assert!(matches!(err, MissionError::Io { .. }));
    }
}

#[cfg(test)]
mod example_tests {
    use super::*;

    #[test]
    fn the_shipped_square_mission_parses() {
        let m = Mission::load(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../examples/missions/square.waypoints"
        ))
        .unwrap();
        let cmds: Vec<u32> = m.items.iter().map(|i| i.command).collect();
        assert_eq!(cmds, [22, 16, 16, 16, 16, 21]);
        assert_eq!(m.items[0].alt_m, 10.0);
    }
}

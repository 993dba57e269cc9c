//! The verdict on a flight: crashes detected on the way, and the scenario's
//! `[expect]` conditions checked at the end.
//!
//! Crash detection is always on; a crash fails the run unless the scenario
//! allows it (`allow_crash = true`):
//! - **ground impact**: touching down at more than `impact_speed_mps`
//!   (default 3 m/s, total speed of the last airborne sample);
//! - **inverted**: tilt beyond 90°;
//! - **left the volume**: outside the `volume` box, when one is declared;
//! - **pack empty in the air**: a battery at SOC 0 while airborne.
//!
//! The monitor samples at the autopilot's cadence (where the contact flag is
//! computed anyway); it only reads the state and never changes the flight.

use std::fmt;

use crate::Micros;

/// Default ground-impact speed above which a touchdown is a crash.
pub const DEFAULT_IMPACT_SPEED_MPS: f64 = 3.0;

/// A box in the world frame: north and east in metres from the origin,
/// altitude in metres above it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Volume {
    pub north_m: [f64; 2],
    pub east_m: [f64; 2],
    pub altitude_m: [f64; 2],
}

impl Volume {
    fn contains(&self, n: f64, e: f64, alt: f64) -> bool {
        let inside = |v: f64, r: [f64; 2]| v >= r[0] && v <= r[1];
        inside(n, self.north_m) && inside(e, self.east_m) && inside(alt, self.altitude_m)
    }
}

/// A point on the ground and a radius.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spot {
    pub north_m: f64,
    pub east_m: f64,
    pub radius_m: f64,
}

/// What the scenario expects (`[expect]`), and the crash thresholds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Expectations {
    pub impact_speed_mps: f64,
    pub volume: Option<Volume>,
    pub allow_crash: bool,
    pub mission_finished: Option<bool>,
    pub landed_within: Option<Spot>,
    pub max_tilt_deg: Option<f64>,
    pub min_soc: Option<f64>,
    pub disarmed: Option<bool>,
}

impl Default for Expectations {
    fn default() -> Self {
        Expectations {
            impact_speed_mps: DEFAULT_IMPACT_SPEED_MPS,
            volume: None,
            allow_crash: false,
            mission_finished: None,
            landed_within: None,
            max_tilt_deg: None,
            min_soc: None,
            disarmed: None,
        }
    }
}

/// A crash and when it happened.
#[derive(Debug, Clone, PartialEq)]
pub struct Crash {
    pub time: Micros,
    pub kind: CrashKind,
}

#[derive(Debug, Clone, PartialEq)]
pub enum CrashKind {
    GroundImpact {
        speed_mps: f64,
    },
    Inverted {
        tilt_deg: f64,
    },
    LeftVolume {
        north_m: f64,
        east_m: f64,
        altitude_m: f64,
    },
    PackEmptyInAir {
        battery: usize,
        altitude_m: f64,
    },
    /// Closer to another vehicle of a fleet than their radii together.
    Collision {
        /// The other vehicle's name.
        with: String,
        separation_m: f64,
    },
}

impl fmt::Display for Crash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = lockstep_abi::at(self.time.0);
        match self.kind {
            CrashKind::GroundImpact { speed_mps } => {
                write!(f, "ground impact at {speed_mps:.2} m/s at {t}")
            }
            CrashKind::Inverted { tilt_deg } => {
                write!(f, "inverted (tilt {tilt_deg:.1}°) at {t}")
            }
            CrashKind::LeftVolume {
                north_m,
                east_m,
                altitude_m,
            } => write!(
                f,
                "left the declared volume at N {north_m:.1} m, E {east_m:.1} m, altitude {altitude_m:.1} m at {t}"
            ),
            CrashKind::PackEmptyInAir {
                battery,
                altitude_m,
            } => write!(
                f,
                "battery {battery} empty in the air at altitude {altitude_m:.1} m at {t}"
            ),
            CrashKind::Collision {
                ref with,
                separation_m,
            } => write!(
                f,
                "collision with {with} (separation {separation_m:.2} m) at {t}"
            ),
        }
    }
}

/// One `[expect]` condition and how it came out.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    /// The key, e.g. `expect.max_tilt_deg`.
    pub key: &'static str,
    pub passed: bool,
    /// Expected and found, e.g. `at most 35°, was 41.2°`.
    pub detail: String,
}

/// The outcome.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Verdict {
    /// The first crash of each kind, in time order.
    pub crashes: Vec<Crash>,
    /// Crashes do not fail the run (`allow_crash = true`).
    pub crashes_allowed: bool,
    pub checks: Vec<Check>,
}

impl Verdict {
    /// No disallowed crash, every check passed.
    pub fn passed(&self) -> bool {
        (self.crashes.is_empty() || self.crashes_allowed) && self.checks.iter().all(|c| c.passed)
    }
}

/// What the vehicle is at one sample.
#[derive(Debug, Clone, Copy)]
pub struct Sample<'a> {
    pub time: Micros,
    /// The plant state: position NED (0..3), velocity NED (3..6), attitude
    /// quaternion (6..10).
    pub state: &'a [f64],
    pub in_contact: bool,
    /// Each battery's state of charge.
    pub soc: &'a [f64],
}

/// Watches a flight.
#[derive(Debug, Clone)]
pub struct Monitor {
    expect: Expectations,
    crashes: Vec<Crash>,
    /// Speed at the last airborne sample (None while in contact).
    airborne_speed: Option<f64>,
    /// Smallest cos(tilt) seen.
    min_cos_tilt: f64,
    min_soc: f64,
}

impl Monitor {
    pub fn new(expect: Expectations) -> Monitor {
        Monitor {
            expect,
            crashes: Vec::new(),
            airborne_speed: None,
            min_cos_tilt: 1.0,
            min_soc: f64::INFINITY,
        }
    }

    /// The largest tilt seen so far, degrees (0 before any sample).
    pub fn max_tilt_deg(&self) -> f64 {
        self.min_cos_tilt.clamp(-1.0, 1.0).acos().to_degrees()
    }

    /// The smallest state of charge seen so far (of any pack; infinite
    /// before any sample).
    pub fn min_soc(&self) -> f64 {
        self.min_soc
    }

    /// The crashes detected so far (the first of each kind).
    pub fn crashes(&self) -> &[Crash] {
        &self.crashes
    }

    fn crash(&mut self, time: Micros, kind: CrashKind) {
        let same = |c: &Crash| std::mem::discriminant(&c.kind) == std::mem::discriminant(&kind);
        if !self.crashes.iter().any(same) {
            self.crashes.push(Crash { time, kind });
        }
    }

    /// A collision with another vehicle, detected by a fleet's separation
    /// check at `time`.
    pub fn collision(&mut self, time: Micros, with: &str, separation_m: f64) {
        self.crash(
            time,
            CrashKind::Collision {
                with: with.to_string(),
                separation_m,
            },
        );
    }

    /// One sample of the flight.
    pub fn observe(&mut self, s: Sample<'_>) {
        let x = s.state;
        let (n, e, alt) = (x[0], x[1], -x[2]);
        let (qx, qy) = (x[7], x[8]);
        let q2 = x[6] * x[6] + qx * qx + qy * qy + x[9] * x[9];
        // The body z axis against NED down: cos(tilt) = 1 - 2(qx² + qy²)/|q|².
        let cos_tilt = 1.0 - 2.0 * (qx * qx + qy * qy) / q2;
        self.min_cos_tilt = self.min_cos_tilt.min(cos_tilt);
        if cos_tilt < 0.0 {
            self.crash(
                s.time,
                CrashKind::Inverted {
                    tilt_deg: cos_tilt.clamp(-1.0, 1.0).acos().to_degrees(),
                },
            );
        }
        let speed = (x[3] * x[3] + x[4] * x[4] + x[5] * x[5]).sqrt();
        if s.in_contact {
            if let Some(v) = self.airborne_speed
                && v > self.expect.impact_speed_mps
            {
                self.crash(s.time, CrashKind::GroundImpact { speed_mps: v });
            }
            self.airborne_speed = None;
        } else {
            self.airborne_speed = Some(speed);
        }
        if let Some(v) = self.expect.volume
            && !v.contains(n, e, alt)
        {
            self.crash(
                s.time,
                CrashKind::LeftVolume {
                    north_m: n,
                    east_m: e,
                    altitude_m: alt,
                },
            );
        }
        for (j, soc) in s.soc.iter().enumerate() {
            self.min_soc = self.min_soc.min(*soc);
            if *soc <= 0.0 && !s.in_contact {
                self.crash(
                    s.time,
                    CrashKind::PackEmptyInAir {
                        battery: j,
                        altitude_m: alt,
                    },
                );
            }
        }
    }

    /// The verdict, given the end of the flight.
    pub fn verdict(&self, end: &End) -> Verdict {
        let e = &self.expect;
        let mut checks = Vec::new();
        if let Some(want) = e.mission_finished {
            checks.push(Check {
                key: "expect.mission_finished",
                passed: end.mission_finished == want,
                detail: format!(
                    "expected {}, the mission {}",
                    if want { "finished" } else { "not finished" },
                    if end.mission_finished {
                        "finished"
                    } else {
                        "did not finish"
                    }
                ),
            });
        }
        if let Some(want) = e.disarmed {
            checks.push(Check {
                key: "expect.disarmed",
                passed: end.disarmed == want,
                detail: format!(
                    "expected to end {}, ended {}",
                    if want { "disarmed" } else { "armed" },
                    if end.disarmed { "disarmed" } else { "armed" }
                ),
            });
        }
        if let Some(spot) = e.landed_within {
            let d = (end.north_m - spot.north_m).hypot(end.east_m - spot.east_m);
            checks.push(Check {
                key: "expect.landed_within",
                passed: end.on_ground && d <= spot.radius_m,
                detail: format!(
                    "expected on the ground within {} m of N {} m, E {} m; {} {d:.2} m from it",
                    spot.radius_m,
                    spot.north_m,
                    spot.east_m,
                    if end.on_ground {
                        "on the ground"
                    } else {
                        "still in the air"
                    }
                ),
            });
        }
        if let Some(max) = e.max_tilt_deg {
            let tilt = self.min_cos_tilt.clamp(-1.0, 1.0).acos().to_degrees();
            checks.push(Check {
                key: "expect.max_tilt_deg",
                passed: tilt <= max,
                detail: format!("at most {max}°, was {tilt:.1}°"),
            });
        }
        if let Some(min) = e.min_soc {
            checks.push(Check {
                key: "expect.min_soc",
                passed: self.min_soc >= min,
                detail: format!("at least {min}, was {:.3}", self.min_soc),
            });
        }
        Verdict {
            crashes: self.crashes.clone(),
            crashes_allowed: e.allow_crash,
            checks,
        }
    }
}

/// How the flight ended, for the checks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct End {
    pub north_m: f64,
    pub east_m: f64,
    pub on_ground: bool,
    pub disarmed: bool,
    pub mission_finished: bool,
}

/// The monitor travels with its vehicle (see crate::io::persist).
impl crate::io::persist::Persist for Monitor {
    fn save(&self, w: &mut Vec<u8>) {
        crate::io::persist::save_len(self.crashes.len(), w);
        for c in &self.crashes {
            c.time.save(w);
            match &c.kind {
                CrashKind::GroundImpact { speed_mps } => {
                    w.push(0);
                    speed_mps.save(w);
                }
                CrashKind::Inverted { tilt_deg } => {
                    w.push(1);
                    tilt_deg.save(w);
                }
                CrashKind::LeftVolume {
                    north_m,
                    east_m,
                    altitude_m,
                } => {
                    w.push(2);
                    [*north_m, *east_m, *altitude_m].save(w);
                }
                CrashKind::PackEmptyInAir {
                    battery,
                    altitude_m,
                } => {
                    w.push(3);
                    battery.save(w);
                    altitude_m.save(w);
                }
                CrashKind::Collision { with, separation_m } => {
                    w.push(4);
                    with.save(w);
                    separation_m.save(w);
                }
            }
        }
        self.airborne_speed.save(w);
        self.min_cos_tilt.save(w);
        self.min_soc.save(w);
    }
    fn load(
        &mut self,
        r: &mut crate::io::persist::Reader<'_>,
    ) -> Result<(), crate::io::persist::PersistError> {
        let n = r.len(64, "the crashes")?;
        self.crashes.clear();
        for _ in 0..n {
            let mut time = Micros(0);
            time.load(r)?;
            let kind = match r.take(1)?[0] {
                0 => {
                    let mut speed_mps = 0.0;
                    speed_mps.load(r)?;
                    CrashKind::GroundImpact { speed_mps }
                }
                1 => {
                    let mut tilt_deg = 0.0;
                    tilt_deg.load(r)?;
                    CrashKind::Inverted { tilt_deg }
                }
                2 => {
                    let mut v = [0.0; 3];
                    v.load(r)?;
                    CrashKind::LeftVolume {
                        north_m: v[0],
                        east_m: v[1],
                        altitude_m: v[2],
                    }
                }
                3 => {
                    let (mut battery, mut altitude_m) = (0usize, 0.0);
                    battery.load(r)?;
                    altitude_m.load(r)?;
                    CrashKind::PackEmptyInAir {
                        battery,
                        altitude_m,
                    }
                }
                4 => {
                    let (mut with, mut separation_m) = (String::new(), 0.0);
                    with.load(r)?;
                    separation_m.load(r)?;
                    CrashKind::Collision { with, separation_m }
                }
                k => {
                    return Err(crate::io::persist::PersistError::Mismatch {
                        what: format!("{k} is not a crash kind"),
                    });
                }
            };
            self.crashes.push(Crash { time, kind });
        }
        self.airborne_speed.load(r)?;
        self.min_cos_tilt.load(r)?;
        self.min_soc.load(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(alt: f64, v_down: f64, roll_rad: f64) -> [f64; 13] {
        let (s, c) = (roll_rad / 2.0).sin_cos();
        [
            0.0, 0.0, -alt, 0.0, 0.0, v_down, c, s, 0.0, 0.0, 0.0, 0.0, 0.0,
        ]
    }

    fn sample<'a>(t: u64, x: &'a [f64], contact: bool, soc: &'a [f64]) -> Sample<'a> {
        Sample {
            time: Micros(t),
            state: x,
            in_contact: contact,
            soc,
        }
    }

    #[test]
    fn a_fast_touchdown_is_a_ground_impact_and_a_gentle_one_is_not() {
        let mut m = Monitor::new(Expectations::default());
        m.observe(sample(0, &state(0.0, 0.0, 0.0), true, &[1.0]));
        m.observe(sample(1, &state(1.0, 2.9, 0.0), false, &[1.0]));
        m.observe(sample(2, &state(0.0, 0.5, 0.0), true, &[1.0]));
        assert!(m.crashes.is_empty(), "2.9 m/s is below the 3 m/s threshold");
        m.observe(sample(3, &state(1.0, 10.6, 0.0), false, &[1.0]));
        m.observe(sample(4, &state(0.0, 2.0, 0.0), true, &[1.0]));
        assert_eq!(
            m.crashes,
            [Crash {
                time: Micros(4),
                kind: CrashKind::GroundImpact { speed_mps: 10.6 }
            }]
        );
        assert_eq!(
            m.crashes[0].to_string(),
            "ground impact at 10.60 m/s at t = 0.000004 s"
        );
    }

    #[test]
    fn tilt_past_ninety_degrees_is_inverted_and_max_tilt_is_measured() {
        let mut m = Monitor::new(Expectations {
            max_tilt_deg: Some(35.0),
            ..Expectations::default()
        });
        m.observe(sample(
            0,
            &state(5.0, 0.0, 30f64.to_radians()),
            false,
            &[1.0],
        ));
        let v = m.verdict(&End {
            north_m: 0.0,
            east_m: 0.0,
            on_ground: false,
            disarmed: false,
            mission_finished: false,
        });
        assert!(v.passed());
        assert_eq!(v.checks[0].detail, "at most 35°, was 30.0°");
        m.observe(sample(
            1_000_000,
            &state(5.0, 0.0, 120f64.to_radians()),
            false,
            &[1.0],
        ));
        assert_eq!(
            m.crashes[0].to_string(),
            "inverted (tilt 120.0°) at t = 1.000000 s"
        );
        let v = m.verdict(&End {
            north_m: 0.0,
            east_m: 0.0,
            on_ground: false,
            disarmed: false,
            mission_finished: false,
        });
        assert!(!v.passed());
        assert_eq!(v.checks[0].detail, "at most 35°, was 120.0°");
    }

    #[test]
    fn leaving_the_volume_and_an_empty_pack_in_the_air_are_crashes() {
        let mut m = Monitor::new(Expectations {
            volume: Some(Volume {
                north_m: [-10.0, 10.0],
                east_m: [-10.0, 10.0],
                altitude_m: [-1.0, 20.0],
            }),
            ..Expectations::default()
        });
        m.observe(sample(0, &state(25.0, 0.0, 0.0), false, &[0.5, 0.0]));
        assert_eq!(
            m.crashes.iter().map(|c| c.to_string()).collect::<Vec<_>>(),
            [
                "left the declared volume at N 0.0 m, E 0.0 m, altitude 25.0 m at t = 0.000000 s",
                "battery 1 empty in the air at altitude 25.0 m at t = 0.000000 s"
            ]
        );
        // An empty pack on the ground is not a crash.
        let mut m = Monitor::new(Expectations::default());
        m.observe(sample(0, &state(0.0, 0.0, 0.0), true, &[0.0]));
        assert!(m.crashes.is_empty());
    }

    #[test]
    fn end_checks_report_expected_and_found() {
        let m = Monitor::new(Expectations {
            mission_finished: Some(true),
            disarmed: Some(true),
            landed_within: Some(Spot {
                north_m: 0.0,
                east_m: 0.0,
                radius_m: 2.0,
            }),
            min_soc: Some(0.2),
            ..Expectations::default()
        });
        let v = m.verdict(&End {
            north_m: 3.0,
            east_m: 4.0,
            on_ground: true,
            disarmed: true,
            mission_finished: false,
        });
        let d: Vec<_> = v
            .checks
            .iter()
            .map(|c| (c.key, c.passed, c.detail.as_str()))
            .collect();
        assert_eq!(
            d,
            [
                (
                    "expect.mission_finished",
                    false,
                    "expected finished, the mission did not finish"
                ),
                (
                    "expect.disarmed",
                    true,
                    "expected to end disarmed, ended disarmed"
                ),
                (
                    "expect.landed_within",
                    false,
                    "expected on the ground within 2 m of N 0 m, E 0 m; on the ground 5.00 m from it"
                ),
                ("expect.min_soc", true, "at least 0.2, was inf"),
            ]
        );
        assert!(!v.passed());
    }
}

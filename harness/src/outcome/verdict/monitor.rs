//! The crash monitor: fed a sample at each autopilot step, it keeps the
//! first crash of each kind and what the end checks need; it travels with
//! its vehicle.

use lockstep_abi::ffi;

use super::crash::{Crash, CrashKind, LossOfControl};
use super::fence::Fence;
use super::plan::{PlanItem, estimate};
use super::{Check, End, Expectations, Verdict};
use crate::Micros;

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
    /// The autopilot's mode (`LOCKSTEP_MODE_*`).
    pub mode: u32,
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
    /// The mission's area (seeded at the first sample when no mission
    /// set it).
    fence: Option<Fence>,
    /// How long the scenario's mission may take, s (`None`: unknown).
    estimate_s: Option<f64>,
    /// The first sample in mission or takeoff mode.
    mission_started: Option<Micros>,
    /// Since when the vehicle has spun, and been tilted, beyond the
    /// loss-of-control thresholds in the air.
    spin_since: Option<Micros>,
    tilt_since: Option<Micros>,
    /// The loss-of-control thresholds in the sample's units (rad/s, the
    /// cosine of the tilt).
    spin_limit_radps: f64,
    cos_tilt_limit: f64,
    /// Whether flying away from the mission's area is a crash (not for a
    /// flight stack, whose mission lockstep never sees, unless the scenario
    /// gives `[expect] volume`).
    fly_away: bool,
}

impl Monitor {
    pub fn new(expect: Expectations) -> Monitor {
        Monitor {
            expect,
            crashes: Vec::new(),
            airborne_speed: None,
            min_cos_tilt: 1.0,
            min_soc: f64::INFINITY,
            fence: None,
            estimate_s: None,
            mission_started: None,
            spin_since: None,
            tilt_since: None,
            spin_limit_radps: expect.loss_of_control_yaw_rate_dps.to_radians(),
            cos_tilt_limit: expect.loss_of_control_tilt_deg.to_radians().cos(),
            fly_away: true,
        }
    }

    /// No fly-away check against a fence lockstep cannot know (a flight
    /// stack's mission); an `[expect] volume` still applies.
    pub fn without_mission_fence(&mut self) {
        self.fly_away = false;
    }

    /// The scenario's mission, flown from `start` (north, east, altitude):
    /// the fence round it, and how long it may take.
    pub fn set_mission(&mut self, start: (f64, f64, f64), items: &[PlanItem]) {
        let mut fence = self.fence.unwrap_or(Fence::at(start.0, start.1, start.2));
        for it in items {
            fence.include(it.north_east, it.altitude_m);
        }
        self.fence = Some(fence);
        self.estimate_s = estimate(items, start);
    }

    /// A mission uploaded during the run: the fence grows to hold it; how
    /// long the flight's missions take is then not known.
    pub fn add_mission(&mut self, items: &[PlanItem]) {
        for it in items {
            match &mut self.fence {
                Some(f) => f.include(it.north_east, it.altitude_m),
                None => {
                    if let Some((n, e)) = it.north_east {
                        self.fence = Some(Fence::at(n, e, it.altitude_m));
                    }
                }
            }
        }
        self.estimate_s = None;
    }

    /// A position flown to by setpoint (north, east, altitude m): the fence
    /// grows to hold it, as for a mission's item; how long the missions
    /// take is unchanged.
    pub fn include(&mut self, north_m: f64, east_m: f64, altitude_m: f64) {
        match &mut self.fence {
            Some(f) => f.include(Some((north_m, east_m)), altitude_m),
            None => self.fence = Some(Fence::at(north_m, east_m, altitude_m)),
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
        // Flying the mission: its takeoff or its items.
        let flying_it =
            s.mode == ffi::LOCKSTEP_MODE_MISSION || s.mode == ffi::LOCKSTEP_MODE_TAKEOFF;
        if flying_it && self.mission_started.is_none() {
            self.mission_started = Some(s.time);
        }
        // The start is in the mission's area, whatever the mission.
        if self.fence.is_none() {
            self.fence = Some(Fence::at(n, e, alt));
        }
        if self.expect.volume.is_none()
            && self.fly_away
            && let Some(f) = &mut self.fence
        {
            if s.in_contact {
                // On the ground before any mission: where it stands is
                // part of its area (a vehicle placed by the host). Once
                // down, it flies away no further.
                if self.mission_started.is_none() {
                    f.include(Some((n, e)), alt);
                }
            } else if let Some(beyond_m) = f.beyond(n, e, alt, self.expect.fly_away_margin_m) {
                self.crash(
                    s.time,
                    CrashKind::FlyAway {
                        north_m: n,
                        east_m: e,
                        altitude_m: alt,
                        beyond_m,
                    },
                );
            }
        }
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
        self.loss_of_control(&s, cos_tilt);
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

    /// A spin or a tilt beyond its threshold held in the air for
    /// `loss_of_control_s` (`cos_tilt`: the sample's, computed already).
    fn loss_of_control(&mut self, s: &Sample<'_>, cos_tilt: f64) {
        if s.in_contact {
            self.spin_since = None;
            self.tilt_since = None;
            return;
        }
        let e = self.expect;
        let held = |since: &mut Option<Micros>, beyond: bool| -> Option<f64> {
            if !beyond {
                *since = None;
                return None;
            }
            let t0 = *since.get_or_insert(s.time);
            let held_s = s.time.0.saturating_sub(t0.0) as f64 * 1e-6;
            (held_s >= e.loss_of_control_s).then_some(held_s)
        };
        // Compared in the sample's own units: the degrees are worked out
        // only for a crash.
        let r = s.state[12].abs();
        if let Some(held_s) = held(&mut self.spin_since, r > self.spin_limit_radps) {
            self.crash(
                s.time,
                CrashKind::LossOfControl {
                    what: LossOfControl::Spin,
                    value: r.to_degrees(),
                    held_s,
                },
            );
        }
        if let Some(held_s) = held(&mut self.tilt_since, cos_tilt < self.cos_tilt_limit) {
            self.crash(
                s.time,
                CrashKind::LossOfControl {
                    what: LossOfControl::Tilt,
                    value: cos_tilt.clamp(-1.0, 1.0).acos().to_degrees(),
                    held_s,
                },
            );
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
        // Not asked about: a mission that had the time to finish must have.
        if e.mission_finished.is_none()
            && !end.mission_finished
            && let (Some(start), Some(needed_s)) = (self.mission_started, self.estimate_s)
        {
            let had_s = end.time.0.saturating_sub(start.0) as f64 * 1e-6;
            if had_s >= needed_s {
                checks.push(Check {
                    key: "expect.mission_finished",
                    passed: false,
                    detail: format!(
                        "not given, so expected finished: the mission started at {} and needed \
                         {needed_s:.0} s at most by a generous estimate; it had {had_s:.0} s and \
                         did not finish (set expect.mission_finished = false if that is intended)",
                        lockstep_abi::at(start.0)
                    ),
                });
            }
        }
        Verdict {
            crashes: self.crashes.clone(),
            crashes_allowed: e.allow_crash,
            checks,
        }
    }
}

/// The monitor travels with its vehicle (see crate::persist).
impl crate::persist::Persist for Monitor {
    fn save(&self, w: &mut Vec<u8>) {
        crate::persist::save_len(self.crashes.len(), w);
        for c in &self.crashes {
            c.save(w);
        }
        self.airborne_speed.save(w);
        self.min_cos_tilt.save(w);
        self.min_soc.save(w);
        self.fence
            .map(|f| {
                [
                    f.north_m[0],
                    f.north_m[1],
                    f.east_m[0],
                    f.east_m[1],
                    f.ceiling_m,
                ]
            })
            .save(w);
        self.estimate_s.save(w);
        self.mission_started.save(w);
        self.spin_since.save(w);
        self.tilt_since.save(w);
    }
    fn load(
        &mut self,
        r: &mut crate::persist::Reader<'_>,
    ) -> Result<(), crate::persist::PersistError> {
        let n = r.len(64, "the crashes")?;
        self.crashes.clear();
        for _ in 0..n {
            let mut c = Crash {
                time: Micros(0),
                kind: CrashKind::GroundImpact { speed_mps: 0.0 },
            };
            c.load(r)?;
            self.crashes.push(c);
        }
        self.airborne_speed.load(r)?;
        self.min_cos_tilt.load(r)?;
        self.min_soc.load(r)?;
        let mut fence: Option<[f64; 5]> = None;
        fence.load(r)?;
        self.fence = fence.map(|f| Fence {
            north_m: [f[0], f[1]],
            east_m: [f[2], f[3]],
            ceiling_m: f[4],
        });
        self.estimate_s.load(r)?;
        self.mission_started.load(r)?;
        self.spin_since.load(r)?;
        self.tilt_since.load(r)
    }
}

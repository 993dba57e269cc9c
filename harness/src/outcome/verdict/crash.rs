//! A crash: what happened and when, as the verdict and the timeline say
//! it, and as it travels with a vehicle moved to another engine.

use std::fmt;

use crate::Micros;
use crate::persist::{Persist, PersistError, Reader};

/// A crash and when it happened.
#[derive(Debug, Clone, PartialEq)]
pub struct Crash {
    pub time: Micros,
    pub kind: CrashKind,
}

/// What was out of control.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LossOfControl {
    /// Spinning about the vertical axis.
    Spin,
    /// Tilted far over.
    Tilt,
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
    /// A spin or a tilt beyond its threshold, held in the air; `value` is
    /// the yaw rate (°/s) or the tilt (°) when it was declared, `held_s`
    /// how long it had lasted.
    LossOfControl {
        what: LossOfControl,
        value: f64,
        held_s: f64,
    },
    /// Beyond the fence round the mission's area by `beyond_m`.
    FlyAway {
        north_m: f64,
        east_m: f64,
        altitude_m: f64,
        beyond_m: f64,
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
            CrashKind::LossOfControl {
                what: LossOfControl::Spin,
                value,
                held_s,
            } => write!(
                f,
                "loss of control: spinning at {value:.0}°/s for {held_s:.1} s in the air at {t}"
            ),
            CrashKind::LossOfControl {
                what: LossOfControl::Tilt,
                value,
                held_s,
            } => write!(
                f,
                "loss of control: tilted {value:.0}° for {held_s:.1} s in the air at {t}"
            ),
            CrashKind::FlyAway {
                north_m,
                east_m,
                altitude_m,
                beyond_m,
            } => write!(
                f,
                "fly-away: at N {north_m:.1} m, E {east_m:.1} m, altitude {altitude_m:.1} m, \
                 {beyond_m:.1} m beyond the fence round the mission's area at {t}"
            ),
        }
    }
}

impl Persist for Crash {
    fn save(&self, w: &mut Vec<u8>) {
        self.time.save(w);
        match &self.kind {
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
            CrashKind::LossOfControl {
                what,
                value,
                held_s,
            } => {
                w.push(5);
                w.push(match what {
                    LossOfControl::Spin => 0,
                    LossOfControl::Tilt => 1,
                });
                [*value, *held_s].save(w);
            }
            CrashKind::FlyAway {
                north_m,
                east_m,
                altitude_m,
                beyond_m,
            } => {
                w.push(6);
                [*north_m, *east_m, *altitude_m, *beyond_m].save(w);
            }
        }
    }

    fn load(&mut self, r: &mut Reader<'_>) -> Result<(), PersistError> {
        self.time.load(r)?;
        self.kind = match r.take(1)?[0] {
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
            5 => {
                let what = match r.take(1)?[0] {
                    0 => LossOfControl::Spin,
                    1 => LossOfControl::Tilt,
                    k => {
                        return Err(PersistError::Mismatch {
                            what: format!("{k} is not a loss of control"),
                        });
                    }
                };
                let mut v = [0.0; 2];
                v.load(r)?;
                CrashKind::LossOfControl {
                    what,
                    value: v[0],
                    held_s: v[1],
                }
            }
            6 => {
                let mut v = [0.0; 4];
                v.load(r)?;
                CrashKind::FlyAway {
                    north_m: v[0],
                    east_m: v[1],
                    altitude_m: v[2],
                    beyond_m: v[3],
                }
            }
            k => {
                return Err(PersistError::Mismatch {
                    what: format!("{k} is not a crash kind"),
                });
            }
        };
        Ok(())
    }
}

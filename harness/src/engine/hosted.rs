//! A vehicle whose plant the host owns (a game engine, a Gazebo-like world):
//! the host integrates its own physics and, at each boundary of the
//! scenario's sensor and autopilot cadences, hands over the truth; the
//! harness runs its sensor and estimator models on it, injects the samples
//! with their exact timestamps, steps the autopilot at its cadence and
//! returns the actuator commands, which the host holds until the next
//! autopilot boundary.
//!
//! The same world (timeline, scenario events, wind) and avionics as a whole
//! vehicle; what the plant would do is the host's. Events that act on the
//! plant (motor, thrust and battery faults) are refused when the bridge is
//! built: the host owns what they would change. Gusts change the wind the
//! bridge reports ([`HostedVehicle::wind`]), which a host may apply or not.

use std::path::Path;

use lockstep_abi::{Autopilot, Isolation};

use super::EngineError;
use super::world::World;
use crate::Micros;
use crate::inputs::scenario::{Action, Scenario};
use lockstep_abi::ffi::*;

use super::avionics::Avionics;
use super::build::{self, Physics, invalid};
use super::events::{Situation, stage_scenario};
use super::vehicle::FaultState;
use crate::environment::sensors::Truth;
use crate::time::timeline::Due;

/// The truth a host hands over at a boundary: the state the sensors see
/// (its `time` must be [`HostedVehicle::next_time`]; specific force is what
/// an ideal accelerometer reads, (force other than gravity) / mass), and
/// what the autopilot is told besides.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HostTruth {
    pub state: Truth,
    /// In contact with the ground (the autopilot's landed flag).
    pub on_ground: bool,
    /// The battery as the host models it; `None` leaves the autopilot
    /// without battery readings.
    pub battery: Option<HostBattery>,
}

/// A host's battery reading.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HostBattery {
    pub voltage_v: f64,
    pub current_a: f64,
    /// State of charge, 0..1.
    pub remaining: f64,
    /// A `LOCKSTEP_BATTERY_*` warning level.
    pub warning: u32,
    /// Connected to the bus.
    pub connected: bool,
}

impl HostTruth {
    /// The name of the first field that is not finite (or a quaternion of
    /// zero norm, or a remaining charge outside 0..1).
    fn invalid_field(&self) -> Option<&'static str> {
        let finite = |v: &[f64]| v.iter().all(|x| x.is_finite());
        let t = &self.state;
        let q = &t.attitude_q;
        if !finite(&t.position_ned_m) {
            Some("position_ned_m")
        } else if !finite(&t.velocity_ned_mps) {
            Some("velocity_ned_mps")
        } else if !finite(q) || q.iter().map(|x| x * x).sum::<f64>() < 1e-12 {
            Some("attitude_q")
        } else if !finite(&t.rates_frd_radps) {
            Some("rates_frd_radps")
        } else if !finite(&t.specific_force_frd_mps2) {
            Some("specific_force_frd_mps2")
        } else if let Some(b) = &self.battery {
            if !b.voltage_v.is_finite() {
                Some("battery.voltage_v")
            } else if !b.current_a.is_finite() {
                Some("battery.current_a")
            } else if !(0.0..=1.0).contains(&b.remaining) {
                Some("battery.remaining")
            } else {
                None
            }
        } else {
            None
        }
    }
}

/// The avionics of a vehicle flying on a host's plant.
pub struct HostedVehicle {
    world: World,
    avionics: Avionics,
    faults: FaultState,
    /// The boundary awaiting the host's truth; `None` after the end.
    next: Option<(Micros, Due)>,
    rotors: usize,
    closed: bool,
}

impl std::fmt::Debug for HostedVehicle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostedVehicle")
            .field("now", &self.world.now)
            .field("next", &self.next.map(|(t, _)| t))
            .finish_non_exhaustive()
    }
}

impl HostedVehicle {
    /// The avionics of `scenario` (its sensors, estimator, cadences, events,
    /// wind and seed) around the autopilot library at `autopilot`, which is
    /// configured for the scenario's aircraft (the vehicle the host
    /// simulates: its mass, rotor geometry and thrust) and given its
    /// mission and parameters.
    pub fn new(
        scenario: &Scenario,
        autopilot: &Path,
        isolation: &Isolation,
    ) -> Result<HostedVehicle, EngineError> {
        for (i, ev) in scenario.events.iter().enumerate() {
            if ev.action.acts_on_plant() {
                return Err(invalid(
                    scenario,
                    format!(
                        "key `{}.action`: `{}` acts on the plant, which the host owns here",
                        scenario.event_key(i),
                        ev.action
                    ),
                ));
            }
        }
        if let Some(st) = &scenario.stack {
            return Err(build::invalid(
                scenario,
                format!(
                    "`autopilot.kind = \"{}\"`: a flight stack flies lockstep's plant, not a \
                     host's (its simulator protocol needs the true state lockstep owns)",
                    st.kind.name()
                ),
            ));
        }
        let resolved = build::resolve(scenario)?;
        let ap = build::open_autopilot(scenario, &resolved, autopilot, isolation)?;
        let (mut world, finest) = build::build_world(scenario, Physics::Host)?;
        let avionics = build::build_avionics(scenario, &resolved.plant, ap, finest)?;
        let next = world.advance();
        Ok(HostedVehicle {
            world,
            avionics,
            faults: FaultState::default(),
            next,
            rotors: resolved.plant.rotors.len(),
            closed: false,
        })
    }

    /// When the host must next hand over truth; `None` after the end.
    pub fn next_time(&self) -> Option<Micros> {
        self.next.map(|(t, _)| t)
    }

    /// The last boundary processed.
    pub fn now(&self) -> Micros {
        self.world.now
    }

    pub fn end(&self) -> Micros {
        self.world.timeline.end()
    }

    /// Processes the boundary at [`HostedVehicle::next_time`] with the
    /// host's truth there: scenario events, wind, sensors and estimator,
    /// and the autopilot where due. Refused (nothing changes) when the
    /// truth's time is not that boundary, a value is not finite, or the run
    /// has ended.
    pub fn step(&mut self, truth: &HostTruth) -> Result<(), EngineError> {
        let Some((t, due)) = self.next else {
            return Err(EngineError::Ended {
                end_us: self.end().0,
            });
        };
        if truth.state.time != t {
            return Err(EngineError::HostTime {
                expected_us: t.0,
                found_us: truth.state.time.0,
            });
        }
        if let Some(field) = truth.invalid_field() {
            return Err(EngineError::HostTruth {
                field,
                time_us: t.0,
            });
        }
        self.world.arrive(t);
        if due.event || self.world.pending_when > 0 {
            let now = Situation {
                altitude_m: -truth.state.position_ned_m[2],
                soc: truth.battery.map_or(f64::INFINITY, |b| b.remaining),
                mission_current: self.avionics.act.mission_current,
            };
            if stage_scenario(
                &mut self.world,
                &mut self.avionics,
                &mut self.faults,
                t,
                now,
            ) {
                self.avionics.sensor_faults = self.faults.sensors;
            }
            self.world.destinations.clear();
        }
        let (p, v) = (truth.state.position_ned_m, truth.state.velocity_ned_mps);
        self.world
            .stage_wind(t, due, &[p[0], p[1], p[2], v[0], v[1], v[2]]);
        let vdue = self.world.vehicle_due(due);
        self.avionics.sample(vdue.sensors, truth.state);
        // The next boundary is known before the autopilot runs, so a failed
        // step leaves the bridge at the next boundary, not stuck on this one.
        self.next = self.world.advance();
        if vdue.autopilot {
            if let Some(b) = truth.battery {
                self.avionics.set_battery(lockstep_battery {
                    timestamp_us: t.0,
                    voltage_v: b.voltage_v as f32,
                    current_a: b.current_a as f32,
                    remaining: b.remaining as f32,
                    warning: b.warning,
                    connected: u32::from(b.connected),
                    reserved0: 0,
                });
            }
            self.avionics.step_autopilot(t, truth.on_ground)?;
            let a = &self.avionics;
            self.world
                .journal
                .autopilot(t, &a.act, a.frame.battery.warning);
        }
        Ok(())
    }

    /// The motor commands (0..1, one per rotor of the scenario's aircraft)
    /// from the last autopilot step: the host holds them until the next.
    pub fn motor_commands(&self) -> &[f32] {
        &self.avionics.act.motors[..self.rotors]
    }

    /// The autopilot's last outputs.
    pub fn actuators(&self) -> &lockstep_actuator_frame {
        &self.avionics.act
    }

    /// The sensor frame as the autopilot last received it.
    pub fn sensor_frame(&self) -> &lockstep_sensor_frame {
        &self.avionics.frame
    }

    /// The scenario's wind at the vehicle (NED, m/s) as last sampled.
    pub fn wind(&self) -> [f64; 3] {
        self.world.wind_now
    }

    /// Applies a command or a sensor fault now (as a scenario event at the
    /// last boundary would); a plant fault is refused.
    pub fn apply_now(&mut self, action: Action) -> Result<(), EngineError> {
        if action.acts_on_plant() {
            return Err(EngineError::HostOwnsPlant {
                action: action.to_string(),
            });
        }
        let t = self.world.now;
        if super::events::apply(
            &mut self.world,
            &mut self.avionics,
            &mut self.faults,
            action,
            t,
        ) {
            self.avionics.sensor_faults = self.faults.sensors;
        }
        // The host's plant has no fly-away fence here.
        self.world.destinations.clear();
        Ok(())
    }

    /// The autopilot instance (parameters, mission, last error).
    pub fn autopilot(&mut self) -> &mut Autopilot {
        &mut self.avionics.ap
    }

    /// Events, mode changes and failsafes so far, and how many entries were
    /// dropped past the journal's bound.
    pub fn timeline(&self) -> (Vec<crate::outcome::journal::Entry>, u64) {
        self.world.journal.clone().finish()
    }

    /// Destroys the autopilot instance (also done on drop, without the
    /// error); later steps fail.
    pub fn close(&mut self) -> Result<(), EngineError> {
        self.closed = true;
        self.next = None;
        self.avionics.ap.close().map_err(EngineError::from)
    }

    pub fn is_closed(&self) -> bool {
        self.closed
    }
}

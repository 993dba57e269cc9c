//! The scenario and fault stages: events fire at their times or when their
//! conditions hold, commands reach the autopilot's next step, faults act on
//! the plant's inputs and the sensors; and the run's timeline.

use lockstep_abi::ffi::{
    LOCKSTEP_ARM_ARM, LOCKSTEP_ARM_DISARM, LOCKSTEP_MODE_HOLD, LOCKSTEP_MODE_LAND,
    LOCKSTEP_MODE_RTL,
};

use super::Engine;
use super::avionics::{Avionics, SensorFault};
use super::vehicle::FaultState;
use super::world::World;
use crate::Micros;
use crate::environment::wind::Gust;
use crate::inputs::scenario::{Action, Condition, SensorId, SetpointKind, Trigger};

impl Engine {
    /// The timeline so far (events, mode changes, failsafes, crashes) in
    /// time order, and how many entries were dropped past its bound.
    pub fn timeline(&self) -> (Vec<crate::outcome::journal::Entry>, u64) {
        let mut j = self.world.journal.clone();
        for c in self.vehicle.monitor.crashes() {
            j.crash(c.time, c.to_string());
        }
        j.finish()
    }

    /// The journal's entries so far (events, modes, arming, failsafes),
    /// without copying: a ground station announces the new ones at each
    /// boundary. Crashes are [`Engine::crashes`].
    pub fn journal_entries(&self) -> &[crate::outcome::journal::Entry] {
        self.world.journal.entries()
    }

    /// The crashes detected so far.
    pub fn crashes(&self) -> &[crate::outcome::verdict::Crash] {
        self.vehicle.monitor.crashes()
    }

    /// Fires the events due at `t`.
    pub(super) fn stage_scenario(&mut self, t: Micros) {
        let v = &mut self.vehicle;
        let now = Situation {
            altitude_m: -v.physics.x[2],
            soc: v.lowest_soc(),
            mission_current: v.avionics.act.mission_current,
        };
        v.faults_changed |= stage_scenario(&mut self.world, &mut v.avionics, &mut v.faults, t, now);
        self.take_destinations();
    }

    /// Applies `a` at `t` as a scenario event would.
    pub(super) fn apply(&mut self, a: Action, t: Micros) {
        let v = &mut self.vehicle;
        v.faults_changed |= apply(&mut self.world, &mut v.avionics, &mut v.faults, a, t);
        self.take_destinations();
    }

    /// The positions just flown to by setpoint join the fly-away fence.
    fn take_destinations(&mut self) {
        for (n, e, alt) in self.world.destinations.drain(..) {
            self.vehicle.monitor.include(n, e, alt);
        }
    }
}

/// What conditions are evaluated on at a boundary.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Situation {
    pub(crate) altitude_m: f64,
    /// The lowest state of charge of the packs.
    pub(crate) soc: f64,
    pub(crate) mission_current: i32,
}

fn holds(c: &Condition, t: Micros, now: &Situation, mission_started: Option<Micros>) -> bool {
    let alt = now.altitude_m;
    c.altitude_above_m.is_none_or(|a| alt > a)
        && c.altitude_below_m.is_none_or(|a| alt < a)
        && c.soc_below.is_none_or(|s| now.soc < s)
        && c.mission_item_at_least
            .is_none_or(|i| now.mission_current >= i)
        && c.after.is_none_or(|a| t >= a)
        && c.since_mission_start
            .is_none_or(|d| mission_started.is_some_and(|s| t >= s + d))
}

/// Fires the world's events due at `t` (at their time, or when their
/// condition holds in `now`) in the scenario's order; whether the fault
/// state changed.
pub(crate) fn stage_scenario(
    world: &mut World,
    avionics: &mut Avionics,
    faults: &mut FaultState,
    t: Micros,
    now: Situation,
) -> bool {
    let mut changed = false;
    for k in 0..world.events.len() {
        let (ev, fired) = world.events[k];
        if fired {
            continue;
        }
        let due = match ev.trigger {
            Trigger::At(at) => at == t,
            Trigger::When(c) => holds(&c, t, &now, world.mission_started),
        };
        if due {
            world.events[k].1 = true;
            if matches!(ev.trigger, Trigger::When(_)) {
                world.pending_when -= 1;
            }
            changed |= apply(world, avionics, faults, ev.action, t);
        }
    }
    changed
}

/// Applies one action at `t`: commands queue for the autopilot's next step,
/// gusts join the wind, faults change the fault state; whether they did.
pub(crate) fn apply(
    world: &mut World,
    avionics: &mut Avionics,
    faults: &mut FaultState,
    a: Action,
    t: Micros,
) -> bool {
    world.journal.event(t, &a);
    // Every action but commands, gusts and noise scaling changes the fault
    // state.
    let changed =
        !(a.is_command() || matches!(a, Action::WindGust { .. } | Action::SensorNoiseScale { .. }));
    let sf = |s: SensorId| SensorId::ALL.iter().position(|x| *x == s).unwrap_or(0);
    match a {
        Action::Arm => avionics.command(LOCKSTEP_ARM_ARM, 0, 0),
        Action::Disarm => avionics.command(LOCKSTEP_ARM_DISARM, 0, 0),
        Action::MissionStart => {
            world.mission_started = Some(t);
            avionics.command(0, 0, 1);
        }
        Action::Takeoff { height_m } => avionics.takeoff(height_m),
        Action::Rtl => avionics.command(0, LOCKSTEP_MODE_RTL, 0),
        Action::Land => avionics.command(0, LOCKSTEP_MODE_LAND, 0),
        Action::Hold => avionics.command(0, LOCKSTEP_MODE_HOLD, 0),
        Action::Setpoint {
            kind,
            vector,
            yaw_rad,
            thrust,
        } => {
            if kind == SetpointKind::Position {
                world.destinations.push((vector[0], vector[1], -vector[2]));
            }
            avionics.setpoint(kind, vector, yaw_rad, thrust)
        }
        Action::WindGust {
            amplitude_ned_mps,
            rise,
            hold,
            fall,
        } => {
            world.wind.add_gust(Gust {
                start: t,
                rise,
                hold,
                fall,
                amplitude_ned_mps,
            });
        }
        Action::MotorFail { motor } => faults.motor_failed[motor] = true,
        Action::MotorRestore { motor } => {
            faults.motor_failed[motor] = false;
            faults.thrust_loss[motor] = 0.0;
        }
        Action::ThrustLoss { motor, fraction } => faults.thrust_loss[motor] = fraction,
        Action::Push { force_ned_n } => faults.push_ned_n = Some(force_ned_n),
        Action::BatteryDisconnect { battery } => faults.battery_disconnected[battery] = true,
        Action::BatteryReconnect { battery } => faults.battery_disconnected[battery] = false,
        Action::SensorDropout { sensor } => faults.sensors[sf(sensor)].dropout = true,
        Action::SensorFreeze { sensor } => faults.sensors[sf(sensor)].freeze = true,
        Action::SensorBiasStep { sensor, value } => faults.sensors[sf(sensor)].bias += value,
        Action::SensorNoiseScale { sensor, value } => avionics.scale_noise(sensor, value),
        Action::SensorClear { sensor } => faults.sensors[sf(sensor)] = SensorFault::default(),
    }
    changed
}

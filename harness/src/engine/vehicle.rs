//! One vehicle of a run: its plant (state and held inputs), its avionics
//! (sensors, estimator, autopilot bridge), the faults in force on both, and
//! the verdict's monitor. The loop ([`super::Engine`]) integrates it between
//! boundaries and runs its stages at each.

use lockstep_abi::AbiError;
use lockstep_abi::ffi::*;
use lockstep_plant::PlantOutputs;
use lockstep_plant::multirotor::{MAX_BATTERIES, MAX_ROTORS};

use super::avionics::{Avionics, SensorFault, SensorsDue};
use super::plant_runner::PlantRunner;
use crate::Micros;
use crate::environment::sensors::Truth;
use crate::outcome::verdict::{Monitor, Sample};

/// The faults in force, set by scenario events; the faults stage turns them
/// into plant inputs and sensor faults.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct FaultState {
    pub(crate) motor_failed: [bool; MAX_ROTORS],
    pub(crate) thrust_loss: [f64; MAX_ROTORS],
    pub(crate) battery_disconnected: [bool; MAX_BATTERIES],
    pub(crate) sensors: [SensorFault; 5],
    /// A `push` (NED, N) not yet put on the plant: the next faults stage
    /// holds it on the vehicle (zero: none), replacing whatever external
    /// force was held, and later stages leave it (and a co-simulation's
    /// force set after it) alone.
    pub(crate) push_ned_n: Option<[f64; 3]>,
}

impl Default for FaultState {
    fn default() -> Self {
        FaultState {
            motor_failed: [false; MAX_ROTORS],
            thrust_loss: [0.0; MAX_ROTORS],
            battery_disconnected: [false; MAX_BATTERIES],
            sensors: [SensorFault::default(); 5],
            push_ned_n: None,
        }
    }
}

/// The faults in force on a vehicle, as a flight stack's health report
/// sees them (what `SYS_STATUS`'s health bits and a ground station's
/// sensor list say).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FaultsInForce {
    /// A sensor fault (dropout, freeze or bias step) on each of the IMU,
    /// the magnetometer, the barometer, the GPS and the estimator.
    pub sensors: [SensorFaultKind; 5],
    /// Rotors whose motor has failed.
    pub motors_failed: u32,
    /// Batteries disconnected from the bus.
    pub batteries_disconnected: u32,
}

/// What a sensor fault does, the worst first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SensorFaultKind {
    /// No fault.
    #[default]
    None,
    /// No samples at all.
    Dropout,
    /// Samples frozen at their last value.
    Freeze,
    /// Samples offset by a bias step.
    Bias,
}

impl SensorFaultKind {
    /// Whether a fault is in force.
    pub fn is_fault(self) -> bool {
        self != SensorFaultKind::None
    }

    fn of(f: &SensorFault) -> SensorFaultKind {
        if f.dropout {
            SensorFaultKind::Dropout
        } else if f.freeze {
            SensorFaultKind::Freeze
        } else if f.bias != 0.0 {
            SensorFaultKind::Bias
        } else {
            SensorFaultKind::None
        }
    }
}

/// What is due for a vehicle at a boundary.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct VehicleDue {
    pub(crate) sensors: SensorsDue,
    pub(crate) autopilot: bool,
    pub(crate) log: bool,
}

#[derive(Debug)]
pub(crate) struct Vehicle {
    pub(crate) physics: PlantRunner,
    pub(crate) avionics: Avionics,
    pub(crate) faults: FaultState,
    /// The fault state changed since the faults stage last ran.
    pub(crate) faults_changed: bool,
    pub(crate) monitor: Monitor,
    /// The contact flag at the last autopilot boundary.
    pub(crate) on_ground: bool,
    /// The plant's algebraic outputs where they were last computed.
    pub(crate) outputs: PlantOutputs,
    /// Motor commands that replace the autopilot's (an agent flying the
    /// motors itself); not part of a snapshot.
    pub(crate) motor_override: Option<[f32; lockstep_abi::ffi::LOCKSTEP_MAX_MOTORS as usize]>,
}

impl Vehicle {
    pub(crate) fn new(physics: PlantRunner, avionics: Avionics, monitor: Monitor) -> Vehicle {
        Vehicle {
            physics,
            avionics,
            faults: FaultState::default(),
            faults_changed: true,
            monitor,
            on_ground: true,
            outputs: PlantOutputs::default(),
            motor_override: None,
        }
    }

    /// The faults in force now (set by the events up to this boundary).
    pub(crate) fn faults_in_force(&self) -> FaultsInForce {
        let f = &self.faults;
        let n = self.physics.plant.rotors.len();
        let nb = self.physics.plant.batteries.len();
        FaultsInForce {
            sensors: f.sensors.each_ref().map(SensorFaultKind::of),
            motors_failed: f.motor_failed[..n].iter().filter(|&&x| x).count() as u32,
            batteries_disconnected: f.battery_disconnected[..nb].iter().filter(|&&x| x).count()
                as u32,
        }
    }

    /// Holds the override's commands (if any) on the plant's inputs and in
    /// the actuator frame the log and the monitor read.
    pub(crate) fn hold_override(&mut self) {
        if let Some(m) = self.motor_override {
            let n = self.physics.plant.rotors.len();
            self.avionics.act.motors[..n].copy_from_slice(&m[..n]);
            for (cmd, v) in self.physics.inputs.motor_cmd.iter_mut().zip(&m[..n]) {
                *cmd = f64::from(*v);
            }
        }
    }

    /// Turns the fault state into what the plant and the sensors see: motor
    /// enable, thrust scale and battery connection on the plant's inputs (so
    /// they are recorded and replayed), and the sensor fault table.
    pub(crate) fn stage_faults(&mut self) {
        self.faults_changed = false;
        if let Some(p) = self.faults.push_ned_n.take() {
            self.physics.inputs.external_force_ned_n = (p != [0.0; 3]).then_some(p);
        }
        let f = &self.faults;
        let n = self.physics.plant.rotors.len();
        let nb = self.physics.plant.batteries.len();
        let inputs = &mut self.physics.inputs;
        for i in 0..n {
            inputs.motor_enabled[i] = !f.motor_failed[i];
            inputs.thrust_scale[i] = 1.0 - f.thrust_loss[i];
        }
        for j in 0..nb {
            inputs.battery_connected[j] = !f.battery_disconnected[j];
        }
        self.avionics.sensor_faults = f.sensors;
    }

    /// Samples the due sensors (and, at an autopilot boundary, the battery)
    /// from the plant's truth. The plant's algebraic outputs cost a
    /// right-hand side: computed (into `self.outputs`) only where the IMU,
    /// the autopilot (battery, landed flag) or the log need them; whether
    /// they were.
    pub(crate) fn stage_sensors(&mut self, t: Micros, due: VehicleDue) -> bool {
        let needed = due.sensors.imu || due.autopilot || due.log;
        if needed {
            self.outputs = self.physics.outputs();
        }
        let outputs = needed.then_some(&self.outputs);
        let x = &self.physics.x;
        let truth = Truth {
            time: t,
            position_ned_m: [x[0], x[1], x[2]],
            velocity_ned_mps: [x[3], x[4], x[5]],
            attitude_q: [x[6], x[7], x[8], x[9]],
            rates_frd_radps: [x[10], x[11], x[12]],
            specific_force_frd_mps2: outputs
                .as_ref()
                .map_or([f64::NAN; 3], |o| o.specific_force_frd_mps2),
        };
        self.avionics.sample(due.sensors, truth);
        if due.autopilot
            && let Some(o) = outputs
        {
            let b = o.batteries[0];
            self.avionics.set_battery(lockstep_battery {
                timestamp_us: t.0,
                voltage_v: b.voltage_v as f32,
                current_a: b.current_a as f32,
                remaining: b.soc.clamp(0.0, 1.0) as f32,
                warning: b.warning as u32,
                connected: u32::from(b.connected),
                reserved0: 0,
            });
        }
        needed
    }

    /// Steps the autopilot and holds its motor commands on the plant's
    /// inputs; feeds the monitor.
    pub(crate) fn stage_autopilot(&mut self, t: Micros, landed: bool) -> Result<(), AbiError> {
        if self.avionics.ap.is_stack() {
            self.give_truth(t);
        }
        self.avionics.step_autopilot(t, landed)?;
        if self.motor_override.is_some() {
            self.hold_override();
        }
        self.observe(t, landed);
        let act = &self.avionics.act;
        for i in 0..self.physics.plant.rotors.len() {
            self.physics.inputs.motor_cmd[i] = f64::from(act.motors[i]);
        }
        Ok(())
    }

    /// Hands a flight stack the true state its simulator protocol sends
    /// (the state at this boundary, the specific force and the wind held
    /// over the coming interval).
    fn give_truth(&mut self, t: Micros) {
        let p = &self.physics;
        let x = &p.x;
        let g = p.plant.origin.to_geodetic([x[0], x[1], x[2]]);
        self.avionics.ap.give_truth(&lockstep_abi::GroundTruth {
            time_us: t.0,
            position_ned_m: [x[0], x[1], x[2]],
            velocity_ned_mps: [x[3], x[4], x[5]],
            attitude_q: [x[6], x[7], x[8], x[9]],
            rates_frd_radps: [x[10], x[11], x[12]],
            specific_force_frd_mps2: self.outputs.specific_force_frd_mps2,
            lat_deg: g.lat_deg,
            lon_deg: g.lon_deg,
            alt_m: g.alt_m,
            wind_ned_mps: p.inputs.wind_ned_mps,
        });
    }

    /// Feeds the verdict's monitor (at the autopilot's cadence, where the
    /// contact flag is known).
    fn observe(&mut self, t: Micros, in_contact: bool) {
        let mut soc = [0.0; MAX_BATTERIES];
        let p = &self.physics;
        let nb = p.plant.batteries.len();
        for (j, s) in soc.iter_mut().enumerate().take(nb) {
            *s = p.x[p.plant.layout.soc(j)];
        }
        self.on_ground = in_contact;
        self.monitor.observe(Sample {
            time: t,
            state: &p.x,
            in_contact,
            soc: &soc[..nb],
            mode: self.avionics.act.mode,
        });
    }

    /// The lowest state of charge of the packs.
    pub(crate) fn lowest_soc(&self) -> f64 {
        let p = &self.physics;
        (0..p.plant.batteries.len())
            .map(|j| p.x[p.plant.layout.soc(j)])
            .fold(f64::INFINITY, f64::min)
    }
}

// The vehicle's running state (see crate::persist). `outputs` is left out:
// every boundary that reads it computes it first.
crate::persist::persist_fields!(FaultState {
    motor_failed,
    thrust_loss,
    battery_disconnected,
    sensors,
    push_ned_n
});
crate::persist::persist_fields!(Vehicle {
    physics,
    avionics,
    faults,
    faults_changed,
    monitor,
    on_ground
});

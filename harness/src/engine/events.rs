//! The scenario and fault stages: events fire at their times or when their
//! conditions hold, commands reach the autopilot's next step, faults act on
//! the plant's inputs and the sensors; and the run's timeline.

use super::*;

impl Engine {
    /// The timeline so far (events, mode changes, failsafes, crashes) in
    /// time order, and how many entries were dropped past its bound.
    pub fn timeline(&self) -> (Vec<crate::journal::Entry>, u64) {
        let mut j = self.journal.clone();
        for c in self.monitor.crashes() {
            j.crash(c.time, c.to_string());
        }
        j.finish()
    }

    fn holds(&self, c: &Condition, t: Micros) -> bool {
        let alt = -self.x[2];
        let soc = (0..self.plant.batteries.len())
            .map(|j| self.x[self.plant.layout.soc(j)])
            .fold(f64::INFINITY, f64::min);
        c.altitude_above_m.is_none_or(|a| alt > a)
            && c.altitude_below_m.is_none_or(|a| alt < a)
            && c.soc_below.is_none_or(|s| soc < s)
            && c.mission_item_at_least
                .is_none_or(|i| self.act.mission_current >= i)
            && c.after.is_none_or(|a| t >= a)
            && c.since_mission_start
                .is_none_or(|d| self.mission_started.is_some_and(|s| t >= s + d))
    }

    pub(super) fn stage_scenario(&mut self, t: Micros) {
        for k in 0..self.events.len() {
            let (ev, fired) = self.events[k];
            if fired {
                continue;
            }
            let now = match ev.trigger {
                Trigger::At(at) => at == t,
                Trigger::When(c) => self.holds(&c, t),
            };
            if now {
                self.events[k].1 = true;
                if matches!(ev.trigger, Trigger::When(_)) {
                    self.pending_when -= 1;
                }
                self.apply(ev.action, t);
            }
        }
    }

    fn command(&mut self, arm: u32, mode: u32, start: u32) {
        if arm != 0 {
            self.pending.arm_request = arm;
        }
        if mode != 0 {
            self.pending.mode_request = mode;
        }
        if start != 0 {
            self.pending.mission_start = start;
        }
        self.pending_fresh = true;
    }

    pub(super) fn apply(&mut self, a: Action, t: Micros) {
        self.journal.event(t, &a);
        // Every action but commands and gusts changes the fault state.
        self.faults_changed |= !matches!(
            a,
            Action::Arm
                | Action::Disarm
                | Action::MissionStart
                | Action::Rtl
                | Action::Land
                | Action::Hold
                | Action::WindGust { .. }
                | Action::SensorNoiseScale { .. }
        );
        let sf = |s: SensorId| SensorId::ALL.iter().position(|x| *x == s).unwrap_or(0);
        match a {
            Action::Arm => self.command(LOCKSTEP_ARM_ARM, 0, 0),
            Action::Disarm => self.command(LOCKSTEP_ARM_DISARM, 0, 0),
            Action::MissionStart => {
                self.mission_started = Some(t);
                self.command(0, 0, 1);
            }
            Action::Rtl => self.command(0, LOCKSTEP_MODE_RTL, 0),
            Action::Land => self.command(0, LOCKSTEP_MODE_LAND, 0),
            Action::Hold => self.command(0, LOCKSTEP_MODE_HOLD, 0),
            Action::WindGust {
                amplitude_ned_mps,
                rise,
                hold,
                fall,
            } => {
                self.wind.add_gust(Gust {
                    start: t,
                    rise,
                    hold,
                    fall,
                    amplitude_ned_mps,
                });
            }
            Action::MotorFail { motor } => self.faults.motor_failed[motor] = true,
            Action::MotorRestore { motor } => {
                self.faults.motor_failed[motor] = false;
                self.faults.thrust_loss[motor] = 0.0;
            }
            Action::ThrustLoss { motor, fraction } => self.faults.thrust_loss[motor] = fraction,
            Action::BatteryDisconnect { battery } => {
                self.faults.battery_disconnected[battery] = true
            }
            Action::BatteryReconnect { battery } => {
                self.faults.battery_disconnected[battery] = false
            }
            Action::SensorDropout { sensor } => self.faults.sensors[sf(sensor)].dropout = true,
            Action::SensorFreeze { sensor } => self.faults.sensors[sf(sensor)].freeze = true,
            Action::SensorBiasStep { sensor, value } => {
                self.faults.sensors[sf(sensor)].bias += value
            }
            Action::SensorNoiseScale { sensor, value } => self.scale_noise(sensor, value),
            Action::SensorClear { sensor } => {
                self.faults.sensors[sf(sensor)] = SensorFault::default()
            }
        }
    }

    fn scale_noise(&mut self, s: SensorId, k: f64) {
        match s {
            SensorId::Imu => {
                self.imu.noise.accel_noise_mps2 *= k;
                self.imu.noise.gyro_noise_radps *= k;
            }
            SensorId::Mag => self.mag.noise_gauss *= k,
            SensorId::Baro => self.baro.noise_pa *= k,
            SensorId::Gps => {
                self.gps.config.horizontal_noise_m *= k;
                self.gps.config.vertical_noise_m *= k;
                self.gps.config.velocity_noise_mps *= k;
            }
            SensorId::Estimator => {
                let c = &mut self.est.config;
                c.position_noise_m *= k;
                c.velocity_noise_mps *= k;
                c.attitude_noise_rad *= k;
                c.rates_noise_radps *= k;
            }
        }
    }

    /// Turns the fault state into what the plant and the sensors see: motor
    /// enable, thrust scale and battery connection on the plant's inputs (so
    /// they are recorded and replayed), and the sensor fault table.
    pub(super) fn stage_faults(&mut self) {
        self.faults_changed = false;
        let f = &self.faults;
        for i in 0..self.plant.rotors.len() {
            self.inputs.motor_enabled[i] = !f.motor_failed[i];
            self.inputs.thrust_scale[i] = 1.0 - f.thrust_loss[i];
        }
        for j in 0..self.plant.batteries.len() {
            self.inputs.battery_connected[j] = !f.battery_disconnected[j];
        }
        self.sensor_faults = f.sensors;
    }
}

//! The flight as PX4's ULog, written during the run (`fly --ulog`), with
//! PX4's topic names, for Flight Review, PlotJuggler and pyulog:
//!
//! | topic | what | when |
//! |---|---|---|
//! | `vehicle_local_position` | the estimate the autopilot received | each log row |
//! | `vehicle_local_position_groundtruth` | the truth | each log row |
//! | `vehicle_local_position_setpoint` | the autopilot's setpoints | each log row |
//! | `vehicle_attitude` / `vehicle_attitude_groundtruth` | estimated / true quaternion | each log row |
//! | `vehicle_angular_velocity` | true body rates | each log row |
//! | `vehicle_global_position` | the truth's latitude, longitude, altitude | each log row |
//! | `actuator_motors` | motor commands 0..1 (`control[12]`, NaN past the rotors) | each log row |
//! | `actuator_outputs` | the same as PWM, 1000 + 1000 × command µs (`output[16]`) | each log row |
//! | `battery_status` | the first pack's voltage, current, charge | each log row |
//! | `wind` | the wind's north and east components | each log row |
//! | `vehicle_status` | `arming_state` (1 disarmed, 2 armed), `nav_state` (below) | at a change |
//! | `vehicle_land_detected` | the ground-contact sensor the autopilot reads | at a change |
//! | `sensor_combined` | the IMU samples the autopilot read | each new one at an autopilot step |
//! | `vehicle_magnetometer`, `sensor_baro`, `vehicle_gps_position` | their samples | each new one at an autopilot step |
//!
//! `nav_state`, PX4's numbering of lockstep's modes: disarmed, idle and
//! hold 4 (Hold), takeoff 17, mission 3, rtl 5, land and landed 18,
//! offboard 14, none and flight-stack 0.
//!
//! Information fields: `sys_name` (lockstep), `ver_sw` (its version),
//! `ver_hw` (the airframe), `sys_uuid` (the run: a digest of its scenario
//! file, overrides-applied seed and airframe, so the same run has the same
//! id). Parameters: the autopilot's whole table with each default (ULog's
//! parameter-default messages, as PX4 writes them) when the library
//! enumerates it (ABI 4), else those the scenario sets under
//! `[autopilot.params]`, as the autopilot reads them back; and each change
//! a ground station makes during the flight. Logged messages: the run's timeline (events and mode
//! changes at info, failsafes at warning, crashes at error).

mod file;
mod topics;

pub use file::{Param, UlogFile};

use lockstep_abi::ffi::lockstep_sensor_frame;

use crate::io::log::LogRow;
use crate::outcome::journal::{Entry, EntryKind};
use topics::Topic;

/// What the file says of the run before its data.
#[derive(Debug, Clone, Default)]
pub struct UlogInfo {
    /// The airframe's name (`ver_hw`).
    pub airframe: String,
    /// The run's id (`sys_uuid`).
    pub run_id: String,
    /// The IMU's period, µs (`sensor_combined`'s integral times).
    pub imu_period_us: u32,
    /// The parameters at the start, by name.
    pub params: Vec<(String, Param)>,
    /// Their defaults (the library's table; empty when it has none).
    pub defaults: Vec<(String, Param)>,
}

/// A ULog being written as the flight goes.
#[derive(Debug)]
pub struct UlogRecorder {
    file: UlogFile,
    imu_period_us: u32,
    /// The last sample written of each sensor (its timestamp).
    seen: [u64; 4],
    /// The last status and landing state written.
    status: Option<(u8, u8)>,
    landed: Option<bool>,
}

impl UlogRecorder {
    /// Creates `path` with the definitions and subscriptions.
    pub fn create(path: &std::path::Path, info: &UlogInfo) -> std::io::Result<UlogRecorder> {
        let mut file = UlogFile::create(path, !info.defaults.is_empty())?;
        file.info("sys_name", "lockstep")?;
        file.info("ver_sw", env!("CARGO_PKG_VERSION"))?;
        file.info("ver_hw", &info.airframe)?;
        file.info("sys_uuid", &info.run_id)?;
        for t in Topic::ALL {
            file.format(t.name(), &t.fields())?;
        }
        for (name, value) in &info.params {
            file.param(name, *value)?;
        }
        for (name, value) in &info.defaults {
            file.param_default(name, *value)?;
        }
        for t in Topic::ALL {
            file.subscribe(t as u16, t.name())?;
        }
        Ok(UlogRecorder {
            file,
            imu_period_us: info.imu_period_us,
            seen: [u64::MAX; 4],
            status: None,
            landed: None,
        })
    }

    /// The state topics of a log row, and the status when it changed.
    pub fn row(&mut self, r: &LogRow) -> std::io::Result<()> {
        for t in Topic::ROWS {
            let f = t.of_row(r);
            self.file.data(*t as u16, r.time_us, &f.0)?;
        }
        let status = (if r.armed != 0 { 2 } else { 1 }, topics::nav_state(r.mode));
        if self.status != Some(status) {
            self.status = Some(status);
            let mut f = file::Fields::default();
            f.u8(status.0).u8(status.1).u8(1);
            self.file
                .data(Topic::VehicleStatus as u16, r.time_us, &f.0)?;
        }
        Ok(())
    }

    /// The sensor samples of `frame` not yet written, and the landing state
    /// when it changed.
    pub fn sensors(&mut self, frame: &lockstep_sensor_frame) -> std::io::Result<()> {
        let landed = frame.landed != 0;
        if self.landed != Some(landed) {
            self.landed = Some(landed);
            let mut f = file::Fields::default();
            f.u8(landed.into()).u8(landed.into()).u8(landed.into());
            self.file
                .data(Topic::VehicleLandDetected as u16, frame.time_us, &f.0)?;
        }
        let samples = [
            (Topic::SensorCombined, frame.imu.timestamp_us),
            (Topic::VehicleMagnetometer, frame.mag.timestamp_us),
            (Topic::SensorBaro, frame.baro.timestamp_us),
            (Topic::VehicleGpsPosition, frame.gps.timestamp_us),
        ];
        for (k, (t, at)) in samples.into_iter().enumerate() {
            // A sensor never sampled has timestamp 0 and nothing to say.
            if at == 0 || self.seen[k] == at {
                continue;
            }
            self.seen[k] = at;
            let f = t.of_sample(frame, self.imu_period_us);
            self.file.data(t as u16, at, &f.0)?;
        }
        Ok(())
    }

    /// A parameter changed during the flight (at the latest data's time).
    pub fn param_changed(&mut self, name: &str, value: Param) -> std::io::Result<()> {
        self.file.param(name, value)
    }

    /// Writes the timeline as logged messages and closes the file.
    pub fn finish(mut self, timeline: &[Entry]) -> std::io::Result<()> {
        for e in timeline {
            let level = match e.kind {
                EntryKind::Crash => 3,
                EntryKind::Failsafe => 4,
                _ => 6,
            };
            self.file
                .logged(level, e.time_us, &format!("{}: {}", e.kind.name(), e.what))?;
        }
        self.file.finish()
    }
}

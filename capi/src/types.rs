//! The structs and enums that cross the boundary. Every struct starts with
//! `size`, which the caller sets to `sizeof` the struct (also for structs
//! the library writes): a host built against another version of the header
//! gets `LOCKSTEP_ERR_STRUCT_SIZE`, never a partial read or write.

use std::ffi::c_char;

use crate::boundary::{Failure, Versioned, argument};

/// Most rotors a vehicle has (the motor arrays' length).
pub const LOCKSTEP_HARNESS_MAX_ROTORS: usize = 12;

/// The longest interval one `lockstep_plant_step` covers, µs (10 s).
pub const LOCKSTEP_PLANT_MAX_STEP_US: u64 = 10_000_000;
const _: () = assert!(LOCKSTEP_PLANT_MAX_STEP_US == lockstep_harness::engine::PLANT_MAX_STEP_US);

const _: () = assert!(
    LOCKSTEP_HARNESS_MAX_ROTORS == lockstep_plant::multirotor::MAX_ROTORS
        && LOCKSTEP_HARNESS_MAX_ROTORS == lockstep_abi::ffi::LOCKSTEP_MAX_ROTORS as usize
);

/// Options for creating a `lockstep_sim` or a `lockstep_bridge`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct lockstep_options {
    /// `sizeof(lockstep_options)`.
    pub size: u32,
    /// Where the autopilot runs: `LOCKSTEP_ISOLATION_IN_PROCESS` or
    /// `LOCKSTEP_ISOLATION_PROCESS` (a child process: a crash or hang of
    /// the library becomes `LOCKSTEP_ERR_AUTOPILOT` with its signal,
    /// function and time, and the handle stays usable for reading).
    pub isolation: u32,
    /// The autopilot library (a path); NULL: the bundled reference
    /// autopilot (the one `lockstep fly` flies by default).
    pub autopilot_path: *const c_char,
    /// The program that hosts the autopilot in the isolated mode (run as
    /// `PROGRAM --serve ...`: the `lockstep` binary or `liblockstep.so`);
    /// NULL: the one `LOCKSTEP_AUTOPILOT_HOST` names, else liblockstep.so
    /// itself (x86_64 Linux), else `lockstep` next to the running
    /// executable.
    pub autopilot_host_path: *const c_char,
    /// Write the CSV flight log here (the scenario needs a `log` cadence);
    /// NULL: no log. Whole vehicles only.
    pub log_path: *const c_char,
    /// Record the run here (for `lockstep replay`); NULL: no recording.
    /// Whole vehicles only.
    pub record_path: *const c_char,
}

impl Versioned for lockstep_options {
    const NAME: &'static str = "lockstep_options";
}

/// The autopilot runs in this process.
pub const LOCKSTEP_ISOLATION_IN_PROCESS: u32 = 0;
/// The autopilot runs in a child process.
pub const LOCKSTEP_ISOLATION_PROCESS: u32 = 1;

/// The vehicle's true state (NED world frame, FRD body frame, SI units):
/// read from a whole vehicle or a plant, handed over by a host to a bridge.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct lockstep_truth {
    /// `sizeof(lockstep_truth)`.
    pub size: u32,
    /// 1 when the vehicle touches the ground.
    pub on_ground: u32,
    pub time_us: u64,
    pub position_ned_m: [f64; 3],
    pub velocity_ned_mps: [f64; 3],
    /// Body to NED, scalar first.
    pub attitude_q: [f64; 4],
    pub rates_frd_radps: [f64; 3],
    /// What an ideal accelerometer at the centre of mass reads.
    pub specific_force_frd_mps2: [f64; 3],
}

impl Versioned for lockstep_truth {
    const NAME: &'static str = "lockstep_truth";
}

/// The estimate the autopilot last received.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct lockstep_estimate {
    /// `sizeof(lockstep_estimate)`.
    pub size: u32,
    pub reserved0: u32,
    /// When the estimate was made (its sample time).
    pub timestamp_us: u64,
    pub position_ned_m: [f64; 3],
    pub velocity_ned_mps: [f64; 3],
    pub attitude_q: [f64; 4],
    pub rates_frd_radps: [f64; 3],
}

impl Versioned for lockstep_estimate {
    const NAME: &'static str = "lockstep_estimate";
}

/// The autopilot's last outputs.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct lockstep_actuators {
    /// `sizeof(lockstep_actuators)`.
    pub size: u32,
    /// Rotors in use (entries of `motors` that mean something).
    pub motor_count: u32,
    /// The time of the autopilot step that produced them.
    pub time_us: u64,
    /// Motor commands, 0..1.
    pub motors: [f64; LOCKSTEP_HARNESS_MAX_ROTORS],
    /// The autopilot's mode (`LOCKSTEP_MODE_*` of autopilot.h).
    pub mode: u32,
    /// 1 when armed.
    pub armed: u32,
    /// The mission item being flown (-1: none).
    pub mission_current: i32,
    /// 1 once the mission has finished.
    pub mission_finished: u32,
}

impl Versioned for lockstep_actuators {
    const NAME: &'static str = "lockstep_actuators";
}

/// A battery: read from a whole vehicle, or handed over by a host to a
/// bridge with its truth.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct lockstep_battery_state {
    /// `sizeof(lockstep_battery_state)`.
    pub size: u32,
    /// `LOCKSTEP_BATTERY_*` warning level of autopilot.h.
    pub warning: u32,
    pub voltage_v: f64,
    pub current_a: f64,
    /// State of charge, 0..1.
    pub remaining: f64,
    /// 1 when connected to the bus.
    pub connected: u32,
    pub reserved0: u32,
}

impl Versioned for lockstep_battery_state {
    const NAME: &'static str = "lockstep_battery_state";
}

/// One autopilot parameter (`lockstep_sim_param`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct lockstep_param {
    /// `sizeof(lockstep_param)`.
    pub size: u32,
    /// `LOCKSTEP_PARAM_TYPE_*` of autopilot.h (1 float, 2 int32).
    pub r#type: u32,
    /// The name, NUL-terminated (at most 16 characters, MAVLink's limit).
    pub name: [std::ffi::c_char; 24],
    /// The value in force (an int32's exact in the double).
    pub value: f64,
    /// The value just after the autopilot was created.
    pub default_value: f64,
}

impl Versioned for lockstep_param {
    const NAME: &'static str = "lockstep_param";
}

/// The plant integrator's work so far.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct lockstep_integrator_stats {
    /// `sizeof(lockstep_integrator_stats)`.
    pub size: u32,
    pub reserved0: u32,
    pub rhs_evals: u64,
    pub accepted_steps: u64,
    pub rejected_steps: u64,
}

impl Versioned for lockstep_integrator_stats {
    const NAME: &'static str = "lockstep_integrator_stats";
}

/// A fault to inject: what (`LOCKSTEP_FAULT_*`), on which motor, battery or
/// sensor (`LOCKSTEP_SENSOR_*`), and its value where it has one.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct lockstep_fault {
    /// `sizeof(lockstep_fault)`.
    pub size: u32,
    /// `LOCKSTEP_FAULT_*`.
    pub kind: u32,
    /// The motor, battery or sensor it acts on.
    pub index: u32,
    pub reserved0: u32,
    /// Thrust loss: the fraction lost (0..1); sensor bias step: the bias
    /// added; noise scale: the factor.
    pub value: f64,
}

impl Versioned for lockstep_fault {
    const NAME: &'static str = "lockstep_fault";
}

/// How a run ended (`lockstep_verdict.outcome`).
/// It reached its planned end (its verdict says whether it met its
/// expectations).
pub const LOCKSTEP_OUTCOME_COMPLETED: u32 = 0;
/// An error stopped it.
pub const LOCKSTEP_OUTCOME_STOPPED: u32 = 1;
/// A signal stopped it.
pub const LOCKSTEP_OUTCOME_INTERRUPTED: u32 = 2;

/// What kind of failure a run's status stands for
/// (`lockstep_verdict.error_class`; the CLI's exit statuses, Python's
/// exceptions).
/// None: the run completed and met its expectations.
pub const LOCKSTEP_CLASS_NONE: u32 = 0;
/// An input was refused.
pub const LOCKSTEP_CLASS_CONFIGURATION: u32 = 1;
/// The autopilot, the plant or an output failed during the run.
pub const LOCKSTEP_CLASS_RUN_FAILURE: u32 = 2;
/// The run completed but its verdict failed (a crash, an `[expect]`
/// condition not met).
pub const LOCKSTEP_CLASS_EXPECTATION_FAILED: u32 = 3;
/// A signal stopped it.
pub const LOCKSTEP_CLASS_INTERRUPTED: u32 = 4;

/// The verdict of a run that has ended: the same one `lockstep fly`
/// prints and `lockstep_sim_report` gives as JSON.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct lockstep_verdict {
    /// `sizeof(lockstep_verdict)`.
    pub size: u32,
    /// `LOCKSTEP_OUTCOME_*`.
    pub outcome: u32,
    /// 1 when the run completed, no crash counted against it and every
    /// `[expect]` check was met.
    pub passed: u32,
    /// `LOCKSTEP_CLASS_*`.
    pub error_class: u32,
    /// The exit status `lockstep fly` gives the same run (0 success, 1 run
    /// failure, 2 configuration, 3 expectation failed, 128 + a signal).
    pub exit_status: u32,
    /// Crashes the monitor detected (counted against the verdict unless
    /// the scenario allows them).
    pub crashes: u32,
    /// The `[expect]` checks made, and how many of them failed.
    pub checks: u32,
    pub checks_failed: u32,
    /// Simulated time reached.
    pub simulated_us: u64,
}

impl Versioned for lockstep_verdict {
    const NAME: &'static str = "lockstep_verdict";
}

/// Commands for `lockstep_sim_command` and `lockstep_bridge_command`.
pub const LOCKSTEP_COMMAND_ARM: u32 = 1;
pub const LOCKSTEP_COMMAND_DISARM: u32 = 2;
pub const LOCKSTEP_COMMAND_MISSION_START: u32 = 3;
pub const LOCKSTEP_COMMAND_RTL: u32 = 4;
pub const LOCKSTEP_COMMAND_LAND: u32 = 5;
pub const LOCKSTEP_COMMAND_HOLD: u32 = 6;

/// Fault kinds (`lockstep_fault.kind`). The first five act on the plant
/// (`index` is a motor or battery), the others on a sensor.
pub const LOCKSTEP_FAULT_MOTOR_FAIL: u32 = 1;
pub const LOCKSTEP_FAULT_MOTOR_RESTORE: u32 = 2;
pub const LOCKSTEP_FAULT_THRUST_LOSS: u32 = 3;
pub const LOCKSTEP_FAULT_BATTERY_DISCONNECT: u32 = 4;
pub const LOCKSTEP_FAULT_BATTERY_RECONNECT: u32 = 5;
pub const LOCKSTEP_FAULT_SENSOR_DROPOUT: u32 = 6;
pub const LOCKSTEP_FAULT_SENSOR_FREEZE: u32 = 7;
pub const LOCKSTEP_FAULT_SENSOR_BIAS_STEP: u32 = 8;
pub const LOCKSTEP_FAULT_SENSOR_NOISE_SCALE: u32 = 9;
pub const LOCKSTEP_FAULT_SENSOR_CLEAR: u32 = 10;

/// Sensors (`lockstep_fault.index` of a sensor fault).
pub const LOCKSTEP_SENSOR_IMU: u32 = 0;
pub const LOCKSTEP_SENSOR_MAG: u32 = 1;
pub const LOCKSTEP_SENSOR_BARO: u32 = 2;
pub const LOCKSTEP_SENSOR_GPS: u32 = 3;
pub const LOCKSTEP_SENSOR_ESTIMATOR: u32 = 4;

use lockstep_harness::inputs::scenario::{Action, MAX_NOISE_SCALE, MAX_SENSOR_BIAS, SensorId};

/// A command value from C as a scenario action.
pub(crate) fn command(value: u32) -> Result<Action, Failure> {
    Ok(match value {
        LOCKSTEP_COMMAND_ARM => Action::Arm,
        LOCKSTEP_COMMAND_DISARM => Action::Disarm,
        LOCKSTEP_COMMAND_MISSION_START => Action::MissionStart,
        LOCKSTEP_COMMAND_RTL => Action::Rtl,
        LOCKSTEP_COMMAND_LAND => Action::Land,
        LOCKSTEP_COMMAND_HOLD => Action::Hold,
        v => {
            return Err(argument(format!(
                "command {v} is not a LOCKSTEP_COMMAND_* value (1 to 6)"
            )));
        }
    })
}

/// A fault from C as a scenario action, its index checked against the
/// vehicle's `motors` and `batteries`.
pub(crate) fn fault(
    f: &lockstep_fault,
    motors: usize,
    batteries: usize,
) -> Result<Action, Failure> {
    let i = f.index as usize;
    let motor = || {
        if i < motors {
            Ok(i)
        } else {
            Err(argument(format!(
                "motor {i}, but the vehicle has {motors} (0 to {})",
                motors - 1
            )))
        }
    };
    let battery = || {
        if i < batteries {
            Ok(i)
        } else {
            Err(argument(format!(
                "battery {i}, but the vehicle has {batteries} (0 to {})",
                batteries.saturating_sub(1)
            )))
        }
    };
    let sensor = || {
        SensorId::ALL.get(i).copied().ok_or_else(|| {
            argument(format!(
                "sensor {i} is not a LOCKSTEP_SENSOR_* value (0 to 4)"
            ))
        })
    };
    let value = |what: &str, ok: &dyn Fn(f64) -> bool| {
        if f.value.is_finite() && ok(f.value) {
            Ok(f.value)
        } else {
            Err(argument(format!(
                "`fault.value` {:e} is not a valid {what}",
                f.value
            )))
        }
    };
    Ok(match f.kind {
        LOCKSTEP_FAULT_MOTOR_FAIL => Action::MotorFail { motor: motor()? },
        LOCKSTEP_FAULT_MOTOR_RESTORE => Action::MotorRestore { motor: motor()? },
        LOCKSTEP_FAULT_THRUST_LOSS => Action::ThrustLoss {
            motor: motor()?,
            fraction: value("fraction (0 to 1)", &|v| (0.0..=1.0).contains(&v))?,
        },
        LOCKSTEP_FAULT_BATTERY_DISCONNECT => Action::BatteryDisconnect {
            battery: battery()?,
        },
        LOCKSTEP_FAULT_BATTERY_RECONNECT => Action::BatteryReconnect {
            battery: battery()?,
        },
        LOCKSTEP_FAULT_SENSOR_DROPOUT => Action::SensorDropout { sensor: sensor()? },
        LOCKSTEP_FAULT_SENSOR_FREEZE => Action::SensorFreeze { sensor: sensor()? },
        LOCKSTEP_FAULT_SENSOR_BIAS_STEP => Action::SensorBiasStep {
            sensor: sensor()?,
            value: value("bias (-1e6 to 1e6)", &|v| v.abs() <= MAX_SENSOR_BIAS)?,
        },
        LOCKSTEP_FAULT_SENSOR_NOISE_SCALE => Action::SensorNoiseScale {
            sensor: sensor()?,
            value: value("noise factor (0 to 1000)", &|v| {
                (0.0..=MAX_NOISE_SCALE).contains(&v)
            })?,
        },
        LOCKSTEP_FAULT_SENSOR_CLEAR => Action::SensorClear { sensor: sensor()? },
        k => {
            return Err(argument(format!(
                "fault kind {k} is not a LOCKSTEP_FAULT_* value (1 to 10)"
            )));
        }
    })
}

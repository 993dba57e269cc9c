//! The safe instance wrapper, in this process or isolated in a child.

use std::path::Path;

use crate::frames::{Vehicle, check_vehicle};
use crate::instance::{Instance, check_config};
use crate::isolate::{Isolation, Remote};
use crate::library::AutopilotLibrary;
use crate::stack::{FlightStack, GroundTruth, StackNotes};
use crate::{AbiError, ffi, validate_outputs};

/// Most mission items an upload may carry (MAVLink's 16-bit sequence
/// numbers allow 65,535); the isolated mode's shared memory is sized for it.
pub const MAX_MISSION_ITEMS: usize = 65_535;

/// What [`Autopilot::step`] does with a finite command outside its range.
/// Non-finite values are always an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OutputPolicy {
    /// Refuse the step with [`AbiError::InvalidOutput`] (the default).
    #[default]
    Reject,
    /// Clamp motors to [0, 1] and servos to [-1, 1].
    Clamp,
}

#[derive(Debug)]
enum Backend {
    /// The library runs in this process.
    Local(Instance),
    /// The library runs in a child process (see [`crate::isolate`]).
    Isolated(Box<Remote>),
    /// A flight stack over its simulator protocol, with the truth the
    /// harness gave for the next step.
    Stack(Box<dyn FlightStack>, Box<GroundTruth>),
    /// Destroyed by [`Autopilot::close`].
    Closed,
}

/// What a flight stack's link cannot do (its protocol has no call for it).
fn unsupported(stack: &dyn FlightStack, action: &str) -> AbiError {
    AbiError::StackUnsupported {
        stack: stack.describe(),
        action: action.into(),
        reason: "its simulator protocol carries sensors and actuators only; \
                 the flight stack takes missions, parameters and commands over \
                 its own MAVLink link"
            .into(),
    }
}

fn closed() -> AbiError {
    AbiError::InvalidInput {
        reason: "the autopilot instance was closed".into(),
    }
}

/// An instance's state as [`Autopilot::snapshot`] took it: the library's
/// bytes and the time of its last step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AutopilotSnapshot {
    pub bytes: Vec<u8>,
    pub last_time_us: Option<u64>,
}

/// One autopilot instance. Destroyed on drop.
///
/// Every step is checked on the harness's side: times strictly increase,
/// outputs are in range, zero for motors and servos the vehicle lacks, and
/// consistent with the mission uploaded. The memory contract (a private
/// sensor copy, a guard zone after the actuator frame) is enforced where the
/// library runs.
#[derive(Debug)]
pub struct Autopilot {
    backend: Backend,
    policy: OutputPolicy,
    last_time_us: Option<u64>,
    vehicle: Vehicle,
}

impl AutopilotLibrary {
    /// Creates an instance in this process. Refuses a second live instance
    /// of a library that is not re-entrant, and a config whose size field
    /// or rotor count is off.
    pub fn create(&self, config: &ffi::lockstep_autopilot_config) -> Result<Autopilot, AbiError> {
        check_config(config)?;
        let instance = Instance::create(self, config)?;
        Ok(Autopilot::with(Backend::Local(instance), config))
    }
}

impl Autopilot {
    /// Loads the library at `path` and creates an instance with `config`,
    /// in this process or in a child process as `isolation` says.
    ///
    /// In-process, the library is first probed in a child process when the
    /// host is available (see [`crate::isolate::host_program`]), so
    /// that a library whose initialisers crash or exit is reported instead
    /// of taking the harness down.
    pub fn open(
        path: &Path,
        config: &ffi::lockstep_autopilot_config,
        isolation: &Isolation,
    ) -> Result<Autopilot, AbiError> {
        check_config(config)?;
        match isolation {
            Isolation::InProcess => {
                if let Ok(host) = crate::isolate::host_program(None) {
                    match crate::isolate::probe(&host, path, None) {
                        Ok(report) => {
                            report.problem_free()?;
                        }
                        // No probe possible here: load as before.
                        Err(AbiError::HostUnavailable { .. }) => {}
                        Err(e) => return Err(e),
                    }
                }
                AutopilotLibrary::load(path)?.create(config)
            }
            Isolation::Process(options) => {
                let remote = Remote::spawn(path, config, options)?;
                Ok(Autopilot::with(Backend::Isolated(Box::new(remote)), config))
            }
        }
    }

    /// A flight stack stepped over its simulator protocol as an autopilot
    /// configured with `config`; its outputs are checked as a library's.
    pub fn from_stack(
        stack: Box<dyn FlightStack>,
        config: &ffi::lockstep_autopilot_config,
    ) -> Result<Autopilot, AbiError> {
        check_config(config)?;
        Ok(Autopilot::with(
            Backend::Stack(stack, Box::default()),
            config,
        ))
    }

    /// The vehicle's true state for the next step: sent by a flight stack's
    /// protocol (PX4's ground truth, ArduPilot's state); a library never
    /// sees it.
    pub fn give_truth(&mut self, truth: &GroundTruth) {
        if let Backend::Stack(_, t) = &mut self.backend {
            **t = *truth;
        }
    }

    /// Makes a flight stack's waits for its peer end once `flag` holds a
    /// signal number (a library's step does not wait on anyone).
    pub fn interrupt_on(&mut self, flag: std::sync::Arc<std::sync::atomic::AtomicUsize>) {
        if let Backend::Stack(s, _) = &mut self.backend {
            s.interrupt_on(flag);
        }
    }

    /// Whether this is a flight stack over its simulator protocol.
    pub fn is_stack(&self) -> bool {
        matches!(self.backend, Backend::Stack(..))
    }

    /// A flight stack's description (kind and address); `None` for a library.
    pub fn stack_description(&self) -> Option<String> {
        match &self.backend {
            Backend::Stack(s, _) => Some(s.describe()),
            _ => None,
        }
    }

    /// What a flight stack's link ignored or noticed (empty for a library).
    pub fn stack_notes(&self) -> StackNotes {
        match &self.backend {
            Backend::Stack(s, _) => s.notes(),
            _ => StackNotes::default(),
        }
    }

    fn with(backend: Backend, config: &ffi::lockstep_autopilot_config) -> Autopilot {
        Autopilot {
            backend,
            policy: OutputPolicy::default(),
            last_time_us: None,
            vehicle: Vehicle {
                motors: config.rotor_count as usize,
                servos: 0,
                mission_items: 0,
            },
        }
    }

    /// True when the library runs in a child process.
    pub fn is_isolated(&self) -> bool {
        matches!(self.backend, Backend::Isolated(_))
    }

    /// The library's name/version string, when it exports one.
    pub fn library_name(&self) -> Option<&str> {
        match &self.backend {
            Backend::Local(i) => i.library().name.as_deref(),
            Backend::Isolated(r) => r.info().name.as_deref(),
            Backend::Stack(..) | Backend::Closed => None,
        }
    }

    /// The library's `LOCKSTEP_AP_CAP_*` bits.
    pub fn capabilities(&self) -> u32 {
        match &self.backend {
            Backend::Local(i) => i.library().capabilities,
            Backend::Isolated(r) => r.info().capabilities,
            Backend::Stack(..) | Backend::Closed => 0,
        }
    }

    /// Chooses how out-of-range finite commands are handled.
    pub fn set_output_policy(&mut self, policy: OutputPolicy) {
        self.policy = policy;
    }

    /// Runs one step at `time_us`. `sensors.time_us` must equal `time_us`,
    /// and times must strictly increase. On success `out` holds the checked
    /// actuator frame; on any error `out` is left untouched.
    ///
    /// The contract is enforced: the library steps on a private copy of the
    /// sensor frame (writing into it, `const` in the header, is an error),
    /// into an actuator frame followed by a guard zone (writing past it is
    /// an error), and its outputs must be in range, zero for motors and
    /// servos the vehicle lacks, and consistent with the mission uploaded.
    pub fn step(
        &mut self,
        time_us: u64,
        sensors: &ffi::lockstep_sensor_frame,
        out: &mut ffi::lockstep_actuator_frame,
    ) -> Result<(), AbiError> {
        if sensors.time_us != time_us {
            return Err(AbiError::InvalidInput {
                reason: format!(
                    "sensor frame time_us {} differs from the step time {time_us}",
                    sensors.time_us
                ),
            });
        }
        if let Some(prev) = self.last_time_us
            && time_us <= prev
        {
            return Err(AbiError::TimeNotIncreasing {
                time_us,
                previous_us: prev,
            });
        }
        self.last_time_us = Some(time_us);
        let mut frame = match &mut self.backend {
            Backend::Local(i) => *i.step(time_us, sensors)?,
            Backend::Isolated(r) => r.step(time_us, sensors)?,
            Backend::Stack(s, truth) => s.step(time_us, sensors, truth)?,
            Backend::Closed => return Err(closed()),
        };
        validate_outputs(&mut frame, time_us, self.policy)?;
        if frame.mode == ffi::LOCKSTEP_MODE_STACK && !self.is_stack() {
            return Err(AbiError::InvalidOutput {
                time_us,
                field: "mode".into(),
                value: frame.mode.to_string(),
                reason: "LOCKSTEP_MODE_STACK is a flight stack's, not a library's".into(),
            });
        }
        check_vehicle(&frame, &self.vehicle, time_us)?;
        *out = frame;
        Ok(())
    }

    /// Replaces the mission (at most [`MAX_MISSION_ITEMS`] items).
    pub fn upload_mission(&mut self, items: &[ffi::lockstep_mission_item]) -> Result<(), AbiError> {
        if items.len() > MAX_MISSION_ITEMS {
            return Err(AbiError::InvalidInput {
                reason: format!(
                    "a mission of {} items; at most {MAX_MISSION_ITEMS} can be uploaded",
                    items.len()
                ),
            });
        }
        match &mut self.backend {
            Backend::Local(i) => i.upload_mission(items)?,
            Backend::Isolated(r) => r.upload_mission(items)?,
            Backend::Stack(s, _) => return Err(unsupported(s.as_ref(), "take a mission upload")),
            Backend::Closed => return Err(closed()),
        }
        self.vehicle.mission_items = items.len() as u32;
        Ok(())
    }

    /// Sets a float parameter.
    pub fn set_param_f32(&mut self, name: &str, value: f32) -> Result<(), AbiError> {
        match &mut self.backend {
            Backend::Local(i) => i.set_param_f32(name, value),
            Backend::Isolated(r) => r.set_param_f32(name, value),
            Backend::Stack(s, _) => Err(unsupported(s.as_ref(), "set a parameter")),
            Backend::Closed => Err(closed()),
        }
    }

    /// Reads a float parameter.
    pub fn param_f32(&mut self, name: &str) -> Result<f32, AbiError> {
        match &mut self.backend {
            Backend::Local(i) => i.param_f32(name),
            Backend::Isolated(r) => r.param_f32(name),
            Backend::Stack(s, _) => Err(unsupported(s.as_ref(), "read a parameter")),
            Backend::Closed => Err(closed()),
        }
    }

    /// Sets an integer parameter.
    pub fn set_param_i32(&mut self, name: &str, value: i32) -> Result<(), AbiError> {
        match &mut self.backend {
            Backend::Local(i) => i.set_param_i32(name, value),
            Backend::Isolated(r) => r.set_param_i32(name, value),
            Backend::Stack(s, _) => Err(unsupported(s.as_ref(), "set a parameter")),
            Backend::Closed => Err(closed()),
        }
    }

    /// Reads an integer parameter.
    pub fn param_i32(&mut self, name: &str) -> Result<i32, AbiError> {
        match &mut self.backend {
            Backend::Local(i) => i.param_i32(name),
            Backend::Isolated(r) => r.param_i32(name),
            Backend::Stack(s, _) => Err(unsupported(s.as_ref(), "read a parameter")),
            Backend::Closed => Err(closed()),
        }
    }

    /// The library's whole parameter table (values now and defaults);
    /// `None` when the library does not enumerate its parameters (ABI 3, or
    /// an ABI-4 library without `param_count`/`param_info`, or a flight
    /// stack).
    pub fn params(&mut self) -> Result<Option<Vec<crate::NamedParam>>, AbiError> {
        match &mut self.backend {
            Backend::Local(i) => i.params(),
            Backend::Isolated(r) => r.params(),
            Backend::Stack(..) => Ok(None),
            Backend::Closed => Err(closed()),
        }
    }

    /// The ABI version of the library flown (0 for a flight stack).
    pub fn abi_version(&self) -> u32 {
        match &self.backend {
            Backend::Local(i) => i.library().abi_version,
            Backend::Isolated(r) => r.info().abi_version,
            Backend::Stack(..) | Backend::Closed => 0,
        }
    }

    /// Returns the instance to its just-created state (parameters and mission
    /// kept); the next step may start at any time again.
    pub fn reset(&mut self) -> Result<(), AbiError> {
        match &mut self.backend {
            Backend::Local(i) => i.reset()?,
            Backend::Isolated(r) => r.reset()?,
            Backend::Stack(s, _) => return Err(unsupported(s.as_ref(), "be reset")),
            Backend::Closed => return Err(closed()),
        }
        self.last_time_us = None;
        Ok(())
    }

    /// Whether the library exports the migration functions
    /// (`lockstep_autopilot_snapshot_size`, `_snapshot`, `_restore`).
    pub fn can_migrate(&self) -> bool {
        match &self.backend {
            Backend::Local(i) => i.can_migrate(),
            Backend::Isolated(r) => r.info().migrates,
            Backend::Stack(..) | Backend::Closed => false,
        }
    }

    /// The instance's whole state, for [`Autopilot::restore`] into an
    /// instance of the same library created with the same config, in
    /// this process or another.
    pub fn snapshot(&mut self) -> Result<AutopilotSnapshot, AbiError> {
        let bytes = match &mut self.backend {
            Backend::Local(i) => i.snapshot()?,
            Backend::Isolated(r) => r.snapshot()?,
            Backend::Stack(s, _) => return Err(unsupported(s.as_ref(), "take a snapshot")),
            Backend::Closed => return Err(closed()),
        };
        Ok(AutopilotSnapshot {
            bytes,
            last_time_us: self.last_time_us,
        })
    }

    /// Continues from `s`: the next step must be later than the snapshot's
    /// last one, as it would have been for the original instance.
    pub fn restore(&mut self, s: &AutopilotSnapshot) -> Result<(), AbiError> {
        match &mut self.backend {
            Backend::Local(i) => i.restore(&s.bytes)?,
            Backend::Isolated(r) => r.restore(&s.bytes)?,
            Backend::Stack(st, _) => return Err(unsupported(st.as_ref(), "restore a snapshot")),
            Backend::Closed => return Err(closed()),
        }
        self.last_time_us = s.last_time_us;
        Ok(())
    }

    /// The library's message for this instance's last failure ("" when it
    /// has none or does not export `lockstep_autopilot_last_error`).
    pub fn last_error(&mut self) -> String {
        match &mut self.backend {
            Backend::Local(i) => i.last_error(),
            Backend::Isolated(r) => r.last_error(),
            Backend::Stack(..) | Backend::Closed => String::new(),
        }
    }

    /// Destroys the instance now and reports how that went: in the isolated
    /// mode a crash or hang in `destroy` is an error here (dropping
    /// destroys too, but cannot report).
    /// Later calls fail; closing twice is a no-op.
    pub fn close(&mut self) -> Result<(), AbiError> {
        match std::mem::replace(&mut self.backend, Backend::Closed) {
            Backend::Local(i) => {
                drop(i);
                Ok(())
            }
            Backend::Isolated(r) => r.close(),
            Backend::Stack(mut s, _) => s.close(),
            Backend::Closed => Ok(()),
        }
    }
}

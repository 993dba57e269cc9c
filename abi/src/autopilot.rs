//! The safe instance wrapper.

use std::collections::BTreeSet;
use std::ffi::{CString, c_char};
use std::ptr::NonNull;
use std::sync::{Arc, Mutex};

use crate::library::{AutopilotLibrary, LibInner};
use crate::{AbiError, ffi, validate_outputs};

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

/// Loaded objects (by file identity) of non-re-entrant libraries that have a
/// live instance in this process.
static LIVE_SINGLE_INSTANCE: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());

fn live_set() -> std::sync::MutexGuard<'static, BTreeSet<String>> {
    LIVE_SINGLE_INSTANCE
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

/// Size of the buffers handed to the library for messages.
const MESSAGE_LEN: usize = 512;

fn message_from(buf: &[u8]) -> String {
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// One autopilot instance. Destroyed on drop.
#[derive(Debug)]
pub struct Autopilot {
    lib: Arc<LibInner>,
    handle: NonNull<ffi::lockstep_autopilot>,
    policy: OutputPolicy,
    last_time_us: Option<u64>,
    single_instance: bool,
}

// SAFETY: the header's threading contract lets an instance move between
// threads between calls; `&mut self` on every call rules out concurrent use.
unsafe impl Send for Autopilot {}

impl AutopilotLibrary {
    /// Creates an instance. Refuses a second live instance of a library that
    /// is not re-entrant, and a config whose size field or rotor count is off.
    pub fn create(&self, config: &ffi::lockstep_autopilot_config) -> Result<Autopilot, AbiError> {
        let expected = std::mem::size_of::<ffi::lockstep_autopilot_config>() as u32;
        if config.struct_size != expected {
            return Err(AbiError::InvalidInput {
                reason: format!(
                    "config.struct_size is {}, must be {expected}",
                    config.struct_size
                ),
            });
        }
        if config.rotor_count == 0 || config.rotor_count > ffi::LOCKSTEP_MAX_ROTORS {
            return Err(AbiError::InvalidInput {
                reason: format!(
                    "config.rotor_count is {}, must be 1..={}",
                    config.rotor_count,
                    ffi::LOCKSTEP_MAX_ROTORS
                ),
            });
        }
        let inner = &self.inner;
        let single_instance = !self.is_reentrant();
        if single_instance && !live_set().insert(inner.identity.clone()) {
            return Err(AbiError::NotReentrant {
                path: inner.path.clone(),
            });
        }
        let mut err = [0u8; MESSAGE_LEN];
        // SAFETY: `create` is the library's own symbol with the header's
        // signature; config is a valid struct and err is writable for its length.
        let raw =
            unsafe { (inner.req.create)(config, err.as_mut_ptr().cast::<c_char>(), err.len()) };
        match NonNull::new(raw) {
            Some(handle) => Ok(Autopilot {
                lib: Arc::clone(inner),
                handle,
                policy: OutputPolicy::default(),
                last_time_us: None,
                single_instance,
            }),
            None => {
                if single_instance {
                    live_set().remove(&inner.identity);
                }
                let mut message = message_from(&err);
                if message.is_empty() {
                    message = "create returned NULL without a message".into();
                }
                Err(AbiError::CreateFailed { message })
            }
        }
    }
}

impl Autopilot {
    /// The library this instance comes from.
    pub fn library(&self) -> AutopilotLibrary {
        AutopilotLibrary {
            inner: Arc::clone(&self.lib),
        }
    }

    /// Chooses what happens to finite out-of-range commands.
    pub fn set_output_policy(&mut self, policy: OutputPolicy) {
        self.policy = policy;
    }

    /// Runs one step at `time_us`. `sensors.time_us` must equal `time_us`,
    /// and times must strictly increase. On success `out` holds the checked
    /// actuator frame; on any error `out` is left untouched.
    pub fn step(
        &mut self,
        time_us: u64,
        sensors: &ffi::lockstep_sensor_frame,
        out: &mut ffi::lockstep_actuator_frame,
    ) -> Result<(), AbiError> {
        if let Some(previous_us) = self.last_time_us
            && time_us <= previous_us
        {
            return Err(AbiError::TimeNotIncreasing {
                time_us,
                previous_us,
            });
        }
        if sensors.time_us != time_us {
            return Err(AbiError::InvalidInput {
                reason: format!(
                    "sensor frame time_us {} differs from the step time {time_us}",
                    sensors.time_us
                ),
            });
        }
        let mut frame = ffi::lockstep_actuator_frame::default();
        // SAFETY: the library's step with the header's signature; the handle
        // is live (destroyed only on drop) and both frames are valid.
        let code =
            unsafe { (self.lib.req.step)(self.handle.as_ptr(), time_us, sensors, &mut frame) };
        self.last_time_us = Some(time_us);
        if code != ffi::LOCKSTEP_AP_OK {
            return Err(AbiError::StepFailed {
                time_us,
                code,
                message: self.last_error(),
            });
        }
        validate_outputs(&mut frame, time_us, self.policy)?;
        *out = frame;
        Ok(())
    }

    /// Replaces the mission.
    pub fn upload_mission(&mut self, items: &[ffi::lockstep_mission_item]) -> Result<(), AbiError> {
        let f = self.lib.opt.mission_upload.ok_or(AbiError::Unsupported {
            symbol: "lockstep_autopilot_mission_upload",
            action: "upload a mission",
        })?;
        // SAFETY: the library's symbol with the header's signature; items is
        // valid for items.len() entries (a dangling non-NULL pointer when empty,
        // never read for count 0).
        let code = unsafe { f(self.handle.as_ptr(), items.as_ptr(), items.len()) };
        if code != ffi::LOCKSTEP_AP_OK {
            return Err(AbiError::MissionRejected {
                count: items.len(),
                code,
                message: self.last_error(),
            });
        }
        Ok(())
    }

    fn param_name(name: &str) -> Result<CString, AbiError> {
        CString::new(name).map_err(|_| AbiError::Param {
            name: name.escape_debug().to_string(),
            code: ffi::LOCKSTEP_AP_ERR_INVALID,
            message: "the name contains a NUL byte".into(),
        })
    }

    fn param_result(&self, name: &str, code: i32) -> Result<(), AbiError> {
        if code == ffi::LOCKSTEP_AP_OK {
            Ok(())
        } else {
            Err(AbiError::Param {
                name: name.to_string(),
                code,
                message: self.last_error(),
            })
        }
    }

    /// Calls an optional parameter function with the live handle and the
    /// name as a C string, mapping absence and failure codes to errors.
    fn param_call<F: Copy>(
        &self,
        f: Option<F>,
        symbol: &'static str,
        action: &'static str,
        name: &str,
        call: impl FnOnce(F, *mut ffi::lockstep_autopilot, *const c_char) -> i32,
    ) -> Result<(), AbiError> {
        let f = f.ok_or(AbiError::Unsupported { symbol, action })?;
        let c = Self::param_name(name)?;
        let code = call(f, self.handle.as_ptr(), c.as_ptr());
        self.param_result(name, code)
    }

    /// Sets a float parameter.
    pub fn set_param_f32(&mut self, name: &str, value: f32) -> Result<(), AbiError> {
        let f = self.lib.opt.param_set_f32;
        self.param_call(
            f,
            "lockstep_autopilot_param_set_f32",
            "set a float parameter",
            name,
            |f, h, n| {
                // SAFETY: the library's symbol with the header's signature; live handle, NUL-terminated name.
                unsafe { f(h, n, value) }
            },
        )
    }

    /// Reads a float parameter.
    pub fn param_f32(&mut self, name: &str) -> Result<f32, AbiError> {
        let mut v = 0.0f32;
        let f = self.lib.opt.param_get_f32;
        self.param_call(
            f,
            "lockstep_autopilot_param_get_f32",
            "read a float parameter",
            name,
            |f, h, n| {
                // SAFETY: the library's symbol; live handle, NUL-terminated name, writable out.
                unsafe { f(h, n, &mut v) }
            },
        )?;
        Ok(v)
    }

    /// Sets an integer parameter.
    pub fn set_param_i32(&mut self, name: &str, value: i32) -> Result<(), AbiError> {
        let f = self.lib.opt.param_set_i32;
        self.param_call(
            f,
            "lockstep_autopilot_param_set_i32",
            "set an integer parameter",
            name,
            |f, h, n| {
                // SAFETY: the library's symbol with the header's signature; live handle, NUL-terminated name.
                unsafe { f(h, n, value) }
            },
        )
    }

    /// Reads an integer parameter.
    pub fn param_i32(&mut self, name: &str) -> Result<i32, AbiError> {
        let mut v = 0i32;
        let f = self.lib.opt.param_get_i32;
        self.param_call(
            f,
            "lockstep_autopilot_param_get_i32",
            "read an integer parameter",
            name,
            |f, h, n| {
                // SAFETY: the library's symbol; live handle, NUL-terminated name, writable out.
                unsafe { f(h, n, &mut v) }
            },
        )?;
        Ok(v)
    }

    /// Returns the instance to its just-created state (parameters and mission
    /// kept); the next step may start at any time again.
    pub fn reset(&mut self) -> Result<(), AbiError> {
        let f = self.lib.opt.reset.ok_or(AbiError::Unsupported {
            symbol: "lockstep_autopilot_reset",
            action: "reset an instance",
        })?;
        // SAFETY: the library's symbol with the header's signature; live handle.
        let code = unsafe { f(self.handle.as_ptr()) };
        if code != ffi::LOCKSTEP_AP_OK {
            return Err(AbiError::ResetFailed {
                code,
                message: self.last_error(),
            });
        }
        self.last_time_us = None;
        Ok(())
    }

    /// The library's message for this instance's last failure ("" when it
    /// has none or does not export `lockstep_autopilot_last_error`).
    pub fn last_error(&self) -> String {
        let Some(f) = self.lib.opt.last_error else {
            return String::new();
        };
        let mut buf = [0u8; MESSAGE_LEN];
        // SAFETY: the library's symbol; live handle, buffer writable for its length.
        let code = unsafe {
            f(
                self.handle.as_ptr(),
                buf.as_mut_ptr().cast::<c_char>(),
                buf.len(),
            )
        };
        if code == ffi::LOCKSTEP_AP_OK {
            message_from(&buf)
        } else {
            String::new()
        }
    }
}

impl Drop for Autopilot {
    fn drop(&mut self) {
        // SAFETY: the handle came from this library's create and is destroyed
        // exactly once, here.
        unsafe { (self.lib.req.destroy)(self.handle.as_ptr()) };
        if self.single_instance {
            live_set().remove(&self.lib.identity);
        }
    }
}

//! One autopilot instance in this process: the raw calls into the library,
//! each wrapped for the crash line, with the memory contract enforced (a
//! private sensor copy, a guard zone after the actuator frame).
//!
//! [`crate::Autopilot`] drives an `Instance` directly in the in-process mode;
//! in the isolated mode the host process (`crate::isolate`) drives one.

use std::collections::BTreeSet;
use std::ffi::{CString, c_char};
use std::ptr::NonNull;
use std::sync::{Arc, Mutex};

use crate::crash::{Function, in_call};
use crate::library::{AutopilotLibrary, LibInner};
use crate::params::{MAX_PARAMS, NamedParam, Param, ParamKind, name_from};
use crate::{AbiError, ffi};

/// Words of the guard zone after the actuator frame an autopilot writes
/// (512 bytes). The frame's size is a multiple of 4, so the zone starts at
/// the frame's last byte + 1: no byte after the frame goes unwatched.
const GUARD_WORDS: usize = 128;
/// The guard zone's fill; any other value after a step is a write past the
/// frame.
const CANARY: u32 = 0x5A3C_A5C3;

const _: () = assert!(std::mem::size_of::<ffi::lockstep_actuator_frame>().is_multiple_of(4));

/// The frames an instance steps on, owned by the wrapper: a private copy of
/// the sensor frame (the autopilot cannot reach the harness's own), and the
/// actuator frame followed by a guard zone.
#[repr(C)]
#[derive(Debug)]
struct Scratch {
    sensors: ffi::lockstep_sensor_frame,
    actuators: ffi::lockstep_actuator_frame,
    guard: [u32; GUARD_WORDS],
}

/// Size of the buffers handed to the library for messages.
const MESSAGE_LEN: usize = 512;

fn message_from(buf: &[u8]) -> String {
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// Loaded objects (by file identity) of non-re-entrant libraries that have a
/// live instance in this process.
static LIVE_SINGLE_INSTANCE: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());

fn live_set() -> std::sync::MutexGuard<'static, BTreeSet<String>> {
    LIVE_SINGLE_INSTANCE
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

/// A config the library may see: right size, a rotor count it can index.
pub(crate) fn check_config(config: &ffi::lockstep_autopilot_config) -> Result<(), AbiError> {
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
    Ok(())
}

/// One live instance of a loaded library. Destroyed on drop.
#[derive(Debug)]
pub(crate) struct Instance {
    lib: Arc<LibInner>,
    handle: NonNull<ffi::lockstep_autopilot>,
    single_instance: bool,
    scratch: Box<Scratch>,
}

// SAFETY: the header's threading contract lets an instance move between
// threads between calls; `&mut self` on every call rules out concurrent use.
unsafe impl Send for Instance {}

impl Instance {
    /// Creates an instance (the config is checked by the caller). Refuses a
    /// second live instance of a library that is not re-entrant.
    pub(crate) fn create(
        lib: &AutopilotLibrary,
        config: &ffi::lockstep_autopilot_config,
    ) -> Result<Instance, AbiError> {
        let inner = &lib.inner;
        let single_instance = !lib.is_reentrant();
        if single_instance && !live_set().insert(inner.identity.clone()) {
            return Err(AbiError::NotReentrant {
                path: inner.path.clone(),
            });
        }
        crate::crash::install_handler();
        let mut err = [0u8; MESSAGE_LEN];
        let raw = in_call(Function::Create, None, || {
            // SAFETY: `create` is the library's own symbol with the header's
            // signature; config is a valid struct and err is writable for its
            // length.
            unsafe { (inner.req.create)(config, err.as_mut_ptr().cast::<c_char>(), err.len()) }
        });
        match NonNull::new(raw) {
            Some(handle) => Ok(Instance {
                lib: Arc::clone(inner),
                handle,
                single_instance,
                scratch: Box::new(Scratch {
                    sensors: ffi::lockstep_sensor_frame::default(),
                    actuators: ffi::lockstep_actuator_frame::default(),
                    guard: [CANARY; GUARD_WORDS],
                }),
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

    pub(crate) fn library(&self) -> &LibInner {
        &self.lib
    }

    /// One raw step: the library steps on a private copy of `sensors` into
    /// an actuator frame followed by the guard zone. Errors: a write into
    /// the copy or past the frame, or a non-zero status. The outputs are
    /// not yet checked against their ranges (the caller does that, on the
    /// harness's side of an isolation boundary).
    pub(crate) fn step(
        &mut self,
        time_us: u64,
        sensors: &ffi::lockstep_sensor_frame,
    ) -> Result<&ffi::lockstep_actuator_frame, AbiError> {
        let scratch = &mut *self.scratch;
        scratch.sensors = *sensors;
        scratch.actuators = ffi::lockstep_actuator_frame::default();
        let code = in_call(Function::Step, Some(time_us), || {
            // SAFETY: the library's step with the header's signature; the
            // handle is live (destroyed only on drop) and both frames are
            // valid; the actuator frame is followed by the guard zone, the
            // sensor frame is this wrapper's own copy.
            unsafe {
                (self.lib.req.step)(
                    self.handle.as_ptr(),
                    time_us,
                    &scratch.sensors,
                    &mut scratch.actuators,
                )
            }
        });
        if let Err(e) = check_guard(&scratch.guard, &scratch.sensors, sensors, time_us) {
            // Each step is judged on its own.
            scratch.guard = [CANARY; GUARD_WORDS];
            return Err(e);
        }
        if code != ffi::LOCKSTEP_AP_OK {
            return Err(AbiError::StepFailed {
                time_us,
                code,
                message: self.last_error(),
            });
        }
        Ok(&self.scratch.actuators)
    }

    /// Replaces the mission.
    pub(crate) fn upload_mission(
        &mut self,
        items: &[ffi::lockstep_mission_item],
    ) -> Result<(), AbiError> {
        let f = self.lib.opt.mission_upload.ok_or(AbiError::Unsupported {
            symbol: "lockstep_autopilot_mission_upload".into(),
            action: "upload a mission".into(),
        })?;
        let code = in_call(Function::MissionUpload, None, || {
            // SAFETY: the library's symbol with the header's signature; items
            // is valid for items.len() entries (a dangling non-NULL pointer
            // when empty, never read for count 0).
            unsafe { f(self.handle.as_ptr(), items.as_ptr(), items.len()) }
        });
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
        let f = f.ok_or(AbiError::Unsupported {
            symbol: symbol.into(),
            action: action.into(),
        })?;
        let c = Self::param_name(name)?;
        let code = in_call(Function::Param, None, || {
            call(f, self.handle.as_ptr(), c.as_ptr())
        });
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

    pub(crate) fn set_param_f32(&mut self, name: &str, value: f32) -> Result<(), AbiError> {
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

    pub(crate) fn param_f32(&mut self, name: &str) -> Result<f32, AbiError> {
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

    pub(crate) fn set_param_i32(&mut self, name: &str, value: i32) -> Result<(), AbiError> {
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

    pub(crate) fn param_i32(&mut self, name: &str) -> Result<i32, AbiError> {
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

    pub(crate) fn reset(&mut self) -> Result<(), AbiError> {
        let f = self.lib.opt.reset.ok_or(AbiError::Unsupported {
            symbol: "lockstep_autopilot_reset".into(),
            action: "reset an instance".into(),
        })?;
        let code = in_call(Function::Reset, None, || {
            // SAFETY: the library's symbol with the header's signature; live handle.
            unsafe { f(self.handle.as_ptr()) }
        });
        if code != ffi::LOCKSTEP_AP_OK {
            return Err(AbiError::ResetFailed {
                code,
                message: self.last_error(),
            });
        }
        Ok(())
    }

    /// Whether the library exports the migration functions.
    pub(crate) fn can_migrate(&self) -> bool {
        let o = &self.lib.opt;
        o.snapshot_size.is_some() && o.snapshot.is_some() && o.restore.is_some()
    }

    /// The instance's state as bytes (`lockstep_autopilot_snapshot`).
    pub(crate) fn snapshot(&mut self) -> Result<Vec<u8>, AbiError> {
        let o = &self.lib.opt;
        let (Some(size), Some(snap)) = (o.snapshot_size, o.snapshot) else {
            return Err(AbiError::Unsupported {
                symbol: "lockstep_autopilot_snapshot".into(),
                action: "move an instance".into(),
            });
        };
        let n = in_call(Function::Snapshot, None, || {
            // SAFETY: the library's symbol with the header's signature; live handle.
            unsafe { size(self.handle.as_ptr()) }
        });
        let max = ffi::LOCKSTEP_AUTOPILOT_MAX_SNAPSHOT as usize;
        if n == 0 || n > max {
            return Err(AbiError::SnapshotFailed {
                reason: format!("snapshot_size returned {n} bytes (must be in [1, {max}])"),
            });
        }
        let mut buf = vec![0u8; n];
        let mut written = 0usize;
        let code = in_call(Function::Snapshot, None, || {
            // SAFETY: the library's symbol; live handle; buf is writable for
            // its length; written is a valid out-parameter.
            unsafe {
                snap(
                    self.handle.as_ptr(),
                    buf.as_mut_ptr(),
                    buf.len(),
                    &mut written,
                )
            }
        });
        if code != ffi::LOCKSTEP_AP_OK {
            return Err(AbiError::SnapshotFailed {
                reason: format!(
                    "status {code} ({}){}",
                    crate::status_name(code),
                    match self.last_error() {
                        m if m.is_empty() => String::new(),
                        m => format!(": {m}"),
                    }
                ),
            });
        }
        if written == 0 || written > n {
            return Err(AbiError::SnapshotFailed {
                reason: format!("snapshot wrote {written} bytes; snapshot_size said {n}"),
            });
        }
        buf.truncate(written);
        Ok(buf)
    }

    /// Replaces the instance's state with `bytes` (`lockstep_autopilot_restore`).
    pub(crate) fn restore(&mut self, bytes: &[u8]) -> Result<(), AbiError> {
        let Some(f) = self.lib.opt.restore else {
            return Err(AbiError::Unsupported {
                symbol: "lockstep_autopilot_restore".into(),
                action: "move an instance".into(),
            });
        };
        let code = in_call(Function::Restore, None, || {
            // SAFETY: the library's symbol; live handle; bytes is readable
            // for its length.
            unsafe { f(self.handle.as_ptr(), bytes.as_ptr(), bytes.len()) }
        });
        if code != ffi::LOCKSTEP_AP_OK {
            return Err(AbiError::RestoreFailed {
                code,
                message: self.last_error(),
            });
        }
        Ok(())
    }

    /// The library's message for this instance's last failure ("" when it
    /// has none or does not export `lockstep_autopilot_last_error`).
    /// The whole parameter table (values now, defaults), in the library's
    /// order; `None` when it does not export the enumeration (ABI 4).
    pub(crate) fn params(&mut self) -> Result<Option<Vec<NamedParam>>, AbiError> {
        let (Some(count_fn), Some(info_fn)) = (self.lib.opt.param_count, self.lib.opt.param_info)
        else {
            return Ok(None);
        };
        let table = |reason: String| AbiError::ParamTable { reason };
        let h = self.handle.as_ptr();
        // SAFETY: the library's symbol with the header's signature; live handle.
        let count = in_call(Function::Param, None, || unsafe { count_fn(h) });
        if count > MAX_PARAMS {
            return Err(table(format!(
                "param_count() is {count}, more than {MAX_PARAMS}"
            )));
        }
        let mut out = Vec::with_capacity(count as usize);
        for index in 0..count {
            let mut name = [0u8; ffi::LOCKSTEP_PARAM_NAME_MAX as usize + 1];
            let mut kind = 0u32;
            let mut default = 0.0f64;
            let code = in_call(Function::Param, None, || {
                // SAFETY: the library's symbol; live handle, a name buffer of
                // the length passed, writable outs.
                unsafe {
                    info_fn(
                        h,
                        index,
                        name.as_mut_ptr().cast::<c_char>(),
                        name.len(),
                        &mut kind,
                        &mut default,
                    )
                }
            });
            if code != ffi::LOCKSTEP_AP_OK {
                return Err(table(format!(
                    "param_info({index}) failed with status {code} ({}){}",
                    crate::status_name(code),
                    crate::error::said(&self.last_error())
                )));
            }
            let name = name_from(&name, index).map_err(table)?;
            let (kind, value) = match kind {
                ffi::LOCKSTEP_PARAM_TYPE_F32 => (ParamKind::F32, f64::from(self.param_f32(&name)?)),
                ffi::LOCKSTEP_PARAM_TYPE_I32 => (ParamKind::I32, f64::from(self.param_i32(&name)?)),
                other => {
                    return Err(table(format!(
                        "parameter {index} ({name}) has type {other}, not LOCKSTEP_PARAM_TYPE_F32 (1) or _I32 (2)"
                    )));
                }
            };
            let exact = match kind {
                ParamKind::F32 => !default.is_finite() || f64::from(default as f32) == default,
                ParamKind::I32 => default.fract() == 0.0 && f64::from(default as i32) == default,
            };
            if !exact {
                return Err(table(format!(
                    "parameter {index} ({name}): its default {default} is not a value of its type"
                )));
            }
            if out.iter().any(|p: &NamedParam| p.name == name) {
                return Err(table(format!("parameter {name} is listed twice")));
            }
            out.push(NamedParam {
                name,
                param: Param {
                    kind,
                    value,
                    default,
                },
            });
        }
        Ok(Some(out))
    }

    pub(crate) fn last_error(&self) -> String {
        let Some(f) = self.lib.opt.last_error else {
            return String::new();
        };
        let mut buf = [0u8; MESSAGE_LEN];
        let code = in_call(Function::LastError, None, || {
            // SAFETY: the library's symbol; live handle, buffer writable for its length.
            unsafe {
                f(
                    self.handle.as_ptr(),
                    buf.as_mut_ptr().cast::<c_char>(),
                    buf.len(),
                )
            }
        });
        if code == ffi::LOCKSTEP_AP_OK {
            message_from(&buf)
        } else {
            String::new()
        }
    }
}

/// The bytes of a frame (the header's structs have no padding: every byte
/// is a field's, tested by `expected_fields_tile_every_struct_exactly`).
fn sensor_bytes(f: &ffi::lockstep_sensor_frame) -> &[u8] {
    // SAFETY: a plain-old-data C struct without padding, read as bytes for
    // its size; the borrow keeps it alive.
    unsafe {
        std::slice::from_raw_parts(
            (f as *const ffi::lockstep_sensor_frame).cast::<u8>(),
            std::mem::size_of::<ffi::lockstep_sensor_frame>(),
        )
    }
}

/// The guard zone after the actuator frame is intact and the private
/// sensor copy unchanged, or the library broke the contract.
fn check_guard(
    guard: &[u32; GUARD_WORDS],
    copy: &ffi::lockstep_sensor_frame,
    given: &ffi::lockstep_sensor_frame,
    time_us: u64,
) -> Result<(), AbiError> {
    if *guard == [CANARY; GUARD_WORDS] {
        if sensor_bytes(copy) == sensor_bytes(given) {
            return Ok(());
        }
        let at = sensor_bytes(copy)
            .iter()
            .zip(sensor_bytes(given))
            .position(|(a, b)| a != b)
            .unwrap_or(0);
        return Err(AbiError::ContractViolation {
            time_us,
            what: format!(
                "step wrote into the sensor frame it was given (const in the header): {} \
                 (byte {at} of {})",
                crate::layout::field_at("lockstep_sensor_frame", at as u32),
                std::mem::size_of::<ffi::lockstep_sensor_frame>()
            ),
        });
    }
    let canary = CANARY.to_ne_bytes();
    let bytes: Vec<u8> = guard.iter().flat_map(|w| w.to_ne_bytes()).collect();
    let changed = |i: &usize| bytes[*i] != canary[*i % 4];
    let first = (0..bytes.len()).find(changed).unwrap_or(0);
    let last = (0..bytes.len()).rev().find(changed).unwrap_or(0);
    Err(AbiError::ContractViolation {
        time_us,
        what: format!(
            "step wrote past the end of the actuator frame ({} bytes): {} after it changed",
            std::mem::size_of::<ffi::lockstep_actuator_frame>(),
            if first == last {
                format!("byte {}", first + 1)
            } else {
                format!("bytes {} to {}", first + 1, last + 1)
            }
        ),
    })
}

impl Drop for Instance {
    fn drop(&mut self) {
        in_call(Function::Destroy, None, || {
            // SAFETY: the handle came from this library's create and is
            // destroyed exactly once, here.
            unsafe { (self.lib.req.destroy)(self.handle.as_ptr()) }
        });
        if self.single_instance {
            live_set().remove(&self.lib.identity);
        }
    }
}

//! The harness's side of an isolated instance: starts the host, sends
//! requests, watches the host (exit, signal, watchdog) while it waits.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::ptr::{addr_of, addr_of_mut};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::channel::{Mapping, OUTCOME_ERROR, OUTCOME_OK, Op, Slot};
use super::{HostProgram, IsolationOptions};
use crate::backoff::Backoff;
use crate::crash::{Function, signal_name};
use crate::library::Report;
use crate::{AbiError, ffi};

/// How often a waiting harness looks at the host process.
const LOOK_EVERY: Duration = Duration::from_millis(5);

/// What the host says about the library it loaded.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct LoadedInfo {
    pub name: Option<String>,
    pub capabilities: u32,
    /// The ABI version the library implements.
    pub abi_version: u32,
    /// The library exports the migration functions.
    pub migrates: bool,
}

/// A host process and its channel.
#[derive(Debug)]
pub(crate) struct Remote {
    child: Child,
    map: Mapping,
    /// The write end of the pipe the host watches: when this process dies,
    /// the kernel closes it and the host exits.
    _lifeline: OwnedFd,
    seq: u32,
    options: IsolationOptions,
    info: LoadedInfo,
    /// Set once the host is gone: every later call reports the same cause.
    dead: Option<Death>,
    closed: bool,
    backoff: Backoff,
}

fn host_error(what: &str, e: std::io::Error) -> AbiError {
    AbiError::HostUnavailable {
        reason: format!("{what}: {e}"),
    }
}

impl Remote {
    /// Starts a host process (`program args... --serve MEMFD LIFELINE
    /// SPIN_NS`).
    pub(crate) fn start(
        host: &HostProgram,
        options: &IsolationOptions,
    ) -> Result<Remote, AbiError> {
        let (map, memfd) = Mapping::create().map_err(|e| host_error("shared memory", e))?;
        let mut fds = [0; 2];
        // SAFETY: pipe2 writes two descriptors into the array on success.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(host_error("pipe", std::io::Error::last_os_error()));
        }
        // SAFETY: fresh descriptors from pipe2, owned from here on.
        let (life_r, life_w) =
            unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        let (mem_raw, life_raw) = (memfd.as_raw_fd(), life_r.as_raw_fd());
        let mut cmd = Command::new(&host.program);
        cmd.args(&host.args)
            .arg(super::SERVE_FLAG)
            .arg(mem_raw.to_string())
            .arg(life_raw.to_string())
            .arg(options.spin.as_nanos().to_string())
            .stdin(Stdio::null());
        // SAFETY: the closure runs in the forked child before exec and only
        // calls async-signal-safe functions (fcntl, signal, setrlimit). It
        // keeps the two descriptors open across exec, makes the host deaf to
        // the terminal's SIGINT/SIGTERM (the harness decides when it ends),
        // and turns off core dumps of a crashing library.
        unsafe {
            cmd.pre_exec(move || {
                for fd in [mem_raw, life_raw] {
                    if libc::fcntl(fd, libc::F_SETFD, 0) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                libc::signal(libc::SIGINT, libc::SIG_IGN);
                libc::signal(libc::SIGTERM, libc::SIG_IGN);
                let none = libc::rlimit {
                    rlim_cur: 0,
                    rlim_max: 0,
                };
                libc::setrlimit(libc::RLIMIT_CORE, &none);
                Ok(())
            });
        }
        let child = cmd
            .spawn()
            .map_err(|e| host_error(&format!("cannot run {}", host.program.display()), e))?;
        drop(life_r);
        drop(memfd);
        Ok(Remote {
            child,
            map,
            _lifeline: life_w,
            seq: 0,
            options: options.clone(),
            info: LoadedInfo::default(),
            dead: None,
            closed: false,
            backoff: Backoff::new(options.spin),
        })
    }

    /// Starts a host, loads the library at `path` and creates an instance.
    pub(crate) fn spawn(
        path: &Path,
        config: &ffi::lockstep_autopilot_config,
        options: &IsolationOptions,
    ) -> Result<Remote, AbiError> {
        let host = super::host_program(options.host.as_ref())?;
        let mut r = Remote::start(&host, options)?;
        r.send_path(path)?;
        r.call(Op::Load, Function::Load, None)?;
        r.info = serde_json::from_slice(&r.map.read_text())
            .map_err(|e| r.garbled(Function::Load, None, &e))?;
        let p = r.map.ptr();
        // SAFETY: the harness owns the data fields between calls.
        unsafe { addr_of_mut!((*p).config).write(*config) };
        r.call(Op::Create, Function::Create, None)?;
        Ok(r)
    }

    pub(crate) fn info(&self) -> &LoadedInfo {
        &self.info
    }

    fn send_path(&mut self, path: &Path) -> Result<(), AbiError> {
        if !self.map.write_text(path.as_os_str().as_bytes()) {
            return Err(AbiError::InvalidInput {
                reason: format!(
                    "the library path is longer than {} bytes",
                    super::channel::TEXT_CAP
                ),
            });
        }
        Ok(())
    }

    /// Loads the library at `path` and reports on it.
    pub(crate) fn inspect(&mut self, path: &Path) -> Result<Report, AbiError> {
        self.send_path(path)?;
        self.call(Op::Inspect, Function::Load, None)?;
        serde_json::from_slice(&self.map.read_text())
            .map_err(|e| self.garbled(Function::Load, None, &e))
    }

    fn garbled(
        &mut self,
        function: Function,
        time_us: Option<u64>,
        e: &dyn std::fmt::Display,
    ) -> AbiError {
        let why = Death {
            cause: "corrupted its host process".into(),
            detail: format!("the host sent an unreadable answer ({e}) and was stopped"),
        };
        self.stop(why.clone());
        why.error(function, time_us)
    }

    /// Kills the host (if alive) and remembers why it is gone.
    fn stop(&mut self, why: Death) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.dead.get_or_insert(why);
    }

    /// Sends `op` and waits for the answer, watching the host.
    fn call(&mut self, op: Op, function: Function, time_us: Option<u64>) -> Result<(), AbiError> {
        if let Some(why) = &self.dead {
            return Err(why.error(function, time_us));
        }
        let p = self.map.ptr();
        // SAFETY: the harness owns the data fields until it posts.
        unsafe {
            addr_of_mut!((*p).op).write(op as u32);
            addr_of_mut!((*p).time_us).write(time_us.unwrap_or(0));
        }
        let seq = self.seq.wrapping_add(1);
        self.seq = seq;
        self.map.post(Slot::Request, seq);
        let limit = if op == Op::Step {
            self.options.step_timeout
        } else {
            self.options.call_timeout
        };
        let start = Instant::now();
        let child = &mut self.child;
        let waited = self.map.wait_change(
            Slot::Response,
            seq.wrapping_sub(1),
            &mut self.backoff,
            Some(LOOK_EVERY),
            || match child.try_wait() {
                Ok(Some(status)) => Err(Gone::Exited(status)),
                Err(e) => Err(Gone::Unknown(e.to_string())),
                Ok(None) if start.elapsed() > limit => Err(Gone::Hung),
                Ok(None) => Ok(()),
            },
        );
        let why = match waited {
            Ok(v) if v == seq => {
                // SAFETY: the host answered: the harness owns the fields again.
                let outcome = unsafe { addr_of!((*p).outcome).read() };
                return match outcome {
                    OUTCOME_OK => Ok(()),
                    OUTCOME_ERROR => Err(serde_json::from_slice(&self.map.read_text())
                        .map_err(|e| self.garbled(function, time_us, &e))?),
                    other => Err(self.garbled(function, time_us, &format!("outcome {other}"))),
                };
            }
            Ok(v) => {
                return Err(self.garbled(
                    function,
                    time_us,
                    &format!("answer number {v} to request {seq}"),
                ));
            }
            Err(Gone::Exited(status)) => Death::of(status),
            Err(Gone::Unknown(e)) => Death {
                cause: "could not be watched".into(),
                detail: e,
            },
            Err(Gone::Hung) => Death {
                cause: "hung".into(),
                detail: format!(
                    "no answer within {} s (the watchdog's limit for {}); its process was stopped",
                    limit.as_secs_f64(),
                    if op == Op::Step {
                        "a step, --step-timeout"
                    } else {
                        "this call, --call-timeout"
                    }
                ),
            },
        };
        self.stop(why.clone());
        Err(why.error(function, time_us))
    }

    pub(crate) fn step(
        &mut self,
        time_us: u64,
        sensors: &ffi::lockstep_sensor_frame,
    ) -> Result<ffi::lockstep_actuator_frame, AbiError> {
        let p = self.map.ptr();
        // SAFETY: the harness owns the data fields between calls.
        unsafe { addr_of_mut!((*p).sensors).write(*sensors) };
        self.call(Op::Step, Function::Step, Some(time_us))?;
        // SAFETY: the host answered; any bit pattern is a valid frame, and
        // the caller checks every value.
        Ok(unsafe { addr_of!((*p).actuators).read() })
    }

    pub(crate) fn upload_mission(
        &mut self,
        items: &[ffi::lockstep_mission_item],
    ) -> Result<(), AbiError> {
        let p = self.map.ptr();
        let n = items.len().min(crate::MAX_MISSION_ITEMS);
        // SAFETY: the harness owns the data fields; at most the array's
        // length is copied (the caller refuses longer missions).
        unsafe {
            std::ptr::copy_nonoverlapping(
                items.as_ptr(),
                addr_of_mut!((*p).mission).cast::<ffi::lockstep_mission_item>(),
                n,
            );
            addr_of_mut!((*p).count).write(n as u32);
        }
        self.call(Op::Mission, Function::MissionUpload, None)
    }

    fn send_name(&mut self, name: &str) -> Result<(), AbiError> {
        // The host checks the name for NUL bytes as the in-process call does.
        if !self.map.write_text(name.as_bytes()) {
            return Err(AbiError::Param {
                name: name.chars().take(64).collect(),
                code: ffi::LOCKSTEP_AP_ERR_INVALID,
                message: "the name is too long".into(),
            });
        }
        Ok(())
    }

    pub(crate) fn set_param_f32(&mut self, name: &str, value: f32) -> Result<(), AbiError> {
        self.send_name(name)?;
        // SAFETY: the harness owns the data fields between calls.
        unsafe { addr_of_mut!((*self.map.ptr()).f32_value).write(value) };
        self.call(Op::SetF32, Function::Param, None)
    }

    pub(crate) fn param_f32(&mut self, name: &str) -> Result<f32, AbiError> {
        self.send_name(name)?;
        self.call(Op::GetF32, Function::Param, None)?;
        // SAFETY: the host answered; the harness owns the fields again.
        Ok(unsafe { addr_of!((*self.map.ptr()).f32_value).read() })
    }

    pub(crate) fn set_param_i32(&mut self, name: &str, value: i32) -> Result<(), AbiError> {
        self.send_name(name)?;
        // SAFETY: the harness owns the data fields between calls.
        unsafe { addr_of_mut!((*self.map.ptr()).i32_value).write(value) };
        self.call(Op::SetI32, Function::Param, None)
    }

    pub(crate) fn param_i32(&mut self, name: &str) -> Result<i32, AbiError> {
        self.send_name(name)?;
        self.call(Op::GetI32, Function::Param, None)?;
        // SAFETY: the host answered; the harness owns the fields again.
        Ok(unsafe { addr_of!((*self.map.ptr()).i32_value).read() })
    }

    pub(crate) fn reset(&mut self) -> Result<(), AbiError> {
        self.call(Op::Reset, Function::Reset, None)
    }

    /// The instance's state, carried back in the text area (which holds
    /// `LOCKSTEP_AUTOPILOT_MAX_SNAPSHOT` bytes).
    pub(crate) fn snapshot(&mut self) -> Result<Vec<u8>, AbiError> {
        self.call(Op::Snapshot, Function::Snapshot, None)?;
        Ok(self.map.read_text())
    }

    pub(crate) fn restore(&mut self, bytes: &[u8]) -> Result<(), AbiError> {
        if !self.map.write_text(bytes) {
            return Err(AbiError::RestoreFailed {
                code: ffi::LOCKSTEP_AP_ERR_INVALID,
                message: format!(
                    "a snapshot of {} bytes is longer than {}",
                    bytes.len(),
                    ffi::LOCKSTEP_AUTOPILOT_MAX_SNAPSHOT
                ),
            });
        }
        self.call(Op::Restore, Function::Restore, None)
    }

    pub(crate) fn params(&mut self) -> Result<Option<Vec<crate::NamedParam>>, AbiError> {
        self.call(Op::Params, Function::Param, None)?;
        let text = self.map.read_text();
        serde_json::from_slice(&text).map_err(|e| AbiError::ParamTable {
            reason: format!("the host's answer does not read: {e}"),
        })
    }

    pub(crate) fn last_error(&mut self) -> String {
        match self.call(Op::LastError, Function::LastError, None) {
            Ok(()) => String::from_utf8_lossy(&self.map.read_text()).into_owned(),
            Err(_) => String::new(),
        }
    }

    /// Destroys the instance and ends the host, reporting a crash or hang
    /// in `destroy` or in the library's exit handlers.
    pub(crate) fn close(mut self) -> Result<(), AbiError> {
        self.closed = true;
        self.call(Op::Exit, Function::Destroy, None)?;
        let start = Instant::now();
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) if status.success() => return Ok(()),
                Ok(Some(status)) => {
                    let mut why = Death::of(status);
                    why.detail = format!("while unloading; {}", why.detail)
                        .trim_end_matches("; ")
                        .to_string();
                    return Err(why.error(Function::Destroy, None));
                }
                Ok(None) if start.elapsed() > self.options.call_timeout => {
                    let why = Death {
                        cause: "hung".into(),
                        detail: format!(
                            "it did not unload within {} s (a library destructor hangs); its process was stopped",
                            self.options.call_timeout.as_secs_f64()
                        ),
                    };
                    self.stop(why.clone());
                    return Err(why.error(Function::Destroy, None));
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(1)),
                Err(e) => return Err(host_error("waiting for the host", e)),
            }
        }
    }
}

impl Drop for Remote {
    fn drop(&mut self) {
        if !self.closed && self.dead.is_none() {
            // Destroy politely, bounded by the step watchdog's limit.
            self.options.call_timeout = self.options.step_timeout;
            let _ = self.call(Op::Exit, Function::Destroy, None);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Why a wait for the host ended without an answer.
enum Gone {
    Exited(ExitStatus),
    Unknown(String),
    Hung,
}

/// Why a host process is gone, in words.
#[derive(Debug, Clone)]
struct Death {
    cause: String,
    detail: String,
}

impl Death {
    fn of(status: ExitStatus) -> Death {
        match (status.signal(), status.code()) {
            (Some(sig), _) => Death {
                cause: format!("was killed by signal {}", signal_name(sig)),
                detail: String::new(),
            },
            (None, Some(code)) => Death {
                cause: format!("exited with status {code}"),
                detail: "the library ended its process".into(),
            },
            _ => Death {
                cause: format!("ended ({status})"),
                detail: String::new(),
            },
        }
    }

    fn error(&self, function: Function, time_us: Option<u64>) -> AbiError {
        AbiError::Crashed {
            function,
            time_us,
            cause: self.cause.clone(),
            detail: self.detail.clone(),
        }
    }
}

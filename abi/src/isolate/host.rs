//! The host process: loads the library, runs its instance, answers the
//! harness's requests on the channel. Started by the harness only.
//!
//! `HOST --serve MEMFD LIFELINE SPIN_NS` (HOST: `lockstep`,
//! `liblockstep.so` or Python on the extension module): MEMFD is the
//! shared channel, LIFELINE the read end of a pipe whose write end only the
//! harness holds (end of file there means the harness is gone, and the host
//! exits at once), SPIN_NS how long to busy-wait for a request before
//! sleeping.

use std::fs::File;
use std::os::fd::FromRawFd;
use std::path::PathBuf;
use std::ptr::{addr_of, addr_of_mut};
use std::time::Duration;

use super::channel::{MAGIC, Mapping, OUTCOME_ERROR, OUTCOME_OK, Op, Slot};
use super::remote::LoadedInfo;
use crate::backoff::Backoff;
use crate::instance::{Instance, check_config};
use crate::library::AutopilotLibrary;
use crate::{AbiError, MAX_MISSION_ITEMS, ffi};

/// The host's program for `args` (`--serve MEMFD LIFELINE SPIN_NS`, as the
/// harness passes them after [`super::HostProgram::args`]); returns its exit
/// status. Every front end's serve mode calls it: `lockstep --serve`,
/// `liblockstep.so --serve`, Python's child.
pub fn host_serve(args: &[String]) -> i32 {
    let parsed = match args {
        [flag, mem, life, spin] if flag == super::SERVE_FLAG => {
            match (mem.parse::<i32>(), life.parse::<i32>(), spin.parse::<u64>()) {
                (Ok(m), Ok(l), Ok(s)) if m > 2 && l > 2 => Some((m, l, s)),
                _ => None,
            }
        }
        _ => None,
    };
    let Some((mem, life, spin)) = parsed else {
        eprintln!(
            "lockstep: `--serve` is how the harness starts itself to run an autopilot library in \
             isolation; it is not run by hand"
        );
        return 2;
    };
    crate::crash::disable_handler();
    // The library's faults end this process with the signal the kernel
    // sends, whatever program serves as the host: a stack overflow is a
    // SIGSEGV, not the abort that Rust's runtime (in `lockstep`) makes it.
    for sig in [libc::SIGSEGV, libc::SIGBUS] {
        // SAFETY: restoring a signal's default disposition; no handler
        // runs.
        unsafe { libc::signal(sig, libc::SIG_DFL) };
    }
    watch_lifeline(life);
    // SAFETY: the harness passed this descriptor, open across exec, for
    // this process to own.
    let file = unsafe { File::from_raw_fd(mem) };
    let map = match Mapping::map(&file) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("lockstep --serve: cannot map the channel: {e}");
            return 3;
        }
    };
    // SAFETY: the mapping holds a whole channel; the harness wrote the
    // magic before starting this process.
    if unsafe { addr_of!((*map.ptr()).magic).read() } != MAGIC {
        eprintln!("lockstep --serve: the channel is not a lockstep channel");
        return 3;
    }
    serve(&map, Duration::from_nanos(spin))
}

/// Exits the process as soon as the harness's end of the lifeline closes.
fn watch_lifeline(fd: i32) {
    std::thread::spawn(move || {
        let mut b = [0u8; 1];
        loop {
            // SAFETY: reading one byte into a local buffer from a pipe
            // descriptor this process owns.
            let n = unsafe { libc::read(fd, b.as_mut_ptr().cast(), 1) };
            let interrupted =
                n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted;
            if n == 0 || (n < 0 && !interrupted) {
                // SAFETY: ending the process without running anything else:
                // nobody is left to answer.
                unsafe { libc::_exit(0) };
            }
        }
    });
}

/// What the host holds.
#[derive(Default)]
struct State {
    /// Declared first: destroyed before the library is unloaded.
    instance: Option<Instance>,
    lib: Option<AutopilotLibrary>,
}

fn serve(map: &Mapping, spin: Duration) -> i32 {
    let mut state = State::default();
    let mut last = 0u32;
    let mut backoff = Backoff::new(spin);
    loop {
        let Ok(v) = map.wait_change(Slot::Request, last, &mut backoff, None, || Ok::<(), ()>(()))
        else {
            return 0;
        };
        last = v;
        let p = map.ptr();
        // SAFETY: the harness posted a request: the host owns the fields.
        let op = Op::from_u32(unsafe { addr_of!((*p).op).read() });
        let result = match op {
            Some(op) => handle(map, &mut state, op),
            None => Err(AbiError::Relayed {
                message: "the host received an unknown request".into(),
            }),
        };
        let outcome = match result {
            Ok(()) => OUTCOME_OK,
            Err(e) => {
                let json = serde_json::to_vec(&e).unwrap_or_else(|_| {
                    serde_json::to_vec(&AbiError::Relayed {
                        message: e.to_string(),
                    })
                    .unwrap_or_default()
                });
                if !map.write_text(&json) {
                    let short = AbiError::Relayed {
                        message: e.to_string().chars().take(4096).collect(),
                    };
                    map.write_text(&serde_json::to_vec(&short).unwrap_or_default());
                }
                OUTCOME_ERROR
            }
        };
        // SAFETY: the host owns the fields until it posts.
        unsafe { addr_of_mut!((*p).outcome).write(outcome) };
        map.post(Slot::Response, v);
        if op == Some(Op::Exit) {
            return 0;
        }
    }
}

fn path_of(map: &Mapping) -> PathBuf {
    use std::os::unix::ffi::OsStringExt;
    PathBuf::from(std::ffi::OsString::from_vec(map.read_text()))
}

fn text(map: &Mapping) -> Result<String, AbiError> {
    String::from_utf8(map.read_text()).map_err(|_| AbiError::InvalidInput {
        reason: "a name sent to the host is not UTF-8".into(),
    })
}

fn instance(state: &mut State) -> Result<&mut Instance, AbiError> {
    state.instance.as_mut().ok_or(AbiError::Relayed {
        message: "the host has no instance (create was not called or failed)".into(),
    })
}

fn handle(map: &Mapping, state: &mut State, op: Op) -> Result<(), AbiError> {
    let p = map.ptr();
    match op {
        Op::Inspect => {
            let path = path_of(map);
            let report = AutopilotLibrary::inspect(&path)?.report;
            write_json(map, &report)
        }
        Op::Load => {
            let path = path_of(map);
            let lib = AutopilotLibrary::load(&path)?;
            let info = LoadedInfo {
                name: lib.name().map(str::to_string),
                capabilities: lib.capabilities(),
                abi_version: lib.abi_version(),
                migrates: lib.migrates(),
            };
            state.lib = Some(lib);
            write_json(map, &info)
        }
        Op::Create => {
            let lib = state.lib.as_ref().ok_or(AbiError::Relayed {
                message: "the host has no library loaded".into(),
            })?;
            // SAFETY: the host owns the fields while it handles a request.
            let config = unsafe { addr_of!((*p).config).read() };
            check_config(&config)?;
            state.instance = Some(Instance::create(lib, &config)?);
            Ok(())
        }
        Op::Step => {
            // SAFETY: as above; any bit pattern is a valid sensor frame.
            let (time_us, sensors) =
                unsafe { (addr_of!((*p).time_us).read(), addr_of!((*p).sensors).read()) };
            let out = *instance(state)?.step(time_us, &sensors)?;
            // SAFETY: as above.
            unsafe { addr_of_mut!((*p).actuators).write(out) };
            Ok(())
        }
        Op::Mission => {
            // SAFETY: as above; the count is bounded by the array before the
            // items are copied out.
            let items: Vec<ffi::lockstep_mission_item> = unsafe {
                let n = (addr_of!((*p).count).read() as usize).min(MAX_MISSION_ITEMS);
                std::slice::from_raw_parts(
                    addr_of!((*p).mission).cast::<ffi::lockstep_mission_item>(),
                    n,
                )
                .to_vec()
            };
            instance(state)?.upload_mission(&items)
        }
        Op::SetF32 => {
            let name = text(map)?;
            // SAFETY: as above.
            let v = unsafe { addr_of!((*p).f32_value).read() };
            instance(state)?.set_param_f32(&name, v)
        }
        Op::GetF32 => {
            let name = text(map)?;
            let v = instance(state)?.param_f32(&name)?;
            // SAFETY: as above.
            unsafe { addr_of_mut!((*p).f32_value).write(v) };
            Ok(())
        }
        Op::SetI32 => {
            let name = text(map)?;
            // SAFETY: as above.
            let v = unsafe { addr_of!((*p).i32_value).read() };
            instance(state)?.set_param_i32(&name, v)
        }
        Op::GetI32 => {
            let name = text(map)?;
            let v = instance(state)?.param_i32(&name)?;
            // SAFETY: as above.
            unsafe { addr_of_mut!((*p).i32_value).write(v) };
            Ok(())
        }
        Op::Reset => instance(state)?.reset(),
        Op::Snapshot => {
            let bytes = instance(state)?.snapshot()?;
            map.write_text(&bytes);
            Ok(())
        }
        Op::Restore => {
            let bytes = map.read_text();
            instance(state)?.restore(&bytes)
        }
        Op::Params => {
            let table = instance(state)?.params()?;
            write_json(map, &table)
        }
        Op::LastError => {
            let m = instance(state)?.last_error();
            map.write_text(m.as_bytes());
            Ok(())
        }
        Op::Exit => {
            state.instance = None;
            state.lib = None;
            Ok(())
        }
    }
}

fn write_json<T: serde::Serialize>(map: &Mapping, value: &T) -> Result<(), AbiError> {
    let json = serde_json::to_vec(value).map_err(|e| AbiError::Relayed {
        message: format!("the host cannot encode its answer: {e}"),
    })?;
    if map.write_text(&json) {
        Ok(())
    } else {
        Err(AbiError::Relayed {
            message: format!(
                "the host's answer ({} bytes) does not fit the channel",
                json.len()
            ),
        })
    }
}

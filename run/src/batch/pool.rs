//! A run of the batch in a child process: `lockstep montecarlo-run`,
//! killed past the run's wall-time limit or when the batch is
//! interrupted; a child that dies, hangs or prints no row is a failed row
//! that says why.

use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::worker::ROW_PREFIX;
use super::{BatchRequest, Draw, RunRow};

/// The reason of a run a signal stopped.
pub(super) fn interrupted(signal: usize) -> String {
    format!(
        "the batch was interrupted by {}",
        lockstep_abi::signal_name(signal as i32)
    )
}

/// SIGINT and SIGTERM.
const SIGINT: i32 = libc::SIGINT;
const SIGTERM: i32 = libc::SIGTERM;

/// Flies run `draw.run` in a child process and reads its row.
pub(super) fn in_child(
    o: &BatchRequest,
    draw: &Draw,
    rotors: usize,
    interrupt: &AtomicUsize,
) -> RunRow {
    let failed = |why: String| RunRow::failed(draw, rotors, why);
    let Some(program) = &o.worker_program else {
        return failed("no worker program".into());
    };
    let mut cmd = Command::new(program);
    cmd.args(&o.worker_args)
        .arg("montecarlo-run")
        .arg(&o.scenario)
        .arg("--autopilot")
        .arg(&o.autopilot)
        .arg("--run")
        .arg(draw.run.to_string());
    for ov in &o.overrides {
        cmd.arg("--set").arg(format!("{}={}", ov.key, ov.value));
    }
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return failed(format!("cannot start a worker process: {e}")),
    };
    // Read both pipes on threads so that a chatty child never blocks.
    let out_t = read_all(child.stdout.take().expect("piped"));
    let err_t = read_all(child.stderr.take().expect("piped"));
    let started = Instant::now();
    enum End {
        Exited(std::process::ExitStatus),
        Hung,
        Interrupted(usize),
        Lost(std::io::Error),
    }
    let end = loop {
        let signal = interrupt.load(Ordering::Relaxed);
        match child.try_wait() {
            Ok(Some(st)) => break End::Exited(st),
            Ok(None) if signal != 0 => break End::Interrupted(signal),
            Ok(None) if started.elapsed() >= o.run_timeout => break End::Hung,
            Ok(None) => std::thread::sleep(Duration::from_millis(2)),
            Err(e) => break End::Lost(e),
        }
    };
    if !matches!(end, End::Exited(_)) {
        let _ = child.kill();
        let _ = child.wait();
    }
    let stdout = out_t.join().unwrap_or_default();
    let stderr = err_t.join().unwrap_or_default();
    let status = match end {
        End::Exited(st) => st,
        End::Hung => {
            return failed(format!(
                "hung: no result within {} s of wall time (the worker was killed)",
                o.run_timeout.as_secs_f64()
            ));
        }
        End::Interrupted(sig) => return failed(interrupted(sig)),
        End::Lost(e) => return failed(format!("cannot wait for the worker: {e}")),
    };
    let row = stdout
        .lines()
        .rev()
        .find_map(|l| l.find(ROW_PREFIX).map(|at| &l[at + ROW_PREFIX.len()..]));
    if status.success()
        && let Some(Ok(row)) = row.map(serde_json::from_str::<RunRow>)
    {
        return row;
    }
    use std::os::unix::process::ExitStatusExt as _;
    if let Some(sig) = status.signal()
        && (sig == SIGINT || sig == SIGTERM)
    {
        // The terminal's Ctrl-C reaches the whole process group: the
        // worker may die of it before this process's handler has run, so
        // give the handler a moment (100 ms) to say so.
        for _ in 0..50 {
            let signal = interrupt.load(Ordering::Relaxed);
            if signal != 0 {
                return failed(interrupted(signal));
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }
    let last_err = stderr
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    let how = match (status.code(), status.signal()) {
        (_, Some(sig)) => format!(
            "the worker was killed by signal {}",
            lockstep_abi::signal_name(sig)
        ),
        (Some(c), None) => format!("the worker exited with status {c}"),
        (None, None) => "the worker ended".to_string(),
    };
    let reason = if last_err.is_empty() {
        how
    } else {
        format!(
            "{how}: {}",
            last_err.trim_start_matches("lockstep montecarlo-run: ")
        )
    };
    failed(reason)
}

/// Reads a pipe to its end on a thread of its own.
fn read_all(mut r: impl std::io::Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut s = String::new();
        let _ = r.read_to_string(&mut s);
        s
    })
}

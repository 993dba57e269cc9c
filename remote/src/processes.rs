//! The processes a run calls: started here as children (`--process`) or
//! elsewhere (`--remote`), each served over zenoh ([`crate::link`]), killed
//! when the run ends or fails.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::link::{Caller, Link};
use crate::net::NetOptions;

/// How a caller reaches the processes it calls.
#[derive(Debug, Clone)]
pub struct ProcessOptions {
    pub net: NetOptions,
    /// The longest a call may take (a model hung in its own code).
    pub deadline: Duration,
    /// How long to wait for a model process to appear.
    pub wait: Duration,
    /// A signal number stored here (by a SIGINT or SIGTERM handler) gives
    /// up any wait for a process at once.
    pub stop: Option<Arc<AtomicUsize>>,
}

/// The processes a run calls: killed (if still there) when dropped.
pub struct Processes {
    caller: Arc<Caller>,
    children: Vec<(String, Child)>,
    options: ProcessOptions,
}

impl std::fmt::Debug for Processes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let pids: Vec<(&String, u32)> = self.children.iter().map(|(n, c)| (n, c.id())).collect();
        f.debug_struct("Processes")
            .field("children", &pids)
            .finish_non_exhaustive()
    }
}

impl Processes {
    /// Opens the caller's end of the session.
    pub fn open(options: ProcessOptions) -> Result<Processes, String> {
        let caller = Caller::open(&options.net).map_err(|e| e.to_string())?;
        Ok(Processes {
            caller: Arc::new(caller),
            children: Vec::new(),
            options,
        })
    }

    /// Starts `program args…` to serve `name` (its stderr this one's);
    /// returns its process id.
    pub fn spawn(&mut self, name: &str, program: &Path, args: &[String]) -> Result<u32, String> {
        // A process group of its own: the terminal's Ctrl-C and a `timeout`
        // signalling this one's group reach this process only, which stops
        // the run and then ends its servers (a server killed by the same
        // signal was reported as a failed participant, not an interruption).
        let child = Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .process_group(0)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", program.display()))?;
        let pid = child.id();
        self.children.push((name.to_string(), child));
        Ok(pid)
    }

    /// The server `name` (called `what` in messages: "model `x`"), in
    /// another process (started here or elsewhere), once it is there.
    pub fn link(&mut self, name: &str, what: &str) -> Result<Link, String> {
        let peer = match self.children.iter_mut().find(|(n, _)| n == name) {
            Some((_, c)) => format!("the process of {what} (pid {})", c.id()),
            None => format!("the process of {what}"),
        };
        // A child that ended (a bad file, a missing library) is reported at
        // once, not after the whole wait.
        let mut child = self.children.iter_mut().find(|(n, _)| n == name);
        let stop = self.options.stop.clone();
        let stopped = move || stop.as_ref().map_or(0, |s| s.load(Ordering::SeqCst));
        let there = || {
            stopped() == 0
                && match &mut child {
                    Some((_, c)) => matches!(c.try_wait(), Ok(None)),
                    None => true,
                }
        };
        let found = self
            .caller
            .target_while(name, &peer, self.options.wait, there);
        let sig = self
            .options
            .stop
            .as_ref()
            .map_or(0, |s| s.load(Ordering::SeqCst));
        if found.is_err() && sig != 0 {
            return Err(format!(
                "interrupted (signal {sig}) while waiting for {peer}"
            ));
        }
        let target = found.map_err(|e| self.exited(name, what).unwrap_or_else(|| e.to_string()))?;
        Ok(Link {
            caller: self.caller.clone(),
            target,
            deadline: self.options.deadline,
            abandoned: std::sync::Mutex::new(None),
        })
    }

    /// How `name`'s child ended, if it has.
    fn exited(&mut self, name: &str, what: &str) -> Option<String> {
        let (_, c) = self.children.iter_mut().find(|(n, _)| n == name)?;
        match c.try_wait() {
            Ok(Some(status)) => Some(format!(
                "the process of {what} (pid {}) ended before it served: {status}",
                c.id()
            )),
            _ => None,
        }
    }

    /// After a run that finished: waits a little for the children to end
    /// (they do after their last call), then kills those still there;
    /// after a run that failed (`finished` false): kills them at once.
    pub fn end(&mut self, finished: bool) {
        let grace = if finished {
            Duration::from_secs(2)
        } else {
            Duration::ZERO
        };
        let until = Instant::now() + grace;
        for (_, c) in &mut self.children {
            while Instant::now() < until && matches!(c.try_wait(), Ok(None)) {
                std::thread::sleep(Duration::from_millis(20));
            }
            if matches!(c.try_wait(), Ok(None)) {
                let _ = c.kill();
                let _ = c.wait();
            }
        }
        self.children.clear();
    }
}

impl Drop for Processes {
    fn drop(&mut self) {
        for (_, c) in &mut self.children {
            if matches!(c.try_wait(), Ok(None)) {
                let _ = c.kill();
                let _ = c.wait();
            }
        }
    }
}

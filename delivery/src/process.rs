//! Models in their own processes over zenoh: the orchestrator's side calls
//! them through [`lockstep_distributed::remote`] (each call within a
//! deadline, the process's liveliness watched so a killed or stopped model
//! ends the run within the lease); the model's side ([`host`]) makes the
//! model from the fleet file and answers calls until the run finishes.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use lockstep_distributed::remote::{Caller, Flow, RemoteError, Server, Target};
use lockstep_distributed::zenoh_link::NetOptions;
use lockstep_orchestrator::Model;
use lockstep_orchestrator::wire::{RemoteModel, Transport, answer};

use crate::file::FleetFile;
use crate::run::{RunOptions, make_model};

/// How the orchestrator reaches its model processes.
#[derive(Debug, Clone)]
pub struct ProcessOptions {
    pub net: NetOptions,
    /// The longest a call may take (a model hung in its own code).
    pub deadline: Duration,
    /// How long to wait for a model process to appear.
    pub wait: Duration,
}

/// A model's process as the orchestrator calls it.
struct ZenohTransport {
    caller: Arc<Caller>,
    target: Target,
    deadline: Duration,
}

impl std::fmt::Debug for ZenohTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ZenohTransport")
            .field("target", &self.target)
            .finish_non_exhaustive()
    }
}

impl Transport for ZenohTransport {
    fn call(&mut self, request: Vec<u8>) -> Result<Vec<u8>, String> {
        self.caller
            .call(&self.target, request, self.deadline)
            .map_err(|e| match e {
                RemoteError::Refused(m) => m,
                other => other.to_string(),
            })
    }

    fn alive(&self) -> Result<(), String> {
        self.target.alive().map_err(|e| e.to_string())
    }
}

/// The processes of a run's models: killed (if still there) when dropped.
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
    /// Opens the orchestrator's end of the session.
    pub fn open(options: ProcessOptions) -> Result<Processes, String> {
        let caller = Caller::open(&options.net).map_err(|e| e.to_string())?;
        Ok(Processes {
            caller: Arc::new(caller),
            children: Vec::new(),
            options,
        })
    }

    /// Starts `program args…` for model `name` (its stderr this one's);
    /// returns its process id.
    pub fn spawn(&mut self, name: &str, program: &Path, args: &[String]) -> Result<u32, String> {
        let child = Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", program.display()))?;
        let pid = child.id();
        self.children.push((name.to_string(), child));
        Ok(pid)
    }

    /// Model `name`, served in another process (started here or elsewhere),
    /// once it is there.
    pub fn model(&mut self, name: &str) -> Result<Box<dyn Model>, String> {
        let peer = match self.children.iter_mut().find(|(n, _)| n == name) {
            Some((_, c)) => format!("the process of model `{name}` (pid {})", c.id()),
            None => format!("the process of model `{name}`"),
        };
        let target = self
            .caller
            .target(name, &peer, self.options.wait)
            .map_err(|e| self.exited(name).unwrap_or_else(|| e.to_string()))?;
        let t = ZenohTransport {
            caller: self.caller.clone(),
            target,
            deadline: self.options.deadline,
        };
        Ok(Box::new(RemoteModel::connect(t)?))
    }

    /// How model `name`'s child ended, if it has.
    fn exited(&mut self, name: &str) -> Option<String> {
        let (_, c) = self.children.iter_mut().find(|(n, _)| n == name)?;
        match c.try_wait() {
            Ok(Some(status)) => Some(format!(
                "the process of model `{name}` (pid {}) ended before it served: {status}",
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

/// Serves model `name` of `ff` in this process until the run finishes,
/// its caller leaves, or none comes within `wait`.
pub fn host(
    ff: &FleetFile,
    name: &str,
    o: &RunOptions,
    net: &NetOptions,
    wait: Duration,
) -> Result<(), String> {
    let d = ff.model(name).ok_or_else(|| {
        let names: Vec<&str> = ff.models.iter().map(|m| m.name.as_str()).collect();
        format!(
            "{} has no model `{name}` (its models: {})",
            ff.path.display(),
            names.join(", ")
        )
    })?;
    let mut model = make_model(ff, d, o).map_err(|e| e.to_string())?;
    let server = Server::open(net, name).map_err(|e| e.to_string())?;
    server
        .serve(wait, |request| {
            let (reply, last) = answer(model.as_mut(), request);
            (reply, if last { Flow::Stop } else { Flow::Continue })
        })
        .map_err(|e| e.to_string())
}

//! Models in their own processes over zenoh: the orchestrator's side calls
//! them through [`lockstep_distributed::remote`]'s processes (each call within a
//! deadline, the process's liveliness watched so a killed or stopped model
//! ends the run within the lease); the model's side ([`host`]) makes the
//! model from the fleet file and answers calls until the run finishes.

use std::time::Duration;

use lockstep_distributed::remote::{Flow, Link, Processes, RemoteError, Server};
use lockstep_distributed::zenoh_link::NetOptions;
use lockstep_orchestrator::Model;
use lockstep_orchestrator::wire::{RemoteModel, Transport, answer};

use crate::file::FleetFile;
use crate::run::{RunOptions, make_model};

/// A model's process as the orchestrator calls it.
#[derive(Debug)]
pub struct LinkTransport(pub Link);

impl Transport for LinkTransport {
    fn call(&mut self, request: Vec<u8>) -> Result<Vec<u8>, String> {
        self.0.call(request).map_err(|e| match e {
            RemoteError::Refused(m) => m,
            other => other.to_string(),
        })
    }

    fn alive(&self) -> Result<(), String> {
        self.0.alive().map_err(|e| e.to_string())
    }
}

/// Model `name`, served in another process (started here or elsewhere).
pub fn model(p: &mut Processes, name: &str) -> Result<Box<dyn Model>, String> {
    let link = p.link(name, &format!("model `{name}`"))?;
    Ok(Box::new(RemoteModel::connect(LinkTransport(link))?))
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

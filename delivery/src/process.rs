//! Models in their own processes over zenoh: the orchestrator's side calls
//! them through `lockstep_remote`'s processes (each call within a deadline,
//! the process's liveliness watched so a killed or stopped model ends the
//! run within the lease); the model's side ([`host`]) makes the model from
//! the fleet file and answers calls until the run finishes.

use std::time::Duration;

use lockstep_orchestrator::Model;
use lockstep_orchestrator::wire::{RemoteModel, serve};
use lockstep_remote::net::NetOptions;
use lockstep_remote::processes::Processes;

use crate::file::FleetFile;
use lockstep_harness::engine::RunOptions;

use crate::run::make_model;

/// Model `name`, served in another process (started here or elsewhere).
pub fn model(p: &mut Processes, name: &str) -> Result<Box<dyn Model>, String> {
    let link = p.link(name, &format!("model `{name}`"))?;
    Ok(Box::new(RemoteModel::connect(link)?))
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
    serve(model.as_mut(), net, name, wait)
}

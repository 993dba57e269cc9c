//! A build without the `distributed` feature (the default build, the
//! release binary) refuses every part of a run that needs the network, each
//! with [`NO_NETWORK`] and the class of a refused input, before anything
//! runs. (`cargo test -p lockstep-run --lib`; the CLI's tests see the same
//! messages only when run without the feature.)

use std::path::{Path, PathBuf};

use lockstep_abi::Isolation;

use super::{NO_NETWORK, Network};
use crate::fleet::distributed::{PrimaryRequest, control, join_secondary, prepare_primary};
use crate::hosts::Elsewhere;
use crate::{ErrorClass, RunError, cosim, orchestrate};

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples")
}

fn refused_input(e: RunError, message: &str) {
    assert_eq!(e.message, message);
    assert_eq!(e.class, ErrorClass::Configuration);
    assert_eq!(e.exit_status(), 2);
}

/// An output directory that cleans up after itself.
struct Out(PathBuf);

impl Out {
    fn new(name: &str) -> Out {
        let d = std::env::temp_dir().join(format!("lockstep-run-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        Out(d)
    }
}

impl Drop for Out {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn a_distributed_fleet_is_refused_in_every_role() {
    let primary = prepare_primary(PrimaryRequest {
        scenario: Some(examples().join("scenarios/swarm.toml")),
        autopilot: PathBuf::from("unused.so"),
        overrides: Vec::new(),
        out: None,
        isolation: Isolation::InProcess,
        net: Network::default(),
        secondaries: 1,
        step_deadline: None,
        gcs: None,
        pace: None,
    });
    refused_input(primary.unwrap_err(), NO_NETWORK);
    refused_input(join_secondary(&Network::default()).unwrap_err(), NO_NETWORK);
    refused_input(
        control(&Network::default(), "pause").unwrap_err(),
        NO_NETWORK,
    );
}

#[test]
fn parts_of_a_run_in_processes_of_their_own_are_refused() {
    let process = |name: &str| Elsewhere {
        process: vec![name.to_string()],
        ..Elsewhere::default()
    };
    let out = Out::new("cosim");
    let c = cosim::prepare(
        cosim::CosimRequest {
            system: examples().join("cosim/radio_swarm.toml"),
            autopilot: PathBuf::from("unused.so"),
            out: Some(out.0.clone()),
            isolation: Isolation::InProcess,
            serialized: false,
            threads: None,
            elsewhere: process("alpha"),
        },
        &|_| {},
    );
    refused_input(c.unwrap_err(), &format!("--process/--remote: {NO_NETWORK}"));
    let out = Out::new("orchestrate");
    let o = orchestrate::run(
        orchestrate::OrchestrateRequest {
            fleet: examples().join("orchestrate/delivery.toml"),
            autopilot: PathBuf::from("unused.so"),
            out: Some(out.0.clone()),
            isolation: Isolation::InProcess,
            threads: None,
            trace: false,
            elsewhere: process("kpi"),
            interrupt: None,
        },
        &|_| {},
    );
    refused_input(o.unwrap_err(), &format!("--process/--remote: {NO_NETWORK}"));
}

#[test]
fn serving_a_part_to_a_run_elsewhere_is_refused() {
    // Refused before the participant is built: the autopilot is never
    // looked for.
    let e = cosim::host(cosim::HostRequest {
        system: examples().join("cosim/radio_swarm.toml"),
        participant: "alpha".into(),
        autopilot: PathBuf::from("unused.so"),
        isolation: Isolation::InProcess,
        out: None,
        net: Network::default(),
    })
    .unwrap_err();
    refused_input(e, NO_NETWORK);
    let e = orchestrate::host(orchestrate::HostRequest {
        fleet: examples().join("orchestrate/delivery.toml"),
        model: "kpi".into(),
        autopilot: PathBuf::from("unused.so"),
        isolation: Isolation::InProcess,
        out: None,
        net: Network::default(),
    })
    .unwrap_err();
    refused_input(e, NO_NETWORK);
}

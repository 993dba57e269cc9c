//! The cross-crate tests: one test binary, a module per subject (the CLI,
//! the C ABI and its hosts, the autopilot contract, flights, fleets,
//! co-simulation, orchestration, Monte Carlo, the FMU, outputs).
//! Tests of one crate alone live in that crate.

mod common;

mod abi_versions;
mod airframes;
mod autopilot_modes;
mod autopilot_params;
mod broken_libraries;
mod c_abi;
mod c_cosim;
mod c_hosts;
mod call_sequences;
mod check_lib_cli;
mod closed_loop;
mod compare_integrators;
mod contract;
mod cosim_fmu_errors;
mod cosim_processes;
mod cosim_slung_load;
mod cosim_vehicles;
mod cosim_wind_fmu;
mod distributed_gcs;
mod distributed_local;
mod distributed_netns;
mod distributed_zenoh;
mod engine_runs;
mod examples;
mod fit_refusals;
mod fleet;
mod fleet_lookahead;
mod fleet_migration;
mod flight_stacks;
mod flights;
mod fly_cli;
mod fmu;
mod generated_docs;
mod hosted_plant;
mod in_process_crash;
mod install;
mod isolation;
mod loading;
mod migration_abi;
mod missions_abroad;
mod montecarlo;
mod montecarlo_shards;
mod offboard;
mod orchestrate;
mod orchestrate_processes;
mod parsers_fuzz;
mod plots;
mod readme;
mod record_replay;
mod recording_integrity;
mod reentrant;
mod reference_autopilot;
mod run_cli;
mod signals_and_outputs;
mod signals_in_sessions;
mod single_instance;
mod ulog_export;
mod vehicles_apart;
mod verdict_cli;
mod verdict_failures;
mod viewer_cli;

//! From a system file to a running [`Cosim`]: each participant made (a
//! vehicle's scenario loaded with its overrides, an FMU unpacked and
//! loaded), each transfer function wired.

use std::path::{Path, PathBuf};

use lockstep_fleet::{Start, check_starts};
use lockstep_harness::engine::{PlantRunner, RunOptions};
use lockstep_harness::inputs::scenario::Scenario;
use lockstep_harness::io::log_meta::sidecar_path;
use lockstep_harness::io::paths::{check_outputs, scenario_inputs};

use crate::error::CosimError;
use crate::file::{FileMode, ParticipantKind, SystemFile, TransferKind};
use crate::participant::Participant;
use crate::radio::{Radio, RadioLink};
use crate::run::{Cosim, Mode};
use crate::system::{SystemBuilder, TransferSpec};
use crate::transfer::{Connect, Transfer};
use crate::vehicle::{VehicleOptions, VehicleParticipant};

/// Finds the FMU a program carries by name (`bundled:NAME`).
pub type FindBundled = fn(&str) -> Result<PathBuf, String>;

/// What a run adds to its system file: how its vehicles run (the
/// autopilot of those that name none, isolation, logs, threads) and the
/// co-simulation's own choices.
#[derive(Debug, Clone)]
pub struct AssembleOptions {
    pub run: RunOptions,
    /// Overrides the file's mode.
    pub mode: Option<FileMode>,
    /// Where a `bundled:NAME` FMU is (the program that carries them
    /// knows); `None`: such a path is refused.
    pub bundled_fmu: Option<FindBundled>,
    /// The run's own files besides the vehicles' logs (what each is, its
    /// path: the system file, the record, the summary): a vehicle's log
    /// (or its sidecar) that names one of them, or one of the vehicle's
    /// inputs, is refused before anything is written.
    pub taken: Vec<(String, PathBuf)>,
}

impl AssembleOptions {
    /// The mode of a run of `sf` (these options', else the file's).
    pub fn mode_of(&self, sf: &SystemFile) -> FileMode {
        self.mode.unwrap_or(sf.mode)
    }

    /// The threads of a run of `sf`: 1 when serialized, else these
    /// options', the file's, or the machine's cores, at most one per
    /// participant (a wave has no more work to share).
    pub fn threads_of(&self, sf: &SystemFile) -> usize {
        match self.mode_of(sf) {
            FileMode::Serialized => 1,
            FileMode::Parallel => self
                .run
                .threads_or(sf.threads)
                .min(sf.participants.len().max(1)),
        }
    }
}

/// What the program running a system provides: a participant for a
/// declaration (`None`: make it as declared). Every `external` participant
/// must be provided.
pub type Provide<'a> =
    dyn FnMut(&crate::file::ParticipantDecl) -> Option<Result<Box<dyn Participant>, String>> + 'a;

/// Makes participant `d` as declared (in this process).
pub fn make_participant(
    d: &crate::file::ParticipantDecl,
    o: &AssembleOptions,
) -> Result<Box<dyn Participant>, CosimError> {
    participant(&d.name, &d.kind, o)
}

/// Makes the participant declared as `kind`.
fn participant(
    name: &str,
    kind: &ParticipantKind,
    o: &AssembleOptions,
) -> Result<Box<dyn Participant>, CosimError> {
    let setup = |reason: String| CosimError::Setup {
        participant: name.to_string(),
        reason,
    };
    match kind {
        ParticipantKind::Vehicle {
            scenario,
            autopilot,
            overrides,
            traffic_slots,
            avoid_m,
        } => {
            let s = Scenario::load_with(scenario, overrides).map_err(|e| setup(e.to_string()))?;
            let log = match (&o.run.log_dir, s.cadence("log")) {
                (Some(dir), Some(_)) => Some(log_path(dir, name)),
                _ => None,
            };
            let ap = autopilot.as_deref().unwrap_or(&o.run.autopilot);
            if let Some(log) = &log {
                let sidecar = sidecar_path(log);
                let mut outputs: Vec<(&str, &Path)> = o
                    .taken
                    .iter()
                    .map(|(w, p)| (w.as_str(), p.as_path()))
                    .collect();
                outputs.push(("its log", log));
                outputs.push(("its log's sidecar", &sidecar));
                check_outputs(&scenario_inputs(scenario, ap, &s), &outputs).map_err(setup)?;
            }
            let v = VehicleParticipant::new(
                &s,
                ap,
                log.as_deref(),
                &o.run.isolation,
                VehicleOptions {
                    traffic_slots: *traffic_slots,
                    avoid_m: *avoid_m,
                },
            )
            .map_err(|e| setup(e.to_string()))?;
            Ok(Box::new(v))
        }
        ParticipantKind::Fmu {
            path,
            start,
            preload,
        } => {
            let bundled = path
                .to_str()
                .and_then(|p| p.strip_prefix(crate::file::BUNDLED_PREFIX));
            let path = match (bundled, o.bundled_fmu) {
                (Some(b), Some(find)) => find(b).map_err(setup)?,
                (Some(b), None) => {
                    return Err(setup(format!(
                        "`bundled:{b}`: this program carries no FMUs"
                    )));
                }
                (None, _) => path.clone(),
            };
            let f = crate::fmu::FmuParticipant::load(&path, name, start, preload)
                .map_err(|e| setup(e.to_string()))?;
            Ok(Box::new(f))
        }
        ParticipantKind::External { .. } => Err(setup(
            "an external participant is provided by the program that runs the system (a C host \
             binds it with lockstep_cosim_bind); this one provides none"
                .into(),
        )),
    }
}

/// Builds the system of `sf`.
pub fn assemble(sf: &SystemFile, o: &AssembleOptions) -> Result<Cosim, CosimError> {
    assemble_with(sf, o, &mut |_| None)
}

/// Builds the system of `sf`, taking from `provide` the participants it
/// gives (external ones, or any made elsewhere: another process).
pub fn assemble_with(
    sf: &SystemFile,
    o: &AssembleOptions,
    provide: &mut Provide<'_>,
) -> Result<Cosim, CosimError> {
    check_vehicle_starts(sf)?;
    let mut b = SystemBuilder::new(sf.step);
    for p in &sf.participants {
        let made = match provide(p) {
            Some(r) => r.map_err(|reason| CosimError::Setup {
                participant: p.name.clone(),
                reason,
            })?,
            None => participant(&p.name, &p.kind, o)?,
        };
        b.participant(&p.name, p.period, made)?;
    }
    for t in &sf.transfers {
        let (reads, writes, f): (Vec<String>, Vec<String>, Box<dyn Transfer>) = match &t.kind {
            TransferKind::Connect {
                from,
                to,
                gain,
                offset,
            } => (
                from.clone(),
                to.clone(),
                Box::new(Connect {
                    gain: *gain,
                    offset: *offset,
                }),
            ),
            TransferKind::Radio {
                vehicles,
                latency,
                loss,
                range_m,
            } => (
                vehicles
                    .iter()
                    .map(|v| format!("{v}.position_ned_m"))
                    .collect(),
                vehicles.iter().map(|v| format!("{v}.traffic")).collect(),
                Box::new(Radio::new(
                    &t.name,
                    vehicles,
                    RadioLink {
                        latency: *latency,
                        loss: *loss,
                        range_m: *range_m,
                    },
                    sf.seed,
                )),
            ),
        };
        b.transfer(
            TransferSpec {
                name: t.name.clone(),
                period_us: t.period,
                same_step: t.same_step,
                reads,
                writes,
            },
            f,
        )?;
    }
    let mode = match o.mode.unwrap_or(sf.mode) {
        FileMode::Serialized => Mode::Serialized,
        FileMode::Parallel => Mode::Parallel {
            threads: o.run.threads_or(sf.threads),
        },
    };
    b.build(mode)
}

/// Refuses vehicles that start where another one is (wherever each is
/// made: its scenario and start are the file's), before any is made.
fn check_vehicle_starts(sf: &SystemFile) -> Result<(), CosimError> {
    let mut starts = Vec::new();
    for p in &sf.participants {
        let ParticipantKind::Vehicle {
            scenario,
            overrides,
            ..
        } = &p.kind
        else {
            continue;
        };
        let setup = |reason: String| CosimError::Setup {
            participant: p.name.clone(),
            reason,
        };
        let s = Scenario::load_with(scenario, overrides).map_err(|e| setup(e.to_string()))?;
        let runner = PlantRunner::from_scenario(&s).map_err(|e| setup(e.to_string()))?;
        starts.push(Start::new(
            &p.name,
            runner.plant(),
            [s.start.0, s.start.1, 0.0],
            None,
        ));
    }
    check_starts(&starts).map_err(|reason| CosimError::Build {
        what: "participants".into(),
        reason,
    })
}

/// The path of `name`'s flight log under `dir`.
pub fn log_path(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{name}.csv"))
}

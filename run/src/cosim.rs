//! A co-simulation (a system file): vehicles, FMUs and transfer functions
//! stepped together; the record `cosim.csv`, each vehicle's flight log and
//! `summary.json` in the out directory, as a typed [`CosimReport`]. Some
//! participants may run in processes of their own ([`Elsewhere`]); a
//! participant can also be served to a run elsewhere ([`host`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use lockstep_abi::Isolation;
use lockstep_cosim::assemble::{AssembleOptions, assemble_with, make_participant};
use lockstep_cosim::file::{FileMode, SystemFile};
use lockstep_cosim::record::Recorder;
use lockstep_cosim::{CosimError, Participant};
use lockstep_harness::engine::RunOptions;
use lockstep_harness::io::digest::file_digest;
use lockstep_harness::outcome::class::ErrorClass;

use crate::RunError;
use crate::flight::real_time_factor;
use crate::hosts::{ChildSetup, Elsewhere, HostKind};
use crate::net::Network;
use crate::outputs::make_dir;
pub use crate::summary::cosim::{CosimReport, ParticipantReport, TransferReport};
use crate::summary::{COSIM_RECORD, SUMMARY};

/// A co-simulation to run.
#[derive(Debug, Clone)]
pub struct CosimRequest {
    /// The system file (TOML: `[cosim]`, `[[participants]]`, `[[transfers]]`).
    pub system: PathBuf,
    /// The autopilot of vehicles whose entry names none.
    pub autopilot: PathBuf,
    /// Where the record, the vehicles' logs and `summary.json` go
    /// [default: `<system's stem>.cosim` in the working directory].
    pub out: Option<PathBuf>,
    pub isolation: Isolation,
    /// Step the participants one after another (the same bits).
    pub serialized: bool,
    /// Threads of the parallel mode [default: the file's, else the cores].
    pub threads: Option<usize>,
    /// Participants served by processes of their own.
    pub elsewhere: Elsewhere,
}

/// What is about to run.
#[derive(Debug, Clone, PartialEq)]
pub struct CosimHeader {
    pub system: PathBuf,
    pub serialized: bool,
    pub threads: usize,
    pub step_us: u64,
    pub participants: usize,
    pub transfers: usize,
}

/// The output directory when none is given: `<stem>.cosim` here.
fn default_out(system: &Path) -> PathBuf {
    let stem = system
        .file_stem()
        .map_or("system".into(), |s| s.to_string_lossy().into_owned());
    PathBuf::from(format!("{stem}.cosim"))
}

/// A co-simulation assembled and ready to run.
pub struct PreparedCosim {
    sf: SystemFile,
    out: PathBuf,
    c: lockstep_cosim::Cosim,
    rec: Recorder,
    record_path: PathBuf,
    hosts: Option<crate::hosts::Hosts>,
    header: CosimHeader,
    interrupt: Option<Arc<AtomicUsize>>,
}

impl std::fmt::Debug for PreparedCosim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreparedCosim")
            .field("system", &self.sf.file)
            .finish_non_exhaustive()
    }
}

/// Loads the system file, starts or waits for the participants served
/// elsewhere, assembles the system and opens the record. `notice` hears
/// lines for the user (processes started, importer notes).
pub fn prepare(request: CosimRequest, notice: &dyn Fn(&str)) -> Result<PreparedCosim, RunError> {
    let config = RunError::configuration;
    let sf = SystemFile::load(&request.system).map_err(|e| config(e.to_string()))?;
    let out = request
        .out
        .clone()
        .unwrap_or_else(|| default_out(&request.system));
    make_dir("--out", &out)?;
    let options = AssembleOptions {
        run: RunOptions {
            autopilot: request.autopilot.clone(),
            isolation: request.isolation.clone(),
            log_dir: Some(out.clone()),
            threads: request.threads,
        },
        mode: request.serialized.then_some(FileMode::Serialized),
        bundled_fmu: Some(crate::assets::fmu),
        taken: vec![
            ("the system file".into(), sf.file.clone()),
            ("the record".into(), out.join(COSIM_RECORD)),
            ("the summary".into(), out.join(SUMMARY)),
        ],
    };
    let names: Vec<&str> = sf.participants.iter().map(|p| p.name.as_str()).collect();
    let e = &request.elsewhere;
    e.check_names(&request.system, "participant", &names)
        .map_err(config)?;
    let child = ChildSetup {
        file: &sf.file,
        autopilot: &request.autopilot,
        isolation: &request.isolation,
        out: Some(&out),
    };
    let mut hosts = crate::hosts::open_for(e, HostKind::PARTICIPANT, child, notice)?;
    let assembled = assemble_with(&sf, &options, &mut |d| {
        let h = hosts.as_mut()?;
        if !e.has(&d.name) {
            return None;
        }
        Some(remote_participant(h, &d.name, d.period.unwrap_or(sf.step)))
    });
    // An inconsistent system (unknown variables, widths, periods, cycles)
    // is the system file's fault: name it.
    let in_file = |e: CosimError| match e {
        CosimError::Build { .. } => format!("{}: {e}", request.system.display()),
        other => other.to_string(),
    };
    if let Some(stop) = e.interrupted("participant") {
        return Err(stop);
    }
    let mut c = assembled.map_err(|e| config(in_file(e)))?;
    for (name, lines) in c.notices() {
        for l in lines {
            notice(&format!("note: participant `{name}`: {l}"));
        }
    }
    let record_path = out.join(COSIM_RECORD);
    let rec = match Recorder::new(&record_path, &c, sf.record.as_deref(), sf.record_period) {
        Ok(r) => r,
        Err(e) => {
            let _ = c.finish();
            return Err(config(in_file(e)));
        }
    };
    let header = CosimHeader {
        system: sf.file.clone(),
        serialized: options.mode_of(&sf) == FileMode::Serialized,
        threads: options.threads_of(&sf),
        step_us: sf.step.0,
        participants: sf.participants.len(),
        transfers: sf.transfers.len(),
    };
    Ok(PreparedCosim {
        sf,
        out,
        c,
        rec,
        record_path,
        hosts,
        header,
        interrupt: None,
    })
}

/// Participant `name` served by another process.
#[cfg(feature = "distributed")]
fn remote_participant(
    h: &mut crate::hosts::Hosts,
    name: &str,
    period: lockstep_harness::Micros,
) -> Result<Box<dyn Participant>, String> {
    let link = h.link(name, &format!("participant `{name}`"))?;
    Ok(Box::new(lockstep_cosim::wire::RemoteParticipant::connect(
        link, period,
    )?))
}

#[cfg(not(feature = "distributed"))]
fn remote_participant(
    _: &mut crate::hosts::Hosts,
    _: &str,
    _: lockstep_harness::Micros,
) -> Result<Box<dyn Participant>, String> {
    Err(crate::net::NO_NETWORK.into())
}

impl PreparedCosim {
    pub fn header(&self) -> &CosimHeader {
        &self.header
    }

    /// The out directory.
    pub fn out(&self) -> &Path {
        &self.out
    }

    /// A signal number stored in `flag` stops the run before its next
    /// step, with everything up to there written.
    pub fn interrupt_on(&mut self, flag: Arc<AtomicUsize>) {
        self.interrupt = Some(flag);
    }

    /// Runs to the file's duration (or the first failure or signal),
    /// finishes every participant and the record, and writes the summary.
    pub fn run(mut self) -> CosimReport {
        let started = Instant::now();
        let rec = &mut self.rec;
        let interrupt = self.interrupt.clone();
        let ran = loop {
            let now = self.c.now();
            if now >= self.sf.duration {
                break Ok(());
            }
            if let Some(sig) = interrupt
                .as_ref()
                .map(|f| f.load(Ordering::SeqCst))
                .filter(|s| *s != 0)
            {
                break Err(CosimError::Interrupted {
                    signal: sig as i32,
                    time_us: now,
                });
            }
            if let Err(e) = self.c.step().and_then(|_| rec.observe(&self.c)) {
                break Err(e);
            }
        };
        let wall_s = started.elapsed().as_secs_f64();
        // Everything is finished and flushed whatever happened.
        let (participants, finish_error) = self.c.finish_all();
        let rows = self.rec.finish();
        if let Some(h) = &mut self.hosts {
            h.end(ran.is_ok());
        }
        let reached = self.c.now();
        let error = ran.err().or(finish_error).or(rows.err());
        let mut report = CosimReport {
            system: self.sf.file.display().to_string(),
            description: self.sf.description.clone(),
            mode: if self.header.serialized {
                "serialized"
            } else {
                "parallel"
            }
            .into(),
            threads: self.header.threads,
            step_us: self.sf.step.0,
            duration_us: self.sf.duration.0,
            reached_us: reached.0,
            wall_s,
            real_time_factor: real_time_factor(reached.0, wall_s),
            record: self.record_path.display().to_string(),
            record_digest: file_digest(&self.record_path).ok(),
            error: error.as_ref().map(|e| e.to_string()),
            error_class: None,
            exit_status: 0,
            participants: participants.into_iter().collect(),
            transfers: self.c.transfer_reports().into_iter().collect(),
            output_errors: Vec::new(),
        };
        let signal = match &error {
            Some(CosimError::Interrupted { signal, .. }) => Some(*signal),
            _ => None,
        };
        let class = if signal.is_some() {
            Some(ErrorClass::Interrupted)
        } else if report.error.is_some() {
            Some(ErrorClass::RunFailure)
        } else if !report.failed_vehicles().is_empty() {
            Some(ErrorClass::ExpectationFailed)
        } else {
            None
        };
        report.error_class = class;
        report.exit_status = class.map_or(0, |c| c.exit_status(signal));
        if let Err(e) = crate::summary::OutDir::new(&self.out).write_summary(&report.clone().into())
        {
            report.output_errors.push(e);
            report.error_class = Some(ErrorClass::RunFailure);
            report.exit_status = ErrorClass::RunFailure.exit_status(None);
        }
        report
    }
}

/// One participant of a system file served to a run elsewhere.
#[derive(Debug, Clone)]
pub struct HostRequest {
    pub system: PathBuf,
    pub participant: String,
    pub autopilot: PathBuf,
    pub isolation: Isolation,
    /// Where a vehicle participant writes its log, as `<out>/<name>.csv`.
    pub out: Option<PathBuf>,
    pub net: Network,
}

/// Serves one participant until the run finishes, its caller leaves, or
/// none comes within the network's wait.
pub fn host(request: HostRequest) -> Result<(), RunError> {
    let config = RunError::configuration;
    crate::net::available()?;
    let sf = SystemFile::load(&request.system).map_err(|e| config(e.to_string()))?;
    let Some(d) = sf
        .participants
        .iter()
        .find(|p| p.name == request.participant)
    else {
        let names: Vec<&str> = sf.participants.iter().map(|p| p.name.as_str()).collect();
        return Err(config(format!(
            "{} has no participant `{}` (its participants: {})",
            request.system.display(),
            request.participant,
            names.join(", ")
        )));
    };
    if let Some(out) = &request.out {
        make_dir("--out", out)?;
    }
    let options = AssembleOptions {
        run: RunOptions {
            autopilot: request.autopilot.clone(),
            isolation: request.isolation.clone(),
            log_dir: request.out.clone(),
            threads: Some(1),
        },
        mode: None,
        bundled_fmu: Some(crate::assets::fmu),
        taken: vec![("the system file".into(), sf.file.clone())],
    };
    let mut p = make_participant(d, &options).map_err(|e| config(e.to_string()))?;
    serve(p.as_mut(), &request.participant, &request.net)
        .map_err(|e| RunError::run_failure(format!("participant `{}`: {e}", request.participant)))
}

#[cfg(feature = "distributed")]
fn serve(p: &mut dyn Participant, name: &str, net: &Network) -> Result<(), String> {
    lockstep_cosim::wire::serve(p, &crate::hosts::serving(net), name, net.wait())
}

#[cfg(not(feature = "distributed"))]
fn serve(_: &mut dyn Participant, _: &str, _: &Network) -> Result<(), String> {
    Err(crate::hosts::refuse_serving())
}

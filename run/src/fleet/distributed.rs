//! A fleet stepped across processes and machines: the primary (owns time,
//! writes the logs and the report, a [`FleetReport`] like a threaded run's)
//! and its secondaries (step the vehicles of their levels), and the
//! control of a running primary (pause, resume). On zenoh: a build without
//! the `distributed` feature refuses each with [`crate::net::NO_NETWORK`].

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::Duration;

use lockstep_abi::Isolation;
use lockstep_fleet::FleetScenario;
use lockstep_harness::inputs::scenario::Override;

use super::{FleetHeader, FleetReport};
use crate::RunError;
use crate::net::Network;

/// What a primary needs.
#[derive(Debug, Clone)]
pub struct PrimaryRequest {
    /// The fleet scenario (`None` is refused: a primary needs one).
    pub scenario: Option<PathBuf>,
    pub autopilot: PathBuf,
    pub overrides: Vec<Override>,
    pub out: Option<PathBuf>,
    pub isolation: Isolation,
    pub net: Network,
    /// How many secondaries to wait for before starting (at least 1).
    pub secondaries: u32,
    /// The longest a round may take [default: 60 s].
    pub step_deadline: Option<Duration>,
    /// The fleet served to ground stations over MAVLink from here (or a
    /// record of their inputs replayed).
    pub gcs: Option<crate::gcs::GcsOptions>,
    /// Kept to the wall clock: simulated seconds per second.
    pub pace: Option<f64>,
}

/// A primary ready to discover its secondaries.
#[derive(Debug)]
#[cfg_attr(not(feature = "distributed"), allow(dead_code))]
pub struct PreparedPrimary {
    request: PrimaryRequest,
    fs: FleetScenario,
    /// The scenario and autopilot as absolute paths (the secondaries
    /// resolve them wherever they were started).
    scenario: PathBuf,
    autopilot: PathBuf,
    text: String,
}

/// Loads the fleet and the scenario's text for the secondaries.
pub fn prepare_primary(request: PrimaryRequest) -> Result<PreparedPrimary, RunError> {
    crate::net::available()?;
    if request.secondaries == 0 {
        return Err(RunError::configuration(
            "--network-role primary needs --network-secondaries N (at least 1)",
        ));
    }
    let Some(given) = &request.scenario else {
        return Err(RunError::configuration(
            "the primary flies a fleet scenario: give its path",
        ));
    };
    let scenario = std::fs::canonicalize(given).unwrap_or_else(|_| given.clone());
    let autopilot =
        std::fs::canonicalize(&request.autopilot).unwrap_or_else(|_| request.autopilot.clone());
    let fs = super::load(&scenario, &request.overrides)?;
    if let Some(dir) = &request.out {
        crate::outputs::make_dir("--out", dir)?;
        super::check_logs(&scenario, &autopilot, &fs, dir)?;
    }
    let text = lockstep_config::read(&scenario, "scenario")
        .map_err(|e| RunError::configuration(e.to_string()))?;
    if let Some(g) = &request.gcs {
        super::check_record(&scenario, &autopilot, request.out.as_deref(), &fs, g)?;
    }
    Ok(PreparedPrimary {
        request,
        fs,
        scenario,
        autopilot,
        text,
    })
}

impl PreparedPrimary {
    pub fn header(&self) -> FleetHeader {
        FleetHeader::of(&self.scenario, &self.fs, &self.autopilot)
    }

    /// The session's name.
    pub fn session(&self) -> &str {
        &self.request.net.session
    }

    /// Waits for the secondaries, then runs the fleet to its end (or the
    /// first error) and writes the summary. `notice` hears the lines for
    /// the user (secondaries joining, pause, resume, pinned vehicles).
    pub fn run(
        self,
        interrupt: Option<Arc<AtomicUsize>>,
        notice: impl Fn(&str) + Send + Sync + 'static,
    ) -> Result<FleetReport, RunError> {
        #[cfg(feature = "distributed")]
        return imp::primary(self, interrupt, notice);
        #[cfg(not(feature = "distributed"))]
        {
            let _ = (interrupt, notice);
            Err(RunError::configuration(crate::net::NO_NETWORK))
        }
    }
}

/// A secondary that joined its primary.
#[derive(Debug)]
pub struct JoinedSecondary {
    #[cfg(feature = "distributed")]
    secondary: lockstep_distributed::Secondary<lockstep_distributed::zenoh_link::ZenohSecondary>,
    /// This secondary's index and how many there are.
    pub index: u32,
    pub secondaries: u32,
    /// The primary's scenario.
    pub scenario: String,
    pub session: String,
}

/// Joins the primary of `net`'s session and builds the run it sends.
pub fn join_secondary(net: &Network) -> Result<JoinedSecondary, RunError> {
    #[cfg(feature = "distributed")]
    return imp::join(net);
    #[cfg(not(feature = "distributed"))]
    {
        let _ = net;
        Err(RunError::configuration(crate::net::NO_NETWORK))
    }
}

impl JoinedSecondary {
    /// Answers the primary's steps until it stops the run; the steps
    /// answered.
    pub fn run(self) -> Result<u64, RunError> {
        #[cfg(feature = "distributed")]
        {
            let mut s = self.secondary;
            s.run()
                .map(|()| s.rounds)
                .map_err(|e| RunError::run_failure(e.to_string()))
        }
        #[cfg(not(feature = "distributed"))]
        Err(RunError::configuration(crate::net::NO_NETWORK))
    }
}

/// Sends `command` (`pause`, `resume`) to the primary of `net`'s session;
/// its answer.
pub fn control(net: &Network, command: &str) -> Result<String, RunError> {
    #[cfg(feature = "distributed")]
    return lockstep_distributed::zenoh_link::command(
        &net.options(),
        command,
        net.wait().min(Duration::from_secs(10)),
    )
    .map_err(|e| RunError::run_failure(e.to_string()));
    #[cfg(not(feature = "distributed"))]
    {
        let _ = (net, command);
        Err(RunError::configuration(crate::net::NO_NETWORK))
    }
}

#[cfg(feature = "distributed")]
mod imp {
    use std::time::Instant;

    use lockstep_distributed::protocol::{PROTOCOL_VERSION, Setup};
    use lockstep_distributed::zenoh_link::{ZenohPrimary, ZenohSecondary};
    use lockstep_distributed::{Primary, PrimaryError, PrimaryOptions, Secondary};
    use lockstep_harness::outcome::class::{Classified, ErrorClass, Part};

    use crate::gcs::relay::{PrimaryRouter, SecondaryStation};

    use std::path::Path;

    use super::*;
    use crate::fleet::{Ending, FleetRun, Percentiles, RoundPartsSeconds, Rounds};

    fn seconds(p: &lockstep_distributed::RoundParts) -> RoundPartsSeconds {
        RoundPartsSeconds {
            send: p.send.as_secs_f64(),
            secondary: p.secondary.as_secs_f64(),
            transit: p.transit.as_secs_f64(),
            checks: p.checks.as_secs_f64(),
            rows: p.rows.as_secs_f64(),
        }
    }

    fn classify(e: &PrimaryError) -> Classified {
        let (class, part, signal) = match e {
            PrimaryError::Interrupted { signal, .. } => {
                (ErrorClass::Interrupted, Part::Signal, Some(*signal))
            }
            PrimaryError::Vehicle(_, status) => match ErrorClass::of_exit_status(*status) {
                Some(c) => (c, Part::Autopilot, None),
                None => (ErrorClass::RunFailure, Part::Autopilot, None),
            },
            PrimaryError::Setup { .. } => (ErrorClass::Configuration, Part::Input, None),
            _ => (ErrorClass::RunFailure, Part::Output, None),
        };
        Classified {
            class,
            part,
            signal,
        }
    }

    pub(super) fn primary(
        p: PreparedPrimary,
        interrupt: Option<Arc<AtomicUsize>>,
        notice: impl Fn(&str) + Send + Sync + 'static,
    ) -> Result<FleetReport, RunError> {
        let r = &p.request;
        let n = r.secondaries;
        let (in_process, step_ms, call_ms) = match &r.isolation {
            Isolation::InProcess => (true, 0, 0),
            Isolation::Process(i) => (
                false,
                i.step_timeout.as_millis() as u64,
                i.call_timeout.as_millis() as u64,
            ),
        };
        let (router, served) = match &r.gcs {
            Some(g) => {
                let names: Vec<String> = p.fs.vehicles.iter().map(|v| v.name.clone()).collect();
                let served = PrimaryRouter::setup(g, &names).map_err(RunError::configuration)?;
                let router =
                    PrimaryRouter::open(g, p.fs.vehicles.len()).map_err(RunError::configuration)?;
                (Some(router), Some(served))
            }
            None => (None, None),
        };
        let setup = |index: u32| Setup {
            protocol: PROTOCOL_VERSION,
            index,
            secondaries: n,
            scenario_path: p.scenario.display().to_string(),
            scenario_text: p.text.clone(),
            overrides: r.overrides.clone(),
            autopilot: p.autopilot.display().to_string(),
            in_process,
            step_timeout_ms: step_ms,
            call_timeout_ms: call_ms,
            served: served.clone(),
        };
        let notice = Arc::new(notice);
        let heard = Arc::clone(&notice);
        let link = ZenohPrimary::discover(&r.net.options(), n as usize, setup, r.net.wait(), |l| {
            heard(l)
        })
        .map_err(|e| RunError::run_failure(e.to_string()))?;
        let options = PrimaryOptions {
            log_dir: r.out.clone(),
            autopilot: p.autopilot.clone(),
            step_deadline: r.step_deadline.unwrap_or(Duration::from_secs(60)),
        };
        let mut primary = Primary::new(link, p.fs.clone(), options)
            .map_err(|e| RunError::configuration(e.to_string()))?;
        if let Some(flag) = interrupt {
            primary.interrupt_on(flag);
        }
        primary.on_notice(move |l| notice(l));
        if let Some(router) = router {
            primary.serve(Box::new(router));
        }
        if let Some(speed) = r.pace {
            primary.pace(speed);
        }
        let started = Instant::now();
        let result = primary.run();
        let wall = started.elapsed().as_secs_f64();
        // Also when the run failed or was interrupted (a served run
        // usually ends with Ctrl-C): what the link ignored is reported.
        let link_notes = primary.link_notes();
        let (run, ending): (FleetRun, Ending) = match result {
            Ok(out) => (
                FleetRun::Distributed {
                    secondaries: n,
                    rounds: Some(Rounds {
                        session: r.net.session.clone(),
                        rounds: out.rounds,
                        migrations: out.migrations,
                        refused_acks: out.refused_acks,
                        pinned: out.pinned,
                        round_latency_us: Percentiles::of(
                            out.round_times
                                .iter()
                                .map(|d| d.as_secs_f64() * 1e6)
                                .collect(),
                        ),
                        round_parts_s: seconds(&out.round_parts),
                    }),
                },
                Ok(out.fleet),
            ),
            Err(e) => (
                FleetRun::Distributed {
                    secondaries: n,
                    rounds: None,
                },
                Err((e.to_string(), classify(&e))),
            ),
        };
        let out = r.out.as_deref();
        let mut report =
            FleetReport::new(&p.scenario, &p.fs, out, run, primary.now().0, wall, ending);
        report.link_notes = link_notes;
        report.write_summary(out);
        Ok(report)
    }

    pub(super) fn join(net: &Network) -> Result<JoinedSecondary, RunError> {
        let (link, setup) = ZenohSecondary::join(&net.options(), net.wait())
            .map_err(|e| RunError::run_failure(e.to_string()))?;
        let fs = FleetScenario::from_toml_str_with(
            &setup.scenario_text,
            Path::new(&setup.scenario_path),
            &setup.overrides,
        )
        .map_err(|e| RunError::configuration(format!("the primary's scenario: {e}")))?;
        let isolation = if setup.in_process {
            Isolation::InProcess
        } else {
            let d = lockstep_abi::IsolationOptions::default();
            Isolation::Process(lockstep_abi::IsolationOptions {
                step_timeout: Duration::from_millis(setup.step_timeout_ms),
                call_timeout: Duration::from_millis(setup.call_timeout_ms),
                ..d
            })
        };
        let station = match &setup.served {
            Some(served) => Some(
                SecondaryStation::new(served, &fs)
                    .map_err(|e| RunError::configuration(format!("the primary's setup: {e}")))?,
            ),
            None => None,
        };
        let mut secondary = Secondary::new(link, fs, PathBuf::from(&setup.autopilot), isolation);
        if let Some(s) = station {
            secondary.serve(Box::new(s));
        }
        Ok(JoinedSecondary {
            secondary,
            index: setup.index,
            secondaries: setup.secondaries,
            scenario: setup.scenario_path.clone(),
            session: net.session.clone(),
        })
    }
}

//! `lockstep compare-integrators`: the arguments into a study request, its
//! progress, table and files printed.

use std::path::PathBuf;
use std::process::ExitCode;

use lockstep_plant::integrate::Method;
use lockstep_run::study::{self, StudyEvent, StudyRequest};

use crate::args::ScenarioArgs;

#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    #[command(flatten)]
    flight: ScenarioArgs,
    /// The methods to compare, comma-separated (euler, rk4, bs32, dp54).
    #[arg(long, value_delimiter = ',', value_parser = method, default_value = "euler,rk4,bs32,dp54")]
    methods: Vec<Method>,
    /// Substeps of the fixed-step methods (euler, rk4) in microseconds,
    /// comma-separated [default: the flight's longest boundary interval,
    /// and 1/2, 1/4 and 1/8 of it].
    #[arg(long, value_delimiter = ',')]
    steps_us: Vec<u64>,
    /// Tolerances of the adaptive methods (bs32, dp54; atol = rtol for
    /// position, velocity, attitude and rates), comma-separated [default:
    /// bs32 1e-4,1e-6,1e-8; dp54 1e-6,1e-8,1e-10].
    #[arg(long, value_delimiter = ',')]
    tolerances: Vec<f64>,
    /// Restart each replay from the reference's state every this many
    /// seconds of simulated time (0: replay the whole flight open-loop).
    /// A multirotor without its controller is unstable, so over a whole
    /// flight the errors measure that instability as much as the
    /// integrator.
    #[arg(long, default_value_t = 1.0, value_parser = horizon)]
    horizon_s: f64,
    /// Replays per candidate; the wall time reported is their median.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=100))]
    repeats: u32,
    /// The directory written: flight.rec, integrators.csv,
    /// work_precision.png and work_precision.svg.
    #[arg(long, default_value = "integrator-study")]
    out: PathBuf,
}

/// A horizon: 0, or whole microseconds of at most a day.
fn horizon(s: &str) -> Result<f64, String> {
    let v: f64 = s.parse().map_err(|e| format!("{e}"))?;
    let us = v * 1e6;
    if v.is_finite() && (0.0..=86_400.0).contains(&v) && (us - us.round()).abs() < 1e-6 {
        Ok(v)
    } else {
        Err(format!(
            "{s} is not a number of seconds in [0, 86400] in whole microseconds"
        ))
    }
}

/// An integrator by its scenario key.
fn method(s: &str) -> Result<Method, String> {
    Method::from_name(s)
        .ok_or_else(|| format!("`{s}` is not an integrator (euler, rk4, bs32, dp54)"))
}

pub fn command(a: CompareArgs) -> ExitCode {
    let verb = "compare-integrators";
    let (scenario, autopilot, overrides) = match a.flight.resolve() {
        Ok(v) => v,
        Err(e) => return crate::refuse(verb, &e),
    };
    let request = StudyRequest {
        scenario,
        autopilot,
        overrides,
        methods: a.methods,
        steps_us: a.steps_us,
        tolerances: a.tolerances,
        repeats: a.repeats,
        horizon_us: (a.horizon_s > 0.0).then(|| (a.horizon_s * 1e6).round() as u64),
        out: a.out,
        isolation: lockstep_abi::Isolation::default(),
    };
    let shown = request.scenario.display().to_string();
    let outcome = study::compare(&request, |event| match event {
        StudyEvent::Flying { recording } => {
            say!("flying        {shown} (recording {})", recording.display())
        }
        StudyEvent::Replaying {
            boundaries,
            span_us,
            max_interval_us,
            candidates,
            repeats,
            horizon_us,
        } => {
            say!(
                "replaying     {boundaries} boundaries over {:.3} s (longest interval \
                 {max_interval_us} us), {candidates} candidates, {repeats} repeats",
                span_us as f64 * 1e-6
            );
            match horizon_us {
                Some(h) => say!(
                    "horizon       {:.6} s (each replay restarts from the reference's state)",
                    h as f64 * 1e-6
                ),
                None => say!("horizon       the whole flight, open-loop"),
            }
        }
        StudyEvent::Candidate {
            index,
            of,
            method,
            setting,
        } => warn!("  {}/{of}: {method} {setting}", index + 1),
    });
    let outcome = match outcome {
        Ok(o) => o,
        Err(e) => return crate::refused(verb, &e),
    };
    say!("");
    for line in study::table_text(&outcome.results).lines() {
        say!("{line}");
    }
    say!("");
    say!("csv           {}", outcome.csv.display());
    for p in &outcome.plots {
        say!("plot          {}", p.display());
    }
    if outcome.failed() > 0 {
        say!(
            "failed        {} candidate(s) (see the table)",
            outcome.failed()
        );
    }
    ExitCode::SUCCESS
}

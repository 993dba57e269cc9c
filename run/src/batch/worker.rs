//! The entry point of a batch's worker process (`lockstep montecarlo-run`):
//! one run of the batch in this process, its row printed as JSON on a line
//! that starts with [`ROW_PREFIX`].

use std::path::Path;

use lockstep_abi::Isolation;
use lockstep_harness::inputs::scenario::{Override, Scenario};

use super::{Draw, RunRow, fly};
use crate::RunError;

/// What starts a worker's row on its stdout: the row is found by this
/// prefix, since an autopilot may print there too (and C's buffered
/// output reaches the pipe at exit, after the row).
pub const ROW_PREFIX: &str = "lockstep-montecarlo-row ";

/// Flies run `run` of the batch over the scenario (with its overrides) in
/// this process; its row.
pub fn run(
    scenario: &Path,
    autopilot: &Path,
    overrides: &[Override],
    run: u64,
) -> Result<RunRow, RunError> {
    let s = Scenario::load_with(scenario, overrides)
        .map_err(|e| RunError::configuration(e.to_string()))?;
    let Some(d) = s.montecarlo else {
        return Err(RunError::configuration(format!(
            "{} has no [montecarlo] section",
            scenario.display()
        )));
    };
    let draw = Draw::new(&d, s.seed, run, s.tick);
    Ok(fly(&s, autopilot, &Isolation::InProcess, &draw, None))
}

/// The line a worker prints its row on.
pub fn row_line(row: &RunRow) -> String {
    format!(
        "{ROW_PREFIX}{}",
        serde_json::to_string(row).expect("a row is JSON")
    )
}

/// A worker process's program for `args`, the arguments after
/// `montecarlo-run` as the pool passes them (`SCENARIO --autopilot PATH
/// --run N [--set KEY=VALUE]...`): flies the run, prints its row line;
/// returns the exit status (2 for arguments or a run refused, with the
/// reason on stderr). For a launcher that is not the `lockstep` executable
/// (whose `montecarlo-run` subcommand reads the same arguments).
pub fn main(args: &[String]) -> i32 {
    let parsed = (|| -> Result<(String, String, u64, Vec<Override>), String> {
        let mut it = args.iter();
        let scenario = it.next().ok_or("no scenario")?.clone();
        let (mut autopilot, mut run, mut overrides) = (None, None, Vec::new());
        while let Some(flag) = it.next() {
            let value = it
                .next()
                .ok_or_else(|| format!("{flag} without its value"))?;
            match flag.as_str() {
                "--autopilot" => autopilot = Some(value.clone()),
                "--run" => {
                    run = Some(
                        value
                            .parse::<u64>()
                            .map_err(|e| format!("--run {value}: {e}"))?,
                    )
                }
                "--set" => overrides.push(Override::parse("--set", value)?),
                other => return Err(format!("unknown argument {other}")),
            }
        }
        Ok((
            scenario,
            autopilot.ok_or("no --autopilot")?,
            run.ok_or("no --run")?,
            overrides,
        ))
    })();
    let (scenario, autopilot, k, overrides) = match parsed {
        Ok(p) => p,
        Err(e) => {
            eprintln!("montecarlo-run: {e}");
            return 2;
        }
    };
    match run(Path::new(&scenario), Path::new(&autopilot), &overrides, k) {
        Ok(row) => {
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            match writeln!(out, "{}", row_line(&row)).and_then(|()| out.flush()) {
                Ok(()) => 0,
                Err(e) => {
                    eprintln!("montecarlo-run: cannot write the row: {e}");
                    1
                }
            }
        }
        Err(e) => {
            eprintln!("montecarlo-run: {}", e.message);
            i32::from(e.exit_status())
        }
    }
}

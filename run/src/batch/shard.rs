//! A batch split over machines: `--shard K/M` flies the runs of shard K
//! (the same draws as the whole batch: a run's draw depends only on the
//! master seed and its number), and [`merge`] joins the shards' rows into
//! the one batch's `runs.csv`, `summary.json`, figures and page, refusing
//! shards of another batch (scenario, its files, overrides, autopilot,
//! seed, run count, version) and overlapping or missing ones.

use std::ops::Range;
use std::path::{Path, PathBuf};

use lockstep_harness::inputs::scenario::{Override, Scenario};
use lockstep_harness::io::digest::file_digest;

use super::{BatchReport, BatchRequest, RunRow};
use crate::RunError;
pub use crate::summary::batch::ShardInfo;
use crate::summary::{OutDir, RunSummary};

/// Shard `index` (from 1) of `of`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: u64,
    pub of: u64,
}

impl Shard {
    /// `K/M`, 1 ≤ K ≤ M.
    pub fn parse(text: &str) -> Result<Shard, String> {
        let bad = || format!("`{text}` is not K/M with 1 <= K <= M (shard K of M)");
        let (k, m) = text.split_once('/').ok_or_else(bad)?;
        let (index, of): (u64, u64) = (
            k.trim().parse().map_err(|_| bad())?,
            m.trim().parse().map_err(|_| bad())?,
        );
        if index == 0 || index > of {
            return Err(bad());
        }
        Ok(Shard { index, of })
    }

    /// The runs of this shard of `runs`: an equal share each, in order.
    pub fn range(&self, runs: u64) -> Range<u64> {
        let at = |k: u64| ((k as u128 * runs as u128) / self.of as u128) as u64;
        at(self.index - 1)..at(self.index)
    }
}

/// Each input file of `s` (from `scenario`) with its digest.
pub fn input_digests(scenario: &Path, s: &Scenario) -> Result<Vec<(String, String)>, RunError> {
    let mut files = vec![scenario.to_path_buf()];
    let spec = Path::new(&s.spec);
    if spec.is_file() {
        files.push(spec.to_path_buf());
    }
    if let Some(m) = &s.mission {
        files.push(m.clone());
    }
    files
        .into_iter()
        .map(|f| {
            let d = file_digest(&f).map_err(|e| {
                RunError::configuration(format!("cannot read {}: {e}", f.display()))
            })?;
            Ok((f.display().to_string(), d))
        })
        .collect()
}

/// The shard's identity for its summary.
pub fn info(request: &BatchRequest, s: &Scenario, shard: Shard) -> Result<ShardInfo, RunError> {
    let range = shard.range(request.runs);
    Ok(ShardInfo {
        index: shard.index,
        of: shard.of,
        first_run: range.start,
        end_run: range.end,
        total_runs: request.runs,
        overrides: request.overrides.clone(),
        inputs: input_digests(&request.scenario, s)?,
        autopilot: request.autopilot.display().to_string(),
        autopilot_digest: file_digest(&request.autopilot).map_err(|e| {
            RunError::configuration(format!("cannot read {}: {e}", request.autopilot.display()))
        })?,
        version: env!("CARGO_PKG_VERSION").to_string(),
    })
}

/// Overrides as they were given: `--seed 5, --set wind.model=constant`.
fn given(o: &[Override]) -> String {
    if o.is_empty() {
        return "none".into();
    }
    o.iter()
        .map(|o| o.given_as.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Input files with the start of their digests.
fn digests(inputs: &[(String, String)]) -> String {
    inputs
        .iter()
        .map(|(f, d)| format!("{f} {}", &d[..d.len().min(12)]))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One shard read back.
struct Read {
    dir: PathBuf,
    report: BatchReport,
    info: ShardInfo,
    rows: Vec<RunRow>,
}

fn read(dir: &Path) -> Result<Read, RunError> {
    let config = RunError::configuration;
    let at = OutDir::new(dir);
    let report = match at.read_summary().map_err(config)? {
        Some(RunSummary::Batch(b)) => b,
        Some(other) => {
            return Err(config(format!(
                "{}: a {}'s summary, not a batch's",
                at.summary().display(),
                other.kind()
            )));
        }
        None => {
            return Err(config(format!(
                "{}: no {} in it: not the --out directory of a shard (fly one with montecarlo \
                 --shard K/M)",
                dir.display(),
                crate::summary::SUMMARY
            )));
        }
    };
    let Some(info) = report.shard.clone() else {
        return Err(config(format!(
            "{}: not a shard (its summary has no `shard`: fly it with montecarlo --shard K/M)",
            dir.display()
        )));
    };
    if let Some(signal) = &report.interrupted_by {
        return Err(config(format!(
            "{}: shard {}/{} was interrupted by {signal}: fly it again",
            dir.display(),
            info.index,
            info.of
        )));
    }
    let own = (1..=info.of).contains(&info.index).then(|| {
        Shard {
            index: info.index,
            of: info.of,
        }
        .range(info.total_runs)
    });
    if own != Some(info.first_run..info.end_run) {
        return Err(config(format!(
            "{}: its summary says shard {}/{} holds runs {} to {} of {}, which is not that shard's share",
            dir.display(),
            info.index,
            info.of,
            info.first_run,
            info.end_run,
            info.total_runs
        )));
    }
    let at = dir.join(crate::summary::ROWS_JSON);
    let text = std::fs::read_to_string(&at)
        .map_err(|e| config(format!("cannot read {}: {e}", at.display())))?;
    let rows: Vec<RunRow> = serde_json::from_str(&text)
        .map_err(|e| config(format!("{}: not a shard's rows: {e}", at.display())))?;
    let runs: Vec<u64> = rows.iter().map(|r| r.run).collect();
    if runs != (info.first_run..info.end_run).collect::<Vec<u64>>() {
        return Err(config(format!(
            "{}: holds {} rows, not runs {} to {} of its shard",
            at.display(),
            rows.len(),
            info.first_run,
            info.end_run.saturating_sub(1)
        )));
    }
    Ok(Read {
        dir: dir.to_path_buf(),
        report,
        info,
        rows,
    })
}

/// The batch the shards in `dirs` make, checked whole, as the request that
/// writes it into `out`, its rows and the shards' wall time together.
pub fn joined(dirs: &[PathBuf], out: &Path) -> Result<(BatchRequest, Vec<RunRow>, f64), RunError> {
    let config = |m: String| RunError::configuration(m);
    let mut shards = dirs
        .iter()
        .map(|d| read(d))
        .collect::<Result<Vec<_>, _>>()?;
    if shards.is_empty() {
        return Err(config(
            "montecarlo merge: no shard directories given".into(),
        ));
    }
    shards.sort_by_key(|s| s.info.index);
    let first = &shards[0];
    let (f, fr) = (&first.info, &first.report);
    for s in &shards[1..] {
        let (i, r) = (&s.info, &s.report);
        let differs: Option<(&str, String, String)> = if r.scenario != fr.scenario {
            Some(("scenario", r.scenario.clone(), fr.scenario.clone()))
        } else if i.inputs != f.inputs {
            Some((
                "input files' digests",
                digests(&i.inputs),
                digests(&f.inputs),
            ))
        } else if i.overrides != f.overrides {
            Some(("overrides", given(&i.overrides), given(&f.overrides)))
        } else if r.master_seed != fr.master_seed {
            Some((
                "master seed",
                r.master_seed.to_string(),
                fr.master_seed.to_string(),
            ))
        } else if (i.total_runs, i.of) != (f.total_runs, f.of) {
            Some((
                "runs and shards",
                format!("{} runs in {} shards", i.total_runs, i.of),
                format!("{} runs in {} shards", f.total_runs, f.of),
            ))
        } else if i.autopilot_digest != f.autopilot_digest {
            Some(("autopilot", i.autopilot.clone(), f.autopilot.clone()))
        } else if i.version != f.version {
            Some(("lockstep version", i.version.clone(), f.version.clone()))
        } else {
            None
        };
        if let Some((what, this, that)) = differs {
            return Err(config(format!(
                "{} is a shard of another batch than {}: its {what}: {this}, not {that}",
                s.dir.display(),
                first.dir.display()
            )));
        }
    }
    for w in shards.windows(2) {
        if w[0].info.index == w[1].info.index {
            return Err(config(format!(
                "{} and {} are both shard {}/{}",
                w[0].dir.display(),
                w[1].dir.display(),
                w[0].info.index,
                w[0].info.of
            )));
        }
    }
    let missing: Vec<String> = (1..=f.of)
        .filter(|k| !shards.iter().any(|s| s.info.index == *k))
        .map(|k| format!("{k}/{}", f.of))
        .collect();
    if !missing.is_empty() {
        return Err(config(format!(
            "shard{} {} of the batch {} missing",
            if missing.len() == 1 { "" } else { "s" },
            missing.join(", "),
            if missing.len() == 1 { "is" } else { "are" }
        )));
    }
    let first = &shards[0];
    let scenario = PathBuf::from(&first.report.scenario);
    let overrides = first.info.overrides.clone();
    // The figures' limits come from the scenario as it is now: it must be
    // the one the shards flew.
    let s = Scenario::load_with(&scenario, &overrides).map_err(|e| config(e.to_string()))?;
    if input_digests(&scenario, &s)? != first.info.inputs {
        return Err(config(format!(
            "{}: the scenario's files changed since the shards flew (their digests differ)",
            scenario.display()
        )));
    }
    let request = BatchRequest {
        scenario,
        autopilot: PathBuf::from(&first.info.autopilot),
        overrides,
        runs: first.info.total_runs,
        jobs: first.report.jobs,
        workers: first.report.workers,
        run_timeout: std::time::Duration::from_secs(600),
        out: out.to_path_buf(),
        worker_program: None,
        worker_args: Vec::new(),
        shard: None,
    };
    let wall = shards.iter().map(|s| s.report.wall_s).sum();
    let rows = shards.into_iter().flat_map(|s| s.rows).collect();
    Ok((request, rows, wall))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_split_the_runs_in_equal_shares_in_order() {
        let s = |k, m| Shard { index: k, of: m };
        assert_eq!(s(1, 4).range(10), 0..2);
        assert_eq!(s(2, 4).range(10), 2..5);
        assert_eq!(s(3, 4).range(10), 5..7);
        assert_eq!(s(4, 4).range(10), 7..10);
        assert_eq!(s(1, 1).range(7), 0..7);
        // More shards than runs: some are empty.
        assert_eq!(s(1, 3).range(2), 0..0);
        assert_eq!(Shard::parse("2/5"), Ok(s(2, 5)));
        for bad in ["0/3", "4/3", "3", "a/b", "1/0"] {
            assert_eq!(
                Shard::parse(bad),
                Err(format!(
                    "`{bad}` is not K/M with 1 <= K <= M (shard K of M)"
                ))
            );
        }
    }
}

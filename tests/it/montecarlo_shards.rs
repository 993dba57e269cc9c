//! A Monte Carlo batch split in shards (`--shard K/M`) and joined again
//! (`montecarlo merge`): four shards merged are the one batch byte for byte
//! (rows, figures, page; the summary but for the wall clock), and the
//! merge refuses shards of another batch, missing, repeated or changed
//! ones, naming them.

use std::path::{Path, PathBuf};

use crate::common::*;

/// The example batch in `dir` (its scenario and mission copied there, so
/// a test may change them), shortened.
fn scenario(dir: &TempDir) -> PathBuf {
    let ex = examples();
    std::fs::create_dir_all(dir.join("scenarios")).unwrap();
    std::fs::create_dir_all(dir.join("missions")).unwrap();
    std::fs::copy(
        ex.join("missions/square.waypoints"),
        dir.join("missions/square.waypoints"),
    )
    .unwrap();
    let p = dir.join("scenarios/montecarlo.toml");
    std::fs::copy(ex.join("scenarios/montecarlo.toml"), &p).unwrap();
    p
}

fn fly(scenario: &Path, out: &Path, extra: &[&str]) -> Ran {
    let mut args = vec![
        "montecarlo",
        scenario.to_str().unwrap(),
        "--runs",
        "8",
        "--duration",
        "20",
        "--set",
        "montecarlo.motor_failure_window_s=[8.0, 15.0]",
        "--workers",
        "threads",
        "--jobs",
        "2",
        "-q",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let r = lockstep(&args);
    assert_eq!(r.code(), 0, "{r}");
    r
}

fn merge(out: &Path, shards: &[&Path]) -> Ran {
    let mut args = vec!["montecarlo", "merge", "--out", out.to_str().unwrap()];
    args.extend(shards.iter().map(|s| s.to_str().unwrap()));
    lockstep(&args)
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn four_shards_merged_are_the_batch_byte_for_byte() {
    let dir = TempDir::new("mc-shards");
    let s = scenario(&dir);
    let whole = dir.join("whole");
    fly(&s, &whole, &[]);
    let shards: Vec<PathBuf> = (1..=4).map(|k| dir.join(format!("s{k}"))).collect();
    for (k, out) in shards.iter().enumerate() {
        fly(&s, out, &["--shard", &format!("{}/4", k + 1)]);
        // A shard holds its runs only, and draws no figures.
        let rows = std::fs::read_to_string(out.join("runs.csv")).unwrap();
        assert_eq!(rows.lines().count(), 3, "{rows}");
        assert!(!out.join("histograms.png").exists());
        assert_eq!(
            json(&out.join("summary.json"))["shard"]["first_run"],
            2 * k as u64
        );
    }
    // Given in any order.
    let given: Vec<&Path> = [3, 0, 2, 1].iter().map(|k| shards[*k].as_path()).collect();
    let merged = dir.join("merged");
    let r = merge(&merged, &given);
    assert_eq!(r.code(), 0, "{r}");
    for f in [
        "runs.csv",
        "histograms.png",
        "histograms.svg",
        "scatter.png",
        "scatter.svg",
    ] {
        assert!(
            std::fs::read(whole.join(f)).unwrap() == std::fs::read(merged.join(f)).unwrap(),
            "{f} differs"
        );
    }
    let page = |d: &Path| {
        std::fs::read_to_string(d.join("montecarlo.html"))
            .unwrap()
            .replace(&d.display().to_string(), "OUT")
    };
    assert!(page(&whole) == page(&merged), "the pages differ");
    let (mut a, mut b) = (
        json(&whole.join("summary.json")),
        json(&merged.join("summary.json")),
    );
    for k in ["wall_s", "runs_per_s", "viewer"] {
        a.as_object_mut().unwrap().remove(k);
        b.as_object_mut().unwrap().remove(k);
    }
    assert_eq!(a, b);
}

#[test]
fn the_merge_refuses_what_is_not_one_batch() {
    let dir = TempDir::new("mc-shards-refused");
    let s = scenario(&dir);
    let shard = |k: u64, extra: &[&str]| {
        let out = dir.join(format!("s{k}-{}", extra.len()));
        let mut args = vec!["--shard".to_string(), format!("{k}/3")];
        args.extend(extra.iter().map(|e| e.to_string()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        fly(&s, &out, &args);
        out
    };
    let (s1, s2, s3) = (shard(1, &[]), shard(2, &[]), shard(3, &[]));
    let out = dir.join("merged");
    let refused = |shards: &[&Path]| {
        let r = merge(&out, shards);
        assert_eq!(r.code(), 2, "{r}");
        r.stderr.trim().to_string()
    };
    assert_eq!(
        refused(&[&s1, &s3]),
        "lockstep montecarlo merge: shard 2/3 of the batch is missing"
    );
    assert_eq!(
        refused(&[&s1, &s2, &s2, &s3]),
        format!(
            "lockstep montecarlo merge: {} and {} are both shard 2/3",
            s2.display(),
            s2.display()
        )
    );
    let seeded = shard(2, &["--seed", "5"]);
    let common = "--duration 20, --set montecarlo.motor_failure_window_s=[8.0, 15.0]";
    assert_eq!(
        refused(&[&s1, &seeded, &s3]),
        format!(
            "lockstep montecarlo merge: {} is a shard of another batch than {}: its overrides: \
             --seed 5, {common}, not {common}",
            seeded.display(),
            s1.display()
        )
    );
    // A shard whose files were edited: rows missing, a share not its own.
    let edited = |name: &str, file: &str, edit: &dyn Fn(&mut serde_json::Value)| {
        let d = dir.join(name);
        std::fs::create_dir_all(&d).unwrap();
        for f in ["summary.json", "rows.json", "runs.csv"] {
            std::fs::copy(s1.join(f), d.join(f)).unwrap();
        }
        let mut v = json(&d.join(file));
        edit(&mut v);
        std::fs::write(d.join(file), v.to_string()).unwrap();
        d
    };
    let short = edited("short", "rows.json", &|v| {
        v.as_array_mut().unwrap().pop();
    });
    assert_eq!(
        refused(&[&short, &s2, &s3]),
        format!(
            "lockstep montecarlo merge: {}: holds 1 rows, not runs 0 to 1 of its shard",
            short.join("rows.json").display()
        )
    );
    let moved = edited("moved", "summary.json", &|v| {
        v["shard"]["end_run"] = 3.into()
    });
    assert_eq!(
        refused(&[&moved, &s2, &s3]),
        format!(
            "lockstep montecarlo merge: {}: its summary says shard 1/3 holds runs 0 to 3 of 8, \
             which is not that shard's share",
            moved.display()
        )
    );
    let whole = dir.join("whole");
    fly(&s, &whole, &[]);
    assert_eq!(
        refused(&[&whole]),
        format!(
            "lockstep montecarlo merge: {}: not a shard (its summary has no `shard`: fly it \
             with montecarlo --shard K/M)",
            whole.display()
        )
    );
    // A summary that says no kind (an older lockstep's), one of another
    // kind, one of a kind not known.
    let untagged = edited("untagged", "summary.json", &|v| {
        v.as_object_mut().unwrap().remove("kind");
    });
    assert_eq!(
        refused(&[&untagged, &s2, &s3]),
        format!(
            "lockstep montecarlo merge: {}: no `kind` in it: not a summary, or one written by a \
             lockstep before summaries said their kind (run it again); a summary's kind is one \
             of flight, fleet, batch, cosim, orchestrate",
            untagged.join("summary.json").display()
        )
    );
    let flight = dir.join("flight");
    let r = lockstep(&["fly", "--duration", "1", "--out", flight.to_str().unwrap()]);
    assert_eq!(r.code(), 0, "{r}");
    assert_eq!(
        refused(&[&flight, &s2, &s3]),
        format!(
            "lockstep montecarlo merge: {}: a flight's summary, not a batch's",
            flight.join("summary.json").display()
        )
    );
    let unknown = edited("unknown", "summary.json", &|v| v["kind"] = "swarm".into());
    assert_eq!(
        refused(&[&unknown, &s2, &s3]),
        format!(
            "lockstep montecarlo merge: {}: its kind \"swarm\" is none this lockstep knows \
             (flight, fleet, batch, cosim, orchestrate)",
            unknown.join("summary.json").display()
        )
    );
    // A directory that holds no summary at all.
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    assert_eq!(
        refused(&[&empty, &s2, &s3]),
        format!(
            "lockstep montecarlo merge: {}: no summary.json in it: not the --out directory of a \
             shard (fly one with montecarlo --shard K/M)",
            empty.display()
        )
    );
    // The scenario changed after the shards flew.
    let text = std::fs::read_to_string(&s).unwrap();
    std::fs::write(&s, format!("{text}\n# changed\n")).unwrap();
    assert_eq!(
        refused(&[&s1, &s2, &s3]),
        format!(
            "lockstep montecarlo merge: {}: the scenario's files changed since the shards flew \
             (their digests differ)",
            s.display()
        )
    );
    assert!(!out.join("runs.csv").exists());
}

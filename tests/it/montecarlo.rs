//! `lockstep montecarlo`: identical rows for any number of jobs and either
//! kind of worker, a batch with a crashing or hanging autopilot completes
//! with those runs failed, the dispersions reach the flights, and the
//! refusals.

use std::path::Path;

use crate::common::*;

const MC: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/examples/scenarios/montecarlo.toml"
);

fn records(path: &Path) -> Vec<csv::StringRecord> {
    let mut r = csv::Reader::from_path(path).unwrap();
    r.records().map(Result::unwrap).collect()
}

fn header(path: &Path) -> Vec<String> {
    let mut r = csv::Reader::from_path(path).unwrap();
    r.headers().unwrap().iter().map(str::to_string).collect()
}

fn batch(dir: &TempDir, name: &str, extra: &[&str]) -> (Ran, std::path::PathBuf) {
    let out = dir.join(name);
    // 25 s: take-off and the first legs; motors fail in [10, 20] s.
    let mut args = vec![
        "montecarlo",
        MC,
        "--duration",
        "25",
        "--set",
        "montecarlo.motor_failure_window_s=[10.0, 20.0]",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    (lockstep(&args), out)
}

#[test]
fn the_same_master_seed_gives_the_same_rows_for_any_jobs_and_workers() {
    let dir = TempDir::new("mc-jobs");
    let (one, a) = batch(&dir, "one", &["--runs", "8", "--jobs", "1"]);
    assert_eq!(one.code(), 0, "{one}");
    let (two, b) = batch(&dir, "two", &["--runs", "8", "--jobs", "2"]);
    assert_eq!(two.code(), 0, "{two}");
    let (threads, c) = batch(
        &dir,
        "threads",
        &["--runs", "8", "--jobs", "2", "--workers", "threads"],
    );
    assert_eq!(threads.code(), 0, "{threads}");
    let csv = std::fs::read(a.join("runs.csv")).unwrap();
    assert_eq!(csv, std::fs::read(b.join("runs.csv")).unwrap());
    assert_eq!(csv, std::fs::read(c.join("runs.csv")).unwrap());
    let rows = records(&a.join("runs.csv"));
    assert_eq!(rows.len(), 8);
    let h = header(&a.join("runs.csv"));
    let col = |n: &str| h.iter().position(|c| c == n).unwrap();
    // Run numbers in order, distinct seeds and digests, every run flown.
    for (k, r) in rows.iter().enumerate() {
        assert_eq!(r[col("run")], k.to_string());
        assert_eq!(&r[col("status")], "completed", "{r:?}");
        assert!(r[col("digest")].starts_with("sha256:"));
    }
    let mut seeds: Vec<&str> = rows.iter().map(|r| &r[col("seed")]).collect();
    seeds.sort();
    seeds.dedup();
    assert_eq!(seeds.len(), 8);
    // Another master seed, other runs.
    let (other, d) = batch(&dir, "other", &["--runs", "8", "--seed", "12"]);
    assert_eq!(other.code(), 0, "{other}");
    assert_ne!(csv, std::fs::read(d.join("runs.csv")).unwrap());
    // The summary and the histograms.
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(a.join("summary.json")).unwrap()).unwrap();
    assert_eq!(
        (
            s["runs"].as_u64(),
            s["completed"].as_u64(),
            s["failed"].as_u64()
        ),
        (Some(8), Some(8), Some(0))
    );
    assert_eq!(s["master_seed"], 11);
    let names: Vec<&str> = s["stats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["landing_error_m", "max_tilt_deg", "min_soc", "end_s"]
    );
    let png = std::fs::read(a.join("histograms.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    assert!(
        std::fs::read_to_string(a.join("histograms.svg"))
            .unwrap()
            .contains("max_tilt_deg")
    );
}

#[test]
fn dispersions_reach_the_flights() {
    let dir = TempDir::new("mc-draws");
    let (r, out) = batch(&dir, "d", &["--runs", "12", "--jobs", "2"]);
    assert_eq!(r.code(), 0, "{r}");
    let p = out.join("runs.csv");
    let h = header(&p);
    let col = |n: &str| h.iter().position(|c| c == n).unwrap();
    let rows = records(&p);
    let num = |r: &csv::StringRecord, n: &str| r[col(n)].parse::<f64>().unwrap();
    for r in &rows {
        // Truncated at 3 sigma: mass 5 %, inertia 8 %, capacity 5 %.
        assert!((num(r, "mass_scale") - 1.0).abs() <= 0.15 + 1e-12);
        assert!((num(r, "inertia_scale") - 1.0).abs() <= 0.24 + 1e-12);
        assert!((0.5..=2.0).contains(&num(r, "sensor_noise_scale")));
        // A failed motor lies in its window, on the 1 ms tick.
        if !r[col("failed_motor")].is_empty() {
            let t = num(r, "motor_failure_s");
            assert!((10.0..=20.0).contains(&t), "{t}");
            assert!(((t * 1000.0) - (t * 1000.0).round()).abs() < 1e-6, "{t}");
            assert!(r[col("failed_motor")].parse::<usize>().unwrap() < 4);
        }
    }
    // The draws differ from run to run, and the flights with them.
    let masses: Vec<f64> = rows.iter().map(|r| num(r, "mass_scale")).collect();
    assert!(masses.windows(2).all(|w| w[0] != w[1]));
    // A run with a failed motor before 20 s flips over (the Iris cannot
    // fly on three motors); the others do not.
    for r in &rows {
        let failed = !r[col("failed_motor")].is_empty();
        let tilt = num(r, "max_tilt_deg");
        assert_eq!(tilt > 90.0, failed, "{r:?}");
    }
}

/// A scenario of the broken fixtures' idle Iris with a [montecarlo]
/// section (the noise scale makes every run's sensor noise differ).
fn idle_batch_scenario(dir: &Path) -> std::path::PathBuf {
    let p = idle_scenario(dir, "idle.toml", 8.0, 10);
    let mut text = std::fs::read_to_string(&p).unwrap();
    text.push_str("\n[montecarlo]\nsensor_noise_scale = [0.5, 1.5]\n");
    std::fs::write(&p, text).unwrap();
    p
}

/// A batch of `runs` over the idle scenario with the broken fixture
/// `case` as autopilot: its output and the directory it wrote.
fn broken_batch(name: &str, case: &str, runs: &str, extra: &[&str]) -> (Ran, TempDir) {
    let dir = TempDir::new(name);
    let scenario = idle_batch_scenario(dir.path());
    let out = dir.join("out");
    let lib = broken(case);
    let mut args = vec![
        "montecarlo",
        scenario.to_str().unwrap(),
        "--autopilot",
        lib.to_str().unwrap(),
        "--runs",
        runs,
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let r = lockstep(&args);
    (r, dir)
}

#[test]
fn a_batch_with_a_crashing_autopilot_completes_and_reports_the_failed_runs() {
    let (r, dir) = broken_batch("mc-crash", "sometimes_segv", "8", &["--jobs", "2"]);
    let out = dir.join("out");
    assert_eq!(r.code(), 0, "{r}");
    let p = out.join("runs.csv");
    let h = header(&p);
    let col = |n: &str| h.iter().position(|c| c == n).unwrap();
    let rows = records(&p);
    assert_eq!(rows.len(), 8);
    let failed: Vec<&csv::StringRecord> = rows
        .iter()
        .filter(|r| &r[col("status")] == "failed")
        .collect();
    let completed = rows.len() - failed.len();
    assert!(!failed.is_empty() && completed > 0, "mixed fates: {rows:?}");
    for f in &failed {
        let why = &f[col("reason")];
        assert!(
            why.starts_with("the worker was killed by signal SIGSEGV (segmentation fault)"),
            "{why}"
        );
        assert!(why.contains("step") && why.contains("5.000000 s"), "{why}");
        assert!(!f[col("seed")].is_empty());
        assert_eq!(&f[col("digest")], "");
        assert!(
            r.stderr.contains(&format!(
                "run {} (seed {}) failed",
                &f[col("run")],
                &f[col("seed")]
            )),
            "{r}"
        );
    }
    // Counted as the page counts: runs, each once.
    let passed = rows.iter().filter(|r| &r[col("passed")] == "true").count();
    let line = format!(
        "runs          8: {passed} passed their verdict, {} failed it, {} did not complete;",
        completed - passed,
        failed.len()
    );
    assert!(r.stdout.contains(&line), "{line}\n{r}");
    // The workers by their `--workers` name (it printed `Processes`).
    assert!(r.stdout.contains(" workers (processes)\n"), "{r}");
}

#[test]
fn an_autopilot_printing_on_stdout_does_not_hide_the_rows() {
    let (r, dir) = broken_batch("mc-prints", "prints", "3", &[]);
    let out = dir.join("out");
    assert_eq!(r.code(), 0, "{r}");
    let rows = records(&out.join("runs.csv"));
    assert_eq!(rows.len(), 3);
    for row in &rows {
        assert_eq!(&row[2], "completed", "{row:?}");
    }
}

#[test]
fn a_hanging_run_is_killed_at_its_limit_and_reported() {
    let (r, dir) = broken_batch("mc-hang", "step_hang", "2", &["--run-timeout", "1.5"]);
    let out = dir.join("out");
    assert_eq!(r.code(), 0, "{r}");
    let rows = records(&out.join("runs.csv"));
    for row in &rows {
        assert_eq!(&row[2], "failed");
        assert_eq!(
            &row[3],
            "hung: no result within 1.5 s of wall time (the worker was killed)"
        );
    }
}

#[test]
fn refusals() {
    let dir = TempDir::new("mc-refused");
    let square = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/scenarios/square.toml"
    );
    let r = lockstep(&[
        "montecarlo",
        square,
        "--runs",
        "2",
        "--out",
        dir.join("o").to_str().unwrap(),
    ]);
    assert_eq!(r.code(), 2, "{r}");
    assert!(
        r.stderr
            .contains("square.toml has no [montecarlo] section: say what to disperse"),
        "{r}"
    );
    let r = lockstep(&[
        "montecarlo",
        MC,
        "--runs",
        "2",
        "--set",
        "montecarlo.mass_sigma=0.5",
        "--out",
        dir.join("o").to_str().unwrap(),
    ]);
    assert_eq!(r.code(), 2, "{r}");
    assert!(
        r.stderr
            .contains("key `montecarlo.mass_sigma`: must be in [0, 0.3], is 0.5"),
        "{r}"
    );
    let r = lockstep(&[
        "montecarlo",
        MC,
        "--runs",
        "2",
        "--set",
        "montecarlo.motor_failure_window_s=[50.0, 20.0]",
        "--out",
        dir.join("o").to_str().unwrap(),
    ]);
    assert_eq!(r.code(), 2, "{r}");
    assert!(
        r.stderr.contains(
            "key `montecarlo.motor_failure_window_s`: must be [start, end] with start <= end, is [50, 20]"
        ),
        "{r}"
    );
    let single = SINGLE_INSTANCE;
    let r = lockstep(&[
        "montecarlo",
        MC,
        "--runs",
        "2",
        "--workers",
        "threads",
        "--autopilot",
        single,
        "--out",
        dir.join("o").to_str().unwrap(),
    ]);
    assert_eq!(r.code(), 2, "{r}");
    assert!(r.stderr.contains("is not re-entrant"), "{r}");
    let r = lockstep(&["montecarlo", MC, "--runs", "0"]);
    assert_eq!(r.code(), 2, "{r}");
    // --out naming a file.
    let file = dir.join("a-file");
    std::fs::write(&file, "x").unwrap();
    let r = lockstep(&[
        "montecarlo",
        MC,
        "--runs",
        "2",
        "--out",
        file.to_str().unwrap(),
    ]);
    assert_eq!(r.code(), 2, "{r}");
    assert!(
        r.stderr.contains(&format!(
            "lockstep montecarlo: --out {}: cannot create the directory",
            file.display()
        )),
        "{r}"
    );
    // A directory nothing can be written in (sysfs: even for root): refused
    // before any run (the 40 runs were flown and then lost).
    let r = lockstep(&["montecarlo", MC, "--runs", "2", "--out", "/sys/kernel"]);
    assert_eq!(r.code(), 2, "{r}");
    assert_eq!(
        r.stderr,
        "lockstep montecarlo: --out /sys/kernel: cannot write in the directory: Permission denied (os error 13)\n"
    );
    // An output that would overwrite an input: the spec file is runs.csv.
    let out = dir.join("aliased");
    std::fs::create_dir_all(&out).unwrap();
    let spec = out.join("runs.csv");
    let text = lockstep(&["specs", "iris", "--resolved"]).stdout;
    std::fs::write(&spec, &text).unwrap();
    let r = lockstep(&[
        "montecarlo",
        MC,
        "--runs",
        "2",
        "--spec",
        spec.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(r.code(), 2, "{r}");
    assert!(r.stderr.contains("the aircraft spec"), "{r}");
    assert_eq!(
        std::fs::read_to_string(&spec).unwrap(),
        text,
        "the spec is untouched"
    );
}

#[test]
fn an_interrupted_batch_writes_every_row_and_says_why() {
    use std::os::unix::process::CommandExt as _;
    let dir = TempDir::new("mc-interrupt");
    let out = dir.join("out");
    let child = std::process::Command::new(LOCKSTEP)
        .args([
            "montecarlo",
            MC,
            "--duration",
            "25",
            "--set",
            "montecarlo.motor_failure_window_s=[10.0, 20.0]",
            "--runs",
            "500",
            "--out",
            out.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    // As a terminal's Ctrl-C: SIGINT to the whole process group.
    // SAFETY: kill(2) with a negative pid signals that process group; the
    // group is the child's own (process_group(0)).
    let rc = unsafe { libc::kill(-(child.id() as i32), libc::SIGINT) };
    assert_eq!(rc, 0);
    let r = child.wait_with_output().unwrap();
    let err = String::from_utf8(r.stderr).unwrap();
    assert_eq!(r.status.code(), Some(130), "{err}");
    assert!(
        err.contains("lockstep montecarlo: interrupted by SIGINT"),
        "{err}"
    );
    let p = out.join("runs.csv");
    let h = header(&p);
    let col = |n: &str| h.iter().position(|c| c == n).unwrap();
    let rows = records(&p);
    assert_eq!(rows.len(), 500);
    let mut not_flown = 0;
    for r in &rows {
        match &r[col("status")] {
            "completed" => {}
            "failed" => {
                let why = &r[col("reason")];
                assert!(why.contains("the batch was interrupted by SIGINT"), "{why}");
                not_flown += usize::from(why.starts_with("not flown: "));
            }
            other => panic!("status {other}"),
        }
    }
    assert!(not_flown > 0);
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert!(s["interrupted_by"].as_str().unwrap().starts_with("SIGINT"));
}

/// A failed verdict says which `[expect]` failed; `--rerun K` flies run K
/// alone as the `fly` command it prints, and lands where the batch's row
/// says, to the last bit; that command typed by hand does the same.
#[test]
fn a_run_flown_again_alone_is_the_batchs_run_bit_for_bit() {
    let dir = TempDir::new("mc-rerun");
    let (r, out) = batch(&dir, "b", &["--runs", "8", "--quiet"]);
    assert_eq!(r.code(), 0, "{r}");
    let h = header(&out.join("runs.csv"));
    let col = |n: &str| h.iter().position(|c| c == n).unwrap();
    let rows = records(&out.join("runs.csv"));
    for row in &rows {
        let (status, reason, passed) = (
            &row[col("status")],
            &row[col("reason")],
            &row[col("passed")],
        );
        assert_eq!(status, "completed");
        if passed == "true" {
            assert_eq!(reason, "");
        } else {
            assert!(
                reason.starts_with("expect.") || reason.starts_with("crash: "),
                "{reason}"
            );
        }
    }
    // A run that lost a motor, if any (the draw with the most overrides).
    let k = rows
        .iter()
        .position(|r| !r[col("failed_motor")].is_empty())
        .unwrap_or(0);
    let row = &rows[k];
    let ks = k.to_string();
    let r = lockstep(&[
        "montecarlo",
        MC,
        "--duration",
        "25",
        "--set",
        "montecarlo.motor_failure_window_s=[10.0, 20.0]",
        "--rerun",
        &ks,
        "--out",
        out.to_str().unwrap(),
    ]);
    let summary = |dir: &Path| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap()
    };
    let again = out.join(format!("run-{k}"));
    let s = summary(&again);
    assert_eq!(s["seed"].to_string(), row[col("seed")].to_string());
    let p = &s["final_state"]["position_ned_m"];
    let (x, y, z) = (
        p[0].as_f64().unwrap(),
        p[1].as_f64().unwrap(),
        p[2].as_f64().unwrap(),
    );
    let landing: f64 = row[col("landing_error_m")].parse().unwrap();
    let altitude: f64 = row[col("altitude_m")].parse().unwrap();
    assert_eq!(x.hypot(y).to_bits(), landing.to_bits(), "landing error");
    assert_eq!((-z).to_bits(), altitude.to_bits(), "altitude");
    assert_eq!(
        s["verdict"]["passed"].to_string(),
        row[col("passed")].to_string()
    );
    // A failed verdict is the expectation-failed status, 3.
    assert_eq!(
        r.code(),
        if &row[col("passed")] == "true" { 0 } else { 3 },
        "{r}"
    );
    for f in ["log.csv", "flight.png", "flight.html"] {
        assert!(again.join(f).is_file(), "{f}");
    }
    // The printed command, typed by hand (without a shell: its words).
    let line = r.stdout.lines().nth(1).unwrap().trim().to_string();
    // The batch's own overrides first (--duration is simulation.duration_s).
    assert!(
        line.starts_with(&format!(
            "lockstep fly {MC} --set simulation.duration_s=25.0 "
        )),
        "{line}"
    );
    assert!(line.contains(" --set simulation.seed="), "{line}");
    let by_hand = dir.join("by-hand");
    let mut words = shell_words(&line);
    let n = words.len();
    words[n - 1] = by_hand.display().to_string();
    let r = lockstep(&words[1..]);
    assert!(r.code() == 0 || r.code() == 3, "{r}");
    let h = summary(&by_hand);
    assert_eq!(h["final_state"], s["final_state"]);
    assert_eq!(h["digest"], s["digest"]);
}

/// The words of a line as a POSIX shell splits them (plain and
/// single-quoted words only, as `--rerun` prints them).
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let (mut quoted, mut any) = (false, false);
    for c in line.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                any = true;
            }
            ' ' if !quoted => {
                if any {
                    words.push(std::mem::take(&mut word));
                    any = false;
                }
            }
            _ => {
                word.push(c);
                any = true;
            }
        }
    }
    if any {
        words.push(word);
    }
    words
}

#[test]
fn rerun_refuses_a_scenario_without_dispersions_and_a_batchs_options() {
    let square = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/scenarios/square.toml"
    );
    let r = lockstep(&["montecarlo", square, "--rerun", "0"]);
    assert_eq!(r.code(), 2, "{r}");
    assert_eq!(
        r.stderr,
        format!(
            "lockstep montecarlo: {square} has no [montecarlo] section: there is no run to fly again\n"
        )
    );
    let r = lockstep(&["montecarlo", MC, "--rerun", "0", "--runs", "3"]);
    assert_eq!(r.code(), 2, "{r}");
    assert!(
        r.stderr
            .contains("'--rerun <K>' cannot be used with '--runs <RUNS>'"),
        "{r}"
    );
    let r = lockstep(&["montecarlo", MC]);
    assert_eq!(r.code(), 2, "{r}");
    assert!(r.stderr.contains("--runs <RUNS>"), "{r}");
}

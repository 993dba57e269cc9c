//! `lockstep view` and the pages `fly --out`, fleets and Monte Carlo write:
//! where they go, what the summary says of them, and every refusal with
//! its exact message. (The pages themselves are tested in a browser:
//! tests/viewer.)

use crate::common::*;
use serde_json::Value;

fn summary(dir: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap()
}

#[test]
fn fly_out_writes_the_page_and_view_writes_it_again_the_same() {
    let dir = TempDir::new("view-fly");
    let out = dir.join("run");
    let r = lockstep(&["fly", "--duration", "4", "--out", out.to_str().unwrap()]);
    assert_eq!(r.code(), 0, "{r}");
    let page = out.join("flight.html");
    assert!(
        r.stdout
            .contains(&format!("viewer        {}\n", page.display())),
        "{r}"
    );
    assert_eq!(summary(&out)["viewer"], page.display().to_string());
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.starts_with("<!doctype html>"));
    assert!(html.contains(
        "<title>Iris, square mission, OU wind, noisy delayed estimates (square.toml)</title>"
    ));
    // Nothing is fetched: no external script, stylesheet or image.
    for outside in ["src=\"http", "href=\"http", "src=\"//", "@import"] {
        assert!(!html.contains(outside), "{outside}");
    }
    let again = dir.join("again.html");
    let r = lockstep(&[
        "view",
        out.to_str().unwrap(),
        "--out",
        again.to_str().unwrap(),
    ]);
    assert_eq!(r.code(), 0, "{r}");
    assert_eq!(r.stdout, format!("viewer        {}\n", again.display()));
    assert_eq!(
        std::fs::read(&again).unwrap(),
        std::fs::read(&page).unwrap()
    );
    // A log alone: its page beside it, named after it.
    let r = lockstep(&["view", out.join("log.csv").to_str().unwrap()]);
    assert_eq!(r.code(), 0, "{r}");
    assert!(out.join("log.html").is_file());
}

#[test]
fn a_flight_without_a_log_writes_no_page() {
    let dir = TempDir::new("view-nolog");
    let scenario = dir.join("nolog.toml");
    std::fs::write(
        &scenario,
        "schema_version = 1\n[simulation]\nseed = 1\nduration_s = 1.0\n[vehicle]\nspec = \"iris\"\n",
    )
    .unwrap();
    let out = dir.join("out");
    let r = lockstep(&[
        "fly",
        scenario.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(r.code(), 0, "{r}");
    assert!(out.join("summary.json").is_file());
    assert!(!out.join("flight.html").exists());
    assert_eq!(summary(&out)["viewer"], Value::Null);
    let r = lockstep(&["view", out.to_str().unwrap()]);
    assert_eq!(r.code(), 2, "{r}");
    assert_eq!(
        r.stderr,
        format!(
            "lockstep view: {}: the flight wrote no log (it needs a log cadence, or the log was moved): nothing to show\n",
            out.join("summary.json").display()
        )
    );
}

#[test]
fn view_refuses_what_it_cannot_show_naming_it() {
    let dir = TempDir::new("view-bad");
    let missing = dir.join("nope");
    let r = lockstep(&["view", missing.to_str().unwrap()]);
    assert_eq!(r.code(), 2, "{r}");
    assert_eq!(
        r.stderr,
        format!(
            "lockstep view: {}: no such file or directory\n",
            missing.display()
        )
    );
    let r = lockstep(&["view", dir.path().to_str().unwrap()]);
    assert_eq!(r.code(), 2, "{r}");
    assert_eq!(
        r.stderr,
        format!(
            "lockstep view: {}: no summary.json nor log.csv in it (give the --out directory of a `fly`, fleet, `orchestrate`, `cosim` or `montecarlo` run, or a flight log)\n",
            dir.path().display()
        )
    );
    // Not a log: the log reader's own message, naming the file once.
    let toml = dir.join("a.csv");
    std::fs::write(&toml, "x,y\n1,2\n").unwrap();
    let r = lockstep(&["view", toml.to_str().unwrap()]);
    assert_eq!(r.code(), 2, "{r}");
    assert_eq!(
        r.stderr,
        format!(
            "lockstep view: log {}: the first column is not `time_us` (is it a lockstep flight log?)\n",
            toml.display()
        )
    );
    // A log without its sidecar.
    let log = dir.join("bare.csv");
    std::fs::write(&log, "time_us,x_m,y_m,z_m\n0,0,0,0\n").unwrap();
    let r = lockstep(&["view", log.to_str().unwrap()]);
    assert_eq!(r.code(), 2, "{r}");
    assert!(
        r.stderr.starts_with(&format!(
            "lockstep view: cannot read {}.json: ",
            log.display()
        )),
        "{r}"
    );
    assert!(
        r.stderr
            .ends_with("(the log's sidecar: the viewer needs its mode names and airframe)\n"),
        "{r}"
    );
    // A broken summary.
    let d2 = dir.join("broken");
    std::fs::create_dir(&d2).unwrap();
    std::fs::write(d2.join("summary.json"), "{").unwrap();
    let r = lockstep(&["view", d2.to_str().unwrap()]);
    assert_eq!(r.code(), 2, "{r}");
    assert!(
        r.stderr.starts_with(&format!(
            "lockstep view: {}: not JSON: ",
            d2.join("summary.json").display()
        )),
        "{r}"
    );
    // A page that cannot be written.
    let r = lockstep(&[
        "view",
        log.to_str().unwrap(),
        "--out",
        dir.join("no/such/dir/p.html").to_str().unwrap(),
    ]);
    assert_eq!(r.code(), 2, "{r}");
}

#[test]
fn monte_carlo_out_writes_its_page() {
    let dir = TempDir::new("view-mc");
    let r = lockstep(&[
        "montecarlo",
        "examples/scenarios/montecarlo.toml",
        "--runs",
        "3",
        "--quiet",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(r.code(), 0, "{r}");
    let page = dir.join("montecarlo.html");
    assert_eq!(summary(dir.path())["viewer"], page.display().to_string());
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("<title>Monte Carlo: montecarlo.toml</title>"));
    // No 3D library in a page that draws no scene.
    assert!(!html.contains("WebGLRenderer"));
    // The figures it shows: passed and failed stacked with the [expect]
    // limit, and the outcomes against the drawn inputs.
    let h = std::fs::read_to_string(dir.join("histograms.svg")).unwrap();
    for t in ["passed", "failed", "expect.landed_within radius = 2"] {
        assert!(h.contains(&format!(">\n{t}\n</text>")), "{t}");
    }
    let sc = std::fs::read_to_string(dir.join("scatter.svg")).unwrap();
    for t in ["mass_scale", "sensor_noise_scale", "landing_error_m"] {
        assert!(sc.contains(&format!(">\n{t}\n</text>")), "{t}");
    }
    assert!(html.contains("scatter.svg") && html.contains("histograms.svg"));
    // No wall-clock figure: `view` of the same batch writes the same page.
    assert!(!html.contains("runs_per_s") && !html.contains("wall_s"));
    let again = dir.join("again.html");
    let r = lockstep(&[
        "view",
        dir.path().to_str().unwrap(),
        "--out",
        again.to_str().unwrap(),
    ]);
    assert_eq!(r.code(), 0, "{r}");
    let again = std::fs::read_to_string(&again).unwrap();
    assert_eq!(
        again.replace("\"viewer\":null", ""),
        html.replace("\"viewer\":null", "")
    );
}

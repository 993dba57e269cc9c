//! `lockstep compare-integrators`: the table, the CSV and the plot of a
//! real closed-loop flight (the default scenario, shortened), errors
//! falling as steps and tolerances tighten, and the refused options.

use crate::common::*;

/// The CSV's rows as (method, setting, status, rhs_evals, position max).
fn rows(csv_text: &str) -> Vec<(String, String, String, u64, f64)> {
    let mut r = csv::Reader::from_reader(csv_text.as_bytes());
    let h = r.headers().unwrap().clone();
    let col = |n: &str| h.iter().position(|c| c == n).unwrap();
    let (m, st, tol, status, evals, pos) = (
        col("method"),
        col("step_us"),
        col("tolerance"),
        col("status"),
        col("rhs_evals"),
        col("position_m_max"),
    );
    r.records()
        .map(|x| {
            let x = x.unwrap();
            (
                x[m].to_string(),
                format!("{}{}", &x[st], &x[tol]),
                x[status].to_string(),
                x[evals].parse().unwrap_or(0),
                x[pos].parse().unwrap_or(f64::NAN),
            )
        })
        .collect()
}

#[test]
fn errors_fall_as_steps_and_tolerances_tighten_on_a_real_flight() {
    let dir = TempDir::new("compare");
    let out = dir.join("study");
    // 20 s of the square: take-off, climb and the first leg.
    let r = lockstep(&[
        "compare-integrators",
        "--duration",
        "20",
        "--repeats",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(r.code(), 0, "{r}");
    let text = std::fs::read_to_string(out.join("integrators.csv")).unwrap();
    let rows = rows(&text);
    // 4 euler, 4 rk4, 3 bs32, 3 dp54, and the independent solver's row.
    assert_eq!(rows.len(), 15, "{text}");
    let last = rows.last().unwrap();
    assert_eq!(
        (last.0.as_str(), last.2.as_str()),
        ("ode_solvers_dopri5", "independent")
    );
    assert!(
        last.4 < 1e-6,
        "the reference is checked to 1 um: {}",
        last.4
    );
    for m in ["euler", "rk4", "bs32", "dp54"] {
        let mine: Vec<_> = rows.iter().filter(|x| x.0 == m).collect();
        assert!(mine.len() >= 3, "{m}");
        for w in mine.windows(2) {
            assert_eq!(w[0].2, "ok", "{m} {}: {text}", w[0].1);
            assert_eq!(w[1].2, "ok", "{m} {}: {text}", w[1].1);
            assert!(
                w[1].4 < w[0].4,
                "{m}: {} -> {}: {} -> {}",
                w[0].1,
                w[1].1,
                w[0].4,
                w[1].4
            );
            assert!(w[1].3 >= w[0].3, "{m}: more work for less error");
        }
    }
    // Euler is first order: halving its step halves its error.
    let euler: Vec<f64> = rows
        .iter()
        .filter(|x| x.0 == "euler")
        .map(|x| x.4)
        .collect();
    for w in euler.windows(2) {
        let ratio = w[0] / w[1];
        assert!((1.8..2.2).contains(&ratio), "euler ratio {ratio}");
    }
    // RK4 at 1 ms: 4 evaluations per 1 ms boundary over 20 s.
    let rk4 = rows.iter().find(|x| x.0 == "rk4" && x.1 == "1000").unwrap();
    assert_eq!(rk4.3, 4 * 20_000);
    // The table names every candidate; the plot is a PNG and an SVG.
    for s in [
        "euler    step 1000 us",
        "rk4      step 125 us",
        "bs32     tol 1e-8",
        "dp54     tol 1e-10",
    ] {
        assert!(r.stdout.contains(s), "{s}: {r}");
    }
    assert!(r.stdout.contains("reference: dp54 at tol 1e-1"), "{r}");
    let png = std::fs::read(out.join("work_precision.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let svg = std::fs::read_to_string(out.join("work_precision.svg")).unwrap();
    for m in [
        "euler",
        "rk4",
        "bs32",
        "dp54",
        "RHS evaluations per simulated second",
    ] {
        assert!(svg.contains(m), "{m} in the SVG");
    }
    // The recording it compared on replays like any other.
    assert!(out.join("flight.rec").is_file());
}

#[test]
fn chosen_methods_steps_and_tolerances() {
    let dir = TempDir::new("compare-chosen");
    let out = dir.join("s");
    let r = lockstep(&[
        "compare-integrators",
        "--duration",
        "3",
        "--repeats",
        "2",
        "--methods",
        "rk4,dp54",
        "--steps-us",
        "1000,100",
        "--tolerances",
        "1e-5",
        "--horizon-s",
        "0",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(r.code(), 0, "{r}");
    assert!(
        r.stdout
            .contains("horizon       the whole flight, open-loop"),
        "{r}"
    );
    let rows = rows(&std::fs::read_to_string(out.join("integrators.csv")).unwrap());
    let got: Vec<(&str, &str)> = rows.iter().map(|x| (x.0.as_str(), x.1.as_str())).collect();
    assert_eq!(
        got,
        [
            ("rk4", "1000"),
            ("rk4", "100"),
            ("dp54", "1e-5"),
            ("ode_solvers_dopri5", "1e-12")
        ]
    );
}

#[test]
fn refused_options_say_why() {
    let cases: [(&[&str], &str); 5] = [
        (
            &["--methods", "rk5"],
            "invalid value 'rk5' for '--methods <METHODS>': `rk5` is not an integrator (euler, rk4, bs32, dp54)",
        ),
        (
            &["--tolerances", "2"],
            "lockstep compare-integrators: --tolerances: tolerance 2 is not in (0, 1)",
        ),
        (
            &["--steps-us", "0"],
            "lockstep compare-integrators: --steps-us: a step must be at least 1 µs",
        ),
        (
            &["--horizon-s", "0.0000005"],
            "invalid value '0.0000005' for '--horizon-s <HORIZON_S>': 0.0000005 is not a number of seconds in [0, 86400] in whole microseconds",
        ),
        (
            &["--set", "simulation.duration_s=-1"],
            "(with --duration 3, --set simulation.duration_s=-1): key `simulation.duration_s`: must be positive and at most 10000000, is -1",
        ),
    ];
    for (args, expected) in cases {
        let dir = TempDir::new("compare-refused");
        let out = dir.join("s");
        let mut all = vec![
            "compare-integrators",
            "--duration",
            "3",
            "--out",
            out.to_str().unwrap(),
        ];
        all.extend_from_slice(args);
        let r = lockstep(&all);
        assert_eq!(r.code(), 2, "{args:?}: {r}");
        assert!(r.stderr.contains(expected), "{args:?}: {r}");
        assert!(!out.join("integrators.csv").exists());
    }
    let dir = TempDir::new("compare-out-file");
    let file = dir.join("a-file");
    std::fs::write(&file, "x").unwrap();
    let r = lockstep(&[
        "compare-integrators",
        "--duration",
        "3",
        "--out",
        file.to_str().unwrap(),
    ]);
    assert_eq!(r.code(), 2, "{r}");
    assert!(
        r.stderr.contains(&format!(
            "lockstep compare-integrators: --out {}: cannot create the directory",
            file.display()
        )),
        "{r}"
    );
}

use lockstep_harness::Micros;
use lockstep_harness::inputs::scenario::{Dispersions, SpecAdjust};

use super::report::{Aggregate, Metrics, csv_text};
use super::*;

fn dispersions() -> Dispersions {
    Dispersions {
        mass_sigma: 0.05,
        inertia_sigma: 0.1,
        battery_capacity_sigma: 0.0,
        wind_mean_sigma_mps: [1.0, 2.0, 0.0],
        sensor_noise_scale: [0.5, 2.0],
        motor_failure_probability: 0.5,
        motor_failure_window_us: [10_000_000, 20_000_000],
    }
}

#[test]
fn a_draw_depends_on_the_master_seed_and_the_run_only() {
    let d = dispersions();
    let tick = Micros(1000);
    let a: Vec<Draw> = (0..50).map(|k| Draw::new(&d, 7, k, tick)).collect();
    let b: Vec<Draw> = (0..50).rev().map(|k| Draw::new(&d, 7, k, tick)).collect();
    assert!(a.iter().zip(b.iter().rev()).all(|(x, y)| x == y));
    assert_ne!(Draw::new(&d, 8, 0, tick), a[0]);
    // The zero-sigma factor stays 1; the others spread, within 3 sigma.
    assert!(a.iter().all(|x| x.adjust.battery_capacity == 1.0));
    assert!(a.iter().all(|x| (x.adjust.mass - 1.0).abs() <= 0.15));
    assert!(a.iter().any(|x| x.adjust.mass != 1.0));
    assert!(a.iter().all(|x| x.wind_offset_ned_mps[2] == 0.0));
    assert!(a.iter().all(|x| (0.5..2.0).contains(&x.noise_scale)));
    // About half lose a motor, in the window, on the tick.
    let failures: Vec<_> = a.iter().filter_map(|x| x.motor_failure).collect();
    assert!((15..=35).contains(&failures.len()), "{}", failures.len());
    for (_, t) in &failures {
        assert!((10_000_000..=20_000_000).contains(&t.0) && t.0 % 1000 == 0);
    }
    // Seeds fit a TOML integer.
    assert!(a.iter().all(|x| x.seed < 1 << 63));
}

#[test]
fn a_dispersion_added_leaves_the_others_draws_alone() {
    let mut d = dispersions();
    let before = Draw::new(&d, 3, 4, Micros(1000));
    d.battery_capacity_sigma = 0.05;
    let after = Draw::new(&d, 3, 4, Micros(1000));
    assert_eq!(before.adjust.mass, after.adjust.mass);
    assert_eq!(before.wind_offset_ned_mps, after.wind_offset_ned_mps);
    assert_eq!(before.seed, after.seed);
    assert_ne!(
        before.adjust.battery_capacity,
        after.adjust.battery_capacity
    );
}

#[test]
fn the_failed_motor_is_one_of_the_aircraft_s() {
    let mut d = dispersions();
    d.motor_failure_probability = 1.0;
    for k in 0..40 {
        let x = Draw::new(&d, 1, k, Micros(1000));
        let (m, _) = x.failed_motor(6).unwrap();
        assert!(m < 6);
    }
    d.motor_failure_probability = 0.0;
    assert!(Draw::new(&d, 1, 0, Micros(1000)).failed_motor(4).is_none());
}

#[test]
fn spec_adjust_scales_mass_inertia_and_every_pack() {
    let mut spec = lockstep_plant::AircraftSpec::resolve("iris").unwrap();
    let (m, i, c) = (
        spec.body.mass_kg,
        spec.body.inertia_kgm2,
        spec.batteries[0].capacity_ah,
    );
    SpecAdjust {
        mass: 1.1,
        inertia: 0.9,
        battery_capacity: 1.2,
    }
    .apply(&mut spec);
    assert_eq!(spec.body.mass_kg, m * 1.1);
    assert_eq!(spec.body.inertia_kgm2[2][2], i[2][2] * 0.9);
    assert_eq!(spec.batteries[0].capacity_ah, c * 1.2);
}

fn row(run: u64, landing: f64, passed: bool) -> RunRow {
    let d = Draw::new(&dispersions(), 1, run, Micros(1000));
    let mut r = RunRow::new(&d, 4);
    r.metrics = Some(Metrics {
        passed,
        why: if passed {
            String::new()
        } else {
            format!("expect.landed_within: landed {landing} m from the point, more than 2 m")
        },
        crashes: 0,
        end_s: 10.0,
        landing_error_m: landing,
        altitude_m: 0.1,
        on_ground: true,
        max_tilt_deg: 5.0,
        min_soc: 0.9,
        mission_finished: true,
        digest: "sha256:00".into(),
    });
    r
}

#[test]
fn aggregates_count_runs_and_take_nearest_rank_percentiles() {
    let mut rows: Vec<RunRow> = (0..20)
        .map(|k| row(k, (k + 1) as f64, k % 4 != 0))
        .collect();
    rows.push(RunRow::failed(
        &Draw::new(&dispersions(), 1, 20, Micros(1000)),
        4,
        "crashed".into(),
    ));
    let a = Aggregate::of(&rows);
    assert_eq!((a.runs, a.completed, a.failed, a.passed), (21, 20, 1, 15));
    let l = &a.stats[0];
    assert_eq!(l.name, "landing_error_m");
    assert_eq!((l.min, l.max, l.mean), (1.0, 20.0, 10.5));
    // Nearest rank of 20 values: p5 is the 1st, p50 the 10th, p95 the 19th.
    assert_eq!((l.p5, l.p50, l.p95), (1.0, 10.0, 19.0));
    assert!((l.std - (35.0f64).sqrt()).abs() < 1e-12, "{}", l.std);
}

#[test]
fn a_completed_row_whose_verdict_failed_says_which_check() {
    let text = csv_text(&[row(0, 0.5, true), row(1, 7.5, false)]);
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let recs: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
    assert_eq!(
        (&recs[0][2], &recs[0][3], &recs[0][4]),
        ("completed", "", "true")
    );
    assert_eq!(
        (&recs[1][2], &recs[1][3], &recs[1][4]),
        (
            "completed",
            "expect.landed_within: landed 7.5 m from the point, more than 2 m",
            "false"
        )
    );
}

#[test]
fn a_failed_row_has_its_draws_and_reason_but_no_measurements() {
    let d = Draw::new(&dispersions(), 1, 3, Micros(1000));
    let text = csv_text(&[RunRow::failed(
        &d,
        4,
        "the worker was killed by signal SIGSEGV, at 5 s".into(),
    )]);
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let h: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(h, report::COLUMNS);
    let rec = r.records().next().unwrap().unwrap();
    assert_eq!(&rec[0], "3");
    assert_eq!(&rec[1], d.seed.to_string());
    assert_eq!(&rec[2], "failed");
    assert_eq!(&rec[3], "the worker was killed by signal SIGSEGV, at 5 s");
    assert!((4..13).all(|i| rec[i].is_empty()));
    assert_eq!(&rec[13], d.adjust.mass.to_string());
    // The drawn motor failure stays with the failed row.
    let failed = d
        .failed_motor(4)
        .map(|(m, t)| (m.to_string(), (t.0 as f64 * 1e-6).to_string()));
    assert_eq!(
        (rec[20].to_string(), rec[21].to_string()),
        failed.unwrap_or_default()
    );
    assert_eq!(&rec[22], "");
}

#[test]
fn the_workers_name_is_the_one_the_summary_writes() {
    for w in [Workers::Processes, Workers::Threads] {
        assert_eq!(serde_json::to_value(w).unwrap(), w.name());
    }
}

#[test]
fn a_worker_launched_with_bad_arguments_exits_2() {
    use super::worker::main;
    let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(main(&args(&[])), 2);
    assert_eq!(main(&args(&["s.toml", "--run"])), 2);
    assert_eq!(main(&args(&["s.toml", "--autopilot", "a.so"])), 2);
    assert_eq!(
        main(&args(&["s.toml", "--autopilot", "a.so", "--run", "x"])),
        2
    );
    assert_eq!(main(&args(&["s.toml", "--bogus", "1"])), 2);
    // Arguments right, the scenario missing: refused as a configuration.
    assert_eq!(
        main(&args(&[
            "/nonexistent/s.toml",
            "--autopilot",
            "a.so",
            "--run",
            "0"
        ])),
        2
    );
}

/// A run's draw as `--set` overrides loads as the scenario the batch
/// flies for that run: the same seed, scales, wind, noise and events,
/// whatever the scenario's own scales and wind (here: none in the file,
/// a calm made whole; and scales the file sets, multiplied).
#[test]
fn a_draw_as_overrides_is_the_scenario_the_batch_flies() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mc.toml");
    for (extra, wind) in [
        ("", ""),
        (
            "mass_scale = 1.1\nbattery_capacity_scale = 0.9\n",
            "[wind]\nmodel = \"ornstein_uhlenbeck\"\nmean_ned_mps = [1.0, 0.5, 0.0]\nsigma_mps = [0.5, 0.5, 0.1]\ntau_s = [5.0, 5.0, 2.0]\n",
        ),
    ] {
        std::fs::write(
            &file,
            format!(
                "schema_version = 1\n[simulation]\nseed = 5\nduration_s = 30.0\n\
                 [vehicle]\nspec = \"iris\"\n{extra}[sensors]\nnoise_scale = 1.5\n{wind}\
                 [[events]]\nat_s = 1.0\naction = \"arm\"\n\
                 [montecarlo]\nmass_sigma = 0.05\ninertia_sigma = 0.1\nbattery_capacity_sigma = 0.05\n\
                 wind_mean_sigma_mps = [1.0, 2.0, 0.1]\nsensor_noise_scale = [0.5, 2.0]\n\
                 motor_failure_probability = 0.5\nmotor_failure_window_s = [5.0, 20.0]\n"
            ),
        )
        .unwrap();
        let base = Scenario::load_with(&file, &[]).unwrap();
        let d = base.montecarlo.unwrap();
        let mut failures = 0;
        for k in 0..24 {
            let draw = Draw::new(&d, base.seed, k, base.tick);
            failures += usize::from(draw.motor_failure.is_some());
            let mut applied = base.clone();
            draw.apply(&mut applied, 4);
            let mut loaded = Scenario::load_with(&file, &draw.overrides(&base, 4)).unwrap();
            // Where each event was read is all that differs: an event the
            // file did not have.
            loaded.event_keys.clone_from(&applied.event_keys);
            assert_eq!(loaded, applied, "run {k}");
        }
        assert!(failures > 0, "some runs lose a motor");
    }
}

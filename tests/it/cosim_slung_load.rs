//! The slung-load FMU (c_examples/slung_load_fmu) through the FMI 2.0
//! importer: a pendulum against its closed form, the one-step delay's
//! stability limit against an eigen-analysis of the coupling, and an Iris
//! hovering with the load.

use std::path::{Path, PathBuf};

use crate::common::{TempDir, examples, lockstep};
use lockstep_cosim::fmu::FmuParticipant;
use lockstep_cosim::{Connect, FnParticipant, Mode, SystemBuilder, TransferSpec, Variable};
use lockstep_harness::Micros;
use nalgebra::{Matrix3, Matrix4};

const G: f64 = 9.80665;

/// The FMU unpacked into `dir`: its description and its binary.
fn unpacked(dir: &Path) -> PathBuf {
    let root = dir.join("slung_load");
    let bin = root.join("binaries/linux64");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::copy(
        lockstep_c_examples::SLUNG_LOAD_FMU_BINARY,
        bin.join(format!("slung_load{}", std::env::consts::DLL_SUFFIX)),
    )
    .unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("c_examples/slung_load_fmu/modelDescription.xml"),
        root.join("modelDescription.xml"),
    )
    .unwrap();
    root
}

fn load(dir: &Path, start: &[(&str, f64)]) -> FmuParticipant {
    let start: Vec<(String, f64)> = start.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    FmuParticipant::load(&unpacked(dir), "load", &start, &[]).unwrap()
}

const ATTACH: [&str; 6] = [
    "load.vehicle_north_m",
    "load.vehicle_east_m",
    "load.vehicle_down_m",
    "load.vehicle_vn_mps",
    "load.vehicle_ve_mps",
    "load.vehicle_vd_mps",
];

#[test]
fn the_load_swings_with_the_pendulum_period_of_its_stretched_tether() {
    // The attachment held still 20 m up; the load released 5 degrees out
    // (a first step places it hanging, then the attachment jumps aside).
    let dir = TempDir::new("fmu-pendulum");
    let (len, m, k) = (2.0, 0.5, 2000.0);
    let fmu = load(dir.path(), &[("damping_ns_per_m", 0.0)]);
    let theta0: f64 = 5f64.to_radians();
    let l_eff = len + m * G / k;
    let shift = l_eff * theta0.sin();
    let anchor = FnParticipant::new(
        vec![],
        vec![Variable::vector("p", &[0.0, 0.0, -20.0, 0.0, 0.0, 0.0], "")],
        move |t, _, _, o| {
            // Hanging first, then the anchor moves `shift` north at once.
            if t >= Micros(1000) {
                o[0] = shift;
            }
            Ok(())
        },
    );
    let mut b = SystemBuilder::new(Micros(1000));
    b.participant("anchor", None, Box::new(anchor)).unwrap();
    b.participant("load", None, Box::new(fmu)).unwrap();
    b.transfer(
        TransferSpec {
            name: "attach".into(),
            reads: vec!["anchor.p".into()],
            writes: ATTACH.iter().map(|s| s.to_string()).collect(),
            ..TransferSpec::default()
        },
        Box::new(Connect::default()),
    )
    .unwrap();
    let mut c = b.build(Mode::Serialized).unwrap();
    let north = c.find_output("load.load_north_m").unwrap();
    // Upward crossings of the anchor's north: one per period.
    let mut last = f64::NAN;
    let mut crossings = Vec::new();
    c.run_until(Micros(12_000_000), |c| {
        let x = c.output(north)[0] - shift;
        if last < 0.0 && x >= 0.0 {
            // Linear interpolation within the step.
            let t = c.now().as_secs_f64() - 0.001 * x / (x - last);
            crossings.push(t);
        }
        last = x;
        Ok(())
    })
    .unwrap();
    assert!(crossings.len() >= 4, "{crossings:?}");
    let n = crossings.len() - 1;
    let period = (crossings[n] - crossings[0]) / n as f64;
    // Finite amplitude lengthens the period by theta0^2 / 16.
    let want = 2.0 * std::f64::consts::PI * (l_eff / G).sqrt() * (1.0 + theta0 * theta0 / 16.0);
    assert!(
        (period / want - 1.0).abs() < 2e-3,
        "period {period} s, closed form {want} s"
    );
    c.finish().unwrap();
}

/// The spectral radius of one co-simulation step of the linearized
/// coupling, for a step `h`: a free vehicle mass `big_m` receiving the
/// load's mean tether force of the previous step, and the load (mass `m`,
/// tether `k`, `c`) integrated exactly while the attachment moves at the
/// vehicle's velocity of the step's start. In relative coordinates
/// (stretch d, stretch rate e, held force F) the step is linear:
///   [r; q](h) = E [d; e],   E = exp(B h),  B = [[0, 1], [-k/m, -c/m]]
///   F' = [k, c] (1/h) int_0^h exp(B s) ds [d; e]
///   d' = r(h) - h^2/(2M) F,  e' = q(h) - h/M F.
fn step_matrix(h: f64, big_m: f64, m: f64, k: f64, c: f64) -> Matrix3<f64> {
    // exp([[B, I], [0, 0]] h) holds exp(B h) and its integral.
    let aug = Matrix4::new(
        0.0,
        1.0,
        1.0,
        0.0, //
        -k / m,
        -c / m,
        0.0,
        1.0, //
        0.0,
        0.0,
        0.0,
        0.0, //
        0.0,
        0.0,
        0.0,
        0.0,
    ) * h;
    let x = aug.exp();
    let (e00, e01, e10, e11) = (x[(0, 0)], x[(0, 1)], x[(1, 0)], x[(1, 1)]);
    let f0 = (k * x[(0, 2)] + c * x[(1, 2)]) / h;
    let f1 = (k * x[(0, 3)] + c * x[(1, 3)]) / h;
    Matrix3::new(
        e00,
        e01,
        -h * h / (2.0 * big_m), //
        e10,
        e11,
        -h / big_m, //
        f0,
        f1,
        0.0,
    )
}

fn spectral_radius(h: f64, big_m: f64, m: f64, k: f64, c: f64) -> f64 {
    dominant(&step_matrix(h, big_m, m, k, c)).0
}

/// The modulus and angle of the eigenvalue of largest modulus.
fn dominant(a: &Matrix3<f64>) -> (f64, f64) {
    a.complex_eigenvalues()
        .iter()
        .map(|z| (z.norm(), z.arg().abs()))
        .fold((0.0, 0.0), |best, z| if z.0 > best.0 { z } else { best })
}

/// Steps per oscillation of the dominant mode.
fn steps_per_cycle(h: f64, big_m: f64, m: f64, k: f64, c: f64) -> usize {
    let theta = dominant(&step_matrix(h, big_m, m, k, c)).1;
    (2.0 * std::f64::consts::PI / theta).ceil() as usize + 1
}

/// The measured growth per step of the stretch's oscillation: a vehicle
/// (a free mass held up by its weight plus the load's) and the FMU,
/// coupled with the one-step delay at step `h`, from a 0.02 mm kick
/// after the first step,
/// while the ringing stays in the linear range (the tether taut: the
/// tension's deviation below half the load's weight).
fn measured_growth(dir: &Path, h: Micros, big_m: f64, m: f64, k: f64, c: f64) -> f64 {
    let w = steps_per_cycle(h.as_secs_f64(), big_m, m, k, c);
    let fmu = load(
        dir,
        &[
            ("load_mass_kg", m),
            ("stiffness_n_per_m", k),
            ("damping_ns_per_m", c),
            ("substep_s", 0.0001),
        ],
    );
    // The vehicle: exact motion under its lift (M + m) g up, gravity and
    // the held tether force; kicked 0.5 mm down at the start.
    let mut s = [0.0, 0.0, -30.0, 0.0, 0.0, 0.0];
    let vehicle = FnParticipant::new(
        vec![Variable::vector("f", &[0.0, 0.0, m * G], "")],
        vec![Variable::vector("p", &s, "")],
        move |t, dt, f, o| {
            // The FMU's outputs are zero before its first step (it places
            // the load then): the vehicle starts from the hanging
            // equilibrium instead of a free first step.
            let f = if t == Micros::ZERO {
                &[0.0, 0.0, m * G][..]
            } else {
                f
            };
            let dt = dt.as_secs_f64();
            for i in 0..3 {
                let lift = if i == 2 { -(big_m + m) * G } else { 0.0 };
                let gravity = if i == 2 { big_m * G } else { 0.0 };
                let a = (f[i] + lift + gravity) / big_m;
                s[i] += s[3 + i] * dt + 0.5 * a * dt * dt;
                s[3 + i] += a * dt;
            }
            if t == Micros::ZERO {
                // The kick: 0.02 mm down once the load hangs.
                s[2] += 0.00002;
            }
            o.copy_from_slice(&s);
            Ok(())
        },
    );
    let mut b = SystemBuilder::new(h);
    b.participant("vehicle", None, Box::new(vehicle)).unwrap();
    b.participant("load", None, Box::new(fmu)).unwrap();
    b.transfer(
        TransferSpec {
            name: "attach".into(),
            reads: vec!["vehicle.p".into()],
            writes: ATTACH.iter().map(|s| s.to_string()).collect(),
            ..TransferSpec::default()
        },
        Box::new(Connect::default()),
    )
    .unwrap();
    b.transfer(
        TransferSpec {
            name: "pull".into(),
            reads: vec![
                "load.force_north_n".into(),
                "load.force_east_n".into(),
                "load.force_down_n".into(),
            ],
            writes: vec!["vehicle.f".into()],
            ..TransferSpec::default()
        },
        Box::new(Connect::default()),
    )
    .unwrap();
    let mut c = b.build(Mode::Parallel { threads: 2 }).unwrap();
    let tension = c.find_output("load.tension_n").unwrap();
    // The first step places the load at the static stretch under the
    // kicked vehicle; the tension's deviation from m g then rings.
    let steps = (6 * w as u64).max(40);
    let mut dev = Vec::new();
    c.run_until(Micros(h.0 * (steps + 2)), |c| {
        dev.push((c.output(tension)[0] - m * G).abs());
        Ok(())
    })
    .unwrap();
    c.finish().unwrap();
    // The envelope: the largest deviation over one cycle early and one
    // cycle late, compared over the steps between them.
    let end = dev
        .iter()
        .position(|d| *d > 0.5 * m * G)
        .unwrap_or(dev.len());
    assert!(end >= 3 * w + 2, "left the linear range after {end} steps");
    let early = dev[2..2 + w].iter().cloned().fold(0.0, f64::max);
    let late = dev[end - w..end].iter().cloned().fold(0.0, f64::max);
    (late / early).powf(1.0 / (end - w - 2) as f64)
}

#[test]
fn the_one_step_delay_is_stable_below_the_limit_the_eigen_analysis_gives() {
    // A load as heavy as the vehicle: 0.5 kg each, k 2000 N/m, c 20 N s/m.
    let (big_m, m, k, c) = (0.5, 0.5, 2000.0, 20.0);
    // The limit: the step where the spectral radius crosses 1.
    let (mut lo, mut hi) = (0.004, 0.016);
    assert!(spectral_radius(lo, big_m, m, k, c) < 1.0);
    assert!(spectral_radius(hi, big_m, m, k, c) > 1.0);
    for _ in 0..50 {
        let mid = 0.5 * (lo + hi);
        if spectral_radius(mid, big_m, m, k, c) < 1.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let limit_ms = lo * 1e3;
    assert!((9.0..12.0).contains(&limit_ms), "limit {limit_ms} ms");
    let dir = TempDir::new("fmu-stability");
    // Below the limit the tension's ringing dies away, above it grows, at
    // the rate the analysis gives.
    for h_us in [4000u64, 8000, 16_000] {
        let want = spectral_radius(h_us as f64 * 1e-6, big_m, m, k, c);
        let got = measured_growth(dir.path(), Micros(h_us), big_m, m, k, c);
        assert!(
            (got - want).abs() < 0.02,
            "step {h_us} us: measured growth {got} per step, analysis {want}"
        );
        assert_eq!(got < 1.0, (h_us as f64) < limit_ms * 1e3, "step {h_us} us");
    }
    // The Iris (1.5 kg) with the 0.5 kg load stays stable at any step up to
    // 30 ms: the bundled example's 4 ms is far inside.
    for h in [0.004, 0.008, 0.016, 0.03] {
        assert!(spectral_radius(h, 1.5, 0.5, k, c) < 1.0, "{h}");
    }
}

#[test]
fn an_iris_hovers_with_the_load_hanging_at_its_static_stretch() {
    let dir = TempDir::new("cosim-slung");
    let fmu = dir.join("slung_load.fmu");
    let r = lockstep(&["example-fmu", "slung_load", "--out", fmu.to_str().unwrap()]);
    assert_eq!(r.code(), 0, "{r}");
    let system = std::fs::read_to_string(examples().join("cosim/slung_load.toml"))
        .unwrap()
        .replace("bundled:slung_load", fmu.to_str().unwrap())
        .replace(
            "\"vehicle.toml\"",
            &format!("{:?}", examples().join("cosim/vehicle.toml")),
        );
    let path = dir.join("slung.toml");
    std::fs::write(&path, system).unwrap();
    let out = dir.join("out");
    let r = lockstep(&[
        "cosim",
        path.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--isolation",
        "in-process",
        "--json",
    ]);
    assert_eq!(r.code(), 0, "{r}");
    let rows: Vec<Vec<f64>> = std::fs::read_to_string(out.join("cosim.csv"))
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
        .collect();
    let header: Vec<String> = std::fs::read_to_string(out.join("cosim.csv"))
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .split(',')
        .map(String::from)
        .collect();
    let col = |n: &str| {
        header
            .iter()
            .position(|h| h == n)
            .unwrap_or_else(|| panic!("{n}: {header:?}"))
    };
    let (t, tension, load_d, iris_d) = (
        col("time_us"),
        col("load.tension_n"),
        col("load.load_down_m"),
        col("iris.position_ned_m[2]"),
    );
    // Hovering at 10 m between 25 s and 35 s: the load hangs still, the
    // tension holds its weight and the tether its static stretch.
    let hover: Vec<&Vec<f64>> = rows
        .iter()
        .filter(|r| (25e6..35e6).contains(&r[t]))
        .collect();
    assert!(hover.len() > 50);
    let (m, len, k) = (0.5, 2.0, 2000.0);
    for r in &hover {
        assert!(
            (r[tension] / (m * G) - 1.0).abs() < 0.03,
            "tension {} N at {} us",
            r[tension],
            r[t]
        );
        assert!(
            (r[iris_d] + 10.0).abs() < 0.5,
            "altitude {} at {}",
            -r[iris_d],
            r[t]
        );
        let hang = r[load_d] - r[iris_d];
        assert!(
            (hang - (len + m * G / k)).abs() < 0.01,
            "hangs {hang} m below at {}",
            r[t]
        );
    }
    // Before take-off the load rests on the ground with a slack tether
    // (pressed in by its weight over the ground's stiffness, 20 kN/m).
    assert_eq!(rows[1][tension], 0.0);
    assert!(
        (rows[1][load_d] - m * G / 20_000.0).abs() < 1e-6,
        "{}",
        rows[1][load_d]
    );
}

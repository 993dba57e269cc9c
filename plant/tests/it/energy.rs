//! The power model conserves energy: at every evaluation the batteries'
//! currents add up to the bus current (the low-voltage floor included),
//! the motors' electrical power is their back-EMF power plus winding and ESC
//! losses, and over a flight the chemical energy the packs gave equals what
//! the bus delivered plus the packs' internal losses.

use lockstep_plant::battery::BatteryModel;
use lockstep_plant::integrate::{Integrator, IntegratorError, Method, Options, Stats, System};
use lockstep_plant::{AircraftSpec, HeldPlant, Multirotor, PlantInputs, PlantOutputs, Tolerances};

fn plant_at_soc(name: &str, soc: f64) -> Multirotor {
    plant_with(name, soc, None)
}

/// The airframe with its packs at `soc` and, if given, the ESCs' low-voltage
/// limit at `floor_per_cell` volts per cell (3.3 V per cell is OCV 0).
fn plant_with(name: &str, soc: f64, floor_per_cell: Option<f64>) -> Multirotor {
    let mut s = AircraftSpec::builtin(name).unwrap();
    for b in &mut s.batteries {
        b.initial_soc = soc;
        if let Some(f) = floor_per_cell {
            let cells = (b.ocv_v.as_ref().unwrap()[0] / 3.3).round();
            b.voltage_floor_v = f * cells;
        }
    }
    s.build().unwrap()
}

/// Everything the energy checks read at one boundary.
struct Sample {
    out: PlantOutputs,
    v1: Vec<f64>,
    soc: Vec<f64>,
}

/// Flies `plant` open-loop with all motors at `cmd` for `seconds` with RK4
/// at 1 ms, sampling the outputs at every boundary.
fn fly(p: &Multirotor, cmd: f64, seconds: f64) -> (Vec<Sample>, Vec<f64>, Vec<f64>) {
    let (samples, soc0, soc1, _) = fly_with(p, Method::Rk4, cmd, seconds);
    (samples, soc0, soc1)
}

/// [`fly`] with `method` over the same 1 ms intervals (an adaptive method
/// takes substeps of at most the interval); also returns the work done.
fn fly_with(
    p: &Multirotor,
    method: Method,
    cmd: f64,
    seconds: f64,
) -> (Vec<Sample>, Vec<f64>, Vec<f64>, Stats) {
    let mut x = p.state_at([0.0, 0.0, -50.0], [1.0, 0.0, 0.0, 0.0]);
    let mut u = PlantInputs::default();
    u.motor_cmd[..p.rotors.len()].fill(cmd);
    let sys = HeldPlant {
        plant: p,
        inputs: &u,
    };
    let soc0: Vec<f64> = (0..p.batteries.len()).map(|j| x[p.layout.soc(j)]).collect();
    let mut integ = Integrator::new(method, p.dim(), Options::default()).unwrap();
    let mut samples = Vec::new();
    let steps = (seconds * 1000.0) as u64;
    for k in 0..=steps {
        samples.push(Sample {
            out: p.outputs(&x, &u),
            v1: (0..p.batteries.len()).map(|j| x[p.layout.v1(j)]).collect(),
            soc: (0..p.batteries.len()).map(|j| x[p.layout.soc(j)]).collect(),
        });
        if k < steps {
            integ
                .step_interval(&sys, k * 1000, 1000, &mut x)
                .unwrap_or_else(|e| panic!("{method:?} at {k} ms: {e}"));
        }
    }
    let soc1: Vec<f64> = (0..p.batteries.len()).map(|j| x[p.layout.soc(j)]).collect();
    (samples, soc0, soc1, integ.total_stats())
}

fn assert_currents_balance(name: &str, p: &Multirotor, samples: &[Sample]) {
    for (k, s) in samples.iter().enumerate() {
        let sum: f64 = s.out.batteries[..p.batteries.len()]
            .iter()
            .map(|b| b.current_a)
            .sum();
        let bus = s.out.bus_current_a;
        assert!(
            (sum - bus).abs() <= 1e-9 * bus.abs().max(1e-9),
            "{name} at {k} ms: batteries {sum} A, bus {bus} A"
        );
    }
}

#[test]
fn energy_balances_at_the_voltage_floor() {
    // Full throttle on low packs with the ESCs' low-voltage limit at 3.5 V
    // per cell: the bus would sag below it, so the limiter scales the duties.
    // Before the fix the motors drew the load at the floor while the packs
    // were charged (E - V)/R0: bus_a exceeded the batteries' sum by 27 A
    // (iris) to 45 A (octa).
    for name in ["iris", "hexa", "octa"] {
        let p = plant_with(name, 0.1, Some(3.5));
        let floor = p.batteries[0].voltage_floor_v;
        let (samples, ..) = fly(&p, 1.0, 3.0);
        let at_floor = samples.iter().filter(|s| s.out.duty_scale < 1.0).count();
        assert!(
            at_floor > 1000,
            "{name}: the bus must reach its floor ({at_floor} samples there)"
        );
        for s in samples.iter().filter(|s| s.out.duty_scale < 1.0) {
            assert_eq!(s.out.bus_voltage_v, floor, "{name}: held at the floor");
        }
        assert_currents_balance(name, &p, &samples);
    }
}

#[test]
fn motor_power_is_back_emf_power_plus_winding_and_esc_losses() {
    let p = plant_at_soc("octa", 0.5);
    let (samples, ..) = fly(&p, 0.6, 1.0);
    let (ke, r, eta) = (p.motor.ke(), p.motor.resistance_ohm, p.esc.efficiency);
    for s in samples.iter().skip(1) {
        let o = &s.out;
        let motors: f64 = o.rotors[..p.rotors.len()]
            .iter()
            .map(|m| (ke * m.speed_radps + r * m.current_a) * m.current_a / eta)
            .sum();
        let bus = o.bus_voltage_v * o.bus_current_a;
        let expect = motors + p.avionics_power_w;
        assert!((bus / expect - 1.0).abs() < 1e-12, "{bus} W vs {expect} W");
    }
}

/// Chemical energy a pack gives from `soc_a` down to `soc_b`:
/// 3600 C * integral of OCV(s) ds (exact for the piecewise-linear table).
fn chemical_energy_j(p: &Multirotor, j: usize, soc_b: f64, soc_a: f64) -> f64 {
    let b = &p.batteries[j];
    let BatteryModel::Thevenin { ocv, .. } = &b.model else {
        panic!("thevenin packs only")
    };
    // Trapezoids on the knots plus the partial end segments: exact.
    let mut knots: Vec<f64> = ocv
        .soc()
        .iter()
        .copied()
        .filter(|s| *s > soc_b && *s < soc_a)
        .collect();
    knots.insert(0, soc_b);
    knots.push(soc_a);
    let integral: f64 = knots
        .windows(2)
        .map(|w| 0.5 * (ocv.voltage(w[0]) + ocv.voltage(w[1])) * (w[1] - w[0]))
        .sum();
    3600.0 * b.capacity_ah * integral
}

/// Energy through the packs' internal EMF over the 1 ms boundaries, by
/// trapezoids: OCV I = V I + R0 I^2 + V1 I (the terminal equation).
fn terminal_energy(p: &Multirotor, samples: &[Sample]) -> f64 {
    let power = |s: &Sample| -> f64 {
        (0..p.batteries.len())
            .map(|j| {
                let b = &s.out.batteries[j];
                let r0 = p.batteries[j].r0();
                b.current_a * (s.out.bus_voltage_v + r0 * b.current_a + s.v1[j])
            })
            .sum()
    };
    samples
        .windows(2)
        .map(|w| 0.5 * (power(&w[0]) + power(&w[1])) * 1e-3)
        .sum()
}

#[test]
fn the_packs_chemical_energy_equals_bus_energy_plus_internal_losses() {
    // Over a 60 s hover-throttle run and over a run at the floor: the
    // energy the packs' chemistry gave (from their SOC change, exactly)
    // equals the bus energy plus R0 and R1-C1 losses, integrated over the
    // 1 ms boundaries by trapezoids.
    for (name, soc, cmd, seconds) in [("iris", 0.9, 0.5, 60.0), ("octa", 0.7, 0.52, 60.0)] {
        let p = plant_at_soc(name, soc);
        let (samples, soc0, soc1) = fly(&p, cmd, seconds);
        let nb = p.batteries.len();
        let by_power = terminal_energy(&p, &samples);
        let chemical: f64 = (0..nb)
            .map(|j| chemical_energy_j(&p, j, soc1[j], soc0[j]))
            .sum();
        assert!(
            (by_power / chemical - 1.0).abs() < 1e-5,
            "{name} at SOC {soc}: {by_power} J through the terminals vs {chemical} J from the chemistry"
        );
        assert_currents_balance(name, &p, &samples);
    }
    // The same at the low-voltage floor, after the rotors' spin-up (whose
    // fast current changes a 1 ms trapezoid would not resolve to 1e-5).
    let p = plant_with("octa", 0.1, Some(3.5));
    let (samples, ..) = fly(&p, 1.0, 3.0);
    let samples = &samples[500..];
    assert!(
        samples.iter().all(|s| s.out.duty_scale < 1.0),
        "at the floor throughout"
    );
    let (first, last) = (&samples[0], &samples[samples.len() - 1]);
    let chemical: f64 = (0..2)
        .map(|j| chemical_energy_j(&p, j, last.soc[j], first.soc[j]))
        .sum();
    let by_power = terminal_energy(&p, samples);
    assert!(
        (by_power / chemical - 1.0).abs() < 1e-5,
        "{by_power} vs {chemical}"
    );
}

#[test]
fn soc_stops_at_zero_and_an_empty_pack_is_cut_off() {
    // Before the fix SOC went to -4.3 % and an empty pack kept OCV(0) on
    // the bus forever. Now the table ends at the empty cell (3.3 V), SOC
    // stops at 0 exactly and the empty pack delivers nothing.
    let p = plant_at_soc("iris", 0.004);
    let empty_v = match &p.batteries[0].model {
        BatteryModel::Thevenin { ocv, .. } => ocv.voltage(0.0),
        BatteryModel::Ideal { .. } => unreachable!(),
    };
    assert_eq!(empty_v, 9.9, "3.3 V per cell");
    let (samples, _, soc1) = fly(&p, 0.5, 10.0);
    assert_eq!(soc1[0], 0.0, "stops at exactly 0");
    let first_empty = samples
        .iter()
        .position(|s| s.out.batteries[0].soc == 0.0)
        .expect("the pack empties within 10 s");
    assert!(first_empty > 100, "it flew on charge first");
    for s in &samples {
        assert!(s.out.batteries[0].soc >= 0.0);
    }
    for s in &samples[first_empty..] {
        let b = &s.out.batteries[0];
        assert!(!b.connected && b.current_a == 0.0, "cut off: {b:?}");
        assert_eq!((s.out.bus_voltage_v, s.out.bus_current_a), (0.0, 0.0));
        assert!(s.out.rotors[0].current_a == 0.0);
    }
    // With the pack cut off the rotors spin down.
    let last = samples.last().unwrap();
    assert!(last.out.rotors[0].speed_radps < 0.5 * samples[first_empty].out.rotors[0].speed_radps);
}

/// The plant held, with a right-hand side that drives one state to `value`
/// per second and leaves the others still; the plant's own projection.
struct Poison<'a> {
    held: HeldPlant<'a>,
    index: usize,
    value: f64,
}

impl System for Poison<'_> {
    fn dim(&self) -> usize {
        self.held.dim()
    }
    fn rhs(&self, _t: f64, _x: &[f64], dx: &mut [f64]) {
        dx.fill(0.0);
        dx[self.index] = self.value;
    }
    fn project(&self, x: &mut [f64]) {
        self.held.project(x);
    }
}

#[test]
fn a_non_finite_soc_is_an_integrator_error_not_an_empty_or_full_pack() {
    // Before the fix the projection made NaN and -inf SOC 0 (an empty,
    // cut-off pack) and +inf SOC 1 before the finiteness check: the
    // integration went on. A non-finite rotor speed is reported too.
    let p = plant_at_soc("iris", 0.5);
    let u = PlantInputs::default();
    let soc = p.layout.soc(0);
    let rotor = p.layout.rotor_speed(1);
    for method in [Method::Euler, Method::Rk4, Method::Dp54] {
        for (index, value) in [
            (soc, f64::NAN),
            (soc, f64::INFINITY),
            (soc, f64::NEG_INFINITY),
            (rotor, f64::NAN),
            (rotor, f64::NEG_INFINITY),
        ] {
            let sys = Poison {
                held: HeldPlant {
                    plant: &p,
                    inputs: &u,
                },
                index,
                value,
            };
            let mut x = p.state_at([0.0, 0.0, -50.0], [1.0, 0.0, 0.0, 0.0]);
            let mut integ = Integrator::new(method, p.dim(), Options::default()).unwrap();
            match integ.step_interval(&sys, 0, 1000, &mut x) {
                Err(IntegratorError::NonFinite { index: i, .. }) => {
                    assert_eq!(i, index, "{method:?}, {value}")
                }
                other => panic!("{method:?}: state {index} driven to {value}: {other:?}"),
            }
        }
    }
    // Finite values are still projected: SOC into [0, 1], rotor speeds >= 0.
    let sys = HeldPlant {
        plant: &p,
        inputs: &u,
    };
    let mut x = p.state_at([0.0, 0.0, -50.0], [1.0, 0.0, 0.0, 0.0]);
    x[soc] = 1.5;
    x[rotor] = -3.0;
    sys.project(&mut x);
    assert_eq!((x[soc], x[rotor]), (1.0, 0.0));
    x[soc] = -0.25;
    sys.project(&mut x);
    assert_eq!(x[soc], 0.0);
}

#[test]
fn an_adaptive_integrator_crosses_the_empty_pack_cut_off_and_keeps_the_books() {
    // The cut-off is a jump in the right-hand side (the rotors' acceleration
    // drops by Kt I / J, about 2e3 rad/s^2 on the Iris): DP5 passes it by
    // shortening its step, without StepTooSmall, with rotor speeds and SOC
    // in its error norm too. Up to the last boundary before the cut-off the
    // chemical energy equals the terminal energy (as in the RK4 test above);
    // across the cut-off interval the pack gives at most one interval's
    // energy; after it nothing.
    for tolerances in [
        Tolerances::default(),
        Tolerances {
            rotor_speeds: Some((1e-4, 1e-6)),
            soc: Some((1e-9, 1e-6)),
            v1: Some((1e-6, 1e-6)),
            ..Tolerances::default()
        },
    ] {
        let mut p = plant_at_soc("iris", 0.004);
        p.set_tolerances(&tolerances);
        let (samples, soc0, soc1, stats) = fly_with(&p, Method::Dp54, 0.5, 10.0);
        eprintln!("{tolerances:?}: {stats:?}");
        assert_eq!(soc1[0], 0.0, "stops at exactly 0");
        let empty = samples
            .iter()
            .position(|s| s.soc[0] == 0.0)
            .expect("the pack empties within 10 s");
        assert!(empty > 100, "it flew on charge first");
        assert_currents_balance("iris, DP5", &p, &samples);
        let before = &samples[..empty];
        let last = before.last().unwrap();
        let chemical = chemical_energy_j(&p, 0, last.soc[0], soc0[0]);
        let by_power = terminal_energy(&p, before);
        assert!(
            (by_power / chemical - 1.0).abs() < 1e-5,
            "{tolerances:?}: {by_power} J through the terminals vs {chemical} J from the chemistry"
        );
        let power = last.out.bus_voltage_v * last.out.bus_current_a;
        let straddle = chemical_energy_j(&p, 0, 0.0, last.soc[0]);
        assert!(
            straddle > 0.0 && straddle <= 1.2 * power * 1e-3,
            "{straddle} J in the cut-off interval, {power} W before it"
        );
        for s in &samples[empty..] {
            let b = &s.out.batteries[0];
            assert!(!b.connected && b.current_a == 0.0, "cut off: {b:?}");
            assert_eq!(s.soc[0], 0.0);
        }
    }
}

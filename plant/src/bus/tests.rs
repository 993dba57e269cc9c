use super::*;

fn motors<'a>(duty: &'a [f64], emf: &'a [f64], limit: f64) -> MotorLoads<'a> {
    MotorLoads {
        duty,
        back_emf_v: emf,
        inv_resistance: 1.0 / 0.25,
        current_limit_a: limit,
        inv_efficiency: 1.0 / 0.98,
    }
}

fn one(emf: f64, r0: f64) -> Source {
    Source::combine(Sharing::Resistance, &[emf], &[1.0 / r0], &[true])
}

/// The residual of the bus equation, solved independently by bisection.
fn bisect(s: &Source, m: &MotorLoads, p: f64) -> f64 {
    let r = |v: f64| v - s.emf_v + (m.bus_current(v, 1.0) + p / v) / s.conductance_s;
    let (mut lo, mut hi) = (1e-3, s.emf_v);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if r(mid) > 0.0 { hi = mid } else { lo = mid }
    }
    lo
}

#[test]
fn exact_solution_matches_bisection_with_clamped_and_linear_motors() {
    let s = one(12.4, 0.02);
    // Linear, at 0 (back-EMF above the supply), near and at the limit.
    for (duty, emf, limit, p) in [
        (
            vec![0.5, 0.5, 0.5, 0.5],
            vec![1.5, 1.5, 1.5, 1.5],
            60.0,
            5.0,
        ),
        (
            vec![0.1, 0.6, 0.9, 1.0],
            vec![3.0, 1.0, 0.5, 0.0],
            30.0,
            5.0,
        ),
        (vec![1.0, 1.0], vec![0.0, 0.0], 20.0, 0.0),
        (vec![0.0, 0.0, 0.0], vec![0.0, 0.0, 0.0], 60.0, 8.0),
    ] {
        let m = motors(&duty, &emf, limit);
        let mut cur = [0.0; 4];
        let b = solve(&s, 0.0, &m, p, &mut cur);
        let v = b.voltage_v;
        let expect = bisect(&s, &m, p);
        assert!((v - expect).abs() < 1e-9, "{duty:?}: {v} vs {expect}");
        assert!((b.load_a - (m.bus_current(v, 1.0) + p / v)).abs() < 1e-12);
        assert!(
            (v - (12.4 - 0.02 * b.load_a)).abs() < 1e-9,
            "the source equation holds"
        );
        assert_eq!(b.duty_scale, 1.0);
        for (i, c) in cur[..duty.len()].iter().enumerate() {
            assert_eq!(*c, m.current(i, v), "motor {i}'s current is handed back");
        }
    }
}

#[test]
fn a_single_source_is_combine_of_one_battery_up_to_rounding() {
    let mut next = lcg(7);
    for _ in 0..10_000 {
        let (e, g) = (5.0 + 20.0 * next(), 1.0 / (0.001 + next()));
        let s = Source::single(e, g, true);
        for sharing in [Sharing::Resistance, Sharing::Equal] {
            let c = Source::combine(sharing, &[e], &[g], &[true]);
            assert_eq!(c.count, s.count);
            assert!((c.emf_v - s.emf_v).abs() <= 2.0 * f64::EPSILON * e);
            assert!((c.conductance_s - s.conductance_s).abs() <= 2.0 * f64::EPSILON * g);
        }
    }
    let ideal = Source::single(12.0, f64::INFINITY, true);
    let c = Source::combine(Sharing::Equal, &[12.0], &[f64::INFINITY], &[true]);
    assert_eq!(
        (c.emf_v, c.conductance_s),
        (ideal.emf_v, ideal.conductance_s)
    );
    let none = Source::single(12.0, 10.0, false);
    let c = Source::combine(Sharing::Resistance, &[12.0], &[10.0], &[false]);
    assert_eq!(c, none);
}

#[test]
fn parallel_batteries_share_by_resistance_or_equally() {
    let emf = [12.0, 11.8];
    let g = [1.0 / 0.02, 1.0 / 0.04];
    // One motor at its 30 A limit (back-EMF 10 V, R 1 mOhm: it takes
    // (10 + 0.03) V x 30 A), 100 % duty, efficiency 1.
    let duty = [1.0];
    let lim = MotorLoads {
        duty: &duty,
        back_emf_v: &[10.0],
        inv_resistance: 1e3,
        current_limit_a: 30.0,
        inv_efficiency: 1.0,
    };
    let mut cur = [0.0];
    let s = Source::combine(Sharing::Resistance, &emf, &g, &[true, true]);
    let b = solve(&s, 0.0, &lim, 0.0, &mut cur);
    let (v, i) = (b.voltage_v, b.load_a);
    let i0 = s.battery_current(Sharing::Resistance, emf[0], g[0], v, i);
    let i1 = s.battery_current(Sharing::Resistance, emf[1], g[1], v, i);
    assert!((i0 + i1 - i).abs() < 1e-9, "{i0} + {i1}");
    assert!((v * i - 10.03 * 30.0).abs() < 1e-9, "{v} V x {i} A");
    assert!((emf[0] - 0.02 * i0 - v).abs() < 1e-9 && (emf[1] - 0.04 * i1 - v).abs() < 1e-9);
    let e = Source::combine(Sharing::Equal, &emf, &g, &[true, true]);
    let b = solve(&e, 0.0, &lim, 0.0, &mut cur);
    let share = e.battery_current(Sharing::Equal, emf[0], g[0], b.voltage_v, b.load_a);
    assert_eq!(share, 0.5 * b.load_a);
    assert!((b.voltage_v - (11.9 - 0.03 * share)).abs() < 1e-9, "{b:?}");
}

#[test]
fn low_voltage_limit_scales_duties_so_that_load_equals_supply() {
    let s = one(12.0, 0.1);
    // Four motors at full duty would pull the bus to about 6 V.
    let duty = [1.0; 4];
    let emf = [2.0; 4];
    let m = motors(&duty, &emf, 1e6);
    let mut cur = [0.0; 4];
    let free = solve(&s, 0.0, &m, 5.0, &mut cur);
    assert!(free.voltage_v < 9.0, "{free:?}");
    let b = solve(&s, 9.0, &m, 5.0, &mut cur);
    assert_eq!(b.voltage_v, 9.0, "held at the floor");
    assert!(b.duty_scale > 0.0 && b.duty_scale < 1.0, "{b:?}");
    let supply = (12.0 - 9.0) / 0.1;
    assert!((b.load_a / supply - 1.0).abs() < 1e-12, "{b:?}");
    // The load at that scale, recomputed from the currents handed back.
    let motor_bus: f64 = (0..4).map(|i| duty[i] * b.duty_scale * cur[i]).sum::<f64>() / 0.98;
    assert!(((motor_bus + 5.0 / 9.0) / supply - 1.0).abs() < 1e-12);
    for (i, c) in cur.iter().enumerate() {
        assert_eq!(*c, m.current(i, b.duty_scale * 9.0));
    }
    // With a current limit some motors clamp; the balance still holds.
    let m = motors(&[1.0, 0.9, 0.3, 0.0], &[0.5, 1.0, 2.0, 0.0], 30.0);
    let b = solve(&s, 11.0, &m, 5.0, &mut cur);
    assert_eq!(b.voltage_v, 11.0);
    assert!(
        (b.load_a / ((12.0 - 11.0) / 0.1) - 1.0).abs() < 1e-12,
        "{b:?}"
    );
    assert!((b.load_a - (m.bus_current(11.0, b.duty_scale) + 5.0 / 11.0)).abs() < 1e-12);
    assert!(
        m.classify(11.0).1 != 0,
        "at full duty motors would be at their limit"
    );
}

#[test]
fn a_current_limited_motor_takes_only_what_its_winding_uses() {
    // At the limit the ESC's effective duty gives the motor e + R I_max:
    // bus power = (e + R I_max) I_max / eta, not d V I_max / eta.
    let s = one(12.0, 0.01);
    let m = motors(&[1.0], &[3.0], 10.0);
    let mut cur = [0.0];
    let b = solve(&s, 0.0, &m, 0.0, &mut cur);
    assert_eq!(cur[0], 10.0);
    let power = (3.0 + 0.25 * 10.0) * 10.0 / 0.98;
    assert!(
        (b.voltage_v * b.load_a / power - 1.0).abs() < 1e-12,
        "{b:?}"
    );
    assert!((b.voltage_v - (12.0 - 0.01 * b.load_a)).abs() < 1e-12);
    // Continuous at the limit: just below it the linear law gives the same.
    let v = b.voltage_v;
    let d = (3.0 + 0.25 * 10.0) / v;
    let below = [d * (1.0 - 1e-12)];
    let lin = motors(&below, &[3.0], 10.0);
    assert!((lin.bus_current(v, 1.0) - m.bus_current(v, 1.0)).abs() < 1e-9);
}

#[test]
fn below_the_floor_only_the_avionics_are_fed_and_the_balance_holds() {
    // The source's EMF is under the floor: ESCs off.
    let s = one(8.5, 0.1);
    let m = motors(&[1.0; 4], &[0.0; 4], 60.0);
    let mut cur = [1.0; 4];
    let b = solve(&s, 9.0, &m, 5.0, &mut cur);
    assert_eq!((b.duty_scale, cur), (0.0, [0.0; 4]));
    assert!(
        (b.voltage_v * (8.5 - b.voltage_v) / 0.1 - 5.0).abs() < 1e-9,
        "{b:?}"
    );
    assert!((b.load_a - (8.5 - b.voltage_v) / 0.1).abs() < 1e-12);
    // No source at all.
    let none = Source::combine(Sharing::Resistance, &[12.0], &[10.0], &[false]);
    let b = solve(&none, 9.0, &m, 5.0, &mut cur);
    assert_eq!((b.voltage_v, b.load_a), (0.0, 0.0));
    // 60 W constant power alone: V (E - V) / R0 = P.
    let idle = motors(&[0.0], &[0.0], 60.0);
    let b = solve(&one(12.0, 0.1), 0.0, &idle, 60.0, &mut cur);
    let v = b.voltage_v;
    assert!(
        (v * (12.0 - v) / 0.1 - 60.0).abs() < 1e-9 && (b.load_a * v - 60.0).abs() < 1e-9,
        "{v}"
    );
}

#[test]
fn supply_equals_load_in_every_regime_over_random_buses() {
    // A fixed pseudo-random sweep (linear congruential, so the cases are
    // the same on every host): duties, back-EMFs, limits, sources and
    // floors from the linear range to collapse.
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut regimes = [0usize; 3];
    for case in 0..20_000 {
        let n = 1 + (next() * 8.0) as usize;
        let duty: Vec<f64> = (0..n).map(|_| next()).collect();
        let emf: Vec<f64> = (0..n).map(|_| 12.0 * next()).collect();
        let m = MotorLoads {
            duty: &duty,
            back_emf_v: &emf,
            inv_resistance: 1.0 / (0.05 + 0.3 * next()),
            current_limit_a: 5.0 + 40.0 * next(),
            inv_efficiency: 1.0 / (0.7 + 0.3 * next()),
        };
        let e = 8.0 + 18.0 * next();
        let r0 = 0.005 + 0.2 * next();
        let src = one(e, r0);
        let floor = if next() < 0.2 {
            0.0
        } else {
            e * (0.5 + 0.6 * next())
        };
        let avionics = 20.0 * next();
        let mut cur = vec![0.0; n];
        let b = solve(&src, floor, &m, avionics, &mut cur);
        let supply = (e - b.voltage_v) / r0;
        assert!(
            (b.load_a - supply).abs() <= 1e-9 * supply.abs().max(1.0),
            "case {case}: load {} A, supply {supply} A: {b:?}\nduty {duty:?} emf {emf:?} R {} lim {} eta {} e {e} r0 {r0} floor {floor} av {avionics}",
            b.load_a,
            1.0 / m.inv_resistance,
            m.current_limit_a,
            1.0 / m.inv_efficiency
        );
        assert!(b.voltage_v <= e && b.voltage_v > 0.0, "case {case}: {b:?}");
        assert!((0.0..=1.0).contains(&b.duty_scale), "case {case}");
        for (i, c) in cur.iter().enumerate() {
            assert_eq!(*c, m.current(i, b.duty_scale * b.voltage_v));
        }
        if b.duty_scale == 1.0 {
            regimes[0] += 1;
            assert!(
                b.voltage_v >= floor,
                "case {case}: full duty below the floor"
            );
        } else if b.duty_scale > 0.0 {
            regimes[1] += 1;
            let vf = if floor > 0.0 { floor } else { 0.5 * e };
            assert_eq!(b.voltage_v, vf, "case {case}: limited at the floor");
        } else {
            regimes[2] += 1;
        }
    }
    assert!(
        regimes.iter().all(|r| *r > 500),
        "every regime is exercised: {regimes:?}"
    );
}

/// A fixed pseudo-random stream in [0, 1) (linear congruential, the same
/// on every host).
fn lcg(seed: u64) -> impl FnMut() -> f64 {
    let mut state = seed;
    move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[test]
fn the_fast_path_is_the_general_paths_first_pass_bit_for_bit() {
    // Strong and weak sources (R0 up to 3 Ohm, where current-limited
    // motors can balance at several voltages), low and high current
    // limits, floors from none to above the EMF. Before the fast path
    // required every motor below its limit at the open-circuit voltage,
    // 1 in 120 of these cases differed: in the last bits of the load, or
    // in the operating point itself (4 V against 15 V).
    let mut next = lcg(0x9e37_79b9_7f4a_7c15);
    let mut limited_at_e_only = 0;
    for case in 0..100_000 {
        let n = 1 + (next() * 8.0) as usize;
        let duty: Vec<f64> = (0..n)
            .map(|_| if next() < 0.1 { 0.0 } else { next() })
            .collect();
        let emf: Vec<f64> = (0..n).map(|_| 12.0 * next()).collect();
        let m = MotorLoads {
            duty: &duty,
            back_emf_v: &emf,
            inv_resistance: 1.0 / (0.05 + 0.3 * next()),
            current_limit_a: 1.0 + 40.0 * next(),
            inv_efficiency: 1.0 / (0.7 + 0.3 * next()),
        };
        let e = 8.0 + 18.0 * next();
        let r0 = if next() < 0.5 {
            0.005 + 0.2 * next()
        } else {
            0.2 + 3.0 * next()
        };
        let src = one(e, r0);
        let floor = if next() < 0.3 {
            0.0
        } else {
            e * (0.3 + 0.8 * next())
        };
        let avionics = 20.0 * next();
        let (mut fast_cur, mut gen_cur) = (vec![0.0; n], vec![0.0; n]);
        let fast = solve(&src, floor, &m, avionics, &mut fast_cur);
        let general = solve_general(&src, floor, &m, avionics, &mut gen_cur);
        let bits = |b: &BusSolution| [b.voltage_v, b.load_a, b.duty_scale].map(f64::to_bits);
        assert_eq!(
            bits(&fast),
            bits(&general),
            "case {case}: fast {fast:?}, general {general:?}\nduty {duty:?} emf {emf:?} e {e} r0 {r0} floor {floor} av {avionics}"
        );
        assert_eq!(
            fast_cur.iter().map(|c| c.to_bits()).collect::<Vec<_>>(),
            gen_cur.iter().map(|c| c.to_bits()).collect::<Vec<_>>(),
            "case {case}: currents"
        );
        // Supply equals load on weak sources too.
        let supply = (e - general.voltage_v) / r0;
        assert!(
            (general.load_a - supply).abs() <= 1e-9 * supply.abs().max(1.0),
            "case {case}: load {} A, supply {supply} A",
            general.load_a
        );
        if general.duty_scale == 1.0 && m.classify(e).1 != 0 && m.classify(general.voltage_v).1 == 0
        {
            limited_at_e_only += 1;
        }
    }
    assert!(
        limited_at_e_only > 1000,
        "the sweep holds the cases the fast path must leave alone: {limited_at_e_only}"
    );
}

#[test]
fn a_limiter_root_above_one_means_the_bus_balances_above_the_floor() {
    // The limiter is asked to hold a floor below the full-duty operating
    // point (as if the full-duty iteration had settled on a root below
    // the floor while a higher one exists). No duty factor <= 1
    // balances there: before the fix the limiter's root k > 1 was
    // clamped to 1 and reported at the floor with load != supply.
    let (e, r0) = (12.0, 0.1);
    let mut cur = [0.0; 2];
    // Motors linear at the floor (the limiter's quadratic has a root
    // k > 1), and motors off at the floor (no root at all).
    for (emf, vf) in [([5.0, 5.0], 9.0), ([9.5, 9.5], 9.0)] {
        let m = motors(&[0.9, 0.9], &emf, 60.0);
        let b = limit_at_floor(1.0 / r0, e, vf, &m, 5.0, &mut cur);
        let expect = bisect(&one(e, r0), &m, 5.0);
        assert!(expect > vf + 0.2, "{expect}");
        assert_eq!(b.duty_scale, 1.0);
        assert!((b.voltage_v - expect).abs() < 1e-9, "{b:?} vs {expect}");
        let supply = (e - b.voltage_v) / r0;
        assert!(
            (b.load_a / supply - 1.0).abs() < 1e-9,
            "{b:?}: supply {supply}"
        );
    }
    // Where full duty does overload the floor, the limiter still scales.
    let m = motors(&[0.9, 0.9], &[9.5, 9.5], 60.0);
    let b = limit_at_floor(1.0 / r0, e, 11.9, &m, 5.0, &mut cur);
    assert!(b.duty_scale < 1.0 && b.voltage_v == 11.9, "{b:?}");
    assert!((b.load_a / ((e - 11.9) / r0) - 1.0).abs() < 1e-12, "{b:?}");
}

#[test]
fn a_single_batterys_current_is_the_load_bit_for_bit() {
    let (emf, g) = (12.4, 1.0 / 0.02);
    let s = Source::single(emf, g, true);
    // Linear motors (the inlined path) and one at its limit at E (the
    // general path), each at an operating point below E.
    for (duty, limit) in [([0.5, 0.6, 0.55, 0.5], 60.0), ([1.0, 0.6, 0.55, 0.5], 25.0)] {
        let m = motors(&duty, &[1.5, 2.0, 1.8, 1.5], limit);
        let mut cur = [0.0; 4];
        let b = solve(&s, 0.0, &m, 5.0, &mut cur);
        assert!(b.voltage_v < emf && b.duty_scale == 1.0, "{b:?}");
        let battery = s.battery_current(Sharing::Resistance, emf, g, b.voltage_v, b.load_a);
        assert_eq!(battery.to_bits(), b.load_a.to_bits(), "{duty:?}");
        // And the load is still what the motors and avionics draw.
        let drawn = m.bus_current(b.voltage_v, 1.0) + 5.0 / b.voltage_v;
        assert!(
            (b.load_a - drawn).abs() < 1e-12 * drawn,
            "{} vs {drawn}",
            b.load_a
        );
    }
}

//! The master's semantics on closures: the one-step delay, same-step
//! (Gauss–Seidel) order, multi-rate periods, parallel = serialized bit for
//! bit, accuracy against a closed form, and every refusal.

use lockstep_cosim::{
    Connect, CosimError, FnParticipant, FnTransfer, Mode, Participant, ParticipantReport,
    SystemBuilder, TransferSpec, Variable,
};
use lockstep_harness::Micros;

const MS: Micros = Micros(1000);

/// Outputs how many steps it has taken (and the time it reached).
fn counter() -> Box<dyn Participant> {
    let mut n = 0.0;
    Box::new(FnParticipant::new(
        vec![],
        vec![
            Variable::scalar("count", 0.0, "steps taken"),
            Variable::scalar("time_s", 0.0, "time reached"),
        ],
        move |t, dt, _, out| {
            n += 1.0;
            out[0] = n;
            out[1] = (t + dt).as_secs_f64();
            Ok(())
        },
    ))
}

/// Outputs the input it held over its last step.
fn echo() -> Box<dyn Participant> {
    Box::new(FnParticipant::new(
        vec![Variable::scalar("in", -1.0, "")],
        vec![Variable::scalar("out", -1.0, "")],
        |_, _, i, o| {
            o[0] = i[0];
            Ok(())
        },
    ))
}

pub(crate) fn wire(name: &str, from: &str, to: &str, same_step: bool) -> TransferSpec {
    TransferSpec {
        name: name.into(),
        same_step,
        reads: vec![from.into()],
        writes: vec![to.into()],
        ..TransferSpec::default()
    }
}

#[test]
fn a_transfer_function_delivers_outputs_one_step_later() {
    let mut b = SystemBuilder::new(MS);
    b.participant("clock", None, counter()).unwrap();
    b.participant("echo", None, echo()).unwrap();
    b.transfer(
        wire("w", "clock.count", "echo.in", false),
        Box::new(Connect::default()),
    )
    .unwrap();
    let mut c = b.build(Mode::Serialized).unwrap();
    let count = c.find_output("clock.count").unwrap();
    let out = c.find_output("echo.out").unwrap();
    // At time 0 the function already ran on the initial outputs.
    assert_eq!(c.input("echo.in").unwrap(), &[0.0]);
    for k in 1..=5u64 {
        c.step().unwrap();
        assert_eq!(c.now(), Micros(k * 1000));
        assert_eq!(c.output(count), &[k as f64]);
        // Held over step k: the clock's output at the end of step k - 1.
        assert_eq!(c.output(out), &[(k - 1) as f64], "step {k}");
    }
}

#[test]
fn a_same_step_function_orders_its_participants_within_the_step() {
    let mut b = SystemBuilder::new(MS);
    // Declared first, but it must step after the clock.
    b.participant("echo", None, echo()).unwrap();
    b.participant("clock", None, counter()).unwrap();
    b.transfer(
        wire("w", "clock.count", "echo.in", true),
        Box::new(Connect::default()),
    )
    .unwrap();
    let mut c = b.build(Mode::Parallel { threads: 2 }).unwrap();
    assert_eq!(c.waves(), 2);
    let out = c.find_output("echo.out").unwrap();
    for k in 1..=5u64 {
        c.step().unwrap();
        assert_eq!(c.output(out), &[k as f64], "step {k}");
    }
}

#[test]
fn periods_set_when_participants_step_and_when_their_outputs_are_seen() {
    // The clock steps every 3 ms, the function runs every 2 ms: the echo
    // sees at t the clock's count published at the last multiple of 2 ms
    // before t (its outputs appear at the end of each 3 ms step).
    let mut b = SystemBuilder::new(MS);
    b.participant("clock", Some(Micros(3000)), counter())
        .unwrap();
    b.participant("echo", None, echo()).unwrap();
    let mut spec = wire("w", "clock.count", "echo.in", false);
    spec.period_us = Some(Micros(2000));
    b.transfer(spec, Box::new(Connect::default())).unwrap();
    let mut c = b.build(Mode::Serialized).unwrap();
    let count = c.find_output("clock.count").unwrap();
    let out = c.find_output("echo.out").unwrap();
    let mut seen = Vec::new();
    for _ in 0..12 {
        c.step().unwrap();
        seen.push((c.output(count)[0], c.output(out)[0]));
    }
    // count: published at 3, 6, 9, 12 ms. echo.in written at 0, 2, 4, ...
    // from the count published then; echo.out(t) = echo.in held over
    // [t - 1, t].
    let want = [
        (0.0, 0.0), // 1 ms: in written at 0 (count 0)
        (0.0, 0.0), // 2 ms
        (1.0, 0.0), // 3 ms: in written at 2 (count 0)
        (1.0, 0.0), // 4 ms
        (1.0, 1.0), // 5 ms: in written at 4 (count 1)
        (2.0, 1.0), // 6 ms
        (2.0, 2.0), // 7 ms: in written at 6 (count 2)
        (2.0, 2.0), // 8 ms
        (3.0, 2.0), // 9 ms: in written at 8 (count 2)
        (3.0, 2.0), // 10 ms
        (3.0, 3.0), // 11 ms: in written at 10 (count 3)
        (4.0, 3.0), // 12 ms
    ];
    assert_eq!(seen, want);
    assert_eq!(c.steps_of(0), 4);
    assert_eq!(c.steps_of(1), 12);
}

/// Lorenz's system split into three participants, each integrating its own
/// coordinate with RK4 substeps on the others held: chaotic, so any
/// difference in any bit would grow to the attractor's size.
fn lorenz(mode: Mode) -> Vec<u64> {
    let coordinate = |k: usize| -> Box<dyn Participant> {
        let names = ["x", "y", "z"];
        let start = [1.0, 1.0, 1.0];
        let mut s = start[k];
        Box::new(FnParticipant::new(
            vec![
                Variable::scalar(names[(k + 1) % 3], start[(k + 1) % 3], ""),
                Variable::scalar(names[(k + 2) % 3], start[(k + 2) % 3], ""),
            ],
            vec![Variable::scalar(names[k], start[k], "")],
            move |_, dt, i, o| {
                let (a, b) = (i[0], i[1]);
                let f = |s: f64| match k {
                    0 => 10.0 * (a - s),
                    1 => b * (28.0 - a) - s, // y' = x (28 - z) - y: a = z, b = x
                    _ => a * b - 8.0 / 3.0 * s, // z' = x y - 8/3 z
                };
                let h = dt.as_secs_f64() / 10.0;
                for _ in 0..10 {
                    let k1 = f(s);
                    let k2 = f(s + 0.5 * h * k1);
                    let k3 = f(s + 0.5 * h * k2);
                    let k4 = f(s + h * k3);
                    s += h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4);
                }
                o[0] = s;
                Ok(())
            },
        ))
    };
    let mut b = SystemBuilder::new(MS);
    for (k, n) in ["px", "py", "pz"].iter().enumerate() {
        b.participant(n, None, coordinate(k)).unwrap();
    }
    // Each participant's inputs: the next two coordinates in turn.
    let links = [
        ("to_x", ["py.y", "pz.z"], ["px.y", "px.z"]),
        ("to_y", ["pz.z", "px.x"], ["py.z", "py.x"]),
        ("to_z", ["px.x", "py.y"], ["pz.x", "pz.y"]),
    ];
    for (name, from, to) in links {
        b.transfer(
            TransferSpec {
                name: name.into(),
                reads: from.iter().map(|s| s.to_string()).collect(),
                writes: to.iter().map(|s| s.to_string()).collect(),
                ..TransferSpec::default()
            },
            Box::new(Connect::default()),
        )
        .unwrap();
    }
    let mut c = b.build(mode).unwrap();
    let outs: Vec<_> = ["px.x", "py.y", "pz.z"]
        .iter()
        .map(|n| c.find_output(n).unwrap())
        .collect();
    let mut bits = Vec::new();
    c.run_until(Micros(20_000_000), |c| {
        for o in &outs {
            bits.push(c.output(*o)[0].to_bits());
        }
        Ok(())
    })
    .unwrap();
    bits
}

#[test]
fn parallel_and_serialized_runs_give_the_same_bits() {
    let serial = lorenz(Mode::Serialized);
    // On the attractor (|x| reaches beyond 10), not at rest.
    let x_max = serial
        .iter()
        .step_by(3)
        .map(|b| f64::from_bits(*b).abs())
        .fold(0.0, f64::max);
    assert!(x_max > 10.0, "{x_max}");
    for threads in [1, 2, 3, 8] {
        assert!(
            lorenz(Mode::Parallel { threads }) == serial,
            "{threads} threads differ from the serialized run"
        );
    }
}

/// x' = y, y' = -x split in two with the one-step delay: the error against
/// cos / -sin after 2 s, for a step of `dt`.
fn oscillator_error(dt: Micros) -> f64 {
    let part = |sign: f64, start: f64, name: &str| -> Box<dyn Participant> {
        let mut s = start;
        Box::new(FnParticipant::new(
            vec![Variable::scalar("u", 0.0, "")],
            vec![Variable::scalar(name, start, "")],
            move |_, dt, i, o| {
                // Exact over the step for the held input.
                s += sign * i[0] * dt.as_secs_f64();
                o[0] = s;
                Ok(())
            },
        ))
    };
    let mut b = SystemBuilder::new(dt);
    b.participant("a", None, part(1.0, 1.0, "x")).unwrap();
    b.participant("b", None, part(-1.0, 0.0, "y")).unwrap();
    b.transfer(
        wire("ab", "a.x", "b.u", false),
        Box::new(Connect::default()),
    )
    .unwrap();
    b.transfer(
        wire("ba", "b.y", "a.u", false),
        Box::new(Connect::default()),
    )
    .unwrap();
    let mut c = b.build(Mode::Parallel { threads: 2 }).unwrap();
    c.run_until(Micros(2_000_000), |_| Ok(())).unwrap();
    let x = c.output(c.find_output("a.x").unwrap())[0];
    let y = c.output(c.find_output("b.y").unwrap())[0];
    let t: f64 = 2.0;
    ((x - t.cos()).powi(2) + (y + t.sin()).powi(2)).sqrt()
}

#[test]
fn the_one_step_delay_is_first_order_accurate_against_the_closed_form() {
    let e1 = oscillator_error(Micros(4000));
    let e2 = oscillator_error(Micros(2000));
    let e3 = oscillator_error(Micros(1000));
    // Explicit (Jacobi) coupling of a harmonic oscillator: the error halves
    // with the step.
    for (a, b) in [(e1, e2), (e2, e3)] {
        let ratio = a / b;
        assert!((1.9..2.1).contains(&ratio), "{a} / {b} = {ratio}");
    }
    assert!(e3 < 2e-3, "{e3}");
}

fn err(r: Result<lockstep_cosim::Cosim, CosimError>) -> String {
    r.map(|_| ()).unwrap_err().to_string()
}

#[test]
fn a_system_that_does_not_fit_together_is_refused_naming_the_culprit() {
    let two = || {
        let mut b = SystemBuilder::new(MS);
        b.participant("clock", None, counter()).unwrap();
        b.participant("echo", None, echo()).unwrap();
        b
    };
    let mut b = two();
    b.transfer(
        wire("w", "clok.count", "echo.in", false),
        Box::new(Connect::default()),
    )
    .unwrap();
    assert_eq!(
        err(b.build(Mode::Serialized)),
        "transfer function `w`: reads `clok.count`: no participant `clok` (participants: clock, echo)"
    );
    let mut b = two();
    b.transfer(
        wire("w", "clock.cnt", "echo.in", false),
        Box::new(Connect::default()),
    )
    .unwrap();
    assert_eq!(
        err(b.build(Mode::Serialized)),
        "transfer function `w`: reads `clock.cnt`: participant `clock` has no output `cnt` (outputs: count, time_s)"
    );
    let mut b = two();
    b.transfer(
        wire("w", "clock.count", "echo.out", false),
        Box::new(Connect::default()),
    )
    .unwrap();
    assert_eq!(
        err(b.build(Mode::Serialized)),
        "transfer function `w`: writes `echo.out`: participant `echo` has no input `out` (inputs: in)"
    );
    let mut b = two();
    b.transfer(
        wire("w", "clock", "echo.in", false),
        Box::new(Connect::default()),
    )
    .unwrap();
    assert_eq!(
        err(b.build(Mode::Serialized)),
        "transfer function `w`: reads `clock`: expected `participant.variable`"
    );
    let mut b = two();
    b.transfer(
        wire("w1", "clock.count", "echo.in", false),
        Box::new(Connect::default()),
    )
    .unwrap();
    b.transfer(
        wire("w2", "clock.time_s", "echo.in", false),
        Box::new(Connect::default()),
    )
    .unwrap();
    assert_eq!(
        err(b.build(Mode::Serialized)),
        "transfer function `w2`: writes `echo.in`, which transfer function `w1` writes too"
    );
    let mut b = two();
    let mut spec = wire("w", "clock.count", "echo.in", false);
    spec.period_us = Some(Micros(1500));
    b.transfer(spec, Box::new(Connect::default())).unwrap();
    assert_eq!(
        err(b.build(Mode::Serialized)),
        "transfer function `w`: period 1500 us is not a positive multiple of the system's step 1000 us"
    );
    let mut b = SystemBuilder::new(MS);
    b.participant("clock", Some(Micros(2500)), counter())
        .unwrap();
    assert_eq!(
        err(b.build(Mode::Serialized)),
        "participant `clock`: period 2500 us is not a positive multiple of the system's step 1000 us"
    );
    let mut b = two();
    b.transfer(
        TransferSpec {
            name: "w".into(),
            reads: vec!["clock.count".into(), "clock.time_s".into()],
            writes: vec!["echo.in".into()],
            ..TransferSpec::default()
        },
        Box::new(Connect::default()),
    )
    .unwrap();
    assert_eq!(
        err(b.build(Mode::Serialized)),
        "transfer function `w`: it reads 2 values and writes 1: a connection needs as many of each"
    );
    let mut b = two();
    b.transfer(
        wire("w", "clock.count", "echo.in", false),
        Box::new(Connect::default()),
    )
    .unwrap();
    assert_eq!(
        b.transfer(
            wire("w", "clock.count", "echo.in", false),
            Box::new(Connect::default())
        )
        .map(|_| ())
        .unwrap_err()
        .to_string(),
        "transfer function `w`: another transfer function has this name"
    );
    let mut b = SystemBuilder::new(MS);
    b.participant("clock", None, counter()).unwrap();
    assert_eq!(
        b.participant("clock", None, counter())
            .map(|_| ())
            .unwrap_err()
            .to_string(),
        "participant `clock`: another participant has this name"
    );
    assert_eq!(
        b.participant("a.b", None, counter())
            .map(|_| ())
            .unwrap_err()
            .to_string(),
        "participant `a.b`: `a.b`: a participant's name holds only letters, digits, `_` and `-` (it names files, columns and `participant.variable`)"
    );
}

#[test]
fn same_step_cycles_and_mismatched_periods_are_refused() {
    let mut b = SystemBuilder::new(MS);
    b.participant("a", None, echo()).unwrap();
    b.participant("b", None, echo()).unwrap();
    b.participant("c", None, echo()).unwrap();
    b.transfer(
        wire("ab", "a.out", "b.in", true),
        Box::new(Connect::default()),
    )
    .unwrap();
    b.transfer(
        wire("bc", "b.out", "c.in", true),
        Box::new(Connect::default()),
    )
    .unwrap();
    b.transfer(
        wire("ca", "c.out", "a.in", true),
        Box::new(Connect::default()),
    )
    .unwrap();
    assert_eq!(
        err(b.build(Mode::Serialized)),
        "same-step transfer functions: they form a cycle: a -> b -> c -> a (a same-step loop has no order to step in; make one of its functions step-delayed)"
    );
    // The same loop with one delayed link is a valid system of three waves.
    let mut b = SystemBuilder::new(MS);
    b.participant("a", None, echo()).unwrap();
    b.participant("b", None, echo()).unwrap();
    b.participant("c", None, echo()).unwrap();
    b.transfer(
        wire("ab", "a.out", "b.in", true),
        Box::new(Connect::default()),
    )
    .unwrap();
    b.transfer(
        wire("bc", "b.out", "c.in", true),
        Box::new(Connect::default()),
    )
    .unwrap();
    b.transfer(
        wire("ca", "c.out", "a.in", false),
        Box::new(Connect::default()),
    )
    .unwrap();
    assert_eq!(b.build(Mode::Serialized).unwrap().waves(), 3);
    // A participant feeding itself in the same step.
    let mut b = SystemBuilder::new(MS);
    b.participant("a", None, echo()).unwrap();
    b.transfer(
        wire("aa", "a.out", "a.in", true),
        Box::new(Connect::default()),
    )
    .unwrap();
    assert_eq!(
        err(b.build(Mode::Serialized)),
        "same-step transfer functions: they form a cycle: a -> a (a same-step loop has no order to step in; make one of its functions step-delayed)"
    );
    let mut b = SystemBuilder::new(MS);
    b.participant("clock", Some(Micros(2000)), counter())
        .unwrap();
    b.participant("echo", None, echo()).unwrap();
    b.transfer(
        wire("w", "clock.count", "echo.in", true),
        Box::new(Connect::default()),
    )
    .unwrap();
    assert_eq!(
        err(b.build(Mode::Serialized)),
        "transfer function `w`: a same-step function runs with the participants it connects: participant `clock` steps every 2000 us, the function every 1000 us"
    );
}

#[test]
fn failures_name_the_participant_or_function_and_the_time() {
    let failing = || -> Box<dyn Participant> {
        Box::new(FnParticipant::new(
            vec![],
            vec![Variable::scalar("v", 0.0, "")],
            |t, _, _, _| {
                if t >= Micros(3000) {
                    Err("diverged".into())
                } else {
                    Ok(())
                }
            },
        ))
    };
    for mode in [Mode::Serialized, Mode::Parallel { threads: 2 }] {
        let mut b = SystemBuilder::new(MS);
        b.participant("ok", None, counter()).unwrap();
        b.participant("bad", None, failing()).unwrap();
        b.participant("bad2", None, failing()).unwrap();
        let mut c = b.build(mode).unwrap();
        let e = c.run_until(Micros(10_000), |_| Ok(())).unwrap_err();
        // Both fail in the same step: the first declared is reported.
        assert_eq!(
            e.to_string(),
            "participant `bad` failed in step at 3000 us: diverged"
        );
        assert_eq!(c.now(), Micros(3000));
    }
    let mut b = SystemBuilder::new(MS);
    b.participant("clock", None, counter()).unwrap();
    b.participant("echo", None, echo()).unwrap();
    b.transfer(
        wire("w", "clock.count", "echo.in", false),
        Box::new(FnTransfer::new(|t, r, w| {
            if t == Micros(2000) {
                w[0] = vec![r[0][0], 0.0];
            } else {
                w[0][0] = r[0][0];
            }
            Ok(())
        })),
    )
    .unwrap();
    let mut c = b.build(Mode::Serialized).unwrap();
    c.step().unwrap();
    assert_eq!(
        c.step().unwrap_err().to_string(),
        "transfer function `w` failed at 2000 us: it wrote 2 values to `echo.in`, which holds 1"
    );
}

/// A participant whose finish says `{"ok": true}`, or fails with the text.
struct Finishing(Option<&'static str>);

impl Participant for Finishing {
    fn outputs(&self) -> Vec<Variable> {
        vec![]
    }
    fn inputs(&self) -> Vec<Variable> {
        vec![]
    }
    fn set_input(&mut self, _: usize, _: &[f64]) -> Result<(), lockstep_cosim::ParticipantError> {
        Ok(())
    }
    fn step(&mut self, _: Micros, _: Micros) -> Result<(), lockstep_cosim::ParticipantError> {
        Ok(())
    }
    fn output(&self, _: usize, _: &mut [f64]) -> Result<(), lockstep_cosim::ParticipantError> {
        Ok(())
    }
    fn finish(&mut self) -> Result<ParticipantReport, lockstep_cosim::ParticipantError> {
        match self.0 {
            None => Ok(ParticipantReport::Other(serde_json::json!({ "ok": true }))),
            Some(e) => Err(lockstep_cosim::ParticipantError(e.into())),
        }
    }
}

#[test]
fn a_participant_failing_to_finish_loses_no_other_report() {
    let mut b = SystemBuilder::new(MS);
    b.participant("first", None, Box::new(Finishing(None)))
        .unwrap();
    let bad = Finishing(Some("its disk is full"));
    b.participant("bad", None, Box::new(bad)).unwrap();
    b.participant("last", None, Box::new(Finishing(None)))
        .unwrap();
    let mut c = b.build(Mode::Serialized).unwrap();
    c.step().unwrap();
    let (reports, error) = c.finish_all();
    assert_eq!(
        error.unwrap().to_string(),
        "participant `bad` failed in finish at 1000 us: its disk is full"
    );
    let names: Vec<&str> = reports.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["first", "bad", "last"]);
    let ok = ParticipantReport::Other(serde_json::json!({ "ok": true }));
    assert_eq!(
        [&reports[0].1, &reports[1].1, &reports[2].1],
        [&ok, &ParticipantReport::None, &ok]
    );
    // Finished once: a second call has nothing more to say.
    let (again, error) = c.finish_all();
    assert!(again.is_empty() && error.is_none());
}

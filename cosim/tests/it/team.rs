//! The parallel mode's worker team: the serialized run's bits with more
//! participants than threads, mixed periods and a same-step chain; slow
//! participants (the team parks and is woken) and idle pauses; steps taken
//! from different threads; the first declared failure whatever finished
//! first; a panicking participant (the panic reaches the caller, every
//! participant is still there to finish); a dropped system.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Duration;

use lockstep_cosim::{Connect, Cosim, FnParticipant, Mode, Participant, SystemBuilder, Variable};
use lockstep_harness::Micros;

use crate::master::wire;

const MS: Micros = Micros(1000);

/// A participant iterating a chaotic map of its state and its input (any
/// change in what it is given, or when, changes every later bit); every
/// `slow_every`-th step it sleeps `slow` first, and at `fail_at` it fails
/// (or panics, with `panic`).
#[derive(Clone, Copy, Default)]
struct Spec {
    seed: f64,
    slow_every: u64,
    slow: Duration,
    fail_at: Option<Micros>,
    panic: bool,
}

fn chaotic(s: Spec) -> Box<dyn Participant> {
    let mut x = s.seed;
    let mut n = 0u64;
    Box::new(FnParticipant::new(
        vec![Variable::scalar("in", 0.5, "")],
        vec![Variable::scalar("out", s.seed, "")],
        move |t, _, i, o| {
            n += 1;
            if s.slow_every > 0 && n.is_multiple_of(s.slow_every) {
                std::thread::sleep(s.slow);
            }
            if s.fail_at.is_some_and(|at| t >= at) {
                if s.panic {
                    panic!("the model blew up at {t}");
                }
                return Err(format!("diverged at {t}"));
            }
            for _ in 0..50 {
                x = 3.9 * x * (1.0 - x);
            }
            x = (0.9 * x + 0.1 * i[0]).clamp(1e-9, 1.0 - 1e-9);
            o[0] = x;
            Ok(())
        },
    ))
}

/// Seven participants (periods 1, 1, 1, 2, 3, 1, 1 ms) in a ring of
/// links, two of them same-step (three waves: p0 → p1 → p2 within a
/// step), the others delayed; `specs[k]` adjusts participant k.
fn system(mode: Mode, specs: &[(usize, Spec)]) -> Cosim {
    let periods = [1, 1, 1, 2, 3, 1, 1];
    let mut b = SystemBuilder::new(MS);
    for (k, p) in periods.iter().enumerate() {
        let mut s = Spec {
            seed: 0.1 + 0.11 * k as f64,
            ..Spec::default()
        };
        if let Some((_, given)) = specs.iter().find(|(j, _)| *j == k) {
            s = Spec {
                seed: s.seed,
                ..*given
            };
        }
        b.participant(&format!("p{k}"), Some(Micros(p * 1000)), chaotic(s))
            .unwrap();
    }
    for k in 0..7 {
        let next = (k + 1) % 7;
        let (same_step, period) = match k {
            0 | 1 => (true, None),
            // Links out of the 2 and 3 ms participants run at their period.
            3 => (false, Some(Micros(2000))),
            4 => (false, Some(Micros(3000))),
            _ => (false, None),
        };
        let mut spec = wire(
            &format!("w{k}"),
            &format!("p{k}.out"),
            &format!("p{next}.in"),
            same_step,
        );
        spec.period_us = period;
        b.transfer(spec, Box::new(Connect::default())).unwrap();
    }
    b.build(mode).unwrap()
}

/// Every participant's output after every step, as bits.
fn bits(c: &mut Cosim, until: Micros) -> Vec<u64> {
    let outs: Vec<_> = (0..7)
        .map(|k| c.find_output(&format!("p{k}.out")).unwrap())
        .collect();
    let mut bits = Vec::new();
    c.run_until(until, |c| {
        bits.extend(outs.iter().map(|o| c.output(*o)[0].to_bits()));
        Ok(())
    })
    .unwrap();
    bits
}

#[test]
fn more_participants_than_threads_mixed_periods_and_waves_give_the_serialized_bits() {
    let until = Micros(600_000);
    let mut serial = system(Mode::Serialized, &[]);
    assert_eq!(serial.waves(), 3);
    let want = bits(&mut serial, until);
    assert_eq!(want.len(), 600 * 7);
    // Chaotic, not settled: the last outputs still differ from the ones
    // 100 steps earlier.
    assert_ne!(
        want[want.len() - 7..],
        want[want.len() - 707..want.len() - 700]
    );
    for threads in [2, 3, 4, 7, 16] {
        let mut c = system(Mode::Parallel { threads }, &[]);
        assert!(
            bits(&mut c, until) == want,
            "{threads} threads differ from the serialized run"
        );
        for k in 0..7 {
            assert_eq!(
                c.steps_of(k),
                serial.steps_of(k),
                "p{k}'s steps on {threads} threads"
            );
        }
    }
}

#[test]
fn slow_participants_and_pauses_change_no_bit() {
    let until = Micros(120_000);
    let want = bits(&mut system(Mode::Serialized, &[]), until);
    // p0 sleeps 3 ms every 10th step (the others' threads park waiting for
    // it and are woken), p5 1 ms every 7th; the run pauses 5 ms (the team
    // parks) every 40 steps.
    let slow = |every, ms| Spec {
        slow_every: every,
        slow: Duration::from_millis(ms),
        ..Spec::default()
    };
    let mut c = system(
        Mode::Parallel { threads: 3 },
        &[(0, slow(10, 3)), (5, slow(7, 1))],
    );
    let outs: Vec<_> = (0..7)
        .map(|k| c.find_output(&format!("p{k}.out")).unwrap())
        .collect();
    let mut got = Vec::new();
    while c.now() < until {
        c.step().unwrap();
        got.extend(outs.iter().map(|o| c.output(*o)[0].to_bits()));
        if c.now().0.is_multiple_of(40_000) {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    assert!(
        got == want,
        "a slow participant or a pause changed the outputs"
    );
}

#[test]
fn steps_taken_from_different_threads_give_the_serialized_bits() {
    let until = Micros(90_000);
    let want = bits(&mut system(Mode::Serialized, &[]), until);
    // p3 (the other thread's, in the first wave) sleeps 1 ms every 5th of
    // its steps: the caller parks waiting for it and must be woken,
    // whichever thread it is.
    let slow = Spec {
        slow_every: 5,
        slow: Duration::from_millis(1),
        ..Spec::default()
    };
    let mut c = system(Mode::Parallel { threads: 2 }, &[(3, slow)]);
    let mut got = Vec::new();
    // Three callers in turn, 30 steps each (a C host may step from any
    // thread, one at a time).
    for _ in 0..3 {
        let (back, steps) = std::thread::spawn(move || {
            let mut c = c;
            let outs: Vec<_> = (0..7)
                .map(|k| c.find_output(&format!("p{k}.out")).unwrap())
                .collect();
            let mut steps = Vec::new();
            for _ in 0..30 {
                c.step().unwrap();
                steps.extend(outs.iter().map(|o| c.output(*o)[0].to_bits()));
            }
            (c, steps)
        })
        .join()
        .unwrap();
        c = back;
        got.extend(steps);
    }
    assert!(got == want);
}

#[test]
fn the_first_declared_failure_is_reported_whatever_finished_first() {
    // In the first wave at 6 ms: p3 (due every 2 ms) fails after a 20 ms
    // sleep, p4 (every 3 ms) and p6 at once; p1 (the second wave) would
    // fail too, but the step ends with the first wave's failure. p3 is the
    // first declared of those that fail.
    let at = Some(Micros(6000));
    let slow_fail = Spec {
        slow_every: 1,
        slow: Duration::from_millis(20),
        fail_at: at,
        ..Spec::default()
    };
    let fail = Spec {
        fail_at: at,
        ..Spec::default()
    };
    for mode in [Mode::Serialized, Mode::Parallel { threads: 4 }] {
        let mut c = system(mode, &[(3, slow_fail), (4, fail), (6, fail), (1, fail)]);
        let e = c.run_until(Micros(20_000), |_| Ok(())).unwrap_err();
        assert_eq!(
            e.to_string(),
            "participant `p3` failed in step at 6000 us: diverged at 6000 us",
            "{mode:?}"
        );
        assert_eq!(c.now(), Micros(6000));
    }
}

#[test]
fn a_panicking_participant_reaches_the_caller_and_loses_no_participant() {
    let boom = Spec {
        fail_at: Some(Micros(3000)),
        panic: true,
        ..Spec::default()
    };
    let mut c = system(Mode::Parallel { threads: 3 }, &[(5, boom)]);
    for _ in 0..3 {
        c.step().unwrap();
    }
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let panicked = catch_unwind(AssertUnwindSafe(|| c.step()));
    std::panic::set_hook(hook);
    let payload = panicked.expect_err("the participant's panic reaches the caller");
    let text = payload
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert_eq!(text, "the model blew up at 3000 us");
    // Every participant is back in its place: all seven finish, in order.
    assert_eq!(c.names(), ["p0", "p1", "p2", "p3", "p4", "p5", "p6"]);
    let (reports, error) = c.finish_all();
    assert!(error.is_none());
    assert_eq!(reports.len(), 7);
}

#[test]
fn a_dropped_system_ends_its_team() {
    // Built, stepped and dropped many times over: each team's threads end
    // with it (a leak would pile up 1,500 parked threads here; the count
    // of this process's threads is read from /proc).
    let threads = || std::fs::read_dir("/proc/self/task").unwrap().count();
    let before = threads();
    for _ in 0..250 {
        let mut c = system(Mode::Parallel { threads: 7 }, &[]);
        c.step().unwrap();
    }
    // Other tests of this binary may run threads meanwhile: far fewer than
    // the 1,500 a leak would leave.
    assert!(
        threads() < before + 64,
        "{} threads left of {before}",
        threads()
    );
}

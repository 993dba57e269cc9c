//! A participant behind the wire (its calls as messages to another thread,
//! as to another process) steps as it does in place: the same outputs bit
//! for bit, NaN included; its period agreed at connection; its errors
//! reported.

use lockstep_cosim::wire::{RemoteParticipant, Reply, Request, Transport, WireVariable, answer};
use lockstep_cosim::{
    Connect, FnParticipant, Mode, Participant, SystemBuilder, TransferSpec, Variable,
};
use lockstep_harness::Micros;
use lockstep_remote::thread::InThread;

const MS: Micros = Micros(1000);
const MS2: Micros = Micros(2000);

/// A damped oscillator driven by its input; NaN on its `flag` output every
/// third step; fails when told to at `fail_at_us`.
fn oscillator(fail_at_us: Option<u64>) -> Box<dyn Participant> {
    let (mut x, mut v) = (1.0f64, 0.0f64);
    let mut n = 0u64;
    Box::new(FnParticipant::new(
        vec![Variable::scalar("force", 0.0, "")],
        vec![
            Variable::vector("state", &[1.0, 0.0], ""),
            Variable::scalar("flag", 0.0, ""),
        ],
        move |t, dt, i, o| {
            if Some(t.0) == fail_at_us {
                return Err("the oscillator diverged".into());
            }
            let h = dt.as_secs_f64();
            let a = -4.0 * x - 0.3 * v + i[0];
            v += a * h;
            x += v * h;
            n += 1;
            o[0] = x;
            o[1] = v;
            o[2] = if n.is_multiple_of(3) {
                f64::NAN
            } else {
                1.0 / 3.0
            };
            Ok(())
        },
    ))
}

/// The far end: a thread answering with `answer`, through the wire format.
fn far_end(mut part: Box<dyn Participant>) -> InThread {
    InThread::serve(move |request| answer(part.as_mut(), request))
}

fn system(remote: bool, fail_at_us: Option<u64>) -> lockstep_cosim::Cosim {
    let mut b = SystemBuilder::new(MS);
    let osc = oscillator(fail_at_us);
    let osc: Box<dyn Participant> = if remote {
        Box::new(RemoteParticipant::connect(far_end(osc), MS2).unwrap())
    } else {
        osc
    };
    b.participant("osc", Some(MS2), osc).unwrap();
    b.participant(
        "push",
        None,
        Box::new(FnParticipant::new(
            vec![Variable::vector("x", &[0.0, 0.0], "")],
            vec![Variable::scalar("f", 0.0, "")],
            |_, _, i, o| {
                o[0] = -0.5 * i[0];
                Ok(())
            },
        )),
    )
    .unwrap();
    for (name, from, to) in [("a", "osc.state", "push.x"), ("b", "push.f", "osc.force")] {
        b.transfer(
            TransferSpec {
                name: name.into(),
                reads: vec![from.into()],
                writes: vec![to.into()],
                ..TransferSpec::default()
            },
            Box::new(Connect::default()),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    }
    b.build(Mode::Parallel { threads: 2 }).unwrap()
}

#[test]
fn a_participant_over_the_wire_steps_as_in_place() {
    let mut here = system(false, None);
    let mut there = system(true, None);
    let (s1, f1) = (
        here.find_output("osc.state").unwrap(),
        here.find_output("osc.flag").unwrap(),
    );
    let (s2, f2) = (
        there.find_output("osc.state").unwrap(),
        there.find_output("osc.flag").unwrap(),
    );
    let mut nans = 0;
    for _ in 0..200 {
        here.step().unwrap();
        there.step().unwrap();
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(here.output(s1)), bits(there.output(s2)));
        assert_eq!(bits(here.output(f1)), bits(there.output(f2)));
        nans += usize::from(there.output(f2)[0].is_nan());
    }
    assert!(nans > 10);
    there.finish().unwrap();
}

#[test]
fn a_remote_participants_period_and_errors_are_reported() {
    let mut there = system(true, Some(10_000));
    let e = (0..20).find_map(|_| there.step().err()).unwrap();
    assert_eq!(
        e.to_string(),
        "participant `osc` failed in step at 10000 us: the oscillator diverged"
    );
    // Agreed at 2 ms, declared at another period: refused when built.
    let p = RemoteParticipant::connect(far_end(oscillator(None)), MS2).unwrap();
    let mut b = SystemBuilder::new(MS);
    b.participant("osc", Some(Micros(4000)), Box::new(p))
        .unwrap();
    assert_eq!(
        b.build(Mode::Serialized).err().unwrap().to_string(),
        "participant `osc`: it agreed to step 2000 us when it connected, not 4000 us"
    );
}

/// Calls `answer` on the oscillator with `r`; its error.
fn refused(r: &Request) -> String {
    let mut p = oscillator(None);
    answer(p.as_mut(), &postcard::to_stdvec(r).unwrap())
        .0
        .unwrap_err()
}

#[test]
fn a_malformed_call_is_answered_with_an_error_not_a_panic() {
    let step = |inputs: Vec<Vec<f64>>| Request::Step {
        t_us: 0,
        dt_us: 1000,
        inputs,
    };
    assert_eq!(
        refused(&step(vec![])),
        "a step with 0 inputs; the participant has 1"
    );
    assert_eq!(
        refused(&step(vec![vec![1.0], vec![2.0]])),
        "a step with 2 inputs; the participant has 1"
    );
    assert_eq!(
        refused(&step(vec![vec![]])),
        "a step with 0 values for input `force`, which holds 1"
    );
    let mut p = oscillator(None);
    assert!(
        answer(p.as_mut(), b"\xff\xff\xff")
            .0
            .unwrap_err()
            .starts_with("a malformed request: ")
    );
    // Well formed, it steps.
    let mut p = oscillator(None);
    let reply = answer(
        p.as_mut(),
        &postcard::to_stdvec(&step(vec![vec![0.5]])).unwrap(),
    );
    match postcard::from_bytes::<Reply>(&reply.0.unwrap()).unwrap() {
        Reply::Stepped { outputs } => assert_eq!(outputs.len(), 2),
        other => panic!("{other:?}"),
    }
}

/// Answers `Describe` with a variable of no values.
#[derive(Debug)]
struct Empty;

impl Transport for Empty {
    fn call(&mut self, request: Vec<u8>) -> Result<Vec<u8>, String> {
        let reply = match postcard::from_bytes::<Request>(&request).unwrap() {
            Request::CheckPeriod { .. } => Reply::Done,
            _ => Reply::Described {
                outputs: vec![WireVariable {
                    name: "x".into(),
                    start: vec![],
                    description: String::new(),
                }],
                inputs: vec![],
                notices: vec![],
            },
        };
        Ok(postcard::to_stdvec(&reply).unwrap())
    }
}

#[test]
fn a_remote_describing_a_variable_of_no_values_is_refused() {
    assert_eq!(
        RemoteParticipant::connect(Empty, MS).unwrap_err(),
        "it described variable `x` with no values (a variable holds at least one)"
    );
}

//! A model behind the wire (its calls as JSON messages to another thread,
//! as to another process) runs as it does in place: the same trace and
//! the same data, floats bit for bit; its errors and a vanished far end
//! are reported.

use lockstep_orchestrator::wire::{RemoteModel, answer};
use lockstep_orchestrator::{
    DataMask, Key, Model, Moment, Orchestrator, OrchestratorError, Outcome, TimelineInfo, Update,
};
use lockstep_remote::thread::InThread;
use serde_json::{Value, json};

const INFO: TimelineInfo = TimelineInfo {
    reference: 1_700_000_000.0,
    time_scale_us: 100_000,
    start_time: 0,
    duration: 40,
};

/// Every 7 timestamps publishes a float that does not round-trip through
/// a short decimal; adds what it hears to a sum; fails at `fail_at`.
struct Noisy {
    sum: f64,
    fail_at: Option<u64>,
    next: u64,
}

impl Model for Noisy {
    fn mask(&self) -> DataMask {
        DataMask::new(&["noisy/*/*"], &["echo/*/*"]).unwrap()
    }
    fn initialize(&mut self, _: Moment) -> Result<Outcome, String> {
        Ok(Outcome::wake_at(Some(0)))
    }
    fn update(&mut self, at: Moment, inbox: &[Update]) -> Result<Outcome, String> {
        if Some(at.timestamp) == self.fail_at {
            return Err("the noisy model broke".into());
        }
        for u in inbox {
            for v in u.data.values() {
                self.sum += v.as_f64().unwrap();
            }
        }
        if at.timestamp < self.next {
            // Woken by the echo only.
            return Ok(Outcome::wake_at(Some(self.next)));
        }
        self.next = at.timestamp + 7;
        let x = (at.timestamp as f64 + 0.1).sqrt() * std::f64::consts::PI;
        Ok(Outcome::wake_at(Some(self.next)).with(Key::parse("noisy/a/x").unwrap(), json!(x)))
    }
    fn finish(&mut self) -> Result<Value, String> {
        Ok(json!({"sum": self.sum}))
    }
}

/// Echoes what it hears, scaled by 1/3.
struct Echo;

impl Model for Echo {
    fn mask(&self) -> DataMask {
        DataMask::new(&["echo/*/*"], &["noisy/*/*"]).unwrap()
    }
    fn initialize(&mut self, _: Moment) -> Result<Outcome, String> {
        Ok(Outcome::wake_at(None))
    }
    fn update(&mut self, _: Moment, inbox: &[Update]) -> Result<Outcome, String> {
        let v = inbox[0].data.values().next().unwrap().as_f64().unwrap();
        Ok(Outcome::wake_at(None).with(Key::parse("echo/b/y").unwrap(), json!(v / 3.0)))
    }
}

/// The far end: a thread answering with `answer`, through the wire format.
fn far_end(mut part: Box<dyn Model>) -> InThread {
    InThread::serve(move |request| answer(part.as_mut(), request))
}

fn run(
    remote: bool,
    fail_at: Option<u64>,
) -> (
    Orchestrator,
    Result<Vec<(String, Value)>, OrchestratorError>,
) {
    let mut o = Orchestrator::new(INFO, 10, 2).unwrap();
    o.keep_trace();
    let noisy: Box<dyn Model> = Box::new(Noisy {
        sum: 0.0,
        fail_at,
        next: 0,
    });
    let noisy: Box<dyn Model> = if remote {
        Box::new(RemoteModel::connect(far_end(noisy)).unwrap())
    } else {
        noisy
    };
    o.register("noisy", noisy).unwrap();
    o.register("echo", Box::new(Echo)).unwrap();
    let r = o.run();
    (o, r)
}

#[test]
fn a_model_over_the_wire_runs_as_in_place() {
    let (here, a) = run(false, None);
    let (there, b) = run(true, None);
    assert_eq!(here.trace(), there.trace());
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!(a, b);
    // The sum of echoes, bit for bit.
    let expected: f64 = (0..=40u64)
        .step_by(7)
        .map(|t| (t as f64 + 0.1).sqrt() * std::f64::consts::PI / 3.0)
        .sum();
    assert_eq!(
        b[0].1["sum"].as_f64().unwrap().to_bits(),
        expected.to_bits()
    );
}

#[test]
fn a_remote_models_error_and_its_end_are_reported() {
    let (_, r) = run(true, Some(14));
    assert_eq!(
        r.unwrap_err().to_string(),
        "model `noisy` failed in update at timestamp 14: the noisy model broke"
    );
    // The far end gone: the next call says so.
    let mut m = RemoteModel::connect(far_end(Box::new(Echo))).unwrap();
    assert_eq!(m.finish().unwrap(), Value::Null);
    let at = Moment {
        timestamp: 0,
        info: INFO,
    };
    assert_eq!(m.initialize(at).unwrap_err(), "the far end is gone");
}

#[test]
fn a_mask_from_the_wire_is_checked_as_one_written_here() {
    let mask: DataMask =
        serde_json::from_str(r#"{"publishes":["a/*/c"],"subscribes":["d/e/f"]}"#).unwrap();
    assert_eq!(mask, DataMask::new(&["a/*/c"], &["d/e/f"]).unwrap());
    assert_eq!(
        serde_json::to_string(&mask).unwrap(),
        r#"{"publishes":["a/*/c"],"subscribes":["d/e/f"]}"#
    );
    for (text, reason) in [
        (
            "a/b*/c",
            "`a/b*/c`: a wildcard stands for a whole segment (`*`), not part of one",
        ),
        (
            "a/b/c/d",
            "`a/b/c/d` is not `dataset/group/attribute` (three segments joined by `/`)",
        ),
    ] {
        let e = serde_json::from_str::<DataMask>(&format!(
            r#"{{"publishes":["{text}"],"subscribes":[]}}"#
        ))
        .unwrap_err();
        assert!(e.to_string().starts_with(reason), "{e}");
    }
}

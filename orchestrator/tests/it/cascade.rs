//! The orchestrator's behaviours: cascades within a timestamp, steady-state
//! models, wildcard subscriptions, the pass limit, id order whatever the
//! threads, and every refusal.

use std::sync::{Arc, Mutex};

use lockstep_orchestrator::{
    DataMask, Key, Model, Moment, Orchestrator, OrchestratorError, Outcome, TimelineInfo,
    Timestamp, Update,
};
use serde_json::{Value, json};

const INFO: TimelineInfo = TimelineInfo {
    reference: 1_700_000_000.0,
    time_scale_us: 100_000,
    start_time: 0,
    duration: 50,
};

type Calls = Arc<Mutex<Vec<(Timestamp, usize)>>>;
type Seen = Arc<Mutex<Vec<(Timestamp, i64)>>>;

type Step = dyn FnMut(Moment, &[Update]) -> Result<Outcome, String> + Send;

/// A model made of a mask, a first wake-up and a closure.
struct Fn {
    mask: DataMask,
    first: Option<Timestamp>,
    f: Box<Step>,
    calls: Calls,
}

impl Model for Fn {
    fn mask(&self) -> DataMask {
        self.mask.clone()
    }
    fn initialize(&mut self, _: Moment) -> Result<Outcome, String> {
        Ok(Outcome::wake_at(self.first))
    }
    fn update(&mut self, at: Moment, inbox: &[Update]) -> Result<Outcome, String> {
        self.calls.lock().unwrap().push((at.timestamp, inbox.len()));
        (self.f)(at, inbox)
    }
}

fn model(
    publishes: &[&str],
    subscribes: &[&str],
    first: Option<Timestamp>,
    f: impl FnMut(Moment, &[Update]) -> Result<Outcome, String> + Send + 'static,
) -> (Box<Fn>, Calls) {
    let calls = Arc::new(Mutex::new(Vec::new()));
    (
        Box::new(Fn {
            mask: DataMask::new(publishes, subscribes).unwrap(),
            first,
            f: Box::new(f),
            calls: calls.clone(),
        }),
        calls,
    )
}

fn k(s: &str) -> Key {
    Key::parse(s).unwrap()
}

fn value(inbox: &[Update], key: &str) -> Option<Value> {
    inbox
        .iter()
        .rev()
        .find_map(|u| u.data.get(&k(key)).cloned())
}

/// A source every 10 timestamps; a chain of relays; a consume-only sink.
fn chain(threads: usize) -> (Orchestrator, Calls, Seen) {
    let mut o = Orchestrator::new(INFO, 100, threads).unwrap();
    o.keep_trace();
    let (src, _) = model(&["a/x/v"], &[], Some(0), |at, _| {
        Ok(Outcome::wake_at(Some(at.timestamp + 10)).with(k("a/x/v"), json!(at.timestamp)))
    });
    let relay = |from: &'static str, to: &'static str| {
        model(&[to], &[from], None, move |_, inbox| {
            let v = value(inbox, from).unwrap().as_i64().unwrap();
            Ok(Outcome::wake_at(None).with(k(to), json!(v + 1)))
        })
    };
    let (b, b_calls) = relay("a/x/v", "b/x/v");
    let (c, _) = relay("b/x/v", "c/x/v");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s2 = seen.clone();
    let (sink, _) = model(&[], &["c/*/*"], None, move |at, inbox| {
        s2.lock().unwrap().push((
            at.timestamp,
            value(inbox, "c/x/v").unwrap().as_i64().unwrap(),
        ));
        Ok(Outcome::wake_at(None))
    });
    o.register("source", src).unwrap();
    o.register("b", b).unwrap();
    o.register("c", c).unwrap();
    o.register("sink", sink).unwrap();
    (o, b_calls, seen)
}

#[test]
fn an_update_cascades_through_its_subscribers_within_the_timestamp() {
    let (mut o, b_calls, seen) = chain(1);
    o.run().unwrap();
    // Every 10 timestamps up to the end (50), each value relayed twice and
    // seen by the sink at the same timestamp.
    assert_eq!(
        *seen.lock().unwrap(),
        [(0, 2), (10, 12), (20, 22), (30, 32), (40, 42), (50, 52)]
    );
    // The relay is steady-state: called only when data arrives.
    assert_eq!(b_calls.lock().unwrap().len(), 6);
    let at_10: Vec<(usize, &str)> = o
        .trace()
        .iter()
        .filter(|c| c.timestamp == 10)
        .map(|c| (c.pass, c.model.as_str()))
        .collect();
    assert_eq!(at_10, [(0, "source"), (1, "b"), (2, "c"), (3, "sink")]);
    let s = o.stats();
    assert_eq!((s.timestamps, s.calls, s.max_passes), (6, 24, 4));
    assert_eq!(o.dependencies(), [(0, 1), (1, 2), (2, 3)]);
}

#[test]
fn wildcards_deliver_only_the_keys_subscribed_to() {
    let mut o = Orchestrator::new(INFO, 10, 1).unwrap();
    for (name, vehicle) in [("v1", "v1"), ("v2", "v2")] {
        let (m, _) = model(&["vehicles/*/*"], &[], Some(5), move |_, _| {
            Ok(Outcome::wake_at(None)
                .with(k(&format!("vehicles/{vehicle}/status")), json!("idle"))
                .with(
                    k(&format!("vehicles/{vehicle}/position")),
                    json!([1.0, 2.0]),
                ))
        });
        o.register(name, m).unwrap();
    }
    let got = Arc::new(Mutex::new(Vec::new()));
    let g = got.clone();
    let (kpi, _) = model(&[], &["vehicles/*/status"], None, move |_, inbox| {
        for u in inbox {
            g.lock().unwrap().push((
                u.from.clone(),
                u.data.keys().map(|k| k.to_string()).collect::<Vec<_>>(),
            ));
        }
        Ok(Outcome::wake_at(None))
    });
    o.register("kpi", kpi).unwrap();
    o.run().unwrap();
    assert_eq!(
        *got.lock().unwrap(),
        [
            ("v1".to_string(), vec!["vehicles/v1/status".to_string()]),
            ("v2".to_string(), vec!["vehicles/v2/status".to_string()]),
        ]
    );
}

#[test]
fn a_cascade_that_never_settles_ends_at_the_pass_limit_naming_the_models() {
    let mut o = Orchestrator::new(INFO, 8, 1).unwrap();
    let (ping, _) = model(&["p/p/p"], &["q/q/q"], Some(3), |_, _| {
        Ok(Outcome::wake_at(None).with(k("p/p/p"), json!(1)))
    });
    let (pong, _) = model(&["q/q/q"], &["p/p/p"], None, |_, _| {
        Ok(Outcome::wake_at(None).with(k("q/q/q"), json!(1)))
    });
    o.register("ping", ping).unwrap();
    o.register("pong", pong).unwrap();
    let e = o.run().unwrap_err();
    assert_eq!(
        e,
        OrchestratorError::PassLimit {
            timestamp: 3,
            passes: 8,
            receiving: vec!["ping".into()],
        }
    );
    // The run stays ended.
    assert_eq!(o.step().unwrap_err(), e);
    assert_eq!(
        e.to_string(),
        "the cascade at timestamp 3 did not settle within 8 passes; still receiving updates: ping"
    );
}

/// Producers that answer after a random delay feed one consumer: what it
/// receives, in what order, is the same on 1 and 4 threads.
fn jittered(threads: usize) -> Vec<Call> {
    let mut o = Orchestrator::new(INFO, 10, threads).unwrap();
    o.keep_trace();
    for i in 0..6u64 {
        let (m, _) = model(&[&format!("d/p{i}/v")], &[], Some(1), move |at, _| {
            // A busy wait of a varying length: the threads finish in a
            // different order every time.
            let spin = (i * 7919 + at.timestamp * 104_729) % 200_000;
            let mut x = 0u64;
            for j in 0..spin {
                x = x.wrapping_add(j ^ (x << 1));
            }
            std::hint::black_box(x);
            let next = if at.timestamp < 40 {
                Some(at.timestamp + 1 + i % 3)
            } else {
                None
            };
            Ok(Outcome::wake_at(next).with(k(&format!("d/p{i}/v")), json!(i)))
        });
        o.register(&format!("p{i}"), m).unwrap();
    }
    let order = Arc::new(Mutex::new(Vec::new()));
    let o2 = order.clone();
    let (c, _) = model(&[], &["d/*/v"], None, move |at, inbox| {
        o2.lock().unwrap().push((
            at.timestamp,
            inbox.iter().map(|u| u.from.clone()).collect::<Vec<_>>(),
        ));
        Ok(Outcome::wake_at(None))
    });
    o.register("consumer", c).unwrap();
    o.run().unwrap();
    let received = order.lock().unwrap().clone();
    // Producers' updates arrive in id order.
    for (_, from) in &received {
        let mut sorted = from.clone();
        sorted.sort();
        assert_eq!(&sorted, from);
    }
    o.trace()
        .iter()
        .map(|c| Call(c.timestamp, c.pass, c.model.clone(), c.inbox))
        .collect()
}

#[derive(Debug, PartialEq)]
struct Call(Timestamp, usize, String, usize);

#[test]
fn the_run_does_not_depend_on_which_model_answers_first() {
    let one = jittered(1);
    assert!(one.len() > 100);
    assert_eq!(jittered(4), one);
}

#[test]
fn models_that_break_the_rules_end_the_run_with_the_reason() {
    let mut o = Orchestrator::new(INFO, 10, 1).unwrap();
    let (m, _) = model(&["a/b/c"], &[], Some(2), |_, _| {
        Ok(Outcome::wake_at(None).with(k("a/b/d"), json!(1)))
    });
    o.register("rogue", m).unwrap();
    assert_eq!(
        o.run().map(|_| ()).unwrap_err().to_string(),
        "model `rogue` published `a/b/d` at timestamp 2, outside its mask (publishes: a/b/c)"
    );
    let mut o = Orchestrator::new(INFO, 10, 1).unwrap();
    let (m, _) = model(&[], &[], Some(2), |at, _| {
        Ok(Outcome::wake_at(Some(at.timestamp)))
    });
    o.register("stuck", m).unwrap();
    assert_eq!(
        o.run().map(|_| ()).unwrap_err().to_string(),
        "model `stuck` asked to wake at timestamp 2 while at 2: a wake-up must be later"
    );
    let mut o = Orchestrator::new(INFO, 10, 1).unwrap();
    let (m, _) = model(&[], &[], Some(7), |_, _| Err("the solver diverged".into()));
    o.register("solver", m).unwrap();
    assert_eq!(
        o.run().map(|_| ()).unwrap_err().to_string(),
        "model `solver` failed in update at timestamp 7: the solver diverged"
    );
    let (m, _) = model(&[], &[], None, |_, _| Ok(Outcome::default()));
    assert_eq!(
        o.register("solver", m).unwrap_err().to_string(),
        "model `solver`: the run has started"
    );
    let mut o = Orchestrator::new(INFO, 10, 1).unwrap();
    let (m, _) = model(&[], &[], None, |_, _| Ok(Outcome::default()));
    o.register("a", m).unwrap();
    let (m, _) = model(&[], &[], None, |_, _| Ok(Outcome::default()));
    assert_eq!(
        o.register("a", m).unwrap_err().to_string(),
        "model `a`: another model has this name"
    );
}

#[test]
fn the_run_ends_with_the_timeline_or_its_duration_and_maps_world_time() {
    // A tape player of three entries, then steady state: the run ends when
    // nothing is on the timeline, before the duration.
    let mut o = Orchestrator::new(INFO, 10, 1).unwrap();
    let tape = [3u64, 8, 21];
    let mut n = 0;
    let (m, calls) = model(&["t/t/t"], &[], Some(tape[0]), move |at, _| {
        n += 1;
        assert_eq!(
            at.world_time_s(),
            1_700_000_000.0 + at.timestamp as f64 * 0.1
        );
        Ok(Outcome::wake_at(tape.get(n).copied()).with(k("t/t/t"), json!(at.micros())))
    });
    o.register("tape", m).unwrap();
    o.run().unwrap();
    assert_eq!(*calls.lock().unwrap(), [(3, 0), (8, 0), (21, 0)]);
    assert_eq!(o.now(), Some(21));
    // A clock beyond the duration: woken up to 50, not after.
    let mut o = Orchestrator::new(INFO, 10, 1).unwrap();
    let (m, calls) = model(&[], &[], Some(0), |at, _| {
        Ok(Outcome::wake_at(Some(at.timestamp + 20)))
    });
    o.register("clock", m).unwrap();
    o.run().unwrap();
    assert_eq!(*calls.lock().unwrap(), [(0, 0), (20, 0), (40, 0)]);
}

/// A steady-state model whose finish says `{"ok": true}`, or fails.
struct Finishing(Option<&'static str>);

impl Model for Finishing {
    fn mask(&self) -> DataMask {
        DataMask::new(&[], &[]).unwrap()
    }
    fn initialize(&mut self, _: Moment) -> Result<Outcome, String> {
        Ok(Outcome::wake_at(None))
    }
    fn update(&mut self, _: Moment, _: &[Update]) -> Result<Outcome, String> {
        Ok(Outcome::wake_at(None))
    }
    fn finish(&mut self) -> Result<Value, String> {
        match self.0 {
            None => Ok(json!({ "ok": true })),
            Some(e) => Err(e.into()),
        }
    }
}

#[test]
fn a_model_failing_to_finish_loses_no_other_report() {
    let mut o = Orchestrator::new(INFO, 8, 1).unwrap();
    o.register("first", Box::new(Finishing(None))).unwrap();
    o.register("bad", Box::new(Finishing(Some("its disk is full"))))
        .unwrap();
    o.register("last", Box::new(Finishing(None))).unwrap();
    while o.step().unwrap().is_some() {}
    let (reports, error) = o.finish_all();
    assert_eq!(
        error.unwrap().to_string(),
        "model `bad` failed in finish at timestamp 0: its disk is full"
    );
    assert_eq!(
        reports,
        [
            ("first".to_string(), json!({ "ok": true })),
            ("bad".to_string(), Value::Null),
            ("last".to_string(), json!({ "ok": true })),
        ]
    );
    // Finished once: a second call has nothing more to say.
    let (again, error) = o.finish_all();
    assert!(again.is_empty() && error.is_none());
}

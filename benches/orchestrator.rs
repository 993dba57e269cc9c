//! What the orchestrator costs per event, without the models' own work:
//! 32 sources wake every timestamp and each publishes one key; a monitor
//! subscribed to all of them (`telemetry/*/position`) publishes a summary
//! that 8 steady-state consumers receive: 41 calls, 33 updates and 40
//! deliveries per timestamp, in 3 passes. Timed per timestamp, on 1 and 2
//! threads; events per second = 41 / (time per timestamp).
//!
//! Run: `cargo bench --bench orchestrator`.

use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use lockstep_orchestrator::{
    DataMask, Key, Model, Moment, Orchestrator, Outcome, TimelineInfo, Update,
};
use serde_json::json;

struct Source(Key);

impl Model for Source {
    fn mask(&self) -> DataMask {
        DataMask::new(&["telemetry/*/position"], &[]).unwrap()
    }
    fn initialize(&mut self, at: Moment) -> Result<Outcome, String> {
        Ok(Outcome::wake_at(Some(at.timestamp + 1)))
    }
    fn update(&mut self, at: Moment, _: &[Update]) -> Result<Outcome, String> {
        let x = at.timestamp as f64 * 0.1;
        Ok(Outcome::wake_at(Some(at.timestamp + 1)).with(self.0.clone(), json!([x, -x, 10.0])))
    }
}

struct Monitor;

impl Model for Monitor {
    fn mask(&self) -> DataMask {
        DataMask::new(&["alerts/all/count"], &["telemetry/*/position"]).unwrap()
    }
    fn initialize(&mut self, _: Moment) -> Result<Outcome, String> {
        Ok(Outcome::wake_at(None))
    }
    fn update(&mut self, _: Moment, inbox: &[Update]) -> Result<Outcome, String> {
        Ok(Outcome::wake_at(None).with(Key::new("alerts", "all", "count"), json!(inbox.len())))
    }
}

struct Consumer(usize);

impl Model for Consumer {
    fn mask(&self) -> DataMask {
        DataMask::new(&[], &["alerts/*/*"]).unwrap()
    }
    fn initialize(&mut self, _: Moment) -> Result<Outcome, String> {
        Ok(Outcome::wake_at(None))
    }
    fn update(&mut self, _: Moment, inbox: &[Update]) -> Result<Outcome, String> {
        self.0 += inbox.len();
        Ok(Outcome::wake_at(None))
    }
}

fn orchestrator(threads: usize) -> Orchestrator {
    let info = TimelineInfo {
        reference: 0.0,
        time_scale_us: 1000,
        start_time: 0,
        duration: u64::MAX / 2,
    };
    let mut o = Orchestrator::new(info, 10, threads).unwrap();
    for i in 0..32 {
        let key = Key::new("telemetry", &format!("v{i}"), "position");
        o.register(&format!("source{i}"), Box::new(Source(key)))
            .unwrap();
    }
    o.register("monitor", Box::new(Monitor)).unwrap();
    for i in 0..8 {
        o.register(&format!("consumer{i}"), Box::new(Consumer(0)))
            .unwrap();
    }
    o.step().unwrap();
    o
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("orchestrator");
    g.measurement_time(Duration::from_secs(5));
    for threads in [1usize, 2] {
        g.bench_function(format!("timestamp_41_calls_{threads}_threads"), |b| {
            b.iter_custom(|iters| {
                let mut o = orchestrator(threads);
                let start = Instant::now();
                for _ in 0..iters {
                    o.step().unwrap();
                }
                let took = start.elapsed();
                let s = o.stats();
                assert_eq!(s.calls, 41 * iters);
                assert_eq!(s.deliveries, 40 * iters);
                took
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

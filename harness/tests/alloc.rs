//! A closed-loop tick allocates nothing in steady state: plant, sensors,
//! estimator, wind, the autopilot call, scenario checks and logging (a
//! counting global allocator, per thread).

use std::path::Path;

use lockstep_harness::engine::Engine;
use lockstep_harness::inputs::scenario::Scenario;

#[path = "../../plant/tests/support/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::allocations;

#[test]
fn steady_state_ticks_allocate_nothing_with_and_without_logging() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/scenarios/square.toml");
    let text = std::fs::read_to_string(&example)
        .unwrap()
        .replace("log = { rate_hz = 10 }", "log = { rate_hz = 100 }");
    let s = Scenario::from_toml_str(&text, &example).unwrap();
    for log in [
        None,
        Some(std::env::temp_dir().join(format!("lockstep-alloc-{}.csv", std::process::id()))),
    ] {
        let mut e = Engine::new(
            &s,
            Path::new(lockstep_c_examples::REFERENCE_AUTOPILOT),
            log.as_deref(),
        )
        .unwrap();
        // Warm up: take off and start the mission (10 s).
        for _ in 0..10_000 {
            e.step().unwrap();
        }
        let before = allocations();
        for _ in 0..10_000 {
            e.step().unwrap();
        }
        assert_eq!(
            allocations() - before,
            0,
            "log {log:?}: allocations in 10 000 ticks in flight"
        );
        assert!(e.state()[2] < -5.0, "it is flying");
        if let Some(p) = log {
            drop(e);
            std::fs::remove_file(p).unwrap();
        }
    }
}

//! What the parallel mode of co-simulation gains over the serialized one at
//! a small step: `examples/cosim/radio_swarm.toml` (four Iris, a 4 ms step,
//! one wave a step, the radio between steps) for its 45 s, the autopilots
//! in-process, serialized (the reference) and in parallel on 2 threads.
//! Only the steps are timed: building the system (loading the autopilot,
//! four engines) is not. The ratio of the two is the figure; the two
//! modes' final positions are checked equal, bit for bit, first.
//!
//! Run: `cargo bench --bench cosim_waves`.

use std::path::Path;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use lockstep_abi::Isolation;
use lockstep_cosim::Cosim;
use lockstep_cosim::assemble::{AssembleOptions, assemble};
use lockstep_cosim::file::{FileMode, SystemFile};
use lockstep_harness::engine::RunOptions;

fn build(sf: &SystemFile, mode: FileMode) -> Cosim {
    let mut run = RunOptions::new(
        lockstep_c_examples::REFERENCE_AUTOPILOT,
        Isolation::InProcess,
    );
    run.threads = Some(2);
    let o = AssembleOptions {
        run,
        mode: Some(mode),
        bundled_fmu: None,
        taken: Vec::new(),
    };
    assemble(sf, &o).expect("radio_swarm assembles")
}

/// Every vehicle's position at the end, as bits.
fn run(sf: &SystemFile, mode: FileMode) -> (Duration, Vec<u64>) {
    let mut c = build(sf, mode);
    let start = Instant::now();
    c.run_until(sf.duration, |_| Ok(()))
        .expect("radio_swarm runs");
    let took = start.elapsed();
    let bits = ["alpha", "bravo", "charlie", "delta"]
        .iter()
        .flat_map(|v| {
            c.output(c.find_output(&format!("{v}.position_ned_m")).unwrap())
                .to_vec()
        })
        .map(f64::to_bits)
        .collect();
    c.finish().expect("every vehicle finishes");
    (took, bits)
}

fn waves(c: &mut Criterion) {
    let sf = SystemFile::load(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/cosim/radio_swarm.toml"),
    )
    .expect("radio_swarm reads");
    assert_eq!(
        run(&sf, FileMode::Serialized).1,
        run(&sf, FileMode::Parallel).1,
        "the parallel run ends where the serialized one does"
    );
    let mut g = c.benchmark_group("radio_swarm_45s");
    for (name, mode) in [
        ("serialized", FileMode::Serialized),
        ("parallel_2", FileMode::Parallel),
    ] {
        g.bench_function(name, |b| {
            b.iter_custom(|n| (0..n).map(|_| run(&sf, mode).0).sum());
        });
    }
    g.finish();
}

criterion_group! {
    name = cosim_waves;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(8))
        .sample_size(20);
    targets = waves
}
criterion_main!(cosim_waves);

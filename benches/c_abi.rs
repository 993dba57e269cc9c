//! What the C ABI costs on top of the Rust API, measured in one run:
//! - `tick_1ms`: one 1 ms boundary of a whole vehicle loitering at 10 m
//!   (plant, sensors, estimator, wind, the C autopilot every 4th tick),
//!   through `Engine::step` and through `lockstep_sim_step(sim, 1, ..)`;
//! - `plant_step_1ms`: one RK4 1 ms step of the Iris alone, through
//!   `PlantRunner::advance_to` and through `lockstep_plant_step`.
//!
//! Run: `cargo bench --bench c_abi`. The target: the C ABI's tick at
//! most 5 % over the Rust API's.

use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use lockstep::lockstep_status::LOCKSTEP_OK;
use lockstep_abi::Isolation;
use lockstep_harness::Micros;
use lockstep_harness::engine::{Engine, PlantRunner};
use lockstep_harness::inputs::scenario::Scenario;

fn scenario_text() -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    format!(
        "schema_version = 1\n[simulation]\nseed = 3\nduration_s = 36000.0\n\
         [vehicle]\nspec = \"iris\"\nmission = \"{}\"\n\
         [wind]\nmodel = \"ornstein_uhlenbeck\"\nmean_ned_mps = [2.0, 1.0, 0.0]\nsigma_mps = [0.8, 0.8, 0.3]\ntau_s = [5.0, 5.0, 2.0]\n\
         [[events]]\nat_s = 1.0\naction = \"arm\"\n[[events]]\nat_s = 2.0\naction = \"mission_start\"\n",
        root.join("examples/missions/loiter.waypoints").display()
    )
}

/// Ticks or steps timed on one vehicle before a fresh one replaces it:
/// 200 s of flight, well inside the battery's endurance (criterion runs
/// millions; one vehicle would drain its pack and measure one at rest).
const CHUNK: u64 = 200_000;

/// Times `iters` calls of `step` on vehicles from `make` (built untimed),
/// each used for at most [`CHUNK`] calls.
fn chunked<T>(iters: u64, make: &dyn Fn() -> T, step: &dyn Fn(&mut T)) -> Duration {
    let mut total = Duration::ZERO;
    let mut left = iters;
    while left > 0 {
        let n = left.min(CHUNK);
        let mut v = make();
        let t = std::time::Instant::now();
        for _ in 0..n {
            step(&mut v);
        }
        total += t.elapsed();
        left -= n;
    }
    total
}

/// A whole vehicle through the C ABI, freed when dropped.
struct CSim(*mut lockstep::sim::lockstep_sim);

impl Drop for CSim {
    fn drop(&mut self) {
        // SAFETY: a live handle, freed once.
        unsafe { lockstep::sim::lockstep_sim_free(self.0) };
    }
}

/// The plant alone through the C ABI, freed when dropped.
struct CPlant(*mut lockstep::plant::lockstep_plant);

impl Drop for CPlant {
    fn drop(&mut self) {
        // SAFETY: a live handle, freed once.
        unsafe { lockstep::plant::lockstep_plant_free(self.0) };
    }
}

fn tick(c: &mut Criterion) {
    let text = scenario_text();
    let mut g = c.benchmark_group("tick_1ms");
    g.bench_function("rust_api", |b| {
        let make = || {
            let s = Scenario::from_toml_str(&text, Path::new("bench.toml")).unwrap();
            let mut e = Engine::with_isolation(
                &s,
                Path::new(lockstep_c_examples::REFERENCE_AUTOPILOT),
                None,
                &Isolation::InProcess,
            )
            .unwrap();
            for _ in 0..15_000 {
                e.step().unwrap();
            }
            assert!(e.state()[2] < -9.0, "loitering at 10 m");
            e
        };
        b.iter_custom(|n| {
            chunked(n, &make, &|e: &mut Engine| {
                black_box(e.step().unwrap());
            })
        });
    });
    g.bench_function("c_abi", |b| {
        let toml = std::ffi::CString::new(text.clone()).unwrap();
        let autopilot = std::ffi::CString::new(lockstep_c_examples::REFERENCE_AUTOPILOT).unwrap();
        let make = || {
            let options = lockstep::lockstep_options {
                size: size_of::<lockstep::lockstep_options>() as u32,
                isolation: lockstep::LOCKSTEP_ISOLATION_IN_PROCESS,
                autopilot_path: autopilot.as_ptr(),
                autopilot_host_path: std::ptr::null(),
                log_path: std::ptr::null(),
                record_path: std::ptr::null(),
            };
            let mut sim = std::ptr::null_mut();
            let mut done = 0u64;
            // SAFETY: valid NUL-terminated strings, a sized options struct
            // and out-pointers to locals.
            unsafe {
                assert_eq!(
                    lockstep::sim::lockstep_sim_new_from_toml(
                        toml.as_ptr(),
                        std::ptr::null(),
                        &options,
                        &mut sim
                    ),
                    LOCKSTEP_OK
                );
                assert_eq!(
                    lockstep::sim::lockstep_sim_step(sim, 15_000, &mut done),
                    LOCKSTEP_OK
                );
            }
            CSim(sim)
        };
        b.iter_custom(|n| {
            chunked(n, &make, &|s: &mut CSim| {
                let mut done = 0u64;
                // SAFETY: a live handle; `done` is a local.
                black_box(unsafe { lockstep::sim::lockstep_sim_step(s.0, 1, &mut done) });
            })
        });
    });
    g.finish();
}

/// The Iris hovering at 10 m: its resting state lifted, every motor at
/// the command that holds it (found by `lockstep_plant`'s C host too).
const HOVER: f64 = 0.524;

fn plant_step(c: &mut Criterion) {
    let mut g = c.benchmark_group("plant_step_1ms");
    g.bench_function("rust_api", |b| {
        let make = || {
            let spec = lockstep_plant::AircraftSpec::resolve("iris").unwrap();
            let plant = spec.build_named("iris").unwrap();
            let mut x = plant.resting_state(0.0, 0.0, 0.0);
            x[2] = -10.0;
            let mut p = PlantRunner::new(
                plant,
                x,
                lockstep_plant::integrate::Method::Rk4,
                lockstep_plant::integrate::Options {
                    max_step_ticks: 1000,
                    ..Default::default()
                },
            )
            .unwrap();
            p.inputs_mut().motor_cmd[..4].copy_from_slice(&[HOVER; 4]);
            p
        };
        b.iter_custom(|n| {
            chunked(n, &make, &|p: &mut PlantRunner| {
                let t = p.now().0 + 1000;
                black_box(p.advance_to(Micros(t)).unwrap());
            })
        });
    });
    g.bench_function("c_abi", |b| {
        let make = || {
            let mut p = std::ptr::null_mut();
            let mut x = [0.0; 64];
            let mut n = 0;
            // SAFETY: a NUL-terminated name, NULL integrator (rk4), local
            // buffers of the sizes passed.
            unsafe {
                assert_eq!(
                    lockstep::plant::lockstep_plant_new(
                        c"iris".as_ptr(),
                        std::ptr::null(),
                        1000,
                        &mut p
                    ),
                    LOCKSTEP_OK
                );
                assert_eq!(
                    lockstep::plant::lockstep_plant_state(p, x.as_mut_ptr(), x.len(), &mut n),
                    LOCKSTEP_OK
                );
                x[2] = -10.0;
                assert_eq!(
                    lockstep::plant::lockstep_plant_set_state(p, x.as_ptr(), n),
                    LOCKSTEP_OK
                );
                assert_eq!(
                    lockstep::plant::lockstep_plant_set_motors(p, [HOVER; 4].as_ptr(), 4),
                    LOCKSTEP_OK
                );
            }
            CPlant(p)
        };
        b.iter_custom(|n| {
            chunked(n, &make, &|p: &mut CPlant| {
                // SAFETY: a live handle.
                black_box(unsafe { lockstep::plant::lockstep_plant_step(p.0, 1000) });
            })
        });
    });
    g.finish();
}

criterion_group! {
    name = c_abi;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .sample_size(40);
    targets = tick, plant_step
}
criterion_main!(c_abi);

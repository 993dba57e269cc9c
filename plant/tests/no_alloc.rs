//! The right-hand side and every integrator step allocate nothing once the
//! integrator exists (a counting global allocator, per thread).

use lockstep_plant::integrate::{Integrator, Method, Options};
use lockstep_plant::{AircraftSpec, HeldPlant, PlantInputs};

#[path = "support/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::allocations;

#[test]
fn rhs_outputs_and_steps_do_not_allocate() {
    for name in ["iris", "octa"] {
        let plant = AircraftSpec::builtin(name).unwrap().build().unwrap();
        let mut x = plant.resting_state(0.0, 0.0, 0.0);
        let mut dx = vec![0.0; plant.dim()];
        let u = PlantInputs {
            motor_cmd: [0.65; 12],
            wind_ned_mps: [3.0, 1.0, 0.0],
            ..Default::default()
        };
        let mut integrators: Vec<Integrator> =
            [Method::Euler, Method::Rk4, Method::Bs32, Method::Dp54]
                .into_iter()
                .map(|m| {
                    Integrator::new(
                        m,
                        plant.dim(),
                        Options {
                            max_step_ticks: 1000,
                            ..Options::default()
                        },
                    )
                    .unwrap()
                })
                .collect();
        let before = allocations();
        for _ in 0..200 {
            plant.rhs(&x, &u, &mut dx);
            let o = plant.outputs(&x, &u);
            assert!(o.bus_voltage_v > 0.0);
        }
        for (k, integ) in integrators.iter_mut().enumerate() {
            for i in 0..100u64 {
                let sys = HeldPlant {
                    plant: &plant,
                    inputs: &u,
                };
                integ
                    .step_interval(&sys, (k as u64 * 100 + i) * 4000, 4000, &mut x)
                    .unwrap();
            }
        }
        assert_eq!(
            allocations() - before,
            0,
            "{name}: allocations on the hot path"
        );
        assert!(x[2] < -0.2, "{name}: it took off, the steps did real work");
    }
}

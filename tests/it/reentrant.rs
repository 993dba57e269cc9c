//! A re-entrant library: independent instances, identical outputs for
//! identical inputs, bit for bit, whatever the other instance is fed.

use crate::common::*;
use lockstep_abi::ffi::*;

/// A deterministic but busy input sequence: arm, hold, then attitude and
/// position disturbances.
fn input(k: u64, phase: f32) -> lockstep_sensor_frame {
    let t = k * PERIOD_US;
    let s = (k as f32 * 0.05 + phase).sin();
    let mut f = frame(
        t,
        [0.3 * s, -0.2 * s, -10.0 + 0.1 * s],
        quat_rpy(0.05 * s, -0.04 * s, 0.1 * s),
    );
    f.estimate.velocity_ned_mps = [0.2 * s, 0.1 * s, -0.05 * s];
    f.estimate.rates_frd_radps = [0.3 * s, -0.2 * s, 0.1 * s];
    match k {
        2 => with_command(f, LOCKSTEP_ARM_ARM, 0, 0),
        3 => with_command(f, 0, LOCKSTEP_MODE_HOLD, 0),
        _ => f,
    }
}

fn bits(out: &lockstep_actuator_frame) -> Vec<u32> {
    let sp = out.setpoints;
    out.motors
        .iter()
        .chain(sp.torque_frd_nm.iter())
        .chain(sp.rates_frd_radps.iter())
        .chain(sp.attitude_q.iter())
        .chain(std::iter::once(&sp.thrust_n))
        .map(|x| x.to_bits())
        .chain([out.mode, out.armed])
        .collect()
}

#[test]
fn two_instances_are_independent_and_bitwise_identical() {
    let lib = load_bundled();
    assert!(lib.is_reentrant());
    let cfg = config(&ring(6, 0.3, 30.0), 2.5, 9.0);

    // Reference: instance A alone.
    let mut alone = lib.create(&cfg).unwrap();
    let reference: Vec<_> = (1..=600)
        .map(|k| bits(&step(&mut alone, &input(k, 0.0))))
        .collect();
    drop(alone);

    // A and B interleaved, B fed with the same inputs, C with different ones.
    let mut a = lib.create(&cfg).unwrap();
    let mut b = lib.create(&cfg).unwrap();
    let mut c = lib.create(&cfg).unwrap();
    for k in 1..=600u64 {
        let oc = step(&mut c, &input(k, 1.7));
        let oa = step(&mut a, &input(k, 0.0));
        let ob = step(&mut b, &input(k, 0.0));
        assert_eq!(
            bits(&oa),
            reference[k as usize - 1],
            "step {k}: A differs from A alone"
        );
        assert_eq!(bits(&oa), bits(&ob), "step {k}: A and B differ");
        if k > 10 {
            assert_ne!(bits(&oa), bits(&oc), "step {k}: C's other inputs must show");
        }
    }
}

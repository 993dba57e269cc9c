//! The optional migration functions (snapshot_size, snapshot, restore): a
//! restored instance steps exactly as the original would have, in-process
//! and isolated; refusals leave the instance unchanged; partial sets,
//! oversized snapshots and crashes in snapshot are reported.

use std::path::Path;

use crate::common::*;
use lockstep_abi::ffi::*;
use lockstep_abi::{AbiError, Autopilot, Isolation, IsolationOptions};

/// A busy input sequence: arm, hold, disturbances.
fn input(k: u64) -> lockstep_sensor_frame {
    let t = k * PERIOD_US;
    let s = (k as f32 * 0.05).sin();
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
    out.motors
        .iter()
        .map(|x| x.to_bits())
        .chain([out.mode, out.armed])
        .collect()
}

fn isolated() -> Isolation {
    Isolation::Process(IsolationOptions {
        host: Some(HOST.into()),
        ..IsolationOptions::default()
    })
}

fn open(path: &Path, cfg: &lockstep_autopilot_config, iso: &Isolation) -> Autopilot {
    Autopilot::open(path, cfg, iso).unwrap()
}

fn moved_instance_continues_bit_for_bit(from: &Isolation, to: &Isolation) {
    let cfg = config(&quad_x(), 1.5, 8.0);
    let lib = Path::new(BUNDLED);
    let mut original = open(lib, &cfg, from);
    assert!(original.can_migrate());
    for k in 1..=300 {
        step(&mut original, &input(k));
    }
    let snap = original.snapshot().unwrap();
    assert_eq!(snap.last_time_us, Some(300 * PERIOD_US));
    let mut moved = open(lib, &cfg, to);
    moved.restore(&snap).unwrap();
    // A step at or before the snapshot's last time is refused, as it would
    // have been for the original.
    let mut out = lockstep_actuator_frame::default();
    assert!(moved.step(300 * PERIOD_US, &input(300), &mut out).is_err());
    for k in 301..=700 {
        let a = bits(&step(&mut original, &input(k)));
        let b = bits(&step(&mut moved, &input(k)));
        assert_eq!(a, b, "step {k}");
    }
    // The flight state moved: armed, in hold.
    let last = step(&mut moved, &input(701));
    assert_eq!((last.armed, last.mode), (1, LOCKSTEP_MODE_HOLD));
}

#[test]
fn a_restored_instance_steps_as_the_original_in_process() {
    moved_instance_continues_bit_for_bit(&Isolation::InProcess, &Isolation::InProcess);
}

#[test]
fn a_snapshot_moves_between_processes() {
    moved_instance_continues_bit_for_bit(&Isolation::InProcess, &isolated());
    moved_instance_continues_bit_for_bit(&isolated(), &Isolation::InProcess);
}

#[test]
fn restore_refuses_foreign_bytes_and_leaves_the_instance_unchanged() {
    let cfg = config(&quad_x(), 1.5, 8.0);
    let lib = Path::new(BUNDLED);
    let mut a = open(lib, &cfg, &Isolation::InProcess);
    let mut b = open(lib, &cfg, &Isolation::InProcess);
    for k in 1..=50 {
        step(&mut a, &input(k));
        step(&mut b, &input(k));
    }
    let good = a.snapshot().unwrap();
    let n = good.bytes.len();
    let mut short = good.clone();
    short.bytes.truncate(n - 1);
    let mut garbage = good.clone();
    garbage.bytes[0] ^= 0xff;
    let other_cfg = config(&quad_x(), 2.0, 8.0);
    let mut c = open(lib, &other_cfg, &Isolation::InProcess);
    let foreign = c.snapshot().unwrap();
    let refusals = [
        (
            &short,
            format!(
                "autopilot restore failed with status -2 (invalid argument): a snapshot \
                 of {} bytes; this build's are {n}",
                n - 1
            ),
        ),
        (
            &garbage,
            "autopilot restore failed with status -2 (invalid argument): not a snapshot \
             of this build (magic 53414bb3, version 1)"
                .to_string(),
        ),
        (
            &foreign,
            "autopilot restore failed with status -2 (invalid argument): the snapshot \
             was taken from an instance of another config"
                .to_string(),
        ),
    ];
    for (snap, expected) in refusals {
        let e = b.restore(snap).unwrap_err();
        assert_eq!(e.to_string(), expected);
    }
    // b is still the twin of a.
    for k in 51..=120 {
        let x = bits(&step(&mut a, &input(k)));
        let y = bits(&step(&mut b, &input(k)));
        assert_eq!(x, y, "step {k}");
    }
}

#[test]
fn a_library_without_the_functions_cannot_migrate() {
    let cfg = config(&quad_x(), 1.5, 8.0);
    let mut ap = open(&broken("idle"), &cfg, &Isolation::InProcess);
    assert!(!ap.can_migrate());
    assert_eq!(
        ap.snapshot().unwrap_err().to_string(),
        AbiError::Unsupported {
            symbol: "lockstep_autopilot_snapshot".into(),
            action: "move an instance".into()
        }
        .to_string()
    );
}

#[test]
fn a_partial_set_is_refused_at_load() {
    let cfg = config(&quad_x(), 1.5, 8.0);
    let path = broken("partial_migration");
    let e = Autopilot::open(&path, &cfg, &Isolation::InProcess).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "autopilot library {} exports lockstep_autopilot_snapshot_size but not \
             lockstep_autopilot_snapshot, lockstep_autopilot_restore: the migration functions \
             (snapshot_size, snapshot, restore) come all three or none",
            path.display()
        )
    );
    let r = lockstep(&["check-lib".as_ref(), path.as_os_str()]);
    assert_eq!(r.code(), 1);
    assert!(
        r.stdout.contains(
            "migration     partial: refused (snapshot_size, snapshot and restore come together)"
        ),
        "{r}"
    );
}

#[test]
fn an_oversized_snapshot_is_refused() {
    let cfg = config(&quad_x(), 1.5, 8.0);
    for iso in [Isolation::InProcess, isolated()] {
        let mut ap = open(&broken("snapshot_oversize"), &cfg, &iso);
        assert_eq!(
            ap.snapshot().unwrap_err().to_string(),
            "autopilot snapshot failed: snapshot_size returned 1048577 bytes (must be in [1, \
             1048576])"
        );
    }
}

#[test]
fn a_crash_in_snapshot_is_reported_with_the_function() {
    let cfg = config(&quad_x(), 1.5, 8.0);
    let mut ap = open(&broken("snapshot_segv"), &cfg, &isolated());
    let e = ap.snapshot().unwrap_err().to_string();
    assert!(e.contains("SIGSEGV") && e.contains("in snapshot"), "{e}");
}

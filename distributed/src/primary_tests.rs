//! The primary against a scripted link: stale, duplicate, foreign and
//! damaged acks, the step deadline, a secondary's failure, a lost peer.

use std::collections::VecDeque;
use std::time::Duration;

use super::*;
use crate::protocol::{Ack, Failure, Report};

const FLEET: &str = r#"schema_version = 1
[simulation]
duration_s = 0.012
[world]
origin_lat_deg = 47.397742
origin_lon_deg = 8.545594
origin_alt_m = 488.0
[[vehicles]]
name = "a"
spec = "iris"
[[vehicles]]
name = "b"
spec = "iris"
start_north_m = 30.0
"#;

/// What a scripted secondary does with a step.
#[derive(Clone, Copy, PartialEq)]
enum Quirk {
    Answer,
    /// Also sends the previous step's ack again (stale) and this one twice.
    StaleAndDuplicate,
    /// A bit flipped after sealing.
    Damaged,
    /// Never answers.
    Silent,
    /// Reports a vehicle failure.
    Fails,
    /// The link loses the secondary.
    Lost,
    /// The vehicles fly north 10 m per ms across four levels; vehicle b's
    /// autopilot cannot migrate.
    Moving,
}

struct Scripted {
    n: u32,
    quirk: Quirk,
    queue: VecDeque<Ack>,
    steps: Vec<Step>,
}

impl Scripted {
    fn ack(&self, step: &Step, sender: u32) -> Ack {
        // Secondary i holds vehicle i (levels: one level, so all on 0; the
        // script answers for vehicle `sender` only when it exists).
        let mine = |p: u32| match self.quirk {
            Quirk::Moving => self.owner(p) == sender,
            _ => sender == 0,
        };
        let performers = [0u32, 1]
            .into_iter()
            .filter(|p| mine(*p) || step.release.contains(p) && self.owner(*p) == sender)
            .map(|p| {
                let north = match self.quirk {
                    Quirk::Moving => 30.0 * p as f64 + step.time_us as f64 * 0.01,
                    _ => 30.0 * p as f64,
                };
                Report {
                    performer: p,
                    position_ned_m: [north, 0.0, 0.0],
                    positions: vec![[north, 0.0, 0.0]],
                    // A bound no stretch fits in: every round one period.
                    speed_mps: 0.0,
                    accel_mps2: 1e12,
                    rows: Vec::new(),
                    row_count: 0,
                    state: step.release.contains(&p).then(|| vec![7, p as u8]),
                    can_migrate: !(self.quirk == Quirk::Moving && p == 1),
                    outcome: None,
                }
            })
            .collect();
        Ack {
            iteration: step.iteration,
            sender,
            time_us: step.time_us,
            performers,
            failure: None,
            mavlink: Vec::new(),
            recorded: Vec::new(),
            link_notes: Vec::new(),
            link_error: None,
            // Secondary k "worked" (k + 1) ms on every step.
            work_us: 1000 * (u64::from(sender) + 1),
            digest: [0; 32],
        }
        .sealed()
    }
}

impl Scripted {
    /// The owner of vehicle `p` after the steps sent so far.
    fn owner(&self, p: u32) -> u32 {
        let mut owner = 0;
        for s in &self.steps {
            if let Some((_, o)) = s.affinity.iter().find(|(q, _)| *q == p) {
                owner = *o;
            }
        }
        owner
    }
}

impl PrimaryLink for Scripted {
    fn secondaries(&self) -> usize {
        self.n as usize
    }
    fn peer_name(&self, index: u32) -> String {
        format!("secondary {index}")
    }
    fn broadcast(&mut self, step: &Step) -> Result<(), LinkError> {
        if self.quirk == Quirk::Lost && step.iteration == 2 {
            return Err(LinkError::PeerLost {
                peer: "secondary 1".into(),
                reason: "its liveliness token vanished".into(),
            });
        }
        for s in 0..self.n {
            let mut a = self.ack(step, s);
            match self.quirk {
                Quirk::StaleAndDuplicate if step.iteration > 0 => {
                    let mut stale = self.ack(self.steps.last().unwrap(), s);
                    stale.work_us = 9000;
                    self.queue.push_back(stale.sealed());
                    self.queue.push_back(a.clone());
                }
                Quirk::Damaged if step.iteration == 1 => {
                    a.time_us += 1;
                }
                Quirk::Silent if step.iteration == 1 && s == 1 => continue,
                Quirk::Fails if step.iteration == 1 && s == 0 => {
                    a.failure = Some(Failure {
                        performer: 1,
                        message: "vehicle `b`: the autopilot crashed".into(),
                        status: 1,
                    });
                    a = a.sealed();
                }
                _ => {}
            }
            self.queue.push_back(a);
        }
        self.steps.push(step.clone());
        Ok(())
    }
    fn next_ack(&mut self, timeout: Duration) -> Result<Option<Ack>, LinkError> {
        match self.queue.pop_front() {
            Some(a) => {
                // An ack arrives after its secondary's work.
                std::thread::sleep(Duration::from_micros(a.work_us));
                Ok(Some(a))
            }
            None => {
                std::thread::sleep(timeout.min(Duration::from_millis(5)));
                Ok(None)
            }
        }
    }
    fn control(&mut self, _: Duration) -> Result<Option<Control>, LinkError> {
        Ok(None)
    }
}

fn primary(quirk: Quirk) -> Primary<Scripted> {
    let text = match quirk {
        Quirk::Moving => FLEET
            .replace(
                "[[vehicles]]\nname = \"a\"",
                "[fleet]\nlevel_grid = { north_m = [-10.0, 190.0], east_m = [-10.0, 10.0], \
                 rows = 4, columns = 1 }\nlevel_buffer_m = 0.0\n[[vehicles]]\nname = \"a\"",
            )
            .replace("duration_s = 0.012", "duration_s = 0.02"),
        _ => FLEET.to_string(),
    };
    let fleet = FleetScenario::from_toml_str_with(&text, "fleet.toml", &[]).unwrap();
    let link = Scripted {
        n: 2,
        quirk,
        queue: VecDeque::new(),
        steps: Vec::new(),
    };
    Primary::new(
        link,
        fleet,
        PrimaryOptions {
            log_dir: None,
            autopilot: "unused.so".into(),
            step_deadline: Duration::from_millis(200),
        },
    )
    .unwrap()
}

#[test]
fn a_run_is_one_round_per_sync_boundary_then_a_stop() {
    let mut p = primary(Quirk::Answer);
    let out = p.run().unwrap();
    // 0, 4, 8, 12 ms, then stop.
    assert_eq!(out.fleet.syncs, 4);
    assert_eq!(out.fleet.end, Micros(12_000));
    let steps = &p.link.steps;
    assert_eq!(
        steps
            .iter()
            .map(|s| (s.iteration, s.time_us, s.stop))
            .collect::<Vec<_>>(),
        vec![
            (0, 0, false),
            (1, 4000, false),
            (2, 8000, false),
            (3, 12_000, false),
            (4, 12_000, true)
        ]
    );
    // Iteration 0 gives every vehicle to the owner of its level.
    assert_eq!(steps[0].affinity, vec![(0, 0), (1, 0)]);
    assert_eq!(out.refused_acks, 0);
    // Three time-advancing rounds, secondary 1's ack last with its 2 ms
    // of work each time; the parts add up to the rounds' time.
    assert_eq!(out.round_times.len(), 3);
    let parts = out.round_parts;
    assert_eq!(parts.secondary, Duration::from_millis(6));
    let sum = parts.send + parts.secondary + parts.transit + parts.checks + parts.rows;
    let rounds: Duration = out.round_times.iter().sum();
    assert!(
        sum <= rounds && sum * 10 >= rounds * 9,
        "{parts:?} {rounds:?}"
    );
    assert!(parts.transit >= Duration::from_millis(3), "{parts:?}");
}

#[test]
fn stale_and_duplicate_acks_are_refused() {
    let mut p = primary(Quirk::StaleAndDuplicate);
    let out = p.run().unwrap();
    assert_eq!(out.fleet.syncs, 4);
    // Per round after the first, per secondary: one stale, one duplicate
    // (4 rounds, 2 secondaries); the last secondary's duplicate of the
    // last round comes after the round is complete and is never read.
    assert_eq!(out.refused_acks, 4 * 2 * 2 - 1);
    // A refused ack's work (9 ms) is not the round's.
    assert_eq!(out.round_parts.secondary, Duration::from_millis(6));
}

#[test]
fn a_damaged_ack_stops_the_run() {
    let e = primary(Quirk::Damaged).run().unwrap_err();
    assert_eq!(
        e.to_string(),
        "the ack of secondary 0 for step 1 fails its digest"
    );
}

#[test]
fn a_silent_secondary_misses_the_step_deadline() {
    let e = primary(Quirk::Silent).run().unwrap_err();
    assert_eq!(
        e.to_string(),
        "secondary 1 did not acknowledge step 1 within 0.2 s"
    );
}

#[test]
fn a_vehicle_failure_stops_the_run_with_its_status() {
    let e = primary(Quirk::Fails).run().unwrap_err();
    assert!(matches!(e, PrimaryError::Vehicle(_, 1)));
    assert_eq!(e.to_string(), "vehicle `b`: the autopilot crashed");
}

#[test]
fn a_lost_peer_stops_the_run_and_the_others_are_told() {
    let mut p = primary(Quirk::Lost);
    let e = p.run().unwrap_err();
    assert_eq!(
        e.to_string(),
        "secondary 1 left: its liveliness token vanished"
    );
}

#[test]
fn a_vehicle_changing_owner_moves_and_one_that_cannot_is_pinned() {
    let mut p = primary(Quirk::Moving);
    let notices = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let n = notices.clone();
    p.on_notice(move |l| n.lock().unwrap().push(l.to_string()));
    let out = p.run().unwrap();
    assert_eq!(out.pinned, vec!["b".to_string()]);
    assert_eq!(
        notices.lock().unwrap().as_slice(),
        [
            "vehicle `b` stays on secondary 0: its autopilot cannot migrate (no \
          lockstep_autopilot_snapshot)"
        ]
    );
    let steps = &p.link.steps;
    // b is never released; a is, each time its level changes owner, in a
    // round that does not advance time, and arrives with its state at the
    // next step.
    assert!(steps.iter().all(|s| !s.release.contains(&1)));
    let releases: Vec<(u64, u64)> = steps
        .iter()
        .filter(|s| s.release.contains(&0))
        .map(|s| (s.iteration, s.time_us))
        .collect();
    assert!(!releases.is_empty());
    for (it, t) in &releases {
        let before = steps.iter().find(|s| s.iteration == it - 1).unwrap();
        assert_eq!(before.time_us, *t, "a transfer round repeats the boundary");
        let next = steps.iter().find(|s| s.iteration == it + 1).unwrap();
        assert_eq!(next.arrivals.len(), 1);
        assert_eq!(next.arrivals[0].state, vec![7, 0]);
        assert!(next.affinity.contains(&(0, next.arrivals[0].to)));
    }
    assert_eq!(out.migrations, releases.len() as u64);
}

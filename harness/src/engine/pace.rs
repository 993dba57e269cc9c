//! Wall-clock pacing (`--realtime`, `--speed X`): after a boundary, the run
//! sleeps until the wall clock has caught up with simulated time divided by
//! the speed. It only waits: what is simulated, and every output, is the
//! same as a run as fast as possible. A run that falls behind (a slow
//! autopilot, a slow machine) skips nothing; after a stall it keeps the
//! pace from where it is.

use std::time::{Duration, Instant};

use crate::Micros;

/// Behind the wall clock by more than this, pacing starts anew.
const STALL: Duration = Duration::from_millis(250);

/// The shortest sleep worth a system call; shorter debts are carried.
const MIN_SLEEP: Duration = Duration::from_micros(200);

/// Keeps a run to the wall clock at a speed (simulated s per wall s).
#[derive(Debug, Clone)]
pub struct Pace {
    speed: f64,
    start_wall: Instant,
    start_sim: Micros,
}

impl Pace {
    pub fn new(speed: f64, now: Micros) -> Pace {
        Pace {
            speed,
            start_wall: Instant::now(),
            start_sim: now,
        }
    }

    /// Sleeps until the wall clock reaches simulated time `t`. After a
    /// stall (a flight stack connecting, a slow step) of more than
    /// [`STALL`], pacing starts anew from here instead of running the
    /// debt off as fast as possible.
    pub fn wait_for(&mut self, t: Micros) {
        let sim_s = (t.0 - self.start_sim.0) as f64 * 1e-6;
        let due = self.start_wall + Duration::from_secs_f64(sim_s / self.speed);
        let now = Instant::now();
        match due.checked_duration_since(now) {
            Some(ahead) if ahead >= MIN_SLEEP => std::thread::sleep(ahead),
            Some(_) => {}
            None if now.duration_since(due) > STALL => {
                self.start_wall = now;
                self.start_sim = t;
            }
            None => {}
        }
    }
}

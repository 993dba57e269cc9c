//! Wall-clock pacing (`--realtime`, `--speed X`): after a boundary, the run
//! sleeps until the wall clock has caught up with simulated time divided by
//! the speed. It only waits: what is simulated, and every output, is the
//! same as a run as fast as possible. A run that falls behind (a slow
//! autopilot, a slow machine) does not try to catch up by skipping.

use std::time::{Duration, Instant};

use crate::Micros;

/// The shortest sleep worth a system call; shorter debts are carried.
const MIN_SLEEP: Duration = Duration::from_micros(200);

#[derive(Debug, Clone)]
pub(crate) struct Pace {
    speed: f64,
    start_wall: Instant,
    start_sim: Micros,
}

impl Pace {
    pub(crate) fn new(speed: f64, now: Micros) -> Pace {
        Pace {
            speed,
            start_wall: Instant::now(),
            start_sim: now,
        }
    }

    /// Sleeps until the wall clock reaches simulated time `t`.
    pub(crate) fn wait_for(&mut self, t: Micros) {
        let sim_s = (t.0 - self.start_sim.0) as f64 * 1e-6;
        let due = self.start_wall + Duration::from_secs_f64(sim_s / self.speed);
        if let Some(ahead) = due.checked_duration_since(Instant::now())
            && ahead >= MIN_SLEEP
        {
            std::thread::sleep(ahead);
        }
    }
}

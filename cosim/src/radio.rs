//! A radio between vehicles as a transfer function: every run, each
//! vehicle broadcasts its position; each report reaches each other vehicle
//! after `latency` (at the first run at or after it is due), unless lost —
//! with probability `loss`, or always beyond `range_m` at sending. Each
//! receiver's `traffic` input holds, per other vehicle in the declared
//! order, the latest report delivered: north, east, down (m) and its age at
//! this run (s); NaN until one arrives.
//!
//! Losses are drawn from one random stream per ordered pair, derived from
//! the system's seed and the names (`cosim.radio.<function>.<from>.<to>`):
//! one draw per report whatever the range, so the same seed loses the same
//! reports whatever else changes.

use std::collections::VecDeque;

use lockstep_harness::Micros;
use lockstep_harness::time::rng::{RngStreams, Stream};

use crate::report::{RadioReport, TransferReport};
use crate::transfer::Transfer;
use crate::vehicle::TRAFFIC_STRIDE;

#[derive(Debug, Clone, Copy)]
struct Report {
    due: Micros,
    sent: Micros,
    from: usize,
    to: usize,
    position: [f64; 3],
}

/// Radio settings.
#[derive(Debug, Clone, PartialEq)]
pub struct RadioLink {
    pub latency: Micros,
    /// Probability in [0, 1] that a report is lost.
    pub loss: f64,
    /// Reports between vehicles farther apart than this are lost, m.
    pub range_m: Option<f64>,
}

#[derive(Debug)]
pub struct Radio {
    link: RadioLink,
    n: usize,
    /// Per ordered pair (from * n + to).
    streams: Vec<Option<Stream>>,
    in_flight: VecDeque<Report>,
    /// Per ordered pair: the latest report delivered (position, sent).
    latest: Vec<Option<([f64; 3], Micros)>>,
    pub sent: u64,
    pub lost: u64,
    pub delivered: u64,
}

impl Radio {
    /// A radio among `vehicles` (participant names, in slot order) for the
    /// transfer function `name`.
    pub fn new(name: &str, vehicles: &[String], link: RadioLink, seed: u64) -> Radio {
        let n = vehicles.len();
        let rng = RngStreams::new(seed);
        let mut streams = Vec::with_capacity(n * n);
        for a in vehicles {
            for b in vehicles {
                streams.push((a != b).then(|| rng.stream(&format!("cosim.radio.{name}.{a}.{b}"))));
            }
        }
        Radio {
            link,
            n,
            streams,
            in_flight: VecDeque::new(),
            latest: vec![None; n * n],
            sent: 0,
            lost: 0,
            delivered: 0,
        }
    }
}

impl Transfer for Radio {
    fn check(&self, reads: &[usize], writes: &[usize]) -> Result<(), String> {
        if reads.len() != self.n || writes.len() != self.n {
            return Err(format!(
                "a radio among {} vehicles reads their {} positions and writes their {} traffic inputs",
                self.n, self.n, self.n
            ));
        }
        if let Some(w) = reads.iter().find(|w| **w != 3) {
            return Err(format!("a position has 3 values, not {w}"));
        }
        let need = (self.n - 1) * TRAFFIC_STRIDE;
        if let Some(w) = writes.iter().find(|w| **w < need) {
            return Err(format!(
                "a traffic input of {w} values holds {} neighbours; this radio reports {} (set `traffic_slots` to at least {})",
                w / TRAFFIC_STRIDE,
                self.n - 1,
                self.n - 1
            ));
        }
        Ok(())
    }

    fn run(&mut self, t: Micros, reads: &[&[f64]], writes: &mut [Vec<f64>]) -> Result<(), String> {
        let n = self.n;
        for from in 0..n {
            let p = [reads[from][0], reads[from][1], reads[from][2]];
            for (to, q) in reads.iter().enumerate() {
                let Some(stream) = &mut self.streams[from * n + to] else {
                    continue;
                };
                self.sent += 1;
                let draw = stream.uniform();
                let d =
                    ((p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2) + (p[2] - q[2]).powi(2)).sqrt();
                if draw < self.link.loss || self.link.range_m.is_some_and(|r| d.is_nan() || d > r) {
                    self.lost += 1;
                    continue;
                }
                self.in_flight.push_back(Report {
                    due: t + self.link.latency,
                    sent: t,
                    from,
                    to,
                    position: p,
                });
            }
        }
        // One latency for all: the queue is in due order.
        while self.in_flight.front().is_some_and(|r| r.due <= t) {
            let r = self.in_flight.pop_front().expect("checked");
            self.latest[r.from * n + r.to] = Some((r.position, r.sent));
            self.delivered += 1;
        }
        for (to, w) in writes.iter_mut().enumerate() {
            w.fill(f64::NAN);
            for (slot, from) in (0..n).filter(|f| *f != to).enumerate() {
                if let Some((p, sent)) = self.latest[from * n + to] {
                    let s = &mut w[slot * TRAFFIC_STRIDE..(slot + 1) * TRAFFIC_STRIDE];
                    s[..3].copy_from_slice(&p);
                    s[3] = (t - sent).as_secs_f64();
                }
            }
        }
        Ok(())
    }

    fn report(&self) -> TransferReport {
        TransferReport::Radio(RadioReport {
            reports_sent: self.sent,
            reports_lost: self.lost,
            reports_delivered: self.delivered,
        })
    }
}

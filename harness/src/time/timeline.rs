//! The timeline: boundaries in time order, and which cadences are due at each.
//!
//! Boundaries are every multiple of every cadence's period, every scenario
//! event time (any microsecond, on the tick grid or not), and the end. At a
//! boundary the stages run in [`crate::time::stage::STAGE_ORDER`]; then the plant
//! integrates to the next boundary with everything held.

use crate::{Cadence, CadenceError, Micros};

/// Most cadences a timeline holds (one bit each in [`Due`]).
pub const MAX_CADENCES: usize = 64;

/// What is due at a boundary: bit `i` for cadence `i`, and whether a
/// scenario event falls on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Due {
    pub cadences: u64,
    pub event: bool,
}

impl Due {
    pub fn contains(&self, cadence: usize) -> bool {
        self.cadences & (1 << cadence) != 0
    }
}

#[derive(Debug, Clone)]
pub struct Timeline {
    cadences: Vec<Cadence>,
    /// Per cadence, its next boundary: advancing adds the period, so no
    /// boundary costs a division.
    next_due: Vec<Micros>,
    /// Sorted, without duplicates.
    events: Vec<Micros>,
    /// Index of the first event after `now`.
    next_event: usize,
    now: Micros,
    end: Micros,
    started: bool,
}

impl Timeline {
    /// A timeline from 0 to `end` over `cadences` and scenario `events`.
    pub fn new(
        cadences: Vec<Cadence>,
        mut events: Vec<Micros>,
        end: Micros,
    ) -> Result<Self, CadenceError> {
        if cadences.len() > MAX_CADENCES {
            return Err(CadenceError::TooManyCadences { max: MAX_CADENCES });
        }
        for (i, c) in cadences.iter().enumerate() {
            if cadences[..i].iter().any(|o| o.name == c.name) {
                return Err(CadenceError::DuplicateCadence {
                    name: c.name.clone(),
                });
            }
        }
        events.sort_unstable();
        events.dedup();
        Ok(Timeline {
            next_due: vec![Micros::ZERO; cadences.len()],
            cadences,
            events,
            next_event: 0,
            now: Micros::ZERO,
            end,
            started: false,
        })
    }

    pub fn cadences(&self) -> &[Cadence] {
        &self.cadences
    }

    /// Index of the cadence named `name`.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.cadences.iter().position(|c| c.name == name)
    }

    pub fn now(&self) -> Micros {
        self.now
    }

    pub fn end(&self) -> Micros {
        self.end
    }

    /// What is due at `t`.
    pub fn due_at(&self, t: Micros) -> Due {
        let mut mask = 0u64;
        for (i, c) in self.cadences.iter().enumerate() {
            if t.is_multiple_of(c.period) {
                mask |= 1 << i;
            }
        }
        Due {
            cadences: mask,
            event: self.events.binary_search(&t).is_ok(),
        }
    }

    /// The time [`Timeline::advance`] would return next, without advancing.
    pub fn peek(&self) -> Option<Micros> {
        if !self.started {
            return Some(Micros::ZERO);
        }
        if self.now >= self.end {
            return None;
        }
        let mut next = self.end;
        for d in &self.next_due {
            next = next.min(*d);
        }
        if let Some(e) = self.events.get(self.next_event) {
            next = next.min(*e);
        }
        Some(next)
    }

    /// The next boundary and what is due there: first `0` itself, then each
    /// later boundary up to and including `end`; `None` after `end`.
    pub fn advance(&mut self) -> Option<(Micros, Due)> {
        let t = if !self.started {
            self.started = true;
            Micros::ZERO
        } else if self.now >= self.end {
            return None;
        } else {
            let mut next = self.end;
            for d in &self.next_due {
                next = next.min(*d);
            }
            if let Some(e) = self.events.get(self.next_event) {
                next = next.min(*e);
            }
            next
        };
        let mut mask = 0u64;
        for (i, (d, c)) in self.next_due.iter_mut().zip(&self.cadences).enumerate() {
            if *d == t {
                mask |= 1 << i;
                *d = Micros(d.0 + c.period.0);
            }
        }
        let mut event = false;
        while self.next_event < self.events.len() && self.events[self.next_event] <= t {
            event |= self.events[self.next_event] == t;
            self.next_event += 1;
        }
        self.now = t;
        Some((
            t,
            Due {
                cadences: mask,
                event,
            },
        ))
    }
}

/// Where the timeline stands (see crate::persist); its cadences, events
/// and end are the scenario's.
impl crate::persist::Persist for Timeline {
    fn save(&self, w: &mut Vec<u8>) {
        self.next_due.save(w);
        self.next_event.save(w);
        self.now.save(w);
        self.started.save(w);
    }
    fn load(
        &mut self,
        r: &mut crate::persist::Reader<'_>,
    ) -> Result<(), crate::persist::PersistError> {
        self.next_due.load(r)?;
        self.next_event.load(r)?;
        self.now.load(r)?;
        self.started.load(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TICK: Micros = Micros(1000);

    fn cad(name: &str, us: u64) -> Cadence {
        Cadence::from_micros(name, us, TICK).unwrap()
    }

    #[test]
    fn boundaries_come_in_order_with_what_is_due() {
        let mut t = Timeline::new(
            vec![
                cad("physics", 1000),
                cad("autopilot", 4000),
                cad("gps", 200_000),
            ],
            vec![Micros(2500), Micros(8000), Micros(2500)],
            Micros(10_000),
        )
        .unwrap();
        let mut seen = Vec::new();
        while let Some((at, due)) = t.advance() {
            seen.push((at.0, due.cadences, due.event));
        }
        assert_eq!(
            seen,
            [
                (0, 0b111, false),
                (1000, 0b001, false),
                (2000, 0b001, false),
                (2500, 0b000, true),
                (3000, 0b001, false),
                (4000, 0b011, false),
                (5000, 0b001, false),
                (6000, 0b001, false),
                (7000, 0b001, false),
                (8000, 0b011, true),
                (9000, 0b001, false),
                (10_000, 0b001, false),
            ]
        );
        assert_eq!(t.advance(), None);
    }

    #[test]
    fn an_end_off_the_grid_is_a_boundary_and_duplicates_are_refused() {
        let mut t = Timeline::new(vec![cad("autopilot", 4000)], vec![], Micros(9_500)).unwrap();
        let ends: Vec<u64> = std::iter::from_fn(|| t.advance())
            .map(|(m, _)| m.0)
            .collect();
        assert_eq!(ends, [0, 4000, 8000, 9500]);
        let err =
            Timeline::new(vec![cad("a", 1000), cad("a", 2000)], vec![], Micros(1)).unwrap_err();
        assert_eq!(err, CadenceError::DuplicateCadence { name: "a".into() });
        assert_eq!(
            Timeline::new(vec![cad("x", 1000)], vec![], Micros(1))
                .unwrap()
                .index_of("x"),
            Some(0)
        );
    }

    #[test]
    fn peeking_sees_what_advancing_returns() {
        let mut t = Timeline::new(
            vec![cad("a", 3000), cad("b", 5000)],
            vec![Micros(7000)],
            Micros(16_000),
        )
        .unwrap();
        let mut seen = Vec::new();
        while let Some(p) = t.peek() {
            let (a, _) = t.advance().unwrap();
            assert_eq!(p, a);
            seen.push(a.0);
        }
        assert_eq!(t.advance(), None);
        assert_eq!(
            seen,
            [
                0, 3000, 5000, 6000, 7000, 9000, 10_000, 12_000, 15_000, 16_000
            ]
        );
    }

    #[test]
    fn advancing_agrees_with_the_arithmetic_definition() {
        // Every boundary and its due set equal what due_at computes from
        // the multiples, over cadences that do not divide each other, off-grid
        // events and an end off the grid.
        let mut t = Timeline::new(
            vec![
                cad("physics", 1000),
                cad("a", 3000),
                cad("b", 7000),
                cad("c", 250_000),
            ],
            vec![Micros(1), Micros(6999), Micros(7000), Micros(123_456)],
            Micros(1_000_500),
        )
        .unwrap();
        let reference = t.clone();
        let mut last: Option<u64> = None;
        while let Some((at, due)) = t.advance() {
            assert_eq!(due, reference.due_at(at), "at {at:?}");
            if let Some(prev) = last {
                assert!(at.0 > prev);
                let next = [1000u64, 3000, 7000, 250_000]
                    .iter()
                    .map(|p| Micros(prev).next_multiple_after(Micros(*p)).0)
                    .chain(
                        [1u64, 6999, 7000, 123_456]
                            .into_iter()
                            .filter(|e| *e > prev),
                    )
                    .chain([1_000_500u64])
                    .min()
                    .unwrap();
                assert_eq!(at.0, next, "no boundary skipped after {prev}");
            }
            last = Some(at.0);
        }
        assert_eq!(last, Some(1_000_500u64));
    }

    #[test]
    fn an_hour_of_ticks_has_no_drift() {
        let mut t = Timeline::new(
            vec![cad("physics", 1000), cad("log", 10_000)],
            vec![],
            Micros(3_600_000_000),
        )
        .unwrap();
        let (mut n, mut logs, mut last) = (0u64, 0u64, Micros::ZERO);
        while let Some((at, due)) = t.advance() {
            assert!(at >= last);
            last = at;
            n += 1;
            logs += u64::from(due.contains(1));
        }
        assert_eq!((n, logs, last), (3_600_001, 360_001, Micros(3_600_000_000)));
    }
}

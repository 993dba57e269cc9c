//! The separation between every pair of a fleet's vehicles at each sync
//! boundary: proximity episodes (a pair closer than the proximity
//! distance), collisions (closer than their two radii together) and the
//! smallest separation seen.
//!
//! Pairs are visited in index order `(0,1), (0,2), …, (1,2), …` on one
//! thread, so the events come out in one order whatever ran the vehicles.

use lockstep_harness::Micros;

/// What happened to a pair at a boundary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EncounterKind {
    /// The pair came closer than the proximity distance.
    ProximityStart,
    /// The pair, in proximity at the previous boundary, is no longer.
    ProximityEnd,
    /// The pair came closer than their radii together: both crash.
    Collision,
}

impl EncounterKind {
    pub fn name(self) -> &'static str {
        match self {
            EncounterKind::ProximityStart => "proximity",
            EncounterKind::ProximityEnd => "proximity_end",
            EncounterKind::Collision => "collision",
        }
    }
}

/// One event of a pair: vehicles `a < b` (indices) at `time`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Encounter {
    pub time: Micros,
    pub kind: EncounterKind,
    pub a: usize,
    pub b: usize,
    pub separation_m: f64,
}

/// The closest a pair came.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Closest {
    pub time: Micros,
    pub a: usize,
    pub b: usize,
    pub separation_m: f64,
}

/// A [`Separation`] as it was.
#[derive(Debug, Clone)]
pub struct Checkpoint {
    near: Vec<bool>,
    collided: Vec<bool>,
    encounters: usize,
    dropped: u64,
    closest: Option<Closest>,
}

/// The most encounters kept; later ones are counted, not stored.
pub const MAX_ENCOUNTERS: usize = 100_000;

/// The separation check of a fleet.
#[derive(Debug, Clone)]
pub struct Separation {
    proximity_sq: f64,
    /// The collision distance of each pair, squared.
    contact_sq: Vec<f64>,
    n: usize,
    near: Vec<bool>,
    collided: Vec<bool>,
    encounters: Vec<Encounter>,
    dropped: u64,
    closest: Option<Closest>,
}

impl Separation {
    /// `radii[i]` is vehicle `i`'s declared radius.
    pub fn new(radii: &[f64], proximity_m: f64) -> Separation {
        let n = radii.len();
        let mut contact_sq = Vec::with_capacity(n * n.saturating_sub(1) / 2);
        for i in 0..n {
            for j in i + 1..n {
                let d = radii[i] + radii[j];
                contact_sq.push(d * d);
            }
        }
        let pairs = contact_sq.len();
        Separation {
            proximity_sq: proximity_m * proximity_m,
            contact_sq,
            n,
            near: vec![false; pairs],
            collided: vec![false; pairs],
            encounters: Vec::new(),
            dropped: 0,
            closest: None,
        }
    }

    /// Compares every pair at `t` (positions NED, m); returns the pairs
    /// that collided at this boundary (each pair collides once).
    pub fn observe(&mut self, t: Micros, positions: &[[f64; 3]]) -> Vec<(usize, usize, f64)> {
        assert_eq!(positions.len(), self.n, "one position per vehicle");
        let mut collisions = Vec::new();
        let mut p = 0;
        for i in 0..self.n {
            for j in i + 1..self.n {
                let (a, b) = (positions[i], positions[j]);
                let d2 = (a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2);
                if self
                    .closest
                    .is_none_or(|c| d2 < c.separation_m * c.separation_m)
                {
                    self.closest = Some(Closest {
                        time: t,
                        a: i,
                        b: j,
                        separation_m: d2.sqrt(),
                    });
                }
                let near = d2 < self.proximity_sq;
                if near != self.near[p] {
                    self.near[p] = near;
                    let kind = if near {
                        EncounterKind::ProximityStart
                    } else {
                        EncounterKind::ProximityEnd
                    };
                    self.push(t, kind, i, j, d2.sqrt());
                }
                if d2 < self.contact_sq[p] && !self.collided[p] {
                    self.collided[p] = true;
                    self.push(t, EncounterKind::Collision, i, j, d2.sqrt());
                    collisions.push((i, j, d2.sqrt()));
                }
                p += 1;
            }
        }
        collisions
    }

    fn push(&mut self, time: Micros, kind: EncounterKind, a: usize, b: usize, separation_m: f64) {
        if self.encounters.len() < MAX_ENCOUNTERS {
            self.encounters.push(Encounter {
                time,
                kind,
                a,
                b,
                separation_m,
            });
        } else {
            self.dropped += 1;
        }
    }

    /// Where the check is now, to go back to ([`Separation::rewind`]):
    /// a stretch observed after the fact that has to be redone.
    pub fn checkpoint(&self) -> Checkpoint {
        Checkpoint {
            near: self.near.clone(),
            collided: self.collided.clone(),
            encounters: self.encounters.len(),
            dropped: self.dropped,
            closest: self.closest,
        }
    }

    /// Back to `c`: what was observed since is forgotten.
    pub fn rewind(&mut self, c: Checkpoint) {
        self.near = c.near;
        self.collided = c.collided;
        self.encounters.truncate(c.encounters);
        self.dropped = c.dropped;
        self.closest = c.closest;
    }

    /// The encounters in the order they happened.
    pub fn encounters(&self) -> &[Encounter] {
        &self.encounters
    }

    /// Encounters past [`MAX_ENCOUNTERS`], counted only.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// The closest any pair came (none with fewer than two vehicles).
    pub fn closest(&self) -> Option<Closest> {
        self.closest
    }

    /// Collisions so far.
    pub fn collisions(&self) -> usize {
        self.collided.iter().filter(|c| **c).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pair_approaching_and_leaving_is_one_proximity_episode_and_one_collision() {
        let mut s = Separation::new(&[0.5, 0.5, 0.5], 5.0);
        let far = [[0.0, 0.0, 0.0], [10.0, 0.0, 0.0], [0.0, 100.0, 0.0]];
        assert!(s.observe(Micros(0), &far).is_empty());
        assert!(s.encounters().is_empty());
        // 3-4-5: exactly 5 m is not closer than 5 m.
        let at5 = [[0.0, 0.0, 0.0], [3.0, 4.0, 0.0], [0.0, 100.0, 0.0]];
        assert!(s.observe(Micros(1000), &at5).is_empty());
        assert!(s.encounters().is_empty());
        let near = [[0.0, 0.0, 0.0], [0.0, 0.0, 0.9], [0.0, 100.0, 0.0]];
        assert_eq!(s.observe(Micros(2000), &near), vec![(0, 1, 0.9)]);
        // Still touching: no second collision.
        assert!(s.observe(Micros(3000), &near).is_empty());
        assert!(s.observe(Micros(4000), &far).is_empty());
        let kinds: Vec<_> = s
            .encounters()
            .iter()
            .map(|e| (e.time.0, e.kind, e.a, e.b))
            .collect();
        assert_eq!(
            kinds,
            vec![
                (2000, EncounterKind::ProximityStart, 0, 1),
                (2000, EncounterKind::Collision, 0, 1),
                (4000, EncounterKind::ProximityEnd, 0, 1),
            ]
        );
        let c = s.closest().unwrap();
        assert_eq!((c.time.0, c.a, c.b, c.separation_m), (2000, 0, 1, 0.9));
        assert_eq!(s.collisions(), 1);
    }

    #[test]
    fn the_collision_distance_is_the_two_radii_together() {
        let mut s = Separation::new(&[0.3, 0.6], 1.0);
        assert!(
            s.observe(Micros(0), &[[0.0; 3], [0.0, 0.91, 0.0]])
                .is_empty()
        );
        assert_eq!(s.observe(Micros(1), &[[0.0; 3], [0.0, 0.89, 0.0]]).len(), 1);
    }

    #[test]
    fn pairs_are_reported_in_index_order() {
        let mut s = Separation::new(&[1.0; 4], 5.0);
        let all_at_origin = [[0.0; 3]; 4];
        let c = s.observe(Micros(0), &all_at_origin);
        assert_eq!(
            c.iter().map(|(a, b, _)| (*a, *b)).collect::<Vec<_>>(),
            vec![(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
        );
    }
}

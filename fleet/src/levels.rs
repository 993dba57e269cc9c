//! Levels: regions of airspace a distributed run assigns to its
//! secondaries. A vehicle belongs to one level at a time; it changes level
//! when it leaves its level's box grown by the buffer (so a vehicle flying
//! along a border does not go back and forth), for the first level (in the
//! scenario's order) that holds it; outside every level it keeps its own.
//! At the start a vehicle belongs to the first level holding it, else to
//! the nearest.
//!
//! Levels decide where a vehicle's physics runs, never what it computes: a
//! run's results do not depend on them.

/// One box of airspace (NED metres around the origin; altitude up).
#[derive(Debug, Clone, PartialEq)]
pub struct Level {
    pub name: String,
    pub north_m: [f64; 2],
    pub east_m: [f64; 2],
    /// `None`: every altitude.
    pub altitude_m: Option<[f64; 2]>,
}

impl Level {
    /// How far `p` (NED) is outside the box (0 inside).
    pub fn distance_m(&self, p: [f64; 3]) -> f64 {
        let out = |v: f64, [lo, hi]: [f64; 2]| (lo - v).max(v - hi).max(0.0);
        let dn = out(p[0], self.north_m);
        let de = out(p[1], self.east_m);
        let du = self.altitude_m.map_or(0.0, |a| out(-p[2], a));
        (dn * dn + de * de + du * du).sqrt()
    }

    fn holds(&self, p: [f64; 3], grown_m: f64) -> bool {
        let inside = |v: f64, [lo, hi]: [f64; 2]| v >= lo - grown_m && v < hi + grown_m;
        inside(p[0], self.north_m)
            && inside(p[1], self.east_m)
            && self.altitude_m.is_none_or(|a| inside(-p[2], a))
    }
}

/// The levels of a fleet and the buffer around them.
#[derive(Debug, Clone, PartialEq)]
pub struct Levels {
    pub levels: Vec<Level>,
    pub buffer_m: f64,
}

impl Default for Levels {
    /// One level holding all airspace.
    fn default() -> Levels {
        Levels {
            levels: vec![Level {
                name: "all".into(),
                north_m: [f64::NEG_INFINITY, f64::INFINITY],
                east_m: [f64::NEG_INFINITY, f64::INFINITY],
                altitude_m: None,
            }],
            buffer_m: 0.0,
        }
    }
}

impl Levels {
    /// `rows` × `columns` equal boxes over the given north and east spans,
    /// named `r<row>c<column>`, row-major from the south-west corner.
    pub fn grid(north_m: [f64; 2], east_m: [f64; 2], rows: usize, columns: usize) -> Vec<Level> {
        let dn = (north_m[1] - north_m[0]) / rows as f64;
        let de = (east_m[1] - east_m[0]) / columns as f64;
        let mut out = Vec::with_capacity(rows * columns);
        for r in 0..rows {
            for c in 0..columns {
                out.push(Level {
                    name: format!("r{r}c{c}"),
                    north_m: [
                        north_m[0] + dn * r as f64,
                        if r + 1 == rows {
                            north_m[1]
                        } else {
                            north_m[0] + dn * (r + 1) as f64
                        },
                    ],
                    east_m: [
                        east_m[0] + de * c as f64,
                        if c + 1 == columns {
                            east_m[1]
                        } else {
                            east_m[0] + de * (c + 1) as f64
                        },
                    ],
                    altitude_m: None,
                });
            }
        }
        out
    }

    /// The level of a vehicle starting at `p`: the first holding it, else
    /// the nearest (the first of equals).
    pub fn initial(&self, p: [f64; 3]) -> usize {
        if let Some(i) = self.levels.iter().position(|l| l.holds(p, 0.0)) {
            return i;
        }
        let mut best = 0;
        for (i, l) in self.levels.iter().enumerate() {
            if l.distance_m(p) < self.levels[best].distance_m(p) {
                best = i;
            }
        }
        best
    }

    /// The level of a vehicle at `p` that was in `current`.
    pub fn update(&self, current: usize, p: [f64; 3]) -> usize {
        if self.levels[current].holds(p, self.buffer_m) {
            return current;
        }
        self.levels
            .iter()
            .position(|l| l.holds(p, 0.0))
            .unwrap_or(current)
    }

    /// The secondary that owns level `level` of `secondaries`: levels are
    /// dealt in order (level i to secondary i mod n), so with more levels
    /// than secondaries each owns several and with fewer some are idle.
    pub fn owner(level: usize, secondaries: usize) -> usize {
        level % secondaries.max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn columns() -> Levels {
        Levels {
            levels: Levels::grid([0.0, 100.0], [0.0, 120.0], 1, 4),
            buffer_m: 2.0,
        }
    }

    #[test]
    fn a_grid_tiles_its_spans() {
        let g = Levels::grid([0.0, 100.0], [0.0, 120.0], 2, 3);
        assert_eq!(g.len(), 6);
        assert_eq!(g[0].name, "r0c0");
        assert_eq!((g[0].north_m, g[0].east_m), ([0.0, 50.0], [0.0, 40.0]));
        assert_eq!((g[5].north_m, g[5].east_m), ([50.0, 100.0], [80.0, 120.0]));
    }

    #[test]
    fn a_vehicle_changes_level_past_the_buffer_only() {
        let l = columns();
        assert_eq!(l.initial([10.0, 5.0, -10.0]), 0);
        // 31 m east is in the second column but within 2 m of the first.
        assert_eq!(l.update(0, [10.0, 31.0, -10.0]), 0);
        assert_eq!(l.update(0, [10.0, 32.5, -10.0]), 1);
        // Back west within the buffer: stays.
        assert_eq!(l.update(1, [10.0, 28.5, -10.0]), 1);
        assert_eq!(l.update(1, [10.0, 27.5, -10.0]), 0);
        // Outside every level: keeps its own.
        assert_eq!(l.update(3, [10.0, 500.0, -10.0]), 3);
        // Starting outside: the nearest.
        assert_eq!(l.initial([10.0, 130.0, 0.0]), 3);
        assert_eq!(l.initial([-50.0, 50.0, 0.0]), 1);
    }

    #[test]
    fn levels_are_dealt_to_secondaries_in_turn() {
        let owners: Vec<usize> = (0..5).map(|l| Levels::owner(l, 2)).collect();
        assert_eq!(owners, vec![0, 1, 0, 1, 0]);
        assert_eq!(
            Levels::owner(1, 4),
            1,
            "secondaries 2 and 3 of 4 are idle with 2 levels"
        );
    }
}

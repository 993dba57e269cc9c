//! Conservative lookahead: how many sync periods a fleet may step before
//! its next check, and whether the stretch it stepped kept to what was
//! granted.
//!
//! The coordinator only acts on a fleet at a boundary for a collision (and,
//! distributed, to move a vehicle between levels); the separation itself is
//! computed afterwards from the positions at every boundary, exactly as at
//! every sync period. From each vehicle's [`Reach`] (its speed and the most
//! acceleration its spec allows) the horizon is the longest stretch in
//! which no pair can come within its contact distance (their radii) plus
//! a margin. (Level changes of a distributed run are not a limit: where a
//! vehicle runs never changes what it computes, so one that leaves its
//! level moves after the stretch; bounding stretches by the levels' borders
//! cost region64 417 rounds instead of 112, a landed vehicle parked inside
//! a border's buffer capping every stretch.)
//! The bound is checked afterwards at every boundary of the stretch: a
//! vehicle farther from where it was than its reach, or a collision before
//! the stretch's last boundary, makes the stretch be redone from the
//! vehicles' snapshots at the plain sync period. So a fleet's results are
//! bit for bit the plain run's, whatever the horizons were.

use lockstep_harness::Micros;
use lockstep_harness::engine::Reach;

use crate::separation::Separation;

/// The lookahead's settings (`[fleet]` `lookahead_max_s`, `lookahead_margin_m`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LookaheadSettings {
    /// The longest stretch granted (0: every sync period is checked).
    pub max: Micros,
    /// Distance kept beyond a pair's contact distance, m.
    pub margin_m: f64,
}

/// The default longest stretch, s.
pub const DEFAULT_LOOKAHEAD_MAX_S: f64 = 1.0;
/// The default margin beyond the contact distance, m.
pub const DEFAULT_LOOKAHEAD_MARGIN_M: f64 = 1.0;

impl Default for LookaheadSettings {
    fn default() -> Self {
        LookaheadSettings {
            max: Micros((DEFAULT_LOOKAHEAD_MAX_S * 1e6) as u64),
            margin_m: DEFAULT_LOOKAHEAD_MARGIN_M,
        }
    }
}

/// The earliest time, s, in which a speed `s` and an acceleration `a`
/// cover `d` metres (`s t + a t² / 2 = d`, in the form without
/// cancellation); infinite when neither moves.
fn time_to_cover(d: f64, s: f64, a: f64) -> f64 {
    if d <= 0.0 {
        return 0.0;
    }
    let root = (s * s + 2.0 * a * d).sqrt();
    if s + root <= 0.0 {
        f64::INFINITY
    } else {
        2.0 * d / (s + root)
    }
}

/// The sync periods (at least 1, at most `settings.max` in periods) the
/// fleet may step from now: no pair of `reach` (radii `radii`) can come
/// within their contact distance plus the margin.
pub fn horizon(reach: &[Reach], radii: &[f64], settings: &LookaheadSettings, sync: Micros) -> u64 {
    let most = settings.max.0 / sync.0.max(1);
    if most <= 1 {
        return 1;
    }
    let period_s = sync.0 as f64 * 1e-6;
    // Checking more than one period ahead is only worth it past two.
    let floor_s = 2.0 * period_s;
    let mut t = most as f64 * period_s;
    for (i, a) in reach.iter().enumerate() {
        for (j, b) in reach.iter().enumerate().skip(i + 1) {
            let gap = a.moved(b.position_ned_m) - radii[i] - radii[j] - settings.margin_m;
            t = t.min(time_to_cover(
                gap,
                a.speed_mps + b.speed_mps,
                a.accel_mps2 + b.accel_mps2,
            ));
            if t < floor_s {
                return 1;
            }
        }
        if t < floor_s {
            return 1;
        }
    }
    ((t / period_s).floor() as u64).clamp(1, most)
}

/// The first vehicle, if any, found farther from where it was than its
/// reach allows at `elapsed_s` after the stretch began (`positions[i]`
/// where vehicle `i` is then).
pub fn out_of_reach(reach: &[Reach], positions: &[[f64; 3]], elapsed_s: f64) -> Option<usize> {
    reach
        .iter()
        .zip(positions)
        .position(|(r, p)| r.moved(*p) > r.within(elapsed_s))
}

/// The boundaries of a stretch of `periods` sync periods of `sync` from
/// `now`, the run's `end` the last at most.
pub fn boundaries(now: Micros, periods: u64, sync: Micros, end: Micros) -> Vec<Micros> {
    let mut times: Vec<Micros> = Vec::with_capacity(periods as usize);
    for k in 1..=periods {
        let t = Micros((now.0 + k * sync.0).min(end.0));
        if t > now && times.last() != Some(&t) {
            times.push(t);
        }
    }
    times
}

/// Checks a stretch stepped from `start` through `times`: at each boundary
/// `k`, every vehicle's position (`at(k)`) against its `reach`, then the
/// separation observed there, as at every sync period. The collisions at
/// the last boundary (to act on there), or `None` when the stretch broke
/// (a vehicle beyond its reach, a collision before the last boundary):
/// then `separation` is as it was before.
pub fn check_stretch(
    separation: &mut Separation,
    reach: &[Reach],
    start: Micros,
    times: &[Micros],
    at: impl Fn(usize) -> Vec<[f64; 3]>,
) -> Option<Vec<(usize, usize, f64)>> {
    let before = separation.checkpoint();
    let mut collided = Vec::new();
    for (k, t) in times.iter().enumerate() {
        let positions = at(k);
        let elapsed_s = (t.0 - start.0) as f64 * 1e-6;
        let broke = out_of_reach(reach, &positions, elapsed_s).is_some() || {
            collided = separation.observe(*t, &positions);
            !collided.is_empty() && k + 1 < times.len()
        };
        if broke {
            separation.rewind(before);
            return None;
        }
    }
    Some(collided)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(n: f64, e: f64, speed: f64, accel: f64) -> Reach {
        Reach {
            position_ned_m: [n, e, -10.0],
            speed_mps: speed,
            accel_mps2: accel,
        }
    }

    #[test]
    fn the_time_to_cover_a_distance_solves_the_motion() {
        // 2 m/s and 4 m/s²: 2 t + 2 t² = 12 at t = 2.
        assert!((time_to_cover(12.0, 2.0, 4.0) - 2.0).abs() < 1e-12);
        // No acceleration: d / s; from rest: sqrt(2 d / a).
        assert_eq!(time_to_cover(10.0, 5.0, 0.0), 2.0);
        assert!((time_to_cover(8.0, 0.0, 4.0) - 2.0).abs() < 1e-12);
        assert_eq!(time_to_cover(1.0, 0.0, 0.0), f64::INFINITY);
        assert_eq!(time_to_cover(-1.0, 3.0, 3.0), 0.0);
    }

    #[test]
    fn the_horizon_is_the_stretch_before_the_closest_pair_could_touch() {
        let s = LookaheadSettings {
            max: Micros(1_000_000),
            margin_m: 1.0,
        };
        let sync = Micros(4000);
        // 100 m apart, radii 0.5 each, margin 1: 98 m to close at
        // 2 × (10 m/s, 30 m/s²): 20 t + 30 t² = 98 at t = 1.5 s > 1 s.
        let far = [at(0.0, 0.0, 10.0, 30.0), at(100.0, 0.0, 10.0, 30.0)];
        assert_eq!(horizon(&far, &[0.5, 0.5], &s, sync), 250);
        // 10 m apart: 20 t + 30 t² = 8 at t = 0.2551 s: 63 periods.
        let near = [at(0.0, 0.0, 10.0, 30.0), at(10.0, 0.0, 10.0, 30.0)];
        let t = time_to_cover(8.0, 20.0, 60.0);
        assert_eq!(
            horizon(&near, &[0.5, 0.5], &s, sync),
            (t / 0.004).floor() as u64
        );
        // Within the margin: every period.
        let touching = [at(0.0, 0.0, 0.0, 30.0), at(1.9, 0.0, 0.0, 30.0)];
        assert_eq!(horizon(&touching, &[0.5, 0.5], &s, sync), 1);
        // Lookahead off.
        let off = LookaheadSettings {
            max: Micros(0),
            ..s
        };
        assert_eq!(horizon(&far, &[0.5, 0.5], &off, sync), 1);
    }

    #[test]
    fn a_stretch_ends_at_the_run_s_end_and_breaks_on_an_early_collision() {
        let (s, e) = (Micros(4000), Micros(20_000));
        assert_eq!(
            boundaries(Micros(8000), 5, s, e),
            vec![Micros(12_000), Micros(16_000), Micros(20_000)]
        );
        assert!(boundaries(e, 3, s, e).is_empty());
        let r = [at(0.0, 0.0, 1.0, 1.0), at(10.0, 0.0, 5000.0, 100.0)];
        let mut sep = Separation::new(&[0.5, 0.5], 5.0);
        let times = [Micros(4000), Micros(8000)];
        // b meets a at the first boundary: broken, nothing observed kept.
        let meet = |k: usize| vec![[0.0, 0.0, -10.0], [[0.5, 8.0][k], 0.0, -10.0]];
        assert_eq!(check_stretch(&mut sep, &r, Micros(0), &times, meet), None);
        assert!(sep.encounters().is_empty() && sep.closest().is_none());
        // ... at the last one: kept, the collision to act on there.
        let late = |k: usize| vec![[0.0, 0.0, -10.0], [[8.0, 0.5][k], 0.0, -10.0]];
        let c = check_stretch(&mut sep, &r, Micros(0), &times, late).unwrap();
        assert_eq!(c, vec![(0, 1, 0.5)]);
        assert_eq!(sep.collisions(), 1);
    }

    #[test]
    fn a_vehicle_beyond_its_reach_is_found() {
        let r = [at(0.0, 0.0, 1.0, 2.0), at(50.0, 0.0, 1.0, 2.0)];
        // After 1 s the reach is 1 + 1 = 2 m.
        let kept = [[1.9, 0.0, -10.0], [50.0, 1.99, -10.0]];
        assert_eq!(out_of_reach(&r, &kept, 1.0), None);
        let broke = [[1.9, 0.0, -10.0], [50.0, 0.0, -12.5]];
        assert_eq!(out_of_reach(&r, &broke, 1.0), Some(1));
    }
}

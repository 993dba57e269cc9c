//! No-fly zones (circles on the NED plane) and routes around them.

/// A no-fly zone: a vertical cylinder, m from the world origin.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Zone {
    pub north_m: f64,
    pub east_m: f64,
    pub radius_m: f64,
}

impl Zone {
    /// Distance from `p` (north, east) to the zone's edge; negative inside.
    pub fn clearance(&self, p: [f64; 2]) -> f64 {
        (p[0] - self.north_m).hypot(p[1] - self.east_m) - self.radius_m
    }

    /// The closest approach of segment `a`→`b` to the centre: its distance
    /// and the closest point.
    fn closest(&self, a: [f64; 2], b: [f64; 2]) -> (f64, [f64; 2]) {
        let c = [self.north_m, self.east_m];
        let d = [b[0] - a[0], b[1] - a[1]];
        let len2 = d[0] * d[0] + d[1] * d[1];
        let s = if len2 == 0.0 {
            0.0
        } else {
            (((c[0] - a[0]) * d[0] + (c[1] - a[1]) * d[1]) / len2).clamp(0.0, 1.0)
        };
        let p = [a[0] + s * d[0], a[1] + s * d[1]];
        ((p[0] - c[0]).hypot(p[1] - c[1]), p)
    }
}

/// The first zone (with `margin`) the segment `a`→`b` passes through.
fn blocking(zones: &[Zone], margin: f64, a: [f64; 2], b: [f64; 2]) -> Option<(Zone, [f64; 2])> {
    zones.iter().find_map(|z| {
        let (d, p) = z.closest(a, b);
        (d < z.radius_m + margin).then_some((*z, p))
    })
}

/// Waypoints (north, east) from `a` to `b` (both included) that keep
/// `margin` from every zone: a blocked leg is split at a point beside the
/// zone, on the side its closest approach lies, far enough that both new
/// legs clear it; `None` when an end lies in a zone or no route is found
/// within a few detours.
pub fn route(zones: &[Zone], margin: f64, a: [f64; 2], b: [f64; 2]) -> Option<Vec<[f64; 2]>> {
    if zones
        .iter()
        .any(|z| z.clearance(a) < margin || z.clearance(b) < margin)
    {
        return None;
    }
    let mut path = vec![a, b];
    let mut i = 0;
    let mut detours = 0;
    while i + 1 < path.len() {
        let Some((z, p)) = blocking(zones, margin, path[i], path[i + 1]) else {
            i += 1;
            continue;
        };
        detours += 1;
        if detours > 16 {
            return None;
        }
        let c = [z.north_m, z.east_m];
        let mut n = [p[0] - c[0], p[1] - c[1]];
        let len = n[0].hypot(n[1]);
        if len < 1e-9 {
            // Through the centre: go round on the left of the leg.
            let d = [path[i + 1][0] - path[i][0], path[i + 1][1] - path[i][1]];
            n = [-d[1], d[0]];
        }
        let len = n[0].hypot(n[1]);
        // A point at r·√2 beside the centre: the legs to it and from it
        // are tangent-ish and clear the circle of radius r.
        let r = (z.radius_m + margin) * std::f64::consts::SQRT_2 * 1.05;
        path.insert(i + 1, [c[0] + n[0] / len * r, c[1] + n[1] / len * r]);
    }
    Some(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clear_of(zones: &[Zone], margin: f64, path: &[[f64; 2]]) -> f64 {
        let mut worst = f64::INFINITY;
        for w in path.windows(2) {
            for z in zones {
                worst = worst.min(z.closest(w[0], w[1]).0 - z.radius_m - margin);
            }
        }
        worst
    }

    #[test]
    fn a_clear_leg_is_left_alone() {
        let z = [Zone {
            north_m: 100.0,
            east_m: 100.0,
            radius_m: 20.0,
        }];
        assert_eq!(
            route(&z, 5.0, [0.0, 0.0], [200.0, 0.0]).unwrap(),
            vec![[0.0, 0.0], [200.0, 0.0]]
        );
    }

    #[test]
    fn a_blocked_leg_goes_round_and_clears_the_margin() {
        let zones = [
            Zone {
                north_m: 100.0,
                east_m: 3.0,
                radius_m: 40.0,
            },
            Zone {
                north_m: 220.0,
                east_m: 0.0,
                radius_m: 30.0,
            },
        ];
        for b in [[300.0, 0.0], [300.0, 40.0], [150.0, -5.0]] {
            let p = route(&zones, 10.0, [0.0, 0.0], b).unwrap();
            assert!(p.len() > 2, "{p:?}");
            assert!(clear_of(&zones, 10.0, &p) >= 0.0, "{p:?}");
        }
        // Straight through the centre.
        let z = [Zone {
            north_m: 100.0,
            east_m: 0.0,
            radius_m: 40.0,
        }];
        let p = route(&z, 10.0, [0.0, 0.0], [200.0, 0.0]).unwrap();
        assert_eq!(p.len(), 3);
        assert!(clear_of(&z, 10.0, &p) >= 0.0);
    }

    #[test]
    fn an_end_in_a_zone_has_no_route() {
        let z = [Zone {
            north_m: 100.0,
            east_m: 0.0,
            radius_m: 40.0,
        }];
        assert_eq!(route(&z, 10.0, [0.0, 0.0], [95.0, 5.0]), None);
        assert_eq!(route(&z, 10.0, [0.0, 0.0], [145.0, 0.0]), None);
    }
}

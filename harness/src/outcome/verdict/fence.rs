//! The fence a fly-away is measured against: the smallest north-east box
//! holding the start and every mission item, and the highest item's
//! altitude. It grows with every mission the vehicle is given.

/// The mission's area.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fence {
    pub north_m: [f64; 2],
    pub east_m: [f64; 2],
    /// The highest altitude (above the origin) of the start and the items.
    pub ceiling_m: f64,
}

impl Fence {
    /// The area of one point.
    pub fn at(north_m: f64, east_m: f64, altitude_m: f64) -> Fence {
        Fence {
            north_m: [north_m; 2],
            east_m: [east_m; 2],
            ceiling_m: altitude_m,
        }
    }

    /// Grows the area to hold a point (`None`: an item without a place of
    /// its own, e.g. a takeoff where the vehicle is).
    pub fn include(&mut self, north_east: Option<(f64, f64)>, altitude_m: f64) {
        if let Some((n, e)) = north_east
            && n.is_finite()
            && e.is_finite()
        {
            self.north_m = [self.north_m[0].min(n), self.north_m[1].max(n)];
            self.east_m = [self.east_m[0].min(e), self.east_m[1].max(e)];
        }
        if altitude_m.is_finite() {
            self.ceiling_m = self.ceiling_m.max(altitude_m);
        }
    }

    /// How far beyond the area and `margin_m` round it the point is (none
    /// when within): horizontally from the box, vertically above the
    /// ceiling, whichever is more.
    pub fn beyond(&self, north_m: f64, east_m: f64, altitude_m: f64, margin_m: f64) -> Option<f64> {
        let out = |v: f64, r: [f64; 2]| (r[0] - v).max(v - r[1]).max(0.0);
        let (dn, de) = (out(north_m, self.north_m), out(east_m, self.east_m));
        let d2 = dn * dn + de * de;
        let vertical = altitude_m - self.ceiling_m - margin_m;
        // Within, the common case, without a square root.
        if d2 <= margin_m * margin_m && vertical <= 0.0 {
            return None;
        }
        let beyond = (d2.sqrt() - margin_m).max(vertical);
        (beyond > 0.0).then_some(beyond)
    }
}

//! The power bus: batteries in parallel feeding the motors and avionics.
//!
//! The bus voltage solves `V = E - L(V) / G`, where the load `L(V)` is the
//! motors' currents through their ESCs plus a constant-power avionics load.
//! Each motor's winding current `(d V - e) / R` is linear in `V` until it
//! clamps at 0 or at its limit, so for a given set of clamped motors the
//! equation is a quadratic with a closed-form root. [`solve`] classifies the
//! motors, solves, and reclassifies until the set is consistent: an exact
//! solution, no tolerance, at most `n + 2` passes (one or two in practice).

/// How parallel batteries share the load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sharing {
    /// Physically: each battery supplies `(E_j - V) / R0_j`.
    Resistance,
    /// Idealised balancing: each supplies an equal share.
    Equal,
}

/// Newton iterations of the bus solve.
pub const BUS_ITERATIONS: usize = 4;

/// The Thevenin source equivalent to the connected batteries.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Source {
    /// Open-circuit bus voltage.
    pub emf_v: f64,
    /// Conductance 1/R of the equivalent source (infinite for R = 0).
    pub conductance_s: f64,
    /// Connected batteries.
    pub count: usize,
}

impl Source {
    /// Combines batteries with internal EMFs `emf[j]` and resistances `r0[j]`
    /// (only those with `connected[j]`).
    pub fn combine(sharing: Sharing, emf: &[f64], r0: &[f64], connected: &[bool]) -> Source {
        let mut count = 0usize;
        let (mut sum_g, mut sum_eg, mut sum_e, mut sum_r) = (0.0, 0.0, 0.0, 0.0);
        for j in 0..emf.len() {
            if !connected[j] {
                continue;
            }
            count += 1;
            sum_e += emf[j];
            sum_r += r0[j];
            if r0[j] > 0.0 {
                sum_g += 1.0 / r0[j];
                sum_eg += emf[j] / r0[j];
            }
        }
        if count == 0 {
            return Source {
                emf_v: 0.0,
                conductance_s: 0.0,
                count,
            };
        }
        let n = count as f64;
        match sharing {
            Sharing::Resistance if sum_r > 0.0 && sum_g > 0.0 && sum_g.is_finite() => Source {
                emf_v: sum_eg / sum_g,
                conductance_s: sum_g,
                count,
            },
            // Equal shares: V = mean(E) - mean(R0) * I / n.
            _ => Source {
                emf_v: sum_e / n,
                conductance_s: if sum_r > 0.0 {
                    n * n / sum_r
                } else {
                    f64::INFINITY
                },
                count,
            },
        }
    }

    /// Current of battery `j` when the bus carries `load_a`.
    pub fn battery_current(
        &self,
        sharing: Sharing,
        emf_j: f64,
        r0_j: f64,
        bus_v: f64,
        load_a: f64,
    ) -> f64 {
        match sharing {
            Sharing::Resistance if r0_j > 0.0 && self.conductance_s.is_finite() => {
                (emf_j - bus_v) / r0_j
            }
            _ => load_a / self.count as f64,
        }
    }
}

/// The motors on the bus: duty `d_i`, back-EMF `e_i`, and the drive constants.
#[derive(Debug, Clone, Copy)]
pub struct MotorLoads<'a> {
    pub duty: &'a [f64],
    pub back_emf_v: &'a [f64],
    pub inv_resistance: f64,
    pub current_limit_a: f64,
    pub inv_efficiency: f64,
}

impl MotorLoads<'_> {
    /// Winding current of motor `i` at bus voltage `v`.
    pub fn current(&self, i: usize, v: f64) -> f64 {
        ((self.duty[i] * v - self.back_emf_v[i]) * self.inv_resistance)
            .clamp(0.0, self.current_limit_a)
    }

    /// Current drawn from the bus by the motors at `v`.
    pub fn bus_current(&self, v: f64) -> f64 {
        let mut s = 0.0;
        for i in 0..self.duty.len() {
            s += self.duty[i] * self.current(i, v);
        }
        s * self.inv_efficiency
    }

    /// Bit mask of motors in their linear (unclamped) range at `v`, and of
    /// motors at their current limit.
    fn classify(&self, v: f64) -> (u32, u32) {
        let (mut linear, mut saturated) = (0u32, 0u32);
        for i in 0..self.duty.len() {
            let raw = (self.duty[i] * v - self.back_emf_v[i]) * self.inv_resistance;
            if raw >= self.current_limit_a {
                saturated |= 1 << i;
            } else if raw > 0.0 {
                linear |= 1 << i;
            }
        }
        (linear, saturated)
    }
}

/// Exact bus voltage and load current for the motors and a constant-power
/// avionics load `avionics_w`. The voltage is kept in `[floor, emf]`.
pub fn solve(source: &Source, floor_v: f64, motors: &MotorLoads, avionics_w: f64) -> (f64, f64) {
    let load = |v: f64| motors.bus_current(v) + if v > 0.0 { avionics_w / v } else { 0.0 };
    if source.count == 0 || source.emf_v <= 0.0 {
        return (0.0, 0.0);
    }
    let hi = source.emf_v;
    let lo = floor_v.min(hi);
    if !source.conductance_s.is_finite() {
        return (hi, load(hi));
    }
    let g = source.conductance_s;
    let (ir, ie) = (motors.inv_resistance, motors.inv_efficiency);
    let n = motors.duty.len();
    let mut v = hi;
    let mut current = 0.0;
    // Classify at the open-circuit voltage, then solve, reclassify at the
    // solution, and repeat while the set changes.
    let mut set = motors.classify(v);
    for _ in 0..n + 2 {
        // Load with this set: A V - B + C + P / V.
        let (mut a, mut b, mut c) = (0.0, 0.0, 0.0);
        for i in 0..n {
            let d = motors.duty[i];
            let bit = 1u32 << i;
            if set.0 & bit != 0 {
                a += d * d;
                b += d * motors.back_emf_v[i];
            } else if set.1 & bit != 0 {
                c += d;
            }
        }
        let (a, b, c) = (a * ir * ie, b * ir * ie, c * motors.current_limit_a * ie);
        // G V = G E - (A V - B + C + P/V)  =>  (G + A) V^2 - (G E + B - C) V + P = 0.
        let a2 = g + a;
        let b1 = g * hi + b - c;
        let disc = b1 * b1 - 4.0 * a2 * avionics_w;
        let root = if avionics_w == 0.0 {
            b1 / a2
        } else if disc >= 0.0 {
            (b1 + disc.sqrt()) / (2.0 * a2)
        } else {
            // More power than the source can deliver: the bus collapses to
            // the maximum-power point.
            b1 / (2.0 * a2)
        };
        v = root.clamp(lo, hi);
        let next = motors.classify(v);
        if next == set {
            // The sums describe the load exactly for this set.
            current = a * v - b + c + if v > 0.0 { avionics_w / v } else { 0.0 };
            break;
        }
        set = next;
        current = load(v);
    }
    (v, current)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn motors<'a>(duty: &'a [f64], emf: &'a [f64], limit: f64) -> MotorLoads<'a> {
        MotorLoads {
            duty,
            back_emf_v: emf,
            inv_resistance: 1.0 / 0.25,
            current_limit_a: limit,
            inv_efficiency: 1.0 / 0.98,
        }
    }

    /// The residual of the bus equation, solved independently by bisection.
    fn bisect(s: &Source, m: &MotorLoads, p: f64) -> f64 {
        let r = |v: f64| v - s.emf_v + (m.bus_current(v) + p / v) / s.conductance_s;
        let (mut lo, mut hi) = (1e-3, s.emf_v);
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if r(mid) > 0.0 { hi = mid } else { lo = mid }
        }
        lo
    }

    #[test]
    fn exact_solution_matches_bisection_with_clamped_and_linear_motors() {
        let s = Source::combine(Sharing::Resistance, &[12.4], &[0.02], &[true]);
        // Linear, at 0 (back-EMF above the supply), near and at the limit.
        for (duty, emf, limit, p) in [
            (
                vec![0.5, 0.5, 0.5, 0.5],
                vec![1.5, 1.5, 1.5, 1.5],
                60.0,
                5.0,
            ),
            (
                vec![0.1, 0.6, 0.9, 1.0],
                vec![3.0, 1.0, 0.5, 0.0],
                30.0,
                5.0,
            ),
            (vec![1.0, 1.0], vec![0.0, 0.0], 20.0, 0.0),
            (vec![0.0, 0.0, 0.0], vec![0.0, 0.0, 0.0], 60.0, 8.0),
        ] {
            let m = motors(&duty, &emf, limit);
            let (v, i) = solve(&s, 0.0, &m, p);
            let expect = bisect(&s, &m, p);
            assert!((v - expect).abs() < 1e-9, "{duty:?}: {v} vs {expect}");
            assert!((i - (m.bus_current(v) + p / v)).abs() < 1e-12);
            assert!(
                (v - (12.4 - 0.02 * i)).abs() < 1e-9,
                "the source equation holds"
            );
        }
    }

    #[test]
    fn parallel_batteries_share_by_resistance_or_equally() {
        let emf = [12.0, 11.8];
        let r0 = [0.02, 0.04];
        // One motor at its 30 A limit, 100 % duty, efficiency 1.
        let duty = [1.0];
        let lim = MotorLoads {
            duty: &duty,
            back_emf_v: &[0.0],
            inv_resistance: 1e3,
            current_limit_a: 30.0,
            inv_efficiency: 1.0,
        };
        let s = Source::combine(Sharing::Resistance, &emf, &r0, &[true, true]);
        let (v, i) = solve(&s, 0.0, &lim, 0.0);
        let i0 = s.battery_current(Sharing::Resistance, emf[0], r0[0], v, i);
        let i1 = s.battery_current(Sharing::Resistance, emf[1], r0[1], v, i);
        assert!((i0 + i1 - 30.0).abs() < 1e-9, "{i0} + {i1}");
        assert!((emf[0] - r0[0] * i0 - v).abs() < 1e-9 && (emf[1] - r0[1] * i1 - v).abs() < 1e-9);
        let e = Source::combine(Sharing::Equal, &emf, &r0, &[true, true]);
        let (ve, ie) = solve(&e, 0.0, &lim, 0.0);
        assert_eq!(
            e.battery_current(Sharing::Equal, emf[0], r0[0], ve, ie),
            15.0
        );
        assert!((ve - (11.9 - 0.03 * 15.0)).abs() < 1e-9, "{ve}");
    }

    #[test]
    fn floor_disconnection_and_constant_power() {
        let s = Source::combine(Sharing::Resistance, &[12.0], &[0.1], &[true]);
        let short = motors(&[1.0], &[0.0], 1e6);
        let (v, _) = solve(&s, 9.0, &short, 0.0);
        assert_eq!(v, 9.0, "the floor holds under a short");
        let none = Source::combine(Sharing::Resistance, &[12.0], &[0.1], &[false]);
        assert_eq!(solve(&none, 9.0, &short, 5.0), (0.0, 0.0));
        // 60 W constant power alone: V (E - V) / R0 = P.
        let idle = motors(&[0.0], &[0.0], 60.0);
        let (v, i) = solve(&s, 0.0, &idle, 60.0);
        assert!(
            (v * (12.0 - v) / 0.1 - 60.0).abs() < 1e-9 && (i * v - 60.0).abs() < 1e-9,
            "{v}"
        );
    }
}

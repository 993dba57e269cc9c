//! The power bus: batteries in parallel feeding the motors and avionics.
//!
//! The bus voltage solves `V = E - L(V) / G` where the load `L(V)` (motor
//! currents through the ESCs plus a constant-power avionics load) depends on
//! `V`, by a fixed number of Newton steps from the open-circuit voltage: the
//! same operations every evaluation, no tolerance-dependent loop.

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

/// Solves the bus voltage for a load given as `load(V) -> (current, dcurrent/dV)`.
/// Returns `(voltage, load current)`. The voltage is kept in `[floor, emf]`.
pub fn solve(source: &Source, floor_v: f64, load: impl Fn(f64) -> (f64, f64)) -> (f64, f64) {
    if source.count == 0 || source.emf_v <= 0.0 {
        return (0.0, 0.0);
    }
    let hi = source.emf_v;
    let lo = floor_v.min(hi);
    if !source.conductance_s.is_finite() {
        let (i, _) = load(hi);
        return (hi, i);
    }
    let g = source.conductance_s;
    let mut v = hi;
    for _ in 0..BUS_ITERATIONS {
        let (i, di) = load(v);
        // r(V) = V - E + L(V)/G; r'(V) = 1 + L'(V)/G.
        let r = v - hi + i / g;
        let dr = 1.0 + di / g;
        v = (v - r / dr).clamp(lo, hi);
    }
    let (i, _) = load(v);
    (v, i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resistive_load_has_the_closed_form_solution() {
        // E = 12, R0 = 0.1 (G = 10), load R = 1 ohm: V = E R / (R + R0).
        let s = Source::combine(Sharing::Resistance, &[12.0], &[0.1], &[true]);
        let (v, i) = solve(&s, 0.0, |v| (v / 1.0, 1.0));
        assert!((v - 12.0 / 1.1).abs() < 1e-12, "{v}");
        assert!((i - v).abs() < 1e-12);
    }

    #[test]
    fn parallel_batteries_share_by_resistance_or_equally() {
        let emf = [12.0, 11.8];
        let r0 = [0.02, 0.04];
        let s = Source::combine(Sharing::Resistance, &emf, &r0, &[true, true]);
        let (v, i) = solve(&s, 0.0, |_| (30.0, 0.0));
        let i0 = s.battery_current(Sharing::Resistance, emf[0], r0[0], v, i);
        let i1 = s.battery_current(Sharing::Resistance, emf[1], r0[1], v, i);
        assert!((i0 + i1 - 30.0).abs() < 1e-9, "{i0} + {i1}");
        assert!((emf[0] - r0[0] * i0 - v).abs() < 1e-9 && (emf[1] - r0[1] * i1 - v).abs() < 1e-9);
        let e = Source::combine(Sharing::Equal, &emf, &r0, &[true, true]);
        let (ve, ie) = solve(&e, 0.0, |_| (30.0, 0.0));
        assert_eq!(
            e.battery_current(Sharing::Equal, emf[0], r0[0], ve, ie),
            15.0
        );
        assert!((ve - (11.9 - 0.03 * 15.0)).abs() < 1e-9, "{ve}");
    }

    #[test]
    fn floor_disconnection_and_constant_power() {
        let s = Source::combine(Sharing::Resistance, &[12.0], &[0.1], &[true]);
        let (v, _) = solve(&s, 9.0, |v| (v / 0.01, 100.0));
        assert_eq!(v, 9.0, "the floor holds under a short");
        let none = Source::combine(Sharing::Resistance, &[12.0], &[0.1], &[false]);
        assert_eq!(solve(&none, 9.0, |_| (5.0, 0.0)), (0.0, 0.0));
        // 60 W constant power: V (E - V) / R0 = P.
        let (v, i) = solve(&s, 0.0, |v| (60.0 / v, -60.0 / (v * v)));
        assert!(
            (v * (12.0 - v) / 0.1 - 60.0).abs() < 1e-6 && (i * v - 60.0).abs() < 1e-9,
            "{v}"
        );
    }
}

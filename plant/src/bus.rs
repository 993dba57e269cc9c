//! The power bus: batteries in parallel feeding the motors and avionics.
//!
//! The bus voltage solves `G (E - V) = L(V)`: the source (the connected
//! batteries as one Thevenin equivalent `E`, `G`) supplies the load `L`, the
//! motors' currents through their ESCs plus a constant-power avionics load.
//! Each motor's winding current `(d V - e) / R` is linear in `V` until it
//! clamps at 0 or at its limit, so for a given set of clamped motors the
//! equation is a quadratic with a closed-form root. [`solve`] classifies the
//! motors, solves, and reclassifies until the set is consistent: an exact
//! solution, no tolerance, at most `n + 2` passes (one or two in practice).
//!
//! **Low-voltage limit.** When that voltage would fall below the floor, the
//! ESCs scale every duty by one factor `k < 1` (as an ESC's low-voltage
//! limiter does), which is solved exactly in the same way with `V` held at
//! the floor. Supply equals load at every evaluation, so the batteries'
//! currents always add up to the bus current: no energy is created or lost
//! at the floor.

/// How parallel batteries share the load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sharing {
    /// Physically: each battery supplies `(E_j - V) / R0_j`.
    Resistance,
    /// Idealised balancing: each supplies an equal share.
    Equal,
}

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
    /// Combines batteries with internal EMFs `emf[j]` and conductances
    /// `g[j] = 1 / R0_j` (infinite for R0 = 0), only those with `connected[j]`.
    pub fn combine(sharing: Sharing, emf: &[f64], g: &[f64], connected: &[bool]) -> Source {
        let mut count = 0usize;
        let (mut sum_g, mut sum_eg, mut sum_e) = (0.0, 0.0, 0.0);
        for j in 0..emf.len() {
            if !connected[j] {
                continue;
            }
            count += 1;
            sum_e += emf[j];
            sum_g += g[j];
            sum_eg += emf[j] * g[j];
        }
        if count == 0 {
            return Source {
                emf_v: 0.0,
                conductance_s: 0.0,
                count,
            };
        }
        match sharing {
            Sharing::Resistance if sum_g.is_finite() => Source {
                emf_v: sum_eg / sum_g,
                conductance_s: sum_g,
                count,
            },
            // Equal shares (or an ideal source): V = mean(E) - mean(R0) I / n.
            _ => {
                let n = count as f64;
                let sum_r: f64 = (0..emf.len())
                    .filter(|&j| connected[j])
                    .map(|j| 1.0 / g[j])
                    .sum();
                Source {
                    emf_v: sum_e / n,
                    conductance_s: if sum_r > 0.0 {
                        n * n / sum_r
                    } else {
                        f64::INFINITY
                    },
                    count,
                }
            }
        }
    }

    /// Current of battery `j` (EMF `emf_j`, conductance `g_j`) when the bus
    /// is at `bus_v` carrying `load_a`. The currents of the connected
    /// batteries add up to `load_a`.
    pub fn battery_current(
        &self,
        sharing: Sharing,
        emf_j: f64,
        g_j: f64,
        bus_v: f64,
        load_a: f64,
    ) -> f64 {
        match sharing {
            Sharing::Resistance if self.conductance_s.is_finite() => (emf_j - bus_v) * g_j,
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
    /// Winding current of motor `i` with the motor voltage `d_i k V`.
    pub fn current(&self, i: usize, scaled_v: f64) -> f64 {
        ((self.duty[i] * scaled_v - self.back_emf_v[i]) * self.inv_resistance)
            .clamp(0.0, self.current_limit_a)
    }

    /// Current drawn from the bus by the motors at `v` with duties scaled by `k`.
    pub fn bus_current(&self, v: f64, k: f64) -> f64 {
        let mut s = 0.0;
        for i in 0..self.duty.len() {
            s += self.duty[i] * self.current(i, k * v);
        }
        k * s * self.inv_efficiency
    }

    /// Bit masks of the motors in their linear (unclamped) range and at
    /// their current limit, at the scaled bus voltage `kv`.
    fn classify(&self, kv: f64) -> (u32, u32) {
        let (mut linear, mut saturated) = (0u32, 0u32);
        for i in 0..self.duty.len() {
            let raw = (self.duty[i] * kv - self.back_emf_v[i]) * self.inv_resistance;
            if raw >= self.current_limit_a {
                saturated |= 1 << i;
            } else if raw > 0.0 {
                linear |= 1 << i;
            }
        }
        (linear, saturated)
    }

    /// `(sum d^2, sum d e)` over the linear set and `sum d` over the
    /// saturated set.
    fn sums(&self, set: (u32, u32)) -> (f64, f64, f64) {
        let (mut a, mut b, mut c) = (0.0, 0.0, 0.0);
        for i in 0..self.duty.len() {
            let d = self.duty[i];
            let bit = 1u32 << i;
            if set.0 & bit != 0 {
                a += d * d;
                b += d * self.back_emf_v[i];
            } else if set.1 & bit != 0 {
                c += d;
            }
        }
        (a, b, c)
    }
}

/// The solved bus.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BusSolution {
    pub voltage_v: f64,
    /// Current drawn from the source: motors through their ESCs plus avionics.
    pub load_a: f64,
    /// The low-voltage limiter's duty factor (1 when it is not acting).
    pub duty_scale: f64,
}

/// The smaller-magnitude-safe positive root of `a x^2 + b x + c = 0` with
/// `a >= 0` and `c <= 0` (so a real non-negative root exists).
fn positive_root(a: f64, b: f64, c: f64) -> f64 {
    let disc = (b * b - 4.0 * a * c).max(0.0).sqrt();
    if b >= 0.0 {
        if b + disc > 0.0 {
            -2.0 * c / (b + disc)
        } else {
            0.0
        }
    } else {
        (disc - b) / (2.0 * a)
    }
}

/// Exact bus state for the motors and a constant-power avionics load
/// `avionics_w`; writes each motor's winding current into `current_a`.
///
/// The voltage stays at or above `floor_v` while the source can hold it
/// there: below, the duties are scaled so that load equals supply at the
/// floor. When even the avionics alone would pull the source below the
/// floor, the duties are zero and the bus settles where the source feeds the
/// avionics (at its maximum-power point if it cannot). In every case the
/// load current equals the source's current `G (E - V)`.
pub fn solve(
    source: &Source,
    floor_v: f64,
    motors: &MotorLoads,
    avionics_w: f64,
    current_a: &mut [f64],
) -> BusSolution {
    let n = motors.duty.len();
    let off = |v: f64, load: f64, current_a: &mut [f64]| {
        current_a[..n].fill(0.0);
        BusSolution {
            voltage_v: v,
            load_a: load,
            duty_scale: 0.0,
        }
    };
    if source.count == 0 || source.emf_v <= 0.0 {
        return off(0.0, 0.0, current_a);
    }
    let e = source.emf_v;
    let (ir, ie, imax) = (
        motors.inv_resistance,
        motors.inv_efficiency,
        motors.current_limit_a,
    );
    let finish = |v: f64, k: f64, current_a: &mut [f64]| {
        let kv = k * v;
        let mut s = 0.0;
        for i in 0..n {
            let c = motors.current(i, kv);
            current_a[i] = c;
            s += motors.duty[i] * c;
        }
        let avionics = if v > 0.0 { avionics_w / v } else { 0.0 };
        BusSolution {
            voltage_v: v,
            load_a: k * s * ie + avionics,
            duty_scale: k,
        }
    };
    if !source.conductance_s.is_finite() {
        // An ideal source holds its voltage; below the floor the ESCs cut.
        return finish(e, if e >= floor_v { 1.0 } else { 0.0 }, current_a);
    }
    let g = source.conductance_s;

    // Full duties: G (E - V) = A V - B + C + P / V per set of clamped motors,
    // i.e. (G + A) V^2 - (G E + B - C) V + P = 0.
    let mut v = e;
    let mut set = motors.classify(v);
    for _ in 0..n + 2 {
        let (a, b, c) = motors.sums(set);
        let (a, b, c) = (a * ir * ie, b * ir * ie, c * imax * ie);
        let a2 = g + a;
        let b1 = g * e + b - c;
        let disc = b1 * b1 - 4.0 * a2 * avionics_w;
        v = if disc >= 0.0 {
            (b1 + disc.sqrt()) / (2.0 * a2)
        } else {
            // More power than the source can deliver: below any floor.
            0.0
        };
        let next = motors.classify(v);
        if next == set {
            break;
        }
        set = next;
    }
    if v >= floor_v {
        return finish(v.min(e), 1.0, current_a);
    }

    // Low-voltage limit: V = floor, duties scaled by k with load(k) = supply.
    let vf = floor_v;
    let supply = g * (e - vf);
    let avionics = avionics_w / vf;
    if supply <= avionics {
        // Not even the avionics can be fed at the floor: ESCs off, and the
        // bus sits where G (E - V) = P / V (or at the maximum-power point).
        let disc = e * e - 4.0 * avionics_w / g;
        let v = if disc >= 0.0 {
            0.5 * (e + disc.sqrt())
        } else {
            0.5 * e
        };
        return off(v, g * (e - v), current_a);
    }
    // load(k) - supply = alpha k^2 + beta k + gamma over a set of clamps.
    let mut k = 1.0;
    let mut set = motors.classify(vf);
    for _ in 0..n + 2 {
        let (a, b, c) = motors.sums(set);
        let alpha = vf * a * ir * ie;
        let beta = c * imax * ie - b * ir * ie;
        let gamma = avionics - supply;
        k = positive_root(alpha, beta, gamma).clamp(0.0, 1.0);
        let next = motors.classify(k * vf);
        if next == set {
            break;
        }
        set = next;
    }
    finish(vf, k, current_a)
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

    fn one(emf: f64, r0: f64) -> Source {
        Source::combine(Sharing::Resistance, &[emf], &[1.0 / r0], &[true])
    }

    /// The residual of the bus equation, solved independently by bisection.
    fn bisect(s: &Source, m: &MotorLoads, p: f64) -> f64 {
        let r = |v: f64| v - s.emf_v + (m.bus_current(v, 1.0) + p / v) / s.conductance_s;
        let (mut lo, mut hi) = (1e-3, s.emf_v);
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if r(mid) > 0.0 { hi = mid } else { lo = mid }
        }
        lo
    }

    #[test]
    fn exact_solution_matches_bisection_with_clamped_and_linear_motors() {
        let s = one(12.4, 0.02);
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
            let mut cur = [0.0; 4];
            let b = solve(&s, 0.0, &m, p, &mut cur);
            let v = b.voltage_v;
            let expect = bisect(&s, &m, p);
            assert!((v - expect).abs() < 1e-9, "{duty:?}: {v} vs {expect}");
            assert!((b.load_a - (m.bus_current(v, 1.0) + p / v)).abs() < 1e-12);
            assert!(
                (v - (12.4 - 0.02 * b.load_a)).abs() < 1e-9,
                "the source equation holds"
            );
            assert_eq!(b.duty_scale, 1.0);
            for (i, c) in cur[..duty.len()].iter().enumerate() {
                assert_eq!(*c, m.current(i, v), "motor {i}'s current is handed back");
            }
        }
    }

    #[test]
    fn parallel_batteries_share_by_resistance_or_equally() {
        let emf = [12.0, 11.8];
        let g = [1.0 / 0.02, 1.0 / 0.04];
        // One motor at its 30 A limit, 100 % duty, efficiency 1.
        let duty = [1.0];
        let lim = MotorLoads {
            duty: &duty,
            back_emf_v: &[0.0],
            inv_resistance: 1e3,
            current_limit_a: 30.0,
            inv_efficiency: 1.0,
        };
        let mut cur = [0.0];
        let s = Source::combine(Sharing::Resistance, &emf, &g, &[true, true]);
        let b = solve(&s, 0.0, &lim, 0.0, &mut cur);
        let (v, i) = (b.voltage_v, b.load_a);
        let i0 = s.battery_current(Sharing::Resistance, emf[0], g[0], v, i);
        let i1 = s.battery_current(Sharing::Resistance, emf[1], g[1], v, i);
        assert!((i0 + i1 - 30.0).abs() < 1e-9, "{i0} + {i1}");
        assert!((emf[0] - 0.02 * i0 - v).abs() < 1e-9 && (emf[1] - 0.04 * i1 - v).abs() < 1e-9);
        let e = Source::combine(Sharing::Equal, &emf, &g, &[true, true]);
        let b = solve(&e, 0.0, &lim, 0.0, &mut cur);
        assert_eq!(
            e.battery_current(Sharing::Equal, emf[0], g[0], b.voltage_v, b.load_a),
            15.0
        );
        assert!((b.voltage_v - (11.9 - 0.03 * 15.0)).abs() < 1e-9, "{b:?}");
    }

    #[test]
    fn low_voltage_limit_scales_duties_so_that_load_equals_supply() {
        let s = one(12.0, 0.1);
        // Four motors at full duty would pull the bus to about 6 V.
        let duty = [1.0; 4];
        let emf = [2.0; 4];
        let m = motors(&duty, &emf, 1e6);
        let mut cur = [0.0; 4];
        let free = solve(&s, 0.0, &m, 5.0, &mut cur);
        assert!(free.voltage_v < 9.0, "{free:?}");
        let b = solve(&s, 9.0, &m, 5.0, &mut cur);
        assert_eq!(b.voltage_v, 9.0, "held at the floor");
        assert!(b.duty_scale > 0.0 && b.duty_scale < 1.0, "{b:?}");
        let supply = (12.0 - 9.0) / 0.1;
        assert!((b.load_a / supply - 1.0).abs() < 1e-12, "{b:?}");
        // The load at that scale, recomputed from the currents handed back.
        let motor_bus: f64 = (0..4).map(|i| duty[i] * b.duty_scale * cur[i]).sum::<f64>() / 0.98;
        assert!(((motor_bus + 5.0 / 9.0) / supply - 1.0).abs() < 1e-12);
        for (i, c) in cur.iter().enumerate() {
            assert_eq!(*c, m.current(i, b.duty_scale * 9.0));
        }
        // With a current limit some motors clamp; the balance still holds.
        let m = motors(&[1.0, 0.9, 0.3, 0.0], &[0.5, 1.0, 2.0, 0.0], 12.0);
        let b = solve(&s, 11.0, &m, 5.0, &mut cur);
        assert_eq!(b.voltage_v, 11.0);
        assert!(
            (b.load_a / ((12.0 - 11.0) / 0.1) - 1.0).abs() < 1e-12,
            "{b:?}"
        );
        assert!((b.load_a - (m.bus_current(11.0, b.duty_scale) + 5.0 / 11.0)).abs() < 1e-12);
    }

    #[test]
    fn below_the_floor_only_the_avionics_are_fed_and_the_balance_holds() {
        // The source's EMF is under the floor: ESCs off.
        let s = one(8.5, 0.1);
        let m = motors(&[1.0; 4], &[0.0; 4], 60.0);
        let mut cur = [1.0; 4];
        let b = solve(&s, 9.0, &m, 5.0, &mut cur);
        assert_eq!((b.duty_scale, cur), (0.0, [0.0; 4]));
        assert!(
            (b.voltage_v * (8.5 - b.voltage_v) / 0.1 - 5.0).abs() < 1e-9,
            "{b:?}"
        );
        assert!((b.load_a - (8.5 - b.voltage_v) / 0.1).abs() < 1e-12);
        // No source at all.
        let none = Source::combine(Sharing::Resistance, &[12.0], &[10.0], &[false]);
        let b = solve(&none, 9.0, &m, 5.0, &mut cur);
        assert_eq!((b.voltage_v, b.load_a), (0.0, 0.0));
        // 60 W constant power alone: V (E - V) / R0 = P.
        let idle = motors(&[0.0], &[0.0], 60.0);
        let b = solve(&one(12.0, 0.1), 0.0, &idle, 60.0, &mut cur);
        let v = b.voltage_v;
        assert!(
            (v * (12.0 - v) / 0.1 - 60.0).abs() < 1e-9 && (b.load_a * v - 60.0).abs() < 1e-9,
            "{v}"
        );
    }
}

//! The power bus: batteries in parallel feeding the motors and avionics.
//!
//! The bus voltage solves `G (E - V) = L(V)`: the source (the connected
//! batteries as one Thevenin equivalent `E`, `G`) supplies the load `L`, the
//! motors' currents through their ESCs plus a constant-power avionics load.
//! Each motor's winding current `(d V - e) / R` is linear in `V` until it
//! clamps at 0 or at its limit. At the limit the ESC lowers its effective
//! duty so the motor takes `(e + R I_max) I_max`: a constant-power load, as
//! the avionics are. So for a given set of clamped motors the equation is a
//! quadratic with a closed-form root. [`solve`] classifies the
//! motors, solves, and reclassifies until the set is consistent: an exact
//! solution, no tolerance, at most `n + 2` passes (one or two in practice).
//! A weak source feeding current-limited motors can balance at more than
//! one voltage; `solve_general` says which one is taken.
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

    /// One battery (EMF `emf`, conductance `g = 1 / R0`, infinite for an
    /// ideal source), connected or not: the source [`Source::combine`] makes
    /// of it, up to rounding. Not bit for bit: `combine` computes the EMF as
    /// `(e g) / g` and, under equal sharing, the conductance as `1 / (1 / g)`;
    /// this takes `emf` and `g` as they are.
    #[inline]
    pub fn single(emf: f64, g: f64, connected: bool) -> Source {
        if connected {
            Source {
                emf_v: emf,
                conductance_s: g,
                count: 1,
            }
        } else {
            Source {
                emf_v: 0.0,
                conductance_s: 0.0,
                count: 0,
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

    /// Electrical power motor `i` takes at its current limit (the ESC's
    /// effective duty then gives it `e + R I_max`).
    fn limited_power(&self, i: usize) -> f64 {
        let imax = self.current_limit_a;
        (self.back_emf_v[i] + imax / self.inv_resistance) * imax
    }

    /// Current drawn from the bus by the motors at `v` with duties scaled by `k`.
    pub fn bus_current(&self, v: f64, k: f64) -> f64 {
        let mut s = 0.0;
        for i in 0..self.duty.len() {
            let raw = (self.duty[i] * k * v - self.back_emf_v[i]) * self.inv_resistance;
            if raw >= self.current_limit_a {
                s += self.limited_power(i) / v;
            } else if raw > 0.0 {
                s += k * self.duty[i] * raw;
            }
        }
        s * self.inv_efficiency
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

    /// One pass at the motor voltage `kv` (duty-scaled bus voltage):
    /// classifies every motor, writes its winding current, and sums what the
    /// bus equation needs for that set of clamps.
    #[inline(always)]
    fn scan(&self, kv: f64, current_a: &mut [f64]) -> Scan {
        let imax = self.current_limit_a;
        let mut s = Scan {
            set: (0, 0),
            a: 0.0,
            b: 0.0,
            p_sat: 0.0,
        };
        let motors = self.duty.iter().zip(self.back_emf_v).zip(current_a);
        for (i, ((&d, &e), c)) in motors.enumerate() {
            let raw = (d * kv - e) * self.inv_resistance;
            if raw >= imax {
                s.set.1 |= 1 << i;
                s.p_sat += self.limited_power(i);
                *c = imax;
            } else if raw > 0.0 {
                s.set.0 |= 1 << i;
                s.a += d * d;
                s.b += d * e;
                *c = raw;
            } else {
                *c = 0.0;
            }
        }
        s
    }

    /// `(sum d^2, sum d e)` over the linear set and the power the
    /// saturated set takes.
    fn sums(&self, set: (u32, u32)) -> (f64, f64, f64) {
        let (mut a, mut b, mut p) = (0.0, 0.0, 0.0);
        for i in 0..self.duty.len() {
            let d = self.duty[i];
            let bit = 1u32 << i;
            if set.0 & bit != 0 {
                a += d * d;
                b += d * self.back_emf_v[i];
            } else if set.1 & bit != 0 {
                p += self.limited_power(i);
            }
        }
        (a, b, p)
    }
}

/// One classification pass: the sets of linear and current-limited motors,
/// `sum d^2` and `sum d e` over the linear ones, the limited ones' power.
#[derive(Debug, Clone, Copy)]
struct Scan {
    set: (u32, u32),
    a: f64,
    b: f64,
    p_sat: f64,
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

/// The load current at a root `v` of `(G + A) V^2 - (G E + B) V + P = 0`:
/// there `A V - B + P / V = G (E - V)`, the source's current, which costs no
/// division (`E - V` is exact for `V` in `[E/2, E]`), and a single
/// battery's current `(E - V) G` is then the load bit for bit. A root clamped at `E` (motors feeding back more than the
/// avionics take) does not satisfy the equation: `load` gives the sum then.
#[inline(always)]
fn supplied(g: f64, e: f64, v: f64, load: impl FnOnce() -> f64) -> f64 {
    if v < e { g * (e - v) } else { load() }
}

/// The non-negative root of `a x^2 + b x + c = 0` with `a >= 0` and
/// `c <= 0` (computed without cancellation), if there is one.
fn positive_root(a: f64, b: f64, c: f64) -> Option<f64> {
    if a == 0.0 {
        return if c == 0.0 {
            Some(0.0)
        } else if b > 0.0 {
            Some(-c / b)
        } else {
            None
        };
    }
    let disc = (b * b - 4.0 * a * c).max(0.0).sqrt();
    Some(if b >= 0.0 {
        -2.0 * c / (b + disc)
    } else {
        (disc - b) / (2.0 * a)
    })
}

/// The highest bus voltage in (0, E] where the source feeds the load at full
/// duty: the motors' clamp points split (0, E] into intervals with one set
/// of clamped motors each; walking them from the top, the first interval
/// holding a root of its quadratic gives the answer.
fn highest_root(g: f64, e: f64, motors: &MotorLoads, avionics_w: f64) -> Option<f64> {
    let (ir, ie) = (motors.inv_resistance, motors.inv_efficiency);
    // Two clamp points per motor (the sets are u32 masks: at most 32).
    let mut points = [0.0f64; 2 * 32 + 1];
    let mut count = 0;
    for i in 0..motors.duty.len() {
        let d = motors.duty[i];
        if d <= 0.0 {
            continue;
        }
        let e_i = motors.back_emf_v[i];
        for v in [e_i / d, (e_i + motors.current_limit_a / ir) / d] {
            if v > 0.0 && v < e {
                points[count] = v;
                count += 1;
            }
        }
    }
    points[count] = 0.0;
    count += 1;
    let points = &mut points[..count];
    points.sort_unstable_by(|a, b| b.total_cmp(a));
    let mut hi = e;
    for &lo in points.iter() {
        if lo >= hi {
            continue;
        }
        let set = motors.classify(0.5 * (lo + hi));
        let (a, b, p_sat) = motors.sums(set);
        let (a, b) = (a * ir * ie, b * ir * ie);
        let p = avionics_w + p_sat * ie;
        // (G + A) V^2 - (G E + B) V + P = 0: the larger root first.
        let a2 = g + a;
        let b1 = g * e + b;
        let disc = b1 * b1 - 4.0 * a2 * p;
        if disc >= 0.0 {
            let sq = disc.sqrt();
            let big = (b1 + sq) / (2.0 * a2);
            let small = if b1 + sq > 0.0 {
                2.0 * p / (b1 + sq)
            } else {
                0.0
            };
            for v in [big, small] {
                if v > lo && v <= hi {
                    return Some(v);
                }
            }
        }
        hi = lo;
    }
    None
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
///
/// Which operating point, when there are several: a weak source feeding
/// current-limited (constant-power) motors can balance at more than one
/// voltage. The answer is the one [`solve_general`] finds (see there); the
/// inlined fast path below returns only where that is provably the same
/// answer, bit for bit.
#[inline(always)]
pub fn solve(
    source: &Source,
    floor_v: f64,
    motors: &MotorLoads,
    avionics_w: f64,
    current_a: &mut [f64],
) -> BusSolution {
    // The common case, inlined: a real source, no motor at its current
    // limit even at the open-circuit voltage `E`, and every driven motor in
    // its linear range at the solution, above the floor (undriven motors, at
    // zero duty, draw nothing either way). A winding's current grows with
    // the bus voltage, so the set of clamps is then the same at `E` and at
    // the solution: the general path classifies at `E`, solves this very
    // quadratic in its first pass and returns it, so the two agree bit for
    // bit (test `the_fast_path_is_the_general_paths_first_pass_bit_for_bit`).
    // It is also the highest operating point: above it the set cannot
    // change. A motor at its limit at `E` (but linear lower down) makes a
    // higher root possible: that case, and anything else, goes the general
    // way.
    let g = source.conductance_s;
    let n = motors.duty.len();
    if source.count > 0 && source.emf_v > 0.0 && g.is_finite() && n < 32 {
        let e = source.emf_v;
        let (ir, ie) = (motors.inv_resistance, motors.inv_efficiency);
        let (mut a, mut b, mut driven) = (0.0, 0.0, 0u32);
        // The largest `d E - e`: rounding is monotone, so `top * ir` reaches
        // the limit exactly when some motor's current at `E` does. (A plain
        // comparison, not `f64::max`: about half the instructions.)
        let mut top = f64::NEG_INFINITY;
        for (i, (d, em)) in motors.duty.iter().zip(motors.back_emf_v).enumerate() {
            a += d * d;
            b += d * em;
            driven |= u32::from(*d > 0.0) << i;
            let over = d * e - em;
            if over > top {
                top = over;
            }
        }
        if top * ir < motors.current_limit_a {
            let (a, b) = (a * ir * ie, b * ir * ie);
            let a2 = g + a;
            let b1 = g * e + b;
            let disc = b1 * b1 - 4.0 * a2 * avionics_w;
            if disc >= 0.0 {
                let v = ((b1 + disc.sqrt()) / (2.0 * a2)).min(e);
                if v >= floor_v && motors.scan(v, current_a).set == (driven, 0) {
                    return BusSolution {
                        voltage_v: v,
                        load_a: supplied(g, e, v, || a * v - b + avionics_w / v),
                        duty_scale: 1.0,
                    };
                }
            }
        }
    }
    solve_general(source, floor_v, motors, avionics_w, current_a)
}

/// Every case: clamps that change between passes, no operating point, the
/// low-voltage limit, no or an ideal source.
///
/// At full duty it classifies the motors at the open-circuit voltage `E`,
/// solves that set's quadratic, reclassifies at the root and repeats until
/// the set is consistent: the operating point this iteration from `E`
/// reaches. Where the iteration cycles it takes the highest operating point
/// in `(0, E]` exactly ([`highest_root`]). An operating point below the
/// floor hands over to the low-voltage limiter, which, should full duty
/// take less than the source supplies at the floor (so a higher operating
/// point exists), takes that operating point instead of reporting a duty
/// factor above 1.
#[cold]
#[inline(never)]
fn solve_general(
    source: &Source,
    floor_v: f64,
    motors: &MotorLoads,
    avionics_w: f64,
    current_a: &mut [f64],
) -> BusSolution {
    if source.count == 0 || source.emf_v <= 0.0 {
        return off(motors, 0.0, 0.0, current_a);
    }
    let n = motors.duty.len();
    let e = source.emf_v;
    let (ir, ie) = (motors.inv_resistance, motors.inv_efficiency);
    if !source.conductance_s.is_finite() {
        // An ideal source holds its voltage; below the floor the ESCs cut.
        let k = if e >= floor_v { 1.0 } else { 0.0 };
        return finish(motors, avionics_w, e, k, current_a);
    }
    let g = source.conductance_s;

    // Full duties: G (E - V) = A V - B + P / V per set of clamped motors
    // (P: avionics and current-limited motors), i.e.
    // (G + A) V^2 - (G E + B) V + P = 0. Classify at the open-circuit
    // voltage, solve, reclassify at the solution (which writes the
    // currents), and repeat while the set changes: one or two passes.
    let mut v = e;
    let mut operating = false;
    let mut s = motors.scan(e, current_a);
    for _ in 0..n + 2 {
        let (a, b) = (s.a * ir * ie, s.b * ir * ie);
        let p = avionics_w + s.p_sat * ie;
        let a2 = g + a;
        let b1 = g * e + b;
        let disc = b1 * b1 - 4.0 * a2 * p;
        if disc < 0.0 {
            // More power than the source can deliver with this set.
            v = 0.0;
            let next = motors.scan(0.0, current_a);
            if next.set == s.set {
                break;
            }
            s = next;
            continue;
        }
        v = ((b1 + disc.sqrt()) / (2.0 * a2)).min(e);
        let next = motors.scan(v, current_a);
        if next.set == s.set {
            if v >= floor_v {
                // The sums describe this set's load exactly.
                return BusSolution {
                    voltage_v: v,
                    load_a: supplied(g, e, v, || a * v - b + p / v),
                    duty_scale: 1.0,
                };
            }
            operating = true;
            break;
        }
        s = next;
    }
    if !operating {
        // The fixed point cycled between sets (current-limited motors on a
        // weak source): find the highest root exactly, interval by interval.
        if let Some(root) = highest_root(g, e, motors, avionics_w) {
            v = root;
            operating = true;
        }
    }
    // Without an operating point (the source cannot feed the current-limited
    // motors) the bus would collapse: the low-voltage limit acts, at the
    // floor or, when the spec sets none, at half the source's EMF (its
    // maximum-power point).
    if operating && v >= floor_v {
        return finish(motors, avionics_w, v.min(e), 1.0, current_a);
    }
    let vf = if floor_v > 0.0 { floor_v } else { 0.5 * e };
    limit_at_floor(g, e, vf, motors, avionics_w, current_a)
}

/// All duties off: the bus at `v` carrying `load` (the avionics).
fn off(motors: &MotorLoads, v: f64, load: f64, current_a: &mut [f64]) -> BusSolution {
    current_a[..motors.duty.len()].fill(0.0);
    BusSolution {
        voltage_v: v,
        load_a: load,
        duty_scale: 0.0,
    }
}

/// The bus at `v` with duties scaled by `k`: writes the currents and sums
/// the load.
fn finish(
    motors: &MotorLoads,
    avionics_w: f64,
    v: f64,
    k: f64,
    current_a: &mut [f64],
) -> BusSolution {
    let kv = k * v;
    for (i, c) in current_a[..motors.duty.len()].iter_mut().enumerate() {
        *c = motors.current(i, kv);
    }
    let avionics = if v > 0.0 { avionics_w / v } else { 0.0 };
    BusSolution {
        voltage_v: v,
        load_a: if v > 0.0 {
            motors.bus_current(v, k) + avionics
        } else {
            0.0
        },
        duty_scale: k,
    }
}

/// The low-voltage limit: the bus held at `vf`, every duty scaled by the
/// `k` in [0, 1] at which the load equals the supply `G (E - vf)`. When full
/// duty takes less than that supply, there is no such `k`: the operating
/// point lies above `vf`, and it is returned at full duty.
fn limit_at_floor(
    g: f64,
    e: f64,
    vf: f64,
    motors: &MotorLoads,
    avionics_w: f64,
    current_a: &mut [f64],
) -> BusSolution {
    let n = motors.duty.len();
    let (ir, ie) = (motors.inv_resistance, motors.inv_efficiency);
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
        return off(motors, v, g * (e - v), current_a);
    }
    // load(k) - supply = alpha k^2 + beta k + gamma over a set of clamps
    // (current-limited motors take constant power whatever k). A root above
    // 1 is no solution: the duties cannot exceed full.
    let mut k = 1.0;
    let mut set = motors.classify(vf);
    let mut solved = false;
    for _ in 0..n + 2 {
        let (a, b, p_sat) = motors.sums(set);
        let alpha = vf * a * ir * ie;
        let beta = -b * ir * ie;
        let gamma = avionics + p_sat * ie / vf - supply;
        let root = if gamma > 0.0 {
            None
        } else {
            positive_root(alpha, beta, gamma)
        };
        k = root.unwrap_or(0.0).clamp(0.0, 1.0);
        let next = motors.classify(k * vf);
        if next == set && root.is_some_and(|r| r <= 1.0) {
            solved = true;
            break;
        }
        set = next;
    }
    if !solved {
        let over = |k: f64| motors.bus_current(vf, k) + avionics - supply;
        if over(1.0) < 0.0 {
            // Full duty takes less than the supply at the floor: the bus
            // balances above it.
            let v = full_duty_root_above(g, e, vf, motors, avionics_w);
            return finish(motors, avionics_w, v, 1.0, current_a);
        }
        // The load is continuous and non-decreasing in k: a fixed-count
        // bisection finds where it meets the supply (to the last bits).
        let (mut lo, mut hi) = (0.0, 1.0);
        for _ in 0..64 {
            let mid = 0.5 * (lo + hi);
            if over(mid) > 0.0 {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        k = lo;
    }
    finish(motors, avionics_w, vf, k, current_a)
}

/// A full-duty operating point in `[vf, E]`, where the source supplies more
/// than the load at `vf`: the highest root exactly, or (should rounding put
/// it below `vf`) a fixed-count bisection of the balance on `[vf, E]`.
fn full_duty_root_above(g: f64, e: f64, vf: f64, motors: &MotorLoads, avionics_w: f64) -> f64 {
    if let Some(v) = highest_root(g, e, motors, avionics_w).filter(|v| *v >= vf) {
        return v.min(e);
    }
    let surplus = |v: f64| g * (e - v) - motors.bus_current(v, 1.0) - avionics_w / v;
    let (mut lo, mut hi) = (vf, e);
    for _ in 0..64 {
        let mid = 0.5 * (lo + hi);
        if surplus(mid) > 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

#[cfg(test)]
mod tests;

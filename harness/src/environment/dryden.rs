//! Dryden turbulence (MIL-F-8785C / MIL-HDBK-1797 forms, low-altitude
//! model), sampled exactly in discrete time.
//!
//! Intensities and scale lengths at altitude `h` (feet, at least 10 ft;
//! above 1000 ft the 1000 ft values hold):
//! `sigma_w = 0.1 W20`, `sigma_u = sigma_v = sigma_w / (0.177 + 0.000823 h)^0.4`,
//! `L_w = h`, `L_u = L_v = h / (0.177 + 0.000823 h)^1.2`, with `W20` the wind
//! speed at 20 ft. Turbulence is frozen in the air mass and swept past the
//! vehicle at its airspeed `V` (at least [`MIN_AIRSPEED_MPS`]): `T = L / V`.
//!
//! - Longitudinal `u`: `H(s) ~ 1/(1 + T s)`; exact update
//!   `u' = a u + sigma sqrt(1 - a^2) n`, `a = e^(-dt/T)`; autocorrelation
//!   `sigma^2 e^(-tau/T)`.
//! - Lateral `v` and vertical `w`: `H(s) = K (1 + sqrt(3) T s)/(1 + T s)^2`,
//!   realised as `z1 = K/(1 + T s) n`, `z2 = z1/(1 + T s)`,
//!   `y = sqrt(3) z1 + (1 - sqrt(3)) z2`. The transition matrix and the
//!   process noise covariance of one step are exact (closed forms below), and
//!   `K = sigma sqrt(T)` gives `var(y) = sigma^2` (stationary Lyapunov
//!   solution: `var(y) = 2 P11 = K^2 / T`). Autocorrelation
//!   `sigma^2 (1 - tau/(2T)) e^(-tau/T)`.
//!
//! Axes: `u` along the mean wind's horizontal direction (north when calm),
//! `v` 90 degrees to its right, `w` down.

use crate::time::rng::Stream;

/// Airspeed floor for the frozen-turbulence sweep, m/s.
pub const MIN_AIRSPEED_MPS: f64 = 0.5;
const FT: f64 = 0.3048;

/// Intensities (m/s) and scale lengths (m) at altitude `alt_m` for `w20_mps`.
pub fn low_altitude(alt_m: f64, w20_mps: f64) -> ([f64; 3], [f64; 3]) {
    let h = (alt_m / FT).clamp(10.0, 1000.0);
    let k = 0.177 + 0.000823 * h;
    let sw = 0.1 * w20_mps;
    let su = sw / libm::pow(k, 0.4);
    let lw = h * FT;
    let lu = h / libm::pow(k, 1.2) * FT;
    ([su, su, sw], [lu, lu, lw])
}

/// One lateral/vertical channel's two states.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Second {
    z1: f64,
    z2: f64,
}

impl Second {
    /// Advances by `dt` with time constant `t` and gain `k`; returns the output.
    fn step(&mut self, dt: f64, t: f64, k: f64, n1: f64, n2: f64) -> f64 {
        let e = libm::exp(-dt / t);
        let r = dt / t;
        // Transition: e^(A dt) = e^(-dt/T) [[1, 0], [dt/T, 1]].
        let (z1, z2) = (e * self.z1, e * (r * self.z1 + self.z2));
        // Process noise: Q = (K/T)^2 [[I0, I1/T], [I1/T, I2/T^2]] with
        // I_n = int_0^dt s^n e^(-2s/T) ds.
        let e2 = e * e;
        let h = 0.5 * t;
        let i0 = h * (1.0 - e2);
        let i1 = h * h * (1.0 - e2 * (1.0 + 2.0 * r));
        let i2 = 2.0 * h * h * h * (1.0 - e2 * (1.0 + 2.0 * r + 2.0 * r * r));
        let g = (k / t) * (k / t);
        let (q11, q12, q22) = (g * i0, g * i1 / t, g * i2 / (t * t));
        let l11 = q11.sqrt();
        let l21 = if l11 > 0.0 { q12 / l11 } else { 0.0 };
        let l22 = (q22 - l21 * l21).max(0.0).sqrt();
        self.z1 = z1 + l11 * n1;
        self.z2 = z2 + l21 * n1 + l22 * n2;
        3f64.sqrt() * self.z1 + (1.0 - 3f64.sqrt()) * self.z2
    }
}

/// The turbulence state: three channels. The random stream is the caller's
/// (the wind source's own), passed to each step.
#[derive(Debug, Clone)]
pub struct Dryden {
    pub w20_mps: f64,
    u: f64,
    v: Second,
    w: Second,
    started: bool,
}

impl Dryden {
    pub fn new(w20_mps: f64) -> Self {
        Dryden {
            w20_mps,
            u: 0.0,
            v: Second::default(),
            w: Second::default(),

            started: false,
        }
    }

    /// Advances by `dt_s` at altitude `alt_m` and airspeed `airspeed_mps`;
    /// returns the gust in (u, v, w) axes, m/s.
    pub fn step(&mut self, rng: &mut Stream, dt_s: f64, alt_m: f64, airspeed_mps: f64) -> [f64; 3] {
        let (sigma, l) = low_altitude(alt_m, self.w20_mps);
        let vel = airspeed_mps.max(MIN_AIRSPEED_MPS);
        if !self.started {
            // Start in the stationary distribution: u ~ N(0, sigma^2); for v
            // and w, P11 = sigma^2/2 and P12 = P22 = P11/2 (the Lyapunov
            // solution), drawn exactly.
            self.started = true;
            self.u = sigma[0] * rng.standard_normal();
            for (ch, s, ll) in [(&mut self.v, sigma[1], l[1]), (&mut self.w, sigma[2], l[2])] {
                let t = ll / vel;
                let p11 = s * s * t / (2.0 * t);
                ch.z1 = p11.sqrt() * rng.standard_normal();
                ch.z2 = 0.5 * ch.z1 + (0.25 * p11).sqrt() * rng.standard_normal();
            }
            return [self.u, self.out(&self.v), self.out(&self.w)];
        }
        let tu = l[0] / vel;
        let a = libm::exp(-dt_s / tu);
        self.u = a * self.u + sigma[0] * (1.0 - a * a).sqrt() * rng.standard_normal();
        let mut out = [self.u, 0.0, 0.0];
        for (k, ch) in [(1usize, &mut self.v), (2, &mut self.w)] {
            let t = l[k] / vel;
            let (n1, n2) = (rng.standard_normal(), rng.standard_normal());
            out[k] = ch.step(dt_s, t, sigma[k] * t.sqrt(), n1, n2);
        }
        out
    }

    fn out(&self, ch: &Second) -> f64 {
        3f64.sqrt() * ch.z1 + (1.0 - 3f64.sqrt()) * ch.z2
    }
}

/// The gust in NED for a mean wind `mean_ned` (u along its horizontal
/// direction, v to its right, w down).
pub fn to_ned(g: [f64; 3], mean_ned: [f64; 3]) -> [f64; 3] {
    let s = (mean_ned[0] * mean_ned[0] + mean_ned[1] * mean_ned[1]).sqrt();
    let (c, sn) = if s > 1e-9 {
        (mean_ned[0] / s, mean_ned[1] / s)
    } else {
        (1.0, 0.0)
    };
    [c * g[0] - sn * g[1], sn * g[0] + c * g[1], g[2]]
}

// The state a vehicle carries to another process (see crate::persist).
crate::persist::persist_fields!(Second { z1, z2 });
crate::persist::persist_fields!(Dryden {
    w20_mps,
    u,
    v,
    w,
    started
});

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::rng::RngStreams;

    #[test]
    fn intensities_follow_the_low_altitude_model() {
        // At 1000 ft (304.8 m): sigma_u = sigma_w = 0.1 W20, L_u = L_w = 1000 ft.
        let (s, l) = low_altitude(304.8, 15.0);
        assert!((s[0] - 1.5).abs() < 1e-3 && (s[2] - 1.5).abs() < 1e-12);
        assert!((l[0] - 304.8).abs() < 0.5 && (l[2] - 304.8).abs() < 1e-9);
        // Low down the horizontal intensity is higher than the vertical.
        let (s, l) = low_altitude(10.0, 15.0);
        assert!(s[0] > 1.8 * s[2] && l[2] == 10.0 && l[0] > l[2]);
    }

    #[test]
    fn each_axis_has_its_variance_and_dryden_autocorrelation() {
        // The update is exact at any step, so long steps cover many time
        // constants: 80 000 s, T_u = 10 s, sampling error ~2 %.
        let (alt, w20, v, dt) = (50.0, 10.0, 20.0, 0.2);
        let (sigma, l) = low_altitude(alt, w20);
        let mut d = Dryden::new(w20);
        let mut rng = RngStreams::new(5).stream("wind.dryden");
        let n = 400_000;
        let mut xs = vec![[0.0; 3]; n];
        for x in xs.iter_mut() {
            *x = d.step(&mut rng, dt, alt, v);
        }
        for k in 0..3 {
            let var = xs.iter().map(|x| x[k] * x[k]).sum::<f64>() / n as f64;
            assert!(
                (var / (sigma[k] * sigma[k]) - 1.0).abs() < 0.07,
                "axis {k}: variance {var} vs {}",
                sigma[k] * sigma[k]
            );
            // Autocorrelation at a lag of T = L / V.
            let lag = (l[k] / v / dt).round() as usize;
            let tau = lag as f64 * dt;
            let cov =
                (0..n - lag).map(|i| xs[i][k] * xs[i + lag][k]).sum::<f64>() / (n - lag) as f64;
            let t = l[k] / v;
            let expect = if k == 0 {
                (-tau / t).exp()
            } else {
                (1.0 - tau / (2.0 * t)) * (-tau / t).exp()
            };
            assert!(
                (cov / var - expect).abs() < 0.04,
                "axis {k}: rho({tau}) = {} vs {expect}",
                cov / var
            );
        }
    }

    #[test]
    fn gust_axes_turn_with_the_mean_wind() {
        let g = to_ned([1.0, 0.0, 0.5], [0.0, 3.0, 0.0]);
        assert!((g[0]).abs() < 1e-12 && (g[1] - 1.0).abs() < 1e-12 && g[2] == 0.5);
        assert_eq!(to_ned([1.0, 2.0, 3.0], [0.0; 3]), [1.0, 2.0, 3.0]);
    }
}

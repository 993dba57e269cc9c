//! Fixed-step Euler and classical RK4.

use super::{Integrator, IntegratorError, Method, Stats, System, first_non_finite, next_substep};

impl Integrator {
    pub(super) fn fixed_interval<S: System + ?Sized>(
        &mut self,
        sys: &S,
        t0: u64,
        dt: u64,
        x: &mut [f64],
    ) -> Result<Stats, IntegratorError> {
        let mut stats = Stats::default();
        let mut elapsed = 0u64;
        while elapsed < dt {
            let h_ticks = next_substep(self.opts.max_step_ticks, dt - elapsed);
            let t = self.seconds(elapsed);
            let h = self.seconds(h_ticks);
            match self.method {
                Method::Euler => self.euler(sys, t, h, x),
                _ => self.rk4(sys, t, h, x),
            }
            stats.rhs_evals += if self.method == Method::Euler { 1 } else { 4 };
            sys.project(x);
            elapsed += h_ticks;
            stats.accepted += 1;
            if let Some(index) = first_non_finite(x) {
                return Err(IntegratorError::NonFinite {
                    t_ticks: t0 + elapsed,
                    index,
                    state: x.to_vec(),
                });
            }
        }
        Ok(stats)
    }

    fn euler<S: System + ?Sized>(&mut self, sys: &S, t: f64, h: f64, x: &mut [f64]) {
        let k = &mut self.k[0];
        sys.rhs(t, x, k);
        for (xi, ki) in x.iter_mut().zip(k.iter()) {
            *xi += h * ki;
        }
    }

    // Kept out of line: inlined into a large caller, its loops lose their
    // vectorization (measured: 600 instead of 400 instructions per step).
    #[inline(never)]
    #[allow(clippy::needless_range_loop)]
    fn rk4<S: System + ?Sized>(&mut self, sys: &S, t: f64, h: f64, x: &mut [f64]) {
        let [k1, k2, k3, k4] = &mut self.k[..] else {
            unreachable!("RK4 has four stage buffers")
        };
        // Every buffer cut to the state's length, so the loops below index
        // without bounds checks and vectorize.
        let n = x.len();
        let (k1, k2, k3, k4) = (&mut k1[..n], &mut k2[..n], &mut k3[..n], &mut k4[..n]);
        let tmp = &mut self.tmp[..n];
        let half = 0.5 * h;
        sys.rhs(t, x, k1);
        for i in 0..n {
            tmp[i] = x[i] + half * k1[i];
        }
        sys.rhs(t + half, tmp, k2);
        for i in 0..n {
            tmp[i] = x[i] + half * k2[i];
        }
        sys.rhs(t + half, tmp, k3);
        for i in 0..n {
            tmp[i] = x[i] + h * k3[i];
        }
        sys.rhs(t + h, tmp, k4);
        let sixth = h / 6.0;
        for i in 0..n {
            x[i] += sixth * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
        }
    }
}

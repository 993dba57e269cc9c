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

    fn rk4<S: System + ?Sized>(&mut self, sys: &S, t: f64, h: f64, x: &mut [f64]) {
        let [k1, k2, k3, k4] = &mut self.k[..] else {
            unreachable!("RK4 has four stage buffers")
        };
        let tmp = &mut self.tmp;
        let half = 0.5 * h;
        sys.rhs(t, x, k1);
        for ((ti, xi), ki) in tmp.iter_mut().zip(x.iter()).zip(k1.iter()) {
            *ti = xi + half * ki;
        }
        sys.rhs(t + half, tmp, k2);
        for ((ti, xi), ki) in tmp.iter_mut().zip(x.iter()).zip(k2.iter()) {
            *ti = xi + half * ki;
        }
        sys.rhs(t + half, tmp, k3);
        for ((ti, xi), ki) in tmp.iter_mut().zip(x.iter()).zip(k3.iter()) {
            *ti = xi + h * ki;
        }
        sys.rhs(t + h, tmp, k4);
        let sixth = h / 6.0;
        for ((((xi, a), b), c), d) in x
            .iter_mut()
            .zip(k1.iter())
            .zip(k2.iter())
            .zip(k3.iter())
            .zip(k4.iter())
        {
            *xi += sixth * (a + 2.0 * b + 2.0 * c + d);
        }
    }
}

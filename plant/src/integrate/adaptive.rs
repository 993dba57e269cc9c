//! Embedded pairs with FSAL, a PI step-size controller and integer-tick
//! substeps.

use super::norm::error_norm;
use super::tableau::{BS32, DP54, Tableau};
use super::{
    Integrator, IntegratorError, Method, Stats, StepStart, System, first_non_finite, next_substep,
};

impl Integrator {
    pub(super) fn adaptive_interval<S: System + ?Sized>(
        &mut self,
        sys: &S,
        t0: u64,
        dt: u64,
        x: &mut [f64],
    ) -> Result<Stats, IntegratorError> {
        let tab: &Tableau = if self.method == Method::Dp54 {
            &DP54
        } else {
            &BS32
        };
        let o = self.opts;
        let mut stats = Stats::default();
        // The proposed (untruncated) step.
        let mut h_prop = match (o.step_start, self.h_carry) {
            (StepStart::Carry, Some(h)) => h,
            _ => o.max_step_ticks,
        }
        .clamp(o.min_step_ticks, o.max_step_ticks);
        let mut elapsed = 0u64;
        let mut fsal_valid = false; // inputs may have changed at the interval start
        let mut substeps = 0u32;
        let last = tab.stages - 1;
        while elapsed < dt {
            if substeps >= o.max_substeps {
                return Err(IntegratorError::TooManySubsteps {
                    t_ticks: t0 + elapsed,
                    end_ticks: t0 + dt,
                    max_substeps: o.max_substeps,
                    state: x.to_vec(),
                });
            }
            substeps += 1;
            let h_ticks = next_substep(h_prop, dt - elapsed);
            let t = self.seconds(elapsed);
            let h = self.seconds(h_ticks);
            if !fsal_valid {
                sys.rhs(t, x, &mut self.k[0]);
                stats.rhs_evals += 1;
            }
            for s in 1..tab.stages {
                let (done, rest) = self.k.split_at_mut(s);
                self.tmp.copy_from_slice(x);
                for (a, kj) in tab.a[s].iter().zip(done.iter()) {
                    if *a != 0.0 {
                        let ha = h * a;
                        for (ti, kji) in self.tmp.iter_mut().zip(kj.iter()) {
                            *ti += ha * kji;
                        }
                    }
                }
                if s == last {
                    // FSAL: the last stage point is the new solution.
                    self.x_new.copy_from_slice(&self.tmp);
                }
                sys.rhs(t + tab.c[s] * h, &self.tmp, &mut rest[0]);
                stats.rhs_evals += 1;
            }
            self.err.fill(0.0);
            for (e, kj) in tab.e.iter().zip(self.k.iter()) {
                if *e != 0.0 {
                    let he = h * e;
                    for (ei, kji) in self.err.iter_mut().zip(kj.iter()) {
                        *ei += he * kji;
                    }
                }
            }
            let norm = if first_non_finite(&self.x_new).is_some() {
                f64::INFINITY
            } else {
                error_norm(sys.error_groups(), x, &self.x_new, &self.err)
            };
            let expo = 1.0 / tab.err_order;
            if norm <= 1.0 {
                x.copy_from_slice(&self.x_new);
                sys.project(x);
                self.k.swap(0, last);
                fsal_valid = true;
                elapsed += h_ticks;
                stats.accepted += 1;
                let alpha = expo - 0.75 * o.beta;
                let fac = if norm == 0.0 {
                    o.fac_max
                } else {
                    (o.safety * libm::pow(norm, -alpha) * libm::pow(self.err_prev, o.beta))
                        .clamp(o.fac_min, o.fac_max)
                };
                self.err_prev = norm.max(1e-4);
                h_prop = quantize(h_ticks as f64 * fac, o.min_step_ticks, o.max_step_ticks);
            } else {
                stats.rejected += 1;
                if h_ticks <= o.min_step_ticks {
                    if let Some(index) = first_non_finite(&self.x_new) {
                        return Err(IntegratorError::NonFinite {
                            t_ticks: t0 + elapsed + h_ticks,
                            index,
                            state: x.to_vec(),
                        });
                    }
                    return Err(IntegratorError::StepTooSmall {
                        t_ticks: t0 + elapsed,
                        min_step_ticks: o.min_step_ticks,
                        error_norm: norm,
                        state: x.to_vec(),
                    });
                }
                let fac = if norm.is_finite() {
                    (o.safety * libm::pow(norm, -expo)).clamp(o.fac_min, 1.0)
                } else {
                    o.fac_min
                };
                // The stage derivative k[0] at x is still valid.
                fsal_valid = true;
                h_prop = quantize(h_ticks as f64 * fac, o.min_step_ticks, o.max_step_ticks)
                    .min(h_ticks - 1);
            }
        }
        self.h_carry = Some(h_prop);
        Ok(stats)
    }
}

/// A proposed step in ticks, rounded down, within the bounds.
fn quantize(h: f64, min: u64, max: u64) -> u64 {
    if h.is_nan() || h < min as f64 {
        return min;
    }
    if h >= max as f64 {
        return max;
    }
    (h.floor() as u64).clamp(min, max)
}

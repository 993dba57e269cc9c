//! Standard normal deviates by the ziggurat method (G. Marsaglia and W. W.
//! Tsang, "The Ziggurat Method for Generating Random Variables", Journal of
//! Statistical Software 5(8), 2000), with 256 layers.
//!
//! The density `f(x) = exp(-x^2 / 2)` on `x >= 0` is covered by 256 layers
//! of equal area `v`: the base layer is the rectangle `[0, r] x [0, f(r)]`
//! plus the tail beyond `r`, layer `i >= 1` the rectangle
//! `[0, x_i] x [f(x_i), f(x_{i+1})]`. One 64-bit draw picks a layer (8 bits),
//! a sign (1 bit) and a position in the layer (53 bits); about 99 % of draws
//! are accepted at once, inside the curve. Only the wedges and the tail
//! (Marsaglia's 1964 method) call `exp` and `log`, from `libm`, as does the
//! table's construction: the deviates are the same bits on every host.
//!
//! `rand_distr` has a ziggurat too, but its tail and wedges use the
//! platform's `exp`/`ln`, which are not bit-identical across hosts.

use std::sync::OnceLock;

/// Layers.
const N: usize = 256;
/// Start of the tail for 256 layers (Marsaglia and Tsang's value).
const R: f64 = 3.654_152_885_361_009;

/// The layer tables, built once per process (see [`tables`]).
#[derive(Debug)]
pub struct Tables {
    /// Layer edges: `x[0] = v / f(r)`, `x[1] = r`, ..., `x[N] = 0`.
    x: [f64; N + 1],
    /// `f(x[i])`.
    f: [f64; N + 1],
}

fn density(x: f64) -> f64 {
    libm::exp(-0.5 * x * x)
}

/// The tables (computed on first use; a stream keeps the reference, so a
/// draw pays no synchronisation).
pub fn tables() -> &'static Tables {
    static T: OnceLock<Tables> = OnceLock::new();
    T.get_or_init(|| {
        // The common area: the base rectangle plus the tail's integral
        // sqrt(pi / 2) erfc(r / sqrt 2).
        let v = R * density(R)
            + (0.5 * std::f64::consts::PI).sqrt() * libm::erfc(R / std::f64::consts::SQRT_2);
        let mut x = [0.0; N + 1];
        x[0] = v / density(R);
        x[1] = R;
        for i in 1..N - 1 {
            // f(x[i+1]) = f(x[i]) + v / x[i].
            let y = density(x[i]) + v / x[i];
            x[i + 1] = libm::sqrt(-2.0 * libm::log(y));
        }
        x[N] = 0.0;
        let mut f = [0.0; N + 1];
        for (fi, xi) in f.iter_mut().zip(&x) {
            *fi = density(*xi);
        }
        Tables { x, f }
    })
}

/// 53 random bits as a uniform in [0, 1).
fn unit(bits: u64) -> f64 {
    (bits >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// A standard normal deviate from the 64-bit words `next` yields (one in
/// about 99 % of calls).
#[inline]
pub fn standard_normal(t: &Tables, mut next: impl FnMut() -> u64) -> f64 {
    let bits = next();
    let i = (bits & 0xff) as usize;
    let x = unit(bits) * t.x[i];
    if x < t.x[i + 1] {
        return if bits & 0x100 != 0 { -x } else { x };
    }
    slow(t, bits, x, next)
}

/// The base layer's tail and the wedges (about 1 % of draws).
#[cold]
fn slow(t: &Tables, mut bits: u64, mut x: f64, mut next: impl FnMut() -> u64) -> f64 {
    loop {
        let i = (bits & 0xff) as usize;
        let sign = if bits & 0x100 != 0 { -1.0 } else { 1.0 };
        if x < t.x[i + 1] {
            return sign * x;
        }
        if i == 0 {
            // The tail beyond r: x = r + a with a ~ exp(-r a), accepted with
            // probability exp(-a^2 / 2).
            loop {
                let a = -libm::log(1.0 - unit(next())) / R;
                let b = -libm::log(1.0 - unit(next()));
                if 2.0 * b >= a * a {
                    return sign * (R + a);
                }
            }
        }
        // The wedge between x[i+1] and x[i]: accept under the curve.
        let y = t.f[i] + unit(next()) * (t.f[i + 1] - t.f[i]);
        if y < density(x) {
            return sign * x;
        }
        bits = next();
        x = unit(bits) * t.x[(bits & 0xff) as usize];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fixed 64-bit generator for the tests (splitmix64).
    fn splitmix(seed: u64) -> impl FnMut() -> u64 {
        let mut s = seed;
        move || {
            s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }
    }

    /// The standard normal distribution function.
    fn phi(x: f64) -> f64 {
        0.5 * libm::erfc(-x / std::f64::consts::SQRT_2)
    }

    #[test]
    fn layers_tile_the_density() {
        let t = tables();
        // Equal areas, and the top edge lands at 0 (f = 1).
        let v = t.x[1] * (t.f[2] - t.f[1]);
        for i in 1..N {
            let area = t.x[i] * (t.f[i + 1] - t.f[i]);
            assert!((area / v - 1.0).abs() < 1e-9, "layer {i}: {area} vs {v}");
        }
        assert!(t.x[N - 1] > 0.0 && t.x[N - 1] < 0.3, "{}", t.x[N - 1]);
        assert_eq!(t.f[N], 1.0);
        for i in 0..N {
            assert!(t.x[i] > t.x[i + 1], "edges decrease");
        }
    }

    #[test]
    fn deviates_are_standard_normal() {
        let mut next = splitmix(7);
        let n = 1_000_000;
        let t = tables();
        let mut z: Vec<f64> = (0..n).map(|_| standard_normal(t, &mut next)).collect();
        let mean = z.iter().sum::<f64>() / n as f64;
        let m = |p: i32| z.iter().map(|v| (v - mean).powi(p)).sum::<f64>() / n as f64;
        let (var, skew, kurt) = (m(2), m(3) / m(2).powf(1.5), m(4) / (m(2) * m(2)));
        // Standard errors: mean 1e-3, variance 1.4e-3, skewness 2.4e-3,
        // kurtosis 4.9e-3; 5 sigma.
        assert!(mean.abs() < 5e-3, "{mean}");
        assert!((var - 1.0).abs() < 7e-3, "{var}");
        assert!(skew.abs() < 1.2e-2, "{skew}");
        assert!((kurt - 3.0).abs() < 2.5e-2, "{kurt}");
        // Kolmogorov-Smirnov against the normal distribution function: the
        // 0.1 % critical value is 1.95 / sqrt(n).
        z.sort_by(f64::total_cmp);
        let d = z
            .iter()
            .enumerate()
            .map(|(k, v)| {
                let c = phi(*v);
                (c - k as f64 / n as f64).max((k + 1) as f64 / n as f64 - c)
            })
            .fold(0.0, f64::max);
        assert!(d < 1.95 / (n as f64).sqrt(), "KS distance {d}");
        // The tail beyond r has its mass: 2 (1 - Phi(r)) = 2.58e-4.
        let tail = z.iter().filter(|v| v.abs() > R).count() as f64 / n as f64;
        let expect = 2.0 * (1.0 - phi(R));
        assert!((tail / expect - 1.0).abs() < 0.2, "{tail} vs {expect}");
        assert!(
            z[0] < -4.0 && z[n - 1] > 4.0,
            "reaches beyond the tail's start"
        );
    }
}

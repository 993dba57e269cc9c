//! The adaptive error norm: a scaled max norm per group of states.

/// How a group's error is measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum GroupKind {
    /// `|err_i| / (atol + rtol * max(|x_old_i|, |x_new_i|))`, max over the group.
    Vector { atol: f64, rtol: f64 },
    /// A unit quaternion (4 states, w x y z): the geodesic angle between the
    /// propagated quaternion and the embedded lower-order one, over `atol_rad`.
    Quaternion { atol_rad: f64 },
}

/// A contiguous group of states in the error norm.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ErrorGroup {
    pub name: &'static str,
    pub start: usize,
    pub len: usize,
    pub kind: GroupKind,
}

/// Default when a system names no groups.
const DEFAULT: GroupKind = GroupKind::Vector {
    atol: 1e-6,
    rtol: 1e-6,
};

fn vector_norm(atol: f64, rtol: f64, x_old: &[f64], x_new: &[f64], err: &[f64]) -> f64 {
    let mut m = 0.0f64;
    for i in 0..err.len() {
        let scale = atol + rtol * x_old[i].abs().max(x_new[i].abs());
        let r = err[i].abs() / scale;
        // NaN never compares greater: make it infinite explicitly.
        if r.is_nan() {
            return f64::INFINITY;
        }
        m = m.max(r);
    }
    m
}

/// Geodesic angle between unit quaternions `q` and `q - e`.
fn quaternion_angle(q: &[f64], e: &[f64]) -> f64 {
    let p = [q[0] - e[0], q[1] - e[1], q[2] - e[2], q[3] - e[3]];
    let np = (p[0] * p[0] + p[1] * p[1] + p[2] * p[2] + p[3] * p[3]).sqrt();
    let nq = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
    let dot = (q[0] * p[0] + q[1] * p[1] + q[2] * p[2] + q[3] * p[3]) / (np * nq);
    // Stable form of 2*acos(|dot|) for small angles: 4*asin(|p/|p| -+ q/|q|| / 2).
    let s = if dot < 0.0 { -1.0 } else { 1.0 };
    let mut d2 = 0.0;
    for i in 0..4 {
        let d = q[i] / nq - s * p[i] / np;
        d2 += d * d;
    }
    // libm, not std: the error norm decides accept/reject, so it must give
    // the same bits on every host.
    4.0 * libm::asin((0.5 * d2.sqrt()).min(1.0))
}

/// The error norm over all groups (1.0 = exactly at tolerance).
pub(super) fn error_norm(groups: &[ErrorGroup], x_old: &[f64], x_new: &[f64], err: &[f64]) -> f64 {
    if groups.is_empty() {
        let GroupKind::Vector { atol, rtol } = DEFAULT else {
            unreachable!("the default group is a vector group")
        };
        return vector_norm(atol, rtol, x_old, x_new, err);
    }
    let mut m = 0.0f64;
    for g in groups {
        let r = g.start..g.start + g.len;
        let v = match g.kind {
            GroupKind::Vector { atol, rtol } => {
                vector_norm(atol, rtol, &x_old[r.clone()], &x_new[r.clone()], &err[r])
            }
            GroupKind::Quaternion { atol_rad } => {
                let a = quaternion_angle(&x_new[r.clone()], &err[r]) / atol_rad;
                if a.is_nan() { f64::INFINITY } else { a }
            }
        };
        m = m.max(v);
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quaternion_angle_is_the_geodesic_angle() {
        let half = 0.3f64 / 2.0;
        let q = [1.0, 0.0, 0.0, 0.0];
        let p = [half.cos(), half.sin(), 0.0, 0.0];
        let e: Vec<f64> = q.iter().zip(p).map(|(a, b)| a - b).collect();
        assert!((quaternion_angle(&q, &e) - 0.3).abs() < 1e-12);
        // q and -q are the same rotation.
        let e2: Vec<f64> = q.iter().zip(p).map(|(a, b)| a + b).collect();
        assert!((quaternion_angle(&q, &e2) - 0.3).abs() < 1e-12);
        // Tiny angles keep their precision.
        let t = 1e-9f64;
        let p = [(t / 2.0).cos(), 0.0, (t / 2.0).sin(), 0.0];
        let e: Vec<f64> = q.iter().zip(p).map(|(a, b)| a - b).collect();
        assert!((quaternion_angle(&q, &e) / t - 1.0).abs() < 1e-6);
    }

    #[test]
    fn norm_is_the_max_over_groups_and_nan_is_infinite() {
        let groups = [
            ErrorGroup {
                name: "a",
                start: 0,
                len: 2,
                kind: GroupKind::Vector {
                    atol: 1.0,
                    rtol: 0.0,
                },
            },
            ErrorGroup {
                name: "b",
                start: 2,
                len: 1,
                kind: GroupKind::Vector {
                    atol: 0.1,
                    rtol: 0.0,
                },
            },
        ];
        let x = [0.0; 4];
        assert_eq!(error_norm(&groups, &x, &x, &[0.5, -2.0, 0.05, 1e9]), 2.0);
        assert_eq!(
            error_norm(&groups, &x, &x, &[f64::NAN, 0.0, 0.0, 0.0]),
            f64::INFINITY
        );
    }
}

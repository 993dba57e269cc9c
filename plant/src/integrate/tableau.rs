//! Butcher tableaus of the embedded pairs.

/// An explicit embedded Runge–Kutta pair with the FSAL property: the last
/// stage is evaluated at the new solution, so the solution weights are the
/// last row of `a` (with a 0 for the last stage).
#[derive(Debug)]
pub(super) struct Tableau {
    pub stages: usize,
    pub c: &'static [f64],
    /// Row i holds a[i][0..i].
    pub a: &'static [&'static [f64]],
    /// b - b_hat: weights of the error estimate.
    pub e: &'static [f64],
    /// Order of the error estimator plus one (exponent base of the controller).
    pub err_order: f64,
}

pub(super) const DP54: Tableau = Tableau {
    stages: 7,
    c: &[0.0, 1.0 / 5.0, 3.0 / 10.0, 4.0 / 5.0, 8.0 / 9.0, 1.0, 1.0],
    a: &[
        &[],
        &[1.0 / 5.0],
        &[3.0 / 40.0, 9.0 / 40.0],
        &[44.0 / 45.0, -56.0 / 15.0, 32.0 / 9.0],
        &[
            19372.0 / 6561.0,
            -25360.0 / 2187.0,
            64448.0 / 6561.0,
            -212.0 / 729.0,
        ],
        &[
            9017.0 / 3168.0,
            -355.0 / 33.0,
            46732.0 / 5247.0,
            49.0 / 176.0,
            -5103.0 / 18656.0,
        ],
        &[
            35.0 / 384.0,
            0.0,
            500.0 / 1113.0,
            125.0 / 192.0,
            -2187.0 / 6784.0,
            11.0 / 84.0,
        ],
    ],
    e: &[
        71.0 / 57600.0,
        0.0,
        -71.0 / 16695.0,
        71.0 / 1920.0,
        -17253.0 / 339200.0,
        22.0 / 525.0,
        -1.0 / 40.0,
    ],
    err_order: 5.0,
};

pub(super) const BS32: Tableau = Tableau {
    stages: 4,
    c: &[0.0, 1.0 / 2.0, 3.0 / 4.0, 1.0],
    a: &[
        &[],
        &[1.0 / 2.0],
        &[0.0, 3.0 / 4.0],
        &[2.0 / 9.0, 1.0 / 3.0, 4.0 / 9.0],
    ],
    e: &[-5.0 / 72.0, 1.0 / 12.0, 1.0 / 9.0, -1.0 / 8.0],
    err_order: 3.0,
};

#[cfg(test)]
mod tests {
    use super::*;

    fn check(t: &Tableau) {
        assert_eq!(t.a.len(), t.stages);
        for (i, row) in t.a.iter().enumerate() {
            assert_eq!(row.len(), i);
            let s: f64 = row.iter().sum();
            assert!((s - t.c[i]).abs() < 1e-14, "row {i} sums to c");
        }
        // FSAL: the last row holds the solution weights (c = 1, sum 1).
        assert_eq!(t.c[t.stages - 1], 1.0);
        assert!(
            t.e.iter().sum::<f64>().abs() < 1e-14,
            "both weight sets sum to 1"
        );
    }

    #[test]
    fn tableaus_are_consistent() {
        check(&DP54);
        check(&BS32);
    }
}

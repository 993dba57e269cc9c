//! Compares a replay's states with a flight log's truth columns: the
//! largest absolute difference per state group over the rows whose times
//! the replay visits (`lockstep replay --compare LOG`).

use std::path::Path;

/// The state groups and their columns in a flight log.
pub const GROUPS: [(&str, &[&str]); 4] = [
    ("position_m", &["x_m", "y_m", "z_m"]),
    ("velocity_mps", &["vx_mps", "vy_mps", "vz_mps"]),
    ("attitude_quaternion", &["qw", "qx", "qy", "qz"]),
    ("rates_radps", &["p_radps", "q_radps", "r_radps"]),
];

/// The truth of a flight log: times and the 13 rigid-body states, in the
/// plant's state order (position, velocity, quaternion, rates).
#[derive(Debug, Clone, PartialEq)]
pub struct LogTruth {
    pub times_us: Vec<u64>,
    pub states: Vec<[f64; 13]>,
}

/// The largest difference per group, over `compared` rows.
#[derive(Debug, Clone, PartialEq)]
pub struct Difference {
    pub max_abs: [f64; 4],
    pub compared: u64,
    /// Log rows at times the replay never reached.
    pub unmatched: u64,
}

impl LogTruth {
    /// Reads the truth columns of the flight log at `path` (its header on
    /// line 1). Errors name the file, and the line or column.
    pub fn read(path: &Path) -> Result<LogTruth, String> {
        let name = path.display();
        let mut r = csv::ReaderBuilder::new()
            .has_headers(true)
            .from_path(path)
            .map_err(|e| format!("cannot read log {name}: {e}"))?;
        let header = r.headers().map_err(|e| format!("log {name}: {e}"))?.clone();
        let index = |col: &str| {
            header
                .iter()
                .position(|h| h == col)
                .ok_or_else(|| format!("log {name}: no `{col}` column (is it a flight log?)"))
        };
        let time = index("time_us")?;
        let mut cols = Vec::with_capacity(13);
        for (_, names) in GROUPS {
            for c in names {
                cols.push(index(c)?);
            }
        }
        let mut truth = LogTruth {
            times_us: Vec::new(),
            states: Vec::new(),
        };
        for (i, rec) in r.records().enumerate() {
            let line = i + 2;
            let rec = rec.map_err(|e| format!("log {name}: line {line}: {e}"))?;
            let field = |k: usize| rec.get(k).unwrap_or("");
            let t: u64 = field(time).parse().map_err(|_| {
                format!(
                    "log {name}: line {line}: time_us `{}` is not a time",
                    field(time)
                )
            })?;
            if truth.times_us.last().is_some_and(|&p| t <= p) {
                return Err(format!(
                    "log {name}: line {line}: time {t} us does not increase"
                ));
            }
            let mut x = [0.0; 13];
            for (j, &k) in cols.iter().enumerate() {
                x[j] = field(k).parse().map_err(|_| {
                    format!(
                        "log {name}: line {line}: `{}` is `{}`, not a number",
                        &header[k],
                        field(k)
                    )
                })?;
            }
            truth.times_us.push(t);
            truth.states.push(x);
        }
        Ok(truth)
    }

    /// A comparer to feed the replay's visits to.
    pub fn comparer(&self) -> Comparer<'_> {
        Comparer {
            truth: self,
            next: 0,
            diff: Difference {
                max_abs: [0.0; 4],
                compared: 0,
                unmatched: 0,
            },
        }
    }
}

/// Walks the log's rows alongside a replay's visits (both in time order).
#[derive(Debug)]
pub struct Comparer<'a> {
    truth: &'a LogTruth,
    next: usize,
    diff: Difference,
}

impl Comparer<'_> {
    /// The replay's state `x` at `t`.
    pub fn visit(&mut self, t: u64, x: &[f64]) {
        let times = &self.truth.times_us;
        while self.next < times.len() && times[self.next] < t {
            self.next += 1;
            self.diff.unmatched += 1;
        }
        if self.next < times.len() && times[self.next] == t {
            let row = &self.truth.states[self.next];
            let mut k = 0;
            for (g, (_, names)) in GROUPS.iter().enumerate() {
                for _ in 0..names.len() {
                    let d = (x[k] - row[k]).abs();
                    // NaN compares as a difference, never as agreement.
                    if d.is_nan() || d > self.diff.max_abs[g] {
                        self.diff.max_abs[g] = if d.is_nan() { f64::INFINITY } else { d };
                    }
                    k += 1;
                }
            }
            self.diff.compared += 1;
            self.next += 1;
        }
    }

    /// The differences, counting the rows after the replay's last visit as
    /// unmatched.
    pub fn finish(mut self) -> Difference {
        self.diff.unmatched += (self.truth.times_us.len() - self.next) as u64;
        self.diff
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(name: &str, text: &str) -> std::path::PathBuf {
        let p = std::env::temp_dir().join(format!("lockstep-cmp-{}-{name}", std::process::id()));
        std::fs::write(&p, text).unwrap();
        p
    }

    const HEAD: &str =
        "time_us,x_m,y_m,z_m,vx_mps,vy_mps,vz_mps,qw,qx,qy,qz,p_radps,q_radps,r_radps,mode\n";

    #[test]
    fn differences_are_per_group_and_unmatched_rows_counted() {
        let p = write(
            "ok.csv",
            &format!(
                "{HEAD}0,1,2,3,0,0,0,1,0,0,0,0,0,0,1\n1000,1,2,3,0.5,0,0,1,0,0,0,0,0,0.25,1\n2000,0,0,0,0,0,0,1,0,0,0,0,0,0,1\n"
            ),
        );
        let truth = LogTruth::read(&p).unwrap();
        let mut c = truth.comparer();
        let mut x = [0.0; 13];
        x[..3].copy_from_slice(&[1.0, 2.0, 3.5]);
        x[6] = 1.0;
        c.visit(0, &x);
        x[2] = 3.0;
        x[3] = 0.25;
        c.visit(1000, &x);
        let d = c.finish();
        assert_eq!(d.max_abs, [0.5, 0.25, 0.0, 0.25]);
        assert_eq!((d.compared, d.unmatched), (2, 1));
        std::fs::remove_file(p).unwrap();
    }

    #[test]
    fn bad_logs_are_errors_naming_file_line_and_column() {
        let p = write("bad.csv", &format!("{HEAD}0,1,2,x,0,0,0,1,0,0,0,0,0,0,1\n"));
        assert_eq!(
            LogTruth::read(&p).unwrap_err(),
            format!("log {}: line 2: `z_m` is `x`, not a number", p.display())
        );
        let q = write("nocol.csv", "time_us,x_m\n0,1\n");
        assert_eq!(
            LogTruth::read(&q).unwrap_err(),
            format!("log {}: no `y_m` column (is it a flight log?)", q.display())
        );
        let r = write(
            "order.csv",
            &format!("{HEAD}5,1,2,3,0,0,0,1,0,0,0,0,0,0,1\n5,1,2,3,0,0,0,1,0,0,0,0,0,0,1\n"),
        );
        assert_eq!(
            LogTruth::read(&r).unwrap_err(),
            format!("log {}: line 3: time 5 us does not increase", r.display())
        );
        for f in [p, q, r] {
            std::fs::remove_file(f).unwrap();
        }
    }
}

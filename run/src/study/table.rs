//! A study's results as CSV (one row per candidate, then the independent
//! solver's row) and as a text table.

use super::{GROUPS, GroupErrors, Results, Setting};

/// The CSV: `method, step_us, tolerance, status, rhs_evals,
/// rhs_evals_per_sim_s, wall_median_ms`, then `<group>_max` and
/// `<group>_rms` for each group of [`GROUPS`]. A failed candidate's status
/// is `failed: <why and when>` and its numbers are empty. The last row,
/// `ode_solvers_dopri5` with status `independent`, is the independent
/// solver's difference from the reference.
pub fn csv_text(r: &Results) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header: Vec<String> = [
        "method",
        "step_us",
        "tolerance",
        "status",
        "rhs_evals",
        "rhs_evals_per_sim_s",
        "wall_median_ms",
    ]
    .map(String::from)
    .to_vec();
    for g in GROUPS {
        header.push(format!("{g}_max"));
        header.push(format!("{g}_rms"));
    }
    let sim_s = r.span_us as f64 * 1e-6;
    let per_s = |evals: u64| {
        if sim_s > 0.0 {
            format!("{:.1}", evals as f64 / sim_s)
        } else {
            String::new()
        }
    };
    let errors = |e: Option<&GroupErrors>| -> Vec<String> {
        (0..GROUPS.len())
            .flat_map(|i| match e {
                Some(e) => [format!("{:e}", e.max[i]), format!("{:e}", e.rms[i])],
                None => [String::new(), String::new()],
            })
            .collect()
    };
    // Writing into a Vec cannot fail.
    let _ = w.write_record(&header);
    for row in &r.rows {
        let (step, tol) = match row.candidate.setting {
            Setting::StepUs(s) => (s.to_string(), String::new()),
            Setting::Tolerance(t) => (String::new(), format!("{t:e}")),
        };
        let (status, errs, evals) = match &row.outcome {
            Ok(e) => ("ok".to_string(), errors(Some(e)), row.stats.rhs_evals),
            Err(f) => (format!("failed: {f}"), errors(None), 0),
        };
        let mut rec = vec![row.candidate.method.name().to_string(), step, tol, status];
        if row.outcome.is_ok() {
            rec.extend([
                evals.to_string(),
                per_s(evals),
                format!("{:.3}", row.wall_median_s * 1e3),
            ]);
        } else {
            rec.extend([String::new(), String::new(), String::new()]);
        }
        rec.extend(errs);
        let _ = w.write_record(&rec);
    }
    let c = &r.check;
    let mut rec = vec![
        "ode_solvers_dopri5".to_string(),
        String::new(),
        format!("{:e}", super::reference::INDEPENDENT_TOLERANCE),
        "independent".to_string(),
        c.rhs_evals.to_string(),
        per_s(c.rhs_evals),
        format!("{:.3}", c.wall_s * 1e3),
    ];
    rec.extend(errors(Some(&c.difference)));
    let _ = w.write_record(&rec);
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}

/// The text table: per candidate its work and its largest error in
/// position, attitude and rotor speed (every group is in the CSV).
pub fn table_text(r: &Results) -> String {
    let mut out = String::new();
    let sim_s = r.span_us as f64 * 1e-6;
    out.push_str(&format!(
        "{:<8} {:<14} {:>12} {:>9} {:>10} {:>10} {:>10} {:>10}\n",
        "method",
        "setting",
        "rhs/sim s",
        "wall ms",
        "pos max m",
        "pos rms m",
        "att max",
        "rotor max"
    ));
    for row in &r.rows {
        let name = row.candidate.method.name();
        let setting = row.candidate.setting_text();
        match &row.outcome {
            Ok(e) => out.push_str(&format!(
                "{:<8} {:<14} {:>12.0} {:>9.1} {:>10.3e} {:>10.3e} {:>10.3e} {:>10.3e}\n",
                name,
                setting,
                row.stats.rhs_evals as f64 / sim_s.max(1e-9),
                row.wall_median_s * 1e3,
                e.max[0],
                e.rms[0],
                e.max[2],
                e.max[4],
            )),
            Err(f) => out.push_str(&format!("{name:<8} {setting:<14} failed: {f}\n")),
        }
    }
    let d = &r.check.difference;
    out.push_str(&format!(
        "reference: dp54 at tol {:.0e}, {:.0} rhs/sim s; ode_solvers Dopri5 at tol {:.0e} \
         differs from it by at most {:.3e} m, {:.3e} rad, {:.3e} rad/s of rotor speed\n",
        r.reference_tolerance,
        r.reference_stats.rhs_evals as f64 / sim_s.max(1e-9),
        super::reference::INDEPENDENT_TOLERANCE,
        d.max[0],
        d.max[2],
        d.max[4],
    ));
    out
}

//! A Monte Carlo batch's figures (`lockstep montecarlo`): a histogram of
//! each measured outcome, passed and failed runs stacked in their colours,
//! the `[expect]` threshold as a line; and the scatter of each outcome
//! against each drawn input, what drives the failures. Bins follow the
//! sample size (the square-root rule, 5 to 50).

use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::panel::range;
use crate::{Figure, PlotError, write_png_svg};

const PASSED: RGBColor = RGBColor(44, 160, 44);
const FAILED: RGBColor = RGBColor(214, 39, 40);
const THRESHOLD: RGBColor = RGBColor(40, 40, 40);

/// One measured outcome of every completed run, in run order.
#[derive(Debug, Clone)]
pub struct Outcome<'a> {
    pub name: &'a str,
    pub values: &'a [f64],
    /// The `[expect]` limit on it, and what the limit is called.
    pub threshold: Option<(f64, String)>,
}

/// How many bins for `n` values: the square root, 5 to 50.
pub fn bin_count(n: usize) -> usize {
    ((n as f64).sqrt().ceil() as usize).clamp(5, 50)
}

/// Bin counts of the finite values of `v` over [min, max] in `k` bins (a
/// single value gets a bin of width 1 around it): (low edge, width, the
/// bin of each value, None for a non-finite one).
pub fn bins(v: &[f64], k: usize) -> (f64, f64, Vec<Option<usize>>) {
    let (lo, hi) = v
        .iter()
        .filter(|x| x.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
            (a.min(*x), b.max(*x))
        });
    if !lo.is_finite() {
        return (0.0, 1.0 / k as f64, vec![None; v.len()]);
    }
    let (lo, width) = if hi > lo {
        (lo, (hi - lo) / k as f64)
    } else {
        (lo - 0.5, 1.0 / k as f64)
    };
    let which = v
        .iter()
        .map(|x| {
            x.is_finite()
                .then(|| (((x - lo) / width) as usize).min(k - 1))
        })
        .collect();
    (lo, width, which)
}

/// Writes `<stem>.png` and `<stem>.svg`: a histogram per outcome, passed
/// (green) and failed (red) runs stacked; `passed[i]` is run i's verdict.
pub fn histograms(
    outcomes: &[Outcome],
    passed: &[bool],
    stem: &Path,
) -> Result<Vec<PathBuf>, PlotError> {
    let size = (1400, 400 * outcomes.len().div_ceil(2).max(1) as u32);
    write_png_svg(stem, size, &Histograms { outcomes, passed })
}

/// Writes `<stem>.png` and `<stem>.svg`: each outcome (a row) against each
/// drawn input (a column), a dot per run in its verdict's colour.
pub fn scatter(
    outcomes: &[Outcome],
    inputs: &[(&str, &[f64])],
    passed: &[bool],
    stem: &Path,
) -> Result<Vec<PathBuf>, PlotError> {
    let cols = inputs.len().max(1) as u32;
    let size = (60 + 300 * cols, 40 + 260 * outcomes.len().max(1) as u32);
    write_png_svg(
        stem,
        size,
        &Scatter {
            outcomes,
            inputs,
            passed,
        },
    )
}

struct Histograms<'a> {
    outcomes: &'a [Outcome<'a>],
    passed: &'a [bool],
}

impl Figure for Histograms<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
        root.fill(&WHITE).map_err(e)?;
        let panels = root.split_evenly((self.outcomes.len().div_ceil(2).max(1), 2));
        for (o, area) in self.outcomes.iter().zip(panels.iter()) {
            histogram(area, o, self.passed)?;
        }
        Ok(())
    }
}

fn histogram<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    o: &Outcome,
    passed: &[bool],
) -> Result<(), String> {
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    let k = bin_count(o.values.len());
    let (lo, width, which) = bins(o.values, k);
    let mut good = vec![0u64; k];
    let mut bad = vec![0u64; k];
    for (i, b) in which.iter().enumerate() {
        if let Some(b) = b {
            if passed.get(i).copied().unwrap_or(true) {
                good[*b] += 1;
            } else {
                bad[*b] += 1;
            }
        }
    }
    let top = (0..k).map(|i| good[i] + bad[i]).max().unwrap_or(0).max(1);
    let mut hi = lo + width * k as f64;
    let mut x0 = lo;
    if let Some((t, _)) = &o.threshold {
        x0 = x0.min(*t - width * 0.5);
        hi = hi.max(*t + width * 0.5);
    }
    let failed = bad.iter().sum::<u64>();
    let mut chart = ChartBuilder::on(area)
        .caption(
            format!("{} ({} runs, {failed} failed)", o.name, o.values.len()),
            ("sans-serif", 20),
        )
        .margin(12)
        .x_label_area_size(35)
        .y_label_area_size(50)
        .build_cartesian_2d(x0..hi, 0u64..top + top / 10 + 1)
        .map_err(e)?;
    chart
        .configure_mesh()
        .x_desc(o.name)
        .y_desc("runs")
        .label_style(("sans-serif", 13))
        .draw()
        .map_err(e)?;
    chart
        .draw_series((0..k).map(|i| {
            let x = lo + width * i as f64;
            Rectangle::new([(x, 0), (x + width, good[i])], PASSED.mix(0.75).filled())
        }))
        .map_err(e)?
        .label("passed")
        .legend(|(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], PASSED.filled()));
    chart
        .draw_series((0..k).map(|i| {
            let x = lo + width * i as f64;
            Rectangle::new(
                [(x, good[i]), (x + width, good[i] + bad[i])],
                FAILED.mix(0.75).filled(),
            )
        }))
        .map_err(e)?
        .label("failed")
        .legend(|(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], FAILED.filled()));
    if let Some((t, what)) = &o.threshold {
        let t = *t;
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(t, 0), (t, top + top / 10 + 1)],
                THRESHOLD.stroke_width(2),
            )))
            .map_err(e)?
            .label(format!("{what} = {t}"))
            .legend(|(x, y)| {
                PathElement::new(vec![(x, y), (x + 14, y)], THRESHOLD.stroke_width(2))
            });
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 13))
        .draw()
        .map_err(e)?;
    Ok(())
}

struct Scatter<'a> {
    outcomes: &'a [Outcome<'a>],
    inputs: &'a [(&'a str, &'a [f64])],
    passed: &'a [bool],
}

impl Figure for Scatter<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
        root.fill(&WHITE).map_err(e)?;
        let root = root
            .titled(
                "Each outcome against each drawn input (green: passed, red: failed)",
                ("sans-serif", 22),
            )
            .map_err(e)?;
        let panels = root.split_evenly((self.outcomes.len().max(1), self.inputs.len().max(1)));
        for (r, o) in self.outcomes.iter().enumerate() {
            for (c, (name, x)) in self.inputs.iter().enumerate() {
                let area = &panels[r * self.inputs.len() + c];
                let (x0, x1) = range(x.iter());
                let (y0, y1) = range(o.values.iter().chain(o.threshold.as_ref().map(|t| &t.0)));
                let mut chart = ChartBuilder::on(area)
                    .margin(8)
                    .x_label_area_size(32)
                    .y_label_area_size(48)
                    .build_cartesian_2d(x0..x1, y0..y1)
                    .map_err(e)?;
                chart
                    .configure_mesh()
                    .x_desc(*name)
                    .y_desc(o.name)
                    .x_labels(4)
                    .y_labels(5)
                    .label_style(("sans-serif", 11))
                    .draw()
                    .map_err(e)?;
                if let Some((t, _)) = &o.threshold {
                    chart
                        .draw_series(std::iter::once(PathElement::new(
                            vec![(x0, *t), (x1, *t)],
                            THRESHOLD.stroke_width(1),
                        )))
                        .map_err(e)?;
                }
                // Failed runs drawn last, over the passed.
                for want in [true, false] {
                    let color = if want { PASSED } else { FAILED };
                    chart
                        .draw_series(
                            x.iter()
                                .zip(o.values)
                                .zip(self.passed)
                                .filter(|((x, y), p)| **p == want && x.is_finite() && y.is_finite())
                                .map(|((x, y), _)| {
                                    Circle::new((*x, *y), 3, color.mix(0.8).filled())
                                }),
                        )
                        .map_err(e)?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_follow_the_sample_size() {
        assert_eq!(bin_count(3), 5);
        assert_eq!(bin_count(40), 7);
        assert_eq!(bin_count(1000), 32);
        assert_eq!(bin_count(1_000_000), 50);
    }

    #[test]
    fn bins_place_every_finite_value_once() {
        let (lo, w, which) = bins(&[0.0, 1.0, 2.0, 10.0, f64::NAN], 20);
        assert_eq!((lo, w), (0.0, 0.5));
        assert_eq!(which, vec![Some(0), Some(2), Some(4), Some(19), None]);
        let (_, _, which) = bins(&[3.0, 3.0], 5);
        assert_eq!(which, vec![Some(2), Some(2)]);
        assert!(bins(&[], 5).2.is_empty());
    }
}

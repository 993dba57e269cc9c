//! Histograms of a Monte Carlo batch's measurements (`lockstep
//! montecarlo`): one panel per measurement, 20 equal bins.

use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::{COLORS, Figure, PlotError, write_png_svg};

const BINS: usize = 20;

/// Bin counts of the finite values of `v` over [min, max] (a single value
/// gets a bin of width 1 around it): (low edge, width, counts).
pub fn bins(v: &[f64]) -> (f64, f64, Vec<u64>) {
    let finite: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    let (lo, hi) = finite
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
            (a.min(*x), b.max(*x))
        });
    if finite.is_empty() {
        return (0.0, 1.0, vec![0; BINS]);
    }
    let (lo, width) = if hi > lo {
        (lo, (hi - lo) / BINS as f64)
    } else {
        (lo - 0.5, 1.0 / BINS as f64)
    };
    let mut counts = vec![0u64; BINS];
    for x in finite {
        let i = (((x - lo) / width) as usize).min(BINS - 1);
        counts[i] += 1;
    }
    (lo, width, counts)
}

/// Writes `<stem>.png` and `<stem>.svg`: a histogram per named series.
pub fn histograms(series: &[(String, Vec<f64>)], stem: &Path) -> Result<Vec<PathBuf>, PlotError> {
    let size = (1400, 400 * series.len().div_ceil(2).max(1) as u32);
    write_png_svg(stem, size, &Histograms(series))
}

struct Histograms<'a>(&'a [(String, Vec<f64>)]);

impl Figure for Histograms<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        figure(root, self.0)
    }
}

fn figure<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    series: &[(String, Vec<f64>)],
) -> Result<(), String> {
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let panels = root.split_evenly((series.len().div_ceil(2).max(1), 2));
    for (k, (name, v)) in series.iter().enumerate() {
        let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
        let (lo, width, counts) = bins(v);
        let top = counts.iter().copied().max().unwrap_or(0).max(1);
        let hi = lo + width * BINS as f64;
        let mut chart = ChartBuilder::on(&panels[k])
            .caption(format!("{name} ({} runs)", v.len()), ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(35)
            .y_label_area_size(50)
            .build_cartesian_2d(lo..hi, 0u64..top + top / 10 + 1)
            .map_err(e)?;
        chart
            .configure_mesh()
            .x_desc(name.as_str())
            .y_desc("runs")
            .label_style(("sans-serif", 13))
            .draw()
            .map_err(e)?;
        let color = COLORS[k % COLORS.len()];
        chart
            .draw_series(counts.iter().enumerate().map(|(i, c)| {
                let x0 = lo + width * i as f64;
                Rectangle::new([(x0, 0), (x0 + width, *c)], color.mix(0.7).filled())
            }))
            .map_err(e)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_count_every_finite_value_once() {
        let (lo, w, c) = bins(&[0.0, 1.0, 2.0, 10.0, f64::NAN]);
        assert_eq!((lo, w), (0.0, 0.5));
        assert_eq!(c.iter().sum::<u64>(), 4);
        assert_eq!((c[0], c[2], c[4], c[19]), (1, 1, 1, 1));
        let (_, _, c) = bins(&[3.0, 3.0]);
        assert_eq!(c.iter().sum::<u64>(), 2);
        assert_eq!(bins(&[]).2.iter().sum::<u64>(), 0);
    }
}

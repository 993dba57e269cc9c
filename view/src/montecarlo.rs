//! The Monte Carlo page: the batch's outcome, its figures (the SVGs the
//! batch drew, inline) and every run with its verdict, reason and the
//! command that flies it again alone.

use serde_json::{Value, json};

use crate::ViewError;
use crate::page::fill;

/// The shared figure code, then the page's own.
const SCRIPT: &str = concat!(
    include_str!("../assets/figures.js"),
    include_str!("../assets/montecarlo.js")
);

/// A batch as its `--out` directory holds it.
#[derive(Debug, Clone)]
pub struct Batch<'a> {
    pub title: &'a str,
    /// `summary.json`.
    pub summary: &'a Value,
    /// `runs.csv`: its header and rows, as text.
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// The figures (file name, SVG text).
    pub figures: Vec<(String, String)>,
    /// How to fly run `{run}` again (the command with `{run}` in it).
    pub rerun: String,
}

/// The HTML of a batch's page.
pub fn montecarlo_page(b: &Batch) -> Result<String, ViewError> {
    Ok(fill(
        b.title,
        &json!({"kind": "montecarlo", "title": b.title, "version": env!("CARGO_PKG_VERSION"),
                "summary": b.summary, "header": b.header, "rows": b.rows,
                "figures": b.figures, "rerun": b.rerun}),
        SCRIPT,
        false,
    ))
}

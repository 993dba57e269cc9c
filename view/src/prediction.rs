//! The page of `lockstep predict --out`: the log replayed open loop, the
//! prediction error per horizon against the baselines (a table), and the
//! figures of the log against the prediction (the SVGs, inline).

use serde_json::{Value, json};

use crate::ViewError;
use crate::page::fill;

/// The shared figure code, then the page's own.
const SCRIPT: &str = concat!(
    include_str!("../assets/figures.js"),
    include_str!("../assets/prediction.js")
);

/// A prediction as `lockstep predict` reports it.
#[derive(Debug, Clone)]
pub struct Prediction<'a> {
    pub title: &'a str,
    /// The report (`predict.json`).
    pub report: &'a Value,
    /// The figures (file name, SVG text), one per horizon.
    pub figures: Vec<(String, String)>,
}

/// The HTML of a prediction's page.
pub fn prediction_page(p: &Prediction) -> Result<String, ViewError> {
    Ok(fill(
        p.title,
        &json!({"kind": "prediction", "title": p.title, "version": env!("CARGO_PKG_VERSION"),
                "report": p.report, "figures": p.figures}),
        SCRIPT,
        false,
    ))
}

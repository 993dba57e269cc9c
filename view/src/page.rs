//! The page: `assets/page.html` filled with its stylesheets, the page's
//! data (JSON), the vendored bundle and `viewer.js`, all inline.

use std::io::Write as _;
use std::path::Path;

use serde_json::{Value, json};

use crate::{Vehicle, ViewError};

const TEMPLATE: &str = include_str!("../assets/page.html");
const STYLE: &str = include_str!("../assets/viewer.css");
const VIEWER: &str = include_str!("../assets/viewer.js");
const VENDOR: &str = include_str!("../vendor/three-uplot.min.js");
const VENDOR_STYLE: &str = include_str!("../vendor/uPlot.min.css");

/// Rows carried for all vehicles of a page together, and at most per
/// vehicle: a page stays a few megabytes however long or wide the run.
const ROWS_PER_PAGE: usize = 40_000;
const ROWS_PER_VEHICLE: usize = 5_000;

/// A single flight's page.
#[derive(Debug, Clone)]
pub struct Flight<'a> {
    /// The page's heading (the scenario's description or file).
    pub title: &'a str,
    pub vehicle: Vehicle<'a>,
}

/// A fleet's page: every vehicle in the fleet's shared frame.
#[derive(Debug, Clone)]
pub struct Fleet<'a> {
    pub title: &'a str,
    /// The fleet's seed (each vehicle's own is derived from it).
    pub seed: Option<u64>,
    pub vehicles: Vec<Vehicle<'a>>,
    /// The fleet report's `encounters` (proximity episodes) and `closest`
    /// approach, as in its `summary.json`.
    pub encounters: Option<&'a Value>,
    pub closest: Option<&'a Value>,
}

/// The HTML of a flight's page.
pub fn flight_page(f: &Flight) -> Result<String, ViewError> {
    let v = f.vehicle.to_json(ROWS_PER_VEHICLE)?;
    Ok(fill(
        f.title,
        &json!({"kind": "flight", "title": f.title, "version": env!("CARGO_PKG_VERSION"),
                "vehicles": [v], "encounters": [], "closest": null}),
        VIEWER,
        true,
    ))
}

/// The HTML of a fleet's page.
pub fn fleet_page(f: &Fleet) -> Result<String, ViewError> {
    let cap = (ROWS_PER_PAGE / f.vehicles.len().max(1)).clamp(500, ROWS_PER_VEHICLE);
    let vehicles = f
        .vehicles
        .iter()
        .map(|v| v.to_json(cap))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(fill(
        f.title,
        &json!({"kind": "fleet", "title": f.title, "version": env!("CARGO_PKG_VERSION"),
                "seed": f.seed.map(|s| s.to_string()),
                "vehicles": vehicles,
                "encounters": f.encounters.cloned().unwrap_or(json!([])),
                "closest": f.closest.cloned().unwrap_or(Value::Null)}),
        VIEWER,
        true,
    ))
}

/// `s` safe as HTML text or an attribute's value.
pub(crate) fn escape_html(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// `data` as JSON that can sit inside a `<script>` element: no `<` (so no
/// `</script>`) outside an escape. Every `<` in JSON is inside a string,
/// where `\u003c` means the same.
pub(crate) fn script_json(data: &Value) -> String {
    data.to_string().replace('<', "\\u003c")
}

/// The template with its slots filled; `script` is the page's own code,
/// `vendor` whether it needs the vendored three.js and uPlot.
pub(crate) fn fill(title: &str, data: &Value, script: &str, vendor: bool) -> String {
    let (vendor, vendor_style) = if vendor {
        (VENDOR, VENDOR_STYLE)
    } else {
        ("", "")
    };
    let slots: [(&str, String); 6] = [
        ("@@TITLE@@", escape_html(title)),
        ("@@VENDOR_STYLE@@", vendor_style.to_string()),
        ("@@STYLE@@", STYLE.to_string()),
        ("@@DATA@@", script_json(data)),
        ("@@VENDOR@@", vendor.to_string()),
        ("@@SCRIPT@@", script.to_string()),
    ];
    // One pass over the template: a slot's value is never searched for
    // another slot's marker.
    let mut out =
        String::with_capacity(TEMPLATE.len() + slots.iter().map(|s| s.1.len()).sum::<usize>());
    let mut rest = TEMPLATE;
    loop {
        let next = slots
            .iter()
            .filter_map(|(m, v)| rest.find(m).map(|i| (i, *m, v)))
            .min_by_key(|(i, _, _)| *i);
        match next {
            Some((i, m, v)) => {
                out.push_str(&rest[..i]);
                out.push_str(v);
                rest = &rest[i + m.len()..];
            }
            None => {
                out.push_str(rest);
                return out;
            }
        }
    }
}

/// Writes `html` to `path` whole or not at all: a temporary file beside it,
/// renamed into place (a full disk leaves the old page, never half a page).
pub fn write_page(path: &Path, html: &str) -> Result<(), ViewError> {
    let failed = |e: std::io::Error| ViewError::Write {
        path: path.display().to_string(),
        reason: e.to_string(),
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(failed)?;
    tmp.write_all(html.as_bytes()).map_err(failed)?;
    tmp.as_file().sync_all().map_err(failed)?;
    // Readable as any other output (a temporary file is private).
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o644))
            .map_err(failed)?;
    }
    tmp.persist(path).map_err(|e| failed(e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_slot_is_in_the_template_once() {
        // The title twice: the window's and the heading.
        assert_eq!(TEMPLATE.matches("@@TITLE@@").count(), 2);
        for m in [
            "@@VENDOR_STYLE@@",
            "@@STYLE@@",
            "@@DATA@@",
            "@@VENDOR@@",
            "@@SCRIPT@@",
        ] {
            assert_eq!(TEMPLATE.matches(m).count(), 1, "{m}");
        }
    }

    #[test]
    fn no_inlined_script_can_end_its_element() {
        for (name, s) in [("vendor", VENDOR), ("viewer.js", VIEWER)] {
            assert!(!s.to_ascii_lowercase().contains("</script"), "{name}");
        }
        for (name, s) in [("vendor css", VENDOR_STYLE), ("viewer.css", STYLE)] {
            assert!(!s.to_ascii_lowercase().contains("</style"), "{name}");
        }
    }

    #[test]
    fn data_and_titles_cannot_break_out_of_their_elements() {
        let evil = "</script><script>alert(1)</script> & \"x\"";
        let html = fill(evil, &json!({"title": evil}), "", false);
        assert!(!html.contains("<script>alert"));
        assert!(
            html.contains(
                "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;x&quot;"
            )
        );
        let j = script_json(&json!({"title": evil}));
        let back: Value = serde_json::from_str(&j).unwrap();
        assert_eq!(back["title"], evil);
    }

    #[test]
    fn a_slot_value_holding_a_marker_is_not_filled_again() {
        let html = fill("@@DATA@@", &json!(1), "", true);
        assert!(html.contains("<title>@@DATA@@"));
    }

    #[test]
    fn a_page_is_written_whole_and_a_bad_directory_is_named() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("flight.html");
        write_page(&p, "<p>one</p>").unwrap();
        write_page(&p, "<p>two</p>").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "<p>two</p>");
        let bad = d.path().join("missing/flight.html");
        let e = write_page(&bad, "x").unwrap_err().to_string();
        assert!(
            e.starts_with(&format!("cannot write {}: ", bad.display())),
            "{e}"
        );
    }
}

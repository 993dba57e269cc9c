//! Plots: `fly --out` draws the flight, `lockstep plot LOG` redraws any
//! log; the files are a valid PNG of the figure's size and an SVG with every
//! panel.

use crate::common::*;

const PANELS: [&str; 10] = [
    "Path, top-down (m)",
    "Altitude (m)",
    "Velocity (m/s)",
    "Attitude (deg)",
    "Motor commands (0..1)",
    "Rotor speeds (rad/s)",
    "Battery voltage (V)",
    "Battery current (A)",
    "State of charge (%)",
    "Wind (m/s)",
];

/// Width and height from a PNG's IHDR chunk, after checking the signature.
fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "a PNG signature");
    assert_eq!(&bytes[12..16], b"IHDR");
    let be = |i: usize| u32::from_be_bytes(bytes[i..i + 4].try_into().unwrap());
    (be(16), be(20))
}

fn assert_plots(stem: &std::path::Path) {
    let png = std::fs::read(stem.with_extension("png")).unwrap();
    assert_eq!(png_size(&png), (1600, 2240));
    let svg = std::fs::read_to_string(stem.with_extension("svg")).unwrap();
    assert!(svg.starts_with("<svg"), "{}", &svg[..40]);
    assert!(svg.trim_end().ends_with("</svg>"));
    for p in PANELS {
        assert!(svg.contains(&format!(">\n{p}\n</text>")), "panel {p}");
    }
    // The square's four corners are drawn as waypoints.
    assert!(svg.contains(">\nwaypoints\n</text>"));
    // Titled by the scenario (not the log's file name), with the modes'
    // legend and the yaw unwrapped.
    assert!(
        svg.contains(">\nsquare.toml — iris, seed 7\n</text>"),
        "the title"
    );
    for t in ["modes:", "takeoff", "mission", "yaw (unwrapped)"] {
        assert!(svg.contains(&format!(">\n{t}\n</text>")), "{t}");
    }
}

#[test]
fn fly_out_draws_the_flight_and_plot_redraws_it() {
    let dir = TempDir::new("plots");
    let out = dir.join("run");
    let r = lockstep(&["fly", "--duration", "30", "--out", out.to_str().unwrap()]);
    assert_eq!(r.code(), 0, "{r}");
    let stem = out.join("flight");
    for ext in ["png", "svg"] {
        let line = format!("\nplot          {}.{ext}\n", stem.display());
        assert!(r.stdout.contains(&line), "{line}\n{r}");
    }
    assert_plots(&stem);
    let log = out.join("log.csv");
    let r = lockstep(&["plot", log.to_str().unwrap()]);
    assert_eq!(r.code(), 0, "{r}");
    assert_eq!(
        r.stdout,
        format!(
            "plot          {0}.png\nplot          {0}.svg\n",
            out.join("log").display()
        )
    );
    assert_plots(&out.join("log"));
}

#[test]
fn plotting_what_is_not_a_log_is_an_error_naming_it() {
    let dir = TempDir::new("plots-bad");
    let bad = dir.join("bad.csv");
    std::fs::write(&bad, "a,b\n1,2\n").unwrap();
    let r = lockstep(&["plot", bad.to_str().unwrap()]);
    assert_eq!(r.code(), 2, "{r}");
    assert_eq!(
        r.stderr,
        format!(
            "lockstep plot: log {}: the first column is not `time_us` (is it a lockstep flight log?)\n",
            bad.display()
        )
    );
    let r = lockstep(&["fly", "--plot", "x"]);
    assert_eq!(r.code(), 2, "{r}");
    assert!(
        r.stderr.starts_with("lockstep fly: --plot needs a log"),
        "{r}"
    );
}

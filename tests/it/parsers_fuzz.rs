//! Property tests of the input parsers: whatever the bytes, the mission and
//! scenario parsers return a value or an error, never panic, and stay
//! bounded; mutations of valid files are either accepted as valid files
//! (every value checked) or refused with a message.

use std::path::Path;

use lockstep_harness::inputs::mission::Mission;
use lockstep_harness::inputs::scenario::Scenario;
use proptest::prelude::*;

const MISSION: &str = include_str!("../../examples/missions/square.waypoints");
const MISSION_120: &str = include_str!("../../examples/missions/canberra_wpl120.waypoints");
const PLAN: &str = include_str!("../../examples/missions/boulder.plan");
const SCENARIO: &str = include_str!("../../examples/scenarios/square.toml");

/// `text` with bytes replaced, inserted or deleted at the given positions.
fn mutate(text: &str, edits: &[(usize, u8, u8)]) -> String {
    let mut b = text.as_bytes().to_vec();
    for &(pos, op, byte) in edits {
        if b.is_empty() {
            b.push(byte);
            continue;
        }
        let i = pos % b.len();
        match op % 3 {
            0 => b[i] = byte,
            1 => b.insert(i, byte),
            _ => {
                b.remove(i);
            }
        }
    }
    String::from_utf8_lossy(&b).into_owned()
}

/// Bytes a parser is likely to trip on: digits, signs, separators, letters
/// of keywords.
fn interesting() -> impl Strategy<Value = u8> {
    prop_oneof![
        Just(b'0'),
        Just(b'9'),
        Just(b'-'),
        Just(b'.'),
        Just(b'e'),
        Just(b' '),
        Just(b'\t'),
        Just(b'\n'),
        Just(b'='),
        Just(b'['),
        Just(b']'),
        Just(b'"'),
        any::<u8>(),
    ]
}

fn check_mission(m: &Mission) {
    for it in std::iter::once(&m.home).chain(&m.items) {
        assert!(it.lat_deg.is_finite() && it.lat_deg.abs() <= 90.0);
        assert!(it.lon_deg.is_finite() && it.lon_deg.abs() <= 180.0);
        assert!(it.alt_m.is_finite());
        // NaN is "unset"; never an infinity.
        for p in [it.param1, it.param2, it.param3, it.param4] {
            assert!(!p.is_infinite());
        }
        assert!(it.autocontinue <= 1);
    }
    // A DO_JUMP targets an uploaded item.
    for it in &m.items {
        if it.command == 177 {
            assert!(it.param1 >= 0.0 && (it.param1 as usize) < m.items.len());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn mission_parser_never_panics_on_arbitrary_text(text in "\\PC{0,400}") {
        if let Ok(m) = Mission::parse(&text) {
            check_mission(&m);
        }
    }

    #[test]
    fn mission_parser_refuses_or_validates_mutations(
        edits in prop::collection::vec((any::<usize>(), any::<u8>(), interesting()), 1..6)
    ) {
        if let Ok(m) = Mission::parse(&mutate(MISSION, &edits)) {
            check_mission(&m);
        }
    }

    #[test]
    fn wpl_120_and_plan_parsers_refuse_or_validate_mutations(
        edits in prop::collection::vec((any::<usize>(), any::<u8>(), interesting()), 1..6)
    ) {
        for text in [MISSION_120, PLAN] {
            if let Ok(m) = Mission::parse(&mutate(text, &edits)) {
                check_mission(&m);
            }
        }
    }

    #[test]
    fn scenario_parser_never_panics_on_arbitrary_text(text in "\\PC{0,400}") {
        let _ = Scenario::from_toml_str(&text, Path::new("fuzz.toml"));
    }

    #[test]
    fn scenario_parser_refuses_or_validates_mutations(
        edits in prop::collection::vec((any::<usize>(), any::<u8>(), interesting()), 1..6)
    ) {
        // Relative to the real scenario's directory, so its mission resolves.
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/scenarios/fuzz.toml");
        if let Ok(s) = Scenario::from_toml_str(&mutate(SCENARIO, &edits), &path) {
            prop_assert!(s.duration.0 > 0 && s.duration.0 as f64 <= lockstep_harness::inputs::scenario::MAX_DURATION_S * 1e6);
            for c in &s.cadences {
                prop_assert!(c.period.0 > 0);
            }
            if let lockstep_harness::inputs::scenario::WindModel::Constant { ned_mps } = s.wind {
                prop_assert!(ned_mps.iter().all(|v| v.is_finite()));
            }
            let (n, e, y) = s.start;
            prop_assert!(n.is_finite() && e.is_finite() && y.is_finite());
        }
    }
}

#[test]
fn oversized_missions_are_refused_with_their_count() {
    let mut text = String::from("QGC WPL 110\n0\t1\t0\t16\t0\t0\t0\t0\t47.0\t8.0\t488\t1\n");
    for i in 1..=lockstep_abi::MAX_MISSION_ITEMS + 1 {
        text.push_str(&format!("{i}\t0\t3\t16\t0\t0\t0\t0\t47.0\t8.0\t10\t1\n"));
    }
    assert_eq!(
        Mission::parse(&text).unwrap_err().to_string(),
        "65536 items; at most 65535 can be uploaded"
    );
}

#[test]
fn mission_errors_name_the_file() {
    let path = std::env::temp_dir().join(format!("lockstep-bad-{}.waypoints", std::process::id()));
    std::fs::write(
        &path,
        "QGC WPL 110\n0 1 0 16 0 0 0 0 47 8 488 1\n1 0 3 16 0 0 0 0 47 8 10\n",
    )
    .unwrap();
    let e = Mission::load(&path).unwrap_err().to_string();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(
        e,
        format!(
            "mission {}: line 3: expected 12 fields, found 11",
            path.display()
        )
    );
}

/// A device as any input file is refused at once, naming the file and the
/// kind of file it is: every loader read `/dev/zero` until memory ran out.
#[test]
fn a_device_as_any_input_file_is_refused_not_read_until_memory_runs_out() {
    let zero = "/dev/zero";
    let scenario = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/scenarios/square.toml"
    );
    for (args, what) in [
        (vec!["fly", zero], "scenario"),
        (vec!["cosim", zero], "system"),
        (vec!["orchestrate", zero], "fleet"),
    ] {
        let r = crate::common::lockstep(&args);
        assert_eq!(r.code(), 2, "{args:?}: {r}");
        let expected = format!(
            "cannot read {what} {zero}: a character device, not a regular file: \
             a {what} file must be one"
        );
        assert!(r.stderr.contains(&expected), "{args:?}: {r}");
    }
    // A spec or a mission is a path the scenario resolves first.
    for (flag, key) in [("--spec", "vehicle.spec"), ("--mission", "vehicle.mission")] {
        let r = crate::common::lockstep(&["fly", scenario, flag, zero]);
        assert_eq!(r.code(), 2, "{r}");
        assert!(r.stderr.contains(&format!("key `{key}`: ")), "{r}");
        assert!(
            r.stderr
                .contains("/dev/zero is a character device, not a regular file"),
            "{r}"
        );
    }
    // A mission loaded by itself (as the C ABI's hosts do).
    assert_eq!(
        Mission::load(zero).unwrap_err().to_string(),
        "cannot read mission /dev/zero: a character device, not a regular file: \
         a mission file must be one"
    );
}

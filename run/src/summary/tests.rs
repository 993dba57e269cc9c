use std::collections::BTreeMap;

use super::*;

fn cosim() -> CosimReport {
    CosimReport {
        system: "radio_swarm.toml".into(),
        description: None,
        mode: "parallel".into(),
        threads: 2,
        step_us: 4000,
        duration_us: 1_000_000,
        reached_us: 1_000_000,
        wall_s: 0.25,
        real_time_factor: 4.0,
        record: "cosim.csv".into(),
        record_digest: Some("sha256:00".into()),
        error: None,
        error_class: None,
        exit_status: 0,
        participants: BTreeMap::new(),
        transfers: BTreeMap::new(),
        output_errors: Vec::new(),
    }
}

#[test]
fn a_summary_is_its_report_with_its_kind_first() {
    let r = cosim();
    let text = r.to_json();
    let untagged = serde_json::to_string_pretty(&r).unwrap();
    assert_eq!(
        text,
        untagged.replacen("{\n", "{\n  \"kind\": \"cosim\",\n", 1)
    );
    let back = RunSummary::from_json(&text).unwrap();
    assert_eq!(back.kind(), "cosim");
    assert_eq!(back, RunSummary::Cosim(r));
    assert_eq!(back.to_json_line(), serde_json::to_string(&back).unwrap());
}

#[test]
fn every_kind_named_is_one_the_reader_knows() {
    // A kind in KINDS reaches its report's reader (which then misses the
    // report's fields); one not in it is refused before.
    for k in KINDS {
        let e = RunSummary::from_json(&format!("{{\"kind\": \"{k}\"}}")).unwrap_err();
        assert!(
            e.starts_with("not a run's summary: missing field"),
            "{k}: {e}"
        );
    }
    assert_eq!(
        RunSummary::from_json(r#"{"kind": "study"}"#).unwrap_err(),
        "its kind \"study\" is none this lockstep knows (flight, fleet, batch, cosim, orchestrate)"
    );
}

#[test]
fn what_is_no_summary_is_refused_saying_why() {
    assert!(
        RunSummary::from_json("{")
            .unwrap_err()
            .starts_with("not JSON: EOF while parsing"),
    );
    assert_eq!(
        RunSummary::from_json(r#"{"scenario": "a.toml"}"#).unwrap_err(),
        "no `kind` in it: not a summary, or one written by a lockstep before summaries said their \
         kind (run it again); a summary's kind is one of flight, fleet, batch, cosim, orchestrate"
    );
    assert!(
        RunSummary::from_json("[1]")
            .unwrap_err()
            .starts_with("not a run's summary: "),
    );
}

#[test]
fn an_out_directory_writes_and_reads_back_its_summary() {
    let d = tempfile::tempdir().unwrap();
    let out = OutDir::new(d.path());
    assert_eq!(out.read_summary(), Ok(None));
    let s = RunSummary::from(cosim());
    out.write_summary(&s).unwrap();
    assert_eq!(
        std::fs::read_to_string(d.path().join("summary.json")).unwrap(),
        format!("{}\n", s.to_json())
    );
    assert_eq!(out.read_summary(), Ok(Some(s.clone())));
    std::fs::write(out.summary(), "{}").unwrap();
    assert!(
        out.read_summary()
            .unwrap_err()
            .starts_with(&format!("{}: no `kind` in it", out.summary().display()))
    );
    let gone = OutDir::new(d.path().join("gone"));
    let e = gone.write_summary(&s).unwrap_err();
    assert!(
        e.starts_with(&format!(
            "cannot write the summary {}: ",
            gone.summary().display()
        )),
        "{e}"
    );
}

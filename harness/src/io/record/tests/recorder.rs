//! The recorder: end statuses, unfinished files, its own refusals, write
//! errors, determinism.

use std::io;

use super::*;

#[test]
fn stopped_and_interrupted_runs_replay_to_their_last_record_and_say_so() {
    let f = fixture();
    let path = tmp("status");
    let t = all_times();
    for (status, shown) in [
        (
            EndStatus::Stopped {
                time_us: 4500,
                reason: "the autopilot failed".into(),
            },
            "stopped by an error at t = 0.004500 s: the autopilot failed",
        ),
        (
            EndStatus::Interrupted {
                time_us: 4000,
                signal: 2,
            },
            "interrupted by SIGINT (interrupted) at t = 0.004000 s",
        ),
        (
            EndStatus::Interrupted {
                time_us: 4000,
                signal: 15,
            },
            "interrupted by SIGTERM (terminated) at t = 0.004000 s",
        ),
    ] {
        synthetic(&f, &path, &t[..5], Some(status.clone()), MAX_BLOCK_BYTES);
        let r = Replay::open(&path, None).unwrap();
        assert_eq!(r.end_status(), &status);
        assert_eq!(r.end_status().to_string(), shown);
        assert!(!r.end_status().is_completed());
        let mut visits = Vec::new();
        r.run(|t, _| visits.push(t.0)).unwrap();
        assert_eq!(visits, t[..5]);
    }
    // A long reason is cut to the limit at a character boundary.
    let long = "é".repeat(MAX_REASON_BYTES);
    synthetic(
        &f,
        &path,
        &t[..2],
        Some(EndStatus::Stopped {
            time_us: 1000,
            reason: long,
        }),
        MAX_BLOCK_BYTES,
    );
    match Replay::open(&path, None).unwrap().end_status() {
        EndStatus::Stopped { reason, .. } => {
            assert_eq!(reason.len(), MAX_REASON_BYTES);
            assert!(reason.chars().all(|c| c == 'é'));
        }
        other => panic!("{other:?}"),
    }
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn a_recorder_dropped_without_finish_leaves_an_unfinished_file() {
    let f = fixture();
    let path = tmp("dropped");
    // 4 records per block; the 7 records are all written on drop.
    let bytes = synthetic(&f, &path, &all_times()[..7], None, 4 * RECORD);
    let e = refusal(&path, &bytes);
    assert_eq!(
        e.to_string(),
        format!(
            "recording {}: unfinished: the file ends after record 6 at t = 0.006000 s with no end marker (block 3 is missing or cut); the run that wrote it was killed or the file was cut",
            path.display()
        )
    );
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn the_recorder_refuses_what_the_reader_would_refuse() {
    let f = fixture();
    let path = tmp("writer-refuses");
    let p = path.display().to_string();
    let sink = || Box::new(io::sink());
    let mut r = recorder(&f, sink(), &path, MAX_BLOCK_BYTES);
    record(&mut r, 0, 0).unwrap();
    record(&mut r, 1, 1000).unwrap();
    let e = record(&mut r, 2, 1000).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "recording {p}: record 2 (block 1) is at t = 0.001000 s, not after the previous record at t = 0.001000 s"
        )
    );
    let e = record(&mut r, 2, 2500).unwrap_err();
    assert!(
        matches!(e, RecordError::GapTooLarge { index: 2, .. }),
        "{e}"
    );
    // Completed, but the last record is not at the planned end.
    let e = r.finish(EndStatus::Completed).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "recording {p}: block 1 at byte {} (from record 2) is malformed: the run is marked completed but its last record is at t = 0.001000 s, not the planned end t = 0.009000 s",
            preamble_and_header(&f, |_| {}).len()
        )
    );
    let mut r = recorder(&f, sink(), &path, MAX_BLOCK_BYTES);
    for (k, t) in all_times().into_iter().enumerate() {
        record(&mut r, k, t).unwrap();
    }
    let e = record(&mut r, 10, END_US + 1).unwrap_err();
    assert!(matches!(e, RecordError::BeyondEnd { index: 10, .. }), "{e}");
    // Interrupted before its last record is a contradiction.
    let e = r
        .finish(EndStatus::Interrupted {
            time_us: 5000,
            signal: 2,
        })
        .unwrap_err();
    assert!(
        e.to_string().ends_with(
            "outside t = 0.009000 s ..= t = 0.009000 s (its last record .. its planned end)"
        ),
        "{e}"
    );
    // A header whose intervals would take unbounded work.
    let e = Recorder::with_sink(
        sink(),
        p.clone(),
        &f.spec,
        &f.plant,
        Method::Rk4,
        &f.options,
        7,
        &f.initial,
        TimeBounds {
            end_us: END_US,
            max_interval_us: 200_000_000,
        },
        MAX_BLOCK_BYTES,
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "recording {p}: unreadable header: an interval of 200000000 us in steps of 1000 us takes 200000 steps, more than 100000"
        )
    );
}

/// Accepts `left` bytes, then fails as a full disk does.
struct FullDisk {
    left: usize,
}

impl Write for FullDisk {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.left == 0 {
            return Err(io::Error::from_raw_os_error(28));
        }
        let n = buf.len().min(self.left);
        self.left -= n;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_full_disk_is_reported_with_the_path_and_the_simulated_time() {
    let f = fixture();
    let path = tmp("full");
    let header = preamble_and_header(&f, |_| {}).len();
    let mut r = recorder(&f, Box::new(FullDisk { left: header }), &path, 3 * RECORD);
    record(&mut r, 0, 0).unwrap();
    record(&mut r, 1, 1000).unwrap();
    // The third record fills the block: writing it fails.
    let e = record(&mut r, 2, 2000).unwrap_err();
    let os = io::Error::from_raw_os_error(28).to_string();
    assert_eq!(
        e.to_string(),
        format!(
            "recording {}: writing failed at simulated t = 0.002000 s: {os}",
            path.display()
        )
    );
    assert!(matches!(e, RecordError::Write { time_us: 2000, .. }));
    // Nothing more is written after a failed write.
    let e = record(&mut r, 3, 3000).unwrap_err();
    assert!(
        e.to_string()
            .ends_with("an earlier write to this recording failed"),
        "{e}"
    );
    // And on finish.
    let mut r = recorder(
        &f,
        Box::new(FullDisk { left: header }),
        &path,
        MAX_BLOCK_BYTES,
    );
    for (k, t) in all_times().into_iter().enumerate() {
        record(&mut r, k, t).unwrap();
    }
    let e = r.finish(EndStatus::Completed).unwrap_err();
    assert!(
        matches!(
            e,
            RecordError::Write {
                time_us: END_US,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn the_same_records_make_the_same_bytes() {
    let f = fixture();
    let (a, b) = (tmp("same-a"), tmp("same-b"));
    let x = synthetic(&f, &a, &all_times(), Some(EndStatus::Completed), 4 * RECORD);
    let y = synthetic(&f, &b, &all_times(), Some(EndStatus::Completed), 4 * RECORD);
    assert_eq!(x, y);
    std::fs::remove_file(&a).unwrap();
    std::fs::remove_file(&b).unwrap();
}

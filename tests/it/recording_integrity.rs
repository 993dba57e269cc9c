//! Recordings of real flights never lie: any flipped bit or cut is refused,
//! naming where; a run killed before it finished leaves a recording that
//! says so; and the compressed file is much smaller than its records.

use std::path::{Path, PathBuf};

use lockstep_harness::engine::Engine;
use lockstep_harness::inputs::scenario::Scenario;
use lockstep_harness::io::record::{CrcPart, EndStatus, RecordError, Replay};

/// The example flight, cut to `duration_s`, on `spec`.
fn scenario(duration_s: &str, spec: &str) -> Scenario {
    crate::common::example_scenario(&[
        ("duration_s = 90.0", &format!("duration_s = {duration_s}")),
        ("spec = \"iris\"", &format!("spec = \"{spec}\"")),
    ])
}

fn tmp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!(
        "lockstep-integrity-{name}-{}.rec",
        std::process::id()
    ))
}

/// Flies `s` recording to `path`; returns the boundary times.
fn fly(s: &Scenario, path: &Path) -> Vec<u64> {
    let mut e = Engine::new(s, Path::new(crate::common::BUNDLED), None).unwrap();
    e.record_to(path).unwrap();
    let mut times = Vec::new();
    while let Some(t) = e.step().unwrap() {
        times.push(t.0);
    }
    e.run().unwrap();
    times
}

/// A block as the format table describes it.
#[derive(Debug, Clone, Copy)]
struct Block {
    offset: usize,
    len: usize,
    first_record: u64,
    records: u64,
}

/// The blocks of a v2 recording, read from their frames.
fn blocks(b: &[u8]) -> Vec<Block> {
    let word = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap());
    let mut out = Vec::new();
    let mut at = 20;
    while at < b.len() {
        let stored = word(at + 4) as usize;
        out.push(Block {
            offset: at,
            len: 32 + stored,
            first_record: u64::from_le_bytes(b[at + 12..at + 20].try_into().unwrap()),
            records: word(at + 20).into(),
        });
        at += 32 + stored;
    }
    assert_eq!(at, b.len(), "the frames tile the file");
    out
}

/// Open and run; the error if either refuses.
fn replay(path: &Path, bytes: &[u8]) -> Result<u64, RecordError> {
    std::fs::write(path, bytes).unwrap();
    let mut n = 0;
    Replay::open(path, None)?.run(|_, _| n += 1)?;
    Ok(n)
}

/// A fixed-seed xorshift64 (the positions are the same on every run).
struct XorShift(u64);

impl XorShift {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

#[test]
fn every_flipped_bit_of_a_real_recording_is_refused_naming_its_block() {
    let path = tmp("flips");
    let times = fly(&scenario("4.0", "iris"), &path);
    let good = std::fs::read(&path).unwrap();
    assert_eq!(replay(&path, &good).unwrap(), times.len() as u64);
    let layout = blocks(&good);
    assert!(layout.len() >= 5, "header, 3+ data blocks, end: {layout:?}");
    let p = path.display().to_string();
    let seed = 0x9E37_79B9_7F4A_7C15;
    let mut rng = XorShift(seed);
    // 240 bits anywhere, then one in each byte of the preamble and of
    // every block's frame (where few random bits land).
    let mut bits: Vec<u64> = (0..240).map(|_| rng.below(good.len() as u64 * 8)).collect();
    let framing = (0..20).chain(layout.iter().flat_map(|b| b.offset..b.offset + 32));
    bits.extend(framing.map(|byte| byte as u64 * 8 + rng.below(8)));
    let flips = bits.len() as u32;
    let mut refused_by = std::collections::BTreeMap::<&str, u32>::new();
    for bit in bits {
        let (byte, mask) = ((bit / 8) as usize, 1u8 << (bit % 8));
        let mut bad = good.clone();
        bad[byte] ^= mask;
        let why = format!("bit {bit} (byte {byte}); seed {seed:#x}");
        let e = replay(&path, &bad).expect_err(&why);
        // Which block the byte is in, and which checksum covers it: the
        // frame's (kind, lengths, counts and the frame CRC itself) or the
        // whole block's (its CRC field and the payload).
        let block = layout
            .iter()
            .position(|b| byte >= b.offset && byte < b.offset + b.len);
        let part = |b: &Block| {
            if byte - b.offset < 28 {
                CrcPart::Frame
            } else {
                CrcPart::Payload
            }
        };
        let kind = match (byte, block) {
            (0..16, _) => {
                assert!(matches!(e, RecordError::NotARecording { .. }), "{why}: {e}");
                "magic"
            }
            (16..20, _) => {
                assert!(
                    matches!(e, RecordError::SchemaMismatch { expected: 2, .. }),
                    "{why}: {e}"
                );
                "version"
            }
            (_, Some(0)) => {
                assert_eq!(
                    e.to_string(),
                    format!(
                        "recording {p}: the header block fails its checksum ({}); the file is damaged",
                        part(&layout[0])
                    ),
                    "{why}"
                );
                "header checksum"
            }
            (_, Some(k)) => {
                let b = &layout[k];
                assert_eq!(
                    e.to_string(),
                    format!(
                        "recording {p}: block {k} at byte {} (from record {}) fails its checksum ({}); the file is damaged",
                        b.offset,
                        b.first_record,
                        part(b)
                    ),
                    "{why}"
                );
                "block checksum"
            }
            (_, None) => unreachable!("the blocks tile the file"),
        };
        *refused_by.entry(kind).or_default() += 1;
    }
    assert_eq!(refused_by.values().sum::<u32>(), flips);
    assert!(refused_by["block checksum"] > 200, "{refused_by:?}");
    assert!(refused_by["header checksum"] >= 32, "{refused_by:?}");
    assert_eq!(
        (refused_by["magic"], refused_by["version"]),
        (16, 4),
        "{refused_by:?}"
    );
    println!(
        "{flips} flips of {} bytes refused: {refused_by:?}",
        good.len()
    );
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn a_real_recording_cut_anywhere_is_refused_as_unfinished() {
    let path = tmp("cuts");
    let times = fly(&scenario("4.0", "iris"), &path);
    let good = std::fs::read(&path).unwrap();
    let layout = blocks(&good);
    let mut cuts: Vec<usize> = vec![0, 1, 15, 16, 19, 20, 21, 51, 52, 53];
    for b in &layout {
        cuts.extend([
            b.offset,
            b.offset + 1,
            b.offset + 31,
            b.offset + 32,
            b.offset + 33,
        ]);
        cuts.extend([b.offset + b.len - 1, b.offset + b.len / 2]);
    }
    let mut rng = XorShift(0x00C0_FFEE);
    cuts.extend((0..120).map(|_| rng.below(good.len() as u64) as usize));
    cuts.retain(|c| *c < good.len());
    for cut in cuts {
        let e = replay(&path, &good[..cut]).expect_err(&format!("cut at {cut}"));
        // The block the cut falls in (or before), and the records of the
        // complete blocks before it.
        let k = layout
            .iter()
            .position(|b| cut < b.offset + b.len)
            .unwrap_or(layout.len());
        let records: u64 = layout[1..k.max(1)].iter().map(|b| b.records).sum();
        let last_time_us = match records {
            0 => 0,
            n => times[n as usize - 1],
        };
        assert!(
            matches!(
                e,
                RecordError::Unfinished { block, records: r, last_time_us: t, .. }
                    if block == k as u64 && r == records && t == last_time_us
            ),
            "cut at {cut}: expected block {k}, {records} records, t={last_time_us}: {e:?}"
        );
    }
    // Without the end block, the message says how far the run got.
    let end = layout.last().unwrap();
    let e = replay(&path, &good[..end.offset]).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "recording {}: unfinished: the file ends after record {} at t = 4.000000 s with no end marker (block {} is missing or cut); the run that wrote it was killed or the file was cut",
            path.display(),
            times.len() - 1,
            layout.len() - 1
        )
    );
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn a_run_that_never_finishes_leaves_an_unfinished_recording() {
    let s = scenario("4.0", "iris");
    let path = tmp("killed");
    // Killed (no destructor runs): only the full blocks reach the file.
    let mut e = Engine::new(&s, Path::new(crate::common::BUNDLED), None).unwrap();
    e.record_to(&path).unwrap();
    let times: Vec<u64> = (0..2000).map(|_| e.step().unwrap().unwrap().0).collect();
    std::mem::forget(e);
    let bytes = std::fs::read(&path).unwrap();
    let full: u64 = blocks(&bytes)[1..].iter().map(|b| b.records).sum();
    assert!(full > 0 && full < 2000, "{full}");
    let err = replay(&path, &bytes).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "recording {}: unfinished: the file ends after record {} at {} with no end marker (block 2 is missing or cut); the run that wrote it was killed or the file was cut",
            path.display(),
            full - 1,
            lockstep_abi::at(times[full as usize - 1])
        )
    );
    // Dropped mid-run (a panic unwinding, an early return): every record
    // reaches the file, still without an end marker.
    let mut e = Engine::new(&s, Path::new(crate::common::BUNDLED), None).unwrap();
    e.record_to(&path).unwrap();
    for _ in 0..2000 {
        e.step().unwrap();
    }
    drop(e);
    let err = replay(&path, &std::fs::read(&path).unwrap()).unwrap_err();
    assert!(
        matches!(
            err,
            RecordError::Unfinished { records: 2000, last_time_us, .. } if last_time_us == times[1999]
        ),
        "{err:?}"
    );
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn a_recording_is_several_times_smaller_than_its_records() {
    // A record is 104 + 17 bytes per rotor + 1 per battery: iris has 4
    // rotors and 1 battery, octa 8 and 2.
    for (spec, record_bytes) in [("iris", 104 + 17 * 4 + 1), ("octa", 104 + 17 * 8 + 2)] {
        let path = tmp(&format!("size-{spec}"));
        let times = fly(&scenario("20.0", spec), &path);
        let file = std::fs::metadata(&path).unwrap().len();
        let r = Replay::open(&path, None).unwrap();
        assert_eq!(r.end_status(), &EndStatus::Completed);
        assert_eq!(r.record_count(), times.len() as u64);
        let raw = times.len() as u64 * record_bytes;
        let ratio = raw as f64 / file as f64;
        println!(
            "{spec}, 20 s: {} records, {raw} bytes raw, {file} bytes recorded: {ratio:.2}x",
            times.len()
        );
        assert!(ratio > 5.0, "{spec}: {ratio:.2}x");
        std::fs::remove_file(&path).unwrap();
    }
}

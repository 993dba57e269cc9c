//! Every refusal of a damaged or lying file, with its exact message.

use super::*;

#[test]
fn a_recording_in_many_blocks_replays_every_record() {
    let f = fixture();
    let path = tmp("many");
    // 3 records per block: 4 data blocks.
    let bytes = synthetic(
        &f,
        &path,
        &all_times(),
        Some(EndStatus::Completed),
        3 * RECORD,
    );
    let r = Replay::open(&path, None).unwrap();
    assert_eq!(r.end_status(), &EndStatus::Completed);
    assert_eq!(
        (r.record_count(), r.last_time()),
        (10, Some(Micros(END_US)))
    );
    let mut times = Vec::new();
    r.run(|t, _| times.push(t.0)).unwrap();
    assert_eq!(times, all_times());
    // The crafted file of the same records in two blocks replays the same.
    let crafted = Crafted::new(&f).bytes();
    assert_ne!(crafted, bytes);
    assert_eq!(
        replay(&path, &crafted).unwrap(),
        replay(&path, &bytes).unwrap()
    );
    std::fs::remove_file(&path).unwrap();
}

/// Long by design: one damaged recording per case, each with its exact
/// message in line, so a failure points at the case.
#[test]
fn every_refusal_names_the_file_the_block_the_record_and_the_reason() {
    let f = fixture();
    let path = tmp("refusals");
    let p = path.display().to_string();
    let c = Crafted::new(&f);
    let ok = c.bytes();
    let (d1, d2, e) = c.offsets();
    assert!(replay(&path, &ok).is_ok());
    let with = |edit: &dyn Fn(&mut Vec<u8>)| {
        let mut b = ok.clone();
        edit(&mut b);
        b
    };
    let flip = |at: u64| with(&|b: &mut Vec<u8>| b[at as usize] ^= 0x10);
    let t = all_times();
    let over = MAX_BLOCK_BYTES as u32 + 1;
    // 4 records' zstd frame in a block that declares 5 (865 bytes).
    let four = zstd::bulk::compress(&records(&f, 0, &t[..4]), ZSTD_LEVEL).unwrap();
    let short = Frame {
        kind: Kind::Data,
        stored_len: four.len() as u32,
        raw_len: 5 * RECORD as u32,
        first_record: 0,
        record_count: 5,
    }
    .encode(&four);
    let cases: Vec<(&str, Vec<u8>, String)> = vec![
        (
            "bad magic",
            flip(3),
            format!("{p} is not a lockstep recording (bad magic)"),
        ),
        (
            "other version",
            with(&|b| b[16..20].copy_from_slice(&1u32.to_le_bytes())),
            format!("recording {p} has format version 1; this build reads version 2"),
        ),
        (
            "header frame checksum",
            flip(20 + 5),
            format!(
                "recording {p}: the header block fails its checksum (frame); the file is damaged"
            ),
        ),
        (
            "header payload checksum",
            flip(20 + 32 + 40),
            format!(
                "recording {p}: the header block fails its checksum (payload); the file is damaged"
            ),
        ),
        (
            "data frame checksum",
            flip(d1 + 12),
            format!(
                "recording {p}: block 1 at byte {d1} (from record 0) fails its checksum (frame); the file is damaged"
            ),
        ),
        (
            "data payload checksum",
            flip(d2 + 40),
            format!(
                "recording {p}: block 2 at byte {d2} (from record 5) fails its checksum (payload); the file is damaged"
            ),
        ),
        (
            "end payload checksum",
            flip(e + 33),
            format!(
                "recording {p}: block 3 at byte {e} (from record 10) fails its checksum (payload); the file is damaged"
            ),
        ),
        (
            "stored length over the bound (4 GiB, nothing follows)",
            [
                &c.head[..],
                &Frame {
                    kind: Kind::Data,
                    stored_len: u32::MAX,
                    raw_len: 5 * RECORD as u32,
                    first_record: 0,
                    record_count: 5,
                }
                .encode(&[]),
            ]
            .concat(),
            format!(
                "recording {p}: block 1 at byte {d1} (from record 0) declares 4294967295 bytes, above the limit of {}; refused unread",
                max_compressed()
            ),
        ),
        (
            "uncompressed length over the bound",
            [
                &c.head[..],
                &Frame {
                    kind: Kind::Data,
                    stored_len: 10,
                    raw_len: over,
                    first_record: 0,
                    record_count: 5,
                }
                .encode(&[0; 10]),
            ]
            .concat(),
            format!(
                "recording {p}: block 1 at byte {d1} (from record 0) declares 262145 bytes, above the limit of 262144; refused unread"
            ),
        ),
        (
            "header length over the bound",
            [
                &ok[..20],
                &Frame {
                    kind: Kind::Header,
                    stored_len: MAX_HEADER_BYTES as u32 + 1,
                    raw_len: MAX_HEADER_BYTES as u32 + 1,
                    first_record: 0,
                    record_count: 0,
                }
                .encode(&[]),
            ]
            .concat(),
            format!(
                "recording {p}: block 0 at byte 20 (from record 0) declares 1048577 bytes, above the limit of 1048576; refused unread"
            ),
        ),
        (
            "length mismatch after decompression",
            [&c.head[..], &short].concat(),
            format!(
                "recording {p}: block 1 at byte {d1} (from record 0) does not decompress: 692 bytes, the block declares 865"
            ),
        ),
        (
            "block starts at the wrong record",
            [&c.head[..], &data(&f, 3, &t[..5]), &c.d2, &c.end].concat(),
            format!(
                "recording {p}: block 1 at byte {d1}: record count mismatch at record 0: the block starts at record 3; the blocks before it hold 0 records"
            ),
        ),
        (
            "record count against the block length",
            [&c.head[..], &data_block(0, 4, &records(&f, 0, &t[..5]))].concat(),
            format!(
                "recording {p}: block 1 at byte {d1}: record count mismatch at record 0: the block declares 4 records of 173 bytes but 865 bytes"
            ),
        ),
        (
            "end block counts other records",
            [
                &c.head[..],
                &c.d1,
                &c.d2,
                &end_block(10, 11, END_US, &EndStatus::Completed),
            ]
            .concat(),
            format!(
                "recording {p}: block 3 at byte {e}: record count mismatch at record 10: the end block counts 11 records; the file holds 10"
            ),
        ),
        (
            "time not increasing",
            [&c.head[..], &data(&f, 0, &[0, 1000, 2000, 2000, 3000])].concat(),
            format!(
                "recording {p}: record 3 (block 1) is at t = 0.002000 s, not after the previous record at t = 0.002000 s"
            ),
        ),
        (
            "gap above the largest interval",
            [&c.head[..], &c.d1, &data(&f, 5, &[5000, 6000, 8000])].concat(),
            format!(
                "recording {p}: record 7 (block 2) at t = 0.008000 s comes 2000 us after the previous record; the run's largest interval is 1000 us"
            ),
        ),
        (
            "time beyond the planned end",
            [
                &c.head[..],
                &c.d1,
                &data(&f, 5, &[5000, 6000, 7000, 8000, 9000, 10_000]),
            ]
            .concat(),
            format!(
                "recording {p}: record 10 (block 2) at t = 0.010000 s is after the run's planned end at t = 0.009000 s"
            ),
        ),
        (
            "trailing bytes",
            [&ok[..], b"\n\n\n"].concat(),
            format!(
                "recording {p}: 3 bytes follow the end block (from byte {}); the file was appended to or damaged",
                ok.len()
            ),
        ),
        (
            "no end block",
            [&c.head[..], &c.d1, &c.d2].concat(),
            format!(
                "recording {p}: unfinished: the file ends after record 9 at t = 0.009000 s with no end marker (block 3 is missing or cut); the run that wrote it was killed or the file was cut"
            ),
        ),
        (
            "cut inside a data block",
            ok[..d2 as usize + 50].to_vec(),
            format!(
                "recording {p}: unfinished: the file ends after record 4 at t = 0.004000 s with no end marker (block 2 is missing or cut); the run that wrote it was killed or the file was cut"
            ),
        ),
        (
            "cut inside the header",
            ok[..40].to_vec(),
            format!(
                "recording {p}: unfinished: the file ends before its first record with no end marker (block 0 is missing or cut); the run that wrote it was killed or the file was cut"
            ),
        ),
        (
            "completed before the planned end",
            [
                &c.head[..],
                &c.d1,
                &end_block(5, 5, 4000, &EndStatus::Completed),
            ]
            .concat(),
            format!(
                "recording {p}: block 2 at byte {d2} (from record 5) is malformed: the run is marked completed but its last record is at t = 0.004000 s, not the planned end t = 0.009000 s"
            ),
        ),
        (
            "end block with another last time",
            [
                &c.head[..],
                &c.d1,
                &c.d2,
                &end_block(10, 10, 8000, &EndStatus::Completed),
            ]
            .concat(),
            format!(
                "recording {p}: block 3 at byte {e} (from record 10) is malformed: the end block puts the last record at t = 0.008000 s; it is at t = 0.009000 s"
            ),
        ),
        (
            "a second header block",
            [&c.head[..], &c.d1, &c.head[20..], &c.d2, &c.end].concat(),
            format!(
                "recording {p}: block 2 at byte {d2} (from record 5) is malformed: a second header block"
            ),
        ),
        (
            "unknown block kind",
            with(&|b| {
                b[d2 as usize..d2 as usize + 4].copy_from_slice(b"JUNK");
                reseal(&mut b[d2 as usize..]);
            }),
            format!(
                "recording {p}: block 2 at byte {d2} (from record 5) is malformed: unknown block kind `JUNK`"
            ),
        ),
        (
            "unbounded replay work",
            [
                &preamble_and_header(&f, |h| h.max_interval_us = 200_000_000)[..],
                &c.d1,
                &c.d2,
                &c.end,
            ]
            .concat(),
            format!(
                "recording {p}: unreadable header: an interval of 200000000 us in steps of 1000 us takes 200000 steps, more than 100000"
            ),
        ),
        (
            "spec hash",
            [
                &preamble_and_header(&f, |h| h.spec_sha256 = "00".repeat(32))[..],
                &c.d1,
                &c.d2,
                &c.end,
            ]
            .concat(),
            format!(
                "recording {p}: the embedded spec does not match its own hash (the file is damaged)"
            ),
        ),
    ];
    for (name, bytes, expected) in cases {
        let e = refusal(&path, &bytes);
        assert_eq!(e.to_string(), expected, "{name}: {e:?}");
    }
    // Decompression failure: zstd's own reason follows.
    let garbage = Frame {
        kind: Kind::Data,
        stored_len: 8,
        raw_len: 5 * RECORD as u32,
        first_record: 0,
        record_count: 5,
    }
    .encode(b"not zstd");
    let e = refusal(&path, &[&c.head[..], &garbage].concat());
    assert!(
        matches!(
            e,
            RecordError::Decompress {
                block: 1,
                index: 0,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(
        e.to_string().starts_with(&format!(
            "recording {p}: block 1 at byte {d1} (from record 0) does not decompress: "
        )),
        "{e}"
    );
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn the_variants_carry_the_block_and_record() {
    let f = fixture();
    let path = tmp("variants");
    let c = Crafted::new(&f);
    let (_, d2, _) = c.offsets();
    let mut b = c.bytes();
    b[d2 as usize + 40] ^= 1;
    let e = refusal(&path, &b);
    assert!(
        matches!(
            e,
            RecordError::BlockCrc { block: 2, offset, index: 5, part: CrcPart::Payload, .. } if offset == d2
        ),
        "{e:?}"
    );
    let e = refusal(&path, &[&c.head[..], &c.d1].concat());
    assert!(
        matches!(
            e,
            RecordError::Unfinished {
                block: 2,
                records: 5,
                last_time_us: 4000,
                ..
            }
        ),
        "{e:?}"
    );
    std::fs::remove_file(&path).unwrap();
}

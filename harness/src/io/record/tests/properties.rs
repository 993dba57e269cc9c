//! Property tests: no input makes opening or replaying a recording panic,
//! hang or allocate without bound; any change to a valid file is refused.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::test_runner::RngSeed;

use super::*;

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 64,
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(0x5EED_2EC0),
        max_shrink_iters: 256,
        ..ProptestConfig::default()
    }
}

/// A valid recording in 3-record blocks (4 data blocks), made once.
fn valid() -> &'static [u8] {
    static BYTES: OnceLock<Vec<u8>> = OnceLock::new();
    BYTES.get_or_init(|| {
        let path = tmp("valid");
        let b = synthetic(
            &fixture(),
            &path,
            &all_times(),
            Some(EndStatus::Completed),
            3 * RECORD,
        );
        std::fs::remove_file(&path).unwrap();
        b
    })
}

#[derive(Debug, Clone)]
enum Mutation {
    Flip { at: usize, bit: u8 },
    Set { at: usize, byte: u8 },
    Insert { at: usize, bytes: Vec<u8> },
    Remove { at: usize, len: usize },
    Truncate { at: usize },
    Append { bytes: Vec<u8> },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let at = any::<usize>();
    prop_oneof![
        (at, 0u8..8).prop_map(|(at, bit)| Mutation::Flip { at, bit }),
        (at, any::<u8>()).prop_map(|(at, byte)| Mutation::Set { at, byte }),
        (at, prop::collection::vec(any::<u8>(), 1..64))
            .prop_map(|(at, bytes)| Mutation::Insert { at, bytes }),
        (at, 1usize..400).prop_map(|(at, len)| Mutation::Remove { at, len }),
        at.prop_map(|at| Mutation::Truncate { at }),
        prop::collection::vec(any::<u8>(), 1..64).prop_map(|bytes| Mutation::Append { bytes }),
    ]
}

fn apply(b: &mut Vec<u8>, m: &Mutation) {
    let pos = |at: usize, n: usize| if n == 0 { 0 } else { at % n };
    match m {
        Mutation::Flip { at, bit } if !b.is_empty() => {
            let i = pos(*at, b.len());
            b[i] ^= 1u8 << bit;
        }
        Mutation::Set { at, byte } if !b.is_empty() => {
            let i = pos(*at, b.len());
            b[i] = *byte;
        }
        Mutation::Insert { at, bytes } => {
            let i = pos(*at, b.len() + 1);
            b.splice(i..i, bytes.iter().copied());
        }
        Mutation::Remove { at, len } if !b.is_empty() => {
            let i = pos(*at, b.len());
            b.drain(i..(i + len).min(b.len()));
        }
        Mutation::Truncate { at } => b.truncate(pos(*at, b.len())),
        Mutation::Append { bytes } => b.extend_from_slice(bytes),
        _ => {}
    }
}

/// Opens and runs `bytes`, asserting it ends, and soon.
fn bounded(path: &Path, bytes: &[u8]) -> Result<(EndStatus, u64, Vec<f64>), RecordError> {
    let start = Instant::now();
    let r = replay(path, bytes);
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?} for {} bytes",
        start.elapsed(),
        bytes.len()
    );
    r
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn arbitrary_bytes_are_refused(
        preamble in any::<bool>(),
        bytes in prop::collection::vec(any::<u8>(), 0..4096),
    ) {
        let path = tmp("arbitrary");
        let mut b = Vec::new();
        if preamble {
            b.extend_from_slice(&RECORDING_MAGIC);
            b.extend_from_slice(&RECORDING_VERSION.to_le_bytes());
        }
        b.extend_from_slice(&bytes);
        prop_assert!(bounded(&path, &b).is_err());
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn any_change_to_a_recording_is_refused(
        mutations in prop::collection::vec(mutation(), 1..4),
    ) {
        let path = tmp("mutated");
        let mut b = valid().to_vec();
        for m in &mutations {
            apply(&mut b, m);
        }
        let result = bounded(&path, &b);
        if b == valid() {
            prop_assert!(result.is_ok());
        } else {
            prop_assert!(result.is_err(), "accepted after {:?}", mutations);
        }
        std::fs::remove_file(&path).unwrap();
    }

    /// Blocks with valid checksums and any content: record values (times
    /// kept in order or not), zstd payloads and end payloads. Replay may
    /// accept or refuse, but ends without a panic.
    #[test]
    fn resealed_garbage_never_panics_or_hangs(
        values in prop::collection::vec(any::<u64>(), 1..60),
        ordered in any::<bool>(),
        zstd_garbage in prop::collection::vec(any::<u8>(), 0..300),
        end_garbage in prop::collection::vec(any::<u8>(), 0..80),
        which in 0u8..3,
    ) {
        let f = fixture();
        let path = tmp("resealed");
        let head = preamble_and_header(&f, |_| {});
        let body = match which {
            // Records of arbitrary bits: times in order or not.
            0 => {
                let mut raw: Vec<u8> = values
                    .iter()
                    .flat_map(|v| v.to_le_bytes())
                    .cycle()
                    .take(RECORD * 10)
                    .collect();
                if ordered {
                    for (k, rec) in raw.chunks_exact_mut(RECORD).enumerate() {
                        rec[..8].copy_from_slice(&(k as u64 * STEP_US).to_le_bytes());
                    }
                }
                [data_block(0, 10, &raw), end_block(10, 10, END_US, &EndStatus::Completed)]
                    .concat()
            }
            // A payload that is not zstd, sealed as a data block.
            1 => Frame {
                kind: Kind::Data,
                stored_len: zstd_garbage.len() as u32,
                raw_len: RECORD as u32,
                first_record: 0,
                record_count: 1,
            }
            .encode(&zstd_garbage),
            // Records, then an end block of arbitrary content.
            _ => [
                data(&f, 0, &all_times()),
                Frame {
                    kind: Kind::End,
                    stored_len: end_garbage.len() as u32,
                    raw_len: end_garbage.len() as u32,
                    first_record: 10,
                    record_count: 0,
                }
                .encode(&end_garbage),
            ]
            .concat(),
        };
        let _ = bounded(&path, &[&head[..], &body].concat());
        std::fs::remove_file(&path).unwrap();
    }
}

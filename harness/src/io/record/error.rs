//! What can be wrong with a recording, or with writing one.

use std::fmt;

use lockstep_abi::at;

/// What is wrong with a recording, or with writing one. Every refusal
/// names the file; those about a block name its index (0 is the header
/// block), its byte offset and the index of its first record.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("recording {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("recording {path}: writing failed at simulated {}: {source}", at(*time_us))]
    Write {
        path: String,
        time_us: u64,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} is not a lockstep recording (bad magic)")]
    NotARecording { path: String },
    #[error("recording {path} has format version {found}; this build reads version {expected}")]
    SchemaMismatch {
        path: String,
        found: u32,
        expected: u32,
    },
    #[error("recording {path}: unreadable header: {reason}")]
    Header { path: String, reason: String },
    #[error("recording {path}: the header block fails its checksum ({part}); the file is damaged")]
    HeaderCrc { path: String, part: CrcPart },
    #[error(
        "recording {path} was made with other model parameters than the spec given for replay; differing keys: {}",
        keys.join(", ")
    )]
    ParameterMismatch { path: String, keys: Vec<String> },
    #[error(
        "recording {path}: the embedded spec does not match its own hash (the file is damaged)"
    )]
    Damaged { path: String },
    #[error(
        "recording {path}: block {block} at byte {offset} (from record {index}) fails its checksum ({part}); the file is damaged"
    )]
    BlockCrc {
        path: String,
        block: u64,
        offset: u64,
        index: u64,
        part: CrcPart,
    },
    #[error(
        "recording {path}: block {block} at byte {offset} (from record {index}) declares {declared} bytes, above the limit of {max}; refused unread"
    )]
    BlockTooLarge {
        path: String,
        block: u64,
        offset: u64,
        index: u64,
        declared: u64,
        max: u64,
    },
    #[error(
        "recording {path}: block {block} at byte {offset} (from record {index}) does not decompress: {reason}"
    )]
    Decompress {
        path: String,
        block: u64,
        offset: u64,
        index: u64,
        reason: String,
    },
    #[error(
        "recording {path}: block {block} at byte {offset}: record count mismatch at record {index}: {reason}"
    )]
    CountMismatch {
        path: String,
        block: u64,
        offset: u64,
        index: u64,
        reason: String,
    },
    #[error(
        "recording {path}: block {block} at byte {offset} (from record {index}) is malformed: {reason}"
    )]
    Malformed {
        path: String,
        block: u64,
        offset: u64,
        index: u64,
        reason: String,
    },
    #[error(
        "recording {path}: record {index} (block {block}) is at {}, not after the previous record at {}", at(*time_us), at(*previous_us)
    )]
    NotIncreasing {
        path: String,
        block: u64,
        index: u64,
        time_us: u64,
        previous_us: u64,
    },
    #[error(
        "recording {path}: record {index} (block {block}) at {} comes {} us after the previous record; the run's largest interval is {max_interval_us} us",
        at(*time_us), time_us - previous_us
    )]
    GapTooLarge {
        path: String,
        block: u64,
        index: u64,
        time_us: u64,
        previous_us: u64,
        max_interval_us: u64,
    },
    #[error(
        "recording {path}: record {index} (block {block}) at {} is after the run's planned end at {}", at(*time_us), at(*end_us)
    )]
    BeyondEnd {
        path: String,
        block: u64,
        index: u64,
        time_us: u64,
        end_us: u64,
    },
    #[error(
        "recording {path}: {count} bytes follow the end block (from byte {offset}); the file was appended to or damaged"
    )]
    TrailingBytes {
        path: String,
        offset: u64,
        count: u64,
    },
    #[error(
        "recording {path}: unfinished: the file ends {} with no end marker (block {block} is missing or cut); the run that wrote it was killed or the file was cut",
        ends_after(*records, *last_time_us)
    )]
    Unfinished {
        path: String,
        block: u64,
        /// Complete, checked records before the cut.
        records: u64,
        /// Time of the last of them (0 when there is none).
        last_time_us: u64,
    },
    #[error("replay of {path} failed at {}: {reason}", at(*time_us))]
    Replay {
        path: String,
        time_us: u64,
        reason: String,
    },
}

fn ends_after(records: u64, last_time_us: u64) -> String {
    match records {
        0 => "before its first record".to_string(),
        n => format!("after record {} at {}", n - 1, at(last_time_us)),
    }
}

/// Which checksum of a block failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CrcPart {
    /// The one over the block's 24-byte frame (kind, lengths, counts).
    Frame,
    /// The one over the frame and the payload.
    Payload,
}

impl fmt::Display for CrcPart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CrcPart::Frame => "frame",
            CrcPart::Payload => "payload",
        })
    }
}

//! How a run ended: the end status and the end block's payload.

use std::fmt;

use super::records::Sequence;
use super::{END_FIXED_BYTES, MAX_REASON_BYTES};

/// How the run that wrote a recording ended (its end block).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EndStatus {
    /// The run reached its planned end; the last record is at `end_us`.
    Completed,
    /// The run ended with an error at `time_us` (the records stop at or
    /// before it). `reason` is the error's message, cut to
    /// [`MAX_REASON_BYTES`].
    Stopped { time_us: u64, reason: String },
    /// The run was interrupted by a signal (SIGINT, SIGTERM) at `time_us`.
    Interrupted { time_us: u64, signal: i32 },
}

impl EndStatus {
    pub fn is_completed(&self) -> bool {
        matches!(self, EndStatus::Completed)
    }

    pub(super) fn code(&self) -> u32 {
        match self {
            EndStatus::Completed => 0,
            EndStatus::Stopped { .. } => 1,
            EndStatus::Interrupted { .. } => 2,
        }
    }
}

/// Reads as "a run …": "completed", "stopped by an error at t = … s: …",
/// "interrupted by SIGINT (interrupted) at t = … s".
impl fmt::Display for EndStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EndStatus::Completed => f.write_str("completed"),
            EndStatus::Stopped { time_us, reason } => {
                write!(
                    f,
                    "stopped by an error at {}: {reason}",
                    lockstep_abi::at(*time_us)
                )
            }
            EndStatus::Interrupted { time_us, signal } => {
                write!(
                    f,
                    "interrupted by {} at {}",
                    lockstep_abi::signal_name(*signal),
                    lockstep_abi::at(*time_us)
                )
            }
        }
    }
}

impl Sequence {
    /// The end block payload.
    pub(super) fn encode_end(&self, status: &EndStatus) -> Vec<u8> {
        let (time_us, signal, reason) = match status {
            EndStatus::Completed => (0, 0, ""),
            EndStatus::Stopped { time_us, reason } => (*time_us, 0, cut(reason)),
            EndStatus::Interrupted { time_us, signal } => (*time_us, *signal, ""),
        };
        let mut p = Vec::with_capacity(END_FIXED_BYTES + reason.len());
        p.extend_from_slice(&self.records.to_le_bytes());
        p.extend_from_slice(&self.last_us.unwrap_or(0).to_le_bytes());
        p.extend_from_slice(&status.code().to_le_bytes());
        p.extend_from_slice(&time_us.to_le_bytes());
        p.extend_from_slice(&signal.to_le_bytes());
        p.extend_from_slice(&(reason.len() as u32).to_le_bytes());
        p.extend_from_slice(reason.as_bytes());
        p
    }
}

/// `s` cut to at most [`MAX_REASON_BYTES`] at a character boundary.
fn cut(s: &str) -> &str {
    let mut n = s.len().min(MAX_REASON_BYTES);
    while !s.is_char_boundary(n) {
        n -= 1;
    }
    &s[..n]
}

/// An end payload, read back: (records, last time, status), or what is
/// wrong with it.
pub(super) fn decode_end(p: &[u8]) -> Result<(u64, u64, EndStatus), String> {
    if p.len() < END_FIXED_BYTES {
        return Err(format!(
            "the end payload has {} bytes, fewer than {END_FIXED_BYTES}",
            p.len()
        ));
    }
    let u64_at = |i: usize| u64::from_le_bytes(p[i..i + 8].try_into().unwrap_or([0; 8]));
    let u32_at = |i: usize| u32::from_le_bytes(p[i..i + 4].try_into().unwrap_or([0; 4]));
    let (records, last, code, time_us) = (u64_at(0), u64_at(8), u32_at(16), u64_at(20));
    let signal = u32_at(28) as i32;
    let len = u32_at(32) as usize;
    if len > MAX_REASON_BYTES || p.len() != END_FIXED_BYTES + len {
        return Err(format!(
            "the end payload has {} bytes; its reason length {len} needs {}",
            p.len(),
            END_FIXED_BYTES.saturating_add(len)
        ));
    }
    let reason = std::str::from_utf8(&p[END_FIXED_BYTES..])
        .map_err(|e| format!("the end reason is not UTF-8: {e}"))?;
    let plain = time_us == 0 && signal == 0 && reason.is_empty();
    let status = match code {
        0 if plain => EndStatus::Completed,
        1 if signal == 0 => EndStatus::Stopped {
            time_us,
            reason: reason.to_string(),
        },
        2 if reason.is_empty() => EndStatus::Interrupted { time_us, signal },
        _ => {
            return Err(format!(
                "unknown end status {code} (time {time_us} us, signal {signal}, reason of {len} bytes)"
            ));
        }
    };
    Ok((records, last, status))
}

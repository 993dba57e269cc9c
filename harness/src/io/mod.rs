//! What a run reads and writes besides its inputs: the CSV flight log and its
//! sidecar, the ULog export, recordings and their replay, and the checks
//! that no output overwrites an input.
//!
//! - [`log`], [`log_meta`]: the flight log and its JSON sidecar.
//! - [`ulog`]: the flight as PX4's ULog, written as it flies.
//! - [`record`], [`replay_log`], [`log_compare`]: recordings, their replay as a
//!   log, and a replay compared with a flight's log.
//! - [`paths`]: outputs checked against inputs and each other.
//! - [`digest`]: `sha256:<hex>` of a file, as reports give it.

pub mod digest;
pub mod log;
pub mod log_compare;
pub mod log_meta;
pub mod paths;
pub mod record;
pub mod replay_log;
pub mod ulog;

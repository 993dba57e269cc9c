//! Reading a file that a user names as an input: only a regular file, and
//! never more than a bound, whatever the file says of its size.
//!
//! `/dev/zero` as a scenario would otherwise be read until memory runs
//! out (a device reports a size of 0), and a FIFO would block the reader
//! until a writer comes. Both are refused before they are opened; the file
//! is opened without blocking and checked again (the path may have changed
//! in between), and the read stops one byte past the bound.

use std::fs::{FileType, OpenOptions};
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// The text of the regular file at `path` (a `what` file: scenario,
/// mission...), of at most `limit` bytes; otherwise why not, in words that
/// follow "cannot read <what> <path>: ".
pub fn read_text(path: &Path, what: &str, limit: u64) -> Result<String, String> {
    let regular = |t: FileType| {
        if t.is_file() {
            Ok(())
        } else {
            Err(format!(
                "{}, not a regular file: a {what} file must be one",
                kind_of(t)
            ))
        }
    };
    let too_large =
        |n: &dyn std::fmt::Display| format!("{n} bytes; a {what} file may hold at most {limit}");
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    regular(meta.file_type())?;
    if meta.len() > limit {
        return Err(too_large(&meta.len()));
    }
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| e.to_string())?;
    regular(file.metadata().map_err(|e| e.to_string())?.file_type())?;
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > limit {
        return Err(too_large(&format!("more than {limit}")));
    }
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "not UTF-8 text (an invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })
}

/// What a file that is not a regular one is ("a directory", "a FIFO"...).
pub fn kind_of(t: FileType) -> &'static str {
    if t.is_dir() {
        "a directory"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a file"
    }
}

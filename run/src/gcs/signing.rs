//! MAVLink 2 message signing on the vehicle's link (the `mavlink` crate's
//! SigningData: HMAC-SHA-256 of the frame with the link's secret key, a
//! timestamp that must grow per stream, a new stream at most a minute
//! older than the newest seen, as the spec says). With a key every
//! message sent is signed, and a message received is applied only when it
//! is signed with the key: unsigned frames (MAVLink 1 included) and wrong
//! signatures are refused and counted. The key is read once from a file
//! and never written anywhere.

use std::path::Path;

use mavlink::{MAVLinkMessageRaw, SigningConfig, SigningData};

/// The link id of the vehicle's signatures.
const LINK_ID: u8 = 0;

/// A 32-byte secret from `path`: 32 raw bytes, or 64 hexadecimal digits
/// (a trailing newline allowed; MAVProxy's `signing key` prints it so).
pub fn read_key(path: &Path) -> Result<[u8; 32], String> {
    let bytes = std::fs::read(path)
        .map_err(|e| format!("--mavlink-key {}: cannot read it: {e}", path.display()))?;
    if bytes.len() == 32 {
        let mut key = [0u8; 32];
        key.copy_from_slice(&bytes);
        return Ok(key);
    }
    let text = std::str::from_utf8(&bytes)
        .unwrap_or("")
        .trim_end_matches(['\n', '\r']);
    if text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit()) {
        let mut key = [0u8; 32];
        for (i, k) in key.iter_mut().enumerate() {
            *k = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).expect("checked hex digits");
        }
        return Ok(key);
    }
    Err(format!(
        "--mavlink-key {}: a key is 32 bytes, or 64 hexadecimal digits; this file has {} bytes",
        path.display(),
        bytes.len()
    ))
}

/// The link's signing state.
pub(crate) struct Signing {
    data: SigningData,
}

impl std::fmt::Debug for Signing {
    /// Never shows the key.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Signing { .. }")
    }
}

impl Signing {
    pub(crate) fn new(key: [u8; 32]) -> Signing {
        Signing {
            data: SigningData::from_config(SigningConfig::new(key, LINK_ID, true, false)),
        }
    }

    /// Whether a received frame may be applied: signed with the key, its
    /// timestamp newer than its stream's last.
    pub(crate) fn accepts(&self, raw: &MAVLinkMessageRaw) -> bool {
        match raw {
            MAVLinkMessageRaw::V2(m) => self.data.verify_signature(m),
            MAVLinkMessageRaw::V1(_) => false,
        }
    }

    pub(crate) fn data(&self) -> &SigningData {
        &self.data
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_read_raw_or_hex_and_anything_else_is_refused_naming_the_file() {
        let dir = std::env::temp_dir().join(format!("lockstep-key-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let raw = dir.join("raw");
        std::fs::write(&raw, [7u8; 32]).unwrap();
        assert_eq!(read_key(&raw).unwrap(), [7u8; 32]);
        let hex = dir.join("hex");
        std::fs::write(&hex, format!("{}\n", "0a".repeat(32))).unwrap();
        assert_eq!(read_key(&hex).unwrap(), [10u8; 32]);
        let short = dir.join("short");
        std::fs::write(&short, b"secret").unwrap();
        assert_eq!(
            read_key(&short).unwrap_err(),
            format!(
                "--mavlink-key {}: a key is 32 bytes, or 64 hexadecimal digits; this file has 6 bytes",
                short.display()
            )
        );
        let missing = dir.join("missing");
        assert!(read_key(&missing).unwrap_err().starts_with(&format!(
            "--mavlink-key {}: cannot read it: ",
            missing.display()
        )));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

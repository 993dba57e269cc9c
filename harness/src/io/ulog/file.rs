//! The ULog file format (docs.px4.io, "ULog File Format"), as written: a
//! 16-byte header (magic, version 1, start time), then messages of `u16
//! size, u8 type, payload`, every field little-endian and packed in its
//! format's order. The definitions come first (flag bits `B`, information
//! `I`, formats `F`, initial parameters `P`), then the data section
//! (subscriptions `A`, data `D`, logged strings `L`, changed parameters
//! `P`).

use std::io::Write;
use std::path::{Path, PathBuf};

/// A ULog file being written.
pub struct UlogFile {
    out: std::io::BufWriter<std::fs::File>,
    path: PathBuf,
    /// The time of the latest data, stamping what comes without a time.
    pub(crate) last_us: u64,
}

impl std::fmt::Debug for UlogFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UlogFile")
            .field("path", &self.path)
            .finish()
    }
}

/// A parameter's value as ULog stores it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Param {
    Float(f32),
    Int(i32),
}

/// `payload` framed as a ULog message of `kind`.
pub(crate) fn frame(kind: u8, payload: &[u8]) -> std::io::Result<Vec<u8>> {
    let size = u16::try_from(payload.len()).map_err(|_| {
        std::io::Error::other(format!(
            "a ULog message of {} bytes is too long",
            payload.len()
        ))
    })?;
    let mut m = Vec::with_capacity(3 + payload.len());
    m.extend_from_slice(&size.to_le_bytes());
    m.push(kind);
    m.extend_from_slice(payload);
    Ok(m)
}

/// An `I` or `P` payload: `u8 key length, key ("type name"), value`.
pub(crate) fn keyed(key: &str, value: &[u8]) -> Vec<u8> {
    let mut p = vec![key.len() as u8];
    p.extend_from_slice(key.as_bytes());
    p.extend_from_slice(value);
    p
}

impl UlogFile {
    /// Creates `path` and writes the header and the flag bits: the
    /// compatible flag DEFAULT_PARAMETERS (bit 0 of `compat_flags[0]`) when
    /// `defaults` (the file will hold parameter-default messages).
    pub fn create(path: &Path, defaults: bool) -> std::io::Result<UlogFile> {
        let f = std::fs::File::create(path).map_err(|e| {
            std::io::Error::new(e.kind(), format!("cannot create {}: {e}", path.display()))
        })?;
        let mut u = UlogFile {
            out: std::io::BufWriter::with_capacity(1 << 16, f),
            path: path.to_path_buf(),
            last_us: 0,
        };
        let mut header = b"ULog\x01\x12\x35\x01".to_vec();
        header.extend_from_slice(&0u64.to_le_bytes());
        u.raw(&header)?;
        // Flag bits: compat_flags[8], incompat_flags[8], appended data
        // offsets[3] (none: no incompatible flags).
        let mut flags = [0u8; 40];
        flags[0] = u8::from(defaults);
        u.message(b'B', &flags)?;
        Ok(u)
    }

    fn raw(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.out.write_all(bytes).map_err(|e| {
            std::io::Error::new(
                e.kind(),
                format!("cannot write {}: {e}", self.path.display()),
            )
        })
    }

    pub(crate) fn message(&mut self, kind: u8, payload: &[u8]) -> std::io::Result<()> {
        let m = frame(kind, payload)?;
        self.raw(&m)
    }

    /// An information field `char[n] key` = `value`.
    pub fn info(&mut self, key: &str, value: &str) -> std::io::Result<()> {
        let p = keyed(&format!("char[{}] {key}", value.len()), value.as_bytes());
        self.message(b'I', &p)
    }

    /// A format: `name:field;field;...` (each `type name`).
    pub fn format(&mut self, name: &str, fields: &[&str]) -> std::io::Result<()> {
        let text = format!("{name}:{};", fields.join(";"));
        self.message(b'F', text.as_bytes())
    }

    /// A parameter: among the definitions, its initial value; in the data
    /// section, a change at the latest data's time.
    pub fn param(&mut self, name: &str, value: Param) -> std::io::Result<()> {
        let p = match value {
            Param::Float(v) => keyed(&format!("float {name}"), &v.to_le_bytes()),
            Param::Int(v) => keyed(&format!("int32_t {name}"), &v.to_le_bytes()),
        };
        self.message(b'P', &p)
    }

    /// A parameter's default ('Q'): both the system-wide default and the
    /// current configuration's (bits 0 and 1; the library's default is for
    /// the airframe flown).
    pub fn param_default(&mut self, name: &str, value: Param) -> std::io::Result<()> {
        let mut p = vec![0b11u8];
        p.extend(match value {
            Param::Float(v) => keyed(&format!("float {name}"), &v.to_le_bytes()),
            Param::Int(v) => keyed(&format!("int32_t {name}"), &v.to_le_bytes()),
        });
        self.message(b'Q', &p)
    }

    /// Subscribes `id` to the format `name` (instance 0).
    pub fn subscribe(&mut self, id: u16, name: &str) -> std::io::Result<()> {
        let mut p = vec![0u8];
        p.extend_from_slice(&id.to_le_bytes());
        p.extend_from_slice(name.as_bytes());
        self.message(b'A', &p)
    }

    /// A data message of subscription `id` at `time_us`; `fields` are the
    /// format's fields after its timestamp, packed.
    pub fn data(&mut self, id: u16, time_us: u64, fields: &[u8]) -> std::io::Result<()> {
        let mut p = Vec::with_capacity(10 + fields.len());
        p.extend_from_slice(&id.to_le_bytes());
        p.extend_from_slice(&time_us.to_le_bytes());
        p.extend_from_slice(fields);
        self.last_us = self.last_us.max(time_us);
        self.message(b'D', &p)
    }

    /// A logged string at `level` (syslog's: 3 error, 4 warning, 6 info).
    pub fn logged(&mut self, level: u8, time_us: u64, text: &str) -> std::io::Result<()> {
        let mut p = vec![b'0' + level];
        p.extend_from_slice(&time_us.to_le_bytes());
        // A message is at most 65535 bytes: a longer text is cut at a
        // character boundary.
        let mut end = text.len().min(60_000);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        p.extend_from_slice(&text.as_bytes()[..end]);
        self.message(b'L', &p)
    }

    /// Flushes the file to disk.
    pub fn finish(mut self) -> std::io::Result<()> {
        let path = self.path.clone();
        let context = |e: std::io::Error| {
            std::io::Error::new(e.kind(), format!("cannot write {}: {e}", path.display()))
        };
        self.out.flush().map_err(context)?;
        self.out.get_ref().sync_all().map_err(context)
    }
}

/// Packs values into a data message's fields.
#[derive(Debug, Default)]
pub struct Fields(pub Vec<u8>);

impl Fields {
    pub fn f32(&mut self, v: f64) -> &mut Self {
        self.0.extend_from_slice(&(v as f32).to_le_bytes());
        self
    }
    pub fn f32s(&mut self, v: &[f32]) -> &mut Self {
        for x in v {
            self.0.extend_from_slice(&x.to_le_bytes());
        }
        self
    }
    pub fn f64(&mut self, v: f64) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn i32(&mut self, v: i32) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn u32(&mut self, v: u32) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn u8(&mut self, v: u8) -> &mut Self {
        self.0.push(v);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_framed_by_size_and_kind() {
        assert_eq!(frame(b'I', b"ab").unwrap(), b"\x02\x00Iab");
        assert!(frame(b'D', &vec![0; 70_000]).is_err());
        assert_eq!(
            keyed("float X", &1.0f32.to_le_bytes()),
            b"\x07float X\x00\x00\x80\x3f"
        );
    }
}

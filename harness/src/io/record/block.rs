//! Blocks: the framing of a recording (see the format table in the parent
//! module). Encoding, and a reader that checks frame checksums and length
//! limits before it allocates or reads a payload.

use std::io::{self, Read};

use super::{MAX_BLOCK_BYTES, MAX_END_BYTES, MAX_HEADER_BYTES};

/// Bytes of a block's frame: kind, two lengths, first record, record count,
/// frame CRC, block CRC.
pub(super) const FRAME_BYTES: usize = 32;

/// Bytes of the frame the checksums cover (everything before them).
const COVERED: usize = 24;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Header,
    Data,
    End,
}

impl Kind {
    fn tag(self) -> [u8; 4] {
        match self {
            Kind::Header => *b"HEAD",
            Kind::Data => *b"DATA",
            Kind::End => *b"END\0",
        }
    }

    fn from_tag(tag: &[u8]) -> Option<Kind> {
        [Kind::Header, Kind::Data, Kind::End]
            .into_iter()
            .find(|k| k.tag() == tag)
    }

    /// Largest stored payload of this kind.
    pub(super) fn max_stored(self) -> usize {
        match self {
            Kind::Header => MAX_HEADER_BYTES,
            Kind::Data => max_compressed(),
            Kind::End => MAX_END_BYTES,
        }
    }

    /// Largest uncompressed payload of this kind.
    pub(super) fn max_raw(self) -> usize {
        match self {
            Kind::Header => MAX_HEADER_BYTES,
            Kind::Data => MAX_BLOCK_BYTES,
            Kind::End => MAX_END_BYTES,
        }
    }
}

/// zstd's worst case for a full data block.
pub(super) fn max_compressed() -> usize {
    zstd::zstd_safe::compress_bound(MAX_BLOCK_BYTES)
}

/// A block's frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Frame {
    pub kind: Kind,
    pub stored_len: u32,
    pub raw_len: u32,
    pub first_record: u64,
    pub record_count: u32,
}

impl Frame {
    fn covered(&self) -> [u8; COVERED] {
        let mut h = [0u8; COVERED];
        h[0..4].copy_from_slice(&self.kind.tag());
        h[4..8].copy_from_slice(&self.stored_len.to_le_bytes());
        h[8..12].copy_from_slice(&self.raw_len.to_le_bytes());
        h[12..20].copy_from_slice(&self.first_record.to_le_bytes());
        h[20..24].copy_from_slice(&self.record_count.to_le_bytes());
        h
    }

    /// Writes this frame, with both checksums over `payload`, into `out`.
    pub(super) fn seal(&self, payload: &[u8], out: &mut [u8; FRAME_BYTES]) {
        let covered = self.covered();
        let mut all = crc32fast::Hasher::new();
        all.update(&covered);
        all.update(payload);
        out[..COVERED].copy_from_slice(&covered);
        out[24..28].copy_from_slice(&crc32fast::hash(&covered).to_le_bytes());
        out[28..32].copy_from_slice(&all.finalize().to_le_bytes());
    }

    /// The frame and `payload`, as one byte string.
    pub(super) fn encode(&self, payload: &[u8]) -> Vec<u8> {
        let mut head = [0u8; FRAME_BYTES];
        self.seal(payload, &mut head);
        let mut out = Vec::with_capacity(FRAME_BYTES + payload.len());
        out.extend_from_slice(&head);
        out.extend_from_slice(payload);
        out
    }
}

/// Why the next block cannot be read.
#[derive(Debug)]
pub(super) enum Fault {
    Io(io::Error),
    /// The file ends inside the block.
    Cut,
    FrameCrc,
    PayloadCrc,
    /// The frame's checksum holds but its kind is unknown.
    UnknownKind([u8; 4]),
    TooLarge {
        declared: u64,
        max: u64,
    },
    /// Stored and raw lengths differ in an uncompressed block.
    Lengths {
        stored: u32,
        raw: u32,
    },
}

/// Reads blocks one after the other.
pub(super) struct BlockReader<R> {
    input: R,
    /// Byte offset of the block being read (or the next one).
    pub offset: u64,
    /// Index of the block being read (or the next one); 0 is the header.
    pub index: u64,
    payload: Vec<u8>,
}

impl<R: Read> BlockReader<R> {
    /// A reader at byte `offset` of the file, before block `index`.
    pub fn new(input: R, offset: u64, index: u64) -> Self {
        BlockReader {
            input,
            offset,
            index,
            payload: Vec::new(),
        }
    }

    pub fn into_inner(self) -> R {
        self.input
    }

    /// The next block's frame and stored payload; `Ok(None)` when the file
    /// ends exactly before it. On success `offset` and `index` still name
    /// this block; [`BlockReader::advance`] moves past it.
    pub fn next(&mut self) -> Result<Option<(Frame, &[u8])>, Fault> {
        let mut head = [0u8; FRAME_BYTES];
        match read_full(&mut self.input, &mut head).map_err(Fault::Io)? {
            0 => return Ok(None),
            FRAME_BYTES => {}
            _ => return Err(Fault::Cut),
        }
        let stored_crc = u32::from_le_bytes([head[24], head[25], head[26], head[27]]);
        if crc32fast::hash(&head[..COVERED]) != stored_crc {
            return Err(Fault::FrameCrc);
        }
        let word = |i: usize| u32::from_le_bytes([head[i], head[i + 1], head[i + 2], head[i + 3]]);
        let mut first = [0u8; 8];
        first.copy_from_slice(&head[12..20]);
        let tag = [head[0], head[1], head[2], head[3]];
        let kind = Kind::from_tag(&tag).ok_or(Fault::UnknownKind(tag))?;
        let frame = Frame {
            kind,
            stored_len: word(4),
            raw_len: word(8),
            first_record: u64::from_le_bytes(first),
            record_count: word(20),
        };
        for (declared, max) in [
            (frame.stored_len, kind.max_stored()),
            (frame.raw_len, kind.max_raw()),
        ] {
            if declared as usize > max {
                return Err(Fault::TooLarge {
                    declared: declared.into(),
                    max: max as u64,
                });
            }
        }
        if kind != Kind::Data && frame.stored_len != frame.raw_len {
            return Err(Fault::Lengths {
                stored: frame.stored_len,
                raw: frame.raw_len,
            });
        }
        // Bounded by the limits just checked.
        self.payload.resize(frame.stored_len as usize, 0);
        if read_full(&mut self.input, &mut self.payload).map_err(Fault::Io)? < self.payload.len() {
            return Err(Fault::Cut);
        }
        let mut all = crc32fast::Hasher::new();
        all.update(&head[..COVERED]);
        all.update(&self.payload);
        if all.finalize() != word(28) {
            return Err(Fault::PayloadCrc);
        }
        Ok(Some((frame, &self.payload)))
    }

    /// Moves past the block `next` returned.
    pub fn advance(&mut self) {
        self.offset += (FRAME_BYTES + self.payload.len()) as u64;
        self.index += 1;
    }

    /// Bytes left in the input (read to its end).
    pub fn remaining(&mut self) -> Result<u64, io::Error> {
        io::copy(&mut self.input, &mut io::sink())
    }
}

/// Reads until `buf` is full or the input ends; returns the bytes read.
pub(super) fn read_full(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

//! MAVFTP (FILE_TRANSFER_PROTOCOL) on the vehicle's side, read-only and in
//! ArduPilot style only, so that MAVProxy and QGroundControl fetch the
//! parameters and the mission as they fetch an ArduPilot vehicle's: the two
//! virtual files of [`files`] (`@PARAM/param.pck`, `@MISSION/mission.dat`).
//! PX4 style leaves FTP unanswered (its vehicle would serve its own
//! filesystem, which this one does not have).
//!
//! The payload's format and the opcodes and error codes are MAVLink's
//! (mavlink.io's FTP service: 12-byte header of u16 seq, u8 session,
//! opcode, size, req_opcode, burst_complete, padding, u32 offset; then 239
//! data bytes). The `mavlink` crate carries the payload as 251 bytes and no
//! crate serves the protocol, so the packets are read and written here. The
//! behaviour follows ArduPilot's server (`libraries/GCS_MAVLink/GCS_FTP.cpp`,
//! master as read for this): an answer's seq is the request's + 1, its
//! session the request's (the client chooses it); up to 5 open files, a
//! session idle 3 s taken over when a sixth is asked for
//! (`NoSessionsAvailable` before that), a second open on an open session
//! `Fail`; a request sent again (same seq) is answered with the answer kept,
//! not done twice; a burst read answers with data packets from the offset
//! asked for, in blocks of the size asked for (0: 239), then `EndOfFile`
//! with `burst_complete`; ResetSessions closes the sender's sessions.
//! Where we differ, on purpose: a read on a session with no open file is
//! `InvalidSession` (MAVLink's code for it; ArduPilot says `FileNotFound`),
//! a burst stops after 32 packets with `burst_complete` (the client asks
//! for the rest; ArduPilot's 2000 would overrun a UDP receive buffer), and
//! every request that would write (create, write, remove, mkdir, rename,
//! truncate) is `FileProtected`. Idle time is simulated time.

mod files;

use std::collections::VecDeque;

use lockstep_harness::engine::Engine;
use mavlink::dialects::common::*;

use files::{Entry, File, Refusal, Source};

use super::mission::MissionServer;
use super::params::{ParamValue, Table};

/// The data bytes of a packet.
const DATA_LEN: usize = 239;
const HEADER_LEN: usize = 12;
/// Files open at once (ArduPilot's `AP_MAVLINK_FTP_MAX_SESSIONS`).
const MAX_SESSIONS: usize = 5;
/// A session idle this long may be taken over (ArduPilot's
/// `FTP_SESSION_TIMEOUT`).
const SESSION_TIMEOUT_US: u64 = 3_000_000;
/// Packets one BurstReadFile is answered with, at most.
const BURST_PACKETS: u32 = 32;
/// Answers kept for requests sent again.
const KEPT: usize = 8;
/// errno's EINVAL, which ArduPilot sends after `FailErrno`.
const EINVAL: u8 = 22;

/// MAVLink's MAV_FTP_OPCODE values.
mod op {
    pub(super) const NONE: u8 = 0;
    pub(super) const TERMINATE_SESSION: u8 = 1;
    pub(super) const RESET_SESSIONS: u8 = 2;
    pub(super) const LIST_DIRECTORY: u8 = 3;
    pub(super) const OPEN_FILE_RO: u8 = 4;
    pub(super) const READ_FILE: u8 = 5;
    pub(super) const CREATE_FILE: u8 = 6;
    pub(super) const WRITE_FILE: u8 = 7;
    pub(super) const REMOVE_FILE: u8 = 8;
    pub(super) const CREATE_DIRECTORY: u8 = 9;
    pub(super) const REMOVE_DIRECTORY: u8 = 10;
    pub(super) const OPEN_FILE_WO: u8 = 11;
    pub(super) const TRUNCATE_FILE: u8 = 12;
    pub(super) const RENAME: u8 = 13;
    pub(super) const CALC_FILE_CRC32: u8 = 14;
    pub(super) const BURST_READ_FILE: u8 = 15;
    pub(super) const ACK: u8 = 128;
    pub(super) const NAK: u8 = 129;
}

/// MAVLink's MAV_FTP_ERR values (a NAK's first data byte).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum Error {
    Fail = 1,
    FailErrno = 2,
    InvalidDataSize = 3,
    InvalidSession = 4,
    NoSessionsAvailable = 5,
    EndOfFile = 6,
    UnknownCommand = 7,
    FileProtected = 9,
    FileNotFound = 10,
}

/// One FILE_TRANSFER_PROTOCOL payload.
#[derive(Debug, Clone, PartialEq)]
struct Packet {
    seq: u16,
    session: u8,
    opcode: u8,
    /// The data bytes used (a request may claim more than 239).
    size: u8,
    req_opcode: u8,
    burst_complete: bool,
    offset: u32,
    data: [u8; DATA_LEN],
}

impl Packet {
    fn parse(p: &[u8; HEADER_LEN + DATA_LEN]) -> Packet {
        let mut data = [0; DATA_LEN];
        data.copy_from_slice(&p[HEADER_LEN..]);
        Packet {
            seq: u16::from_le_bytes([p[0], p[1]]),
            session: p[2],
            opcode: p[3],
            size: p[4],
            req_opcode: p[5],
            burst_complete: p[6] != 0,
            offset: u32::from_le_bytes([p[8], p[9], p[10], p[11]]),
            data,
        }
    }

    fn encode(&self) -> [u8; HEADER_LEN + DATA_LEN] {
        let mut p = [0; HEADER_LEN + DATA_LEN];
        p[..2].copy_from_slice(&self.seq.to_le_bytes());
        p[2] = self.session;
        p[3] = self.opcode;
        p[4] = self.size;
        p[5] = self.req_opcode;
        p[6] = u8::from(self.burst_complete);
        p[8..12].copy_from_slice(&self.offset.to_le_bytes());
        p[HEADER_LEN..].copy_from_slice(&self.data);
        p
    }

    /// The answer to `req` carrying `data` (at most 239 bytes).
    fn ack(req: &Packet, data: &[u8]) -> Packet {
        let mut d = [0; DATA_LEN];
        d[..data.len()].copy_from_slice(data);
        Packet {
            seq: req.seq.wrapping_add(1),
            session: req.session,
            opcode: op::ACK,
            size: data.len() as u8,
            req_opcode: req.opcode,
            burst_complete: false,
            offset: req.offset,
            data: d,
        }
    }

    fn nak(req: &Packet, e: Error) -> Packet {
        Packet {
            opcode: op::NAK,
            ..Packet::ack(req, &[e as u8])
        }
    }

    /// ArduPilot's answer to a file it could not open or read:
    /// `FileNotFound`, or `FailErrno` with errno.
    fn refused(req: &Packet, why: &Refusal) -> Packet {
        match why {
            Refusal::NotFound => Packet::nak(req, Error::FileNotFound),
            Refusal::Invalid => Packet {
                opcode: op::NAK,
                ..Packet::ack(req, &[Error::FailErrno as u8, EINVAL])
            },
            Refusal::Failed(_) => Packet::nak(req, Error::Fail),
        }
    }

    /// The path a request names: its `size` bytes, NUL-terminated or not
    /// (ArduPilot's `check_name_len`); `None` when the size does not match.
    fn path(&self) -> Option<Result<&str, std::str::Utf8Error>> {
        let size = usize::from(self.size);
        if size == 0 || size > DATA_LEN {
            return None;
        }
        let bytes = &self.data[..size];
        let len = bytes.iter().position(|&b| b == 0).unwrap_or(size);
        (len == size || len + 1 == size).then(|| std::str::from_utf8(&bytes[..len]))
    }
}

/// An open file.
#[derive(Debug)]
struct Session {
    /// The station (system, component) and its session id.
    owner: (u8, u8),
    id: u8,
    file: File,
    bytes: Vec<u8>,
    /// The block size the bytes are padded for, and whether it was read
    /// in yet (the first read's size is the one padded for).
    block: usize,
    read: bool,
    last_us: u64,
}

/// An answer kept for a request sent again.
#[derive(Debug)]
struct Kept {
    owner: (u8, u8),
    request: (u8, u16, u8),
    reply: Packet,
}

/// What the server answers, and what went wrong on the vehicle's side.
#[derive(Debug, Default)]
struct Outcome {
    replies: Vec<Packet>,
    /// Why a file could not be made, for a STATUSTEXT.
    problem: Option<String>,
}

/// The MAVFTP server.
#[derive(Debug, Default)]
pub(super) struct Server {
    sessions: Vec<Session>,
    kept: VecDeque<Kept>,
}

impl Server {
    /// Answers `req` from station `from` at simulated time `now_us`.
    fn handle(
        &mut self,
        from: (u8, u8),
        req: &Packet,
        now_us: u64,
        source: &mut dyn Source,
    ) -> Outcome {
        let mut out = Outcome::default();
        match req.opcode {
            // Answers sent to us: eaten, as ArduPilot eats them.
            op::ACK | op::NAK => return out,
            op::RESET_SESSIONS => {
                // The station starts over: its seq may start over too.
                self.sessions.retain(|s| s.owner != from);
                self.kept.retain(|k| k.owner != from);
                out.replies.push(Packet::ack(req, &[]));
                return out;
            }
            _ => {}
        }
        let request = (req.session, req.seq, req.opcode);
        if let Some(k) = self
            .kept
            .iter()
            .find(|k| k.owner == from && k.request == request)
        {
            out.replies.push(k.reply.clone());
            return out;
        }
        if usize::from(req.size) > DATA_LEN {
            out.replies.push(Packet::nak(req, Error::InvalidDataSize));
            return out;
        }
        let session = self
            .sessions
            .iter()
            .position(|s| s.owner == from && s.id == req.session);
        let reply = match req.opcode {
            op::NONE => Packet::ack(req, &[]),
            op::TERMINATE_SESSION => {
                if let Some(i) = session {
                    self.sessions.remove(i);
                }
                Packet::ack(req, &[])
            }
            op::LIST_DIRECTORY => self.list(req, source, &mut out.problem),
            op::OPEN_FILE_RO => self.open(from, session, req, now_us, source, &mut out.problem),
            op::READ_FILE => match session {
                Some(i) => self.read(i, req, now_us, source, &mut out.problem),
                None => Packet::nak(req, Error::InvalidSession),
            },
            op::BURST_READ_FILE => {
                match session {
                    Some(i) => out.replies = self.burst(i, req, now_us, source, &mut out.problem),
                    None => {
                        let mut nak = Packet::nak(req, Error::InvalidSession);
                        nak.burst_complete = true;
                        out.replies.push(nak);
                    }
                }
                // Not kept: a burst asked for again is read again.
                return out;
            }
            op::CALC_FILE_CRC32 => match req.path() {
                None => Packet::nak(req, Error::InvalidDataSize),
                Some(Err(_)) => Packet::nak(req, Error::FileNotFound),
                Some(Ok(path)) => {
                    match files::resolve(path).and_then(|f| files::build(f, DATA_LEN, source)) {
                        Ok(bytes) => Packet::ack(req, &files::crc32(&bytes).to_le_bytes()),
                        Err(why) => refuse(req, why, &mut out.problem),
                    }
                }
            },
            op::CREATE_FILE
            | op::WRITE_FILE
            | op::REMOVE_FILE
            | op::CREATE_DIRECTORY
            | op::REMOVE_DIRECTORY
            | op::OPEN_FILE_WO
            | op::TRUNCATE_FILE
            | op::RENAME => Packet::nak(req, Error::FileProtected),
            _ => Packet::nak(req, Error::UnknownCommand),
        };
        if self.kept.len() == KEPT {
            self.kept.pop_front();
        }
        self.kept.push_back(Kept {
            owner: from,
            request,
            reply: reply.clone(),
        });
        out.replies.push(reply);
        out
    }

    /// ListDirectory: entries from the offset-th on, as many as fit, each
    /// `D<name>` or `F<name>\t<size>` and a NUL; `EndOfFile` past the last.
    fn list(&self, req: &Packet, source: &mut dyn Source, problem: &mut Option<String>) -> Packet {
        let path = match req.path() {
            None => return Packet::nak(req, Error::InvalidDataSize),
            Some(Err(_)) => return Packet::nak(req, Error::FileNotFound),
            Some(Ok(p)) => p,
        };
        let entries = match files::list(path) {
            Ok(e) => e,
            Err(why) => return refuse(req, why, problem),
        };
        let mut data = Vec::with_capacity(DATA_LEN);
        for entry in entries.iter().skip(req.offset as usize) {
            let text = match entry {
                Entry::Dir(name) => format!("D{name}\0"),
                Entry::File(name, file) => match files::build(*file, DATA_LEN, source) {
                    Ok(bytes) => format!("F{name}\t{}\0", bytes.len()),
                    Err(why) => return refuse(req, why, problem),
                },
            };
            if data.len() + text.len() >= DATA_LEN {
                break;
            }
            data.extend_from_slice(text.as_bytes());
        }
        if data.is_empty() {
            return Packet::nak(req, Error::EndOfFile);
        }
        Packet::ack(req, &data)
    }

    /// OpenFileRO: the file made now (padded for 239-byte reads) and its
    /// size answered.
    fn open(
        &mut self,
        from: (u8, u8),
        session: Option<usize>,
        req: &Packet,
        now_us: u64,
        source: &mut dyn Source,
        problem: &mut Option<String>,
    ) -> Packet {
        let idle = |s: &Session| now_us.saturating_sub(s.last_us) > SESSION_TIMEOUT_US;
        if let Some(i) = session {
            // One file per session; a session idle 3 s is taken to be one
            // whose client missed our answer and gave up.
            if !idle(&self.sessions[i]) {
                return Packet::nak(req, Error::Fail);
            }
            self.sessions.remove(i);
        }
        if self.sessions.len() >= MAX_SESSIONS {
            let oldest = (0..self.sessions.len()).min_by_key(|&i| self.sessions[i].last_us);
            match oldest {
                Some(i) if idle(&self.sessions[i]) => {
                    self.sessions.remove(i);
                }
                _ => return Packet::nak(req, Error::NoSessionsAvailable),
            }
        }
        let path = match req.path() {
            None => return Packet::nak(req, Error::InvalidDataSize),
            Some(Err(_)) => return Packet::nak(req, Error::FileNotFound),
            Some(Ok(p)) => p,
        };
        let made = files::resolve(path)
            .and_then(|file| files::build(file, DATA_LEN, source).map(|bytes| (file, bytes)));
        let (file, bytes) = match made {
            Ok(m) => m,
            Err(why) => return refuse(req, why, problem),
        };
        let size = bytes.len() as u32;
        self.sessions.push(Session {
            owner: from,
            id: req.session,
            file,
            bytes,
            block: DATA_LEN,
            read: false,
            last_us: now_us,
        });
        Packet::ack(req, &size.to_le_bytes())
    }

    /// The open file of session `i`, made again if its first read is in
    /// blocks of another size than it was padded for.
    fn ready(
        &mut self,
        i: usize,
        block: usize,
        now_us: u64,
        source: &mut dyn Source,
    ) -> Result<&Session, Refusal> {
        let s = &mut self.sessions[i];
        s.last_us = now_us;
        if !s.read {
            s.read = true;
            if block != s.block && matches!(s.file, File::Params(_)) {
                s.bytes = files::build(s.file, block, source)?;
                s.block = block;
            }
        }
        Ok(&self.sessions[i])
    }

    /// ReadFile: up to `size` bytes (0: 239) from the offset.
    fn read(
        &mut self,
        i: usize,
        req: &Packet,
        now_us: u64,
        source: &mut dyn Source,
        problem: &mut Option<String>,
    ) -> Packet {
        let block = block_of(req);
        let s = match self.ready(i, block, now_us, source) {
            Ok(s) => s,
            Err(why) => return refuse(req, why, problem),
        };
        match chunk(&s.bytes, req.offset, block) {
            Some(data) => Packet::ack(req, data),
            None => Packet::nak(req, Error::EndOfFile),
        }
    }

    /// BurstReadFile: packets of `size` bytes (0: 239) from the offset,
    /// seq counting on from the request's, until the end (then
    /// `EndOfFile`) or [`BURST_PACKETS`].
    fn burst(
        &mut self,
        i: usize,
        req: &Packet,
        now_us: u64,
        source: &mut dyn Source,
        problem: &mut Option<String>,
    ) -> Vec<Packet> {
        let block = block_of(req);
        let s = match self.ready(i, block, now_us, source) {
            Ok(s) => s,
            Err(why) => {
                let mut nak = refuse(req, why, problem);
                nak.burst_complete = true;
                return vec![nak];
            }
        };
        let mut out = Vec::new();
        let mut offset = req.offset;
        for n in 0..BURST_PACKETS {
            let mut at = req.clone();
            at.seq = req.seq.wrapping_add(n as u16);
            at.offset = offset;
            match chunk(&s.bytes, offset, block) {
                Some(data) => {
                    let mut p = Packet::ack(&at, data);
                    p.burst_complete = n + 1 == BURST_PACKETS;
                    offset += data.len() as u32;
                    out.push(p);
                }
                None => {
                    let mut nak = Packet::nak(&at, Error::EndOfFile);
                    nak.burst_complete = true;
                    out.push(nak);
                    break;
                }
            }
        }
        out
    }
}

/// A read's block size: its size, 0 meaning 239 (ArduPilot's burst rule;
/// taken for ReadFile too, as PX4's server reads a whole block).
fn block_of(req: &Packet) -> usize {
    match usize::from(req.size) {
        0 => DATA_LEN,
        n => n.min(DATA_LEN),
    }
}

/// `block` bytes of `bytes` from `offset`, or `None` at or past the end.
fn chunk(bytes: &[u8], offset: u32, block: usize) -> Option<&[u8]> {
    let start = usize::try_from(offset).ok().filter(|&o| o < bytes.len())?;
    Some(&bytes[start..(start + block).min(bytes.len())])
}

/// The NAK for `why`, its reason kept for a STATUSTEXT when the vehicle
/// failed.
fn refuse(req: &Packet, why: Refusal, problem: &mut Option<String>) -> Packet {
    let nak = Packet::refused(req, &why);
    if let Refusal::Failed(e) = why {
        *problem = Some(format!("MAVFTP: {e}"));
    }
    nak
}

/// The vehicle as the files' source: the parameter table as PARAM_VALUE
/// reads it, the mission as a download sends it.
struct Vehicle<'a> {
    engine: &'a mut Engine,
    params: &'a Table,
    mission: &'a mut MissionServer,
    home: MISSION_ITEM_INT_DATA,
    to: (u8, u8),
}

impl Source for Vehicle<'_> {
    fn params(&mut self, defaults: bool) -> Result<Vec<files::Param>, String> {
        let ap = self.engine.autopilot();
        let defaults: Vec<(String, f64)> = match defaults {
            true => ap
                .params()
                .map_err(|e| e.to_string())?
                .unwrap_or_default()
                .into_iter()
                .map(|p| (p.name, p.param.default))
                .collect(),
            false => Vec::new(),
        };
        self.params
            .names()
            .iter()
            .map(|name| {
                let value = self
                    .params
                    .read(ap, name, None)
                    .map_err(|e| format!("{name}: {e}"))?;
                let default = defaults
                    .iter()
                    .find(|(n, _)| n == name)
                    .map(|&(_, d)| match value {
                        ParamValue::F32(_) => ParamValue::F32(d as f32),
                        ParamValue::I32(_) => ParamValue::I32(d as i32),
                    });
                Ok(files::Param {
                    name: name.clone(),
                    value,
                    default,
                })
            })
            .collect()
    }

    fn mission(&mut self) -> Vec<MISSION_ITEM_INT_DATA> {
        self.mission
            .download(&self.home)
            .iter()
            .map(|m| MISSION_ITEM_INT_DATA {
                target_system: self.to.0,
                target_component: self.to.1,
                ..m.clone()
            })
            .collect()
    }
}

impl super::vehicle::Vehicle {
    /// A FILE_TRANSFER_PROTOCOL request from `sender`, answered on `link`.
    pub(super) fn file_transfer(
        &mut self,
        link: usize,
        sender: (u8, u8),
        m: &FILE_TRANSFER_PROTOCOL_DATA,
        engine: &mut Engine,
        now: u64,
    ) {
        if let Some(e) = self.params.load(engine) {
            self.status_text(&e);
        }
        let request = Packet::parse(&m.payload);
        let mut vehicle = Vehicle {
            engine,
            params: &self.params,
            mission: &mut self.mission,
            home: self.home.expect("set before inputs").mission_item(),
            to: sender,
        };
        let outcome = self.ftp.handle(sender, &request, now, &mut vehicle);
        for reply in &outcome.replies {
            let msg = MavMessage::FILE_TRANSFER_PROTOCOL(FILE_TRANSFER_PROTOCOL_DATA {
                target_network: 0,
                target_system: sender.0,
                target_component: sender.1,
                payload: reply.encode(),
            });
            self.send(link, &msg);
        }
        if let Some(p) = outcome.problem {
            self.status_text(&p);
        }
    }
}

#[cfg(test)]
mod tests;

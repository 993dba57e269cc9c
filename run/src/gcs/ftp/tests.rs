//! The MAVFTP server's protocol: packets, sessions, answers kept, bursts,
//! NAKs, hostile payloads.

use super::files::Param;
use super::*;

const ME: (u8, u8) = (255, 190);

struct Fake {
    params: Vec<Param>,
    mission: Vec<MISSION_ITEM_INT_DATA>,
}

impl Source for Fake {
    fn params(&mut self, _defaults: bool) -> Result<Vec<Param>, String> {
        Ok(self.params.clone())
    }
    fn mission(&mut self) -> Vec<MISSION_ITEM_INT_DATA> {
        self.mission.clone()
    }
}

/// A table of `n` parameters, names sharing prefixes.
fn fake(n: usize) -> Fake {
    let params = (0..n)
        .map(|i| Param {
            name: format!(
                "PAR_{:03}_{}",
                i,
                if i % 2 == 0 { "RATE" } else { "GAIN_MAX" }
            ),
            value: if i % 3 == 0 {
                ParamValue::I32(i as i32 - 7)
            } else {
                ParamValue::F32(i as f32 * 0.25)
            },
            default: None,
        })
        .collect();
    let mission = vec![MISSION_ITEM_INT_DATA::default(); 3];
    Fake { params, mission }
}

fn request(seq: u16, session: u8, opcode: u8, size: u8, offset: u32, data: &[u8]) -> Packet {
    let mut d = [0; DATA_LEN];
    d[..data.len()].copy_from_slice(data);
    Packet {
        seq,
        session,
        opcode,
        size,
        req_opcode: 0,
        burst_complete: false,
        offset,
        data: d,
    }
}

fn named(seq: u16, session: u8, opcode: u8, path: &str) -> Packet {
    request(seq, session, opcode, path.len() as u8, 0, path.as_bytes())
}

fn one(server: &mut Server, req: &Packet, now_us: u64, source: &mut Fake) -> Packet {
    let out = server.handle(ME, req, now_us, source);
    assert_eq!(out.replies.len(), 1, "{:?}", out.replies);
    out.replies.into_iter().next().unwrap()
}

fn nak_code(p: &Packet) -> Option<u8> {
    (p.opcode == op::NAK).then_some(p.data[0])
}

#[test]
fn packets_read_and_write_the_payload_layout() {
    let mut p = [0u8; 251];
    p[..12].copy_from_slice(&[0x34, 0x12, 7, 5, 200, 4, 1, 0, 0x78, 0x56, 0x34, 0x12]);
    p[12] = b'x';
    p[250] = 9;
    let packet = Packet::parse(&p);
    assert_eq!(
        (
            packet.seq,
            packet.session,
            packet.opcode,
            packet.size,
            packet.req_opcode
        ),
        (0x1234, 7, 5, 200, 4)
    );
    assert!(packet.burst_complete);
    assert_eq!(packet.offset, 0x1234_5678);
    assert_eq!(packet.encode(), p);
}

#[test]
fn an_open_answers_the_size_and_reads_return_the_file_then_eof() {
    let (mut s, mut src) = (Server::default(), fake(5));
    let bytes = files::build(File::Mission, DATA_LEN, &mut src).unwrap();
    let ack = one(
        &mut s,
        &named(10, 3, op::OPEN_FILE_RO, "@MISSION/mission.dat"),
        0,
        &mut src,
    );
    assert_eq!(
        (ack.opcode, ack.seq, ack.session, ack.req_opcode),
        (op::ACK, 11, 3, op::OPEN_FILE_RO)
    );
    assert_eq!(&ack.data[..4], &(bytes.len() as u32).to_le_bytes());
    let read = one(
        &mut s,
        &request(11, 3, op::READ_FILE, 50, 20, &[]),
        0,
        &mut src,
    );
    assert_eq!((read.opcode, read.size, read.offset), (op::ACK, 50, 20));
    assert_eq!(&read.data[..50], &bytes[20..70]);
    let past = one(
        &mut s,
        &request(12, 3, op::READ_FILE, 50, bytes.len() as u32, &[]),
        0,
        &mut src,
    );
    assert_eq!(nak_code(&past), Some(Error::EndOfFile as u8));
    let far = one(
        &mut s,
        &request(13, 3, op::READ_FILE, 50, u32::MAX, &[]),
        0,
        &mut src,
    );
    assert_eq!(nak_code(&far), Some(Error::EndOfFile as u8));
}

#[test]
fn a_burst_read_reassembles_the_file_in_the_block_size_asked_for() {
    // 200 parameters: about 3 kB, more than one burst of 32 blocks of 80.
    let (mut s, mut src) = (Server::default(), fake(200));
    let path = "@PARAM/param.pck";
    one(&mut s, &named(0, 9, op::OPEN_FILE_RO, path), 0, &mut src);
    let want = files::build(File::Params(Default::default()), 80, &mut src).unwrap();
    assert_ne!(
        want,
        files::build(File::Params(Default::default()), DATA_LEN, &mut src).unwrap()
    );
    let mut got = Vec::new();
    let (mut seq, mut offset, mut bursts) = (1u16, 0u32, 0);
    loop {
        bursts += 1;
        let out = s.handle(
            ME,
            &request(seq, 9, op::BURST_READ_FILE, 80, offset, &[]),
            0,
            &mut src,
        );
        for (n, p) in out.replies.iter().enumerate() {
            assert_eq!(p.seq, seq.wrapping_add(1 + n as u16));
            assert_eq!(p.req_opcode, op::BURST_READ_FILE);
        }
        let last = out.replies.last().unwrap();
        assert!(last.burst_complete);
        for p in out.replies.iter().filter(|p| p.opcode == op::ACK) {
            assert_eq!(p.offset as usize, got.len());
            got.extend_from_slice(&p.data[..usize::from(p.size)]);
        }
        if last.opcode == op::NAK {
            assert_eq!(nak_code(last), Some(Error::EndOfFile as u8));
            assert_eq!(last.offset as usize, want.len());
            break;
        }
        seq = last.seq;
        offset = last.offset + u32::from(last.size);
    }
    assert_eq!(got, want);
    assert!(bursts > 1, "one burst held the whole file");
    // A burst from past the end is the EOF alone.
    let out = s.handle(
        ME,
        &request(400, 9, op::BURST_READ_FILE, 80, 1 << 20, &[]),
        0,
        &mut src,
    );
    assert_eq!(out.replies.len(), 1);
    assert_eq!(nak_code(&out.replies[0]), Some(Error::EndOfFile as u8));
}

#[test]
fn naks_say_why_bad_session_unknown_opcode_bad_path_too_big_read_only() {
    let (mut s, mut src) = (Server::default(), fake(3));
    let code = |s: &mut Server, src: &mut Fake, r: Packet| nak_code(&one(s, &r, 0, src));
    assert_eq!(
        code(&mut s, &mut src, request(1, 4, op::READ_FILE, 10, 0, &[])),
        Some(Error::InvalidSession as u8)
    );
    assert_eq!(
        code(&mut s, &mut src, request(2, 4, 16, 0, 0, &[])),
        Some(Error::UnknownCommand as u8)
    );
    assert_eq!(
        code(&mut s, &mut src, request(3, 4, 77, 0, 0, &[])),
        Some(Error::UnknownCommand as u8)
    );
    assert_eq!(
        code(
            &mut s,
            &mut src,
            named(4, 4, op::OPEN_FILE_RO, "@PARAM/nope")
        ),
        Some(Error::FileNotFound as u8)
    );
    assert_eq!(
        code(
            &mut s,
            &mut src,
            named(5, 4, op::LIST_DIRECTORY, "/APM/LOGS")
        ),
        Some(Error::FileNotFound as u8)
    );
    let bad_utf8 = request(6, 4, op::OPEN_FILE_RO, 3, 0, &[0xff, 0xfe, 0x80]);
    assert_eq!(
        code(&mut s, &mut src, bad_utf8),
        Some(Error::FileNotFound as u8)
    );
    assert_eq!(
        code(
            &mut s,
            &mut src,
            request(7, 4, op::OPEN_FILE_RO, 240, 0, b"@PARAM/param.pck")
        ),
        Some(Error::InvalidDataSize as u8)
    );
    assert_eq!(
        code(&mut s, &mut src, request(8, 4, op::OPEN_FILE_RO, 0, 0, &[])),
        Some(Error::InvalidDataSize as u8)
    );
    // A NUL inside the size: the size does not match the name.
    assert_eq!(
        code(
            &mut s,
            &mut src,
            request(9, 4, op::OPEN_FILE_RO, 10, 0, b"@PARAM\0\0\0\0")
        ),
        Some(Error::InvalidDataSize as u8)
    );
    for write in [
        op::CREATE_FILE,
        op::OPEN_FILE_WO,
        op::WRITE_FILE,
        op::REMOVE_FILE,
        op::RENAME,
        op::TRUNCATE_FILE,
    ] {
        let r = named(20 + u16::from(write), 4, write, "@PARAM/param.pck");
        assert_eq!(code(&mut s, &mut src, r), Some(Error::FileProtected as u8));
    }
    let einval = one(
        &mut s,
        &named(40, 4, op::OPEN_FILE_RO, "@PARAM/param.pck?start=3"),
        0,
        &mut src,
    );
    assert_eq!(
        (einval.opcode, einval.size, &einval.data[..2]),
        (op::NAK, 2, &[2, EINVAL][..])
    );
    // Answers addressed to us are eaten.
    assert!(
        s.handle(ME, &request(41, 4, op::ACK, 0, 0, &[]), 0, &mut src)
            .replies
            .is_empty()
    );
}

#[test]
fn a_request_sent_again_gets_the_same_answer_and_is_not_done_twice() {
    let (mut s, mut src) = (Server::default(), fake(3));
    let open = named(5, 1, op::OPEN_FILE_RO, "@PARAM/param.pck");
    let first = one(&mut s, &open, 0, &mut src);
    assert_eq!(first.opcode, op::ACK);
    // The ACK was lost; the same request again: the same ACK, not Fail.
    assert_eq!(one(&mut s, &open, 0, &mut src), first);
    // A new open on the open session (a new seq): one file per session.
    let again = named(6, 1, op::OPEN_FILE_RO, "@PARAM/param.pck");
    assert_eq!(
        nak_code(&one(&mut s, &again, 0, &mut src)),
        Some(Error::Fail as u8)
    );
    let term = request(7, 1, op::TERMINATE_SESSION, 0, 0, &[]);
    assert_eq!(one(&mut s, &term, 0, &mut src).opcode, op::ACK);
    assert_eq!(one(&mut s, &term, 0, &mut src).opcode, op::ACK);
    // After a reset the same seq is a new request: the open is done again.
    let reset = request(0, 0, op::RESET_SESSIONS, 0, 0, &[]);
    assert_eq!(one(&mut s, &reset, 0, &mut src).opcode, op::ACK);
    assert_eq!(one(&mut s, &open, 0, &mut src), first);
    assert_eq!(s.sessions.len(), 1);
    assert_eq!(one(&mut s, &reset, 0, &mut src).opcode, op::ACK);
    assert_eq!(
        nak_code(&one(
            &mut s,
            &request(8, 1, op::READ_FILE, 0, 0, &[]),
            0,
            &mut src
        )),
        Some(Error::InvalidSession as u8)
    );
}

#[test]
fn five_sessions_at_once_a_sixth_waits_for_one_idle_3_s_reset_closes_ours() {
    let (mut s, mut src) = (Server::default(), fake(3));
    let path = "@MISSION/mission.dat";
    for id in 0..5 {
        assert_eq!(
            one(&mut s, &named(0, id, op::OPEN_FILE_RO, path), 0, &mut src).opcode,
            op::ACK
        );
    }
    let sixth = named(1, 5, op::OPEN_FILE_RO, path);
    assert_eq!(
        nak_code(&one(&mut s, &sixth, 1_000_000, &mut src)),
        Some(Error::NoSessionsAvailable as u8)
    );
    // Sessions 1 to 4 read on; session 0 stays idle past 3 s.
    for id in 1..5 {
        one(
            &mut s,
            &request(2, id, op::READ_FILE, 10, 0, &[]),
            2_000_000,
            &mut src,
        );
    }
    let sixth = named(3, 5, op::OPEN_FILE_RO, path);
    assert_eq!(one(&mut s, &sixth, 3_500_000, &mut src).opcode, op::ACK);
    let gone = request(4, 0, op::READ_FILE, 10, 0, &[]);
    assert_eq!(
        nak_code(&one(&mut s, &gone, 3_500_000, &mut src)),
        Some(Error::InvalidSession as u8)
    );
    // Another station's reset leaves ours; ours closes them all.
    s.handle(
        (200, 1),
        &request(0, 0, op::RESET_SESSIONS, 0, 0, &[]),
        3_600_000,
        &mut src,
    );
    assert_eq!(s.sessions.len(), 5);
    assert_eq!(
        one(
            &mut s,
            &request(5, 0, op::RESET_SESSIONS, 0, 0, &[]),
            3_600_000,
            &mut src
        )
        .opcode,
        op::ACK
    );
    assert!(s.sessions.is_empty());
}

#[test]
fn listings_name_the_virtual_directories_and_their_files_with_sizes() {
    let (mut s, mut src) = (Server::default(), fake(3));
    let root = one(&mut s, &named(0, 0, op::LIST_DIRECTORY, "/"), 0, &mut src);
    assert_eq!(
        &root.data[..usize::from(root.size)],
        b"D@PARAM\0D@MISSION\0"
    );
    let size = files::build(File::Params(Default::default()), DATA_LEN, &mut src)
        .unwrap()
        .len();
    let params = one(
        &mut s,
        &named(1, 0, op::LIST_DIRECTORY, "@PARAM/"),
        0,
        &mut src,
    );
    assert_eq!(
        &params.data[..usize::from(params.size)],
        format!("Fparam.pck\t{size}\0").as_bytes()
    );
    let mut past = named(2, 0, op::LIST_DIRECTORY, "@PARAM");
    past.offset = 1;
    assert_eq!(
        nak_code(&one(&mut s, &past, 0, &mut src)),
        Some(Error::EndOfFile as u8)
    );
    let crc = one(
        &mut s,
        &named(3, 0, op::CALC_FILE_CRC32, "@MISSION/mission.dat"),
        0,
        &mut src,
    );
    let bytes = files::build(File::Mission, DATA_LEN, &mut src).unwrap();
    assert_eq!(&crc.data[..4], &files::crc32(&bytes).to_le_bytes());
}

#[test]
fn hostile_payloads_never_panic_and_every_request_is_answered_or_eaten() {
    let (mut s, mut src) = (Server::default(), fake(50));
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for i in 0..20_000u64 {
        let mut p = [0u8; 251];
        p.iter_mut().for_each(|b| *b = next() as u8);
        // Mostly the opcodes served, on a few sessions, small offsets.
        p[2] %= 8;
        p[3] = [
            op::OPEN_FILE_RO,
            op::READ_FILE,
            op::BURST_READ_FILE,
            op::LIST_DIRECTORY,
            op::TERMINATE_SESSION,
            p[3],
        ][(p[3] % 6) as usize];
        if i % 3 == 0 {
            let path: &[u8] =
                [&b"@PARAM/param.pck"[..], b"@MISSION/mission.dat", b"/"][(i % 9 / 3) as usize];
            p[4] = path.len() as u8;
            p[12..12 + path.len()].copy_from_slice(path);
            p[8..12].copy_from_slice(&((next() % 4000) as u32).to_le_bytes());
        }
        let out = s.handle(ME, &Packet::parse(&p), i * 1000, &mut src);
        if p[3] != op::ACK && p[3] != op::NAK {
            assert!(!out.replies.is_empty());
        }
        assert!(out.replies.len() <= BURST_PACKETS as usize);
        assert!(s.sessions.len() <= MAX_SESSIONS);
    }
}

//! The files the MAVFTP server serves, laid out as ArduPilot's virtual
//! filesystem lays them out (`libraries/AP_Filesystem`, master as read for
//! this: `AP_Filesystem_Param.cpp` and its `README.md`,
//! `AP_Filesystem_Mission.cpp/.h`), so that MAVProxy's and pymavlink's
//! decoders (`param_ftp.py`, `mavftp.py`, `mission_item_protocol.py`)
//! read them as they read ArduPilot's:
//!
//! - `@PARAM/param.pck`: the parameter table packed. A 6-byte header
//!   (little-endian u16s: magic 0x671b, or 0x671c with defaults; the
//!   parameters in the file; the table's total), then per parameter a type
//!   byte (AP_Param's: INT32 3, FLOAT 4; bit 4 set when a default
//!   follows), a byte with the name bytes shared with the previous name
//!   (low nibble, 0 to 15) and the new name bytes minus one (high nibble),
//!   the new name bytes, the value (and the default), little-endian. Zero
//!   bytes pad an entry so that its last value never crosses a block of the
//!   size the client reads in (a block read again after a loss then never
//!   splits a value). `?start=N&count=C` and `?withdefaults=1` (a default
//!   is sent only where it differs from the value) are ArduPilot's query.
//! - `@MISSION/mission.dat`: a 10-byte header (u16s: magic 0x763d, the
//!   mission type, options, the first item, the item count), then each
//!   item as a MISSION_ITEM_INT payload in MAVLink's wire order, 38 bytes.
//!
//! A directory listing names `@PARAM` and `@MISSION` at the root, as
//! ArduPilot lists its virtual directories there; listing `@PARAM` and
//! `@MISSION` themselves (which ArduPilot's backends do not) names their
//! one file each with its size.

use mavlink::dialects::common::{MISSION_ITEM_INT_DATA, MavMissionType};
use mavlink::{MavlinkVersion, MessageData};

use crate::gcs::params::ParamValue;

const PARAM_MAGIC: u16 = 0x671b;
const PARAM_MAGIC_DEFAULTS: u16 = 0x671c;
const PARAM_HEADER_LEN: usize = 6;
/// AP_Param's type numbers.
const AP_PARAM_INT32: u8 = 3;
const AP_PARAM_FLOAT: u8 = 4;
/// The longest name an entry holds (MAVLink's `param_id`).
const NAME_MAX: usize = 16;
const MISSION_MAGIC: u16 = 0x763d;

/// A file this vehicle serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum File {
    /// `@PARAM/param.pck`, with its query.
    Params(Query),
    /// `@MISSION/mission.dat`.
    Mission,
}

/// `param.pck`'s query string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct Query {
    /// The first parameter sent.
    start: u16,
    /// How many, at most (0: all from `start`).
    count: u16,
    /// Defaults asked for (`withdefaults=1`).
    pub(super) defaults: bool,
}

/// Why a file cannot be served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Refusal {
    /// No such file or directory (ArduPilot's ENOENT).
    NotFound,
    /// A query it does not take, or a start past the table (ArduPilot's
    /// EINVAL).
    Invalid,
    /// The vehicle could not make it: why, for a STATUSTEXT.
    Failed(String),
}

/// One parameter as the file holds it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Param {
    pub(super) name: String,
    pub(super) value: ParamValue,
    /// The library's default (None where the library gives none).
    pub(super) default: Option<ParamValue>,
}

/// What the files are made of, as the vehicle has it now.
pub(super) trait Source {
    /// The whole parameter table in its order, values as PARAM_VALUE reads
    /// them; with their defaults when `defaults` and the library gives them.
    fn params(&mut self, defaults: bool) -> Result<Vec<Param>, String>;
    /// The mission as a MISSION_REQUEST_LIST download sends it.
    fn mission(&mut self) -> Vec<MISSION_ITEM_INT_DATA>;
}

/// An entry of a directory listing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Entry {
    Dir(&'static str),
    File(&'static str, File),
}

/// The file `path` names (one leading `/` allowed).
pub(super) fn resolve(path: &str) -> Result<File, Refusal> {
    let path = path.strip_prefix('/').unwrap_or(path);
    if path == "@MISSION/mission.dat" {
        return Ok(File::Mission);
    }
    let Some(rest) = path.strip_prefix("@PARAM/param.pck") else {
        return Err(Refusal::NotFound);
    };
    match rest.strip_prefix('?') {
        None if rest.is_empty() => Ok(File::Params(Query::default())),
        None => Err(Refusal::NotFound),
        Some(query) => parse_query(query).map(File::Params),
    }
}

/// `start=N&count=C&withdefaults=0|1`; other keys are passed over, as
/// ArduPilot's parser passes them.
fn parse_query(query: &str) -> Result<Query, Refusal> {
    let mut q = Query::default();
    for pair in query.split('&') {
        let Some((key, value)) = pair.split_once('=') else {
            continue;
        };
        let number = || value.parse::<u16>().ok().filter(|&v| v < u16::MAX);
        match key {
            "start" => q.start = number().ok_or(Refusal::Invalid)?,
            "count" => q.count = number().ok_or(Refusal::Invalid)?,
            "withdefaults" => {
                q.defaults = match value {
                    "0" => false,
                    "1" => true,
                    _ => return Err(Refusal::Invalid),
                }
            }
            _ => {}
        }
    }
    Ok(q)
}

/// The entries of directory `dir` (a trailing or leading `/` allowed).
pub(super) fn list(dir: &str) -> Result<Vec<Entry>, Refusal> {
    let dir = dir.strip_prefix('/').unwrap_or(dir);
    let dir = dir.strip_suffix('/').unwrap_or(dir);
    match dir {
        "" => Ok(vec![Entry::Dir("@PARAM"), Entry::Dir("@MISSION")]),
        "@PARAM" => Ok(vec![Entry::File(
            "param.pck",
            File::Params(Query::default()),
        )]),
        "@MISSION" => Ok(vec![Entry::File("mission.dat", File::Mission)]),
        _ => Err(Refusal::NotFound),
    }
}

/// `file`'s bytes now, padded (param.pck) for reads of `block` bytes.
pub(super) fn build(file: File, block: usize, source: &mut dyn Source) -> Result<Vec<u8>, Refusal> {
    match file {
        File::Params(q) => {
            let table = source.params(q.defaults).map_err(Refusal::Failed)?;
            param_pck(&table, q, block)
        }
        File::Mission => mission_dat(&source.mission()),
    }
}

/// The packed parameter file of `table` (see the module's doc).
pub(super) fn param_pck(table: &[Param], q: Query, block: usize) -> Result<Vec<u8>, Refusal> {
    let total = u16::try_from(table.len())
        .map_err(|_| Refusal::Failed(format!("{} parameters do not fit param.pck", table.len())))?;
    if total <= q.start {
        return Err(Refusal::Invalid);
    }
    let mut sent = &table[usize::from(q.start)..];
    if q.count > 0 && sent.len() > usize::from(q.count) {
        sent = &sent[..usize::from(q.count)];
    }
    // With defaults only when the library gives them (else the plain file,
    // as an ArduPilot built without defaults answers).
    let defaults = q.defaults && table.iter().all(|p| p.default.is_some());
    let magic = if defaults {
        PARAM_MAGIC_DEFAULTS
    } else {
        PARAM_MAGIC
    };
    let mut out = Vec::with_capacity(PARAM_HEADER_LEN + sent.len() * 12);
    out.extend_from_slice(&magic.to_le_bytes());
    out.extend_from_slice(&(sent.len() as u16).to_le_bytes());
    out.extend_from_slice(&total.to_le_bytes());
    let mut last: &[u8] = &[];
    for p in sent {
        let name = p.name.as_bytes();
        if name.is_empty() || name.len() > NAME_MAX {
            return Err(Refusal::Failed(format!(
                "parameter {:?}: param.pck holds names of 1 to {NAME_MAX} bytes",
                p.name
            )));
        }
        let mut common = name.iter().zip(last).take_while(|(a, b)| a == b).count();
        common = common.min(15).min(name.len() - 1);
        let fresh = &name[common..];
        let default = p.default.filter(|d| defaults && *d != p.value);
        let value_len = 4;
        let len = 2 + fresh.len() + value_len + if default.is_some() { value_len } else { 0 };
        // The entry's end, unpadded: its last value must not cross a block.
        let end_mod = (out.len() + len) % block.max(1);
        if end_mod > 0 && end_mod < value_len {
            out.resize(out.len() + value_len - end_mod, 0);
        }
        let kind = match p.value {
            ParamValue::I32(_) => AP_PARAM_INT32,
            ParamValue::F32(_) => AP_PARAM_FLOAT,
        };
        out.push(kind | (u8::from(default.is_some()) << 4));
        out.push(common as u8 | (((fresh.len() - 1) as u8) << 4));
        out.extend_from_slice(fresh);
        for v in std::iter::once(p.value).chain(default) {
            // A default is in the value's type.
            match (p.value, v) {
                (ParamValue::I32(_), ParamValue::I32(v)) => out.extend(v.to_le_bytes()),
                (ParamValue::I32(_), ParamValue::F32(v)) => out.extend((v as i32).to_le_bytes()),
                (ParamValue::F32(_), ParamValue::F32(v)) => out.extend(v.to_le_bytes()),
                (ParamValue::F32(_), ParamValue::I32(v)) => out.extend((v as f32).to_le_bytes()),
            }
        }
        last = name;
    }
    Ok(out)
}

/// The mission file of `items` (see the module's doc).
pub(super) fn mission_dat(items: &[MISSION_ITEM_INT_DATA]) -> Result<Vec<u8>, Refusal> {
    let count = u16::try_from(items.len())
        .map_err(|_| Refusal::Failed(format!("{} items do not fit mission.dat", items.len())))?;
    let len = MISSION_ITEM_INT_DATA::ENCODED_LEN;
    let mut out = Vec::with_capacity(10 + items.len() * len);
    out.extend_from_slice(&MISSION_MAGIC.to_le_bytes());
    out.extend_from_slice(&(MavMissionType::MAV_MISSION_TYPE_MISSION as u16).to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes()); // options
    out.extend_from_slice(&0u16.to_le_bytes()); // the first item
    out.extend_from_slice(&count.to_le_bytes());
    let mut buf = vec![0u8; len];
    for item in items {
        buf.fill(0);
        // The whole payload, extensions included: MAVLink 2 only trims the
        // trailing zeros from the length it returns.
        item.ser(MavlinkVersion::V2, &mut buf);
        out.extend_from_slice(&buf);
    }
    Ok(out)
}

/// The CRC ArduPilot's `crc_crc32` computes (the reflected CRC-32 table
/// from a zero seed, no final inversion: zlib's CRC-32 with both of its
/// inversions undone), which CalcFileCRC32 answers and MAVProxy's
/// `crclocal` computes.
pub(super) fn crc32(bytes: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new_with_initial(0xFFFF_FFFF);
    h.update(bytes);
    h.finalize() ^ 0xFFFF_FFFF
}

#[cfg(test)]
mod tests {
    use super::*;
    use mavlink::dialects::common::{MavCmd, MavFrame};

    fn p(name: &str, value: ParamValue, default: Option<ParamValue>) -> Param {
        Param {
            name: name.into(),
            value,
            default,
        }
    }

    fn small() -> Vec<Param> {
        vec![
            p(
                "MPC_XY_VEL_MAX",
                ParamValue::F32(12.0),
                Some(ParamValue::F32(12.0)),
            ),
            p(
                "MPC_Z_VEL_MAX_UP",
                ParamValue::F32(3.0),
                Some(ParamValue::F32(3.0)),
            ),
            p(
                "COM_RC_LOSS_T",
                ParamValue::I32(-2),
                Some(ParamValue::I32(5)),
            ),
        ]
    }

    #[test]
    fn param_pck_is_the_packed_format_ardupilot_documents() {
        let bytes = param_pck(&small(), Query::default(), 239).unwrap();
        let mut want = vec![0x1b, 0x67, 3, 0, 3, 0];
        // FLOAT, nothing shared, 14 name bytes (13 in the high nibble).
        want.extend([4, 13 << 4]);
        want.extend(b"MPC_XY_VEL_MAX");
        want.extend(12.0f32.to_le_bytes());
        // "MPC_" shared (4), "Z_VEL_MAX_UP" new (12 bytes: 11).
        want.extend([4, 4 | (11 << 4)]);
        want.extend(b"Z_VEL_MAX_UP");
        want.extend(3.0f32.to_le_bytes());
        // INT32, nothing shared, 13 bytes.
        want.extend([3, 12 << 4]);
        want.extend(b"COM_RC_LOSS_T");
        want.extend((-2i32).to_le_bytes());
        assert_eq!(bytes, want);
    }

    #[test]
    fn defaults_are_sent_where_they_differ_with_the_other_magic() {
        let q = Query {
            defaults: true,
            ..Query::default()
        };
        let bytes = param_pck(&small(), q, 239).unwrap();
        assert_eq!(&bytes[..2], &[0x1c, 0x67]);
        // The last entry: flag set, the value then the default.
        let tail = &bytes[bytes.len() - (2 + 13 + 8)..];
        assert_eq!(tail[0], 3 | (1 << 4));
        assert_eq!(&tail[15..19], &(-2i32).to_le_bytes());
        assert_eq!(&tail[19..], &5i32.to_le_bytes());
        // The others equal their defaults: no flag, no default.
        assert_eq!(bytes[6], 4);
        // A library without defaults: the plain file.
        let mut none = small();
        none[0].default = None;
        assert_eq!(&param_pck(&none, q, 239).unwrap()[..2], &[0x1b, 0x67]);
    }

    #[test]
    fn a_value_never_crosses_a_block_pad_bytes_go_before_its_entry() {
        // Block 20: the first entry is 6 + 2 + 14 + 4 = 26 bytes long,
        // ending 6 bytes into the second block: no pad. The second ends at
        // 26 + 18 = 44 (4 into the third block, its value exactly in it);
        // the third would end at 44 + 19 = 63 (3 into the fourth block,
        // its value split): one zero byte before it.
        let bytes = param_pck(&small(), Query::default(), 20).unwrap();
        let plain = param_pck(&small(), Query::default(), 239).unwrap();
        assert_eq!(bytes.len(), plain.len() + 1);
        assert_eq!(bytes[44], 0);
        assert_eq!(&bytes[45..], &plain[44..]);
        assert_eq!(bytes.len() % 20, 4);
    }

    #[test]
    fn start_and_count_send_part_of_the_table_and_a_start_past_it_is_invalid() {
        let q = |query: &str| match resolve(&format!("@PARAM/param.pck?{query}")) {
            Ok(File::Params(q)) => q,
            other => panic!("{other:?}"),
        };
        let bytes = param_pck(&small(), q("start=1&count=1"), 239).unwrap();
        assert_eq!(&bytes[..6], &[0x1b, 0x67, 1, 0, 3, 0]);
        // The first entry sent shares nothing (no previous name).
        assert_eq!(bytes[7], 15 << 4);
        assert_eq!(
            param_pck(&small(), q("start=3"), 239),
            Err(Refusal::Invalid)
        );
        assert_eq!(
            resolve("@PARAM/param.pck?withdefaults=2"),
            Err(Refusal::Invalid)
        );
        assert_eq!(resolve("@PARAM/param.pck?count=x"), Err(Refusal::Invalid));
        assert!(q("foo=1&withdefaults=1").defaults);
        assert_eq!(resolve("@PARAM/param.pckx"), Err(Refusal::NotFound));
        assert_eq!(resolve("/@MISSION/mission.dat"), Ok(File::Mission));
        assert_eq!(resolve("@MISSION/fence.dat"), Err(Refusal::NotFound));
    }

    #[test]
    fn names_sharing_more_than_fifteen_bytes_or_equal_still_pack() {
        let table = vec![
            p("ABCDEFGHIJKLMNOP", ParamValue::I32(1), None),
            p("ABCDEFGHIJKLMNOQ", ParamValue::I32(2), None),
            p("ABCDEFGHIJKLMNOQ", ParamValue::I32(3), None),
            p("SEVENTEEN_BYTES_X", ParamValue::I32(4), None),
        ];
        assert!(matches!(
            param_pck(&table, Query::default(), 239),
            Err(Refusal::Failed(_))
        ));
        let bytes = param_pck(&table[..3], Query::default(), 239).unwrap();
        // Second: 15 shared, "Q" new; third (the same name): 15 shared, "Q".
        assert_eq!(&bytes[6 + 22..6 + 22 + 3], &[3, 15, b'Q']);
        assert_eq!(&bytes[6 + 22 + 7..6 + 22 + 10], &[3, 15, b'Q']);
    }

    #[test]
    fn mission_dat_is_the_header_then_each_item_as_its_payload() {
        let item = MISSION_ITEM_INT_DATA {
            x: 473_977_420,
            y: 85_455_940,
            z: 10.0,
            seq: 1,
            command: MavCmd::MAV_CMD_NAV_WAYPOINT,
            frame: MavFrame::MAV_FRAME_GLOBAL_RELATIVE_ALT_INT,
            autocontinue: 1,
            ..Default::default()
        };
        let bytes = mission_dat(&[item.clone(), item]).unwrap();
        assert_eq!(&bytes[..10], &[0x3d, 0x76, 0, 0, 0, 0, 0, 0, 2, 0]);
        assert_eq!(bytes.len(), 10 + 2 * 38);
        let i = &bytes[10..48];
        // Wire order: param1-4, x, y, z, seq, command, target system and
        // component, frame, current, autocontinue, mission type.
        assert_eq!(&i[16..20], &473_977_420i32.to_le_bytes());
        assert_eq!(&i[24..28], &10.0f32.to_le_bytes());
        assert_eq!(&i[28..32], &[1, 0, 16, 0]);
        assert_eq!(&i[32..38], &[0, 0, 6, 0, 1, 0]);
    }

    #[test]
    fn the_crc_is_ardupilots_crc32_not_zlibs() {
        // zlib.crc32(b"123456789", 0xffffffff) ^ 0xffffffff, as MAVProxy's
        // crclocal computes it.
        assert_eq!(crc32(b"123456789"), 0x2DFD_2D88);
        assert_eq!(crc32(b""), 0);
    }
}

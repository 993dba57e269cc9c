//! What is wrong with a library file, said before the dynamic loader is
//! asked: missing, not a regular file, unreadable, empty, not ELF, truncated,
//! or built for another word size, byte order or machine. The loader's own
//! message (`dlerror`) covers the rest (a missing dependency, an unresolved
//! symbol) and is always kept.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::AbiError;

/// ELF header facts of this build's target.
#[cfg(target_pointer_width = "64")]
const OWN_CLASS: u8 = 2;
#[cfg(target_pointer_width = "32")]
const OWN_CLASS: u8 = 1;
#[cfg(target_endian = "little")]
const OWN_DATA: u8 = 1;
#[cfg(target_endian = "big")]
const OWN_DATA: u8 = 2;
#[cfg(target_arch = "x86_64")]
const OWN_MACHINE: Option<u16> = Some(62);
#[cfg(target_arch = "aarch64")]
const OWN_MACHINE: Option<u16> = Some(183);
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const OWN_MACHINE: Option<u16> = None;

fn machine_name(m: u16) -> String {
    match m {
        3 => "x86 (i386)".into(),
        8 => "MIPS".into(),
        20 => "PowerPC".into(),
        21 => "PowerPC64".into(),
        40 => "ARM (32-bit)".into(),
        62 => "x86-64".into(),
        183 => "AArch64".into(),
        243 => "RISC-V".into(),
        other => format!("machine {other}"),
    }
}

/// Checks the file at `path` and returns its canonical path. Errors say
/// what is wrong in words; `Ok` means the loader may try it.
pub fn check(path: &Path) -> Result<PathBuf, AbiError> {
    let load_err = |reason: String| AbiError::LibraryLoad {
        path: path.to_path_buf(),
        reason,
    };
    let canonical = match std::fs::canonicalize(path) {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(AbiError::LibraryNotFound {
                path: path.to_path_buf(),
            });
        }
        // ELOOP and friends: the system's words.
        Err(e) => return Err(load_err(e.to_string())),
    };
    let meta = std::fs::metadata(&canonical).map_err(|e| load_err(e.to_string()))?;
    if !meta.is_file() {
        return Err(load_err("not a regular file".into()));
    }
    let mut file = std::fs::File::open(&canonical)
        .map_err(|e| load_err(format!("cannot open it for reading: {e}")))?;
    if meta.len() == 0 {
        return Err(load_err("the file is empty".into()));
    }
    let mut ident = [0u8; 64];
    let n = read_up_to(&mut file, &mut ident).map_err(|e| load_err(e.to_string()))?;
    if n < 4 || &ident[..4] != b"\x7fELF" {
        // Not ELF: let the platform's loader judge (another format may be
        // native elsewhere), but on ELF platforms say so plainly.
        if cfg!(target_os = "linux") {
            return Err(load_err("not an ELF shared object (no ELF magic)".into()));
        }
        return Ok(canonical);
    }
    let header_len = if ident[4] == 2 { 64 } else { 52 };
    if n < header_len {
        return Err(load_err(format!(
            "truncated ELF file: {} bytes, shorter than its header",
            meta.len()
        )));
    }
    match ident[4] {
        c if c == OWN_CLASS => {}
        1 | 2 => {
            return Err(load_err(format!(
                "wrong ELF class: the library is {}-bit, this harness is {}-bit",
                if ident[4] == 1 { 32 } else { 64 },
                if OWN_CLASS == 1 { 32 } else { 64 },
            )));
        }
        other => return Err(load_err(format!("invalid ELF class byte {other}"))),
    }
    if ident[5] != OWN_DATA {
        return Err(load_err(
            "wrong byte order: the library was built for another endianness".into(),
        ));
    }
    let machine = if OWN_DATA == 1 {
        u16::from_le_bytes([ident[18], ident[19]])
    } else {
        u16::from_be_bytes([ident[18], ident[19]])
    };
    if let Some(own) = OWN_MACHINE
        && machine != own
    {
        return Err(load_err(format!(
            "wrong machine: the library is for {}, this harness runs on {}",
            machine_name(machine),
            machine_name(own)
        )));
    }
    // The section and program header tables must lie inside the file.
    let (phoff, phnum, phentsize) = if OWN_CLASS == 2 {
        (
            u64::from_le_bytes(ident[32..40].try_into().unwrap_or_default()),
            u16::from_le_bytes([ident[56], ident[57]]) as u64,
            u16::from_le_bytes([ident[54], ident[55]]) as u64,
        )
    } else {
        (
            u32::from_le_bytes(ident[28..32].try_into().unwrap_or_default()) as u64,
            u16::from_le_bytes([ident[44], ident[45]]) as u64,
            u16::from_le_bytes([ident[42], ident[43]]) as u64,
        )
    };
    let ph_end = phoff.saturating_add(phnum.saturating_mul(phentsize));
    if OWN_DATA == 1 && ph_end > meta.len() {
        return Err(load_err(format!(
            "truncated ELF file: {} bytes, its program headers end at byte {ph_end}",
            meta.len(),
        )));
    }
    // Every loadable segment's file contents must be in the file.
    if OWN_DATA == 1 && OWN_CLASS == 2 && phentsize >= 56 && phnum <= 4096 {
        use std::io::{Seek, SeekFrom};
        let mut table = vec![0u8; (phnum * phentsize) as usize];
        file.seek(SeekFrom::Start(phoff))
            .and_then(|_| file.read_exact(&mut table))
            .map_err(|e| load_err(format!("cannot read its program headers: {e}")))?;
        for h in table.chunks_exact(phentsize as usize) {
            let p_type = u32::from_le_bytes(h[0..4].try_into().unwrap_or_default());
            let offset = u64::from_le_bytes(h[8..16].try_into().unwrap_or_default());
            let filesz = u64::from_le_bytes(h[32..40].try_into().unwrap_or_default());
            let end = offset.saturating_add(filesz);
            if p_type == 1 && end > meta.len() {
                return Err(load_err(format!(
                    "truncated ELF file: {} bytes, a loadable segment ends at byte {end}",
                    meta.len()
                )));
            }
        }
    }
    Ok(canonical)
}

fn read_up_to(file: &mut std::fs::File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match file.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

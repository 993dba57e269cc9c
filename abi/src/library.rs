//! Loading an autopilot library and the handshake: ABI version, then every
//! shared struct's layout, field by field.

use std::ffi::c_char;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use libloading::Library;
use serde::{Deserialize, Serialize};

use crate::SymbolGroup;
use crate::file_checks;
use crate::layout::{self, FieldLayout, StructLayout, StructReport};
use crate::symbols::{Optional, Required, Resolved};
use crate::{AbiError, ffi};

/// Longest name the loader reads from a library's static strings.
const MAX_NAME_LEN: usize = 256;
/// Every `LOCKSTEP_AP_CAP_*` bit this harness knows; a library reporting
/// another bit promises something the harness cannot honour.
pub const KNOWN_CAPABILITIES: u32 = ffi::LOCKSTEP_AP_CAP_REENTRANT;
/// Whether this harness loads libraries of ABI `version`: this header's,
/// or an older one it still speaks (`LOCKSTEP_AUTOPILOT_ABI_OLDEST` on).
pub fn abi_supported(version: u32) -> bool {
    (ffi::LOCKSTEP_AUTOPILOT_ABI_OLDEST..=ffi::LOCKSTEP_AUTOPILOT_ABI_VERSION).contains(&version)
}

/// Largest struct and field counts accepted in a layout table.
const MAX_STRUCTS: u32 = 256;
const MAX_FIELDS: u32 = 1024;

/// A loaded library that passed the handshake. Cheap to clone; the library
/// stays loaded as long as any clone or instance lives.
#[derive(Debug, Clone)]
pub struct AutopilotLibrary {
    pub(crate) inner: Arc<LibInner>,
}

#[derive(Debug)]
pub(crate) struct LibInner {
    pub path: PathBuf,
    /// Identifies the loaded object across paths (symlinks, hard links).
    pub identity: String,
    pub req: Required,
    pub opt: Optional,
    pub capabilities: u32,
    /// The ABI version the library implements (one [`abi_supported`]).
    pub abi_version: u32,
    pub name: Option<String>,
    /// Declared last: dropped after nothing else can call into it.
    _lib: Library,
}

/// The outcome of a layout check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum LayoutVerdict {
    /// Not compared (missing symbols or a different ABI version).
    NotChecked { reason: String },
    /// The table could not be read.
    Unreadable { reason: String },
    /// Compared struct by struct.
    Compared(Vec<StructReport>),
}

/// Everything learnt from a library, usable or not (what `check-lib`
/// prints). Plain data: a host process sends it to the harness.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
    pub path: PathBuf,
    pub abi_version: Option<u32>,
    pub capabilities: Option<u32>,
    pub name: Option<String>,
    pub missing_required: Vec<String>,
    pub optional_found: Vec<String>,
    pub optional_missing: Vec<String>,
    pub layout: LayoutVerdict,
}

/// A loaded library and its [`Report`], before judgement.
#[derive(Debug)]
pub struct Inspection {
    pub report: Report,
    identity: String,
    resolved: Resolved,
    lib: Library,
}

impl std::ops::Deref for Inspection {
    type Target = Report;
    fn deref(&self) -> &Report {
        &self.report
    }
}

impl Report {
    /// The first reason the library cannot be used, if any.
    pub fn problem(&self) -> Option<AbiError> {
        let path = self.path.clone();
        if !self.missing_required.is_empty() {
            return Some(AbiError::MissingSymbol {
                path,
                names: self
                    .missing_required
                    .iter()
                    .map(|s| s.to_string())
                    .collect(),
            });
        }
        let groups: [(&[&str], SymbolGroup); 2] = [
            (&crate::symbols::MIGRATION_SYMBOLS, SymbolGroup::Migration),
            (
                &crate::symbols::ENUMERATION_SYMBOLS,
                SymbolGroup::Enumeration,
            ),
        ];
        for (names, group) in groups {
            let present: Vec<(bool, &str)> = names
                .iter()
                .map(|n| (self.optional_found.iter().any(|f| f == n), *n))
                .collect();
            let some = present.iter().filter(|(f, _)| *f).count();
            if some > 0 && some < present.len() {
                let names = |found: bool| -> Vec<String> {
                    present
                        .iter()
                        .filter(|(f, _)| *f == found)
                        .map(|(_, n)| n.to_string())
                        .collect()
                };
                return Some(AbiError::PartialGroup {
                    path,
                    group,
                    found: names(true),
                    missing: names(false),
                });
            }
        }
        let found = self.abi_version.unwrap_or_default();
        let unknown = self.capabilities.unwrap_or_default() & !KNOWN_CAPABILITIES;
        if abi_supported(found) && unknown != 0 {
            return Some(AbiError::UnknownCapabilities {
                path,
                bits: unknown,
            });
        }
        if !abi_supported(found) {
            return Some(AbiError::AbiVersionMismatch {
                path,
                expected: ffi::LOCKSTEP_AUTOPILOT_ABI_VERSION,
                found,
            });
        }
        match &self.layout {
            LayoutVerdict::NotChecked { reason } | LayoutVerdict::Unreadable { reason } => {
                Some(AbiError::InvalidLayoutTable {
                    path,
                    reason: reason.clone(),
                })
            }
            LayoutVerdict::Compared(reports) => {
                let mismatches: Vec<_> =
                    reports.iter().flat_map(|r| r.mismatches.clone()).collect();
                (!mismatches.is_empty()).then_some(AbiError::LayoutMismatch { path, mismatches })
            }
        }
    }

    /// True when the library passed every check.
    pub fn usable(&self) -> bool {
        self.problem().is_none()
    }

    /// The report, when the library passed every check; otherwise the
    /// first problem.
    pub fn problem_free(self) -> Result<Report, AbiError> {
        match self.problem() {
            Some(e) => Err(e),
            None => Ok(self),
        }
    }
}

impl Inspection {
    /// The library, when it passed every check; otherwise the first problem.
    pub fn into_library(self) -> Result<AutopilotLibrary, AbiError> {
        if let Some(e) = self.problem() {
            return Err(e);
        }
        let req = self
            .resolved
            .required()
            .ok_or_else(|| AbiError::MissingSymbol {
                path: self.path.clone(),
                names: self
                    .missing_required
                    .iter()
                    .map(|s| s.to_string())
                    .collect(),
            })?;
        let report = self.report;
        Ok(AutopilotLibrary {
            inner: Arc::new(LibInner {
                path: report.path,
                identity: self.identity,
                req,
                opt: self.resolved.optional,
                capabilities: report.capabilities.unwrap_or_default(),
                abi_version: report.abi_version.unwrap_or_default(),
                name: report.name,
                _lib: self.lib,
            }),
        })
    }
}

impl AutopilotLibrary {
    /// Loads the library at `path` and performs the handshake.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, AbiError> {
        Self::inspect(path)?.into_library()
    }

    /// Loads the library and gathers everything about it without judging;
    /// fails only when the file cannot be loaded at all. The file is
    /// checked first (see `file_checks`), then loaded with every symbol bound
    /// at once (`RTLD_NOW`: an undefined symbol fails here, not in flight),
    /// and a failure keeps the system's reason.
    ///
    /// Loading runs the library's initialisers in this process: a library
    /// that crashes or exits while loading takes the process with it. The
    /// harness probes untrusted libraries in a child process first (see
    /// `isolate`).
    pub fn inspect(path: impl AsRef<Path>) -> Result<Inspection, AbiError> {
        let path = path.as_ref().to_path_buf();
        let canonical = file_checks::check(&path)?;
        let lib = crate::crash::in_call(crate::Function::Load, None, || open_now(&canonical))
            .map_err(|reason| AbiError::LibraryLoad {
                path: path.clone(),
                reason,
            })?;
        let resolved = Resolved::resolve(&lib);
        let abi_version = resolved.abi_version.map(|f| {
            // SAFETY: the library's own symbol with the header's signature; no arguments.
            unsafe { f() }
        });
        let capabilities = resolved.capabilities.map(|f| {
            // SAFETY: the library's own symbol with the header's signature; no arguments.
            unsafe { f() }
        });
        let name = resolved.optional.name.and_then(|f| {
            // SAFETY: returns a static NUL-terminated string or NULL.
            let p = unsafe { f() };
            let image = resolved.abi_version.and_then(|f| Image::of(f as *const u8));
            // SAFETY: p is NULL or a NUL-terminated string that lives with
            // the library; it is checked against the library's image.
            unsafe { bounded_cstr(p, image.as_ref()) }.ok()
        });
        let layout = match (abi_version, resolved.layout) {
            (_, None) => LayoutVerdict::NotChecked {
                reason: "lockstep_autopilot_layout is not exported".into(),
            },
            (Some(v), Some(f)) if abi_supported(v) => {
                // SAFETY: the header's layout function, no arguments; the
                // library's ABI version is one this harness knows, and the
                // table's own layout is the same in each.
                let table = unsafe { f() };
                let image = resolved.abi_version.and_then(|f| Image::of(f as *const u8));
                // SAFETY: `table` is what the library's layout function
                // returned; every pointer is checked against the library's
                // image before it is followed.
                match unsafe { read_table(table, v, image.as_ref()) } {
                    Ok(found) => {
                        LayoutVerdict::Compared(layout::compare(&layout::expected_for(v), &found))
                    }
                    Err(reason) => LayoutVerdict::Unreadable { reason },
                }
            }
            _ => LayoutVerdict::NotChecked {
                reason: "the ABI version differs, so the layout table cannot be read".into(),
            },
        };
        let names = |v: Vec<&str>| v.into_iter().map(str::to_string).collect();
        Ok(Inspection {
            identity: identity_of(&canonical),
            report: Report {
                path,
                abi_version,
                capabilities,
                name,
                missing_required: names(resolved.missing_required()),
                optional_found: names(resolved.optional.names(true)),
                optional_missing: names(resolved.optional.names(false)),
                layout,
            },
            resolved,
            lib,
        })
    }

    /// The path it was loaded from.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// `LOCKSTEP_AP_CAP_*` bits.
    pub fn capabilities(&self) -> u32 {
        self.inner.capabilities
    }

    /// True when the library exports the migration functions.
    pub fn migrates(&self) -> bool {
        let o = &self.inner.opt;
        o.snapshot_size.is_some() && o.snapshot.is_some() && o.restore.is_some()
    }

    /// True when several instances may live in one process.
    pub fn is_reentrant(&self) -> bool {
        self.inner.capabilities & ffi::LOCKSTEP_AP_CAP_REENTRANT != 0
    }

    /// The library's name/version string, when it exports one.
    pub fn name(&self) -> Option<&str> {
        self.inner.name.as_deref()
    }

    /// The ABI version the library implements.
    pub fn abi_version(&self) -> u32 {
        self.inner.abi_version
    }

    /// Optional symbols the library exports.
    pub fn optional_symbols(&self) -> Vec<&'static str> {
        self.inner.opt.names(true)
    }
}

/// Opens `path` with every symbol bound now; the error is the system's own
/// reason (`dlerror`), not just "dlopen failed".
#[cfg(unix)]
fn open_now(path: &Path) -> Result<Library, String> {
    use libloading::os::unix::{Library as UnixLibrary, RTLD_LOCAL, RTLD_NOW};
    // SAFETY: loading a shared library runs its initialisers; the harness
    // loads only the library its user names, which is the trust boundary of
    // this whole crate. The path is absolute, so no search path is used.
    match unsafe { UnixLibrary::open(Some(path), RTLD_NOW | RTLD_LOCAL) } {
        Ok(lib) => Ok(lib.into()),
        Err(e) => Err(dlerror_reason(&error_chain(&e), path)),
    }
}

#[cfg(not(unix))]
fn open_now(path: &Path) -> Result<Library, String> {
    // SAFETY: as above; Windows binds imports at load.
    unsafe { Library::new(path) }.map_err(|e| error_chain(&e))
}

/// The loader's reason without libloading's "dlopen failed" and the path
/// the message already names, e.g. `undefined symbol: foo`.
fn dlerror_reason(text: &str, path: &Path) -> String {
    let t = text.strip_prefix("dlopen failed: ").unwrap_or(text);
    let p = format!("{}: ", path.display());
    t.strip_prefix(&p).unwrap_or(t).to_string()
}

/// An error and its sources, joined: libloading's own text is "dlopen
/// failed", the reason is in its source.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let next = s.to_string();
        if !next.is_empty() && !text.contains(&next) {
            text = format!("{text}: {next}");
        }
        source = s.source();
    }
    text
}

/// The mapped image of a loaded library: pointers its layout table gives
/// must point into it (checked with `dladdr`, which reads nothing).
#[derive(Debug, Clone, Copy)]
struct Image {
    base: usize,
}

impl Image {
    /// The image holding the code at `sym`.
    fn of(sym: *const u8) -> Option<Image> {
        object_base(sym).map(|base| Image { base })
    }

    /// True when `len` bytes from `p` lie in this image.
    fn contains(&self, p: *const u8, len: usize) -> bool {
        if p.is_null() || len == 0 {
            return false;
        }
        let last = p.wrapping_add(len - 1);
        object_base(p) == Some(self.base) && object_base(last) == Some(self.base)
    }
}

#[cfg(unix)]
fn object_base(p: *const u8) -> Option<usize> {
    let mut info = libc::Dl_info {
        dli_fname: std::ptr::null(),
        dli_fbase: std::ptr::null_mut(),
        dli_sname: std::ptr::null(),
        dli_saddr: std::ptr::null_mut(),
    };
    // SAFETY: dladdr only looks the address up in the loader's tables; it
    // never dereferences it. `info` is a valid out-parameter.
    let found = unsafe { libc::dladdr(p.cast(), &mut info) };
    (found != 0 && !info.dli_fbase.is_null()).then_some(info.dli_fbase as usize)
}

#[cfg(not(unix))]
fn object_base(_p: *const u8) -> Option<usize> {
    None
}

#[cfg(unix)]
fn identity_of(canonical: &Path) -> String {
    use std::os::unix::fs::MetadataExt;
    match std::fs::metadata(canonical) {
        Ok(m) => format!("{}:{}", m.dev(), m.ino()),
        Err(_) => canonical.display().to_string(),
    }
}

#[cfg(not(unix))]
fn identity_of(canonical: &Path) -> String {
    canonical.display().to_string()
}

/// Reads a NUL-terminated string of at most [`MAX_NAME_LEN`] bytes; with an
/// image, every byte must lie in it (a string pointing elsewhere is an
/// error, not a read).
///
/// # Safety
/// `p` is NULL or points to a readable NUL-terminated string, or `image` is
/// given and the bytes of `p` that lie in it are readable.
unsafe fn bounded_cstr(p: *const c_char, image: Option<&Image>) -> Result<String, String> {
    if p.is_null() {
        return Err("NULL string".into());
    }
    let mut bytes = Vec::new();
    for i in 0..MAX_NAME_LEN {
        let at = p.wrapping_add(i).cast::<u8>();
        if let Some(img) = image
            && (i == 0 || (at as usize).is_multiple_of(4096))
            && !img.contains(at, 1)
        {
            return Err(format!("string at {p:p} runs outside the library"));
        }
        // SAFETY: the string is readable up to and including its NUL (or its
        // bytes lie in the library's image), and we stop at the first NUL.
        let b = unsafe { *at };
        if b == 0 {
            return Ok(String::from_utf8_lossy(&bytes).into_owned());
        }
        bytes.push(b);
    }
    Err(format!("string longer than {MAX_NAME_LEN} bytes"))
}

/// Copies a library's layout table into owned values, validating every
/// pointer and count before following it: with the library's image known,
/// every pointer and the whole extent its count implies must lie in it.
///
/// # Safety
/// `table` is NULL or points to a table with the layout of this ABI version,
/// whose pointers are NULL or valid for the counts they come with, or
/// `image` is given and whatever of the table lies in it is readable.
unsafe fn read_table(
    table: *const ffi::lockstep_layout_table,
    version: u32,
    image: Option<&Image>,
) -> Result<Vec<StructLayout>, String> {
    let inside = |p: *const u8, len: usize| image.is_none_or(|img| img.contains(p, len));
    if table.is_null() {
        return Err("lockstep_autopilot_layout() returned NULL".into());
    }
    if !inside(
        table.cast(),
        std::mem::size_of::<ffi::lockstep_layout_table>(),
    ) {
        return Err(format!("the table at {table:p} lies outside the library"));
    }
    // SAFETY: non-NULL, and valid per the contract or inside the library.
    let Some(t) = (unsafe { table.as_ref() }) else {
        return Err("lockstep_autopilot_layout() returned NULL".into());
    };
    if t.abi_version != version {
        return Err(format!(
            "the table is for ABI version {}, the library reports {version}",
            t.abi_version,
        ));
    }
    if t.struct_count > MAX_STRUCTS {
        return Err(format!(
            "struct_count {} is more than a table can hold (at most {MAX_STRUCTS})",
            t.struct_count
        ));
    }
    if t.struct_count > 0 && t.structs.is_null() {
        return Err(format!(
            "struct_count {} but structs is NULL",
            t.struct_count
        ));
    }
    let struct_bytes = t.struct_count as usize * std::mem::size_of::<ffi::lockstep_layout_struct>();
    if t.struct_count > 0 && !inside(t.structs.cast(), struct_bytes) {
        return Err(format!(
            "the {} structs at {:p} run outside the library's memory",
            t.struct_count, t.structs
        ));
    }
    let structs: &[ffi::lockstep_layout_struct] = if t.struct_count == 0 {
        &[]
    } else {
        // SAFETY: non-NULL, and valid for struct_count entries per the
        // contract or lying in the library's image.
        unsafe { std::slice::from_raw_parts(t.structs, t.struct_count as usize) }
    };
    let mut out: Vec<StructLayout> = Vec::with_capacity(structs.len());
    let n = structs.len();
    // Past a count larger than the array, entries are whatever follows it:
    // the messages name the entry, not its (garbage) contents.
    let garbage_hint = "; is struct_count larger than the table?";
    for (i, s) in structs.iter().enumerate() {
        // SAFETY: a string of the table, checked against the image.
        let name = unsafe { bounded_cstr(s.name, image) }
            .map_err(|e| format!("entry {i} of {n}: its name {e}{garbage_hint}"))?;
        if out.iter().any(|o| o.name == name) {
            return Err(format!("{name} is listed twice"));
        }
        let at = format!("entry {i} of {n} ({name})");
        if s.field_count > MAX_FIELDS {
            return Err(format!(
                "{at}: field_count {} is more than a struct can hold (at most {MAX_FIELDS})",
                s.field_count
            ));
        }
        if s.field_count > 0 && s.fields.is_null() {
            return Err(format!(
                "{at}: field_count {} but fields is NULL",
                s.field_count
            ));
        }
        let field_bytes =
            s.field_count as usize * std::mem::size_of::<ffi::lockstep_layout_field>();
        if s.field_count > 0 && !inside(s.fields.cast(), field_bytes) {
            return Err(format!(
                "entry {i} of {n}: its fields run outside the library's memory{garbage_hint}"
            ));
        }
        let fields: &[ffi::lockstep_layout_field] = if s.field_count == 0 {
            &[]
        } else {
            // SAFETY: non-NULL, and valid for field_count entries per the
            // contract or lying in the library's image.
            unsafe { std::slice::from_raw_parts(s.fields, s.field_count as usize) }
        };
        let mut fl: Vec<FieldLayout> = Vec::with_capacity(fields.len());
        for f in fields {
            // SAFETY: strings of the table, checked against the image.
            let fname = unsafe { bounded_cstr(f.name, image) }
                .map_err(|e| format!("{at}: a field's name {e}"))?;
            if fl.iter().any(|o| o.name == fname) {
                return Err(format!("{name}.{fname} is listed twice"));
            }
            let type_name = if f.type_name.is_null() {
                None
            } else {
                // SAFETY: as above.
                Some(
                    unsafe { bounded_cstr(f.type_name, image) }
                        .map_err(|e| format!("{name}.{fname} type name: {e}"))?,
                )
            };
            fl.push(FieldLayout {
                name: fname,
                type_name,
                type_code: f.type_code,
                offset: f.offset,
                count: f.count,
                elem_size: f.elem_size,
            });
        }
        out.push(StructLayout {
            name,
            size: s.size,
            align: s.align,
            fields: fl,
        });
    }
    Ok(out)
}

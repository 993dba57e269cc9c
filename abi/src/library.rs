//! Loading an autopilot library and the handshake: ABI version, then every
//! shared struct's layout, field by field.

use std::ffi::c_char;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use libloading::Library;

use crate::layout::{self, FieldLayout, StructLayout, StructReport};
use crate::symbols::{Optional, Required, Resolved};
use crate::{AbiError, ffi};

/// Longest name the loader reads from a library's static strings.
const MAX_NAME_LEN: usize = 256;
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
    pub name: Option<String>,
    /// Declared last: dropped after nothing else can call into it.
    _lib: Library,
}

/// The outcome of a layout check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LayoutVerdict {
    /// Not compared (missing symbols or a different ABI version).
    NotChecked { reason: String },
    /// The table could not be read.
    Unreadable { reason: String },
    /// Compared struct by struct.
    Compared(Vec<StructReport>),
}

/// Everything learnt from a library, usable or not (what `check-lib` prints).
#[derive(Debug)]
pub struct Inspection {
    pub path: PathBuf,
    pub abi_version: Option<u32>,
    pub capabilities: Option<u32>,
    pub name: Option<String>,
    pub missing_required: Vec<&'static str>,
    pub optional_found: Vec<&'static str>,
    pub optional_missing: Vec<&'static str>,
    pub layout: LayoutVerdict,
    identity: String,
    resolved: Resolved,
    lib: Library,
}

impl Inspection {
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
        let found = self.abi_version.unwrap_or_default();
        if found != ffi::LOCKSTEP_AUTOPILOT_ABI_VERSION {
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
        Ok(AutopilotLibrary {
            inner: Arc::new(LibInner {
                path: self.path,
                identity: self.identity,
                req,
                opt: self.resolved.optional,
                capabilities: self.capabilities.unwrap_or_default(),
                name: self.name,
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
    /// fails only when the file cannot be loaded at all.
    pub fn inspect(path: impl AsRef<Path>) -> Result<Inspection, AbiError> {
        let path = path.as_ref().to_path_buf();
        let canonical = std::fs::canonicalize(&path)
            .map_err(|_| AbiError::LibraryNotFound { path: path.clone() })?;
        if !canonical.is_file() {
            return Err(AbiError::LibraryLoad {
                path,
                reason: "not a regular file".into(),
            });
        }
        let Some(file_name) = canonical.to_str() else {
            return Err(AbiError::LibraryLoad {
                path,
                reason: "the path is not valid UTF-8".into(),
            });
        };
        // SAFETY: loading a shared library runs its initialisers; the harness
        // loads only the library its user names, which is the trust boundary
        // of this whole crate. The path is absolute, so no search path is used.
        let lib = unsafe { Library::new(file_name) }.map_err(|e| AbiError::LibraryLoad {
            path: path.clone(),
            reason: e.to_string(),
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
            // SAFETY: p is NULL or a NUL-terminated string that lives with the library.
            unsafe { bounded_cstr(p) }.ok()
        });
        let layout = match (abi_version, resolved.layout) {
            (_, None) => LayoutVerdict::NotChecked {
                reason: "lockstep_autopilot_layout is not exported".into(),
            },
            (Some(v), Some(f)) if v == ffi::LOCKSTEP_AUTOPILOT_ABI_VERSION => {
                // SAFETY: the header's layout function, no arguments; the
                // library's ABI version matches, so the table has the
                // header's layout.
                let table = unsafe { f() };
                // SAFETY: `table` is what the library's layout function returned.
                match unsafe { read_table(table) } {
                    Ok(found) => {
                        LayoutVerdict::Compared(layout::compare(&layout::expected(), &found))
                    }
                    Err(reason) => LayoutVerdict::Unreadable { reason },
                }
            }
            _ => LayoutVerdict::NotChecked {
                reason: "the ABI version differs, so the layout table cannot be read".into(),
            },
        };
        Ok(Inspection {
            identity: identity_of(&canonical),
            path,
            abi_version,
            capabilities,
            name,
            missing_required: resolved.missing_required(),
            optional_found: resolved.optional.names(true),
            optional_missing: resolved.optional.names(false),
            layout,
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

    /// True when several instances may live in one process.
    pub fn is_reentrant(&self) -> bool {
        self.inner.capabilities & ffi::LOCKSTEP_AP_CAP_REENTRANT != 0
    }

    /// The library's name/version string, when it exports one.
    pub fn name(&self) -> Option<&str> {
        self.inner.name.as_deref()
    }

    /// Optional symbols the library exports.
    pub fn optional_symbols(&self) -> Vec<&'static str> {
        self.inner.opt.names(true)
    }
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

/// Reads a NUL-terminated string of at most [`MAX_NAME_LEN`] bytes.
///
/// # Safety
/// `p` is NULL or points to a readable NUL-terminated string.
unsafe fn bounded_cstr(p: *const c_char) -> Result<String, String> {
    if p.is_null() {
        return Err("NULL string".into());
    }
    let mut bytes = Vec::new();
    for i in 0..MAX_NAME_LEN {
        // SAFETY: the string is readable up to and including its NUL, and we
        // stop at the first NUL.
        let b = unsafe { *p.add(i) } as u8;
        if b == 0 {
            return Ok(String::from_utf8_lossy(&bytes).into_owned());
        }
        bytes.push(b);
    }
    Err(format!("string longer than {MAX_NAME_LEN} bytes"))
}

/// Copies a library's layout table into owned values, validating every
/// pointer and count before following it.
///
/// # Safety
/// `table` is NULL or points to a table with the layout of this ABI version,
/// whose pointers are NULL or valid for the counts they come with.
unsafe fn read_table(
    table: *const ffi::lockstep_layout_table,
) -> Result<Vec<StructLayout>, String> {
    // SAFETY: NULL or valid per the contract.
    let Some(t) = (unsafe { table.as_ref() }) else {
        return Err("lockstep_autopilot_layout() returned NULL".into());
    };
    if t.abi_version != ffi::LOCKSTEP_AUTOPILOT_ABI_VERSION {
        return Err(format!(
            "the table is for ABI version {}, the library reports {}",
            t.abi_version,
            ffi::LOCKSTEP_AUTOPILOT_ABI_VERSION
        ));
    }
    if t.struct_count > MAX_STRUCTS || (t.struct_count > 0 && t.structs.is_null()) {
        return Err(format!(
            "struct_count {} with structs {:p}",
            t.struct_count, t.structs
        ));
    }
    let structs: &[ffi::lockstep_layout_struct] = if t.struct_count == 0 {
        &[]
    } else {
        // SAFETY: non-NULL and valid for struct_count entries per the contract.
        unsafe { std::slice::from_raw_parts(t.structs, t.struct_count as usize) }
    };
    let mut out = Vec::with_capacity(structs.len());
    for s in structs {
        // SAFETY: a string of the table, NULL or NUL-terminated.
        let name = unsafe { bounded_cstr(s.name) }.map_err(|e| format!("struct name: {e}"))?;
        if s.field_count > MAX_FIELDS || (s.field_count > 0 && s.fields.is_null()) {
            return Err(format!(
                "{name}: field_count {} with fields {:p}",
                s.field_count, s.fields
            ));
        }
        let fields: &[ffi::lockstep_layout_field] = if s.field_count == 0 {
            &[]
        } else {
            // SAFETY: non-NULL and valid for field_count entries per the contract.
            unsafe { std::slice::from_raw_parts(s.fields, s.field_count as usize) }
        };
        let mut fl = Vec::with_capacity(fields.len());
        for f in fields {
            // SAFETY: strings of the table, NULL or NUL-terminated.
            let fname =
                unsafe { bounded_cstr(f.name) }.map_err(|e| format!("{name} field name: {e}"))?;
            let type_name = if f.type_name.is_null() {
                None
            } else {
                // SAFETY: as above.
                Some(
                    unsafe { bounded_cstr(f.type_name) }
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

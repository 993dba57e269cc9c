//! A library's parameter table, as its enumeration (ABI 4's
//! `param_count` / `param_info`) lists it.

use serde::{Deserialize, Serialize};

/// Most parameters a table may list (MAVLink numbers them with 16 bits).
pub const MAX_PARAMS: u32 = 65_535;

/// A parameter's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ParamKind {
    F32,
    I32,
}

/// One parameter of the table: its value now and its default (the value
/// just after create()). An `I32`'s values are exact in the `f64`s.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Param {
    pub kind: ParamKind,
    pub value: f64,
    pub default: f64,
}

/// A named parameter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NamedParam {
    pub name: String,
    #[serde(flatten)]
    pub param: Param,
}

/// The name `param_info` wrote into `buf`: NUL-terminated within the
/// buffer, 1 to `LOCKSTEP_PARAM_NAME_MAX` bytes of printable ASCII (what
/// MAVLink's `param_id` carries).
pub(crate) fn name_from(buf: &[u8], index: u32) -> Result<String, String> {
    let end = buf
        .iter()
        .position(|&b| b == 0)
        .ok_or_else(|| format!("parameter {index}: its name is not NUL-terminated"))?;
    let bytes = &buf[..end];
    let max = crate::ffi::LOCKSTEP_PARAM_NAME_MAX as usize;
    if bytes.is_empty() || bytes.len() > max {
        return Err(format!(
            "parameter {index}: its name has {} bytes (1 to {max} allowed)",
            bytes.len()
        ));
    }
    if !bytes.iter().all(|b| b.is_ascii_graphic()) {
        return Err(format!(
            "parameter {index}: its name {:?} is not printable ASCII",
            String::from_utf8_lossy(bytes)
        ));
    }
    Ok(String::from_utf8_lossy(bytes).into_owned())
}

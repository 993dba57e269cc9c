//! MAVLink's parameter protocol on the vehicle's side: PARAM_REQUEST_LIST
//! sends the whole table (the library's own when it enumerates it, ABI 4),
//! each PARAM_VALUE with its index, the table's count and the parameter's
//! own type; PARAM_REQUEST_READ by index or by name; PARAM_SET applied
//! through the recorded inputs and answered with the value in force (a
//! refused set is answered too, with the value kept, and announced by
//! STATUSTEXT, so a station reports a rejection rather than retrying to a
//! timeout). Integers travel in the float as the style does: PX4 copies
//! their bytes, ArduPilot casts.

use lockstep_abi::ParamKind;
use lockstep_harness::engine::Engine;
use mavlink::dialects::common::*;

use super::Style;
use super::input::Input;
use super::vehicle::Vehicle;

/// The parameters ground stations see.
#[derive(Debug)]
pub(super) struct Table {
    names: Vec<String>,
    /// Each name's type, where the library says it (enumeration).
    kinds: Vec<Option<ParamKind>>,
    /// Whether the library was asked for its table yet.
    loaded: bool,
    /// The library listed its table (the names are all there are).
    enumerated: bool,
}

impl Table {
    /// Before the library is asked: the names a scenario sets.
    pub(super) fn new(set: Vec<String>) -> Table {
        let kinds = vec![None; set.len()];
        Table {
            names: set,
            kinds,
            loaded: false,
            enumerated: false,
        }
    }

    /// The library's own table, once (its names and types do not change
    /// while it lives); a library without enumeration keeps the names
    /// set. An error is returned once, for the stations to read.
    pub(super) fn load(&mut self, engine: &mut Engine) -> Option<String> {
        if self.loaded {
            return None;
        }
        self.loaded = true;
        match engine.autopilot().params() {
            Ok(Some(table)) => {
                self.names = table.iter().map(|p| p.name.clone()).collect();
                self.kinds = table.iter().map(|p| Some(p.param.kind)).collect();
                self.enumerated = true;
                None
            }
            Ok(None) => None,
            Err(e) => Some(e.to_string()),
        }
    }

    fn index(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }

    /// The names listed, in the table's order.
    pub(super) fn names(&self) -> &[String] {
        &self.names
    }

    fn kind(&self, name: &str) -> Option<ParamKind> {
        self.index(name).and_then(|i| self.kinds[i])
    }

    /// A name set over MAVLink that the table did not list (a library
    /// without enumeration): listed from now on.
    fn add(&mut self, name: &str) {
        if self.index(name).is_none() {
            self.names.push(name.to_string());
            self.kinds.push(None);
        }
    }

    /// `name`'s value as the library has it now, read in its type (or,
    /// where the library does not say, `kind`'s first, then the other):
    /// what PARAM_VALUE and the packed parameter file (MAVFTP) both carry.
    pub(super) fn read(
        &self,
        ap: &mut lockstep_abi::Autopilot,
        name: &str,
        kind: Option<ParamKind>,
    ) -> Result<ParamValue, lockstep_abi::AbiError> {
        let as_float = |ap: &mut lockstep_abi::Autopilot| ap.param_f32(name).map(ParamValue::F32);
        let as_int = |ap: &mut lockstep_abi::Autopilot| ap.param_i32(name).map(ParamValue::I32);
        let known = self.kind(name);
        match known.or(kind) {
            Some(ParamKind::I32) if known.is_some() => as_int(ap),
            Some(ParamKind::F32) if known.is_some() => as_float(ap),
            Some(ParamKind::I32) => as_int(ap).or_else(|_| as_float(ap)),
            _ => as_float(ap).or_else(|_| as_int(ap)),
        }
    }
}

/// A parameter id as text (up to 16 bytes, NUL-padded).
fn param_name(id: &mavlink::types::CharArray<16>) -> String {
    let bytes: &[u8] = &id[..];
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

fn is_float(t: MavParamType) -> bool {
    matches!(
        t,
        MavParamType::MAV_PARAM_TYPE_REAL32 | MavParamType::MAV_PARAM_TYPE_REAL64
    )
}

impl Vehicle {
    /// PARAM_SET, PARAM_REQUEST_READ or PARAM_REQUEST_LIST from a station.
    pub(super) fn parameter(
        &mut self,
        link: usize,
        sender: (u8, u8),
        msg: &MavMessage,
        engine: &mut Engine,
        now: u64,
    ) -> Result<(), String> {
        let target = match msg {
            MavMessage::PARAM_SET(p) => p.target_system,
            MavMessage::PARAM_REQUEST_READ(p) => p.target_system,
            MavMessage::PARAM_REQUEST_LIST(p) => p.target_system,
            _ => return Ok(()),
        };
        if !self.for_us(target) {
            return Ok(());
        }
        if let Some(e) = self.params.load(engine) {
            self.status_text(&e);
        }
        match msg {
            MavMessage::PARAM_SET(p) => {
                let name = param_name(&p.param_id);
                let kind = self
                    .params
                    .kind(&name)
                    .unwrap_or(if is_float(p.param_type) {
                        ParamKind::F32
                    } else {
                        ParamKind::I32
                    });
                let input = match self.decode(kind, p.param_type, p.param_value) {
                    Ok(ParamValue::F32(value)) => Input::ParamF32 {
                        name: name.clone(),
                        value,
                    },
                    Ok(ParamValue::I32(value)) => Input::ParamI32 {
                        name: name.clone(),
                        value,
                    },
                    Err((error, why)) => {
                        // Never reaches the flight (nor its record).
                        self.param_error(link, sender, &name, error);
                        let e = format!("{name}: {why}");
                        self.answer_param(link, &name, Some(kind), &Err(e), engine);
                        return Ok(());
                    }
                };
                let known = self.params.index(&name).is_some() || !self.params.enumerated;
                let result = self.take(input, engine, now)?;
                match &result {
                    Ok(()) => self.params.add(&name),
                    // A name the table lacks, else a value the library
                    // refused (its range).
                    Err(_) if !known => self.param_error(
                        link,
                        sender,
                        &name,
                        MavParamError::MAV_PARAM_ERROR_DOES_NOT_EXIST,
                    ),
                    Err(_) => self.param_error(
                        link,
                        sender,
                        &name,
                        MavParamError::MAV_PARAM_ERROR_VALUE_OUT_OF_RANGE,
                    ),
                }
                self.answer_param(link, &name, Some(kind), &result, engine);
            }
            MavMessage::PARAM_REQUEST_READ(p) => {
                let name = match usize::try_from(p.param_index) {
                    Ok(i) => self.params.names.get(i).cloned(),
                    // -1: by name.
                    Err(_) => Some(param_name(&p.param_id)),
                };
                match name {
                    Some(name) => {
                        let kind = self.params.kind(&name);
                        self.answer_param(link, &name, kind, &Ok(()), engine);
                    }
                    None => self.ignore("PARAM_REQUEST_READ of an index past the table"),
                }
            }
            MavMessage::PARAM_REQUEST_LIST(_) => {
                for i in 0..self.params.names.len() {
                    let name = self.params.names[i].clone();
                    let kind = self.params.kinds[i];
                    self.answer_param(link, &name, kind, &Ok(()), engine);
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// The value a PARAM_SET carries, for a parameter of `kind`: integers
    /// sent as integers are decoded as the style encodes them; an integer
    /// sent as a float must be whole. Non-finite floats are refused.
    fn decode(
        &self,
        kind: ParamKind,
        sent: MavParamType,
        v: f32,
    ) -> Result<ParamValue, (MavParamError, String)> {
        match (kind, is_float(sent)) {
            (ParamKind::F32, _) if !v.is_finite() => Err((
                MavParamError::MAV_PARAM_ERROR_VALUE_OUT_OF_RANGE,
                format!("{v} is not a finite value"),
            )),
            (ParamKind::F32, true) => Ok(ParamValue::F32(v)),
            // A float parameter set with an integer type: its integer.
            (ParamKind::F32, false) => Ok(ParamValue::F32(self.decode_int(v) as f32)),
            (ParamKind::I32, false) => Ok(ParamValue::I32(self.decode_int(v))),
            (ParamKind::I32, true) => {
                if v.is_finite() && v.fract() == 0.0 && v.abs() <= 16_777_216.0 {
                    Ok(ParamValue::I32(v as i32))
                } else {
                    Err((
                        MavParamError::MAV_PARAM_ERROR_TYPE_MISMATCH,
                        format!("{v} is not a whole number (an int32 parameter)"),
                    ))
                }
            }
        }
    }

    /// PARAM_ERROR to the station whose set was refused (MAVLink's answer
    /// to a refused set, which MAVSDK and QGroundControl report as such);
    /// PARAM_VALUE with the value kept follows for stations without it.
    fn param_error(&mut self, link: usize, to: (u8, u8), name: &str, error: MavParamError) {
        let msg = MavMessage::PARAM_ERROR(PARAM_ERROR_DATA {
            param_index: -1,
            target_system: to.0,
            target_component: to.1,
            param_id: name.into(),
            error,
        });
        self.send(link, &msg);
    }

    /// An integer parameter's value as the style encodes it in a float.
    fn decode_int(&self, v: f32) -> i32 {
        match self.style {
            Style::Px4 => v.to_bits() as i32,
            Style::ArduPilot => v as i32,
        }
    }

    fn encode_int(&self, v: i32) -> f32 {
        match self.style {
            Style::Px4 => f32::from_bits(v as u32),
            Style::ArduPilot => v as f32,
        }
    }

    /// PARAM_VALUE of `name` as the autopilot now has it, in its type (or,
    /// where the library does not say, `kind`'s first, then the other); a
    /// refused set is also a STATUSTEXT, and still answered with the value
    /// in force when there is one.
    fn answer_param(
        &mut self,
        link: usize,
        name: &str,
        kind: Option<ParamKind>,
        result: &Result<(), String>,
        engine: &mut Engine,
    ) {
        if let Err(e) = result {
            self.status_text(e);
        }
        let read = self
            .params
            .read(engine.autopilot(), name, kind)
            .map(|v| match v {
                ParamValue::F32(v) => (v, MavParamType::MAV_PARAM_TYPE_REAL32),
                ParamValue::I32(v) => (self.encode_int(v), MavParamType::MAV_PARAM_TYPE_INT32),
            });
        let (value, kind) = match read {
            Ok(r) => r,
            Err(e) => {
                if result.is_ok() {
                    self.status_text(&e.to_string());
                }
                return;
            }
        };
        let index = self.params.index(name).map_or(u16::MAX, |i| i as u16);
        let msg = MavMessage::PARAM_VALUE(PARAM_VALUE_DATA {
            param_value: value,
            param_count: self.params.names.len() as u16,
            param_index: index,
            param_id: name.into(),
            param_type: kind,
        });
        self.send(link, &msg);
    }
}

/// A parameter's value in its own type.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum ParamValue {
    F32(f32),
    I32(i32),
}

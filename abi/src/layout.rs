//! Struct layouts: the one the harness was compiled with (from the bindgen
//! mirror, via `offset_of!`/`size_of`/`align_of`) and the field-by-field
//! comparison with the table a library reports.

use std::mem::{align_of, offset_of, size_of};

use crate::FieldMismatch;
use crate::ffi;

/// One field of a struct layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldLayout {
    pub name: String,
    /// For nested structs, the struct's name.
    pub type_name: Option<String>,
    /// `LOCKSTEP_TYPE_*`
    pub type_code: u32,
    pub offset: u32,
    pub count: u32,
    pub elem_size: u32,
}

impl FieldLayout {
    /// `offset 8, f32 x3` — the form used in mismatch reports.
    pub fn describe(&self) -> String {
        format!("offset {}, {}", self.offset, self.describe_type())
    }

    /// `f32 x3` or `lockstep_imu x1`.
    pub fn describe_type(&self) -> String {
        let ty = match (&self.type_name, self.type_code) {
            (Some(n), ffi::LOCKSTEP_TYPE_STRUCT) => n.clone(),
            (_, code) => type_code_name(code).to_string(),
        };
        format!("{ty} x{}", self.count)
    }
}

/// One struct layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StructLayout {
    pub name: String,
    pub size: u32,
    pub align: u32,
    pub fields: Vec<FieldLayout>,
}

/// The name of a `LOCKSTEP_TYPE_*` code (`type#N` for an unknown one).
pub fn type_code_name(code: u32) -> String {
    match code {
        ffi::LOCKSTEP_TYPE_U8 => "u8".into(),
        ffi::LOCKSTEP_TYPE_I8 => "i8".into(),
        ffi::LOCKSTEP_TYPE_U16 => "u16".into(),
        ffi::LOCKSTEP_TYPE_I16 => "i16".into(),
        ffi::LOCKSTEP_TYPE_U32 => "u32".into(),
        ffi::LOCKSTEP_TYPE_I32 => "i32".into(),
        ffi::LOCKSTEP_TYPE_U64 => "u64".into(),
        ffi::LOCKSTEP_TYPE_I64 => "i64".into(),
        ffi::LOCKSTEP_TYPE_F32 => "f32".into(),
        ffi::LOCKSTEP_TYPE_F64 => "f64".into(),
        ffi::LOCKSTEP_TYPE_STRUCT => "struct".into(),
        other => format!("type#{other}"),
    }
}

/// How a Rust field type is described in a layout table.
trait Shape {
    const CODE: u32;
    const STRUCT_NAME: Option<&'static str>;
    const COUNT: u32;
    const ELEM_SIZE: u32;
}

macro_rules! shapes {
    ($($t:ty => $code:expr, $name:expr;)*) => {$(
        impl Shape for $t {
            const CODE: u32 = $code;
            const STRUCT_NAME: Option<&'static str> = $name;
            const COUNT: u32 = 1;
            const ELEM_SIZE: u32 = size_of::<$t>() as u32;
        }
        impl<const N: usize> Shape for [$t; N] {
            const CODE: u32 = $code;
            const STRUCT_NAME: Option<&'static str> = $name;
            const COUNT: u32 = N as u32;
            const ELEM_SIZE: u32 = size_of::<$t>() as u32;
        }
    )*};
}

shapes! {
    u8 => ffi::LOCKSTEP_TYPE_U8, None;
    i8 => ffi::LOCKSTEP_TYPE_I8, None;
    u16 => ffi::LOCKSTEP_TYPE_U16, None;
    i16 => ffi::LOCKSTEP_TYPE_I16, None;
    u32 => ffi::LOCKSTEP_TYPE_U32, None;
    i32 => ffi::LOCKSTEP_TYPE_I32, None;
    u64 => ffi::LOCKSTEP_TYPE_U64, None;
    i64 => ffi::LOCKSTEP_TYPE_I64, None;
    f32 => ffi::LOCKSTEP_TYPE_F32, None;
    f64 => ffi::LOCKSTEP_TYPE_F64, None;
    ffi::lockstep_rotor_geometry => ffi::LOCKSTEP_TYPE_STRUCT, Some("lockstep_rotor_geometry");
    ffi::lockstep_imu => ffi::LOCKSTEP_TYPE_STRUCT, Some("lockstep_imu");
    ffi::lockstep_mag => ffi::LOCKSTEP_TYPE_STRUCT, Some("lockstep_mag");
    ffi::lockstep_baro => ffi::LOCKSTEP_TYPE_STRUCT, Some("lockstep_baro");
    ffi::lockstep_gps => ffi::LOCKSTEP_TYPE_STRUCT, Some("lockstep_gps");
    ffi::lockstep_estimate => ffi::LOCKSTEP_TYPE_STRUCT, Some("lockstep_estimate");
    ffi::lockstep_battery => ffi::LOCKSTEP_TYPE_STRUCT, Some("lockstep_battery");
    ffi::lockstep_commands => ffi::LOCKSTEP_TYPE_STRUCT, Some("lockstep_commands");
    ffi::lockstep_setpoints => ffi::LOCKSTEP_TYPE_STRUCT, Some("lockstep_setpoints");
}

fn field_of<S, F: Shape>(name: &str, offset: usize, _project: fn(&S) -> &F) -> FieldLayout {
    FieldLayout {
        name: name.to_string(),
        type_name: F::STRUCT_NAME.map(str::to_string),
        type_code: F::CODE,
        offset: offset as u32,
        count: F::COUNT,
        elem_size: F::ELEM_SIZE,
    }
}

macro_rules! layout {
    ($s:ident { $($f:ident),* $(,)? }) => {
        StructLayout {
            name: stringify!($s).to_string(),
            size: size_of::<ffi::$s>() as u32,
            align: align_of::<ffi::$s>() as u32,
            fields: vec![$(field_of::<ffi::$s, _>(
                stringify!($f),
                offset_of!(ffi::$s, $f),
                |s: &ffi::$s| &s.$f,
            )),*],
        }
    };
}

/// The field holding byte `offset` of `struct_name`, by the harness's own
/// layout, nested structs and array elements included, e.g.
/// `estimate.position_ned_m[0]`; `byte N` when no field holds it.
pub fn field_at(struct_name: &str, offset: u32) -> String {
    let all = expected();
    let mut path = String::new();
    let mut name = struct_name.to_string();
    let mut off = offset;
    while let Some(st) = all.iter().find(|s| s.name == name) {
        let Some(f) = st
            .fields
            .iter()
            .find(|f| off >= f.offset && off < f.offset + f.count * f.elem_size)
        else {
            break;
        };
        let index = (off - f.offset) / f.elem_size.max(1);
        if !path.is_empty() {
            path.push('.');
        }
        path.push_str(&f.name);
        if f.count > 1 {
            path.push_str(&format!("[{index}]"));
        }
        off = off - f.offset - index * f.elem_size;
        match &f.type_name {
            Some(t) => name = t.clone(),
            None => return path,
        }
    }
    if path.is_empty() {
        format!("byte {offset}")
    } else {
        path
    }
}

/// The layout of every shared struct as this harness was compiled, in the
/// order of the header's `LOCKSTEP_AUTOPILOT_DEFINE_LAYOUT()`.
pub fn expected() -> Vec<StructLayout> {
    vec![
        layout!(lockstep_rotor_geometry {
            position_m,
            thrust_axis,
            spin_dir,
            torque_coeff_m,
            max_thrust_n
        }),
        layout!(lockstep_autopilot_config {
            struct_size,
            rotor_count,
            rotors,
            thrust_model_factor,
            mass_kg,
            inertia_diag_kgm2,
            gravity_mps2,
            autopilot_period_us,
            rotor_time_constant_s,
            origin_lat_deg,
            origin_lon_deg,
            origin_alt_m
        }),
        layout!(lockstep_imu {
            timestamp_us,
            accel_mps2,
            gyro_radps,
            temperature_c,
            reserved0
        }),
        layout!(lockstep_mag {
            timestamp_us,
            field_gauss,
            reserved0
        }),
        layout!(lockstep_baro {
            timestamp_us,
            pressure_pa,
            temperature_c
        }),
        layout!(lockstep_gps {
            timestamp_us,
            lat_deg,
            lon_deg,
            alt_m,
            vel_ned_mps,
            fix_type,
            satellites,
            eph_m,
            epv_m,
            speed_accuracy_mps,
            reserved0
        }),
        layout!(lockstep_estimate {
            timestamp_us,
            position_ned_m,
            velocity_ned_mps,
            attitude_q,
            rates_frd_radps,
            reserved0
        }),
        layout!(lockstep_battery {
            timestamp_us,
            voltage_v,
            current_a,
            remaining,
            warning,
            connected,
            reserved0
        }),
        layout!(lockstep_commands {
            timestamp_us,
            arm_request,
            mode_request,
            mission_start,
            setpoint_mask,
            setpoint,
            setpoint_yaw_rad,
            setpoint_thrust,
            takeoff_alt_m
        }),
        layout!(lockstep_sensor_frame {
            time_us,
            fresh_mask,
            landed,
            imu,
            mag,
            baro,
            gps,
            estimate,
            battery,
            commands
        }),
        layout!(lockstep_setpoints {
            position_ned_m,
            velocity_ned_mps,
            accel_ned_mps2,
            yaw_rad,
            attitude_q,
            rates_frd_radps,
            torque_frd_nm,
            thrust_n
        }),
        layout!(lockstep_actuator_frame {
            motors,
            servos,
            armed,
            mode,
            mission_current,
            mission_count,
            mission_finished,
            reserved0,
            setpoints
        }),
        layout!(lockstep_mission_item {
            command,
            frame,
            param1,
            param2,
            param3,
            param4,
            lat_deg,
            lon_deg,
            alt_m,
            autocontinue
        }),
    ]
}

/// The layout a library of ABI `version` must report: this header's, with
/// the fields an older version had in their place (see "Older versions"
/// in autopilot.h). Only versions [`crate::abi_supported`] accepts.
pub fn expected_for(version: u32) -> Vec<StructLayout> {
    let mut all = expected();
    if version < 4 {
        // ABI 3: lockstep_commands.takeoff_alt_m was `uint32_t reserved0`.
        let commands = all
            .iter_mut()
            .find(|s| s.name == "lockstep_commands")
            .expect("the header has lockstep_commands");
        let f = commands
            .fields
            .iter_mut()
            .find(|f| f.name == "takeoff_alt_m")
            .expect("lockstep_commands has takeoff_alt_m");
        f.name = "reserved0".into();
        f.type_code = ffi::LOCKSTEP_TYPE_U32;
    }
    all
}

/// The verdict on one struct.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StructReport {
    pub name: String,
    pub size: u32,
    pub align: u32,
    pub field_count: usize,
    /// Empty when the struct matches.
    pub mismatches: Vec<FieldMismatch>,
}

fn mismatch(s: &str, field: &str, expected: String, found: String) -> FieldMismatch {
    FieldMismatch {
        struct_name: s.to_string(),
        field: field.to_string(),
        expected,
        found,
    }
}

/// Compares every expected struct with the library's, field by field. Every
/// difference is reported: size, alignment, each field's offset, type and
/// count, fields the library lacks and fields only the library has. Structs
/// the library describes beyond the expected ones are ignored.
pub fn compare(expected: &[StructLayout], found: &[StructLayout]) -> Vec<StructReport> {
    expected
        .iter()
        .map(|exp| {
            let Some(got) = found.iter().find(|f| f.name == exp.name) else {
                return StructReport {
                    name: exp.name.clone(),
                    size: exp.size,
                    align: exp.align,
                    field_count: exp.fields.len(),
                    mismatches: vec![mismatch(
                        &exp.name,
                        "(struct)",
                        format!("size {}, {} fields", exp.size, exp.fields.len()),
                        "absent from the library's layout table".into(),
                    )],
                };
            };
            let mut m = Vec::new();
            if exp.size != got.size {
                m.push(mismatch(
                    &exp.name,
                    "(size)",
                    exp.size.to_string(),
                    got.size.to_string(),
                ));
            }
            if exp.align != got.align {
                m.push(mismatch(
                    &exp.name,
                    "(align)",
                    exp.align.to_string(),
                    got.align.to_string(),
                ));
            }
            for ef in &exp.fields {
                match got.fields.iter().find(|g| g.name == ef.name) {
                    None => m.push(mismatch(
                        &exp.name,
                        &ef.name,
                        ef.describe(),
                        "absent".into(),
                    )),
                    Some(gf) if gf != ef => {
                        m.push(mismatch(&exp.name, &ef.name, ef.describe(), gf.describe()))
                    }
                    Some(_) => {}
                }
            }
            for gf in &got.fields {
                if !exp.fields.iter().any(|e| e.name == gf.name) {
                    m.push(mismatch(
                        &exp.name,
                        &gf.name,
                        "absent".into(),
                        gf.describe(),
                    ));
                }
            }
            StructReport {
                name: exp.name.clone(),
                size: got.size,
                align: got.align,
                field_count: got.fields.len(),
                mismatches: m,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The header promises no implicit padding; so the expected table must
    /// tile every struct byte for byte. A field missing from `expected()` (or
    /// from the header's layout macro it mirrors) leaves a hole and fails here.
    #[test]
    fn expected_fields_tile_every_struct_exactly() {
        for s in expected() {
            let mut fields = s.fields.clone();
            fields.sort_by_key(|f| f.offset);
            let mut end = 0;
            for f in &fields {
                assert_eq!(
                    f.offset, end,
                    "{}.{} leaves a gap or overlaps",
                    s.name, f.name
                );
                end = f.offset + f.count * f.elem_size;
            }
            assert_eq!(
                end, s.size,
                "{} has trailing bytes not covered by fields",
                s.name
            );
        }
    }

    #[test]
    fn every_nested_struct_has_its_own_entry() {
        let all = expected();
        for s in &all {
            for f in &s.fields {
                if let Some(n) = &f.type_name {
                    let nested = all
                        .iter()
                        .find(|x| &x.name == n)
                        .expect("nested struct listed");
                    assert_eq!(nested.size, f.elem_size, "{}.{}", s.name, f.name);
                }
            }
        }
    }

    #[test]
    fn swapped_fields_are_both_reported_with_offsets() {
        let exp = expected();
        let mut found = exp.clone();
        let baro = found
            .iter_mut()
            .find(|s| s.name == "lockstep_baro")
            .unwrap();
        let (a, b) = (baro.fields[1].offset, baro.fields[2].offset);
        baro.fields[1].offset = b;
        baro.fields[2].offset = a;
        let reports = compare(&exp, &found);
        let bad: Vec<_> = reports.iter().flat_map(|r| r.mismatches.clone()).collect();
        assert_eq!(
            bad,
            vec![
                mismatch(
                    "lockstep_baro",
                    "pressure_pa",
                    "offset 8, f32 x1".into(),
                    "offset 12, f32 x1".into()
                ),
                mismatch(
                    "lockstep_baro",
                    "temperature_c",
                    "offset 12, f32 x1".into(),
                    "offset 8, f32 x1".into()
                ),
            ]
        );
    }

    #[test]
    fn missing_extra_and_retyped_fields_and_sizes_are_reported() {
        let exp = expected();
        let mut found = exp.clone();
        let gps = found.iter_mut().find(|s| s.name == "lockstep_gps").unwrap();
        gps.fields.retain(|f| f.name != "satellites");
        gps.fields.push(FieldLayout {
            name: "extra".into(),
            type_name: None,
            type_code: ffi::LOCKSTEP_TYPE_U8,
            offset: 64,
            count: 4,
            elem_size: 1,
        });
        gps.fields
            .iter_mut()
            .find(|f| f.name == "fix_type")
            .unwrap()
            .type_code = ffi::LOCKSTEP_TYPE_F32;
        gps.size = 72;
        found.retain(|s| s.name != "lockstep_mission_item");
        let bad: Vec<_> = compare(&exp, &found)
            .into_iter()
            .flat_map(|r| r.mismatches)
            .collect();
        let fields: Vec<_> = bad
            .iter()
            .map(|m| format!("{}.{}", m.struct_name, m.field))
            .collect();
        assert_eq!(
            fields,
            [
                "lockstep_gps.(size)",
                "lockstep_gps.fix_type",
                "lockstep_gps.satellites",
                "lockstep_gps.extra",
                "lockstep_mission_item.(struct)"
            ]
        );
        assert_eq!(bad[1].expected, "offset 40, u32 x1");
        assert_eq!(bad[1].found, "offset 40, f32 x1");
        assert_eq!(bad[2].found, "absent");
        assert_eq!(bad[3].expected, "absent");
        assert_eq!(bad[3].found, "offset 64, u8 x4");
    }
}

#[cfg(test)]
mod field_at_tests {
    use super::*;
    use crate::ffi;

    #[test]
    fn bytes_are_named_by_their_field_nested_and_indexed() {
        let est = std::mem::offset_of!(ffi::lockstep_sensor_frame, estimate);
        let pos = std::mem::offset_of!(ffi::lockstep_estimate, position_ned_m);
        assert_eq!(
            field_at("lockstep_sensor_frame", (est + pos + 2) as u32),
            "estimate.position_ned_m[0]"
        );
        assert_eq!(
            field_at("lockstep_sensor_frame", (est + pos + 5) as u32),
            "estimate.position_ned_m[1]"
        );
        assert_eq!(field_at("lockstep_sensor_frame", 0), "time_us");
        assert_eq!(field_at("lockstep_sensor_frame", 100_000), "byte 100000");
    }
}

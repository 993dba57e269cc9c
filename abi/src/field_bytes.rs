//! The fields of a shared struct as bytes, padding left out: the struct's
//! value travels (a vehicle moving to another process) and digests equal
//! for equal values, whatever its padding holds. The spans come from the
//! harness's own layout table ([`crate::layout::expected`]), nested structs
//! and arrays of them included.

use crate::ffi;
use crate::layout::{StructLayout, expected};

/// A shared struct of the header: every field an integer or a float (any
/// bit pattern is a value), described by the layout table.
pub trait SharedStruct: Copy {
    const NAME: &'static str;
}

macro_rules! shared {
    ($($t:ident),*) => {$(
        impl SharedStruct for ffi::$t {
            const NAME: &'static str = stringify!($t);
        }
    )*};
}
shared!(
    lockstep_sensor_frame,
    lockstep_actuator_frame,
    lockstep_commands,
    lockstep_battery
);

/// The (offset, length) of every scalar field of struct `name` placed at
/// `base`, in layout order.
fn spans(all: &[StructLayout], name: &str, base: usize, out: &mut Vec<(usize, usize)>) {
    let s = all
        .iter()
        .find(|s| s.name == name)
        .expect("a shared struct of the layout table");
    for f in &s.fields {
        match f.type_code {
            ffi::LOCKSTEP_TYPE_STRUCT => {
                let nested = f.type_name.as_deref().expect("a nested struct has a name");
                for i in 0..f.count as usize {
                    spans(
                        all,
                        nested,
                        base + f.offset as usize + i * f.elem_size as usize,
                        out,
                    );
                }
            }
            _ => out.push((base + f.offset as usize, (f.count * f.elem_size) as usize)),
        }
    }
}

fn spans_of<T: SharedStruct>() -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    spans(&expected(), T::NAME, 0, &mut out);
    debug_assert!(out.iter().all(|(o, n)| o + n <= std::mem::size_of::<T>()));
    out
}

/// Appends the bytes of `v`'s fields to `out`.
pub fn save_fields<T: SharedStruct>(v: &T, out: &mut Vec<u8>) {
    let base = (v as *const T).cast::<u8>();
    for (off, len) in spans_of::<T>() {
        // SAFETY: the span is one field of T by the layout table, which the
        // compile-time asserts tie to the struct: inside the value and
        // initialized (a field, not padding).
        let bytes = unsafe { std::slice::from_raw_parts(base.add(off), len) };
        out.extend_from_slice(bytes);
    }
}

/// The bytes [`save_fields`] writes for a `T`.
pub fn fields_len<T: SharedStruct>() -> usize {
    spans_of::<T>().iter().map(|(_, n)| n).sum()
}

/// Sets `v`'s fields from `bytes` (exactly [`fields_len`] of them).
pub fn load_fields<T: SharedStruct>(v: &mut T, bytes: &[u8]) -> bool {
    let spans = spans_of::<T>();
    if bytes.len() != spans.iter().map(|(_, n)| n).sum::<usize>() {
        return false;
    }
    let base = (v as *mut T).cast::<u8>();
    let mut at = 0;
    for (off, len) in spans {
        // SAFETY: the span is one field of T, inside the value; every field
        // is an integer or a float, for which any bit pattern is valid.
        unsafe { std::ptr::copy_nonoverlapping(bytes[at..].as_ptr(), base.add(off), len) };
        at += len;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_round_trips_and_padding_is_left_out() {
        let mut a = ffi::lockstep_sensor_frame {
            time_us: 123,
            ..Default::default()
        };
        a.imu.gyro_radps = [0.1, -0.2, 0.3];
        a.estimate.position_ned_m = [1.0, 2.0, -3.0];
        a.battery.voltage_v = 15.5;
        let mut bytes = Vec::new();
        save_fields(&a, &mut bytes);
        assert_eq!(bytes.len(), fields_len::<ffi::lockstep_sensor_frame>());
        assert!(bytes.len() <= std::mem::size_of::<ffi::lockstep_sensor_frame>());
        let mut b = ffi::lockstep_sensor_frame::default();
        assert!(load_fields(&mut b, &bytes));
        let mut again = Vec::new();
        save_fields(&b, &mut again);
        assert_eq!(again, bytes);
        assert_eq!(b.imu.gyro_radps, a.imu.gyro_radps);
        assert_eq!(b.estimate.position_ned_m, a.estimate.position_ned_m);
        assert!(!load_fields(&mut b, &bytes[1..]));
    }
}

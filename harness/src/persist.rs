//! A vehicle's running state as bytes, to continue it elsewhere: another
//! engine built from the same scenario (in this process, another process or
//! another machine) loads the bytes over its own freshly built state and
//! steps on exactly as the original would have.
//!
//! Only what changes while a run steps is saved (the configuration comes
//! from the scenario, which both sides build from). Numbers are their
//! little-endian bits, so a state saved and loaded is the same state bit for
//! bit, and the bytes of equal states are equal (they can be digested).
//! Each type lists the fields it saves with [`persist_fields!`]; a type
//! with private or foreign state implements [`Persist`] by hand.

/// Why saved bytes could not be loaded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PersistError {
    #[error("the vehicle state ends early (at byte {at} of {len})")]
    Truncated { at: usize, len: usize },
    #[error("the vehicle state has {extra} bytes past its end")]
    Trailing { extra: usize },
    #[error("the vehicle state does not fit this vehicle: {what}")]
    Mismatch { what: String },
}

/// Reads saved bytes in order.
#[derive(Debug)]
pub struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader { bytes, at: 0 }
    }

    pub fn take(&mut self, n: usize) -> Result<&'a [u8], PersistError> {
        let end = self.at.checked_add(n).filter(|e| *e <= self.bytes.len());
        let Some(end) = end else {
            return Err(PersistError::Truncated {
                at: self.at,
                len: self.bytes.len(),
            });
        };
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }

    /// Every byte was read.
    pub fn finish(self) -> Result<(), PersistError> {
        match self.bytes.len() - self.at {
            0 => Ok(()),
            extra => Err(PersistError::Trailing { extra }),
        }
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], PersistError> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }

    /// A length written by [`save_len`], refused past `max`.
    pub fn len(&mut self, max: usize, what: &str) -> Result<usize, PersistError> {
        let n = u64::from_le_bytes(self.array()?);
        usize::try_from(n)
            .ok()
            .filter(|n| *n <= max)
            .ok_or_else(|| PersistError::Mismatch {
                what: format!("{what}: {n} items, at most {max}"),
            })
    }
}

/// Saves a length.
pub fn save_len(n: usize, w: &mut Vec<u8>) {
    w.extend_from_slice(&(n as u64).to_le_bytes());
}

/// What a vehicle's state is made of.
pub trait Persist {
    fn save(&self, w: &mut Vec<u8>);
    fn load(&mut self, r: &mut Reader<'_>) -> Result<(), PersistError>;
}

macro_rules! persist_number {
    ($($t:ty),*) => {$(
        impl Persist for $t {
            fn save(&self, w: &mut Vec<u8>) {
                w.extend_from_slice(&self.to_le_bytes());
            }
            fn load(&mut self, r: &mut Reader<'_>) -> Result<(), PersistError> {
                *self = <$t>::from_le_bytes(r.array()?);
                Ok(())
            }
        }
    )*};
}
persist_number!(u8, u32, i32, u64, f32, f64);

impl Persist for usize {
    fn save(&self, w: &mut Vec<u8>) {
        (*self as u64).save(w);
    }
    fn load(&mut self, r: &mut Reader<'_>) -> Result<(), PersistError> {
        let mut v = 0u64;
        v.load(r)?;
        *self = usize::try_from(v).map_err(|_| PersistError::Mismatch {
            what: format!("{v} does not fit an index"),
        })?;
        Ok(())
    }
}

impl Persist for bool {
    fn save(&self, w: &mut Vec<u8>) {
        w.push(u8::from(*self));
    }
    fn load(&mut self, r: &mut Reader<'_>) -> Result<(), PersistError> {
        *self = match r.take(1)?[0] {
            0 => false,
            1 => true,
            b => {
                return Err(PersistError::Mismatch {
                    what: format!("{b} is not a boolean"),
                });
            }
        };
        Ok(())
    }
}

impl<T: Persist, const N: usize> Persist for [T; N] {
    fn save(&self, w: &mut Vec<u8>) {
        for x in self {
            x.save(w);
        }
    }
    fn load(&mut self, r: &mut Reader<'_>) -> Result<(), PersistError> {
        for x in self {
            x.load(r)?;
        }
        Ok(())
    }
}

impl<A: Persist, B: Persist> Persist for (A, B) {
    fn save(&self, w: &mut Vec<u8>) {
        self.0.save(w);
        self.1.save(w);
    }
    fn load(&mut self, r: &mut Reader<'_>) -> Result<(), PersistError> {
        self.0.load(r)?;
        self.1.load(r)
    }
}

impl<A: Persist, B: Persist, C: Persist, D: Persist> Persist for (A, B, C, D) {
    fn save(&self, w: &mut Vec<u8>) {
        self.0.save(w);
        self.1.save(w);
        self.2.save(w);
        self.3.save(w);
    }
    fn load(&mut self, r: &mut Reader<'_>) -> Result<(), PersistError> {
        self.0.load(r)?;
        self.1.load(r)?;
        self.2.load(r)?;
        self.3.load(r)
    }
}

impl<T: Persist + Default> Persist for Option<T> {
    fn save(&self, w: &mut Vec<u8>) {
        match self {
            None => w.push(0),
            Some(x) => {
                w.push(1);
                x.save(w);
            }
        }
    }
    fn load(&mut self, r: &mut Reader<'_>) -> Result<(), PersistError> {
        let mut some = false;
        some.load(r)?;
        if some {
            let mut x = self.take().unwrap_or_default();
            x.load(r)?;
            *self = Some(x);
        } else {
            *self = None;
        }
        Ok(())
    }
}

/// A vector of fixed length (the vehicle's shape): the lengths must agree.
impl<T: Persist> Persist for Vec<T> {
    fn save(&self, w: &mut Vec<u8>) {
        save_len(self.len(), w);
        for x in self {
            x.save(w);
        }
    }
    fn load(&mut self, r: &mut Reader<'_>) -> Result<(), PersistError> {
        let n = r.len(usize::MAX, "a vector")?;
        if n != self.len() {
            return Err(PersistError::Mismatch {
                what: format!("{n} items where this vehicle has {}", self.len()),
            });
        }
        for x in self.iter_mut() {
            x.load(r)?;
        }
        Ok(())
    }
}

impl Persist for String {
    fn save(&self, w: &mut Vec<u8>) {
        save_len(self.len(), w);
        w.extend_from_slice(self.as_bytes());
    }
    fn load(&mut self, r: &mut Reader<'_>) -> Result<(), PersistError> {
        let n = r.len(1 << 20, "a text")?;
        *self = String::from_utf8(r.take(n)?.to_vec()).map_err(|_| PersistError::Mismatch {
            what: "a text is not UTF-8".into(),
        })?;
        Ok(())
    }
}

/// Implements [`Persist`] for a struct by its listed fields, in order.
macro_rules! persist_fields {
    ($t:ty { $($f:ident),* $(,)? }) => {
        impl $crate::persist::Persist for $t {
            fn save(&self, w: &mut Vec<u8>) {
                $( $crate::persist::Persist::save(&self.$f, w); )*
            }
            fn load(
                &mut self,
                r: &mut $crate::persist::Reader<'_>,
            ) -> Result<(), $crate::persist::PersistError> {
                $( $crate::persist::Persist::load(&mut self.$f, r)?; )*
                Ok(())
            }
        }
    };
}
pub(crate) use persist_fields;

/// Saves `v` into a new buffer.
pub fn to_bytes<T: Persist + ?Sized>(v: &T) -> Vec<u8> {
    let mut w = Vec::new();
    v.save(&mut w);
    w
}

/// Loads all of `bytes` over `v`.
pub fn load_all<T: Persist + ?Sized>(v: &mut T, bytes: &[u8]) -> Result<(), PersistError> {
    let mut r = Reader::new(bytes);
    v.load(&mut r)?;
    r.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Micros;

    #[derive(Debug, Default, PartialEq)]
    struct S {
        a: f64,
        b: Option<Micros>,
        c: Vec<[u32; 2]>,
        d: bool,
        e: String,
    }
    persist_fields!(S { a, b, c, d, e });

    #[test]
    fn a_state_loads_back_bit_for_bit() {
        let s = S {
            a: -0.0,
            b: Some(Micros(7)),
            c: vec![[1, 2], [3, 4]],
            d: true,
            e: "gust".into(),
        };
        let bytes = to_bytes(&s);
        let mut t = S {
            c: vec![[0; 2]; 2],
            ..S::default()
        };
        load_all(&mut t, &bytes).unwrap();
        assert_eq!(t, s);
        assert_eq!(t.a.to_bits(), (-0.0f64).to_bits());
        assert_eq!(to_bytes(&t), bytes);
    }

    #[test]
    fn damaged_bytes_are_refused() {
        let s = S {
            c: vec![[1, 2]],
            ..S::default()
        };
        let bytes = to_bytes(&s);
        let mut t = S {
            c: vec![[0; 2]; 1],
            ..S::default()
        };
        assert_eq!(
            load_all(&mut t, &bytes[..bytes.len() - 1]),
            Err(PersistError::Truncated {
                at: bytes.len() - 8,
                len: bytes.len() - 1
            })
        );
        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(
            load_all(&mut t, &longer),
            Err(PersistError::Trailing { extra: 1 })
        );
        let mut other_shape = S {
            c: vec![[0; 2]; 3],
            ..S::default()
        };
        assert_eq!(
            load_all(&mut other_shape, &bytes),
            Err(PersistError::Mismatch {
                what: "1 items where this vehicle has 3".into()
            })
        );
    }
}

/// The header's structs travel field by field, padding left out.
macro_rules! persist_shared {
    ($($t:ident),*) => {$(
        impl Persist for lockstep_abi::ffi::$t {
            fn save(&self, w: &mut Vec<u8>) {
                lockstep_abi::field_bytes::save_fields(self, w);
            }
            fn load(&mut self, r: &mut Reader<'_>) -> Result<(), PersistError> {
                let n = lockstep_abi::field_bytes::fields_len::<lockstep_abi::ffi::$t>();
                let ok = lockstep_abi::field_bytes::load_fields(self, r.take(n)?);
                debug_assert!(ok, "take returned the length asked for");
                Ok(())
            }
        }
    )*};
}
persist_shared!(
    lockstep_sensor_frame,
    lockstep_actuator_frame,
    lockstep_commands
);

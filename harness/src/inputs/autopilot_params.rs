//! Autopilot parameters set by a scenario (`[autopilot.params]`), applied
//! through the library's parameter functions after `create`, in name order.
//!
//! ```toml
//! [autopilot.params]
//! MPC_XY_VEL_P = 1.5     # a float parameter
//! MIS_YAW_TO_WP = 1      # an integer parameter
//! ```
//!
//! A TOML integer sets an integer parameter and a float a float one; when
//! the autopilot reports the other type, an integral value is passed as that
//! type instead (`MPC_XY_P = 1` sets the float 1.0; `MIS_YAW_TO_WP = 1.0`
//! the integer 1, for floats below 2e9 in magnitude, where the conversion
//! is exact: above, the autopilot's type error is reported). An empty name
//! is an error naming the key.

use std::collections::BTreeMap;

use lockstep_abi::ffi::LOCKSTEP_AP_ERR_TYPE;
use lockstep_abi::{AbiError, Autopilot};

/// One parameter value as written.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ParamValue {
    Int(i32),
    Float(f32),
}

/// Parameters by name.
pub type Params = BTreeMap<String, ParamValue>;

/// Reads `[autopilot.params]`; errors name the key and say why.
pub fn parse(table: &BTreeMap<String, toml::Value>) -> Result<Params, (String, String)> {
    let mut out = Params::new();
    for (name, v) in table {
        let key = format!("autopilot.params.{name}");
        let value = match v {
            toml::Value::Integer(i) => ParamValue::Int(
                i32::try_from(*i)
                    .map_err(|_| (key.clone(), format!("{i} is outside the int32 range")))?,
            ),
            toml::Value::Float(f) => {
                if !f.is_finite() || f.abs() > f64::from(f32::MAX) {
                    return Err((key, format!("must be a finite float32, is {f:?}")));
                }
                ParamValue::Float(*f as f32)
            }
            other => {
                return Err((key, format!("must be a number, found {}", other.type_str())));
            }
        };
        if name.is_empty() || name.contains('\0') {
            return Err((key, "is not a parameter name".into()));
        }
        out.insert(name.clone(), value);
    }
    Ok(out)
}

/// Sets every parameter on `ap`; the first failure names its key.
pub fn apply(ap: &mut Autopilot, params: &Params) -> Result<(), (String, AbiError)> {
    for (name, v) in params {
        let result = match *v {
            ParamValue::Int(i) => match ap.set_param_i32(name, i) {
                Err(AbiError::Param { code, .. }) if code == LOCKSTEP_AP_ERR_TYPE => {
                    ap.set_param_f32(name, i as f32)
                }
                r => r,
            },
            ParamValue::Float(f) => match ap.set_param_f32(name, f) {
                Err(AbiError::Param { code, .. })
                    if code == LOCKSTEP_AP_ERR_TYPE && f.fract() == 0.0 && f.abs() < 2.0e9 =>
                {
                    ap.set_param_i32(name, f as i32)
                }
                r => r,
            },
        };
        result.map_err(|e| (format!("autopilot.params.{name}"), e))?;
    }
    Ok(())
}

//! One `[[models]]` entry checked and declared: its name (unique), its
//! kind, the keys that kind takes, and each value within its bounds, every
//! error naming `models[i].KEY`.

use std::path::Path;

use lockstep_config::{ConfigError, Source};

use super::{
    FileError, KINDS, MAX_ALTITUDE_M, MAX_DISTANCE_M, MAX_SECONDS, ModelDecl, ModelKind, RawModel,
    RawZone, check_name, keys_of,
};
use crate::geometry::Zone;

/// Entry `index` of the file at `source`, whose relative paths are from
/// `dir`, in a fleet of `vehicles` vehicles.
pub(super) struct Entry<'a> {
    pub source: &'a Source,
    pub index: usize,
    pub dir: &'a Path,
    pub vehicles: usize,
}

impl Entry<'_> {
    fn key(&self, k: &str) -> String {
        format!("models[{}].{k}", self.index)
    }

    fn invalid(&self, k: &str, reason: String) -> FileError {
        ConfigError::invalid(self.source, self.key(k), reason)
    }

    /// `v` (else `default`): a positive number.
    fn positive(&self, k: &str, v: Option<f64>, default: f64) -> Result<f64, FileError> {
        let v = v.unwrap_or(default);
        if !(v.is_finite() && v > 0.0) {
            return Err(self.invalid(k, format!("{v} must be a positive number")));
        }
        Ok(v)
    }

    /// A time in seconds: positive and at most MAX_SECONDS, so that its
    /// timestamps and the times added to it stay in range.
    fn seconds(&self, k: &str, v: Option<f64>, default: f64) -> Result<f64, FileError> {
        let v = self.positive(k, v, default)?;
        if v > MAX_SECONDS {
            return Err(self.invalid(k, format!("{v} s is longer than {MAX_SECONDS:e} s")));
        }
        Ok(v)
    }

    /// `v` (else 0): a finite number.
    fn finite(&self, k: &str, v: Option<f64>) -> Result<f64, FileError> {
        let v = v.unwrap_or(0.0);
        if !v.is_finite() {
            return Err(self.invalid(k, "must be a finite number".into()));
        }
        Ok(v)
    }

    /// A distance or altitude no larger than `max` in size.
    fn at_most(&self, k: &str, v: f64, max: f64) -> Result<f64, FileError> {
        if v.abs() > max {
            return Err(self.invalid(
                k,
                format!("{v:e} m is beyond {max:e} m (what a vehicle can be sent to)"),
            ));
        }
        Ok(v)
    }

    /// `v`: zero or more.
    fn not_negative(&self, k: &str, v: f64) -> Result<f64, FileError> {
        if v < 0.0 {
            return Err(self.invalid(k, format!("{v} is negative")));
        }
        Ok(v)
    }

    /// The model `m` declares, after those declared before it (`earlier`).
    pub(super) fn declare(
        &self,
        m: RawModel,
        earlier: &[ModelDecl],
    ) -> Result<ModelDecl, FileError> {
        check_name(&m.name).map_err(|r| self.invalid("name", r))?;
        if earlier.iter().any(|d| d.name == m.name) {
            return Err(self.invalid("name", format!("`{}` is taken by an earlier model", m.name)));
        }
        let valid = keys_of(&m.kind).ok_or_else(|| {
            self.invalid(
                "kind",
                format!("`{}` is not a model kind ({KINDS})", m.kind),
            )
        })?;
        if let Some((k, _)) = m.given().iter().find(|(k, g)| *g && !valid.contains(k)) {
            let listed = if valid.is_empty() {
                "none but name and kind".to_string()
            } else {
                format!("name, kind, {}", valid.join(", "))
            };
            return Err(self.invalid(
                k,
                format!("not a key of a `{}` model (its keys: {listed})", m.kind),
            ));
        }
        let kind = match m.kind.as_str() {
            "orders" => self.orders(&m)?,
            "no_fly_zones" => self.no_fly_zones(m.zones.as_deref())?,
            "dispatcher" => self.dispatcher(&m)?,
            "swap_station" => {
                let bays = m.bays.unwrap_or(1);
                if bays == 0 {
                    return Err(self.invalid("bays", "must be at least 1".into()));
                }
                ModelKind::SwapStation {
                    swap_s: self.seconds("swap_s", m.swap_s, 60.0)?,
                    bays,
                }
            }
            "kpi" => ModelKind::Kpi,
            _ => self.vehicle(&m)?,
        };
        Ok(ModelDecl { name: m.name, kind })
    }

    fn orders(&self, m: &RawModel) -> Result<ModelKind, FileError> {
        Ok(ModelKind::Orders {
            mean_interval_s: self.seconds("mean_interval_s", m.mean_interval_s, 60.0)?,
            radius_m: {
                let r = self.positive("radius_m", m.radius_m, 300.0)?;
                self.at_most("radius_m", r, MAX_DISTANCE_M)?
            },
            first_s: {
                let v = self.finite("first_s", m.first_s)?;
                self.not_negative("first_s", v)?;
                if v > 0.0 {
                    self.seconds("first_s", Some(v), v)?;
                }
                v
            },
            max_orders: m.max_orders.unwrap_or(u32::MAX),
        })
    }

    fn no_fly_zones(&self, zones: Option<&[RawZone]>) -> Result<ModelKind, FileError> {
        let raw = zones
            .ok_or_else(|| self.invalid("zones", "a no-fly-zone map needs its zones".into()))?;
        let mut zones = Vec::with_capacity(raw.len());
        for (k, z) in raw.iter().enumerate() {
            let zk = |f: &str| format!("zones[{k}].{f}");
            for (f, v) in [("north_m", z.north_m), ("east_m", z.east_m)] {
                if !(v.is_finite() && v.abs() <= MAX_DISTANCE_M) {
                    return Err(self.invalid(
                        &zk(f),
                        format!("{v:e} is not a finite distance within {MAX_DISTANCE_M:e} m"),
                    ));
                }
            }
            if !(z.radius_m.is_finite() && z.radius_m > 0.0 && z.radius_m <= MAX_DISTANCE_M) {
                return Err(self.invalid(
                    &zk("radius_m"),
                    format!(
                        "{} must be a positive number within {MAX_DISTANCE_M:e} m",
                        z.radius_m
                    ),
                ));
            }
            zones.push(Zone {
                north_m: z.north_m,
                east_m: z.east_m,
                radius_m: z.radius_m,
            });
        }
        Ok(ModelKind::NoFlyZones { zones })
    }

    fn dispatcher(&self, m: &RawModel) -> Result<ModelKind, FileError> {
        let soc = m.swap_below_soc.unwrap_or(0.5);
        if !(0.0..1.0).contains(&soc) {
            return Err(self.invalid("swap_below_soc", format!("{soc} is not in [0, 1)")));
        }
        let margin = self.finite("zone_margin_m", m.zone_margin_m.or(Some(10.0)))?;
        let margin = self.at_most("zone_margin_m", margin, MAX_DISTANCE_M)?;
        self.not_negative("zone_margin_m", margin)?;
        let step = self.finite("alt_step_m", m.alt_step_m.or(Some(5.0)))?;
        self.not_negative("alt_step_m", step)?;
        let cruise = self.positive("cruise_alt_m", m.cruise_alt_m, 20.0)?;
        let cruise = self.at_most("cruise_alt_m", cruise, MAX_ALTITUDE_M)?;
        // Each vehicle flies a step above the one before: the highest is
        // still within the ceiling.
        let vehicles = self.vehicles;
        let top = cruise + step * vehicles.saturating_sub(1) as f64;
        if top > MAX_ALTITUDE_M {
            return Err(self.invalid(
                "alt_step_m",
                format!(
                    "{step:e} m: the highest of {vehicles} vehicles would fly at {top:e} m, above {MAX_ALTITUDE_M:e} m"
                ),
            ));
        }
        Ok(ModelKind::Dispatcher {
            cruise_alt_m: cruise,
            alt_step_m: step,
            swap_below_soc: soc,
            zone_margin_m: margin,
        })
    }

    fn vehicle(&self, m: &RawModel) -> Result<ModelKind, FileError> {
        let scenario = m
            .scenario
            .as_ref()
            .ok_or_else(|| self.invalid("scenario", "a vehicle needs its scenario file".into()))?;
        let pad = |k: &str, v: Option<f64>| -> Result<f64, FileError> {
            self.at_most(k, self.finite(k, v)?, MAX_DISTANCE_M)
        };
        Ok(ModelKind::Vehicle {
            scenario: self.dir.join(scenario),
            autopilot: m.autopilot.as_ref().map(|a| self.dir.join(a)),
            pad_north_m: pad("pad_north_m", m.pad_north_m)?,
            pad_east_m: pad("pad_east_m", m.pad_east_m)?,
            telemetry_s: self.seconds("telemetry_s", m.telemetry_s, 1.0)?,
        })
    }
}

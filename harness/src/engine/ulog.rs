//! The run written as ULog while it flies (see [`crate::io::ulog`]): the
//! state topics with each log row, the sensor samples as they are taken,
//! the status at its changes, parameters set during the flight, and the
//! timeline at the end.

use std::path::Path;

use super::{Engine, EngineError};
use crate::inputs::autopilot_params::{ParamValue, Params};
use crate::io::ulog::{Param, UlogInfo, UlogRecorder};
use lockstep_abi::ParamKind;

impl Engine {
    /// Writes the run as ULog to `path` from now on; call before the first
    /// step. `params` are the parameters to record at the start (read back
    /// from the autopilot), `run_id` the file's `sys_uuid`.
    pub fn ulog_to(
        &mut self,
        path: &Path,
        params: &Params,
        run_id: &str,
    ) -> Result<(), EngineError> {
        if self.world.boundaries > 0 {
            return Err(EngineError::RecordTooLate {
                path: path.display().to_string(),
                now_us: self.world.now.0,
            });
        }
        let ap = &mut self.vehicle.avionics.ap;
        let mut initial = Vec::new();
        let mut defaults = Vec::new();
        let as_param = |kind: ParamKind, v: f64| match kind {
            ParamKind::F32 => Param::Float(v as f32),
            ParamKind::I32 => Param::Int(v as i32),
        };
        // The library's table when it lists it; a failing listing is an
        // error of the run, not a log without it.
        if let Some(table) = ap.params()? {
            for p in table {
                initial.push((p.name.clone(), as_param(p.param.kind, p.param.value)));
                defaults.push((p.name, as_param(p.param.kind, p.param.default)));
            }
        } else {
            for (name, v) in params {
                // As the autopilot holds it (a float given for an integer
                // parameter was set as an integer).
                let read = match v {
                    ParamValue::Float(_) => ap
                        .param_f32(name)
                        .map(Param::Float)
                        .or_else(|_| ap.param_i32(name).map(Param::Int)),
                    ParamValue::Int(_) => ap
                        .param_i32(name)
                        .map(Param::Int)
                        .or_else(|_| ap.param_f32(name).map(Param::Float)),
                };
                if let Ok(p) = read {
                    initial.push((name.clone(), p));
                }
            }
        }
        let imu = self
            .world
            .timeline
            .cadences()
            .iter()
            .find(|c| c.name == "imu")
            .map_or(0, |c| c.period.0);
        let info = UlogInfo {
            airframe: self.vehicle.physics.plant.name.clone(),
            run_id: run_id.to_string(),
            imu_period_us: u32::try_from(imu).unwrap_or(u32::MAX),
            params: initial,
            defaults,
        };
        self.outputs.ulog = Some(UlogRecorder::create(path, &info).map_err(EngineError::Ulog)?);
        Ok(())
    }

    /// Sets an autopilot parameter now (a ground station's), noting the
    /// change in the ULog when one is written.
    pub fn set_param(&mut self, name: &str, value: Param) -> Result<(), lockstep_abi::AbiError> {
        let ap = &mut self.vehicle.avionics.ap;
        match value {
            Param::Float(v) => ap.set_param_f32(name, v)?,
            Param::Int(v) => ap.set_param_i32(name, v)?,
        }
        if let Some(u) = &mut self.outputs.ulog
            && let Err(e) = u.param_changed(name, value)
        {
            self.outputs.ulog_error.get_or_insert(e);
        }
        Ok(())
    }

    /// The sensor samples and landing state the autopilot read at this
    /// step (out of line: a run without a ULog pays one test per autopilot
    /// step).
    #[inline(never)]
    pub(super) fn stage_ulog(&mut self) -> Result<(), EngineError> {
        if let Some(u) = &mut self.outputs.ulog {
            u.sensors(&self.vehicle.avionics.frame)
                .map_err(EngineError::Ulog)?;
        }
        Ok(())
    }

    /// Closes the ULog with the timeline; the first error writing it.
    pub(super) fn finish_ulog(&mut self) -> Result<(), EngineError> {
        if self.outputs.ulog.is_none() {
            return Ok(());
        }
        let (timeline, _) = self.timeline();
        self.outputs.finish_ulog(&timeline)
    }
}

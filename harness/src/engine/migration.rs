//! A running vehicle moved: [`Engine::snapshot`] takes its whole state at
//! the boundary it stands on (world, plant, sensors and their streams,
//! estimator, faults, monitor, timeline, and the autopilot's own state
//! through the library's snapshot functions); [`Engine::restore`] loads it
//! into an engine built from the same scenario, in this process or another,
//! which then steps exactly as the original would have.
//!
//! The log and the recording do not move: whoever writes the log keeps it
//! ([`Engine::take_log`], [`Engine::put_log`]).

use super::{Engine, EngineError};
use lockstep_abi::AutopilotSnapshot;

use crate::persist::{Persist, PersistError, Reader};

/// The first bytes of a vehicle state, and its format version.
const MAGIC: &[u8; 8] = b"LKVSTAT2";

use super::LogHandle;

impl Engine {
    /// Whether the autopilot can move (its library exports the migration
    /// functions).
    pub fn can_migrate(&mut self) -> bool {
        self.vehicle.avionics.ap.can_migrate()
    }

    /// The vehicle's whole running state at the last boundary processed.
    pub fn snapshot(&mut self) -> Result<Vec<u8>, EngineError> {
        let ap = self.vehicle.avionics.ap.snapshot()?;
        let mut w = Vec::with_capacity(64 * 1024);
        w.extend_from_slice(MAGIC);
        self.world.save(&mut w);
        self.vehicle.save(&mut w);
        self.wind_offset.save(&mut w);
        ap.last_time_us.save(&mut w);
        crate::persist::save_len(ap.bytes.len(), &mut w);
        w.extend_from_slice(&ap.bytes);
        Ok(w)
    }

    /// Continues from `bytes` (an [`Engine::snapshot`] of a vehicle built
    /// from the same scenario). On an error the engine must not be stepped.
    pub fn restore(&mut self, bytes: &[u8]) -> Result<(), EngineError> {
        let mut r = Reader::new(bytes);
        if r.take(MAGIC.len())? != MAGIC {
            return Err(PersistError::Mismatch {
                what: "not a lockstep vehicle state (or of another version)".into(),
            }
            .into());
        }
        self.world.load(&mut r)?;
        self.vehicle.load(&mut r)?;
        self.wind_offset.load(&mut r)?;
        let mut last_time_us = None::<u64>;
        last_time_us.load(&mut r)?;
        let n = r.len(
            lockstep_abi::ffi::LOCKSTEP_AUTOPILOT_MAX_SNAPSHOT as usize,
            "the autopilot's state",
        )?;
        let ap = AutopilotSnapshot {
            bytes: r.take(n)?.to_vec(),
            last_time_us,
        };
        r.finish()?;
        self.vehicle.avionics.ap.restore(&ap)?;
        Ok(())
    }

    /// Takes the log (and its sidecar) out of the engine: it writes no
    /// more rows until [`Engine::put_log`].
    pub fn take_log(&mut self) -> Option<LogHandle> {
        self.outputs.take_log()
    }

    /// Gives the engine a log to go on writing (one taken from the engine
    /// this one continues).
    pub fn put_log(&mut self, log: LogHandle) {
        self.outputs.put_log(log);
    }
}

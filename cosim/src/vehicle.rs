//! A lockstep vehicle as a participant: its engine (world, sensors,
//! autopilot, plant) stepped boundary by boundary over each interval.
//!
//! Outputs: `position_ned_m` (3), `velocity_ned_mps` (3), `attitude_q`
//! (4, body to NED, w x y z), `rates_frd_radps` (3), `battery_soc`,
//! `armed` (0/1), `crashed` (0/1), `wind_ned_mps` (3, the wind it flies in).
//! Inputs: `wind_ned_mps` (3, added to the scenario's wind), `force_ned_n`
//! (3, on the centre of mass), `traffic` (4 per slot: a neighbour's north,
//! east, down and the report's age in s; NaN for an empty slot). With
//! `avoid_m`, the first report of a neighbour closer than that makes the
//! vehicle hold position (a `hold` command, as a scenario event would).

use std::path::Path;

use lockstep_abi::Isolation;
use lockstep_harness::Micros;
use lockstep_harness::engine::Engine;
use lockstep_harness::inputs::scenario::{Action, MAX_WIND_MPS, Scenario};
use lockstep_harness::outcome::Summary;
use lockstep_harness::outcome::report::VehicleOutcome;

use crate::report::{ParticipantReport, VehicleReport};

use crate::participant::{Participant, ParticipantError, Variable};

/// The traffic slots a vehicle has unless told otherwise.
pub const DEFAULT_TRAFFIC_SLOTS: usize = 8;
/// Values per traffic slot: north, east, down (m), age (s).
pub const TRAFFIC_STRIDE: usize = 4;

/// How a vehicle takes part beyond its scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct VehicleOptions {
    /// Neighbours its `traffic` input holds.
    pub traffic_slots: usize,
    /// Hold position the first time a neighbour is reported nearer, m.
    pub avoid_m: Option<f64>,
}

impl Default for VehicleOptions {
    fn default() -> Self {
        VehicleOptions {
            traffic_slots: DEFAULT_TRAFFIC_SLOTS,
            avoid_m: None,
        }
    }
}

/// The vehicle's first avoidance: when, and the neighbour's reported
/// distance.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Avoidance {
    pub time_us: u64,
    pub slot: usize,
    pub distance_m: f64,
}

pub struct VehicleParticipant {
    engine: Engine,
    autopilot_period: Micros,
    options: VehicleOptions,
    wind: [f64; 3],
    force: [f64; 3],
    traffic: Vec<f64>,
    avoidance: Option<Avoidance>,
    min_reported_m: f64,
    summary: Option<Summary>,
}

impl std::fmt::Debug for VehicleParticipant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VehicleParticipant")
            .field("now", &self.engine.now())
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

const OUTPUTS: [(&str, usize, &str); 8] = [
    (
        "position_ned_m",
        3,
        "position, NED from the world origin, m",
    ),
    ("velocity_ned_mps", 3, "velocity, NED, m/s"),
    ("attitude_q", 4, "attitude, body to NED, (w, x, y, z)"),
    ("rates_frd_radps", 3, "body rates, FRD, rad/s"),
    (
        "battery_soc",
        1,
        "state of charge of the first battery, 0..1",
    ),
    ("armed", 1, "1 when the autopilot is armed"),
    ("crashed", 1, "1 once the vehicle has crashed or collided"),
    ("wind_ned_mps", 3, "the wind it flies in, NED, m/s"),
];

impl VehicleParticipant {
    /// The vehicle of `scenario`, flown by `autopilot`, its flight log
    /// written to `log` when given (and the scenario logs).
    pub fn new(
        scenario: &Scenario,
        autopilot: &Path,
        log: Option<&Path>,
        isolation: &Isolation,
        options: VehicleOptions,
    ) -> Result<VehicleParticipant, lockstep_harness::engine::EngineError> {
        let engine = Engine::with_isolation(scenario, autopilot, log, isolation)?;
        let autopilot_period = scenario.cadence("autopilot").unwrap_or(scenario.tick);
        let traffic = vec![f64::NAN; options.traffic_slots * TRAFFIC_STRIDE];
        Ok(VehicleParticipant {
            engine,
            autopilot_period,
            options,
            wind: [0.0; 3],
            force: [0.0; 3],
            traffic,
            avoidance: None,
            min_reported_m: f64::INFINITY,
            summary: None,
        })
    }

    /// The engine (for its state and log).
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The first avoidance, if any.
    pub fn avoidance(&self) -> Option<Avoidance> {
        self.avoidance
    }

    fn avoid(&mut self) {
        let Some(limit) = self.options.avoid_m else {
            return;
        };
        let x = self.engine.state();
        let mut nearest: Option<(usize, f64)> = None;
        for (slot, r) in self.traffic.chunks_exact(TRAFFIC_STRIDE).enumerate() {
            if r[..3].iter().any(|v| !v.is_finite()) {
                continue;
            }
            let d = ((r[0] - x[0]).powi(2) + (r[1] - x[1]).powi(2) + (r[2] - x[2]).powi(2)).sqrt();
            if nearest.is_none_or(|(_, n)| d < n) {
                nearest = Some((slot, d));
            }
        }
        if let Some((slot, d)) = nearest {
            self.min_reported_m = self.min_reported_m.min(d);
            if d < limit && self.avoidance.is_none() && !self.engine.is_finished() {
                self.engine.apply_now(Action::Hold);
                self.avoidance = Some(Avoidance {
                    time_us: self.engine.now().0,
                    slot,
                    distance_m: d,
                });
            }
        }
    }
}

/// The largest external force on a vehicle per axis, 1 MN: a hundred
/// tonnes' weight, beyond any tether or payload a multirotor carries.
pub const MAX_EXTERNAL_FORCE_N: f64 = 1e6;

impl Participant for VehicleParticipant {
    fn outputs(&self) -> Vec<Variable> {
        OUTPUTS
            .iter()
            .map(|(n, len, d)| Variable::vector(n, &vec![0.0; *len], d))
            .map(|mut v| {
                let mut out = vec![0.0; v.len];
                // The initial state, so the first transfer sees it.
                let _ = self.output_named(&v.name, &mut out);
                v.start = out;
                v
            })
            .collect()
    }

    fn inputs(&self) -> Vec<Variable> {
        let mut v = vec![
            Variable::vector(
                "wind_ned_mps",
                &[0.0; 3],
                "wind added to the scenario's, NED, m/s",
            ),
            Variable::vector(
                "force_ned_n",
                &[0.0; 3],
                "force on the centre of mass, NED, N",
            ),
        ];
        if self.options.traffic_slots > 0 {
            v.push(Variable::vector(
                "traffic",
                &self.traffic,
                "neighbours: north, east, down (m) and age (s) per slot; NaN when empty",
            ));
        }
        v
    }

    fn check_period(&self, period: Micros) -> Result<(), String> {
        if !period.is_multiple_of(self.autopilot_period) {
            return Err(format!(
                "a vehicle steps whole autopilot periods: {period} is not a multiple of its autopilot period {}",
                self.autopilot_period
            ));
        }
        Ok(())
    }

    fn set_input(&mut self, index: usize, value: &[f64]) -> Result<(), ParticipantError> {
        // The bounds a scenario file has for the same quantities (`traffic`
        // is NaN for a neighbour not heard from yet).
        let bounded = match index {
            0 => Some(("wind_ned_mps", MAX_WIND_MPS, "m/s")),
            1 => Some(("force_ned_n", MAX_EXTERNAL_FORCE_N, "N")),
            _ => None,
        };
        if let Some((name, bound, unit)) = bounded
            && let Some(v) = value.iter().find(|v| !(v.is_finite() && v.abs() <= bound))
        {
            return Err(ParticipantError(format!(
                "input `{name}` = {v:e} is outside [-{bound}, {bound}] {unit} per axis"
            )));
        }
        match index {
            0 => {
                let w = [value[0], value[1], value[2]];
                if w != self.wind {
                    self.wind = w;
                    self.engine.set_wind_offset(w);
                }
            }
            1 => {
                let f = [value[0], value[1], value[2]];
                if f != self.force {
                    self.force = f;
                    self.engine.set_external_force(f);
                }
            }
            _ => self.traffic.copy_from_slice(value),
        }
        Ok(())
    }

    fn step(&mut self, t: Micros, dt: Micros) -> Result<(), ParticipantError> {
        if self.engine.now() != t && self.engine.next_time().is_some() {
            return Err(ParticipantError(format!(
                "asked to step from {t}, but the vehicle is at {}",
                self.engine.now()
            )));
        }
        self.avoid();
        let end = t + dt;
        while self.engine.next_time().is_some_and(|n| n <= end) {
            if let Err(e) = self.engine.step() {
                // Ended here with its own error, the log complete so far.
                let said = e.to_string();
                return Err(ParticipantError(match self.engine.finish(Err(e)) {
                    Err(e) => e.to_string(),
                    // finish returns the error it is given; should it not,
                    // the step's error still stands.
                    Ok(_) => said,
                }));
            }
        }
        Ok(())
    }

    fn output(&self, index: usize, out: &mut [f64]) -> Result<(), ParticipantError> {
        self.output_named(OUTPUTS[index].0, out)
    }

    fn finish(&mut self) -> Result<ParticipantReport, ParticipantError> {
        if self.summary.is_none() && !self.engine.is_finished() {
            let s = self
                .engine
                .finish(Ok(()))
                .map_err(|e| ParticipantError(e.to_string()))?;
            self.summary = Some(s);
        }
        Ok(ParticipantReport::Vehicle(VehicleReport {
            outcome: self.summary.as_ref().map(VehicleOutcome::of),
            avoidance: self.avoidance,
            min_reported_distance_m: self
                .min_reported_m
                .is_finite()
                .then_some(self.min_reported_m),
            log: self.engine.log().map(|l| l.path().display().to_string()),
        }))
    }
}

impl VehicleParticipant {
    fn output_named(&self, name: &str, out: &mut [f64]) -> Result<(), ParticipantError> {
        let x = self.engine.state();
        match name {
            "position_ned_m" => out.copy_from_slice(&x[0..3]),
            "velocity_ned_mps" => out.copy_from_slice(&x[3..6]),
            "attitude_q" => out.copy_from_slice(&x[6..10]),
            "rates_frd_radps" => out.copy_from_slice(&x[10..13]),
            "battery_soc" => out[0] = x[self.engine.plant().layout.soc(0)],
            "armed" => out[0] = f64::from(self.engine.actuators().armed != 0),
            "crashed" => out[0] = f64::from(u8::from(self.engine.crashed())),
            "wind_ned_mps" => out.copy_from_slice(&self.engine.plant_inputs().wind_ned_mps),
            other => return Err(ParticipantError(format!("no output `{other}`"))),
        }
        Ok(())
    }
}

//! Batteries: a Thevenin equivalent circuit (open-circuit voltage table over
//! state of charge, series R0, one R1 || C1 branch) or an ideal source.
//!
//! State of charge never goes below 0: a pack whose SOC reaches 0 is empty
//! and cut off (it delivers no current, as a BMS or an ESC's cut-off
//! disconnects it), and the integrators clamp SOC to [0, 1]. The OCV table
//! reaches down to the pack's empty voltage at SOC 0.

/// Warning levels, as in `LOCKSTEP_BATTERY_*`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum BatteryWarning {
    Ok = 0,
    Low = 1,
    Critical = 2,
    Emergency = 3,
}

/// Cells of the index grid that finds an OCV segment without a search.
const GRID: usize = 64;

/// Open-circuit voltage over state of charge, piecewise linear between the
/// knots (exactly; the lookup is O(1)).
#[derive(Debug, Clone, PartialEq)]
pub struct OcvTable {
    soc: Vec<f64>,
    voltage_v: Vec<f64>,
    /// Slope of each segment, V per unit SOC.
    slope: Vec<f64>,
    /// `first[c]`: the segment holding SOC `c / GRID`; a lookup in grid
    /// cell `c` starts there and moves past at most the knots inside the cell.
    first: [u8; GRID + 1],
}

impl OcvTable {
    /// The most knots a table may have (the grid holds segment indices as
    /// bytes); the spec's validation refuses more.
    pub const MAX_KNOTS: usize = 255;

    /// `soc` strictly increasing from 0 to 1 (2 to [`OcvTable::MAX_KNOTS`]
    /// knots), one voltage each (validated by the spec).
    pub fn new(soc: Vec<f64>, voltage_v: Vec<f64>) -> Self {
        debug_assert!((2..=Self::MAX_KNOTS).contains(&soc.len()));
        let slope: Vec<f64> = soc
            .windows(2)
            .zip(voltage_v.windows(2))
            .map(|(s, v)| (v[1] - v[0]) / (s[1] - s[0]))
            .collect();
        let segments = slope.len();
        let mut first = [0u8; GRID + 1];
        for (c, f) in first.iter_mut().enumerate() {
            let s = c as f64 / GRID as f64;
            // The last segment whose start is at or below s.
            let seg = soc[..segments].iter().rposition(|k| *k <= s).unwrap_or(0);
            *f = seg as u8;
        }
        OcvTable {
            soc,
            voltage_v,
            slope,
            first,
        }
    }

    pub fn soc(&self) -> &[f64] {
        &self.soc
    }

    pub fn voltage_v(&self) -> &[f64] {
        &self.voltage_v
    }

    /// Voltage at `soc` (clamped to [0, 1]).
    #[inline(always)]
    pub fn voltage(&self, soc: f64) -> f64 {
        let s = soc.clamp(0.0, 1.0);
        let last = self.slope.len() - 1;
        let mut i = usize::from(self.first[(s * GRID as f64) as usize]);
        while i < last && self.soc[i + 1] <= s {
            i += 1;
        }
        self.voltage_v[i] + self.slope[i] * (s - self.soc[i])
    }
}

/// SOC thresholds of the warnings (each below the previous).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WarningLevels {
    pub low_soc: f64,
    pub critical_soc: f64,
    pub emergency_soc: f64,
}

impl WarningLevels {
    pub fn at(&self, soc: f64) -> BatteryWarning {
        if soc <= self.emergency_soc {
            BatteryWarning::Emergency
        } else if soc <= self.critical_soc {
            BatteryWarning::Critical
        } else if soc <= self.low_soc {
            BatteryWarning::Low
        } else {
            BatteryWarning::Ok
        }
    }
}

/// How a battery is modelled.
#[derive(Debug, Clone, PartialEq)]
pub enum BatteryModel {
    /// States: SOC and V1 (the R1 || C1 voltage).
    Thevenin {
        ocv: OcvTable,
        r0_ohm: f64,
        r1_ohm: f64,
        c1_f: f64,
    },
    /// A constant voltage with a series resistance; it still tracks SOC
    /// (state), so that energy use is visible; it has no V1 dynamics.
    Ideal { voltage_v: f64, r0_ohm: f64 },
}

/// One battery.
#[derive(Debug, Clone, PartialEq)]
pub struct Battery {
    pub model: BatteryModel,
    pub capacity_ah: f64,
    pub initial_soc: f64,
    /// The ESCs' low-voltage limit: while the pack can hold the bus here,
    /// duties are scaled down so that it does not fall below.
    pub voltage_floor_v: f64,
    /// Nominal voltage (propeller calibration uses it).
    pub nominal_voltage_v: f64,
    pub warnings: WarningLevels,
}

impl Battery {
    /// An empty pack (SOC at 0) is cut off: it delivers no current.
    pub fn is_empty(soc: f64) -> bool {
        soc <= 0.0
    }

    /// Internal EMF behind R0: OCV(SOC) - V1 (or the ideal voltage).
    #[inline]
    pub fn emf(&self, soc: f64, v1: f64) -> f64 {
        match &self.model {
            BatteryModel::Thevenin { ocv, .. } => ocv.voltage(soc) - v1,
            BatteryModel::Ideal { voltage_v, .. } => *voltage_v,
        }
    }

    pub fn r0(&self) -> f64 {
        match &self.model {
            BatteryModel::Thevenin { r0_ohm, .. } | BatteryModel::Ideal { r0_ohm, .. } => *r0_ohm,
        }
    }

    /// d(SOC)/dt and dV1/dt at discharge current `current_a`.
    pub fn derivatives(&self, v1: f64, current_a: f64) -> (f64, f64) {
        let dsoc = -current_a / (3600.0 * self.capacity_ah);
        let dv1 = match &self.model {
            BatteryModel::Thevenin { r1_ohm, c1_f, .. } => current_a / c1_f - v1 / (r1_ohm * c1_f),
            BatteryModel::Ideal { .. } => 0.0,
        };
        (dsoc, dv1)
    }

    /// Terminal voltage at a given discharge current (before the floor).
    pub fn terminal_voltage(&self, soc: f64, v1: f64, current_a: f64) -> f64 {
        self.emf(soc, v1) - self.r0() * current_a
    }
}

//! The third kind of autopilot bridge: a flight stack (PX4, ArduPilot) that
//! runs in its own process and speaks its own simulator protocol. The
//! protocols themselves live in `lockstep-stacks`; here is only what
//! [`crate::Autopilot`] needs to step one like a library: a sensor frame in,
//! an actuator frame out, at the same boundaries, with the same checks.
//!
//! A simulator protocol also carries the vehicle's true state (PX4's
//! `HIL_STATE_QUATERNION`, the state in ArduPilot's JSON): the harness hands
//! it over with [`crate::Autopilot::give_truth`] before each step. Libraries
//! never see it.

use crate::{AbiError, ffi};

/// The vehicle's true state at a boundary, as a simulator protocol sends it.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct GroundTruth {
    pub time_us: u64,
    pub position_ned_m: [f64; 3],
    pub velocity_ned_mps: [f64; 3],
    /// Body to NED, (w, x, y, z).
    pub attitude_q: [f64; 4],
    pub rates_frd_radps: [f64; 3],
    /// Specific force in body FRD (what an ideal accelerometer reads).
    pub specific_force_frd_mps2: [f64; 3],
    /// The position on the WGS-84 ellipsoid, altitude above mean sea level.
    pub lat_deg: f64,
    pub lon_deg: f64,
    pub alt_m: f64,
    /// The air mass's velocity, NED (the wind).
    pub wind_ned_mps: [f64; 3],
}

/// What a flight stack's link counted that a run's report should say: the
/// data it ignored and why, never silently.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StackNotes {
    /// One line per kind of thing ignored or noticed, with its count.
    pub lines: Vec<String>,
}

/// A flight stack stepped in lockstep over its simulator protocol.
pub trait FlightStack: Send + std::fmt::Debug {
    /// The stack and where it is reached, e.g. `px4-sitl (TCP 127.0.0.1:4560)`.
    fn describe(&self) -> String;

    /// Sends the frame (and `truth`) for the boundary at `time_us` and
    /// returns the stack's answer: the actuator frame to hold until the
    /// next boundary. An answer that does not come by the link's deadline,
    /// a peer that disconnects or breaks the protocol, is an error.
    fn step(
        &mut self,
        time_us: u64,
        sensors: &ffi::lockstep_sensor_frame,
        truth: &GroundTruth,
    ) -> Result<ffi::lockstep_actuator_frame, AbiError>;

    /// What was ignored or noticed so far.
    fn notes(&self) -> StackNotes;

    /// Makes the link's waits end with [`AbiError::WaitInterrupted`] once
    /// `flag` holds a signal number.
    fn interrupt_on(&mut self, flag: std::sync::Arc<std::sync::atomic::AtomicUsize>);

    /// Ends the link (the peer sees the connection close).
    fn close(&mut self) -> Result<(), AbiError>;
}

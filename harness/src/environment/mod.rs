//! What the vehicle flies in and senses: the wind models and the sensor
//! and estimator models, each drawing from its own named random stream.
//!
//! - [`wind`]: constant, Ornstein–Uhlenbeck and Dryden wind, and gusts.
//! - [`dryden`]: the Dryden turbulence filters (MIL-F-8785C).
//! - [`sensors`]: IMU, magnetometer, barometer, GPS and the estimator.

pub mod dryden;
pub mod sensors;
pub mod wind;

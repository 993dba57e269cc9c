//! lockstep-plant: multirotor models and integrators.
//!
//! Pure: no IO beyond reading spec files, no FFI, no randomness, no clocks.
//! The right-hand side of the plant is a deterministic function of
//! parameters, state and held inputs, and allocates nothing.

pub mod integrate;

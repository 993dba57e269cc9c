//! lockstep-plant: multirotor models and integrators.
//!
//! Pure: no IO beyond reading spec files, no FFI, no randomness, no clocks.
//! The right-hand side of the plant is a deterministic function of
//! parameters, state and held inputs, and allocates nothing.

pub mod actuator;
pub mod battery;
pub mod bus;
pub mod contact;
pub mod env;
pub mod fixtures;
pub mod integrate;
pub mod multirotor;
pub mod propulsion;
pub mod spec;

pub use multirotor::{
    HeldPlant, Multirotor, PlantInputs, PlantOutputs, ROTOR_STOP_RADPS, StateLayout, Tolerances,
};
pub use spec::{AircraftSpec, SpecError};

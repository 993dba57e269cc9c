//! The plant's tests: one test binary, a module per subject. The allocation
//! test (`tests/no_alloc.rs`) is a binary of its own: it installs a
//! counting global allocator.

mod aero;
mod energy;
mod integrators;
mod ode_solvers_crosscheck;
mod plant_physics;
mod spec;
mod step_start;
mod stopped_rotors;

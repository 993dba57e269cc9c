//! The orchestrator's tests: one test binary, a module per subject (its
//! behaviours, a model behind the wire).

mod cascade;
mod wire;

//! The co-simulation crate's tests: one test binary, a module per subject
//! (the master's semantics, system files, the record, the parallel mode's
//! team, the wire).

mod file;
mod master;
mod record;
mod team;
mod wire;

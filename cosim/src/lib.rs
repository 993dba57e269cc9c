//! Co-simulation (seed 002): participants — lockstep vehicles, FMUs,
//! closures, C callbacks, remote simulators — step in parallel over
//! integer-microsecond intervals on inputs frozen at the start of the
//! interval; between steps, transfer functions run serially in declared
//! order on the end-of-step outputs and write the inputs of the next step
//! (the one-step delay). A serialized mode runs the same steps one after
//! another and gives the same bits. Participants and transfer functions
//! have periods (multiples of the system's step); same-step transfer
//! functions give Gauss–Seidel order within a step, and cycles of them are
//! refused.

pub mod assemble;
pub mod error;
pub mod file;
pub mod fmu;
pub mod participant;
pub mod radio;
pub mod record;
pub mod report;
pub mod run;
pub mod system;
mod team;
pub mod transfer;
pub mod vehicle;
pub mod wire;

pub use error::CosimError;
pub use participant::{FnParticipant, Participant, ParticipantError, Variable};
pub use report::{ParticipantReport, TransferReport};
pub use run::{Cosim, Mode};
pub use system::{SystemBuilder, TransferSpec, VarRef};
pub use transfer::{Connect, FnTransfer, Transfer};
pub use vehicle::{VehicleOptions, VehicleParticipant};

//! lockstep-fmu: the whole vehicle as an FMI 2.0 co-simulation FMU.
//!
//! `lockstep fmu SCENARIO -o vehicle.fmu` packages it: this crate's cdylib
//! as `binaries/linux64/lockstep_vehicle.so`, the scenario, its mission and
//! spec, and the autopilot library in `resources/`, and
//! `modelDescription.xml` written by [`Description::xml`] from the same
//! variable table ([`variables::table`]) that serves fmi2Get*/fmi2Set*.
//!
//! Time: FMI's communication points are doubles; each must be a whole
//! number of microseconds (within a picosecond), else fmi2DoStep fails with
//! a logged error. A step processes every boundary of the scenario's
//! timeline at or before its end; the outputs are the state at the last
//! boundary processed. With steps on the physics grid the trajectory is the
//! native run's, bit for bit.

pub mod description;
pub mod exports;
pub mod instance;
pub mod variables;

pub use description::{Description, MODEL_IDENTIFIER};

/// The functions of FMI 2.0 for co-simulation a master calls (the
/// standard's common and co-simulation functions).
pub const FMI2_FUNCTIONS: [&str; 34] = [
    "fmi2GetTypesPlatform",
    "fmi2GetVersion",
    "fmi2SetDebugLogging",
    "fmi2Instantiate",
    "fmi2FreeInstance",
    "fmi2SetupExperiment",
    "fmi2EnterInitializationMode",
    "fmi2ExitInitializationMode",
    "fmi2Terminate",
    "fmi2Reset",
    "fmi2GetReal",
    "fmi2GetInteger",
    "fmi2GetBoolean",
    "fmi2GetString",
    "fmi2SetReal",
    "fmi2SetInteger",
    "fmi2SetBoolean",
    "fmi2SetString",
    "fmi2GetFMUstate",
    "fmi2SetFMUstate",
    "fmi2FreeFMUstate",
    "fmi2SerializedFMUstateSize",
    "fmi2SerializeFMUstate",
    "fmi2DeSerializeFMUstate",
    "fmi2GetDirectionalDerivative",
    "fmi2SetRealInputDerivatives",
    "fmi2GetRealOutputDerivatives",
    "fmi2DoStep",
    "fmi2CancelStep",
    "fmi2GetStatus",
    "fmi2GetRealStatus",
    "fmi2GetIntegerStatus",
    "fmi2GetBooleanStatus",
    "fmi2GetStringStatus",
];

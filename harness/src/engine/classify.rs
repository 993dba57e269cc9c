//! An engine's errors in the one classification ([`Classified`]): which
//! are the input's fault, which the run's, which a signal's, and the part
//! that failed.

use lockstep_abi::AbiError;

use super::EngineError;
use crate::outcome::class::{Classified, ErrorClass, Part};

/// The classification of an engine's error.
pub fn classify(e: &EngineError) -> Classified {
    use ErrorClass::{Configuration, RunFailure};
    match e {
        EngineError::Interrupted { signal, .. } => Classified {
            class: ErrorClass::Interrupted,
            part: Part::Signal,
            signal: Some(*signal),
        },
        EngineError::Spec(_)
        | EngineError::Mission(_)
        | EngineError::Config(_)
        | EngineError::Invalid { .. } => Classified::new(Configuration, Part::Input),
        EngineError::RecordTooLate { .. } => Classified::new(Configuration, Part::Argument),
        EngineError::Abi(a) if refused_library(a) => {
            Classified::new(Configuration, Part::Autopilot)
        }
        EngineError::Abi(_) => Classified::new(RunFailure, Part::Autopilot),
        EngineError::Integrator(_) => Classified::new(RunFailure, Part::Plant),
        EngineError::Log(_)
        | EngineError::Ulog(_)
        | EngineError::Record(_)
        | EngineError::GroundStation { .. } => Classified::new(RunFailure, Part::Output),
        EngineError::HostTruth { .. } | EngineError::State(_) => {
            Classified::new(RunFailure, Part::Argument)
        }
        EngineError::Ended { .. } => Classified::new(RunFailure, Part::Ended),
        EngineError::HostTime { .. } => Classified::new(RunFailure, Part::Time),
        EngineError::HostOwnsPlant { .. } => Classified::new(RunFailure, Part::Unsupported),
    }
}

/// The classification of an error building an engine: as [`classify`], but
/// a log, ULog or recording that cannot be created is a refused input (an
/// output path).
pub fn classify_build(e: &EngineError) -> Classified {
    match e {
        EngineError::Log(_) | EngineError::Ulog(_) | EngineError::Record(_) => {
            Classified::new(ErrorClass::Configuration, Part::Output)
        }
        e => classify(e),
    }
}

/// Whether the loader's checks refused the library, or its parameters or
/// mission refused the scenario's: the input's fault, before any flight.
fn refused_library(e: &AbiError) -> bool {
    matches!(
        e,
        AbiError::LibraryNotFound { .. }
            | AbiError::LibraryLoad { .. }
            | AbiError::MissingSymbol { .. }
            | AbiError::AbiVersionMismatch { .. }
            | AbiError::UnknownCapabilities { .. }
            | AbiError::InvalidLayoutTable { .. }
            | AbiError::LayoutMismatch { .. }
            | AbiError::NotReentrant { .. }
            | AbiError::HostUnavailable { .. }
            | AbiError::MissionRejected { .. }
            | AbiError::Param { .. }
            | AbiError::Unsupported { .. }
            | AbiError::PartialGroup { .. }
            | AbiError::StackUnsupported { .. }
            | AbiError::StackListen { .. }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_library_is_the_input_and_a_crash_is_the_run() {
        let refused = EngineError::Abi(AbiError::LibraryNotFound {
            path: "/nowhere.so".into(),
        });
        assert_eq!(
            classify(&refused),
            Classified::new(ErrorClass::Configuration, Part::Autopilot)
        );
        let crashed = EngineError::Abi(AbiError::CreateFailed {
            message: "no".into(),
        });
        assert_eq!(
            classify(&crashed),
            Classified::new(ErrorClass::RunFailure, Part::Autopilot)
        );
        let signal = EngineError::Interrupted {
            signal: 15,
            time_us: 4000,
        };
        assert_eq!(classify(&signal).exit_status(), 143);
        let log = EngineError::Log(std::io::Error::other("full"));
        assert_eq!(classify(&log).class, ErrorClass::RunFailure);
        assert_eq!(classify_build(&log).class, ErrorClass::Configuration);
    }
}

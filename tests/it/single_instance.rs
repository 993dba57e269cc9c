//! A library without LOCKSTEP_AP_CAP_REENTRANT: the wrapper refuses a second
//! live instance (even through a second load of the same file) and allows a
//! new one once the first is dropped. The registry of live instances is
//! process-wide: the tests that use it hold `single_instance_lock`.

use crate::common::*;
use lockstep_abi::{AbiError, AutopilotLibrary};

#[test]
fn non_reentrant_library_refuses_a_second_instance() {
    let _one = crate::common::single_instance_lock();
    let lib = AutopilotLibrary::load(SINGLE_INSTANCE).unwrap();
    assert!(!lib.is_reentrant());
    let cfg = config(&quad_x(), 1.5, 8.0);
    let first = lib.create(&cfg).unwrap();
    let err = lib.create(&cfg).unwrap_err();
    assert!(
        matches!(&err, AbiError::NotReentrant { path } if path.to_str() == Some(SINGLE_INSTANCE)),
        "{err:?}"
    );
    assert!(err.to_string().contains("is not re-entrant"), "{err}");
    // A second load of the same file is the same loaded object.
    let again = AutopilotLibrary::load(SINGLE_INSTANCE).unwrap();
    assert!(matches!(
        again.create(&cfg),
        Err(AbiError::NotReentrant { .. })
    ));
    drop(first);
    let second = again
        .create(&cfg)
        .expect("allowed once the first instance is gone");
    drop(second);
}

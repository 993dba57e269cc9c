//! `lockstep-autopilot-host`: the child process in which the harness runs an
//! autopilot library in isolation (see `lockstep_abi::isolate`). Started by
//! the harness, never by hand.

fn main() {
    std::process::exit(lockstep_abi::isolate::host_main());
}

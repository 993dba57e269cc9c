//! Compiles the C shim that formats FMUs' log messages (FMI 2.0's logger is
//! variadic, which Rust cannot define).

fn main() {
    println!("cargo:rerun-if-changed=src/fmu/logger.c");
    cc::Build::new()
        .file("src/fmu/logger.c")
        .flag_if_supported("-std=c11")
        .warnings(true)
        .warnings_into_errors(true)
        .compile("lockstep_cosim_fmu_logger");
}

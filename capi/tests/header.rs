//! include/lockstep/harness.h is what cbindgen makes of this crate: the
//! committed header never drifts from the code. `LOCKSTEP_BLESS=1` rewrites
//! it instead of failing.

use std::path::PathBuf;

#[test]
fn the_committed_header_is_what_cbindgen_generates() {
    let crate_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let header = crate_dir.join("../include/lockstep/harness.h");
    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml")).unwrap();
    let mut generated = Vec::new();
    cbindgen::Builder::new()
        .with_crate(&crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen parses the crate")
        .write(&mut generated);
    let generated = String::from_utf8(generated).unwrap();
    if std::env::var_os("LOCKSTEP_BLESS").is_some() {
        std::fs::write(&header, &generated).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&header).unwrap_or_default();
    assert!(
        committed == generated,
        "{} is not what cbindgen generates from capi/: run \
         `LOCKSTEP_BLESS=1 cargo test -p lockstep-capi --test header` and commit it",
        header.display()
    );
}

#[test]
fn the_abi_version_macro_and_function_agree_with_the_crate() {
    let header = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../include/lockstep/harness.h"),
    )
    .unwrap();
    let line = format!(
        "#define LOCKSTEP_HARNESS_ABI_VERSION {}",
        lockstep::LOCKSTEP_HARNESS_ABI_VERSION
    );
    assert!(header.contains(&line), "the header defines `{line}`");
    assert_eq!(
        lockstep::lockstep_harness_abi_version(),
        lockstep::LOCKSTEP_HARNESS_ABI_VERSION
    );
    // SAFETY: lockstep_version returns a static NUL-terminated string.
    let v = unsafe { std::ffi::CStr::from_ptr(lockstep::lockstep_version()) };
    assert_eq!(v.to_str().unwrap(), env!("CARGO_PKG_VERSION"));
}

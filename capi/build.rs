//! liblockstep.so names itself (its SONAME), so that a program linked to
//! it by any path records `liblockstep.so` and finds it by the usual search
//! (rpath, LD_LIBRARY_PATH, the system's directories).
//!
//! On x86_64 Linux (glibc) it is also an executable: `liblockstep.so
//! --serve ...` is the isolated autopilot's host, so a C program needs no
//! second file (see src/serve.rs). That takes an entry point and the
//! dynamic loader's path in a `.interp` section; the section comes from a
//! C object linked into the shared library only (in liblockstep.a or the
//! rlib it would land in the program that links them).
fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux") {
        return;
    }
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,liblockstep.so");
    println!("cargo:rerun-if-changed=src/interp.c");
    let target = std::env::var("TARGET").unwrap_or_default();
    let Some(interp) = interpreter(&target) else {
        return;
    };
    let objects = cc::Build::new()
        .file("src/interp.c")
        .define("LOCKSTEP_INTERP", format!("\"{interp}\"").as_str())
        .compile_intermediates();
    for o in objects {
        println!("cargo:rustc-cdylib-link-arg={}", o.display());
    }
    // The section is referenced by nothing: kept as a root of the linker's
    // garbage collection.
    println!("cargo:rustc-cdylib-link-arg=-Wl,--undefined=lockstep_interp");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-e,lockstep_serve_entry");
}

/// The dynamic loader of the targets whose entry point src/serve.rs has.
fn interpreter(target: &str) -> Option<&'static str> {
    match target {
        "x86_64-unknown-linux-gnu" => Some("/lib64/ld-linux-x86-64.so.2"),
        _ => None,
    }
}

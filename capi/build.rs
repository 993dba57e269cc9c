//! liblockstep.so names itself (its SONAME), so that a program linked to
//! it by any path records `liblockstep.so` and finds it by the usual search
//! (rpath, LD_LIBRARY_PATH, the system's directories).
fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,liblockstep.so");
    }
}

//! `liblockstep.so` as the isolated autopilot's host: the shared library is
//! also a program (`liblockstep.so --serve MEMFD LIFELINE SPIN_NS`), so a C
//! or C++ program that links it needs no second file. build.rs gives the
//! shared library an entry point ([`lockstep_serve_entry`]) and the dynamic
//! loader's path; [`declare_own_host`] finds the library's file and
//! declares it this process's host.
//!
//! Only on x86_64 Linux with glibc (where build.rs knows the loader's
//! path). Elsewhere, and in a program linked with `liblockstep.a` (its
//! entry point is the program's own), the host is looked up as
//! `lockstep_abi::isolate::host_program` says: `LOCKSTEP_AUTOPILOT_HOST`,
//! or a `lockstep` binary next to the program.

/// Declares this library's file as this process's isolated host, when the
/// library is the executable `liblockstep.so` (checked: the entry point in
/// its ELF header is [`lockstep_serve_entry`]). Does nothing otherwise, or
/// once a host is declared.
pub(crate) fn declare_own_host() {
    if lockstep_abi::isolate::own_host().is_some() {
        return;
    }
    if let Some(path) = executable_library() {
        lockstep_abi::isolate::set_own_host(lockstep_abi::isolate::HostProgram::new(path));
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu", target_arch = "x86_64"))]
fn executable_library() -> Option<std::path::PathBuf> {
    use std::ffi::{CStr, c_void};
    use std::os::unix::ffi::OsStrExt;

    let entry = lockstep_serve_entry as *const c_void;
    // SAFETY: `Dl_info` is plain data (pointers and integers); all-zero is a
    // valid value that dladdr overwrites.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: `entry` is the address of a function in this object and
    // `info` a valid out-parameter.
    if unsafe { libc::dladdr(entry, &mut info) } == 0
        || info.dli_fname.is_null()
        || info.dli_fbase.is_null()
    {
        return None;
    }
    // SAFETY: dli_fbase is where the object's file is mapped from offset
    // 0, so its first bytes are its ELF header, mapped and read-only for as
    // long as the object is loaded (it is: this code is in it). An ELF64
    // header holds e_entry, an 8-byte address, at offset 24.
    let e_entry = unsafe {
        (info.dli_fbase as *const u8)
            .add(24)
            .cast::<u64>()
            .read_unaligned()
    };
    // A shared object's entry is relative to where it is loaded.
    if (info.dli_fbase as u64).wrapping_add(e_entry) != entry as u64 {
        // The entry point is another program's: this code was linked
        // statically (liblockstep.a, or the rlib in a Rust program).
        return None;
    }
    // SAFETY: dladdr returned a NUL-terminated path owned by the loader.
    let name = unsafe { CStr::from_ptr(info.dli_fname) };
    let path = std::path::Path::new(std::ffi::OsStr::from_bytes(name.to_bytes()));
    // The loader's path may be relative to the working directory at load
    // time (LD_LIBRARY_PATH=.): made absolute now, before a host changes
    // directory.
    Some(std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()))
}

#[cfg(not(all(target_os = "linux", target_env = "gnu", target_arch = "x86_64")))]
fn executable_library() -> Option<std::path::PathBuf> {
    None
}

/// The shared library's entry point when it runs as a program: the dynamic
/// loader has loaded and initialised it and its dependencies (the C
/// library included) and jumps here with the stack pointer at `argc`. It
/// aligns the stack as a call expects and calls [`serve_main`], which never
/// returns.
#[cfg(all(target_os = "linux", target_env = "gnu", target_arch = "x86_64"))]
#[unsafe(naked)]
#[unsafe(no_mangle)]
extern "C" fn lockstep_serve_entry() -> ! {
    core::arch::naked_asm!(
        // The outermost frame (as the ABI asks of an entry point).
        "xor ebp, ebp",
        // argc, argv, envp: from here.
        "mov rdi, rsp",
        "and rsp, -16",
        "call {main}",
        "ud2",
        main = sym serve_main,
    )
}

/// The program `liblockstep.so` runs: `--serve MEMFD LIFELINE SPIN_NS`
/// (the host, `lockstep_abi::isolate::host_serve`), anything else a line
/// saying what the file is. Exits the process.
#[cfg(all(target_os = "linux", target_env = "gnu", target_arch = "x86_64"))]
extern "C" fn serve_main(stack: *const usize) -> ! {
    // SAFETY: the loader starts a program with `argc` at the stack pointer
    // followed by `argc` pointers to NUL-terminated arguments (System V
    // ABI, process initialisation).
    let args: Vec<String> = unsafe {
        let argc = *stack;
        let argv = stack.add(1).cast::<*const std::ffi::c_char>();
        (1..argc)
            .map(|i| {
                std::ffi::CStr::from_ptr(*argv.add(i))
                    .to_string_lossy()
                    .into_owned()
            })
            .collect()
    };
    let status = std::panic::catch_unwind(|| {
        if args.first().map(String::as_str) == Some(lockstep_abi::isolate::SERVE_FLAG) {
            lockstep_abi::isolate::host_serve(&args)
        } else {
            eprintln!(
                "liblockstep.so: the lockstep harness's C library (include/lockstep/harness.h), \
                 version {}; run as a program only by the library itself, to host an autopilot \
                 in isolation",
                env!("CARGO_PKG_VERSION")
            );
            2
        }
    })
    .unwrap_or(101);
    std::process::exit(status)
}

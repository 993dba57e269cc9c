//! Builds the C libraries of `c_examples/` into shared libraries with the
//! `cc` crate's compiler (C11, `-Wall -Wextra -Werror`). It is the build
//! script of the `lockstep-c-examples` crate (`c_examples/Cargo.toml`), whose
//! library gives their paths (and the bundled ones' bytes) to the run layer
//! and to every crate's tests; it tells that crate where they are through
//! compile-time environment variables:
//!
//! - `LOCKSTEP_BUNDLED_AUTOPILOT`: the reference autopilot (re-entrant).
//! - `LOCKSTEP_SINGLE_INSTANCE_AUTOPILOT`: the same, built to report no
//!   `LOCKSTEP_AP_CAP_REENTRANT` and to refuse a second instance itself.
//! - `LOCKSTEP_SKELETON_AUTOPILOT`: `c_examples/skeleton`, the minimal
//!   autopilot to start from.
//! - `LOCKSTEP_ABI3_AUTOPILOT`: the reference autopilot built against the
//!   header as it was at ABI 3 (an old library the harness still loads).
//! - `LOCKSTEP_SLUNG_LOAD_FMU_BINARY`: the slung-load FMU's library
//!   (`c_examples/slung_load_fmu`), which the CLI packs into an FMU.
//! - `LOCKSTEP_BROKEN_DIR`: the libraries the loader must refuse, named
//!   `<prefix>lockstep_broken_<case><suffix>`.

use std::path::{Path, PathBuf};
use std::process::Command;

const AUTOPILOT_SOURCES: [&str; 7] = [
    "autopilot.c",
    "control.c",
    "filter.c",
    "geo.c",
    "mixer.c",
    "modes.c",
    "params.c",
];

fn main() {
    // The package is c_examples/; the repository is its parent.
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let root = manifest
        .parent()
        .expect("c_examples/ lies in the repository")
        .to_path_buf();
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("set by cargo"));
    let include = root.join("include");
    // Paths relative to the package (c_examples/).
    println!("cargo:rerun-if-changed=../build.rs");
    println!("cargo:rerun-if-changed=../include");
    println!("cargo:rerun-if-changed=autopilot");
    println!("cargo:rerun-if-changed=broken");
    println!("cargo:rerun-if-changed=skeleton");
    println!("cargo:rerun-if-env-changed=CC");
    println!("cargo:rerun-if-env-changed=CFLAGS");

    let ap_dir = root.join("c_examples/autopilot");
    let sources: Vec<PathBuf> = AUTOPILOT_SOURCES.iter().map(|s| ap_dir.join(s)).collect();
    let bundled = shared_lib("lockstep_autopilot", &sources, &include, &[], &[], &out);
    let single = shared_lib(
        "lockstep_autopilot_single",
        &sources,
        &include,
        &["AP_SINGLE_INSTANCE"],
        &[],
        &out,
    );
    println!(
        "cargo:rustc-env=LOCKSTEP_BUNDLED_AUTOPILOT={}",
        bundled.display()
    );
    println!(
        "cargo:rustc-env=LOCKSTEP_SINGLE_INSTANCE_AUTOPILOT={}",
        single.display()
    );

    let abi3_include = out.join("include_abi3");
    std::fs::create_dir_all(abi3_include.join("lockstep")).expect("create include_abi3");
    std::fs::write(
        abi3_include.join("lockstep/autopilot.h"),
        abi3_header(
            &std::fs::read_to_string(include.join("lockstep/autopilot.h"))
                .expect("read autopilot.h"),
        ),
    )
    .expect("write the ABI-3 header");
    let abi3 = shared_lib(
        "lockstep_autopilot_abi3",
        &sources,
        &abi3_include,
        &[],
        &[],
        &out,
    );
    println!("cargo:rustc-env=LOCKSTEP_ABI3_AUTOPILOT={}", abi3.display());

    let skeleton = shared_lib(
        "skeleton",
        &[root.join("c_examples/skeleton/skeleton.c")],
        &include,
        &[],
        &[],
        &out,
    );
    println!(
        "cargo:rustc-env=LOCKSTEP_SKELETON_AUTOPILOT={}",
        skeleton.display()
    );

    // The slung-load FMU's binary (an FMU names it after its model
    // identifier, without the `lib` prefix: the CLI packs it as
    // binaries/<platform>/slung_load.so next to its modelDescription.xml).
    println!("cargo:rerun-if-changed=slung_load_fmu");
    let fmu_dir = out.join("slung_load_fmu");
    std::fs::create_dir_all(&fmu_dir).expect("create OUT_DIR/slung_load_fmu");
    let slung = shared_lib(
        "slung_load",
        &[root.join("c_examples/slung_load_fmu/slung_load.c")],
        &root.join("c_examples/slung_load_fmu"),
        &[],
        &[],
        &fmu_dir,
    );
    println!(
        "cargo:rustc-env=LOCKSTEP_SLUNG_LOAD_FMU_BINARY={}",
        slung.display()
    );

    let broken_dir = out.join("broken");
    std::fs::create_dir_all(&broken_dir).expect("create OUT_DIR/broken");
    build_broken(&root, &include, &broken_dir);
    println!(
        "cargo:rustc-env=LOCKSTEP_BROKEN_DIR={}",
        broken_dir.display()
    );
}

/// The header as it was at ABI 3 (its "Older versions" note): version 3,
/// `lockstep_commands.reserved0` where 4 has `takeoff_alt_m`, and no
/// parameter enumeration.
fn abi3_header(header: &str) -> String {
    let h = mutate(
        "abi3",
        header,
        "#define LOCKSTEP_AUTOPILOT_ABI_VERSION 4\n",
        "#define LOCKSTEP_AUTOPILOT_ABI_VERSION 3\n",
    );
    let h = mutate(
        "abi3",
        &h,
        "  float takeoff_alt_m;\n} lockstep_commands;",
        "  uint32_t reserved0;\n} lockstep_commands;",
    );
    let h = mutate(
        "abi3",
        &h,
        "LOCKSTEP_LAYOUT_SCALAR(lockstep_commands, takeoff_alt_m),    ",
        "LOCKSTEP_LAYOUT_SCALAR(lockstep_commands, reserved0),        ",
    );
    let start = h
        .find("#define LOCKSTEP_PARAM_NAME_MAX")
        .expect("the header declares the parameter enumeration");
    let end = h[start..]
        .find("/** Returns the instance to its state just after create()")
        .expect("reset follows the enumeration")
        + start;
    format!("{}{}", &h[..start], &h[end..])
}

fn lib_file_name(name: &str) -> String {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    match os.as_str() {
        "macos" | "ios" => format!("lib{name}.dylib"),
        "windows" => format!("{name}.dll"),
        _ => format!("lib{name}.so"),
    }
}

/// Compiles and links `sources` into a shared library in `out_dir`.
fn shared_lib(
    name: &str,
    sources: &[PathBuf],
    include: &Path,
    defines: &[&str],
    link: &[&str],
    out_dir: &Path,
) -> PathBuf {
    let mut build = cc::Build::new();
    build.pic(true).opt_level(2).cargo_metadata(false);
    let compiler = build.get_compiler();
    let mut cmd: Command = compiler.to_command();
    cmd.args([
        "-std=c11",
        "-Wall",
        "-Wextra",
        "-Werror",
        "-fvisibility=hidden",
    ]);
    cmd.arg("-I").arg(include);
    for d in defines {
        cmd.arg(format!("-D{d}"));
    }
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    cmd.arg(if os == "macos" {
        "-dynamiclib"
    } else {
        "-shared"
    });
    let lib = out_dir.join(lib_file_name(name));
    cmd.arg("-o").arg(&lib).args(sources).args(link).arg("-lm");
    let status = cmd
        .status()
        .unwrap_or_else(|e| panic!("cannot run the C compiler for {name}: {e}"));
    assert!(status.success(), "compiling {name} failed: {cmd:?}");
    lib
}

/// Returns `text` with the single occurrence of `from` replaced by `to`;
/// panics when `from` does not occur exactly once (the header changed and
/// the fixture must follow it).
fn mutate(case: &str, text: &str, from: &str, to: &str) -> String {
    let n = text.matches(from).count();
    assert_eq!(
        n, 1,
        "broken fixture {case}: expected one occurrence of {from:?} in autopilot.h, found {n}"
    );
    text.replacen(from, to, 1)
}

fn build_broken(root: &Path, include: &Path, dir: &Path) {
    let src = [root.join("c_examples/broken/broken.c")];
    let header =
        std::fs::read_to_string(include.join("lockstep/autopilot.h")).expect("read autopilot.h");

    // Cases compiled against the real header with one behaviour switched on.
    for (case, define) in [
        ("missing_symbol", "BROKEN_OMIT_STEP"),
        ("create_null", "BROKEN_CREATE_NULL"),
        ("step_error", "BROKEN_STEP_ERROR"),
        ("nan_output", "BROKEN_NAN_OUTPUT"),
        ("out_of_range", "BROKEN_OUT_OF_RANGE"),
        // A valid library that idles disarmed: the baseline of the cases
        // below, and the source of the damaged files.
        ("idle", "BROKEN_NONE"),
        // Faults at 5 s in step, and in the other calls.
        ("step_segv", "BROKEN_STEP_SEGV"),
        ("sometimes_segv", "BROKEN_SOMETIMES_SEGV"),
        ("prints", "BROKEN_PRINTS"),
        ("step_abort", "BROKEN_STEP_ABORT"),
        ("stack_overflow", "BROKEN_STACK_OVERFLOW"),
        ("step_exit0", "BROKEN_STEP_EXIT0"),
        ("step__exit", "BROKEN_STEP__EXIT"),
        ("step_hang", "BROKEN_STEP_HANG"),
        ("lazy_undefined", "BROKEN_LAZY_UNDEFINED"),
        ("create_segv", "BROKEN_CREATE_SEGV"),
        ("destroy_segv", "BROKEN_DESTROY_SEGV"),
        // Contract violations.
        ("write_past", "BROKEN_WRITE_PAST"),
        ("write_sensors", "BROKEN_WRITE_SENSORS"),
        ("mission_current", "BROKEN_MISSION_CURRENT"),
        ("mission_count", "BROKEN_MISSION_COUNT"),
        ("extra_motor", "BROKEN_EXTRA_MOTOR"),
        ("servo", "BROKEN_SERVO"),
        ("unknown_caps", "BROKEN_UNKNOWN_CAPS"),
        // Loading.
        ("ctor_segv", "BROKEN_CTOR_SEGV"),
        ("ctor_exit0", "BROKEN_CTOR_EXIT0"),
        ("ctor_hang", "BROKEN_CTOR_HANG"),
        ("table_bad_pointer", "BROKEN_TABLE_BAD_POINTER"),
        ("table_count", "BROKEN_TABLE_COUNT"),
        ("table_garbage_count", "BROKEN_TABLE_GARBAGE_COUNT"),
        ("table_duplicate", "BROKEN_TABLE_DUPLICATE"),
        ("table_duplicate_struct", "BROKEN_TABLE_DUPLICATE_STRUCT"),
        // Migration.
        ("partial_migration", "BROKEN_PARTIAL_MIGRATION"),
        ("partial_enumeration", "BROKEN_PARTIAL_ENUMERATION"),
        ("snapshot_oversize", "BROKEN_SNAPSHOT_OVERSIZE"),
        ("snapshot_segv", "BROKEN_SNAPSHOT_SEGV"),
        ("step_segv_migrates", "BROKEN_STEP_SEGV_MIGRATES"),
    ] {
        let case_define = format!("BROKEN_CASE=\"{case}\"");
        shared_lib(
            &format!("lockstep_broken_{case}"),
            &src,
            include,
            &[define, &case_define],
            &[],
            dir,
        );
    }
    build_damaged_files(&src, include, dir);

    // Cases compiled against an altered copy of the header.
    let version_line = header
        .lines()
        .find(|l| l.starts_with("#define LOCKSTEP_AUTOPILOT_ABI_VERSION "))
        .expect("autopilot.h defines LOCKSTEP_AUTOPILOT_ABI_VERSION");
    let version: u32 = version_line
        .rsplit(' ')
        .next()
        .and_then(|v| v.parse().ok())
        .expect("LOCKSTEP_AUTOPILOT_ABI_VERSION is an integer");
    let altered = [
        (
            "abi_version",
            mutate(
                "abi_version",
                &header,
                version_line,
                &format!("#define LOCKSTEP_AUTOPILOT_ABI_VERSION {}", version + 1000),
            ),
        ),
        ("sensor_size", {
            let h = mutate(
                "sensor_size",
                &header,
                "  lockstep_commands commands;\n} lockstep_sensor_frame;",
                "  lockstep_commands commands;\n  uint64_t extra_timestamp_us;\n} lockstep_sensor_frame;",
            );
            let entry =
                "LOCKSTEP_LAYOUT_STRUCT(lockstep_sensor_frame, commands, lockstep_commands),";
            mutate(
                "sensor_size",
                &h,
                entry,
                &format!(
                    "{entry} \\\n      LOCKSTEP_LAYOUT_SCALAR(lockstep_sensor_frame, extra_timestamp_us),"
                ),
            )
        }),
        (
            "swapped_fields",
            mutate(
                "swapped_fields",
                &header,
                "  float pressure_pa;\n  float temperature_c;\n} lockstep_baro;",
                "  float temperature_c;\n  float pressure_pa;\n} lockstep_baro;",
            ),
        ),
        (
            "type_changed",
            mutate(
                "type_changed",
                &header,
                "  uint32_t fix_type;",
                "  float fix_type;",
            ),
        ),
    ];
    for (case, text) in altered {
        let inc = dir.join(format!("include_{case}"));
        std::fs::create_dir_all(inc.join("lockstep")).expect("create fixture include dir");
        std::fs::write(inc.join("lockstep/autopilot.h"), text).expect("write fixture header");
        let case_define = format!("BROKEN_CASE=\"{case}\"");
        shared_lib(
            &format!("lockstep_broken_{case}"),
            &src,
            &inc,
            &[&case_define],
            &[],
            dir,
        );
    }
}

/// Libraries the dynamic loader refuses before any code runs: a missing
/// dependency, and damaged copies of a valid library (empty, cut short,
/// another ELF class, another machine, not ELF at all).
fn build_damaged_files(src: &[PathBuf], include: &Path, dir: &Path) {
    // A dependency linked in, then deleted.
    let phantom_dir = dir.join("phantom");
    std::fs::create_dir_all(&phantom_dir).expect("create phantom dir");
    let phantom_src = phantom_dir.join("phantom.c");
    std::fs::write(&phantom_src, "int lockstep_phantom(void) { return 1; }\n")
        .expect("write phantom.c");
    let phantom = shared_lib(
        "lockstep_phantom",
        &[phantom_src],
        include,
        &[],
        &[],
        &phantom_dir,
    );
    shared_lib(
        "lockstep_broken_missing_dependency",
        src,
        include,
        &["BROKEN_CASE=\"missing_dependency\""],
        &[
            "-Wl,--no-as-needed",
            &format!("-L{}", phantom_dir.display()),
            "-llockstep_phantom",
        ],
        dir,
    );
    std::fs::remove_file(&phantom).expect("delete the phantom dependency");

    let good = std::fs::read(dir.join(lib_file_name("lockstep_broken_idle")))
        .expect("read the idle fixture");
    let write = |case: &str, bytes: &[u8]| {
        std::fs::write(
            dir.join(lib_file_name(&format!("lockstep_broken_{case}"))),
            bytes,
        )
        .expect("write a damaged fixture");
    };
    write("empty", &[]);
    write("truncated", &good[..good.len().min(1000)]);
    write("not_elf", b"this is a text file, not a shared library\n");
    let mut class = good.clone();
    class[4] = if class[4] == 2 { 1 } else { 2 }; // EI_CLASS: 64 <-> 32 bit
    write("wrong_class", &class);
    let mut machine = good;
    machine[18] = 40; // e_machine = EM_ARM (little-endian u16 at 18)
    machine[19] = 0;
    write("wrong_machine", &machine);
}

//! Defensive loading: every way a library file can be unusable is refused
//! with its own reason, the same in-process (`AutopilotLibrary::load`, the
//! `AbiError` variant and its text) and from `lockstep check-lib` (exit
//! status 1 and the exact `verdict` line). Libraries whose initialisers
//! crash, exit or hang are only ever loaded in a child process.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::common::*;
use lockstep_abi::isolate::probe;
use lockstep_abi::{AbiError, AutopilotLibrary, Function, IsolationOptions};

/// `lockstep check-lib PATH`.
fn check_lib(path: &Path) -> Ran {
    lockstep(&[Path::new("check-lib"), path])
}

/// `lockstep run SCENARIO --autopilot PATH EXTRA...`.
fn run_with(scenario: &Path, path: &Path, extra: &[&str]) -> Ran {
    let mut args: Vec<&std::ffi::OsStr> = vec![
        "run".as_ref(),
        scenario.as_os_str(),
        "--autopilot".as_ref(),
        path.as_os_str(),
    ];
    args.extend(extra.iter().map(std::ffi::OsStr::new));
    lockstep(&args)
}

/// `lockstep run` refused to build the run with `message` (an error of the
/// library at `path`) and exit status `code`: exactly the message and the
/// library line on stderr, nothing on stdout, no log created.
fn assert_run_refused(r: &Ran, path: &Path, message: &str, code: i32) {
    assert_eq!(r.code(), code, "{r}");
    assert_eq!(r.stderr, refused(message, path), "{r}");
    assert_eq!(r.stdout, "", "{r}");
}

/// The in-process loader's error for `path` (never for a library whose
/// initialisers misbehave: they would run in this test process).
fn load_err(path: &Path) -> AbiError {
    AutopilotLibrary::load(path).expect_err("the loader must refuse this file")
}

/// `check-lib` refused `path` before it could report anything: exactly the
/// library line and the verdict, status 1, nothing on stderr.
fn assert_check_lib_refuses_outright(path: &Path, verdict: &str) {
    let r = check_lib(path);
    assert_eq!(r.code(), 1, "{r}");
    assert_eq!(
        r.stdout,
        format!(
            "library       {}\nverdict       NOT USABLE: {verdict}\n",
            path.display()
        ),
        "{r}"
    );
    assert_eq!(r.stderr, "", "{r}");
}

/// `check-lib` reported on `path` and then judged it unusable: status 1,
/// `lines` among its lines, the verdict last.
fn assert_check_lib_judges_unusable(path: &Path, lines: &[&str], verdict: &str) {
    let r = check_lib(path);
    assert_eq!(r.code(), 1, "{r}");
    assert!(
        r.stdout
            .starts_with(&format!("library       {}\n", path.display())),
        "{r}"
    );
    for l in lines {
        assert!(r.stdout.lines().any(|x| x == *l), "no line {l:?} in\n{r}");
    }
    assert!(
        r.stdout
            .ends_with(&format!("\nverdict       NOT USABLE: {verdict}\n")),
        "{r}"
    );
    assert_eq!(r.stderr, "", "{r}");
}

/// The dynamic loader (or the file checks before it) refused `path` with
/// `reason`: `LibraryLoad` in-process, the same text from check-lib.
fn assert_refused_with(path: &Path, reason: &str) {
    match load_err(path) {
        AbiError::LibraryLoad { path: p, reason: r } => {
            assert_eq!(p, path);
            assert_eq!(r, reason);
        }
        other => panic!("{}: expected LibraryLoad, got {other:?}", path.display()),
    }
    let text = format!("cannot load autopilot library {}: {reason}", path.display());
    assert_eq!(load_err(path).to_string(), text);
    assert_check_lib_refuses_outright(path, &text);
}

/// The layout table of `case` is refused with `reason`.
fn assert_unusable_table(case: &str, reason: &str) {
    let path = broken(case);
    match load_err(&path) {
        AbiError::InvalidLayoutTable { path: p, reason: r } => {
            assert_eq!(p, path);
            assert_eq!(r, reason);
        }
        other => panic!("{case}: expected InvalidLayoutTable, got {other:?}"),
    }
    let text = format!(
        "autopilot library {} reports an unusable layout table: {reason}",
        path.display()
    );
    assert_eq!(load_err(&path).to_string(), text);
    assert_check_lib_judges_unusable(
        &path,
        &[&format!("layout        UNREADABLE: {reason}")],
        &text,
    );
}

/// `lockstep run` refuses the library at `path` with `text` before the
/// flight, in both modes: a loader's refusal is a configuration error
/// (status 2), and no log is created.
fn assert_run_refuses_before_the_flight(path: &Path, text: &str) {
    let dir = TempDir::new("refused");
    let scenario = idle_scenario(dir.path(), "idle.toml", 1.0, 10);
    let log = dir.join("log.csv");
    for isolation in ["process", "in-process"] {
        let r = run_with(
            &scenario,
            path,
            &["--log", log.to_str().unwrap(), "--isolation", isolation],
        );
        assert_run_refused(&r, path, text, 2);
        assert!(!log.exists(), "{isolation}");
    }
}

/// Structs in the header's layout table.
fn struct_count() -> usize {
    lockstep_abi::layout::expected().len()
}

#[test]
fn the_idle_fixture_is_usable_both_ways() {
    let lib = AutopilotLibrary::load(broken("idle")).unwrap();
    assert_eq!(lib.name(), Some("lockstep-broken-fixture idle"));
    let r = check_lib(&broken("idle"));
    assert_eq!(r.code(), 0, "{r}");
    assert!(r.stdout.ends_with("\nverdict       usable\n"), "{r}");
}

#[test]
fn a_path_that_does_not_exist() {
    let path = PathBuf::from("/nonexistent/liblockstep_nothing.so");
    match load_err(&path) {
        AbiError::LibraryNotFound { path: p } => assert_eq!(p, path),
        other => panic!("{other:?}"),
    }
    let text = "autopilot library /nonexistent/liblockstep_nothing.so does not exist";
    assert_eq!(load_err(&path).to_string(), text);
    assert_check_lib_refuses_outright(&path, text);
}

#[test]
fn a_dangling_symlink_does_not_exist_either() {
    let dir = TempDir::new("dangling");
    let link = dir.join("libdangling.so");
    std::os::unix::fs::symlink("/nonexistent/liblockstep_nothing.so", &link).unwrap();
    let text = format!("autopilot library {} does not exist", link.display());
    assert!(matches!(load_err(&link), AbiError::LibraryNotFound { path } if path == link));
    assert_eq!(load_err(&link).to_string(), text);
    assert_check_lib_refuses_outright(&link, &text);
}

#[test]
fn a_directory() {
    let dir = TempDir::new("directory");
    assert_refused_with(dir.path(), "not a regular file");
}

#[test]
fn a_symlink_loop() {
    let dir = TempDir::new("symlink-loop");
    let (a, b) = (dir.join("liba.so"), dir.join("libb.so"));
    std::os::unix::fs::symlink(&b, &a).unwrap();
    std::os::unix::fs::symlink(&a, &b).unwrap();
    assert_refused_with(&a, "Too many levels of symbolic links (os error 40)");
}

#[test]
fn an_unreadable_file() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    let dir = TempDir::new("unreadable");
    let path = dir.join("libunreadable.so");
    std::fs::copy(broken("idle"), &path).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o000)).unwrap();
    let reason = "cannot open it for reading: Permission denied (os error 13)";
    let text = format!("cannot load autopilot library {}: {reason}", path.display());
    if std::fs::File::open(&path).is_err() {
        assert_refused_with(&path, reason);
        return;
    }
    // Privileged (root reads anything): the in-process half cannot be
    // tested here; check-lib is run as an unprivileged user instead.
    println!(
        "note: this test runs privileged and can read a mode-000 file; the in-process \
         half of an_unreadable_file is skipped, check-lib runs as uid/gid 65534"
    );
    let r = ran(std::process::Command::new(LOCKSTEP)
        .arg("check-lib")
        .arg(&path)
        .uid(65534)
        .gid(65534));
    assert_eq!(r.code(), 1, "{r}");
    assert_eq!(
        r.stdout,
        format!(
            "library       {}\nverdict       NOT USABLE: {text}\n",
            path.display()
        ),
        "{r}"
    );
}

#[test]
fn a_missing_dependency_keeps_the_loaders_reason() {
    assert_refused_with(
        &broken("missing_dependency"),
        "liblockstep_phantom.so: cannot open shared object file: No such file or directory",
    );
}

#[test]
fn an_empty_file() {
    assert_refused_with(&broken("empty"), "the file is empty");
}

/// Where the first loadable segment that a file of `len` bytes cuts short
/// ends, read from the program headers of the (little-endian, 64-bit)
/// library the truncated fixture was cut from.
fn first_cut_segment_end(elf: &[u8], len: u64) -> u64 {
    let u16_at = |o: usize| u16::from_le_bytes([elf[o], elf[o + 1]]) as usize;
    let u64_at = |o: usize| u64::from_le_bytes(elf[o..o + 8].try_into().unwrap());
    let (phoff, phentsize, phnum) = (u64_at(32) as usize, u16_at(54), u16_at(56));
    (0..phnum)
        .map(|i| phoff + i * phentsize)
        .filter(|&h| u32::from_le_bytes(elf[h..h + 4].try_into().unwrap()) == 1)
        .map(|h| u64_at(h + 8) + u64_at(h + 32))
        .find(|&end| end > len)
        .expect("a loadable segment beyond the cut")
}

#[test]
#[cfg(all(target_pointer_width = "64", target_endian = "little"))]
fn a_truncated_file_names_its_length_and_what_is_missing() {
    let cut = std::fs::metadata(broken("truncated")).unwrap().len();
    assert_eq!(cut, 1000);
    let end = first_cut_segment_end(&std::fs::read(broken("idle")).unwrap(), cut);
    assert_refused_with(
        &broken("truncated"),
        &format!("truncated ELF file: 1000 bytes, a loadable segment ends at byte {end}"),
    );
}

#[test]
fn a_text_file() {
    assert_refused_with(
        &broken("not_elf"),
        "not an ELF shared object (no ELF magic)",
    );
}

#[test]
#[cfg(target_pointer_width = "64")]
fn a_32_bit_library() {
    assert_refused_with(
        &broken("wrong_class"),
        "wrong ELF class: the library is 32-bit, this harness is 64-bit",
    );
}

#[test]
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
fn a_library_for_another_machine() {
    let own = if cfg!(target_arch = "x86_64") {
        "x86-64"
    } else {
        "AArch64"
    };
    assert_refused_with(
        &broken("wrong_machine"),
        &format!("wrong machine: the library is for ARM (32-bit), this harness runs on {own}"),
    );
}

#[test]
fn an_undefined_symbol_fails_at_load_not_in_flight() {
    assert_refused_with(
        &broken("lazy_undefined"),
        "undefined symbol: lockstep_broken_no_such_function",
    );
    // `lockstep run` (the default scenario) refuses it before the flight:
    // a configuration error, the library named on a second line.
    let path = broken("lazy_undefined");
    let r = lockstep(&[Path::new("run"), Path::new("--autopilot"), &path]);
    assert_run_refused(
        &r,
        &path,
        &format!(
            "cannot load autopilot library {}: undefined symbol: \
             lockstep_broken_no_such_function",
            path.display()
        ),
        2,
    );
}

#[test]
fn a_layout_table_pointing_into_nothing() {
    assert_unusable_table(
        "table_bad_pointer",
        &format!(
            "the {} structs at 0x10 run outside the library's memory",
            struct_count()
        ),
    );
}

#[test]
fn a_layout_table_with_an_absurd_count() {
    assert_unusable_table(
        "table_count",
        "struct_count 100000 is more than a table can hold (at most 256)",
    );
}

#[test]
fn a_layout_table_counting_past_its_array() {
    // Three entries past the array are read from whatever follows it in the
    // library; the first of them is refused, named by its index (its
    // contents are garbage), with a hint at the likely cause.
    let n = struct_count();
    assert_unusable_table(
        "table_garbage_count",
        &format!(
            "entry {n} of {}: its fields run outside the library's memory; is struct_count \
             larger than the table?",
            n + 3
        ),
    );
}

#[test]
fn a_layout_table_listing_a_field_twice() {
    assert_unusable_table(
        "table_duplicate",
        "lockstep_baro.pressure_pa is listed twice",
    );
}

#[test]
fn a_layout_table_listing_a_struct_twice() {
    // The fixture repeats the table's last entry.
    assert_eq!(
        lockstep_abi::layout::expected().last().unwrap().name,
        "lockstep_mission_item"
    );
    let reason = "lockstep_mission_item is listed twice";
    assert_unusable_table("table_duplicate_struct", reason);
    let path = broken("table_duplicate_struct");
    assert_run_refuses_before_the_flight(
        &path,
        &format!(
            "autopilot library {} reports an unusable layout table: {reason}",
            path.display()
        ),
    );
}

#[test]
fn unknown_capability_bits() {
    let path = broken("unknown_caps");
    match load_err(&path) {
        AbiError::UnknownCapabilities { path: p, bits } => {
            assert_eq!(p, path);
            assert_eq!(bits, 0x8000_0000);
        }
        other => panic!("expected UnknownCapabilities, got {other:?}"),
    }
    let text = format!(
        "autopilot library {} reports unknown capability bits 0x80000000 (this harness knows \
         LOCKSTEP_AP_CAP_REENTRANT = 0x1); it may rely on behaviour the harness does not provide",
        path.display()
    );
    assert_eq!(load_err(&path).to_string(), text);
    assert_check_lib_judges_unusable(
        &path,
        &["capabilities  0x80000001: re-entrant, UNKNOWN bits 0x80000000"],
        &text,
    );
    assert_run_refuses_before_the_flight(&path, &text);
}

#[test]
fn a_constructor_that_segfaults_is_a_verdict_not_the_end_of_check_lib() {
    let path = broken("ctor_segv");
    assert_check_lib_refuses_outright(
        &path,
        "the autopilot was killed by signal SIGSEGV (segmentation fault) in library load",
    );
}

#[test]
fn a_constructor_that_exits_is_a_verdict_not_the_end_of_check_lib() {
    let path = broken("ctor_exit0");
    assert_check_lib_refuses_outright(
        &path,
        "the autopilot exited with status 0 in library load: the library ended its process",
    );
}

#[test]
fn probing_constructors_that_crash_or_exit_reports_them() {
    for (case, cause, detail, text) in [
        (
            "ctor_segv",
            "was killed by signal SIGSEGV (segmentation fault)",
            "",
            "the autopilot was killed by signal SIGSEGV (segmentation fault) in library load",
        ),
        (
            "ctor_exit0",
            "exited with status 0",
            "the library ended its process",
            "the autopilot exited with status 0 in library load: the library ended its process",
        ),
    ] {
        let err = probe(&HOST.into(), &broken(case), None).expect_err(case);
        match &err {
            AbiError::Crashed {
                function,
                time_us,
                cause: c,
                detail: d,
            } => {
                assert_eq!(*function, Function::Load, "{case}");
                assert_eq!(*time_us, None, "{case}");
                assert_eq!(c, cause, "{case}");
                assert_eq!(d, detail, "{case}");
            }
            other => panic!("{case}: expected Crashed, got {other:?}"),
        }
        assert_eq!(err.to_string(), text, "{case}");
    }
}

#[test]
fn running_a_library_whose_constructor_crashes_or_exits_is_a_run_error() {
    // A crash or exit of the library, even while loading, is status 1 (the
    // loader's refusals are 2), in both modes: in-process, the library is
    // probed in a child first.
    let dir = TempDir::new("ctor-run");
    let scenario = idle_scenario(dir.path(), "idle.toml", 1.0, 10);
    let log = dir.join("log.csv");
    for (case, message) in [
        (
            "ctor_segv",
            "the autopilot was killed by signal SIGSEGV (segmentation fault) in library load",
        ),
        (
            "ctor_exit0",
            "the autopilot exited with status 0 in library load: the library ended its process",
        ),
    ] {
        for isolation in ["process", "in-process"] {
            let path = broken(case);
            let r = run_with(
                &scenario,
                &path,
                &["--log", log.to_str().unwrap(), "--isolation", isolation],
            );
            assert_run_refused(&r, &path, message, 1);
            assert!(!log.exists(), "{case} {isolation}");
        }
    }
}

#[test]
fn a_constructor_that_hangs_is_stopped_by_the_watchdog() {
    let options = IsolationOptions {
        call_timeout: Duration::from_secs(1),
        host: Some(HOST.into()),
        ..IsolationOptions::default()
    };
    let start = Instant::now();
    let err = probe(&HOST.into(), &broken("ctor_hang"), Some(&options))
        .expect_err("a hanging constructor is an error");
    let took = start.elapsed();
    assert!(
        took >= Duration::from_secs(1) && took < Duration::from_secs(4),
        "{took:?}"
    );
    match &err {
        AbiError::Crashed {
            function,
            time_us,
            cause,
            detail,
        } => {
            assert_eq!(*function, Function::Load);
            assert_eq!(*time_us, None);
            assert_eq!(cause, "hung");
            assert_eq!(detail, HUNG_IN_A_CALL);
        }
        other => panic!("expected Crashed, got {other:?}"),
    }
    assert_eq!(
        err.to_string(),
        format!("the autopilot hung in library load: {HUNG_IN_A_CALL}")
    );
}

/// What the watchdog says of a call other than step that took more than
/// 1 s.
const HUNG_IN_A_CALL: &str = "no answer within 1 s (the watchdog's limit for this call, \
                              --call-timeout); its process was stopped";

#[test]
fn check_lib_stops_a_hanging_constructor_after_its_call_timeout() {
    let path = broken("ctor_hang");
    let r = lockstep(&[
        Path::new("check-lib"),
        &path,
        Path::new("--call-timeout"),
        Path::new("1"),
    ]);
    assert!(
        r.wall >= Duration::from_secs(1) && r.wall < Duration::from_secs(5),
        "took {:?}",
        r.wall
    );
    assert_eq!(r.code(), 1, "{r}");
    assert_eq!(
        r.stdout,
        format!(
            "library       {}\nverdict       NOT USABLE: the autopilot hung in library load: \
             {HUNG_IN_A_CALL}\n",
            path.display()
        ),
        "{r}"
    );
    assert_eq!(r.stderr, "", "{r}");
}

#[test]
fn a_run_stops_a_hanging_constructor_after_its_call_timeout() {
    let dir = TempDir::new("ctor-hang-run");
    let scenario = idle_scenario(dir.path(), "idle.toml", 1.0, 10);
    let path = broken("ctor_hang");
    let r = run_with(&scenario, &path, &["--call-timeout", "1"]);
    assert!(
        r.wall >= Duration::from_secs(1) && r.wall < Duration::from_secs(5),
        "took {:?}",
        r.wall
    );
    assert_run_refused(
        &r,
        &path,
        &format!("the autopilot hung in library load: {HUNG_IN_A_CALL}"),
        1,
    );
}

#[test]
fn the_call_timeout_must_be_a_positive_number_of_seconds() {
    for command in ["check-lib", "run"] {
        for bad in ["0", "-1", "nan", "inf", "86401", "soon"] {
            let r = lockstep(&[command.to_string(), format!("--call-timeout={bad}")]);
            assert_eq!(r.code(), 2, "{command} {bad}: {r}");
            let reason = match bad {
                "soon" => "invalid float literal".to_string(),
                _ => format!("{bad} is not a number of seconds in (0, 86400]"),
            };
            assert!(
                r.stderr.starts_with(&format!(
                    "error: invalid value '{bad}' for '--call-timeout <CALL_TIMEOUT>': {reason}\n"
                )),
                "{command} {bad}: {r}"
            );
            assert_eq!(r.stdout, "", "{command} {bad}: {r}");
        }
    }
}

#[test]
fn an_in_process_run_probes_a_crashing_constructor_in_a_child_first() {
    let dir = TempDir::new("ctor-in-process");
    let scenario = idle_scenario(dir.path(), "idle.toml", 1.0, 10);
    let path = broken("ctor_segv");
    let r = lockstep(&[
        Path::new("run"),
        &scenario,
        Path::new("--autopilot"),
        &path,
        Path::new("--isolation"),
        Path::new("in-process"),
    ]);
    // The harness survives the library's constructor: status 1, the
    // library named.
    assert_run_refused(
        &r,
        &path,
        "the autopilot was killed by signal SIGSEGV (segmentation fault) in library load",
        1,
    );
}

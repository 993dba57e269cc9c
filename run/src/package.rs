//! The scenario's vehicle as an FMI 2.0 co-simulation FMU, self-contained
//! (`lockstep fmu SCENARIO -o vehicle.fmu`):
//!
//! ```text
//! modelDescription.xml                    from lockstep_fmu's variable table
//! binaries/linux64/lockstep_vehicle.so    the lockstep-fmu library
//! resources/scenario.toml                 the scenario, its paths rewritten to:
//! resources/mission.<ext>                 its mission (if any)
//! resources/spec.toml                     its aircraft, resolved (a spec file)
//! resources/autopilot.so                  the autopilot library
//! resources/guid                          the GUID the description states
//! ```

use std::io::Write;
use std::path::{Path, PathBuf};

use lockstep_harness::engine::PlantRunner;
use lockstep_harness::inputs::scenario::Scenario;
use sha2::{Digest, Sha256};

use crate::RunError;
use crate::outputs::{check_against_inputs, scenario_inputs};

/// The FMU library: `explicit`, else next to this executable.
fn library_path(explicit: Option<&Path>) -> Result<PathBuf, String> {
    let name = format!(
        "{}lockstep_fmu{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    );
    let p = match explicit {
        Some(p) => p.to_path_buf(),
        None => std::env::current_exe()
            .map_err(|e| format!("cannot locate this executable: {e}"))?
            .with_file_name(&name),
    };
    if p.is_file() {
        Ok(p)
    } else {
        Err(format!(
            "the FMU library {} does not exist: build it (`cargo build --release -p lockstep-fmu` puts {name} next to lockstep) or name it with --library",
            p.display()
        ))
    }
}

fn read(p: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(p).map_err(|e| format!("cannot read {}: {e}", p.display()))
}

/// The FMU's files: (path in the archive, bytes, executable).
type Files = Vec<(String, Vec<u8>, bool)>;

/// Everything the FMU holds, and its description's GUID: the scenario
/// `scenario` (read from `scenario_path`), `autopilot`, and the FMU
/// library's bytes.
fn contents(
    scenario_path: &Path,
    scenario: &Scenario,
    autopilot: &Path,
    lib_bytes: Vec<u8>,
) -> Result<Files, String> {
    let runner = PlantRunner::from_scenario(scenario).map_err(|e| e.to_string())?;
    let text = lockstep_config::read(scenario_path, "scenario").map_err(|e| e.to_string())?;
    let mut table: toml::Table = text
        .parse()
        .map_err(|e| format!("{}: {e}", scenario_path.display()))?;
    let mut files: Files = Vec::new();
    let vehicle = table
        .entry("vehicle")
        .or_insert_with(|| toml::Value::Table(Default::default()))
        .as_table_mut()
        .ok_or_else(|| format!("{}: `vehicle` is not a table", scenario_path.display()))?;
    if let Some(m) = &scenario.mission {
        let ext = m
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or("waypoints");
        let name = format!("mission.{ext}");
        files.push((format!("resources/{name}"), read(m)?, false));
        vehicle.insert("mission".into(), toml::Value::String(name));
    }
    let builtin = lockstep_plant::spec::BUILTIN_SPECS
        .iter()
        .any(|(n, _)| *n == scenario.spec);
    if !builtin {
        let spec =
            lockstep_plant::AircraftSpec::resolve(&scenario.spec).map_err(|e| e.to_string())?;
        files.push((
            "resources/spec.toml".into(),
            spec.to_toml_string().into_bytes(),
            false,
        ));
        vehicle.insert("spec".into(), toml::Value::String("spec.toml".into()));
    }
    let scenario_text = toml::to_string(&table).map_err(|e| e.to_string())?;
    let autopilot_bytes = read(autopilot)?;
    let reentrant = reentrant(autopilot)?;
    // Everything the FMU holds names it: another library or autopilot is
    // another FMU.
    let mut h = Sha256::new();
    h.update(env!("CARGO_PKG_VERSION"));
    h.update(&scenario_text);
    h.update(&autopilot_bytes);
    h.update(&lib_bytes);
    for (n, b, _) in &files {
        h.update(n);
        h.update(b);
    }
    let d = h.finalize();
    let hex = lockstep_harness::io::digest::hex(&d[..16]);
    let guid = format!(
        "{{{}-{}-{}-{}-{}}}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    );
    let p = runner.plant();
    let variables = lockstep_fmu::variables::table(
        p.rotors.len(),
        p.batteries.len(),
        scenario.seed,
        scenario.start,
    );
    let name = scenario_path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("vehicle");
    let finest = scenario
        .cadences
        .iter()
        .map(|c| c.period.0)
        .min()
        .unwrap_or(1000);
    let xml = lockstep_fmu::Description {
        model_name: name,
        description: scenario
            .description
            .as_deref()
            .unwrap_or("a lockstep vehicle"),
        guid: &guid,
        stop_time_s: scenario.duration.0 as f64 * 1e-6,
        step_s: finest as f64 * 1e-6,
        one_instance_per_process: !reentrant,
        variables: &variables,
    }
    .xml();
    files.push(("modelDescription.xml".into(), xml.into_bytes(), false));
    files.push((
        format!("binaries/linux64/{}.so", lockstep_fmu::MODEL_IDENTIFIER),
        lib_bytes,
        true,
    ));
    files.push((
        "resources/scenario.toml".into(),
        scenario_text.into_bytes(),
        false,
    ));
    files.push(("resources/autopilot.so".into(), autopilot_bytes, true));
    files.push(("resources/guid".into(), guid.into_bytes(), false));
    Ok(files)
}

/// Whether the autopilot library allows several instances per process (its
/// capabilities, read in a child process so a broken library cannot take
/// this one down).
fn reentrant(autopilot: &Path) -> Result<bool, String> {
    let host = lockstep_abi::isolate::host_program(None).map_err(|e| e.to_string())?;
    let report = lockstep_abi::isolate::probe(&host, autopilot, None)
        .and_then(|r| r.problem_free())
        .map_err(|e| e.to_string())?;
    Ok(report.capabilities.unwrap_or(0) & lockstep_abi::ffi::LOCKSTEP_AP_CAP_REENTRANT != 0)
}

/// Refuses as the FMU's binary a file that is not a shared library
/// exporting FMI 2.0's functions (read, never loaded: no code of it runs).
fn check_exports(lib: &Path, bytes: &[u8]) -> Result<(), String> {
    use object::{Object, ObjectKind};
    let file = object::File::parse(bytes).map_err(|e| {
        format!(
            "the FMU library {} is not a shared library: {e}",
            lib.display()
        )
    })?;
    if file.kind() != ObjectKind::Dynamic {
        return Err(format!(
            "the FMU library {} is not a shared library ({:?})",
            lib.display(),
            file.kind()
        ));
    }
    // binaries/linux64 is x86-64's: a library built for another machine
    // or as 32-bit would fail only when a master loads it.
    if file.architecture() != object::Architecture::X86_64 || !file.is_64() {
        return Err(format!(
            "the FMU library {} is built for {:?}{}, not x86-64 (the FMU's binaries/linux64)",
            lib.display(),
            file.architecture(),
            if file.is_64() { "" } else { " (32-bit)" }
        ));
    }
    let exports = file
        .exports()
        .map_err(|e| format!("the FMU library {}: its symbols: {e}", lib.display()))?;
    let names: std::collections::HashSet<&[u8]> = exports.iter().map(|e| e.name()).collect();
    let missing: Vec<&str> = lockstep_fmu::FMI2_FUNCTIONS
        .iter()
        .copied()
        .filter(|f| !names.contains(f.as_bytes()))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let shown = if missing.len() > 4 {
        format!(
            "{}, ... ({} in all)",
            missing[..4].join(", "),
            missing.len()
        )
    } else {
        missing.join(", ")
    };
    Err(format!(
        "the FMU library {} does not export FMI 2.0's functions (missing: {shown}): name lockstep's FMU library (liblockstep_fmu.so) with --library",
        lib.display()
    ))
}

/// The archive of `files`, in memory (a few MB): writing it is then one
/// file write whose error is the system's own.
fn archive(files: &Files) -> Result<Vec<u8>, String> {
    let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (name, bytes, exec) in files {
        let o = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            // Fast: the library is most of the bytes; level 1 packs a debug
            // build's 50 MB in 0.4 s to 16 MB (the default level: 13 MB in
            // 3 s).
            .compression_level(Some(1))
            .unix_permissions(if *exec { 0o755 } else { 0o644 });
        z.start_file(name.as_str(), o)
            .map_err(|e| format!("packing {name}: {e}"))?;
        z.write_all(bytes)
            .map_err(|e| format!("packing {name}: {e}"))?;
    }
    let cursor = z.finish().map_err(|e| format!("packing: {e}"))?;
    Ok(cursor.into_inner())
}

/// Writes the archive to `f` (created at `out`); a failure removes what
/// was written of a regular file.
fn write_archive(out: &Path, mut f: std::fs::File, bytes: &[u8]) -> Result<(), String> {
    let written = f.write_all(bytes).and_then(|()| f.sync_all());
    if let Err(e) = written {
        if std::fs::metadata(out).is_ok_and(|m| m.is_file()) {
            let _ = std::fs::remove_file(out);
        }
        return Err(format!("writing {}: {e}", out.display()));
    }
    Ok(())
}

/// Packages `scenario`'s vehicle as an FMU at `out`, with `autopilot`
/// inside and the FMU library `library` (default: `liblockstep_fmu` next
/// to the running executable); the number of files packed. What cannot
/// be packed or written where asked (a library without FMI's functions,
/// `out` naming an input, a directory or a place not writable) is the
/// request's fault, found before the archive is begun.
pub fn fmu(
    scenario: &Path,
    out: &Path,
    autopilot: &Path,
    library: Option<&Path>,
) -> Result<usize, RunError> {
    let config = |m: String| RunError::configuration(m);
    if !cfg!(all(target_os = "linux", target_arch = "x86_64")) {
        return Err(config(
            "FMUs are packaged for linux64 only, on Linux x86-64".into(),
        ));
    }
    let lib = library_path(library).map_err(config)?;
    let lib_bytes = read(&lib).map_err(config)?;
    check_exports(&lib, &lib_bytes).map_err(config)?;
    let s = Scenario::load(scenario).map_err(|e| config(e.to_string()))?;
    let mut inputs = scenario_inputs(scenario, autopilot, &s);
    inputs.push(("the FMU library", &lib));
    check_against_inputs(&inputs, &[("-o", out)])?;
    if out.is_dir() {
        return Err(config(format!("-o {} is a directory", out.display())));
    }
    let files = contents(scenario, &s, autopilot, lib_bytes).map_err(config)?;
    let bytes = archive(&files).map_err(RunError::run_failure)?;
    let f = std::fs::File::create(out)
        .map_err(|e| config(format!("-o {}: cannot create it: {e}", out.display())))?;
    write_archive(out, f, &bytes).map_err(RunError::run_failure)?;
    Ok(files.len())
}

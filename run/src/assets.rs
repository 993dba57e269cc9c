//! What the binary carries, so that `lockstep fly` works wherever it is
//! installed (`cargo install --path .`), whether or not the source tree it
//! was built from still exists: the reference autopilot library, the
//! default scenario and its mission. While the build tree's files exist
//! with the very bytes embedded, they are used (a `cargo run` shows the
//! paths in the tree); otherwise, or with `LOCKSTEP_IGNORE_BUILD_TREE=1`,
//! the embedded copies are written once into a cache directory named by
//! their contents' digest, and used from there:
//!
//! `$XDG_CACHE_HOME/lockstep/<version>-<digest>/` (else
//! `$HOME/.cache/lockstep/...`, else the system's temporary directory),
//! holding `liblockstep_autopilot.so` and every example in `examples/`'s
//! layout (`scenarios/square.toml`, `missions/square.waypoints`, ...; see
//! [`crate::examples`]).

use std::io;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

const AUTOPILOT: &[u8] = lockstep_c_examples::REFERENCE_AUTOPILOT_BYTES;
const SCENARIO: &[u8] = include_bytes!("../../examples/scenarios/square.toml");
const MISSION: &[u8] = include_bytes!("../../examples/missions/square.waypoints");

/// The files, relative to the bundle's directory: the autopilot and every
/// example in `examples/`'s layout.
fn files() -> impl Iterator<Item = (&'static str, &'static [u8])> {
    std::iter::once((AUTOPILOT_FILE, AUTOPILOT)).chain(crate::examples::EXAMPLES.iter().copied())
}

const AUTOPILOT_FILE: &str = if cfg!(target_os = "macos") {
    "liblockstep_autopilot.dylib"
} else {
    "liblockstep_autopilot.so"
};

/// The directory the bundle lives in (created and checked on first use).
fn directory() -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|h| PathBuf::from(h).join(".cache"))
        })
        .unwrap_or_else(std::env::temp_dir);
    let mut h = Sha256::new();
    for (name, bytes) in files() {
        h.update(name.as_bytes());
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    }
    let digest = lockstep_harness::io::digest::hex(&h.finalize()[..8]);
    base.join("lockstep")
        .join(format!("{}-{digest}", env!("CARGO_PKG_VERSION")))
}

/// Makes sure every file of the bundle is in place with its exact bytes
/// (written to a temporary name, then renamed, so a concurrent run never
/// sees half a file) and returns the bundle's directory.
fn materialize() -> io::Result<PathBuf> {
    let dir = directory();
    for (name, bytes) in files() {
        let path = dir.join(name);
        if std::fs::read(&path).is_ok_and(|b| b == bytes) {
            continue;
        }
        let parent = path.parent().expect("bundle files live in a directory");
        std::fs::create_dir_all(parent).map_err(|e| named(parent, e))?;
        let tmp = parent.join(format!(
            ".{}.{}.tmp",
            path.file_name().and_then(|f| f.to_str()).unwrap_or("file"),
            std::process::id()
        ));
        std::fs::write(&tmp, bytes).map_err(|e| named(&tmp, e))?;
        std::fs::rename(&tmp, &path).map_err(|e| named(&path, e))?;
    }
    Ok(dir)
}

fn named(path: &Path, e: io::Error) -> io::Error {
    io::Error::new(
        e.kind(),
        format!("cannot write the bundled files to {}: {e}", path.display()),
    )
}

/// The build tree's copies of the files, when they still hold the bytes
/// this binary embeds (and the environment does not say to ignore them).
fn build_tree(files: &[(&Path, &[u8])]) -> bool {
    let ignore = std::env::var_os("LOCKSTEP_IGNORE_BUILD_TREE").is_some_and(|v| v == "1");
    !ignore
        && files
            .iter()
            .all(|(p, bytes)| std::fs::read(p).is_ok_and(|b| b == *bytes))
}

/// The repository this crate was built in (the parent of `run/`).
fn tree(relative: &str) -> PathBuf {
    let run = Path::new(env!("CARGO_MANIFEST_DIR"));
    run.parent().unwrap_or(run).join(relative)
}

/// The bundled reference autopilot library.
pub fn autopilot() -> io::Result<PathBuf> {
    let in_tree = Path::new(lockstep_c_examples::REFERENCE_AUTOPILOT);
    if build_tree(&[(in_tree, AUTOPILOT)]) {
        return Ok(in_tree.to_path_buf());
    }
    Ok(materialize()?.join(AUTOPILOT_FILE))
}

/// The default scenario (the Iris flying the square mission), with its
/// mission next to it as its relative path says.
pub fn default_scenario() -> io::Result<PathBuf> {
    let scenario = tree("examples/scenarios/square.toml");
    let mission = tree("examples/missions/square.waypoints");
    if build_tree(&[(&scenario, SCENARIO), (&mission, MISSION)]) {
        return Ok(scenario);
    }
    Ok(materialize()?.join("scenarios/square.toml"))
}

/// The bundled autopilot unless `given`.
pub fn autopilot_or(given: Option<PathBuf>) -> io::Result<PathBuf> {
    given.map_or_else(autopilot, Ok)
}

const SLUNG_LOAD_BINARY: &[u8] = lockstep_c_examples::SLUNG_LOAD_FMU_BINARY_BYTES;
const SLUNG_LOAD_DESCRIPTION: &str = lockstep_c_examples::SLUNG_LOAD_FMU_DESCRIPTION;

/// The FMUs the binary carries (their sources in `c_examples/`), by the
/// name a system file gives after `bundled:`.
pub const FMUS: [&str; 1] = ["slung_load"];

/// The platform folder under `binaries/` of an FMU built here.
fn fmu_platform() -> &'static str {
    if cfg!(all(target_os = "linux", target_arch = "aarch64")) {
        "aarch64-linux"
    } else if cfg!(target_os = "macos") {
        "darwin64"
    } else {
        "linux64"
    }
}

/// The bundled FMU `name` as the bytes of an `.fmu` archive (the same
/// bytes every time: fixed entry times and order).
fn fmu_bytes(name: &str) -> Result<Vec<u8>, String> {
    use std::io::Write as _;
    if name != "slung_load" {
        return Err(format!(
            "no bundled FMU `{name}` (bundled: {})",
            FMUS.join(", ")
        ));
    }
    let mut z = zip::ZipWriter::new(io::Cursor::new(Vec::new()));
    let files: [(String, &[u8], u32); 2] = [
        (
            "modelDescription.xml".into(),
            SLUNG_LOAD_DESCRIPTION.as_bytes(),
            0o644,
        ),
        (
            format!(
                "binaries/{}/slung_load{}",
                fmu_platform(),
                std::env::consts::DLL_SUFFIX
            ),
            SLUNG_LOAD_BINARY,
            0o755,
        ),
    ];
    for (path, bytes, mode) in files {
        let o = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .unix_permissions(mode);
        z.start_file(path.as_str(), o)
            .and_then(|()| z.write_all(bytes).map_err(Into::into))
            .map_err(|e| format!("packing the bundled FMU {name}: {e}"))?;
    }
    z.finish()
        .map(|c| c.into_inner())
        .map_err(|e| format!("packing the bundled FMU {name}: {e}"))
}

/// Writes the bundled FMU `name` to `out`.
pub fn write_fmu(name: &str, out: &Path) -> Result<(), String> {
    let bytes = fmu_bytes(name)?;
    std::fs::write(out, bytes).map_err(|e| format!("cannot write {}: {e}", out.display()))
}

/// The bundled FMU `name`, packed once into the bundle's directory
/// (`fmus/<name>.fmu`; rewritten when this binary carries other bytes).
pub fn fmu(name: &str) -> Result<PathBuf, String> {
    let bytes = fmu_bytes(name)?;
    let dir = directory().join("fmus");
    let path = dir.join(format!("{name}.fmu"));
    if std::fs::read(&path).is_ok_and(|b| b == bytes) {
        return Ok(path);
    }
    std::fs::create_dir_all(&dir).map_err(|e| named(&dir, e).to_string())?;
    let tmp = dir.join(format!(".{name}.fmu.{}.tmp", std::process::id()));
    std::fs::write(&tmp, &bytes).map_err(|e| named(&tmp, e).to_string())?;
    std::fs::rename(&tmp, &path).map_err(|e| named(&path, e).to_string())?;
    Ok(path)
}

//! Importing an FMI 2.0 co-simulation FMU as a participant: the archive
//! (or an unpacked FMU directory) read, its description parsed, its binary
//! for this platform loaded and instantiated; its inputs and outputs become
//! the participant's (Real, Integer and Boolean scalars, as f64).
//!
//! The FMU runs in this process: a crash inside it ends the process (the
//! co-simulation's record is flushed at every step it completed).

mod binary;
pub mod model_description;

use std::ffi::{c_int, c_uint};
use std::path::{Path, PathBuf};

use lockstep_harness::Micros;

use crate::participant::{Participant, ParticipantError, Variable};
use crate::report::{FmuReport, ParticipantReport};
use binary::Instance;
use model_description::{Causality, ModelDescription, ScalarType};

/// The most bytes an FMU archive may unpack to.
pub const MAX_UNPACKED_BYTES: u64 = 1 << 30;

/// The platform folder of `binaries/` for this build.
fn platform() -> &'static [&'static str] {
    if cfg!(all(target_os = "linux", target_arch = "x86_64")) {
        &["linux64"]
    } else if cfg!(all(target_os = "linux", target_arch = "aarch64")) {
        &["aarch64-linux", "linux64"]
    } else if cfg!(target_os = "macos") {
        &["darwin64", "aarch64-darwin", "x86_64-darwin"]
    } else if cfg!(target_os = "windows") {
        &["win64"]
    } else {
        &["linux64"]
    }
}

fn library_name(id: &str) -> String {
    format!("{id}{}", std::env::consts::DLL_SUFFIX)
}

/// `path` as a `file://` URI, made absolute (a URI has no relative form:
/// `file://dir/x` names the host `dir`), bytes outside the unreserved set
/// percent-encoded.
fn file_uri(path: &Path) -> Result<String, String> {
    let path = std::path::absolute(path)
        .map_err(|e| format!("cannot make {} absolute: {e}", path.display()))?;
    let mut s = String::from("file://");
    // The path's own bytes (not a lossy UTF-8 form), each outside the
    // unreserved set as %XX.
    for &b in path.as_os_str().as_encoded_bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            s.push(b as char);
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    Ok(s)
}

/// Unpacks the archive at `path` into a fresh temporary directory.
fn unpack(path: &Path) -> Result<tempfile::TempDir, String> {
    let file =
        std::fs::File::open(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut zip = zip::ZipArchive::new(file)
        .map_err(|e| format!("{} is not an FMU archive (a zip file): {e}", path.display()))?;
    let total: u64 = (0..zip.len())
        .filter_map(|i| zip.by_index_raw(i).ok().map(|f| f.size()))
        .sum();
    if total > MAX_UNPACKED_BYTES {
        return Err(format!(
            "{} unpacks to {total} bytes; at most {MAX_UNPACKED_BYTES}",
            path.display()
        ));
    }
    let dir = tempfile::Builder::new()
        .prefix("lockstep-fmu-")
        .tempdir()
        .map_err(|e| format!("cannot make a directory to unpack {}: {e}", path.display()))?;
    // `extract` refuses entries that would land outside the directory.
    zip.extract(dir.path())
        .map_err(|e| format!("cannot unpack {}: {e}", path.display()))?;
    Ok(dir)
}

#[derive(Debug, Clone, Copy)]
struct Port {
    vr: c_uint,
    ty: ScalarType,
}

/// An FMU as a participant.
pub struct FmuParticipant {
    description: ModelDescription,
    inst: Instance,
    inputs: Vec<(Variable, Port)>,
    outputs: Vec<(Variable, Port)>,
    /// Output values after the last step, in output order.
    values: Vec<f64>,
    real_out: (Vec<c_uint>, Vec<usize>),
    int_out: (Vec<c_uint>, Vec<usize>),
    bool_out: (Vec<c_uint>, Vec<usize>),
    warnings: Vec<String>,
    step_warnings: u64,
    steps: u64,
    _unpacked: Option<tempfile::TempDir>,
    location: PathBuf,
    // Dropped after the instance (declared after it).
    #[cfg(unix)]
    _preloaded: Vec<libloading::os::unix::Library>,
}

impl std::fmt::Debug for FmuParticipant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FmuParticipant")
            .field("model", &self.description.model_name)
            .field("location", &self.location)
            .finish_non_exhaustive()
    }
}

fn int_value(name: &str, v: f64, ty: ScalarType) -> Result<c_int, String> {
    match ty {
        ScalarType::Boolean => Ok(c_int::from(v != 0.0)),
        _ => {
            if v.fract() != 0.0 || !(c_int::MIN as f64..=c_int::MAX as f64).contains(&v) {
                Err(format!(
                    "`{name}` is an Integer and {v} is not a 32-bit integer"
                ))
            } else {
                Ok(v as c_int)
            }
        }
    }
}

impl FmuParticipant {
    /// The FMU at `path` (a `.fmu` archive or an unpacked FMU directory),
    /// instantiated as `instance`, with `start` values set on its
    /// parameters and inputs before initialization, after loading the
    /// `preload` libraries.
    pub fn load(
        path: &Path,
        instance: &str,
        start: &[(String, f64)],
        preload: &[String],
    ) -> Result<FmuParticipant, String> {
        #[cfg(unix)]
        let preloaded = preload
            .iter()
            .map(|p| binary::preload(p))
            .collect::<Result<Vec<_>, _>>()?;
        #[cfg(not(unix))]
        for p in preload {
            binary::preload(p)?;
        }
        let (unpacked, root) = if path.is_dir() {
            (None, path.to_path_buf())
        } else {
            let d = unpack(path)?;
            let root = d.path().to_path_buf();
            (Some(d), root)
        };
        let (description, encoding_note) = read_description(path, &root)?;
        let lib = library_name(&description.model_identifier);
        let binary = platform()
            .iter()
            .map(|p| root.join("binaries").join(p).join(&lib))
            .find(|b| b.is_file())
            .ok_or_else(|| {
                format!(
                    "{}: no binary for this platform (looked for binaries/{{{}}}/{lib})",
                    path.display(),
                    platform().join(",")
                )
            })?;
        let resources =
            file_uri(&root.join("resources")).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut inst = Instance::new(&binary, instance, &description.guid, &resources)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        let mut warnings: Vec<String> = encoding_note.into_iter().collect();
        warnings.extend(description.warnings.iter().cloned());
        let note = |w: &mut Vec<String>, what: &str, warned: bool| {
            if warned {
                w.push(format!("{what} returned fmi2Warning"));
            }
        };
        set_starts(&mut inst, &description, start, &mut warnings)?;
        let w = inst.enter_initialization()?;
        note(&mut warnings, "fmi2EnterInitializationMode", w);
        let w = inst.exit_initialization()?;
        note(&mut warnings, "fmi2ExitInitializationMode", w);
        // A variable starts where the system's `start` put it, else at the
        // description's start: an input nothing writes keeps that value,
        // also when its participant runs in another process (which is sent
        // every input each step).
        let port = |v: &model_description::ScalarVariable| {
            let given = start.iter().find(|(n, _)| n == &v.name).map(|s| s.1);
            (
                Variable::scalar(&v.name, given.or(v.start).unwrap_or(0.0), &v.description),
                Port {
                    vr: v.value_reference,
                    ty: v.ty,
                },
            )
        };
        let inputs: Vec<_> = description
            .variables
            .iter()
            .filter(|v| v.causality == Causality::Input)
            .map(port)
            .collect();
        let outputs: Vec<_> = description
            .variables
            .iter()
            .filter(|v| v.causality == Causality::Output)
            .map(port)
            .collect();
        let split = |ty: ScalarType| -> (Vec<c_uint>, Vec<usize>) {
            outputs
                .iter()
                .enumerate()
                .filter(|(_, (_, p))| p.ty == ty)
                .map(|(i, (_, p))| (p.vr, i))
                .unzip()
        };
        let mut p = FmuParticipant {
            real_out: split(ScalarType::Real),
            int_out: split(ScalarType::Integer),
            bool_out: split(ScalarType::Boolean),
            values: vec![0.0; outputs.len()],
            description,
            inst,
            inputs,
            outputs,
            warnings,
            step_warnings: 0,
            steps: 0,
            _unpacked: unpacked,
            location: path.to_path_buf(),
            #[cfg(unix)]
            _preloaded: preloaded,
        };
        p.read_outputs()?;
        for (i, (v, _)) in p.outputs.iter_mut().enumerate() {
            v.start = vec![p.values[i]];
        }
        Ok(p)
    }

    /// The model's description.
    pub fn description(&self) -> &ModelDescription {
        &self.description
    }

    fn read_outputs(&mut self) -> Result<(), String> {
        let (vr, idx) = &self.real_out;
        let mut buf = vec![0.0; vr.len()];
        if self.inst.get_real(vr, &mut buf)? {
            self.step_warnings += 1;
        }
        for (k, i) in idx.iter().enumerate() {
            self.values[*i] = buf[k];
        }
        for boolean in [false, true] {
            let (vr, idx) = if boolean {
                &self.bool_out
            } else {
                &self.int_out
            };
            let mut buf = vec![0 as c_int; vr.len()];
            if self.inst.get_int(boolean, vr, &mut buf)? {
                self.step_warnings += 1;
            }
            for (k, i) in idx.iter().enumerate() {
                self.values[*i] = if boolean {
                    f64::from(u8::from(buf[k] != 0))
                } else {
                    f64::from(buf[k])
                };
            }
        }
        Ok(())
    }
}

impl Participant for FmuParticipant {
    fn outputs(&self) -> Vec<Variable> {
        self.outputs.iter().map(|(v, _)| v.clone()).collect()
    }

    fn inputs(&self) -> Vec<Variable> {
        self.inputs.iter().map(|(v, _)| v.clone()).collect()
    }

    fn notices(&self) -> Vec<String> {
        self.warnings.clone()
    }

    fn set_input(&mut self, index: usize, value: &[f64]) -> Result<(), ParticipantError> {
        let (v, p) = &self.inputs[index];
        let w = match p.ty {
            ScalarType::Real => self.inst.set_real(&[p.vr], value)?,
            ty => {
                let i = int_value(&v.name, value[0], ty)?;
                self.inst
                    .set_int(ty == ScalarType::Boolean, &[p.vr], &[i])?
            }
        };
        if w {
            self.step_warnings += 1;
        }
        Ok(())
    }

    fn step(&mut self, t: Micros, dt: Micros) -> Result<(), ParticipantError> {
        if self.inst.do_step(t.as_secs_f64(), dt.as_secs_f64())? {
            self.step_warnings += 1;
        }
        self.read_outputs()?;
        self.steps += 1;
        Ok(())
    }

    fn output(&self, index: usize, out: &mut [f64]) -> Result<(), ParticipantError> {
        out[0] = self.values[index];
        Ok(())
    }

    fn finish(&mut self) -> Result<ParticipantReport, ParticipantError> {
        let terminated = self.inst.terminate();
        let log = self.inst.log_lines();
        if let Err(e) = terminated {
            return Err(ParticipantError(e));
        }
        Ok(ParticipantReport::Fmu(FmuReport {
            fmu: self.location.display().to_string(),
            model_name: self.description.model_name.clone(),
            steps: self.steps,
            warnings: self.warnings.clone(),
            calls_with_fmi2_warning: self.step_warnings,
            log,
        }))
    }
}

/// The `modelDescription.xml` of the FMU at `path` (unpacked at `root`),
/// and a note when it is not UTF-8 (read with its stray bytes replaced).
fn read_description(
    path: &Path,
    root: &Path,
) -> Result<(ModelDescription, Option<String>), String> {
    let md_path = root.join("modelDescription.xml");
    let bytes = std::fs::read(&md_path)
        .map_err(|e| format!("{}: no readable modelDescription.xml: {e}", path.display()))?;
    // FMI 2.0 asks for UTF-8; a description in another encoding (Latin-1
    // is seen) is read with its stray bytes replaced, and said so.
    let (text, encoding_note) = match String::from_utf8(bytes) {
        Ok(t) => (t, None),
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            let text = String::from_utf8_lossy(e.as_bytes()).into_owned();
            let note = format!(
                "modelDescription.xml is not UTF-8 (FMI 2.0 requires it; first stray byte at offset {at}): read with U+FFFD in place of such bytes"
            );
            (text, Some(note))
        }
    };
    let description = ModelDescription::parse(&text)
        .map_err(|e| format!("{}: modelDescription.xml: {e}", path.display()))?;
    Ok((description, encoding_note))
}

/// Sets each `start` value on its variable (a parameter or an input),
/// noting a warning the FMU gave in `warnings`.
fn set_starts(
    inst: &mut Instance,
    description: &ModelDescription,
    start: &[(String, f64)],
    warnings: &mut Vec<String>,
) -> Result<(), String> {
    for (name, v) in start {
        let var = description
            .variables
            .iter()
            .find(|x| &x.name == name)
            .ok_or_else(|| {
                let settable: Vec<&str> = description
                    .variables
                    .iter()
                    .filter(|x| matches!(x.causality, Causality::Parameter | Causality::Input))
                    .map(|x| x.name.as_str())
                    .collect();
                format!(
                    "start value for `{name}`: the FMU has no such variable (parameters and inputs: {})",
                    settable.join(", ")
                )
            })?;
        if !matches!(var.causality, Causality::Parameter | Causality::Input) {
            return Err(format!(
                "start value for `{name}`: it is a {:?} variable; only parameters and inputs take one",
                var.causality
            ));
        }
        let w = match var.ty {
            ScalarType::Real => inst.set_real(&[var.value_reference], &[*v])?,
            ty => {
                let i = int_value(name, *v, ty)?;
                inst.set_int(ty == ScalarType::Boolean, &[var.value_reference], &[i])?
            }
        };
        if w {
            warnings.push(format!("setting `{name}` returned fmi2Warning"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::file_uri;
    use std::path::Path;

    #[test]
    fn a_resource_uri_is_absolute_and_percent_encoded() {
        assert_eq!(
            file_uri(Path::new("/tmp/a b/r%s")).unwrap(),
            "file:///tmp/a%20b/r%25s"
        );
        // Relative to the working directory: `file://sys/x` would name the
        // host `sys`.
        let cwd = std::env::current_dir().unwrap();
        assert_eq!(
            file_uri(Path::new("sys/resources")).unwrap(),
            file_uri(&cwd.join("sys/resources")).unwrap()
        );
        assert!(
            file_uri(Path::new("sys/resources"))
                .unwrap()
                .starts_with("file:///")
        );
    }
}

//! Output paths that must not overwrite an input or each other.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::inputs::scenario::Scenario;

/// What a path names: an existing file (device and inode, whatever path
/// reaches it), or a file still to be created (its absolute path).
#[derive(Debug, PartialEq, Eq)]
enum Identity {
    Existing(u64, u64),
    Planned(PathBuf),
}

fn identity(p: &Path) -> Option<Identity> {
    if let Ok(m) = std::fs::metadata(p) {
        return Some(Identity::Existing(m.dev(), m.ino()));
    }
    let parent = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let dir = parent.canonicalize().ok()?;
    Some(Identity::Planned(dir.join(p.file_name()?)))
}

/// The files a vehicle's run of `s` reads, named for `check_outputs`: the
/// scenario, the autopilot library, the spec when it is a file, and the
/// mission. Every front end (the command line, the C ABI, the FMU, a
/// co-simulation's vehicles) checks its outputs against these.
pub fn scenario_inputs<'a>(
    scenario: &'a Path,
    autopilot: &'a Path,
    s: &'a Scenario,
) -> Vec<(&'static str, &'a Path)> {
    let mut inputs = vec![
        ("the scenario", scenario),
        ("the autopilot library", autopilot),
    ];
    let spec = Path::new(&s.spec);
    if spec.is_file() {
        inputs.push(("the aircraft spec", spec));
    }
    if let Some(m) = &s.mission {
        inputs.push(("the mission", m.as_path()));
    }
    inputs
}

/// Refuses an output that names one of the inputs or another output.
/// Each entry is (what it is, e.g. `--log` or `the scenario`, its path).
/// The error says which two collide and the path.
pub fn check_outputs(inputs: &[(&str, &Path)], outputs: &[(&str, &Path)]) -> Result<(), String> {
    for (i, (what, out)) in outputs.iter().enumerate() {
        let Some(id) = identity(out) else { continue };
        for (input, p) in inputs {
            if identity(p).as_ref() == Some(&id) {
                return Err(format!(
                    "{what} {} is {input}; refusing to overwrite an input",
                    out.display()
                ));
            }
        }
        for (other, p) in &outputs[..i] {
            if identity(p).as_ref() == Some(&id) {
                return Err(format!(
                    "{other} and {what} name the same file {}",
                    out.display()
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_may_not_alias_inputs_or_each_other() {
        let dir = std::env::temp_dir().join(format!("lockstep-alias-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let scenario = dir.join("s.toml");
        std::fs::write(&scenario, "x").unwrap();
        let link = dir.join("link.toml");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&scenario, &link).unwrap();
        let inputs = [("the scenario", scenario.as_path())];
        assert_eq!(
            check_outputs(&inputs, &[("--log", link.as_path())]),
            Err(format!(
                "--log {} is the scenario; refusing to overwrite an input",
                link.display()
            ))
        );
        let a = dir.join("out.csv");
        let b = dir.join(".").join("out.csv");
        assert_eq!(
            check_outputs(
                &inputs,
                &[("--log", a.as_path()), ("--record", b.as_path())]
            ),
            Err(format!(
                "--log and --record name the same file {}",
                b.display()
            ))
        );
        assert_eq!(
            check_outputs(
                &inputs,
                &[
                    ("--log", a.as_path()),
                    ("--record", dir.join("r").as_path())
                ]
            ),
            Ok(())
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

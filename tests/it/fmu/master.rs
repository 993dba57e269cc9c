//! A minimal FMI 2.0 co-simulation master written here (FMI's C calls
//! through libloading), and the FMU it drives: packaged by `lockstep fmu`
//! and unpacked.

use std::ffi::{CString, c_char, c_int, c_void};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{LOCKSTEP, TempDir};

pub(crate) fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The FMU library cargo built next to this test.
pub(crate) fn fmu_library() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().unwrap().join("liblockstep_fmu.so")
}

/// Packages `scenario` with `autopilot` into dir/vehicle.fmu and unpacks it.
pub(crate) fn package(dir: &TempDir, scenario: &Path, autopilot: &str) -> PathBuf {
    let fmu = dir.join("vehicle.fmu");
    let o = Command::new(LOCKSTEP)
        .arg("fmu")
        .arg(scenario)
        .arg("-o")
        .arg(&fmu)
        .args(["--autopilot", autopilot])
        .arg("--library")
        .arg(fmu_library())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = dir.join("unpacked");
    let mut z = zip::ZipArchive::new(std::fs::File::open(&fmu).unwrap()).unwrap();
    z.extract(&out).unwrap();
    out
}

pub(crate) type Component = *mut c_void;

#[repr(C)]
pub(crate) struct Callbacks {
    logger: *const c_void,
    allocate: *const c_void,
    free: *const c_void,
    step_finished: *const c_void,
    env: *mut c_void,
}

/// The FMU's functions a master needs.
pub(crate) struct Fmu {
    pub(crate) lib: libloading::Library,
}

impl Fmu {
    pub(crate) fn load(unpacked: &Path) -> Fmu {
        // SAFETY: loading the FMU's library, which has no initialisers that
        // need anything of us.
        let lib = unsafe {
            libloading::Library::new(unpacked.join("binaries/linux64/lockstep_vehicle.so"))
        }
        .unwrap();
        Fmu { lib }
    }

    pub(crate) fn sym<T: Copy>(&self, name: &str) -> T {
        // SAFETY: the caller names the function with its FMI signature.
        unsafe { *self.lib.get::<T>(name.as_bytes()).unwrap() }
    }

    pub(crate) fn instantiate(&self, unpacked: &Path, guid: &str) -> Component {
        let f: unsafe extern "C" fn(
            *const c_char,
            c_int,
            *const c_char,
            *const c_char,
            *const Callbacks,
            c_int,
            c_int,
        ) -> Component = self.sym("fmi2Instantiate");
        let name = CString::new("test").unwrap();
        let guid = CString::new(guid).unwrap();
        let uri = CString::new(format!("file://{}", unpacked.join("resources").display())).unwrap();
        let cb = Callbacks {
            logger: std::ptr::null(),
            allocate: std::ptr::null(),
            free: std::ptr::null(),
            step_finished: std::ptr::null(),
            env: std::ptr::null_mut(),
        };
        // SAFETY: FMI's call with valid strings and callbacks.
        unsafe { f(name.as_ptr(), 1, guid.as_ptr(), uri.as_ptr(), &cb, 0, 0) }
    }

    pub(crate) fn call(&self, name: &str, c: Component) -> c_int {
        let f: unsafe extern "C" fn(Component) -> c_int = self.sym(name);
        // SAFETY: a live component.
        unsafe { f(c) }
    }

    /// Sets up the experiment from 0 and enters initialization mode.
    pub(crate) fn enter(&self, c: Component) {
        let setup: unsafe extern "C" fn(Component, c_int, f64, f64, c_int, f64) -> c_int =
            self.sym("fmi2SetupExperiment");
        // SAFETY: a live component.
        assert_eq!(unsafe { setup(c, 0, 0.0, 0.0, 0, 0.0) }, 0);
        assert_eq!(self.call("fmi2EnterInitializationMode", c), 0);
    }

    pub(crate) fn init(&self, c: Component) {
        self.enter(c);
        assert_eq!(self.call("fmi2ExitInitializationMode", c), 0);
    }

    pub(crate) fn step(&self, c: Component, t: f64, h: f64) -> c_int {
        let f: unsafe extern "C" fn(Component, f64, f64, c_int) -> c_int = self.sym("fmi2DoStep");
        // SAFETY: a live component.
        unsafe { f(c, t, h, 1) }
    }

    pub(crate) fn reals(&self, c: Component, vrs: &[u32]) -> Vec<f64> {
        let f: unsafe extern "C" fn(Component, *const u32, usize, *mut f64) -> c_int =
            self.sym("fmi2GetReal");
        let mut v = vec![0.0; vrs.len()];
        // SAFETY: arrays of `vrs.len()` elements.
        assert_eq!(unsafe { f(c, vrs.as_ptr(), vrs.len(), v.as_mut_ptr()) }, 0);
        v
    }

    pub(crate) fn set_real(&self, c: Component, vr: u32, x: f64) -> c_int {
        let f: unsafe extern "C" fn(Component, *const u32, usize, *const f64) -> c_int =
            self.sym("fmi2SetReal");
        // SAFETY: one-element arrays.
        unsafe { f(c, &vr, 1, &x) }
    }

    pub(crate) fn set_string(&self, c: Component, vr: u32, s: &str) -> c_int {
        let f: unsafe extern "C" fn(Component, *const u32, usize, *const *const c_char) -> c_int =
            self.sym("fmi2SetString");
        let s = CString::new(s).unwrap();
        let p = s.as_ptr();
        // SAFETY: one-element arrays.
        unsafe { f(c, &vr, 1, &p) }
    }

    pub(crate) fn free(&self, c: Component) {
        let f: unsafe extern "C" fn(Component) = self.sym("fmi2FreeInstance");
        // SAFETY: a live component, freed once.
        unsafe { f(c) }
    }
}

/// The description's GUID and each variable's value reference by name.
pub(crate) fn description(
    unpacked: &Path,
) -> (String, String, std::collections::HashMap<String, u32>) {
    let xml = std::fs::read_to_string(unpacked.join("modelDescription.xml")).unwrap();
    let attr = |line: &str, key: &str| -> Option<String> {
        let start = line.find(&format!(" {key}=\""))? + key.len() + 3;
        Some(line[start..start + line[start..].find('"')?].to_string())
    };
    let guid = xml.lines().find_map(|l| attr(l, "guid")).unwrap();
    let vrs = xml
        .lines()
        .filter(|l| l.contains("<ScalarVariable"))
        .map(|l| {
            (
                attr(l, "name").unwrap(),
                attr(l, "valueReference").unwrap().parse().unwrap(),
            )
        })
        .collect();
    (guid, xml, vrs)
}

/// A one-second idle vehicle, packaged once for every test that only needs
/// an FMU to call: (its directory, kept; the unpacked FMU; its GUID; the
/// value references by name).
pub(crate) fn idle_fmu() -> &'static IdleFmu {
    static FMU: std::sync::OnceLock<IdleFmu> = std::sync::OnceLock::new();
    FMU.get_or_init(|| {
        let dir = TempDir::new("fmu-idle");
        let scenario = crate::common::idle_scenario(dir.path(), "idle.toml", 1.0, 10);
        let unpacked = package(&dir, &scenario, crate::common::BUNDLED);
        let (guid, _, vr) = description(&unpacked);
        IdleFmu {
            _dir: dir,
            unpacked,
            guid,
            vr,
        }
    })
}

pub(crate) struct IdleFmu {
    _dir: TempDir,
    pub(crate) unpacked: PathBuf,
    pub(crate) guid: String,
    pub(crate) vr: std::collections::HashMap<String, u32>,
}

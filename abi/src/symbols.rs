//! Resolving the header's functions in a loaded library.

use std::ffi::CStr;

use libloading::Library;

use crate::ffi;

/// The functions every autopilot library must export.
pub const REQUIRED_SYMBOLS: [&str; 6] = [
    "lockstep_autopilot_abi_version",
    "lockstep_autopilot_layout",
    "lockstep_autopilot_capabilities",
    "lockstep_autopilot_create",
    "lockstep_autopilot_step",
    "lockstep_autopilot_destroy",
];

/// The functions probed at load; each one found enables a feature.
pub const OPTIONAL_SYMBOLS: [&str; 13] = [
    "lockstep_autopilot_mission_upload",
    "lockstep_autopilot_param_set_f32",
    "lockstep_autopilot_param_get_f32",
    "lockstep_autopilot_param_set_i32",
    "lockstep_autopilot_param_get_i32",
    "lockstep_autopilot_param_count",
    "lockstep_autopilot_param_info",
    "lockstep_autopilot_reset",
    "lockstep_autopilot_name",
    "lockstep_autopilot_last_error",
    "lockstep_autopilot_snapshot_size",
    "lockstep_autopilot_snapshot",
    "lockstep_autopilot_restore",
];

/// The parameter enumeration (ABI 4): both or neither.
pub const ENUMERATION_SYMBOLS: [&str; 2] = [
    "lockstep_autopilot_param_count",
    "lockstep_autopilot_param_info",
];

/// The migration functions: all three or none.
pub const MIGRATION_SYMBOLS: [&str; 3] = [
    "lockstep_autopilot_snapshot_size",
    "lockstep_autopilot_snapshot",
    "lockstep_autopilot_restore",
];

/// The bare function pointer inside bindgen's `Option<fn>` typedefs.
pub(crate) trait Unwrapped {
    type Fn;
}
impl<F> Unwrapped for Option<F> {
    type Fn = F;
}
type Bare<T> = <T as Unwrapped>::Fn;

/// Looks a symbol up; `None` when it is absent or NULL.
///
/// # Safety
/// `F` must be the function pointer type the header declares for `name`.
unsafe fn probe<F: Copy>(lib: &Library, name: &CStr) -> Option<F> {
    // SAFETY: per this function's contract F is the symbol's declared type;
    // `Option<F>` of a function pointer has the pointer's layout, and NULL
    // reads as None.
    let sym = unsafe { lib.get::<Option<F>>(name) };
    sym.ok().and_then(|s| *s)
}

/// The required functions an instance calls (the handshake calls the
/// other three once, at load).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Required {
    pub create: Bare<ffi::lockstep_autopilot_create_fn>,
    pub step: Bare<ffi::lockstep_autopilot_step_fn>,
    pub destroy: Bare<ffi::lockstep_autopilot_destroy_fn>,
}

/// The optional functions, each present or not.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Optional {
    pub mission_upload: ffi::lockstep_autopilot_mission_upload_fn,
    pub param_set_f32: ffi::lockstep_autopilot_param_set_f32_fn,
    pub param_get_f32: ffi::lockstep_autopilot_param_get_f32_fn,
    pub param_set_i32: ffi::lockstep_autopilot_param_set_i32_fn,
    pub param_get_i32: ffi::lockstep_autopilot_param_get_i32_fn,
    pub param_count: ffi::lockstep_autopilot_param_count_fn,
    pub param_info: ffi::lockstep_autopilot_param_info_fn,
    pub reset: ffi::lockstep_autopilot_reset_fn,
    pub name: ffi::lockstep_autopilot_name_fn,
    pub last_error: ffi::lockstep_autopilot_last_error_fn,
    pub snapshot_size: ffi::lockstep_autopilot_snapshot_size_fn,
    pub snapshot: ffi::lockstep_autopilot_snapshot_fn,
    pub restore: ffi::lockstep_autopilot_restore_fn,
}

impl Optional {
    fn present(&self) -> [bool; 13] {
        [
            self.mission_upload.is_some(),
            self.param_set_f32.is_some(),
            self.param_get_f32.is_some(),
            self.param_set_i32.is_some(),
            self.param_get_i32.is_some(),
            self.param_count.is_some(),
            self.param_info.is_some(),
            self.reset.is_some(),
            self.name.is_some(),
            self.last_error.is_some(),
            self.snapshot_size.is_some(),
            self.snapshot.is_some(),
            self.restore.is_some(),
        ]
    }

    /// Names of the optional symbols found (`found == true`) or not found.
    pub fn names(&self, found: bool) -> Vec<&'static str> {
        OPTIONAL_SYMBOLS
            .iter()
            .zip(self.present())
            .filter(|(_, p)| *p == found)
            .map(|(n, _)| *n)
            .collect()
    }
}

/// Every symbol of the header, looked up eagerly.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Resolved {
    pub abi_version: ffi::lockstep_autopilot_abi_version_fn,
    pub layout: ffi::lockstep_autopilot_layout_fn,
    pub capabilities: ffi::lockstep_autopilot_capabilities_fn,
    pub create: ffi::lockstep_autopilot_create_fn,
    pub step: ffi::lockstep_autopilot_step_fn,
    pub destroy: ffi::lockstep_autopilot_destroy_fn,
    pub optional: Optional,
}

impl Resolved {
    /// Looks up every symbol of the header in `lib`.
    pub fn resolve(lib: &Library) -> Self {
        macro_rules! sym {
            ($ty:ty, $name:literal) => {{
                // SAFETY: the type is the header's own function pointer
                // typedef for the symbol of that name.
                unsafe { probe::<Bare<$ty>>(lib, $name) }
            }};
        }
        Resolved {
            abi_version: sym!(
                ffi::lockstep_autopilot_abi_version_fn,
                c"lockstep_autopilot_abi_version"
            ),
            layout: sym!(
                ffi::lockstep_autopilot_layout_fn,
                c"lockstep_autopilot_layout"
            ),
            capabilities: sym!(
                ffi::lockstep_autopilot_capabilities_fn,
                c"lockstep_autopilot_capabilities"
            ),
            create: sym!(
                ffi::lockstep_autopilot_create_fn,
                c"lockstep_autopilot_create"
            ),
            step: sym!(ffi::lockstep_autopilot_step_fn, c"lockstep_autopilot_step"),
            destroy: sym!(
                ffi::lockstep_autopilot_destroy_fn,
                c"lockstep_autopilot_destroy"
            ),
            optional: Optional {
                mission_upload: sym!(
                    ffi::lockstep_autopilot_mission_upload_fn,
                    c"lockstep_autopilot_mission_upload"
                ),
                param_set_f32: sym!(
                    ffi::lockstep_autopilot_param_set_f32_fn,
                    c"lockstep_autopilot_param_set_f32"
                ),
                param_get_f32: sym!(
                    ffi::lockstep_autopilot_param_get_f32_fn,
                    c"lockstep_autopilot_param_get_f32"
                ),
                param_set_i32: sym!(
                    ffi::lockstep_autopilot_param_set_i32_fn,
                    c"lockstep_autopilot_param_set_i32"
                ),
                param_get_i32: sym!(
                    ffi::lockstep_autopilot_param_get_i32_fn,
                    c"lockstep_autopilot_param_get_i32"
                ),
                param_count: sym!(
                    ffi::lockstep_autopilot_param_count_fn,
                    c"lockstep_autopilot_param_count"
                ),
                param_info: sym!(
                    ffi::lockstep_autopilot_param_info_fn,
                    c"lockstep_autopilot_param_info"
                ),
                reset: sym!(
                    ffi::lockstep_autopilot_reset_fn,
                    c"lockstep_autopilot_reset"
                ),
                name: sym!(ffi::lockstep_autopilot_name_fn, c"lockstep_autopilot_name"),
                last_error: sym!(
                    ffi::lockstep_autopilot_last_error_fn,
                    c"lockstep_autopilot_last_error"
                ),
                snapshot_size: sym!(
                    ffi::lockstep_autopilot_snapshot_size_fn,
                    c"lockstep_autopilot_snapshot_size"
                ),
                snapshot: sym!(
                    ffi::lockstep_autopilot_snapshot_fn,
                    c"lockstep_autopilot_snapshot"
                ),
                restore: sym!(
                    ffi::lockstep_autopilot_restore_fn,
                    c"lockstep_autopilot_restore"
                ),
            },
        }
    }

    /// Names of the required symbols that are missing.
    pub fn missing_required(&self) -> Vec<&'static str> {
        let present = [
            self.abi_version.is_some(),
            self.layout.is_some(),
            self.capabilities.is_some(),
            self.create.is_some(),
            self.step.is_some(),
            self.destroy.is_some(),
        ];
        REQUIRED_SYMBOLS
            .iter()
            .zip(present)
            .filter(|(_, p)| !p)
            .map(|(n, _)| *n)
            .collect()
    }

    /// The instance functions, when present.
    pub fn required(&self) -> Option<Required> {
        Some(Required {
            create: self.create?,
            step: self.step?,
            destroy: self.destroy?,
        })
    }
}

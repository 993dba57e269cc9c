//! modelDescription.xml, written from the variable table.

use std::fmt::Write;

use crate::variables::{Causality, Kind, Variable, real};

/// The FMU's binary name (`binaries/<platform>/<MODEL_IDENTIFIER>.so`).
pub const MODEL_IDENTIFIER: &str = "lockstep_vehicle";

/// What the description says about one packaged vehicle.
#[derive(Debug, Clone)]
pub struct Description<'a> {
    pub model_name: &'a str,
    pub description: &'a str,
    pub guid: &'a str,
    /// The scenario's duration, seconds (the default experiment's stop).
    pub stop_time_s: f64,
    /// The scenario's finest cadence, seconds (the default step).
    pub step_s: f64,
    /// The autopilot library allows one instance per process.
    pub one_instance_per_process: bool,
    pub variables: &'a [Variable],
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The units the variables use, with their SI base units.
const UNITS: [(&str, &str); 7] = [
    ("1", ""),
    ("m", "<BaseUnit m=\"1\"/>"),
    ("m/s", "<BaseUnit m=\"1\" s=\"-1\"/>"),
    ("rad/s", "<BaseUnit s=\"-1\" rad=\"1\"/>"),
    (
        "deg",
        "<BaseUnit rad=\"1\" factor=\"0.017453292519943295\"/>",
    ),
    ("V", "<BaseUnit kg=\"1\" m=\"2\" s=\"-3\" A=\"-1\"/>"),
    ("A", "<BaseUnit A=\"1\"/>"),
];

impl Description<'_> {
    /// The `<ModelVariables>` section alone (the FMU's library compares it
    /// with the packaged description: the same table or no instance).
    pub fn variables_xml(&self) -> String {
        let x = self.xml();
        let start = x.find("  <ModelVariables>").unwrap_or(0);
        let end = x
            .find("  </ModelVariables>")
            .map_or(x.len(), |e| e + "  </ModelVariables>".len());
        x[start..end].to_string()
    }

    pub fn xml(&self) -> String {
        let mut x = String::new();
        let w = &mut x;
        let _ = writeln!(w, r#"<?xml version="1.0" encoding="UTF-8"?>"#);
        let _ = writeln!(
            w,
            r#"<fmiModelDescription fmiVersion="2.0" modelName="{}" guid="{}" description="{}" generationTool="lockstep {}" variableNamingConvention="flat" numberOfEventIndicators="0">"#,
            escape(self.model_name),
            escape(self.guid),
            escape(self.description),
            env!("CARGO_PKG_VERSION")
        );
        let _ = writeln!(
            w,
            r#"  <CoSimulation modelIdentifier="{MODEL_IDENTIFIER}" needsExecutionTool="false" canHandleVariableCommunicationStepSize="true" canInterpolateInputs="false" maxOutputDerivativeOrder="0" canRunAsynchronuously="false" canBeInstantiatedOnlyOncePerProcess="{}" canNotUseMemoryManagementFunctions="true" canGetAndSetFMUstate="false" canSerializeFMUstate="false" providesDirectionalDerivative="false"/>"#,
            self.one_instance_per_process
        );
        let _ = writeln!(w, "  <UnitDefinitions>");
        for (name, base) in UNITS {
            if base.is_empty() {
                let _ = writeln!(w, r#"    <Unit name="{}"/>"#, escape(name));
            } else {
                let _ = writeln!(w, r#"    <Unit name="{}">{base}</Unit>"#, escape(name));
            }
        }
        let _ = writeln!(w, "  </UnitDefinitions>");
        let _ = writeln!(w, "  <LogCategories>");
        let _ = writeln!(
            w,
            r#"    <Category name="logStatusError" description="A call failed: what and why"/>"#
        );
        let _ = writeln!(
            w,
            r#"    <Category name="logStatusFatal" description="An internal error (a bug in lockstep)"/>"#
        );
        let _ = writeln!(w, "  </LogCategories>");
        let _ = writeln!(
            w,
            r#"  <DefaultExperiment startTime="0.0" stopTime="{:?}" stepSize="{:?}"/>"#,
            self.stop_time_s, self.step_s
        );
        let _ = writeln!(w, "  <ModelVariables>");
        for (vr, v) in self.variables.iter().enumerate() {
            let (causality, variability) = match (v.causality, v.kind) {
                (Causality::Parameter, _) => ("parameter", "fixed"),
                (Causality::Input, Kind::Real) => ("input", "continuous"),
                (Causality::Input, _) => ("input", "discrete"),
                (Causality::Output, Kind::Real) => ("output", "continuous"),
                (Causality::Output, _) => ("output", "discrete"),
            };
            let _ = write!(
                w,
                r#"    <ScalarVariable name="{}" valueReference="{vr}" causality="{causality}" variability="{variability}" description="{}""#,
                escape(&v.name),
                escape(&v.description)
            );
            let _ = write!(w, "><{}", v.kind.name());
            if let Some(u) = v.unit {
                let _ = write!(w, r#" unit="{}""#, escape(u));
            }
            if let Some((lo, hi)) = v.range {
                let _ = write!(w, r#" min="{}" max="{}""#, real(lo), real(hi));
            }
            if let Some(s) = &v.start {
                let _ = write!(w, r#" start="{}""#, escape(s));
            }
            let _ = writeln!(w, "/></ScalarVariable>");
        }
        let _ = writeln!(w, "  </ModelVariables>");
        let _ = writeln!(w, "  <ModelStructure>");
        let outputs: Vec<usize> = self
            .variables
            .iter()
            .enumerate()
            .filter(|(_, v)| v.causality == Causality::Output)
            .map(|(i, _)| i + 1)
            .collect();
        // No output depends directly on an input: inputs act inside the
        // next fmi2DoStep (so a master sees no algebraic loop in a
        // feedback wiring).
        let _ = writeln!(w, "    <Outputs>");
        for i in &outputs {
            let _ = writeln!(w, r#"      <Unknown index="{i}" dependencies=""/>"#);
        }
        let _ = writeln!(w, "    </Outputs>");
        let _ = writeln!(w, "    <InitialUnknowns>");
        for i in &outputs {
            let _ = writeln!(w, r#"      <Unknown index="{i}" dependencies=""/>"#);
        }
        let _ = writeln!(w, "    </InitialUnknowns>");
        let _ = writeln!(w, "  </ModelStructure>");
        let _ = writeln!(w, "</fmiModelDescription>");
        x
    }
}

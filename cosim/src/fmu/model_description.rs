//! Reading an FMI 2.0 `modelDescription.xml`: the co-simulation interface
//! and the scalar variables. Third-party FMUs are often slightly invalid;
//! what can be handled is handled and reported as a warning (a missing
//! `causality` is `local`, an input without a start value starts at 0, a
//! second variable of the same name is ignored, a String variable is left
//! out); what cannot be handled (no co-simulation interface, no
//! `modelIdentifier`, a variable without a value reference) is refused.

/// The type of a scalar variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScalarType {
    Real,
    Integer,
    Boolean,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Causality {
    Parameter,
    CalculatedParameter,
    Input,
    Output,
    Local,
    Independent,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ScalarVariable {
    pub name: String,
    pub value_reference: u32,
    pub causality: Causality,
    /// `fixed`, `tunable`, `constant`, `discrete`, `continuous`.
    pub variability: String,
    pub ty: ScalarType,
    pub start: Option<f64>,
    pub description: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ModelDescription {
    pub fmi_version: String,
    pub model_name: String,
    pub guid: String,
    pub model_identifier: String,
    pub can_handle_variable_step: bool,
    pub variables: Vec<ScalarVariable>,
    /// What was tolerated, one line each.
    pub warnings: Vec<String>,
}

fn number(text: &str, ty: ScalarType) -> Option<f64> {
    match ty {
        ScalarType::Boolean => match text.trim() {
            "true" | "1" => Some(1.0),
            "false" | "0" => Some(0.0),
            _ => None,
        },
        ScalarType::Integer => text.trim().parse::<i64>().ok().map(|v| v as f64),
        ScalarType::Real => text.trim().parse::<f64>().ok(),
    }
}

impl ModelDescription {
    /// Parses the text of a `modelDescription.xml`.
    pub fn parse(text: &str) -> Result<ModelDescription, String> {
        let doc = roxmltree::Document::parse(text).map_err(|e| format!("not XML: {e}"))?;
        let root = doc.root_element();
        if root.tag_name().name() != "fmiModelDescription" {
            return Err(format!(
                "the root element is <{}>, not <fmiModelDescription>",
                root.tag_name().name()
            ));
        }
        let mut warnings = Vec::new();
        let fmi_version = root.attribute("fmiVersion").unwrap_or("").to_string();
        if !fmi_version.starts_with("2.") {
            if fmi_version.is_empty() {
                warnings.push("no fmiVersion attribute: read as FMI 2.0".to_string());
            } else if fmi_version.trim() == "2" {
                warnings.push(format!(
                    "fmiVersion `{fmi_version}` is not FMI 2.0's `2.0`: read as FMI 2.0"
                ));
            } else {
                return Err(format!(
                    "fmiVersion {fmi_version}: this importer reads FMI 2.0"
                ));
            }
        }
        let model_name = root.attribute("modelName").unwrap_or("").to_string();
        let guid = match root.attribute("guid") {
            Some(g) => g.to_string(),
            None => {
                warnings.push("no guid attribute: instantiated with an empty one".to_string());
                String::new()
            }
        };
        let cs = root
            .children()
            .find(|n| n.has_tag_name("CoSimulation"))
            .ok_or_else(|| {
                if root.children().any(|n| n.has_tag_name("ModelExchange")) {
                    "this FMU offers model exchange only; lockstep imports co-simulation FMUs"
                        .to_string()
                } else {
                    "no <CoSimulation> element: not a co-simulation FMU".to_string()
                }
            })?;
        let model_identifier = cs
            .attribute("modelIdentifier")
            .filter(|m| !m.is_empty())
            .ok_or("<CoSimulation> has no modelIdentifier (it names the binary)")?
            .to_string();
        if model_identifier.contains(['/', '\\']) || model_identifier.contains("..") {
            return Err(format!(
                "modelIdentifier `{model_identifier}` is not a file name"
            ));
        }
        let can_handle_variable_step =
            cs.attribute("canHandleVariableCommunicationStepSize") == Some("true");
        let mut variables: Vec<ScalarVariable> = Vec::new();
        if let Some(mv) = root.children().find(|n| n.has_tag_name("ModelVariables")) {
            for (k, sv) in mv
                .children()
                .filter(|n| n.has_tag_name("ScalarVariable"))
                .enumerate()
            {
                if let Some(v) = variable(k, sv, &variables, &mut warnings)? {
                    variables.push(v);
                }
            }
        } else {
            warnings.push("no <ModelVariables>: the FMU exchanges nothing".to_string());
        }
        Ok(ModelDescription {
            fmi_version,
            model_name,
            guid,
            model_identifier,
            can_handle_variable_step,
            variables,
            warnings,
        })
    }
}

/// The `k`-th `<ScalarVariable>` (`None`: left out, with a warning why),
/// given the variables read before it.
fn variable(
    k: usize,
    sv: roxmltree::Node,
    variables: &[ScalarVariable],
    warnings: &mut Vec<String>,
) -> Result<Option<ScalarVariable>, String> {
    let Some(name) = sv.attribute("name") else {
        warnings.push(format!("ScalarVariable {} has no name: left out", k + 1));
        return Ok(None);
    };
    let vr = sv
        .attribute("valueReference")
        .ok_or_else(|| format!("variable `{name}` has no valueReference"))?;
    let value_reference: u32 = vr
        .trim()
        .parse()
        .map_err(|_| format!("variable `{name}`: valueReference `{vr}` is not a number"))?;
    let causality = match sv.attribute("causality") {
        None => Causality::Local,
        Some("parameter") => Causality::Parameter,
        Some("calculatedParameter") => Causality::CalculatedParameter,
        Some("input") => Causality::Input,
        Some("output") => Causality::Output,
        Some("local") => Causality::Local,
        Some("independent") => Causality::Independent,
        Some(other) => {
            warnings.push(format!(
                "variable `{name}`: causality `{other}` is not FMI 2.0's: read as local"
            ));
            Causality::Local
        }
    };
    let variability = sv
        .attribute("variability")
        .unwrap_or("continuous")
        .to_string();
    // The type element, wherever it stands among the children
    // (an `Annotations` placed first is seen in the wild).
    const TYPES: [&str; 5] = ["Real", "Integer", "Enumeration", "Boolean", "String"];
    let Some(tn) = sv
        .children()
        .find(|n| n.is_element() && TYPES.contains(&n.tag_name().name()))
    else {
        warnings.push(format!("variable `{name}` has no type element: left out"));
        return Ok(None);
    };
    let ty = match tn.tag_name().name() {
        "Real" => ScalarType::Real,
        "Integer" | "Enumeration" => ScalarType::Integer,
        "Boolean" => ScalarType::Boolean,
        other => {
            if matches!(causality, Causality::Input | Causality::Output) {
                warnings.push(format!(
                    "variable `{name}` is a {other}: lockstep exchanges numbers only, left out"
                ));
            }
            return Ok(None);
        }
    };
    let start = match tn.attribute("start") {
        Some(s) => match number(s, ty) {
            Some(v) => Some(v),
            None => {
                warnings.push(format!(
                    "variable `{name}`: start `{s}` is not a {ty:?}: ignored"
                ));
                None
            }
        },
        None => None,
    };
    if variables.iter().any(|v| v.name == name) {
        warnings.push(format!(
            "a second variable named `{name}`: ignored (the first is used)"
        ));
        return Ok(None);
    }
    let start = if causality == Causality::Input && start.is_none() {
        warnings.push(format!(
            "input `{name}` has no start value (FMI 2.0 requires one): it starts at 0"
        ));
        Some(0.0)
    } else {
        start
    };
    Ok(Some(ScalarVariable {
        name: name.to_string(),
        value_reference,
        causality,
        variability,
        ty,
        start,
        description: sv.attribute("description").unwrap_or("").to_string(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<fmiModelDescription fmiVersion="2.0" modelName="m" guid="{1}">
  <CoSimulation modelIdentifier="m" canHandleVariableCommunicationStepSize="true"/>
  <ModelVariables>
    <ScalarVariable name="x" valueReference="0" causality="output"><Real/></ScalarVariable>
    <ScalarVariable name="u" valueReference="1" causality="input"><Real start="2.5"/></ScalarVariable>
    <ScalarVariable name="n" valueReference="2" causality="parameter" variability="fixed"><Integer start="3"/></ScalarVariable>
    <ScalarVariable name="on" valueReference="3" causality="input"><Boolean start="true"/></ScalarVariable>
  </ModelVariables>
</fmiModelDescription>"#;

    #[test]
    fn a_valid_description_reads_without_warnings() {
        let m = ModelDescription::parse(GOOD).unwrap();
        assert_eq!(m.model_identifier, "m");
        assert!(m.can_handle_variable_step);
        assert_eq!(m.variables.len(), 4);
        assert_eq!(m.variables[1].start, Some(2.5));
        assert_eq!(m.variables[2].ty, ScalarType::Integer);
        assert_eq!(m.variables[3].start, Some(1.0));
        assert!(m.warnings.is_empty(), "{:?}", m.warnings);
    }

    #[test]
    fn slightly_invalid_descriptions_are_read_with_warnings() {
        let text = r#"<fmiModelDescription fmiVersion="2" modelName="m">
  <CoSimulation modelIdentifier="m"/>
  <ModelVariables>
    <ScalarVariable name="x" valueReference="0"><Real/></ScalarVariable>
    <ScalarVariable name="u" valueReference="1" causality="input"><Real/></ScalarVariable>
    <ScalarVariable name="u" valueReference="2" causality="input"><Real start="1"/></ScalarVariable>
    <ScalarVariable name="s" valueReference="3" causality="output"><String/></ScalarVariable>
    <ScalarVariable name="k" valueReference="4" causality="sideways"><Real start="oops"/></ScalarVariable>
  </ModelVariables>
</fmiModelDescription>"#;
        let m = ModelDescription::parse(text).unwrap();
        assert_eq!(
            m.warnings,
            [
                "fmiVersion `2` is not FMI 2.0's `2.0`: read as FMI 2.0",
                "no guid attribute: instantiated with an empty one",
                "input `u` has no start value (FMI 2.0 requires one): it starts at 0",
                "a second variable named `u`: ignored (the first is used)",
                "variable `s` is a String: lockstep exchanges numbers only, left out",
                "variable `k`: causality `sideways` is not FMI 2.0's: read as local",
                "variable `k`: start `oops` is not a Real: ignored",
            ]
        );
        assert_eq!(m.variables[0].causality, Causality::Local);
        assert_eq!(m.variables[1].start, Some(0.0));
        assert_eq!(m.variables.len(), 3);
    }

    #[test]
    fn what_cannot_be_handled_is_refused() {
        let me = r#"<fmiModelDescription fmiVersion="2.0" modelName="m" guid="g"><ModelExchange modelIdentifier="m"/></fmiModelDescription>"#;
        assert_eq!(
            ModelDescription::parse(me).unwrap_err(),
            "this FMU offers model exchange only; lockstep imports co-simulation FMUs"
        );
        let v3 = r#"<fmiModelDescription fmiVersion="3.0" modelName="m"/>"#;
        assert_eq!(
            ModelDescription::parse(v3).unwrap_err(),
            "fmiVersion 3.0: this importer reads FMI 2.0"
        );
        let no_id =
            r#"<fmiModelDescription fmiVersion="2.0"><CoSimulation/></fmiModelDescription>"#;
        assert_eq!(
            ModelDescription::parse(no_id).unwrap_err(),
            "<CoSimulation> has no modelIdentifier (it names the binary)"
        );
        let no_vr = r#"<fmiModelDescription fmiVersion="2.0"><CoSimulation modelIdentifier="m"/><ModelVariables><ScalarVariable name="x"><Real/></ScalarVariable></ModelVariables></fmiModelDescription>"#;
        assert_eq!(
            ModelDescription::parse(no_vr).unwrap_err(),
            "variable `x` has no valueReference"
        );
        assert!(
            ModelDescription::parse("<a")
                .unwrap_err()
                .starts_with("not XML: ")
        );
        let path = r#"<fmiModelDescription fmiVersion="2.0"><CoSimulation modelIdentifier="../../x"/></fmiModelDescription>"#;
        assert_eq!(
            ModelDescription::parse(path).unwrap_err(),
            "modelIdentifier `../../x` is not a file name"
        );
    }
}

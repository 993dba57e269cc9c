//! `[[participants]]`: each entry checked against its kind's keys, then
//! read as that kind.

use lockstep_harness::inputs::scenario::Override;
use lockstep_harness::time::rng::RngStreams;
use std::time::Duration;

use toml::Value;

use super::{
    Context, MAX_PARTICIPANTS, MAX_TRAFFIC_SLOTS, ParticipantDecl, ParticipantKind, RawParticipant,
    RawVariable, foreign_key,
};
use crate::error::CosimError;
use crate::participant::Variable;
use crate::system::check_participant_name;

/// Keys each kind takes (besides `name`, `kind`, `period_us`).
const VEHICLE_KEYS: [&str; 5] = ["scenario", "autopilot", "set", "traffic_slots", "avoid_m"];
const FMU_KEYS: [&str; 3] = ["path", "start", "preload"];
const EXTERNAL_KEYS: [&str; 3] = ["outputs", "inputs", "step_timeout_s"];

/// The keys of a participant of `kind` (`None`: no such kind).
pub(super) fn keys_of(kind: &str) -> Option<Vec<&'static str>> {
    let own: &[&str] = match kind {
        "vehicle" => &VEHICLE_KEYS,
        "fmu" => &FMU_KEYS,
        "external" => &EXTERNAL_KEYS,
        _ => return None,
    };
    Some(
        ["name", "kind", "period_us"]
            .iter()
            .chain(own)
            .copied()
            .collect(),
    )
}
/// The most values one declared variable holds.
const MAX_WIDTH: usize = 4096;

pub(super) fn read(
    ctx: &Context,
    raw: Vec<RawParticipant>,
) -> Result<Vec<ParticipantDecl>, CosimError> {
    if raw.is_empty() {
        return Err(ctx.invalid(
            "participants".into(),
            "a system needs at least one [[participants]] entry".into(),
        ));
    }
    if raw.len() > MAX_PARTICIPANTS {
        return Err(ctx.invalid(
            "participants".into(),
            format!("{} entries; at most {MAX_PARTICIPANTS}", raw.len()),
        ));
    }
    let mut participants: Vec<ParticipantDecl> = Vec::with_capacity(raw.len());
    for (i, p) in raw.into_iter().enumerate() {
        let key = |k: &str| format!("participants[{i}].{k}");
        check_participant_name(&p.name).map_err(|r| ctx.invalid(key("name"), r))?;
        if participants.iter().any(|q| q.name == p.name) {
            return Err(ctx.invalid(
                key("name"),
                format!("`{}` is taken by an earlier participant", p.name),
            ));
        }
        let period = p
            .period_us
            .map(|v| ctx.multiple(key("period_us"), v))
            .transpose()?;
        let given = [
            ("scenario", p.scenario.is_some()),
            ("autopilot", p.autopilot.is_some()),
            ("set", p.set.is_some()),
            ("traffic_slots", p.traffic_slots.is_some()),
            ("avoid_m", p.avoid_m.is_some()),
            ("path", p.path.is_some()),
            ("start", p.start.is_some()),
            ("preload", p.preload.is_some()),
            ("outputs", p.outputs.is_some()),
            ("inputs", p.inputs.is_some()),
            ("step_timeout_s", p.step_timeout_s.is_some()),
        ];
        let (valid, kind): (&[&str], &str) = match p.kind.as_str() {
            "vehicle" => (&VEHICLE_KEYS, "a vehicle"),
            "fmu" => (&FMU_KEYS, "an fmu"),
            "external" => (&EXTERNAL_KEYS, "an external"),
            other => {
                return Err(ctx.invalid(
                    key("kind"),
                    format!("`{other}` is not a participant kind (vehicle, fmu, external)"),
                ));
            }
        };
        if let Some((k, reason)) = foreign_key(
            &given,
            valid,
            &format!("{kind} participant"),
            "name, kind, period_us",
        ) {
            return Err(ctx.invalid(key(k), reason));
        }
        let kind = match p.kind.as_str() {
            "vehicle" => vehicle(ctx, i, &p)?,
            "external" => external(ctx, i, &p)?,
            _ => fmu(ctx, i, &p)?,
        };
        participants.push(ParticipantDecl {
            name: p.name,
            period,
            kind,
        });
    }
    Ok(participants)
}

fn vehicle(ctx: &Context, i: usize, p: &RawParticipant) -> Result<ParticipantKind, CosimError> {
    let key = |k: &str| format!("participants[{i}].{k}");
    let scenario = p
        .scenario
        .as_ref()
        .ok_or_else(|| ctx.invalid(key("scenario"), "a vehicle needs its scenario file".into()))?;
    let mut flat = Vec::new();
    if let Some(set) = &p.set {
        flatten("", set, &mut flat);
    }
    let mut overrides: Vec<Override> = flat
        .into_iter()
        .map(|(k, v)| {
            let origin = format!("participants[{i}].set.{k} in {}", ctx.source.label);
            Override::new(&k, v, origin)
        })
        .collect();
    if !overrides.iter().any(|o| o.key == "simulation.seed") {
        overrides.push(Override::new(
            "simulation.seed",
            Value::Integer(
                RngStreams::new(ctx.seed).member_seed("cosim.vehicle", &p.name) as i64 & i64::MAX,
            ),
            format!("the seed of vehicle `{}` derived from cosim.seed", p.name),
        ));
    }
    if !overrides.iter().any(|o| o.key == "simulation.duration_s") {
        overrides.push(Override::new(
            "simulation.duration_s",
            Value::Float(ctx.duration_s),
            "cosim.duration_s".to_string(),
        ));
    }
    let traffic_slots = p
        .traffic_slots
        .unwrap_or(crate::vehicle::DEFAULT_TRAFFIC_SLOTS);
    if traffic_slots > MAX_TRAFFIC_SLOTS {
        return Err(ctx.invalid(
            key("traffic_slots"),
            format!("{traffic_slots}; at most {MAX_TRAFFIC_SLOTS}"),
        ));
    }
    if let Some(a) = p.avoid_m
        && !(a.is_finite() && a > 0.0)
    {
        return Err(ctx.invalid(key("avoid_m"), format!("{a} must be a positive distance")));
    }
    Ok(ParticipantKind::Vehicle {
        scenario: ctx.dir.join(scenario),
        autopilot: p.autopilot.as_ref().map(|a| ctx.dir.join(a)),
        overrides,
        traffic_slots,
        avoid_m: p.avoid_m,
    })
}

fn external(ctx: &Context, i: usize, p: &RawParticipant) -> Result<ParticipantKind, CosimError> {
    let outputs = variables(ctx, i, "outputs", p.outputs.as_deref())?;
    let inputs = variables(ctx, i, "inputs", p.inputs.as_deref())?;
    if outputs.is_empty() && inputs.is_empty() {
        return Err(ctx.invalid(
            format!("participants[{i}].outputs"),
            "an external participant declares outputs or inputs".into(),
        ));
    }
    let step_timeout = match p.step_timeout_s {
        None => DEFAULT_STEP_TIMEOUT,
        Some(s) if s.is_finite() && s > 0.0 && s <= MAX_STEP_TIMEOUT.as_secs_f64() => {
            Duration::from_secs_f64(s)
        }
        Some(s) => {
            return Err(ctx.invalid(
                format!("participants[{i}].step_timeout_s"),
                format!(
                    "{s}: a step's deadline is more than 0 and at most {} s",
                    MAX_STEP_TIMEOUT.as_secs()
                ),
            ));
        }
    };
    Ok(ParticipantKind::External {
        outputs,
        inputs,
        step_timeout,
    })
}

/// How long an external participant's step (the host's callback) may take
/// unless its `step_timeout_s` says otherwise: an autopilot's step deadline.
pub const DEFAULT_STEP_TIMEOUT: Duration = Duration::from_secs(5);
/// The longest `step_timeout_s`: an hour.
pub const MAX_STEP_TIMEOUT: Duration = Duration::from_secs(3600);

/// An external participant's `outputs` or `inputs` (`what`).
fn variables(
    ctx: &Context,
    i: usize,
    what: &str,
    raw: Option<&[RawVariable]>,
) -> Result<Vec<Variable>, CosimError> {
    let mut out: Vec<Variable> = Vec::new();
    for (k, v) in raw.unwrap_or_default().iter().enumerate() {
        let key = |f: &str| format!("participants[{i}].{what}[{k}].{f}");
        if v.name.is_empty() || v.name.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(ctx.invalid(
                key("name"),
                format!(
                    "`{}`: a variable's name is not empty and holds no spaces",
                    v.name
                ),
            ));
        }
        if out.iter().any(|o| o.name == v.name) {
            return Err(ctx.invalid(key("name"), format!("`{}` is declared twice", v.name)));
        }
        let width = match (v.width, &v.start) {
            (Some(w), Some(s)) if w != s.len() => {
                return Err(ctx.invalid(
                    key("start"),
                    format!("{} values for a width of {w}", s.len()),
                ));
            }
            (Some(w), _) => w,
            (None, Some(s)) => s.len(),
            (None, None) => 1,
        };
        if width == 0 || width > MAX_WIDTH {
            return Err(ctx.invalid(
                key("width"),
                format!("{width}: a variable holds 1 to {MAX_WIDTH} values"),
            ));
        }
        out.push(Variable {
            name: v.name.clone(),
            len: width,
            start: v.start.clone().unwrap_or_else(|| vec![0.0; width]),
            description: v.description.clone().unwrap_or_default(),
        });
    }
    Ok(out)
}

fn fmu(ctx: &Context, i: usize, p: &RawParticipant) -> Result<ParticipantKind, CosimError> {
    let fmu = p.path.as_ref().ok_or_else(|| {
        ctx.invalid(
            format!("participants[{i}].path"),
            "an fmu participant needs the path of its .fmu".into(),
        )
    })?;
    // Modelica names hold dots (`body.m`): written bare, TOML makes them
    // tables, read back here as the dotted name.
    let mut flat = Vec::new();
    if let Some(table) = &p.start {
        flatten("", table, &mut flat);
    }
    let mut start: Vec<(String, f64)> = Vec::new();
    for (k, v) in &flat {
        if start.iter().any(|(n, _)| n == k) {
            return Err(ctx.invalid(
                format!("participants[{i}].start.{k}"),
                "given twice (as a dotted key and as a table)".into(),
            ));
        }
        let x = match v {
            Value::Float(f) => *f,
            Value::Integer(n) => *n as f64,
            Value::Boolean(b) => f64::from(u8::from(*b)),
            other => {
                return Err(ctx.invalid(
                    format!("participants[{i}].start.{k}"),
                    format!("expected a number or a boolean, found {}", other.type_str()),
                ));
            }
        };
        if !x.is_finite() {
            return Err(ctx.invalid(
                format!("participants[{i}].start.{k}"),
                format!("{x} must be finite"),
            ));
        }
        start.push((k.clone(), x));
    }
    // `bundled:NAME`: an FMU the program carries.
    let path = if fmu
        .to_str()
        .is_some_and(|f| f.starts_with(super::BUNDLED_PREFIX))
    {
        fmu.clone()
    } else {
        ctx.dir.join(fmu)
    };
    Ok(ParticipantKind::Fmu {
        path,
        start,
        preload: p.preload.clone().unwrap_or_default(),
    })
}

/// `set` as dotted keys: `{ vehicle = { start_east_m = 1 } }` and
/// `{ "vehicle.start_east_m" = 1 }` both give `vehicle.start_east_m`.
fn flatten(prefix: &str, t: &toml::Table, out: &mut Vec<(String, toml::Value)>) {
    for (k, v) in t {
        let key = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        match v {
            toml::Value::Table(inner) => flatten(&key, inner, out),
            other => out.push((key, other.clone())),
        }
    }
}

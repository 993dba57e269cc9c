//! `[[transfers]]`: each entry checked against its kind's keys, then read
//! as that kind.

use lockstep_harness::Micros;

use super::{
    Context, ParticipantDecl, ParticipantKind, RawTransfer, TransferDecl, TransferKind, foreign_key,
};
use crate::error::CosimError;

/// Keys each kind takes (besides `name`, `kind`, `period_us`, `same_step`).
/// The largest gain or offset of a connection: no physical quantity a
/// participant takes is meaningful beyond it, and an offset near the
/// largest double overflows to infinity at the first value it shifts.
pub const MAX_GAIN_OR_OFFSET: f64 = 1e12;

const CONNECT_KEYS: [&str; 4] = ["from", "to", "gain", "offset"];
const RADIO_KEYS: [&str; 4] = ["vehicles", "latency_us", "loss", "range_m"];

/// The keys of a transfer function of `kind` (`None`: no such kind).
pub(super) fn keys_of(kind: &str) -> Option<Vec<&'static str>> {
    let own: &[&str] = match kind {
        "connect" => &CONNECT_KEYS,
        "radio" => &RADIO_KEYS,
        _ => return None,
    };
    Some(
        ["name", "kind", "period_us", "same_step"]
            .iter()
            .chain(own)
            .copied()
            .collect(),
    )
}

pub(super) fn read(
    ctx: &Context,
    raw: Vec<RawTransfer>,
    participants: &[ParticipantDecl],
) -> Result<Vec<TransferDecl>, CosimError> {
    let mut transfers: Vec<TransferDecl> = Vec::with_capacity(raw.len());
    for (i, t) in raw.into_iter().enumerate() {
        let key = |k: &str| format!("transfers[{i}].{k}");
        if t.name.is_empty() {
            return Err(ctx.invalid(key("name"), "cannot be empty".into()));
        }
        if transfers.iter().any(|q| q.name == t.name) {
            return Err(ctx.invalid(
                key("name"),
                format!("`{}` is taken by an earlier transfer function", t.name),
            ));
        }
        let period = t
            .period_us
            .map(|v| ctx.multiple(key("period_us"), v))
            .transpose()?;
        let given = [
            ("from", t.from.is_some()),
            ("to", t.to.is_some()),
            ("gain", t.gain.is_some()),
            ("offset", t.offset.is_some()),
            ("vehicles", t.vehicles.is_some()),
            ("latency_us", t.latency_us.is_some()),
            ("loss", t.loss.is_some()),
            ("range_m", t.range_m.is_some()),
        ];
        let (valid, kind): (&[&str], &str) = match t.kind.as_str() {
            "connect" => (&CONNECT_KEYS, "a connect"),
            "radio" => (&RADIO_KEYS, "a radio"),
            other => {
                return Err(ctx.invalid(
                    key("kind"),
                    format!("`{other}` is not a transfer function kind (connect, radio)"),
                ));
            }
        };
        if let Some((k, reason)) = foreign_key(
            &given,
            valid,
            &format!("{kind} transfer function"),
            "name, kind, period_us, same_step",
        ) {
            return Err(ctx.invalid(key(k), reason));
        }
        let kind = if t.kind == "connect" {
            connect(ctx, i, &t)?
        } else {
            radio(ctx, i, &t, participants)?
        };
        transfers.push(TransferDecl {
            name: t.name,
            period,
            same_step: t.same_step.unwrap_or(false),
            kind,
        });
    }
    Ok(transfers)
}

fn connect(ctx: &Context, i: usize, t: &RawTransfer) -> Result<TransferKind, CosimError> {
    let key = |k: &str| format!("transfers[{i}].{k}");
    let from = t.from.clone().ok_or_else(|| {
        ctx.invalid(
            key("from"),
            "a connection needs the outputs it reads".into(),
        )
    })?;
    let to = t
        .to
        .clone()
        .ok_or_else(|| ctx.invalid(key("to"), "a connection needs the inputs it writes".into()))?;
    for (k, list) in [("from", &from), ("to", &to)] {
        if list.is_empty() {
            return Err(ctx.invalid(key(k), "an empty list connects nothing".into()));
        }
    }
    for (k, v) in [("gain", t.gain), ("offset", t.offset)] {
        if let Some(x) = v
            && !(x.is_finite() && x.abs() <= MAX_GAIN_OR_OFFSET)
        {
            return Err(ctx.invalid(
                key(k),
                format!("{x:e} is outside [-1e12, 1e12] (a connection's gain and offset are finite and at most 1e12 in size)"),
            ));
        }
    }
    Ok(TransferKind::Connect {
        from,
        to,
        gain: t.gain.unwrap_or(1.0),
        offset: t.offset.unwrap_or(0.0),
    })
}

fn radio(
    ctx: &Context,
    i: usize,
    t: &RawTransfer,
    participants: &[ParticipantDecl],
) -> Result<TransferKind, CosimError> {
    let key = |k: &str| format!("transfers[{i}].{k}");
    let vehicles = t.vehicles.clone().ok_or_else(|| {
        ctx.invalid(
            key("vehicles"),
            "a radio needs the vehicles it links".into(),
        )
    })?;
    if vehicles.len() < 2 {
        return Err(ctx.invalid(
            key("vehicles"),
            "a radio links at least two vehicles".into(),
        ));
    }
    for (k, v) in vehicles.iter().enumerate() {
        if vehicles[..k].contains(v) {
            return Err(ctx.invalid(key("vehicles"), format!("`{v}` is listed twice")));
        }
        match participants.iter().find(|p| &p.name == v) {
            Some(ParticipantDecl {
                kind: ParticipantKind::Vehicle { .. },
                ..
            }) => {}
            Some(_) => {
                return Err(ctx.invalid(key("vehicles"), format!("`{v}` is not a vehicle")));
            }
            None => {
                return Err(ctx.invalid(key("vehicles"), format!("no participant `{v}`")));
            }
        }
    }
    let loss = t.loss.unwrap_or(0.0);
    if !(0.0..=1.0).contains(&loss) {
        return Err(ctx.invalid(
            key("loss"),
            format!("{loss} is not a probability in [0, 1]"),
        ));
    }
    if let Some(r) = t.range_m
        && (r.is_nan() || r <= 0.0)
    {
        return Err(ctx.invalid(key("range_m"), format!("{r} must be a positive distance")));
    }
    let latency = Micros(t.latency_us.unwrap_or(0));
    if latency >= ctx.duration {
        return Err(ctx.invalid(
            key("latency_us"),
            format!(
                "{latency} is not shorter than the run ({}): no report would arrive",
                ctx.duration
            ),
        ));
    }
    Ok(TransferKind::Radio {
        vehicles,
        latency,
        loss,
        range_m: t.range_m,
    })
}

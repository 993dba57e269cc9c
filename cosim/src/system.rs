//! Assembling a system: participants with their periods, transfer
//! functions with what they read and write, checked as a whole before the
//! first step (names, widths, periods, one writer per input, no cycle among
//! same-step functions).

use std::collections::BTreeMap;

use lockstep_harness::Micros;

use crate::error::CosimError;
use crate::participant::{Participant, Variable, offsets};
use crate::run::{Cosim, Mode};
use crate::transfer::Transfer;

/// A participant's variable: `participant` and `index` into its outputs or
/// inputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct VarRef {
    pub participant: usize,
    pub index: usize,
}

/// How a transfer function is wired.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TransferSpec {
    pub name: String,
    /// Runs at every multiple of this period (default: the system's step).
    pub period_us: Option<Micros>,
    /// Runs inside the step, after the participants it reads and before
    /// the ones it writes (Gauss–Seidel order), instead of between steps.
    pub same_step: bool,
    /// Outputs it reads, `participant.variable`.
    pub reads: Vec<String>,
    /// Inputs it writes, `participant.variable`.
    pub writes: Vec<String>,
}

/// A participant as the master holds it.
pub(crate) struct Slot {
    pub name: String,
    pub period: Micros,
    pub p: Box<dyn Participant>,
    pub outputs: Vec<Variable>,
    pub inputs: Vec<Variable>,
    pub out_off: Vec<usize>,
    pub in_off: Vec<usize>,
    /// Outputs as of the last published time.
    pub visible: Vec<f64>,
    /// Outputs at the end of the step in progress (published at its end).
    pub pending: Vec<f64>,
    pub publish_at: Option<Micros>,
    pub input_vals: Vec<f64>,
    pub connected: Vec<bool>,
    pub wave: usize,
    pub steps: u64,
    pub notices: Vec<String>,
}

pub(crate) struct TransferSlot {
    pub name: String,
    pub period: Micros,
    pub same_step: bool,
    pub reads: Vec<VarRef>,
    pub writes: Vec<VarRef>,
    pub scratch: Vec<Vec<f64>>,
    /// For a same-step function: it runs after this wave.
    pub after_wave: usize,
    pub t: Box<dyn Transfer>,
}

/// Builds a [`Cosim`]: add participants and transfer functions, then
/// [`SystemBuilder::build`].
pub struct SystemBuilder {
    step: Micros,
    participants: Vec<(String, Option<Micros>, Box<dyn Participant>)>,
    transfers: Vec<(TransferSpec, Box<dyn Transfer>)>,
}

impl std::fmt::Debug for SystemBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SystemBuilder")
            .field("step", &self.step)
            .field(
                "participants",
                &self.participants.iter().map(|p| &p.0).collect::<Vec<_>>(),
            )
            .field(
                "transfers",
                &self.transfers.iter().map(|t| &t.0).collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// The longest participant name.
pub const MAX_NAME: usize = 64;

/// A participant's name: 1 to 64 letters, digits, `_` or `-`. It names the
/// participant's variables (`participant.variable`: no `.`), its log file
/// (`<out>/<name>.csv`: no `/`), its `cosim.csv` columns (no `,`) and its
/// zenoh keys (`serve/<name>`: no `*`, `$`, `#`, `?`).
pub fn check_participant_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > MAX_NAME {
        return Err(format!(
            "`{name}`: a participant's name has 1 to {MAX_NAME} characters"
        ));
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err(format!(
            "`{name}`: a participant's name holds only letters, digits, `_` and `-` \
             (it names files, columns and `participant.variable`)"
        ));
    }
    Ok(())
}

fn period_of(what: &str, period: Option<Micros>, step: Micros) -> Result<Micros, CosimError> {
    let p = period.unwrap_or(step);
    if p == Micros::ZERO || !p.is_multiple_of(step) {
        return Err(CosimError::build(
            what,
            format!("period {p} is not a positive multiple of the system's step {step}"),
        ));
    }
    Ok(p)
}

fn check_variables(name: &str, kind: &str, vars: &[Variable]) -> Result<(), CosimError> {
    let mut seen = BTreeMap::new();
    for v in vars {
        if v.len == 0 || v.start.len() != v.len {
            return Err(CosimError::build(
                format!("participant `{name}`"),
                format!(
                    "{kind} `{}` has {} values and {} start values",
                    v.name,
                    v.len,
                    v.start.len()
                ),
            ));
        }
        if seen.insert(v.name.as_str(), ()).is_some() {
            return Err(CosimError::build(
                format!("participant `{name}`"),
                format!("two {kind}s are named `{}`", v.name),
            ));
        }
    }
    Ok(())
}

impl SystemBuilder {
    /// A system stepping every `step_us` µs.
    pub fn new(step_us: Micros) -> SystemBuilder {
        SystemBuilder {
            step: step_us,
            participants: Vec::new(),
            transfers: Vec::new(),
        }
    }

    /// Adds participant `name`, stepping every `period_us` (default: the
    /// system's step).
    pub fn participant(
        &mut self,
        name: &str,
        period_us: Option<Micros>,
        p: Box<dyn Participant>,
    ) -> Result<&mut Self, CosimError> {
        check_participant_name(name)
            .map_err(|r| CosimError::build(format!("participant `{name}`"), r))?;
        if self.participants.iter().any(|(n, ..)| n == name) {
            return Err(CosimError::build(
                format!("participant `{name}`"),
                "another participant has this name",
            ));
        }
        self.participants.push((name.to_string(), period_us, p));
        Ok(self)
    }

    /// Adds a transfer function; it runs after the ones added before it.
    pub fn transfer(
        &mut self,
        spec: TransferSpec,
        t: Box<dyn Transfer>,
    ) -> Result<&mut Self, CosimError> {
        if self.transfers.iter().any(|(s, _)| s.name == spec.name) {
            return Err(CosimError::build(
                format!("transfer function `{}`", spec.name),
                "another transfer function has this name",
            ));
        }
        self.transfers.push((spec, t));
        Ok(self)
    }

    /// Checks the whole system and makes it ready to step from time 0.
    pub fn build(self, mode: Mode) -> Result<Cosim, CosimError> {
        let step = self.step;
        if step == Micros::ZERO {
            return Err(CosimError::build("the system", "its step must be positive"));
        }
        let mut slots = Vec::with_capacity(self.participants.len());
        for (name, period, p) in self.participants {
            let what = format!("participant `{name}`");
            let period = period_of(&what, period, step)?;
            p.check_period(period)
                .map_err(|r| CosimError::build(&what, r))?;
            let outputs = p.outputs();
            let inputs = p.inputs();
            let notices = p.notices();
            check_variables(&name, "output", &outputs)?;
            check_variables(&name, "input", &inputs)?;
            let (out_off, visible) = offsets(&outputs);
            let (in_off, input_vals) = offsets(&inputs);
            slots.push(Slot {
                notices,
                name,
                period,
                connected: vec![false; inputs.len()],
                pending: visible.clone(),
                p,
                outputs,
                inputs,
                out_off,
                in_off,
                visible,
                publish_at: None,
                input_vals,
                wave: 0,
                steps: 0,
            });
        }
        let mut tfs = Vec::with_capacity(self.transfers.len());
        let mut writer: BTreeMap<VarRef, String> = BTreeMap::new();
        for (spec, t) in self.transfers {
            let what = format!("transfer function `{}`", spec.name);
            let period = period_of(&what, spec.period_us, step)?;
            let reads = spec
                .reads
                .iter()
                .map(|r| resolve(&slots, r, true).map_err(|e| CosimError::build(&what, e)))
                .collect::<Result<Vec<_>, _>>()?;
            let writes = spec
                .writes
                .iter()
                .map(|r| resolve(&slots, r, false).map_err(|e| CosimError::build(&what, e)))
                .collect::<Result<Vec<_>, _>>()?;
            for (w, text) in writes.iter().zip(&spec.writes) {
                if let Some(first) = writer.insert(*w, spec.name.clone()) {
                    return Err(CosimError::build(
                        &what,
                        format!("writes `{text}`, which transfer function `{first}` writes too"),
                    ));
                }
                slots[w.participant].connected[w.index] = true;
            }
            let read_widths: Vec<usize> = reads
                .iter()
                .map(|r| slots[r.participant].outputs[r.index].len)
                .collect();
            let write_widths: Vec<usize> = writes
                .iter()
                .map(|w| slots[w.participant].inputs[w.index].len)
                .collect();
            t.check(&read_widths, &write_widths)
                .map_err(|e| CosimError::build(&what, e))?;
            if spec.same_step && reads.is_empty() {
                return Err(CosimError::build(
                    &what,
                    "a same-step function runs after the participants it reads, and it reads none",
                ));
            }
            if spec.same_step {
                for r in reads
                    .iter()
                    .map(|r| r.participant)
                    .chain(writes.iter().map(|w| w.participant))
                {
                    if slots[r].period != period {
                        return Err(CosimError::build(
                            &what,
                            format!(
                                "a same-step function runs with the participants it connects: participant `{}` steps every {}, the function every {period}",
                                slots[r].name, slots[r].period
                            ),
                        ));
                    }
                }
            }
            tfs.push(TransferSlot {
                name: spec.name,
                period,
                same_step: spec.same_step,
                scratch: write_widths.iter().map(|n| vec![0.0; *n]).collect(),
                reads,
                writes,
                after_wave: 0,
                t,
            });
        }
        let waves = order_waves(&mut slots, &mut tfs)?;
        Cosim::new(step, slots, tfs, waves, mode)
    }
}

/// Resolves `participant.variable` among outputs (`output`) or inputs.
fn resolve(slots: &[Slot], text: &str, output: bool) -> Result<VarRef, String> {
    let verb = if output { "reads" } else { "writes" };
    let Some((p, v)) = text.split_once('.') else {
        return Err(format!("{verb} `{text}`: expected `participant.variable`"));
    };
    let Some(pi) = slots.iter().position(|s| s.name == p) else {
        let names: Vec<&str> = slots.iter().map(|s| s.name.as_str()).collect();
        return Err(format!(
            "{verb} `{text}`: no participant `{p}` (participants: {})",
            names.join(", ")
        ));
    };
    let vars = if output {
        &slots[pi].outputs
    } else {
        &slots[pi].inputs
    };
    match vars.iter().position(|x| x.name == v) {
        Some(index) => Ok(VarRef {
            participant: pi,
            index,
        }),
        None => {
            let kind = if output { "output" } else { "input" };
            let names: Vec<&str> = vars.iter().map(|x| x.name.as_str()).collect();
            Err(format!(
                "{verb} `{text}`: participant `{p}` has no {kind} `{v}` ({kind}s: {})",
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            ))
        }
    }
}

/// Same-step functions order the participants: one that a same-step
/// function reads steps in an earlier wave than the ones it writes. Waves
/// are longest paths from the participants nothing feeds; a cycle is
/// refused, naming it.
fn order_waves(slots: &mut [Slot], tfs: &mut [TransferSlot]) -> Result<usize, CosimError> {
    let n = slots.len();
    let mut succ: Vec<Vec<usize>> = vec![Vec::new(); n];
    for tf in tfs.iter().filter(|t| t.same_step) {
        for r in &tf.reads {
            for w in &tf.writes {
                if !succ[r.participant].contains(&w.participant) {
                    succ[r.participant].push(w.participant);
                }
            }
        }
    }
    // Depth-first search for a cycle (0 new, 1 on the path, 2 done), in
    // declaration order so the cycle named is always the same.
    fn visit(
        u: usize,
        succ: &[Vec<usize>],
        mark: &mut [u8],
        path: &mut Vec<usize>,
    ) -> Option<Vec<usize>> {
        mark[u] = 1;
        path.push(u);
        for &v in &succ[u] {
            if mark[v] == 1 {
                let from = path.iter().position(|x| *x == v).unwrap_or(0);
                let mut cycle = path[from..].to_vec();
                cycle.push(v);
                return Some(cycle);
            }
            if mark[v] == 0
                && let Some(c) = visit(v, succ, mark, path)
            {
                return Some(c);
            }
        }
        path.pop();
        mark[u] = 2;
        None
    }
    let mut mark = vec![0u8; n];
    for u in 0..n {
        if mark[u] == 0
            && let Some(cycle) = visit(u, &succ, &mut mark, &mut Vec::new())
        {
            let names: Vec<&str> = cycle.iter().map(|i| slots[*i].name.as_str()).collect();
            return Err(CosimError::build(
                "same-step transfer functions",
                format!(
                    "they form a cycle: {} (a same-step loop has no order to step in; make one of its functions step-delayed)",
                    names.join(" -> ")
                ),
            ));
        }
    }
    // Longest path: relax in a topological order (reverse post-order).
    let mut wave = vec![0usize; n];
    let mut order = Vec::with_capacity(n);
    let mut done = vec![false; n];
    fn post(u: usize, succ: &[Vec<usize>], done: &mut [bool], order: &mut Vec<usize>) {
        done[u] = true;
        for &v in &succ[u] {
            if !done[v] {
                post(v, succ, done, order);
            }
        }
        order.push(u);
    }
    for u in 0..n {
        if !done[u] {
            post(u, &succ, &mut done, &mut order);
        }
    }
    for &u in order.iter().rev() {
        for &v in &succ[u] {
            wave[v] = wave[v].max(wave[u] + 1);
        }
    }
    for (s, w) in slots.iter_mut().zip(&wave) {
        s.wave = *w;
    }
    for tf in tfs.iter_mut().filter(|t| t.same_step) {
        tf.after_wave = tf
            .reads
            .iter()
            .map(|r| wave[r.participant])
            .max()
            .unwrap_or(0);
    }
    Ok(wave.iter().max().map_or(1, |m| m + 1))
}

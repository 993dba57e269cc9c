//! Running a system. One step of the system from `t` to `t + Δ`:
//!
//! 1. wave by wave, every participant due at `t` (its period divides `t`)
//!    takes its connected inputs, steps over its period and computes its
//!    outputs — the participants of a wave in parallel (or one after
//!    another in declaration order, serialized); after each wave the
//!    same-step transfer functions that read it run, writing inputs of
//!    later waves for this same step;
//! 2. at `t + Δ` the outputs of the steps that end there are published and
//!    the transfer functions due at `t + Δ` run serially in declared order
//!    on them, writing the inputs held over the next steps (the one-step
//!    delay: nothing a participant computes over `[t, t + Δ]` reaches
//!    another before `t + Δ`).
//!
//! A participant's work depends only on its own state and its held inputs,
//! and the transfer functions run in one fixed order, so the parallel and
//! serialized modes give the same bits (tested).

use lockstep_harness::Micros;

use crate::error::CosimError;
use crate::participant::ParticipantError;
use crate::report::{ParticipantReport, TransferReport};
use crate::system::{Slot, TransferSlot, VarRef};
use crate::team::Team;

/// How the participants of one wave step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// On this many threads: the caller's and a team of workers (no more
    /// than the largest wave has participants).
    Parallel { threads: usize },
    /// One after another in declaration order.
    Serialized,
}

/// A built system, stepping from time 0.
pub struct Cosim {
    step: Micros,
    now: Micros,
    /// Boxed: the parallel mode moves them to its team and back each wave
    /// (a pointer, not the slot's few hundred bytes: radio_swarm's parallel
    /// run was 1.31× the serialized one with the slots unboxed, 1.46×
    /// boxed).
    #[allow(clippy::vec_box)]
    slots: Vec<Box<Slot>>,
    tfs: Vec<TransferSlot>,
    waves: usize,
    team: Option<Team>,
    finished: bool,
}

impl std::fmt::Debug for Cosim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cosim")
            .field("step", &self.step)
            .field("now", &self.now)
            .field("participants", &self.names())
            .field("waves", &self.waves)
            .finish_non_exhaustive()
    }
}

fn participant_error(s: &Slot, during: &'static str, t: Micros, e: ParticipantError) -> CosimError {
    CosimError::Participant {
        participant: s.name.clone(),
        during,
        time_us: t,
        message: e.0,
    }
}

/// Reads every output of `s` into `out` (its flat buffer).
fn read_outputs(s: &mut Slot, t: Micros, to_pending: bool) -> Result<(), CosimError> {
    for i in 0..s.outputs.len() {
        let r = s.out_off[i]..s.out_off[i + 1];
        let buf = if to_pending {
            &mut s.pending[r]
        } else {
            &mut s.visible[r]
        };
        if let Err(e) = s.p.output(i, buf) {
            return Err(participant_error(s, "output", t, e));
        }
    }
    Ok(())
}

/// One step of participant `s` from `t`.
fn advance(s: &mut Slot, t: Micros) -> Result<(), CosimError> {
    for i in 0..s.inputs.len() {
        if s.connected[i]
            && let Err(e) =
                s.p.set_input(i, &s.input_vals[s.in_off[i]..s.in_off[i + 1]])
        {
            return Err(participant_error(s, "set_input", t, e));
        }
    }
    if let Err(e) = s.p.step(t, s.period) {
        return Err(participant_error(s, "step", t, e));
    }
    read_outputs(s, t, true)?;
    s.publish_at = Some(t + s.period);
    s.steps += 1;
    Ok(())
}

/// Runs transfer function `tf` at `t` on the participants' published
/// outputs (`pending` for a same-step function: this step's).
fn run_transfer(
    tf: &mut TransferSlot,
    slots: &mut [Box<Slot>],
    t: Micros,
    pending: bool,
) -> Result<(), CosimError> {
    let fail = |message: String| CosimError::Transfer {
        transfer: tf.name.clone(),
        time_us: t,
        message,
    };
    {
        let reads: Vec<&[f64]> = tf
            .reads
            .iter()
            .map(|r| {
                let s = &slots[r.participant];
                let buf = if pending { &s.pending } else { &s.visible };
                &buf[s.out_off[r.index]..s.out_off[r.index + 1]]
            })
            .collect();
        tf.t.run(t, &reads, &mut tf.scratch).map_err(&fail)?;
    }
    for (w, vals) in tf.writes.iter().zip(&tf.scratch) {
        let s = &mut slots[w.participant];
        let r = s.in_off[w.index]..s.in_off[w.index + 1];
        if vals.len() != r.len() {
            return Err(fail(format!(
                "it wrote {} values to `{}.{}`, which holds {}",
                vals.len(),
                s.name,
                s.inputs[w.index].name,
                r.len()
            )));
        }
        s.input_vals[r].copy_from_slice(vals);
    }
    Ok(())
}

impl Cosim {
    pub(crate) fn new(
        step: Micros,
        slots: Vec<Slot>,
        tfs: Vec<TransferSlot>,
        waves: usize,
        mode: Mode,
    ) -> Result<Cosim, CosimError> {
        let team = match mode {
            Mode::Serialized => None,
            Mode::Parallel { threads } => {
                let widest = (0..waves)
                    .map(|w| slots.iter().filter(|s| s.wave == w).count())
                    .max()
                    .unwrap_or(0);
                match threads.max(1).min(widest) {
                    0 | 1 => None,
                    n => Some(Team::start(n - 1, advance)?),
                }
            }
        };
        let mut slots: Vec<Box<Slot>> = slots.into_iter().map(Box::new).collect();
        for s in &mut slots {
            read_outputs(s, Micros::ZERO, false)?;
            s.pending.copy_from_slice(&s.visible);
        }
        let mut c = Cosim {
            step,
            now: Micros::ZERO,
            slots,
            tfs,
            waves,
            team,
            finished: false,
        };
        // Every period divides 0: the transfer functions give the first
        // step its inputs from the participants' initial outputs.
        c.run_delayed(Micros::ZERO)?;
        Ok(c)
    }

    fn run_delayed(&mut self, t: Micros) -> Result<(), CosimError> {
        for tf in self.tfs.iter_mut() {
            if !tf.same_step && t.is_multiple_of(tf.period) {
                run_transfer(tf, &mut self.slots, t, false)?;
            }
        }
        Ok(())
    }

    /// The system's step, µs.
    pub fn step_us(&self) -> Micros {
        self.step
    }

    /// The time reached, µs.
    pub fn now(&self) -> Micros {
        self.now
    }

    /// The participants' names in declaration order.
    pub fn names(&self) -> Vec<&str> {
        self.slots.iter().map(|s| s.name.as_str()).collect()
    }

    /// How many waves a step has (1 without same-step functions).
    pub fn waves(&self) -> usize {
        self.waves
    }

    /// What each participant said the user should know (an FMU's
    /// tolerated defects), by name; only those with something to say.
    pub fn notices(&self) -> Vec<(&str, &[String])> {
        self.slots
            .iter()
            .filter(|s| !s.notices.is_empty())
            .map(|s| (s.name.as_str(), s.notices.as_slice()))
            .collect()
    }

    /// Each transfer function's report, by name (only those with one).
    pub fn transfer_reports(&self) -> Vec<(String, TransferReport)> {
        self.tfs
            .iter()
            .map(|t| (t.name.clone(), t.t.report()))
            .filter(|(_, v)| *v != TransferReport::None)
            .collect()
    }

    /// Steps participant `i` has taken.
    pub fn steps_of(&self, i: usize) -> u64 {
        self.slots[i].steps
    }

    /// Every output, `participant.variable` with its width, in
    /// declaration order.
    pub fn output_list(&self) -> Vec<(String, VarRef, usize)> {
        let mut v = Vec::new();
        for (pi, s) in self.slots.iter().enumerate() {
            for (index, o) in s.outputs.iter().enumerate() {
                v.push((
                    format!("{}.{}", s.name, o.name),
                    VarRef {
                        participant: pi,
                        index,
                    },
                    o.len,
                ));
            }
        }
        v
    }

    /// The output `participant.variable`.
    pub fn find_output(&self, name: &str) -> Option<VarRef> {
        self.output_list()
            .into_iter()
            .find(|(n, ..)| n == name)
            .map(|(_, r, _)| r)
    }

    /// The published value of output `r` (as of [`Cosim::now`]).
    pub fn output(&self, r: VarRef) -> &[f64] {
        let s = &self.slots[r.participant];
        &s.visible[s.out_off[r.index]..s.out_off[r.index + 1]]
    }

    /// The value input `participant.variable` holds (what its next step
    /// takes), or `None` for no such input.
    pub fn input(&self, name: &str) -> Option<&[f64]> {
        let (p, v) = name.split_once('.')?;
        let s = self.slots.iter().find(|s| s.name == p)?;
        let i = s.inputs.iter().position(|x| x.name == v)?;
        Some(&s.input_vals[s.in_off[i]..s.in_off[i + 1]])
    }

    /// One step of the system: from [`Cosim::now`] to `now + step`.
    pub fn step(&mut self) -> Result<Micros, CosimError> {
        let t = self.now;
        for w in 0..self.waves {
            let due = |s: &Slot| s.wave == w && t.is_multiple_of(s.period);
            let count = self.slots.iter().filter(|s| due(s)).count();
            match &mut self.team {
                Some(team) if count > 1 => team.wave(&mut self.slots, t, due)?,
                _ => {
                    for s in self.slots.iter_mut().filter(|s| due(s)) {
                        advance(s, t)?;
                    }
                }
            }
            for tf in self.tfs.iter_mut() {
                if tf.same_step && tf.after_wave == w && t.is_multiple_of(tf.period) {
                    run_transfer(tf, &mut self.slots, t, true)?;
                }
            }
        }
        let end = t + self.step;
        for s in &mut self.slots {
            if s.publish_at == Some(end) {
                s.visible.copy_from_slice(&s.pending);
                s.publish_at = None;
            }
        }
        self.now = end;
        self.run_delayed(end)?;
        Ok(end)
    }

    /// Steps until `end` (rounded up to a step), calling `observe` after
    /// every step.
    pub fn run_until(
        &mut self,
        end: Micros,
        mut observe: impl FnMut(&Cosim) -> Result<(), CosimError>,
    ) -> Result<(), CosimError> {
        while self.now < end {
            self.step()?;
            observe(self)?;
        }
        Ok(())
    }

    /// Ends every participant (each is finished even when one fails; the
    /// first failure is returned), with what each says of its run.
    pub fn finish(&mut self) -> Result<Vec<(String, ParticipantReport)>, CosimError> {
        match self.finish_all() {
            (reports, None) => Ok(reports),
            (_, Some(e)) => Err(e),
        }
    }

    /// Ends every participant: what each says of its run (null for one
    /// whose finish failed) and the first failure, so that one failing
    /// participant loses no other's report.
    pub fn finish_all(&mut self) -> (Vec<(String, ParticipantReport)>, Option<CosimError>) {
        if self.finished {
            return (Vec::new(), None);
        }
        self.finished = true;
        let t = self.now;
        let mut first = None;
        let mut out = Vec::with_capacity(self.slots.len());
        for s in &mut self.slots {
            match s.p.finish() {
                Ok(v) => out.push((s.name.clone(), v)),
                Err(e) => {
                    out.push((s.name.clone(), ParticipantReport::None));
                    first.get_or_insert_with(|| participant_error(s, "finish", t, e));
                }
            }
        }
        (out, first)
    }
}

//! The orchestrator: wakes the earliest models on the timeline, forwards
//! what they produce to the models subscribed to it, and cascades within
//! the timestamp until no model produces data; then moves to the next
//! timestamp. The models of one pass of a cascade are called together (in
//! parallel) and see only data of earlier passes; their results are routed
//! in model-id order (the order of registration), so the run does not
//! depend on which model answered first. A cascade that does not settle
//! within the pass limit ends the run naming the models still receiving
//! updates (due another pass).

use std::collections::BTreeMap;

use rayon::prelude::*;

use crate::mask::{DataMask, Key};
use crate::model::{Model, Moment, Outcome, TimelineInfo, Timestamp, Update};

/// The default bound on passes of one cascade.
pub const DEFAULT_PASS_LIMIT: usize = 100;

#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum OrchestratorError {
    #[error("model `{model}`: {reason}")]
    Register { model: String, reason: String },
    #[error("model `{model}` failed in {during} at timestamp {timestamp}: {message}")]
    Model {
        model: String,
        during: &'static str,
        timestamp: Timestamp,
        message: String,
    },
    #[error(
        "model `{model}` published `{key}` at timestamp {timestamp}, outside its mask (publishes: {mask})"
    )]
    OutsideMask {
        model: String,
        key: String,
        timestamp: Timestamp,
        mask: String,
    },
    #[error(
        "model `{model}` asked to wake at timestamp {next} while at {timestamp}: a wake-up must be later"
    )]
    NextTime {
        model: String,
        timestamp: Timestamp,
        next: Timestamp,
    },
    #[error("the cascade at timestamp {timestamp} did not settle within {passes} passes; still receiving updates: {}", receiving.join(", "))]
    PassLimit {
        timestamp: Timestamp,
        passes: usize,
        /// The models due another pass: they received updates in the last.
        receiving: Vec<String>,
    },
    #[error("model `{model}` at timestamp {timestamp}: {reason}")]
    Gone {
        model: String,
        timestamp: Timestamp,
        reason: String,
    },
    #[error("cannot start {threads} worker threads: {reason}")]
    Threads { threads: usize, reason: String },
}

/// One call of a model, for a run's trace.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Call {
    pub timestamp: Timestamp,
    pub pass: usize,
    pub model: String,
    /// It was due on the timeline (else only data woke it).
    pub woken: bool,
    /// Updates in its inbox.
    pub inbox: usize,
    /// Keys it produced.
    pub produced: Vec<String>,
    pub next_time: Option<Timestamp>,
}

/// Counts of a run.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct Stats {
    /// Timestamps processed.
    pub timestamps: u64,
    /// Model calls (updates).
    pub calls: u64,
    /// Updates produced.
    pub updates: u64,
    /// Updates delivered (one per subscriber).
    pub deliveries: u64,
    /// The most passes one cascade took.
    pub max_passes: usize,
}

struct Slot {
    name: String,
    mask: DataMask,
    model: Box<dyn Model>,
    next: Option<Timestamp>,
    inbox: Vec<Update>,
}

/// An orchestrated run.
pub struct Orchestrator {
    info: TimelineInfo,
    pass_limit: usize,
    slots: Vec<Slot>,
    pool: Option<rayon::ThreadPool>,
    stats: Stats,
    trace: Option<Vec<Call>>,
    started: bool,
    now: Option<Timestamp>,
    /// The error that ended the run: every later step returns it.
    failed: Option<OrchestratorError>,
    /// The models have been finished (once: a later finish says nothing).
    finished: bool,
}

impl std::fmt::Debug for Orchestrator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Orchestrator")
            .field("info", &self.info)
            .field("models", &self.names())
            .field("now", &self.now)
            .finish_non_exhaustive()
    }
}

fn masks_text(m: &DataMask) -> String {
    m.publishes
        .iter()
        .map(|p| p.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

impl Orchestrator {
    /// A run over `info`'s timeline; cascades are bounded by `pass_limit`;
    /// the models of a pass are called on `threads` threads (1: one after
    /// another).
    pub fn new(
        info: TimelineInfo,
        pass_limit: usize,
        threads: usize,
    ) -> Result<Orchestrator, OrchestratorError> {
        let pool = if threads > 1 {
            Some(
                rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .thread_name(|i| format!("lockstep-orchestrator-{i}"))
                    .build()
                    .map_err(|e| OrchestratorError::Threads {
                        threads,
                        reason: e.to_string(),
                    })?,
            )
        } else {
            None
        };
        Ok(Orchestrator {
            info,
            pass_limit: pass_limit.max(1),
            slots: Vec::new(),
            pool,
            stats: Stats::default(),
            trace: None,
            started: false,
            now: None,
            failed: None,
            finished: false,
        })
    }

    /// Records every call (see [`Orchestrator::trace`]).
    pub fn keep_trace(&mut self) {
        self.trace = Some(Vec::new());
    }

    pub fn trace(&self) -> &[Call] {
        self.trace.as_deref().unwrap_or(&[])
    }

    pub fn stats(&self) -> Stats {
        self.stats
    }

    pub fn names(&self) -> Vec<&str> {
        self.slots.iter().map(|s| s.name.as_str()).collect()
    }

    /// The timestamp processed last.
    pub fn now(&self) -> Option<Timestamp> {
        self.now
    }

    /// Registers model `name` (its id: the order of registration).
    pub fn register(&mut self, name: &str, model: Box<dyn Model>) -> Result<(), OrchestratorError> {
        let err = |reason: String| OrchestratorError::Register {
            model: name.to_string(),
            reason,
        };
        if self.started {
            return Err(err("the run has started".into()));
        }
        if name.is_empty() || name.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(err("a model's name is not empty and holds no spaces".into()));
        }
        if self.slots.iter().any(|s| s.name == name) {
            return Err(err("another model has this name".into()));
        }
        let mask = model.mask();
        self.slots.push(Slot {
            name: name.to_string(),
            mask,
            model,
            next: None,
            inbox: Vec::new(),
        });
        Ok(())
    }

    /// Which models depend on which: model i's subscriptions overlap model
    /// j's publications (`(publisher, subscriber)` pairs, by id).
    pub fn dependencies(&self) -> Vec<(usize, usize)> {
        let mut v = Vec::new();
        for (p, ps) in self.slots.iter().enumerate() {
            for (s, ss) in self.slots.iter().enumerate() {
                if p != s
                    && ps
                        .mask
                        .publishes
                        .iter()
                        .any(|a| ss.mask.subscribes.iter().any(|b| a.overlaps(b)))
                {
                    v.push((p, s));
                }
            }
        }
        v
    }

    /// Checks and delivers `outcome` of model `i` at `t`; returns whether it
    /// produced data.
    fn route(
        &mut self,
        i: usize,
        t: Timestamp,
        outcome: Outcome,
    ) -> Result<bool, OrchestratorError> {
        if let Some(n) = outcome.next_time
            && (n <= t && self.started || n < t)
        {
            return Err(OrchestratorError::NextTime {
                model: self.slots[i].name.clone(),
                timestamp: t,
                next: n,
            });
        }
        self.slots[i].next = outcome.next_time;
        if outcome.data.is_empty() {
            return Ok(false);
        }
        if let Some(k) = outcome
            .data
            .keys()
            .find(|k| !self.slots[i].mask.may_publish(k))
        {
            return Err(OrchestratorError::OutsideMask {
                model: self.slots[i].name.clone(),
                key: k.to_string(),
                timestamp: t,
                mask: masks_text(&self.slots[i].mask),
            });
        }
        self.stats.updates += 1;
        let from = self.slots[i].name.clone();
        for j in 0..self.slots.len() {
            if j == i {
                continue;
            }
            let wanted: BTreeMap<Key, serde_json::Value> = outcome
                .data
                .iter()
                .filter(|(k, _)| self.slots[j].mask.wants(k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            if !wanted.is_empty() {
                self.slots[j].inbox.push(Update {
                    from: from.clone(),
                    timestamp: t,
                    data: wanted,
                });
                self.stats.deliveries += 1;
            }
        }
        Ok(true)
    }

    /// Initializes every model at the start time (in id order) and settles
    /// the start time's cascade.
    pub fn start(&mut self) -> Result<(), OrchestratorError> {
        if self.started {
            return Ok(());
        }
        let t = self.info.start_time;
        let at = Moment {
            timestamp: t,
            info: self.info,
        };
        let mut outcomes = Vec::with_capacity(self.slots.len());
        for s in &mut self.slots {
            let o = s
                .model
                .initialize(at)
                .map_err(|message| OrchestratorError::Model {
                    model: s.name.clone(),
                    during: "initialize",
                    timestamp: t,
                    message,
                })?;
            outcomes.push(o);
        }
        for (i, o) in outcomes.into_iter().enumerate() {
            self.route(i, t, o)?;
        }
        self.started = true;
        let woken: Vec<usize> = (0..self.slots.len())
            .filter(|i| self.slots[*i].next == Some(t))
            .collect();
        self.settle(t, woken)
    }

    /// The cascade at `t`: the `woken` models and those with data, pass
    /// after pass until none produces data.
    fn settle(&mut self, t: Timestamp, woken: Vec<usize>) -> Result<(), OrchestratorError> {
        for i in &woken {
            self.slots[*i].next = None;
        }
        let mut due: Vec<(usize, bool)> = woken.iter().map(|i| (*i, true)).collect();
        let mut pass = 0;
        loop {
            for (i, s) in self.slots.iter().enumerate() {
                if !s.inbox.is_empty() && !due.iter().any(|(d, _)| *d == i) {
                    due.push((i, false));
                }
            }
            due.sort_unstable();
            if due.is_empty() {
                break;
            }
            if pass == self.pass_limit {
                return Err(OrchestratorError::PassLimit {
                    timestamp: t,
                    passes: pass,
                    receiving: due
                        .iter()
                        .map(|(i, _)| self.slots[*i].name.clone())
                        .collect(),
                });
            }
            let at = Moment {
                timestamp: t,
                info: self.info,
            };
            // Each model of the pass takes its inbox and is called; all
            // see only data of earlier passes.
            let mut calls: Vec<(usize, bool, Vec<Update>)> = due
                .iter()
                .map(|(i, w)| (*i, *w, std::mem::take(&mut self.slots[*i].inbox)))
                .collect();
            let call = |slot: &mut Slot, inbox: &[Update]| {
                slot.model
                    .update(at, inbox)
                    .map_err(|message| OrchestratorError::Model {
                        model: slot.name.clone(),
                        during: "update",
                        timestamp: t,
                        message,
                    })
            };
            let outcomes: Vec<Result<Outcome, OrchestratorError>> = match &self.pool {
                Some(pool) if calls.len() > 1 => {
                    let mut chosen: Vec<(&mut Slot, &Vec<Update>)> =
                        Vec::with_capacity(calls.len());
                    let mut rest: &mut [Slot] = &mut self.slots;
                    let mut base = 0;
                    for (i, _, inbox) in &calls {
                        let (_, tail) = rest.split_at_mut(i - base);
                        let (one, tail) = tail.split_at_mut(1);
                        chosen.push((&mut one[0], inbox));
                        rest = tail;
                        base = i + 1;
                    }
                    pool.install(|| {
                        chosen
                            .into_par_iter()
                            .map(|(slot, inbox)| call(slot, inbox))
                            .collect()
                    })
                }
                _ => calls
                    .iter()
                    .map(|(i, _, inbox)| call(&mut self.slots[*i], inbox))
                    .collect(),
            };
            self.stats.calls += calls.len() as u64;
            let mut produced_any = false;
            for ((i, w, inbox), outcome) in calls.drain(..).zip(outcomes) {
                let outcome = outcome?;
                if let Some(trace) = &mut self.trace {
                    trace.push(Call {
                        timestamp: t,
                        pass,
                        model: self.slots[i].name.clone(),
                        woken: w,
                        inbox: inbox.len(),
                        produced: outcome.data.keys().map(|k| k.to_string()).collect(),
                        next_time: outcome.next_time,
                    });
                }
                produced_any |= self.route(i, t, outcome)?;
            }
            pass += 1;
            due.clear();
            if !produced_any {
                break;
            }
        }
        self.stats.max_passes = self.stats.max_passes.max(pass);
        Ok(())
    }

    /// The next timestamp on the timeline within the run, if any.
    pub fn next_timestamp(&self) -> Option<Timestamp> {
        self.slots
            .iter()
            .filter_map(|s| s.next)
            .min()
            .filter(|t| *t <= self.info.end())
    }

    /// Processes the next timestamp (starting the run first if needed);
    /// `None` once the timeline is empty or past the end.
    pub fn step(&mut self) -> Result<Option<Timestamp>, OrchestratorError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let r = self.step_once();
        if let Err(e) = &r {
            self.failed = Some(e.clone());
        }
        r
    }

    fn step_once(&mut self) -> Result<Option<Timestamp>, OrchestratorError> {
        if !self.started {
            self.start()?;
            self.now = Some(self.info.start_time);
            self.stats.timestamps += 1;
            return Ok(Some(self.info.start_time));
        }
        let Some(t) = self.next_timestamp() else {
            return Ok(None);
        };
        for s in &self.slots {
            s.model.alive().map_err(|reason| OrchestratorError::Gone {
                model: s.name.clone(),
                timestamp: t,
                reason,
            })?;
        }
        let woken: Vec<usize> = (0..self.slots.len())
            .filter(|i| self.slots[*i].next == Some(t))
            .collect();
        self.settle(t, woken)?;
        self.now = Some(t);
        self.stats.timestamps += 1;
        Ok(Some(t))
    }

    /// Runs to the end, then finishes every model (each, even when one
    /// fails; the first failure is returned).
    pub fn run(&mut self) -> Result<Vec<(String, serde_json::Value)>, OrchestratorError> {
        let ran = loop {
            match self.step() {
                Ok(Some(_)) => {}
                Ok(None) => break Ok(()),
                Err(e) => break Err(e),
            }
        };
        let finished = self.finish();
        ran?;
        finished
    }

    /// Ends every model with what it has to say (each is finished even
    /// when one fails; the first failure is returned).
    pub fn finish(&mut self) -> Result<Vec<(String, serde_json::Value)>, OrchestratorError> {
        match self.finish_all() {
            (reports, None) => Ok(reports),
            (_, Some(e)) => Err(e),
        }
    }

    /// Ends every model: what each says (null for one whose finish failed)
    /// and the first failure, so that one failing model loses no other's
    /// report. Once: a later call returns nothing.
    pub fn finish_all(&mut self) -> (Vec<(String, serde_json::Value)>, Option<OrchestratorError>) {
        if self.finished {
            return (Vec::new(), None);
        }
        self.finished = true;
        let t = self.now.unwrap_or(self.info.start_time);
        let mut first = None;
        let mut out = Vec::with_capacity(self.slots.len());
        for s in &mut self.slots {
            match s.model.finish() {
                Ok(v) => out.push((s.name.clone(), v)),
                Err(message) => {
                    out.push((s.name.clone(), serde_json::Value::Null));
                    first.get_or_insert(OrchestratorError::Model {
                        model: s.name.clone(),
                        during: "finish",
                        timestamp: t,
                        message,
                    });
                }
            }
        }
        (out, first)
    }
}

//! A host's step callback as a participant: called on a thread of its own
//! (one per external participant), so that a callback that never returns
//! ends the run at its deadline instead of hanging it, and so that a call
//! back into the co-simulation it is stepping is recognised (that thread
//! belongs to the handle) and refused at once instead of waiting forever
//! for the lock the step holds.

use std::cell::Cell;
use std::ffi::c_void;
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, sync_channel};
use std::time::Duration;

use ::lockstep_cosim::participant::{FnParticipant, Participant, Variable};
use lockstep_harness::Micros;

use crate::boundary::{Failure, Outcome, lockstep_status};

/// The host's function and its `user`, movable to the callback's thread.
#[derive(Debug, Clone, Copy)]
pub(super) struct Bound {
    pub(super) user: *mut c_void,
    pub(super) step:
        unsafe extern "C" fn(*mut c_void, u64, u64, *const f64, usize, *mut f64, usize) -> i32,
}

// SAFETY: the header tells the host its callback runs on a thread of the
// library's (never twice at once for one participant); `user` is only
// ever handed back to that callback.
unsafe impl Send for Bound {}

thread_local! {
    /// The co-simulation handle whose callback this thread runs (0: none).
    static STEPPING: Cell<usize> = const { Cell::new(0) };
}

/// Refuses a call on co-simulation `handle` made from inside one of its
/// own step callbacks: the step that called the callback holds the
/// handle until the callback returns.
pub(super) fn outside(handle: usize) -> Outcome {
    if handle != 0 && STEPPING.with(Cell::get) == handle {
        return Err(Failure::new(
            lockstep_status::LOCKSTEP_ERR_UNSUPPORTED,
            "called from inside this co-simulation's step callback: a callback reads its inputs and writes its outputs through its arguments and calls no lockstep_cosim_* function on the co-simulation it steps",
        ));
    }
    Ok(())
}

/// One step asked of the callback's thread: its buffers go there and back.
struct Job {
    t: Micros,
    dt: Micros,
    inputs: Vec<f64>,
    outputs: Vec<f64>,
}

struct Done {
    rc: i32,
    inputs: Vec<f64>,
    outputs: Vec<f64>,
}

/// The thread a participant's callback runs on.
struct Caller {
    name: String,
    deadline: Duration,
    jobs: SyncSender<Job>,
    done: Receiver<Done>,
    /// Buffers while no step is under way (`None` once a step overran:
    /// they stay with the thread still inside the callback).
    spare: Option<(Vec<f64>, Vec<f64>)>,
}

impl Caller {
    fn spawn(
        handle: usize,
        name: &str,
        deadline: Duration,
        b: Bound,
        n_in: usize,
        n_out: usize,
    ) -> Result<Caller, String> {
        let (jobs, job_rx) = sync_channel::<Job>(1);
        let (done_tx, done) = sync_channel::<Done>(1);
        std::thread::Builder::new()
            .name(format!("lockstep-cosim-{name}"))
            .spawn(move || {
                let b = b;
                STEPPING.with(|s| s.set(handle));
                while let Ok(mut j) = job_rx.recv() {
                    // SAFETY: `step` is the host's function, callable with
                    // its `user` (its promise at binding); the buffers are
                    // this thread's, valid for the lengths given.
                    let rc = unsafe {
                        (b.step)(
                            b.user,
                            j.t.0,
                            j.dt.0,
                            j.inputs.as_ptr(),
                            j.inputs.len(),
                            j.outputs.as_mut_ptr(),
                            j.outputs.len(),
                        )
                    };
                    let reply = Done {
                        rc,
                        inputs: j.inputs,
                        outputs: j.outputs,
                    };
                    if done_tx.send(reply).is_err() {
                        return;
                    }
                }
            })
            .map_err(|e| format!("cannot start the thread of its step callback: {e}"))?;
        Ok(Caller {
            name: name.to_owned(),
            deadline,
            jobs,
            done,
            spare: Some((vec![0.0; n_in], vec![0.0; n_out])),
        })
    }

    fn step(&mut self, t: Micros, dt: Micros, i: &[f64], o: &mut [f64]) -> Result<(), String> {
        let Some((mut inputs, mut outputs)) = self.spare.take() else {
            return Err(format!(
                "the host's step callback of `{}` overran its deadline earlier",
                self.name
            ));
        };
        inputs.copy_from_slice(i);
        outputs.copy_from_slice(o);
        self.jobs
            .send(Job {
                t,
                dt,
                inputs,
                outputs,
            })
            .map_err(|_| "the thread of the host's step callback has ended".to_string())?;
        match self.done.recv_timeout(self.deadline) {
            Ok(d) => {
                o.copy_from_slice(&d.outputs);
                self.spare = Some((d.inputs, d.outputs));
                if d.rc == 0 {
                    Ok(())
                } else {
                    Err(format!("the host's step callback returned {}", d.rc))
                }
            }
            Err(RecvTimeoutError::Timeout) => Err(format!(
                "the host's step callback did not return within {} s (the participant's step_timeout_s); its thread is abandoned",
                self.deadline.as_secs_f64()
            )),
            Err(RecvTimeoutError::Disconnected) => {
                Err("the thread of the host's step callback has ended".to_string())
            }
        }
    }
}

/// The callback bound to participant `name` of co-simulation `handle`, as
/// a participant.
pub(super) fn participant(
    handle: usize,
    name: &str,
    b: Bound,
    outputs: Vec<Variable>,
    inputs: Vec<Variable>,
    deadline: Duration,
) -> Result<Box<dyn Participant>, String> {
    let n_in = inputs.iter().map(|v| v.len).sum();
    let n_out = outputs.iter().map(|v| v.len).sum();
    let mut caller = Caller::spawn(handle, name, deadline, b, n_in, n_out)?;
    Ok(Box::new(FnParticipant::new(
        inputs,
        outputs,
        move |t, dt, i, o| caller.step(t, dt, i, o),
    )))
}

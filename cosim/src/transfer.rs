//! Transfer functions: run serially, in declared order, between steps. Each
//! reads the end-of-step outputs it declared and writes the inputs it
//! declared, which the participants hold over their next step (the
//! one-step delay), or over this same step for a same-step function.

use lockstep_harness::Micros;

/// A transfer function. `reads[k]` holds the values of its k-th declared
/// output (`participant.variable`), `writes[k]` receives its k-th declared
/// input (sized to the input; whatever it leaves there is written).
pub trait Transfer: Send {
    /// Refuses a wiring it cannot work with, given the widths of what it
    /// reads and writes (checked once, when the system is built).
    fn check(&self, _reads: &[usize], _writes: &[usize]) -> Result<(), String> {
        Ok(())
    }

    fn run(&mut self, t: Micros, reads: &[&[f64]], writes: &mut [Vec<f64>]) -> Result<(), String>;
}

type TransferFn = dyn FnMut(Micros, &[&[f64]], &mut [Vec<f64>]) -> Result<(), String> + Send;

/// A transfer function made of a Rust closure.
pub struct FnTransfer(Box<TransferFn>);

impl FnTransfer {
    pub fn new(
        f: impl FnMut(Micros, &[&[f64]], &mut [Vec<f64>]) -> Result<(), String> + Send + 'static,
    ) -> FnTransfer {
        FnTransfer(Box::new(f))
    }
}

impl std::fmt::Debug for FnTransfer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FnTransfer")
    }
}

impl Transfer for FnTransfer {
    fn run(&mut self, t: Micros, reads: &[&[f64]], writes: &mut [Vec<f64>]) -> Result<(), String> {
        (self.0)(t, reads, writes)
    }
}

/// Output k to input k, each value times `gain` plus `offset` (the widths
/// must match).
#[derive(Debug, Clone, PartialEq)]
pub struct Connect {
    pub gain: f64,
    pub offset: f64,
}

impl Default for Connect {
    fn default() -> Self {
        Connect {
            gain: 1.0,
            offset: 0.0,
        }
    }
}

impl Transfer for Connect {
    fn check(&self, reads: &[usize], writes: &[usize]) -> Result<(), String> {
        if reads.len() != writes.len() {
            return Err(format!(
                "connects output k to input k: it reads {} outputs and writes {} inputs",
                reads.len(),
                writes.len()
            ));
        }
        for (k, (r, w)) in reads.iter().zip(writes).enumerate() {
            if r != w {
                return Err(format!(
                    "output {k} has {r} values and input {k} has {w}: a connection needs equal widths"
                ));
            }
        }
        Ok(())
    }

    fn run(&mut self, _t: Micros, reads: &[&[f64]], writes: &mut [Vec<f64>]) -> Result<(), String> {
        let plain = self.gain == 1.0 && self.offset == 0.0;
        for (r, w) in reads.iter().zip(writes.iter_mut()) {
            if plain {
                w.copy_from_slice(r);
            } else {
                for (o, i) in w.iter_mut().zip(r.iter()) {
                    *o = self.gain * i + self.offset;
                }
            }
        }
        Ok(())
    }
}

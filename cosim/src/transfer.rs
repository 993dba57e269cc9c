//! Transfer functions: run serially, in declared order, between steps. Each
//! reads the end-of-step outputs it declared and writes the inputs it
//! declared, which the participants hold over their next step (the
//! one-step delay), or over this same step for a same-step function.

use lockstep_harness::Micros;

use crate::report::TransferReport;

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

    /// What it has to say of the run (a radio's counts).
    fn report(&self) -> TransferReport {
        TransferReport::None
    }
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

/// Copies what it reads to what it writes, each value times `gain` plus
/// `offset`: the values read are laid end to end and dealt to the inputs
/// in order, so a vector output can feed scalar inputs and back (the total
/// widths must match).
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
        let (r, w): (usize, usize) = (reads.iter().sum(), writes.iter().sum());
        if r != w {
            return Err(format!(
                "it reads {r} values and writes {w}: a connection needs as many of each"
            ));
        }
        Ok(())
    }

    fn run(&mut self, _t: Micros, reads: &[&[f64]], writes: &mut [Vec<f64>]) -> Result<(), String> {
        let plain = self.gain == 1.0 && self.offset == 0.0;
        let mut values = reads.iter().flat_map(|r| r.iter());
        for w in writes.iter_mut() {
            for o in w.iter_mut() {
                let v = *values.next().ok_or("fewer values read than written")?;
                *o = if plain {
                    v
                } else {
                    self.gain * v + self.offset
                };
            }
        }
        Ok(())
    }
}

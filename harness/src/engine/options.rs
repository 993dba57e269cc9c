//! How the vehicles of a run are built and stepped, whatever runs them (a
//! fleet, a co-simulation, an orchestrated delivery fleet): the autopilot
//! of vehicles that name none, where it runs, where logs go, and how many
//! threads step them.

use std::path::PathBuf;

use lockstep_abi::Isolation;

/// What a run adds to its file (one type for every runner of vehicles).
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// The autopilot of vehicles that name none.
    pub autopilot: PathBuf,
    pub isolation: Isolation,
    /// Where vehicles write their flight logs (`<dir>/<name>.csv`), when
    /// given.
    pub log_dir: Option<PathBuf>,
    /// Threads stepping the run (`None`: the file's, else the cores).
    pub threads: Option<usize>,
}

impl RunOptions {
    /// Vehicles flying `autopilot` (where they name none) with `isolation`,
    /// no logs, the default threads.
    pub fn new(autopilot: impl Into<PathBuf>, isolation: Isolation) -> RunOptions {
        RunOptions {
            autopilot: autopilot.into(),
            isolation,
            log_dir: None,
            threads: None,
        }
    }

    /// The threads of a run: these options', else the file's (`file`),
    /// else the machine's cores; at least 1.
    pub fn threads_or(&self, file: Option<usize>) -> usize {
        self.threads.or(file).unwrap_or_else(cores).max(1)
    }
}

/// The machine's cores (1 when unknown).
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_option_wins_then_the_file_then_the_cores() {
        let mut o = RunOptions::new("ap.so", Isolation::InProcess);
        assert_eq!(o.threads_or(None), cores());
        assert_eq!(o.threads_or(Some(3)), 3);
        o.threads = Some(5);
        assert_eq!(o.threads_or(Some(3)), 5);
        o.threads = Some(0);
        assert_eq!(o.threads_or(None), 1);
    }
}

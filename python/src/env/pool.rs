//! The vector environment's threads: the lanes split into chunks, chunk 0
//! stepped by the calling thread itself and each other chunk by a thread
//! of its own that owns it. A step is a generation: the caller writes each
//! chunk's command, bumps its `go`, steps its own chunk, then waits for
//! every `done`. Workers spin briefly for the next command (an agent's
//! step between two environment steps is microseconds) and then park, so
//! an idle vector costs nothing. A thread pool that wakes its threads
//! through a condition variable spent 40 µs a step on that alone here
//! (rayon, measured: N = 1 gave 11 500 steps/s against a single
//! environment's 155 000). The lanes are independent, so which thread
//! steps which lane changes no bit.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use lockstep_run::RunError;

use super::config::EnvConfig;
use super::lane::{Lane, Outcome};

/// What a chunk is asked to do.
#[derive(Debug, Clone)]
pub enum Command {
    /// Start every lane's episode (a seed each, or the next of its
    /// sequence).
    Reset(Vec<Option<u64>>),
    /// One control period, an action per lane (flattened); a lane whose
    /// episode ended at the last step starts its next instead.
    Step(Vec<f32>),
}

/// A lane's result: its outcome, and whether it was reset instead.
pub type LaneResult = Result<(Outcome, bool), RunError>;

/// A chunk of lanes and its exchange with the caller.
#[derive(Debug)]
pub struct ChunkIo {
    /// The lanes, each with whether its episode ended at the last step.
    pub lanes: Vec<(Lane, bool)>,
    command: Option<Command>,
    pub results: Vec<LaneResult>,
    /// The lanes' observations, one after another.
    pub obs: Vec<f32>,
}

/// A value alone on its cache lines: the caller spinning on one chunk's
/// `done` must not slow the worker writing that chunk's lanes (measured:
/// two lanes on two threads stepped at half the rate of one without it).
#[derive(Debug, Default)]
#[repr(align(128))]
struct Padded<T>(T);

impl<T> std::ops::Deref for Padded<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

#[derive(Debug)]
struct Chunk {
    io: Padded<Mutex<ChunkIo>>,
    go: Padded<AtomicU64>,
    done: Padded<AtomicU64>,
}

/// How long a worker spins for its next command before it parks.
const SPIN: Duration = Duration::from_micros(200);

impl ChunkIo {
    fn run(&mut self, c: &EnvConfig) {
        let Some(cmd) = self.command.take() else {
            return;
        };
        let k = c.low.len();
        self.results.clear();
        match cmd {
            Command::Reset(seeds) => {
                for ((lane, ended), s) in self.lanes.iter_mut().zip(seeds) {
                    *ended = false;
                    let r = lane.reset(c, s).map(|()| (Outcome::default(), true));
                    self.results.push(r);
                }
            }
            Command::Step(actions) => {
                for ((lane, ended), a) in self.lanes.iter_mut().zip(actions.chunks(k)) {
                    let r = if *ended {
                        *ended = false;
                        lane.reset(c, None).map(|()| (Outcome::default(), true))
                    } else {
                        lane.step(c, a).map(|o| {
                            *ended = o.terminated || o.truncated;
                            (o, false)
                        })
                    };
                    self.results.push(r);
                }
            }
        }
        let n = c.obs_len();
        self.obs.resize(self.lanes.len() * n, 0.0);
        for ((lane, _), out) in self.lanes.iter().zip(self.obs.chunks_mut(n)) {
            lane.observe(c, out);
        }
    }
}

/// The chunks and their threads.
#[derive(Debug)]
pub struct Pool {
    config: Arc<EnvConfig>,
    chunks: Vec<Arc<Chunk>>,
    workers: Vec<JoinHandle<()>>,
    stop: Arc<AtomicBool>,
    generation: u64,
}

fn lock(c: &Chunk) -> std::sync::MutexGuard<'_, ChunkIo> {
    c.io.lock().unwrap_or_else(|p| p.into_inner())
}

fn serve(chunk: Arc<Chunk>, config: Arc<EnvConfig>, stop: Arc<AtomicBool>) {
    let mut seen = 0;
    loop {
        let started = Instant::now();
        loop {
            if stop.load(Ordering::Acquire) {
                return;
            }
            if chunk.go.load(Ordering::Acquire) != seen {
                break;
            }
            if started.elapsed() < SPIN {
                std::hint::spin_loop();
            } else {
                // Woken by the caller's unpark (or spuriously: looked again).
                std::thread::park_timeout(Duration::from_millis(50));
            }
        }
        seen = chunk.go.load(Ordering::Acquire);
        let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            lock(&chunk).run(&config);
        }));
        if ran.is_err() {
            // Every lane of the chunk says so (the caller raises it).
            let mut io = lock(&chunk);
            let n = io.lanes.len();
            io.results = (0..n)
                .map(|_| Err(RunError::run_failure("an environment thread panicked")))
                .collect();
        }
        chunk.done.store(seen, Ordering::Release);
    }
}

impl Pool {
    /// `lanes` split into `threads` chunks (at most one per lane), chunk 0
    /// for the caller.
    pub fn new(config: EnvConfig, lanes: Vec<Lane>, threads: usize) -> std::io::Result<Pool> {
        let config = Arc::new(config);
        let n = lanes.len();
        let t = threads.clamp(1, n.max(1));
        let mut chunks = Vec::with_capacity(t);
        let mut lanes = lanes.into_iter();
        for i in 0..t {
            // Even chunks: the first n % t get one lane more.
            let size = n / t + usize::from(i < n % t);
            chunks.push(Arc::new(Chunk {
                io: Padded(Mutex::new(ChunkIo {
                    lanes: lanes.by_ref().take(size).map(|l| (l, false)).collect(),
                    command: None,
                    results: Vec::with_capacity(size),
                    obs: Vec::new(),
                })),
                go: Padded(AtomicU64::new(0)),
                done: Padded(AtomicU64::new(0)),
            }));
        }
        let stop = Arc::new(AtomicBool::new(false));
        let mut workers = Vec::new();
        for (i, chunk) in chunks.iter().enumerate().skip(1) {
            let (chunk, config, stop) = (Arc::clone(chunk), Arc::clone(&config), Arc::clone(&stop));
            workers.push(
                std::thread::Builder::new()
                    .name(format!("lockstep-env-{i}"))
                    .spawn(move || serve(chunk, config, stop))?,
            );
        }
        Ok(Pool {
            config,
            chunks,
            workers,
            stop,
            generation: 0,
        })
    }

    pub fn config(&self) -> &EnvConfig {
        &self.config
    }

    /// Runs one command per chunk (`commands[i]` for chunk i), the caller
    /// stepping chunk 0; returns when every chunk is done.
    pub fn run(&mut self, commands: Vec<Command>) {
        self.generation += 1;
        let g = self.generation;
        for ((chunk, cmd), worker) in self
            .chunks
            .iter()
            .zip(commands)
            .zip(std::iter::once(None).chain(self.workers.iter().map(Some)))
        {
            lock(chunk).command = Some(cmd);
            if let Some(w) = worker {
                chunk.go.store(g, Ordering::Release);
                w.thread().unpark();
            }
        }
        lock(&self.chunks[0]).run(&self.config);
        for chunk in &self.chunks[1..] {
            while chunk.done.load(Ordering::Acquire) != g {
                std::hint::spin_loop();
            }
        }
    }

    /// How many lanes each chunk holds, in order.
    pub fn sizes(&self) -> Vec<usize> {
        self.chunks.iter().map(|c| lock(c).lanes.len()).collect()
    }

    /// Reads every chunk (in lane order).
    pub fn each<T>(&self, mut f: impl FnMut(&mut ChunkIo) -> T) -> Vec<T> {
        self.chunks.iter().map(|c| f(&mut lock(c))).collect()
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        for w in self.workers.drain(..) {
            w.thread().unpark();
            let _ = w.join();
        }
    }
}

//! The co-simulation's record: `cosim.csv`, a row of the recorded outputs
//! every record period (time 0 included), each value in its shortest
//! round-trip form; a vector's elements are columns `name[0]`, `name[1]`...

use std::io::Write;
use std::path::{Path, PathBuf};

use lockstep_harness::Micros;

use crate::error::CosimError;
use crate::run::Cosim;
use crate::system::VarRef;

pub struct Recorder {
    path: PathBuf,
    out: std::io::BufWriter<std::fs::File>,
    columns: Vec<VarRef>,
    period: Micros,
    line: Vec<u8>,
    pub rows: u64,
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder")
            .field("path", &self.path)
            .field("rows", &self.rows)
            .finish_non_exhaustive()
    }
}

impl Recorder {
    /// Records `names` (every output when `None`) of `c` to `path` every
    /// `period`, starting with the row of time 0.
    pub fn new(
        path: &Path,
        c: &Cosim,
        names: Option<&[String]>,
        period: Micros,
    ) -> Result<Recorder, CosimError> {
        let all = c.output_list();
        let chosen: Vec<(String, VarRef, usize)> = match names {
            None => all,
            Some(names) => names
                .iter()
                .map(|n| {
                    all.iter().find(|(a, ..)| a == n).cloned().ok_or_else(|| {
                        CosimError::build(
                            "cosim.record",
                            format!(
                                "no output `{n}` (outputs: {})",
                                all.iter()
                                    .map(|a| a.0.as_str())
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            ),
                        )
                    })
                })
                .collect::<Result<_, _>>()?,
        };
        let err = |e: std::io::Error| CosimError::Record {
            path: path.display().to_string(),
            reason: e.to_string(),
        };
        let file = std::fs::File::create(path).map_err(err)?;
        let mut out = std::io::BufWriter::with_capacity(1 << 16, file);
        // The header through the csv crate: a name holding `,` or `"` (a
        // Modelica array element `A[1,2]` of an FMU) is quoted, so every
        // value stays under its own heading.
        let mut header = vec!["time_us".to_string()];
        for (name, _, len) in &chosen {
            if *len == 1 {
                header.push(name.clone());
            } else {
                header.extend((0..*len).map(|k| format!("{name}[{k}]")));
            }
        }
        let mut w = csv::Writer::from_writer(&mut out);
        w.write_record(&header)
            .map_err(|e| e.to_string())
            .and_then(|()| w.flush().map_err(|e| e.to_string()))
            .map_err(|reason| CosimError::Record {
                path: path.display().to_string(),
                reason,
            })?;
        drop(w);
        let mut r = Recorder {
            path: path.to_path_buf(),
            out,
            columns: chosen.iter().map(|c| c.1).collect(),
            period,
            line: Vec::with_capacity(4096),
            rows: 0,
        };
        r.observe(c)?;
        Ok(r)
    }

    /// Writes a row when `c`'s time is a multiple of the period.
    pub fn observe(&mut self, c: &Cosim) -> Result<(), CosimError> {
        let t = c.now();
        if !t.is_multiple_of(self.period) {
            return Ok(());
        }
        self.line.clear();
        self.line
            .extend_from_slice(itoa::Buffer::new().format(t.0).as_bytes());
        let mut f = zmij::Buffer::new();
        for col in &self.columns {
            for v in c.output(*col) {
                self.line.push(b',');
                self.line.extend_from_slice(f.format(*v).as_bytes());
            }
        }
        self.line.push(b'\n');
        self.out
            .write_all(&self.line)
            .map_err(|e| CosimError::Record {
                path: self.path.display().to_string(),
                reason: e.to_string(),
            })?;
        self.rows += 1;
        Ok(())
    }

    pub fn finish(mut self) -> Result<u64, CosimError> {
        self.out.flush().map_err(|e| CosimError::Record {
            path: self.path.display().to_string(),
            reason: e.to_string(),
        })?;
        Ok(self.rows)
    }
}

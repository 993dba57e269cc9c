//! The distributed protocol without a network: a primary and secondaries
//! on threads, connected by channels. The logs and encounters equal the
//! fleet's in one process bit for bit, while the vehicles move between
//! secondaries.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::common::{BUNDLED, TempDir, examples};
use lockstep_abi::Isolation;
use lockstep_distributed::{Outcome, PrimaryOptions, run_local};
use lockstep_fleet::{Fleet, FleetScenario};

use crate::fleet::digests;
use lockstep_harness::Micros;

fn swarm(duration_us: u64) -> FleetScenario {
    let p = examples().join("scenarios/swarm.toml");
    let mut fs = FleetScenario::load(p).unwrap();
    for v in &mut fs.vehicles {
        v.scenario.duration = Micros(duration_us);
    }
    fs
}

/// `fs` on `n` secondaries on threads, the autopilots in-process, the
/// logs in `log_dir`.
pub(crate) fn on_secondaries(fs: &FleetScenario, n: usize, log_dir: &Path) -> Outcome {
    run_local(
        fs,
        n,
        &Isolation::InProcess,
        PrimaryOptions {
            log_dir: Some(log_dir.to_path_buf()),
            autopilot: PathBuf::from(BUNDLED),
            step_deadline: Duration::from_secs(60),
        },
    )
    .unwrap()
}

#[test]
fn two_secondaries_give_the_single_process_logs_bit_for_bit_with_migrations() {
    let fs = swarm(36_000_000);
    assert_eq!(fs.vehicles.len(), 16);
    assert_eq!(fs.levels.levels.len(), 4);
    let dir = TempDir::new("distributed_local");
    let one = dir.join("one");
    let mut fleet = Fleet::new(&fs, &crate::fleet::options(&one, 2)).unwrap();
    let single = fleet.run().unwrap();
    let many = dir.join("many");
    let out = on_secondaries(&fs, 2, &many);
    assert_eq!(digests(&one, &fs), digests(&many, &fs));
    assert_eq!(out.fleet.encounters, single.fleet.encounters);
    assert_eq!(out.fleet.closest, single.fleet.closest);
    assert_eq!(out.fleet.end, single.fleet.end);
    // Every lane crossed from a level of one secondary to one of the other.
    assert!(out.migrations >= 16, "{} migrations", out.migrations);
    assert!(out.pinned.is_empty());
    assert_eq!(out.refused_acks, 0);
    // Each vehicle's outcome is the single run's.
    assert_eq!(out.fleet.vehicles, single.fleet.vehicles);
    assert!(out.fleet.vehicles.iter().all(|(_, o)| o.is_some()));
}

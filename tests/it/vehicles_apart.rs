//! Two vehicles on one spot, wherever vehicles share a world: a fleet
//! scenario (`fly` reported it as a collision at t = 0), a co-simulation's
//! system and an orchestrated fleet (both flew on to exit 0 without a
//! word). Each is refused before anything runs, naming the pair.

use crate::common::{TempDir, cosim_in_process, lockstep, vehicles_system};

const OVERLAP: &str = " start 0.000 m apart, closer than their radii together";

#[test]
fn a_fleet_scenario_whose_vehicles_start_together_is_refused() {
    let dir = TempDir::new("apart-fleet");
    let file = dir.join("fleet.toml");
    std::fs::write(
        &file,
        "schema_version = 1\n[simulation]\nduration_s = 5.0\n\
         [world]\norigin_lat_deg = 47.397742\norigin_lon_deg = 8.545594\norigin_alt_m = 488.0\n\
         [[vehicles]]\nname = \"a\"\nspec = \"iris\"\n\
         [[vehicles]]\nname = \"b\"\nspec = \"iris\"\nstart_north_m = 3.0\n\
         [[vehicles]]\nname = \"c\"\nspec = \"iris\"\nstart_north_m = 3.0\n",
    )
    .unwrap();
    let r = lockstep(&["fly", file.to_str().unwrap(), "--isolation", "in-process"]);
    assert_eq!(r.code(), 2, "{r}");
    assert!(
        r.stderr
            .starts_with(&format!("lockstep fly: vehicles `b` and `c`{OVERLAP}")),
        "{r}"
    );
}

#[test]
fn a_system_whose_vehicles_start_together_is_refused() {
    let dir = TempDir::new("apart-cosim");
    let system = vehicles_system(dir.path(), 2.0, &[("alpha", ""), ("bravo", "")]);
    let out = dir.join("out");
    let r = cosim_in_process(&system, &out);
    assert_eq!(r.code(), 2, "{r}");
    assert!(
        r.stderr.starts_with(&format!(
            "lockstep cosim: {}: participants: vehicles `alpha` and `bravo`{OVERLAP}",
            system.display()
        )),
        "{r}"
    );
    assert!(!out.join("alpha.csv").exists(), "nothing was flown");
}

#[test]
fn an_orchestrated_fleet_whose_pads_coincide_is_refused() {
    let dir = TempDir::new("apart-orchestrate");
    let file = crate::orchestrate::fleet_file(&dir, &[("pad_east_m = 6.0", "pad_east_m = 0.0")]);
    let r = lockstep(&[
        "orchestrate",
        file.to_str().unwrap(),
        "--isolation",
        "in-process",
        "-o",
        dir.join("out").to_str().unwrap(),
    ]);
    assert_eq!(r.code(), 2, "{r}");
    assert!(
        r.stderr.starts_with(&format!(
            "lockstep orchestrate: vehicles `drone2` and `drone3`{OVERLAP}"
        )),
        "{r}"
    );
}

//! Two vehicles on one spot, wherever vehicles share a world: a fleet
//! scenario (`fly` reported it as a collision at t = 0), a co-simulation's
//! system and an orchestrated fleet (both flew on to exit 0 without a
//! word). Each is refused before anything runs, naming the pair.

use crate::common::{TempDir, examples, lockstep};

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
    let system = dir.join("system.toml");
    let v = examples().join("cosim/vehicle.toml");
    std::fs::write(
        &system,
        format!(
            "schema_version = 1\n[cosim]\nstep_us = 4000\nduration_s = 2.0\n\
             [[participants]]\nname = \"alpha\"\nkind = \"vehicle\"\nscenario = \"{v}\"\n\
             [[participants]]\nname = \"bravo\"\nkind = \"vehicle\"\nscenario = \"{v}\"\n",
            v = v.display()
        ),
    )
    .unwrap();
    let out = dir.join("out");
    let r = lockstep(&[
        "cosim",
        system.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--isolation",
        "in-process",
    ]);
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
    let src = examples().join("orchestrate");
    std::fs::copy(src.join("vehicle.toml"), dir.join("vehicle.toml")).unwrap();
    let fleet = std::fs::read_to_string(src.join("delivery.toml"))
        .unwrap()
        .replace("pad_east_m = 6.0", "pad_east_m = 0.0");
    let file = dir.join("delivery.toml");
    std::fs::write(&file, fleet).unwrap();
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

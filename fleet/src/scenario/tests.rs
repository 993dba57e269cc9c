use std::path::Path;

use super::*;
use crate::levels::Levels;

const BASE: &str = r#"schema_version = 1
[simulation]
seed = 9
duration_s = 10.0
[world]
origin_lat_deg = 47.397742
origin_lon_deg = 8.545594
origin_alt_m = 488.0
[[events]]
at_s = 1.0
action = "arm"
"#;

const TWO: &str = r#"
[[vehicles]]
name = "a"
spec = "iris"
[[vehicles]]
name = "b"
spec = "hexa"
start_north_m = 20.0
[[vehicles.events]]
at_s = 3.0
action = "motor_fail"
motor = 5
"#;

fn load(text: &str) -> Result<FleetScenario, ScenarioError> {
    FleetScenario::from_toml_str_with(text, Path::new("f.toml"), &[])
}

fn error(text: &str) -> String {
    load(text).unwrap_err().to_string()
}

#[test]
fn shared_sections_and_own_entries_make_each_vehicle_scenario() {
    let f = load(&format!("{BASE}{TWO}")).unwrap();
    assert_eq!(f.seed, 9);
    assert_eq!(f.sync, Micros(4000), "the autopilot period by default");
    assert_eq!(f.proximity_m, DEFAULT_PROXIMITY_M);
    let (a, b) = (&f.vehicles[0], &f.vehicles[1]);
    assert_eq!((a.name.as_str(), b.name.as_str()), ("a", "b"));
    assert_eq!(
        (a.scenario.spec.as_str(), b.scenario.spec.as_str()),
        ("iris", "hexa")
    );
    assert_eq!(b.scenario.start.0, 20.0);
    assert_eq!(a.scenario.events.len(), 1, "the shared arm");
    assert_eq!(b.scenario.events.len(), 2, "the shared arm, then its own");
    assert_eq!(
        a.scenario.seed,
        RngStreams::new(9).member_seed("fleet.vehicle", "a")
    );
    assert_eq!(a.radius_m, None);
    assert_eq!(a.autopilot, None);
}

#[test]
fn fleet_keys_are_read_and_checked() {
    let f = load(&format!(
        "{BASE}[fleet]\nsync_period_us = 20000\nproximity_m = 12\n{TWO}"
    ))
    .unwrap();
    assert_eq!((f.sync, f.proximity_m), (Micros(20_000), 12.0));
    assert_eq!(
        error(&format!("{BASE}[fleet]\nsync_period_us = 6000\n{TWO}")),
        "f.toml:13:1: key `fleet.sync_period_us`: 6000 us is not a positive multiple of the \
         autopilot period (4000 us) within the run"
    );
    assert_eq!(
        error(&format!("{BASE}[fleet]\nsync_us = 6000\n{TWO}")),
        "f.toml:13:1: unknown key `fleet.sync_us` (valid in [fleet]: sync_period_us, proximity_m, levels, \
         level_grid, level_buffer_m, lookahead_max_s, lookahead_margin_m)"
    );
    assert_eq!(
        error(&format!("{BASE}[fleet]\nproximity_m = -1\n{TWO}")),
        "f.toml:13:1: key `fleet.proximity_m`: must be a number in (0, 10000] m, is -1"
    );
    assert_eq!(
        error(&format!("{BASE}[fleet]\nlookahead_max_s = -0.5\n{TWO}")),
        "f.toml:13:1: key `fleet.lookahead_max_s`: must be a number in [0, 60], is -0.5"
    );
    assert_eq!(
        error(&format!(
            "{BASE}[fleet]\nlookahead_margin_m = \"far\"\n{TWO}"
        )),
        "f.toml:13:1: key `fleet.lookahead_margin_m`: must be a number in [0, 1000], is \"far\""
    );
}

#[test]
fn a_vehicle_radius_and_autopilot_are_its_own() {
    let f = load(&format!(
        "{BASE}[[vehicles]]\nname = \"a\"\nspec = \"iris\"\nradius_m = 0.7\nautopilot = \"lib/x.so\"\n"
    ))
    .unwrap();
    assert_eq!(f.vehicles[0].radius_m, Some(0.7));
    assert_eq!(
        f.vehicles[0].autopilot.as_deref(),
        Some(Path::new("lib/x.so"))
    );
    assert_eq!(
        error(&format!(
            "{BASE}[[vehicles]]\nname = \"a\"\nspec = \"iris\"\nradius_m = 0\n"
        )),
        "f.toml:15:1: key `vehicles[0].radius_m`: must be a number in (0, 100] m, is 0"
    );
}

#[test]
fn errors_name_the_vehicle_entry_and_its_key() {
    let e = error(&format!("{BASE}{TWO}").replace("start_north_m = 20.0", "start_north_m = 2e9"));
    assert!(
        e.starts_with("f.toml:19:1: key `vehicles[1].start_north_m`: "),
        "{e}"
    );
    let e = error(&format!("{BASE}{TWO}").replace("\"motor_fail\"", "\"explode\""));
    assert!(
        e.starts_with(
            "f.toml:22:1: key `vehicles[1].events[0].action`: `explode` is not an action ("
        ),
        "{e}"
    );
    let e =
        error(&format!("{BASE}{TWO}").replace("spec = \"iris\"", "spec = \"iris\"\ncolour = 3"));
    assert!(
        e.starts_with("f.toml:16:1: unknown key `vehicles[0].colour` (valid in [vehicles[0]]: "),
        "{e}"
    );
    assert!(e.contains("name") && e.contains("radius_m"), "{e}");
    let e = error(&format!("{BASE}{TWO}").replace("start_north_m = 20.0", "start_north_m = \"x\""));
    assert!(e.contains("`vehicles[1].start_north_m`"), "{e}");
}

#[test]
fn names_must_be_file_names_and_unique() {
    assert_eq!(
        error(&format!("{BASE}{TWO}").replace("name = \"b\"", "name = \"a\"")),
        "f.toml:17:1: key `vehicles[1].name`: `a` is also the name of vehicles[0]"
    );
    assert_eq!(
        error(&format!("{BASE}{TWO}").replace("name = \"b\"", "name = \"../b\"")),
        "f.toml:17:1: key `vehicles[1].name`: `../b` is not a name: 1 to 64 letters, digits, `_`, \
         `-` or `.`, not starting with `.`"
    );
    assert_eq!(
        error(&format!("{BASE}{TWO}").replace("name = \"b\"\n", "")),
        "f.toml: key `vehicles[1].name`: every vehicle needs a name"
    );
}

#[test]
fn the_shape_of_a_fleet_is_checked() {
    assert_eq!(
        error(&format!("{BASE}[vehicle]\nspec = \"iris\"\n{TWO}")),
        "f.toml:12:2: key `vehicle`: a fleet scenario declares its vehicles as [[vehicles]], not [vehicle]"
    );
    assert_eq!(
        error(&format!("vehicles = 3\n{BASE}")),
        "f.toml:1:1: key `vehicles`: must be an array of tables ([[vehicles]])"
    );
    assert_eq!(
        error(&format!("vehicles = []\n{BASE}")),
        "f.toml:1:1: key `vehicles`: a fleet has 1 to 256 vehicles, this one 0"
    );
    let no_origin = format!("{BASE}{TWO}").replace("origin_alt_m = 488.0\n", "");
    assert_eq!(
        error(&no_origin),
        "f.toml:5:2: key `world`: a fleet's vehicles share one NED frame: give its origin_lat_deg, \
         origin_lon_deg and origin_alt_m under [world]"
    );
}

#[test]
fn a_single_vehicle_loader_refuses_a_fleet() {
    let e = Scenario::from_toml_str(&format!("{BASE}{TWO}"), "f.toml").unwrap_err();
    assert_eq!(
        e.to_string(),
        "f.toml:13:3: key `vehicles`: this is a fleet scenario ([[vehicles]]), which `lockstep fly` \
         flies; this needs a scenario of one [vehicle]"
    );
}

#[test]
fn overrides_apply_to_the_shared_sections() {
    let o = [Override::new(
        "simulation.seed",
        toml::Value::Integer(4),
        "--seed 4".into(),
    )];
    let f = FleetScenario::from_toml_str_with(&format!("{BASE}{TWO}"), "f.toml", &o).unwrap();
    assert_eq!(f.seed, 4);
    assert_eq!(
        f.vehicles[1].scenario.seed,
        RngStreams::new(4).member_seed("fleet.vehicle", "b")
    );
}

#[test]
fn levels_as_boxes_or_a_grid() {
    let f = load(&format!("{BASE}{TWO}")).unwrap();
    assert_eq!(f.levels, Levels::default());
    let f = load(&format!(
        "{BASE}[fleet]\nlevel_grid = {{ north_m = [0.0, 100.0], east_m = [0.0, 120.0], rows = 1, columns = 4 }}\nlevel_buffer_m = 3\n{TWO}"
    ))
    .unwrap();
    assert_eq!(f.levels.levels.len(), 4);
    assert_eq!(f.levels.buffer_m, 3.0);
    assert_eq!(f.levels.levels[3].east_m, [90.0, 120.0]);
    let boxes = "[[fleet.levels]]\nname = \"w\"\nnorth_m = [0, 10]\neast_m = [0, 10]\n\
                 [[fleet.levels]]\nname = \"e\"\nnorth_m = [0, 10]\neast_m = [10, 20]\naltitude_m = [0, 50]\n";
    let f = load(&format!("{BASE}{boxes}{TWO}")).unwrap();
    assert_eq!(f.levels.levels[1].altitude_m, Some([0.0, 50.0]));
    assert_eq!(f.levels.buffer_m, DEFAULT_LEVEL_BUFFER_M);
    assert_eq!(
        error(&format!(
            "{BASE}{}{TWO}",
            boxes.replace("[10, 20]", "[20, 10]")
        )),
        "f.toml:19:1: key `fleet.levels[1].east_m`: must be [min, max] with min < max, is [20, 10]"
    );
    assert_eq!(
        error(&format!("{BASE}{}{TWO}", boxes.replace("\"e\"", "\"w\""))),
        "f.toml:17:1: key `fleet.levels[1].name`: `w` names another level too"
    );
    assert_eq!(
        error(&format!(
            "{BASE}{}{TWO}",
            boxes.replace("north_m = [0, 10]\neast_m = [10, 20]", "east_m = [10, 20]")
        )),
        "f.toml: key `fleet.levels[1].north_m`: is required"
    );
    assert_eq!(
        error(&format!(
            "{BASE}[fleet]\nlevel_grid = {{ north_m = [0.0, 1.0], east_m = [0.0, 1.0], rows = 0, columns = 4 }}\n{TWO}"
        )),
        "f.toml:13:59: key `fleet.level_grid.rows`: must be an integer in [1, 1024], is 0"
    );
}
